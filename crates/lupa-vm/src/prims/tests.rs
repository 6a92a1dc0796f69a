//! Unit tests of the primitive contract: a wrong argument is a
//! `PrimFailure::WrongArg` naming the argument and the expected kind, the other
//! failure kinds and messages stay what the class library relies on, and `?` on
//! allocation and decoding leaves the stack as it was.

use super::{Args, Expected, PrimFailure, PrimResult, Reply};
use crate::vm::{Vm, VmOptions};
use lupa_heap::Value;

fn vm() -> Vm {
    Vm::new(VmOptions::default()).expect("vm boots")
}

/// Call primitive `class>>selector` on `receiver_and_args` pushed on the stack.
fn call(vm: &mut Vm, class: &str, selector: &str, receiver_and_args: &[Value]) -> PrimResult {
    let f = super::function(
        vm.image
            .find_primitive(class, selector)
            .expect("primitive registered"),
    );
    let depth = vm.sched.running.stack.len();
    vm.sched.running.stack.extend_from_slice(receiver_and_args);
    let r = f(vm, Args::new(receiver_and_args.len() - 1));
    if r.is_err() {
        assert_eq!(
            vm.sched.running.stack.len(),
            depth + receiver_and_args.len(),
            "a failing primitive leaves the stack as it was"
        );
    }
    vm.sched.running.stack.truncate(depth);
    r
}

fn answer(r: PrimResult) -> Value {
    match r {
        Ok(Reply::Answer(v)) => v,
        other => panic!("expected an answer, got {other:?}"),
    }
}

#[test]
fn array_at_answers_and_names_a_wrong_index() {
    let mut vm = vm();
    let a = vm
        .new_array(&[Value::small(7), Value::small(8)])
        .expect("alloc");
    let v = answer(call(&mut vm, "Array", "at:", &[a, Value::small(2)]));
    assert_eq!(v, Value::small(8));
    let s = vm.new_string("x").expect("alloc");
    match call(&mut vm, "Array", "at:", &[a, s]) {
        Err(PrimFailure::WrongArg { index, expected }) => {
            assert_eq!((index, expected), (1, Expected::SmallInteger));
        }
        other => panic!("expected WrongArg, got {other:?}"),
    }
    match call(&mut vm, "Array", "at:", &[Value::small(3), Value::small(1)]) {
        Err(PrimFailure::WrongArg { index, expected }) => {
            assert_eq!((index, expected), (0, Expected::Indexable));
        }
        other => panic!("expected WrongArg, got {other:?}"),
    }
}

#[test]
fn out_of_bounds_keeps_its_message() {
    let mut vm = vm();
    let a = vm.new_array(&[Value::NIL]).expect("alloc");
    match call(
        &mut vm,
        "Array",
        "at:put:",
        &[a, Value::small(5), Value::NIL],
    ) {
        Err(PrimFailure::Error(m)) => {
            assert_eq!(m, "Index 5 not valid for array of length 1.");
        }
        other => panic!("expected Error, got {other:?}"),
    }
}

#[test]
fn integer_primitives_fail_on_non_numbers_and_divide_by_zero_with_a_message() {
    let mut vm = vm();
    let s = vm.new_string("x").expect("alloc");
    match call(&mut vm, "Integer", "+", &[Value::small(1), s]) {
        Err(PrimFailure::WrongArg { index, expected }) => {
            assert_eq!((index, expected), (1, Expected::Number));
        }
        other => panic!("expected WrongArg, got {other:?}"),
    }
    // = and ~= answer instead of failing.
    let v = answer(call(&mut vm, "Integer", "=", &[Value::small(1), s]));
    assert_eq!(v, Value::FALSE);
    match call(&mut vm, "Integer", "/", &[Value::small(1), Value::small(0)]) {
        Err(PrimFailure::Error(m)) => assert_eq!(m, "Division by zero."),
        other => panic!("expected Error, got {other:?}"),
    }
    let v = answer(call(
        &mut vm,
        "Integer",
        "*",
        &[Value::small(1 << 40), Value::small(1 << 40)],
    ));
    assert!(v.is_ptr(), "overflow makes a large integer");
}

