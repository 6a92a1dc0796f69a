//! `lupa-prof`: the analysis and report layer of Lupa's profilers.
//!
//! It needs no VM internals. A profiler (Lupa's message-counting profiler after
//! Bergel's Compteur, a sampling profiler, Spy-style instrumentation) fills a
//! [`Profile`] — a calling-context tree of methods with one metric — usually
//! through a [`ProfileBuilder`] driven by the VM's activation hooks. This crate
//! then
//!
//! * derives inclusive totals, per-method aggregates and the call graph
//!   ([`profile`]), and filters a profile down to the application's methods
//!   ([`Profile::filtered`]), and grafts one profile under a labelled node of
//!   another ([`Profile::graft`]);
//! * writes reports ([`report`]): a ranking table (text and JSON), a
//!   MessageTally-style tree, callgrind files (KCachegrind, `callgrind_annotate`),
//!   folded stacks (`flamegraph.pl`, inferno, speedscope), a standalone flame
//!   graph SVG and speedscope JSON;
//! * computes the statistics of the Compteur paper ([`stats`]): regression of
//!   sends on time through the origin with Student-t intervals, coefficients of
//!   variation, and the ranking instability ψ;
//! * lays out experiments' result tables ([`table`]: a [`table::Table`] as
//!   text, CSV or JSON).
//!
//! ```
//! use lupa_prof::{Metric, MethodInfo, ProfileBuilder, report};
//!
//! let mut b = ProfileBuilder::new(Metric::Sends);
//! let main = b.add_method(MethodInfo::new("Main", "run"));
//! let fib = b.add_method(MethodInfo::new("Integer", "fib"));
//! b.enter(main);
//! b.add_self(3);
//! b.enter(fib);
//! b.add_self(40);
//! b.exit();
//! b.exit();
//! let profile = b.finish();
//! assert_eq!(profile.grand_total(), 43);
//! let folded = report::folded::to_string(&profile);
//! assert_eq!(folded, "Main>>run 3\nMain>>run;Integer>>fib 40\n");
//! ```

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(missing_docs)]

pub mod blueprint;
mod builder;
pub mod calibration;
pub mod coverage;
mod graft;
pub mod history;
mod ids;
pub mod lifetimes;
mod merge;
mod processes;
pub mod profile;
pub mod render;
pub mod report;
mod sample_tree;
pub mod stats;
pub mod table;
pub mod timeline;
pub mod types;

pub use builder::{ProfileBuilder, SampleFrame};
pub use merge::MergeError;
pub use processes::{ProcessTree, process_label, process_number};
pub use profile::{
    CallEdge, CallSite, MethodId, MethodInfo, MethodStats, Metric, Node, NodeId, Profile,
    ProfileError, ROOT_METHOD, ROOT_NAME, ROOT_NODE,
};
pub use report::{Report, ReportFormat};
pub use sample_tree::{SampleNode, SampleTree};
pub use timeline::{Marker, MarkerKind, TimedSample, Timeline};
