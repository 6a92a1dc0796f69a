//! Sampled CPU time across versions (`lupa history record --metric time`):
//! each version keeps, per method, its self and total time in each of N
//! sampled runs ([`RunValue`]); a diff applies Welch's t-test to the N values
//! of each side ([`welch`]) before it calls a method higher or lower. A change
//! not significant at 95% is [`State::Unchanged`].
//!
//! Classes and packages are compared by the sum of their methods' self
//! values in each run (as the send metrics are), with the same test.
//!
//! Contract: pure, deterministic (rows sorted), never fails; a method absent
//! from some runs of a version counts 0 in those runs, and one absent from
//! every run of a version is new or removed only when its values in the other
//! version differ significantly from zeros (a sampler may miss a method that
//! ran).

use super::text::{state_cell, table, version_line};
use super::{Level, MethodMetrics, State, VersionInfo};
use crate::stats::mean;
pub use crate::stats::{CONFIDENCE, Welch, welch};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One method's values in one run of a version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunValue {
    /// The run (0, 1, ...).
    pub run: u32,
    /// The method (`Class>>selector`).
    pub method: String,
    /// Its self value (milliseconds of CPU time, or samples in the
    /// deterministic mode).
    pub self_value: f64,
    /// Its total value (the method and everything it called).
    pub total_value: f64,
}

/// The pseudo-method of a run's [`RunValue`] that holds the whole run's
/// value (its `total_value`): every run has one, so a run in which nothing
/// was sampled still counts.
pub const RUN_TOTAL: &str = "<run>";

/// Which time a time diff compares per method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeMeasure {
    /// The method and everything it called (the default).
    #[default]
    Total,
    /// The method itself.
    #[serde(rename = "self")]
    SelfTime,
}

/// One artifact of a time diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeChange {
    /// `Class>>selector`, the class or the package.
    pub name: String,
    /// Its package.
    pub package: String,
    /// Its class (empty for a package).
    pub class: String,
    /// Its state: higher or lower only when significant.
    pub state: State,
    /// The test (a side where the artifact is absent counts as zeros).
    pub test: Option<Welch>,
    /// Mean in the earlier version (`None`: absent).
    pub before: Option<f64>,
    /// Mean in the later version (`None`: absent).
    pub after: Option<f64>,
}

impl TimeChange {
    /// `after - before`, absent counting 0.
    pub fn delta(&self) -> f64 {
        self.after.unwrap_or(0.0) - self.before.unwrap_or(0.0)
    }
}

/// Two time versions compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeDiff {
    /// The earlier version.
    pub from: VersionInfo,
    /// The later version.
    pub to: VersionInfo,
    /// The unit of the values (`ms`, or `samples`).
    pub unit: String,
    /// What methods are compared by.
    pub measure: TimeMeasure,
    /// Runs of each version.
    pub runs: (usize, usize),
    /// The whole runs compared ([`RUN_TOTAL`]; `None` when a version lacks
    /// them).
    pub whole_run: Option<Welch>,
    /// Packages, by state then name.
    pub packages: Vec<TimeChange>,
    /// Classes, by state then name.
    pub classes: Vec<TimeChange>,
    /// Methods, by state, then largest absolute delta, then name.
    pub methods: Vec<TimeChange>,
}

impl TimeDiff {
    /// The changes of one level.
    pub fn level(&self, level: Level) -> &[TimeChange] {
        match level {
            Level::Method => &self.methods,
            Level::Class => &self.classes,
            Level::Package => &self.packages,
        }
    }

    /// How many changes of `level` are in each state.
    pub fn counts(&self, level: Level) -> [(State, usize); 5] {
        State::tally(self.level(level).iter().map(|c| c.state))
    }
}

/// One side of a time diff: a version, its methods (for package and class)
/// and its per-run values.
#[derive(Debug, Clone, Copy)]
pub struct TimeSide<'a> {
    /// The version.
    pub version: &'a VersionInfo,
    /// Its methods.
    pub methods: &'a [MethodMetrics],
    /// Its per-run values.
    pub runs: &'a [RunValue],
}

/// The number of runs of a side (the largest run number + 1).
fn run_count(runs: &[RunValue]) -> usize {
    runs.iter().map(|r| r.run as usize + 1).max().unwrap_or(0)
}

