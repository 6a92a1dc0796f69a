//! `lupa bench NAME [ITERATIONS [INNER]]`: run a bundled benchmark.

use clap::Args;
use std::process::ExitCode;

use crate::vm_args::{VmArgs, with_vm};

/// `lupa bench` arguments.
#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// Benchmark name, or All.
    name: String,
    /// Outer iterations (default 1).
    iterations: Option<u32>,
    /// Inner iterations / problem size (default: the benchmark's own).
    inner: Option<u32>,
}

/// Run `lupa bench`.
pub(crate) fn main(b: &BenchArgs) -> ExitCode {
    let mut args = vec!["BenchmarkRunner".to_string(), b.name.clone()];
    args.push(b.iterations.unwrap_or(1).to_string());
    if let Some(i) = b.inner {
        args.push(i.to_string());
    }
    with_vm(&b.vm, |vm| vm.run_main(&args))
}
