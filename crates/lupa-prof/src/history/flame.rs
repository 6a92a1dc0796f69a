//! Call stacks across versions: each version keeps its folded stacks (one
//! line per calling context, `frame;frame;frame value`, the value the sends
//! executed in the innermost frame: exact with the send-count metric), and two
//! versions give
//!
//! * [`folded_diff`]: Brendan Gregg's difffolded format, `stack count1
//!   count2`, for `flamegraph.pl`, inferno and other differential tools;
//! * [`diff_svg`]: a differential flame graph, the flame graph of the later
//!   version drawn by the report's writer
//!   ([`crate::report::flamegraph::to_string_styled`]) with each frame
//!   coloured by the change of its total from the earlier version: red for
//!   more, blue for less, the stronger the larger the relative change (white:
//!   unchanged); its hover title gives both values.
//!
//! Contract: pure; lines sorted by stack; frames absent from the later version
//! (only in the earlier) do not appear in the picture, only in the folded
//! diff.

use super::VersionInfo;
use super::text::version_line;
use crate::report::flamegraph::{FlameGraphOptions, FrameStyle, to_string_styled};
use crate::{MethodInfo, Metric, NodeId, Profile, ProfileBuilder};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The stacks of a folded text (`stack value` per line; lines without a
/// numeric last field are skipped), stacks of one name summed, by stack.
pub fn parse_folded(text: &str) -> Vec<(String, u64)> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for line in text.lines() {
        if let Some((stack, v)) = line.trim_end().rsplit_once(' ')
            && let Ok(v) = v.parse::<u64>()
            && !stack.is_empty()
        {
            let e = out.entry(stack.to_string()).or_insert(0);
            *e = e.saturating_add(v);
        }
    }
    out.into_iter().collect()
}

/// Brendan Gregg's difffolded lines: every stack of either version, `stack
/// count1 count2` (0 where a version lacks it), sorted by stack.
pub fn folded_diff(before: &[(String, u64)], after: &[(String, u64)]) -> String {
    let mut both: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (s, v) in before {
        both.entry(s.as_str()).or_default().0 += v;
    }
    for (s, v) in after {
        both.entry(s.as_str()).or_default().1 += v;
    }
    let mut out = String::new();
    for (s, (a, b)) in both {
        let _ = writeln!(out, "{s} {a} {b}");
    }
    out
}

/// The inclusive value of every stack prefix (`a`, `a;b`, ...).
fn prefix_totals(stacks: &[(String, u64)]) -> FxHashMap<String, u64> {
    let mut out: FxHashMap<String, u64> = FxHashMap::default();
    for (s, v) in stacks {
        let mut end = 0;
        loop {
            let next = s[end..].find(';').map(|i| end + i);
            let prefix = &s[..next.unwrap_or(s.len())];
            *out.entry(prefix.to_string()).or_insert(0) += v;
            match next {
                Some(i) => end = i + 1,
                None => break,
            }
        }
    }
    out
}

/// The profile of folded stacks (frames named as in the stacks, categories
/// from `package_of`).
pub fn profile_of(stacks: &[(String, u64)], package_of: &dyn Fn(&str) -> String) -> Profile {
    let mut b = ProfileBuilder::new(Metric::Sends);
    for (s, v) in stacks {
        let mut depth = 0;
        for frame in s.split(';') {
            let m = b.intern_method(MethodInfo::named(frame).with_category(package_of(frame)));
            b.enter(m);
            depth += 1;
        }
        b.add_self(*v);
        for _ in 0..depth {
            b.exit();
        }
    }
    b.finish()
}

/// The fill of a frame whose value went from `before` to `after`: white
/// when equal, red when it grew, blue when it fell, the intensity growing
/// with the relative change (saturating at 100%; a change shows at least a
/// little).
pub fn change_fill(before: u64, after: u64) -> String {
    if before == after {
        return "rgb(250,250,250)".to_string();
    }
    let rel = (after as f64 - before as f64).abs() / (before.max(1) as f64);
    let k = rel.clamp(0.08, 1.0);
    let light = (250.0 * (1.0 - 0.85 * k)).round() as u8;
    if after > before {
        format!("rgb(250,{light},{light})")
    } else {
        format!("rgb({light},{light},250)")
    }
}

