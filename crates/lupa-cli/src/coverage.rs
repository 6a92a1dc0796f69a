//! `lupa coverage`: run SUnit tests like `lupa test` (same output, same exit
//! code) under Spy's test coverage, and report which methods and lines of the
//! covered packages ran, how often, on how many receivers, and by which tests.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use lupa_prof::coverage::{self, Coverage};
use lupa_vm::{Vm, VmError};

use crate::VmArgs;

/// The report formats of `lupa coverage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CoverageFormat {
    /// A summary, then each method: ran or not, executions, receivers, lines, tests.
    Text,
    /// The coverage model as JSON (with a version field).
    Json,
    /// LCOV tracefile (genhtml, Codecov, editor gutters).
    Lcov,
    /// Cobertura XML (CI services).
    Cobertura,
    /// The test blueprint picture (Hapao): classes, methods sized by lines and receivers.
    Svg,
    /// One HTML page: the blueprint, its legend and a source view.
    Html,
}

impl CoverageFormat {
    fn default_file(self) -> Option<&'static str> {
        match self {
            CoverageFormat::Text => None,
            CoverageFormat::Json => Some("coverage.json"),
            CoverageFormat::Lcov => Some("lcov.info"),
            CoverageFormat::Cobertura => Some("coverage.xml"),
            CoverageFormat::Svg => Some("coverage.svg"),
            CoverageFormat::Html => Some("coverage.html"),
        }
    }
}

/// `lupa coverage` arguments.
#[derive(Args, Debug)]
pub(crate) struct CoverageArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// A package to cover (repeatable; default: every class-path directory holding
    /// classes that are not tests).
    #[arg(long = "package", value_name = "P")]
    packages: Vec<String>,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    format: CoverageFormat,
    /// Write the report to FILE (`-` for standard output; default: standard
    /// output for text, otherwise lcov.info, coverage.xml, coverage.json,
    /// coverage.svg or coverage.html).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Method coverage only: do not measure which lines ran (no VM line counts).
    #[arg(long)]
    no_lines: bool,
    /// TestCase classes to run (default: every one on the class path).
    classes: Vec<String>,
}

/// Run `lupa coverage`.
pub(crate) fn run(vm: &mut Vm, a: &CoverageArgs) -> Result<i32, VmError> {
    let packages = if a.packages.is_empty() {
        match default_packages(vm, a.vm.class_path.as_deref())? {
            Some(p) if !p.is_empty() => p,
            _ => {
                eprintln!(
                    "lupa: no package to cover: name one with --package P (e.g. --package Kernel), \
                     or give a class path (-cp DIR) holding the classes under test"
                );
                return Ok(2);
            }
        }
    } else {
        a.packages.clone()
    };
    // With `-o -` the tests' output goes to standard error.
    let dest = crate::save::prepare_destination(vm, a.output.as_deref(), a.format.default_file())?;
    let classes = match crate::find_test_classes(vm, &a.classes, a.vm.class_path.as_deref())? {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let mut command = String::from("lupa coverage");
    for p in &packages {
        command.push_str(&format!(" --package {p}"));
    }
    for c in &a.classes {
        command.push(' ');
        command.push_str(c);
    }
    let mut run =
        lupa_profilers::spy::coverage::run(vm, &classes, &packages, &command, !a.no_lines)?;
    vm.io.flush()?;
    if run.coverage.classes.is_empty() {
        eprintln!(
            "lupa: no method of the packages {} was found to cover",
            packages.join(", ")
        );
    }
    let bytes = render(vm, &mut run, a.format, dest.as_deref())?;
    crate::save::deliver(dest.as_deref(), &bytes, "coverage", a.output.is_none())
        .map_err(VmError::Io)?;
    Ok(if run.failed == 0 { 0 } else { 1 })
}

/// The report's bytes. LCOV and Cobertura name source files: the bundled
/// library's are written beside the report (`FILE.sources/`) so tools can
/// open them.
fn render(
    vm: &Vm,
    run: &mut lupa_profilers::spy::coverage::CoverageRun,
    format: CoverageFormat,
    dest: Option<&Path>,
) -> Result<Vec<u8>, VmError> {
    if matches!(format, CoverageFormat::Lcov | CoverageFormat::Cobertura)
        && let Some(path) = dest
    {
        let mut dir = path.as_os_str().to_owned();
        dir.push(".sources");
        export_sources(vm, &mut run.coverage, Path::new(&dir))?;
    }
    let c = &run.coverage;
    Ok(match format {
        CoverageFormat::Text => coverage::text::to_string(c).into_bytes(),
        CoverageFormat::Json => c.to_json().into_bytes(),
        CoverageFormat::Lcov => coverage::lcov::to_string(c, "lupa").into_bytes(),
        CoverageFormat::Cobertura => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            coverage::cobertura::to_string(c, now).into_bytes()
        }
        CoverageFormat::Svg => coverage::blueprint::to_string(c).into_bytes(),
        CoverageFormat::Html => coverage::page::to_string(c, &run.sources).into_bytes(),
    })
}

/// Write the bundled files the coverage names under `dir`, pointing at them.
fn export_sources(vm: &Vm, c: &mut Coverage, dir: &Path) -> Result<(), VmError> {
    lupa_profilers::sources::export_bundled_files(
        vm,
        c.classes.iter_mut().filter_map(|k| k.file.as_mut()),
        dir,
    )
    .map(drop)
    .map_err(|e| {
        VmError::Io(format!(
            "cannot write the sources to {}: {e}",
            dir.display()
        ))
    })
}

/// The packages of the class path: its directories (by last component)
/// that hold a class that is not a TestCase. `None` without a class path.
pub(crate) fn default_packages(
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
    lupa_profilers::spy::coverage::default_packages(vm, &dirs).map(Some)
}
