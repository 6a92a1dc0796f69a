//! `lupa count CLASS ARGS`: Compteur, every executed send charged to the
//! method that executed it; a ranking and a call tree, or a report file.

use clap::Args;
use lupa_prof::Profile;
use lupa_prof::calibration::Calibration;
use lupa_profilers::{ProfileMode, Workload, compteur};
use lupa_vm::{Vm, VmError};
use std::path::Path;

use super::run::program_args;
use super::view::{FlameArgs, ViewArgs, deliver_profile};
use crate::report_args::{ReportArgs, run_stem};
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
    /// Calibration used to estimate time from the count (see `lupa calibrate`); default:
    /// lupa-calibration.json when it exists. A FILE that cannot be read is an error.
    #[arg(long, value_name = "FILE", value_parser = parse_calibration)]
    calibration: Option<Calibration>,
    /// The class to run.
    class: String,
    /// Arguments passed to `run:`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Run `lupa count`.
pub(crate) fn run(vm: &mut Vm, a: &CountArgs) -> Result<i32, VmError> {
    super::run::warn_stray_options("count", &a.args);
    let dest = a
        .report
        .prepare(vm, &run_stem(&program_args(&a.class, &a.args)))?;
    let calibration = match &a.calibration {
        Some(c) => Some(c.clone()),
        None => default_calibration()?,
    };
    vm.load_class_by_name(&a.class)?;
    let args = program_args(&a.class, &a.args);
    let run = ProfileMode::COMPTEUR.run(vm, Workload::Program(&args))?;
    let code = crate::signals::program_status(run.result)?;
    let view = a.view.view();
    let profile = Profile::try_from(run.output)?;
    if let Some(message) = view.unmatched(&profile) {
        vm.io.flush()?;
        eprintln!("lupa: {message}");
        return Ok(2);
    }
    let profile = view.apply(profile);
    let command = format!("lupa count {}", args.join(" "));
    let mut header = compteur::header(&profile, &command, run.inlined, calibration.as_ref());
    header.extend(crate::signals::interrupted_line());
    let mut options = view.report_options(a.report.format, command, header);
    options.estimate = calibration
        .as_ref()
        .map(|c| compteur::estimate(profile.grand_total(), c));
    deliver_profile(vm, &a.report, &a.flame, &dest, profile, options)?;
    Ok(code)
}

/// The calibration `lupa calibrate` saves by default.
const DEFAULT_CALIBRATION: &str = "lupa-calibration.json";

/// `--calibration FILE`: read and checked before the program runs.
fn parse_calibration(path: &str) -> Result<Calibration, String> {
    Calibration::load(Path::new(path)).map_err(|e| e.to_string())
}

/// The default calibration, when `lupa-calibration.json` exists in the
/// current directory; one that exists but cannot be read is an error (exit
/// 74) rather than a silent run without an estimate.
fn default_calibration() -> Result<Option<Calibration>, VmError> {
    let path = Path::new(DEFAULT_CALIBRATION);
    if !path.exists() {
        return Ok(None);
    }
    Calibration::load(path)
        .map(Some)
        .map_err(|e| VmError::Io(e.to_string()))
}
