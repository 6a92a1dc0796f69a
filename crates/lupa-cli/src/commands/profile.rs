//! `lupa profile CLASS ARGS`: the sampling profiler of the whole VM
//! (VMProfiler); where the time went by VM state, a ranking and a call tree,
//! or a report file.

use clap::Args;
use lupa_prof::Profile;
use lupa_profilers::sampler::{self, MAX_RATE_HZ, Sampled, SamplerConfig};
use lupa_profilers::{ProfileMode, Workload};
use lupa_vm::{Vm, VmError};
use std::sync::Arc;

use super::run::program_args;
use super::view::{FlameArgs, ViewArgs, deliver_profile};
use crate::report_args::{ReportArgs, run_stem};
use crate::vm_args::{VmArgs, options};

/// `lupa profile` arguments.
#[derive(Args, Debug)]
pub(crate) struct ProfileArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    #[command(flatten)]
    report: ReportArgs<Profile>,
    #[command(flatten)]
    flame: FlameArgs,
    /// Mean sampling rate in Hz (intervals are jittered uniformly in 0.5..1.5 of the mean).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_RATE_HZ)))]
    rate: u32,
    /// The clock that weighs each sample: cpu (the VM thread's CPU time since the previous
    /// sample; the same program gives the same profile on a loaded machine) or wall (time spent
    /// descheduled shows too).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "wall"])]
    clock: String,
    /// Seed of the interval jitter (printed in the report).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also run the program a second time, sampled deterministically every N message sends
    /// (default 1000), and show each method's share of the time next to its share of the work.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1000",
          conflicts_with = "every", value_parser = clap::value_parser!(u64).range(1..))]
    compare_modes: Option<u64>,
    /// Also take the VM thread's native program counter at each tick (a sampler thread sends
    /// SIGPROF to the VM thread at each tick, which costs a wake-up per tick; Linux on x86-64 or
    /// AArch64) and report the time by Rust function of the lupa binary. On a
    /// loaded machine many ticks have no pc (the VM thread did not run before the next tick;
    /// counted in the report): use an idle machine or a lower --rate.
    #[arg(long, conflicts_with = "every")]
    native: bool,
    /// Deterministic mode: no sampler thread; the interpreter samples its stack every N message
    /// sends, each sample weighing 1 (the same samples on every run).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    every: Option<u64>,
    #[command(flatten)]
    view: ViewArgs,
    /// Profile the bundled benchmark NAME: the positional arguments are then its outer and inner
    /// iterations (`lupa profile --bench Richards 5 10` runs `BenchmarkRunner Richards 5 10`).
    #[arg(long, value_name = "NAME")]
    bench: Option<String>,
    /// The class to run (with --bench: the outer iterations).
    #[arg(required_unless_present = "bench")]
    class: Option<String>,
    /// Arguments passed to `run:`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Run `lupa profile`.
pub(crate) fn run(vm: &mut Vm, a: &ProfileArgs) -> Result<i32, VmError> {
    let config = SamplerConfig {
        rate_hz: a.rate,
        clock: a.clock.parse().map_err(VmError::Fatal)?,
        seed: a.seed,
        every: a.every,
        unweighted: false,
        native: a.native,
    };
    let stray = super::run::stray_options("profile", &a.args);
    if a.bench.is_some() {
        // A benchmark takes two numbers: an option there is a mistake.
        if let Some(o) = stray
            .first()
            .or_else(|| a.args.iter().find(|x| x.starts_with('-')))
        {
            eprintln!(
                "lupa: profile: `{o}` comes after the benchmark's iterations; give the options \
                 before them (lupa profile --bench NAME [OPTIONS] OUTER INNER)"
            );
            return Ok(2);
        }
    } else {
        super::run::warn_stray_options("profile", &a.args);
    }
    let args = match (&a.bench, &a.class) {
        (Some(name), outer) => {
            let mut all = vec!["BenchmarkRunner".to_string(), name.clone()];
            all.push(outer.clone().unwrap_or_else(|| "1".to_string()));
            all.extend(a.args.iter().cloned());
            all
        }
        (None, Some(class)) => program_args(class, &a.args),
        (None, None) => return Err(VmError::Fatal("no class to run".to_string())),
    };
    let dest = a.report.prepare(vm, &run_stem(&args))?;
    vm.load_class_by_name(&args[0])?;
    let run = ProfileMode::Sampling(config).run(vm, Workload::Program(&args))?;
    let code = crate::signals::program_status(run.result)?;
    let view = a.view.view();
    let Sampled { profile, stats } = view.apply_sampled(Sampled::try_from(run.output)?);
    let command = format!("lupa profile {}", args.join(" "));
    let mut header = sampler::header(vm, &profile, &stats, &command);
    if a.every.is_none() {
        // The samples weigh the VM thread's time; the compiler thread's is
        // beside it (the header's run lines end at the first blank line).
        if let Some(line) = compiler_thread_line(vm) {
            let at = header
                .iter()
                .position(String::is_empty)
                .unwrap_or(header.len());
            header.insert(at, line);
        }
    }
    header.extend(crate::signals::interrupted_line());
    if let Some(every) = a.compare_modes {
        let work = sampler::work_profile(options(&a.vm), &args, every, &view)?;
        let lines = sampler::compare(&profile, &work, every, view.top);
        if a.report.format.is_terminal_text() {
            header.push(String::new());
            header.extend(lines);
        } else {
            eprintln!("{}", lines.join("\n"));
        }
    }
    let mut options = view.report_options(a.report.format, command, header);
    options.sampling = Some(stats.sampling_info());
    options.timeline = Some(Arc::new(stats.timeline));
    deliver_profile(vm, &a.report, &a.flame, &dest, profile, options)?;
    Ok(code)
}

/// "JIT compiler thread: N ms": the CPU time the JIT's compiler thread spent
/// beside the VM thread, whose time the samples weigh (`None`: no thread ran).
fn compiler_thread_line(vm: &Vm) -> Option<String> {
    let t = lupa_jit::stats(vm)?.thread?;
    Some(format!(
        "JIT compiler thread: {:.1} ms of CPU time for {} compilations, beside the VM thread (not in its samples)",
        t.cpu_time.as_secs_f64() * 1e3,
        t.submitted
    ))
}
