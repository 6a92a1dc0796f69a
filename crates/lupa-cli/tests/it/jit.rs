//! The JIT tier, from the outside: every suite that runs interpreted also runs
//! with every method and block compiled at its first activation
//! (`--jit always`), under GC stress, with a code zone small enough to evict,
//! and the profilers give the numbers they give without the JIT.

use crate::common::{classes, lupa, lupa_in, slow_tests};
use crate::suites::summary_line;

/// The first line of `out` that contains `what` (a `--jit-stats` line, a
/// report's), or a failure that shows `out`.
fn line_with<'a>(out: &'a str, what: &str) -> &'a str {
    out.lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line with `{what}`:\n{out}"))
}

fn assert_green(args: &[&str]) -> u32 {
    let r = lupa(args);
    let (passed, failed) = summary_line(&r.stdout)
        .unwrap_or_else(|| panic!("{args:?}: no summary:\n{}\n{}", r.stdout, r.stderr));
    assert_eq!(failed, 0, "{args:?}: failures:\n{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    passed
}

/// Whether this build has a JIT (x86-64 Linux); elsewhere `--jit always`
/// interprets and the tests below check only that.
fn jit_installed() -> bool {
    let r = lupa(&[
        "bench",
        "Towers",
        "1",
        "1",
        "--jit-stats",
        "--jit",
        "always",
    ]);
    r.stderr.contains("jit: compiled")
}

/// The suites whose code paths the JIT treats specially (closures, non-local
/// returns, `ensure:`, exceptions, process switches, collections): what a
/// local run compiles when the slow tests are off.
const KERNEL_SUITES: &[&str] = &[
    "LupaBlockTest",
    "LupaExceptionTest",
    "LupaCollectionTest",
    "LupaEnsureTest",
    "LupaProcessTest",
    "LupaGcTest",
];

#[test]
fn bundled_sunit_suites_pass_with_everything_compiled() {
    // Every suite compiles some 3,000 functions (half a minute in a debug
    // build): a slow test; a local run compiles the kernel suites.
    let suites: &[&str] = if slow_tests("compiling every bundled suite") {
        &[]
    } else {
        KERNEL_SUITES
    };
    let run = |jit: &str| {
        let mut args = vec!["test", "--jit", jit];
        args.extend(suites);
        assert_green(&args)
    };
    let interpreted = run("off");
    let compiled = run("always");
    assert_eq!(interpreted, compiled, "the same tests ran");
}

#[test]
fn compiled_code_survives_gc_stress() {
    // Closures, non-local returns, ensure:, exceptions and process switches
    // from compiled code, with a collection at every allocation.
    let mut suites = vec!["test", "--jit", "always", "--gc-stress", "--verify-heap"];
    suites.extend(KERNEL_SUITES);
    assert_green(&suites);
    let mut benchmarks = vec![
        &["bench", "Richards", "1", "1"][..],
        &["bench", "DeltaBlue", "1", "20"][..],
    ];
    // Json verifies the heap at each of its allocations: 12 s in a debug build.
    if slow_tests("Json compiled under GC stress") {
        benchmarks.push(&["bench", "Json", "1", "1"][..]);
    }
    for args in benchmarks {
        let mut all = vec![args[0], "--jit", "always", "--gc-stress", "--verify-heap"];
        all.extend(&args[1..]);
        let r = lupa(&all);
        assert_eq!(r.code, 0, "{args:?}: {}\n{}", r.stdout, r.stderr);
    }
}

#[test]
fn benchmarks_verify_compiled_and_with_evictions() {
    // `bench` checks each benchmark's result (Havlak, the largest, is left
    // to the release runs: a debug build takes minutes).
    for (name, inner) in [
        ("Richards", "1"),
        ("DeltaBlue", "20"),
        ("Json", "1"),
        ("NBody", "1"),
        ("CD", "2"),
        ("Bounce", "2"),
        ("List", "2"),
        ("Mandelbrot", "1"),
        ("Permute", "2"),
        ("Queens", "2"),
        ("Sieve", "2"),
        ("Storage", "2"),
        ("Towers", "2"),
    ] {
        let r = lupa(&["bench", name, "1", inner, "--jit", "always"]);
        assert_eq!(r.code, 0, "{name}: {}\n{}", r.stdout, r.stderr);
    }
    // A 48 KB code zone is smaller than Richards' and Json's compiled code
    // (65 KB and 78 KB with the stubs when measured; 64 KB was, before the
    // code got smaller): functions are evicted and moved while the
    // benchmarks run.
    for name in ["Richards", "Json"] {
        let r = lupa(&[
            "bench",
            name,
            "2",
            "1",
            "--jit",
            "always",
            "--code-zone",
            "48KB",
            "--jit-stats",
        ]);
        assert_eq!(r.code, 0, "{name}: {}\n{}", r.stdout, r.stderr);
        if jit_installed() {
            let evictions = line_with(&r.stderr, "evictions");
            assert!(
                !evictions.contains(" 0 evictions"),
                "{name}: the small zone evicted: {evictions}"
            );
        }
    }
}

#[test]
fn hot_code_is_compiled_at_the_threshold() {
    if !jit_installed() {
        return;
    }
    let r = lupa(&[
        "bench",
        "Towers",
        "1",
        "5",
        "--jit-stats",
        "--jit-log",
        "--jit-threshold",
        "50",
        "--jit-thread",
        "off",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("TowersBenchmark>>"), "{}", r.stderr);
    assert!(!r.stderr.contains("compiler thread"), "{}", r.stderr);
    let r = lupa(&["bench", "Towers", "1", "5", "--jit-stats", "--jit", "off"]);
    assert!(r.stderr.contains("jit: off"), "{}", r.stderr);
}

/// `--jit on` compiles on the compiler thread by default: `--jit-stats`
/// says what it was given and what it cost; `--jit always` and
/// `--jit-thread off` compile on the VM thread.
#[test]
fn hot_code_is_compiled_on_the_compiler_thread() {
    if !jit_installed() {
        return;
    }
    let r = lupa(&[
        "bench",
        "Towers",
        "1",
        "5",
        "--jit-stats",
        "--jit-threshold",
        "50",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = line_with(&r.stderr, "jit: compiler thread: ");
    let jobs: u64 = line
        .trim_start_matches("jit: compiler thread: ")
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(jobs > 0, "{line}");
    assert!(line.contains("ms of its CPU time"), "{line}");
    for flags in [&["--jit", "always"][..], &["--jit-thread", "off"][..]] {
        let mut args = vec!["bench", "Towers", "1", "2", "--jit-stats"];
        args.extend(flags);
        let r = lupa(&args);
        assert_eq!(r.code, 0, "{flags:?}: {}", r.stderr);
        assert!(
            !r.stderr.contains("compiler thread"),
            "{flags:?}: {}",
            r.stderr
        );
    }
    let r = lupa(&["bench", "Towers", "1", "1", "--jit-thread", "sometimes"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("neither on nor off"), "{}", r.stderr);
}

/// `bench` with two iterations or more reports the warm-up: the first
/// iteration against the median of the last half.
#[test]
fn bench_reports_the_warm_up() {
    let r = lupa(&["bench", "Towers", "4"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = line_with(&r.stdout, "Towers: warm-up: first iteration ");
    assert!(
        line.contains("us (median of the last 2), first/steady ") && line.ends_with('x'),
        "{line}"
    );
    let r = lupa(&["bench", "Towers", "1"]);
    assert!(!r.stdout.contains("warm-up"), "{}", r.stdout);
}

/// `--jit-stats` names the frames native code left to the interpreter and the
/// states of the compiled code's inline caches: a site that saw three
/// receiver classes is polymorphic, one that saw a single class monomorphic.
#[test]
fn jit_stats_report_deoptimisations_and_inline_cache_states() {
    if !jit_installed() {
        return;
    }
    let dir = classes(&[(
        "Poly.som",
        "Poly = ( run = ( 1 to: 3 do: [ :k | #(1 'a' 2.5) do: [ :x | x printString ] ]. self mono. self mono ) mono = ( ^3 printString ) )\n",
    )]);
    let r = lupa_in(
        dir.path(),
        &["--jit", "always", "--jit-stats", "-cp", ".", "Poly"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = |prefix: &str| -> String { line_with(&r.stderr, prefix).to_string() };
    let deopt = line_with(
        &r.stderr,
        " frames left to the interpreter (deoptimisations)",
    );
    // `jit: T frames left ... (deoptimisations): N1 at ...; N2 at ...`: the
    // reasons add up to the total.
    let first = |s: &str| -> u64 {
        s.split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{deopt}"))
    };
    let total = first(deopt.trim_start_matches("jit: "));
    let by_reason: u64 = deopt
        .split_once("(deoptimisations): ")
        .map_or(0, |(_, reasons)| reasons.split("; ").map(first).sum());
    assert_eq!(total, by_reason, "{deopt}");
    let caches = line("jit: inline caches of compiled code: ");
    let count = |what: &str| -> u64 {
        let at = caches
            .find(what)
            .unwrap_or_else(|| panic!("{what} in {caches}"));
        caches[..at]
            .split(|c: char| !c.is_ascii_digit())
            .rfind(|w| !w.is_empty())
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{caches}"))
    };
    assert!(count(" polymorphic") >= 1, "{caches}");
    assert!(count(" monomorphic") >= 1, "{caches}");
}

/// Native code's size against its bytecode (issue 24's "Small" bar, a few
/// times: ARCHITECTURE.md, "Code size"), as `--jit-stats` reports it on
/// Richards and CD compiled where they get hot on the VM thread
/// (deterministic). Richards 4.5x when measured: 4.7x before the eighth
/// step (one constant per tail jump, counters incremented in memory), 5.0x
/// before the seventh step (the context in the pinned register), 5.4x before the sixth
/// step (a site's slow paths laid out after it, the context's biased
/// pointer, the poll's count), 5.5x before the runtime table, 6.1x before the short branches,
/// 6.2x before the checks were made branches, 8.3x before the shared entry
/// stubs and tails. CD (its inline Double paths) 4.9x when measured
/// (4.87x), 5.2x before the eighth step, 5.4x before the seventh, 6.1x
/// before the sixth (the bound, 4.95, is the bar: a ratio `--jit-stats`
/// prints as 5.0x fails). A change that makes the code larger again fails
/// here. The shared stubs are counted in the code zone's use.
#[test]
fn native_code_stays_a_few_times_its_bytecode() {
    if !jit_installed() {
        return;
    }
    for (args, bound) in [(["Richards", "1", "20"], 4.6), (["CD", "10", "10"], 4.95)] {
        let mut argv = vec!["bench"];
        argv.extend(args);
        argv.extend(["--jit-thread", "off", "--jit-stats"]);
        let r = lupa(&argv);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let line = line_with(&r.stderr, " bytes of native code for ");
        let ratio: f64 = line
            .rsplit_once('(')
            .and_then(|(_, x)| x.strip_suffix("x)"))
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(ratio <= bound, "{args:?}: {line}");
        assert!(
            r.stderr.contains(" of them the shared entry stubs)"),
            "{}",
            r.stderr
        );
    }
}

/// Compteur counts every send, compiled or not: the counts of a program
/// are the same with the JIT off, on at a low threshold, and always.
#[test]
fn send_counts_are_exact_with_compiled_code() {
    let dir = classes(&[(
        "Fib.som",
        "Fib = ( fib: n = ( n < 2 ifTrue: [ ^n ]. ^(self fib: n - 1) + (self fib: n - 2) )\n\
         run = ( | s | s := 0. 1 to: 20 do: [ :i | s := s + (self fib: 12) ]. ^s ) )",
    )]);
    let mut outputs = vec![];
    for (mode, thread) in [("off", "on"), ("on", "on"), ("on", "off"), ("always", "on")] {
        let r = lupa_in(
            dir.path(),
            &[
                "count",
                "-cp",
                ".",
                "--jit",
                mode,
                "--jit-thread",
                thread,
                "--jit-threshold",
                "10",
                "--format",
                "ranking",
                "Fib",
            ],
        );
        assert_eq!(r.code, 0, "{mode}: {}", r.stderr);
        outputs.push(r.stdout);
    }
    for other in &outputs[1..] {
        assert_eq!(&outputs[0], other);
    }
    // And the VM's own send counter, which compiled code adds to (native
    // code runs here: nothing observes per send), with code compiled on the
    // VM thread or installed whenever the compiler thread has it ready.
    let sends = |mode: &str, thread: &str| {
        let r = lupa_in(
            dir.path(),
            &[
                "-cp",
                ".",
                "--jit",
                mode,
                "--jit-thread",
                thread,
                "--jit-threshold",
                "10",
                "--gc-stats",
                "Fib",
            ],
        );
        r.stderr
            .lines()
            .find(|l| l.starts_with("sends:"))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("{mode}: no sends line: {}", r.stderr))
    };
    let off = sends("off", "on");
    assert_eq!(off, sends("always", "on"));
    assert_eq!(off, sends("on", "off"));
    assert_eq!(off, sends("on", "on"));
}

#[test]
fn stack_overflow_in_compiled_code_is_an_error() {
    let dir = classes(&[(
        "Deep.som",
        "Deep = ( down: n = ( ^(self down: n + 1) + 1 ) run = ( ^self down: 0 ) )",
    )]);
    for mode in ["off", "always"] {
        let r = lupa_in(dir.path(), &["-cp", ".", "--jit", mode, "Deep"]);
        assert_ne!(r.code, 0, "{mode}");
        assert!(
            r.stderr.to_lowercase().contains("stack"),
            "{mode}: {}",
            r.stderr
        );
    }
}

#[test]
fn bad_jit_flags_are_usage_errors() {
    let r = lupa(&["bench", "Towers", "1", "1", "--jit", "sometimes"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("off, on, always"), "{}", r.stderr);
}

#[test]
fn som_testsuite_passes_with_everything_compiled() {
    crate::suites::assert_som_testsuite_passes(&["--jit", "always"]);
}

/// `--perf-map` names every native function in `/tmp/perf-PID.map`, inside
/// the code zone; `perf record` + `perf report` then name Smalltalk methods
/// (where perf is installed and perf events are allowed; skipped otherwise).
#[test]
fn perf_map_names_native_functions() {
    if !jit_installed() {
        return;
    }
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_lupa"))
        .args(["bench", "Towers", "1", "2", "--perf-map", "--jit", "always"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn lupa");
    let pid = child.id();
    let out = child.wait_with_output().expect("lupa runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = format!("/tmp/perf-{pid}.map");
    let map = std::fs::read_to_string(&path).expect("the perf map");
    let _ = std::fs::remove_file(&path);
    let mut names = 0;
    for line in map.lines() {
        let mut parts = line.splitn(3, ' ');
        let start = u64::from_str_radix(parts.next().unwrap_or(""), 16);
        let len = u64::from_str_radix(parts.next().unwrap_or(""), 16);
        let name = parts.next().unwrap_or("");
        assert!(
            start.is_ok() && len.is_ok_and(|l| l > 0),
            "bad line {line:?}"
        );
        assert!(!name.is_empty(), "no name: {line:?}");
        names += usize::from(name.contains(">>"));
    }
    assert!(names > 10, "{map}");
    assert!(map.contains("TowersBenchmark>>move:disksFrom:to:"), "{map}");
    assert!(
        map.contains("<entry stub: method>"),
        "the shared stubs: {map}"
    );

    // perf itself, where it may record this process.
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("perf.data");
    let recorded = std::process::Command::new("perf")
        .arg("record")
        .arg("-o")
        .arg(&data)
        .args(["-F", "2000", "--"])
        .arg(env!("CARGO_BIN_EXE_lupa"))
        .args([
            "bench",
            "Towers",
            "3",
            "20",
            "--perf-map",
            "--jit",
            "always",
        ])
        .output();
    if !recorded.is_ok_and(|r| r.status.success()) {
        eprintln!(
            "note: perf record is not available here (not installed or perf events not allowed); skipping"
        );
        return;
    }
    let report = std::process::Command::new("perf")
        .arg("report")
        .arg("-i")
        .arg(&data)
        .args(["--stdio", "--sort", "sym"])
        .output()
        .expect("perf report");
    let text = String::from_utf8_lossy(&report.stdout);
    // The recorded lupa's perf map is left in /tmp by the run: its pid is
    // the samples'.
    let pids = std::process::Command::new("perf")
        .arg("script")
        .arg("-i")
        .arg(&data)
        .args(["-F", "pid"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if let Some(pid) = pids.split_whitespace().find_map(|w| w.parse::<u32>().ok()) {
        let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    }
    assert!(
        text.contains("TowersBenchmark>>"),
        "perf report names no Smalltalk method:\n{text}"
    );
}

#[test]
fn code_zone_constituents_describe_native_functions() {
    // `VMProfiler codeZoneConstituents` (Cog's code-zone constituents): a
    // hot method is in it, its pc map inside its address range.
    let dir = classes(&[(
        "Zone.som",
        "Zone = (
            fib: n = ( n < 2 ifTrue: [ ^ n ]. ^ (self fib: n - 1) + (self fib: n - 2) )
            run = (
                | zone fib |
                self fib: 15.
                zone := VMProfiler codeZoneConstituents.
                fib := zone detect: [ :f | (f at: 1) = 'Zone>>fib:' ] ifNone: [ nil ].
                fib isNil ifTrue: [ ^ 'absent' println ].
                'present' println.
                (zone detect: [ :f | (f at: 1) = '<entry stub: method>' ] ifNone: [ nil ]) notNil println.
                (fib at: 3) printString println.
                ((fib at: 4) length / 2) printString println.
                (((fib at: 4) at: 1) >= (fib at: 2)) println.
                (((fib at: 4) at: (fib at: 4) length - 1) < ((fib at: 2) + (fib at: 3))) println
            )
        )",
    )]);
    let cp = dir.path().to_str().expect("utf-8 path");
    let off = lupa_in(dir.path(), &["-cp", cp, "--jit", "off", "Zone"]);
    assert_eq!(off.code, 0, "{}", off.stderr);
    assert_eq!(off.stdout.trim(), "absent", "no JIT, no zone");
    if !jit_installed() {
        return;
    }
    let r = lupa_in(dir.path(), &["-cp", cp, "--jit", "always", "Zone"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.first(), Some(&"present"), "{}", r.stdout);
    assert_eq!(
        lines.get(1),
        Some(&"true"),
        "the shared stubs: {}",
        r.stdout
    );
    let size: u64 = lines[2].parse().expect("a size");
    let mapped: u64 = lines[3].parse().expect("a count");
    assert!(size > 0 && mapped > 5, "{}", r.stdout);
    assert_eq!(&lines[4..], ["true", "true"], "{}", r.stdout);
}

#[test]
fn sampled_profiles_split_native_and_interpreted_code() {
    // The VMProfiler paper's figure 7: with the JIT, time in native code by
    // compiled method and bytecode range, apart from interpreted code and
    // the runtime (the JIT's own compilation a VM state of it); the JSON
    // report carries the split and the code zone.
    if !jit_installed() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("towers.json");
    let json_arg = json.to_str().expect("utf-8 path");
    let r = lupa(&[
        "profile", "--jit", "always", "--format", "json", "-o", json_arg, "--bench", "Towers", "2",
        "40",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the report")).expect("JSON");
    let sampling = &doc["sampling"];
    let native = sampling["native_value"].as_u64().expect("native_value");
    let interpreted = sampling["interpreted_value"]
        .as_u64()
        .expect("interpreted_value");
    assert!(native > 0, "{sampling}");
    assert!(native > interpreted, "everything is compiled: {sampling}");
    let zone = sampling["code_zone"].as_array().expect("code_zone");
    let towers = zone
        .iter()
        .find(|f| f["name"] == "TowersBenchmark>>move:disksFrom:to:")
        .unwrap_or_else(|| panic!("no Towers function in {zone:?}"));
    let start = towers["start"].as_u64().expect("start");
    let end = start + towers["size"].as_u64().expect("size");
    let map = towers["pc_map"].as_array().expect("pc_map");
    assert!(map.len() > 10, "{towers}");
    for pair in map {
        let mcpc = pair[0].as_u64().expect("mcpc");
        assert!(
            (start..end).contains(&mcpc),
            "{pair} outside {start:#x}..{end:#x}"
        );
    }

    let r = lupa(&["profile", "--jit", "always", "--bench", "Towers", "2", "40"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = &r.stdout;
    let native_at = text
        .find("Native code (JIT-compiled): ")
        .unwrap_or_else(|| panic!("no native section:\n{text}"));
    let interpreted_at = text
        .find("Interpreted code: ")
        .expect("an interpreted section");
    let runtime_at = text.find("VM runtime: ").expect("a runtime section");
    assert!(
        native_at < interpreted_at && interpreted_at < runtime_at,
        "{text}"
    );
    assert!(
        text[native_at..interpreted_at].contains("TowersBenchmark>>"),
        "{text}"
    );
    assert!(text.contains("  jit compile "), "{text}");
    assert!(text.contains("  code-zone eviction "), "{text}");
}

/// Double arithmetic runs inline in native code (immediate Doubles decoded
/// and encoded in machine code): every operator on a table of operands at
/// the edges of the immediate encoding (zero, -0.0, the smallest and
/// largest immediate exponents, results that underflow, overflow or need a
/// box, SmallInteger and boxed arguments) prints what the interpreter prints.
#[test]
fn double_arithmetic_compiled_is_the_interpreters() {
    let dir = classes(&[(
        "Doubles.som",
        "Doubles = (
            run = (
                | xs |
                xs := Array new: 14.
                xs at: 1 put: 0.0. xs at: 2 put: 0.0 * -1.0. xs at: 3 put: 1.5.
                xs at: 4 put: -2.25. xs at: 5 put: 1.0e-38. xs at: 6 put: 1.2e-38.
                xs at: 7 put: 3.0e38. xs at: 8 put: 1.0e300. xs at: 9 put: 0.1.
                xs at: 10 put: 3. xs at: 11 put: -7. xs at: 12 put: 1.0e-310.
                xs at: 13 put: 1.0 / 0.0. xs at: 14 put: 1073741823.
                xs do: [ :a | xs do: [ :b | self print: a with: b ] ]
            )
            print: a with: b = (
                | line |
                line := a printString , ' ' , b printString , ':'.
                line := line , ' ' , (self show: a + b) , ' ' , (self show: a - b) , ' ' , (self show: a * b).
                line := line , ' ' , (a < b) printString , ' ' , (a > b) printString , ' ' , (a <= b) printString.
                line := line , ' ' , (a >= b) printString , ' ' , (a = b) printString , ' ' , (a ~= b) printString.
                line println
            )
            show: d = ( ^d printString , '/' , d class name , '/' , (1.0 / d) printString )
        )\n",
    )]);
    let interpreted = same_output_compiled(dir.path(), "Doubles");
    assert_eq!(interpreted.lines().count(), 14 * 14, "{interpreted}");
}

/// Run class `name` of `dir` interpreted, with everything compiled at its
/// first call and compiled once warm: all must succeed and print the same;
/// answers what they printed.
fn same_output_compiled(dir: &std::path::Path, name: &str) -> String {
    let run = |jit: &[&str]| {
        let r = lupa_in(dir, &[jit, &["-cp", ".", name]].concat());
        assert_eq!(r.code, 0, "{jit:?}: {}", r.stderr);
        r.stdout
    };
    let interpreted = run(&["--jit", "off"]);
    assert_eq!(run(&["--jit", "always"]), interpreted);
    // Compiled once warm: with the interpreter's type feedback (the Doubles
    // and Strings its special sends met), the inline Double and String
    // paths.
    let warm = ["--jit", "on", "--jit-threshold", "2", "--jit-thread", "off"];
    assert_eq!(run(&warm), interpreted);
    interpreted
}

/// `=` and `~=` on a String receiver run by a heap-reading runtime call from
/// native code: Strings, Symbols and other arguments compare as the
/// interpreter compares them.
#[test]
fn string_equality_compiled_is_the_interpreters() {
    let dir = classes(&[(
        "Strings.som",
        "Strings = (
            run = (
                | xs |
                xs := Array new: 7.
                xs at: 1 put: 'abc'. xs at: 2 put: 'ab' , 'c'. xs at: 3 put: #abc.
                xs at: 4 put: ''. xs at: 5 put: 'abd'. xs at: 6 put: 3. xs at: 7 put: nil.
                xs do: [ :a | xs do: [ :b |
                    ((a = b) printString , ' ' , (a ~= b) printString) println ] ]
            )
        )\n",
    )]);
    let interpreted = same_output_compiled(dir.path(), "Strings");
    assert_eq!(interpreted.lines().count(), 49, "{interpreted}");
    assert_eq!(
        interpreted.lines().filter(|l| *l == "true false").count(),
        13,
        "{interpreted}"
    );
}

/// Sends to leaf primitives (`charAt:`, `concatenate:`, `bitXor:`, `sqrt`,
/// `class`, `new`, ...) at send sites compiled after their inline caches
/// saw them run natively by one runtime call: each one at its edges (a
/// failing primitive runs its fallback code, a wrong argument's error,
/// indices out of bounds, a class that may not be instantiated, an
/// uncaught error's backtrace) prints what the interpreter prints, and
/// counts the same sends; the allocating ones under GC stress too.
#[test]
fn leaf_primitives_compiled_are_the_interpreters() {
    let dir = classes(&[(
        "Leaves.som",
        "Leaves = (
            charAt: s at: i = ( ^s charAt: i )
            concat: s with: t = ( ^s concatenate: t )
            sub: s from: a to: b = ( ^s primSubstringFrom: a to: b )
            xor: a with: b = ( ^a bitXor: b )
            shift: a by: b = ( ^a << b )
            rem: a by: b = ( ^a rem: b )
            sqrt: a = ( ^a sqrt )
            classOf: a = ( ^a class )
            make: c = ( ^c new )
            array: n = ( ^Array new: n )
            digits: s = ( ^s isDigits )
            show: block = (
                ([ block value printString ] on: Error do: [ :e | 'error: ' , e messageText ]) println
            )
            run = (
                \"Warm up: each method compiled after its sites ran once.\"
                1 to: 4 do: [ :i |
                    self show: [ self charAt: 'hello' at: i ].
                    self show: [ self concat: 'ab' with: 'cd' ].
                    self show: [ self sub: 'hello' from: 2 to: 4 ].
                    self show: [ self xor: 12 with: i ].
                    self show: [ self shift: 1 by: i ].
                    self show: [ self rem: 17 by: i ].
                    self show: [ self sqrt: 16 ].
                    self show: [ self classOf: 3 ].
                    self show: [ self make: Object ].
                    self show: [ self array: i ].
                    self show: [ self digits: '123' ] ].
                \"The edges, at the specialised sites.\"
                self show: [ self charAt: 'hello' at: 0 ].
                self show: [ self charAt: 'hello' at: 6 ].
                self show: [ self charAt: 'hello' at: 'x' ].
                self show: [ self charAt: 'hello' at: nil ].
                self show: [ self charAt: #symbol at: 2 ].
                self show: [ self charAt: 3 at: 1 ].
                self show: [ self concat: 'ab' with: 3 ].
                self show: [ self concat: 'ab' with: #cd ].
                self show: [ self sub: 'hello' from: 0 to: 2 ].
                self show: [ self sub: 'hello' from: 4 to: 9 ].
                self show: [ self sub: 'hello' from: 4 to: 3 ].
                self show: [ self xor: 12 with: 'x' ].
                self show: [ self xor: 12 with: 1 << 70 ].
                self show: [ self shift: 1 by: 70 ].
                self show: [ self shift: 3 by: -1 ].
                self show: [ self rem: 17 by: 0 ].
                self show: [ self rem: 17 by: 2.5 ].
                self show: [ self sqrt: -4 ].
                self show: [ self sqrt: 2 ].
                self show: [ self classOf: 'x' ].
                self show: [ self classOf: nil ].
                self show: [ self make: Integer ].
                self show: [ self make: Array ].
                self show: [ self array: -1 ].
                self show: [ self array: 'x' ].
                self show: [ self digits: '' ].
                self show: [ self digits: '12a' ].
                \"Uncaught: the backtrace runs through compiled frames.\"
                self charAt: 'hello' at: 7
            )
        )\n",
    )]);
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--gc-stats", "-cp", ".", "Leaves"]);
        let r = lupa_in(dir.path(), &all);
        assert_ne!(r.code, 0, "{args:?}: the last error is uncaught");
        // The backtrace and the send counts, not what the statistics say
        // about times, the process or the code zone.
        let stderr: Vec<String> = r
            .stderr
            .lines()
            .filter(|l| {
                !["time", " ms", "jit:", "code zone", "page faults"]
                    .iter()
                    .any(|w| l.contains(w))
            })
            .map(str::to_owned)
            .collect();
        (r.code, r.stdout, stderr)
    };
    let interpreted = run(&["--jit", "off"]);
    assert_eq!(interpreted.1.lines().count(), 44 + 27, "{}", interpreted.1);
    assert!(
        interpreted.2.iter().any(|l| l.starts_with("sends:")),
        "{:?}",
        interpreted.2
    );
    let compiled = run(&["--jit", "on", "--jit-threshold", "2"]);
    assert_eq!(compiled, interpreted);
    let stressed = run(&[
        "--jit",
        "on",
        "--jit-threshold",
        "2",
        "--gc-stress",
        "--verify-heap",
    ]);
    assert_eq!(stressed.0, interpreted.0);
    assert_eq!(stressed.1, interpreted.1);
}

/// Special sends whose inline path does not apply (`at:` of a user's
/// class, a user's `=` and `isNil`, `<` of a boxed Double, `at:put:` out of
/// bounds) at sites compiled after their inline caches saw them: what the
/// interpreter prints and the same number of sends; `at:put:` answers its
/// receiver inline too.
#[test]
fn special_sends_of_other_classes_compiled_are_the_interpreters() {
    let dir = classes(&[(
        "Specials.som",
        "Specials = (
            | items |
            at: i = ( ^items at: i )
            at: i put: v = ( items at: i put: v )
            = other = ( ^(other isKindOf: Specials) and: [ (other at: 1) = (self at: 1) ] )
            isNil = ( ^(items at: 1) = 0 )
            init = ( items := Array new: 3 withAll: 0 )
            try: block = ( ^[ block value printString ] on: Error do: [ :e | 'error: ' , e messageText ] )
            show: a with: b = (
                ((self try: [ a at: 1 ]) , ' ' , (self try: [ a = b ]) , ' ' , (self try: [ a isNil ])
                    , ' ' , (self try: [ a < b ]) , ' ' , (self try: [ a at: 2 put: 5 ])) println
            )
            run = (
                | s t big |
                s := Specials new init. t := Specials new init.
                big := 1.0e300.
                \"Each site's cache sees a Specials, an Array and a boxed Double.\"
                1 to: 4 do: [ :i |
                    s at: 1 put: i.
                    self show: s with: t.
                    self show: (Array new: 3 withAll: i) with: t.
                    self show: big with: big * 2.0 ].
                self show: s with: s.
                self show: (Array new: 1) with: 3.
                self show: big with: 1.0e301.
                self show: big with: 'x'.
                self show: 3 with: big.
                (s at: 1 put: 7) == s
                    ifFalse: [ 'at:put: answered something else' println ].
                ((Array new: 2) at: 1 put: 7) printString println
            )
        )\n",
    )]);
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--gc-stats", "-cp", ".", "Specials"]);
        let r = lupa_in(dir.path(), &all);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let sends = r
            .stderr
            .lines()
            .find(|l| l.starts_with("sends:"))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("{args:?}: no sends line: {}", r.stderr));
        (r.stdout, sends)
    };
    let interpreted = run(&["--jit", "off"]);
    assert_eq!(
        interpreted.0.lines().count(),
        12 + 5 + 1,
        "{}",
        interpreted.0
    );
    assert_eq!(run(&["--jit", "on", "--jit-threshold", "2"]), interpreted);
    assert_eq!(run(&["--jit", "always"]), interpreted);
}

/// A program that calls methods of every shape a method watch records
/// (trivial getter, setter and literal, a frame changing its receiver's
/// field, a leaf primitive's method, a non-local return to a watched home
/// and one unwinding a watched frame, an exception unwinding one, a
/// `<metaLevel>` method whose own calls are not recorded, a process switch
/// inside watched frames), warmed up before `System>>watchMethods:options:`
/// starts the watch (so that compiled send sites specialised on them
/// exist), then, under it, a second watch with other options (nested) while
/// a receiver of a subclass misses the probes of the sites compiled for
/// its superclass, and prints every field of every row of both.
const WATCHED_PROGRAM: &str = "WatchedJit = (
    | field count |
    field = ( ^field )
    field: x = ( field := x )
    same = ( ^#(1 2) )
    bump = ( count := (count ifNil: [ 0 ]) + 1. ^count )
    twice: x = ( ^x + x )
    xor: i = ( ^i bitXor: 5 )
    find: n in: c = ( c do: [ :e | e = n ifTrue: [ ^e ] ]. ^nil )
    through: aBlock = ( aBlock value. ^#notReached )
    escape = ( self through: [ ^#out ]. ^#in )
    fail = ( ^self error: 'on purpose' )
    failing = ( ^[ self fail ] on: Error do: [ :e | e return: 5 ] )
    meta = ( <metaLevel> ^self twice: 1 )
    yielder: x = ( Processor yield. ^x )
    work: i = (
        self field: i. self field. self same. self bump.
        self twice: i. self twice: i * 0.5. self xor: i.
        self find: i in: #(1 2 3). self escape. self failing. self meta.
        ^self field
    )
    phase: n with: other = ( 1 to: n do: [ :i | (i odd ifTrue: [ self ] ifFalse: [ other ]) work: i ] )
    switching = (
        | done |
        done := false.
        [ self yielder: 1. done := true ] fork.
        self yielder: 2.
        [ done ] whileFalse: [ Processor yield ]
    )
    show: x = (
        | s |
        (x isKindOf: Array) ifFalse: [ ^x printString ].
        s := '('.
        x do: [ :e | s := s , ' ' , (self show: e) ].
        ^s , ' )'
    )
    run = (
        | other names w rows names2 w2 rows2 |
        other := WatchedJit new.
        \"Warm up: compiled by now (--jit always, or a low threshold).\"
        self phase: 60 with: other.
        names := #(#field #field: #same #bump #twice: #xor: #find:in: #through: #escape #fail
            #failing #meta #yielder: #work:).
        w := system
            watchMethods: ((names collect: [ :s | WatchedJit >> s ]) copyWith: Integer >> #bitXor:)
            options: 63.
        system watch: w tag: 1.
        self phase: 20 with: other.
        system watch: w tag: 2.
        self switching.
        names2 := #(#twice: #field #work:).
        w2 := system watchMethods: (names2 collect: [ :s | WatchedJit >> s ]) options: 13.
        self phase: 20 with: WatchedJitSub new.
        rows2 := system stopWatch: w2.
        self phase: 20 with: other.
        rows := system stopWatch: w.
        \"Unwatched again: native code's fast calls come back.\"
        self phase: 20 with: other.
        names := names copyWith: #bitXor:.
        rows doWithIndex: [ :row :k | ((names at: k) , ' ' , (self show: row)) println ].
        rows2 doWithIndex: [ :row :k | ('nested ' , (names2 at: k) , ' ' , (self show: row)) println ]
    )
)
";

/// A subclass of `WatchedJit` that inherits every method: its instances
/// run the methods the sites compiled for `WatchedJit` specialised on, but
/// miss their probes (another class).
const WATCHED_SUBCLASS: &str = "WatchedJitSub = WatchedJit ( )
";

/// `WatchedJit`'s methods watched from the start, so that they are compiled
/// under a watch (their direct entries and returns look at the watches'
/// cells in native code): calls types (arguments and answers) record, then
/// coverage's (receivers and tags), with many calls of the same receiver
/// and classes, then a changed class, a changed receiver, a changed tag, a
/// second watch naming the same methods started and stopped inside, a
/// process switch, non-local returns, an exception and meta-level calls; and
/// after the watches stop, a new one.
const WATCHED_EARLY: &str = "WatchedJitEarly = WatchedJit (
    run = (
        | other names methods w rows |
        other := WatchedJitSub new.
        names := #(#field #field: #same #bump #twice: #xor: #find:in: #through: #escape #fail
            #failing #meta #yielder: #work:).
        methods := names collect: [ :s | WatchedJit >> s ].
        rows := Array new: 0.
        w := system watchMethods: methods options: 12.
        self phase: 60 with: self.
        self twice: 7 / 2. self xor: 3. self field: 'x'. self field.
        self phase: 20 with: self.
        self phase: 20 with: other.
        self switching.
        rows := rows , (self rows: (system stopWatch: w) of: names prefix: 'types ').
        w := system watchMethods: methods options: 3.
        system watch: w tag: 1.
        self phase: 60 with: self.
        system watch: w tag: 2.
        self phase: 20 with: self.
        self phase: 20 with: other.
        rows := rows , (self watchInside: methods names: names).
        system watch: w tag: 1.
        self phase: 20 with: self.
        rows := rows , (self rows: (system stopWatch: w) of: names prefix: 'coverage ').
        self phase: 20 with: other.
        w := system watchMethods: methods options: 15.
        system watch: w tag: 3.
        self phase: 20 with: other.
        self switching.
        rows := rows , (self rows: (system stopWatch: w) of: names prefix: 'again ').
        rows do: [ :r | r println ]
    )
    watchInside: methods names: names = (
        | w |
        w := system watchMethods: methods options: 12.
        self phase: 10 with: self.
        self twice: 1.5.
        ^self rows: (system stopWatch: w) of: names prefix: 'inside '
    )
    rows: rows of: names prefix: prefix = (
        | out |
        out := Array new: 0.
        rows doWithIndex: [ :row :k | out := out copyWith: prefix , (names at: k) , ' ' , (self show: row) ].
        ^out
    )
)
";

/// Method watches record native code's calls exactly: the same program,
/// its watch started after its code was compiled (so that send sites
/// specialised on watched methods, as direct calls, inline trivial methods
/// and leaf primitives, exist), records the same rows (every field) with
/// the JIT off, on at a low threshold (compiled on the VM thread, or on the
/// compiler thread), and always. Under the watch, native code records the
/// calls it makes at a direct entry (the runtime records the call and
/// pushes the frame), returns through the runtime (which records a watched
/// frame's answer and pops the frame as the inline return does), sends
/// trivial methods through the runtime, and takes the whole send where a
/// probe misses (the subclass's receivers).
#[test]
fn method_watches_record_compiled_code_exactly() {
    let dir = classes(&[
        ("WatchedJit.som", WATCHED_PROGRAM),
        ("WatchedJitSub.som", WATCHED_SUBCLASS),
    ]);
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-cp", ".", "WatchedJit"]);
        let r = lupa_in(dir.path(), &all);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r.stdout
    };
    let interpreted = run(&["--jit", "off"]);
    let rows: Vec<&str> = interpreted.lines().collect();
    assert_eq!(rows.len(), 18, "{interpreted}");
    assert_eq!(run(&["--jit", "always"]), interpreted);
    assert_eq!(
        run(&["--jit", "on", "--jit-threshold", "3", "--jit-thread", "off"]),
        interpreted
    );
    assert_eq!(run(&["--jit", "on", "--jit-threshold", "3"]), interpreted);
}

/// A program for line coverage in native code (`lupa coverage --run`): loops
/// (`to:do:`, `whileTrue:`), an inlined `ifTrue:ifFalse:` whose skipped arm
/// is followed by a statement (and `ifFalse:` twice, issue 27's case), a
/// non-local return from a block, an exception unwinding several frames, a
/// trivial getter, a process switch, and a `<metaLevel>` method (a tool's
/// own work: not counted), each run often enough to be compiled at a low
/// threshold.
const LINES_PROGRAM: &str = "LineCov = (
    | x done |
    x = ( ^x )
    pick: n = (
        n > 0
            ifTrue: [ x := 1 ]
            ifFalse: [ x := 2 ].
        n > 100 ifTrue: [
            x := 3 ].
        ^x
    )
    both: a and: b = (
        a ifFalse: [ x := 0 ].
        b ifFalse: [ x := 1 ].
        ^true
    )
    loop: n = ( | s i |
        s := 0.
        1 to: n do: [ :k |
            s := s + (self pick: k - 2) ].
        i := 0.
        [ i < n ] whileTrue: [
            i := i + 1.
            s := s + self x ].
        ^s
    )
    find: n in: c = (
        c do: [ :e |
            e = n ifTrue: [ ^e ] ].
        ^nil
    )
    fail = ( ^self error: 'on purpose' )
    deep: n = (
        n = 0 ifTrue: [ ^self fail ].
        ^self deep: n - 1
    )
    failing = ( ^[ self deep: 4 ] on: Error do: [ :e | e return: 5 ] )
    meta = ( <metaLevel> ^self loop: 3 )
    yielder: n = ( Processor yield. ^n )
    switching = (
        done := false.
        [ self yielder: 1. done := true ] fork.
        self yielder: 2.
        [ done ] whileFalse: [ Processor yield ]
    )
    run = (
        1 to: 30 do: [ :n |
            self loop: n \\\\ 7.
            self both: n odd and: n \\\\ 3 = 0.
            self find: n \\\\ 4 in: #(1 2 3).
            self failing.
            self meta.
            n \\\\ 10 = 0 ifTrue: [ self switching ] ].
        self x println
    )
)
";

/// Line coverage counts native code exactly (issue 27's cost bar: native
/// code counts lines itself): `lupa coverage` of a program built for it
/// gives byte-identical JSON and LCOV reports with the JIT off, always, and
/// on at a low threshold (compiled on the VM thread or on the compiler
/// thread), and counts the lines it should (a statement after a skipped
/// arm, not the meta level's work).
#[test]
fn line_coverage_counts_compiled_code_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let package = dir.path().join("LineCov");
    std::fs::create_dir(&package).expect("package dir");
    std::fs::write(package.join("LineCov.som"), LINES_PROGRAM).expect("class file");
    let report = |format: &str, args: &[&str]| {
        let mut all = vec![
            "coverage",
            "--package",
            "LineCov",
            "--format",
            format,
            "-o",
            "-",
            "-cp",
            "LineCov",
        ];
        all.extend_from_slice(args);
        all.extend(["--run", "LineCov"]);
        let r = lupa_in(dir.path(), &all);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr, "1\n", "{args:?}: the program's output");
        r.stdout
    };
    for format in ["json", "lcov"] {
        let interpreted = report(format, &["--jit", "off"]);
        if format == "lcov" {
            // `both:and:`'s second statement and `^true` after arms skipped
            // or not; `meta` (and the `loop:` it runs) not counted; a
            // to:do: body.
            for line in ["DA:14,30", "DA:15,30", "DA:38,0", "DA:22,117"] {
                assert!(
                    interpreted.lines().any(|l| l == line),
                    "{line}: {interpreted}"
                );
            }
        }
        assert_eq!(
            report(format, &["--jit", "always"]),
            interpreted,
            "{format}"
        );
        assert_eq!(
            report(
                format,
                &["--jit", "on", "--jit-threshold", "3", "--jit-thread", "off"]
            ),
            interpreted,
            "{format}"
        );
        assert_eq!(
            report(format, &["--jit", "on", "--jit-threshold", "3"]),
            interpreted,
            "{format}"
        );
    }
}

/// Whole-Kernel line coverage over the bundled suites whose runs do not
/// depend on time (the Delay, GC, file, observation, watch and VM-door
/// suites do, run to run) is byte-identical with the JIT off, always, and
/// on at a low threshold: every Kernel method's lines, counted by native
/// code under test after test.
#[test]
fn kernel_line_coverage_is_the_same_compiled() {
    if !slow_tests("kernel_line_coverage_is_the_same_compiled") {
        return;
    }
    let suites = [
        "LupaArrayTest",
        "LupaBlockTest",
        "LupaCollectionTest",
        "LupaDictionaryTest",
        "LupaDoubleTest",
        "LupaEnsureTest",
        "LupaExceptionTest",
        "LupaIntegerTest",
        "LupaObjectTest",
        "LupaReflectionTest",
        "LupaSetTest",
        "LupaStreamTest",
        "LupaStringTest",
        "LupaSymbolTest",
        "LupaVectorTest",
        "LupaMetaTest",
        "LupaProcessTest",
    ];
    let report = |jit: &[&str]| {
        let mut all = vec![
            "coverage",
            "--package",
            "Kernel",
            "--format",
            "lcov",
            "-o",
            "-",
        ];
        all.extend_from_slice(jit);
        all.extend_from_slice(&suites);
        let r = lupa(&all);
        assert_eq!(r.code, 0, "{jit:?}: {}", r.stderr);
        r.stdout
    };
    let interpreted = report(&["--jit", "off"]);
    assert!(interpreted.contains("Array>>at:"), "{interpreted}");
    assert_eq!(report(&["--jit", "always"]), interpreted);
    assert_eq!(
        report(&[
            "--jit",
            "on",
            "--jit-threshold",
            "50",
            "--jit-thread",
            "off"
        ]),
        interpreted
    );
}

/// Method watches started before the code is compiled (so that it is
/// compiled under them, and its direct entries and returns look at the
/// watches' cells in native code, `obs::watch::WatchCell`) record the same
/// rows with the JIT off, always, and on at a low threshold with and without
/// the compiler thread: repeated calls counted in native code, a changed
/// argument class, receiver or tag, a second watch of the same methods
/// inside, the watches stopped and a new one started.
#[test]
fn method_watches_record_code_compiled_under_them_exactly() {
    let dir = classes(&[
        ("WatchedJit.som", WATCHED_PROGRAM),
        ("WatchedJitSub.som", WATCHED_SUBCLASS),
        ("WatchedJitEarly.som", WATCHED_EARLY),
    ]);
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-cp", ".", "WatchedJitEarly"]);
        let r = lupa_in(dir.path(), &all);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r.stdout
    };
    let interpreted = run(&["--jit", "off"]);
    let rows: Vec<&str> = interpreted.lines().collect();
    assert_eq!(rows.len(), 56, "{interpreted}");
    assert_eq!(run(&["--jit", "always"]), interpreted);
    assert_eq!(
        run(&["--jit", "on", "--jit-threshold", "3", "--jit-thread", "off"]),
        interpreted
    );
    assert_eq!(run(&["--jit", "on", "--jit-threshold", "3"]), interpreted);
}
