//! Hip's outputs as [`Report`]s: a diff of two versions ([`HistoryDiff`]: of
//! send counts, of sampled time, or of call stacks), the list of versions
//! ([`VersionLog`]) and one method across versions ([`Series`]).
//!
//! Contract: a diff is written in the formats its kind has: send counts as
//! text, JSON, the semaphore SVG and its HTML page; sampled time as text and
//! JSON; call stacks as the differential flame graph and difffolded lines
//! ([`DiffFormat::needs_stacks`]); any other combination is an
//! [`io::ErrorKind::InvalidInput`] error. Every history report goes to
//! standard output unless a file is named.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::report::api::unsupported;
use crate::report::{DefaultFile, FormatInfo, Report, ReportFormat};

use super::timed::TimeDiff;
use super::{Diff, Series, VersionInfo, flame, picture, text, timed};

/// Two versions' call stacks (folded: `frame;frame value`, by stack).
#[derive(Debug, Clone, PartialEq)]
pub struct StackDiff {
    /// The earlier version.
    pub from: VersionInfo,
    /// Its stacks.
    pub before: Vec<(String, u64)>,
    /// The later version.
    pub to: VersionInfo,
    /// Its stacks.
    pub after: Vec<(String, u64)>,
    /// Each frame's package (the flame graph's categories).
    pub packages: BTreeMap<String, String>,
}

/// What `lupa history diff` compares.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryDiff {
    /// Exact send counts per method, class and package.
    Sends(Diff),
    /// Sampled time per method, with Welch's test.
    Time(TimeDiff),
    /// Call stacks.
    Stacks(StackDiff),
}

/// The formats of a history diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiffFormat {
    /// Tables.
    Text,
    /// JSON.
    Json,
    /// The semaphore picture.
    Svg,
    /// The HTML page.
    Html,
    /// A differential flame graph.
    Flamegraph,
    /// Difffolded lines.
    FoldedDiff,
}

impl DiffFormat {
    /// Every format, the default first.
    pub const ALL: [DiffFormat; 6] = [
        DiffFormat::Text,
        DiffFormat::Json,
        DiffFormat::Svg,
        DiffFormat::Html,
        DiffFormat::Flamegraph,
        DiffFormat::FoldedDiff,
    ];

    /// Is this a format of call stacks ([`HistoryDiff::Stacks`])?
    pub fn needs_stacks(self) -> bool {
        matches!(self, DiffFormat::Flamegraph | DiffFormat::FoldedDiff)
    }
}

impl ReportFormat for DiffFormat {
    fn info(self) -> FormatInfo {
        let (name, aliases, description): (_, &'static [&'static str], _) = match self {
            DiffFormat::Text => ("text", &[], "Tables of packages, classes and methods"),
            DiffFormat::Json => ("json", &[], "A JSON document (lupa-history-diff/1)"),
            DiffFormat::Svg => (
                "svg",
                &[],
                "The semaphore picture: classes as boxes of method squares coloured by state",
            ),
            DiffFormat::Html => ("html", &[], "One HTML page: the picture and the tables"),
            DiffFormat::Flamegraph => (
                "flamegraph",
                &["diff-svg"],
                "A differential flame graph (SVG) of the later version, frames coloured by the change of their sends from the earlier one (red more, blue fewer)",
            ),
            DiffFormat::FoldedDiff => (
                "folded-diff",
                &[],
                "Brendan Gregg's difffolded lines: `stack count1 count2`",
            ),
        };
        FormatInfo {
            name,
            aliases,
            description,
            default_file: DefaultFile::Stdout,
        }
    }
}

/// A JSON document, or its encoding error as an I/O error.
fn json(doc: serde_json::Result<String>) -> io::Result<String> {
    doc.map_err(io::Error::from)
}

impl Report for HistoryDiff {
    type Format = DiffFormat;
    type Options = text::TextOptions;
    const FORMATS: &'static [DiffFormat] = &DiffFormat::ALL;
    const NOUN: &'static str = "history diff";

