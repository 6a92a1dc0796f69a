//! `lupa gc-tune`: GC parameters for a program from its object lifetimes,
//! checked against the defaults and compared with a black-box search
//! (the experiment and its report are `lupa_lab::gctune`; this file parses,
//! prints and chooses the exit code). The workers it starts are `lupa run
//! --stats-json` (`commands/run.rs`).

use clap::Args;
use lupa_lab::gc_config::GcConfig;
use lupa_lab::gctune::{self, TuneOptions};
use lupa_lab::{Check, LabError, Runner, Workload};
use std::process::ExitCode;
use std::time::Duration;

use crate::commands::run::program_args;
use crate::vm_args::{class_path, report};

/// The exit codes of `lupa gc-tune`, shown in its `--help`.
pub(crate) const EXIT_CODES: &str = "Exit codes:
  0    done (whatever the verdict)
  1    the program failed while profiled, or in every run of the defaults (a failed run of
       another configuration is reported and left out)
  2    bad usage (unknown option, bad --budget, --runs, --jobs, --rate or --memory-limit)
  65   a syntax or compile error in a class file (file:line:col)
  66   the class cannot be found
  69   --memory-limit on a machine that cannot give it (no memory cgroup this process may
       create cgroups in, or no swap)
  70   a fatal runtime error while profiling
  74   a worker process cannot be started";

/// Options of `lupa gc-tune`.
#[derive(Args, Debug)]
pub(crate) struct GcTuneArgs {
    /// Wall time the black-box search may take, its runs of the defaults included: 60s, 5m, 1h,
    /// 500ms (a number alone is seconds). It always tries one round of candidates (the report
    /// says when that went past the budget); the profile and the verification (--runs) come on
    /// top, and the report gives the time of each.
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = parse_budget)]
    pub budget: Duration,
    /// Verification runs of each configuration (the defaults, the proposal, the search's best),
    /// interleaved.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = parse_runs)]
    pub runs: usize,
    /// Runs at a time, each in its own worker process (a fresh VM every run).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Run each worker (the search's and the verification's runs; not the profile) in a memory
    /// cgroup of SIZE, paged out to swap beyond it: tuning for a machine short of memory.
    /// Needs Linux, a memory cgroup this process may create cgroups in (root) and swap.
    #[arg(long, value_name = "SIZE", value_parser = lupa_lab::pressure::parse_limit)]
    pub memory_limit: Option<u64>,
    /// Seed of the search's candidates.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Sampling rate of the lifetime profile, in (0, 1].
    #[arg(long, value_name = "R", default_value_t = 0.01, value_parser = parse_rate)]
    pub rate: f64,
    /// Class path searched before the bundled library (directories separated by ':').
    #[arg(long = "cp", alias = "classpath", value_name = "DIR:DIR")]
    pub class_path: Option<String>,
    /// Compare with the defaults' sizes (eden, growth headroom, shrink threshold; not the GC
    /// ratio) divided by N, as `lupa gc-bench --param-scale N` does, e.g. on a file 100 times
    /// smaller than the paper's.
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = crate::commands::gcbench::parse_scale)]
    pub param_scale: f64,
    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// The class to run.
    pub class: String,
    /// Its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// `60s`, `5m`, `1h`, `500ms`, `90` (seconds); more than 0, at most a day.
pub(crate) fn parse_budget(s: &str) -> Result<Duration, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("min").or_else(|| t.strip_suffix('m')) {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t.as_str(), 1.0)
    };
    let bad = || format!("invalid time '{s}' (use e.g. 60s, 5m, 1h)");
    let n: f64 = num.trim().parse().map_err(|_| bad())?;
    let secs = n * unit;
    if !(secs.is_finite() && secs > 0.0 && secs <= 86_400.0) {
        return Err(format!(
            "the budget must be more than 0 and at most 24h: '{s}'"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_runs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a number of runs from 1 to 1000")),
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r <= 1.0 => Ok(r),
        _ => Err(format!("'{s}' is not a sampling rate in (0, 1]")),
    }
}

/// Run `lupa gc-tune`.
pub(crate) fn main(a: &GcTuneArgs) -> ExitCode {
    // Before the profile: a machine that cannot limit memory says so at once.
    if let Some(bytes) = a.memory_limit
        && let Err(m) = lupa_lab::pressure::probe(bytes)
    {
        eprintln!("lupa gc-tune: --memory-limit: {m}");
        return ExitCode::from(69);
    }
    let runner = match std::env::current_exe() {
        Ok(exe) => Runner::Processes {
            exe,
            jobs: usize::from(a.jobs),
            memory: a.memory_limit,
        },
        Err(e) => {
            eprintln!("lupa gc-tune: cannot find the lupa binary to start workers: {e}");
            return ExitCode::from(74);
        }
    };
    let o = TuneOptions {
        workload: Workload {
            args: program_args(&a.class, &a.args),
            class_path: class_path(a.class_path.as_deref()),
            check: Check::ExitZero,
            // Measured with the JIT, as `lupa run` runs the program.
            jit: Some(lupa_jit::FACTORY),
        },
        runs: a.runs,
        budget: a.budget,
        seed: a.seed,
        rate: a.rate,
        runner,
        baseline: GcConfig::defaults().scaled_down(a.param_scale),
    };
    let quiet = a.quiet;
    let mut progress = |line: String| {
        if !quiet {
            eprintln!("gc-tune: {line}");
        }
    };
    match gctune::tune(&o, &mut progress) {
        Ok(report) => {
            print!("{}", gctune::report::document(&report, &o).to_text());
            ExitCode::SUCCESS
        }
        Err(LabError::Vm(e)) => {
            if matches!(e, lupa_vm::VmError::Fatal(_)) {
                eprintln!("lupa gc-tune: the program failed while profiled:");
            }
            report(&e)
        }
        Err(LabError::Workload(m)) => {
            eprintln!("lupa gc-tune: {m}");
            ExitCode::from(1)
        }
        Err(LabError::Io(m)) => {
            eprintln!("lupa gc-tune: {m}");
            ExitCode::from(74)
        }
        Err(LabError::Unavailable(m)) => {
            eprintln!("lupa gc-tune: --memory-limit: {m}");
            ExitCode::from(69)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets() {
        assert_eq!(parse_budget("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_budget("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_budget("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_budget("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_budget(" 90 "), Ok(Duration::from_secs(90)));
        assert_eq!(parse_budget("1.5m"), Ok(Duration::from_secs(90)));
        assert!(parse_budget("soon").is_err());
        assert!(parse_budget("0s").is_err());
        assert!(parse_budget("-5s").is_err());
        assert!(parse_budget("2d").is_err());
        assert!(parse_budget("25h").is_err());
    }
}
