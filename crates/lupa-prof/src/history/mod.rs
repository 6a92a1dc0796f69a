//! Hip, the profile history of the Spy paper (section 4.3): profiles of
//! successive versions of a program, compared method by method, class by class
//! and package by package.
//!
//! This module is the pure model; the store that keeps versions (SQLite) and
//! the recording of a program are the crate `lupa-history`.
//!
//! * [`MethodMetrics`]: what one version records per method (sends executed in
//!   the method itself, sends of everything it caused, activations), built from
//!   a Compteur [`Profile`] by [`metrics_of`].
//! * [`diff`]: two versions compared; every method, class and package gets one
//!   of the paper's five [`State`]s (lower is better for every metric here) with
//!   its delta, absolute and relative.
//! * [`series`]: one method across all versions, each step in its state.
//! * [`check`]: the methods of a diff whose value grew past a bound.
//! * [`text`] and [`picture`]: the diff as a table, JSON, the semaphore SVG
//!   picture and an HTML page; [`HistoryDiff`] (sends, time or call stacks),
//!   [`VersionLog`] and [`Series`] are the reports (`lupa_prof::Report`).
//!
//! Contract: [`diff`] is deterministic (rows are sorted) and never fails;
//! a method is identified across versions by its name (`Class>>selector`, or
//! `[]#k in Class>>selector` for a block), not by its package.

pub mod flame;
pub mod picture;
mod report;
pub mod text;
pub mod timed;

pub use report::{DiffFormat, HistoryDiff, ListFormat, SeriesOptions, StackDiff, VersionLog};

use crate::Profile;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What one version records about one method (or block).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodMetrics {
    /// Its package (the class's directory, e.g. `Richards`).
    pub package: String,
    /// Its class (`Foo`, `Foo class`).
    pub class: String,
    /// Its name, `Class>>selector` (blocks: `[]#k in Class>>selector`): the
    /// identity of the method across versions.
    pub method: String,
    /// Sends executed in the method itself.
    pub sends_self: u64,
    /// Sends executed in the method and everything it called (recursion
    /// counted once).
    pub sends_total: u64,
    /// Activations of the method.
    pub activations: u64,
}

/// The per-method metrics of a Compteur profile: one entry per named method
/// (the synthetic root and `<process N>` labels left out), methods of one name
/// merged (summed), sorted by name.
pub fn metrics_of(profile: &Profile) -> Vec<MethodMetrics> {
    let stats = profile.method_stats();
    let mut by_name: FxHashMap<&str, MethodMetrics> = FxHashMap::default();
    for (info, s) in profile.methods.iter().zip(&stats) {
        if info.class.is_empty() || info.is_synthetic_root() || s.contexts == 0 {
            continue;
        }
        let e = by_name
            .entry(info.name.as_str())
            .or_insert_with(|| MethodMetrics {
                package: info.category.clone(),
                class: info.class.clone(),
                method: info.name.clone(),
                sends_self: 0,
                sends_total: 0,
                activations: 0,
            });
        e.sends_self = e.sends_self.saturating_add(s.self_value);
        e.sends_total = e.sends_total.saturating_add(s.total);
        e.activations = e.activations.saturating_add(s.activations);
    }
    let mut out: Vec<MethodMetrics> = by_name.into_values().collect();
    out.sort_by(|a, b| a.method.cmp(&b.method));
    out
}

/// One recorded version, as the store describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    /// The store's id (1, 2, ... in recording order).
    pub id: i64,
    /// Its label (unique in a store).
    pub label: String,
    /// The git revision it was recorded from, if any.
    pub git_rev: Option<String>,
    /// When it was recorded (RFC 3339, UTC).
    pub date: String,
    /// The profiled command.
    pub command: String,
    /// The profiler's metric (`sends`).
    pub metric: String,
    /// The run's grand total (every send, of every method); `None` for
    /// versions recorded before the store kept it.
    pub total_sends: Option<u64>,
}

/// The metric of a *broken* version: a revision of a git range whose
/// program failed to load or run (`lupa history record --git` keeps going
/// past it). It has no methods; its command says why it broke.
pub const METRIC_BROKEN: &str = "broken";

