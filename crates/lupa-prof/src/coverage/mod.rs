//! Test coverage: the model a coverage profiler (Spy's `TestCoverage`, after
//! Hapao) fills, and its reports.
//!
//! A [`Coverage`] mirrors the covered program: classes (with their package,
//! superclass and source file) holding methods, each with how many times it
//! ran, how many distinct receivers it had (exact, or an estimate past a
//! bound), its lines of code, the tests that reached it, and when the VM
//! measured them, its source lines with their hit counts; and the tests run,
//! with their results. The writers are one per format:
//! [`text`] (a summary and per-class table), [`lcov`] (`SF`/`FN`/`FNDA`/`DA`,
//! read by genhtml, Codecov and editor gutters), [`cobertura`] (Cobertura
//! XML, read by CI services), [`blueprint`] (the paper's blueprint picture as
//! SVG), [`page`] (an HTML page embedding it, with a legend and a source
//! view of [`Coverage::sources`]) and JSON (this model, serialised with [`Coverage::to_json`], its
//! `version` field first).
//!
//! Contract: a method is covered when it ran at least once; a class is
//! covered when one of its methods is; [`Coverage::ratio_executed_methods`] is
//! covered methods over methods, [`Coverage::ratio_covered_classes`] covered
//! classes over classes (both 0 when there is nothing to cover). Lines
//! ([`MethodCoverage::lines`]) are absolute line numbers of the method's file;
//! when a method has none, the exporters that need lines give all its lines
//! ([`MethodCoverage::line`] .. + [`MethodCoverage::lines_of_code`]) its
//! execution count (method granularity), and say so.

pub mod blueprint;
pub mod cobertura;
mod format;
pub mod lcov;
pub mod page;
pub mod text;

use std::collections::BTreeMap;

pub use format::{CoverageFormat, CoverageOptions};

use serde::{Deserialize, Serialize};

/// The version of the JSON document ([`Coverage::to_json`]).
pub const VERSION: u32 = 1;

/// A coverage profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// [`VERSION`].
    pub version: u32,
    /// The command that produced it, e.g. `lupa coverage`.
    pub command: String,
    /// The packages covered, in order.
    pub packages: Vec<String>,
    /// The classes covered (instance and class side together), in order.
    pub classes: Vec<ClassCoverage>,
    /// The tests run, in order.
    pub tests: Vec<TestOutcome>,
    /// How distinct receivers are counted, e.g. "exact up to 1024 per
    /// method, then a HyperLogLog estimate (standard error 1.6%)".
    pub receivers_note: String,
    /// The methods' sources by `Class>>selector`, for the HTML page's
    /// source view (not in the JSON document).
    #[serde(skip)]
    pub sources: BTreeMap<String, MethodSource>,
}

/// A method's source text and the line of its file it starts at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MethodSource {
    /// The method's source, as the VM compiled it.
    pub text: String,
    /// Its first line in its file (1-based).
    pub first_line: u32,
}

/// A class and its methods (both sides).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCoverage {
    /// The class name.
    pub name: String,
    /// Its package.
    pub package: String,
    /// Its superclass's name (`None` for a root class).
    pub superclass: Option<String>,
    /// Its source file, when known.
    pub file: Option<String>,
    /// Its methods, instance side first.
    pub methods: Vec<MethodCoverage>,
}

/// A method.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodCoverage {
    /// The selector.
    pub selector: String,
    /// Is it a class-side method?
    pub class_side: bool,
    /// The line of its definition (0: unknown).
    pub line: u32,
    /// Its lines of code.
    pub lines_of_code: u32,
    /// How many times it ran.
    pub executions: u64,
    /// Distinct receivers (exact, or estimated: [`receivers_estimated`](Self::receivers_estimated)).
    pub receivers: u64,
    /// Is [`receivers`](Self::receivers) an estimate?
    pub receivers_estimated: bool,
    /// The tests that reached it (`Class>>selector`).
    pub tests: Vec<String>,
    /// Source lines with their hit counts, when the VM measured them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<LineHits>,
}

/// A source line and how many times its code ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineHits {
    /// The line number in the method's file.
    pub line: u32,
    /// Times its code ran (0: a missed line).
    pub hits: u64,
}

/// A test's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestResult {
    /// It passed.
    Pass,
    /// An assertion failed.
    Fail,
    /// It raised an error.
    Error,
}

/// A test and its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOutcome {
    /// `Class>>selector`.
    pub name: String,
    /// How it ended.
    pub result: TestResult,
}

impl MethodCoverage {
    /// Did it run?
    pub fn is_covered(&self) -> bool {
        self.executions > 0
    }

    /// Its display name in `class`: `Foo>>bar` or `Foo class>>bar`.
    pub fn name_in(&self, class: &str) -> String {
        if self.class_side {
            format!("{class} class>>{}", self.selector)
        } else {
            format!("{class}>>{}", self.selector)
        }
    }

