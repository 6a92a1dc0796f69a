//! Snapshot tests of the emitted code, from source.
//!
//! Each snapshot holds the method source, then its disassembly. Every compiled
//! method is also checked by `verify`.

use lupa_compiler::{CompiledCode, Op, compile_method, disassemble, verify};
use lupa_syntax::{SourceFile, parse_method};

/// Instance fields of the class the test methods are compiled in.
const FIELDS: [&str; 2] = ["first", "second"];

fn compile(text: &str) -> CompiledCode {
    let def = match parse_method(text) {
        Ok(d) => d,
        Err(d) => panic!("parse error: {}", d.message),
    };
    let fields: Vec<String> = FIELDS.iter().map(|f| f.to_string()).collect();
    let src = SourceFile::new("test.som", text);
    let code = match compile_method(&def, &fields, &src) {
        Ok(c) => c,
        Err(d) => panic!("compile error: {}", d.message),
    };
    if let Err(e) = verify(&code) {
        panic!("verify failed: {e}\n{}", disassemble(&code));
    }
    code
}

fn compile_error(text: &str) -> String {
    let def = match parse_method(text) {
        Ok(d) => d,
        Err(d) => panic!("parse error: {}", d.message),
    };
    let fields: Vec<String> = FIELDS.iter().map(|f| f.to_string()).collect();
    match compile_method(&def, &fields, &SourceFile::new("test.som", text)) {
        Ok(c) => panic!("compiled:\n{}", disassemble(&c)),
        Err(d) => d.message,
    }
}

fn listing(text: &str) -> String {
    format!("{}\n---\n{}", text.trim(), disassemble(&compile(text)))
}

macro_rules! snapshot {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), listing($src));
        }
    };
}

// ----- basics --------------------------------------------------------------

snapshot!(empty_method_returns_self, "foo = ( )");
snapshot!(
    literals,
    "foo = ( ^Array with: 1 with: -7 with: 3000000000 with: 100000000000000000000000 with: 1.5 with: 'it''s' with: #sym with: #at:put: with: #(1 #(nil true) foo) )"
);
snapshot!(
    literals_are_deduplicated,
    "foo = ( #foo. self foo: #foo. ^self foo: 0.0 bar: -0.0 baz: 0.0 )"
);
snapshot!(
    variables,
    "foo: x = ( | t | t := x. first := t. ^Array with: first with: second with: Unknown with: thisContext )"
);
snapshot!(
    pseudo_variables,
    "foo = ( ^Array with: self with: super with: nil with: true with: false )"
);
snapshot!(
    super_sends,
    "foo = ( super foo. super + 1. super value. ^super at: 1 put: 2 )"
);
snapshot!(
    assignment_chains,
    "foo = ( | a b | a := b := first := 3. ^a := b )"
);
snapshot!(argument_assignment, "foo: x = ( x := x + 1. ^x )");
snapshot!(
    special_selectors,
    "foo: a = ( ^Array with: a + 1 with: a - 1 with: a * 2 with: a / 2 with: a // 2 with: a % 2 with: (a < 1) with: (a <> 2) with: (a ~= 3) with: (a == 4) with: (a at: 1) with: (a at: 1 put: 2) with: a value with: (a value: 1) with: a isNil with: a length with: (a value: 1 with: 2) )"
);
snapshot!(
    cascade_effect,
    "foo = ( Transcript show: 'a'; show: 'b'; cr )"
);
snapshot!(
    cascade_value,
    "foo = ( ^OrderedCollection new add: 1; add: 2; yourself )"
);
snapshot!(super_cascade, "foo = ( super foo; bar )");
snapshot!(
    statements_for_effect,
    "foo: x = ( | t | x. t. 3. 'abc'. [ 1 ]. Global. first. ^self )"
);
snapshot!(
    max_stack_nested_sends,
    "foo = ( ^self a: 1 b: (self c: 2 d: (self e: 3 f: 4)) )"
);
snapshot!(
    line_table,
    "foo = (
    | a |
    a := 1.
    a := a
        + 2.
    ^[ :x |
        x + a ]
)"
);
snapshot!(
    pragmas,
    "foo = ( <primitive> <category: 'x' id: 3 flags: #(#a 1)> ^1 )"
);
snapshot!(primitive_method, "at: i put: v = primitive");

