//! GC parameters proposed from a lifetime profile (Illimani's demographics),
//! each with a one-line reason.
//!
//! The profile must resolve lifetimes finely: the VM sees a death at the
//! first collection after it, so a recorded lifetime on the bytes clock
//! overstates the true one by up to one eden. `lupa gc-tune` therefore
//! profiles with a small eden ([`super::PROFILE_EDEN`]) and lets this module
//! classify the sites against the nursery of the default configuration
//! (`reference_eden`): the lifetime analysis
//! ([`lupa_prof::lifetimes::analysis::Analysis`]) runs on a view of the
//! profile whose eden is `reference_eden` and whose records survived no
//! collection, so that "long-lived" means "lives longer than
//! `reference_eden` bytes of allocation". Sites are then short, long or
//! immortal as the analysis says. All figures are weighted by bytes
//! (Horvitz-Thompson estimates, as in the analysis): copying costs bytes.
//!
//! The rules ([`Rules`]):
//! - **eden**: a high quantile ([`Rules::quantile`]) of the lifetimes of
//!   the objects of short-lived sites, times a safety factor
//!   ([`Rules::safety`]): an object of lifetime `L` is alive at the scavenge
//!   after its birth with probability `L / eden`, so twice the quantile
//!   leaves at most half of those objects to copy;
//! - **tenuring threshold**: the scavenger is replayed on the sampled
//!   lifetimes under that eden ([`simulate`]: a scavenge every eden of small
//!   objects, survivors copied, tenured at the threshold or when they
//!   overflow the survivor space, eden/5); threshold `T` costs the bytes it
//!   copies plus the bytes it tenures, each tenured byte costing
//!   [`Rules::tenured_cost`] copies more (old-space room until a full GC,
//!   which must then find it dead); `T` is the smallest of 1..=15 within 1%
//!   of the least cost;
//! - **growth headroom**: the long-lived growth rate `G`, bytes reaching old
//!   space per byte allocated (the bytes the replay tenures under that eden
//!   and threshold, plus the large objects, which are
//!   allocated in old space and never live in eden), times the bytes the run
//!   allocates, is what reaches old space. Old space starts with one headroom
//!   of room (zeroed lazily: unused room costs nothing) and the first full GC
//!   comes when old space holds one headroom, so the headroom is that inflow
//!   rounded up to a power of two of megabytes (within the default and
//!   [`Rules::headroom_max`]): old space need neither grow nor be collected
//!   for a run like the profiled one;
//! - **shrink threshold**: twice the headroom (as in the defaults, 16MB and
//!   32MB), so memory a full GC frees stays for the next growth;
//! - **GC ratio**: `s`, the share of the bytes reaching old space still
//!   alive at the end, is what a full GC keeps; between two full GCs live data grows
//!   by `ratio * s` of itself, so over the run the full GCs mark about
//!   `(1 + ratio*s) / (ratio*s)` times the final live data; `ratio = 1/s`
//!   keeps that to twice, within [`Rules::ratio_min`]..[`Rules::ratio_max`].

use crate::gc_config::{GcConfig, MB};
use lupa_heap::{GcParam, GcSettings};
use lupa_prof::lifetimes::Lifetimes;
use lupa_prof::lifetimes::analysis::{Analysis, Demography, format_bytes};
use lupa_vm::HeapConfig;
use std::collections::HashMap;

/// The constants of the rules (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// Quantile of the short-lived lifetimes that eden must hold (0.95).
    pub quantile: f64,
    /// Eden is this many times that quantile (2).
    pub safety: f64,
    /// Smallest eden proposed (1 MB).
    pub eden_min: usize,
    /// Largest eden proposed (1 GB, a quarter of the default heap bound).
    pub eden_max: usize,
    /// Largest headroom proposed (1 GB).
    pub headroom_max: usize,
    /// What a tenured byte costs besides its copy, in copies (1): old-space room
    /// until a full GC finds it dead, and the work of that full GC.
    pub tenured_cost: f64,
    /// Smallest GC ratio proposed (the default, 0.33).
    pub ratio_min: f64,
    /// Largest GC ratio proposed (10, the paper's largest).
    pub ratio_max: f64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            quantile: 0.95,
            safety: 2.0,
            eden_min: MB,
            eden_max: 1 << 30,
            headroom_max: 1 << 30,
            tenured_cost: 1.0,
            ratio_min: GcParam::GcRatio.default(),
            ratio_max: 10.0,
        }
    }
}

