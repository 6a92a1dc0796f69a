//! `lupa coverage`: run SUnit tests like `lupa test` (same output, same exit
//! code), or a program (`--run CLASS ARGS`), under Spy's test coverage, and
//! report which methods and lines of the covered packages ran, how often, on
//! how many receivers, and by which tests.

use clap::Args;
use lupa_prof::coverage::{Coverage, CoverageOptions};
use lupa_profilers::spy::coverage::{CoverageConfig, default_packages};
use lupa_profilers::{ProfileMode, sources};
use lupa_vm::{Vm, VmError};

use super::test::{command_line, profile_tests_or_program};
use crate::report_args::ReportArgs;
use crate::vm_args::VmArgs;

/// `lupa coverage` arguments.
#[derive(Args, Debug)]
pub(crate) struct CoverageArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// A package to cover (repeatable; default: every class-path directory holding
    /// classes that are not tests, or with --run the program class's package).
    #[arg(long = "package", value_name = "P")]
    packages: Vec<String>,
    #[command(flatten)]
    report: ReportArgs<Coverage>,
    /// Method coverage only: do not measure which lines ran (no VM line counts).
    #[arg(long)]
    no_lines: bool,
    /// Run a program instead of tests: CLASS and its arguments.
    #[arg(long, num_args = 1.., value_name = "CLASS ARGS", allow_hyphen_values = true, conflicts_with = "classes")]
    run: Option<Vec<String>>,
    /// TestCase classes to run (default: every one on the class path).
    classes: Vec<String>,
}

/// Run `lupa coverage`.
pub(crate) fn run(vm: &mut Vm, a: &CoverageArgs) -> Result<i32, VmError> {
    let packages = if !a.packages.is_empty() {
        a.packages.clone()
    } else if let Some(program) = &a.run {
        vec![super::types::package_of_class(vm, &program[0])?]
    } else {
        match class_path_packages(vm, a.vm.class_path.as_deref())? {
            Some(p) if !p.is_empty() => p,
            _ => {
                eprintln!(
                    "lupa: no package to cover: name one with --package P (e.g. --package Kernel), \
                     or give a class path (-cp DIR) holding the classes under test"
                );
                return Ok(2);
            }
        }
    };
    if let Some(message) = lupa_profilers::spy::unknown_packages(vm, &packages) {
        eprintln!("lupa: {message}");
        return Ok(2);
    }
    // With `-o -` the tests' output goes to standard error.
    let dest = a.report.prepare(vm, "coverage")?;
    let mut command = command_line("coverage", &packages);
    let mode = ProfileMode::Coverage(CoverageConfig {
        packages: packages.clone(),
        lines: !a.no_lines,
    });
    let mut run = match profile_tests_or_program(
        vm,
        &mode,
        a.run.as_deref(),
        &a.classes,
        a.vm.class_path.as_deref(),
        &mut command,
    )? {
        Ok(run) => run,
        Err(code) => return Ok(code),
    };
    let code = crate::signals::program_status(run.result)?;
    run.output.set_command(&command);
    let mut coverage = Coverage::try_from(run.output)?;
    vm.io.flush()?;
    if coverage.classes.is_empty() {
        eprintln!(
            "lupa: no method of the packages {} was found to cover",
            packages.join(", ")
        );
    }
    if let Some(path) = dest.file() {
        sources::export_beside(vm, &mut coverage, a.report.format, path)?;
    }
    a.report
        .deliver(&coverage, &CoverageOptions::now(), &dest)?;
    Ok(code)
}

/// The packages of the class path: its directories (by last component)
/// that hold a class that is not a TestCase. `None` without a class path.
pub(crate) fn class_path_packages(
    vm: &mut Vm,
    class_path: Option<&str>,
) -> Result<Option<Vec<String>>, VmError> {
    let Some(cp) = class_path else {
        return Ok(None);
    };
    let dirs: Vec<std::path::PathBuf> = cp
        .split(':')
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .collect();
    default_packages(vm, &dirs).map(Some)
}
