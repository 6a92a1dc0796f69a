//! The Smalltalk test suites, run through the VM: Lupa's bundled SUnit suites
//! (normally and under GC stress) and, when a checkout is available, SOM's own
//! TestSuite and the Are-We-Fast-Yet benchmarks on SOM's core-lib.

use crate::common::{classes, lupa, lupa_in, som_dir};

/// The `N passed, M failed` line of `lupa test`'s output.
pub(crate) fn summary_line(out: &str) -> Option<(u32, u32)> {
    let line = out.lines().rev().find(|l| l.contains(" passed, "))?;
    let mut it = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

#[test]
fn bundled_sunit_suites_pass() {
    let r = lupa(&["test"]);
    let (passed, failed) = summary_line(&r.stdout)
        .unwrap_or_else(|| panic!("no summary:\n{}\n{}", r.stdout, r.stderr));
    assert_eq!(failed, 0, "failures:\n{}", r.stdout);
    assert!(passed > 50, "only {passed} tests ran");
    assert_eq!(r.code, 0);
}

#[test]
fn bundled_sunit_suites_pass_under_gc_stress() {
    // A representative subset: collections, closures, exceptions, processes.
    let r = lupa(&[
        "test",
        "--gc-stress",
        "--verify-heap",
        "LupaBlockTest",
        "LupaExceptionTest",
        "LupaCollectionTest",
        "LupaEnsureTest",
        "LupaProcessTest",
        "LupaWeakArrayTest",
        "LupaGcTest",
        "LupaMpTrapTest",
    ]);
    let (_, failed) = summary_line(&r.stdout)
        .unwrap_or_else(|| panic!("no summary:\n{}\n{}", r.stdout, r.stderr));
    assert_eq!(failed, 0, "failures:\n{}", r.stdout);
    assert_eq!(r.code, 0);
}

#[test]
fn benchmarks_verify_under_gc_stress() {
    // Collect at every allocation and verify the heap after each collection.
    for args in [
        &["bench", "Richards", "1", "1"][..],
        &["bench", "DeltaBlue", "1", "20"][..],
        &["bench", "CD", "1", "2"][..],
        &["run", "GcLoad", "60"][..],
    ] {
        let mut all = vec![args[0], "--gc-stress", "--verify-heap"];
        all.extend(&args[1..]);
        let r = lupa(&all);
        assert_eq!(r.code, 0, "{args:?}: {}\n{}", r.stdout, r.stderr);
    }
}

#[test]
fn failing_test_is_reported_and_exit_is_non_zero() {
    let dir = crate::common::classes(&[(
        "FailingTest.som",
        "FailingTest = TestCase (\n  testGood = ( self assert: 1 + 1 equals: 2 )\n  testBad = ( self assert: 1 + 1 equals: 3 )\n)\n",
    )]);
    let r = lupa_in(dir.path(), &["test", "-cp", ".", "FailingTest"]);
    assert_eq!(r.code, 1);
    assert_eq!(summary_line(&r.stdout), Some((1, 1)), "{}", r.stdout);
    assert!(r.stdout.contains("testBad"), "{}", r.stdout);
}

#[test]
fn som_testsuite_passes_on_som_core_lib() {
    assert_som_testsuite_passes(&[]);
}

/// SOM's TestSuite on SOM's core-lib, with the VM flags `extra`: every test
/// passes (skipped, saying so, without a SOM checkout).
pub(crate) fn assert_som_testsuite_passes(extra: &[&str]) {
    let Some(som) = som_dir("TestSuite/TestHarness.som") else {
        return;
    };
    let cp = format!("{0}/Smalltalk:{0}/TestSuite", som.display());
    let mut args = vec!["--no-bundled", "-cp", &cp];
    args.extend(extra);
    args.push("TestHarness");
    let r = lupa(&args);
    assert_eq!(r.code, 0, "{extra:?}: {}\n{}", r.stdout, r.stderr);
    let n = |prefix: &str| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.split(':').nth(1))
            .and_then(|s| s.trim().parse::<u32>().ok())
    };
    let total = n("Total number of tests:");
    assert!(total.is_some(), "{extra:?}: no total line: {}", r.stdout);
    assert_eq!(
        total,
        n("Number of successful tests:"),
        "{extra:?}: {}",
        r.stdout
    );
}

#[test]
fn awfy_benchmarks_verify_on_som_core_lib() {
    let Some(som) = som_dir("Examples/AreWeFastYet/Harness.som") else {
        return;
    };
    let a = som.join("Examples/AreWeFastYet");
    let dirs = [
        "",
        "Core",
        "CD",
        "DeltaBlue",
        "Havlak",
        "Json",
        "NBody",
        "Richards",
    ];
    let mut cp: Vec<String> = dirs
        .iter()
        .map(|d| a.join(d).display().to_string())
        .collect();
    cp.insert(2, som.join("Smalltalk").display().to_string());
    let cp = cp.join(":");
    for (bench, inner) in [
        ("Bounce", "1"),
        ("List", "1"),
        ("Mandelbrot", "1"),
        ("NBody", "1"),
        ("Permute", "1"),
        ("Queens", "1"),
        ("Sieve", "1"),
        ("Storage", "1"),
        ("Towers", "1"),
        ("Richards", "1"),
        ("DeltaBlue", "10"),
        ("Json", "1"),
        ("CD", "10"),
        ("Havlak", "1"),
    ] {
        let r = lupa(&["--no-bundled", "-cp", &cp, "Harness", bench, "1", inner]);
        assert_eq!(r.code, 0, "{bench}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("Total Runtime"), "{bench}: {}", r.stdout);
    }
}

/// Intrinsics keep core-lib's semantics: `Boolean>>&&`/`||` answer what
/// `and:`/`or:` answer, with Booleans, blocks and anything else; and
/// `String>>charAt:` answers the same characters, and out of bounds the same
/// core-lib error.
#[test]
fn core_lib_char_at_intrinsic_keeps_its_semantics() {
    let Some(som) = som_dir("Smalltalk/Object.som") else {
        return;
    };
    let dir = classes(&[(
        "CharAt.som",
        "CharAt = ( run = ( ('abc' charAt: 2) println. (#sym charAt: 1) println. ('abc' charAt: 5) println ) )",
    )]);
    std::fs::write(
        dir.path().join("Bools.som"),
        "Bools = ( run = ( (true && false) println. (true && true) println. (false && true) println. \
         (true || false) println. (false || true) println. (false || false) println. \
         (true && [ false ]) println. (false || [ 3 ]) println. (true && 3) println ) )",
    )
    .expect("write");
    let cp = format!("{}/Smalltalk:.", som.display());
    let r = lupa_in(dir.path(), &["--no-bundled", "-cp", &cp, "Bools"]);
    assert_eq!(
        r.stdout, "false\ntrue\nfalse\ntrue\ntrue\nfalse\nfalse\n3\n3\n",
        "{}",
        r.stderr
    );
    let r = lupa_in(dir.path(), &["--no-bundled", "-cp", &cp, "CharAt"]);
    assert!(r.stdout.starts_with("b\ns\n"), "{}", r.stdout);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("Attempting to index string out of its bounds (start: 5 end: 5 length: 3)"),
        "{all}"
    );
}
