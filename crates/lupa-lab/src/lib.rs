//! `lupa-lab`: Lupa's experiments, each after a paper's table or section, and
//! what they share: measured runs of a program in fresh VMs, in this process
//! or in worker processes driven by typed arguments, and result tables built
//! as data ([`lupa_prof::table`]) that the `lupa` command only prints.
//!
//! | module | what |
//! | --- | --- |
//! | [`measure`](mod@measure) | one run of a program in a fresh VM, measured (wall time, sends, heap statistics) |
//! | [`worker`] | the worker protocol: [`WorkerArgs`] (typed, made into `lupa run --stats-json` arguments in one place) and the statistics line, [`RunStats`] |
//! | [`runs`] | a workload's checked runs under GC configurations, in this process or in worker processes ([`Runner`]) |
//! | [`pressure`] | worker processes under a memory limit: a memory cgroup each, paged out to swap beyond it |
//! | [`gc_config`] | [`GcConfig`]: one set of GC parameters, the Illimani paper's configurations |
//! | [`gcbench`] | `lupa gc-bench`: GcLoad and DataFrame workloads, interleaved runs, the paper's tables 1 and 3-5 |
//! | [`gctune`] | `lupa gc-tune`: GC parameters from lifetimes, a black-box search, verification runs |
//! | [`calibrate`] | `lupa calibrate`: Compteur's message rate from a basket of programs (section 3) |
//! | [`stability`] | `lupa stability`: ranking instability of counted and timed profiles (section 4.4) |
//! | [`proxies`] | `lupa proxies-bench`: MethodProxies' tables 2, 3 and 5 |
//! | [`cells`] | how the tables write means, deviations, sizes and ratios |
//! | [`error`] | [`LabError`], and the one conversion of a run's failure into it |
//!
//! The lab uses the profilers (`lupa-profilers`: gc-tune profiles lifetimes,
//! stability ranks Compteur's and the timing profiler's profiles); nothing
//! there depends on the lab.
//!
//! Contract: nothing here prints or exits; progress goes to callbacks,
//! results are values and [`lupa_prof::table`] documents, failures are
//! [`LabError`]s.

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

pub mod calibrate;
pub mod cells;
pub mod error;
pub mod gc_config;
pub mod gcbench;
pub mod gctune;
pub mod measure;
pub mod pressure;
pub mod proxies;
pub mod runs;
pub mod stability;
pub mod worker;

pub use error::LabError;
pub use gc_config::GcConfig;
pub use measure::{Capture, Measurement, measure};
pub use runs::{Check, Job, RunError, RunSample, Runner, Workload};
pub use worker::{RunStats, WorkerArgs};
