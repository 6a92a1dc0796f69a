//! Helpers for running the `lupa` binary in tests.
#![allow(dead_code)]

pub(crate) mod hip;
pub(crate) mod shadows;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Output of one run.
pub(crate) struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run `lupa` with `args` in `dir`.
pub(crate) fn lupa_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_lupa"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the lupa binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Whether the slow tests run (a long gc-tune search, the fuzzer's
/// generated programs): under `CI=true` (`.ci/run`) or `LUPA_SLOW_TESTS=1`;
/// otherwise they say that they skipped, so that a local `cargo test` takes
/// minutes.
#[allow(clippy::print_stderr)] // a test's note that it was skipped
pub(crate) fn slow_tests(what: &str) -> bool {
    let on = |var: &str, value: &str| std::env::var(var).is_ok_and(|v| v == value);
    let run = on("CI", "true") || on("LUPA_SLOW_TESTS", "1");
    if !run {
        eprintln!("skipped {what}: a slow test (LUPA_SLOW_TESTS=1 or CI=true runs it)");
    }
    run
}

/// Run `lupa` with `args` in a scratch directory.
pub(crate) fn lupa(args: &[&str]) -> Run {
    lupa_in(&std::env::temp_dir(), args)
}

/// A temporary directory holding the given class files.
pub(crate) fn classes(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write class file");
    }
    dir
}

/// Replace a directory path by `<dir>` so snapshots are stable.
pub(crate) fn scrub(text: &str, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "<dir>")
}

/// Where a checkout of SOM-st/SOM is, if any: `LUPA_SOM_DIR`, or `../som` next to the workspace. It must hold
/// `part` (a file the caller needs: `Smalltalk/Object.som` for core-lib, `TestSuite/TestHarness.som`,
/// `Examples/AreWeFastYet/Harness.som`): a partial copy, such as som-rs's core-lib alone, holds only some of them.
/// `None`, said on stderr with what is missing, skips the caller's test.
pub(crate) fn som_dir(part: &str) -> Option<PathBuf> {
    let p = match std::env::var("LUPA_SOM_DIR") {
        Ok(d) => PathBuf::from(d),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../som"),
    };
    if p.join(part).exists() {
        return Some(p);
    }
    eprintln!(
        "note: no SOM checkout with {part} (at {}; set LUPA_SOM_DIR to a SOM-st/SOM checkout); skipping",
        p.display()
    );
    None
}

/// `go tool pprof -top -sample_index=INDEX FILE` (Debian `golang-go`, installed
/// by `.ci/run`; an empty INDEX: pprof's default view): its standard output,
/// after checking it succeeded; `None` (said on stderr) when go is not
/// installed.
pub(crate) fn go_tool_pprof_top(file: &Path, index: &str) -> Option<String> {
    let go = ["/usr/bin/go", "/usr/lib/go/bin/go", "/usr/local/go/bin/go"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(go) = go else {
        eprintln!("skipped the go tool pprof check: go is not installed (Debian golang-go)");
        return None;
    };
    let home = file.parent().unwrap_or(Path::new("."));
    let mut cmd = Command::new(go);
    cmd.args(["tool", "pprof", "-top"]);
    if !index.is_empty() {
        cmd.arg(format!("-sample_index={index}"));
    }
    let out = cmd
        .arg(file)
        .env("HOME", home)
        .output()
        .expect("go tool pprof runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(stdout)
}

/// Headless Chromium (Debian `chromium`, installed by `.ci/run`), or `None`
/// (said on stderr) when it is not installed or the slow tests do not run
/// (the pages are still written and checked; only opening them is skipped).
pub(crate) fn chromium() -> Option<&'static str> {
    // Each check starts a browser (1-3 s of both cores): with the slow tests.
    if !slow_tests("the Chromium check") {
        return None;
    }
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    if found.is_none() {
        eprintln!("skipped the Chromium check: chromium is not installed (Debian chromium)");
    }
    found
}

/// Open `dir/file` in headless `chromium` with `args` (its profile kept in
/// `dir/chrome`).
pub(crate) fn browse(
    chromium: &str,
    dir: &Path,
    args: &[&str],
    file: &str,
) -> std::process::Output {
    Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("chrome").display()))
        .args(args)
        .arg(format!("file://{}", dir.join(file).display()))
        .output()
        .expect("chromium runs")
}

/// Open `dir/file` and check its script set `marker` in the DOM without a
/// console error; answers the DOM.
pub(crate) fn assert_page_ready(chromium: &str, dir: &Path, file: &str, marker: &str) -> String {
    let out = browse(chromium, dir, &["--dump-dom"], file);
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        dom.contains(marker),
        "{file}: the script did not finish:\n{log}"
    );
    assert!(!log.contains("Uncaught"), "{file}: console error:\n{log}");
    assert!(
        !log.contains(":ERROR:CONSOLE"),
        "{file}: console error:\n{log}"
    );
    dom
}

/// Take a screenshot of `dir/file` and check it is not blank (more than 16
/// colours).
pub(crate) fn assert_screenshot_not_blank(chromium: &str, dir: &Path, file: &str) {
    let shot = dir.join(format!("{file}.png"));
    let out = browse(
        chromium,
        dir,
        &[
            "--hide-scrollbars",
            "--window-size=1280,900",
            &format!("--screenshot={}", shot.display()),
        ],
        file,
    );
    assert!(shot.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&shot).expect("screenshot"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("pixels");
    let pixels = &buf[..info.buffer_size()];
    let step = info.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> = pixels.chunks(step).collect();
    assert!(
        colours.len() > 16,
        "{file}: the screenshot is blank ({} colours)",
        colours.len()
    );
}