impl VersionInfo {
    /// Is it a broken version ([`METRIC_BROKEN`])?
    pub fn is_broken(&self) -> bool {
        self.metric == METRIC_BROKEN
    }

    /// Is a higher value better in it: a coverage version (metric
    /// `coverage`, values: executions), where lower means less covered?
    pub fn higher_is_better(&self) -> bool {
        self.metric == "coverage"
    }
}

/// Which number of [`MethodMetrics`] a diff compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Sends of the method and everything it called (the default).
    #[default]
    Total,
    /// Sends executed in the method itself.
    #[serde(rename = "self")]
    SelfSends,
    /// Activations.
    Activations,
}

impl Measure {
    /// Every measure, in `--metric` order.
    pub const ALL: [Measure; 3] = [Measure::Total, Measure::SelfSends, Measure::Activations];

    /// Its name on the command line (`total`, `self`, `activations`).
    pub fn name(self) -> &'static str {
        match self {
            Measure::Total => "total",
            Measure::SelfSends => "self",
            Measure::Activations => "activations",
        }
    }

    /// What it counts, for report headers.
    pub fn describe(self) -> &'static str {
        match self {
            Measure::Total => "total sends (the method and everything it called)",
            Measure::SelfSends => "self sends (executed in the method itself)",
            Measure::Activations => "activations",
        }
    }

    /// Its value for one method.
    pub fn of(self, m: &MethodMetrics) -> u64 {
        match self {
            Measure::Total => m.sends_total,
            Measure::SelfSends => m.sends_self,
            Measure::Activations => m.activations,
        }
    }

    /// A method's share of its class's and package's value: self sends for
    /// the send measures (a class's cost is the sends its methods executed;
    /// summing inclusive totals would count nested calls again), activations
    /// for activations.
    pub fn aggregate_of(self, m: &MethodMetrics) -> u64 {
        match self {
            Measure::Total | Measure::SelfSends => m.sends_self,
            Measure::Activations => m.activations,
        }
    }
}

impl std::str::FromStr for Measure {
    type Err = String;

    fn from_str(s: &str) -> Result<Measure, String> {
        Measure::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown metric `{s}` (expected total, self or activations)"))
    }
}

/// The paper's five states of an artifact between two versions (lower is
/// better).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// The value grew (red).
    Higher,
    /// New in the later version (yellow).
    New,
    /// The value fell (green).
    Lower,
    /// Gone in the later version (black).
    Removed,
    /// The same value (white), within the diff's tolerance.
    Unchanged,
}

impl State {
    /// Every state, in report order (what needs attention first).
    pub const ALL: [State; 5] = [
        State::Higher,
        State::New,
        State::Lower,
        State::Removed,
        State::Unchanged,
    ];

    /// How many of `states` are in each state, in [`State::ALL`] order.
    pub fn tally(states: impl IntoIterator<Item = State>) -> [(State, usize); 5] {
        let mut counts = State::ALL.map(|s| (s, 0));
        for s in states {
            if let Some(c) = counts.iter_mut().find(|(x, _)| *x == s) {
                c.1 += 1;
            }
        }
        counts
    }

    /// `2 higher (red), 1 new (yellow), ...`: a [`tally`](Self::tally) in words.
    pub fn tally_line(counts: &[(State, usize)]) -> String {
        State::tally_line_painted(counts, false)
    }

