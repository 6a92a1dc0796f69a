//! Lupa's object heap: tagged [`Value`]s, object layout, allocation and the
//! garbage collector.
//!
//! This crate is one of the two places in Lupa where `unsafe` is allowed (the
//! other is the sampling profiler's signal code): the byte views of byte objects
//! in [`Heap::bytes`] / [`Heap::bytes_mut`]. Each block has a `SAFETY` comment.

mod heap;
mod value;

pub use heap::{Collection, Format, Heap, HeapConfig, HeapStats, MAX_CLASS_INDEX, OutOfMemory};
pub use value::{SMALL_INT_MAX, SMALL_INT_MIN, Value};
