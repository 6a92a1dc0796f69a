//! The hostile-program fuzzer (issue 16): generated programs that misuse
//! reflection (`methodAt:put:`, `invokeOn:with:`, `instVarAt:put:`,
//! `literalAt:put:`, `Context` frames, objects as methods), call every kernel
//! primitive with wrong receivers and arguments, and set off allocation,
//! recursion and process bombs; and (issue 26) write into the slots of a
//! closure and its environment, run methods on any receiver through the
//! `perform:inSuperclass:` variants, and compile methods with the pragmas
//! the VM acts on (`<trapShortcut>`, `<unwindProtect>`, `<metaLevel>`...). Each runs in its own `lupa run --verify-heap`
//! with a small heap and a time bound; the run may succeed or end with a
//! Smalltalk error (exit 0 or 1; 70 for a deadlock, the documented fatal
//! error of a program whose processes all wait) but must never panic, die of
//! a signal, fail heap verification, hang or exit with any other status.
//!
//! - Programs run in turn with every method compiled at its first call
//!   (`--jit always`), compiled after 3 calls (native and interpreted frames
//!   mixed) and at the default threshold (mostly interpreted), so that the
//!   JIT's code meets the same hostile programs as the interpreter.
//! - Every program in `fuzz/corpus/` (everything the fuzzer ever found, kept
//!   after the fix) is replayed first, interpreted and all compiled.
//! - Then programs are generated for `LUPA_FUZZ_SECONDS` seconds (default 20
//!   with the slow tests, `CI=true` or `LUPA_SLOW_TESTS=1`, else 0: a local
//!   `cargo test` replays the corpus only; `LUPA_FUZZ_SECONDS=3600` for a
//!   long local run), at most
//!   `LUPA_FUZZ_PROGRAMS` of them, from `LUPA_FUZZ_SEED` (default: the clock;
//!   printed, so a run can be repeated). CI fixes the seed and the number of
//!   programs, so that it runs the same programs every time (never flaky);
//!   the long local runs explore new seeds.
//! - A finding is written to `fuzz/findings/<seed>.som` (with the run's output
//!   in a comment) and fails the test; once fixed, move it to `fuzz/corpus/`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one program may run.
const PROGRAM_TIMEOUT: Duration = Duration::from_secs(20);

/// The options every program runs under: a small heap and stack so that the
/// bombs hit their limits quickly, and heap verification after every GC.
const VM_OPTIONS: &[&str] = &[
    "--verify-heap",
    "--max-heap",
    "48MB",
    "--max-stack-depth",
    "20000",
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The program generator's random numbers: seeded, so a run repeats.
struct Rng(rand::rngs::StdRng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(rand::SeedableRng::seed_from_u64(seed))
    }
    fn next(&mut self) -> u64 {
        rand::Rng::random(&mut self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        rand::Rng::random_range(&mut self.0, 0..n)
    }
    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// A primitive of the kernel: its class (instance side, or `X class`) and
/// selector, from the `= primitive` and `<primitive>` methods of the sources.
struct Primitive {
    class: String,
    selector: String,
    arity: usize,
}

/// Primitives left out of the random sends: a program may legitimately end
/// with any status (`exit:`) or loop forever by restarting a frame of its own
/// (`restart`, `restart:`); the statements below use these with frames that
/// must be refused instead.
const LEGITIMATE_ENDINGS: &[&str] = &["exit:", "restart", "restart:"];

/// Every primitive declared in `smalltalk/Kernel/*.som`, but those above.
fn kernel_primitives() -> Vec<Primitive> {
    let mut out = Vec::new();
    let dir = repo_root().join("smalltalk/Kernel");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some(class) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        let mut side = class.clone();
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("----") {
                side = format!("{class} class");
                continue;
            }
            let pattern = if let Some(p) = t.strip_suffix("= primitive") {
                p
            } else if let Some((p, rest)) = t.split_once("= (")
                && rest.trim_start().starts_with("<primitive>")
            {
                p
            } else {
                continue;
            };
            if let Some((selector, arity)) = selector_of(pattern)
                && !LEGITIMATE_ENDINGS.contains(&selector.as_str())
            {
                out.push(Primitive {
                    class: side.clone(),
                    selector,
                    arity,
                });
            }
        }
    }
    out
}

