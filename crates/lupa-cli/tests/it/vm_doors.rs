//! The doors into the VM's memory (issue 26, kinds 1-3; ARCHITECTURE.md,
//! "Doors into the VM's memory"): the slots of closures and environments
//! cannot be written, forged or given fields; every way to run a method on a
//! receiver other than a send checks that the receiver fits it; a
//! hand-written `<trapShortcut>` method must have a trap's shape. Every
//! hostile program ends in a Smalltalk error with a backtrace (exit 1) or a
//! compile error at load (exit 65), interpreted and with every method
//! compiled (`--jit always`), under `--verify-heap`, never in a panic, a
//! hang or a corrupted heap. The catchable side (the error is an `Error`,
//! the objects are left as they were) is `smalltalk/Tests/LupaVmDoorsTest.som`.

use crate::common::{Run, classes, lupa_in};
use crate::hostile::{assert_error, run};

/// Interpreted, and every method compiled at its first call.
const JIT: [&[&str]; 2] = [&[], &["--jit", "always"]];

/// `assert_error`, and the uncaught error's backtrace names `T>>run`.
fn assert_error_with_backtrace(r: &Run, text: &str) {
    assert_error(r, text);
    assert!(r.stderr.contains("T>>run"), "no backtrace: {}", r.stderr);
}

/// Run class `T` of `files` (in a class-path directory of their own) with
/// `extra` options under `--verify-heap`.
fn run_files(files: &[(&str, &str)], extra: &[&str]) -> Run {
    let dir = classes(files);
    let mut args = vec!["run", "--verify-heap", "-cp", "."];
    args.extend_from_slice(extra);
    args.push("T");
    lupa_in(dir.path(), &args)
}

