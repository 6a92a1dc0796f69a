//! `lupa gc-tune`: GC parameters for a program from its object lifetimes,
//! checked against the defaults and compared with a black-box search
//! (the logic is `lupa_profilers::gctune`; this file parses, prints and
//! chooses the exit code), and the worker side of its runs (`lupa run
//! --stats-json`).

use crate::RunArgs;
use crate::gcbench::{pm, render};
use clap::Args;
use lupa_profilers::gctune::{self, Check, Runner, TuneError, TuneOptions, TuneReport, Workload};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The exit codes of `lupa gc-tune`, shown in its `--help`.
pub(crate) const EXIT_CODES: &str = "Exit codes:
  0    done (whatever the verdict)
  1    the program failed, or did not verify its result, in one of the runs
  2    bad usage (unknown option, bad --budget, --runs, --jobs or --rate)
  65   a syntax or compile error in a class file (file:line:col)
  66   the class cannot be found
  70   a fatal runtime error while profiling
  74   a worker process cannot be started";

/// Options of `lupa gc-tune`.
#[derive(Args, Debug)]
pub(crate) struct GcTuneArgs {
    /// Wall time the black-box search may take: 60s, 5m, 1h, 500ms (a number alone is seconds).
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = parse_budget)]
    pub budget: Duration,
    /// Verification runs of each configuration (the defaults, the proposal, the search's best),
    /// interleaved.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = parse_runs)]
    pub runs: usize,
    /// Runs at a time, each in its own worker process (a fresh VM every run).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Seed of the search's candidates.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Sampling rate of the lifetime profile, in (0, 1].
    #[arg(long, value_name = "R", default_value_t = 0.01, value_parser = parse_rate)]
    pub rate: f64,
    /// Class path searched before the bundled library (directories separated by ':').
    #[arg(long = "cp", alias = "classpath", value_name = "DIR:DIR")]
    pub class_path: Option<String>,
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

/// The worker side of a run: `lupa run --stats-json ...` runs the program in a
/// fresh VM, prints its output, then one JSON line of statistics on stderr.
pub(crate) fn worker(a: &RunArgs) -> ExitCode {
    let args = crate::program_args(&a.class, &a.args);
    match gctune::runs::worker_run(crate::options(&a.vm), &args) {
        Ok((stats, output)) => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = out.write_all(output.as_bytes()).and_then(|()| out.flush()) {
                eprintln!("lupa: cannot write the program's output: {e}");
                return ExitCode::from(74);
            }
            eprintln!("{}", stats.to_json_line());
            crate::exit_status(stats.exit_code)
        }
        Err(e) => crate::report(&e),
    }
}