/// What the profile says, in the figures the rules use.
#[derive(Debug, Clone, PartialEq)]
pub struct Demographics {
    /// Sampled records.
    pub records: usize,
    /// Bytes the profiled run allocated (exact).
    pub allocated_bytes: u64,
    /// Estimated bytes allocated (from the sample).
    pub estimated_bytes: f64,
    /// The nursery sites are classified against (bytes).
    pub threshold_bytes: u64,
    /// The profile's eden: lifetimes are known to within this (bytes).
    pub resolution_bytes: u64,
    /// Share of the bytes allocated at short-lived sites.
    pub short_share: f64,
    /// Share of the bytes allocated at long-lived sites.
    pub long_share: f64,
    /// Share of the bytes allocated at immortal sites.
    pub immortal_share: f64,
    /// Sites by demography: short, long, immortal.
    pub sites: [usize; 3],
    /// The [`Rules::quantile`] of the lifetimes at short-lived sites (bytes
    /// allocated), if there are any.
    pub short_quantile_bytes: Option<f64>,
    /// Long-lived growth rate: bytes that reach old space (tenured under the proposed
    /// eden and tenuring threshold, or allocated there as large objects) per byte allocated.
    pub growth_rate: f64,
    /// Share of those bytes still alive at the end.
    pub survival: f64,
    /// Share of the bytes allocated as large objects (directly in old space).
    pub large_share: f64,
    /// Bytes tenured per byte allocated under the proposed eden, for each
    /// tenuring threshold 1..=15 ([`simulate`]).
    pub tenured_by_threshold: Vec<f64>,
}

/// One proposed parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The parameter.
    pub param: GcParam,
    /// Its value.
    pub value: f64,
    /// Why, in one line.
    pub why: String,
}

impl Choice {
    /// `--eden-size 16MB`: the `lupa run` flag and value that set it.
    pub fn flag(&self) -> String {
        let flag = self.param.info().flag.unwrap_or(self.param.name());
        format!("{flag} {}", self.param.format(self.value))
    }
}

/// The proposal: a configuration (named `proposal`) and the reasons.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The proposed parameters.
    pub config: GcConfig,
    /// One choice per parameter, in flag order.
    pub choices: Vec<Choice>,
    /// The figures behind them.
    pub demographics: Demographics,
}

/// The `q`-quantile of weighted values (`None` when there is no weight).
pub fn weighted_quantile(mut points: Vec<(f64, f64)>, q: f64) -> Option<f64> {
    points.retain(|&(_, w)| w > 0.0);
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = points.iter().map(|p| p.1).sum();
    if total <= 0.0 {
        return None;
    }
    let target = q.clamp(0.0, 1.0) * total;
    let mut acc = 0.0;
    for &(v, w) in &points {
        acc += w;
        if acc >= target {
            return Some(v);
        }
    }
    points.last().map(|p| p.0)
}

/// `bytes` rounded up to whole megabytes (at least 1).
fn ceil_mb(bytes: f64) -> usize {
    ((bytes / MB as f64).ceil().max(1.0) as usize) * MB
}

/// `bytes` rounded up to a power of two of megabytes.
fn pow2_mb(bytes: f64) -> usize {
    let mbs = (bytes / MB as f64).ceil().max(1.0) as usize;
    mbs.next_power_of_two() * MB
}

/// `x` with two significant digits (printed as such: `1.4`, not `1.4000000000000001`).
pub fn two_digits(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    format!("{x:.1e}").parse().unwrap_or(x)
}

fn mb_label(bytes: usize) -> String {
    crate::gc_config::size_flag(bytes)
}

fn pct(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

/// A sampled small object, for [`simulate`]: birth and death on the bytes
/// clock, estimated bytes, alive at the end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Life {
    /// Allocation clock at birth.
    pub birth: f64,
    /// Allocation clock at death (the stop for an object alive at the end).
    pub death: f64,
    /// Estimated bytes (size times 1/probability).
    pub bytes: f64,
    /// Alive at the end.
    pub censored: bool,
}

