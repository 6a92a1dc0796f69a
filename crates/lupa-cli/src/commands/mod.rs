//! One file per command: its arguments and what it does. A command parses,
//! calls the profiler layer (`lupa_profilers`), the experiments (`lupa_lab`),
//! Hip's store (`lupa_history`) or the VM, and prints; the profilers, the
//! experiments and their reports live in the library crates.

pub(crate) mod bench;
pub(crate) mod blueprint;
pub(crate) mod calibrate;
pub(crate) mod completions;
pub(crate) mod count;
pub(crate) mod coverage;
pub(crate) mod gcbench;
pub(crate) mod gctune;
pub(crate) mod history;
pub(crate) mod lifetimes;
pub(crate) mod man;
pub(crate) mod profile;
pub(crate) mod proxies_bench;
pub(crate) mod run;
pub(crate) mod stability;
pub(crate) mod test;
pub(crate) mod types;
pub(crate) mod view;
