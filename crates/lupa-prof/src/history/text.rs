//! The history as text and JSON: a diff's tables, the list of versions, one
//! method's series and a check's report.
//!
//! Contract: every function answers text ending in a newline; absent values
//! print as `-`; deltas carry their sign; JSON documents name their format
//! (`lupa-history-diff/1`, `lupa-history-log/1`, `lupa-history-series/1`).

use super::{Change, Diff, Level, Series, State, VersionInfo, Violation};
use comfy_table::{CellAlignment, Table, presets};
use serde::Serialize;
use std::fmt::Write as _;

/// What [`diff_text`] shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// Also list unchanged methods.
    pub all: bool,
    /// At most this many method rows (`None`: all).
    pub top: Option<usize>,
}

/// A value, `-` when absent.
fn value(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// A signed delta.
pub(crate) fn delta(c: &Change) -> String {
    let d = c.delta();
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

/// A signed percentage, empty when there is no earlier value.
pub(crate) fn percent(c: &Change) -> String {
    match c.percent() {
        Some(_) if c.delta() == 0 => "0.0%".to_string(),
        Some(p) => format!("{p:+.1}%"),
        None => String::new(),
    }
}

/// `state (colour)`.
/// The state cell of a broken version ([`super::METRIC_BROKEN`]): its own
/// colour, none of the five states.
pub(crate) const BROKEN_CELL: &str = "broken (grey)";

pub(crate) fn state_cell(s: State) -> String {
    format!("{} ({})", s.name(), s.colour())
}

/// A version in one line: `#id "label" (date[, rev])`.
pub fn version_line(v: &VersionInfo) -> String {
    match &v.git_rev {
        Some(rev) => format!(
            "#{} \"{}\" ({}, git {})",
            v.id,
            v.label,
            v.date,
            rev.get(..12).unwrap_or(rev)
        ),
        None => format!("#{} \"{}\" ({})", v.id, v.label, v.date),
    }
}

/// `2 higher (red), 1 new (yellow), ...` for one level of a diff.
fn counts_line(d: &Diff, level: Level) -> String {
    State::tally_line_painted(&d.counts(level), d.higher_is_better())
}

pub(crate) fn table(header: &[&str], rows: Vec<Vec<String>>, right: &[usize]) -> String {
    let mut t = Table::new();
    t.load_preset(presets::ASCII_MARKDOWN);
    t.set_header(header.to_vec());
    for r in rows {
        t.add_row(r);
    }
    for &c in right {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut s = t.to_string();
    s.push('\n');
    s
}

/// The diff as text: a header (versions, measure, counts per state), then
/// tables of packages, classes and methods (unchanged methods only with
/// [`TextOptions::all`]).
pub fn diff_text(d: &Diff, options: TextOptions) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "history diff");
    let _ = writeln!(out, "from: {}", version_line(&d.from));
    let _ = writeln!(out, "to:   {}", version_line(&d.to));
    let _ = writeln!(
        out,
        "metric: methods by {}; classes and packages by the {} of their methods",
        d.measure_description(),
        match d.measure {
            super::Measure::Activations => "activations",
            _ => "self sends",
        }
    );
    if d.tolerance > 0.0 {
        let _ = writeln!(
            out,
            "changes up to {:.1}% count as unchanged",
            d.tolerance * 100.0
        );
    }
    for (name, level) in [
        ("methods", Level::Method),
        ("classes", Level::Class),
        ("packages", Level::Package),
    ] {
        let _ = writeln!(out, "{name}: {}", counts_line(d, level));
    }
    let right = [2, 3, 4, 5];
    out.push_str("\nPackages\n");
    let rows = d
        .packages
        .iter()
        .map(|c| change_row(c, false, d.higher_is_better()))
        .collect();
    out.push_str(&table(
        &["State", "Package", "Before", "After", "Delta", "Delta %"],
        rows,
        &right,
    ));
    out.push_str("\nClasses\n");
    let rows = d
        .classes
        .iter()
        .map(|c| change_row(c, true, d.higher_is_better()))
        .collect();
    out.push_str(&table(
        &[
            "State", "Class", "Before", "After", "Delta", "Delta %", "Package",
        ],
        rows,
        &right,
    ));
    out.push_str("\nMethods\n");
    let shown: Vec<&Change> = d
        .methods
        .iter()
        .filter(|c| options.all || c.state != State::Unchanged)
        .collect();
    let limit = options.top.unwrap_or(usize::MAX).min(shown.len());
    let rows = shown[..limit]
        .iter()
        .map(|c| change_row(c, true, d.higher_is_better()))
        .collect();
    out.push_str(&table(
        &[
            "State", "Method", "Before", "After", "Delta", "Delta %", "Package",
        ],
        rows,
        &right,
    ));
    if limit < shown.len() {
        let _ = writeln!(out, "({} more methods not shown)", shown.len() - limit);
    }
    let hidden = d.methods.len() - shown.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "({hidden} unchanged methods not shown; --all shows them)"
        );
    }
    out
}