/// What the scavenger does to a run's objects, by [`simulate`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Simulated {
    /// Scavenges.
    pub scavenges: u64,
    /// Bytes copied (into a survivor space or old space).
    pub copied: f64,
    /// Bytes tenured (by age or survivor overflow).
    pub tenured: f64,
    /// Of those, bytes alive at the end.
    pub tenured_alive: f64,
}

/// Replay the scavenger on sampled lifetimes: a scavenge every `interval`
/// bytes of the clock (from the first birth), each copying the young objects
/// alive then, tenuring those that reach `threshold` scavenges and, when the
/// survivors exceed `survivor` bytes, the excess (spread over all of them: the
/// collector tenures whatever it copies once the survivor space is full).
/// `lives` must be sorted by birth.
pub fn simulate(lives: &[Life], interval: f64, threshold: u32, survivor: f64) -> Simulated {
    let mut out = Simulated::default();
    let (Some(first), true) = (lives.first(), interval > 0.0) else {
        return out;
    };
    let end = lives.iter().map(|l| l.death).fold(f64::MIN, f64::max);
    // (death, bytes still young, age, censored)
    let mut young: Vec<(f64, f64, u32, bool)> = Vec::new();
    let mut next = 0;
    let mut t = first.birth + interval;
    while t < end {
        while next < lives.len() && lives[next].birth < t {
            let l = lives[next];
            young.push((l.death, l.bytes, 0, l.censored));
            next += 1;
        }
        out.scavenges += 1;
        let mut survivors = 0.0;
        young.retain_mut(|(death, bytes, age, censored)| {
            if *death <= t {
                return false;
            }
            *age += 1;
            out.copied += *bytes;
            if *age >= threshold {
                out.tenured += *bytes;
                if *censored {
                    out.tenured_alive += *bytes;
                }
                return false;
            }
            survivors += *bytes;
            true
        });
        if survivors > survivor {
            let f = 1.0 - survivor / survivors;
            for (_, bytes, _, censored) in &mut young {
                out.tenured += f * *bytes;
                if *censored {
                    out.tenured_alive += f * *bytes;
                }
                *bytes *= 1.0 - f;
            }
        }
        t += interval;
    }
    out
}

