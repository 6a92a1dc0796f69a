//! Test coverage ([`crate::ProfileMode::Coverage`], `lupa coverage`): Spy's
//! `TestCoverage` runs SUnit test classes (or a program) over the configured
//! packages, the VM measures the lines that ran meanwhile, and the result is
//! a [`lupa_prof::coverage::Coverage`] (its methods' sources included).
//!
//! The Smalltalk side answers, per method spy (`allMethods`): `theMethod`
//! (which the VM names and locates: class, side, selector, file, line),
//! `numberOfExecutions`, `numberOfDifferentReceivers`,
//! `receiversAreEstimated`, `numberOfLinesOfCode` and `testNames` (the tests
//! that reached it); and per test (`testOutcomes`: pairs of name and
//! `#pass`/`#fail`/`#error`). The lines of each method come from the VM's
//! line coverage ([`lupa_vm::obs::coverage`]).

use std::collections::BTreeMap;

use lupa_prof::coverage::{
    ClassCoverage, Coverage, LineHits, MethodCoverage, MethodSource, TestOutcome, TestResult,
    VERSION,
};
use lupa_vm::obs::coverage::LineCoverage;
use lupa_vm::{Value, Vm, VmError};

use super::{
    Handles, class_array, count, elements, new_profiler, send, string_array, text, understands,
};
use crate::workload::Workload;

/// What to cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverageConfig {
    /// The packages covered (a class's package is the last name of its
    /// directory).
    pub packages: Vec<String>,
    /// Also measure which lines ran (the VM's line coverage).
    pub lines: bool,
}

impl CoverageConfig {
    /// No package yet, lines measured.
    pub const DEFAULT: CoverageConfig = CoverageConfig {
        packages: Vec::new(),
        lines: true,
    };
}

impl Default for CoverageConfig {
    fn default() -> CoverageConfig {
        CoverageConfig::DEFAULT
    }
}

/// A running coverage profiler (of [`crate::ProfileMode::Coverage`]): Spy's
/// `TestCoverage`, rooted.
pub(crate) struct RunningCoverage {
    h: Handles,
    profiler: usize,
    config: CoverageConfig,
    lines: Option<LineCoverage>,
}

impl RunningCoverage {
    /// Make the profiler.
    pub(crate) fn start(vm: &mut Vm, config: &CoverageConfig) -> Result<RunningCoverage, VmError> {
        let (h, profiler) = new_profiler(vm, "TestCoverage")?;
        Ok(RunningCoverage {
            h,
            profiler,
            config: config.clone(),
            lines: None,
        })
    }

    /// Run the workload covered: test classes through the profiler's test
    /// runner (their output as `lupa test` prints it; the status is 1 when a
    /// test did not pass), or a program with the packages instrumented.
    pub(crate) fn run(&mut self, vm: &mut Vm, workload: Workload<'_>) -> Result<i32, VmError> {
        let (h, p) = (&self.h, self.profiler);
        let names = string_array(vm, h, &self.config.packages)?;
        let tests = match workload {
            Workload::Tests(classes) => Some(class_array(vm, h, classes)?),
            Workload::Program(_) => None,
        };
        if self.config.lines {
            vm.start_line_coverage();
        }
        let ran = match (workload, tests) {
            (Workload::Tests(_), Some(tests)) => {
                let (tests, names) = (h.get(vm, tests), h.get(vm, names));
                send(vm, h, p, "runTestClasses:inPackagesNamed:", &[tests, names])
                    .and_then(|_| send(vm, h, p, "testsPassed", &[]))
                    .map(|passed| if passed == Value::TRUE { 0 } else { 1 })
            }
            (Workload::Program(args), _) => {
                let names = h.get(vm, names);
                instrumented(vm, h, p, names, args)
            }
            (Workload::Tests(_), None) => Ok(0),
        };
        if self.config.lines {
            self.lines = Some(vm.take_line_coverage());
        }
        h.truncate(vm, p + 1);
        ran
    }

    /// Read what the profiler found (the command is left empty).
    pub(crate) fn finish(self, vm: &mut Vm) -> Result<Coverage, VmError> {
        let read = read(
            vm,
            &self.h,
            self.profiler,
            &self.config.packages,
            self.lines,
        );
        self.h.release(vm);
        read
    }
}

/// Run the program `args` with the packages named in `names` instrumented
/// by the profiler in `p` (uninstrumented however it ends).
pub(crate) fn instrumented(
    vm: &mut Vm,
    h: &Handles,
    p: usize,
    names: Value,
    args: &[String],
) -> Result<i32, VmError> {
    send(vm, h, p, "addPackagesNamed:", &[names])?;
    send(vm, h, p, "install", &[])?;
    let ran = vm.run_main(args);
    send(vm, h, p, "uninstall", &[])?;
    ran
}

