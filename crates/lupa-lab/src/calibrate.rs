//! `lupa calibrate`: Compteur's message rate (Bergel, ECOOP 2011, section 3)
//! on Lupa's own runs. A basket of programs ([`default_basket`]) is run
//! several times, each run in a fresh VM in this process so that its wall
//! time and its exact number of sends are measured for the same execution;
//! the rate is the regression of sends on time through the origin, with its
//! confidence interval ([`calibrate`]). The result is a
//! [`Calibration`] (which `lupa count` reads) and a report.

use crate::{Capture, LabError, measure};
use lupa_prof::calibration::{Calibration, Program, Sample};
use lupa_prof::stats::{self, MessageRate, Summary};
use lupa_prof::table::{Column, Document, Layout, Table};
use lupa_vm::{VmError, VmOptions};

/// The default basket: the bundled benchmarks at sizes of roughly 20-300 ms each,
/// and the bundled test suites.
pub fn default_basket() -> Vec<Program> {
    [
        "BenchmarkRunner Richards 1 3",
        "BenchmarkRunner DeltaBlue 1 1000",
        "BenchmarkRunner Json 1 5",
        "BenchmarkRunner NBody 200 1",
        "BenchmarkRunner CD 1 10",
        "BenchmarkRunner Bounce 1 100",
        "BenchmarkRunner List 1 100",
        "BenchmarkRunner Permute 1 100",
        "BenchmarkRunner Queens 1 100",
        "BenchmarkRunner Sieve 1 100",
        "BenchmarkRunner Storage 1 100",
        "BenchmarkRunner Towers 1 30",
        "LupaSuiteRunner LupaCollectionTest LupaStringTest LupaIntegerTest LupaDictionaryTest",
        "LupaSuiteRunner LupaExceptionTest LupaBlockTest LupaProcessTest",
    ]
    .iter()
    .filter_map(|s| Program::parse(s))
    .collect()
}

/// The identity-hash seed of run `r` when seeds vary between runs.
pub fn run_seed(r: usize) -> u64 {
    0x9E37_79B9_7F4A_7C15u64.wrapping_add(r as u64 * 7919)
}

/// A failed statistic, as the VM's fatal error (exit 70).
pub(crate) fn stat_err(e: stats::StatsError) -> LabError {
    LabError::Vm(VmError::Fatal(format!("statistics: {e}")))
}

/// The hash seed of run `r`: varying ([`run_seed`]) or `base`'s.
pub(crate) fn seed_of(base: &VmOptions, vary_seed: bool, r: usize) -> u64 {
    if vary_seed {
        run_seed(r)
    } else {
        base.heap.hash_seed
    }
}

fn run_once(base: &VmOptions, p: &Program, seed: u64) -> Result<Sample, LabError> {
    let mut o = base.clone();
    o.quiet = true;
    o.heap.hash_seed = seed;
    let m = measure(o, &p.args, Capture::None)?;
    if m.exit_code != 0 {
        return Err(LabError::Vm(VmError::Fatal(format!(
            "{} exited with status {}",
            p.name, m.exit_code
        ))));
    }
    Ok(Sample {
        ms: m.elapsed.as_secs_f64() * 1e3,
        sends: m.sends,
    })
}

/// A calibration and its report.
#[derive(Debug, Clone)]
pub struct Calibrated {
    /// What `lupa count` reads (`--save`).
    pub calibration: Calibration,
    /// The samples per program, the fitted rate, the stability of both
    /// measures (and the problems, as warnings).
    pub report: Document,
    /// What makes the calibration a poor basis for estimates
    /// ([`Calibration::quality_problems`]); empty when it is good.
    pub problems: Vec<String>,
}

