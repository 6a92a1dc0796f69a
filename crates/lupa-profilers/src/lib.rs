//! `lupa-profilers`: every profiler of Lupa, between the CLI (and tests, and the
//! Smalltalk side) and the VM.
//!
//! A profiler observes a [`lupa_vm::Vm`] through its public API (activation
//! hooks, counters, the method query API, the lifetime recorder, message
//! sends to Spy's Smalltalk profilers) and answers a [`ProfileOutput`]: a
//! `lupa_prof` model (a [`lupa_prof::Profile`], lifetimes, coverage, types, a
//! blueprint), which writes itself in any of its formats
//! ([`lupa_prof::Report`]). There is one lifecycle for all of them: a
//! [`ProfileMode`] (the one switch naming every profiler, with its
//! configuration) is [`start`](ProfileMode::start)ed on a VM, Smalltalk runs,
//! and the [`RunningProfiler`] is [`finish`](RunningProfiler::finish)ed into
//! its output (or [`ProfileMode::run`] does the three steps for a
//! [`Workload`]); every step fails with the one [`ProfilerError`].
//!
//! | module | what |
//! | --- | --- |
//! | [`mode`] | [`ProfileMode`]: compteur, timing, sampling, lifetimes, coverage, types, blueprint |
//! | [`profiler`] | the lifecycle: [`RunningProfiler`], [`Workload`], [`Profiled`] |
//! | [`output`] | [`ProfileOutput`], conversions to the models, `merge` |
//! | [`error`] | [`ProfilerError`] |
//! | `context_tree` | the activation hooks: one calling-context tree per process |
//! | [`naming`] | method ids named through [`lupa_vm::Image::describe_method`] |
//! | [`compteur`] | Compteur's configuration, report header and time estimate |
//! | [`view`] | what part of a profile a report shows (filters, ranking, tree) |
//! | [`sources`] | the bundled sources a report names, written beside it |
//! | [`lifetimes`] | Illimani's lifetime profiler, VM or faithful mode, into a lifetimes model |
//! | [`sampler`] | the sampling profiler of the whole VM (VMProfiler): thread, clocks, VM states |
//! | [`smalltalk`] | [`install`]: the factory behind `System>>startProfiler:` (`Compteur profile:`) |
//! | [`spy`] | Spy's Smalltalk profilers driven from Rust: test coverage with the VM's line counts, type feedback, the time and call graph, time profiling blueprints |
//!
//! Library code here never prints and never exits: it answers values and errors.
//!
//! Profiling a program from Rust:
//!
//! ```
//! use lupa_profilers::{ProfileMode, Workload};
//! use lupa_vm::{Vm, VmOptions};
//!
//! let mut vm = Vm::new(VmOptions { quiet: true, ..VmOptions::default() }).unwrap();
//! vm.load_class_by_name("Hello").unwrap();
//! let args = ["Hello".to_string()];
//! let run = ProfileMode::COMPTEUR.run(&mut vm, Workload::Program(&args)).expect("Compteur starts");
//! assert_eq!(run.result.unwrap(), 0);
//! assert!(run.output.profile().unwrap().method_index("Hello>>run").is_some());
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(missing_docs)]

pub mod compteur;
mod context_tree;
pub mod error;
pub mod lifetimes;
pub mod mode;
pub mod naming;
pub mod output;
pub mod profiler;
pub mod sampler;
mod site_lines;
pub mod smalltalk;
pub mod sources;
pub mod spy;
pub mod view;

pub use error::ProfilerError;
pub use mode::ProfileMode;
pub use output::ProfileOutput;
pub use profiler::{Profiled, RunningProfiler, Workload};
pub use smalltalk::install;