    /// [`State::tally_line`] with the colours of [`State::painted`].
    pub fn tally_line_painted(counts: &[(State, usize)], higher_is_better: bool) -> String {
        counts
            .iter()
            .map(|(s, n)| {
                format!(
                    "{n} {} ({})",
                    s.name(),
                    s.painted(higher_is_better).colour()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The state whose colour this one is drawn in: itself, except where a
    /// higher value is better (coverage), where higher takes lower's colour
    /// (green, good) and lower higher's (red, bad).
    pub fn painted(self, higher_is_better: bool) -> State {
        match (self, higher_is_better) {
            (State::Higher, true) => State::Lower,
            (State::Lower, true) => State::Higher,
            (s, _) => s,
        }
    }

    /// Its name (`higher`, `new`, ...).
    pub fn name(self) -> &'static str {
        match self {
            State::Higher => "higher",
            State::New => "new",
            State::Lower => "lower",
            State::Removed => "removed",
            State::Unchanged => "unchanged",
        }
    }

    /// The paper's colour name.
    pub fn colour(self) -> &'static str {
        match self {
            State::Higher => "red",
            State::New => "yellow",
            State::Lower => "green",
            State::Removed => "black",
            State::Unchanged => "white",
        }
    }

    /// The colour as an SVG fill.
    pub fn fill(self) -> &'static str {
        match self {
            State::Higher => "#d62728",
            State::New => "#ffd700",
            State::Lower => "#2ca02c",
            State::Removed => "#111111",
            State::Unchanged => "#ffffff",
        }
    }

    /// A text colour readable on [`State::fill`].
    pub fn ink(self) -> &'static str {
        match self {
            State::Higher | State::Lower | State::Removed => "#ffffff",
            State::New | State::Unchanged => "#000000",
        }
    }

    /// The state of a value that went from `before` to `after` (`None`:
    /// absent in that version); changes within `tolerance` (a fraction of
    /// `before`) are unchanged.
    pub fn of(before: Option<u64>, after: Option<u64>, tolerance: f64) -> State {
        match (before, after) {
            (None, _) => State::New,
            (Some(_), None) => State::Removed,
            (Some(b), Some(a)) => {
                let limit = (b as f64) * tolerance.max(0.0);
                let change = (a as f64) - (b as f64);
                if a == b || change.abs() <= limit {
                    State::Unchanged
                } else if a > b {
                    State::Higher
                } else {
                    State::Lower
                }
            }
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The level of a [`Change`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A method or block.
    Method,
    /// A class (its methods' values summed).
    Class,
    /// A package (its classes' values summed).
    Package,
}

/// One artifact compared between two versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Its name: `Class>>selector`, the class name, or the package.
    pub name: String,
    /// Its package (for a package, itself).
    pub package: String,
    /// Its class (empty for a package).
    pub class: String,
    /// Its state.
    pub state: State,
    /// The value in the earlier version (`None`: absent).
    pub before: Option<u64>,
    /// The value in the later version (`None`: absent).
    pub after: Option<u64>,
}

impl Change {
    /// `after - before`, absent values counting 0.
    pub fn delta(&self) -> i128 {
        i128::from(self.after.unwrap_or(0)) - i128::from(self.before.unwrap_or(0))
    }

    /// The delta as a percentage of `before` (`None` when there is no
    /// non-zero `before`).
    pub fn percent(&self) -> Option<f64> {
        let b = self.before.filter(|&b| b > 0)?;
        Some(self.delta() as f64 * 100.0 / b as f64)
    }
}

/// Options of [`diff`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiffOptions {
    /// The compared number.
    pub measure: Measure,
    /// Relative changes up to this fraction are [`State::Unchanged`] (0: only
    /// equal values; counts are exact).
    pub tolerance: f64,
}

/// Two versions compared ([`diff`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// The earlier version.
    pub from: VersionInfo,
    /// The later version.
    pub to: VersionInfo,
    /// The compared number.
    pub measure: Measure,
    /// The tolerance used.
    pub tolerance: f64,
    /// Packages, by state then name.
    pub packages: Vec<Change>,
    /// Classes, by state then name.
    pub classes: Vec<Change>,
    /// Methods, by state, then largest absolute delta, then name.
    pub methods: Vec<Change>,
}

impl Diff {
    /// Is a higher value better in the compared versions (coverage)? Then
    /// the colours of higher and lower swap ([`State::painted`]).
    pub fn higher_is_better(&self) -> bool {
        self.to.higher_is_better()
    }

    /// What the methods are compared by, for report headers: the measure,
    /// or the executions of coverage versions.
    pub fn measure_description(&self) -> &'static str {
        if self.higher_is_better() {
            "executions (coverage: higher is better)"
        } else {
            self.measure.describe()
        }
    }

    /// How many changes of `level` are in each state, in [`State::ALL`] order.
    pub fn counts(&self, level: Level) -> [(State, usize); 5] {
        State::tally(self.level(level).iter().map(|c| c.state))
    }

    /// The changes of one level.
    pub fn level(&self, level: Level) -> &[Change] {
        match level {
            Level::Method => &self.methods,
            Level::Class => &self.classes,
            Level::Package => &self.packages,
        }
    }
}

