//! `lupa blueprint`: time profiling blueprints (Spy's BlueprintProfiler, the
//! Spy paper's section 4.2): run CLASS like `lupa run`, counted, with the
//! methods of the profiled packages watched, then once more (sampled; its
//! output discarded), and draw the structural or behavioral blueprint.

use clap::{Args, ValueEnum};
use lupa_prof::blueprint::{Blueprint, Kind};
use lupa_profilers::spy::blueprint::BlueprintConfig;
use lupa_profilers::{ProfileMode, Workload};
use lupa_vm::{Vm, VmError};

use super::types::package_of_class;
use crate::report_args::{ReportArgs, run_stem};
use crate::vm_args::VmArgs;

/// Which picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum BlueprintKind {
    /// Classes in their inheritance tree, methods inside them.
    Structural,
    /// The call graph, callers above callees.
    Behavioral,
}

/// `lupa blueprint` arguments.
#[derive(Args, Debug)]
pub(crate) struct BlueprintArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// A package to profile (repeatable; default: the package of CLASS).
    #[arg(long = "package", value_name = "P")]
    packages: Vec<String>,
    /// Which blueprint the picture shows.
    #[arg(long, value_enum, default_value = "structural")]
    kind: BlueprintKind,
    #[command(flatten)]
    report: ReportArgs<Blueprint>,
    /// Samples per second of the timed run (1 to 20000).
    #[arg(long, value_name = "HZ", default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=20000))]
    rate: u32,
    /// Deterministic timed run: a sample every N message sends, no sampler thread (the same
    /// samples on every run; for tests and comparisons).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    every: Option<u64>,
    /// The program: CLASS and its arguments.
    #[arg(required = true, num_args = 1.., value_name = "CLASS ARGS", allow_hyphen_values = true, trailing_var_arg = true)]
    program: Vec<String>,
}

/// Run `lupa blueprint`.
pub(crate) fn run(vm: &mut Vm, a: &BlueprintArgs) -> Result<i32, VmError> {
    let dest = a.report.prepare(vm, &run_stem(&a.program))?;
    let mut packages = a.packages.clone();
    if packages.is_empty() {
        packages.push(package_of_class(vm, &a.program[0])?);
    }
    if packages.iter().all(|p| p.is_empty()) {
        eprintln!("lupa: no package to profile: name one with --package P");
        return Ok(2);
    }
    if let Some(message) = lupa_profilers::spy::unknown_packages(vm, &packages) {
        eprintln!("lupa: {message}");
        return Ok(2);
    }
    let mut command = super::test::command_line("blueprint", &packages);
    command.push(' ');
    command.push_str(&a.program.join(" "));
    vm.load_class_by_name(&a.program[0])?;
    let mode = ProfileMode::Blueprint(BlueprintConfig {
        packages: packages.clone(),
        rate_hz: a.rate,
        every: a.every,
    });
    let mut run = mode.run(vm, Workload::Program(&a.program))?;
    let status = run.result?;
    run.output.set_command(&command);
    let bp = Blueprint::try_from(run.output)?;
    vm.io.flush()?;
    if bp.classes.is_empty() {
        eprintln!(
            "lupa: no method of the packages {} was found to profile",
            packages.join(", ")
        );
    }
    let kind = match a.kind {
        BlueprintKind::Structural => Kind::Structural,
        BlueprintKind::Behavioral => Kind::Behavioral,
    };
    a.report.deliver(&bp, &kind, &dest)?;
    Ok(status)
}
