//! `lupa calibrate`: Compteur's message rate from a basket of programs (the
//! experiment is `lupa_lab::calibrate`); this file parses the options, shows
//! progress, saves the calibration and prints the report.

use clap::Args;
use lupa_lab::LabError;
use lupa_lab::calibrate::{self, default_basket};
use lupa_prof::calibration::Program;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::progress::status_line;
use crate::vm_args::{VmArgs, options, report};

/// `lupa calibrate` arguments.
#[derive(Args, Debug)]
pub(crate) struct CalibrateArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// Runs of each program.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// A program of the basket, as `CLASS ARG...` (repeatable; default: the bundled benchmarks and
    /// test suites).
    #[arg(long = "program", value_name = "CLASS ARGS")]
    programs: Vec<String>,
    /// Keep the identity-hash seed fixed (then every run sends exactly the same messages).
    #[arg(long)]
    fixed_seed: bool,
    /// Where to save the calibration (read by `lupa count`).
    #[arg(long, value_name = "FILE", default_value = "lupa-calibration.json")]
    save: PathBuf,
    /// Do not save the calibration.
    #[arg(long)]
    no_save: bool,
}

fn run(c: &CalibrateArgs) -> Result<String, LabError> {
    let programs = if c.programs.is_empty() {
        default_basket()
    } else {
        c.programs
            .iter()
            .filter_map(|p| Program::parse(p))
            .collect()
    };
    let done = calibrate::calibrate(
        &options(&c.vm),
        &programs,
        c.runs.max(2),
        !c.fixed_seed,
        &mut status_line,
    )?;
    let mut out = done.report.to_text();
    if !c.no_save {
        // Said before the file is written, so that a poor calibration is never saved unannounced.
        for p in &done.problems {
            eprintln!("lupa calibrate: warning: {p}; saving it anyway");
        }
        let json = done
            .calibration
            .to_json()
            .map_err(|e| LabError::Io(e.to_string()))?;
        crate::save::save(&c.save, json.as_bytes()).map_err(LabError::Io)?;
        out.push_str(&format!(
            "calibration saved to {} (used by `lupa count` to estimate time)\n",
            c.save.display()
        ));
    }
    Ok(out)
}

/// Run `lupa calibrate`.
pub(crate) fn main(c: &CalibrateArgs) -> ExitCode {
    match run(c) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => report(&e.into()),
    }
}
