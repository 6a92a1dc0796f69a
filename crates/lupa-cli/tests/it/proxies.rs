//! `lupa proxies-bench` end to end, on a small configuration: the tables are
//! printed, every row verified its workload and the exact uninstall; and
//! MethodProxies beside a program's own collection classes.

use crate::common::{lupa, lupa_in};

#[test]
fn proxies_bench_prints_the_three_tables_and_verifies_every_run() {
    let csv = tempfile::NamedTempFile::new().expect("temp file");
    let path = csv.path().display().to_string();
    let r = lupa(&[
        "proxies-bench",
        "--runs",
        "1",
        "--best-of",
        "1",
        "--projects",
        "Richards",
        "--techniques",
        "trap,runWithIn,source",
        "--handlers",
        "noAction,counting",
        "--csv",
        &path,
    ]);
    assert_eq!(r.code, 0, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    for title in ["Table 2", "Table 3", "Table 5"] {
        assert!(r.stdout.contains(title), "no {title} in:\n{}", r.stdout);
    }
    let raw = std::fs::read_to_string(csv.path()).expect("csv written");
    // Plain CSV: a header, then rows with the same number of fields; the
    // driver's comments and summary are in FILE.summary.txt.
    let mut lines = raw.lines();
    let header = lines.next().expect("header");
    assert!(
        header.starts_with("project,technique,handler,run,"),
        "{raw}"
    );
    assert!(lines.clone().all(|l| l.split(',').count() == 11), "{raw}");
    assert!(!raw.contains('#'), "{raw}");
    let summary = std::fs::read_to_string(format!("{path}.summary.txt")).expect("summary written");
    assert!(summary.contains("# summary"), "{summary}");
    let _ = std::fs::remove_file(format!("{path}.summary.txt"));
    let rows: Vec<&str> = raw.lines().filter(|l| l.starts_with("Richards,")).collect();
    assert_eq!(rows.len(), 6, "{raw}");
    for row in rows {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f.len(), 11, "{row}");
        assert_eq!(f[10], "true", "workload or uninstall failed: {row}");
        assert!(f[4].parse::<u32>().unwrap_or(0) > 50, "methods: {row}");
    }
}

#[test]
fn proxies_bench_rejects_an_unknown_project() {
    // A usage error, at once (exit 2), before any baseline is measured.
    for (flag, name) in [
        ("--projects", "Nope"),
        ("--handlers", "bogus"),
        ("--techniques", "x"),
    ] {
        let r = lupa(&["proxies-bench", "--runs", "1", flag, name]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!("unknown name '{name}'")),
            "{}",
            r.stderr
        );
    }
}

/// Issue 27: MethodProxies runs beside a program's own collection classes
/// (`Vector`, `Dictionary`, `IdentityDictionary`, `Set`, `IdentitySet` with
/// AWFY-like protocols): proxies installed on the program's classes (its
/// `Dictionary` included) with the call-graph and coverage handlers and by
/// hand, the calls counted, then every proxy uninstalled and the methods
/// restored.
#[test]
fn method_proxies_run_beside_a_programs_own_collection_classes() {
    const DRIVER: &str = "ProxyDriver = (
    run = (
        | before graph proxies coverage covered counting proxy |
        before := Census >> #countOf:.
        graph := MpCallGraphHandler new.
        proxies := MpProxySet onClasses: (Array with: Census with: Dictionary) handler: graph.
        proxies install.
        ('installed: ' + proxies size printString + ' ' + proxies skipped size printString) println.
        Census new run.
        proxies uninstall.
        ('calls: ' + (graph callGraph callsOf: Census >> #countOf:) printString
            + ' ' + (graph callGraph callsFrom: Census >> #note: to: Census >> #countOf:) printString
            + ' ' + (graph callGraph callsOf: Dictionary >> #at:put:) printString) println.
        coverage := MpCoverageHandler new.
        covered := MpProxySet onClasses: (Array with: Census) handler: coverage.
        covered install.
        Census new run.
        covered uninstall.
        ('covered: ' + coverage executedMethods size printString
            + ' ' + (coverage isCovered: Census >> #note:) printString) println.
        counting := MpCountingHandler new.
        proxy := MpMethodProxy onMethod: Census >> #note: handler: counting.
        proxy install.
        ('proxies: ' + MpProxy installedProxies size printString) println.
        Census new run.
        MpProxy uninstallAll.
        ('counted: ' + counting count printString) println.
        ('left: ' + MpProxy allInstalledProxies size printString
            + ' ' + ((Census >> #countOf:) == before) printString) println
    )
)
";
    let dir = crate::common::shadows::own_collections(&[("ProxyDriver.som", DRIVER)]);
    let r = lupa_in(dir.path(), &["run", "-cp", "Own:Driver", "ProxyDriver"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for line in [
        "installed: 12 0",
        "calls: 7 6 12",
        "covered: 3 true",
        "proxies: 1",
        "counted: 6",
        "left: 0 true",
    ] {
        assert!(r.stdout.contains(line), "{line}:\n{}", r.stdout);
    }
}
