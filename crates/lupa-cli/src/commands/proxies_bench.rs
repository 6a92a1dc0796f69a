//! `lupa proxies-bench`: the MethodProxies paper's tables 2, 3 and 5 (the
//! experiment is `lupa_lab::proxies`); this file parses the options, runs the
//! driver in a VM made from the VM flags, writes `--csv` and prints the
//! tables.

use clap::Args;
use lupa_lab::LabError;
use lupa_lab::proxies::{self, ProxiesOptions};
use lupa_vm::VmError;
use std::path::{Path, PathBuf};
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
    /// Projects, comma-separated: Richards, DeltaBlue, Json, CD, Havlak, Collections (default:
    /// all but Havlak).
    #[arg(long, value_name = "LIST", value_parser = |s: &str| proxies::check_names(s, proxies::PROJECTS))]
    projects: Option<String>,
    /// Techniques, comma-separated: trap, runWithIn, source, trapUnsafe (default: all).
    #[arg(long, value_name = "LIST", value_parser = |s: &str| proxies::check_names(s, proxies::TECHNIQUES))]
    techniques: Option<String>,
    /// Handlers, comma-separated: noAction (no hooks), emptyHooks (hooks that do nothing: the
    /// paper's no-action tool), counting, callGraph, coverage (default: all).
    #[arg(long, value_name = "LIST", value_parser = |s: &str| proxies::check_names(s, proxies::HANDLERS))]
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

/// Where the configuration and summary of a CSV file go: `FILE.summary.txt`.
fn summary_path(csv: &Path) -> PathBuf {
    let mut name = csv.as_os_str().to_owned();
    name.push(".summary.txt");
    PathBuf::from(name)
}

/// Run the driver, write `--csv` (even when the driver failed), then its tables.
fn run(vm: &mut lupa_vm::Vm, p: &ProxiesArgs) -> Result<(String, bool), LabError> {
    let options = ProxiesOptions {
        runs: p.runs,
        scale: p.scale,
        best_of: p.best_of,
        progress: !p.quiet,
        projects: p.projects.clone(),
        techniques: p.techniques.clone(),
        handlers: p.handlers.clone(),
    };
    let done = proxies::run(vm, &options)?;
    if let Some(path) = &p.csv {
        crate::save::save(path, done.csv().csv().as_bytes()).map_err(LabError::Io)?;
        crate::save::save(&summary_path(path), done.comments().as_bytes()).map_err(LabError::Io)?;
    }
    let (report, ok) = done.report()?;
    Ok((report.to_text(), ok))
}

/// Run `lupa proxies-bench`.
pub(crate) fn main(p: &ProxiesArgs) -> ExitCode {
    with_vm(&p.vm, |vm| {
        let (text, ok) = run(vm, p).map_err(VmError::from)?;
        print!("{text}");
        Ok(if ok { 0 } else { 1 })
    })
}
