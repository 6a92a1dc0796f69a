//! `lupa run CLASS ARGS`: load a class and send it `new run` (or `run:`).

use clap::Args;
use std::process::ExitCode;

use crate::vm_args::{VmArgs, with_vm};

/// `lupa run` arguments.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// Print one JSON line of the run's time and heap statistics on stderr at the end (the
    /// workers of `lupa gc-tune` and `lupa gc-bench --jobs`).
    #[arg(long = "stats-json", hide = true)]
    pub(crate) stats_json: bool,
    /// The class to run.
    pub(crate) class: String,
    /// Arguments passed to `run:` (after the class name).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) args: Vec<String>,
}

/// Run `lupa run`.
pub(crate) fn main(a: &RunArgs) -> ExitCode {
    if a.stats_json {
        return crate::gctune::worker(a);
    }
    let args = program_args(&a.class, &a.args);
    with_vm(&a.vm, |vm| {
        // Load the class first so that a missing class is a clear error.
        vm.load_class_by_name(&a.class)?;
        vm.run_main(&args)
    })
}

/// `CLASS ARG...` as `run_main` takes them.
pub(crate) fn program_args(class: &str, args: &[String]) -> Vec<String> {
    let mut all = vec![class.to_string()];
    all.extend(args.iter().cloned());
    all
}