/// One change in a JSON document.
#[derive(Serialize)]
struct JsonChange<'a> {
    name: &'a str,
    package: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    class: &'a str,
    state: State,
    colour: &'static str,
    before: Option<u64>,
    after: Option<u64>,
    delta: i128,
    delta_percent: Option<f64>,
}

impl<'a> JsonChange<'a> {
    /// A change, coloured as the other reports colour it ([`State::painted`]:
    /// in a coverage diff, higher takes lower's colour and lower higher's).
    fn of(c: &'a Change, higher_is_better: bool) -> JsonChange<'a> {
        JsonChange {
            name: &c.name,
            package: &c.package,
            class: &c.class,
            state: c.state,
            colour: c.state.painted(higher_is_better).colour(),
            before: c.before,
            after: c.after,
            delta: c.delta(),
            delta_percent: c.percent(),
        }
    }
}

/// The diff as a JSON document (`lupa-history-diff/1`): both versions, the
/// measure, and every package, class and method with its state, values and
/// deltas.
pub fn diff_json(d: &Diff) -> serde_json::Result<String> {
    fn conv(rows: &[Change], higher_is_better: bool) -> Vec<JsonChange<'_>> {
        rows.iter()
            .map(|c| JsonChange::of(c, higher_is_better))
            .collect()
    }
    let h = d.higher_is_better();
    let doc = serde_json::json!({
        "format": "lupa-history-diff/1",
        "from": d.from,
        "to": d.to,
        "metric": d.measure,
        "tolerance": d.tolerance,
        "packages": conv(&d.packages, h),
        "classes": conv(&d.classes, h),
        "methods": conv(&d.methods, h),
    });
    let mut s = serde_json::to_string_pretty(&doc)?;
    s.push('\n');
    Ok(s)
}

/// The versions of a store, oldest first, as a table.
pub fn log_text(versions: &[VersionInfo]) -> String {
    if versions.is_empty() {
        return "no version recorded yet (lupa history record)\n".to_string();
    }
    let rows = versions
        .iter()
        .map(|v| {
            vec![
                v.id.to_string(),
                v.label.clone(),
                v.git_rev
                    .as_deref()
                    .map(|r| r.get(..12).unwrap_or(r).to_string())
                    .unwrap_or_default(),
                v.date.clone(),
                if v.is_broken() {
                    super::METRIC_BROKEN.to_string()
                } else {
                    v.total_sends.map(|t| t.to_string()).unwrap_or_default()
                },
                v.command.clone(),
            ]
        })
        .collect();
    table(
        &["Id", "Label", "Git", "Date", "Sends", "Command"],
        rows,
        &[0, 4],
    )
}

/// The versions as JSON (`lupa-history-log/1`).
pub fn log_json(versions: &[VersionInfo]) -> serde_json::Result<String> {
    let doc = serde_json::json!({ "format": "lupa-history-log/1", "versions": versions });
    let mut s = serde_json::to_string_pretty(&doc)?;
    s.push('\n');
    Ok(s)
}

/// One method across versions: a line per version (its metrics and its state
/// against the previous one), the version `mark` flagged with `*`.
pub fn series_text(s: &Series, mark: Option<i64>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "method {} ran in {} of {} versions (states by {})",
        s.method,
        s.points.iter().filter(|p| p.metrics.is_some()).count(),
        s.points.len(),
        s.measure.describe()
    );
    if let Some(p) = s
        .points
        .iter()
        .find(|p| Some(p.version.id) == mark)
        .and_then(|p| p.metrics.as_ref().map(|m| (p, m)))
    {
        let _ = writeln!(
            out,
            "in {}: package {}, class {}, {} sends total, {} self, {} activations",
            version_line(&p.0.version),
            p.1.package,
            p.1.class,
            p.1.sends_total,
            p.1.sends_self,
            p.1.activations
        );
    }
    let rows = s
        .points
        .iter()
        .map(|p| {
            let m = p.metrics.as_ref();
            vec![
                if Some(p.version.id) == mark {
                    "*".to_string()
                } else {
                    String::new()
                },
                p.version.id.to_string(),
                p.version.label.clone(),
                value(m.map(|m| m.sends_total)),
                value(m.map(|m| m.sends_self)),
                value(m.map(|m| m.activations)),
                if p.version.is_broken() {
                    BROKEN_CELL.to_string()
                } else {
                    p.state
                        .map(|st| {
                            let paint = st.painted(p.version.higher_is_better());
                            format!("{} ({})", st.name(), paint.colour())
                        })
                        .unwrap_or_default()
                },
            ]
        })
        .collect();
    out.push_str(&table(
        &["", "Id", "Label", "Total", "Self", "Activations", "State"],
        rows,
        &[1, 3, 4, 5],
    ));
    out
}

