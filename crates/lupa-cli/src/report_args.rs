//! The report options every profiler command takes: `--format` and `-o/--output`.
//!
//! Flattened into each command that produces a profile, parsed into
//! `lupa_prof::report::Format`, and written through `lupa_prof::report::write`,
//! so every profiler offers the same formats with the same names and help.

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use lupa_prof::Profile;
use lupa_prof::report::{self, Format, ReportOptions};
use lupa_vm::{Vm, VmError};
use std::path::PathBuf;

/// `--format` and `-o` of a profiler command.
#[derive(Args, Debug, Clone)]
pub(crate) struct ReportArgs {
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: ReportFormat,
    /// Write the report to FILE (checked before the program runs). `-o -`
    /// writes it to standard output and sends the program's own output to
    /// standard error. Without -o, text reports go to standard output after
    /// the program's output, and machine-readable formats to a file named
    /// after the class (e.g. `callgrind.out.Foo`, `Foo.pb.gz`), announced on standard error.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Flame graph (svg): its title (default: the command and the metric).
    #[arg(long)]
    pub(crate) title: Option<String>,
    /// Flame graph (svg): its width in pixels (default 1200).
    #[arg(long, value_name = "PIXELS")]
    pub(crate) width: Option<f64>,
    /// Flame graph (svg): leave out frames narrower than this many pixels (default 0.1).
    #[arg(long, value_name = "PIXELS")]
    pub(crate) min_width: Option<f64>,
}

/// Where a report goes, decided before the program runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Destination {
    /// Standard output, after the program's own output (text reports).
    Stdout,
    /// Standard output only; the program's output was sent to standard error.
    StdoutOnly,
    /// A file (given with -o, or the default for a machine format).
    File {
        /// The file.
        path: PathBuf,
        /// Chosen by Lupa (announced on standard error once written).
        default: bool,
    },
}

/// [`Format`] as a clap value (names and help from `lupa_prof`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReportFormat(pub(crate) Format);

const FORMATS: [ReportFormat; 11] = {
    let a = Format::ALL;
    [
        ReportFormat(a[0]),
        ReportFormat(a[1]),
        ReportFormat(a[2]),
        ReportFormat(a[3]),
        ReportFormat(a[4]),
        ReportFormat(a[5]),
        ReportFormat(a[6]),
        ReportFormat(a[7]),
        ReportFormat(a[8]),
        ReportFormat(a[9]),
        ReportFormat(a[10]),
    ]
};

impl ValueEnum for ReportFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &FORMATS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(
            PossibleValue::new(self.0.name())
                .aliases(self.0.aliases().iter().copied())
                .help(self.0.description()),
        )
    }
}

impl ReportArgs {
    /// Decide where the report of a run of `class` goes, and prepare for it
    /// before the program runs: an unwritable file is an error now (exit 74),
    /// and `-o -` sends the program's output to standard error so standard
    /// output holds the report alone. Machine-readable output never mixes
    /// with the program's output.
    pub(crate) fn prepare(&self, vm: &mut Vm, class: &str) -> Result<Destination, VmError> {
        let dest = match &self.output {
            Some(p) if p.as_os_str() == "-" => Destination::StdoutOnly,
            Some(p) => Destination::File {
                path: p.clone(),
                default: false,
            },
            None if self.format.0.is_terminal_text() => Destination::Stdout,
            None => Destination::File {
                path: PathBuf::from(self.format.0.default_file_name(class)),
                default: true,
            },
        };
        match &dest {
            Destination::File { path, .. } => {
                crate::save::check_writable(path).map_err(VmError::Io)?;
            }
            Destination::StdoutOnly => vm.io.send_output_to_stderr()?,
            Destination::Stdout => {}
        }
        Ok(dest)
    }

    /// Write `profile` in the chosen format to `dest` (from [`ReportArgs::prepare`]).
    pub(crate) fn write(
        &self,
        profile: &Profile,
        options: &ReportOptions,
        dest: &Destination,
    ) -> Result<(), VmError> {
        let mut buf = Vec::new();
        report::write(profile, self.format.0, options, &mut buf)
            .map_err(|e| VmError::Io(format!("cannot encode the report: {e}")))?;
        let (path, default) = match dest {
            Destination::File { path, default } => (Some(path.as_path()), *default),
            Destination::Stdout | Destination::StdoutOnly => (None, false),
        };
        crate::save::deliver(path, &buf, &self.format.0.to_string(), default).map_err(VmError::Io)
    }
}