fn class_path(cp: Option<&str>) -> Vec<PathBuf> {
    cp.unwrap_or("")
        .split(':')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

fn mb(bytes: f64) -> f64 {
    bytes / (1 << 20) as f64
}

fn speed_up_line(s: Option<gctune::SpeedUp>) -> String {
    match s {
        None => "not measured".to_string(),
        Some(s) => {
            let verdict = match s.p_value {
                None => "one run: no interval".to_string(),
                Some(p) if s.significant() => format!(
                    "p = {p:.3}, significantly {}",
                    if s.estimate > 1.0 { "faster" } else { "slower" }
                ),
                Some(p) => format!("p = {p:.3}, not significant"),
            };
            format!("{} ({verdict})", s.label())
        }
    }
}

/// The report `lupa gc-tune` prints.
fn text(r: &TuneReport, o: &TuneOptions) -> String {
    let mut out = String::new();
    let command = o.workload.command();
    let l = &r.profile.lifetimes;
    let d = &r.proposal.demographics;
    let _ = writeln!(out, "lupa gc-tune {command}");
    out.push('\n');
    let _ = writeln!(
        out,
        "Profile: {:.1} MB allocated in {} objects, {:.2} s; sampled at rate {} ({} records), \
eden {} so that deaths are seen within {}",
        mb(l.totals.allocated_bytes as f64),
        l.totals.allocated_objects,
        r.profile.elapsed.as_secs_f64(),
        o.rate,
        d.records,
        gctune::config::size_flag(d.resolution_bytes as usize),
        gctune::config::size_flag(d.resolution_bytes as usize)
    );
    let _ = writeln!(
        out,
        "Sites (against the default {} nursery): {} short ({:.0}% of the bytes), {} long ({:.0}%), \
{} immortal ({:.0}%); large objects {:.0}%; with the proposal, {:.2} bytes reach old space per \
byte allocated, {:.0}% of them alive at the end",
        gctune::config::size_flag(d.threshold_bytes as usize),
        d.sites[0],
        100.0 * d.short_share,
        d.sites[1],
        100.0 * d.long_share,
        d.sites[2],
        100.0 * d.immortal_share,
        100.0 * d.large_share,
        d.growth_rate,
        100.0 * d.survival
    );
    out.push('\n');
    out.push_str("Proposal (from the lifetimes):\n");
    let width = r
        .proposal
        .choices
        .iter()
        .map(|c| c.flag.len() + 1 + c.value.len())
        .max()
        .unwrap_or(0);
    for c in &r.proposal.choices {
        let flag = format!("{} {}", c.flag, c.value);
        let _ = writeln!(out, "  {flag:<width$}  {}", c.why);
    }
    out.push('\n');
    let s = &r.search;
    let _ = writeln!(
        out,
        "Search (iterated local search from the defaults, seed {}): {} configurations, {} runs \
({} stopped early) in {:.1} s of a {:.0} s budget",
        o.seed,
        s.configs,
        s.runs,
        s.capped,
        s.elapsed.as_secs_f64(),
        o.budget.as_secs_f64()
    );
    if s.improvements.is_empty() {
        out.push_str("  nothing it tried beat the defaults\n");
    } else {
        let _ = writeln!(out, "  best: {}", s.best.describe());
    }
    out.push('\n');
    let v = &r.verification;
    let runs = o.runs;
    let _ = writeln!(
        out,
        "Verification: {runs} run{} of each configuration, interleaved, each in a fresh VM in its own \
process ({} at a time); times are the mean{} of run_main",
        if runs == 1 { "" } else { "s" },
        o.runner.parallelism(),
        if runs == 1 { "" } else { " ± sd" }
    );
    let header = [
        "config",
        "eden",
        "headroom",
        "shrink",
        "ratio",
        "tenuring",
        "total s",
        "GC s",
        "GC %",
        "scavenges",
        "full GCs",
        "heap MB",
        "speed-up",
    ];
    let mut rows = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, (c, ss)) in v.configs.iter().zip(&v.samples).enumerate() {
        let col = |f: &dyn Fn(&gctune::RunSample) -> f64| ss.iter().map(f).collect::<Vec<f64>>();
        let total = col(&|s| s.stats.total_s());
        let gc = col(&|s| s.stats.gc_s());
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
        let gc_pct = if mean(&total) > 0.0 {
            100.0 * mean(&gc) / mean(&total)
        } else {
            0.0
        };
        // The search's best may have the parameters of the defaults or of the proposal.
        let mut name = c.name.clone();
        if c.name != "search" && r.search.best.same_parameters(c) {
            name.push_str(" = search");
        }
        names.push(name.clone());
        rows.push(vec![
            name,
            gctune::config::size_flag(c.eden),
            gctune::config::size_flag(c.headroom),
            gctune::config::size_flag(c.shrink),
            format!("{}", c.ratio),
            c.tenuring_threshold().to_string(),
            pm(&total, 3),
            pm(&gc, 3),
            format!("{gc_pct:.1}"),
            format!("{:.0}", mean(&col(&|s| s.stats.scavenges as f64))),
            format!("{:.0}", mean(&col(&|s| s.stats.full_gcs as f64))),
            format!("{:.1}", mb(mean(&col(&|s| s.stats.heap_bytes as f64)))),
            match v.speed_ups.get(i).copied().flatten() {
                Some(s) => s.label(),
                None => "1.00x".to_string(),
            },
        ]);
    }
    out.push_str(&render(&header, &rows));
    let _ = writeln!(
        out,
        "Output: {}",
        if v.same_output {
            "the same in every run"
        } else {
            "NOT the same in every run (the program prints something that varies, or a collector bug)"
        }
    );
    out.push('\n');
    let args = command.clone();
    let defaults = gctune::GcConfig::defaults();
    let measured = |c: &gctune::GcConfig, s: Option<gctune::SpeedUp>| {
        if c.same_parameters(&defaults) {
            "1.00x (these are the defaults)".to_string()
        } else {
            speed_up_line(s)
        }
    };
    let proposal = r.proposal_speed_up();
    let search = r.search_speed_up();
    for (label, config, speed_up) in [
        ("proposal:", &r.proposal.config, proposal),
        ("search:  ", &r.search.best, search),
    ] {
        let _ = writeln!(out, "{label} lupa run {} {args}", config.flags().join(" "));
        let _ = writeln!(
            out,
            "  speed-up over the defaults: {}",
            measured(config, speed_up)
        );
    }
    let faster = |c: &gctune::GcConfig, s: Option<gctune::SpeedUp>| {
        s.filter(|s| !c.same_parameters(&defaults) && s.significant() && s.estimate > 1.0)
    };
    let verdict = match (
        faster(&r.proposal.config, proposal),
        faster(&r.search.best, search),
    ) {
        (None, None) => "neither is significantly faster than the defaults".to_string(),
        (Some(p), None) => format!("use the proposal ({:.2}x)", p.estimate),
        (None, Some(s)) => format!("use the search's best ({:.2}x)", s.estimate),
        (Some(p), Some(s)) if p.estimate >= s.estimate => format!(
            "both are faster; the proposal more ({:.2}x against {:.2}x)",
            p.estimate, s.estimate
        ),
        (Some(p), Some(s)) => format!(
            "both are faster; the search's best more ({:.2}x against {:.2}x)",
            s.estimate, p.estimate
        ),
    };
    let _ = writeln!(out, "Verdict: {verdict}");
    out
}

