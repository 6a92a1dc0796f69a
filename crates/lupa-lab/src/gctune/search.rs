//! A black-box search over the GC parameters, under a time budget: an
//! iterated local search in the spirit of ParamILS, which Lengauer and
//! Mössenböck used to tune the HotSpot collectors ("The taming of the shrew",
//! ICPE 2014), with racing and capping so that the budget goes to promising
//! configurations.
//!
//! - The incumbent starts as the defaults, measured [`SearchOptions::baseline_runs`] times.
//! - Each round proposes as many candidates as there are workers: with
//!   probability [`SearchOptions::random_share`] a random configuration
//!   (log-uniform sizes and ratio, uniform tenuring threshold, within
//!   [`Space`]), otherwise a neighbour of the incumbent (one parameter, or
//!   two, scaled by 1/2, 1/√2, √2 or 2; the tenuring threshold moved by 1 or
//!   2). A configuration is never tried twice.
//! - A candidate runs once, stopped (capped) past [`SearchOptions::cap`]
//!   times the incumbent's wall time; if it beats the incumbent's mean it runs
//!   again until it has [`SearchOptions::confirm_runs`] runs, and becomes the
//!   incumbent if its mean still beats the incumbent's.
//! - The budget covers the runs of the defaults too: after the first round
//!   of them, another starts only if it leaves time for a round of
//!   candidates.
//! - A round starts only if it is expected to end within the budget, and
//!   every run is stopped when the budget is spent, with one exception: the
//!   search always tries one round of candidates (each stopped at
//!   [`SearchOptions::cap`] times the defaults' time), even when the budget
//!   is spent by then; [`SearchResult::note`] then says by how much the
//!   search went over and what budget would have left room for it.
//!
//! The candidates come from a seeded generator (SplitMix64): with the same
//! seed and the same measurements, the search tries the same configurations.

use crate::gc_config::{GcConfig, MB, TUNED};
use crate::runs::{Job, RunError, Runner, Workload};
use lupa_heap::{GcParam, GcSettings, Unit};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The ranges searched: for each [`TUNED`] parameter, its least and largest
/// value (sizes and ratios are drawn log-uniformly, counts uniformly).
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// `(parameter, least, largest)`, in [`TUNED`]'s order.
    pub ranges: [(GcParam, f64, f64); 5],
}

impl Space {
    /// The range of `p` (its default alone when it is not searched).
    pub fn range(&self, p: GcParam) -> (f64, f64) {
        self.ranges
            .iter()
            .find(|r| r.0 == p)
            .map_or((p.default(), p.default()), |r| (r.1, r.2))
    }
}

impl Default for Space {
    fn default() -> Self {
        let mb = |n: usize| (n * MB) as f64;
        Space {
            ranges: [
                (GcParam::EdenSize, mb(1), mb(512)),
                (GcParam::GrowthHeadroom, mb(4), mb(1024)),
                (GcParam::ShrinkThreshold, mb(8), mb(1024)),
                (GcParam::GcRatio, 0.1, 10.0),
                (GcParam::TenuringThreshold, 1.0, 15.0),
            ],
        }
    }
}

/// How to search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    /// Wall time the search may take.
    pub budget: Duration,
    /// Seed of the candidate generator.
    pub seed: u64,
    /// The ranges.
    pub space: Space,
    /// Runs of the defaults before the search (2).
    pub baseline_runs: usize,
    /// Share of random candidates, the rest being neighbours (0.25).
    pub random_share: f64,
    /// Runs a promising candidate must have before it replaces the incumbent (3).
    pub confirm_runs: usize,
    /// A candidate's run is stopped past this many times the incumbent's wall time (1.5).
    pub cap: f64,
    /// Where the search starts, the configuration it must beat (the defaults).
    pub baseline: GcConfig,
}

impl SearchOptions {
    /// The defaults, with this budget and seed.
    pub fn new(budget: Duration, seed: u64) -> Self {
        SearchOptions {
            budget,
            seed,
            space: Space::default(),
            baseline_runs: 2,
            baseline: GcConfig::defaults(),
            random_share: 0.25,
            confirm_runs: 3,
            cap: 1.5,
        }
    }
}

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// The best configuration (named `search`; the defaults when nothing beat them).
    pub best: GcConfig,
    /// Its run times in the search, seconds.
    pub best_times: Vec<f64>,
    /// The defaults' run times in the search, seconds.
    pub baseline_times: Vec<f64>,
    /// Configurations tried (the defaults included).
    pub configs: usize,
    /// Runs made.
    pub runs: usize,
    /// Runs stopped by the cap or the budget.
    pub capped: usize,
    /// Wall time spent.
    pub elapsed: Duration,
    /// Each new incumbent in turn, with its mean time.
    pub improvements: Vec<(GcConfig, f64)>,
    /// What the budget did not cover, said in the report (the one round of
    /// candidates the search always tries went past it).
    pub note: Option<String>,
}