/// The selector and arity of a method pattern (`at: i put: v`, `+ x`, `size`).
fn selector_of(pattern: &str) -> Option<(String, usize)> {
    let words: Vec<&str> = pattern.split_whitespace().collect();
    let first = *words.first()?;
    if first.ends_with(':') {
        let keys: Vec<&str> = words.iter().step_by(2).copied().collect();
        if keys.iter().all(|k| k.ends_with(':')) && words.len().is_multiple_of(2) {
            return Some((keys.concat(), keys.len()));
        }
        return None;
    }
    if first.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return (words.len() == 1).then(|| (first.to_string(), 0));
    }
    (words.len() == 2).then(|| (first.to_string(), 1))
}

/// Values a hostile program passes around: every shape the heap has, odd
/// integers, classes, methods, frames, processes.
const VALUES: &[&str] = &[
    "nil",
    "true",
    "0",
    "-1",
    "3",
    "255",
    "1073741823",
    "4611686018427387903",
    "-4611686018427387904",
    "(2 raisedTo: 100)",
    "(2 raisedTo: 64) negated",
    "3.5",
    "-0.0",
    "(1.0 / 0.0)",
    "'text'",
    "''",
    "#sym",
    "#at:put:",
    "Object new",
    "(Array new: 3)",
    "(Array new: 0)",
    "#(1 'a' #c 2.5)",
    "(String new: 4)",
    "fuzzPair",
    "F new",
    "[ :x | x ]",
    "[ 42 ]",
    "[ :a :b | a ]",
    "Object",
    "Array",
    "String",
    "F",
    "Object class",
    "(F >> #m0)",
    "(F >> #m1:)",
    "(F >> #m2:with:)",
    "(F >> #getA)",
    "(F >> #setA:)",
    "(Array >> #at:)",
    "(Object >> #==)",
    "(Integer >> #+)",
    "Context currentFrame",
    "(Context senderOf: Context currentFrame)",
    "fuzzFrame",
    "Semaphore new",
    "[ 1 ] newProcess",
    "Processor",
    "system",
    "(WeakArray new: 2)",
    "Ephemeron new",
    "Error new",
    "thisContextLike",
    "fuzzBlock",
    "(fuzzBlock instVarAt: 3)",
    "(fuzzBlock instVarAt: 1)",
];

/// Selectors of `F`, with their arities, for reflection on it (not `run`:
/// installing `run` elsewhere reruns the whole program in every frame).
const F_SELECTORS: &[(&str, usize)] = &[
    ("m0", 0),
    ("m1:", 1),
    ("m2:with:", 2),
    ("getA", 0),
    ("setA:", 1),
    ("rec:", 1),
];

fn value(rng: &mut Rng) -> String {
    rng.pick(VALUES)
        .replace("thisContextLike", "Context currentFrame")
}

/// A keyword/binary/unary send of `selector` with `arity` random arguments.
fn send(rng: &mut Rng, receiver: &str, selector: &str, arity: usize) -> String {
    if arity == 0 {
        return format!("{receiver} {selector}");
    }
    let keys: Vec<&str> = selector.split_inclusive(':').collect();
    if keys.len() == arity && selector.ends_with(':') {
        let parts: Vec<String> = keys
            .iter()
            .map(|k| format!("{k} ({})", value(rng)))
            .collect();
        return format!("{receiver} {}", parts.join(" "));
    }
    format!("{receiver} {selector} ({})", value(rng))
}

