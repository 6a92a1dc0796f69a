//! Report writers. Every report is deterministic: siblings and methods are
//! ordered by value (descending), then by name, then by index. They expect a
//! valid profile ([`Profile::validate`]); a builder-made one always is.
//!
//! | module | format | opens in |
//! | --- | --- | --- |
//! | [`ranking`] | table of methods by total (text, JSON) | a terminal, `jq` |
//! | [`tree`] | MessageTally-style indented tree of totals | a terminal |
//! | [`json`] | versioned JSON (`lupa-profile/1`, `docs/profile.schema.json`) | `jq`, any JSON reader |
//! | [`firefox`] | Firefox Profiler processed format, one thread per Smalltalk process | <https://profiler.firefox.com> |
//! | [`callgrind`] | callgrind profile format | KCachegrind/QCachegrind, `callgrind_annotate` |
//! | [`pprof`] | gzipped `profile.proto` (metric and activations per stack, process labels) | `go tool pprof`, pprof web UI, Pyroscope |
//! | [`folded`] | folded stacks (`a;b;c 123`) | `flamegraph.pl`, inferno, speedscope |
//! | [`flamegraph`] | standalone flame graph SVG (click to zoom, search) | any web browser |
//! | [`html`] | one self-contained page: sortable ranking, expandable tree, interactive flame graph | any web browser |
//! | [`speedscope`] | speedscope JSON ("evented" profile) | <https://www.speedscope.app>, `speedscope` CLI |
//!
//! Callers choose among them through one API ([`format`](mod@format)): a [`Format`], its
//! [`ReportOptions`] ([`options`]), and [`write()`] (or [`render`] for a `String`). A
//! [`Profile`] is also a [`Report`] ([`api`]), the shape every model of this
//! crate shares.

pub mod api;
pub mod callgrind;
pub mod firefox;
pub mod flamegraph;
pub mod folded;
pub mod format;
pub mod html;
pub mod json;
pub mod options;
pub mod pprof;
pub mod ranking;
pub mod speedscope;
pub mod tree;

pub use api::{DefaultFile, FormatInfo, Report, ReportFormat};
pub use format::{Format, UnknownFormat, render, write};
pub use options::{
    DEFAULT_TREE_DEPTH, NativeFunctionDoc, ReportOptions, SamplingInfo, TimeEstimate,
};
pub use ranking::{Ranking, RankingEntry};

use crate::profile::{NodeId, Profile};

/// A profile as the tree-shaped reports (tree, flame graph) walk it: inclusive
/// totals, the grand total, and the top-level contexts (a synthetic root's
/// children and every other root), in report order.
pub(crate) struct OrderedTree<'a> {
    /// The profile.
    pub(crate) profile: &'a Profile,
    /// Inclusive totals, indexed like `profile.nodes`.
    pub(crate) totals: Vec<u64>,
    /// Sum of the roots' totals.
    pub(crate) grand: u64,
    /// Top-level contexts, sorted like siblings.
    pub(crate) top: Vec<NodeId>,
}

impl<'a> OrderedTree<'a> {
    /// The ordered view of `profile`.
    pub(crate) fn of(profile: &'a Profile) -> OrderedTree<'a> {
        let totals = profile.node_totals();
        let grand = profile
            .roots()
            .map(|r| totals[r.index()])
            .fold(0u64, u64::saturating_add);
        let mut top: Vec<NodeId> = Vec::new();
        for r in profile.roots() {
            if profile.is_synthetic(r) {
                top.extend(profile.nodes[r].children.iter().copied());
            } else {
                top.push(r);
            }
        }
        sort_nodes(profile, &totals, &mut top);
        OrderedTree {
            profile,
            totals,
            grand,
            top,
        }
    }

    /// The children of `node`, in report order.
    pub(crate) fn children(&self, node: NodeId) -> Vec<NodeId> {
        sorted_children(self.profile, &self.totals, node)
    }
}

/// The children of `node`, by total descending, then method name, then index.
pub(crate) fn sorted_children(profile: &Profile, totals: &[u64], node: NodeId) -> Vec<NodeId> {
    let mut c = profile.nodes[node].children.clone();
    sort_nodes(profile, totals, &mut c);
    c
}

/// Sort nodes by total descending, then method name, then index.
pub(crate) fn sort_nodes(profile: &Profile, totals: &[u64], nodes: &mut [NodeId]) {
    nodes.sort_by(|&a, &b| {
        totals[b.index()]
            .cmp(&totals[a.index()])
            .then_with(|| profile.method_of(a).name.cmp(&profile.method_of(b).name))
            .then(a.cmp(&b))
    });
}

/// `v` as a percentage of `total` (0 when the total is 0).
pub(crate) fn percent(v: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        v as f64 * 100.0 / total as f64
    }
}

/// An integer with `,` between groups of three digits: `1,234,567`.
/// How the text reports show a value of `unit`: nanoseconds as milliseconds
/// with one decimal (what MessageTally users read), anything else as an
/// integer with grouped digits. Answers the value and the unit shown.
pub(crate) fn shown(unit: &str, v: u64) -> (String, &str) {
    if unit == "ns" {
        let tenths = (v + 50_000) / 100_000;
        (
            format!("{}.{}", group_digits(tenths / 10), tenths % 10),
            "ms",
        )
    } else {
        (group_digits(v), unit)
    }
}

/// `v` with its digits grouped by thousands: `1,234,567`.
pub fn group_digits(v: u64) -> String {
    let s = v.to_string();
    let groups: Vec<&str> = s
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|g| std::str::from_utf8(g).unwrap_or(""))
        .collect();
    groups.join(",")
}

#[cfg(test)]
mod shown_tests {
    use super::shown;

    #[test]
    fn nanoseconds_are_shown_as_milliseconds() {
        assert_eq!(shown("ns", 1_960_000), ("2.0".to_string(), "ms"));
        assert_eq!(shown("ns", 1_234_567_890), ("1,234.6".to_string(), "ms"));
        assert_eq!(shown("ns", 0), ("0.0".to_string(), "ms"));
        assert_eq!(shown("sends", 12_345), ("12,345".to_string(), "sends"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(1_234_567), "1,234,567");
        assert_eq!(percent(1, 0), 0.0);
        assert_eq!(percent(1, 4), 25.0);
    }
}
