//! The callgrind profile format, for KCachegrind/QCachegrind and
//! `callgrind_annotate`.
//!
//! The profile's metric is the first event (e.g. `events: Sends`); a sampled
//! profile adds `Samples` and `Sends` from its timeline
//! ([`CallgrindOptions::extra`]: each with its own self and call costs; a
//! method's extra self costs follow its metric over its lines, split in
//! proportion so they sum exactly). Each method is a
//! function (`fn=`) in its source file (`fl=`, `???` when unknown) at its
//! definition line (`positions: line`, 0 when unknown). Its self value is
//! written on the lines where it arose when the profile knows them
//! ([`MethodInfo::line_costs`]: Compteur's sends at the line of each send), on
//! the definition line otherwise; each callee gets a `cfl=`/`cfn=`/`calls=` block (`calls=1` when the
//! number is unknown, as in a sampled profile: a count of 0 makes
//! callgrind_annotate drop the call) whose cost line is the
//! inclusive value of those calls, on the line of the send that made them when
//! the profiler recorded it ([`CallEdge::line`]; otherwise the caller's first
//! line), so annotated sources show the cost of each send where it is written. Recursion: a call nested in an activation of
//! the callee's own method costs 0 there ([`CallEdge::outer_total`]), so the
//! inclusive cost KCachegrind and `callgrind_annotate --inclusive=yes` compute
//! by adding incoming call costs is the method's total, recursion counted once
//! (the call counts stay exact). File and function names are compressed (`(id) name` on first
//! use, `(id)` afterwards). A synthetic root appears as the function `<root>`,
//! the entry point whose inclusive cost is the grand total.
//!
//! [`CallEdge::outer_total`]: crate::CallEdge::outer_total
//! [`MethodInfo::line_costs`]: crate::MethodInfo::line_costs
//! [`CallEdge::line`]: crate::CallEdge::line
//!
//! Format reference: the "Callgrind Format Specification" of the Valgrind manual.

use std::io::{self, Write};

use rustc_hash::FxHashMap;

use crate::profile::{CallSite, Profile};

/// Options of [`write()`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallgrindOptions {
    /// The profiled command (the `cmd:` header line), e.g. `"lupa count Hello"`.
    pub cmd: Option<String>,
    /// Events written after the profile's metric, each with its own value per
    /// node (a sampled profile's `Samples` and `Sends`, from its timeline).
    pub extra: Vec<ExtraEvent>,
}

/// An event beside the profile's metric ([`CallgrindOptions::extra`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraEvent {
    /// The `events:` name (no white space), e.g. `Sends`.
    pub name: String,
    /// Its description in the `event:` line.
    pub description: String,
    /// Self value per node of the profile.
    pub self_values: Vec<u64>,
}

/// One event column: its per-method aggregates and call edges.
struct Column {
    stats: Vec<crate::MethodStats>,
    edges: FxHashMap<(usize, usize), u64>,
    grand: u64,
}

impl Column {
    fn of(profile: &Profile) -> Column {
        let totals = profile.node_totals();
        let stats = profile.method_stats_with(&totals);
        let edges = profile
            .call_edges_with(&totals)
            .into_iter()
            .map(|e| ((e.caller.index(), e.callee.index()), e.outer_total))
            .collect();
        let grand = profile
            .roots()
            .map(|r| totals[r.index()])
            .fold(0u64, u64::saturating_add);
        Column {
            stats,
            edges,
            grand,
        }
    }
}

/// Split `total` over `weights` in proportion (largest remainders), so the
/// parts sum to `total` exactly.
fn split(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let mut parts: Vec<(u64, u128, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let exact = u128::from(total) * u128::from(w);
            ((exact / sum) as u64, exact % sum, i)
        })
        .collect();
    let mut left = total - parts.iter().map(|p| p.0).sum::<u64>();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| parts[b].1.cmp(&parts[a].1).then(a.cmp(&b)));
    for i in order {
        if left == 0 {
            break;
        }
        parts[i].0 += 1;
        left -= 1;
    }
    parts.sort_by_key(|p| p.2);
    parts.into_iter().map(|p| p.0).collect()
}

/// Compressed-name table: answers `(id) name` the first time, `(id)` later.
struct Names<'a> {
    ids: FxHashMap<&'a str, usize>,
}

impl<'a> Names<'a> {
    fn new() -> Self {
        Names {
            ids: FxHashMap::default(),
        }
    }

