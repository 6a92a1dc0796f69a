//! `lupa count CLASS ARGS`: Compteur, every executed send charged to the
//! method that executed it; a ranking and a call tree, or a report file.

use clap::Args;
use lupa_prof::Profile;
use lupa_profilers::{ProfileMode, Workload, compteur};
use lupa_vm::{Vm, VmError};
use std::path::PathBuf;

use super::run::program_args;
use super::view::{FlameArgs, ViewArgs, deliver_profile};
use crate::report_args::ReportArgs;
use crate::vm_args::VmArgs;

/// `lupa count` arguments.
#[derive(Args, Debug)]
pub(crate) struct CountArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    #[command(flatten)]
    report: ReportArgs<Profile>,
    #[command(flatten)]
    flame: FlameArgs,
    #[command(flatten)]
    view: ViewArgs,
    /// Calibration used to estimate time from the count (see `lupa calibrate`).
    #[arg(long, value_name = "FILE", default_value = "lupa-calibration.json")]
    calibration: PathBuf,
    /// The class to run.
    class: String,
    /// Arguments passed to `run:`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Run `lupa count`.
pub(crate) fn run(vm: &mut Vm, a: &CountArgs) -> Result<i32, VmError> {
    let dest = a.report.prepare(vm, &a.class)?;
    vm.load_class_by_name(&a.class)?;
    let args = program_args(&a.class, &a.args);
    let run = ProfileMode::COMPTEUR.run(vm, Workload::Program(&args))?;
    let code = run.result?;
    let view = a.view.view();
    let profile = Profile::try_from(run.output)?;
    if let Some(message) = view.unmatched(&profile) {
        vm.io.flush()?;
        eprintln!("lupa: {message}");
        return Ok(2);
    }
    let profile = view.apply(profile);
    let command = format!("lupa count {}", args.join(" "));
    let header = compteur::header(&profile, &command, run.inlined, &a.calibration);
    let mut options = view.report_options(a.report.format, command, header);
    options.estimate = compteur::estimate(profile.grand_total(), &a.calibration);
    deliver_profile(vm, &a.report, &a.flame, &dest, profile, options)?;
    Ok(code)
}
