//! The program's standard output when it cannot be written: a full disk or a
//! closed pipe stops the program with exit status 74 and a message, instead of
//! losing the output silently or running forever.

use crate::common::classes;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn output_to_a_full_disk_exits_74() {
    let Ok(full) = std::fs::File::create("/dev/full") else {
        return; // not Linux
    };
    let out = Command::new(env!("CARGO_BIN_EXE_lupa"))
        .args(["run", "Hello"])
        .stdout(full)
        .output()
        .expect("the lupa binary runs");
    assert_eq!(out.status.code(), Some(74));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot write the program's standard output"),
        "{stderr}"
    );
}

#[test]
fn output_to_a_closed_pipe_stops_the_program() {
    let dir = classes(&[(
        "Forever.som",
        "Forever = ( run = ( [ true ] whileTrue: [ 'progress' println ] ) )",
    )]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_lupa"))
        .args(["run", "-cp", ".", "Forever"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lupa binary runs");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a first line");
    assert_eq!(first, "progress\n");
    // The reader is dropped: the pipe is closed. The program must stop by itself.
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("lupa kept running after its output pipe was closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(74));
}