/// The series as JSON (`lupa-history-series/1`).
pub fn series_json(s: &Series) -> serde_json::Result<String> {
    let doc = serde_json::json!({
        "format": "lupa-history-series/1",
        "method": s.method,
        "metric": s.measure,
        "points": s.points,
    });
    let mut s = serde_json::to_string_pretty(&doc)?;
    s.push('\n');
    Ok(s)
}

/// The report of `lupa history check`: what was compared, then either `ok`
/// or each method past the bound.
pub fn check_text(d: &Diff, violations: &[Violation], max_increase: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "history check: {}", d.measure_description());
    let _ = writeln!(out, "baseline: {}", version_line(&d.from));
    let _ = writeln!(out, "against:  {}", version_line(&d.to));
    let _ = writeln!(out, "bound:    +{max_increase}% per method");
    if violations.is_empty() {
        let grew = d
            .methods
            .iter()
            .filter(|c| c.state == State::Higher)
            .count();
        let _ = writeln!(
            out,
            "ok: no method grew past the bound ({grew} grew within it, {} methods compared)",
            d.methods.len()
        );
        return out;
    }
    let _ = writeln!(
        out,
        "FAILED: {} method{} grew past the bound:",
        violations.len(),
        if violations.len() == 1 { "" } else { "s" }
    );
    let rows = violations
        .iter()
        .map(|v| {
            let c = &v.change;
            vec![
                c.name.clone(),
                value(c.before),
                value(c.after),
                delta(c),
                match c.percent() {
                    Some(_) => percent(c),
                    None => "from 0".to_string(),
                },
            ]
        })
        .collect();
    out.push_str(&table(
        &["Method", "Before", "After", "Delta", "Delta %"],
        rows,
        &[1, 2, 3, 4],
    ));
    out
}

/// One row of a diff table: state, name, before, after, delta, delta %, and
/// the package when `with_package` (colours as [`State::painted`]).
fn change_row(c: &Change, with_package: bool, higher_is_better: bool) -> Vec<String> {
    let mut row = vec![
        format!(
            "{} ({})",
            c.state.name(),
            c.state.painted(higher_is_better).colour()
        ),
        c.name.clone(),
        value(c.before),
        value(c.after),
        delta(c),
        percent(c),
    ];
    if with_package {
        row.push(c.package.clone());
    }
    row
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::sample_diff;
    use super::*;

    #[test]
    fn text_lists_every_state_with_deltas() {
        let d = sample_diff();
        let t = diff_text(&d, TextOptions::default());
        assert!(t.contains("| higher (red)"), "{t}");
        assert!(t.contains("A>>slower"), "{t}");
        assert!(t.contains("+50.0%"), "{t}");
        assert!(t.contains("-60.0%"), "{t}");
        assert!(
            t.contains("(2 unchanged methods not shown; --all shows them)"),
            "{t}"
        );
        let all = diff_text(
            &d,
            TextOptions {
                all: true,
                top: None,
            },
        );
        assert!(all.contains("A>>same"), "{all}");
    }

    #[test]
    fn coverage_diffs_say_executions_and_lower_is_red() {
        let mut d = sample_diff();
        d.from.metric = "coverage".to_string();
        d.to.metric = "coverage".to_string();
        let t = diff_text(&d, TextOptions::default());
        assert!(
            t.contains("methods by executions (coverage: higher is better)"),
            "{t}"
        );
        assert!(!t.contains("total sends"), "{t}");
        assert!(t.contains("| higher (green)"), "{t}");
        assert!(t.contains("| lower (red)"), "{t}");
        let svg = super::super::picture::svg(&d);
        assert!(svg.contains("(executions)"), "{svg}");
        // The JSON document colours as the text does.
        let j: serde_json::Value =
            serde_json::from_str(&diff_json(&d).expect("json")).expect("parses");
        let methods = j["methods"].as_array().expect("methods");
        assert_eq!(methods[0]["state"], "higher");
        assert_eq!(methods[0]["colour"], "green");
    }

    #[test]
    fn json_is_a_versioned_document() {
        let d = sample_diff();
        let j: serde_json::Value =
            serde_json::from_str(&diff_json(&d).expect("json")).expect("parses");
        assert_eq!(j["format"], "lupa-history-diff/1");
        assert_eq!(j["metric"], "total");
        let methods = j["methods"].as_array().expect("methods");
        assert_eq!(methods.len(), 6);
        assert_eq!(methods[0]["state"], "higher");
        assert_eq!(methods[0]["colour"], "red");
        assert_eq!(methods[0]["delta_percent"], 50.0);
    }

    #[test]
    fn check_report_names_the_methods() {
        let d = sample_diff();
        let v = super::super::check(&d, 5.0);
        let t = check_text(&d, &v, 5.0);
        assert!(t.contains("FAILED: 1 method grew past the bound"), "{t}");
        assert!(t.contains("A>>slower"), "{t}");
        let ok = check_text(&d, &[], 60.0);
        assert!(ok.contains("ok: no method grew past the bound"), "{ok}");
    }
}
