//! Issue 26, kind 6: data lost or left behind. Ctrl-C (SIGINT) or SIGTERM
//! during a profiler command still writes the profile of what ran and exits
//! 130/143; `history record --git` removes its worktree when interrupted;
//! two `history record`s on one new store both land; a VM killed keeps the
//! lines it printed to a pipe; `-o` through a symbolic link keeps the link;
//! options after a program's arguments are refused (`--bench`) or warned
//! about.

use crate::common::{classes, lupa_in};
use crate::history::git;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A program that says it started, then works until it is stopped
/// (allocating, so that JIT-compiled code calls into the runtime too).
const FOREVER: &str = "Forever = (
    run = ( | a | 'started' println. [ true ] whileTrue: [ a := self work ] )
    work = ( ^ (Array new: 8) at: 1 put: 3 printString; yourself )
)";

/// `lupa ARGS` in `dir`, its standard output and error piped.
fn spawn(dir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lupa"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lupa binary runs")
}

/// Read `stream` line by line on a thread: each line goes to the channel,
/// and the thread answers all of them.
fn lines_of(
    stream: impl std::io::Read + Send + 'static,
) -> (mpsc::Receiver<String>, std::thread::JoinHandle<String>) {
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    (rx, reader)
}

/// Wait (at most a minute) for a line containing `needle`.
fn wait_for(rx: &mpsc::Receiver<String>, needle: &str) {
    loop {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line.contains(needle) => return,
            Ok(_) => {}
            Err(e) => panic!("no line with {needle:?}: {e}"),
        }
    }
}

/// Send `signal` (`INT`, `TERM`, `KILL`) to `child`.
fn kill(child: &Child, signal: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill -{signal}");
}

#[test]
fn ctrl_c_during_profile_writes_the_profile_of_what_ran() {
    let dir = classes(&[("Forever.som", FOREVER)]);
    let mut child = spawn(
        dir.path(),
        &["profile", "-cp", ".", "--rate", "500", "Forever"],
    );
    let (out, out_all) = lines_of(child.stdout.take().expect("stdout"));
    let (_err, err_all) = lines_of(child.stderr.take().expect("stderr"));
    wait_for(&out, "started");
    std::thread::sleep(Duration::from_millis(300));
    kill(&child, "INT");
    let status = child.wait().expect("waits");
    let stdout = out_all.join().expect("stdout");
    let stderr = err_all.join().expect("stderr");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted (SIGINT)"), "{stderr}");
    // The report of what ran, saying so.
    assert!(
        stdout.contains("interrupted (SIGINT): the profile covers the run until then"),
        "{stdout}"
    );
    assert!(stdout.contains("Forever>>work"), "{stdout}");
}

#[test]
fn sigterm_during_count_writes_the_report_file() {
    let dir = classes(&[("Forever.som", FOREVER)]);
    let mut child = spawn(
        dir.path(),
        &[
            "count",
            "-cp",
            ".",
            "--format",
            "text",
            "-o",
            "count.txt",
            "Forever",
        ],
    );
    let (out, _) = lines_of(child.stdout.take().expect("stdout"));
    let (_err, err_all) = lines_of(child.stderr.take().expect("stderr"));
    wait_for(&out, "started");
    std::thread::sleep(Duration::from_millis(200));
    kill(&child, "TERM");
    let status = child.wait().expect("waits");
    let stderr = err_all.join().expect("stderr");
    assert_eq!(status.code(), Some(143), "{stderr}");
    let report = std::fs::read_to_string(dir.path().join("count.txt")).expect("written");
    assert!(report.contains("interrupted (SIGTERM)"), "{report}");
    assert!(report.contains("Forever>>work"), "{report}");
}

