//! A [`Coverage`] as a [`Report`]: its formats and their default files.

use std::io::{self, Write};

use crate::report::{DefaultFile, FormatInfo, Report, ReportFormat};

use super::{Coverage, blueprint, cobertura, lcov, page, text};

/// The formats of a coverage report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoverageFormat {
    /// A summary, then each method.
    Text,
    /// The model as JSON.
    Json,
    /// LCOV tracefile.
    Lcov,
    /// Cobertura XML.
    Cobertura,
    /// The test blueprint picture.
    Svg,
    /// The HTML page.
    Html,
}

impl CoverageFormat {
    /// Every format, the default first.
    pub const ALL: [CoverageFormat; 6] = [
        CoverageFormat::Text,
        CoverageFormat::Json,
        CoverageFormat::Lcov,
        CoverageFormat::Cobertura,
        CoverageFormat::Svg,
        CoverageFormat::Html,
    ];

    /// Does the report name source files (which a tool then opens)?
    pub fn names_source_files(self) -> bool {
        matches!(self, CoverageFormat::Lcov | CoverageFormat::Cobertura)
    }
}

impl ReportFormat for CoverageFormat {
    fn info(self) -> FormatInfo {
        let (name, description, file) = match self {
            CoverageFormat::Text => (
                "text",
                "A summary, then each method: ran or not, executions, receivers, lines, tests",
                None,
            ),
            CoverageFormat::Json => (
                "json",
                "The coverage model as JSON (with a version field)",
                Some("coverage.json"),
            ),
            CoverageFormat::Lcov => (
                "lcov",
                "LCOV tracefile (genhtml, Codecov, editor gutters)",
                Some("lcov.info"),
            ),
            CoverageFormat::Cobertura => (
                "cobertura",
                "Cobertura XML (CI services)",
                Some("coverage.xml"),
            ),
            CoverageFormat::Svg => (
                "svg",
                "The test blueprint picture (Hapao): classes, methods sized by lines and receivers",
                Some("coverage.svg"),
            ),
            CoverageFormat::Html => (
                "html",
                "One HTML page: the blueprint, its legend and a source view",
                Some("coverage.html"),
            ),
        };
        FormatInfo {
            name,
            aliases: &[],
            description,
            default_file: file.map_or(DefaultFile::Stdout, DefaultFile::Fixed),
        }
    }
}

/// What a coverage report says besides the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoverageOptions {
    /// Cobertura's timestamp: milliseconds since the Unix epoch (as
    /// Cobertura writes it).
    pub timestamp: u64,
}

impl CoverageOptions {
    /// The options of a report written now.
    pub fn now() -> CoverageOptions {
        CoverageOptions {
            timestamp: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(0),
        }
    }
}

/// The test name LCOV records.
const LCOV_TEST: &str = "lupa";

impl Report for Coverage {
    type Format = CoverageFormat;
    type Options = CoverageOptions;
    const FORMATS: &'static [CoverageFormat] = &CoverageFormat::ALL;
    const NOUN: &'static str = "coverage";

    fn write(
        &self,
        format: CoverageFormat,
        options: &CoverageOptions,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        match format {
            CoverageFormat::Text => w.write_all(text::to_string(self).as_bytes()),
            CoverageFormat::Json => w.write_all(self.to_json().as_bytes()),
            CoverageFormat::Lcov => lcov::write(self, LCOV_TEST, w),
            CoverageFormat::Cobertura => cobertura::write(self, options.timestamp, w),
            CoverageFormat::Svg => w.write_all(blueprint::to_string(self).as_bytes()),
            CoverageFormat::Html => w.write_all(page::to_string(self).as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::tests::sample;

    #[test]
    fn formats_and_writers() {
        crate::report::api::tests::check_formats::<Coverage>();
        let c = sample();
        let o = CoverageOptions { timestamp: 7 };
        assert_eq!(c.render(CoverageFormat::Text, &o), text::to_string(&c));
        assert_eq!(
            c.render(CoverageFormat::Lcov, &o),
            lcov::to_string(&c, "lupa")
        );
        assert_eq!(
            c.render(CoverageFormat::Cobertura, &o),
            cobertura::to_string(&c, 7)
        );
    }

    /// A large coverage (4,000 methods of 10 lines in 200 classes of 20
    /// packages, 500 tests, sources for the page) in every format, each in
    /// output linear in its size. Without a timing assertion: a writer
    /// quadratic in the methods or the tests shows as a test that takes
    /// minutes.
    #[test]
    fn every_format_writes_a_large_coverage_in_linear_output() {
        use crate::coverage::{
            ClassCoverage, LineHits, MethodCoverage, MethodSource, TestOutcome, TestResult,
        };
        let (classes, methods, lines) = (200usize, 20usize, 10u32);
        let tests: Vec<String> = (0..500).map(|t| format!("BigTest>>test{t}")).collect();
        let mut c = sample();
        c.classes.clear();
        c.sources.clear();
        c.packages = (0..20).map(|p| format!("Package{p}")).collect();
        for k in 0..classes {
            let name = format!("Class{k}");
            let mut class = ClassCoverage {
                name: name.clone(),
                package: format!("Package{}", k % 20),
                superclass: Some("Object".into()),
                file: Some(format!("Package{}/{name}.som", k % 20)),
                methods: Vec::new(),
            };
            for m in 0..methods {
                let first = 1 + (m as u32) * (lines + 1);
                let selector = format!("method{m}:");
                c.sources.insert(
                    format!("{name}>>{selector}"),
                    MethodSource {
                        text: (0..lines).map(|l| format!("    ^self step{l}\n")).collect(),
                        first_line: first,
                    },
                );
                class.methods.push(MethodCoverage {
                    selector,
                    class_side: m % 7 == 0,
                    line: first,
                    lines_of_code: lines,
                    executions: (k * m) as u64 % 5,
                    receivers: (m % 3) as u64,
                    receivers_estimated: false,
                    tests: tests.iter().skip((k + m) % 490).take(5).cloned().collect(),
                    lines: (0..lines)
                        .map(|l| LineHits {
                            line: first + l,
                            hits: u64::from(l % 2),
                        })
                        .collect(),
                });
            }
            c.classes.push(class);
        }
        c.tests = tests
            .iter()
            .map(|name| TestOutcome {
                name: name.clone(),
                result: TestResult::Pass,
            })
            .collect();
        let units = classes * methods * lines as usize;
        let o = CoverageOptions { timestamp: 7 };
        for f in CoverageFormat::ALL {
            let mut out = Vec::new();
            c.write(f, &o, &mut out).expect("writes");
            assert!(
                out.len() <= units * 1_000,
                "{f:?}: {} bytes for {units} lines",
                out.len()
            );
        }
    }
}