/// Compare two time versions, in `unit`.
pub fn diff(from: TimeSide<'_>, to: TimeSide<'_>, measure: TimeMeasure, unit: &str) -> TimeDiff {
    let n = (run_count(from.runs), run_count(to.runs));
    // name -> (package, class, per-run values before, after)
    type Acc = FxHashMap<String, (String, String, Option<Vec<f64>>, Option<Vec<f64>>)>;
    let mut methods: Acc = FxHashMap::default();
    let mut classes: Acc = FxHashMap::default();
    let mut packages: Acc = FxHashMap::default();
    for (side, later, runs) in [(from, false, n.0), (to, true, n.1)] {
        let owner: FxHashMap<&str, &MethodMetrics> = side
            .methods
            .iter()
            .map(|m| (m.method.as_str(), m))
            .collect();
        for r in side.runs.iter().filter(|r| r.method != RUN_TOTAL) {
            let (pkg, class) = owner
                .get(r.method.as_str())
                .map_or(("", ""), |m| (m.package.as_str(), m.class.as_str()));
            let v = match measure {
                TimeMeasure::Total => r.total_value,
                TimeMeasure::SelfTime => r.self_value,
            };
            for (acc, key, row_class, value) in [
                (&mut methods, r.method.as_str(), class, v),
                (&mut classes, class, class, r.self_value),
                (&mut packages, pkg, "", r.self_value),
            ] {
                let e = acc
                    .entry(key.to_string())
                    .or_insert_with(|| (pkg.to_string(), row_class.to_string(), None, None));
                let slot = if later { &mut e.3 } else { &mut e.2 };
                let values = slot.get_or_insert_with(|| vec![0.0; runs]);
                if let Some(x) = values.get_mut(r.run as usize) {
                    *x += value;
                }
            }
        }
    }
    let finish = |acc: Acc, by_delta: bool| {
        let mut rows: Vec<TimeChange> = acc
            .into_iter()
            .map(|(name, (package, class, b, a))| {
                // A method sampled in one version only is tested against
                // zeros: sampling may miss a method that ran, so it is new or
                // removed only when that is significant.
                let zeros = |k: usize| (k > 0).then(|| vec![0.0; k]);
                let test = match (
                    b.clone().or_else(|| zeros(n.0)),
                    a.clone().or_else(|| zeros(n.1)),
                ) {
                    (Some(b), Some(a)) => welch(&b, &a),
                    _ => None,
                };
                let significant = test.as_ref().is_some_and(|t| t.significant);
                let state = match (&b, &a, &test) {
                    (None, _, _) if significant || test.is_none() => State::New,
                    (Some(_), None, _) if significant || test.is_none() => State::Removed,
                    (None, _, _) | (_, None, _) => State::Unchanged,
                    (_, _, Some(t)) if t.significant && t.delta > 0.0 => State::Higher,
                    (_, _, Some(t)) if t.significant && t.delta < 0.0 => State::Lower,
                    _ => State::Unchanged,
                };
                TimeChange {
                    name,
                    package,
                    class,
                    state,
                    before: b.as_deref().and_then(mean),
                    after: a.as_deref().and_then(mean),
                    test,
                }
            })
            .collect();
        rows.sort_by(|x, y| {
            x.state
                .cmp(&y.state)
                .then_with(|| {
                    if by_delta {
                        y.delta().abs().total_cmp(&x.delta().abs())
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .then_with(|| x.name.cmp(&y.name))
        });
        rows
    };
    let whole = |side: TimeSide<'_>, n: usize| {
        let mut v = vec![0.0; n];
        let mut any = false;
        for r in side.runs.iter().filter(|r| r.method == RUN_TOTAL) {
            if let Some(x) = v.get_mut(r.run as usize) {
                *x += r.total_value;
                any = true;
            }
        }
        any.then_some(v)
    };
    let whole_run = match (whole(from, n.0), whole(to, n.1)) {
        (Some(a), Some(b)) => welch(&a, &b),
        _ => None,
    };
    TimeDiff {
        whole_run,
        from: from.version.clone(),
        to: to.version.clone(),
        unit: unit.to_string(),
        measure,
        runs: n,
        packages: finish(packages, false),
        classes: finish(classes, false),
        methods: finish(methods, true),
    }
}

/// A value with three significant decimals, `-` when absent.
fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

fn mean_sd(mean: Option<f64>, sd: Option<f64>) -> String {
    match (mean, sd) {
        (Some(m), Some(s)) => format!("{m:.3} ± {s:.3}"),
        (m, _) => num(m),
    }
}

fn row(c: &TimeChange, first: &str) -> Vec<String> {
    let t = c.test.as_ref();
    vec![
        state_cell(c.state),
        first.to_string(),
        mean_sd(c.before, t.map(|t| t.sd_before)),
        mean_sd(c.after, t.map(|t| t.sd_after)),
        format!("{:+.3}", c.delta()),
        t.and_then(|t| t.interval)
            .map_or_else(String::new, |(lo, hi)| format!("[{lo:+.3}, {hi:+.3}]")),
        t.and_then(|t| t.p_value)
            .map_or_else(String::new, |p| format!("{p:.3}")),
    ]
}

/// The time diff as text: the versions, the test, counts per state, tables
/// of packages, classes and methods (unchanged methods only with `all`, at
/// most `top` method rows).
pub fn diff_text(d: &TimeDiff, all: bool, top: Option<usize>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "history diff (time)");
    let _ = writeln!(out, "from: {} ({} runs)", version_line(&d.from), d.runs.0);
    let _ = writeln!(out, "to:   {} ({} runs)", version_line(&d.to), d.runs.1);
    let _ = writeln!(
        out,
        "metric: methods by {} time ({}), classes and packages by the self time of their methods; \
         mean ± sd over the runs; higher or lower only when Welch's t-test finds the change \
         significant at 95% (the interval of the delta excludes 0)",
        match d.measure {
            TimeMeasure::Total => "total",
            TimeMeasure::SelfTime => "self",
        },
        d.unit
    );
    if let Some(w) = &d.whole_run {
        let _ = writeln!(
            out,
            "whole run: {} -> {} {}, delta {:+.3}{}",
            mean_sd(Some(w.mean_before), Some(w.sd_before)),
            mean_sd(Some(w.mean_after), Some(w.sd_after)),
            d.unit,
            w.delta,
            match w.interval {
                Some((lo, hi)) => format!(
                    ", 95% CI [{lo:+.3}, {hi:+.3}]{}",
                    if w.significant {
                        ""
                    } else {
                        " (not significant)"
                    }
                ),
                None => String::new(),
            }
        );
    }
    for (name, level) in [
        ("methods", Level::Method),
        ("classes", Level::Class),
        ("packages", Level::Package),
    ] {
        let _ = writeln!(out, "{name}: {}", State::tally_line(&d.counts(level)));
    }
    let header = |first: &'static str| {
        [
            "State",
            first,
            "Before",
            "After",
            "Delta",
            "95% CI of delta",
            "p",
        ]
    };
    let right = [2, 3, 4, 5, 6];
    for (title, first, level) in [
        ("Packages", "Package", Level::Package),
        ("Classes", "Class", Level::Class),
    ] {
        let _ = writeln!(out, "\n{title} ({})", d.unit);
        let rows = d.level(level).iter().map(|c| row(c, &c.name)).collect();
        out.push_str(&table(&header(first), rows, &right));
    }
    let shown: Vec<&TimeChange> = d
        .methods
        .iter()
        .filter(|c| all || c.state != State::Unchanged)
        .take(top.unwrap_or(usize::MAX))
        .collect();
    let _ = writeln!(out, "\nMethods ({})", d.unit);
    let rows = shown.iter().map(|c| row(c, &c.name)).collect();
    out.push_str(&table(&header("Method"), rows, &right));
    let hidden = d.methods.len() - shown.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "({hidden} more methods; --all lists unchanged ones, --top N limits the rows)"
        );
    }
    out
}