// ----- blocks and capture ----------------------------------------------------

snapshot!(
    blocks,
    "foo = ( ^Array with: [] with: [ 1 ] with: [ :a | a ] with: [ :a :b | | t | t := a. b ] )"
);
snapshot!(
    block_reads_method_temp,
    "foo = ( | t | t := 1. ^[ t + 1 ] )"
);
snapshot!(
    block_in_block_reads_method_temp,
    "foo = ( | t | ^[ [ t ] ] )"
);
snapshot!(
    inner_block_writes_middle_block_var,
    "foo = ( | m | ^[ :x | | y | [ y := x + m ]. y ] )"
);
snapshot!(captured_argument, "foo: a bar: b = ( ^[ b + a ] )");
snapshot!(non_local_return, "foo = ( #(1 2) do: [ :e | ^e ]. ^nil )");
snapshot!(
    non_local_return_from_doubly_nested_block,
    "foo = ( ^[ [ ^1 ] ] )"
);
snapshot!(
    env_depth_skips_scopes_without_env,
    "foo = ( | a | ^[ :x | x foo. [ :y | | b | [ a + b + y ] ] ] )"
);
snapshot!(block_writes_field_and_self, "foo = ( ^[ first := self ] )");
snapshot!(block_returns_value_of_last_statement, "foo = ( ^[ 1. 2 ] )");

// ----- inlining --------------------------------------------------------------