/// SplitMix64: small, fast and the same on every platform and version.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// The identity of a configuration's parameters: the bits of the [`TUNED`]
/// values in effect.
type Key = [u64; 5];

fn key(c: &GcConfig) -> Key {
    TUNED.map(|p| c.get(p).to_bits())
}

/// Sizes in whole megabytes within the range.
fn size_in(bytes: f64, (lo, hi): (f64, f64)) -> f64 {
    let mbs = (bytes / MB as f64).round().max(1.0) as usize;
    ((mbs * MB) as f64).clamp(lo, hi)
}

/// A ratio with two significant digits within the range.
fn ratio_in(r: f64, (lo, hi): (f64, f64)) -> f64 {
    super::proposal::two_digits(r).clamp(lo, hi)
}

fn log_uniform(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    (lo.ln() + rng.unit() * (hi.ln() - lo.ln())).exp()
}

/// A random configuration of the space: every [`TUNED`] parameter drawn in
/// turn.
pub fn random_config(rng: &mut Rng, s: &Space) -> GcConfig {
    let mut c = GcConfig {
        name: String::new(),
        settings: GcSettings::default(),
    };
    for p in TUNED {
        let (lo, hi) = s.range(p);
        let v = match p.unit() {
            Unit::Bytes => size_in(log_uniform(rng, lo, hi), (lo, hi)),
            Unit::Ratio => ratio_in(log_uniform(rng, lo, hi), (lo, hi)),
            Unit::Count { .. } => lo + rng.below((hi - lo) as u64 + 1) as f64,
        };
        c.set(p, v);
    }
    c
}

