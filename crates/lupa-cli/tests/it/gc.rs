//! The collector through the `lupa` command: parameters on the command line and
//! from Smalltalk, `--gc-stats`, ephemerons mourned after a scavenge, errors.

use crate::common::{classes, lupa_in, scrub};

const PARAMS: &str = "Params = (
  run = (
    (system gcParameterAt: #edenSize) println.
    (system gcParameterAt: #growthHeadroom) println.
    (system gcParameterAt: #shrinkThreshold) println.
    (system gcParameterAt: #gcRatio) println.
    (system gcParameterAt: #tenuringThreshold) println.
    (system vmParameterAt: 44) println
  )
)
";

#[test]
fn command_line_parameters_reach_the_heap_and_smalltalk() {
    let dir = classes(&[("Params.som", PARAMS)]);
    let r = lupa_in(
        dir.path(),
        &[
            "run",
            "-cp",
            ".",
            "--eden-size",
            "64MB",
            "--growth-headroom",
            "128MB",
            "--shrink-threshold",
            "256MB",
            "--gc-ratio",
            "2.5",
            "--tenuring-threshold",
            "7",
            "Params",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let mb = 1u64 << 20;
    assert_eq!(
        r.stdout,
        format!(
            "{}\n{}\n{}\n2.5\n7\n{}\n",
            64 * mb,
            128 * mb,
            256 * mb,
            64 * mb
        )
    );
}

#[test]
fn defaults_are_pharos() {
    let dir = classes(&[("Params.som", PARAMS)]);
    let r = lupa_in(dir.path(), &["run", "-cp", ".", "Params"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let mb = 1u64 << 20;
    assert_eq!(
        r.stdout,
        format!(
            "{}\n{}\n{}\n0.33\n3\n{}\n",
            15 * mb,
            16 * mb,
            32 * mb,
            15 * mb
        )
    );
}

#[test]
fn bad_parameter_values_are_usage_errors() {
    let dir = classes(&[]);
    for (opt, val, msg) in [
        ("--gc-ratio", "abc", "invalid ratio 'abc'"),
        ("--gc-ratio=-1", "", "ratio must be between 0 and 1000"),
        ("--tenuring-threshold", "0", "0 is not in 1..=15"),
        ("--growth-headroom", "lots", "invalid size 'lots'"),
        ("--shrink-threshold", "0", "size must be positive"),
    ] {
        let mut args = vec!["run", opt];
        if !val.is_empty() {
            args.push(val);
        }
        args.push("Hello");
        let r = lupa_in(dir.path(), &args);
        assert_eq!(r.code, 2, "{opt} {val}: {}", r.stderr);
        assert!(r.stderr.contains(msg), "{opt} {val}: {}", r.stderr);
    }
}

#[test]
fn unknown_parameter_from_smalltalk_is_an_error_with_a_location() {
    let dir = classes(&[(
        "BadParam.som",
        "BadParam = (\n  run = ( system gcParameterAt: #edenSise put: 1 )\n)\n",
    )]);
    let r = lupa_in(dir.path(), &["run", "-cp", ".", "BadParam"]);
    assert_ne!(r.code, 0);
    insta::assert_snapshot!("gc_unknown_parameter", scrub(&r.stderr, dir.path()));
}

#[test]
fn gc_stats_reports_collections_and_sizes() {
    let dir = classes(&[(
        "Churn.som",
        "Churn = (
  run = (
    | keep |
    keep := Vector new.
    1 to: 20000 do: [ :i | keep append: (Array new: 8). Array new: 30 ].
    system scavenge.
    system fullGC.
    keep size println
  )
)
",
    )]);
    let r = lupa_in(
        dir.path(),
        &[
            "run",
            "-cp",
            ".",
            "--gc-stats",
            "--eden-size",
            "1MB",
            "Churn",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "20000\n");
    let field = |name: &str| -> u64 {
        let line = r
            .stderr
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no '{name}' line in:\n{}", r.stderr));
        line[name.len()..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no number in '{line}'"))
    };
    assert!(field("scavenges:") >= 2, "{}", r.stderr);
    assert_eq!(field("full GCs:"), 1, "{}", r.stderr);
    assert!(field("tenured:") > 0, "{}", r.stderr);
    for label in [
        "gc parameters:      eden 1MB, growth headroom 16MB, shrink threshold 32MB, gc ratio 0.33",
        "gc time:",
        "allocated:",
        "heap:",
        "eden 1.0 MB",
        "remembered set:",
        "old space:",
        "weak slots cleared:",
    ] {
        assert!(r.stderr.contains(label), "no '{label}' in:\n{}", r.stderr);
    }
}

#[test]
fn ephemeron_is_mourned_after_a_scavenge_before_the_program_continues() {
    let dir = classes(&[(
        "Mourning.som",
        "Mourning = (
  run = (
    | e full |
    e := LupaLoggingEphemeron key: (Array with: #young) log: Vector new.
    full := system gcStatAt: #fullGCs.
    system scavenge.
    ((system gcStatAt: #fullGCs) = full) println.
    e key println.
    (system gcStatAt: #ephemeronsMourned) println
  )
)
",
    )]);
    let r = lupa_in(dir.path(), &["run", "-cp", ".", "Mourning"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "true\nnil\n1\n");
}

#[test]
fn finalization_keeps_working_under_gc_stress() {
    let dir = classes(&[(
        "Many.som",
        "Many = (
  run = (
    | log es |
    log := Vector new.
    es := (1 to: 50) collect: [ :i | LupaLoggingEphemeron key: (Array with: i) log: log ].
    system fullGC.
    Processor yield.
    log size println.
    (log inject: 0 into: [ :a :b | a + b ]) println
  )
)
",
    )]);
    let r = lupa_in(
        dir.path(),
        &["run", "-cp", ".", "--gc-stress", "--verify-heap", "Many"],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "50\n1275\n");
}
