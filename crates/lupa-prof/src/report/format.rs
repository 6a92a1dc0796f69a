//! The one report API: a [`Format`], its [`ReportOptions`] and [`write()`].
//!
//! Every profiler and every command writes its profile through [`write()`], so a
//! new format appears everywhere at once. The per-format modules stay the
//! writers; this file only chooses one and passes it its options.
//!
//! Contract: `write` produces exactly the bytes of the per-format writer it
//! dispatches to (the snapshots of those modules hold), preceded — for the three
//! terminal formats only — by the [`ReportOptions::header`] lines. Formats are
//! named as on the command line (`lupa count --format NAME`); [`Format::ALL`]
//! lists them in that order, and `name`/`FromStr` round-trip.

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use super::api::{DefaultFile, FormatInfo, Report, ReportFormat};
use super::options::ReportOptions;
use super::{Ranking, callgrind, flamegraph, folded, speedscope, tree};
use crate::profile::{Metric, Profile};

/// A report or export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Header, ranking table and MessageTally-style tree (for the terminal).
    Text,
    /// Header and ranking table only.
    Ranking,
    /// Header and call tree only.
    Tree,
    /// Versioned JSON (`lupa-profile/1`, see `docs/profile.schema.json`).
    Json,
    /// pprof's gzipped profile.proto (binary).
    Pprof,
    /// The Firefox Profiler's processed format.
    Firefox,
    /// Callgrind format: open with KCachegrind/QCachegrind or callgrind_annotate.
    Callgrind,
    /// Folded stacks (flamegraph.pl, inferno, speedscope).
    Folded,
    /// A standalone flame-graph SVG.
    Svg,
    /// speedscope JSON (<https://www.speedscope.app>).
    Speedscope,
    /// A self-contained HTML page: ranking, call tree, flame graph.
    Html,
}

impl Format {
    /// Every format, in the order the command line lists them.
    pub const ALL: [Format; 11] = [
        Format::Text,
        Format::Ranking,
        Format::Tree,
        Format::Json,
        Format::Pprof,
        Format::Firefox,
        Format::Callgrind,
        Format::Folded,
        Format::Svg,
        Format::Speedscope,
        Format::Html,
    ];

    /// The command-line name: `text`, `ranking`, `tree`, `json`, ...
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Other names accepted for this format: `report` for `text` (the name the
    /// VM profiler's paper uses), `flat` for `ranking` (a flat profile).
    pub fn aliases(self) -> &'static [&'static str] {
        self.info().aliases
    }

    /// A one-line description (shown by `--help`).
    pub fn description(self) -> &'static str {
        self.info().description
    }

    /// Whether this is one of the terminal formats (text, ranking, tree) that
    /// start with the [`ReportOptions::header`] lines (and go to standard
    /// output when no file is named).
    pub fn is_terminal_text(self) -> bool {
        self.info().default_file == DefaultFile::Stdout
    }
}

/// A file named after the run with this extension.
const fn named(suffix: &'static str) -> DefaultFile {
    DefaultFile::Named { prefix: "", suffix }
}

impl ReportFormat for Format {
    fn info(self) -> FormatInfo {
        let (name, aliases, description, default_file): (_, &'static [&'static str], _, _) =
            match self {
                Format::Text => (
                    "text",
                    &["report"],
                    "Ranking table and MessageTally-style tree (the default, for the terminal)",
                    DefaultFile::Stdout,
                ),
                Format::Ranking => (
                    "ranking",
                    &["flat"],
                    "Ranking table only",
                    DefaultFile::Stdout,
                ),
                Format::Tree => ("tree", &[], "Call tree only", DefaultFile::Stdout),
                Format::Json => (
                    "json",
                    &[],
                    "Versioned JSON (schema lupa-profile/1, docs/profile.schema.json): methods, processes and their calling-context trees",
                    named(".profile.json"),
                ),
                Format::Pprof => (
                    "pprof",
                    &[],
                    "pprof's gzipped profile.proto: go tool pprof, pprof web UI, Pyroscope",
                    named(".pb.gz"),
                ),
                Format::Firefox => (
                    "firefox",
                    &[],
                    "Firefox Profiler processed format, one thread per process (https://profiler.firefox.com)",
                    named(".firefox.json"),
                ),
                Format::Callgrind => (
                    "callgrind",
                    &[],
                    "Callgrind format: open with KCachegrind/QCachegrind or callgrind_annotate",
                    DefaultFile::Named {
                        prefix: "callgrind.out.",
                        suffix: "",
                    },
                ),
                Format::Folded => (
                    "folded",
                    &[],
                    "Folded stacks (flamegraph.pl, inferno, speedscope)",
                    named(".folded"),
                ),
                Format::Svg => (
                    "svg",
                    &[],
                    "A standalone flame-graph SVG: click to zoom, search (--title, --width, --min-width)",
                    named(".svg"),
                ),
                Format::Speedscope => (
                    "speedscope",
                    &[],
                    "speedscope JSON, one profile per process (https://www.speedscope.app)",
                    named(".speedscope.json"),
                ),
                Format::Html => (
                    "html",
                    &[],
                    "One self-contained HTML page: sortable ranking, expandable call tree, interactive flame graph",
                    named(".html"),
                ),
            };
        FormatInfo {
            name,
            aliases,
            description,
            default_file,
        }
    }
}