    fn write(
        &self,
        format: DiffFormat,
        options: &text::TextOptions,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let out = match (self, format) {
            (HistoryDiff::Sends(d), DiffFormat::Text) => text::diff_text(d, *options),
            (HistoryDiff::Sends(d), DiffFormat::Json) => json(text::diff_json(d))?,
            (HistoryDiff::Sends(d), DiffFormat::Svg) => picture::svg(d),
            (HistoryDiff::Sends(d), DiffFormat::Html) => picture::html(d),
            (HistoryDiff::Time(d), DiffFormat::Text) => {
                timed::diff_text(d, options.all, options.top)
            }
            (HistoryDiff::Time(d), DiffFormat::Json) => json(timed::diff_json(d))?,
            (HistoryDiff::Stacks(s), DiffFormat::FoldedDiff) => {
                flame::folded_diff(&s.before, &s.after)
            }
            (HistoryDiff::Stacks(s), DiffFormat::Flamegraph) => {
                let package_of = |frame: &str| s.packages.get(frame).cloned().unwrap_or_default();
                flame::diff_svg(&s.from, &s.before, &s.to, &s.after, &package_of)
            }
            (HistoryDiff::Sends(_), _) => {
                return Err(unsupported("a diff of sends", format.info()));
            }
            (HistoryDiff::Time(_), _) => return Err(unsupported("a diff of time", format.info())),
            (HistoryDiff::Stacks(_), _) => {
                return Err(unsupported("a diff of call stacks", format.info()));
            }
        };
        w.write_all(out.as_bytes())
    }
}

/// The formats of the lists of `lupa history log` and `show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListFormat {
    /// A table.
    Text,
    /// A JSON document.
    Json,
}

impl ListFormat {
    /// Every format, the default first.
    pub const ALL: [ListFormat; 2] = [ListFormat::Text, ListFormat::Json];
}

impl ReportFormat for ListFormat {
    fn info(self) -> FormatInfo {
        let (name, description) = match self {
            ListFormat::Text => ("text", "A table"),
            ListFormat::Json => ("json", "A JSON document"),
        };
        FormatInfo {
            name,
            aliases: &[],
            description,
            default_file: DefaultFile::Stdout,
        }
    }
}

/// The recorded versions, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VersionLog(pub Vec<VersionInfo>);

impl Report for VersionLog {
    type Format = ListFormat;
    type Options = ();
    const FORMATS: &'static [ListFormat] = &ListFormat::ALL;
    const NOUN: &'static str = "history log";

    fn write(&self, format: ListFormat, _: &(), w: &mut dyn Write) -> io::Result<()> {
        let out = match format {
            ListFormat::Text => text::log_text(&self.0),
            ListFormat::Json => json(text::log_json(&self.0))?,
        };
        w.write_all(out.as_bytes())
    }
}

/// What a [`Series`] report marks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeriesOptions {
    /// The id of the version flagged `*` (and described) in the text.
    pub mark: Option<i64>,
}

impl Report for Series {
    type Format = ListFormat;
    type Options = SeriesOptions;
    const FORMATS: &'static [ListFormat] = &ListFormat::ALL;
    const NOUN: &'static str = "history series";

    fn write(
        &self,
        format: ListFormat,
        options: &SeriesOptions,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        let out = match format {
            ListFormat::Text => text::series_text(self, options.mark),
            ListFormat::Json => json(text::series_json(self))?,
        };
        w.write_all(out.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::{sample_diff, version};
    use super::*;

    #[test]
    fn formats() {
        crate::report::api::tests::check_formats::<HistoryDiff>();
        crate::report::api::tests::check_formats::<VersionLog>();
        crate::report::api::tests::check_formats::<Series>();
    }

    #[test]
    fn each_diff_in_its_formats() {
        let d = sample_diff();
        let sends = HistoryDiff::Sends(d.clone());
        let o = text::TextOptions::default();
        assert_eq!(sends.render(DiffFormat::Text, &o), text::diff_text(&d, o));
        assert_eq!(sends.render(DiffFormat::Svg, &o), picture::svg(&d));
        let mut sink = Vec::new();
        let e = sends
            .write(DiffFormat::Flamegraph, &o, &mut sink)
            .expect_err("no stacks");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let stacks = HistoryDiff::Stacks(StackDiff {
            from: version(1, "a"),
            before: vec![("a;b".into(), 1)],
            to: version(2, "b"),
            after: vec![("a;b".into(), 2)],
            packages: BTreeMap::new(),
        });
        assert_eq!(stacks.render(DiffFormat::FoldedDiff, &o), "a;b 1 2\n");
        assert!(stacks.write(DiffFormat::Text, &o, &mut sink).is_err());
    }
}
