//! A MessageTally-style tree: each context with its total as a percentage of the
//! grand total, indented under its caller.
//!
//! ```text
//! Sends: 72 total; cutoff 5.00% (3.6 sends)
//! 100.0% {72} Main>>main (1 call)
//!   69.4% {50} Main>>a (2 calls)
//!     |41.7% {30} Lib>>b (2 calls)
//! ```

use std::fmt::Write as _;

use super::{OrderedTree, group_digits, percent, shown};
use crate::profile::{NodeId, Profile};

/// Options of [`to_string()`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeOptions {
    /// Leave out subtrees whose total is below this fraction of the grand total
    /// (`0.005` = 0.5%). Left-out siblings are summarised in one line.
    pub cutoff: f64,
    /// Do not print contexts deeper than this (the root's children are at depth
    /// 0); `None` for no limit.
    pub max_depth: Option<usize>,
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions {
            cutoff: 0.005,
            max_depth: None,
        }
    }
}

/// The indentation MessageTally uses: `""`, `"  "`, `"    |"`, `"    |  |"`...
fn prefix(depth: usize) -> String {
    match depth {
        0 => String::new(),
        1 => "  ".to_string(),
        d => format!("    |{}", "  |".repeat(d - 2)),
    }
}

fn calls(n: u64) -> String {
    if n == 1 {
        "1 call".to_string()
    } else {
        format!("{} calls", group_digits(n))
    }
}

/// Render the tree. A synthetic root is not printed: its children are the
/// top-level lines, and its own value is mentioned in the header.
pub fn to_string(profile: &Profile, options: &TreeOptions) -> String {
    let view = OrderedTree::of(profile);
    let (totals, grand) = (&view.totals, view.grand);
    let threshold = options.cutoff.max(0.0) * grand as f64;
    let metric_unit = profile.metric.unit();
    let (grand_shown, unit) = shown(metric_unit, grand);
    let threshold_shown = if metric_unit == "ns" {
        format!("{:.2}", threshold / 1e6)
    } else {
        trim_float(threshold)
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "{}: {grand_shown}{} total; cutoff {:.2}% ({threshold_shown} {unit})",
        profile.metric.name(),
        if metric_unit == "ns" { " ms" } else { "" },
        options.cutoff * 100.0,
    );
    let outside: u64 = profile
        .roots()
        .filter(|&r| profile.is_synthetic(r))
        .map(|r| profile.nodes[r].self_value)
        .sum();
    if outside > 0 {
        let _ = write!(
            out,
            "; {} {unit} outside any method",
            shown(metric_unit, outside).0
        );
    }
    out.push('\n');

    // Top level: the children of synthetic roots and the other roots.

    // Work list: a node to print at a depth, or a summary line.
    enum Item {
        Node(NodeId, usize),
        Omitted {
            depth: usize,
            count: usize,
            value: u64,
        },
        TooDeep(usize),
    }
    let push_level = |stack: &mut Vec<Item>, nodes: Vec<NodeId>, depth: usize| {
        let (kept, dropped): (Vec<NodeId>, Vec<NodeId>) = nodes
            .into_iter()
            .partition(|&c| totals[c.index()] as f64 >= threshold);
        if !dropped.is_empty() {
            stack.push(Item::Omitted {
                depth,
                count: dropped.len(),
                value: dropped.iter().map(|&c| totals[c.index()]).sum(),
            });
        }
        if options.max_depth.is_some_and(|m| depth > m) {
            if !kept.is_empty() {
                stack.push(Item::TooDeep(depth));
            }
            return;
        }
        stack.extend(kept.into_iter().rev().map(|c| Item::Node(c, depth)));
    };
    // A sampling profiler sees no calls: then the counts are left out.
    let show_calls = profile.nodes.iter().any(|n| n.activations > 0);
    let mut stack = Vec::new();
    push_level(&mut stack, view.top.clone(), 0);
    while let Some(item) = stack.pop() {
        match item {
            Item::Node(n, depth) => {
                let node = &profile.nodes[n];
                let _ = writeln!(
                    out,
                    "{}{:.1}% {{{}}} {}{}",
                    prefix(depth),
                    percent(totals[n.index()], grand),
                    shown(metric_unit, totals[n.index()]).0,
                    profile.method_of(n).name,
                    if show_calls {
                        format!(" ({})", calls(node.activations))
                    } else {
                        String::new()
                    },
                );
                let children = view.children(n);
                push_level(&mut stack, children, depth + 1);
            }
            Item::Omitted {
                depth,
                count,
                value,
            } => {
                let _ = writeln!(
                    out,
                    "{}... {} below cutoff {{{}}}",
                    prefix(depth),
                    if count == 1 {
                        "1 context".to_string()
                    } else {
                        format!("{count} contexts")
                    },
                    shown(metric_unit, value).0,
                );
            }
            Item::TooDeep(depth) => {
                let _ = writeln!(out, "{}... deeper contexts not shown", prefix(depth));
            }
        }
    }
    out
}

/// A float without useless decimals: `3.6`, `0`, `1234.57`.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;

    #[test]
    fn full_tree() {
        let p = sample_profile();
        let t = to_string(
            &p,
            &TreeOptions {
                cutoff: 0.0,
                max_depth: None,
            },
        );
        insta::assert_snapshot!(t);
    }

    #[test]
    fn cutoff_and_depth() {
        let p = sample_profile();
        // 10% of 72 = 7.2: c (7) and b under main (5) go.
        let t = to_string(
            &p,
            &TreeOptions {
                cutoff: 0.1,
                max_depth: None,
            },
        );
        insta::assert_snapshot!("cutoff_10pct", t);
        let t = to_string(
            &p,
            &TreeOptions {
                cutoff: 0.0,
                max_depth: Some(1),
            },
        );
        insta::assert_snapshot!("max_depth_1", t);
    }

    #[test]
    fn prefixes() {
        assert_eq!(prefix(0), "");
        assert_eq!(prefix(1), "  ");
        assert_eq!(prefix(2), "    |");
        assert_eq!(prefix(3), "    |  |");
        assert_eq!(trim_float(3.6), "3.6");
        assert_eq!(trim_float(0.0), "0");
    }
}