snapshot!(if_true_value, "foo: c = ( ^c ifTrue: [ 1 ] )");
snapshot!(if_true_effect, "foo: c = ( c ifTrue: [ self bar ]. ^1 )");
snapshot!(if_false_value, "foo: c = ( ^c ifFalse: [ 1 ] )");
snapshot!(if_false_effect, "foo: c = ( c ifFalse: [ self bar ] )");
snapshot!(
    if_true_if_false,
    "foo: c = ( ^c ifTrue: [ 1 ] ifFalse: [ 2 ] )"
);
snapshot!(
    if_false_if_true,
    "foo: c = ( c ifFalse: [ self a ] ifTrue: [ self b ] )"
);
snapshot!(
    if_with_empty_branches,
    "foo: c = ( ^c ifTrue: [ ] ifFalse: [ ] )"
);
snapshot!(
    if_with_returns,
    "foo: c = ( c ifTrue: [ ^1 ] ifFalse: [ ^2 ] )"
);
snapshot!(
    if_in_block_returns_non_local,
    "foo: c = ( ^[ c ifTrue: [ ^1 ]. 2 ] )"
);
snapshot!(
    and_or,
    "foo: a = ( ^Array with: (a and: [ a foo ]) with: (a or: [ a bar ]) )"
);
snapshot!(
    and_or_operators,
    "foo: a = ( ^(a && [ a foo ]) || [ a bar ] )"
);
snapshot!(and_effect, "foo: a = ( a and: [ a foo ]. a or: [ a bar ] )");
snapshot!(
    logic_with_non_block_argument_is_a_send,
    "foo: a = ( ^(a < 1) && (a > 2) )"
);
snapshot!(
    while_true,
    "foo = ( | i | i := 0. [ i < 10 ] whileTrue: [ i := i + 1 ]. ^i )"
);
snapshot!(
    while_false_value,
    "foo = ( ^[ self done ] whileFalse: [ self step ] )"
);
snapshot!(
    unary_while,
    "foo = ( [ self step ] whileTrue. [ self step ] whileFalse )"
);
snapshot!(
    while_with_complex_condition,
    "foo = ( [ | t | t := self next. t notNil ] whileTrue: [ | u | u := 1 ] )"
);
snapshot!(if_nil, "foo: x = ( x ifNil: [ self a ]. ^x ifNil: [ 1 ] )");
snapshot!(
    if_not_nil,
    "foo: x = ( x ifNotNil: [ self a ]. x ifNotNil: [ :v | self b: v ]. ^x ifNotNil: [ :v | v + 1 ] )"
);
snapshot!(
    if_not_nil_without_param_value,
    "foo: x = ( ^x ifNotNil: [ 1 ] )"
);
snapshot!(
    if_nil_if_not_nil,
    "foo: x = ( ^x ifNil: [ 0 ] ifNotNil: [ :v | v + 1 ] )"
);
snapshot!(
    if_not_nil_if_nil,
    "foo: x = ( x ifNotNil: [ self a ] ifNil: [ self b ] )"
);
snapshot!(
    to_do,
    "foo = ( | sum | sum := 0. 1 to: 10 do: [ :i | sum := sum + i ]. ^sum )"
);
snapshot!(
    to_do_value,
    "foo: n = ( ^1 to: n do: [ :i | self bar: i ] )"
);
snapshot!(
    to_by_do,
    "foo = ( 1 to: 10 by: 2 do: [ :i | self bar: i ]. 10 to: 1 by: -3 do: [ :i | self bar: i ] )"
);
snapshot!(
    down_to_do,
    "foo = ( 10 downTo: 1 do: [ :i | self bar: i ] )"
);
snapshot!(
    to_do_with_captured_parameter,
    "foo = ( | blocks | 1 to: 3 do: [ :i | blocks add: [ i ] ] )"
);
snapshot!(
    to_do_capturing_outer_variables_is_inlined,
    "foo: c = ( | sum blocks | 1 to: 3 do: [ :i | blocks add: [ sum ]. c do: [ :e | sum := sum + e ] ]. ^sum )"
);
snapshot!(
    to_do_with_captured_local,
    "foo = ( | blocks | 1 to: 3 do: [ :i | | t | t := i. blocks add: [ t ] ] )"
);
snapshot!(
    to_do_with_captured_local_of_inlined_if,
    "foo = ( | blocks | 1 to: 3 do: [ :i | i > 1 ifTrue: [ | t | t := i. blocks add: [ t ] ] ] )"
);
snapshot!(
    nested_to_do_capturing_inner_parameter,
    "foo = ( | blocks | 1 to: 3 do: [ :i | 1 to: i do: [ :j | blocks add: [ j ] ] ] )"
);
snapshot!(
    nested_to_do_capturing_both_parameters,
    "foo = ( | blocks | 1 to: 3 do: [ :i | 1 to: 3 do: [ :j | blocks add: [ i + j ] ] ] )"
);
snapshot!(
    loop_in_block_capturing_outer_loop_parameter,
    "foo = ( | blocks | 10 downTo: 1 do: [ :i | blocks add: [ 1 to: i by: 2 do: [ :j | self bar: j ] ] ] )"
);
snapshot!(
    while_with_captured_body_local,
    "foo = ( | blocks | [ blocks size < 3 ] whileTrue: [ | t | t := blocks size. blocks add: [ t ] ] )"
);
snapshot!(
    while_with_captured_condition_local,
    "foo = ( | blocks | [ | t | t := self next. blocks add: [ t ]. t notNil ] whileFalse )"
);
snapshot!(
    times_repeat_with_captured_local,
    "foo = ( | blocks | ^3 timesRepeat: [ | t | t := blocks size. blocks add: [ t ] ] )"
);
snapshot!(
    to_do_with_assigned_parameter,
    "foo = ( 1 to: 3 do: [ :i | i := i * 2. self bar: i ] )"
);
snapshot!(
    to_do_unused_parameter,
    "foo = ( 1 to: 3 do: [ :i | self bar ] )"
);
snapshot!(
    nested_to_do,
    "foo = ( 1 to: 3 do: [ :i | 1 to: i do: [ :j | self bar: i with: j ] ] )"
);
snapshot!(
    times_repeat,
    "foo = ( 3 timesRepeat: [ self bar ]. ^5 timesRepeat: [ ] )"
);
snapshot!(
    inlined_locals_reset_in_loops,
    "foo = ( | b | 1 to: 3 do: [ :i | | t | t isNil ifTrue: [ | u | u := i ]. t := i ]. b ifTrue: [ | v | v := 1 ] )"
);
snapshot!(
    inlined_local_captured_by_block,
    "foo = ( ^true ifTrue: [ | t | t := 1. [ t ] ] )"
);
snapshot!(
    loop_in_block_in_loop,
    "foo = ( [ self a ] whileTrue: [ #(1) do: [ :e | [ e foo ] whileTrue ] ] )"
);
snapshot!(
    not_inlined_when_arguments_are_not_literal_blocks,
    "foo: b = ( ^Array with: (self ifTrue: b) with: (b whileTrue: [ 1 ]) with: ([ 1 ] whileTrue: b) with: (1 to: 2 do: b) with: (1 to: 5 by: self step do: [ :i | i ]) with: (1 to: 5 by: 0 do: [ :i | i ]) )"
);
snapshot!(
    not_inlined_when_block_arity_is_wrong,
    "foo: b = ( ^Array with: (b ifTrue: [ :x | x ]) with: (1 to: 2 do: [ 1 ]) with: (b ifNil: [ :x | x ]) with: ([ :x | x ] whileTrue: [ 1 ]) with: (3 timesRepeat: [ :x | x ]) )"
);
snapshot!(
    super_receiver_is_never_inlined,
    "foo = ( ^super ifTrue: [ 1 ] )"
);