/// Compare the methods of version `from` (`before`) with those of `to`
/// (`after`).
pub fn diff(
    from: VersionInfo,
    before: &[MethodMetrics],
    to: VersionInfo,
    after: &[MethodMetrics],
    options: DiffOptions,
) -> Diff {
    let m = options.measure;
    let tol = options.tolerance;
    // name -> (package, class, before, after)
    type Acc = FxHashMap<String, (String, String, Option<u64>, Option<u64>)>;
    let mut methods: Acc = FxHashMap::default();
    let mut classes: Acc = FxHashMap::default();
    let mut packages: Acc = FxHashMap::default();
    let add = |acc: &mut Acc, key: &str, pkg: &str, class: &str, v: u64, later: bool| {
        let e = acc
            .entry(key.to_string())
            .or_insert_with(|| (pkg.to_string(), class.to_string(), None, None));
        if later {
            // The later version's package and class win (a class may move).
            e.0 = pkg.to_string();
            e.1 = class.to_string();
        }
        let slot = if later { &mut e.3 } else { &mut e.2 };
        *slot = Some(slot.unwrap_or(0).saturating_add(v));
    };
    for (list, later) in [(before, false), (after, true)] {
        for x in list {
            add(
                &mut methods,
                &x.method,
                &x.package,
                &x.class,
                m.of(x),
                later,
            );
            let agg = m.aggregate_of(x);
            add(&mut classes, &x.class, &x.package, &x.class, agg, later);
            add(&mut packages, &x.package, &x.package, "", agg, later);
        }
    }
    let finish = |acc: Acc, by_delta: bool| {
        let mut rows: Vec<Change> = acc
            .into_iter()
            .map(|(name, (package, class, b, a))| Change {
                state: State::of(b, a, tol),
                name,
                package,
                class,
                before: b,
                after: a,
            })
            .collect();
        rows.sort_by(|x, y| {
            x.state
                .cmp(&y.state)
                .then_with(|| {
                    if by_delta {
                        y.delta().abs().cmp(&x.delta().abs())
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .then_with(|| x.name.cmp(&y.name))
        });
        rows
    };
    Diff {
        from,
        to,
        measure: m,
        tolerance: tol,
        packages: finish(packages, false),
        classes: finish(classes, false),
        methods: finish(methods, true),
    }
}

/// One method in one version of a [`Series`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// The version.
    pub version: VersionInfo,
    /// The method's metrics there (`None`: it did not run).
    pub metrics: Option<MethodMetrics>,
    /// Its state against the previous version (`None` for the first
    /// version, and where the method is absent from both).
    pub state: Option<State>,
}

/// One method across versions ([`series`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// The method's name.
    pub method: String,
    /// The measure whose states are given.
    pub measure: Measure,
    /// One point per version, in recording order.
    pub points: Vec<SeriesPoint>,
}

/// The series of `method` over `versions` (in recording order), from its
/// metrics in each (`None`: absent).
pub fn series(
    method: &str,
    points: Vec<(VersionInfo, Option<MethodMetrics>)>,
    measure: Measure,
) -> Series {
    let mut prev: Option<Option<u64>> = None;
    let points = points
        .into_iter()
        .map(|(version, metrics)| {
            if version.is_broken() {
                // Nothing was measured there: no state, and the next
                // version is compared with the one before it.
                return SeriesPoint {
                    version,
                    metrics: None,
                    state: None,
                };
            }
            let now = metrics.as_ref().map(|m| measure.of(m));
            let state = match (prev, now) {
                (None, _) | (Some(None), None) => None,
                (Some(before), _) => Some(State::of(before, now, 0.0)),
            };
            prev = Some(now);
            SeriesPoint {
                version,
                metrics,
                state,
            }
        })
        .collect();
    Series {
        method: method.to_string(),
        measure,
        points,
    }
}

/// A method whose value grew past the bound of [`check`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// The method's change.
    pub change: Change,
}