#[test]
fn decoders_that_report_with_a_message_keep_it() {
    let mut vm = vm();
    let m = answer(call(&mut vm, "Object", "class", &[Value::small(1)]));
    let sel = vm.image.symbol(&mut vm.heap, "foo").expect("alloc");
    // Method>>copyFor:selector: given a non-class: an error with the old message.
    let code = vm.image.methods[0].object.get();
    match call(
        &mut vm,
        "Method",
        "copyFor:selector:",
        &[code, Value::small(1), sel],
    ) {
        Err(PrimFailure::Error(msg)) => assert_eq!(msg, "copyFor:selector: needs a class"),
        other => panic!("expected Error, got {other:?}"),
    }
    // An Integer primitive run on a non-Integer receiver (as `perform:inSuperclass:`
    // can do) names the receiver.
    match call(&mut vm, "Integer", "printString:", &[m, Value::small(2)]) {
        Err(PrimFailure::WrongArg { index, expected }) => {
            assert_eq!((index, expected), (0, Expected::Integer));
        }
        other => panic!("expected WrongArg, got {other:?}"),
    }
}

#[test]
fn wrong_arg_displays_what_was_expected() {
    assert_eq!(Expected::SmallInteger.to_string(), "a SmallInteger");
    assert_eq!(
        Expected::Frame.to_string(),
        "a frame (from Context currentFrame or senderOf:)"
    );
}

/// The primitives `docs/primitives.md` lists in its index: `(class, selector)`.
fn documented_primitives() -> std::collections::BTreeSet<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/primitives.md");
    let text = std::fs::read_to_string(path).expect("docs/primitives.md is readable");
    let index = text
        .split("## Index of primitives")
        .nth(1)
        .expect("docs/primitives.md has an `Index of primitives` section");
    let mut out = std::collections::BTreeSet::new();
    for line in index.lines() {
        // - `Class`: `sel1` `sel2` ...
        let Some(rest) = line.strip_prefix("- ") else {
            continue;
        };
        let mut names = rest.split('`').skip(1).step_by(2);
        let Some(class) = names.next() else {
            continue;
        };
        for sel in names {
            out.insert((class.to_string(), sel.to_string()));
        }
    }
    out
}

#[test]
fn every_primitive_is_documented_and_nothing_else() {
    let bound: std::collections::BTreeSet<(String, String)> = super::bindings()
        .map(|(c, s, _)| (c.to_string(), s.to_string()))
        .collect();
    let documented = documented_primitives();
    let undocumented: Vec<_> = bound.difference(&documented).collect();
    let missing: Vec<_> = documented.difference(&bound).collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "docs/primitives.md's index and the primitive tables differ:\n  \
         primitives missing from the index: {undocumented:?}\n  \
         documented but not primitives: {missing:?}"
    );
}

#[test]
fn no_primitive_is_bound_twice() {
    let mut seen = std::collections::HashSet::new();
    for (c, s, _) in super::bindings() {
        assert!(seen.insert((c, s)), "{c}>>{s} is bound twice");
    }
}

#[test]
fn bitwise_operations_take_integers_only() {
    let mut vm = vm();
    let d = vm.new_double(1.1).expect("alloc");
    let s = vm.new_string("a").expect("alloc");
    for sel in ["&", "bitOr:", "bitXor:"] {
        for arg in [d, s] {
            match call(&mut vm, "Integer", sel, &[Value::small(1), arg]) {
                Err(PrimFailure::WrongArg { index, expected }) => {
                    assert_eq!((index, expected), (1, Expected::Integer), "{sel}");
                }
                other => panic!("expected WrongArg from {sel}, got {other:?}"),
            }
        }
    }
}

#[test]
fn exit_refuses_a_status_that_is_not_a_32_bit_integer() {
    let mut vm = vm();
    let sys = vm.image.system_object;
    let d = vm.new_double(42.0).expect("alloc");
    match call(&mut vm, "System", "exit:", &[sys, d]) {
        Err(PrimFailure::WrongArg { index, expected }) => {
            assert_eq!((index, expected), (1, Expected::Integer));
        }
        other => panic!("expected WrongArg, got {other:?}"),
    }
    match call(&mut vm, "System", "exit:", &[sys, Value::small(1 << 40)]) {
        Err(PrimFailure::Error(m)) => assert_eq!(
            m,
            "system exit: 1099511627776 is not a valid exit status (it must fit in 32 bits)"
        ),
        other => panic!("expected Error, got {other:?}"),
    }
}