    fn get(&mut self, name: &'a str) -> String {
        let next = self.ids.len() + 1;
        match self.ids.get(name) {
            Some(id) => format!("({id})"),
            None => {
                self.ids.insert(name, next);
                format!("({next}) {}", clean(name))
            }
        }
    }
}

/// Names may not contain line breaks.
fn clean(name: &str) -> String {
    name.replace(['\n', '\r'], " ")
}

/// Write `profile` in callgrind format.
pub fn write<W: Write>(profile: &Profile, options: &CallgrindOptions, w: &mut W) -> io::Result<()> {
    let totals = profile.node_totals();
    let stats = profile.method_stats_with(&totals);
    let edges = profile.call_edges_with(&totals);
    let grand = profile
        .roots()
        .map(|r| totals[r.index()])
        .fold(0u64, u64::saturating_add);
    let used = profile.used_methods();
    let event = profile.metric.event_name();
    // The extra events: the same tree with their values.
    let extra: Vec<Column> = options
        .extra
        .iter()
        .map(|e| {
            let mut p = profile.clone();
            for (n, v) in p.nodes.iter_mut().zip(&e.self_values) {
                n.self_value = *v;
            }
            Column::of(&p)
        })
        .collect();

    writeln!(w, "# callgrind format")?;
    writeln!(w, "version: 1")?;
    writeln!(w, "creator: lupa-prof {}", env!("CARGO_PKG_VERSION"))?;
    if let Some(cmd) = &options.cmd {
        writeln!(w, "cmd: {}", clean(cmd))?;
    }
    writeln!(w, "positions: line")?;
    writeln!(
        w,
        "event: {event} : {} ({})",
        profile.metric.name(),
        profile.metric.unit()
    )?;
    for e in &options.extra {
        writeln!(w, "event: {} : {}", e.name, clean(&e.description))?;
    }
    let names: Vec<&str> = options.extra.iter().map(|e| e.name.as_str()).collect();
    let extra_totals = |f: &dyn Fn(&Column) -> u64| -> String {
        extra.iter().map(|c| format!(" {}", f(c))).collect()
    };
    let events = std::iter::once(event.as_str())
        .chain(names.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    writeln!(w, "events: {events}")?;
    writeln!(w, "summary: {grand}{}", extra_totals(&|c| c.grand))?;

    // Functions: synthetic roots first, then by total desc, name, index.
    let mut order: Vec<usize> = (0..profile.methods.len()).filter(|&m| used[m]).collect();
    order.sort_by(|&a, &b| {
        let (ma, mb) = (&profile.methods[a], &profile.methods[b]);
        mb.is_synthetic_root()
            .cmp(&ma.is_synthetic_root())
            .then(stats[b].total.cmp(&stats[a].total))
            .then_with(|| ma.name.cmp(&mb.name))
            .then(a.cmp(&b))
    });
    // Outgoing edges per caller, by inclusive value desc then callee name.
    let mut out_edges: Vec<Vec<usize>> = vec![Vec::new(); profile.methods.len()];
    for (i, e) in edges.iter().enumerate() {
        out_edges[e.caller.index()].push(i);
    }
    let mut files = Names::new();
    let mut fns = Names::new();
    let sites = call_sites(profile);
    let file_of = |m: usize| profile.methods[m].file.as_deref().unwrap_or("???");
    let line_of = |m: usize| profile.methods[m].line.unwrap_or(0);
    for m in order {
        let info = &profile.methods[m];
        writeln!(w)?;
        writeln!(w, "fl={}", files.get(file_of(m)))?;
        writeln!(w, "fn={}", fns.get(&info.name))?;
        let extra_self: Vec<u64> = extra.iter().map(|c| c.stats[m].self_value).collect();
        write_self_costs(w, info, line_of(m), stats[m].self_value, &extra_self)?;
        let mut mine = std::mem::take(&mut out_edges[m]);
        mine.sort_by(|&a, &b| {
            let (ea, eb) = (&edges[a], &edges[b]);
            eb.outer_total
                .cmp(&ea.outer_total)
                .then(eb.calls.cmp(&ea.calls))
                .then_with(|| {
                    profile.methods[ea.callee]
                        .name
                        .cmp(&profile.methods[eb.callee].name)
                })
                .then(ea.callee.cmp(&eb.callee))
        });
        for e in mine.into_iter().map(|i| &edges[i]) {
            let key = (e.caller.index(), e.callee.index());
            let more: Vec<u64> = extra
                .iter()
                .map(|c| c.edges.get(&key).copied().unwrap_or(0))
                .collect();
            // One call block per call site when the profile knows them (and
            // they account for every call), else one on the edge's line.
            let lines: Vec<CallSite> = match sites.get(&key) {
                Some(s) if s.iter().map(|x| x.calls).sum::<u64>() == e.calls => s.clone(),
                _ => vec![CallSite {
                    line: e.line.unwrap_or(line_of(m)),
                    calls: e.calls,
                    total: e.outer_total,
                }],
            };
            let weights: Vec<u64> = lines
                .iter()
                .map(|l| l.total.max(u64::from(l.calls > 0)))
                .collect();
            let columns: Vec<Vec<u64>> = more.iter().map(|&t| split(t, &weights)).collect();
            for (i, site) in lines.iter().enumerate() {
                let (line, calls, cost) = (site.line, site.calls, site.total);
                writeln!(w, "cfl={}", files.get(file_of(e.callee.index())))?;
                writeln!(w, "cfn={}", fns.get(&profile.methods[e.callee].name))?;
                // A sampled profile does not know the number of calls (0):
                // callgrind_annotate drops a call counted 0, and with it the
                // callee's inclusive cost, so at least 1 is written.
                writeln!(w, "calls={} {}", calls.max(1), line_of(e.callee.index()))?;
                write!(w, "{line} {cost}")?;
                for c in &columns {
                    write!(w, " {}", c[i])?;
                }
                writeln!(w)?;
            }
        }
    }
    writeln!(w)?;
    writeln!(w, "totals: {grand}{}", extra_totals(&|c| c.grand))?;
    Ok(())
}

/// The call sites of each (caller, callee) pair of methods, summed over
/// their contexts ([`crate::Node::sites`]), by line, in ascending order; the
/// cost counted as [`crate::CallEdge::outer_total`] is (0 for an activation
/// nested in one of the callee's own method, so that a method's incoming
/// costs add up to its total).
fn call_sites(profile: &Profile) -> FxHashMap<(usize, usize), Vec<CallSite>> {
    let outermost = profile.outermost_contexts();
    let mut out: FxHashMap<(usize, usize), Vec<CallSite>> = FxHashMap::default();
    for (i, node) in profile.nodes.iter().enumerate() {
        let Some(p) = node.parent else { continue };
        if node.sites.is_empty() {
            continue;
        }
        let key = (profile.nodes[p].method.index(), node.method.index());
        let lines = out.entry(key).or_default();
        for s in &node.sites {
            let cost = if outermost[i] { s.total } else { 0 };
            CallSite::add(lines, s.line, s.calls, cost);
        }
    }
    for lines in out.values_mut() {
        lines.sort_by_key(|l| l.line);
    }
    out
}

/// A function's self cost lines: on the lines where it arose when the profile
/// knows them ([`MethodInfo::line_costs`]), the rest (all of it otherwise) on
/// the definition line `def`. The lines are in ascending order, as the format's
/// relative positions read best; the sum is always `self_value`.
///
/// [`MethodInfo::line_costs`]: crate::MethodInfo::line_costs
fn write_self_costs<W: Write>(
    w: &mut W,
    info: &crate::MethodInfo,
    def: u32,
    self_value: u64,
    extra: &[u64],
) -> io::Result<()> {
    let mut lines: Vec<(u32, u64)> = Vec::with_capacity(info.line_costs.len() + 1);
    let mut left = self_value;
    for &(line, cost) in &info.line_costs {
        let cost = cost.min(left);
        left -= cost;
        if cost > 0 {
            lines.push((line, cost));
        }
    }
    if left > 0 || lines.is_empty() {
        match lines.iter_mut().find(|(l, _)| *l == def) {
            Some(entry) => entry.1 += left,
            None => lines.push((def, left)),
        }
    }
    lines.sort_by_key(|&(l, _)| l);
    // The extra events follow the metric over the lines (all on the first
    // line when the metric has nothing to follow).
    let mut weights: Vec<u64> = lines.iter().map(|&(_, c)| c).collect();
    if weights.iter().all(|&c| c == 0) {
        weights = (0..lines.len()).map(|i| u64::from(i == 0)).collect();
    }
    let columns: Vec<Vec<u64>> = extra.iter().map(|&t| split(t, &weights)).collect();
    for (i, (line, cost)) in lines.into_iter().enumerate() {
        write!(w, "{line} {cost}")?;
        for c in &columns {
            write!(w, " {}", c[i])?;
        }
        writeln!(w)?;
    }
    Ok(())
}

/// [`write()`] into a string.
pub fn to_string(profile: &Profile, options: &CallgrindOptions) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(profile, options, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;

    fn options() -> CallgrindOptions {
        CallgrindOptions {
            cmd: Some("lupa count Main".to_string()),
            extra: Vec::new(),
        }
    }

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(to_string(&sample_profile(), &options()));
    }

    /// The self value of a method with line costs is written on those lines, in
    /// line order; what they do not cover goes on the definition line, and
    /// they never add up to more than the self value.
    #[test]
    fn self_costs_by_line() {
        let info = |costs: Vec<(u32, u64)>| crate::MethodInfo {
            line_costs: costs,
            ..crate::MethodInfo::new("T", "m")
        };
        let lines = |costs: Vec<(u32, u64)>, self_value: u64| {
            let mut buf = Vec::new();
            write_self_costs(&mut buf, &info(costs), 3, self_value, &[]).expect("vec");
            String::from_utf8(buf).expect("utf-8")
        };
        assert_eq!(lines(vec![], 7), "3 7\n");
        assert_eq!(lines(vec![(9, 2), (5, 4)], 6), "5 4\n9 2\n");
        assert_eq!(lines(vec![(5, 4)], 6), "3 2\n5 4\n");
        assert_eq!(lines(vec![(3, 1), (5, 4)], 6), "3 2\n5 4\n");
        assert_eq!(lines(vec![(5, 4), (9, 5)], 6), "5 4\n9 2\n");
        assert_eq!(lines(vec![], 0), "3 0\n");
    }

    /// Calls of one method from two lines of its caller: each call site its
    /// own `calls=` block on its own line, with its own inclusive cost.
    #[test]
    fn each_call_site_on_its_own_line() {
        let mut b = crate::builder::ProfileBuilder::new(crate::Metric::Sends);
        let run = b.add_method(crate::MethodInfo::new("T", "run").with_location("T.som", Some(2)));
        let work =
            b.add_method(crate::MethodInfo::new("T", "work").with_location("T.som", Some(9)));
        b.enter(run);
        b.add_self(1);
        for (line, n, cost) in [(3, 3, 2), (7, 7, 1)] {
            for _ in 0..n {
                b.enter_from(work, Some(line));
                b.add_self(cost);
                b.exit();
            }
        }
        b.exit();
        let text = to_string(&b.finish(), &options());
        let calls: Vec<(&str, &str)> = text
            .lines()
            .zip(text.lines().skip(1))
            .filter(|(c, _)| c.starts_with("calls="))
            .collect();
        assert_eq!(
            calls,
            [
                ("calls=1 2", "0 14"),
                ("calls=3 9", "3 6"),
                ("calls=7 9", "7 7")
            ],
            "{text}"
        );
    }

    /// Run valgrind's `callgrind_annotate` on the file when it is installed.
    #[test]
    #[allow(clippy::print_stderr)] // a test's note that it was skipped
    fn callgrind_annotate_reads_it() {
        let tool = std::path::Path::new("/usr/bin/callgrind_annotate");
        if !tool.exists() {
            eprintln!("callgrind_annotate not installed: skipped");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("callgrind.out.lupa");
        std::fs::write(&path, to_string(&sample_profile(), &options())).expect("write");
        for inclusive in ["no", "yes"] {
            let out = std::process::Command::new(tool)
                .arg(format!("--inclusive={inclusive}"))
                .arg(&path)
                .current_dir(dir.path())
                .output()
                .expect("run callgrind_annotate");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "failed: {stderr}\n{stdout}");
            assert!(!stderr.contains("WARNING"), "warnings: {stderr}");
            assert!(stdout.contains("Sends"), "{stdout}");
            // The summary is the grand total.
            assert!(stdout.contains("72"), "{stdout}");
            if inclusive == "no" {
                // Self costs: b 35, a 20, main 10, c 7.
                assert!(
                    stdout
                        .lines()
                        .any(|l| l.contains("35") && l.contains("Lib>>b")),
                    "{stdout}"
                );
            } else {
                // Inclusive: a = 50 (20 + its calls to b); the recursive c
                // counts once: 7.
                for (v, name) in [("50", "Main>>a"), ("7", "Main>>c"), ("72", "Main>>main")] {
                    assert!(
                        stdout
                            .lines()
                            .any(|l| l.trim_start().starts_with(v) && l.contains(name)),
                        "{name}: {stdout}"
                    );
                }
            }
        }
    }
}
