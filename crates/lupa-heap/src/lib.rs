//! Lupa's object heap: tagged [`Value`]s, object layout, allocation and a
//! generational garbage collector in the spirit of Pharo's Spur (eden and two
//! survivor spaces collected by a copying scavenger, an old space collected by
//! mark-compact, a write barrier and remembered set, weak arrays, ephemerons,
//! Pharo's tunable parameters, statistics and lifetime events). The design is
//! described in this crate's `README.md`.
//!
//! This crate is one of the two places in Lupa where `unsafe` is allowed (the
//! other is the sampling profiler's clock and signal code), in two modules
//! that allow `unsafe_code` (denied for the workspace): `bytes.rs`, the byte
//! views of byte objects ([`Heap::bytes`] / [`Heap::bytes_mut`]), and
//! `pages.rs`, one `madvise` on new space's pages. Each block has a `SAFETY`
//! comment.

#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

// Dependencies go one way: layout <- config, stats, lifetime, sample_policy (data) <- heap (the
// struct) <- alloc, alloc_sampling, access, bytes, params (its behaviour) <- gc, verify (the
// collectors and the verifier).
mod access;
mod alloc;
mod alloc_sampling;
mod bytes;
mod config;
mod gc;
mod heap;
mod layout;
mod lifetime;
mod pages;
mod params;
mod sample_policy;
mod stats;
pub mod units;
mod value;
mod verify;

pub use config::{
    GcParam, GcSettings, HeapConfig, MAX_HEAP_BYTES, OutOfMemory, ParamError, ParamInfo,
    RESERVE_BYTES,
};
pub use gc::Collection;
pub use heap::Heap;
pub use layout::{Format, MAX_CLASS_INDEX, native as native_layout};
pub use lifetime::Death;
pub use pages::page_faults;
pub use sample_policy::{AllocationSample, SamplingPolicy};
pub use stats::{CollectionKind, HeapStats};
pub use units::Unit;
pub use value::{SMALL_INT_MAX, SMALL_INT_MIN, Value};