/// The time diff as JSON (`lupa-history-time-diff/1`).
pub fn diff_json(d: &TimeDiff) -> serde_json::Result<String> {
    #[derive(Serialize)]
    struct Doc<'a> {
        format: &'static str,
        confidence: f64,
        #[serde(flatten)]
        diff: &'a TimeDiff,
    }
    let mut s = serde_json::to_string_pretty(&Doc {
        format: "lupa-history-time-diff/1",
        confidence: CONFIDENCE,
        diff: d,
    })?;
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::{mm, version};
    use super::*;

    #[test]
    fn a_real_shift_is_significant() {
        let before = [10.0, 10.4, 9.8, 10.1, 9.9];
        let after = [12.0, 12.3, 11.8, 12.1, 11.9];
        let w = welch(&before, &after).expect("a test");
        assert!(w.significant, "{w:?}");
        let (lo, hi) = w.interval.expect("an interval");
        assert!(
            lo > 1.0 && hi < 3.0 && lo < w.delta && w.delta < hi,
            "{w:?}"
        );
        assert!(w.p_value.expect("p") < 0.001);
        let w = welch(&after, &before).expect("a test");
        assert!(w.significant && w.delta < 0.0);
    }

    #[test]
    fn noise_is_not_significant() {
        let before = [10.0, 11.0, 9.0, 10.5, 9.5];
        let after = [10.2, 9.1, 11.2, 9.8, 10.4];
        let w = welch(&before, &after).expect("a test");
        assert!(!w.significant, "{w:?}");
        let (lo, hi) = w.interval.expect("an interval");
        assert!(lo < 0.0 && hi > 0.0);
        // One run a side: no test, nothing significant.
        let w = welch(&[1.0], &[5.0]).expect("a result");
        assert!(!w.significant && w.interval.is_none());
        // No spread: exact values, any change counts.
        let w = welch(&[3.0, 3.0], &[4.0, 4.0]).expect("a result");
        assert!(w.significant);
        assert!(
            !welch(&[3.0, 3.0], &[3.0, 3.0])
                .expect("a result")
                .significant
        );
        assert!(welch(&[], &[1.0]).is_none());
    }

    fn runs(method: &str, values: &[f64]) -> Vec<RunValue> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| RunValue {
                run: i as u32,
                method: method.to_string(),
                self_value: v,
                total_value: v * 2.0,
            })
            .collect()
    }

    #[test]
    fn diff_states_need_significance() {
        let ma = vec![
            mm("App", "A", "shift", 1, 1),
            mm("App", "A", "noise", 1, 1),
            mm("App", "B", "gone", 1, 1),
        ];
        let mb = vec![
            mm("App", "A", "shift", 1, 1),
            mm("App", "A", "noise", 1, 1),
            mm("App", "C", "fresh", 1, 1),
            mm("App", "C", "rare", 1, 1),
        ];
        let mut ra = runs("A>>shift", &[10.0, 10.4, 9.8, 10.1, 9.9]);
        ra.extend(runs("A>>noise", &[10.0, 11.0, 9.0, 10.5, 9.5]));
        ra.extend(runs("B>>gone", &[1.0, 1.0, 1.0, 1.0, 1.0]));
        let mut rb = runs("A>>shift", &[12.0, 12.3, 11.8, 12.1, 11.9]);
        rb.extend(runs("A>>noise", &[10.2, 9.1, 11.2, 9.8, 10.4]));
        // `rare` was sampled in only two of the five runs (zeros elsewhere),
        // and not at all before: not significantly new.
        rb.extend(runs("C>>rare", &[1.0, 1.0]));
        rb.extend(runs("C>>fresh", &[1.0, 1.1, 0.9, 1.0, 1.0]));
        ra.extend(runs(RUN_TOTAL, &[30.0, 31.0, 29.0, 30.0, 30.0]));
        rb.extend(runs(RUN_TOTAL, &[30.0, 29.0, 31.0, 30.0, 30.5]));
        let (va, vb) = (version(1, "a"), version(2, "b"));
        let d = diff(
            TimeSide {
                version: &va,
                methods: &ma,
                runs: &ra,
            },
            TimeSide {
                version: &vb,
                methods: &mb,
                runs: &rb,
            },
            TimeMeasure::Total,
            "ms",
        );
        assert_eq!(d.runs, (5, 5));
        let state = |n: &str| {
            d.methods
                .iter()
                .find(|c| c.name == n)
                .map(|c| c.state)
                .expect("row")
        };
        assert_eq!(state("A>>shift"), State::Higher);
        assert_eq!(state("A>>noise"), State::Unchanged);
        assert_eq!(state("B>>gone"), State::Removed);
        assert_eq!(state("C>>fresh"), State::New);
        assert_eq!(state("C>>rare"), State::Unchanged);
        let rare = d.methods.iter().find(|c| c.name == "C>>rare").expect("row");
        assert_eq!((rare.before, rare.after), (None, Some(0.8)));
        // Totals are compared for methods (twice the self values here).
        let shift = d
            .methods
            .iter()
            .find(|c| c.name == "A>>shift")
            .expect("row");
        assert!((shift.delta() - 3.96).abs() < 1e-9, "{shift:?}");
        assert!(
            d.classes
                .iter()
                .any(|c| c.name == "A" && c.state == State::Higher)
        );
        assert_eq!(d.packages.len(), 1);
        assert!(d.methods.iter().all(|c| c.name != RUN_TOTAL));
        assert!(!d.whole_run.expect("whole runs").significant);
        let text = diff_text(&d, false, None);
        assert!(text.contains("95% CI of delta"), "{text}");
        assert!(text.contains("| higher (red)"), "{text}");
        assert!(!text.contains("A>>noise"), "{text}");
        let json = diff_json(&d).expect("json");
        let v: serde_json::Value = serde_json::from_str(&json).expect("parses");
        assert_eq!(v["format"], "lupa-history-time-diff/1");
        assert!(v["methods"][0]["test"]["interval"].is_array());
    }
}
