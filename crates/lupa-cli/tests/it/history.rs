//! `lupa history` (Hip): recording versions (one program, or the revisions of
//! a git repository the test creates), diffs in every format, a method's
//! series, `check` exit codes, and bad input (unknown version, missing or
//! corrupt database, not a repository, unknown revision).

use crate::common::hip::{MAIN, MAIN_2, WORK_1, WORK_2};
use crate::common::{Run, lupa_in};
use lupa_history::{self as hip, NewVersion, ProfileStore, SqliteStore};
use lupa_prof::history::{DiffOptions, MethodMetrics};
use std::path::Path;
use std::process::Command;

/// Run git in `dir` (with an identity for commits); `None` when git is not
/// installed.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A repository `proj` with the two commits; `None` when git is missing.
fn two_commit_repo(root: &Path) -> Option<std::path::PathBuf> {
    let repo = root.join("proj");
    std::fs::create_dir_all(repo.join("src")).expect("mkdir");
    if git(&repo, &["init", "-q"]).is_none() {
        eprintln!("skipped: git is not installed");
        return None;
    }
    std::fs::write(repo.join("src/Main.som"), MAIN).expect("write");
    std::fs::write(repo.join("src/Work.som"), WORK_1).expect("write");
    git(&repo, &["add", "."])?;
    git(&repo, &["commit", "-q", "-m", "first"])?;
    std::fs::write(repo.join("src/Main.som"), MAIN_2).expect("write");
    std::fs::write(repo.join("src/Work.som"), WORK_2).expect("write");
    git(&repo, &["commit", "-q", "-a", "-m", "second"])?;
    Some(repo)
}

