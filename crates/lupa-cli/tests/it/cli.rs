//! End-to-end tests of the `lupa` command.

use crate::common::{classes, lupa, lupa_in, scrub};

#[test]
fn hello_runs_from_the_bundled_library() {
    let r = lupa(&["run", "Hello"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "Hello, Lupa!\n");
}

#[test]
fn som_style_invocation_without_run() {
    let dir = classes(&[(
        "Greeter.som",
        "Greeter = ( run: args = ( (args at: 2) println ) )",
    )]);
    let cp = dir.path().display().to_string();
    let r = lupa(&["-cp", &cp, "Greeter", "hi"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "hi\n");
}

#[test]
fn syntax_error_has_location_and_caret() {
    let dir = classes(&[("Broken.som", "Broken = (\n  run = ( ^ 1 + )\n)\n")]);
    let r = lupa_in(dir.path(), &["-cp", ".", "Broken"]);
    assert_eq!(r.code, 65);
    insta::assert_snapshot!("syntax_error", scrub(&r.stderr, dir.path()));
}

#[test]
fn missing_class_is_a_clear_error() {
    let dir = classes(&[]);
    let r = lupa_in(dir.path(), &["-cp", ".", "NoSuchClass"]);
    assert_eq!(r.code, 66);
    insta::assert_snapshot!("missing_class", scrub(&r.stderr, dir.path()));
}

#[test]
fn missing_superclass_names_the_file_and_line() {
    let dir = classes(&[(
        "Orphan.som",
        "Orphan = NoSuchParent (\n  run = ( ^self )\n)\n",
    )]);
    let r = lupa_in(dir.path(), &["-cp", ".", "Orphan"]);
    assert_eq!(r.code, 66);
    insta::assert_snapshot!("missing_superclass", scrub(&r.stderr, dir.path()));
}

#[test]
fn does_not_understand_prints_a_backtrace() {
    let dir = classes(&[(
        "Dnu.som",
        "Dnu = (\n  run = ( self helper )\n  helper = ( ^ 3 frobnicate: 4 )\n)\n",
    )]);
    let r = lupa_in(dir.path(), &["-cp", ".", "Dnu"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("frobnicate:"), "{}", r.stderr);
    assert!(
        r.stderr.contains("Dnu>>helper (./Dnu.som:3)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("Dnu>>run (./Dnu.som:2)"), "{}", r.stderr);
}

#[test]
fn deep_recursion_is_a_catchable_error() {
    let dir = classes(&[(
        "Deep.som",
        "Deep = (\n  down: n = ( ^ (self down: n + 1) + 1 )\n  run = (\n    | r |\n    r := [ self down: 0 ] on: Error do: [ :e | e return: 'caught' ].\n    r println\n  )\n)\n",
    )]);
    let r = lupa_in(
        dir.path(),
        &["-cp", ".", "--max-stack-depth", "20000", "Deep"],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "caught\n");
}

#[test]
fn uncaught_deep_recursion_exits_non_zero() {
    let dir = classes(&[(
        "Deeper.som",
        "Deeper = (\n  down: n = ( ^ (self down: n + 1) + 1 )\n  run = ( self down: 0 )\n)\n",
    )]);
    let r = lupa_in(
        dir.path(),
        &["-cp", ".", "--max-stack-depth", "5000", "Deeper"],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.to_lowercase().contains("stack overflow"),
        "{}",
        r.stderr
    );
}

#[test]
fn heap_exhaustion_is_an_error_not_an_abort() {
    let dir = classes(&[(
        "Hog.som",
        "Hog = (\n  run = ( | v | v := Array new: 1. 1 to: 1000000 do: [ :i | v := Array new: 1000 withAll: v ] )\n)\n",
    )]);
    let r = lupa_in(dir.path(), &["-cp", ".", "--max-heap", "32MB", "Hog"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("memory") || r.stderr.contains("heap"),
        "{}",
        r.stderr
    );
}

#[test]
fn exit_code_is_propagated() {
    let dir = classes(&[("Quit.som", "Quit = ( run = ( system exit: 3 ) )")]);
    let r = lupa_in(dir.path(), &["-cp", ".", "Quit"]);
    assert_eq!(r.code, 3);
}

const COUNTER: &str = "Counter = (
  three = ( ^ self one + self one + self one )
  one = ( ^ 1 )
  fib: n = ( n < 2 ifTrue: [ ^ n ]. ^ (self fib: n - 1) + (self fib: n - 2) )
  run = (
    | before after |
    before := system sendCount.
    self three.
    after := system sendCount.
    (after - before) println.
    before := system sendCount.
    self fib: 10.
    after := system sendCount.
    (after - before) println.
    before := system sendCount.
    [ self three ] value.
    after := system sendCount.
    (after - before) println
  )
)
";

#[test]
fn send_counts_are_exact() {
    let dir = classes(&[("Counter.som", COUNTER)]);
    let r = lupa_in(dir.path(), &["-cp", ".", "Counter"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    // `self three`: three + 3 x one + 2 x (+) = 6 sends, plus the `system sendCount` send = 7.
    // fib: 10 -> 177 activations, each `<` and (non-leaf) 2 x `-`, `+`, 2 sends: see below.
    let lines: Vec<u64> = r
        .stdout
        .lines()
        .map(|l| l.parse().expect("a number"))
        .collect();
    assert_eq!(lines[0], 7);
    // fib(10): 177 calls; each does `<` (177); 88 non-leaf calls do 2 `-`, 2 sends, 1 `+` (5 each = 440).
    // 1 send of fib: from run + 1 sendCount = 2. Total 177 + 440 + 2 = 619.
    assert_eq!(lines[1], 619);
    // [ self three ] value: value + 6 + sendCount = 8.
    assert_eq!(lines[2], 8);
}

#[test]
fn send_counts_are_identical_across_runs_seeds_and_gc_stress() {
    let dir = classes(&[("Counter.som", COUNTER)]);
    let a = lupa_in(dir.path(), &["-cp", ".", "Counter"]);
    let b = lupa_in(dir.path(), &["-cp", ".", "Counter"]);
    let c = lupa_in(dir.path(), &["-cp", ".", "--gc-stress", "Counter"]);
    let d = lupa_in(dir.path(), &["-cp", ".", "--hash-seed", "42", "Counter"]);
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.stdout, c.stdout);
    assert_eq!(a.stdout, d.stdout);
}

#[test]
fn bad_option_is_a_usage_error() {
    let r = lupa(&["run", "--max-heap", "lots", "Hello"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("invalid size"), "{}", r.stderr);
}

#[test]
fn heap_exhaustion_is_catchable() {
    let dir = classes(&[(
        "Hog2.som",
        "Hog2 = (\n  grow = ( | v | v := Array new: 1. 1 to: 1000000 do: [ :i | v := Array new: 1000 withAll: v ]. ^ v )\n  run = (\n    [ self grow ] on: Error do: [ :e | ('caught: ' + e messageText) println ].\n    'still alive' println\n  )\n)\n",
    )]);
    let r = lupa_in(dir.path(), &["-cp", ".", "--max-heap", "32MB", "Hog2"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout.starts_with("caught: out of memory"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with("still alive\n"), "{}", r.stdout);
}

const COUNTED: &str = "Counted = (
  leaf = ( ^ 1 )
  twice = ( ^ self leaf + self leaf )
  fib: n = ( n < 2 ifTrue: [ ^ n ]. ^ (self fib: n - 1) + (self fib: n - 2) )
  unwind = ( ^ [ self twice. Error signal: 'x' ] on: Error do: [ :e | e return: 0 ] )
  run = ( self fib: 8. 10 timesRepeat: [ self twice ]. self unwind )
)
";

#[test]
fn count_reports_exact_per_method_sends() {
    let dir = classes(&[("Counted.som", COUNTED)]);
    let r = lupa_in(
        dir.path(),
        &[
            "count", "-cp", ".", "--class", "Counted", "--format", "ranking", "Counted",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    insta::assert_snapshot!("count_ranking", r.stdout);
}

#[test]
fn count_exports_parse_back() {
    let dir = classes(&[("Counted.som", COUNTED)]);
    for (format, file) in [
        ("json", "p.json"),
        ("speedscope", "p.speedscope.json"),
        ("callgrind", "callgrind.out"),
        ("folded", "p.folded"),
        ("svg", "p.svg"),
    ] {
        let r = lupa_in(
            dir.path(),
            &[
                "count", "-cp", ".", "--format", format, "-o", file, "Counted",
            ],
        );
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        let text = std::fs::read_to_string(dir.path().join(file)).expect("report written");
        match format {
            "json" | "speedscope" => {
                let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
                assert!(v.is_object());
            }
            "callgrind" => assert!(text.contains("events: Sends") && text.contains("fn=")),
            "folded" => assert!(text.lines().all(|l| {
                l.rsplit_once(' ')
                    .is_some_and(|(_, n)| n.parse::<u64>().is_ok())
            })),
            _ => assert!(text.starts_with("<?xml") || text.starts_with("<svg")),
        }
    }
    // callgrind_annotate reads the file when valgrind is installed.
    if std::path::Path::new("/usr/bin/callgrind_annotate").exists() {
        let out = std::process::Command::new("callgrind_annotate")
            .arg(dir.path().join("callgrind.out"))
            .output()
            .expect("callgrind_annotate runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("Counted>>fib:"));
    }
}

#[test]
fn count_is_identical_with_and_without_gc_stress() {
    let dir = classes(&[("Counted.som", COUNTED)]);
    let a = lupa_in(
        dir.path(),
        &[
            "count", "-cp", ".", "--format", "json", "-o", "-", "Counted",
        ],
    );
    let b = lupa_in(
        dir.path(),
        &[
            "count",
            "-cp",
            ".",
            "--format",
            "json",
            "-o",
            "-",
            "--gc-stress",
            "Counted",
        ],
    );
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn calibrate_fits_a_message_rate_and_count_uses_it() {
    let dir = classes(&[("Counted.som", COUNTED)]);
    let r = lupa_in(
        dir.path(),
        &[
            "calibrate",
            "-cp",
            ".",
            "--runs",
            "2",
            "--program",
            "Counted",
            "--program",
            "BenchmarkRunner Queens 1 5",
            "--program",
            "BenchmarkRunner Towers 1 3",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("message rate MR ="), "{}", r.stdout);
    assert!(r.stdout.contains("95% confidence interval"), "{}", r.stdout);
    assert!(dir.path().join("lupa-calibration.json").exists());
    let c = lupa_in(
        dir.path(),
        &["count", "-cp", ".", "--format", "ranking", "Counted"],
    );
    assert!(c.stdout.contains("estimated time:"), "{}", c.stdout);
}

#[test]
fn stability_shows_counting_is_stable() {
    let dir = classes(&[("Counted.som", COUNTED)]);
    let r = lupa_in(
        dir.path(),
        &[
            "stability",
            "-cp",
            ".",
            "--runs",
            "3",
            "--top",
            "3",
            "Counted",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("psi_3 counted (sends):      0.000"),
        "{}",
        r.stdout
    );
}

#[test]
fn exit_status_outside_0_255_is_not_success() {
    for (code, want) in [("-1", 1), ("256", 1), ("3", 3), ("0", 0)] {
        let src = format!("Quit = ( run = ( system exit: {code} ) )");
        let dir = classes(&[("Quit.som", &src)]);
        let r = lupa_in(dir.path(), &["-cp", ".", "Quit"]);
        assert_eq!(r.code, want, "system exit: {code}; stderr: {}", r.stderr);
        if want == 1 {
            assert!(r.stderr.contains("outside 0..255"), "{}", r.stderr);
        }
    }
}

#[test]
fn print_string_with_a_bad_radix_is_an_error_not_a_hang() {
    let dir = classes(&[(
        "Radix.som",
        "Radix = ( run = (\n  ([ 255 printString: 1 ] on: Error do: [ :e | e messageText ]) println.\n  (255 printString: 16) println ) )",
    )]);
    let r = lupa_in(dir.path(), &["-cp", ".", "Radix"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(
        r.stdout,
        "printString: the radix must be an Integer from 2 to 36, not 1\nFF\n"
    );
}

#[test]
fn finding_no_test_fails_and_says_where_it_looked() {
    let r = lupa(&["test", "-cp", "/nonexistent/lupa-tests"]);
    assert_eq!(r.code, 1, "stdout: {}", r.stdout);
    assert!(
        r.stderr
            .contains("no TestCase subclass found in the class path /nonexistent/lupa-tests"),
        "{}",
        r.stderr
    );
}

#[test]
fn readme_compile_example_compiles() {
    let dir = classes(&[(
        "Foo.som",
        "Foo = ( run = ( Foo compile: 'bar = ( ^42 )'. Foo new bar println ) )",
    )]);
    let r = lupa_in(dir.path(), &["-cp", ".", "Foo"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "42\n");
}

#[test]
fn stability_of_a_failing_program_fails() {
    let dir = classes(&[("Fails.som", "Fails = ( run = ( 1/0 ) )")]);
    let r = lupa_in(
        dir.path(),
        &["stability", "--runs", "2", "-cp", ".", "Fails"],
    );
    assert_eq!(r.code, 70, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("`Fails` failed (exit status 1)"),
        "{}",
        r.stderr
    );
}

#[test]
fn source_file_that_is_not_utf8_names_the_file_and_offset() {
    let dir = classes(&[]);
    std::fs::write(
        dir.path().join("Bad.som"),
        b"Bad = ( run = ( 'caf\xe9' println ) )",
    )
    .expect("write");
    let r = lupa_in(dir.path(), &["-cp", ".", "Bad"]);
    assert_eq!(r.code, 65, "stderr: {}", r.stderr);
    assert!(
        r.stderr
            .contains("Bad.som: not valid UTF-8 (first invalid byte at offset 20)"),
        "{}",
        r.stderr
    );
}

#[test]
fn argument_that_is_not_utf8_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lupa"))
        .arg("run")
        .arg("Hello")
        .arg(std::ffi::OsStr::from_bytes(b"\xff"))
        .output()
        .expect("the lupa binary runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("argument 3 is not valid UTF-8"), "{stderr}");
}

#[test]
fn sizes_larger_than_the_heap_are_smalltalk_errors() {
    let dir = classes(&[(
        "Big.som",
        "Big = ( run = (\n  ([ String new: 4611686018427387903 ] on: Error do: [ :e | e messageText ]) println.\n  ([ Array new: 4611686018427387903 ] on: Error do: [ :e | e messageText ]) println.\n  'still running' println ) )",
    )]);
    let r = lupa_in(dir.path(), &["-cp", ".", "Big"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    assert!(lines[0].starts_with("out of memory"), "{}", r.stdout);
    assert!(lines[1].starts_with("out of memory"), "{}", r.stdout);
    assert_eq!(lines[2], "still running");
}

/// Each process has its own calling-context tree: a process that forks twice
/// keeps its own work under its own methods, and each forked block's work is
/// charged to the forked process (exact counts).
#[test]
fn forked_processes_get_their_own_trees() {
    let dir = classes(&[(
        "Forker.som",
        "Forker = (\n    run = ( | s | s := Semaphore new. [ self work: 3. s signal ] fork. [ self work: 5. s signal ] fork. self work: 2. s wait. s wait. self leaf )\n    work: n = ( 1 to: n do: [ :i | self leaf ] )\n    leaf = ( ^self yourself )\n)\n",
    )]);
    let r = lupa_in(
        dir.path(),
        &[
            "count", "--format", "folded", "-o", "-", "-cp", ".", "Forker",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let expected = "\
System>>initialize: 9
System>>initialize:;Forker>>run 7
System>>initialize:;Forker>>run;Block>>fork 6
System>>initialize:;Forker>>run;Forker>>work: 2
System>>initialize:;Forker>>run;Forker>>work:;Forker>>leaf 2
System>>initialize:;Forker>>run;Forker>>leaf 1
System>>initialize:;System>>resolve: 2
System>>initialize:;System>>installProcessor 1
<process 2>;[]#2 in Forker>>run 2
<process 2>;[]#2 in Forker>>run;Forker>>work: 5
<process 2>;[]#2 in Forker>>run;Forker>>work:;Forker>>leaf 5
<process 1>;[]#1 in Forker>>run 2
<process 1>;[]#1 in Forker>>run;Forker>>work: 3
<process 1>;[]#1 in Forker>>run;Forker>>work:;Forker>>leaf 3
";
    assert_eq!(r.stdout, expected);
}

/// What the program prints never mixes with a machine-readable report: with
/// `-o -` the program's output goes to standard error; without -o a machine
/// format goes to a default file named on standard error; text reports
/// follow the program's output on standard output.
#[test]
fn program_output_never_mixes_with_a_machine_report() {
    let dir = classes(&[(
        "Chatty.som",
        "Chatty = ( run = ( 1 to: 3 do: [ :i | ('progress ' + i printString) println ] ) )\n",
    )]);
    let r = lupa_in(
        dir.path(),
        &["count", "-cp", ".", "--format", "json", "-o", "-", "Chatty"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).expect("stdout is only the JSON report");
    assert!(v.is_object());
    assert!(r.stderr.contains("progress 3"), "{}", r.stderr);

    let r = lupa_in(
        dir.path(),
        &["count", "-cp", ".", "--format", "folded", "Chatty"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "progress 1\nprogress 2\nprogress 3\n");
    assert!(
        r.stderr
            .contains("wrote the folded report to Chatty.folded"),
        "{}",
        r.stderr
    );
    let folded = std::fs::read_to_string(dir.path().join("Chatty.folded")).expect("default file");
    assert!(
        folded.lines().all(|l| !l.starts_with("progress")),
        "{folded}"
    );

    let r = lupa_in(
        dir.path(),
        &["count", "-cp", ".", "--format", "ranking", "Chatty"],
    );
    assert!(
        r.stdout.starts_with("progress 1\nprogress 2\nprogress 3\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("| # | Method"), "{}", r.stdout);
}

/// An unwritable -o is reported before the program runs (exit 74).
#[test]
fn an_unwritable_output_is_refused_before_running() {
    let dir = classes(&[("Loud.som", "Loud = ( run = ( 'ran' println ) )\n")]);
    let r = lupa_in(
        dir.path(),
        &[
            "count",
            "-cp",
            ".",
            "-o",
            "/nonexistent-lupa-dir/p.json",
            "--format",
            "json",
            "Loud",
        ],
    );
    assert_eq!(r.code, 74, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("cannot write /nonexistent-lupa-dir/p.json"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "", "the program must not have run");
}

/// The pprof export is read back by `go tool pprof` (Debian `golang-go`,
/// installed by `.ci/run`), which must find the hottest method and the
/// activations sample type.
#[test]
fn pprof_export_opens_in_go_tool_pprof() {
    let dir = classes(&[("Counted.som", COUNTED)]);
    let r = lupa_in(
        dir.path(),
        &[
            "count", "-cp", ".", "--format", "pprof", "-o", "p.pb.gz", "Counted",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bytes = std::fs::read(dir.path().join("p.pb.gz")).expect("written");
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip magic");
    // Sends are the default view (issue 25), activations the other one.
    for index in ["", "sends", "activations"] {
        let Some(stdout) = crate::common::go_tool_pprof_top(&dir.path().join("p.pb.gz"), index)
        else {
            return;
        };
        assert!(stdout.contains("Counted>>fib:"), "{stdout}");
        let shown = if index.is_empty() { "sends" } else { index };
        assert!(stdout.contains(&format!("Type: {shown}")), "{stdout}");
    }
}

/// The HTML report and the flame-graph SVG open in headless Chromium (Debian
/// `chromium`, installed by `.ci/run`): their scripts run to the end without a
/// console error, and a screenshot of the page is not blank.
#[test]
fn html_and_svg_reports_open_in_chromium() {
    let dir = classes(&[("Counted.som", COUNTED)]);
    for (format, file) in [("html", "p.html"), ("svg", "p.svg")] {
        let r = lupa_in(
            dir.path(),
            &[
                "count", "-cp", ".", "--format", format, "-o", file, "Counted",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let html = std::fs::read_to_string(dir.path().join("p.html")).expect("page");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("Counted&gt;&gt;fib:"));
    let Some(chromium) = crate::common::chromium() else {
        return;
    };
    let browse =
        |args: &[&str], file: &str| crate::common::browse(chromium, dir.path(), args, file);
    crate::common::assert_page_ready(chromium, dir.path(), "p.html", "data-page-ready=\"true\"");
    crate::common::assert_page_ready(chromium, dir.path(), "p.svg", "data-ready=\"true\"");
    // Interaction: a click zooms a frame to the full width and hides the
    // frames outside it; a search reports the share of the matched frames.
    let svg = std::fs::read_to_string(dir.path().join("p.svg")).expect("svg");
    let svg = svg.split_once("?>").map(|(_, s)| s).unwrap_or(&svg);
    let probe = format!(
        "<!DOCTYPE html><html><body>{svg}<script>\
         var g = [].slice.call(document.querySelectorAll('g.f')).filter(function (x) {{ return x.getAttribute('data-n') === 'Counted>>fib:'; }})[0];\
         var before = +g.querySelector('rect').getAttribute('width');\
         g.dispatchEvent(new MouseEvent('click', {{ bubbles: true }}));\
         var after = +g.querySelector('rect').getAttribute('width');\
         var hidden = [].slice.call(document.querySelectorAll('g.f')).filter(function (x) {{ return x.style.display === 'none'; }}).length;\
         window.prompt = function () {{ return 'fib'; }};\
         document.getElementById('search').dispatchEvent(new MouseEvent('click', {{ bubbles: true }}));\
         document.body.setAttribute('data-result', (after > before) + '|' + (hidden > 0) + '|' + document.getElementById('matched').textContent);\
         </script></body></html>"
    );
    std::fs::write(dir.path().join("probe.html"), probe).expect("probe page");
    let out = browse(&["--dump-dom"], "probe.html");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("data-result=\"true|true|Matched: "),
        "zoom or search did not work:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    crate::common::assert_screenshot_not_blank(chromium, dir.path(), "p.html");
}

/// A callgrind file's bundled sources are written beside it, so
/// callgrind_annotate (valgrind) annotates the kernel's methods too.
#[test]
fn callgrind_sources_are_reachable() {
    let dir = classes(&[("Counted.som", COUNTED)]);
    let r = lupa_in(
        dir.path(),
        &[
            "count",
            "-cp",
            ".",
            "--format",
            "callgrind",
            "-o",
            "cg.out",
            "Counted",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(dir.path().join("cg.out")).expect("written");
    let kernel = dir.path().join("cg.out.sources/Kernel");
    assert!(kernel.is_dir(), "no sources beside the profile");
    assert!(
        !text.contains("<lupa>/"),
        "a bundled file is not reachable:\n{text}"
    );
    if std::path::Path::new("/usr/bin/callgrind_annotate").exists() {
        let out = std::process::Command::new("callgrind_annotate")
            .args(["--auto=yes", "cg.out"])
            .current_dir(dir.path())
            .output()
            .expect("callgrind_annotate runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("Auto-annotated source:") && stdout.contains(".sources/Kernel/"),
            "{stdout}"
        );
    } else {
        eprintln!("skipped the callgrind_annotate check: valgrind is not installed");
    }
}

/// callgrind places the cost of each call on the line of its send
/// (`positions: line`), so annotated sources show it there.
#[test]
fn callgrind_costs_calls_on_the_line_of_the_send() {
    let dir = classes(&[(
        "Lines.som",
        "Lines = (\n    run = (\n        self a.\n        self b\n    )\n    a = ( ^1 )\n    b = ( ^self a )\n)\n",
    )]);
    let r = lupa_in(
        dir.path(),
        &[
            "count",
            "-cp",
            ".",
            "--format",
            "callgrind",
            "-o",
            "-",
            "Lines",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = r.stdout;
    // Names are compressed: `(id) name` once, `(id)` afterwards.
    let id_of = |name: &str| {
        text.lines()
            .find_map(|l| {
                let (_, rest) = l.split_once('=')?;
                let (id, n) = rest.split_once(' ')?;
                (n == name).then(|| id.to_string())
            })
            .unwrap_or_else(|| panic!("{name} not in:\n{text}"))
    };
    let run = id_of("Lines>>run");
    let start = text
        .lines()
        .position(|l| l == format!("fn={run}") || l == format!("fn={run} Lines>>run"))
        .expect("the function of Lines>>run");
    let body: Vec<&str> = text
        .lines()
        .skip(start)
        .take_while(|l| !l.is_empty())
        .collect();
    let body = body.join("\n");
    // calls=1 <callee's line>, then "<line of the send> <cost>".
    let lines: Vec<&str> = body.lines().collect();
    let after = |callee: &str| {
        let id = id_of(callee);
        let i = lines
            .iter()
            .position(|l| *l == format!("cfn={id}") || *l == format!("cfn={id} {callee}"))
            .unwrap_or_else(|| panic!("no call of {callee} in:\n{body}"));
        lines[i + 2].split(' ').next().unwrap_or("").to_string()
    };
    assert_eq!(after("Lines>>a"), "3", "{body}");
    assert_eq!(after("Lines>>b"), "4", "{body}");
}

/// Starting and stopping a profiler from Smalltalk changes the interpreter's
/// observation mode at the next safepoint, through the scheduler's pending
/// flag: a process that is merely ready must not run because of it.
#[test]
fn a_profiler_started_from_smalltalk_switches_no_process() {
    let dir = classes(&[(
        "Sw.som",
        "Sw = (\n    run = (\n        [ 'forked' println ] fork.\n        (Compteur profile: [ 3 + 4 ]) size > 0 ifTrue: [ 'profiled' println ].\n        'main' println.\n        Processor yield.\n        'end' println\n    )\n)\n",
    )]);
    let r = lupa_in(dir.path(), &["run", "-cp", ".", "Sw"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "profiled\nmain\nforked\nend\n");
}
