//! Lupa's object heap: tagged [`Value`]s, object layout, allocation and a
//! generational garbage collector in the spirit of Pharo's Spur (eden and two
//! survivor spaces collected by a copying scavenger, an old space collected by
//! mark-compact, a write barrier and remembered set, weak arrays, ephemerons,
//! Pharo's tunable parameters, statistics and lifetime events). The design is
//! described in this crate's `README.md`.
//!
//! This crate is one of the two places in Lupa where `unsafe` is allowed (the
//! other is the sampling profiler's signal code): the byte views of byte objects
//! in [`Heap::bytes`] / [`Heap::bytes_mut`]. Each block has a `SAFETY` comment.

mod gc;
mod heap;
mod value;
mod verify;

pub use gc::Collection;
pub use heap::{
    CollectionKind, Death, Format, GcParam, Heap, HeapConfig, HeapStats, MAX_CLASS_INDEX,
    MAX_HEAP_BYTES, OutOfMemory, ParamError, RESERVE_BYTES,
};
pub use value::{SMALL_INT_MAX, SMALL_INT_MIN, Value};
