//! `lupa stability`: the ranking instability of counted and timed profiles
//! (the experiment is `lupa_lab::stability`); this file parses the options,
//! shows progress and prints the report.

use clap::Args;
use lupa_prof::calibration::Program;
use std::process::ExitCode;

use crate::commands::run::program_args;
use crate::progress::status_line;
use crate::vm_args::{VmArgs, options, report};

/// `lupa stability` arguments.
#[derive(Args, Debug)]
pub(crate) struct StabilityArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// Profiles of each kind.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Number of first methods compared.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Keep the identity-hash seed fixed between runs.
    #[arg(long)]
    fixed_seed: bool,
    /// The class to run.
    class: String,
    /// Arguments passed to `run:`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Run `lupa stability`.
pub(crate) fn main(s: &StabilityArgs) -> ExitCode {
    let args = program_args(&s.class, &s.args);
    let p = Program {
        name: args.join(" "),
        args,
    };
    match lupa_lab::stability::stability(
        &options(&s.vm),
        &p,
        s.runs.max(2),
        s.top.max(1),
        !s.fixed_seed,
        &mut status_line,
    ) {
        Ok(report) => {
            print!("{}", report.to_text());
            ExitCode::SUCCESS
        }
        Err(e) => report(&e.into()),
    }
}
