//! `lupa proxies-bench`: the MethodProxies benchmark (the paper's tables 2,
//! 3 and 5). The experiment is in `crate::proxies`.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::vm_args::{VmArgs, with_vm};

/// `lupa proxies-bench` arguments.
#[derive(Args, Debug)]
pub(crate) struct ProxiesArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// Repetitions of every measurement.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Projects, comma-separated (Richards, DeltaBlue, Json, CD, Havlak, Collections).
    #[arg(long)]
    projects: Option<String>,
    /// Techniques, comma-separated (trap, runWithIn, source, trapUnsafe).
    #[arg(long)]
    techniques: Option<String>,
    /// Handlers, comma-separated (noAction, counting, callGraph, coverage).
    #[arg(long)]
    handlers: Option<String>,
    /// Workload scale factor.
    #[arg(long, default_value_t = 1)]
    scale: usize,
    /// Time every workload execution K times in a row and keep the fastest (filters out the
    /// noise of a busy machine).
    #[arg(long, value_name = "K", default_value_t = 3)]
    best_of: usize,
    /// Also write the raw measurements to FILE as plain CSV (a header, one row per run); the
    /// configuration and summary go to FILE.summary.txt.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Run `lupa proxies-bench`.
pub(crate) fn main(p: &ProxiesArgs) -> ExitCode {
    let mut args = vec![
        format!("runs={}", p.runs.max(1)),
        format!("scale={}", p.scale.max(1)),
        format!("bestOf={}", p.best_of.max(1)),
        format!("progress={}", !p.quiet),
    ];
    for (k, v) in [
        ("projects", &p.projects),
        ("techniques", &p.techniques),
        ("handlers", &p.handlers),
    ] {
        if let Some(v) = v {
            args.push(format!("{k}={v}"));
        }
    }
    with_vm(&p.vm, |vm| {
        let (text, ok) = crate::proxies::run(vm, &args, p.csv.as_deref())?;
        print!("{text}");
        Ok(if ok { 0 } else { 1 })
    })
}
