//! The report options every profiler command takes: `--format` and `-o/--output`.
//!
//! Flattened into each command that produces a profile, parsed into
//! `lupa_prof::report::Format`, and written through `lupa_prof::report::write`,
//! so every profiler offers the same formats with the same names and help.

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use lupa_prof::Profile;
use lupa_prof::report::{self, Format, ReportOptions};
use lupa_vm::VmError;
use std::path::PathBuf;

/// `--format` and `-o` of a profiler command.
#[derive(Args, Debug, Clone)]
pub(crate) struct ReportArgs {
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: ReportFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

/// [`Format`] as a clap value (names and help from `lupa_prof`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReportFormat(pub(crate) Format);

const FORMATS: [ReportFormat; 8] = {
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
    ]
};

impl ValueEnum for ReportFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &FORMATS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.description()))
    }
}

impl ReportArgs {
    /// Write `profile` in the chosen format to the chosen output (a file, or
    /// standard output).
    pub(crate) fn write(&self, profile: &Profile, options: &ReportOptions) -> Result<(), VmError> {
        let mut buf = Vec::new();
        report::write(profile, self.format.0, options, &mut buf)
            .map_err(|e| VmError::Io(format!("cannot encode the report: {e}")))?;
        match &self.output {
            Some(path) => crate::save::save(path, &buf).map_err(VmError::Io),
            None => {
                print!("{}", String::from_utf8_lossy(&buf));
                Ok(())
            }
        }
    }
}