// ----- direct assertions -------------------------------------------------------

#[test]
fn value_of_missing_if_branch_is_nil_and_inlined_jumps_are_marked() {
    let c = compile("foo: c = ( ^c ifTrue: [ 1 ] )");
    assert_eq!(
        c.code,
        vec![
            Op::PushLocal(0),
            Op::JumpIfFalse {
                target: 4,
                inlined: true
            },
            Op::PushInt(1),
            Op::Jump(5),
            Op::PushNil,
            Op::ReturnTop,
        ]
    );
}

#[test]
fn every_backward_jump_is_a_jump_back_or_for_incr() {
    let c = compile(
        "foo = ( [ [ self a ] whileFalse: [ self b ] ] whileTrue: [ 1 to: 3 do: [ :i | self c ] ] )",
    );
    for (pc, op) in c.code.iter().enumerate() {
        match *op {
            Op::Jump(t)
            | Op::JumpIfTrue { target: t, .. }
            | Op::JumpIfFalse { target: t, .. }
            | Op::JumpIfNil { target: t, .. }
            | Op::JumpIfNotNil { target: t, .. }
            | Op::ForTest { exit: t, .. } => assert!(t as usize > pc, "{op:?} at {pc}"),
            Op::JumpBack(t) | Op::ForIncr { target: t, .. } => assert!(t as usize <= pc),
            _ => {}
        }
    }
}

fn has_for_test(c: &CompiledCode) -> bool {
    c.code.iter().any(|op| matches!(op, Op::ForTest { .. }))
}

fn has_jump_back(c: &CompiledCode) -> bool {
    c.code.iter().any(|op| matches!(op, Op::JumpBack(_)))
}

#[test]
fn loops_are_inlined_unless_a_block_captures_a_per_iteration_variable() {
    // Nothing captured, or only variables declared outside the loop: inlined.
    for src in [
        "foo = ( | s | 1 to: 3 do: [ :i | s := i ] )",
        "foo = ( 1 to: 3 do: [ :i | | t | t := i. self bar: t ] )",
        "foo: c = ( | s | 1 to: 3 do: [ :i | c do: [ :e | s := e ] ] )",
        "foo: c = ( | s | 3 timesRepeat: [ c add: [ s ] ] )",
        "foo: c = ( 1 to: 3 do: [ :i | c add: [ :x | | t | t := x. [ t ] ] ] )",
    ] {
        let c = compile(src);
        assert!(has_for_test(&c), "{src}\n{}", disassemble(&c));
    }
    for src in [
        "foo = ( | i | [ i < 3 ] whileTrue: [ i := i + 1 ] )",
        "foo: c = ( | i | [ c add: [ i ]. i < 3 ] whileTrue: [ | t | t := i. c add: [ :x | x + i ] ] )",
    ] {
        let c = compile(src);
        assert!(has_jump_back(&c), "{src}\n{}", disassemble(&c));
    }
    // A captured parameter, local, or local of a block inlined in the body or
    // condition: each iteration needs its own variable, so no inlining.
    for src in [
        "foo: c = ( 1 to: 3 do: [ :i | c add: [ i ] ] )",
        "foo: c = ( 3 downTo: 1 do: [ :i | c add: [ i ] ] )",
        "foo: c = ( 1 to: 9 by: 2 do: [ :i | c add: [ i ] ] )",
        "foo: c = ( 1 to: 3 do: [ :i | | t | t := i. c add: [ t ] ] )",
        "foo: c = ( 1 to: 3 do: [ :i | c ifNotNil: [ :d | d add: [ d ] ] ] )",
        "foo: c = ( 3 timesRepeat: [ | t | c add: [ t ] ] )",
    ] {
        let c = compile(src);
        assert!(!has_for_test(&c), "{src}\n{}", disassemble(&c));
        assert_eq!(c.blocks.len(), 1, "{src}");
    }
    for src in [
        "foo: c = ( [ c notEmpty ] whileTrue: [ | t | t := c removeFirst. c add: [ t ] ] )",
        "foo: c = ( [ | t | t := c removeFirst. c add: [ t ]. t ] whileFalse )",
        "foo: c = ( [ c notEmpty ] whileTrue: [ c first ifTrue: [ | t | c add: [ t ] ] ] )",
    ] {
        let c = compile(src);
        assert!(!has_jump_back(&c), "{src}\n{}", disassemble(&c));
    }
}

