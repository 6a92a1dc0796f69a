//! `lupa profile`: the sampling profiler from the command line. The report of
//! deterministic mode is a golden snapshot; the thread's reports are checked
//! for their shape only (their numbers depend on the machine).

use crate::common::{classes, lupa_in};

const BUSY: &str = "Busy = (
  leaf: i = ( ^ i + 1 )
  loop: n = ( | s | s := 0. 1 to: n do: [ :i | s := s + (self leaf: i) ]. ^ s )
  run = ( 'working' println. self loop: 3000. self loop: 1000 )
)
";

#[test]
fn deterministic_report() {
    let dir = classes(&[("Busy.som", BUSY)]);
    let r = lupa_in(
        dir.path(),
        // The interpreter's report: whether Busy's loop gets compiled
        // depends on the JIT's threshold (the split is tested in jit.rs).
        &[
            "profile", "-cp", ".", "--jit", "off", "--every", "100", "Busy",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    // The binary's path and the date vary: the line is checked, then replaced.
    let mut lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[2].contains("(Lupa ") && lines[2].ends_with(" UTC"),
        "{}",
        lines[2]
    );
    lines[2] = "<binary> (Lupa <version>), <date> UTC";
    insta::assert_snapshot!("profile_every_100", lines.join("\n"));
}

#[test]
fn thread_report_has_rates_states_and_gc() {
    let dir = classes(&[("Busy.som", &BUSY.replace("3000", "300000"))]);
    let r = lupa_in(
        dir.path(),
        &[
            // The interpreter's report (the JIT's split is tested in jit.rs):
            // compiled, the run is too short for every range to get samples
            // on a loaded machine.
            "profile", "-cp", ".", "--jit", "off", "--rate", "5000", "--format", "text", "Busy",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let out = &r.stdout;
    assert!(
        out.starts_with("working\n"),
        "the program's output first: {out}"
    );
    assert!(
        out.contains("weighted by CPU time of the VM thread: 5000 Hz requested"),
        "{out}"
    );
    assert!(out.contains("(jitter seed 1)"), "{out}");
    for state in ["primitive", "scavenge", "full GC", "process switch"] {
        assert!(out.contains(&format!("  {state} ")), "{state}: {out}");
    }
    for section in [
        "Smalltalk code: ",
        "VM runtime: ",
        "Memory: ",
        "GCs: ",
        "Processes: ",
    ] {
        assert!(out.contains(section), "{section}: {out}");
    }
    assert!(out.contains(", line 3, #leaf:"), "bytecode ranges: {out}");
    assert!(out.contains("Busy>>loop:"), "{out}");
    assert!(
        !out.contains("Activations"),
        "a sampler sees no calls: {out}"
    );
}

#[test]
fn exports_parse_back() {
    let dir = classes(&[("Busy.som", BUSY)]);
    for (format, file) in [
        ("json", "p.json"),
        ("callgrind", "callgrind.out"),
        ("pprof", "p.pb.gz"),
    ] {
        let r = lupa_in(
            dir.path(),
            &[
                "profile", "-cp", ".", "--every", "10", "--format", format, "-o", file, "Busy",
            ],
        );
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        assert_eq!(r.stdout, "working\n", "{format}: the report is in the file");
        let bytes = std::fs::read(dir.path().join(file)).expect("written");
        assert!(!bytes.is_empty());
        if format == "json" {
            let v: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
            assert_eq!(v["metric"]["unit"], "samples", "{v}");
            assert_eq!(v["sampling"]["clock"], "sends", "{v}");
            assert_eq!(v["sampling"]["every"], 10, "{v}");
        }
        if format == "callgrind" {
            let text = String::from_utf8(bytes).expect("text");
            assert!(text.contains("events: Samples Sends"), "{text}");
        }
    }
}

#[test]
fn bad_options_are_usage_errors() {
    let dir = classes(&[("Busy.som", BUSY)]);
    for args in [
        &["profile", "--rate", "0", "Busy"][..],
        &["profile", "--rate", "1000000", "Busy"],
        &["profile", "--every", "0", "Busy"],
        &["profile", "--clock", "gpu", "Busy"],
    ] {
        let r = lupa_in(dir.path(), args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
}

/// `--native`: the VM thread's native pcs by Rust function (SIGPROF; Linux).
#[test]
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn native_pcs_are_symbolised_by_rust_function() {
    let dir = classes(&[("Busy.som", &BUSY.replace("3000", "600000"))]);
    let r = lupa_in(
        dir.path(),
        // Interpreted, so that the pcs are in Rust functions (those in the
        // JIT's code zone are mapped to compiled methods: jit.rs and the
        // sampler's unit tests).
        &[
            "profile", "-cp", ".", "--native", "--rate", "2000", "--jit", "off", "Busy",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let out = &r.stdout;
    let line = out
        .lines()
        .find(|l| l.starts_with("VM native code (SIGPROF): "))
        .unwrap_or_else(|| panic!("a native section: {out}"));
    let pcs: u64 = line["VM native code (SIGPROF): ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(pcs > 0, "{line}");
    assert!(out.contains("lupa_vm::"), "the VM's own functions: {out}");
    let r = lupa_in(
        dir.path(),
        &["profile", "--native", "--every", "10", "Busy"],
    );
    assert_eq!(r.code, 2, "--native needs the thread: {}", r.stderr);
}

#[test]
fn a_bundled_benchmark_by_name() {
    let dir = classes(&[]);
    let r = lupa_in(
        dir.path(),
        &["profile", "--every", "1000", "--bench", "Towers", "1", "2"],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout
            .contains("lupa profile BenchmarkRunner Towers 1 2\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("TowersBenchmark>>"), "{}", r.stdout);
}

/// A sampled profile's pprof export opens in `go tool pprof` (Debian
/// `golang-go`, installed by `.ci/run`) with its one sample type.
#[test]
fn sampled_pprof_opens_in_go_tool_pprof() {
    let dir = classes(&[("Busy.som", BUSY)]);
    let r = lupa_in(
        dir.path(),
        &[
            "profile", "-cp", ".", "--every", "10", "--format", "pprof", "-o", "p.pb.gz", "Busy",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Samples and the sends charged to them travel together; samples are
    // the default view.
    for index in ["", "samples", "sends"] {
        if let Some(stdout) = crate::common::go_tool_pprof_top(&dir.path().join("p.pb.gz"), index) {
            assert!(stdout.contains("Busy>>loop:"), "{stdout}");
            let shown = if index.is_empty() { "samples" } else { index };
            assert!(stdout.contains(&format!("Type: {shown}")), "{stdout}");
        }
    }
}

/// Issue 25: VM-state leaves (`<scavenge>`, `<allocation>`) keep their
/// names in `go tool pprof` (not `<unknown>`), and its default view of a
/// profile weighted by CPU time is the time.
#[test]
fn pprof_names_vm_states_and_shows_time_by_default() {
    let program = "Alloc = (
    run = ( | a | 1 to: 100000 do: [:i | a := Array new: 600. a at: 1 put: i printString ] )
)";
    let dir = classes(&[("Alloc.som", program)]);
    let r = lupa_in(
        dir.path(),
        &[
            "profile", "-cp", ".", "--rate", "4000", "--format", "pprof", "-o", "p.pb.gz", "Alloc",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let Some(stdout) = crate::common::go_tool_pprof_top(&dir.path().join("p.pb.gz"), "") else {
        return;
    };
    assert!(stdout.contains("Type: time"), "{stdout}");
    assert!(!stdout.contains("<unknown>"), "{stdout}");
    assert!(
        stdout.contains("<scavenge>") || stdout.contains("<allocation>"),
        "{stdout}"
    );
}

/// Issue 25: a sampled profile does not know its activations: callgrind
/// writes its calls as 1 (callgrind_annotate drops calls counted 0, and
/// charged everything to the root), JSON says `null`, HTML shows none.
#[test]
fn sampled_exports_do_not_claim_zero_calls() {
    let dir = classes(&[("Busy.som", BUSY)]);
    for (format, file) in [
        ("callgrind", "cg.out"),
        ("json", "p.json"),
        ("html", "p.html"),
    ] {
        let r = lupa_in(
            dir.path(),
            &[
                "profile", "-cp", ".", "--every", "10", "--format", format, "-o", file, "Busy",
            ],
        );
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
    }
    let cg = std::fs::read_to_string(dir.path().join("cg.out")).expect("written");
    assert!(!cg.contains("calls=0 "), "{cg}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p.json")).expect("json"))
            .expect("JSON");
    let nodes = json["processes"][0]["nodes"].as_array().expect("nodes");
    assert!(!nodes.is_empty());
    assert!(
        nodes.iter().all(|n| n["activations"].is_null()),
        "{nodes:?}"
    );
    let html = std::fs::read_to_string(dir.path().join("p.html")).expect("html");
    assert!(!html.contains(" calls)"), "the tree shows no call counts");
    if std::path::Path::new("/usr/bin/callgrind_annotate").exists() {
        let out = std::process::Command::new("callgrind_annotate")
            .args(["--inclusive=yes", "cg.out"])
            .current_dir(dir.path())
            .output()
            .expect("callgrind_annotate runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        // `N (P%)  file:Busy>>run`: the run's inclusive share, not the root's.
        let share = stdout
            .lines()
            .find(|l| l.contains("Busy>>run"))
            .and_then(|l| {
                l.split_once('(')?
                    .1
                    .split_once("%)")?
                    .0
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no inclusive share of Busy>>run:\n{stdout}"));
        assert!(share > 50.0, "{stdout}");
    } else {
        eprintln!("skipped the callgrind_annotate check: valgrind is not installed");
    }
}

/// The exports that show time take the samples in time order: Firefox
/// (categories are VM states, markers are collections and process
/// switches) and speedscope (sampled profiles); callgrind has the samples'
/// sends beside them.
#[test]
fn timed_exports_have_states_markers_and_sends() {
    let program = "Timed = (
    run = ( | s |
        s := Semaphore new.
        [ 1 to: 400 do: [:i | self work. Processor yield ]. s signal ] fork.
        1 to: 400 do: [:i | self work. Processor yield ].
        s wait.
        system fullGC )
    work = ( 1 to: 200 do: [:j | (Array new: 50) at: 1 put: j printString ] )
)";
    let dir = classes(&[("Timed.som", program)]);
    let run = |format: &str, file: &str| {
        let r = lupa_in(
            dir.path(),
            &[
                "profile", "-cp", ".", "--rate", "2000", "--format", format, "-o", file, "Timed",
            ],
        );
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        std::fs::read_to_string(dir.path().join(file)).expect("written")
    };
    let v: serde_json::Value = serde_json::from_str(&run("firefox", "f.json")).expect("JSON");
    let categories: Vec<&str> = v["meta"]["categories"]
        .as_array()
        .expect("categories")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for state in [
        "interpreting",
        "primitive",
        "scavenge",
        "full GC",
        "process switch",
        "allocation",
        "finalization",
        "waiting",
        "idle",
    ] {
        assert!(categories.contains(&state), "{categories:?}");
    }
    let threads = v["threads"].as_array().expect("threads");
    assert_eq!(threads.len(), 2, "main and the forked process");
    let mut marker_names = std::collections::BTreeSet::new();
    for t in threads {
        let strings = t["stringArray"].as_array().expect("strings");
        for i in t["markers"]["name"].as_array().expect("names") {
            let name = strings[i.as_u64().expect("index") as usize].as_str();
            marker_names.insert(name.expect("a string").to_string());
        }
    }
    assert!(marker_names.contains("Process switch"), "{marker_names:?}");
    assert!(marker_names.contains("Full GC"), "{marker_names:?}");
    let s: serde_json::Value = serde_json::from_str(&run("speedscope", "s.json")).expect("JSON");
    let profiles = s["profiles"].as_array().expect("profiles");
    assert!(profiles.iter().all(|p| p["type"] == "sampled"), "{s}");
    let cg = run("callgrind", "callgrind.out");
    assert!(cg.contains("events: Nanoseconds Samples Sends"), "{cg}");
}

/// `--compare-modes`: the time profile's self shares next to a deterministic
/// run's (the work), method by method; the second run's output is not shown.
#[test]
fn time_and_work_side_by_side() {
    let dir = classes(&[("Busy.som", &BUSY.replace("3000", "300000"))]);
    let r = lupa_in(
        dir.path(),
        &["profile", "-cp", ".", "--compare-modes", "100", "Busy"],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let out = &r.stdout;
    assert_eq!(out.matches("working\n").count(), 1, "{out}");
    assert!(out.contains("Time and work: self shares"), "{out}");
    assert!(out.contains("(a sample every 100 sends)"), "{out}");
    let line = out
        .lines()
        .skip_while(|l| !l.starts_with("Time and work"))
        .find(|l| l.ends_with("  Busy>>loop:"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(line.matches('%').count(), 2, "{line}");
    let r = lupa_in(
        dir.path(),
        &["profile", "--every", "10", "--compare-modes", "Busy"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
}
