//! The report options of every command that writes a report: `--format` and
//! `-o/--output`, one [`ReportArgs`] for all, generic over the report
//! ([`lupa_prof::Report`]).
//!
//! Everything about them comes from the report's formats: `--format`'s
//! values, aliases and help ([`Report::FORMATS`], [`FormatInfo`]), its
//! default (the first format), the `-o` help listing where each format goes
//! without `-o`, the default file ([`FormatInfo::default_file`]) and the
//! word that announces it ([`Report::noun`]). A format added to a report
//! appears here by itself.

use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Arg, ArgMatches, Args, FromArgMatches};
use lupa_prof::report::{DefaultFile, FormatInfo, Report, ReportFormat};
use lupa_vm::{Vm, VmError};

/// `--format` and `-o` of a command writing an `R`.
pub(crate) struct ReportArgs<R: Report> {
    /// The format chosen (the first of `R::FORMATS` by default).
    pub(crate) format: R::Format,
    /// `-o FILE`, `-o -`, or nothing.
    pub(crate) output: Option<PathBuf>,
    report: PhantomData<fn() -> R>,
}

impl<R: Report> Clone for ReportArgs<R> {
    fn clone(&self) -> Self {
        ReportArgs {
            format: self.format,
            output: self.output.clone(),
            report: PhantomData,
        }
    }
}

impl<R: Report> std::fmt::Debug for ReportArgs<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportArgs")
            .field("format", &self.format.info().name)
            .field("output", &self.output)
            .finish()
    }
}

/// Where a report goes, decided before the program runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Destination {
    /// Standard output (after the program's own output, or alone with `-o -`).
    Stdout,
    /// A file (given with -o, or the default of the format).
    File {
        /// The file.
        path: PathBuf,
        /// Chosen by Lupa: announced on standard error once written.
        announce: bool,
    },
}

impl Destination {
    /// The file, if the report goes to one.
    pub(crate) fn file(&self) -> Option<&Path> {
        match self {
            Destination::File { path, .. } => Some(path),
            Destination::Stdout => None,
        }
    }
}

/// The name a run's report files take by default: the class and its
/// arguments joined by `-` (`Harness-Richards-10`), so that runs of one class
/// with other arguments do not overwrite each other's reports. Characters
/// other than letters, digits, `.`, `_` and `-` become `_`; at most 100.
pub(crate) fn run_stem(program: &[String]) -> String {
    let joined = program.join("-");
    let clean: String = joined
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if clean.is_empty() {
        "lupa".to_string()
    } else {
        clean
    }
}

/// The `-o` help of a report: where each format goes without `-o`.
fn output_help<R: Report>() -> String {
    let mut terminal = Vec::new();
    let mut files = Vec::new();
    for f in R::FORMATS {
        let i = f.info();
        match i.default_file {
            DefaultFile::Stdout => terminal.push(i.name),
            file => files.push(format!("{} to {}", i.name, file.describe("CLASS-ARGS"))),
        }
    }
    let mut without = Vec::new();
    if !terminal.is_empty() {
        without.push(format!(
            "{} to standard output (after the program's own output)",
            terminal.join(", ")
        ));
    }
    if !files.is_empty() {
        without.push(format!(
            "{} (announced on standard error)",
            files.join(", ")
        ));
    }
    format!(
        "Write the report to FILE (checked before the program runs). `-o -` writes it to standard \
output, and the program's own output to standard error. Without -o: {}",
        without.join("; ")
    )
}

/// `--format`'s value parser: the report's format names and aliases, each
/// with its description.
fn format_parser<F: ReportFormat>(all: &'static [F]) -> impl TypedValueParser<Value = F> {
    let values = all.iter().map(|f| {
        let i: FormatInfo = f.info();
        PossibleValue::new(i.name)
            .aliases(i.aliases.iter().copied())
            .help(i.description)
    });
    PossibleValuesParser::new(values).try_map(move |name: String| {
        F::parse(all, &name).ok_or_else(|| format!("unknown format `{name}`"))
    })
}

