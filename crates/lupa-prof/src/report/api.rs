//! The one report shape: every model this crate writes ([`crate::Profile`],
//! [`crate::coverage::Coverage`], [`crate::lifetimes::Lifetimes`],
//! [`crate::types::Types`], [`crate::blueprint::Blueprint`], Hip's
//! [`crate::history::HistoryDiff`], [`crate::history::VersionLog`] and
//! [`crate::history::Series`], and the experiments' [`crate::table::Table`])
//! is a [`Report`]: it answers its formats, each with its name, aliases,
//! description and default file ([`FormatInfo`]), and writes itself in one of
//! them to any writer.
//!
//! A command line derives everything about `--format` and `-o` from this:
//! the accepted names and their help ([`Report::FORMATS`]), where a report
//! goes without `-o` ([`FormatInfo::default_file`]), and what the report is
//! called when it is announced ([`Report::noun`]); a new format appears
//! there by itself.
//!
//! Contract: [`Report::FORMATS`] is not empty, its first format is the
//! default, and names and aliases are unique within one report;
//! [`ReportFormat::parse`] accepts exactly the names and aliases;
//! [`Report::write`] streams the report to the writer and fails only with the
//! writer's errors (or, for a format a report cannot take, an
//! [`io::ErrorKind::InvalidInput`] error naming it).

use std::fmt;
use std::io::{self, Write};

/// Where a report goes when no file is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefaultFile {
    /// Standard output, after the program's own output: a report for the
    /// terminal.
    Stdout,
    /// A file named after the run (its main class, e.g. `Foo`): `prefix`,
    /// the name, `suffix` (`callgrind.out.Foo`, `Foo.pb.gz`).
    Named {
        /// Before the name.
        prefix: &'static str,
        /// After the name.
        suffix: &'static str,
    },
    /// A file of this name (`coverage.json`).
    Fixed(&'static str),
}

impl DefaultFile {
    /// The file for a run named `stem`; `None` for standard output.
    pub fn file_name(self, stem: &str) -> Option<String> {
        match self {
            DefaultFile::Stdout => None,
            DefaultFile::Named { prefix, suffix } => Some(format!("{prefix}{stem}{suffix}")),
            DefaultFile::Fixed(name) => Some(name.to_string()),
        }
    }

    /// How `--help` names it, the run's name written `stem`.
    pub fn describe(self, stem: &str) -> String {
        self.file_name(stem)
            .unwrap_or_else(|| "standard output".to_string())
    }
}

/// What a command line says of one format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FormatInfo {
    /// Its name (`--format NAME`).
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// One line for `--help`.
    pub description: &'static str,
    /// Where it goes without `-o`.
    pub default_file: DefaultFile,
}

/// The formats of one report: a small `Copy` enum whose variants each have
/// a [`FormatInfo`].
pub trait ReportFormat: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// Its name, aliases, description and default file.
    fn info(self) -> FormatInfo;

    /// The format called `name` (or an alias) among `all`.
    fn parse(all: &[Self], name: &str) -> Option<Self> {
        all.iter()
            .copied()
            .find(|f| f.info().name == name || f.info().aliases.contains(&name))
    }
}

/// A report: a model that writes itself in any of its formats.
pub trait Report {
    /// Its formats.
    type Format: ReportFormat;
    /// What the writer is told besides the model (tree depth, page kind...).
    type Options: Default;
    /// Every format, the default first, in the order `--help` lists them.
    const FORMATS: &'static [Self::Format];
    /// What the report is called in messages: `coverage`, `lifetime`...
    const NOUN: &'static str;

    /// What a report in `format` is called when it is announced ("wrote the
    /// NOUN report to FILE"): [`Report::NOUN`] unless a report says otherwise.
    fn noun(format: Self::Format) -> &'static str {
        let _ = format;
        Self::NOUN
    }

    /// Write the report in `format` to `w`.
    fn write(
        &self,
        format: Self::Format,
        options: &Self::Options,
        w: &mut dyn Write,
    ) -> io::Result<()>;

    /// [`Report::write`] into a `String` (lossy for a binary format).
    fn render(&self, format: Self::Format, options: &Self::Options) -> String {
        let mut buf = Vec::new();
        // Writing to a Vec fails only when the report cannot be encoded.
        if self.write(format, options, &mut buf).is_err() {
            buf.clear();
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// The error of a report asked for a format it cannot be written in.
pub fn unsupported(what: &str, format: FormatInfo) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} cannot be written as {}", format.name),
    )
}

/// The names of `formats`, comma-separated (for error messages).
pub fn names<F: ReportFormat>(formats: &[F]) -> String {
    formats
        .iter()
        .map(|f| f.info().name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every report's formats keep the contract.
    pub(crate) fn check_formats<R: Report>() {
        assert!(!R::FORMATS.is_empty());
        let mut seen = std::collections::BTreeSet::new();
        for &f in R::FORMATS {
            let i = f.info();
            assert!(!i.description.is_empty(), "{}", i.name);
            for n in std::iter::once(i.name).chain(i.aliases.iter().copied()) {
                assert!(seen.insert(n), "{n} twice");
                assert_eq!(R::Format::parse(R::FORMATS, n), Some(f));
            }
        }
        assert_eq!(R::Format::parse(R::FORMATS, "no-such-format"), None);
    }

    #[test]
    fn default_files() {
        assert_eq!(DefaultFile::Stdout.file_name("Foo"), None);
        assert_eq!(
            DefaultFile::Named {
                prefix: "callgrind.out.",
                suffix: ""
            }
            .file_name("Foo")
            .as_deref(),
            Some("callgrind.out.Foo")
        );
        assert_eq!(
            DefaultFile::Fixed("coverage.json").describe("Foo"),
            "coverage.json"
        );
        assert_eq!(DefaultFile::Stdout.describe("Foo"), "standard output");
    }
}