/// The coverage the profiler in `p` found.
fn read(
    vm: &mut Vm,
    h: &Handles,
    p: usize,
    packages: &[String],
    lines: Option<LineCoverage>,
) -> Result<Coverage, VmError> {
    let mut by_class: BTreeMap<(String, String), ClassCoverage> = BTreeMap::new();
    let mut sources = BTreeMap::new();
    let v = send(vm, h, p, "allMethods", &[])?;
    let all = h.keep(vm, v);
    let spies = elements(vm, h, all, "allMethods")?;
    let mark = vm.handles.len();
    for spy in spies {
        h.truncate(vm, mark);
        let method = send(vm, h, spy, "theMethod", &[])?;
        let Some(code) = vm.image.method_code_of(&vm.heap, method) else {
            continue;
        };
        let Some(d) = vm.image.describe_method(code.id) else {
            continue;
        };
        let (class_name, class_side) = match d.class.strip_suffix(" class") {
            Some(base) => (base.to_string(), true),
            None => (d.class.clone(), false),
        };
        let package = d
            .category
            .rsplit('/')
            .next()
            .unwrap_or(&d.category)
            .to_string();
        let executions = count(
            send(vm, h, spy, "numberOfExecutions", &[])?,
            "numberOfExecutions",
        )?;
        let receivers = count(
            send(vm, h, spy, "numberOfDifferentReceivers", &[])?,
            "numberOfDifferentReceivers",
        )?;
        let receivers_estimated = understands(vm, h, spy, "receiversAreEstimated")?
            && send(vm, h, spy, "receiversAreEstimated", &[])? == lupa_vm::Value::TRUE;
        let lines_of_code = count(
            send(vm, h, spy, "numberOfLinesOfCode", &[])?,
            "numberOfLinesOfCode",
        )?;
        let mut test_names = Vec::new();
        if understands(vm, h, spy, "testNames")? {
            let v = send(vm, h, spy, "testNames", &[])?;
            let t = h.keep(vm, v);
            for e in elements(vm, h, t, "testNames")? {
                let v = h.get(vm, e);
                test_names.push(text(vm, v, "a test name")?);
            }
            h.truncate(vm, t);
        }
        test_names.sort();
        let measured: Vec<LineHits> = lines
            .as_ref()
            .map(|l| l.lines_of(&vm.image, code.id))
            .unwrap_or_default()
            .into_iter()
            .map(|(line, hits)| LineHits { line, hits })
            .collect();
        let m = MethodCoverage {
            selector: d.selector.clone(),
            class_side,
            line: d.first_line,
            lines_of_code: u32::try_from(lines_of_code).unwrap_or(u32::MAX),
            executions,
            receivers,
            receivers_estimated,
            tests: test_names,
            lines: measured,
        };
        if let Some(text) = vm.image.method_source(&code) {
            sources.insert(
                m.name_in(&class_name),
                MethodSource {
                    text,
                    first_line: d.first_line,
                },
            );
        }
        let entry = by_class
            .entry((package.clone(), class_name.clone()))
            .or_insert_with(|| ClassCoverage {
                name: class_name.clone(),
                package: package.clone(),
                superclass: None,
                file: Some(d.file.clone()),
                methods: Vec::new(),
            });
        entry.methods.push(m);
    }
    h.truncate(vm, all);
    for ((_, name), c) in by_class.iter_mut() {
        c.methods
            .sort_by(|a, b| a.class_side.cmp(&b.class_side).then(a.line.cmp(&b.line)));
        let cls = vm.class_named(name)?;
        let sup = vm.send_message(cls, "superclass", &[])?;
        if sup != lupa_vm::Value::NIL {
            let n = vm.send_message(sup, "name", &[])?;
            c.superclass = vm.string_of(n);
        }
    }

    let mut outcomes = Vec::new();
    if understands(vm, h, p, "testOutcomes")? {
        let v = send(vm, h, p, "testOutcomes", &[])?;
        let t = h.keep(vm, v);
        for pair in elements(vm, h, t, "testOutcomes")? {
            let name = send(vm, h, pair, "key", &[])?;
            let name = text(vm, name, "a test outcome's key")?;
            let result = send(vm, h, pair, "value", &[])?;
            let result = match text(vm, result, "a test outcome's value")?.as_str() {
                "pass" => TestResult::Pass,
                "fail" => TestResult::Fail,
                _ => TestResult::Error,
            };
            outcomes.push(TestOutcome { name, result });
        }
        h.truncate(vm, t);
    }
    let mut covered_packages: Vec<String> = packages.to_vec();
    for (pkg, _) in by_class.keys() {
        if !covered_packages.contains(pkg) {
            covered_packages.push(pkg.clone());
        }
    }
    let note = if understands(vm, h, p, "receiversNote")? {
        let v = send(vm, h, p, "receiversNote", &[])?;
        text(vm, v, "receiversNote")?
    } else {
        String::new()
    };
    Ok(Coverage {
        version: VERSION,
        command: String::new(),
        packages: covered_packages,
        classes: by_class.into_values().collect(),
        tests: outcomes,
        receivers_note: note,
        sources,
    })
}

/// The packages of a class path: its directories (by last component)
/// holding a class that is not a TestCase (the default packages of `lupa coverage`).
pub fn default_packages(
    vm: &mut lupa_vm::Vm,
    class_path: &[std::path::PathBuf],
) -> Result<Vec<String>, lupa_vm::VmError> {
    let mut out = Vec::new();
    for dir in class_path {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let p = e.path();
                (p.extension().is_some_and(|x| x == "som"))
                    .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .flatten()
            })
            .collect();
        names.sort();
        let mut has_code = false;
        for n in names {
            if vm.test_classes(std::slice::from_ref(&n))?.is_empty() {
                has_code = true;
                break;
            }
        }
        let package = lupa_vm::package_of(dir);
        if has_code && !out.contains(&package) {
            out.push(package);
        }
    }
    Ok(out)
}
