//! Issue 26, kinds 4 and 5: what the VM keeps outside the heap on behalf of a
//! program is freed or bounded by `--max-heap` (a catchable out-of-memory
//! error past its share), and the hangs of round 2 end. Every program runs
//! under `--verify-heap`, interpreted with the JIT at its default and with
//! every method compiled (`--jit always`).
//!
//! No test measures time: a runaway shows as a bounded quantity instead
//! (the error a table answers past its share of a small `--max-heap`, the
//! lines a run writes, the value a program answers).

use crate::common::{Run, classes, lupa_in};

/// Run class `name` (defined by `source`) with `extra` options, once per JIT mode.
fn runs(name: &str, source: &str, extra: &[&str]) -> Vec<Run> {
    let dir = classes(&[(&format!("{name}.som"), source)]);
    ["on", "always"]
        .iter()
        .map(|jit| {
            let mut args = vec!["run", "--verify-heap", "--jit", jit, "-cp", "."];
            args.extend_from_slice(extra);
            args.push(name);
            lupa_in(dir.path(), &args)
        })
        .collect()
}

/// Each run exited 0 and printed `stdout`, without a panic.
fn assert_prints(runs: &[Run], stdout: &str) {
    for r in runs {
        assert_eq!(r.code, 0, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
        assert_eq!(r.stdout, stdout, "stderr: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

#[test]
fn tracking_without_taking_the_deaths_is_a_catchable_out_of_memory_error() {
    // Variants: tracking objects that die (deaths pile up) and objects kept
    // alive (the tracked table grows); taking the deaths frees the table.
    let r = runs(
        "T",
        "T = ( run = (
            | kept |
            [ [ true ] whileTrue: [ system track: Object new ] ]
                on: Error do: [ :e | (e messageText beginsWith: 'out of memory: the table of tracked objects') println ].
            system fullGC. system takeDeaths.
            system track: Object new. 'tracks again' println.
            kept := Vector new.
            [ [ true ] whileTrue: [ | o | o := Object new. kept append: o. system track: o ] ]
                on: Error do: [ :e | (e messageText includesSubstring: 'takeDeaths') println ] ) )",
        &["--max-heap", "16m"],
    );
    assert_prints(&r, "true\ntracks again\ntrue\n");
}

#[test]
fn methods_compiled_in_a_loop_end_in_a_catchable_out_of_memory_error() {
    // Replacing one method, and adding new ones (copies of a method too).
    let r = runs(
        "T",
        "T = ( run = (
            | i |
            i := 0.
            [ [ true ] whileTrue: [ i := i + 1. T compile: 'foo = ( ^', i printString, ' + 1 + 2 + 3 + 4 + 5 )' ] ]
                on: Error do: [ :e | (e messageText beginsWith: 'out of memory: the methods made at run time') println ].
            [ [ true ] whileTrue: [ i := i + 1. (T >> #run) copyFor: T selector: ('m', i printString) asSymbol ] ]
                on: Error do: [ :e | (e messageText beginsWith: 'out of memory: the methods made at run time') println ].
            (i > 100) println ) )",
        &["--max-heap", "16m"],
    );
    assert_prints(&r, "true\ntrue\ntrue\n");
}

#[test]
fn an_endless_line_or_a_huge_read_is_a_catchable_out_of_memory_error() {
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    let r = runs(
        "T",
        "T = ( run = (
            | f |
            f := File openForReading: '/dev/zero'.
            [ f readLine ] on: Error do: [ :e | (e messageText includesSubstring: 'out of memory: a line is longer than') println ].
            [ f read: 1000000000000 ] on: Error do: [ :e | (e messageText includesSubstring: 'out of memory') println ].
            (f read: 10) size println.
            f close ) )",
        &["--max-heap", "16m"],
    );
    assert_prints(&r, "true\ntrue\n10\n");
}

#[test]
fn symbols_made_in_a_loop_end_in_a_catchable_out_of_memory_error() {
    // Symbols are never freed: their table (texts, map, vectors: several
    // times the Symbol objects' own bytes) has its share of --max-heap. An
    // existing symbol is still found once the share is spent.
    let r = runs(
        "T",
        "T = ( run = (
            | i |
            i := 0.
            [ [ true ] whileTrue: [ ('s' + i printString) asSymbol. i := i + 1 ] ]
                on: Error do: [ :e | (e messageText beginsWith: 'out of memory: the symbol table') println ].
            (i > 10000) println.
            ('s' + 1 printString) asSymbol == #s1 ifTrue: [ 'found' println ] ) )",
        &["--max-heap", "16m"],
    );
    assert_prints(&r, "true\ntrue\nfound\n");
}

#[test]
fn semaphores_that_died_give_their_records_back() {
    // Garbage semaphores, a live one kept across collections, and a copy of
    // a Semaphore (which names no record).
    let r = runs(
        "T",
        "T = ( run = (
            | live |
            live := Semaphore new. live signal; signal.
            1 to: 20 do: [ :k | 1 to: 20000 do: [ :i | Semaphore new signal ]. system fullGC ].
            live excessSignals println.
            live wait. live excessSignals println.
            [ live shallowCopy signal ] on: Error do: [ :e | 'a copy is refused' println ].
            [ (Semaphore perform: #new inSuperclass: Class) signal ] on: Error do: [ :e |
                (e messageText includesSubstring: 'made by Semaphore new') println ].
            live excessSignals println ) )",
        &["--max-heap", "32m"],
    );
    assert_prints(&r, "2\n1\na copy is refused\ntrue\n1\n");
}

#[test]
fn return_inside_an_ensure_block_of_its_own_unwind_answers_the_value() {
    // As in Pharo: the inner return: (or retry) ends the unwind the outer one started.
    let r = runs(
        "T",
        "T = ( run = (
            | r n |
            r := [ [ Error signal: 'x' ] ensure: [ 1 ] ] on: Error do: [ :e | [ e return: 5 ] ensure: [ e return: 7 ] ].
            r println.
            r := [ Error signal: 'y' ] on: Error do: [ :e | [ e return: 5 ] ensure: [ e return: 8 ] ].
            r println.
            n := 0.
            r := [ n := n + 1. n < 3 ifTrue: [ Error signal: 'z' ]. n ] on: Error do: [ :e | [ e return: 0 ] ensure: [ e retry ] ].
            r println.
            r := [ Error signal: 'w' ] on: Error do: [ :e | e return: 9 ].
            r println ) )",
        &[],
    );
    assert_prints(&r, "7\n8\n3\n9\n");
}

#[test]
fn a_test_whose_forked_process_fails_ends_and_fails() {
    let dir = classes(&[(
        "ForkTest.som",
        "ForkTest = TestCase ( testFork = ( [ 1/0 ] fork. Processor yield. self assert: true ) testOther = ( self assert: true ) )\n",
    )]);
    for jit in ["on", "always"] {
        let r = lupa_in(dir.path(), &["test", "--jit", jit, "-cp", ".", "ForkTest"]);
        assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains("a process forked by a test ended with an unhandled error"),
            "{}",
            r.stderr
        );
        // It reported once (the loop wrote millions of lines).
        assert!(r.stderr.lines().count() < 40, "{}", r.stderr);
        // The summary counts the forked process's failure.
        assert!(
            r.stdout
                .contains("2 passed, 1 failed (1 of them a process forked by a test)"),
            "{}",
            r.stdout
        );
    }
}