/// Replace RFC 3339 dates by `<date>`.
fn scrub_dates(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let is_date = |s: &[u8]| {
        s.len() == 20
            && s.iter().enumerate().all(|(k, &c)| match k {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'Z',
                _ => c.is_ascii_digit(),
            })
    };
    while i < b.len() {
        if i + 20 <= b.len() && is_date(&b[i..i + 20]) {
            out.push_str("<date>");
            i += 20;
        } else {
            let ch = text[i..].chars().next().expect("a char");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn assert_clean_failure(r: &Run, code: i32, message: &str) {
    assert_eq!(r.code, code, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(r.stderr.contains(message), "stderr: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "stderr: {}", r.stderr);
}

#[test]
fn record_git_revisions_then_diff_show_and_check() {
    let root = tempfile::tempdir().expect("tempdir");
    let Some(repo) = two_commit_repo(root.path()) else {
        return;
    };
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let first = git(&repo, &["rev-parse", "HEAD~1"]).expect("rev");
    let second = git(&repo, &["rev-parse", "HEAD"]).expect("rev");
    let short1 = git(&repo, &["rev-parse", "--short", "HEAD~1"]).expect("rev");
    let short2 = git(&repo, &["rev-parse", "--short", "HEAD"]).expect("rev");
    let repo_s = repo.display().to_string();

    // The range from the root commit: rev-list A..B leaves A out, so record
    // the first commit alone, then the range.
    let r = lupa_in(
        &work,
        &[
            "history", "record", "--git", &repo_s, "--revs", &first, "-cp", "src", "--", "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = lupa_in(
        &work,
        &[
            "history",
            "record",
            "--git",
            &repo_s,
            "--revs",
            &format!("{first}..{second}"),
            "--every",
            "3",
            "-cp",
            "src",
            "--",
            "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!("\"{short2} second\"")),
        "{}",
        r.stdout
    );
    assert!(
        work.join(".lupa/profiles.db").is_file(),
        "the default store"
    );

    // The user's tree is untouched and the worktrees are gone.
    assert_eq!(git(&repo, &["status", "--porcelain"]).expect("status"), "");
    let trees = git(&repo, &["worktree", "list"]).expect("list");
    assert_eq!(trees.lines().count(), 1, "{trees}");

    let log = lupa_in(&work, &["history", "log"]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    assert!(
        log.stdout.contains(&format!("{short1} first")),
        "{}",
        log.stdout
    );
    assert!(
        log.stdout.contains(&format!("{short2} second")),
        "{}",
        log.stdout
    );

    // The text diff, dates and hashes scrubbed.
    let d = lupa_in(&work, &["history", "diff", "1", "2"]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    let scrubbed = scrub_dates(&d.stdout)
        .replace(&first[..12], "<rev1>")
        .replace(&second[..12], "<rev2>")
        .replace(&short1, "<short1>")
        .replace(&short2, "<short2>");
    insta::assert_snapshot!("diff_text", scrubbed);

    // JSON: the five states.
    let j = lupa_in(
        &work,
        &[
            "history",
            "diff",
            &format!("{short1} first"),
            "2",
            "--format",
            "json",
        ],
    );
    assert_eq!(j.code, 0, "{}", j.stderr);
    let doc: serde_json::Value = serde_json::from_str(&j.stdout).expect("JSON");
    let state = |name: &str| {
        doc["methods"]
            .as_array()
            .expect("methods")
            .iter()
            .find(|m| m["name"] == name)
            .map(|m| m["state"].as_str().expect("state").to_string())
            .unwrap_or_else(|| panic!("{name} in the diff"))
    };
    assert_eq!(state("Work>>slow"), "higher");
    assert_eq!(state("Work>>fast"), "lower");
    assert_eq!(state("Work>>same"), "unchanged");
    assert_eq!(state("Work>>old"), "removed");
    assert_eq!(state("Work>>fresh"), "new");

    // The picture: one square per method, written atomically with -o.
    let svg = lupa_in(
        &work,
        &[
            "history", "diff", "1", "2", "--format", "svg", "-o", "pic.svg",
        ],
    );
    assert_eq!(svg.code, 0, "{}", svg.stderr);
    let text = std::fs::read_to_string(work.join("pic.svg")).expect("svg written");
    let methods = doc["methods"].as_array().expect("methods").len();
    assert_eq!(text.matches("class=\"method\"").count(), methods);
    assert!(text.contains("data-method=\"Work&gt;&gt;slow\" data-state=\"higher\""));
    let html = lupa_in(&work, &["history", "diff", "1", "2", "--format", "html"]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    assert!(html.stdout.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.stdout.matches("class=\"method\"").count(), methods);

    // One method's series.
    let s = lupa_in(&work, &["history", "show", "2", "Work>>slow"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert!(s.stdout.contains("higher (red)"), "{}", s.stdout);
    let unknown = lupa_in(&work, &["history", "show", "2", "slow"]);
    assert_clean_failure(&unknown, 2, "did you mean Work>>slow");

    // check: slow grew 50 -> 255 sends... past 5%: exit 1, naming it.
    let c = lupa_in(
        &work,
        &[
            "history",
            "check",
            "--baseline",
            "1",
            "--max-increase",
            "5%",
        ],
    );
    assert_eq!(c.code, 1, "{}{}", c.stdout, c.stderr);
    assert!(c.stdout.contains("Work>>slow"), "{}", c.stdout);
    assert!(!c.stdout.contains("Work>>fast"), "{}", c.stdout);
    let ok = lupa_in(
        &work,
        &[
            "history",
            "check",
            "--baseline",
            "1",
            "--against",
            "1",
            "--max-increase",
            "0",
        ],
    );
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    assert!(ok.stdout.contains("ok: no method grew"), "{}", ok.stdout);
    let back = lupa_in(
        &work,
        &[
            "history",
            "check",
            "--baseline",
            "2",
            "--against",
            "1",
            "--max-increase",
            "100000%",
        ],
    );
    assert_eq!(back.code, 0, "{}{}", back.stdout, back.stderr);

    // Recording the same revisions again needs --replace.
    let again = lupa_in(
        &work,
        &[
            "history", "record", "--git", &repo_s, "--revs", &second, "-cp", "src", "--", "Main",
        ],
    );
    assert_clean_failure(&again, 2, "exists already");
    let unknown_rev = lupa_in(
        &work,
        &[
            "history",
            "record",
            "--git",
            &repo_s,
            "--revs",
            "nosuchrev..HEAD",
            "--",
            "Main",
        ],
    );
    assert_clean_failure(&unknown_rev, 2, "unknown git revision `nosuchrev`");
    let not_repo = lupa_in(
        &work,
        &[
            "history", "record", "--git", ".", "--revs", "HEAD", "--", "Main",
        ],
    );
    // `work` is a plain directory (inside a temporary directory, which is
    // not a repository on the machines this runs on).
    if not_repo.code == 2 {
        assert_clean_failure(&not_repo, 2, "is not a git repository");
    }

    // A revision whose program does not compile: nothing recorded, and its
    // worktree removed all the same.
    std::fs::write(repo.join("src/Work.som"), "Work = ( slow = ( ^ ) )\n").expect("write");
    git(&repo, &["commit", "-q", "-a", "-m", "broken"]).expect("commit");
    let broken = lupa_in(
        &work,
        &[
            "history", "record", "--git", &repo_s, "--revs", "HEAD", "-cp", "src", "--", "Main",
        ],
    );
    assert_eq!(broken.code, 65, "{}", broken.stderr);
    assert!(!broken.stderr.contains("panicked"), "{}", broken.stderr);
    let trees = git(&repo, &["worktree", "list"]).expect("list");
    assert_eq!(trees.lines().count(), 1, "{trees}");
    assert_eq!(git(&repo, &["status", "--porcelain"]).expect("status"), "");
    let log = lupa_in(&work, &["history", "log", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&log.stdout).expect("JSON");
    assert_eq!(doc["versions"].as_array().expect("versions").len(), 2);
}

#[test]
fn record_with_labels_and_bad_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("Main.som"), MAIN).expect("write");
    std::fs::write(dir.path().join("Work.som"), WORK_1).expect("write");
    let d = dir.path();

    // Nothing recorded yet: no database.
    let none = lupa_in(d, &["history", "log"]);
    assert_clean_failure(&none, 74, "no profile database");
    assert!(!d.join(".lupa").exists(), "log creates nothing");

    let r = lupa_in(
        d,
        &[
            "history", "--db", "h.db", "record", "--label", "a", "-cp", ".", "--", "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = lupa_in(
        d,
        &[
            "history", "record", "--db", "h.db", "--label", "a", "-cp", ".", "--", "Main",
        ],
    );
    assert_clean_failure(&r, 2, "exists already");
    let r = lupa_in(
        d,
        &[
            "history",
            "record",
            "--db",
            "h.db",
            "--label",
            "a",
            "--replace",
            "-cp",
            ".",
            "--",
            "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);

    // A program that fails records nothing.
    let missing = lupa_in(
        d,
        &[
            "history",
            "record",
            "--db",
            "h.db",
            "--label",
            "b",
            "--",
            "NoSuchClass",
        ],
    );
    assert_clean_failure(&missing, 66, "NoSuchClass");
    let log = lupa_in(d, &["history", "--db", "h.db", "log", "--format", "json"]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    let doc: serde_json::Value = serde_json::from_str(&log.stdout).expect("JSON");
    assert_eq!(doc["versions"].as_array().expect("versions").len(), 1);

    let unknown = lupa_in(d, &["history", "--db", "h.db", "diff", "a", "zz"]);
    assert_clean_failure(&unknown, 2, "unknown version `zz`");
    let same = lupa_in(d, &["history", "--db", "h.db", "diff", "a", "1", "--all"]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert!(same.stdout.contains("unchanged (white)"), "{}", same.stdout);

    std::fs::write(
        d.join("corrupt.db"),
        "this is not a database, just text\n".repeat(200),
    )
    .expect("write");
    for args in [
        vec!["history", "--db", "corrupt.db", "log"],
        vec!["history", "--db", "corrupt.db", "diff", "1", "2"],
        vec![
            "history",
            "--db",
            "corrupt.db",
            "record",
            "--label",
            "x",
            "-cp",
            ".",
            "--",
            "Main",
        ],
    ] {
        let r = lupa_in(d, &args);
        assert_clean_failure(&r, 74, "is not a Lupa profile database");
    }
    let usage = lupa_in(d, &["history", "record", "--", "Main"]);
    assert_eq!(usage.code, 2, "{}", usage.stderr);
    let bad_bound = lupa_in(
        d,
        &[
            "history",
            "--db",
            "h.db",
            "check",
            "--baseline",
            "a",
            "--max-increase",
            "lots",
        ],
    );
    assert_eq!(bad_bound.code, 2, "{}", bad_bound.stderr);
}

/// A diff of two generated versions of 1,000 methods: through the library
/// and through the binary. Times are printed, never asserted.
#[test]
fn diff_of_a_thousand_methods() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.db");
    let mut store = SqliteStore::open(&path, true).expect("store");
    let methods = |shift: u64| -> Vec<MethodMetrics> {
        (0..1000u64)
            .map(|i| MethodMetrics {
                package: format!("P{}", i % 10),
                class: format!("C{}", i % 100),
                method: format!("C{}>>m{i}", i % 100),
                sends_self: i + shift * (i % 3),
                sends_total: 10 * i + shift * (i % 3),
                activations: i % 7,
            })
            .collect()
    };
    for (label, shift) in [("a", 0), ("b", 1)] {
        let v = NewVersion {
            label: label.to_string(),
            command: "generated".to_string(),
            metric: "sends".to_string(),
            ..NewVersion::default()
        };
        store.add_version(&v, &methods(shift), false).expect("adds");
    }
    let start = std::time::Instant::now();
    let d = hip::diff(&store, "a", "b", DiffOptions::default()).expect("diff");
    let library = start.elapsed();
    assert_eq!(d.methods.len(), 1000);
    assert_eq!(store.methods(1).expect("methods").len(), 1000);
    let start = std::time::Instant::now();
    let r = lupa_in(
        dir.path(),
        &[
            "history", "--db", "big.db", "diff", "a", "b", "--format", "json",
        ],
    );
    let binary = start.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    eprintln!(
        "diff of 1000 methods: {:.2} ms in the library, {:.2} ms for `lupa history diff --format json` (process included)",
        library.as_secs_f64() * 1e3,
        binary.as_secs_f64() * 1e3
    );
}

/// Write `files` (name, text) into `dir`.
fn write_all(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).expect("mkdir");
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write");
    }
}

#[test]
fn time_metric_with_the_deterministic_sampler() {
    let root = tempfile::tempdir().expect("tempdir");
    let src = root.path().join("src");
    write_all(&src, &[("Main.som", MAIN), ("Work.som", WORK_1)]);
    let record = |label: &str| {
        lupa_in(
            root.path(),
            &[
                "history",
                "record",
                "--metric",
                "time",
                "--runs",
                "3",
                "--sample-every",
                "3",
                "--label",
                label,
                "-cp",
                "src",
                "--",
                "Main",
            ],
        )
    };
    let r = record("t1");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(": time-samples"), "{}", r.stdout);
    write_all(&src, &[("Main.som", MAIN_2), ("Work.som", WORK_2)]);
    let r = record("t2");
    assert_eq!(r.code, 0, "{}", r.stderr);

    let d = lupa_in(root.path(), &["history", "diff", "t1", "t2", "--all"]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    assert!(d.stdout.starts_with("history diff (time)"), "{}", d.stdout);
    assert!(d.stdout.contains("(3 runs)"), "{}", d.stdout);
    assert!(d.stdout.contains("95% CI of delta"), "{}", d.stdout);
    let state_of = |name: &str| {
        d.stdout
            .lines()
            .find(|l| l.contains(&format!("| {name} ")))
            .map(|l| l.split('|').nth(1).unwrap_or("").trim().to_string())
    };
    // Identical samples in every run: no spread, so a change in the mean is
    // significant; `slow` loops 10 times as often.
    assert_eq!(
        state_of("Work>>slow").as_deref(),
        Some("higher (red)"),
        "{}",
        d.stdout
    );
    assert_eq!(
        state_of("Main>>run").as_deref(),
        Some("higher (red)"),
        "{}",
        d.stdout
    );

    let j = lupa_in(
        root.path(),
        &["history", "diff", "t1", "t2", "--format", "json"],
    );
    assert_eq!(j.code, 0, "{}", j.stderr);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("json");
    assert_eq!(v["format"], "lupa-history-time-diff/1");
    assert_eq!(v["unit"], "samples");
    assert_eq!(v["measure"], "total");
    let methods = v["methods"].as_array().expect("methods");
    let slow = methods
        .iter()
        .find(|m| m["name"] == "Work>>slow")
        .expect("slow");
    let j = lupa_in(
        root.path(),
        &[
            "history", "diff", "t1", "t2", "--format", "json", "--metric", "self",
        ],
    );
    assert_eq!(j.code, 0, "{}", j.stderr);
    assert!(j.stdout.contains("\"measure\": \"self\""), "{}", j.stdout);
    let ci = slow["test"]["interval"].as_array().expect("interval");
    assert_eq!(ci.len(), 2);
    assert!(slow["test"]["significant"].as_bool().expect("bool"));

    // A time version is not compared with a send-count one.
    let r = lupa_in(
        root.path(),
        &[
            "history", "record", "--label", "s", "-cp", "src", "--", "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = lupa_in(root.path(), &["history", "diff", "t1", "s"]);
    assert_clean_failure(&r, 2, "recorded with the metric time-samples");
    let r = lupa_in(
        root.path(),
        &["history", "diff", "t1", "t2", "--format", "svg"],
    );
    assert_clean_failure(&r, 2, "text or json");
    let r = lupa_in(
        root.path(),
        &[
            "history",
            "record",
            "--label",
            "x",
            "--sample-every",
            "3",
            "--",
            "Main",
        ],
    );
    assert_clean_failure(&r, 2, "--sample-every needs --metric time");
}

#[test]
fn time_metric_on_the_cpu_clock() {
    let root = tempfile::tempdir().expect("tempdir");
    let r = lupa_in(
        root.path(),
        &[
            "history", "record", "--metric", "time", "--runs", "2", "--label", "c", "--", "Hello",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(": time"), "{}", r.stdout);
    let r = lupa_in(
        root.path(),
        &["history", "diff", "c", "c", "--format", "json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v["unit"], "ms");
    assert_eq!(v["runs"], serde_json::json!([2, 2]));
    assert!(v["whole_run"]["mean_before"].as_f64().expect("ms") >= 0.0);
    // A version against itself: every method unchanged (equal samples).
    for m in v["methods"].as_array().expect("methods") {
        assert_eq!(m["state"], "unchanged", "{m}");
        assert!(m["before"].as_f64().expect("ms") >= 0.0);
    }
}

const CALC: &str = "Calc = (
    add: a to: b = ( ^ a + b )
    sub: a from: b = ( ^ b - a )
)
";
const CALC_TEST_1: &str = "CalcTest = TestCase (
    testAdd = ( self assert: 5 equals: (Calc new add: 2 to: 3) )
)
";
const CALC_TEST_2: &str = "CalcTest = TestCase (
    testSub = ( self assert: 1 equals: (Calc new sub: 2 from: 3) )
    testSubAgain = ( self assert: 0 equals: (Calc new sub: 3 from: 3) )
)
";

#[test]
fn coverage_metric_states_by_executions() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("Calc");
    write_all(&dir, &[("Calc.som", CALC), ("CalcTest.som", CALC_TEST_1)]);
    let record = |label: &str| {
        lupa_in(
            root.path(),
            &[
                "history", "record", "--metric", "coverage", "--label", label, "-cp", "Calc",
                "CalcTest",
            ],
        )
    };
    let r = record("c1");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(": coverage"), "{}", r.stdout);
    write_all(&dir, &[("CalcTest.som", CALC_TEST_2)]);
    let r = record("c2");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = lupa_in(
        root.path(),
        &["history", "diff", "c1", "c2", "--format", "json"],
    );
    assert_eq!(j.code, 0, "{}", j.stderr);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("json");
    let methods = v["methods"].as_array().expect("methods");
    let find = |n: &str| {
        methods
            .iter()
            .find(|m| m["name"] == n)
            .unwrap_or_else(|| panic!("{n} in {}", j.stdout))
    };
    // `add:to:` lost its coverage, `sub:from:` gained it (two executions).
    assert_eq!(find("Calc>>add:to:")["state"], "removed");
    let sub = find("Calc>>sub:from:");
    assert_eq!(sub["state"], "new");
    assert_eq!(sub["after"], 2);
    let r = record("c1");
    assert_clean_failure(&r, 2, "exists already");
}

/// Does `line` read `stack count1 count2` (frames non-empty, counts
/// integers)?
fn is_folded_diff_line(line: &str) -> bool {
    let mut parts = line.rsplitn(3, ' ');
    let (Some(c2), Some(c1), Some(stack)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    c1.parse::<u64>().is_ok()
        && c2.parse::<u64>().is_ok()
        && !stack.is_empty()
        && stack.split(';').all(|f| !f.is_empty())
}

#[test]
fn differential_flame_graph_and_folded_diff() {
    use quick_xml::Reader;
    use quick_xml::events::Event;
    let root = tempfile::tempdir().expect("tempdir");
    let src = root.path().join("src");
    write_all(&src, &[("Main.som", MAIN), ("Work.som", WORK_1)]);
    let record = |label: &str| {
        lupa_in(
            root.path(),
            &[
                "history", "record", "--label", label, "-cp", "src", "--", "Main",
            ],
        )
    };
    assert_eq!(record("v1").code, 0);
    write_all(&src, &[("Main.som", MAIN_2), ("Work.som", WORK_2)]);
    assert_eq!(record("v2").code, 0);

    let f = lupa_in(
        root.path(),
        &["history", "diff", "v1", "v2", "--format", "folded-diff"],
    );
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert!(!f.stdout.is_empty());
    for line in f.stdout.lines() {
        assert!(is_folded_diff_line(line), "bad line `{line}`");
    }
    let field = |line: &str, k: usize| line.rsplit(' ').nth(k).map(str::to_string);
    let old: Vec<&str> = f
        .stdout
        .lines()
        .filter(|l| l.contains("Work>>old"))
        .collect();
    assert!(!old.is_empty(), "{}", f.stdout);
    for l in old {
        assert_eq!(field(l, 0).as_deref(), Some("0"), "gone in v2: {l}");
    }
    let fresh: Vec<&str> = f
        .stdout
        .lines()
        .filter(|l| l.contains("Work>>fresh"))
        .collect();
    assert!(!fresh.is_empty(), "{}", f.stdout);
    for l in fresh {
        assert_eq!(field(l, 1).as_deref(), Some("0"), "new in v2: {l}");
    }

    let out = root.path().join("diff.svg");
    let out_s = out.display().to_string();
    for format in ["flamegraph", "diff-svg"] {
        let s = lupa_in(
            root.path(),
            &[
                "history", "diff", "v1", "v2", "--format", format, "-o", &out_s,
            ],
        );
        assert_eq!(s.code, 0, "{}", s.stderr);
    }
    let svg = std::fs::read_to_string(&out).expect("svg");
    let mut reader = Reader::from_str(&svg);
    let (mut titles, mut fills) = (Vec::new(), Vec::new());
    let mut in_title = false;
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) if e.name().as_ref() == b"title" => in_title = true,
            Event::End(e) if e.name().as_ref() == b"title" => in_title = false,
            Event::Empty(e) if e.name().as_ref() == b"rect" => {
                if let Some(a) = e.try_get_attribute("fill").expect("attr") {
                    fills.push(String::from_utf8_lossy(&a.value).into_owned());
                }
            }
            Event::Text(t) if in_title => {
                titles.push(t.unescape().expect("text").into_owned());
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let slow = titles
        .iter()
        .find(|t| t.starts_with("Work>>slow - "))
        .expect("slow's frame");
    assert!(
        slow.contains("before ") && slow.contains("after "),
        "{slow}"
    );
    assert!(slow.contains("delta +"), "{slow}");
    let fast = titles
        .iter()
        .find(|t| t.starts_with("Work>>fast - "))
        .expect("fast's frame");
    assert!(fast.contains("delta -"), "{fast}");
    let fresh = titles
        .iter()
        .find(|t| t.starts_with("Work>>fresh - "))
        .expect("fresh's frame");
    assert!(fresh.contains("(new)"), "{fresh}");
    // Red frames (more) and blue frames (fewer).
    assert!(
        fills
            .iter()
            .any(|f| f.starts_with("rgb(250,") && f != "rgb(250,250,250)")
    );
    assert!(
        fills
            .iter()
            .any(|f| f.ends_with(",250)") && f != "rgb(250,250,250)")
    );
    // Not with a time version.
    let r = lupa_in(
        root.path(),
        &[
            "history",
            "record",
            "--metric",
            "time",
            "--runs",
            "1",
            "--sample-every",
            "5",
            "--label",
            "t",
            "-cp",
            "src",
            "--",
            "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = lupa_in(
        root.path(),
        &["history", "diff", "v2", "t", "--format", "flamegraph"],
    );
    assert_clean_failure(&r, 2, "recorded with the metric");

    // The pictures open in a browser: the differential flame graph, and the
    // semaphore picture alone and in its page (no console error, not blank).
    for (format, file) in [("svg", "semaphore.svg"), ("html", "semaphore.html")] {
        let r = lupa_in(
            root.path(),
            &[
                "history", "diff", "v1", "v2", "--format", format, "-o", file,
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let Some(chromium) = crate::common::chromium() else {
        return;
    };
    let dom = crate::common::assert_page_ready(chromium, root.path(), "semaphore.html", "<svg");
    assert!(
        dom.contains("Work&gt;&gt;fresh") || dom.contains("Work>>fresh"),
        "{dom}"
    );
    for file in ["semaphore.html", "semaphore.svg", "diff.svg"] {
        crate::common::assert_screenshot_not_blank(chromium, root.path(), file);
    }
}

#[test]
fn a_broken_commit_in_a_range_is_recorded_as_broken_and_the_range_goes_on() {
    let root = tempfile::tempdir().expect("tempdir");
    let Some(repo) = two_commit_repo(root.path()) else {
        return;
    };
    // Two more commits: one that does not compile, one that works again.
    std::fs::write(repo.join("src/Work.som"), "Work = ( slow = ( ^ ) )\n").expect("write");
    git(&repo, &["commit", "-q", "-a", "-m", "broken"]).expect("commit");
    std::fs::write(repo.join("src/Work.som"), WORK_2).expect("write");
    git(&repo, &["commit", "-q", "-a", "-m", "fixed"]).expect("commit");
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let repo_s = repo.display().to_string();
    let range = "HEAD~3..HEAD";
    let r = lupa_in(
        &work,
        &[
            "history", "record", "--git", &repo_s, "--revs", range, "-cp", "src", "--", "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
    assert!(
        r.stdout
            .lines()
            .nth(1)
            .is_some_and(|l| l.ends_with(": broken")),
        "{}",
        r.stdout
    );
    let trees = git(&repo, &["worktree", "list"]).expect("list");
    assert_eq!(trees.lines().count(), 1, "{trees}");

    let log = lupa_in(&work, &["history", "log", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&log.stdout).expect("JSON");
    let versions = doc["versions"].as_array().expect("versions");
    let metrics: Vec<&str> = versions
        .iter()
        .filter_map(|v| v["metric"].as_str())
        .collect();
    assert_eq!(metrics, vec!["sends", "broken", "sends"]);
    assert!(
        versions[1]["command"]
            .as_str()
            .is_some_and(|c| c.contains("broken:")),
        "{}",
        log.stdout
    );
    let text = lupa_in(&work, &["history", "log"]);
    assert!(text.stdout.contains("broken"), "{}", text.stdout);

    // A diff with the broken version is refused; across it works.
    let d = lupa_in(&work, &["history", "diff", "1", "2"]);
    assert_clean_failure(&d, 2, "is broken");
    let d = lupa_in(&work, &["history", "diff", "1", "3"]);
    assert_eq!(d.code, 0, "{}", d.stderr);

    // --stop-at-failure stops at the broken revision (the one before stays).
    let stop = lupa_in(
        &work,
        &[
            "history",
            "record",
            "--git",
            &repo_s,
            "--revs",
            range,
            "--replace",
            "--stop-at-failure",
            "-cp",
            "src",
            "--",
            "Main",
        ],
    );
    assert_eq!(stop.code, 65, "{}", stop.stderr);
    assert_eq!(stop.stdout.lines().count(), 1, "{}", stop.stdout);
}