/// Run the basket `runs` times (the hash seed varying between runs with
/// `vary_seed`) and fit the message rate. `progress` is told of each run,
/// then given an empty line.
pub fn calibrate(
    base: &VmOptions,
    programs: &[Program],
    runs: usize,
    vary_seed: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Calibrated, LabError> {
    let mut measured = Vec::new();
    let total = programs.len() * runs;
    let mut done = 0;
    for p in programs {
        let mut samples = Vec::with_capacity(runs);
        for r in 0..runs {
            progress(&format!(
                "calibrating: run {}/{} ({})",
                done + 1,
                total,
                p.name
            ));
            samples.push(run_once(base, p, seed_of(base, vary_seed, r))?);
            done += 1;
        }
        measured.push((p.clone(), samples));
    }
    progress("");
    let mut table = Table::new(vec![
        Column::left("program").width(66),
        Column::right("runs").width(4),
        Column::right("time ms").width(10),
        Column::right("cv %").width(7),
        Column::right("sends").width(13),
        Column::right("cv %").width(8),
    ])
    .layout(Layout::Fixed {
        indent: 0,
        header: true,
    });
    let mut times = Vec::new();
    let mut sends = Vec::new();
    let mut cv_times = Vec::new();
    let mut cv_sends = Vec::new();
    for (p, samples) in &measured {
        let ts: Vec<f64> = samples.iter().map(|s| s.ms).collect();
        let ss: Vec<f64> = samples.iter().map(|s| s.sends as f64).collect();
        let t = Summary::of(&ts).map_err(stat_err)?;
        let s = Summary::of(&ss).map_err(stat_err)?;
        table.push([
            p.name.clone(),
            samples.len().to_string(),
            format!("{:.2}", t.mean),
            format!("{:.2}", t.cv * 100.0),
            format!("{:.0}", s.mean),
            format!("{:.4}", s.cv * 100.0),
        ]);
        times.push(t.mean);
        sends.push(s.mean);
        cv_times.push(t.cv);
        cv_sends.push(s.cv);
    }
    let rate = MessageRate::fit(&times, &sends).map_err(stat_err)?;
    let reg = &rate.regression;
    let ci = rate.rate_interval(0.95).map_err(stat_err)?;
    let t = reg.t_value(0.95).map_err(stat_err)?;
    let mut d = Document::default();
    d.table(table);
    d.line("");
    d.line(format!(
        "message rate MR = {:.1} sends/ms (regression of sends on time through the origin, {} programs)",
        rate.sends_per_time_unit(),
        reg.n
    ));
    d.line(format!(
        "  95% confidence interval: {:.1} .. {:.1} sends/ms  (t = {:.3}, {} degrees of freedom)",
        ci.lower, ci.upper, t, reg.df
    ));
    d.line(format!(
        "  standard error of the estimate s_e = {:.1} sends, of the slope s_b = {:.3}",
        reg.residual_se, reg.slope_se
    ));
    d.line(format!(
        "  correlation r = {:.4}, R^2 (through the origin) = {:.4}",
        reg.r, reg.r_squared
    ));
    let mean_cv_t = stats::mean(&cv_times).unwrap_or(0.0);
    let mean_cv_s = stats::mean(&cv_sends).unwrap_or(0.0);
    d.line(format!(
        "stability: mean CV of time {:.3}%, of sends {:.5}%  -> sends are {}",
        mean_cv_t * 100.0,
        mean_cv_s * 100.0,
        if mean_cv_s > 0.0 {
            format!("{:.1} times more stable than time", mean_cv_t / mean_cv_s)
        } else {
            "exactly reproducible (CV 0): infinitely more stable than time".to_string()
        }
    ));
    if !vary_seed {
        d.line("  (identity-hash seed fixed: sends cannot vary; run without --fixed-seed to vary it between runs)");
    }
    let calibration = Calibration {
        rate,
        programs: measured,
        lupa_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let problems = calibration.quality_problems();
    for p in &problems {
        d.line(format!("warning: {p}"));
    }
    if !problems.is_empty() {
        d.line("  time estimates from this calibration are unreliable: calibrate again on an idle machine, or with more --runs");
    }
    Ok(Calibrated {
        calibration,
        problems,
        report: d,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_basket_and_seeds() {
        let b = default_basket();
        assert_eq!(b.len(), 14);
        assert_eq!(b[0].args, ["BenchmarkRunner", "Richards", "1", "3"]);
        assert_ne!(run_seed(0), run_seed(1));
    }

    #[test]
    fn a_small_basket_fits_a_rate() {
        let programs = [
            Program::parse("BenchmarkRunner Queens 1 5"),
            Program::parse("BenchmarkRunner Towers 1 3"),
        ];
        let programs: Vec<Program> = programs.into_iter().flatten().collect();
        let mut lines = Vec::new();
        let c = calibrate(&VmOptions::default(), &programs, 2, false, &mut |l| {
            lines.push(l.to_string())
        })
        .expect("calibrates");
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[4], "");
        let text = c.report.to_text();
        assert!(text.starts_with("program "), "{text}");
        assert!(text.contains("message rate MR = "), "{text}");
        assert!(text.contains("(identity-hash seed fixed"), "{text}");
        // A fixed seed: every run sends the same messages.
        for (_, samples) in &c.calibration.programs {
            assert_eq!(samples[0].sends, samples[1].sends);
        }
    }
}
