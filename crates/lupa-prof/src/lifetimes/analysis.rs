//! What a lifetime profile says: estimated totals, lifetime densities on
//! each clock, allocation sites and classes ranked, and the short / long /
//! immortal classification of sites (Blackburn et al., "Profile-based
//! pretenuring", TOPLAS 2007) that GC tuning and pretenuring use.
//!
//! Every figure is an estimate of the whole run from the sample: a record
//! counts `1 / probability` objects (Horvitz-Thompson), and the standard
//! error of an estimated count is `sqrt(sum((1 - p) / p²))`.
//!
//! **Long-lived** means: outlived the nursery. On the bytes clock, an object
//! lived longer than [`Analysis::threshold_bytes`] (one eden of allocation,
//! what a scavenge cycle gives an object to die), or survived a collection,
//! or is censored: still alive at the end, its lifetime is a lower bound, so
//! it is not known to die young (a short run ends before one eden of
//! allocation, and what it keeps is not short-lived).
//! A site is *immortal* when at least [`IMMORTAL_SHARE`] of its bytes were
//! long-lived and still alive at the end, *long* when at least
//! [`LONG_SHARE`] of its bytes were long-lived, and *short* otherwise.

use serde::Serialize;

use super::{Lifetimes, Record};

/// Share of a site's bytes, long-lived and alive at the end, that makes it immortal.
pub const IMMORTAL_SHARE: f64 = 0.9;
/// Share of a site's bytes, long-lived, that makes it long-lived.
pub const LONG_SHARE: f64 = 0.5;
/// Buckets of the survived-collections histogram (the last one: that many or more).
pub const SURVIVED_BUCKETS: usize = 6;

/// A lifetime clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// Bytes allocated between birth and death (FiLiP's clock).
    Bytes,
    /// Microseconds between birth and death.
    Time,
    /// Collections survived.
    Collections,
}

impl Clock {
    /// All three, in report order.
    pub const ALL: [Clock; 3] = [Clock::Bytes, Clock::Time, Clock::Collections];

    /// The lifetime of a record on this clock.
    pub fn lifetime(self, r: &Record) -> u64 {
        match self {
            Clock::Bytes => r.lifetime_bytes(),
            Clock::Time => r.lifetime_us(),
            Clock::Collections => u64::from(r.survived()),
        }
    }

    /// The unit of its lifetimes.
    pub fn unit(self) -> &'static str {
        match self {
            Clock::Bytes => "bytes allocated",
            Clock::Time => "µs",
            Clock::Collections => "collections survived",
        }
    }

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Clock::Bytes => "bytes",
            Clock::Time => "time",
            Clock::Collections => "collections",
        }
    }

    /// A value with its unit, short (`1.5 MB`, `320 µs`, `3`).
    pub fn format(self, v: u64) -> String {
        match self {
            Clock::Bytes => format_bytes(v as f64),
            Clock::Time => format_us(v),
            Clock::Collections => v.to_string(),
        }
    }
}

/// `1.5 MB`, `12 KB`, `40 B`.
pub fn format_bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b >= K * K * K {
        format!("{:.1} GB", b / (K * K * K))
    } else if b >= K * K {
        format!("{:.1} MB", b / (K * K))
    } else if b >= K {
        format!("{:.1} KB", b / K)
    } else {
        format!("{b:.0} B")
    }
}

/// `1.2 s`, `3.4 ms`, `56 µs`.
pub fn format_us(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.1} s", us as f64 / 1e6)
    } else if us >= 1000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{us} µs")
    }
}

/// One bucket of a density: lifetimes in `[lo, hi)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    /// Lower bound (inclusive).
    pub lo: u64,
    /// Upper bound (exclusive).
    pub hi: u64,
    /// Estimated objects.
    pub objects: f64,
    /// Estimated bytes.
    pub bytes: f64,
    /// Estimated objects still alive at the end (their lifetime is a lower bound).
    pub censored_objects: f64,
}

