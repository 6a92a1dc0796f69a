//! `lupa gc-tune`: GC parameters for one program, proposed from its object
//! lifetimes, checked against the defaults, and compared with a black-box
//! search under a time budget.
//!
//! 1. **Profile** ([`profile`]): one run under Illimani's lifetime profiler
//!    in VM mode, sampled, with a small eden ([`PROFILE_EDEN`]) so that the
//!    VM sees each death soon after it happens.
//! 2. **Propose** ([`proposal::propose`]): eden, tenuring threshold, growth
//!    headroom, shrink threshold and GC ratio from the per-site demography
//!    (short, long, immortal) and the lifetimes on the bytes clock, each
//!    with a one-line reason.
//! 3. **Search** ([`search::search`]): an iterated local search from the
//!    defaults over the same five parameters, until the budget is spent.
//! 4. **Verify** ([`verify`]): the defaults, the proposal and the search's
//!    best, each run `runs` times, interleaved (default, proposal, search,
//!    default, ...), each run in a fresh VM in its own process
//!    ([`crate::runs::Runner`]); the speed-ups over the defaults come with 95%
//!    confidence intervals from Welch's t-test on the log times
//!    ([`stats::speed_up`]). The search's own measurements are not reused:
//!    the best of many noisy measurements is biased in its favour.
//!
//! | module | what |
//! | --- | --- |
//! | [`proposal`] | the rules from lifetimes to parameters |
//! | [`search`](mod@search) | the black-box search |
//! | [`stats`] | speed-up, confidence interval, Welch's t-test |
//! | [`report`] | what `lupa gc-tune` prints, as a document |
//!
//! The configurations are [`GcConfig`]s, the runs [`crate::runs`]. Nothing
//! here prints: progress goes to a callback, results are values.

pub mod proposal;
pub mod report;
pub mod search;
pub mod stats;

pub use proposal::{Proposal, Rules, propose};
pub use search::{SearchOptions, SearchResult, search};
pub use stats::{SpeedUp, speed_up};

use crate::LabError;
use crate::gc_config::{GcConfig, MB};
use crate::runs::{Job, RunError, RunSample, Runner, Workload};
use lupa_heap::GcParam;
use lupa_prof::lifetimes::Lifetimes;
use lupa_profilers::ProfileMode;
use lupa_profilers::lifetimes::{LifetimeConfig, LifetimeMode};
use lupa_vm::{HeapConfig, Vm, VmOptions};
use std::time::{Duration, Instant};

/// The eden of the profiling run: deaths are seen within this many bytes.
pub const PROFILE_EDEN: usize = MB;

/// The profiling run.
#[derive(Debug, Clone)]
pub struct ProfileRun {
    /// The lifetimes.
    pub lifetimes: Lifetimes,
    /// Wall time of the profiled run.
    pub elapsed: Duration,
}

/// Profile the workload's object lifetimes (VM mode, sampled at `rate` with
/// `seed`), with a [`PROFILE_EDEN`] eden. The program must exit with status 0.
pub fn profile(w: &Workload, rate: f64, seed: u64) -> Result<ProfileRun, LabError> {
    let options = VmOptions {
        heap: HeapConfig {
            eden_size: PROFILE_EDEN,
            ..HeapConfig::default()
        },
        class_path: w.class_path.clone(),
        jit_factory: w.jit,
        ..VmOptions::default()
    };
    let mut vm = Vm::new(options).map_err(LabError::Vm)?;
    lupa_profilers::install(&mut vm);
    vm.io.capture_output();
    let class = w
        .args
        .first()
        .ok_or_else(|| LabError::Workload("no class to run".to_string()))?;
    vm.load_class_by_name(class).map_err(LabError::Vm)?;
    let config = LifetimeConfig {
        mode: LifetimeMode::Vm,
        rate,
        seed,
        ..LifetimeConfig::default()
    };
    let command = format!("lupa gc-tune {}", w.command());
    let t0 = Instant::now();
    let run = ProfileMode::Lifetimes(config)
        .run(&mut vm, lupa_profilers::Workload::Program(&w.args))
        .map_err(|e| LabError::Vm(e.into()))?;
    let elapsed = t0.elapsed();
    let code = run.result.map_err(LabError::Vm)?;
    let mut lifetimes = Lifetimes::try_from(run.output).map_err(|e| LabError::Vm(e.into()))?;
    lifetimes.command = command;
    if code != 0 {
        let out = vm.io.take_captured();
        return Err(LabError::Workload(format!(
            "{} exited with status {code} while profiled; its output was:\n{}",
            w.command(),
            out.trim_end()
        )));
    }
    Ok(ProfileRun { lifetimes, elapsed })
}