impl Report for Profile {
    type Format = Format;
    type Options = ReportOptions;
    const FORMATS: &'static [Format] = &Format::ALL;
    const NOUN: &'static str = "profile";

    /// A profile report is announced by its format: "the callgrind report".
    fn noun(format: Format) -> &'static str {
        format.name()
    }

    fn write(&self, format: Format, options: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        write(self, format, options, w)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that [`Format::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report format `{0}` (expected one of: {names})", names = super::api::names(&Format::ALL))]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        Format::parse(&Format::ALL, s).ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// What the SVG title says the values are: `"message sends"`, `"ns"`, ...
fn metric_phrase(metric: &Metric) -> &str {
    match metric {
        Metric::Sends => "message sends",
        Metric::Nanoseconds => "time",
        other => other.unit(),
    }
}

/// Write `profile` in `format` to `w`. Errors are those of `w` (and, for JSON,
/// an encoding failure reported as [`io::ErrorKind::InvalidData`]).
pub fn write(
    profile: &Profile,
    format: Format,
    options: &ReportOptions,
    w: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Text | Format::Ranking | Format::Tree => {
            let mut out = String::new();
            for line in &options.header {
                out.push_str(line);
                out.push('\n');
            }
            if format != Format::Tree {
                out.push('\n');
                out.push_str(&Ranking::of(profile).to_table(options.top));
                out.push('\n');
            }
            if format != Format::Ranking {
                out.push('\n');
                let opts = tree::TreeOptions {
                    cutoff: options.cutoff,
                    max_depth: options.max_depth,
                };
                out.push_str(&tree::to_string(profile, &opts));
            }
            w.write_all(out.as_bytes())
        }
        Format::Json => super::json::write(profile, options, w),
        Format::Pprof => {
            super::pprof::write(profile, &options.command, options.timeline.as_deref(), w)
        }
        Format::Firefox => {
            super::firefox::write(profile, &options.command, options.timeline.as_deref(), w)
        }
        Format::Callgrind => {
            let opts = callgrind::CallgrindOptions {
                cmd: Some(options.command.clone()),
                extra: timeline_events(profile, options.timeline.as_deref()),
            };
            w.write_all(callgrind::to_string(profile, &opts).as_bytes())
        }
        // Stacks of at most pprof's MAX_STACK frames (the deeper contexts
        // summed into a `[deeper]` line): linear in the profile, as pprof's
        // and speedscope's exports are.
        Format::Folded => folded::write_limited(profile, super::pprof::MAX_STACK, w),
        Format::Svg => {
            let opts = flame_options(profile, options);
            w.write_all(flamegraph::to_string(profile, &opts).as_bytes())
        }
        Format::Speedscope => match options.timeline.as_deref() {
            Some(t) => {
                w.write_all(speedscope::sampled_to_string(profile, t, &options.command).as_bytes())
            }
            None => w.write_all(speedscope::to_string(profile, &options.command, false).as_bytes()),
        },
        Format::Html => {
            let opts = super::html::HtmlOptions {
                title: options.command.clone(),
                header: options.header.iter().skip(1).cloned().collect(),
                cutoff: options.cutoff,
                max_depth: options.max_depth,
                flame: flame_options(profile, options),
            };
            super::html::write(profile, &opts, w)
        }
    }
}

/// A sampled profile's callgrind events beside its metric: `Samples` (unless
/// that is the metric) and `Sends`, per node, from its timeline.
fn timeline_events(
    profile: &Profile,
    timeline: Option<&crate::Timeline>,
) -> Vec<callgrind::ExtraEvent> {
    let Some(t) = timeline else {
        return Vec::new();
    };
    let sums = t.per_node(profile.nodes.len());
    let mut out = Vec::new();
    if profile.metric != crate::Metric::Samples {
        out.push(callgrind::ExtraEvent {
            name: "Samples".to_string(),
            description: "Samples taken".to_string(),
            self_values: sums.iter().map(|s| s.samples).collect(),
        });
    }
    out.push(callgrind::ExtraEvent {
        name: "Sends".to_string(),
        description: "Message sends executed since the previous sample".to_string(),
        self_values: sums.iter().map(|s| s.sends).collect(),
    });
    out
}

/// The flame graph's options from the report's.
fn flame_options(profile: &Profile, options: &ReportOptions) -> flamegraph::FlameGraphOptions {
    let defaults = flamegraph::FlameGraphOptions::default();
    flamegraph::FlameGraphOptions {
        title: options
            .title
            .clone()
            .unwrap_or_else(|| format!("{} ({})", options.command, metric_phrase(&profile.metric))),
        width: options.width.unwrap_or(defaults.width),
        min_width: options.min_width.unwrap_or(defaults.min_width),
        ..defaults
    }
}

/// [`write()`] into a `String` (every format but pprof, which is binary, is UTF-8 text).
pub fn render(profile: &Profile, format: Format, options: &ReportOptions) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail; JSON encoding of a valid profile does not either.
    if write(profile, format, options, &mut buf).is_err() {
        buf.clear();
    }
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;

    fn opts() -> ReportOptions {
        ReportOptions {
            max_depth: None,
            estimate: None,
            sampling: None,
            timeline: None,
            title: None,
            width: None,
            min_width: None,
            command: "lupa count Main".into(),
            header: vec!["lupa count Main".into(), "72 sends".into()],
            top: Some(3),
            cutoff: 0.05,
        }
    }

    /// Every format writes a 20,000-deep recursion (200 million frames if
    /// each context listed its whole stack) in output linear in its depth,
    /// with the options the commands use. Without a timing assertion: a
    /// quadratic writer shows as a test that takes minutes (as speedscope's
    /// sampled writer did, 18 s, before its stacks shared their prefix).
    #[test]
    fn every_format_writes_a_deep_recursion_in_linear_output() {
        let depth = 20_000;
        let mut b = crate::ProfileBuilder::new(Metric::Sends);
        let m = b.add_method(crate::MethodInfo::new("Deep", "rec:"));
        for _ in 0..depth {
            b.enter(m);
            b.add_self(1);
        }
        let p = b.finish();
        for f in Format::ALL {
            let mut out = Vec::new();
            write(&p, f, &ReportOptions::default(), &mut out).expect("writes");
            assert!(
                out.len() <= depth * 1_000,
                "{f}: {} bytes for a {depth}-deep recursion",
                out.len()
            );
        }
    }

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
            assert!(!f.description().is_empty());
        }
        assert_eq!(
            "pdf".parse::<Format>(),
            Err(UnknownFormat("pdf".to_string()))
        );
        assert!("Text".parse::<Format>().is_err());
        assert_eq!("report".parse::<Format>(), Ok(Format::Text));
        assert_eq!("flat".parse::<Format>(), Ok(Format::Ranking));
    }

    #[test]
    fn terminal_formats_compose_header_ranking_and_tree() {
        let p = sample_profile();
        let o = opts();
        let table = Ranking::of(&p).to_table(Some(3));
        let tree = tree::to_string(
            &p,
            &tree::TreeOptions {
                cutoff: 0.05,
                max_depth: None,
            },
        );
        let head = "lupa count Main\n72 sends\n";
        assert_eq!(
            render(&p, Format::Text, &o),
            format!("{head}\n{table}\n\n{tree}")
        );
        assert_eq!(
            render(&p, Format::Ranking, &o),
            format!("{head}\n{table}\n")
        );
        assert_eq!(render(&p, Format::Tree, &o), format!("{head}\n{tree}"));
    }

    #[test]
    fn exports_are_the_writers_bytes() {
        let p = sample_profile();
        let o = opts();
        let mut json = Vec::new();
        super::super::json::write(&p, &o, &mut json).expect("json");
        assert_eq!(render(&p, Format::Json, &o), String::from_utf8_lossy(&json));
        assert_eq!(
            render(&p, Format::Callgrind, &o),
            callgrind::to_string(
                &p,
                &callgrind::CallgrindOptions {
                    cmd: Some("lupa count Main".into()),
                    extra: Vec::new(),
                }
            )
        );
        assert_eq!(render(&p, Format::Folded, &o), folded::to_string(&p));
        let svg = render(&p, Format::Svg, &o);
        assert!(svg.starts_with("<?xml") || svg.starts_with("<svg"));
        assert!(svg.contains("lupa count Main (message sends)"));
        assert_eq!(
            render(&p, Format::Speedscope, &o),
            speedscope::to_string(&p, "lupa count Main", false)
        );
    }

    #[test]
    fn write_reports_writer_errors() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("broken"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let p = sample_profile();
        for f in Format::ALL {
            assert!(write(&p, f, &opts(), &mut Broken).is_err(), "{f}");
        }
    }
}
