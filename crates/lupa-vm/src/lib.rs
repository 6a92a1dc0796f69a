//! The Lupa virtual machine: runs SOM Smalltalk with observation built in.
//!
//! Modules, one concern each:
//!
//! - [`vm`](Vm): the [`Vm`] struct and its construction, symbols, globals, value
//!   helpers (`vm/mod.rs`); [`VmOptions`] (`vm/config.rs`), [`VmError`]
//!   (`vm/error.rs`); class-path search, bootstrap and class definition
//!   (`vm/loader.rs`); runtime method code, installation and lookup
//!   (`vm/methods.rs`); the GC roots and collection glue (`vm/gc_roots.rs`); the
//!   program's output (`vm/output.rs`);
//! - [`class_table`]: classes by index and name, method lookup with its cache, and
//!   the epoch that invalidates inline caches;
//! - [`interp`]: the non-recursive bytecode interpreter: process and frame state,
//!   the dispatch loop, the send path, unwinding, the `Op::Special` fast paths and
//!   their per-class cache, runtime limits, failures and backtraces;
//! - [`process`]: green-thread processes, semaphores and the deterministic scheduler;
//! - [`proxies`]: the VM support for MethodProxies (hidden selectors, method copies
//!   and literal patching, the meta level, the trap shortcut);
//! - [`objects`]: the Rust side of the object model (well-known class indices,
//!   class descriptions, symbols, runtime method code);
//! - `prims`: the native primitives, one module per class family;
//! - [`observe`]: the observation points (send counter, activation and GC hooks,
//!   sampling register); [`query`]: what a profiler may ask about methods by id;
//! - [`lifetimes`]: object lifetimes recorded by the VM (Illimani's VM mode):
//!   sampled allocations with their sites, and their deaths;
//! - [`sampling`]: what the VM publishes for a sampling profiler (state, stack
//!   requests and copies);
//! - [`profiling`]: the door through which Smalltalk starts and stops the profilers of
//!   the profiler layer (`System>>startProfiler:`/`stopProfiler`);
//! - [`sunit`]: running the bundled and user SUnit tests (`lupa test`, per-suite Rust tests).

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

pub mod class_table;
pub mod coverage;
pub(crate) mod files;
pub mod interp;
pub mod lifetimes;
pub mod objects;
pub mod observe;
pub mod pretenure;
pub(crate) mod prims;
pub mod process;
pub mod profiling;
pub mod proxies;
pub mod query;
pub mod sampling;
pub mod sunit;
mod vm;

pub use class_table::{ClassTable, Lookup};
pub use lifetimes::{AllocationRecord, CollectionMark, LifetimeOptions, LifetimeRecording};
pub use lupa_compiler::CodeKind;
pub use lupa_heap::{CollectionKind, Death, GcParam, HeapConfig, HeapStats, SamplingPolicy, Value};
pub use objects::cls;
pub use observe::{Activation, ActivationHooks, GcEvent, GcHooks, Observation, SampleRegister};
pub use pretenure::PretenureSite;
pub use prims::{Args, Expected, PrimFailure, PrimResult, Reply};
pub use profiling::{ProfilerFactory, ProfilerReport, ProfilerSession};
pub use query::{InstructionInfo, MethodDescription};
pub use sampling::{MAX_EVENTS, MAX_STACK, StackSample, StateWord, VmEvent, VmEventKind, VmState};
pub use sunit::TestSummary;
pub use vm::{BUNDLED, Vm, VmError, VmOptions, package_of};