impl<R: Report> Args for ReportArgs<R> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let default = R::FORMATS.first().map(|f| f.info().name);
        cmd.arg(
            Arg::new("format")
                .long("format")
                .value_name("FORMAT")
                .help("Report format")
                .default_value(default)
                .value_parser(format_parser(R::FORMATS)),
        )
        .arg(
            Arg::new("output")
                .long("output")
                .short('o')
                .value_name("FILE")
                .help(output_help::<R>())
                .value_parser(clap::value_parser!(PathBuf)),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl<R: Report> FromArgMatches for ReportArgs<R> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut m.clone())
    }

    fn from_arg_matches_mut(m: &mut ArgMatches) -> Result<Self, clap::Error> {
        let format = m
            .remove_one::<R::Format>("format")
            .or_else(|| R::FORMATS.first().copied())
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingRequiredArgument))?;
        Ok(ReportArgs {
            format,
            output: m.remove_one::<PathBuf>("output"),
            report: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.update_from_arg_matches_mut(&mut m.clone())
    }

    fn update_from_arg_matches_mut(&mut self, m: &mut ArgMatches) -> Result<(), clap::Error> {
        if let Some(f) = m.remove_one::<R::Format>("format") {
            self.format = f;
        }
        if let Some(o) = m.remove_one::<PathBuf>("output") {
            self.output = Some(o);
        }
        Ok(())
    }
}

impl<R: Report> ReportArgs<R> {
    /// Is `-o -` given?
    fn to_stdout_only(&self) -> bool {
        self.output.as_deref().is_some_and(|p| p.as_os_str() == "-")
    }

    /// Where the report of a run named `stem` (its class) goes: `-o FILE`,
    /// standard output (`-o -`, or a terminal format), or the format's
    /// default file. A file is checked writable now (exit 74 otherwise).
    pub(crate) fn destination(&self, stem: &str) -> Result<Destination, VmError> {
        let dest = match &self.output {
            Some(_) if self.to_stdout_only() => Destination::Stdout,
            Some(p) => Destination::File {
                path: p.clone(),
                announce: false,
            },
            None => match self.format.info().default_file.file_name(stem) {
                None => Destination::Stdout,
                Some(name) => Destination::File {
                    path: PathBuf::from(name),
                    announce: true,
                },
            },
        };
        if let Destination::File { path, .. } = &dest {
            crate::save::check_writable(path).map_err(VmError::Io)?;
        }
        Ok(dest)
    }

    /// [`ReportArgs::destination`] before a program runs in `vm`; with `-o -`
    /// the program's own output goes to standard error, so that standard
    /// output holds the report alone.
    pub(crate) fn prepare(&self, vm: &mut Vm, stem: &str) -> Result<Destination, VmError> {
        let dest = self.destination(stem)?;
        if self.to_stdout_only() {
            vm.io.send_output_to_stderr()?;
        }
        Ok(dest)
    }

    /// Write `report` with `options` in the chosen format to `dest`: a file
    /// atomically (announced when Lupa chose it), or standard output.
    pub(crate) fn deliver(
        &self,
        report: &R,
        options: &R::Options,
        dest: &Destination,
    ) -> Result<(), VmError> {
        let write = |w: &mut dyn Write| report.write(self.format, options, w);
        match dest {
            Destination::File { path, announce } => {
                crate::save::save_with(path, write).map_err(VmError::Io)?;
                if *announce {
                    eprintln!(
                        "lupa: wrote the {} report to {} (-o FILE to choose, -o - for standard output)",
                        R::noun(self.format),
                        path.display()
                    );
                }
                Ok(())
            }
            Destination::Stdout => {
                let mut out = std::io::stdout().lock();
                write(&mut out).and_then(|()| out.flush()).map_err(|e| {
                    VmError::Io(format!("cannot write the report to standard output: {e}"))
                })
            }
        }
    }
}