/// Pragma lines a hand-written method may carry: those the VM acts on, alone
/// and combined.
const PRAGMAS: &[&str] = &[
    "<trapShortcut>",
    "<trapShortcut> <unwindProtect>",
    "<unwindProtect>",
    "<exceptionHandler>",
    "<metaLevel>",
    "<baseLevel>",
    "<metaLevel> <baseLevel>",
    "<trapShortcut> <baseLevel>",
    "<primitive>",
];

/// Bodies for a hand-written pragma method `p: x` (literal 2 a Symbol or not,
/// of its arity or not, sent first or not).
const PRAGMA_BODIES: &[&str] = &[
    "^x",
    "#off ifFalse: [ ^self m1: x ]. ^x",
    "#off ifFalse: [ ^self m2: x with: x ]. ^x",
    "#off ifFalse: [ ^self m0 ]. ^x",
    "3 ifFalse: [ ^self m1: x ]. ^x",
    "#off ifFalse: [ ^#m1: ]. ^self printString: x",
    "| a b | a := [ x ]. b := nil. ^a value",
    "^[ :y | y ] value: x",
    "^x m0",
    "^super printString",
];

/// One hostile statement.
fn statement(rng: &mut Rng, prims: &[Primitive]) -> String {
    match rng.below(20) {
        0..=4 => {
            // A primitive on a random receiver with random arguments.
            let p = &prims[rng.below(prims.len())];
            let receiver = if rng.below(3) == 0 {
                p.class.replace(" class", "")
            } else {
                format!("({})", value(rng))
            };
            send(rng, &receiver, &p.selector, p.arity)
        }
        5 => {
            // A primitive method invoked directly on anything.
            let p = &prims[rng.below(prims.len())];
            let args: Vec<String> = (0..p.arity).map(|_| value(rng)).collect();
            let holder = if p.class.ends_with(" class") {
                format!("({})", p.class)
            } else {
                p.class.clone()
            };
            format!(
                "({holder} >> #{}) invokeOn: ({}) with: (Array new: {} withAll: ({}))",
                p.selector,
                value(rng),
                args.len(),
                args.first().cloned().unwrap_or_else(|| "nil".into())
            )
        }
        6 => {
            // Install a method (or any object) under another selector, then send it.
            let (sel, _) = F_SELECTORS[rng.below(F_SELECTORS.len())];
            let (target, arity) = F_SELECTORS[rng.below(F_SELECTORS.len())];
            let class = rng.pick(&["Object", "F", "String", "Integer", "Array", "Pair"]);
            let what = if rng.below(4) == 0 {
                value(rng)
            } else {
                format!("(F >> #{sel})")
            };
            let receiver = format!("({})", value(rng));
            let call = send(rng, &receiver, target, arity);
            format!(
                "{class} methodAt: #{target} put: {what}. {call}. {class} removeMethodAt: #{target}"
            )
        }
        7 => {
            let (sel, _) = F_SELECTORS[rng.below(F_SELECTORS.len())];
            format!(
                "(F >> #{sel}) invokeOn: ({}) with: (Array with: ({}) with: ({}))",
                value(rng),
                value(rng),
                value(rng)
            )
        }
        8 => format!(
            "({}) instVarAt: ({}) put: ({})",
            value(rng),
            value(rng),
            value(rng)
        ),
        9 => {
            let (sel, _) = F_SELECTORS[rng.below(F_SELECTORS.len())];
            format!(
                "(F >> #{sel}) literalAt: {} put: ({}). F new {}",
                1 + rng.below(4),
                value(rng),
                if sel.ends_with(':') { "m0" } else { sel }
            )
        }
        10 => {
            let prim = rng.pick(&[
                "Context restart: f",
                "Context unwindTo: f return: 7",
                "Context tempOf: f at: 1 put: 3",
                "Context receiverOf: f",
                "Context argumentOf: f at: 2",
                "Context methodOf: f",
                "Context backtraceFrom: f",
                "Context senderOf: f",
            ]);
            let frame = rng.pick(&[
                "fuzzFrame",
                "Context currentFrame",
                "(Context currentFrame + 1)",
                "3",
                "((2 raisedTo: 40) + 1)",
                "-5",
                "'f'",
            ]);
            // Restarting the frame that is running is a loop by design.
            let frame = if prim.contains("restart") && frame == "Context currentFrame" {
                "fuzzFrame"
            } else {
                frame
            };
            format!("| f | f := {frame}. {prim}")
        }
        11 => {
            // Allocation bombs, each far past the 48 MB heap.
            rng.pick(&[
                "Array new: 100000000",
                "String new: 4611686018427387903",
                "(2 raisedTo: 10000000000)",
                "1 << 100000000000",
                "(2 raisedTo: 4000000) printString",
                "| a | a := Array new: 1. 1 to: 100000 do: [ :i | a := Array new: 1000 withAll: a ]",
                "| s | s := 'x'. 1 to: 40 do: [ :i | s := s , s ]",
                "(Array new: 50000000) size",
            ])
            .to_string()
        }
        12 => rng
            .pick(&[
                "self rec: 0",
                "| s | s := Semaphore new. 1 to: 100000 do: [ :i | [ s wait ] fork ]",
                "1 to: 300 do: [ :i | [ Processor yield. fuzzFrame := Context currentFrame ] fork ]. Processor yield",
                "[ fuzzFrame := Context currentFrame. Processor yield ] fork. Processor yield",
                "[ :x | x value: x ] value: [ :x | x value: x ]",
            ])
            .to_string(),
        13 => format!(
            "Object methodAt: #run:with:in: put: ({}). ({}) fuzzNothing. Object removeMethodAt: #run:with:in:",
            value(rng),
            value(rng)
        ),
        14 => format!(
            "[ {} ] on: ({}) do: [ :e | e return: 1 ]",
            send(rng, "3", "/", 1),
            value(rng)
        ),
        15 => {
            // Closure and environment internals (issue 26): every slot, by
            // index, by name and as an indexable object, then the block runs.
            let write = match rng.below(4) {
                0 => format!(
                    "fuzzBlock instVarAt: {} put: ({})",
                    1 + rng.below(4),
                    value(rng)
                ),
                1 => format!(
                    "(fuzzBlock instVarAt: 3) instVarAt: {} put: ({})",
                    1 + rng.below(4),
                    value(rng)
                ),
                2 => format!(
                    "(fuzzBlock instVarAt: 3) perform: #at:put: withArguments: (Array with: {} with: ({})) inSuperclass: Array",
                    1 + rng.below(3),
                    value(rng)
                ),
                _ => format!(
                    "(Array >> #at:put:) invokeOn: ({}) with: (Array with: 1 with: ({}))",
                    value(rng),
                    value(rng)
                ),
            };
            format!("{write}. fuzzBlock value")
        }
        16 => {
            // perform:inSuperclass: variants on any receiver, in any class.
            let (sel, arity) = if rng.below(2) == 0 {
                let (s, a) = F_SELECTORS[rng.below(F_SELECTORS.len())];
                (s.to_string(), a)
            } else {
                let p = &prims[rng.below(prims.len())];
                (p.selector.clone(), p.arity)
            };
            let class = rng.pick(&[
                "F", "Pair", "Array", "String", "Object", "Integer", "Block1", "Class",
                "(F class)", "(Array class)", "Symbol",
            ]);
            if arity == 0 && rng.below(2) == 0 {
                format!("({}) perform: #{sel} inSuperclass: {class}", value(rng))
            } else {
                let args: Vec<String> = (0..arity).map(|_| format!("({})", value(rng))).collect();
                format!(
                    "({}) perform: #{sel} withArguments: (Array new: {arity} withAll: {}) inSuperclass: {class}",
                    value(rng),
                    args.first().cloned().unwrap_or_else(|| "nil".into())
                )
            }
        }
        17 => {
            // A hand-written method with the pragmas the VM acts on, then run
            // (on anything, installed anywhere).
            let pragma = rng.pick(PRAGMAS);
            let body = rng.pick(PRAGMA_BODIES);
            let receiver = if rng.below(2) == 0 {
                "F new".to_string()
            } else {
                format!("({})", value(rng))
            };
            format!(
                "F compile: 'p: x = ( {pragma} {body} )'. ({receiver} p: ({})) printString. (F >> #p:) invokeOn: ({}) with: #(3)",
                value(rng),
                value(rng)
            )
        }
        18 => rng
            // VM-side tables (issue 26): each is freed or bounded by its
            // share of the 48 MB heap (a catchable out-of-memory error).
            .pick(&[
                "1 to: 1000000 do: [ :i | system track: Object new ]",
                "1 to: 100000 do: [ :i | F compile: 'fuzzM = ( ^', i printString, ' )' ]",
                "1 to: 100000 do: [ :i | (F >> #run) copyFor: F selector: #fuzzCopy ]",
                "1 to: 300000 do: [ :i | Semaphore new signal ]",
                "Semaphore new shallowCopy signal",
                "(File openForReading: '/dev/zero') readLine",
                "(File openForReading: '/dev/zero') read: 1000000000000",
                "system startLifetimes: 1 everyNth: 0 seed: 1 stackDepth: 8 only: nil ignore: nil. 1 to: 300000 do: [ :i | Array new: 2 ]. system stopLifetimes",
                "[ Error signal ] on: Error do: [ :x | [ x return: 1 ] ensure: [ x return: 2 ] ]",
                "[ Error signal ] on: Error do: [ :x | [ x retry ] ensure: [ x return: 2 ] ]",
            ])
            .to_string(),
        _ => "system fullGC".to_string(),
    }
}

