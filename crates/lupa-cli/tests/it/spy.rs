//! `lupa coverage` and `lupa types` (Spy's profilers) end to end: reports
//! (golden where deterministic), exit codes, and every export read back by
//! its consumer: JSON, LCOV (and genhtml, Debian lcov), Cobertura XML, the
//! blueprint SVG and its HTML page (headless Chromium).

use crate::common::{lupa_in, scrub};

const SHAPE: &str = "Shape = (
    | name |
    name = ( ^name )
    name: aString = ( name := aString )
    area = ( ^0 )
    describe = (
        | a |
        a := self area.
        a > 100
            ifTrue: [ ^'big ' , name ]
            ifFalse: [ ^'small ' , name ]
    )
    unused = ( ^'never' )
)
";
const SQUARE: &str = "Square = Shape (
    | side |
    side: n = ( side := n )
    area = ( ^side * side )
    at: i put: x = ( ^x )
    ----
    side: n = ( ^self new side: n; name: 'square'; yourself )
)
";
const SHAPE_TEST: &str = "ShapeTest = TestCase (
    testArea = ( self assert: 9 equals: (Square side: 3) area )
    testDescribe = ( self assert: 'small square' equals: (Square side: 2) describe )
)
";
const BROKEN_TEST: &str = "BrokenShapeTest = TestCase (
    testBroken = ( self assert: 5 equals: (Square side: 2) area )
)
";
const MAIN: &str = "Main = (
    run = ( | s | s := Square side: 2. s at: 1 put: 'one'. s at: 2 put: nil. s describe println )
)
";

/// A project: `Shapes/` with the classes and their tests.
fn project(with_broken: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let shapes = dir.path().join("Shapes");
    std::fs::create_dir(&shapes).expect("mkdir");
    let mut files = vec![
        ("Shape.som", SHAPE),
        ("Square.som", SQUARE),
        ("ShapeTest.som", SHAPE_TEST),
        ("Main.som", MAIN),
    ];
    if with_broken {
        files.push(("BrokenShapeTest.som", BROKEN_TEST));
    }
    for (name, text) in files {
        std::fs::write(shapes.join(name), text).expect("write");
    }
    dir
}

