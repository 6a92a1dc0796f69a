//! Line coverage measured by the interpreter: lines that ran are counted,
//! lines that did not are missed, blocks belong to their method, and nothing
//! is counted once it is off.

use lupa_compiler::CodeKind;
use lupa_vm::{Vm, VmOptions};

const SOURCE: &str = "CovProbe = (
  | x |
  x = ( ^ x )
  pick: n = (
    n > 0
      ifTrue: [ x := 1 ]
      ifFalse: [ x := 2 ].
    n > 100 ifTrue: [
      x := 3 ].
    ^ x
  )
  loop: n = ( | s |
    s := 0.
    1 to: n do: [ :i |
      s := s + i ].
    ^ s
  )
  never = (
    ^ 42
  )
)
";

fn method_id(vm: &Vm, selector: &str) -> u32 {
    (0..vm.image.method_count() as u32)
        .find(|&id| {
            vm.image.describe_method(id).is_some_and(|d| {
                d.class == "CovProbe" && d.selector == selector && d.kind == CodeKind::Method
            })
        })
        .unwrap_or_else(|| panic!("no CovProbe>>{selector}"))
}

#[test]
fn lines_that_ran_and_lines_that_did_not() {
    let mut vm = Vm::new(VmOptions::default()).expect("vm boots");
    vm.load_class_source("CovProbe.som", SOURCE, "test", Some("CovProbe"))
        .expect("probe compiles");
    let class = vm.class_named("CovProbe").expect("class");
    let probe = vm.send_message(class, "new", &[]).expect("instance");
    // Not counted: before coverage starts.
    vm.send_message(probe, "never", &[]).expect("runs");
    vm.start_line_coverage();
    for n in [1, 2, 3] {
        vm.send_message(probe, "pick:", &[lupa_vm::Value::small(n)])
            .expect("runs");
    }
    vm.send_message(probe, "loop:", &[lupa_vm::Value::small(5)])
        .expect("runs");
    vm.send_message(probe, "x", &[]).expect("runs");
    let cov = vm.take_line_coverage();
    // Not counted: after it stopped.
    vm.send_message(probe, "never", &[]).expect("runs");

    let pick = cov.lines_of(&vm.image, method_id(&vm, "pick:"));
    // Lines 5-10 have code: the test, both branches, the second test, its
    // branch, the return.
    let hits = |line: u32| pick.iter().find(|(l, _)| *l == line).map(|(_, h)| *h);
    assert_eq!(hits(5), Some(3), "{pick:?}");
    assert_eq!(hits(6), Some(3), "{pick:?}");
    assert_eq!(hits(7), Some(0), "ifFalse: never taken: {pick:?}");
    assert_eq!(hits(8), Some(3), "{pick:?}");
    assert_eq!(hits(9), Some(0), "x := 3 never ran: {pick:?}");
    assert_eq!(hits(10), Some(3), "{pick:?}");
    assert_eq!(hits(4), None, "the pattern line has no code");

    let lp = cov.lines_of(&vm.image, method_id(&vm, "loop:"));
    let hits = |line: u32| lp.iter().find(|(l, _)| *l == line).map(|(_, h)| *h);
    assert_eq!(hits(13), Some(1), "{lp:?}");
    assert_eq!(hits(15), Some(5), "the loop body ran 5 times: {lp:?}");
    assert_eq!(hits(16), Some(1), "{lp:?}");

    // A trivial accessor is activated, and counted, while covering.
    let x = cov.lines_of(&vm.image, method_id(&vm, "x"));
    assert_eq!(x, vec![(3, 1)]);
    // A method that never ran while covering has only missed lines.
    let never = cov.lines_of(&vm.image, method_id(&vm, "never"));
    assert_eq!(never, vec![(19, 0)]);
}

const SKIPS: &str = "CovSkips = (
  check: a and: b = (
    a ifFalse: [
      ^ 1 ].
    b ifFalse: [
      ^ 2 ].
    ^ true
  )
  early: n = (
    #(1 2 3) do: [ :e |
      e = n ifTrue: [ ^ e ] ].
    ^ 0
  )
)
";

/// Line of `CovSkips>>selector` and its hit count, for the lines with code.
fn skips_lines(vm: &mut Vm, selector: &str, runs: &[&[lupa_vm::Value]]) -> Vec<(u32, u64)> {
    let class = vm.class_named("CovSkips").expect("class");
    let probe = vm.send_message(class, "new", &[]).expect("instance");
    vm.start_line_coverage();
    for args in runs {
        vm.send_message(probe, selector, args).expect("runs");
    }
    let cov = vm.take_line_coverage();
    let id = (0..vm.image.method_count() as u32)
        .find(|&id| {
            vm.image.describe_method(id).is_some_and(|d| {
                d.class == "CovSkips" && d.selector == selector && d.kind == CodeKind::Method
            })
        })
        .expect("method");
    cov.lines_of(&vm.image, id)
}

#[test]
fn a_statement_after_a_skipped_inlined_branch_ran() {
    let mut vm = Vm::new(VmOptions::default()).expect("vm boots");
    vm.load_class_source("CovSkips.som", SKIPS, "test", Some("CovSkips"))
        .expect("probe compiles");
    let t = lupa_vm::Value::TRUE;
    // Both tests true: both arms skipped, every statement after them ran.
    let lines = skips_lines(&mut vm, "check:and:", &[&[t, t]]);
    assert_eq!(lines, vec![(3, 1), (4, 0), (5, 1), (6, 0), (7, 1)]);
}

#[test]
fn a_non_local_return_cuts_its_method_short() {
    let mut vm = Vm::new(VmOptions::default()).expect("vm boots");
    vm.load_class_source("CovSkips.som", SKIPS, "test", Some("CovSkips"))
        .expect("probe compiles");
    // Returns from inside the loop once (2), runs to the end once (9).
    let lines = skips_lines(
        &mut vm,
        "early:",
        &[&[lupa_vm::Value::small(2)], &[lupa_vm::Value::small(9)]],
    );
    let hits = |line: u32| lines.iter().find(|(l, _)| *l == line).map(|(_, h)| *h);
    assert_eq!(hits(10), Some(2), "{lines:?}");
    assert_eq!(hits(11), Some(5), "the block ran 2 + 3 times: {lines:?}");
    assert_eq!(hits(12), Some(1), "^ 0 ran once: {lines:?}");
}