/// The interleaved runs of the verification.
#[derive(Debug, Clone)]
pub struct Verification {
    /// The configurations, the baseline first (no two with the same parameters).
    pub configs: Vec<GcConfig>,
    /// Their runs, in the order of `configs`.
    pub samples: Vec<Vec<RunSample>>,
    /// Each one's speed-up over the first (`None` for the first).
    pub speed_ups: Vec<Option<SpeedUp>>,
    /// Did every run print the same output?
    pub same_output: bool,
    /// The runs that failed (`config run N: why`, with the end of what the
    /// run printed); they are left out of the times and speed-ups.
    pub failures: Vec<String>,
}

impl Verification {
    /// The index of the configuration with `c`'s parameters.
    pub fn index_of(&self, c: &GcConfig) -> Option<usize> {
        self.configs.iter().position(|x| x.same_parameters(c))
    }
}

/// Run every configuration `runs` times, interleaved, and compare each with
/// the first. Configurations with the parameters of an earlier one are run once.
/// A failed run is reported and left out; only a first configuration with no
/// run that succeeded (nothing to compare with) is an error.
pub fn verify(
    runner: &Runner,
    w: &Workload,
    configs: &[GcConfig],
    runs: usize,
    progress: &mut dyn FnMut(String),
) -> Result<Verification, LabError> {
    let mut distinct: Vec<GcConfig> = Vec::new();
    for c in configs {
        if !distinct.iter().any(|d| d.same_parameters(c)) {
            distinct.push(c.clone());
        }
    }
    let jobs: Vec<Job> = (0..runs.max(1))
        .flat_map(|_| distinct.iter().map(Job::of))
        .collect();
    let total = jobs.len();
    let mut done = 0;
    let results = runner.run_batch(w, &jobs, &mut |i, r| {
        done += 1;
        let c = &jobs[i].config;
        let run = i / distinct.len() + 1;
        match r {
            Ok(s) => progress(format!(
                "verify: {done}/{total} {} run {run}: {:.3} s, GC {:.3} s, {} scavenges, {} full GCs",
                c.name,
                s.stats.total_s(),
                s.stats.gc_s(),
                s.stats.scavenges,
                s.stats.full_gcs
            )),
            Err(e) => progress(format!("verify: {done}/{total} {} run {run} failed: {e}", c.name)),
        }
    });
    let mut samples: Vec<Vec<RunSample>> = vec![Vec::new(); distinct.len()];
    let mut failures = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(s) => samples[i % distinct.len()].push(s),
            Err(e @ (RunError::Spawn(_) | RunError::Unavailable(_))) => return Err(e.into()),
            Err(e) => failures.push(format!(
                "{} run {}: {e}",
                jobs[i].config.name,
                i / distinct.len() + 1
            )),
        }
    }
    if samples.first().is_none_or(|s| s.is_empty()) {
        return Err(LabError::Workload(format!(
            "no run of the defaults succeeded, so nothing can be compared:\n{}",
            failures.join("\n")
        )));
    }
    let first = samples
        .first()
        .and_then(|s| s.first())
        .map(|s| s.output.clone());
    let same_output = samples
        .iter()
        .flatten()
        .all(|s| Some(&s.output) == first.as_ref());
    let times = |s: &[RunSample]| s.iter().map(|x| x.stats.total_s()).collect::<Vec<f64>>();
    let base = samples.first().map(|s| times(s)).unwrap_or_default();
    let speed_ups = samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if i == 0 {
                None
            } else {
                speed_up(&base, &times(s))
            }
        })
        .collect();
    Ok(Verification {
        configs: distinct,
        samples,
        speed_ups,
        same_output,
        failures,
    })
}

/// What `lupa gc-tune` asks for.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    /// The program.
    pub workload: Workload,
    /// Verification runs per configuration.
    pub runs: usize,
    /// The search's time budget.
    pub budget: Duration,
    /// The search's seed.
    pub seed: u64,
    /// The lifetime profiler's sampling rate.
    pub rate: f64,
    /// Where runs happen.
    pub runner: Runner,
    /// What the proposal and the search are compared with: the VM's defaults
    /// ([`GcConfig::defaults`]), or those with their sizes scaled down
    /// (`--param-scale`).
    pub baseline: GcConfig,
}

