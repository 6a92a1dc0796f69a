//! End-to-end tests of `lupa gc-tune` and of the worker side of its runs
//! (`lupa run --stats-json`).
//!
//! Timings vary from run to run: only the shape of the report, the flags it
//! recommends (which must parse back as `lupa run` flags) and the exit codes
//! are checked, never a time.

use crate::common::{classes, lupa};

/// The cells of a table line: columns are separated by at least two spaces.
fn cells(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// The flags of a `lupa run FLAGS GcLoad 2000` line.
fn flags_of(line: &str, prefix: &str) -> Vec<String> {
    let rest = line
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{line:?} starts with {prefix:?}"));
    let rest = rest
        .strip_suffix(" GcLoad 2000")
        .unwrap_or_else(|| panic!("{line:?} ends with the program"));
    rest.split(' ').map(str::to_string).collect()
}

#[test]
fn gc_tune_profiles_proposes_searches_and_verifies() {
    if !crate::common::slow_tests("the gc-tune search") {
        return;
    }
    let r = lupa(&[
        "gc-tune", "--budget", "5s", "--runs", "2", "--jobs", "2", "GcLoad", "2000",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    // Progress on stderr: the phases, and one line per verification run (3 configurations
    // at most, 2 runs each).
    assert!(
        r.stderr.lines().all(|l| l.starts_with("gc-tune: ")),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("gc-tune: profile: object lifetimes of GcLoad 2000")
    );
    assert!(r.stderr.contains("gc-tune: search: defaults "));
    let verify = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("gc-tune: verify: "))
        .count();
    assert!(verify == 4 || verify == 6, "{}", r.stderr);

    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "lupa gc-tune GcLoad 2000");
    assert!(lines[2].starts_with("Profile: "), "{}", lines[2]);
    assert!(lines[3].starts_with("Sites (against the default 15MB nursery): "));
    // The proposal: five flags, each with its reason on the same line.
    let p = lines
        .iter()
        .position(|l| *l == "Proposal (from the lifetimes):")
        .expect("a proposal");
    let proposed: Vec<&str> = lines[p + 1..p + 6]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(
        proposed,
        [
            "--eden-size",
            "--growth-headroom",
            "--shrink-threshold",
            "--gc-ratio",
            "--tenuring-threshold"
        ]
    );
    for l in &lines[p + 1..p + 6] {
        assert!(cells(l).len() >= 2, "a flag and its reason: {l}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Search (iterated local search from the defaults, seed 1): ")),
        "{}",
        r.stdout
    );
    // The verification table.
    let h = lines
        .iter()
        .position(|l| l.starts_with("config "))
        .expect("a table");
    assert_eq!(
        cells(lines[h]),
        [
            "config",
            "eden",
            "headroom",
            "shrink",
            "ratio",
            "tenuring",
            "total s",
            "GC s",
            "GC %",
            "scavenges",
            "full GCs",
            "heap MB",
            "speed-up"
        ]
    );
    assert!(lines[h + 2].starts_with("default"), "{}", lines[h + 2]);
    assert!(lines[h + 3].starts_with("proposal"), "{}", lines[h + 3]);
    assert!(r.stdout.contains("Output: the same in every run"));
    // The two recommendations, with their speed-ups.
    let prop = lines
        .iter()
        .find(|l| l.starts_with("proposal: lupa run "))
        .expect("the proposal's command");
    let best = lines
        .iter()
        .find(|l| l.starts_with("search:   lupa run "))
        .expect("the search's command");
    assert_eq!(
        r.stdout.matches("  speed-up over the defaults: ").count(),
        2,
        "{}",
        r.stdout
    );
    assert!(lines.last().is_some_and(|l| l.starts_with("Verdict: ")));

    // The recommended flags are `lupa run` flags, and select what the table says.
    for (line, prefix) in [(prop, "proposal: lupa run "), (best, "search:   lupa run ")] {
        let flags = flags_of(line, prefix);
        assert_eq!(flags[0], "--eden-size", "{line}");
        let mut args: Vec<&str> = vec!["run", "--gc-stats"];
        args.extend(flags.iter().map(String::as_str));
        args.extend(["GcLoad", "1000"]);
        let run = lupa(&args);
        assert_eq!(run.code, 0, "{line}: {}", run.stderr);
        assert!(run.stdout.contains("GcLoad: result verified"));
        let params = run
            .stderr
            .lines()
            .find(|l| l.starts_with("gc parameters:"))
            .expect("--gc-stats prints the parameters");
        assert!(
            params.contains(&format!("eden {},", flags[1])),
            "{params} for {line}"
        );
        assert!(
            params.contains(&format!("gc ratio {},", flags[7])),
            "{params}"
        );
    }
}

