//! End-to-end tests of `lupa gc-bench` and of its workload, `GcLoad`.
//!
//! Timings vary from run to run, so only the structure of the table, the
//! configuration columns and the workload's (deterministic) results are checked.

use crate::common::{Run, classes, lupa, lupa_in, scrub};

/// GcLoad's checksum for 2000 rows (also in GcLoad>>knownChecksumFor:).
const CHECKSUM_2000: &str = "986692020";

const HEADER: [&str; 16] = [
    "config",
    "eden",
    "headroom",
    "shrink",
    "ratio",
    "total s",
    "GC s",
    "GC %",
    "scavenges",
    "full GCs",
    "scavenge ms",
    "full GC ms",
    "tenured MB",
    "heap MB",
    "GC speed-up",
    "speed-up",
];

/// The cells of a table line: columns are separated by at least two spaces.
fn cells(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// `lupa gc-bench` with one measured run of GcLoad ROWS under each of
/// CONFIGS and no warm-up, then MORE options.
fn one_run(rows: &str, configs: &str, more: &[&str]) -> Run {
    let mut argv = vec![
        "gc-bench",
        "--size",
        rows,
        "--runs",
        "1",
        "--warmup",
        "0",
        "--configs",
        configs,
    ];
    argv.extend_from_slice(more);
    lupa(&argv)
}

#[test]
fn gcload_runs_standalone_and_verifies_its_result() {
    let r = lupa(&["run", "GcLoad", "2000"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "GcLoad: 2000 rows, 24 categories, 288 months, 3 passes\n\
GcLoad: checksum {CHECKSUM_2000}\nGcLoad: result verified\n"
        )
    );
}

#[test]
fn gcload_result_does_not_depend_on_the_gc_parameters() {
    // A tiny eden: many scavenges and full GCs, and the same result.
    let r = lupa(&[
        "run",
        "--eden-size",
        "256KB",
        "--hash-seed",
        "7",
        "GcLoad",
        "2000",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout.contains(&format!(
            "GcLoad: checksum {CHECKSUM_2000}\nGcLoad: result verified\n"
        )),
        "{}",
        r.stdout
    );
}

#[test]
fn gcload_rejects_a_bad_size() {
    let r = lupa(&["run", "GcLoad", "lots"]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    insta::assert_snapshot!("gcload_bad_size", r.stderr);
}

#[test]
fn gc_bench_prints_the_table_and_the_raw_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let csv = dir.path().join("runs.csv");
    let csv_arg = csv.display().to_string();
    let r = one_run("2000", "default,c1,1MB/1MB/2MB/33%", &["--csv", &csv_arg]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);

    // Progress: one line per run on stderr.
    let progress: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(progress.len(), 3, "{}", r.stderr);
    assert!(progress[0].starts_with("gc-bench: 1/3 default run 1: "));
    assert!(progress[2].starts_with("gc-bench: 3/3 1MB/1MB/2MB/33% run 1: "));

    let lines: Vec<&str> = r.stdout.lines().collect();
    // "GcLoad: 2000 rows, ...; 11 MB allocated per run; checksum ..., verified in every run"
    let (workload, rest) = lines[0].split_once("; ").expect("a summary line");
    assert_eq!(
        workload,
        "GcLoad: 2000 rows, 24 categories, 288 months, 3 passes"
    );
    assert!(rest.contains(" MB allocated per run; "), "{rest}");
    assert!(
        rest.ends_with(&format!(
            "; checksum {CHECKSUM_2000}, verified in every run"
        )),
        "{rest}"
    );
    assert!(
        lines[1].starts_with("1 run per configuration"),
        "{}",
        lines[1]
    );
    assert!(lines[1].ends_with("speed-ups are relative to default"));
    // Measured as `lupa run` runs the workload: with the JIT, in this
    // process as in worker processes.
    assert!(
        lines[1].contains("each in a fresh VM with the JIT;"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "");
    assert_eq!(cells(lines[3]), HEADER);
    assert!(
        lines[4].chars().all(|c| c == '-' || c == ' '),
        "{}",
        lines[4]
    );
    let rows: Vec<Vec<String>> = lines[5..8].iter().map(|l| cells(l)).collect();
    for row in &rows {
        assert_eq!(row.len(), HEADER.len(), "{row:?}");
    }
    let params: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r[..5].iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        params,
        [
            ["default", "15MB", "16MB", "32MB", "33%"],
            ["c1", "64MB", "64MB", "128MB", "250%"],
            ["1MB/1MB/2MB/33%", "1MB", "1MB", "2MB", "33%"],
        ]
    );
    // The baseline is the first configuration.
    assert_eq!(rows[0][15], "1.00x");
    // 2000 rows fit in the default eden; the 1 MB eden collects.
    assert_eq!(rows[0][8], "0");
    assert!(rows[2][8].parse::<u64>().unwrap_or(0) > 0, "{:?}", rows[2]);
    assert!(lines[8].is_empty());
    assert_eq!(lines[9], format!("raw measurements written to {csv_arg}"));
    assert_eq!(lines.len(), 10, "{}", r.stdout);

    // The table's layout up to the timings only depends on the configurations.
    let cut = lines[3].find("ratio").expect("a ratio column") + "ratio".len();
    let layout: Vec<String> = lines[3..8]
        .iter()
        .map(|l| l.chars().take(cut).collect())
        .collect();
    insta::assert_snapshot!("gc_bench_layout", layout.join("\n"));

    let text = std::fs::read_to_string(&csv).expect("the CSV file was written");
    let csv_lines: Vec<&str> = text.lines().collect();
    assert_eq!(csv_lines.len(), 4, "{text}");
    let header: Vec<&str> = csv_lines[0].split(',').collect();
    assert_eq!(header[0], "config");
    assert_eq!(header.last(), Some(&"checksum"));
    let scavenges = header
        .iter()
        .position(|h| *h == "scavenges")
        .expect("scavenges column");
    for (line, name) in csv_lines[1..]
        .iter()
        .zip(["default", "c1", "1MB/1MB/2MB/33%"])
    {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), header.len(), "{line}");
        assert_eq!(f[0], name);
        assert_eq!(f[5], "1", "run number: {line}");
        assert_eq!(f.last(), Some(&CHECKSUM_2000));
    }
    let small: Vec<&str> = csv_lines[3].split(',').collect();
    assert!(small[scavenges].parse::<u64>().unwrap_or(0) > 0, "{text}");
}