/// The report arguments parsed from `args` (tests).
#[cfg(test)]
fn parse<R: Report>(args: &[&str]) -> Result<ReportArgs<R>, clap::Error> {
    let cmd = ReportArgs::<R>::augment_args(clap::Command::new("lupa"));
    let m = cmd.try_get_matches_from(args.iter().map(std::ffi::OsString::from))?;
    ReportArgs::<R>::from_arg_matches(&m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// A report made up here, with formats no real report has.
    struct Fake;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum FakeFormat {
        Plain,
        Fancy,
        Brand,
    }

    impl ReportFormat for FakeFormat {
        fn info(self) -> FormatInfo {
            let (name, aliases, description, default_file): (_, &'static [&'static str], _, _) =
                match self {
                    FakeFormat::Plain => ("plain", &[], "The plain one", DefaultFile::Stdout),
                    FakeFormat::Fancy => (
                        "fancy",
                        &["posh"],
                        "The fancy one",
                        DefaultFile::Fixed("fancy.out"),
                    ),
                    FakeFormat::Brand => (
                        "brand-new",
                        &[],
                        "A format added yesterday",
                        DefaultFile::Named {
                            prefix: "",
                            suffix: ".new",
                        },
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

    impl Report for Fake {
        type Format = FakeFormat;
        type Options = ();
        const FORMATS: &'static [FakeFormat] =
            &[FakeFormat::Plain, FakeFormat::Fancy, FakeFormat::Brand];
        const NOUN: &'static str = "fake";

        fn write(&self, format: FakeFormat, _: &(), w: &mut dyn Write) -> io::Result<()> {
            w.write_all(format.info().name.as_bytes())
        }
    }

    /// A format a report declares is in `--format` and `--help` by itself:
    /// its name, alias and description, and where it goes without -o.
    #[test]
    fn formats_come_from_the_report() {
        let mut cmd = ReportArgs::<Fake>::augment_args(clap::Command::new("lupa"));
        let help = cmd.render_long_help().to_string();
        for f in Fake::FORMATS {
            let i = f.info();
            assert!(help.contains(i.name), "{help}");
            assert!(help.contains(i.description), "{help}");
        }
        assert!(help.contains("brand-new to CLASS-ARGS.new"), "{help}");
        assert!(help.contains("fancy to fancy.out"), "{help}");
        assert!(help.contains("[default: plain]"), "{help}");
        let a = parse::<Fake>(&["lupa", "--format", "brand-new"]).expect("parses");
        assert_eq!(a.format, FakeFormat::Brand);
        assert_eq!(
            a.destination("Foo").expect("writable"),
            Destination::File {
                path: PathBuf::from("Foo.new"),
                announce: true
            }
        );
        let a = parse::<Fake>(&["lupa", "--format", "posh", "-o", "-"]).expect("alias");
        assert_eq!(a.format, FakeFormat::Fancy);
        assert_eq!(a.destination("Foo").expect("stdout"), Destination::Stdout);
        assert_eq!(
            parse::<Fake>(&["lupa"]).expect("default").format,
            FakeFormat::Plain
        );
        let e = parse::<Fake>(&["lupa", "--format", "pdf"]).expect_err("unknown");
        assert!(e.to_string().contains("brand-new"), "{e}");
    }

    /// Every profile format of lupa_prof is a value of `lupa count --format`.
    #[test]
    fn every_profile_format_is_offered() {
        use lupa_prof::report::Format;
        let mut cmd = ReportArgs::<lupa_prof::Profile>::augment_args(clap::Command::new("count"));
        let help = cmd.render_long_help().to_string();
        for f in Format::ALL {
            assert!(help.contains(f.description()), "{}: {help}", f.name());
            assert_eq!(
                parse::<lupa_prof::Profile>(&["count", "--format", f.name()])
                    .expect("parses")
                    .format,
                f
            );
        }
        assert!(help.contains("callgrind to callgrind.out.CLASS"), "{help}");
    }
}