/// A whole program: class `F` (three fields, helpers for reflection) whose
/// `run` executes `n` hostile statements, each guarded by an `Error` handler
/// most of the time.
fn program(rng: &mut Rng, prims: &[Primitive], n: usize) -> String {
    let mut body = String::new();
    for _ in 0..n {
        let s = statement(rng, prims);
        if rng.below(8) == 0 {
            body.push_str(&format!("        [ {s} ] value.\n"));
        } else {
            body.push_str(&format!(
                "        [ {s} ] on: Error do: [ :e | e return: nil ].\n"
            ));
        }
    }
    format!(
        "F = (\n    | a b c |\n    m0 = ( ^a )\n    m1: x = ( b := x. ^self )\n    m2: x with: y = ( c := y. ^x )\n    getA = ( ^a )\n    setA: x = ( a := x )\n    rec: n = ( ^(self rec: n + 1) + 1 )\n    run = (\n        | fuzzPair fuzzFrame fuzzBlock |\n        fuzzPair := Pair new.\n        fuzzBlock := [ fuzzPair := fuzzPair ].\n{body}        system fullGC.\n        'done' println\n    )\n)\n"
    )
}

/// How a run went wrong, if it did.
fn judge(code: Option<i32>, stderr: &str, timed_out: bool) -> Option<String> {
    if timed_out {
        return Some(format!("timed out after {PROGRAM_TIMEOUT:?}"));
    }
    for bad in [
        "panicked",
        "RUST_BACKTRACE",
        "heap verification",
        "internal error",
        "fatal runtime error",
        "memory allocation of",
    ] {
        if stderr.contains(bad) {
            return Some(format!("stderr says {bad:?}"));
        }
    }
    match code {
        Some(0 | 1) => None,
        // A program whose processes all wait forever: a documented fatal error.
        Some(70) if stderr.contains("deadlock") => None,
        Some(c) => Some(format!("exit status {c}")),
        None => Some("killed by a signal".to_string()),
    }
}

