//! `lupa stability`: ranking stability (Compteur, section 4.4), counted
//! against timed profiles. The experiment is in `crate::calibrate`.

use clap::Args;
use std::process::ExitCode;

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
    let mut args = vec![s.class.clone()];
    args.extend(s.args.iter().cloned());
    let p = lupa_profilers::calibration::Program {
        name: args.join(" "),
        args,
    };
    match crate::calibrate::stability(
        &options(&s.vm),
        &p,
        s.runs.max(2),
        s.top.max(1),
        !s.fixed_seed,
    ) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => report(&e),
    }
}