/// A neighbour of `c`: one or two parameters moved (sizes and ratios scaled
/// by 1/2, 1/√2, √2 or 2; counts moved by 1 or 2).
pub fn neighbour(rng: &mut Rng, c: &GcConfig, s: &Space) -> GcConfig {
    const FACTORS: [f64; 4] = [
        0.5,
        std::f64::consts::FRAC_1_SQRT_2,
        std::f64::consts::SQRT_2,
        2.0,
    ];
    let mut n = c.clone();
    for p in TUNED {
        n.set(p, c.get(p));
    }
    let changes = if rng.unit() < 0.3 { 2 } else { 1 };
    for _ in 0..changes {
        let f = FACTORS[rng.below(4) as usize];
        let p = TUNED[rng.below(TUNED.len() as u64) as usize];
        let range = s.range(p);
        let v = match p.unit() {
            Unit::Bytes => size_in(n.get(p) * f, range),
            Unit::Ratio => ratio_in(n.get(p) * f, range),
            Unit::Count { .. } => {
                let step = 1 + rng.below(2) as i64;
                let t = n.get(p) as i64;
                let t = if rng.below(2) == 0 {
                    t - step
                } else {
                    t + step
                };
                (t as f64).clamp(range.0, range.1)
            }
        };
        n.set(p, v);
    }
    n
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        f64::INFINITY
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// A configuration being evaluated.
struct Cand {
    config: GcConfig,
    times: Vec<f64>,
    walls: Vec<f64>,
    lost: bool,
}

/// Search under the budget (see the module doc). Fails only when the defaults
/// fail or a worker cannot be started; a candidate that fails or is stopped
/// simply loses.
pub fn search(
    runner: &Runner,
    w: &Workload,
    o: &SearchOptions,
    progress: &mut dyn FnMut(String),
) -> Result<SearchResult, RunError> {
    let start = Instant::now();
    let mut rng = Rng::new(o.seed);
    let par = runner.parallelism();
    let defaults = o.baseline.clone();
    let mut runs = 0usize;
    let mut capped = 0usize;

    let mut incumbent = Cand {
        config: defaults.clone(),
        times: Vec::new(),
        walls: Vec::new(),
        lost: false,
    };
    // The defaults, a round (one run per worker) at a time; a round after
    // the first only when it leaves room for a round of candidates.
    let mut wanted = o.baseline_runs.max(1);
    while wanted > 0 {
        if !incumbent.walls.is_empty() {
            let round = Duration::from_secs_f64(mean(&incumbent.walls));
            if o.budget.saturating_sub(start.elapsed()) < 2 * round {
                break;
            }
        }
        let n = wanted.min(par.max(1));
        wanted -= n;
        let jobs: Vec<Job> = (0..n).map(|_| Job::of(&defaults)).collect();
        for r in runner.run_batch(w, &jobs, &mut |_, _| {}) {
            runs += 1;
            let s = r?;
            incumbent.times.push(s.stats.total_s());
            incumbent.walls.push(s.wall.as_secs_f64());
        }
    }
    let mut seen: HashSet<Key> = HashSet::new();
    seen.insert(key(&defaults));
    let mut note = None;
    let baseline_times = incumbent.times.clone();
    progress(format!(
        "search: defaults {:.3} s (mean of {})",
        mean(&incumbent.times),
        incumbent.times.len()
    ));
    let mut configs = 1usize;
    let mut improvements = Vec::new();
    let mut pending: Vec<Cand> = Vec::new();
    let mut stalled = 0;
    loop {
        let remaining = o.budget.saturating_sub(start.elapsed());
        // Nothing tried yet: this round runs whatever the budget says.
        let first = configs == 1;
        // A round: confirmations first, then new candidates, one job per worker at least.
        let mut batch: Vec<(usize, Job)> = Vec::new();
        let capped_at = Duration::from_secs_f64(mean(&incumbent.walls) * o.cap);
        let limit = if first {
            capped_at
        } else {
            capped_at.min(remaining)
        };
        for (i, c) in pending.iter().enumerate() {
            for _ in c.times.len()..o.confirm_runs {
                batch.push((
                    i,
                    Job {
                        config: c.config.clone(),
                        limit: Some(limit),
                    },
                ));
            }
        }
        while batch.len() < par || batch.is_empty() {
            let mut c = None;
            for _ in 0..64 {
                let x = if rng.unit() < o.random_share {
                    random_config(&mut rng, &o.space)
                } else {
                    neighbour(&mut rng, &incumbent.config, &o.space)
                };
                if seen.insert(key(&x)) {
                    c = Some(x);
                    break;
                }
            }
            let Some(mut c) = c else {
                break;
            };
            configs += 1;
            c.name = format!("s{configs}");
            pending.push(Cand {
                config: c.clone(),
                times: Vec::new(),
                walls: Vec::new(),
                lost: false,
            });
            batch.push((
                pending.len() - 1,
                Job {
                    config: c,
                    limit: Some(limit),
                },
            ));
        }
        if batch.is_empty() {
            stalled += 1;
            if stalled > 3 {
                break;
            }
            continue;
        }
        let rounds = batch.len().div_ceil(par) as f64;
        let expected = Duration::from_secs_f64(rounds * mean(&incumbent.walls));
        if first && expected > remaining {
            let spent = start.elapsed();
            note = Some(format!(
                "the budget was {} by the runs of the defaults ({} of {:.1} s); the search \
tried one round of candidates past it (about {} s more); --budget {}s leaves room for it",
                if remaining.is_zero() {
                    "spent"
                } else {
                    "nearly spent"
                },
                incumbent.walls.len(),
                mean(&incumbent.walls),
                crate::cells::secs(expected.as_secs_f64()),
                crate::cells::secs(((spent + expected).as_secs_f64() * 2.0).ceil())
            ));
        } else if expected > remaining {
            // Not tried: forget the candidates the round would have started.
            configs -= pending
                .iter()
                .filter(|c| c.times.is_empty() && !c.lost)
                .count();
            break;
        }
        let jobs: Vec<Job> = batch.iter().map(|(_, j)| j.clone()).collect();
        let results = runner.run_batch(w, &jobs, &mut |_, _| {});
        runs += results.len();
        for ((i, job), r) in batch.iter().zip(results) {
            let c = &mut pending[*i];
            match r {
                Ok(s) => {
                    c.times.push(s.stats.total_s());
                    c.walls.push(s.wall.as_secs_f64());
                }
                Err(e @ (RunError::Spawn(_) | RunError::Unavailable(_))) => return Err(e),
                Err(RunError::TimedOut(_)) => {
                    capped += 1;
                    c.lost = true;
                }
                Err(e) => {
                    let e = e.to_string();
                    let first = e.lines().next().unwrap_or_default();
                    progress(format!("search: {} failed: {first}", job.config.name));
                    c.lost = true;
                }
            }
        }
        // Decide.
        let bar = mean(&incumbent.times);
        let mut still = Vec::new();
        for c in pending.drain(..) {
            let m = mean(&c.times);
            if c.lost || m >= bar {
                if !c.lost {
                    progress(format!(
                        "search: {:.0}/{:.0} s: {} ({}): {m:.3} s",
                        start.elapsed().as_secs_f64(),
                        o.budget.as_secs_f64(),
                        c.config.name,
                        c.config.describe()
                    ));
                }
                continue;
            }
            if c.times.len() >= o.confirm_runs {
                progress(format!(
                    "search: {:.0}/{:.0} s: new best {} ({}): {m:.3} s (was {bar:.3} s)",
                    start.elapsed().as_secs_f64(),
                    o.budget.as_secs_f64(),
                    c.config.name,
                    c.config.describe()
                ));
                improvements.push((c.config.clone(), m));
                incumbent = c;
            } else {
                still.push(c);
            }
        }
        pending = still;
    }
    let best = incumbent.config.clone().named("search");
    Ok(SearchResult {
        best,
        best_times: incumbent.times,
        baseline_times,
        configs,
        runs,
        capped,
        elapsed: start.elapsed(),
        improvements,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_fixed() {
        let mut a = Rng::new(1);
        let mut b = Rng::new(1);
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let u = Rng::new(3).unit();
        assert!((0.0..1.0).contains(&u));
    }

    #[test]
    fn candidates_stay_in_the_space() {
        let s = Space::default();
        let mut rng = Rng::new(7);
        let mut c = GcConfig::defaults();
        for _ in 0..500 {
            let r = random_config(&mut rng, &s);
            let from = if rng.unit() < 0.5 { r.clone() } else { c };
            c = neighbour(&mut rng, &from, &s);
            for x in [&r, &c] {
                for p in TUNED {
                    let (lo, hi) = s.range(p);
                    assert!((lo..=hi).contains(&x.get(p)), "{p:?} {x:?}");
                    assert!(x.settings.get(p).is_some(), "{p:?} {x:?}");
                }
                assert!(x.bytes(GcParam::EdenSize).is_multiple_of(MB));
                assert_eq!(x.get(GcParam::TenuringThreshold).fract(), 0.0);
            }
        }
    }

    #[test]
    fn the_same_seed_proposes_the_same_candidates() {
        let s = Space::default();
        let candidates = |seed| {
            let mut rng = Rng::new(seed);
            let d = GcConfig::defaults();
            (0..20)
                .map(|i| {
                    if i % 3 == 0 {
                        random_config(&mut rng, &s)
                    } else {
                        neighbour(&mut rng, &d, &s)
                    }
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(candidates(5), candidates(5));
        assert_ne!(candidates(5), candidates(6));
    }

    /// The bundled `Hello`, checked by its exit status.
    fn hello() -> Workload {
        Workload {
            args: vec!["Hello".into()],
            class_path: Vec::new(),
            check: crate::runs::Check::ExitZero,
            jit: None,
        }
    }

    #[test]
    fn a_short_search_in_process_stays_within_its_budget() {
        let w = hello();
        let budget = Duration::from_secs(2);
        let mut lines = Vec::new();
        let r = search(
            &Runner::InProcess,
            &w,
            &SearchOptions::new(budget, 1),
            &mut |l| lines.push(l),
        )
        .expect("Hello runs");
        assert_eq!(r.baseline_times.len(), 2);
        assert!(r.runs >= 2 && r.configs >= 1, "{r:?}");
        assert!(!r.best_times.is_empty());
        assert!(lines[0].starts_with("search: defaults "), "{lines:?}");
        assert!(
            r.configs >= 2,
            "a 2 s search of Hello tries candidates: {r:?}"
        );
        assert_eq!(r.note, None);
    }

    /// A budget the first run of the defaults spends: one run of them, then
    /// one round of candidates all the same, said in the note.
    #[test]
    fn a_spent_budget_still_tries_one_round_and_says_so() {
        let w = hello();
        let r = search(
            &Runner::InProcess,
            &w,
            &SearchOptions::new(Duration::from_nanos(1), 1),
            &mut |_| {},
        )
        .expect("Hello runs");
        assert_eq!(r.baseline_times.len(), 1, "{r:?}");
        assert_eq!(r.configs, 2, "{r:?}");
        let note = r.note.expect("a note");
        assert!(
            note.starts_with("the budget was spent by the runs of the defaults (1 of "),
            "{note}"
        );
    }
}
