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