/// The methods of `diff` whose value grew by more than `max_increase`
/// percent of their earlier value (a method that had 0 and now has more
/// always exceeds it), largest relative growth first. New and removed
/// methods are not violations (they have no earlier or later value).
pub fn check(diff: &Diff, max_increase: f64) -> Vec<Violation> {
    let mut out: Vec<Violation> = diff
        .methods
        .iter()
        .filter(|c| c.state == State::Higher)
        .filter(|c| c.percent().is_none_or(|p| p > max_increase))
        .map(|c| Violation { change: c.clone() })
        .collect();
    out.sort_by(|a, b| {
        let pa = a.change.percent().unwrap_or(f64::INFINITY);
        let pb = b.change.percent().unwrap_or(f64::INFINITY);
        pb.total_cmp(&pa)
            .then_with(|| a.change.name.cmp(&b.change.name))
    });
    out
}

#[cfg(test)]
pub(crate) mod tests_support {
    //! Hand-built versions and diffs for the tests.
    use super::*;

    pub(crate) fn version(id: i64, label: &str) -> VersionInfo {
        VersionInfo {
            id,
            label: label.to_string(),
            git_rev: None,
            date: "2026-01-01T00:00:00Z".to_string(),
            command: "lupa count Foo".to_string(),
            metric: "sends".to_string(),
            total_sends: None,
        }
    }

    pub(crate) fn mm(pkg: &str, class: &str, sel: &str, self_: u64, total: u64) -> MethodMetrics {
        MethodMetrics {
            package: pkg.to_string(),
            class: class.to_string(),
            method: format!("{class}>>{sel}"),
            sends_self: self_,
            sends_total: total,
            activations: 1,
        }
    }