/// The differential flame graph of `to` (stacks `after`) against `from`
/// (stacks `before`); `package_of` names a frame's package (the frames'
/// category, for the titles).
pub fn diff_svg(
    from: &VersionInfo,
    before: &[(String, u64)],
    to: &VersionInfo,
    after: &[(String, u64)],
    package_of: &dyn Fn(&str) -> String,
) -> String {
    let profile = profile_of(after, package_of);
    let earlier = prefix_totals(before);
    let totals = profile.node_totals();
    let style = |n: NodeId| -> Option<FrameStyle> {
        let path: Vec<&str> = profile
            .path(n)
            .into_iter()
            .map(|m| profile.methods[m.index()].name.as_str())
            .collect();
        let was = earlier.get(&path.join(";")).copied().unwrap_or(0);
        let now = totals[n.index()];
        let delta = i128::from(now) - i128::from(was);
        let rel = if was > 0 {
            format!(" ({:+.1}%)", delta as f64 * 100.0 / was as f64)
        } else {
            " (new)".to_string()
        };
        Some(FrameStyle {
            fill: change_fill(was, now),
            note: format!("before {was}, after {now}, delta {delta:+}{rel}"),
        })
    };
    let options = FlameGraphOptions {
        title: format!(
            "Differential flame graph: {} against {} (red: more sends, blue: fewer)",
            version_line(to),
            version_line(from)
        ),
        ..FlameGraphOptions::default()
    };
    to_string_styled(&profile, &options, Some(&style))
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::version;
    use super::*;

    fn st(v: &[(&str, u64)]) -> Vec<(String, u64)> {
        v.iter().map(|(s, n)| (s.to_string(), *n)).collect()
    }

    #[test]
    fn folded_round_trip_and_diff() {
        let p = parse_folded("a;b 3\na 2\nbad line\na;b 1\n\n");
        assert_eq!(p, st(&[("a", 2), ("a;b", 4)]));
        let d = folded_diff(&st(&[("a", 2), ("a;b", 4)]), &st(&[("a;b", 5), ("a;c", 1)]));
        assert_eq!(d, "a 2 0\na;b 4 5\na;c 0 1\n");
        let t = prefix_totals(&st(&[("a", 2), ("a;b", 4), ("a;b;c", 1)]));
        assert_eq!((t["a"], t["a;b"], t["a;b;c"]), (7, 5, 1));
    }

    #[test]
    fn fills_follow_the_change() {
        assert_eq!(change_fill(10, 10), "rgb(250,250,250)");
        assert!(change_fill(10, 20).starts_with("rgb(250,"));
        assert!(change_fill(20, 10).ends_with(",250)"));
        // Twice the change, a stronger colour.
        assert_ne!(change_fill(100, 110), change_fill(100, 150));
        assert_eq!(change_fill(0, 5), change_fill(1, 1000));
    }

    #[test]
    fn svg_colours_frames_by_change() {
        let before = st(&[("M>>run", 1), ("M>>run;M>>a", 10), ("M>>run;M>>b", 10)]);
        let after = st(&[("M>>run", 1), ("M>>run;M>>a", 20), ("M>>run;M>>b", 5)]);
        let svg = diff_svg(&version(1, "a"), &before, &version(2, "b"), &after, &|_| {
            "App".to_string()
        });
        assert!(svg.contains("M&gt;&gt;a - 20 sends"), "{svg}");
        assert!(
            svg.contains("before 10, after 20, delta +10 (+100.0%)"),
            "{svg}"
        );
        assert!(
            svg.contains("before 10, after 5, delta -5 (-50.0%)"),
            "{svg}"
        );
        assert!(svg.contains(&change_fill(10, 20)));
        assert!(svg.contains(&change_fill(10, 5)));
    }
}