#[test]
fn gc_tune_is_quiet_with_q() {
    let r = lupa(&[
        "gc-tune", "-q", "--budget", "1s", "--runs", "1", "--seed", "3", "Hello",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stderr, "");
    assert!(r.stdout.starts_with("lupa gc-tune Hello\n"), "{}", r.stdout);
    assert!(r.stdout.contains("seed 3"));
    // One run each: no interval.
    assert!(r.stdout.contains("(one run: no interval)"), "{}", r.stdout);
}

#[test]
fn an_unknown_class_is_a_clear_error() {
    let r = lupa(&["gc-tune", "--budget", "1s", "NoSuchWorkload"]);
    assert_eq!(r.code, 66, "stderr: {}", r.stderr);
    assert!(r.stderr.contains("NoSuchWorkload"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
}

#[test]
fn bad_options_are_usage_errors() {
    for (args, says) in [
        (vec!["--budget", "soon"], "invalid time 'soon'"),
        (vec!["--budget", "0s"], "the budget must be more than 0"),
        (vec!["--runs", "0"], "not a number of runs"),
        (vec!["--jobs", "0"], "--jobs"),
        (vec!["--rate", "2"], "not a sampling rate"),
    ] {
        let mut all = vec!["gc-tune"];
        all.extend(args.iter().copied());
        all.push("GcLoad");
        let r = lupa(&all);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
    // The exit codes are documented.
    let r = lupa(&["gc-tune", "--help"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("74   a worker process cannot be started"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_failing_program_fails_the_tuning() {
    let dir = classes(&[("Fails.som", "Fails = (\n  run = ( system exit: 3 )\n)\n")]);
    let cp = dir.path().display().to_string();
    let r = lupa(&["gc-tune", "--budget", "1s", "--cp", &cp, "Fails"]);
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert!(r.stderr.contains("exited with status 3"), "{}", r.stderr);
}

#[test]
fn the_worker_prints_the_output_then_one_statistics_line() {
    let r = lupa(&[
        "run",
        "--stats-json",
        "--eden-size",
        "2MB",
        "GcLoad",
        "2000",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout.ends_with("GcLoad: result verified\n"),
        "{}",
        r.stdout
    );
    let last = r.stderr.lines().last().expect("a statistics line");
    let v: serde_json::Value = serde_json::from_str(last).expect("JSON");
    assert_eq!(v["lupa_run_stats"], 1);
    assert_eq!(v["exit_code"], 0);
    assert!(
        v["allocated_bytes"].as_u64().is_some_and(|b| b > 1 << 20),
        "{v}"
    );
    assert!(v["scavenges"].as_u64().is_some_and(|n| n > 0), "{v}");
    assert!(v["elapsed_us"].as_u64().is_some());
    // A program's own status passes through.
    let dir = classes(&[("Fails.som", "Fails = (\n  run = ( system exit: 3 )\n)\n")]);
    let cp = dir.path().display().to_string();
    let r = lupa(&["run", "--stats-json", "--cp", &cp, "Fails"]);
    assert_eq!(r.code, 3);
    let v: serde_json::Value =
        serde_json::from_str(r.stderr.lines().last().unwrap_or_default()).expect("JSON");
    assert_eq!(v["exit_code"], 3);
    // The flag is not advertised.
    let help = lupa(&["run", "--help"]);
    assert!(!help.stdout.contains("stats-json"));
}