/// The run stopped at load with a compile error (exit 65) saying `text`.
fn assert_compile_error(r: &Run, text: &str) {
    assert_eq!(r.code, 65, "{}", r.stderr);
    assert!(r.stderr.contains(text), "wanted {text:?} in: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

/// Run class `T` (defined by `source`) in each JIT mode and expect it to
/// succeed and print `stdout`.
fn expect_output(source: &str, stdout: &str) {
    for jit in JIT {
        let r = run("T", source, jit);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.stdout, stdout);
    }
}

/// Run `T` (its `run` method's body given) in each JIT mode and expect the
/// error `text`.
fn expect_error(body: &str, text: &str) {
    let src = format!("T = ( run = ( {body} ) capture = ( | x | x := 3. ^[ x := x + 1 ] ) )\n");
    for jit in JIT {
        let r = run("T", &src, jit);
        assert_error_with_backtrace(&r, text);
    }
}

#[test]
fn a_closure_slot_cannot_be_overwritten() {
    // The examples: a forged outer environment, a block's code
    // replaced by another's, and the receiver slot; then the block runs.
    expect_error(
        "| b | b := self capture. b instVarAt: 3 put: 'pppppppppppppppp'. b value",
        "instVarAt:put: cannot write into a Block1",
    );
    expect_error(
        "| b s | s := 'ab'. b := self capture. b instVarAt: 3 put: s. b value. s println",
        "instVarAt:put: cannot write into a Block1",
    );
    expect_error(
        "| b | b := self capture. b instVarAt: 1 put: ([ :p :q | p ] instVarAt: 1). b value",
        "instVarAt:put: cannot write into a Block1",
    );
    expect_error(
        "| b | b := [ :p | p ]. b instVarAt: 2 put: 'pppppppppppppppp'. b value: 1",
        "instVarAt:put: cannot write into a Block2",
    );
    expect_error(
        "self capture instVarNamed: 'x' put: 3",
        "instVarNamed:put: cannot write into a Block1",
    );
}

#[test]
fn an_environment_slot_cannot_be_overwritten() {
    // Its own parent would make `^` walk the chain forever.
    expect_error(
        "| b e | b := self capture. e := b instVarAt: 3. e instVarAt: 1 put: e. b value",
        "instVarAt:put: cannot write into a LupaEnvironment",
    );
    expect_error(
        "| e | e := self capture instVarAt: 3. e perform: #at:put: withArguments: (Array with: 1 with: e) inSuperclass: Array",
        "perform:withArguments:inSuperclass: Array>>at:put: is a primitive of Array: it cannot run on instances of LupaEnvironment",
    );
}

#[test]
fn closures_and_environments_are_made_only_by_the_vm() {
    expect_error(
        "(self capture instVarAt: 3) class new: 2",
        "LupaEnvironment cannot be instantiated with new:",
    );
    expect_error(
        "(Block1 perform: #new: withArguments: #(3) inSuperclass: Array class) value",
        "Array class>>new: is a primitive of Array class: it cannot run on instances of Block1 class",
    );
    expect_error(
        "T class new new",
        "primitive Class>>new failed: the receiver must be a class",
    );
}

#[test]
fn a_block_class_that_inherits_from_array_still_guards_its_slots() {
    // A user's Block1 may inherit from Array (it declares no field): the
    // Array primitives then apply to closures, and must refuse them.
    for (body, text) in [
        (
            "(Block1 new: 3 withAll: 5) value",
            "Block1 cannot be instantiated with new:",
        ),
        (
            "| x b | x := 1. b := [ x ]. b at: 3 put: 'pppppppppppppppp'. b value",
            "the receiver must be an indexable object, not an instance of Block1",
        ),
    ] {
        for jit in JIT {
            let r = run_files(
                &[
                    ("Block1.som", "Block1 = Array ( value = primitive )\n"),
                    ("T.som", &format!("T = ( run = ( {body} ) )\n")),
                ],
                jit,
            );
            assert_error_with_backtrace(&r, text);
        }
    }
}

/// A kernel class of the user's class path with fields is refused at load.
fn expect_refused_at_load(file: &str, source: &str, text: &str) {
    let r = run_files(
        &[
            (file, source),
            ("T.som", "T = ( run = ( [ 3 ] value println ) )\n"),
        ],
        &[],
    );
    assert_compile_error(&r, text);
}

#[test]
fn a_block_or_environment_class_cannot_declare_fields() {
    expect_refused_at_load(
        "Block1.som",
        "Block1 = Block ( | a b c | value = primitive poke = ( a := 'pppppppppppppppp' ) )\n",
        "Block1 cannot have instance variables (a, b, c): its instances are made by the VM",
    );
    expect_refused_at_load(
        "Block.som",
        "Block = ( | code | value = primitive )\n",
        "Block cannot have instance variables (code): its instances are made by the VM",
    );
    expect_refused_at_load(
        "Block3.som",
        "Block3 = Pair ( value: a with: b = primitive )\n",
        "Block3 cannot have instance variables (key, value)",
    );
    // Inherited by every class, the raw ones included.
    expect_refused_at_load(
        "Object.som",
        "Object = nil ( | tag | tag: t = ( tag := t ) )\n",
        "cannot have instance variables (tag): its instances hold raw",
    );
}

#[test]
fn perform_in_superclass_checks_the_receiver() {
    // The three examples: a panic, a corrupted heap, a changed number.
    expect_error(
        "('pppppppppppppppp' perform: #key inSuperclass: Pair) println",
        "perform:inSuperclass: Pair>>key uses 1 named field(s) but the receiver (a String) has 0",
    );
    expect_error(
        "| s | s := 'ab'. s perform: #value: withArguments: #(5) inSuperclass: Pair. s println",
        "perform:withArguments:inSuperclass: Pair>>value: uses 2 named field(s) but the receiver (a String) has 0",
    );
    expect_error(
        "| n | n := 2 raisedTo: 100. n perform: #value: withArguments: #(5) inSuperclass: Pair. n println",
        "Pair>>value: uses 2 named field(s) but the receiver (a Integer) has 0",
    );
    expect_error(
        "self capture perform: #value: withArguments: #(5) inSuperclass: Pair",
        "the receiver (a Block1) has 0",
    );
    expect_error(
        "3 perform: #length inSuperclass: String",
        "perform:inSuperclass: String>>length is a primitive of String: it cannot run on instances of Integer",
    );
    // What fits still runs: a method without fields on anything, a
    // superclass's method on its subclasses.
    expect_output(
        "T = Pair ( run = ( ('ab' perform: #bar:with: withArguments: #(1 2) inSuperclass: Pair) println. (T new perform: #value: withArguments: #(4) inSuperclass: Pair) println ) )\n",
        "1\ninstance of T\n",
    );
}

#[test]
fn a_super_send_runs_only_on_instances_of_its_class() {
    let sub = "S = Pair ( k = ( ^super key ) kb = ( ^[ super key ] value ) )\n";
    let cases = [
        (
            "((S >> #k) invokeOn: 'pppppppppppppppp' with: #()) println",
            "invokeOn:with: S>>k sends to super from S: it cannot run on instances of String",
        ),
        (
            "String methodAt: #k put: (S >> #k). 'pppppppppppppppp' k println",
            "methodAt:put: S>>k sends to super from S: it cannot run on instances of String",
        ),
        (
            // A copy's blocks keep their class: their super sends too.
            "String methodAt: #kb put: ((S >> #kb) copyFor: String selector: #kb). 'pppppppppppppppp' kb println",
            "methodAt:put: String>>kb sends to super from S: it cannot run on instances of String",
        ),
    ];
    for (body, text) in cases {
        for jit in JIT {
            let r = run_files(
                &[
                    ("Pair.som", "Pair = ( | key value | key = ( ^key ) )\n"),
                    ("S.som", sub),
                    ("T.som", &format!("T = ( run = ( {body} ) )\n")),
                ],
                jit,
            );
            assert_error_with_backtrace(&r, text);
        }
    }
}

#[test]
fn a_hand_written_vm_pragma_without_its_shape_is_refused_at_load() {
    // `<trapShortcut>`: the example (no Symbol in literal 2), a
    // selector of another arity, and a first send of another selector: each
    // would make the VM send a non-selector, or a selector with the wrong
    // arguments. `<exceptionHandler>` without its arguments and temporary
    // made every exception look for a handler again forever;
    // `<unwindProtect>` without its two temporaries.
    for (method, text) in [
        (
            "foo: x = ( <trapShortcut> ^x )",
            "T>>foo: is marked <trapShortcut> but its literal 2 is not a Symbol: a trap (MethodProxies) must have as literal 2 a selector of its own arity, which it sends first",
        ),
        (
            "foo: x = ( <trapShortcut> #off ifFalse: [ ^self bar: x with: x ]. ^x )",
            "its literal 2, #bar:with:, takes 2 argument(s), not 1",
        ),
        (
            "foo: x = ( <trapShortcut> #off ifFalse: [ ^#bar: ]. ^self printString: x )",
            "its first send is not of #bar: (its literal 2)",
        ),
        (
            "foo: x = ( <exceptionHandler> ^x value )",
            "T>>foo: is marked <exceptionHandler> but takes 1 argument(s) and has 0 temporaries",
        ),
        (
            "foo: x = ( <unwindProtect> | a | ^x value )",
            "T>>foo: is marked <unwindProtect> but has 1 temporaries",
        ),
    ] {
        let source = format!("T = ( run = ( (self foo: 3) println ) bar: x = ( ^x ) {method} )\n");
        let r = run_files(&[("T.som", &source)], &[]);
        assert_compile_error(&r, text);
    }
}

#[test]
fn a_hand_written_vm_pragma_compiled_at_run_time_is_an_error() {
    expect_error(
        "T compile: 'foo: x = ( <trapShortcut> ^x )'. (self foo: 3) println",
        "compile error: <compiled in T>:1:1: error: T>>foo: is marked <trapShortcut> but",
    );
    expect_error(
        "T compile: 'foo: x = ( <exceptionHandler> ^x value )'. (self foo: [ 1 / 0 ]) println",
        "compile error: <compiled in T>:1:1: error: T>>foo: is marked <exceptionHandler> but",
    );
    // One with a trap's shape runs: disabled (literal 1 not true), it sends
    // literal 2 with the same arguments.
    expect_output(
        "T = ( run = ( T compile: 'foo: x = ( <trapShortcut> #off ifFalse: [ ^self bar: x ]. ^0 )'. (self foo: 3) println ) bar: x = ( ^x * 2 ) )\n",
        "6\n",
    );
}