/// The JIT settings programs run under, in turn: every method compiled at
/// its first call, compiled after 3 calls on the VM thread (mixed native and
/// interpreted frames, at the same points every run, so a finding replays),
/// the default threshold, and after 3 calls on the compiler thread (native
/// code installed at whichever poll finds it ready).
const JIT_OPTIONS: &[&[&str]] = &[
    &["--jit", "always"],
    &["--jit-threshold", "3", "--jit-thread", "off"],
    &[],
    &["--jit-threshold", "3"],
];

/// Run one program (with the `jit`-th of [`JIT_OPTIONS`]); `None` when it
/// behaved.
fn check(dir: &Path, source: &str, jit: usize) -> Option<String> {
    std::fs::write(dir.join("F.som"), source).ok()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lupa"))
        .arg("run")
        .args(VM_OPTIONS)
        .args(JIT_OPTIONS[jit % JIT_OPTIONS.len()])
        .args(["-cp", ".", "F"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stderr_pipe = child.stderr.take()?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr_pipe.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let (code, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (status.code(), false),
            Ok(None) if start.elapsed() > PROGRAM_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break (None, true);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break (None, false),
        }
    };
    let stderr = reader.join().unwrap_or_default();
    judge(code, &stderr, timed_out).map(|why| {
        let head: String = stderr.lines().take(12).collect::<Vec<_>>().join("\n");
        format!("{why}\n{head}")
    })
}

fn seconds() -> u64 {
    std::env::var("LUPA_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            if crate::common::slow_tests("the fuzzer's generated programs") {
                20
            } else {
                0
            }
        })
}

