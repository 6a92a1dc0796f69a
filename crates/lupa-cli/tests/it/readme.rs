//! Every command block of the README runs as written, so that the README
//! cannot drift from the program.
//!
//! The README's fenced blocks say what they are by their info string:
//! - `console`: a transcript. Each `$ ` line is a command, run by `sh` in one
//!   shell per block (so `cd` and `&&` work) in a scratch directory that holds
//!   the repository's `smalltalk/` and `examples/` and `target/release/lupa`,
//!   with `lupa` on the `PATH`. Each command must exit 0, or with the status a
//!   following `$ echo $?` shows. The lines after it are the expected standard
//!   output, compared by shape (numbers, runs of spaces, of `-` and of `#`
//!   stand for any), in order, `...` standing for any number of lines.
//! - `console sampled`: the same, but only the first line of each output is
//!   compared (the rest depends on time and sampling).
//! - any block with `not run: REASON` after its language: shown, not run.
//! - `sh`: commands outside Lupa (cargo); `text`, `smalltalk`: not commands.
//!
//! A block without a language, or a `$ lupa` line outside a `console` block,
//! fails the test: every command of the README is either run or says why not.

use std::path::Path;
use std::process::Command;

const README: &str = include_str!("../../../../README.md");

/// A fenced block: its first line number, info string and text.
struct Block {
    line: usize,
    info: String,
    text: String,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in markdown.lines().enumerate() {
        match (line.strip_prefix("```"), open.take()) {
            (Some(_), Some(b)) => out.push(b),
            (Some(info), None) => {
                open = Some(Block {
                    line: i + 1,
                    info: info.trim().to_string(),
                    text: String::new(),
                })
            }
            (None, Some(mut b)) => {
                b.text.push_str(line);
                b.text.push('\n');
                open = Some(b);
            }
            (None, None) => {}
        }
    }
    out
}

/// A transcript's commands, each with its expected output lines.
fn transcript(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.push((cmd.to_string(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(line.to_string());
        }
    }
    out
}

/// A line's shape: numbers (with their `.`, `,` and `:`) become `N`, runs
/// of spaces one space, runs of `-` two, runs of `#` one.
fn shape(line: &str) -> String {
    let mut s = String::new();
    let mut last = ' ';
    let mut chars = line.trim().chars().peekable();
    while let Some(c) = chars.next() {
        let class = if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|&d| d.is_ascii_digit() || (d == '.' || d == ',' || d == ':'))
            {
                chars.next();
            }
            'N'
        } else {
            c
        };
        let repeat = class == last && matches!(class, ' ' | '-' | '#');
        let dash_pair = class == '-' && s.ends_with("--");
        if !(repeat && (class != '-' || dash_pair)) {
            s.push(class);
        }
        last = class;
    }
    s
}

/// Do the `actual` lines match the `expected` ones (`...`: any lines)?
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| shape(a) == shape(e) && matches(rest, more)),
    }
}

/// A scratch directory laid out like the repository for the commands.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let link = |from: &Path, to: &Path| {
        std::os::unix::fs::symlink(from, to).expect("symlink");
    };
    for d in ["smalltalk", "examples"] {
        link(&repo.join(d), &dir.path().join(d));
    }
    let release = dir.path().join("target/release");
    std::fs::create_dir_all(&release).expect("mkdir");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    for at in [&release, &bin] {
        link(Path::new(env!("CARGO_BIN_EXE_lupa")), &at.join("lupa"));
    }
    dir
}

const MARK: &str = "@@readme-rc ";

/// Run a transcript's commands in one shell: each one's output and status.
fn run(dir: &Path, commands: &[String]) -> (Vec<(Vec<String>, i32)>, String) {
    let mut script = String::new();
    for c in commands {
        script.push_str(c);
        script.push_str(&format!(
            "\n__rc=$?; printf '\\n{MARK}%d\\n' $__rc; (exit $__rc)\n"
        ));
    }
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut results = Vec::new();
    let mut lines = Vec::new();
    for line in stdout.lines() {
        match line.strip_prefix(MARK) {
            Some(rc) => {
                // The newline before the mark ends an unterminated last line.
                if lines.last().is_some_and(String::is_empty) {
                    lines.pop();
                }
                results.push((std::mem::take(&mut lines), rc.parse().unwrap_or(-1)));
            }
            None => lines.push(line.to_string()),
        }
    }
    (results, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn shapes_compare_numbers_and_padding_loosely() {
    assert_eq!(
        shape("| 1 | Counted>>fib:  |   232 | 65.91 |"),
        shape("| 2 | Counted>>fib: | 1,232 | 5.9 |")
    );
    assert_eq!(shape("|---|-----|"), shape("|-----|---|"));
    assert_ne!(shape("lupa count Counted"), shape("lupa count Other"));
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(matches(
        &lines(&["a 1", "...", "c"]),
        &lines(&["a 2", "b", "b", "c"])
    ));
    assert!(!matches(&lines(&["a 1", "c"]), &lines(&["a 2", "b", "c"])));
}

#[test]
fn every_readme_command_block_runs() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for b in blocks(README) {
        let language = b.info.split_whitespace().next().unwrap_or("");
        if language.is_empty() {
            failures.push(format!("README.md:{}: a block without a language", b.line));
            continue;
        }
        if b.info.contains("not run:") {
            let reason = b.info.split("not run:").nth(1).unwrap_or("").trim();
            if reason.is_empty() {
                failures.push(format!("README.md:{}: `not run:` without a reason", b.line));
            }
            continue;
        }
        if language != "console" {
            if b.text.lines().any(|l| l.starts_with("$ lupa")) {
                failures.push(format!(
                    "README.md:{}: `$ lupa` in a `{language}` block (make it `console`)",
                    b.line
                ));
            }
            continue;
        }
        let sampled = b.info.split_whitespace().any(|w| w == "sampled");
        let steps = transcript(&b.text);
        let commands: Vec<String> = steps.iter().map(|s| s.0.clone()).collect();
        let dir = workspace();
        let (results, stderr) = run(dir.path(), &commands);
        for (i, (command, expected)) in steps.iter().enumerate() {
            ran += 1;
            let Some((actual, rc)) = results.get(i) else {
                failures.push(format!(
                    "README.md:{}: `{command}` did not run: {stderr}",
                    b.line
                ));
                break;
            };
            let wanted_rc = steps
                .get(i + 1)
                .filter(|next| next.0 == "echo $?")
                .and_then(|next| next.1.first())
                .and_then(|l| l.trim().parse().ok())
                .unwrap_or(0);
            if *rc != wanted_rc {
                failures.push(format!(
                    "README.md:{}: `{command}` exited {rc}, not {wanted_rc}\n{stderr}",
                    b.line
                ));
            }
            let ok = if sampled {
                expected
                    .first()
                    .is_none_or(|e| actual.first().is_some_and(|a| shape(a) == shape(e)))
            } else {
                matches(expected, actual)
            };
            if !ok {
                failures.push(format!(
                    "README.md:{}: `{command}` printed\n{}\nwhere the README shows\n{}",
                    b.line,
                    actual.join("\n"),
                    expected.join("\n")
                ));
            }
        }
    }
    assert!(ran > 10, "only {ran} commands found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
