//! Hostile programs (issue 16): reflection misused, resource bombs, limits.
//! Each must end with a clear Smalltalk error or a documented exit, never a
//! Rust panic, an abort, a corrupted heap or a hang. Every program runs under
//! `--verify-heap`, so a heap the program managed to corrupt fails the run.

use crate::common::{Run, classes, lupa_in};

/// Run class `name` (defined by `source`) with `extra` options under
/// `--verify-heap`, next to a `Pair` class with two fields.
pub(crate) fn run(name: &str, source: &str, extra: &[&str]) -> Run {
    let dir = classes(&[
        (
            "Pair.som",
            "Pair = ( | key value | key = ( ^key ) value: v = ( value := v ) bar: a with: b = ( ^a ) )\n",
        ),
        (&format!("{name}.som"), source),
    ]);
    let mut args = vec!["run", "--verify-heap", "-cp", "."];
    args.extend_from_slice(extra);
    args.push(name);
    lupa_in(dir.path(), &args)
}

/// The run ended with a Smalltalk error (exit 1) whose first line contains `text`.
pub(crate) fn assert_error(r: &Run, text: &str) {
    assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    let first = r.stderr.lines().next().unwrap_or("");
    assert!(first.starts_with("ERROR: "), "{}", r.stderr);
    assert!(first.contains(text), "wanted {text:?} in: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn a_method_installed_on_a_receiver_without_its_fields_is_refused() {
    let r = run(
        "T",
        "T = ( run = ( Object methodAt: #pv: put: (Pair >> #value:). ('ab' , '') pv: 12345 ) )\n",
        &[],
    );
    assert_error(
        &r,
        "methodAt:put: Pair>>value: uses 2 named field(s) but instances of Object have 0",
    );
}

#[test]
fn a_method_invoked_on_a_receiver_without_its_fields_is_refused() {
    let r = run(
        "T",
        "T = ( run = ( ((Pair >> #key) invokeOn: 'pppppppp' with: #()) println ) )\n",
        &[],
    );
    assert_error(&r, "invokeOn:with: Pair>>key uses 1 named field(s)");
}

#[test]
fn field_access_never_leaves_the_receiver() {
    // Reflective field access stays inside the object: by index within its
    // slots, by name only for a receiver whose class declares the field.
    let r = run(
        "T",
        "T = ( run = ( | p | Object methodAt: #k put: (Object >> #yourself). p := Pair new. p value: 7. (p instVarAt: 2) println. (3 instVarNamed: 'key') println ) )\n",
        &[],
    );
    assert_error(&r, "instVarNamed: no such instance variable");
    assert_eq!(r.stdout, "7\n");
}

#[test]
fn a_method_of_the_wrong_arity_is_refused() {
    let r = run(
        "T",
        "T = ( bar: a with: b = ( ^a ) run = ( T methodAt: #foo put: (T >> #bar:with:). self foo println ) )\n",
        &[],
    );
    assert_error(
        &r,
        "the selector #foo takes 0 argument(s) but T>>bar:with: takes 2",
    );
}

#[test]
fn a_send_literal_only_takes_a_symbol_of_its_arity() {
    let r = run(
        "T",
        "T = ( run = ( (T >> #go) literalAt: 1 put: 42 ) go = ( ^ 3 foo: 4 ) )\n",
        &[],
    );
    assert_error(&r, "is a selector: it can only be replaced by a Symbol");
    let r = run(
        "T",
        "T = ( run = ( (T >> #go) literalAt: 1 put: #between:and: ) go = ( ^ 3 foo: 4 ) )\n",
        &[],
    );
    assert_error(&r, "sent with 1 argument(s); #between:and: takes 2");
    // A constant literal may become anything; a selector of the same arity works.
    let r = run(
        "T",
        "T = ( run = ( (T >> #go) literalAt: 1 put: #+. (T >> #k) literalAt: 1 put: #(1 2). self go println. self k println ) go = ( ^ 3 foo: 4 ) k = ( ^ 'text' ) )\n",
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "7\n#(1 2)\n");
}

#[test]
fn a_frame_of_another_process_is_refused() {
    for prim in ["Context restart: f", "Context unwindTo: f return: 3"] {
        let src = format!(
            "T = ( run = ( | f | [ f := Context currentFrame. Processor yield. 'forked' println ] fork. Processor yield. {prim}. 'after' println ) )\n"
        );
        let r = run("T", &src, &[]);
        assert_error(&r, "the frame belongs to another process");
        assert!(!r.stdout.contains("after"), "{}", r.stdout);
    }
}

#[test]
fn a_frame_that_returned_is_refused() {
    let r = run(
        "T",
        "T = ( run = ( | f | f := self frame. self frame. 1 to: 3 do: [ :i | i ]. Context restart: f + 100 ) frame = ( ^ Context currentFrame ) )\n",
        &[],
    );
    assert_error(&r, "the frame has returned");
}

#[test]
fn an_object_that_runs_itself_is_an_error_not_a_native_overflow() {
    let r = run(
        "T",
        "T = ( run = ( | o | o := Object new. Object methodAt: #run:with:in: put: o. Object methodAt: #zork put: o. o zork ) )\n",
        &[],
    );
    assert_error(&r, "objects as methods nested more than 64 deep");
}

#[test]
fn a_huge_power_is_an_out_of_memory_error() {
    let r = run(
        "T",
        "T = ( run = ( (2 raisedTo: 10000000000) println ) )\n",
        &[],
    );
    assert_error(&r, "out of memory: the result would have");
    let r = run("T", "T = ( run = ( (1 << 100000000000) println ) )\n", &[]);
    assert_error(&r, "out of memory: the result would have");
}

#[test]
fn printing_a_huge_integer_is_refused_not_slow() {
    let r = run(
        "T",
        "T = ( run = ( (2 raisedTo: 5000000) printString size println ) )\n",
        &[],
    );
    assert_error(&r, "printString: the Integer has about 1505151 digits");
}

#[test]
fn a_huge_string_is_an_out_of_memory_error() {
    let r = run(
        "T",
        "T = ( run = ( (String new: 4611686018427387903) println ) )\n",
        &[],
    );
    assert_error(&r, "out of memory");
}

#[test]
fn deep_recursion_under_a_huge_stack_limit_is_a_stack_overflow() {
    let r = run(
        "T",
        "T = ( run = ( self rec: 0 ) rec: n = ( ^ (self rec: n + 1) + 1 ) )\n",
        &["--max-heap", "64MB", "--max-stack-depth", "1000000000"],
    );
    assert_error(
        &r,
        "stack overflow: more than 104856 nested activations (the stacks of all processes may use 1/4 of --max-heap, 16 MB)",
    );
    // The backtrace leaves the middle out.
    assert!(r.stderr.contains("more frames ..."), "{}", r.stderr);
}

#[test]
fn processes_count_against_the_heap_limit() {
    let r = run(
        "T",
        "T = ( run = ( | s | s := Semaphore new. [ true ] whileTrue: [ [ s wait ] fork ] ) )\n",
        &["--max-heap", "64MB"],
    );
    assert_error(
        &r,
        "processes and their stacks fill the stack budget (1/4 of --max-heap, 16 MB)",
    );
}

#[test]
fn finished_processes_give_their_stacks_back() {
    let r = run(
        "T",
        "T = ( run = ( 1 to: 20000 do: [ :i | [ i ] fork. Processor yield ]. 'done' println ) )\n",
        &["--max-heap", "64MB"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "done\n");
}

#[test]
fn a_handler_test_that_fails_is_an_error_not_a_regress() {
    let r = run(
        "T",
        "T = ( run = ( [ 1/0 ] on: nil do: [ :e | 'caught' println ] ) )\n",
        &[],
    );
    assert_error(&r, "nil does not understand #handles:");
}

#[test]
fn wrong_primitive_arguments_say_which_and_why() {
    let r = run("T", "T = ( run = ( Context senderOf: 'x' ) )\n", &[]);
    assert_error(
        &r,
        "primitive Context class>>senderOf: failed: argument 1 must be a frame (from Context currentFrame or senderOf:), not an instance of String",
    );
}

#[test]
fn a_byte_class_cannot_declare_fields() {
    let dir = classes(&[
        ("MyStr.som", "MyStr = String ( | x | foo = ( ^x ) )\n"),
        ("T.som", "T = ( run = ( (MyStr new: 5) foo println ) )\n"),
    ]);
    let r = lupa_in(dir.path(), &["run", "-cp", ".", "T"]);
    assert_eq!(r.code, 65, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("MyStr cannot have instance variables (x): its instances hold raw bytes"),
        "{}",
        r.stderr
    );
}

#[test]
fn blocks_are_made_only_by_the_vm() {
    let r = run("T", "T = ( run = ( Block1 new value ) )\n", &[]);
    assert_error(&r, "Block1 cannot be instantiated with new");
    let r = run(
        "T",
        "T = ( run = ( ((Array class) >> #new:) invokeOn: Block2 with: #(3) ) )\n",
        &[],
    );
    assert_error(&r, "Array class>>new: is a primitive of Array class");
}

#[test]
fn a_superclass_cycle_is_a_compile_error() {
    let dir = classes(&[
        ("Object.som", "Object = Integer ( )\n"),
        ("T.som", "T = ( run = ( 3 println ) )\n"),
    ]);
    let r = lupa_in(dir.path(), &["run", "-cp", ".", "T"]);
    assert_eq!(r.code, 65, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("class Object would inherit from itself (Object -> Integer -> Object)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_fifo_on_the_class_path_is_refused_not_waited_on() {
    let dir = classes(&[]);
    let fifo = dir.path().join("T.som");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let r = lupa_in(dir.path(), &["run", "-cp", ".", "T"]);
    assert_eq!(r.code, 74, "{}", r.stderr);
    assert!(
        r.stderr.contains("T.som: not a regular file"),
        "{}",
        r.stderr
    );
}

#[test]
fn system_exit_inside_a_test_does_not_hide_the_other_tests() {
    let dir = classes(&[(
        "ExitTest.som",
        "ExitTest = TestCase ( testFails = ( self assert: false ) testExits = ( system exit: 0 ) testZ = ( self assert: true ) )\n",
    )]);
    let r = lupa_in(dir.path(), &["test", "-cp", ".", "ExitTest"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("system exit: 0 inside a test: tests may not end the run"),
        "{all}"
    );
    assert!(all.contains("1 passed, 2 failed"), "{all}");
}

#[test]
fn the_report_of_a_very_deep_recursion_stays_small() {
    // A 50,000-deep recursion: the tree report is cut at --depth (100), so the
    // report is a few kilobytes, not gigabytes of indentation.
    let dir = classes(&[(
        "Deep.som",
        "Deep = ( run = ( self rec: 0 ) rec: n = ( n = 50000 ifTrue: [ ^0 ]. ^(self rec: n + 1) + 1 ) )\n",
    )]);
    let r = lupa_in(
        dir.path(),
        &["count", "--max-stack-depth", "100000", "-cp", ".", "Deep"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("... deeper contexts not shown"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.len() < 200_000, "{} bytes", r.stdout.len());
}

#[test]
fn a_primitive_runs_only_on_instances_of_its_class() {
    let r = run(
        "T",
        "T = ( run = ( (String >> #=) invokeOn: 4611686018427387903 with: #(#sym) ) )\n",
        &[],
    );
    assert_error(
        &r,
        "invokeOn:with: String>>= is a primitive of String: it cannot run on instances of Integer",
    );
    let r = run(
        "T",
        "T = ( run = ( Object methodAt: #same: put: (String >> #=). 3 same: #sym ) )\n",
        &[],
    );
    assert_error(&r, "methodAt:put: String>>= is a primitive of String");
    let r = run(
        "T",
        "T = ( run = ( (String >> #=) copyFor: Object selector: #same: ) )\n",
        &[],
    );
    assert_error(&r, "copyFor:selector: String>>= is a primitive of String");
}

#[test]
fn literal_index_zero_and_negative_are_errors() {
    for index in ["0", "-1", "4611686018427387903"] {
        let src = format!("T = ( run = ( (T >> #run) literalAt: {index} ) )\n");
        let r = run("T", &src, &[]);
        assert_error(&r, "literalAt: index out of bounds");
    }
}

#[test]
fn integer_powers_are_exact_and_checked_before_any_work() {
    // The primitive answers what the Smalltalk fallback answered (a negative
    // exponent gives 1, a Double exponent its integer part)...
    let r = run(
        "T",
        "T = ( run = ( (2 raisedTo: 100) println. (-1 raisedTo: 7) println. (-2 raisedTo: 3) println. (2 raisedTo: -1) println. (2 raisedTo: 3.7) println. (0 raisedTo: 5) println. ((10 raisedTo: 20) raisedTo: 3) println ) )\n",
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "1267650600228229401496703205376\n-1\n-8\n1\n8\n0\n1000000000000000000000000000000000000000000000000000000000000\n"
    );
    // ...and a power past the Integer limit names the size it would have
    // had: the estimate, not the size of the last square that fit.
    let r = run(
        "T",
        "T = ( run = ( (3 raisedTo: 10000000000) println ) )\n",
        &[],
    );
    assert_error(&r, "out of memory: the result would have 15849625008 bits");
}
