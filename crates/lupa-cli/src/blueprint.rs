//! `lupa blueprint`: time profiling blueprints (Spy's BlueprintProfiler, the
//! Spy paper's section 4.2): run CLASS like `lupa run` with the methods of the
//! profiled packages instrumented, then twice more (counted, sampled; their
//! output discarded), and draw the structural or behavioral blueprint.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use lupa_prof::blueprint::{self, Kind};
use lupa_vm::{Vm, VmError};

use crate::VmArgs;

/// The report formats of `lupa blueprint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum BlueprintFormat {
    /// The methods that ran by time (with executions, sends, flags), then the calls.
    Text,
    /// The blueprint model as JSON (with a version field).
    Json,
    /// The picture: methods as boxes, height = time, width = executions.
    Svg,
    /// One HTML page: the picture, its legend and each method's numbers and calls.
    Html,
}

/// Which picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum BlueprintKind {
    /// Classes in their inheritance tree, methods inside them.
    Structural,
    /// The call graph, callers above callees.
    Behavioral,
}

impl BlueprintFormat {
    fn default_file(self) -> Option<&'static str> {
        match self {
            BlueprintFormat::Text => None,
            BlueprintFormat::Json => Some("blueprint.json"),
            BlueprintFormat::Svg => Some("blueprint.svg"),
            BlueprintFormat::Html => Some("blueprint.html"),
        }
    }
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
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    format: BlueprintFormat,
    /// Write the report to FILE (`-` for standard output; default: standard
    /// output for text, otherwise blueprint.json, blueprint.svg or blueprint.html).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Samples per second of the timed run (1 to 20000).
    #[arg(long, value_name = "HZ", default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=20000))]
    rate: u32,
    /// The program: CLASS and its arguments.
    #[arg(required = true, num_args = 1.., value_name = "CLASS ARGS", allow_hyphen_values = true, trailing_var_arg = true)]
    program: Vec<String>,
}

/// Run `lupa blueprint`.
pub(crate) fn run(vm: &mut Vm, a: &BlueprintArgs) -> Result<i32, VmError> {
    let dest = crate::save::prepare_destination(vm, a.output.as_deref(), a.format.default_file())?;
    let mut packages = a.packages.clone();
    if packages.is_empty() {
        let class = vm.load_class_by_name(&a.program[0])?;
        let object = vm.image.class_object(class);
        let category = vm.send_message(object, "category", &[])?;
        let category = vm.string_of(category).unwrap_or_default();
        packages.push(category.rsplit('/').next().unwrap_or(&category).to_string());
    }
    if packages.iter().all(|p| p.is_empty()) {
        eprintln!("lupa: no package to profile: name one with --package P");
        return Ok(2);
    }
    let mut command = String::from("lupa blueprint");
    for p in &packages {
        command.push_str(&format!(" --package {p}"));
    }
    command.push(' ');
    command.push_str(&a.program.join(" "));
    vm.load_class_by_name(&a.program[0])?;
    let (bp, status) =
        lupa_profilers::spy::blueprint::run(vm, &a.program, &packages, &command, a.rate)?;
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
    let bytes = match a.format {
        BlueprintFormat::Text => blueprint::model::to_text(&bp),
        BlueprintFormat::Json => bp.to_json(),
        BlueprintFormat::Svg => blueprint::svg::to_string(&bp, kind),
        BlueprintFormat::Html => blueprint::html::to_string(&bp, kind),
    };
    crate::save::deliver(
        dest.as_deref(),
        bytes.as_bytes(),
        "blueprint",
        a.output.is_none(),
    )
    .map_err(VmError::Io)?;
    Ok(status)
}
