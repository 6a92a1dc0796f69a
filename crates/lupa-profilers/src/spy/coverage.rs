//! Test coverage from the command line: Spy's `TestCoverage` runs SUnit test
//! classes over the named packages, the VM measures the lines that ran
//! meanwhile, and the result is a [`lupa_prof::coverage::Coverage`].
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
    ClassCoverage, Coverage, LineHits, MethodCoverage, TestOutcome, TestResult, VERSION,
};
use lupa_vm::{Vm, VmError};

use super::{Handles, class_array, count, elements, send, string_array, text, understands};

/// What a coverage run answers.
#[derive(Debug, Clone)]
pub struct CoverageRun {
    /// The coverage, classes in package then name order.
    pub coverage: Coverage,
    /// `Class>>selector` -> (source text, first line), for the HTML page.
    pub sources: BTreeMap<String, (String, u32)>,
    /// Tests that failed or raised an error.
    pub failed: u64,
    /// Tests that passed.
    pub passed: u64,
}

/// Run the test classes `tests` under `TestCoverage` over `packages` (their
/// output is the test runner's, as `lupa test` prints it), measuring the
/// lines that run when `lines` is true.
pub fn run(
    vm: &mut Vm,
    tests: &[u32],
    packages: &[String],
    command: &str,
    lines: bool,
) -> Result<CoverageRun, VmError> {
    let h = Handles::new(vm);
    let result = run_rooted(vm, &h, tests, packages, command, lines);
    h.release(vm);
    result
}

fn run_rooted(
    vm: &mut Vm,
    h: &Handles,
    tests: &[u32],
    packages: &[String],
    command: &str,
    measure_lines: bool,
) -> Result<CoverageRun, VmError> {
    let class = vm.class_named("TestCoverage")?;
    let profiler = vm.send_message(class, "new", &[])?;
    let p = h.keep(vm, profiler);
    let classes = class_array(vm, h, tests)?;
    let names = string_array(vm, h, packages)?;
    let (classes, names) = (h.get(vm, classes), h.get(vm, names));
    if measure_lines {
        vm.start_line_coverage();
    }
    let ran = send(
        vm,
        h,
        p,
        "runTestClasses:inPackagesNamed:",
        &[classes, names],
    );
    let lines = measure_lines.then(|| vm.take_line_coverage());
    ran?;

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
        if let Some(src) = vm.image.method_source(&code) {
            sources.insert(m.name_in(&class_name), (src, d.first_line));
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
    let failed = outcomes
        .iter()
        .filter(|o| o.result != TestResult::Pass)
        .count() as u64;
    let passed = outcomes.len() as u64 - failed;
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
    Ok(CoverageRun {
        coverage: Coverage {
            version: VERSION,
            command: command.to_string(),
            packages: covered_packages,
            classes: by_class.into_values().collect(),
            tests: outcomes,
            receivers_note: note,
        },
        sources,
        failed,
        passed,
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