/// Propose GC parameters from a lifetime profile (see the module doc).
/// `reference_eden`: the nursery the sites are classified against (the
/// default eden).
pub fn propose(profile: &Lifetimes, reference_eden: u64, rules: &Rules) -> Proposal {
    let defaults = HeapConfig::default();
    // The analysis, with "long-lived" meaning "outlives the reference nursery".
    let mut view = profile.clone();
    view.totals.eden_bytes = reference_eden;
    for r in &mut view.records {
        r.survived_scavenges = 0;
        r.survived_full_gcs = 0;
    }
    let analysis = Analysis::of(&view);
    let key = |method: &str, line: u32, pc: u32| (method.to_string(), line, pc);
    let demography: HashMap<(String, u32, u32), Demography> = analysis
        .sites
        .iter()
        .map(|g| (key(&g.method, g.line, g.pc), g.demography))
        .collect();
    let site_of = |r: &lupa_prof::lifetimes::Record| {
        let k = match profile.site_of(r) {
            Some(s) => key(&s.method, s.line, s.pc),
            None => key("", 0, 0),
        };
        demography.get(&k).copied().unwrap_or(Demography::Short)
    };

    let total = analysis.estimated_bytes;
    let share = |x: f64| if total > 0.0 { x / total } else { 0.0 };
    let mut by_kind = [0.0f64; 3];
    let mut sites = [0usize; 3];
    for g in &analysis.sites {
        let i = match g.demography {
            Demography::Short => 0,
            Demography::Long => 1,
            Demography::Immortal => 2,
        };
        by_kind[i] += g.bytes;
        sites[i] += 1;
    }

    // Large objects are allocated directly in old space: they never live in eden.
    let large = defaults.large_object_size as u64;
    let small = |r: &&lupa_prof::lifetimes::Record| r.size_bytes < large;
    let bytes = |r: &lupa_prof::lifetimes::Record| r.weight() * r.size_bytes as f64;
    let (mut large_bytes, mut large_alive) = (0.0, 0.0);
    for r in profile.records.iter().filter(|r| r.size_bytes >= large) {
        large_bytes += bytes(r);
        if r.censored {
            large_alive += bytes(r);
        }
    }

    // Eden.
    let short_points: Vec<(f64, f64)> = profile
        .records
        .iter()
        .filter(small)
        .filter(|r| !r.censored && site_of(r) == Demography::Short)
        .map(|r| (r.lifetime_bytes() as f64, r.weight() * r.size_bytes as f64))
        .collect();
    let short_q = weighted_quantile(short_points, rules.quantile);
    let resolution = profile.totals.eden_bytes;
    let mut choices = Vec::new();
    let eden = match short_q {
        Some(q) => {
            let e = ceil_mb(rules.safety * q).clamp(rules.eden_min, rules.eden_max);
            choices.push(Choice {
                param: GcParam::EdenSize,
                value: e as f64,
                why: format!(
                    "{:.0}% of the bytes of short-lived sites ({} of all bytes) die within {} of \
allocation (seen to {}); eden = {} x that, in whole MB, within {}..{}",
                    rules.quantile * 100.0,
                    pct(share(by_kind[0])),
                    format_bytes(q),
                    format_bytes(resolution as f64),
                    rules.safety,
                    mb_label(rules.eden_min),
                    mb_label(rules.eden_max)
                ),
            });
            e
        }
        None => {
            choices.push(Choice {
                param: GcParam::EdenSize,
                value: defaults.eden_size as f64,
                why: "no short-lived site was sampled: the default eden is kept".to_string(),
            });
            defaults.eden_size
        }
    };

    // Tenuring threshold: the scavenger replayed on the sampled lifetimes under that eden.
    let mut lives: Vec<Life> = profile
        .records
        .iter()
        .filter(small)
        .map(|r| Life {
            birth: r.birth_bytes as f64,
            death: r.death_bytes as f64,
            bytes: bytes(r),
            censored: r.censored,
        })
        .collect();
    lives.sort_by(|a, b| a.birth.total_cmp(&b.birth));
    // Eden fills with small objects only: on the clock of all bytes, a scavenge
    // comes every eden / (share of small bytes).
    let small_share = 1.0 - share(large_bytes);
    let interval = eden as f64 / small_share.max(1e-9);
    let survivor = eden as f64 / 5.0;
    let max_t = 15u32;
    let sims: Vec<Simulated> = (1..=max_t)
        .map(|t| simulate(&lives, interval, t, survivor))
        .collect();
    let cost = |s: &Simulated| s.copied + rules.tenured_cost * s.tenured;
    let least = sims.iter().map(cost).fold(f64::INFINITY, f64::min);
    let scale = sims.first().map_or(0.0, |s| s.copied);
    let (tenuring, why_t) = if scale <= 0.0 {
        (
            defaults.tenuring_threshold as usize,
            "no sampled object outlives one eden: the default is kept".to_string(),
        )
    } else {
        // The smallest threshold within 1% of the least cost: a later tenuring that
        // saves next to nothing is not worth its risk.
        let t = (1..=max_t as usize)
            .find(|&k| cost(&sims[k - 1]) <= least + 0.01 * scale)
            .unwrap_or(1);
        let d = defaults.tenuring_threshold as usize;
        let of = |k: usize| {
            let s = &sims[k - 1];
            format!(
                "after {k}: {} copied, {} tenured",
                format_bytes(share(s.copied) * profile.totals.allocated_bytes as f64),
                format_bytes(share(s.tenured) * profile.totals.allocated_bytes as f64)
            )
        };
        (
            t,
            format!(
                "the scavenger replayed on the sampled lifetimes (eden {}, survivors {}) copies \
and tenures least when tenuring {}{} (a tenured byte counts {} copy more)",
                mb_label(eden),
                format_bytes(survivor),
                of(t),
                if t == d {
                    String::new()
                } else {
                    format!("; {}", of(d))
                },
                rules.tenured_cost
            ),
        )
    };
    let tenured_by_threshold: Vec<f64> = sims.iter().map(|s| share(s.tenured)).collect();

    // What reaches old space under that eden and threshold (tenured, or large), and what
    // of it lives to the end.
    let sim = sims.get(tenuring - 1).copied().unwrap_or_default();
    let old = sim.tenured + large_bytes;
    let alive = sim.tenured_alive + large_alive;
    let growth_rate = share(old);
    let survival = if old > 0.0 { alive / old } else { 0.0 };

    // Growth headroom and shrink threshold.
    let inflow = growth_rate * profile.totals.allocated_bytes as f64;
    let headroom = pow2_mb(inflow).clamp(
        defaults.growth_headroom,
        rules.headroom_max.max(defaults.growth_headroom),
    );
    choices.push(Choice {
        param: GcParam::GrowthHeadroom,
        value: headroom as f64,
        why: format!(
            "with this eden and threshold {:.2} bytes reach old space per byte allocated \
(tenured, or large objects: {} of all bytes): about {} in this run; old space starts with one \
headroom and is first collected when full, so headroom = that, as a power of two of MB, within \
{}..{}",
            growth_rate,
            pct(share(large_bytes)),
            format_bytes(inflow),
            mb_label(defaults.growth_headroom),
            mb_label(rules.headroom_max)
        ),
    });
    let shrink = (2 * headroom).max(defaults.shrink_threshold);
    choices.push(Choice {
        param: GcParam::ShrinkThreshold,
        value: shrink as f64,
        why: "twice the headroom (as the defaults): memory a full GC frees is kept for the next \
growth instead of being given back"
            .to_string(),
    });

    // GC ratio.
    let ratio = if survival > 0.0 {
        two_digits(1.0 / survival).clamp(rules.ratio_min, rules.ratio_max)
    } else {
        rules.ratio_max
    };
    choices.push(Choice {
        param: GcParam::GcRatio,
        value: ratio,
        why: format!(
            "{} of the bytes that reach old space are still alive at the end (s); ratio = 1/s keeps the \
marking of all full GCs to about twice the final live data, within {}..{}",
            pct(survival),
            rules.ratio_min,
            rules.ratio_max
        ),
    });
    choices.push(Choice {
        param: GcParam::TenuringThreshold,
        value: tenuring as f64,
        why: why_t,
    });

    let mut settings = GcSettings::default();
    for c in &choices {
        settings.set(c.param, c.value);
    }
    Proposal {
        config: GcConfig {
            name: "proposal".to_string(),
            settings,
        },
        choices,
        demographics: Demographics {
            records: profile.records.len(),
            allocated_bytes: profile.totals.allocated_bytes,
            estimated_bytes: total,
            threshold_bytes: reference_eden,
            resolution_bytes: resolution,
            short_share: share(by_kind[0]),
            long_share: share(by_kind[1]),
            immortal_share: share(by_kind[2]),
            sites,
            short_quantile_bytes: short_q,
            growth_rate,
            survival,
            large_share: share(large_bytes),
            tenured_by_threshold,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_prof::lifetimes::{Record, Site, Totals};

    /// A profile built by hand: `n` objects of `size` bytes per site, each
    /// `(method, lifetime in bytes, alive at the end)`, sampled with probability 1.
    fn profile(sites: &[(&str, u64, bool, usize)], allocated: u64) -> Lifetimes {
        let mut l = Lifetimes {
            totals: Totals {
                allocated_bytes: allocated,
                eden_bytes: MB as u64,
                ..Totals::default()
            },
            ..Lifetimes::default()
        };
        let class = l.intern_class("Thing");
        let mut clock = 0u64;
        for &(method, life, censored, n) in sites {
            let site = l.intern_site(Site {
                method: method.to_string(),
                pc: 1,
                line: 1,
            });
            let stack = l.intern_stack(vec![site]);
            for _ in 0..n {
                clock += 1000;
                l.records.push(Record {
                    class,
                    size_bytes: 1000,
                    stack,
                    birth_bytes: clock,
                    death_bytes: clock + life,
                    censored,
                    probability: 1.0,
                    ..Record::default()
                });
            }
        }
        l
    }

    fn value(p: &Proposal, param: GcParam) -> String {
        p.choices
            .iter()
            .find(|c| c.param == param)
            .map(|c| param.format(c.value))
            .unwrap_or_default()
    }

    #[test]
    fn quantiles_are_weighted() {
        let pts = vec![(1.0, 1.0), (2.0, 1.0), (10.0, 8.0)];
        assert_eq!(weighted_quantile(pts.clone(), 0.1), Some(1.0));
        assert_eq!(weighted_quantile(pts.clone(), 0.2), Some(2.0));
        assert_eq!(weighted_quantile(pts, 0.95), Some(10.0));
        assert_eq!(weighted_quantile(vec![], 0.5), None);
        assert_eq!(two_digits(2.137), 2.1);
        assert_eq!(pow2_mb(3.5 * MB as f64), 4 * MB);
    }

    #[test]
    fn a_generational_program_gets_a_small_eden_and_default_old_space() {
        // Temporaries die within 1.5 MB; a few objects live for ever.
        let l = profile(
            &[
                ("Parser>>token", 1_500_000, false, 900),
                ("Table>>add:", 50 << 20, true, 100),
            ],
            100 << 20,
        );
        let p = propose(&l, 15 * MB as u64, &Rules::default());
        assert_eq!(p.config.bytes(GcParam::EdenSize), 3 * MB, "{p:#?}");
        assert_eq!(value(&p, GcParam::EdenSize), "3MB");
        let d = &p.demographics;
        assert_eq!(d.sites, [1, 0, 1]);
        assert!((d.short_share - 0.9).abs() < 1e-9);
        assert!((d.growth_rate - 0.1).abs() < 1e-9);
        assert!((d.survival - 1.0).abs() < 1e-9);
        // 10 MB reach old space: 2.5 MB a step, below the default headroom.
        assert_eq!(p.config.bytes(GcParam::GrowthHeadroom), 16 * MB);
        assert_eq!(p.config.bytes(GcParam::ShrinkThreshold), 32 * MB);
        // Everything long-lived survives: ratio 1/s = 1.
        assert_eq!(p.config.get(GcParam::GcRatio), 1.0);
        // The temporaries are dead before the first scavenge, and what survives it is
        // immortal: tenure at once rather than copy it again.
        assert_eq!(p.config.get(GcParam::TenuringThreshold), 1.0);
        assert_eq!(p.choices.len(), 5);
        assert!(
            p.choices
                .iter()
                .all(|c| !c.why.is_empty() && !c.why.contains('\n'))
        );
    }

    #[test]
    fn a_growing_heap_with_medium_lived_data_gets_room_to_grow() {
        // 60% short (0.5 MB), 30% medium (40 MB, dying), 10% immortal, over 4 GB.
        let l = profile(
            &[
                ("Reader>>line", 500_000, false, 600),
                ("Frame>>column", 40 << 20, false, 300),
                ("Frame>>cell", 100 << 20, true, 100),
            ],
            4 << 30,
        );
        let p = propose(&l, 15 * MB as u64, &Rules::default());
        assert_eq!(p.config.bytes(GcParam::EdenSize), MB, "{p:#?}");
        let d = &p.demographics;
        assert_eq!(d.sites, [1, 1, 1]);
        // At the first scavenge the survivors (the long-lived 40% and the youngest
        // temporaries) overflow the 0.2 MB survivor space: most are tenured anyway,
        // and the rest live 40 MB or more: tenure at once.
        assert_eq!(p.config.get(GcParam::TenuringThreshold), 1.0);
        assert!((0.4..0.5).contains(&d.growth_rate), "{d:?}");
        // About 1.8 GB reach old space: the largest headroom.
        assert_eq!(p.config.bytes(GcParam::GrowthHeadroom), 1024 * MB);
        assert_eq!(p.config.bytes(GcParam::ShrinkThreshold), 2048 * MB);
        // The immortal 10% are a fifth of it: ratio 1/s with two digits.
        assert!((d.survival - 0.1 / d.growth_rate).abs() < 1e-9, "{d:?}");
        assert_eq!(
            p.config.get(GcParam::GcRatio),
            two_digits(d.growth_rate / 0.1)
        );
    }

    #[test]
    fn medium_lifetimes_just_past_eden_keep_objects_young() {
        // 10 000 objects of 1000 bytes, one after the other: temporaries of 100 KB and,
        // every 50th, an object living 1.5 MB (one and a half eden).
        let mut l = Lifetimes {
            totals: Totals {
                allocated_bytes: 10_000_000,
                eden_bytes: MB as u64,
                ..Totals::default()
            },
            ..Lifetimes::default()
        };
        let class = l.intern_class("Thing");
        let mut stacks = Vec::new();
        for method in ["A>>tmp", "B>>medium"] {
            let site = l.intern_site(Site {
                method: method.into(),
                pc: 1,
                line: 1,
            });
            stacks.push(l.intern_stack(vec![site]));
        }
        for i in 0..10_000u64 {
            let (stack, life) = if i % 50 == 49 {
                (stacks[1], 3 << 19)
            } else {
                (stacks[0], 100_000)
            };
            l.records.push(Record {
                class,
                size_bytes: 1000,
                stack,
                birth_bytes: i * 1000,
                death_bytes: i * 1000 + life,
                probability: 1.0,
                ..Record::default()
            });
        }
        let p = propose(&l, 15 * MB as u64, &Rules::default());
        assert_eq!(p.config.bytes(GcParam::EdenSize), MB, "{p:#?}");
        // A medium object is alive at its first scavenge, alive at its second half
        // the time, dead at its third: tenuring after 3 copies 1.5 times its bytes
        // and tenures nothing.
        assert_eq!(p.config.get(GcParam::TenuringThreshold), 3.0, "{p:#?}");
        let d = &p.demographics;
        assert!(d.growth_rate < 0.001, "{d:?}");
        // Nothing is alive at the end: the largest ratio, the default headroom.
        assert_eq!(p.config.get(GcParam::GcRatio), 10.0);
        assert_eq!(p.config.bytes(GcParam::GrowthHeadroom), 16 * MB);
    }

    #[test]
    fn large_objects_go_to_old_space_not_eden() {
        // Temporaries (0.5 MB) and, at another site, large arrays that die after 4 MB of
        // allocation: they do not stretch eden, and they count as old-space inflow.
        let mut l = profile(
            &[
                ("Parser>>token", 500_000, false, 800),
                ("Column>>grow", 4 << 20, false, 200),
            ],
            1 << 30,
        );
        let grow = l.intern_site(Site {
            method: "Column>>grow".into(),
            pc: 1,
            line: 1,
        });
        let stack = l.intern_stack(vec![grow]);
        for r in l.records.iter_mut().filter(|r| r.stack == stack) {
            r.size_bytes = 100_000;
        }
        let p = propose(&l, 15 * MB as u64, &Rules::default());
        let d = &p.demographics;
        assert_eq!(p.config.bytes(GcParam::EdenSize), MB, "{p:#?}");
        let large = 200.0 * 100_000.0 / (800.0 * 1000.0 + 200.0 * 100_000.0);
        assert!((d.large_share - large).abs() < 1e-9, "{d:?}");
        assert!(d.growth_rate >= large, "{d:?}");
        // They die: a full GC finds most of old space dead, ratio at its largest.
        assert!(d.survival < 0.1, "{d:?}");
        assert_eq!(p.config.get(GcParam::GcRatio), 10.0);
        // About 1 GB reaches old space: the largest headroom.
        assert_eq!(p.config.bytes(GcParam::GrowthHeadroom), 1024 * MB);
    }

    #[test]
    fn the_replayed_scavenger_copies_tenures_and_overflows() {
        let life = |birth: f64, death: f64, censored| Life {
            birth,
            death,
            bytes: 100.0,
            censored,
        };
        // Scavenges at 10, 20, 30 (the clock ends at 35).
        let lives = [
            life(0.0, 5.0, false),  // dies young
            life(1.0, 15.0, false), // survives one scavenge
            life(2.0, 35.0, true),  // survives all three
        ];
        let s = simulate(&lives, 10.0, 3, 1000.0);
        assert_eq!(s.scavenges, 3);
        assert_eq!(s.copied, 100.0 + 300.0);
        assert_eq!((s.tenured, s.tenured_alive), (100.0, 100.0));
        let s = simulate(&lives, 10.0, 1, 1000.0);
        assert_eq!((s.copied, s.tenured), (200.0, 200.0));
        // A survivor space of 50 bytes: at the first scavenge 200 bytes survive,
        // 150 overflow into old space.
        let s = simulate(&lives, 10.0, 3, 50.0);
        assert_eq!(s.tenured, 150.0 + 25.0);
        assert_eq!(simulate(&[], 10.0, 3, 50.0), Simulated::default());
    }

    #[test]
    fn an_empty_profile_keeps_the_defaults_where_it_cannot_say() {
        let p = propose(&Lifetimes::default(), 15 * MB as u64, &Rules::default());
        let d = HeapConfig::default();
        assert_eq!(p.config.bytes(GcParam::EdenSize), d.eden_size);
        assert_eq!(
            p.config.get(GcParam::TenuringThreshold),
            f64::from(d.tenuring_threshold)
        );
        assert_eq!(p.config.bytes(GcParam::GrowthHeadroom), d.growth_headroom);
    }
}
