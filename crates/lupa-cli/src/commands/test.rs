//! `lupa test`: run SUnit test classes, as `lupa coverage` and `lupa types`
//! find them.

use clap::Args;
use lupa_profilers::{ProfileMode, Profiled, Workload};
use lupa_vm::{Vm, VmError};

use crate::vm_args::VmArgs;

/// `lupa test` arguments.
#[derive(Args, Debug)]
pub(crate) struct TestArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// TestCase classes to run (default: all found).
    classes: Vec<String>,
}

/// Run `lupa test`.
pub(crate) fn run(vm: &mut Vm, args: &TestArgs) -> Result<i32, VmError> {
    let classes = match find_test_classes(vm, &args.classes, args.vm.class_path.as_deref())? {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let summary = vm.run_test_classes(&classes)?;
    Ok(if summary.ok() { 0 } else { 1 })
}

/// The test classes `lupa test`, `lupa coverage` and `lupa types` run: the
/// named ones, or every TestCase subclass on the class path (the bundled
/// suites without one). `Err(code)`: nothing to run, said on standard error
/// (2: a named class is not a TestCase; 1: none found).
pub(crate) fn find_test_classes(
    vm: &mut Vm,
    named: &[String],
    class_path: Option<&str>,
) -> Result<Result<Vec<u32>, i32>, VmError> {
    let names = if named.is_empty() {
        vm.test_candidates(class_path.is_none())
    } else {
        named.to_vec()
    };
    let mut classes = Vec::new();
    for name in &names {
        let found = vm.test_classes(std::slice::from_ref(name))?;
        if found.is_empty() && !named.is_empty() {
            eprintln!("lupa: {name} is not a TestCase subclass");
            return Ok(Err(2));
        }
        classes.extend(found);
    }
    if classes.is_empty() {
        let looked = match class_path {
            Some(cp) => format!("the class path {cp}"),
            None => "the bundled library's Tests folders".to_string(),
        };
        eprintln!("lupa: no TestCase subclass found in {looked}");
        return Ok(Err(1));
    }
    Ok(Ok(classes))
}

/// The start of a report's command line: `lupa NAME` and its `--package`
/// options (the program or tests run are appended after).
pub(crate) fn command_line(name: &str, packages: &[String]) -> String {
    let mut command = format!("lupa {name}");
    for p in packages {
        command.push_str(&format!(" --package {p}"));
    }
    command
}

/// Profile under `mode` what `lupa coverage` and `lupa types` were given:
/// the program `program` (CLASS and its arguments) when there is one, else
/// the test classes `named` (every one on the class path when none is
/// named, as [`find_test_classes`]). What was run is appended to `command`
/// (the report's command line). `Err(code)`: no test to run, said on
/// standard error.
pub(crate) fn profile_tests_or_program(
    vm: &mut Vm,
    mode: &ProfileMode,
    program: Option<&[String]>,
    named: &[String],
    class_path: Option<&str>,
    command: &mut String,
) -> Result<Result<Profiled, i32>, VmError> {
    if let Some(program) = program {
        command.push_str(&format!(" --run {}", program.join(" ")));
        if let Some(class) = program.first() {
            vm.load_class_by_name(class)?;
        }
        return Ok(Ok(mode.run(vm, Workload::Program(program))?));
    }
    let classes = match find_test_classes(vm, named, class_path)? {
        Ok(c) => c,
        Err(code) => return Ok(Err(code)),
    };
    for c in named {
        command.push(' ');
        command.push_str(c);
    }
    Ok(Ok(mode.run(vm, Workload::Tests(&classes))?))
}
