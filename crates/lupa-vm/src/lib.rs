//! The Lupa virtual machine: runs SOM Smalltalk with observation built in.
//!
//! A [`Vm`] is a set of parts that own their state (`vm/mod.rs` has the
//! table); each part is a module:
//!
//! - `image`: the program's code and names: the class table with lookup and
//!   the epoch, symbols, globals, the method table, the primitive bindings,
//!   the class loader and bootstrap, the fast-path cache, and the query API
//!   profilers use (what a method id names, its instructions and lines);
//! - `sched`: green-thread processes, semaphores, delays and the
//!   deterministic scheduler, with the running process's state;
//! - [`obs`]: the observation points (send counter, activation and GC hooks,
//!   the sampling register and what the VM publishes for a sampler, line
//!   coverage, the lifetime recorder of Illimani's VM mode, pretenuring);
//! - `io`: the program's streams, open files, arguments and exit status;
//! - `interp`: the non-recursive bytecode interpreter (process and frame
//!   state, the dispatch loop, the send path, unwinding, the `Op::Special` fast
//!   paths, runtime limits, failures and backtraces), which runs on the whole
//!   `Vm`;
//! - `prims`: the native primitives, one module per class family, also on the
//!   whole `Vm`;
//! - `proxies`: the VM support for MethodProxies (hidden selectors, method
//!   copies and literal patching, the meta level, the trap shortcut);
//! - `objects`: the Rust side of the object model (well-known class indices,
//!   class descriptions, runtime method code);
//! - [`sunit`]: running the bundled and user SUnit tests (`lupa test`,
//!   per-suite Rust tests);
//! - `vm`: the [`Vm`] itself, [`VmOptions`], [`VmError`], making a VM, the
//!   collection glue, the observation API on the `Vm` (`observing.rs`) and
//!   the profiler door of the Smalltalk side (`profiler_door.rs`).

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

pub(crate) mod image;
pub(crate) mod interp;
pub(crate) mod io;
pub(crate) mod objects;
pub mod obs;
pub(crate) mod prims;
pub(crate) mod proxies;
pub(crate) mod sched;
pub mod sunit;
mod vm;

pub use image::{BUNDLED, BUNDLED_PREFIX, ClassTable, Image, Lookup, PackageInfo, package_of};
pub use image::{InstructionInfo, MethodDescription};
pub use interp::native::{
    CompileOptions, DEOPT_REASONS, Installed, Jit, JitWork, MAX_NATIVE_DEPTH, NativeFunctionInfo,
};
pub use io::{Io, write_target};
pub use lupa_compiler::CodeKind;
pub use lupa_heap::{CollectionKind, Death, GcParam, HeapConfig, HeapStats, SamplingPolicy, Value};
pub use objects::native::{
    BAIL, DECLINE, DONE, FastEntry, NativeCtx, NativeFn, RETURNED, RUNTIME_ENTRIES, SLOW_ALL,
    SLOW_ANSWERS, SLOW_CALLS, TRIVIAL_CONSTANT, TRIVIAL_GETTER, TRIVIAL_LITERAL, TRIVIAL_NONE,
    TRIVIAL_SELF, TRIVIAL_SETTER, leaf_primitive,
};
pub use objects::{InlineCache, MethodCode, PIC_SIZE, Trivial, cls, layout};
pub use obs::lifetimes::{AllocationRecord, CollectionMark, LifetimeOptions, LifetimeRecording};
pub use obs::pretenure::PretenureSite;
pub use obs::sampling::{MAX_EVENTS, MAX_STACK, StateWord, VmEvent, VmEventKind, VmState};
pub use obs::self_timed::SelfTimer;
pub use obs::stack_log::{StackEntry, StackFrame, StackLog};
pub use obs::{Activation, ActivationHooks, GcEvent, GcHooks, Observation, SampleRegister};
pub use prims::{Args, Expected, PrimFailure, PrimResult, Reply};
pub use sched::{Frame, Scheduler, interrupt};
pub use sunit::TestSummary;
pub use vm::profiler_door::{
    CallGraph, GraphBlock, GraphMethod, ProfilerFactory, ProfilerReport, ProfilerSession,
};
pub use vm::{
    DEFAULT_CODE_ZONE_BYTES, DEFAULT_JIT_THRESHOLD, JitFactory, JitMode, Vm, VmError, VmOptions,
};