/// The lifetime density on one clock: buckets doubling in width (bytes,
/// time) or one per count (collections, the last holding the rest).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Density {
    /// The clock.
    pub clock: Clock,
    /// Its unit.
    pub unit: &'static str,
    /// The buckets, in order, from the first non-empty one.
    pub buckets: Vec<Bucket>,
}

/// The short / long / immortal advice for a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Demography {
    /// Its objects die young: leave them in eden.
    Short,
    /// Its objects outlive the nursery: a pretenuring candidate.
    Long,
    /// Its objects outlive the nursery and the run: pretenure them.
    Immortal,
}

impl Demography {
    /// `short`, `long` or `immortal`.
    pub fn name(self) -> &'static str {
        match self {
            Demography::Short => "short",
            Demography::Long => "long",
            Demography::Immortal => "immortal",
        }
    }
}

/// An allocation site (or a class) and what was allocated there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The site (`Class>>selector:line`) or the class name.
    pub name: String,
    /// The method (sites only; empty for classes).
    pub method: String,
    /// The source line (sites only).
    pub line: u32,
    /// The send instruction (sites only).
    pub pc: u32,
    /// Records.
    pub records: usize,
    /// Estimated objects.
    pub objects: f64,
    /// Standard error of `objects`.
    pub objects_error: f64,
    /// Estimated bytes.
    pub bytes: f64,
    /// Estimated sum of lifetimes, bytes clock (bytes allocated × objects).
    pub lifetime_bytes: f64,
    /// Mean lifetime, bytes clock.
    pub mean_lifetime_bytes: f64,
    /// Estimated objects by collections survived: 0, 1, ... [`SURVIVED_BUCKETS`]-1 or more.
    pub survived: Vec<f64>,
    /// Share of the bytes that outlived the nursery.
    pub long_share: f64,
    /// Share of the bytes that outlived the nursery and were alive at the end.
    pub immortal_share: f64,
    /// The advice.
    pub demography: Demography,
    /// The classes allocated there, most bytes first (sites only; at most 3).
    pub classes: Vec<String>,
}

/// The analysis of a profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// Records still alive at the end.
    pub censored: usize,
    /// Estimated objects allocated (from the sample).
    pub estimated_objects: f64,
    /// Estimated bytes allocated (from the sample).
    pub estimated_bytes: f64,
    /// What "long-lived" means on the bytes clock (the eden size).
    pub threshold_bytes: u64,
    /// Estimated share of the objects that were long-lived.
    pub long_objects_share: f64,
    /// Estimated share of the bytes that were long-lived.
    pub long_bytes_share: f64,
    /// The densities, one per clock ([`Clock::ALL`]).
    pub densities: Vec<Density>,
    /// Allocation sites, most bytes first.
    pub sites: Vec<Group>,
    /// Classes, most bytes first.
    pub classes: Vec<Group>,
}

/// Weighted sums over a set of records.
#[derive(Debug, Clone, Default)]
struct Acc {
    records: usize,
    objects: f64,
    variance: f64,
    bytes: f64,
    lifetime_bytes: f64,
    long_bytes: f64,
    immortal_bytes: f64,
    survived: Vec<f64>,
    classes: Vec<(String, f64)>,
}

impl Acc {
    fn add(&mut self, r: &Record, long: bool, class: Option<&str>) {
        let w = r.weight();
        let bytes = w * r.size_bytes as f64;
        self.records += 1;
        self.objects += w;
        self.variance += (1.0 - r.probability) / (r.probability * r.probability);
        self.bytes += bytes;
        self.lifetime_bytes += w * r.lifetime_bytes() as f64;
        if long {
            self.long_bytes += bytes;
            if r.censored {
                self.immortal_bytes += bytes;
            }
        }
        if self.survived.is_empty() {
            self.survived = vec![0.0; SURVIVED_BUCKETS];
        }
        let k = (r.survived() as usize).min(SURVIVED_BUCKETS - 1);
        self.survived[k] += w;
        if let Some(name) = class {
            match self.classes.iter_mut().find(|(c, _)| c == name) {
                Some(e) => e.1 += bytes,
                None => self.classes.push((name.to_string(), bytes)),
            }
        }
    }

