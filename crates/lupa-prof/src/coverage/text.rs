//! The text coverage report: a summary (methods executed, classes covered,
//! tests and their results, how receivers and lines were counted), then per
//! package and class each method with `+` (ran) or `-` (never ran), its
//! executions, distinct receivers (`~` when estimated), lines of code (and
//! lines covered, when the VM measured them) and the tests that reached it.

use std::fmt::Write as _;

use super::{Coverage, TestResult};

fn percent(r: f64) -> String {
    format!("{:.1}%", r * 100.0)
}

/// The report as a string.
pub fn to_string(coverage: &Coverage) -> String {
    let mut out = String::new();
    let methods = coverage.methods().count();
    let covered = coverage.methods().filter(|(_, m)| m.is_covered()).count();
    let classes = coverage.classes.len();
    let covered_classes = coverage.classes.iter().filter(|c| c.is_covered()).count();
    let _ = writeln!(out, "{}", coverage.command);
    let _ = writeln!(
        out,
        "Methods executed: {covered} of {methods} ({}); classes covered: {covered_classes} of {classes} ({})",
        percent(coverage.ratio_executed_methods()),
        percent(coverage.ratio_covered_classes())
    );
    if !coverage.tests.is_empty() {
        let n = |r: TestResult| coverage.tests.iter().filter(|t| t.result == r).count();
        let _ = writeln!(
            out,
            "Tests: {} run, {} passed, {} failed, {} errors",
            coverage.tests.len(),
            n(TestResult::Pass),
            n(TestResult::Fail),
            n(TestResult::Error)
        );
    }
    if !coverage.receivers_note.is_empty() {
        let _ = writeln!(out, "Receivers: {}", coverage.receivers_note);
    }
    let _ = writeln!(
        out,
        "Lines: {}",
        if coverage.has_line_data() {
            "measured by the VM (covered/lines of each method)"
        } else {
            "method granularity (the lines of a method that ran count as covered)"
        }
    );
    for p in &coverage.packages {
        let in_package: Vec<_> = coverage
            .classes
            .iter()
            .filter(|c| &c.package == p)
            .collect();
        if in_package.is_empty() {
            continue;
        }
        // A package is the directory its classes come from: say which.
        match in_package
            .iter()
            .find_map(|c| c.file.as_deref())
            .and_then(|f| std::path::Path::new(f).parent())
        {
            Some(dir) if !dir.as_os_str().is_empty() => {
                let _ = writeln!(out, "\nPackage {p} ({})", dir.display());
            }
            _ => {
                let _ = writeln!(out, "\nPackage {p}");
            }
        }
        for c in in_package {
            let ran = c.methods.iter().filter(|m| m.is_covered()).count();
            let _ = writeln!(
                out,
                "  {}  ({ran} of {} methods ran)",
                c.name,
                c.methods.len()
            );
            for m in &c.methods {
                let mark = if m.is_covered() { '+' } else { '-' };
                let runs = if m.is_covered() {
                    format!("{} runs", m.executions)
                } else {
                    "never".to_string()
                };
                let receivers = if m.receivers_estimated {
                    format!("~{} receivers", m.receivers)
                } else {
                    format!("{} receivers", m.receivers)
                };
                let lines = if m.lines.is_empty() {
                    format!("{} lines", m.lines_of_code)
                } else {
                    let hit = m.lines.iter().filter(|l| l.hits > 0).count();
                    format!("{hit}/{} lines", m.lines.len())
                };
                let tests = match m.tests.len() {
                    0 => String::new(),
                    1 => "  1 test".to_string(),
                    n => format!("  {n} tests"),
                };
                let _ = writeln!(
                    out,
                    "    {mark} {:<40} {runs:>12} {receivers:>16} {lines:>11}{tests}",
                    m.name_in(&c.name)
                );
            }
        }
    }
    let failures: Vec<_> = coverage.failures().collect();
    if !failures.is_empty() {
        let _ = writeln!(out, "\nTests that did not pass:");
        for t in failures {
            let what = match t.result {
                TestResult::Fail => "failed",
                _ => "error",
            };
            let _ = writeln!(out, "  {} ({what})", t.name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::tests::sample;

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(to_string(&sample()));
    }
}
