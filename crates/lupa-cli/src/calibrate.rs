//! `lupa calibrate` and `lupa stability`: the statistics of the Compteur paper
//! (Bergel, ECOOP 2011, sections 3 and 4.4) on Lupa's own runs.
//!
//! Every run happens in-process in a fresh VM, so its wall time and its exact
//! number of sends are measured for the same execution.

use lupa_prof::report::Ranking;
use lupa_prof::stats::{self, MessageRate, ReferenceOrder, Summary};
use lupa_profilers::calibration::{Calibration, Program, Sample, run_seed};
use lupa_profilers::{Capture, ProfileMode, Workload, measure};
use lupa_vm::{Vm, VmError, VmOptions};
use std::path::Path;

fn run_once(base: &VmOptions, p: &Program, seed: u64) -> Result<Sample, VmError> {
    let mut o = base.clone();
    o.quiet = true;
    o.heap.hash_seed = seed;
    let m = measure(o, &p.args, Capture::None)?;
    if m.exit_code != 0 {
        return Err(VmError::Fatal(format!(
            "{} exited with status {}",
            p.name, m.exit_code
        )));
    }
    Ok(Sample {
        ms: m.elapsed.as_secs_f64() * 1e3,
        sends: m.sends,
    })
}

fn progress(quiet: bool, msg: &str) {
    if !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[2K{msg}");
    }
}

/// Run the basket `runs` times and report the paper's section-3 statistics.
pub(crate) fn calibrate(
    base: &VmOptions,
    programs: &[Program],
    runs: usize,
    vary_seed: bool,
    save: Option<&Path>,
) -> Result<String, VmError> {
    let mut table = Vec::new();
    let total = programs.len() * runs;
    let mut done = 0;
    for p in programs {
        let mut samples = Vec::with_capacity(runs);
        for r in 0..runs {
            progress(
                false,
                &format!("calibrating: run {}/{} ({})", done + 1, total, p.name),
            );
            let seed = if vary_seed {
                run_seed(r)
            } else {
                base.heap.hash_seed
            };
            samples.push(run_once(base, p, seed)?);
            done += 1;
        }
        table.push((p.clone(), samples));
    }
    progress(false, "");
    let mut out = String::new();
    out.push_str(&format!(
        "{:<66} {:>4} {:>10} {:>7} {:>13} {:>8}\n",
        "program", "runs", "time ms", "cv %", "sends", "cv %"
    ));
    let mut times = Vec::new();
    let mut sends = Vec::new();
    let mut cv_times = Vec::new();
    let mut cv_sends = Vec::new();
    for (p, samples) in &table {
        let ts: Vec<f64> = samples.iter().map(|s| s.ms).collect();
        let ss: Vec<f64> = samples.iter().map(|s| s.sends as f64).collect();
        let t = Summary::of(&ts).map_err(stat_err)?;
        let s = Summary::of(&ss).map_err(stat_err)?;
        out.push_str(&format!(
            "{:<66} {:>4} {:>10.2} {:>7.2} {:>13.0} {:>8.4}\n",
            p.name,
            samples.len(),
            t.mean,
            t.cv * 100.0,
            s.mean,
            s.cv * 100.0
        ));
        times.push(t.mean);
        sends.push(s.mean);
        cv_times.push(t.cv);
        cv_sends.push(s.cv);
    }
    let rate = MessageRate::fit(&times, &sends).map_err(stat_err)?;
    let reg = &rate.regression;
    let ci = rate.rate_interval(0.95).map_err(stat_err)?;
    let t = reg.t_value(0.95).map_err(stat_err)?;
    out.push_str(&format!(
        "\nmessage rate MR = {:.1} sends/ms (regression of sends on time through the origin, {} programs)\n",
        rate.sends_per_time_unit(),
        reg.n
    ));
    out.push_str(&format!(
        "  95% confidence interval: {:.1} .. {:.1} sends/ms  (t = {:.3}, {} degrees of freedom)\n",
        ci.lower, ci.upper, t, reg.df
    ));
    out.push_str(&format!(
        "  standard error of the estimate s_e = {:.1} sends, of the slope s_b = {:.3}\n",
        reg.residual_se, reg.slope_se
    ));
    out.push_str(&format!(
        "  correlation r = {:.4}, R^2 (through the origin) = {:.4}\n",
        reg.r, reg.r_squared
    ));
    let mean_cv_t = stats::mean(&cv_times).unwrap_or(0.0);
    let mean_cv_s = stats::mean(&cv_sends).unwrap_or(0.0);
    out.push_str(&format!(
        "stability: mean CV of time {:.3}%, of sends {:.5}%  -> sends are {}\n",
        mean_cv_t * 100.0,
        mean_cv_s * 100.0,
        if mean_cv_s > 0.0 {
            format!("{:.1} times more stable than time", mean_cv_t / mean_cv_s)
        } else {
            "exactly reproducible (CV 0): infinitely more stable than time".to_string()
        }
    ));
    if !vary_seed {
        out.push_str("  (identity-hash seed fixed: sends cannot vary; run without --fixed-seed to vary it between runs)\n");
    }
    if let Some(path) = save {
        let cal = Calibration {
            rate,
            programs: table,
            lupa_version: env!("CARGO_PKG_VERSION").to_string(),
        };
        let json = cal.to_json().map_err(|e| VmError::Io(e.to_string()))?;
        crate::save::save(path, json.as_bytes()).map_err(VmError::Io)?;
        out.push_str(&format!(
            "calibration saved to {} (used by `lupa count` to estimate time)\n",
            path.display()
        ));
    }
    Ok(out)
}

