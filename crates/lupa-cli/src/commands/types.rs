//! `lupa types`: type feedback (Spy's TypeProfiler) over the named packages
//! while SUnit tests (as `lupa test` runs them) or a program run.

use clap::Args;
use lupa_prof::types::Types;
use lupa_profilers::ProfileMode;
use lupa_profilers::spy::types::TypesConfig;
use lupa_vm::{Vm, VmError};

use super::coverage::class_path_packages;
use super::test::{command_line, profile_tests_or_program};
use crate::report_args::ReportArgs;
use crate::vm_args::VmArgs;

/// `lupa types` arguments.
#[derive(Args, Debug)]
pub(crate) struct TypesArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// A package to profile (repeatable; default: every class-path directory holding
    /// classes that are not tests, or with --run the program class's package).
    #[arg(long = "package", value_name = "P")]
    packages: Vec<String>,
    #[command(flatten)]
    report: ReportArgs<Types>,
    /// Run a program instead of tests: CLASS and its arguments.
    #[arg(long, num_args = 1.., value_name = "CLASS ARGS", allow_hyphen_values = true, conflicts_with = "classes")]
    run: Option<Vec<String>>,
    /// TestCase classes to run (default: every one on the class path).
    classes: Vec<String>,
}

/// The package of a class: the last name of its directory.
pub(crate) fn package_of_class(vm: &mut Vm, class: &str) -> Result<String, VmError> {
    let class = vm.load_class_by_name(class)?;
    let object = vm.image.class_object(class);
    let category = vm.send_message(object, "category", &[])?;
    let category = vm.string_of(category).unwrap_or_default();
    Ok(category.rsplit('/').next().unwrap_or(&category).to_string())
}

/// Run `lupa types`.
pub(crate) fn run(vm: &mut Vm, a: &TypesArgs) -> Result<i32, VmError> {
    let dest = a.report.prepare(vm, "types")?;
    let mut packages = a.packages.clone();
    if packages.is_empty() {
        if let Some(program) = &a.run {
            packages.push(package_of_class(vm, &program[0])?);
        } else if let Some(p) = class_path_packages(vm, a.vm.class_path.as_deref())? {
            packages = p;
        }
    }
    if packages.iter().all(|p| p.is_empty()) {
        eprintln!(
            "lupa: no package to profile: name one with --package P, or give a class path (-cp DIR)"
        );
        return Ok(2);
    }
    if let Some(message) = lupa_profilers::spy::unknown_packages(vm, &packages) {
        eprintln!("lupa: {message}");
        return Ok(2);
    }
    let mut command = command_line("types", &packages);
    let mode = ProfileMode::Types(TypesConfig { packages });
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
    let code = run.result?;
    run.output.set_command(&command);
    let types = Types::try_from(run.output)?;
    vm.io.flush()?;
    a.report.deliver(&types, &(), &dest)?;
    Ok(code)
}