/// A receiver and arguments on which allocator `class>>selector` answers a
/// new object, or `None` for a primitive this test does not know (which
/// fails the test: every allocator needs a case here).
fn allocator_case(vm: &mut Vm, class: &str, selector: &str, file: &str) -> Option<Vec<Value>> {
    let oom = "allocates";
    let class_of = |vm: &mut Vm, name: &str| vm.class_named(name).expect("class loads");
    let array = |vm: &mut Vm| {
        vm.new_array(&[Value::small(1), Value::small(2), Value::small(3)])
            .expect(oom)
    };
    let string = |vm: &mut Vm| vm.new_string("abcdef").expect(oom);
    let method = |vm: &mut Vm| {
        let sel = vm.image.symbols.lookup("at:").expect("at: is a symbol");
        vm.image.classes[super::super::objects::cls::ARRAY as usize]
            .methods
            .get(&sel)
            .copied()
            .expect("Array>>at:")
    };
    let system = vm.image.system_object;
    Some(match (class, selector) {
        ("Array", "copyFrom:to:") => vec![array(vm), Value::small(2), Value::small(3)],
        ("WeakArray", "copyFrom:to:") => {
            let weak = class_of(vm, "WeakArray");
            let w = answer(call(
                vm,
                "WeakArray class",
                "new:",
                &[weak, Value::small(3)],
            ));
            vec![w, Value::small(1), Value::small(2)]
        }
        ("Array class", "new:") => vec![class_of(vm, "Array"), Value::small(4)],
        ("WeakArray class", "new:") => vec![class_of(vm, "WeakArray"), Value::small(4)],
        ("Class", "new:") => vec![class_of(vm, "Array"), Value::small(4)],
        ("Array class", "new:withAll:") => {
            vec![class_of(vm, "Array"), Value::small(4), Value::small(7)]
        }
        ("Class", "new") => vec![class_of(vm, "Object")],
        ("Class", "fields" | "category" | "packageLocation" | "subclasses") => {
            vec![class_of(vm, "Object")]
        }
        ("Class class", "allClasses") => vec![class_of(vm, "Class")],
        ("System", "loadedClasses" | "arguments" | "classPath") => vec![system],
        ("System", "gcStatNames" | "gcStatValues" | "gcStats") => vec![system],
        ("System", "classNamesInPackage:") => {
            let package = vm.new_string("Kernel").expect(oom);
            vec![system, package]
        }
        ("System", "loadFile:") => {
            let path = vm.new_string(file).expect(oom);
            vec![system, path]
        }
        ("Object", "shallowCopy") => vec![array(vm)],
        ("String", "concatenate:") => {
            let (a, b) = (string(vm), string(vm));
            vec![a, b]
        }
        ("String", "asString") => vec![string(vm)],
        ("String", "primSubstringFrom:to:") => {
            vec![string(vm), Value::small(2), Value::small(4)]
        }
        ("String", "charAt:") => vec![string(vm), Value::small(2)],
        ("Symbol", "asString") => vec![vm.image.symbol(&mut vm.heap, "abc").expect(oom)],
        ("String class", "new:") => vec![class_of(vm, "String"), Value::small(5)],
        ("Integer", "asString" | "printString" | "asCharacterString") => vec![Value::small(65)],
        ("Integer", "printString:") => vec![Value::small(65), Value::small(16)],
        ("Double", "asString" | "printString") => vec![vm.new_double(1.5).expect(oom)],
        ("File class", "primReadLine:") => {
            let file_class = class_of(vm, "File");
            let path = vm.new_string(file).expect(oom);
            let h = answer(call(vm, "File class", "primOpenRead:", &[file_class, path]));
            vec![file_class, h]
        }
        ("File class", "primRead:count:") => {
            let file_class = class_of(vm, "File");
            let path = vm.new_string(file).expect(oom);
            let h = answer(call(vm, "File class", "primOpenRead:", &[file_class, path]));
            vec![file_class, h, Value::small(3)]
        }
        ("File class", "temporaryPath:") => {
            let file_class = class_of(vm, "File");
            let name = vm.new_string("x").expect(oom);
            vec![file_class, name]
        }
        ("Semaphore class", "new") => vec![class_of(vm, "Semaphore")],
        ("Method" | "Primitive", "pragmas" | "sourceCode") => vec![method(vm)],
        _ => return None,
    })
}

