//! `lupa calibrate`: the message rate of a basket of programs (Compteur,
//! section 3), saved for `lupa count`'s time estimate. The experiment is in
//! `crate::calibrate`.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

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

/// Run `lupa calibrate`.
pub(crate) fn main(c: &CalibrateArgs) -> ExitCode {
    let programs = if c.programs.is_empty() {
        lupa_profilers::calibration::default_basket()
    } else {
        c.programs
            .iter()
            .filter_map(|p| lupa_profilers::calibration::Program::parse(p))
            .collect()
    };
    let save = (!c.no_save).then_some(c.save.as_path());
    match crate::calibrate::calibrate(
        &options(&c.vm),
        &programs,
        c.runs.max(2),
        !c.fixed_seed,
        save,
    ) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => report(&e),
    }
}