fn stat_err(e: stats::StatsError) -> VmError {
    VmError::Fatal(format!("statistics: {e}"))
}

fn ranking_of(
    base: &VmOptions,
    p: &Program,
    mode: ProfileMode,
    seed: u64,
) -> Result<Vec<String>, VmError> {
    let mut o = base.clone();
    o.quiet = true;
    o.heap.hash_seed = seed;
    let mut vm = Vm::new(o)?;
    lupa_profilers::install(&mut vm);
    vm.load_class_by_name(&p.args[0])?;
    let run = mode
        .run(&mut vm, Workload::Program(&p.args))
        .map_err(|e| VmError::Fatal(e.to_string()))?;
    let code = run.result?;
    if code != 0 {
        return Err(VmError::Fatal(format!(
            "`{}` failed (exit status {code}): its profiles would not describe a complete run",
            p.args.join(" ")
        )));
    }
    // Ranked by self value (where the sends / the time are spent), as MessageTally's
    // leaves; the total ranking is dominated by the call chain, which never moves.
    let profile = lupa_prof::Profile::try_from(run.output)?;
    let mut entries = Ranking::of(&profile).entries;
    entries.sort_by(|a, b| {
        b.self_value
            .cmp(&a.self_value)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(entries.into_iter().map(|e| e.name).collect())
}

/// Section 4.4: rank the methods of `p` over `runs` counted and `runs` timed
/// profiles and compare the instability of their first `n` positions.
pub(crate) fn stability(
    base: &VmOptions,
    p: &Program,
    runs: usize,
    n: usize,
    vary_seed: bool,
) -> Result<String, VmError> {
    let mut counted = Vec::new();
    let mut timed = Vec::new();
    for r in 0..runs {
        progress(false, &format!("stability: run {}/{}", r + 1, runs));
        let seed = if vary_seed {
            run_seed(r)
        } else {
            base.heap.hash_seed
        };
        counted.push(ranking_of(base, p, ProfileMode::COMPTEUR, seed)?);
        timed.push(ranking_of(base, p, ProfileMode::Timing, seed)?);
    }
    progress(false, "");
    let methods = counted
        .iter()
        .chain(timed.iter())
        .map(Vec::len)
        .max()
        .unwrap_or(0);
    let psi_c =
        stats::ranking_instability(&counted, n, ReferenceOrder::MeanRank).map_err(stat_err)?;
    let psi_t =
        stats::ranking_instability(&timed, n, ReferenceOrder::MeanRank).map_err(stat_err)?;
    let random =
        stats::random_ranking_instability(n, runs, methods, 200, 42, ReferenceOrder::MeanRank)
            .map_err(stat_err)?;
    let mut out = String::new();
    out.push_str(&format!(
        "{} : {} runs, first {} methods of {} ranked by self value\n",
        p.name, runs, n, methods
    ));
    out.push_str(&format!(
        "  psi_{n} counted (sends):      {:.3}\n",
        psi_c.psi
    ));
    out.push_str(&format!(
        "  psi_{n} timed (wall clock):   {:.3}\n",
        psi_t.psi
    ));
    out.push_str(&format!(
        "  psi_{n} random rankings:      {:.3} (reference)\n",
        random
    ));
    out.push_str("  first methods by counted rank (rank in each counted run / timed run):\n");
    for m in psi_c.methods.iter().take(n) {
        let timed_ranks = psi_t
            .methods
            .iter()
            .find(|t| t.name == m.name)
            .map(|t| format!("{:?}", t.ranks))
            .unwrap_or_default();
        out.push_str(&format!(
            "    {:<50} {:?} / {}\n",
            m.name, m.ranks, timed_ranks
        ));
    }
    Ok(out)
}
