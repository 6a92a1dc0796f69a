//! End-to-end tests of `lupa gc-bench --workload dataframe`: the DataFrame
//! workload (smalltalk/Libraries/DataFrame) on a tiny file, the paper's
//! table 1 and tables 3-5, and the data directory.
//!
//! Timings vary from run to run: only the structure of the tables, the counts
//! that do not depend on time and the files are checked.

use crate::common::{lupa, lupa_in};

/// The cells of a table line: columns are separated by at least two spaces.
fn cells(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn gc_bench_dataframe_prints_the_papers_tables() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = [
        "gc-bench",
        "--workload",
        "dataframe",
        "--sizes",
        "300",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--configs",
        "default,c1",
        "--jobs",
        "2",
        "--csv",
        "runs.csv",
    ];
    let r = lupa_in(dir.path(), &args);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    // The data file is made once, in .lupa/data by default, with its sums.
    let data = dir.path().join(".lupa/data/dataframe-300.csv");
    assert!(data.is_file());
    assert!(
        dir.path()
            .join(".lupa/data/dataframe-300.csv.sums")
            .is_file()
    );
    assert!(
        r.stderr
            .starts_with("gc-bench: making .lupa/data/dataframe-300.csv (300)\n"),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.stderr
            .lines()
            .filter(|l| l.starts_with("gc-bench: 300: "))
            .count(),
        4,
        "{}",
        r.stderr
    );

    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "DataFrameLoad: sizes 300, data files in .lupa/data; every run verified its result"
    );
    assert!(
        lines[1].starts_with("2 runs per configuration and size"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains("in worker processes, 2 at a time"));
    assert_eq!(
        lines[3],
        "Table 1: loading a DataFrame with the default GC parameters"
    );
    assert_eq!(
        cells(lines[4]),
        [
            "size",
            "rows",
            "file MB",
            "allocated MB",
            "scavenges",
            "full GCs",
            "GC time s",
            "total time s",
            "GC %"
        ]
    );
    let t1 = cells(lines[6]);
    assert_eq!(&t1[..2], ["300", "300"], "{}", lines[6]);
    // 300 rows fit in the default eden.
    assert_eq!(&t1[4..6], ["0", "0"], "{}", lines[6]);
    assert_eq!(lines[7], "");
    assert!(
        lines[8].starts_with(
            "Table 3: the 300-row DataFrame (.lupa/data/dataframe-300.csv: 300 rows, 10 columns; checksum "
        ),
        "{}",
        lines[8]
    );
    assert_eq!(
        cells(lines[9]),
        [
            "config",
            "eden",
            "headroom",
            "shrink",
            "ratio",
            "scavenges",
            "full GCs",
            "GC time s",
            "total time s",
            "GC %",
            "speed-up (95% CI)"
        ]
    );
    let default = cells(lines[11]);
    let c1 = cells(lines[12]);
    assert_eq!(&default[..5], ["default", "15MB", "16MB", "32MB", "33%"]);
    assert_eq!(default.last().map(String::as_str), Some("1.00x"));
    assert_eq!(&c1[..5], ["c1", "64MB", "64MB", "128MB", "250%"]);
    assert!(c1[10].contains("x (95% CI "), "{}", lines[12]);
    assert_eq!(lines[13], "");
    assert_eq!(lines[14], "raw measurements written to runs.csv");

    let csv = std::fs::read_to_string(dir.path().join("runs.csv")).expect("the CSV file");
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("size,config,"), "{}", rows[0]);
    assert_eq!(rows.len(), 5, "{csv}");
    let checksums: Vec<&str> = rows[1..]
        .iter()
        .map(|l| l.rsplit(',').next().unwrap_or_default())
        .collect();
    assert!(
        checksums
            .iter()
            .all(|c| *c == checksums[0] && !c.is_empty())
    );

    // A second run reuses the file; without its sums it is made again.
    let r = lupa_in(dir.path(), &args);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(!r.stderr.contains("making"), "{}", r.stderr);
    std::fs::remove_file(dir.path().join(".lupa/data/dataframe-300.csv.sums")).expect("rm");
    let r = lupa_in(dir.path(), &args);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(r.stderr.starts_with("gc-bench: making "), "{}", r.stderr);
}

#[test]
fn gc_bench_dataframe_rejects_bad_sizes() {
    for (args, says) in [
        (
            vec!["--workload", "dataframe", "--sizes", "5XB"],
            "bad size '5XB'",
        ),
        (
            vec!["--workload", "dataframe", "--sizes", ","],
            "no size given",
        ),
        (
            vec!["--workload", "dataframe", "--size", "300"],
            "--size is for --workload gcload",
        ),
        (
            vec!["--sizes", "5MB"],
            "--sizes is for --workload dataframe",
        ),
        (vec!["--workload", "frames"], "invalid value 'frames'"),
    ] {
        let mut argv = vec!["gc-bench"];
        argv.extend(args.iter().copied());
        let r = lupa(&argv);
        assert_eq!(r.code, 2, "{argv:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{argv:?}: {}", r.stderr);
    }
}

#[test]
fn an_unwritable_data_directory_is_an_io_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").expect("write");
    let r = lupa(&[
        "gc-bench",
        "--workload",
        "dataframe",
        "--sizes",
        "300",
        "--data-dir",
        &file.join("data").display().to_string(),
        "-q",
    ]);
    assert_eq!(r.code, 74, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("lupa gc-bench: cannot create the data directory "),
        "{}",
        r.stderr
    );
}
