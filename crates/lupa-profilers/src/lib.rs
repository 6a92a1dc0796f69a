//! `lupa-profilers`: every profiler of Lupa, between the CLI (and tests, and the
//! Smalltalk side) and the VM.
//!
//! A profiler observes a [`lupa_vm::Vm`] through its public observation API
//! (activation hooks, counters, the method query API) and answers a
//! [`lupa_prof::Profile`], which `lupa_prof::report::write` turns into any report
//! format. There is one lifecycle for all of them: a [`ProfileMode`] is
//! [`start`](ProfileMode::start)ed on a VM, Smalltalk runs, and the
//! [`RunningProfiler`] is [`finish`](RunningProfiler::finish)ed into a profile
//! (or [`ProfileMode::run_main`] does the three steps for a program).
//!
//! | module | what |
//! | --- | --- |
//! | [`mode`] | [`ProfileMode`] (Compteur, exact timing), start/finish |
//! | `context_tree` | the activation hooks: one calling-context tree per process |
//! | [`naming`] | method ids named through [`lupa_vm::Vm::describe_method`] |
//! | [`compteur`] | Compteur's report header and application filter |
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
//! use lupa_profilers::ProfileMode;
//! use lupa_vm::{Vm, VmOptions};
//!
//! let mut vm = Vm::new(VmOptions { quiet: true, ..VmOptions::default() }).unwrap();
//! vm.load_class_by_name("Hello").unwrap();
//! let run = ProfileMode::Compteur.run_main(&mut vm, &["Hello".to_string()]).expect("Compteur starts");
//! assert_eq!(run.result.unwrap(), 0);
//! assert!(run.profile.method_index("Hello>>run").is_some());
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(missing_docs)]

pub mod compteur;
mod context_tree;
pub mod lifetimes;
pub mod mode;
pub mod naming;
pub mod sampler;
mod site_lines;
pub mod smalltalk;
pub mod sources;
pub mod spy;

pub use mode::{ProfileMode, Profiled, RunningProfiler, UnknownProfiler};
pub use smalltalk::install;