#[test]
fn hostile_programs_never_crash_the_vm() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut failures = Vec::new();

    // 1. Replay the corpus.
    let corpus = repo_root().join("fuzz/corpus");
    let mut replayed = 0;
    if let Ok(entries) = std::fs::read_dir(&corpus) {
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for path in files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "som"))
        {
            let Ok(source) = std::fs::read_to_string(path) else {
                continue;
            };
            replayed += 1;
            // Interpreted as far as the default allows, and all compiled.
            for jit in [2, 0] {
                if let Some(why) = check(dir.path(), &source, jit) {
                    failures.push(format!(
                        "{} ({:?}): {why}",
                        path.display(),
                        JIT_OPTIONS[jit]
                    ));
                }
            }
        }
    }

    // 2. Generate.
    let prims = kernel_primitives();
    assert!(
        prims.len() > 100,
        "found only {} kernel primitives",
        prims.len()
    );
    let seed = std::env::var("LUPA_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    let budget = Duration::from_secs(seconds());
    let start = Instant::now();
    let mut generated = 0u64;
    let mut rng = Rng::new(seed);
    let max_programs: u64 = std::env::var("LUPA_FUZZ_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(u64::MAX);
    while start.elapsed() < budget && generated < max_programs && failures.len() < 5 {
        let program_seed = rng.next();
        let mut prng = Rng::new(program_seed);
        let n = 4 + prng.below(12);
        let source = program(&mut prng, &prims, n);
        generated += 1;
        if let Some(why) = check(dir.path(), &source, generated as usize) {
            let findings = repo_root().join("fuzz/findings");
            let _ = std::fs::create_dir_all(&findings);
            let file = findings.join(format!("{program_seed}.som"));
            let jit = JIT_OPTIONS[generated as usize % JIT_OPTIONS.len()].join(" ");
            let note = format!("{} (flags: {jit})", why.replace('"', "'"));
            let _ = std::fs::write(&file, format!("\"{note}\"\n{source}"));
            eprintln!("fuzz: finding {}: {why}", file.display());
            failures.push(format!("{}: {why}", file.display()));
        }
        if generated.is_multiple_of(1000) {
            eprintln!("fuzz: {generated} programs in {:.0?}", start.elapsed());
        }
    }
    eprintln!(
        "fuzz: seed {seed}, {replayed} corpus programs replayed, {generated} programs generated in {:.0?} ({} kernel primitives)",
        start.elapsed(),
        prims.len()
    );
    assert!(
        failures.is_empty(),
        "{} finding(s):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