#[test]
fn gc_bench_quiet_runs_print_no_progress() {
    let r = lupa(&[
        "gc-bench",
        "--size",
        "500",
        "--runs",
        "2",
        "--configs",
        "default",
        "-q",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stderr, "");
    assert!(
        r.stdout.contains("2 runs per configuration"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(" ± "), "{}", r.stdout);
}

#[test]
fn gc_bench_rejects_bad_option_values() {
    let r = lupa(&["gc-bench", "--configs", "default,c9"]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    insta::assert_snapshot!("gc_bench_unknown_config", r.stderr);

    for (args, message) in [
        (
            vec!["--runs", "0"],
            "'0' is not a number of runs from 1 to 10000",
        ),
        (vec!["--runs", "many"], "'many' is not a number of runs"),
        (vec!["--size=-3"], "'-3' is not a number of rows"),
        (vec!["--size", "0"], "'0' is not a number of rows"),
        (
            vec!["--configs", "64MB/64MB/128MB"],
            "bad configuration '64MB/64MB/128MB'",
        ),
        (
            vec!["--configs", "64MB/64MB/128MB/lots"],
            "bad configuration",
        ),
        (vec!["--configs", "8GB/64MB/128MB/1"], "bad configuration"),
        (vec!["--configs", ","], "no configuration given"),
        (vec!["--tenuring-threshold", "16"], "16 is not in 1..=15"),
        (vec!["--warmup", "x"], "not a number of warm-up runs"),
        (vec!["--memory-limit", "1MB"], "too small a memory limit"),
        (vec!["--memory-limit", "lots"], "invalid size 'lots'"),
    ] {
        let mut argv = vec!["gc-bench"];
        argv.extend(args.iter().copied());
        let r = lupa(&argv);
        assert_eq!(r.code, 2, "{argv:?}: {}", r.stderr);
        assert!(r.stderr.contains(message), "{argv:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

/// Swap on this machine, from `/proc/swaps` (a header line, then one line each).
fn has_swap() -> bool {
    std::fs::read_to_string("/proc/swaps").is_ok_and(|s| s.lines().count() > 1)
}

#[test]
fn gc_bench_runs_workers_under_a_memory_limit_or_says_why_it_cannot() {
    // One run of GcLoad ROWS under the defaults, each worker under LIMIT.
    let limited = |rows: &str, limit: &str| {
        one_run(
            rows,
            "default",
            &["--workload", "gcload", "--memory-limit", limit, "-q"],
        )
    };
    // A limit far above what GcLoad 2000 needs: nothing is paged, but every
    // run goes through a memory cgroup. Machines without root, a memory
    // controller or swap cannot: exit 69 with the reason, before any run.
    let r = limited("2000", "512MB");
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    match r.code {
        0 => {
            assert!(has_swap(), "a limit without swap must be refused");
            assert!(
                r.stdout
                    .starts_with("Memory limit 512MB per worker (cgroup v"),
                "{}",
                r.stdout
            );
            assert!(
                r.stdout
                    .contains("1 at a time, each in a memory cgroup of 512MB"),
                "{}",
                r.stdout
            );
            assert!(r.stdout.contains(CHECKSUM_2000), "{}", r.stdout);
            // A limit below what the run needs (its VM alone takes more
            // than 20MB): paged, slowly, and never killed; the same result.
            let r = limited("20000", "20MB");
            assert_eq!(r.code, 0, "{}", r.stderr);
            assert!(
                r.stdout.contains("checksum 971967596, verified"),
                "{}",
                r.stdout
            );
        }
        69 => {
            assert!(r.stdout.is_empty(), "{}", r.stdout);
            assert!(
                r.stderr.starts_with("lupa gc-bench: --memory-limit: "),
                "{}",
                r.stderr
            );
            if !has_swap() {
                assert!(r.stderr.contains("no swap"), "{}", r.stderr);
            }
        }
        other => panic!("exit {other}: {}", r.stderr),
    }
}

#[test]
fn gc_bench_reports_a_workload_that_fails() {
    // A GcLoad on the class path that does not verify its result.
    let dir = classes(&[(
        "GcLoad.som",
        "GcLoad = ( run: args = ( 'GcLoad: checksum 1' println. system exit: 1 ) )",
    )]);
    let r = lupa_in(
        dir.path(),
        &[
            "gc-bench",
            "--cp",
            ".",
            "--runs",
            "1",
            "--configs",
            "default",
            "-q",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.starts_with(
            "lupa gc-bench: configuration default (warm-up): GcLoad exited with status 1"
        ),
        "{}",
        r.stderr
    );

    // One that answers without verifying.
    let dir = classes(&[(
        "GcLoad.som",
        "GcLoad = ( run: args = ( 'GcLoad: checksum 1' println ) )",
    )]);
    let r = lupa_in(
        dir.path(),
        &[
            "gc-bench", "--cp", ".", "--runs", "1", "--warmup", "0", "-q",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("configuration default (run 1): GcLoad did not verify its result"),
        "{}",
        r.stderr
    );

    // One that does not compile.
    let dir = classes(&[("GcLoad.som", "GcLoad = ( run: args = ( ^ 1 + ) )")]);
    let r = lupa_in(
        dir.path(),
        &[
            "gc-bench",
            "--cp",
            ".",
            "--runs",
            "1",
            "--configs",
            "default",
            "-q",
        ],
    );
    assert_eq!(r.code, 65, "{}", r.stderr);
    assert!(
        scrub(&r.stderr, dir.path()).starts_with("lupa gc-bench: the workload failed:\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn gc_bench_reports_an_unwritable_csv_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let csv = dir.path().join("no-such-dir").join("runs.csv");
    let r = one_run(
        "100",
        "default",
        &["-q", "--csv", &csv.display().to_string()],
    );
    assert_eq!(r.code, 74, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with(&format!("lupa gc-bench: cannot write {}: ", csv.display())),
        "{}",
        r.stderr
    );
}