/// Run the command.
pub(crate) fn main(a: &GcTuneArgs) -> ExitCode {
    let runner = match std::env::current_exe() {
        Ok(exe) => Runner::Processes {
            exe,
            jobs: usize::from(a.jobs),
        },
        Err(e) => {
            eprintln!("lupa gc-tune: cannot find the lupa binary to start workers: {e}");
            return ExitCode::from(74);
        }
    };
    let o = TuneOptions {
        workload: Workload {
            args: crate::program_args(&a.class, &a.args),
            class_path: class_path(a.class_path.as_deref()),
            check: Check::ExitZero,
        },
        runs: a.runs,
        budget: a.budget,
        seed: a.seed,
        rate: a.rate,
        runner,
    };
    let quiet = a.quiet;
    let mut progress = |line: String| {
        if !quiet {
            eprintln!("gc-tune: {line}");
        }
    };
    match gctune::tune(&o, &mut progress) {
        Ok(report) => {
            print!("{}", text(&report, &o));
            ExitCode::SUCCESS
        }
        Err(TuneError::Vm(e)) => {
            if matches!(e, lupa_vm::VmError::Fatal(_)) {
                eprintln!("lupa gc-tune: the program failed while profiled:");
            }
            crate::report(&e)
        }
        Err(TuneError::Workload(m)) => {
            eprintln!("lupa gc-tune: {m}");
            ExitCode::from(1)
        }
        Err(TuneError::Io(m)) => {
            eprintln!("lupa gc-tune: {m}");
            ExitCode::from(74)
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