#[test]
fn coverage_text_report() {
    let dir = project(false);
    let r = lupa_in(dir.path(), &["coverage", "-cp", "Shapes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    insta::assert_snapshot!(scrub(&r.stdout, dir.path()));
}

#[test]
fn coverage_exits_like_lupa_test() {
    let dir = project(true);
    let r = lupa_in(dir.path(), &["coverage", "-cp", "Shapes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains("FAIL BrokenShapeTest>>#testBroken"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("2 passed, 1 failed"), "{}", r.stdout);
    assert!(
        r.stdout.contains("BrokenShapeTest>>testBroken (failed)"),
        "{}",
        r.stdout
    );
}

#[test]
fn coverage_usage_errors() {
    let dir = project(false);
    // No class path and no package: nothing to cover.
    let r = lupa_in(dir.path(), &["coverage", "ShapeTest"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--package"), "{}", r.stderr);
    // An unwritable output is found before the tests run.
    let r = lupa_in(
        dir.path(),
        &[
            "coverage",
            "-cp",
            "Shapes",
            "--format",
            "lcov",
            "-o",
            "no/such/dir/x.info",
        ],
    );
    assert_eq!(r.code, 74, "{}", r.stderr);
    assert!(!r.stdout.contains("passed"), "{}", r.stdout);
}

#[test]
fn coverage_json_has_methods_lines_and_tests() {
    let dir = project(false);
    let r = lupa_in(
        dir.path(),
        &["coverage", "-cp", "Shapes", "--format", "json", "-o", "-"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The tests' output went to standard error: standard output is the JSON.
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["version"], 1);
    let classes = v["classes"].as_array().expect("classes");
    let shape = classes
        .iter()
        .find(|c| c["name"] == "Shape")
        .expect("Shape");
    assert_eq!(shape["superclass"], "Object");
    let describe = shape["methods"]
        .as_array()
        .expect("methods")
        .iter()
        .find(|m| m["selector"] == "describe")
        .expect("describe");
    assert_eq!(describe["executions"], 1);
    assert_eq!(
        describe["tests"],
        serde_json::json!(["ShapeTest>>testDescribe"])
    );
    // Line coverage: the 'big' branch never ran, the 'small' one did.
    let lines = describe["lines"].as_array().expect("lines");
    let hits = |line: u64| {
        lines
            .iter()
            .find(|l| l["line"] == line)
            .and_then(|l| l["hits"].as_u64())
    };
    assert_eq!(hits(10), Some(0), "{describe}");
    assert_eq!(hits(11), Some(1), "{describe}");
    let tests = v["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 2);
    assert!(tests.iter().all(|t| t["result"] == "pass"));
}

#[test]
fn coverage_lcov_and_cobertura_read_back() {
    let dir = project(false);
    for (format, file) in [("lcov", "lcov.info"), ("cobertura", "coverage.xml")] {
        let r = lupa_in(
            dir.path(),
            &["coverage", "-cp", "Shapes", "--format", format, "-o", file],
        );
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
    }
    let lcov = std::fs::read_to_string(dir.path().join("lcov.info")).expect("lcov");
    let records = lcov.matches("end_of_record").count();
    assert_eq!(records, 3, "{lcov}");
    assert!(lcov.contains("FNDA:0,Shape>>unused"), "{lcov}");
    assert!(lcov.contains("DA:10,0"), "{lcov}");
    let xml = std::fs::read_to_string(dir.path().join("coverage.xml")).expect("xml");
    assert!(xml.contains("<class name=\"Square\""), "{xml}");
    assert!(xml.trim_end().ends_with("</coverage>"));
    if std::path::Path::new("/usr/bin/genhtml").exists() {
        let out = std::process::Command::new("/usr/bin/genhtml")
            .args(["--quiet", "--output-directory", "html", "lcov.info"])
            .current_dir(dir.path())
            .output()
            .expect("genhtml runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "genhtml: {err}");
        assert!(dir.path().join("html/index.html").exists());
    } else {
        eprintln!("skipped the genhtml check: lcov is not installed (Debian lcov)");
    }
}

#[test]
fn coverage_blueprint_opens_in_chromium() {
    let dir = project(false);
    for (format, file) in [("svg", "coverage.svg"), ("html", "coverage.html")] {
        let r = lupa_in(
            dir.path(),
            &["coverage", "-cp", "Shapes", "--format", format, "-o", file],
        );
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
    }
    let svg = std::fs::read_to_string(dir.path().join("coverage.svg")).expect("svg");
    // One box per method: Main has 1, Shape 5, Square 3 instance side and 1 class side.
    assert_eq!(svg.matches("class=\"method\"").count(), 10, "{svg}");
    assert_eq!(svg.matches("class=\"class\"").count(), 3, "{svg}");
    let Some(chromium) = crate::common::chromium() else {
        return;
    };
    let dom = crate::common::assert_page_ready(
        chromium,
        dir.path(),
        "coverage.html",
        "data-page-ready=\"true\"",
    );
    assert!(dom.contains("data-methods=\"10\""), "{dom}");
    crate::common::assert_screenshot_not_blank(chromium, dir.path(), "coverage.html");
    crate::common::assert_screenshot_not_blank(chromium, dir.path(), "coverage.svg");
}

#[test]
fn types_report_for_tests_and_for_a_program() {
    let dir = project(false);
    let r = lupa_in(dir.path(), &["types", "-cp", "Shapes", "ShapeTest"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    insta::assert_snapshot!("types_tests", scrub(&r.stdout, dir.path()));
    let r = lupa_in(
        dir.path(),
        &[
            "types", "-cp", "Shapes", "--format", "json", "-o", "-", "--run", "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["version"], 1);
    let at_put = v["methods"]
        .as_array()
        .expect("methods")
        .iter()
        .find(|m| m["selector"] == "at:put:")
        .expect("at:put:");
    assert_eq!(
        at_put["signature"],
        "Square >> at: <Integer> put: <String | nil> ^ <String | nil>"
    );
    assert_eq!(
        at_put["arguments"],
        serde_json::json!(["Integer", "String | nil"])
    );
}

#[test]
fn an_unknown_package_is_a_usage_error_naming_the_packages() {
    let dir = project(false);
    for command in ["coverage", "types"] {
        let r = lupa_in(dir.path(), &[command, "-cp", "Shapes", "--package", "Nope"]);
        assert_eq!(r.code, 2, "{command}: {}", r.stderr);
        assert!(r.stderr.contains("no package Nope"), "{}", r.stderr);
        assert!(r.stderr.contains("Shapes"), "{}", r.stderr);
        assert!(r.stderr.contains("Kernel"), "{}", r.stderr);
    }
    let r = lupa_in(
        dir.path(),
        &["blueprint", "-cp", "Shapes", "--package", "Nope", "Main"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no package Nope"), "{}", r.stderr);
    let r = lupa_in(
        dir.path(),
        &["count", "-cp", "Shapes", "--class", "Nope", "Main"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("no method of class Nope ran"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("Square"), "{}", r.stderr);
}

#[test]
fn a_package_named_like_a_bundled_folder_is_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let richards = dir.path().join("Richards");
    std::fs::create_dir(&richards).expect("mkdir");
    std::fs::write(
        richards.join("Planner.som"),
        "Planner = ( plan = ( ^3 ) )\n",
    )
    .expect("write");
    std::fs::write(
        richards.join("PlannerTest.som"),
        "PlannerTest = TestCase (\n    testPlan = ( self assert: 3 equals: Planner new plan )\n)\n",
    )
    .expect("write");
    let r = lupa_in(
        dir.path(),
        &[
            "coverage",
            "-cp",
            "Richards",
            "--package",
            "Richards",
            "--format",
            "json",
            "-o",
            "-",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let classes: Vec<&str> = json["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(classes, vec!["Planner"], "not Lupa's Richards classes");
}

#[test]
fn instrumentation_does_not_change_the_depth_a_program_reaches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let deep = dir.path().join("Deep");
    std::fs::create_dir(&deep).expect("mkdir");
    std::fs::write(
        deep.join("Deep.som"),
        "Deep = ( down: n = ( n = 0 ifTrue: [ ^0 ]. ^(self down: n - 1) + 1 ) )\n",
    )
    .expect("write");
    std::fs::write(
        deep.join("DeepTest.som"),
        "DeepTest = TestCase (\n    testDeep = ( self assert: 1900 equals: (Deep new down: 1900) )\n)\n",
    )
    .expect("write");
    for command in ["test", "coverage", "types"] {
        let r = lupa_in(
            dir.path(),
            &[command, "-cp", "Deep", "--max-stack-depth", "2000"],
        );
        assert_eq!(r.code, 0, "{command}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains("1 passed, 0 failed"),
            "{command}: {}",
            r.stdout
        );
    }
}

/// `Census`'s methods in a JSON report whose classes list their `methods`
/// (coverage, blueprint): the method `selector` of class `class`.
fn method_of<'a>(v: &'a serde_json::Value, class: &str, selector: &str) -> &'a serde_json::Value {
    v["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .filter(|c| c["name"] == class)
        .flat_map(|c| c["methods"].as_array().into_iter().flatten())
        .find(|m| m["selector"] == selector && m["class_side"] != true)
        .unwrap_or_else(|| panic!("{class}>>{selector} in {v}"))
}

/// Issue 27: Spy's profilers run beside a program's own collection classes
/// (AWFY's `Core` has its own `Vector` with `forEach:` and no `do:`, its own
/// `Dictionary`, `Set`...): coverage, types, blueprint and count of a program
/// whose package shadows `Vector`, `Dictionary`, `IdentityDictionary`, `Set`
/// and `IdentitySet` exit 0 with the program's own numbers.
#[test]
fn spy_runs_beside_a_programs_own_collection_classes() {
    use crate::common::shadows::{CENSUS_OUTPUT, own_collections};
    let dir = own_collections(&[]);
    let json = |args: &[&str]| {
        let mut all = vec![args[0], "-cp", "Own", "--format", "json", "-o", "-"];
        all.extend_from_slice(&args[1..]);
        let r = lupa_in(dir.path(), &all);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr, CENSUS_OUTPUT, "{args:?}: the program's output");
        let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
        v
    };
    let coverage = json(&["coverage", "--run", "Census"]);
    assert_eq!(method_of(&coverage, "Census", "run")["executions"], 1);
    assert_eq!(method_of(&coverage, "Census", "note:")["executions"], 6);
    assert_eq!(method_of(&coverage, "Census", "countOf:")["executions"], 7);
    assert_eq!(method_of(&coverage, "Set", "add:")["executions"], 6);
    assert_eq!(
        method_of(&coverage, "Dictionary", "at:put:")["executions"],
        12
    );
    assert_eq!(
        method_of(&coverage, "IdentitySet", "same:as:")["executions"],
        0
    );
    let types = json(&["types", "--run", "Census"]);
    let signature = |selector: &str| {
        types["methods"]
            .as_array()
            .expect("methods")
            .iter()
            .find(|m| m["selector"] == selector && m["class"] == "Census")
            .map(|m| m["signature"].clone())
            .unwrap_or_else(|| panic!("Census>>{selector} in {types}"))
    };
    assert_eq!(signature("note:"), "Census >> note: <String> ^ <Census>");
    assert_eq!(
        signature("countOf:"),
        "Census >> countOf: <String> ^ <Integer>"
    );
    let blueprint = json(&["blueprint", "Census"]);
    assert_eq!(method_of(&blueprint, "Census", "note:")["executions"], 6);
    assert_eq!(method_of(&blueprint, "Census", "countOf:")["executions"], 7);
    let r = lupa_in(
        dir.path(),
        &[
            "count", "-cp", "Own", "--class", "Census", "--format", "ranking", "Census",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with(CENSUS_OUTPUT), "{}", r.stdout);
    let activations = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .and_then(|l| l.trim().trim_end_matches('|').rsplit('|').next())
            .map(|a| a.trim().to_string())
            .unwrap_or_else(|| panic!("{name} in {}", r.stdout))
    };
    assert_eq!(activations("Census>>countOf:"), "7");
    assert_eq!(activations("Census>>note:"), "6");
}

/// SUnit itself runs beside the program's own `Set` and `Vector` (its
/// runner and results keep their lists in the profilers' `ProfilingBuffer`):
/// `lupa test`, and `lupa coverage` and `lupa types` over tests.
#[test]
fn tests_run_under_spy_beside_a_programs_own_collection_classes() {
    use crate::common::shadows::{CENSUS_TEST, own_collections};
    let dir = own_collections(&[("CensusTest.som", CENSUS_TEST)]);
    let r = lupa_in(dir.path(), &["test", "-cp", "Own:Driver"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("2 passed, 0 failed"), "{}", r.stdout);
    let r = lupa_in(
        dir.path(),
        &[
            "coverage",
            "-cp",
            "Own:Driver",
            "--format",
            "json",
            "-o",
            "-",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["packages"], serde_json::json!(["Own"]), "{v}");
    let count_of = method_of(&v, "Census", "countOf:");
    assert_eq!(count_of["executions"], 17);
    assert_eq!(
        count_of["tests"],
        serde_json::json!(["CensusTest>>testCounts", "CensusTest>>testNote"])
    );
    assert_eq!(method_of(&v, "Census", "note:")["executions"], 13);
    let tests = v["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 2);
    assert!(tests.iter().all(|t| t["result"] == "pass"), "{v}");
    let r = lupa_in(dir.path(), &["types", "-cp", "Own:Driver"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("Census >> countOf: <String> ^ <Integer>"),
        "{}",
        r.stdout
    );
}

/// The same from Smalltalk: Spy's API (type feedback, coverage, the time and
/// call graph, a profiler with hooks, which MethodProxies installs) on the
/// program with its own collection classes.
#[test]
fn spy_api_runs_beside_a_programs_own_collection_classes() {
    const DRIVER: &str = "SpyDriver = (
    run = (
        | types coverage graph calls note |
        types := TypeProfiler profile: [ Census new run ] inPackage: 'Own'.
        ('signature: ' + (types signatures
            detect: [ :s | s beginsWith: 'Census >> countOf:' ] ifNone: [ 'none' ])) println.
        ('report: ' + (types reportString beginsWith: 'Census >> countOf:') printString) println.
        coverage := TestCoverage profile: [ Census new run ] inPackage: 'Own'.
        ('executions: ' + ((coverage >> #Census) >> #countOf:) numberOfExecutions printString) println.
        ('covered: ' + (coverage reportString beginsWith: 'Methods executed: ') printString) println.
        graph := Profiler profile: [ Census new run ].
        note := (graph >> #Census) >> #note:.
        ('graph: ' + note numberOfExecutions printString + ' '
            + (note numberOfCallsTo: (graph >> #Census) >> #countOf:) printString) println.
        calls := CallsPerReceiverClass profile: [ Census new run ] inPackage: 'Own'.
        ('hooks: ' + (calls callsOf: 'Dictionary>>at:put:' from: #IdentityDictionary) printString
            + ' ' + (calls callsOf: 'Dictionary>>at:put:' from: #Dictionary) printString) println.
        ('left: ' + MpProxy allInstalledProxies size printString) println
    )
)
";
    use crate::common::shadows::own_collections;
    let dir = own_collections(&[("SpyDriver.som", DRIVER)]);
    let r = lupa_in(dir.path(), &["run", "-cp", "Own:Driver", "SpyDriver"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for line in [
        "signature: Census >> countOf: <String> ^ <Integer>",
        "report: true",
        "executions: 7",
        "covered: true",
        "graph: 6 6",
        "hooks: 6 6",
        "left: 0",
    ] {
        assert!(r.stdout.contains(line), "{line}:\n{}", r.stdout);
    }
}

/// SOM's own AWFY harness, with AWFY's `Core` (its own `Vector`...) and
/// SOM's core-lib on the class path (as `scripts/vs-som-rs.sh` builds it),
/// under `lupa types` and `lupa coverage` (when a SOM checkout is at hand).
#[test]
fn types_and_coverage_run_on_soms_own_harness() {
    let Some(som) = crate::common::som_dir("Examples/AreWeFastYet/Harness.som") else {
        return;
    };
    let awfy = som.join("Examples/AreWeFastYet");
    let cp = [
        awfy.clone(),
        awfy.join("Core"),
        awfy.join("Richards"),
        som.join("Smalltalk"),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect::<Vec<_>>()
    .join(":");
    let here = std::env::temp_dir();
    let run = ["--run", "Harness", "Richards", "1", "1"];
    let mut args = vec!["types", "-cp", &cp, "--package", "Richards"];
    args.extend_from_slice(&run);
    let r = lupa_in(&here, &args);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Richards: iterations=1"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Scheduler >> schedule ^ <Scheduler>"),
        "{}",
        r.stdout
    );
    let mut args = vec![
        "coverage",
        "-cp",
        &cp,
        "--package",
        "Richards",
        "--format",
        "json",
        "-o",
        "-",
    ];
    args.extend_from_slice(&run);
    let r = lupa_in(&here, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(method_of(&v, "Scheduler", "schedule")["executions"], 1);
    let methods: Vec<&serde_json::Value> = v["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .flat_map(|c| c["methods"].as_array().into_iter().flatten())
        .collect();
    let ran = methods.iter().filter(|m| m["executions"] != 0).count();
    assert!(
        ran > 40 && ran < methods.len(),
        "{ran} of {}",
        methods.len()
    );
}
