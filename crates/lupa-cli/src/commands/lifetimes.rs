//! `lupa lifetimes`: run a program under Illimani's object-lifetime
//! profiler (VM mode by default, or the paper's faithful mode) and report
//! the lifetimes of the sampled allocations.

use clap::{Args, ValueEnum};
use lupa_prof::lifetimes::Lifetimes;
use lupa_prof::lifetimes::text::TextOptions;
use lupa_profilers::lifetimes::{LifetimeConfig, LifetimeMode};
use lupa_profilers::{ProfileMode, Workload};
use lupa_vm::{Vm, VmError};

use super::run::program_args;
use crate::report_args::{ReportArgs, run_stem};
use crate::vm_args::VmArgs;

/// How the lifetimes are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModeArg {
    /// The VM samples allocations and the collector reports deaths (no proxies, no ephemerons).
    Vm,
    /// The paper's technique: MethodProxies on the allocating methods, an ephemeron per object.
    Faithful,
}

/// `lupa lifetimes` arguments.
#[derive(Args, Debug)]
pub(crate) struct LifetimesArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// How lifetimes are recorded.
    #[arg(long, value_enum, default_value = "vm")]
    mode: ModeArg,
    /// Sampling rate in (0, 1]: each allocation is sampled independently with this probability,
    /// whatever its size, in both modes and as `IllLifetimeProfiler>>samplingRate:` does
    /// (1: every allocation).
    #[arg(long, default_value_t = 0.01, value_name = "R")]
    rate: f64,
    /// Sample every N-th allocation instead (deterministic).
    #[arg(long, value_name = "N")]
    every: Option<u64>,
    /// Seed of the random gaps between sampled allocations.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Frames kept per allocation.
    #[arg(long, default_value_t = 8, value_name = "N")]
    stack_depth: usize,
    /// Only objects of this class (repeatable).
    #[arg(long = "only", value_name = "CLASS")]
    only: Vec<String>,
    /// Never objects of this class (repeatable).
    #[arg(long = "ignore", value_name = "CLASS")]
    ignore: Vec<String>,
    /// Skip the full GC at the stop: objects that died after the last collection are then
    /// reported alive at the end (censored), and the report says so.
    #[arg(long)]
    no_final_gc: bool,
    #[command(flatten)]
    report: ReportArgs<Lifetimes>,
    /// Sites and classes listed in the text report.
    #[arg(long, default_value_t = 20, value_name = "N")]
    top: usize,
    /// The class to run.
    class: String,
    /// Its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Run `lupa lifetimes`.
pub(crate) fn run(vm: &mut Vm, a: &LifetimesArgs) -> Result<i32, VmError> {
    super::run::warn_stray_options("lifetimes", &a.args);
    if !(a.rate > 0.0 && a.rate <= 1.0) {
        eprintln!("lupa: --rate takes a number in (0, 1], not {}", a.rate);
        return Ok(2);
    }
    if a.every == Some(0) {
        eprintln!("lupa: --every takes a positive number");
        return Ok(2);
    }
    let args = program_args(&a.class, &a.args);
    let dest = a.report.prepare(vm, &run_stem(&args))?;
    vm.load_class_by_name(&a.class)?;
    let config = LifetimeConfig {
        mode: match a.mode {
            ModeArg::Vm => LifetimeMode::Vm,
            ModeArg::Faithful => LifetimeMode::Faithful,
        },
        rate: a.rate,
        every_nth: a.every.unwrap_or(0),
        seed: a.seed,
        stack_depth: a.stack_depth,
        only: a.only.clone(),
        ignore: a.ignore.clone(),
        final_gc: !a.no_final_gc,
    };
    let command = format!("lupa lifetimes {}", args.join(" "));
    let progress = crate::progress::Ticker::start("lupa lifetimes", &a.class);
    let run = ProfileMode::Lifetimes(config).run(vm, Workload::Program(&args));
    progress.finish();
    let mut run = run?;
    vm.io.flush()?;
    let code = crate::signals::program_status(run.result)?;
    run.output.set_command(&command);
    let lifetimes = Lifetimes::try_from(run.output)?;
    if let Some(note) = lifetimes.limit_note() {
        eprintln!("lupa: warning: {note}");
    }
    a.report
        .deliver(&lifetimes, &TextOptions { top: a.top }, &dest)?;
    Ok(code)
}