    /// Its lines with hits: the measured ones, or every line of its
    /// definition with its execution count (method granularity).
    pub fn line_hits(&self) -> Vec<LineHits> {
        if !self.lines.is_empty() {
            return self.lines.clone();
        }
        if self.line == 0 {
            return Vec::new();
        }
        (0..self.lines_of_code.max(1))
            .map(|i| LineHits {
                line: self.line + i,
                hits: self.executions,
            })
            .collect()
    }
}

impl ClassCoverage {
    /// Is one of its methods covered?
    pub fn is_covered(&self) -> bool {
        self.methods.iter().any(MethodCoverage::is_covered)
    }
}

impl Coverage {
    /// Every method with its class.
    pub fn methods(&self) -> impl Iterator<Item = (&ClassCoverage, &MethodCoverage)> {
        self.classes
            .iter()
            .flat_map(|c| c.methods.iter().map(move |m| (c, m)))
    }

    /// Covered methods over methods (0 when there are none).
    pub fn ratio_executed_methods(&self) -> f64 {
        let (n, covered) = self.methods().fold((0usize, 0usize), |(n, k), (_, m)| {
            (n + 1, k + usize::from(m.is_covered()))
        });
        if n == 0 {
            0.0
        } else {
            covered as f64 / n as f64
        }
    }

    /// Covered classes over classes (0 when there are none).
    pub fn ratio_covered_classes(&self) -> f64 {
        let n = self.classes.len();
        let covered = self.classes.iter().filter(|c| c.is_covered()).count();
        if n == 0 {
            0.0
        } else {
            covered as f64 / n as f64
        }
    }

    /// Do the methods carry lines measured by the VM?
    pub fn has_line_data(&self) -> bool {
        self.methods().any(|(_, m)| !m.lines.is_empty())
    }

    /// The tests that failed or raised an error.
    pub fn failures(&self) -> impl Iterator<Item = &TestOutcome> {
        self.tests.iter().filter(|t| t.result != TestResult::Pass)
    }

    /// The JSON document (pretty), `version` first.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two classes, one subclass of the other; three methods ran, one did
    /// not; one test passed and one failed.
    pub(crate) fn sample() -> Coverage {
        let m = |sel: &str, line: u32, loc: u32, execs: u64, recv: u64, tests: &[&str]| {
            MethodCoverage {
                selector: sel.to_string(),
                class_side: false,
                line,
                lines_of_code: loc,
                executions: execs,
                receivers: recv,
                receivers_estimated: false,
                tests: tests.iter().map(|t| t.to_string()).collect(),
                lines: Vec::new(),
            }
        };
        Coverage {
            version: VERSION,
            command: "lupa coverage ShapeTest".into(),
            packages: vec!["Shapes".into()],
            classes: vec![
                ClassCoverage {
                    name: "Shape".into(),
                    package: "Shapes".into(),
                    superclass: Some("Object".into()),
                    file: Some("Shapes/Shape.som".into()),
                    methods: vec![
                        m("area", 3, 1, 4, 2, &["ShapeTest>>testArea"]),
                        m("printOn:", 5, 4, 0, 0, &[]),
                    ],
                },
                ClassCoverage {
                    name: "Square".into(),
                    package: "Shapes".into(),
                    superclass: Some("Shape".into()),
                    file: Some("Shapes/Square.som".into()),
                    methods: vec![
                        m(
                            "area",
                            4,
                            2,
                            10,
                            3,
                            &["ShapeTest>>testArea", "ShapeTest>>testBad"],
                        ),
                        MethodCoverage {
                            class_side: true,
                            lines: vec![
                                LineHits { line: 9, hits: 1 },
                                LineHits { line: 10, hits: 0 },
                            ],
                            ..m("side:", 8, 3, 1, 1, &["ShapeTest>>testArea"])
                        },
                    ],
                },
            ],
            tests: vec![
                TestOutcome {
                    name: "ShapeTest>>testArea".into(),
                    result: TestResult::Pass,
                },
                TestOutcome {
                    name: "ShapeTest>>testBad".into(),
                    result: TestResult::Fail,
                },
            ],
            receivers_note: "exact".into(),
            sources: BTreeMap::new(),
        }
    }

    #[test]
    fn ratios_and_coverage() {
        let c = sample();
        assert_eq!(c.ratio_executed_methods(), 0.75);
        assert_eq!(c.ratio_covered_classes(), 1.0);
        assert!(c.has_line_data());
        assert_eq!(c.failures().count(), 1);
        assert_eq!(Coverage::default().ratio_executed_methods(), 0.0);
        let (_, side) = c.methods().nth(3).expect("four methods");
        assert_eq!(side.name_in("Square"), "Square class>>side:");
        assert_eq!(side.line_hits().len(), 2);
        let (_, print) = c.methods().nth(1).expect("printOn:");
        let lines: Vec<u32> = print.line_hits().iter().map(|l| l.line).collect();
        assert_eq!(lines, [5, 6, 7, 8]);
    }

    #[test]
    fn json_round_trips_with_its_version_first() {
        let c = sample();
        let text = c.to_json();
        assert!(
            text.trim_start().starts_with("{\n  \"version\": 1"),
            "{text}"
        );
        let back: Coverage = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, c);
    }
}