#[test]
fn an_interrupted_git_record_removes_its_worktree() {
    let root = tempfile::tempdir().expect("tempdir");
    let repo = root.path().join("proj");
    std::fs::create_dir_all(&repo).expect("mkdir");
    if git(&repo, &["init", "-q"]).is_none() {
        eprintln!("skipped: git is not installed");
        return;
    }
    std::fs::write(repo.join("Forever.som"), FOREVER).expect("write");
    git(&repo, &["add", "."]).expect("add");
    git(&repo, &["commit", "-q", "-m", "forever"]).expect("commit");
    let repo_s = repo.display().to_string();
    let child = spawn(
        root.path(),
        &[
            "history", "--db", "h.db", "record", "--git", &repo_s, "--revs", "HEAD", "--",
            "Forever",
        ],
    );
    // The worktree is there while the program runs.
    let mut seen = false;
    for _ in 0..600 {
        let list = git(&repo, &["worktree", "list"]).expect("list");
        if list.lines().count() == 2 {
            seen = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(seen, "the worktree was never added");
    std::thread::sleep(Duration::from_millis(500));
    kill(&child, "TERM");
    let out = child.wait_with_output().expect("waits");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let list = git(&repo, &["worktree", "list"]).expect("list");
    assert_eq!(list.lines().count(), 1, "{list}");
    // Nothing was recorded.
    let log = lupa_in(root.path(), &["history", "--db", "h.db", "log"]);
    assert!(!log.stdout.contains("forever"), "{}", log.stdout);
}

#[test]
fn two_records_started_together_on_a_new_store_both_land() {
    let dir = classes(&[("Hello.som", "Hello = ( run = ( 'hi' println ) )")]);
    for round in 0..3 {
        let db = format!("new-{round}.db");
        let children: Vec<Child> = (0..2)
            .map(|i| {
                spawn(
                    dir.path(),
                    &[
                        "history",
                        "--db",
                        &db,
                        "record",
                        "--label",
                        &format!("v{i}"),
                        "-cp",
                        ".",
                        "--",
                        "Hello",
                    ],
                )
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().expect("waits");
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let log = lupa_in(dir.path(), &["history", "--db", &db, "log"]);
        assert!(
            log.stdout.contains("v0") && log.stdout.contains("v1"),
            "{}",
            log.stdout
        );
    }
}

#[test]
fn lines_printed_to_a_pipe_survive_a_kill() {
    let dir = classes(&[("Forever.som", FOREVER)]);
    let mut child = spawn(dir.path(), &["run", "-cp", ".", "Forever"]);
    let (out, _) = lines_of(child.stdout.take().expect("stdout"));
    // Without a flush at the line's end, 'started' would wait in the
    // buffer until the VM ends, and a kill loses it.
    wait_for(&out, "started");
    kill(&child, "KILL");
    let _ = child.wait();
}

#[test]
#[cfg(unix)]
fn writing_through_a_symbolic_link_keeps_the_link() {
    let dir = classes(&[(
        "Hello.som",
        "Hello = ( run = ( | f | f := File openForWriting: 'via-file'. f write: 'from Smalltalk'. f close ) )",
    )]);
    let real = dir.path().join("real.txt");
    std::fs::write(&real, "old").expect("write");
    std::os::unix::fs::symlink("real.txt", dir.path().join("report.txt")).expect("symlink");
    std::os::unix::fs::symlink("real.txt", dir.path().join("via-file")).expect("symlink");
    let r = lupa_in(
        dir.path(),
        &[
            "count",
            "-cp",
            ".",
            "--format",
            "text",
            "-o",
            "report.txt",
            "Hello",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let is_link = |name: &str| {
        std::fs::symlink_metadata(dir.path().join(name))
            .expect("meta")
            .file_type()
            .is_symlink()
    };
    assert!(is_link("report.txt"));
    assert!(is_link("via-file"));
    // The program wrote its file through the link, then the report replaced it.
    let text = std::fs::read_to_string(&real).expect("read");
    assert!(text.contains("Hello>>run"), "{text}");
}

#[test]
fn options_after_a_benchmark_are_refused_and_after_a_class_warned() {
    let dir = classes(&[("Hello.som", "Hello = ( run: args = ( args size println ) )")]);
    let r = lupa_in(
        dir.path(),
        &[
            "profile", "--bench", "Richards", "1", "1", "--format", "json", "-o", "x.json",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("`--format`"), "{}", r.stderr);
    assert!(!dir.path().join("x.json").exists());
    let r = lupa_in(
        dir.path(),
        &["count", "-cp", ".", "Hello", "5", "--format", "json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("4\n"),
        "the program got them: {}",
        r.stdout
    );
    assert!(
        r.stderr
            .contains("warning: `--format` comes after the program's class"),
        "{}",
        r.stderr
    );
}

/// A compiled loop that never leaves native code stops at Ctrl-C while a
/// sampler runs: the tick's runtime call at an inline send sees the stop,
/// and a loop with no send at all tests the request word at its back jump.
/// (With no sampler, native code tests the stop's own word at the same
/// places; no command runs native code with graceful stops and no sampler:
/// `run` keeps the default action, and counting commands stay interpreted.)
#[test]
fn ctrl_c_stops_loops_that_run_in_native_code() {
    let loops = [
        (
            "inline sends",
            "i := 0. [ i >= 0 ] whileTrue: [ i := i + 1 ]",
        ),
        ("no send", "[ true ] whileTrue: [ ]"),
        ("to:do:", "1 to: 1000000000000000 do: [ :k | ]"),
    ];
    for (what, body) in loops {
        let program = format!("Spin = ( run = ( | i | 'started' println. {body} ) )");
        let dir = classes(&[("Spin.som", &program)]);
        let args = [
            "profile", "--rate", "100", "--jit", "always", "-cp", ".", "Spin",
        ];
        let mut child = spawn(dir.path(), &args);
        let (out, _out_all) = lines_of(child.stdout.take().expect("stdout"));
        let (_err, err_all) = lines_of(child.stderr.take().expect("stderr"));
        wait_for(&out, "started");
        std::thread::sleep(Duration::from_millis(200));
        kill(&child, "INT");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().expect("waits") {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("a compiled loop ({what}) did not stop at SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stderr = err_all.join().expect("stderr");
        assert_eq!(status.code(), Some(130), "{what}: {stderr}");
        assert!(stderr.contains("interrupted (SIGINT)"), "{stderr}");
    }
}