    fn group(mut self, name: String, method: String, line: u32, pc: u32) -> Group {
        let share = |x: f64| {
            if self.bytes > 0.0 {
                x / self.bytes
            } else {
                0.0
            }
        };
        let long_share = share(self.long_bytes);
        let immortal_share = share(self.immortal_bytes);
        let demography = if immortal_share >= IMMORTAL_SHARE {
            Demography::Immortal
        } else if long_share >= LONG_SHARE {
            Demography::Long
        } else {
            Demography::Short
        };
        self.classes
            .sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Group {
            name,
            method,
            line,
            pc,
            records: self.records,
            objects: self.objects,
            objects_error: self.variance.sqrt(),
            bytes: self.bytes,
            lifetime_bytes: self.lifetime_bytes,
            mean_lifetime_bytes: if self.objects > 0.0 {
                self.lifetime_bytes / self.objects
            } else {
                0.0
            },
            survived: self.survived,
            long_share,
            immortal_share,
            demography,
            classes: self.classes.into_iter().take(3).map(|(c, _)| c).collect(),
        }
    }
}

/// The bucket index of a lifetime on a doubling scale: 0 for 0, k for
/// `[2^(k-1), 2^k)`.
fn log_bucket(v: u64) -> usize {
    (64 - v.leading_zeros()) as usize
}

fn log_bounds(k: usize) -> (u64, u64) {
    if k == 0 {
        (0, 1)
    } else {
        (
            1u64 << (k - 1),
            1u64.checked_shl(k as u32).unwrap_or(u64::MAX),
        )
    }
}

/// The density of `profile`'s lifetimes on `clock`.
pub fn density(profile: &Lifetimes, clock: Clock) -> Density {
    let mut buckets: Vec<Bucket> = Vec::new();
    let linear = clock == Clock::Collections;
    let cap = SURVIVED_BUCKETS * 2;
    for r in &profile.records {
        let v = clock.lifetime(r);
        let k = if linear {
            (v as usize).min(cap - 1)
        } else {
            log_bucket(v)
        };
        while buckets.len() <= k {
            let i = buckets.len();
            let (lo, hi) = if linear {
                let hi = if i == cap - 1 { u64::MAX } else { i as u64 + 1 };
                (i as u64, hi)
            } else {
                log_bounds(i)
            };
            buckets.push(Bucket {
                lo,
                hi,
                objects: 0.0,
                bytes: 0.0,
                censored_objects: 0.0,
            });
        }
        let w = r.weight();
        let b = &mut buckets[k];
        b.objects += w;
        b.bytes += w * r.size_bytes as f64;
        if r.censored {
            b.censored_objects += w;
        }
    }
    let first = buckets.iter().position(|b| b.objects > 0.0).unwrap_or(0);
    Density {
        clock,
        unit: clock.unit(),
        buckets: buckets.split_off(first),
    }
}