/// Every primitive marked `.allocating()` answers an object it has just made:
/// a heap object, none of its inputs, and the heap counted a new allocation.
/// Illimani's faithful mode records what these answer (`System>>allocatingMethods`).
#[test]
fn every_allocator_allocates() {
    let mut vm = vm();
    let path = std::env::temp_dir().join(format!("lupa-{}-allocators.txt", std::process::id()));
    std::fs::write(&path, "alpha\nbeta\n").expect("written");
    let file = path.display().to_string();
    let allocators: Vec<_> = super::allocating_bindings().collect();
    assert!(allocators.len() > 30, "{} allocators", allocators.len());
    for (class, selector, _) in allocators {
        let Some(inputs) = allocator_case(&mut vm, class, selector, &file) else {
            panic!("no case for the allocator {class}>>{selector}: add one to allocator_case");
        };
        let before = vm.heap.stats().allocated_objects;
        let v = answer(call(&mut vm, class, selector, &inputs));
        assert!(v.is_ptr(), "{class}>>{selector} answered an immediate");
        assert!(
            !inputs.contains(&v),
            "{class}>>{selector} answered an input"
        );
        assert!(
            vm.heap.stats().allocated_objects > before,
            "{class}>>{selector} allocated nothing"
        );
    }
    let _ = std::fs::remove_file(&path);
}

/// `System>>allocatingMethods` answers the methods bound to allocators:
/// `Array>>copyFrom:to:` and `File class>>primReadLine:` (its class loaded on
/// the way), not `Array>>at:`.
#[test]
fn allocating_methods_are_the_methods_bound_to_allocators() {
    let mut vm = vm();
    let system = vm.image.system_object;
    let methods = answer(call(&mut vm, "System", "allocatingMethods", &[system]));
    let names: Vec<String> = (0..vm.heap.size(methods))
        .filter_map(|i| vm.image.method_code_of(&vm.heap, vm.heap.slot(methods, i)))
        .map(|code| {
            let holder = &vm.image.classes[code.holder.get() as usize].name;
            let selector = vm.image.symbols.name(code.selector).to_string();
            format!("{holder}>>{selector}")
        })
        .collect();
    for expected in [
        "Array>>copyFrom:to:",
        "Array class>>new:",
        "String>>concatenate:",
        "Object>>shallowCopy",
        "File class>>primReadLine:",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n == "Array>>at:"), "{names:?}");
}

/// Leaves (`Primitive::leaf`, which native code calls without the send
/// path) only in the modules whose primitives answer a value or fail: none
/// among those that send, activate, switch processes, unwind, reflect on
/// methods and frames, or observe.
#[test]
fn leaf_primitives_are_only_those_that_answer() {
    use super::{MODULES, array, boolean, class, double, integer, object, string};
    let answering: [&[super::Primitive]; 7] = [
        object::PRIMITIVES,
        class::PRIMITIVES,
        integer::PRIMITIVES,
        double::PRIMITIVES,
        string::PRIMITIVES,
        array::PRIMITIVES,
        boolean::PRIMITIVES,
    ];
    let mut leaves = 0;
    for table in MODULES {
        let allowed = answering.iter().any(|t| std::ptr::eq(*t, *table));
        for p in table.iter().filter(|p| p.leaf) {
            assert!(allowed, "{:?} >> {} is a leaf", p.classes, p.selector);
            leaves += 1;
        }
    }
    assert!(leaves > 100, "{leaves} leaves");
    // Reflection and debugging primitives of those modules are not leaves.
    for (table, selector) in [
        (object::PRIMITIVES, "halt"),
        (object::PRIMITIVES, "inspect"),
        (object::PRIMITIVES, "respondsTo:"),
        (class::PRIMITIVES, "methodAt:put:"),
        (class::PRIMITIVES, "compile:"),
    ] {
        let p = table.iter().find(|p| p.selector == selector);
        assert!(p.is_some_and(|p| !p.leaf), "{selector}");
    }
}