#[test]
fn captured_loop_variables_do_not_make_compilation_exponential() {
    // Every loop but the innermost is refused because of the capture of its
    // parameter; without remembering refusals this would lower the innermost
    // body 2^40 times.
    let n = 40;
    let mut src = String::from("foo: c = ( ");
    for i in 0..n {
        src.push_str(&format!("1 to: 2 do: [ :i{i} | "));
    }
    src.push_str("c add: [ i0");
    for i in 1..n {
        src.push_str(&format!(" + i{i}"));
    }
    src.push_str(" ]");
    src.push_str(&" ]".repeat(n));
    src.push_str(" )");
    let c = compile(&src);
    assert!(!has_for_test(&c));
    // The method makes one block (the body of the outermost loop), and so on down.
    let mut b = &c;
    for _ in 0..n {
        assert_eq!(b.blocks.len(), 1);
        b = &b.blocks[0];
    }
}

#[test]
fn max_stack_counts_operands_and_fallback_slots() {
    assert_eq!(compile("foo = ( )").max_stack, 0);
    assert_eq!(compile("foo = ( ^1 )").max_stack, 1);
    assert_eq!(compile("foo = ( ^1 + 2 )").max_stack, 2);
    assert_eq!(
        compile("foo = ( ^self a: 1 b: (self c: 2 d: 3) )").max_stack,
        5
    );
    // An unknown global may send `unknownGlobal:` (self and the symbol).
    assert_eq!(compile("foo = ( ^Foo )").max_stack, 2);
    // The receiver of a to:do: stays on the stack; the loop test may send `>`.
    assert_eq!(compile("foo = ( ^1 to: 2 do: [ :i | ] )").max_stack, 3);
}

#[test]
fn method_home_of_non_local_return_needs_env() {
    assert!(compile("foo = ( ^[ ^1 ] )").needs_env);
    assert!(!compile("foo = ( ^[ 1 ] )").needs_env);
    // `^` inside a block inlined into the method is a local return.
    assert!(!compile("foo: c = ( c ifTrue: [ ^1 ]. 1 to: 2 do: [ :i | ^i ] )").needs_env);
}

#[test]
fn send_sites_are_numbered_per_code_unit() {
    let c = compile("foo = ( self a. ^[ self b. self c ] )");
    assert_eq!(c.num_send_sites, 1);
    assert_eq!(c.blocks[0].num_send_sites, 2);
}

#[test]
fn assignment_errors() {
    assert_eq!(
        compile_error("foo = ( Foo := 1 )"),
        "cannot assign to 'Foo': no such variable or field"
    );
    assert_eq!(
        compile_error("foo = ( [ thisContext := 1 ] )"),
        "cannot assign to 'thisContext': no such variable or field"
    );
}

#[test]
fn the_deepest_methods_the_parser_accepts_compile() {
    let n = lupa_syntax::MAX_EXPR_DEPTH as usize - 2;
    let chain = format!("foo = ( ^{}1 )", "1 + ".repeat(n));
    assert_eq!(compile(&chain).max_stack, 2);
    let m = (n / 3).min(lupa_syntax::MAX_NESTING as usize - 2);
    let blocks = format!("foo = ( ^{}1{} )", "[ ".repeat(m), " ]".repeat(m));
    assert_eq!(compile(&blocks).blocks.len(), 1);
    let ifs = format!(
        "foo: c = ( ^{}1{} )",
        "c ifTrue: [ ".repeat(m),
        " ]".repeat(m)
    );
    assert!(compile(&ifs).blocks.is_empty());
}
