//! `lupa types`: type feedback (Spy's TypeProfiler) over the named packages
//! while SUnit tests (as `lupa test` runs them) or a program run.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use lupa_profilers::spy::types::{self, Workload};
use lupa_vm::{Vm, VmError};

use crate::VmArgs;

/// The report formats of `lupa types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TypesFormat {
    /// One signature per method, then the argument classes siblings saw.
    Text,
    /// The same as JSON (with a version field).
    Json,
}

/// `lupa types` arguments.
#[derive(Args, Debug)]
pub(crate) struct TypesArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// A package to profile (repeatable; default: every class-path directory holding
    /// classes that are not tests, or with --run the program class's package).
    #[arg(long = "package", value_name = "P")]
    packages: Vec<String>,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    format: TypesFormat,
    /// Write the report to FILE (`-` or nothing: standard output, after the run's output).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Run a program instead of tests: CLASS and its arguments.
    #[arg(long, num_args = 1.., value_name = "CLASS ARGS", allow_hyphen_values = true, conflicts_with = "classes")]
    run: Option<Vec<String>>,
    /// TestCase classes to run (default: every one on the class path).
    classes: Vec<String>,
}

/// Run `lupa types`.
pub(crate) fn run(vm: &mut Vm, a: &TypesArgs) -> Result<i32, VmError> {
    let dest = crate::save::prepare_destination(vm, a.output.as_deref(), None)?;
    let mut packages = a.packages.clone();
    if packages.is_empty() {
        if let Some(program) = &a.run {
            let class = vm.load_class_by_name(&program[0])?;
            let object = vm.image.class_object(class);
            let category = vm.send_message(object, "category", &[])?;
            let category = vm.string_of(category).unwrap_or_default();
            packages.push(category.rsplit('/').next().unwrap_or(&category).to_string());
        } else if let Some(p) = crate::coverage::default_packages(vm, a.vm.class_path.as_deref())? {
            packages = p;
        }
    }
    if packages.iter().all(|p| p.is_empty()) {
        eprintln!(
            "lupa: no package to profile: name one with --package P, or give a class path (-cp DIR)"
        );
        return Ok(2);
    }
    let mut command = String::from("lupa types");
    for p in &packages {
        command.push_str(&format!(" --package {p}"));
    }
    let (result, code) = match &a.run {
        Some(program) => {
            command.push_str(&format!(" --run {}", program.join(" ")));
            vm.load_class_by_name(&program[0])?;
            let (r, status) = types::run(vm, Workload::Program(program), &packages, &command)?;
            (r, status.unwrap_or(0))
        }
        None => {
            let classes =
                match crate::find_test_classes(vm, &a.classes, a.vm.class_path.as_deref())? {
                    Ok(c) => c,
                    Err(code) => return Ok(code),
                };
            for c in &a.classes {
                command.push(' ');
                command.push_str(c);
            }
            let (r, status) = types::run(vm, Workload::Tests(&classes), &packages, &command)?;
            (r, status.unwrap_or(0))
        }
    };
    vm.io.flush()?;
    let text = match a.format {
        TypesFormat::Text => result.to_text(),
        TypesFormat::Json => result.to_json(),
    };
    match &dest {
        Some(p) => crate::save::save(p, text.as_bytes()).map_err(VmError::Io)?,
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| VmError::Io(format!("cannot write the report: {e}")))?;
        }
    }
    Ok(code)
}