/// Everything `lupa gc-tune` found.
#[derive(Debug, Clone)]
pub struct TuneReport {
    /// The profiling run.
    pub profile: ProfileRun,
    /// The proposal.
    pub proposal: Proposal,
    /// The search.
    pub search: SearchResult,
    /// The verification of the defaults, the proposal and the search's best.
    pub verification: Verification,
    /// Wall time of the verification.
    pub verification_elapsed: Duration,
    /// Wall time of the whole run.
    pub elapsed: Duration,
}

impl TuneReport {
    /// The proposal's speed-up over the defaults in the verification.
    pub fn proposal_speed_up(&self) -> Option<SpeedUp> {
        self.speed_up_of(&self.proposal.config)
    }

    /// The search's best's speed-up over the defaults (1x when it is the defaults).
    pub fn search_speed_up(&self) -> Option<SpeedUp> {
        self.speed_up_of(&self.search.best)
    }

    fn speed_up_of(&self, c: &GcConfig) -> Option<SpeedUp> {
        let v = &self.verification;
        match v.index_of(c)? {
            0 => {
                let t: Vec<f64> = v.samples[0].iter().map(|s| s.stats.total_s()).collect();
                speed_up(&t, &t)
            }
            i => v.speed_ups[i],
        }
    }
}

/// Profile, propose, search and verify (see the module doc).
pub fn tune(o: &TuneOptions, progress: &mut dyn FnMut(String)) -> Result<TuneReport, LabError> {
    let t0 = Instant::now();
    progress(format!(
        "profile: object lifetimes of {} (VM mode, rate {}, eden {})",
        o.workload.command(),
        o.rate,
        crate::gc_config::size_flag(PROFILE_EDEN)
    ));
    let profile = profile(&o.workload, o.rate, o.seed)?;
    let proposal = propose(
        &profile.lifetimes,
        o.baseline.bytes(GcParam::EdenSize) as u64,
        &Rules::default(),
    );
    progress(format!("proposal: {}", proposal.config.describe()));
    progress(format!(
        "search: budget {} s, seed {}, {} run{} at a time",
        crate::cells::secs(o.budget.as_secs_f64()),
        o.seed,
        o.runner.parallelism(),
        if o.runner.parallelism() == 1 { "" } else { "s" }
    ));
    let search = search(
        &o.runner,
        &o.workload,
        &SearchOptions {
            baseline: o.baseline.clone(),
            ..SearchOptions::new(o.budget, o.seed)
        },
        progress,
    )?;
    let configs = [
        o.baseline.clone(),
        proposal.config.clone(),
        search.best.clone(),
    ];
    let t1 = Instant::now();
    let verification = verify(&o.runner, &o.workload, &configs, o.runs, progress)?;
    Ok(TuneReport {
        profile,
        proposal,
        search,
        verification,
        verification_elapsed: t1.elapsed(),
        elapsed: t0.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_heap::GcParam;

    /// A configuration whose every run fails is reported (with the end of
    /// what the run printed) and left out; the others are still compared.
    /// Only the defaults failing is an error.
    #[test]
    fn a_failed_verification_run_is_reported_and_left_out() {
        let dir = tempfile::tempdir().expect("a scratch directory");
        std::fs::write(
            dir.path().join("Picky.som"),
            "Picky = ( run = ( | e |
                e := system gcParameterAt: #edenSize.
                e > 4000000 ifFalse: [
                    'no output' println.
                    system errorPrintln: 'picky: eden ' + e printString.
                    system exit: 3 ] ) )",
        )
        .expect("writes the class");
        let w = Workload {
            args: vec!["Picky".into()],
            class_path: vec![dir.path().to_path_buf()],
            check: crate::runs::Check::ExitZero,
            jit: None,
        };
        let mut small = GcConfig::defaults().named("small");
        small.set(GcParam::EdenSize, 2.0 * MB as f64);
        let configs = [GcConfig::defaults(), small.clone()];
        let v = verify(&Runner::InProcess, &w, &configs, 2, &mut |_| {}).expect("verifies");
        assert_eq!(v.samples[0].len(), 2);
        assert!(v.samples[1].is_empty());
        assert_eq!(v.failures.len(), 2, "{:?}", v.failures);
        assert!(
            v.failures[0].starts_with("small run 1: Picky exited with status 3"),
            "{}",
            v.failures[0]
        );
        assert!(v.failures[0].contains("no output"), "{}", v.failures[0]);
        assert_eq!(v.speed_ups[1], None);
        let only_small = [small.clone().named("default"), small];
        let e = verify(&Runner::InProcess, &w, &only_small[..1], 1, &mut |_| {});
        assert!(
            matches!(&e, Err(LabError::Workload(m)) if m.starts_with("no run of the defaults succeeded")),
            "{e:?}"
        );
    }
}