impl Analysis {
    /// Analyse a profile.
    pub fn of(profile: &Lifetimes) -> Analysis {
        let threshold = profile.totals.eden_bytes;
        let long = |r: &Record| {
            r.censored || r.survived() > 0 || (threshold > 0 && r.lifetime_bytes() > threshold)
        };
        let mut all = Acc::default();
        let mut sites: Vec<(Option<u32>, Acc)> = Vec::new();
        let mut site_index: std::collections::HashMap<Option<u32>, usize> = Default::default();
        let mut classes: Vec<Acc> = vec![Acc::default(); profile.classes.len()];
        let mut long_objects = 0.0;
        for r in &profile.records {
            let l = long(r);
            all.add(r, l, None);
            if l {
                long_objects += r.weight();
            }
            let key = profile.stack_of(r).first().copied();
            let i = *site_index.entry(key).or_insert_with(|| {
                sites.push((key, Acc::default()));
                sites.len() - 1
            });
            sites[i].1.add(r, l, Some(profile.class_of(r)));
            if let Some(acc) = classes.get_mut(r.class as usize) {
                acc.add(r, l, None);
            }
        }
        let mut site_groups: Vec<Group> = sites
            .into_iter()
            .map(
                |(key, acc)| match key.and_then(|k| profile.sites.get(k as usize)) {
                    Some(s) => acc.group(s.label(), s.method.clone(), s.line, s.pc),
                    None => acc.group("(no Smalltalk frame)".into(), String::new(), 0, 0),
                },
            )
            .collect();
        site_groups.sort_by(|a, b| {
            b.bytes
                .total_cmp(&a.bytes)
                .then_with(|| a.name.cmp(&b.name))
        });
        let mut class_groups: Vec<Group> = classes
            .into_iter()
            .zip(&profile.classes)
            .filter(|(acc, _)| acc.records > 0)
            .map(|(acc, c)| acc.group(c.clone(), String::new(), 0, 0))
            .collect();
        class_groups.sort_by(|a, b| {
            b.bytes
                .total_cmp(&a.bytes)
                .then_with(|| a.name.cmp(&b.name))
        });
        let share = |x: f64, of: f64| if of > 0.0 { x / of } else { 0.0 };
        Analysis {
            censored: profile.records.iter().filter(|r| r.censored).count(),
            estimated_objects: all.objects,
            estimated_bytes: all.bytes,
            threshold_bytes: threshold,
            long_objects_share: share(long_objects, all.objects),
            long_bytes_share: share(all.long_bytes, all.bytes),
            densities: Clock::ALL.iter().map(|&c| density(profile, c)).collect(),
            sites: site_groups,
            classes: class_groups,
        }
    }

    /// The paper's finding for this run: "25% of objects, holding 40% of the
    /// memory, live longer than one eden (15.0 MB allocated) or survive a
    /// collection".
    pub fn summary_line(&self) -> String {
        format!(
            "{:.0}% of objects, holding {:.0}% of the memory, live longer than one eden ({} allocated) or survive a collection",
            self.long_objects_share * 100.0,
            self.long_bytes_share * 100.0,
            format_bytes(self.threshold_bytes as f64)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifetimes::{Site, Totals};

    /// A short run (far less than one eden allocated, no collection): the
    /// site whose objects are alive at the end is immortal (their lifetime is
    /// a lower bound, not a short one), the site whose objects died is short.
    #[test]
    fn censored_lifetimes_are_lower_bounds() {
        let mut l = Lifetimes {
            totals: Totals {
                eden_bytes: 15 << 20,
                ..Totals::default()
            },
            final_gc: true,
            ..Lifetimes::default()
        };
        let class = l.intern_class("Thing");
        let mut clock = 0;
        for (method, censored) in [("Keep>>run", true), ("Drop>>run", false)] {
            let site = l.intern_site(Site {
                method: method.into(),
                pc: 1,
                line: 1,
            });
            let stack = l.intern_stack(vec![site]);
            for _ in 0..100 {
                clock += 32;
                l.records.push(Record {
                    class,
                    size_bytes: 32,
                    stack,
                    birth_bytes: clock,
                    death_bytes: clock + 1000,
                    censored,
                    probability: 1.0,
                    ..Record::default()
                });
            }
        }
        let a = Analysis::of(&l);
        let demography = |m: &str| a.sites.iter().find(|g| g.method == m).map(|g| g.demography);
        assert_eq!(demography("Keep>>run"), Some(Demography::Immortal));
        assert_eq!(demography("Drop>>run"), Some(Demography::Short));
        assert_eq!(a.censored, 100);
        assert!((a.long_objects_share - 0.5).abs() < 1e-9);
    }
}