    pub(crate) fn sample_diff() -> Diff {
        let before = vec![
            mm("App", "A", "same", 5, 10),
            mm("App", "A", "faster", 50, 100),
            mm("App", "A", "slower", 10, 20),
            mm("App", "B", "gone", 7, 7),
            mm("Lib", "C", "kept", 1, 1),
        ];
        let after = vec![
            mm("App", "A", "same", 5, 10),
            mm("App", "A", "faster", 20, 40),
            mm("App", "A", "slower", 15, 30),
            mm("App", "D", "fresh", 3, 3),
            mm("Lib", "C", "kept", 1, 1),
        ];
        diff(
            version(1, "v1"),
            &before,
            version(2, "v2"),
            &after,
            DiffOptions::default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::{mm, sample_diff, version};
    use super::*;
    use crate::{MethodInfo, Metric, ProfileBuilder};

    fn state_of(rows: &[Change], name: &str) -> State {
        rows.iter()
            .find(|c| c.name == name)
            .map(|c| c.state)
            .expect("the row exists")
    }

    #[test]
    fn five_states_of_methods() {
        let d = sample_diff();
        assert_eq!(state_of(&d.methods, "A>>same"), State::Unchanged);
        assert_eq!(state_of(&d.methods, "A>>faster"), State::Lower);
        assert_eq!(state_of(&d.methods, "A>>slower"), State::Higher);
        assert_eq!(state_of(&d.methods, "B>>gone"), State::Removed);
        assert_eq!(state_of(&d.methods, "D>>fresh"), State::New);
        let slower = d
            .methods
            .iter()
            .find(|c| c.name == "A>>slower")
            .expect("row");
        assert_eq!(slower.delta(), 10);
        assert_eq!(slower.percent(), Some(50.0));
        let fresh = d
            .methods
            .iter()
            .find(|c| c.name == "D>>fresh")
            .expect("row");
        assert_eq!(
            (fresh.before, fresh.after, fresh.percent()),
            (None, Some(3), None)
        );
        // Sorted by state: higher, new, lower, removed, unchanged.
        let states: Vec<State> = d.methods.iter().map(|c| c.state).collect();
        let mut sorted = states.clone();
        sorted.sort();
        assert_eq!(states, sorted);
    }

    #[test]
    fn classes_and_packages_sum_self_sends() {
        let d = sample_diff();
        // A: 5+50+10 = 65 -> 5+20+15 = 40.
        let a = d.classes.iter().find(|c| c.name == "A").expect("A");
        assert_eq!(
            (a.before, a.after, a.state),
            (Some(65), Some(40), State::Lower)
        );
        assert_eq!(state_of(&d.classes, "B"), State::Removed);
        assert_eq!(state_of(&d.classes, "D"), State::New);
        assert_eq!(state_of(&d.classes, "C"), State::Unchanged);
        // App: 65+7 = 72 -> 40+3 = 43.
        assert_eq!(state_of(&d.packages, "App"), State::Lower);
        assert_eq!(state_of(&d.packages, "Lib"), State::Unchanged);
        assert_eq!(
            d.counts(Level::Method),
            [
                (State::Higher, 1),
                (State::New, 1),
                (State::Lower, 1),
                (State::Removed, 1),
                (State::Unchanged, 2)
            ]
        );
    }

    #[test]
    fn tolerance_and_other_measures() {
        assert_eq!(State::of(Some(100), Some(104), 0.05), State::Unchanged);
        assert_eq!(State::of(Some(100), Some(106), 0.05), State::Higher);
        assert_eq!(State::of(Some(0), Some(0), 0.0), State::Unchanged);
        assert_eq!(State::of(Some(0), Some(1), 0.5), State::Higher);
        let before = vec![mm("P", "A", "x", 4, 9)];
        let mut later = before.clone();
        later[0].activations = 3;
        let d = diff(
            version(1, "a"),
            &before,
            version(2, "b"),
            &later,
            DiffOptions {
                measure: Measure::Activations,
                tolerance: 0.0,
            },
        );
        assert_eq!(d.methods[0].state, State::Higher);
        assert_eq!("self".parse::<Measure>(), Ok(Measure::SelfSends));
        assert!("time".parse::<Measure>().is_err());
    }

    #[test]
    fn check_names_methods_past_the_bound() {
        let d = sample_diff();
        let v = check(&d, 5.0);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].change.name, "A>>slower");
        assert!(check(&d, 50.0).is_empty());
        // From zero: always a violation.
        let z = diff(
            version(1, "a"),
            &[mm("P", "A", "x", 0, 0)],
            version(2, "b"),
            &[mm("P", "A", "x", 0, 2)],
            DiffOptions::default(),
        );
        assert_eq!(check(&z, 1000.0).len(), 1);
    }

    #[test]
    fn series_states_follow_the_versions() {
        let pts = vec![
            (version(1, "a"), None),
            (version(2, "b"), Some(mm("P", "A", "x", 1, 10))),
            (version(3, "c"), Some(mm("P", "A", "x", 1, 12))),
            (version(4, "d"), Some(mm("P", "A", "x", 1, 12))),
            (version(5, "e"), None),
        ];
        let s = series("A>>x", pts, Measure::Total);
        let states: Vec<Option<State>> = s.points.iter().map(|p| p.state).collect();
        assert_eq!(
            states,
            vec![
                None,
                Some(State::New),
                Some(State::Higher),
                Some(State::Unchanged),
                Some(State::Removed)
            ]
        );
    }

    #[test]
    fn metrics_from_a_profile() {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let main = b.add_method(MethodInfo::new("Main", "run").with_category("App"));
        let fib = b.add_method(MethodInfo::new("Main", "fib:").with_category("App"));
        b.enter(main);
        b.add_self(3);
        b.enter(fib);
        b.add_self(10);
        b.enter(fib);
        b.add_self(5);
        b.exit();
        b.exit();
        b.exit();
        let p = b.finish();
        let m = metrics_of(&p);
        assert_eq!(m.len(), 2);
        let fib = m.iter().find(|x| x.method == "Main>>fib:").expect("fib");
        assert_eq!(
            (fib.sends_self, fib.sends_total, fib.activations),
            (15, 15, 2)
        );
        assert_eq!(fib.package, "App");
        let run = m.iter().find(|x| x.method == "Main>>run").expect("run");
        assert_eq!((run.sends_self, run.sends_total), (3, 18));
    }
}
