//! The `perform:` family: a send whose selector (and arguments) are values.
//!
//! Each primitive checks the selector and the argument count against the
//! selector's spelling, rearranges the stack into `receiver arg1 ... argN` and
//! dispatches a normal send from there (counted as one send), so it answers
//! [`Prim::Done`]: the result arrives when the sent method returns.

use super::arg;
use crate::interp::Prim;
use crate::objects::cls;
use crate::vm::Vm;
use lupa_heap::Value;

/// perform: family. Rearranges the stack into a normal send.
fn perform_generic(vm: &mut Vm, argc: usize, with_args: bool, in_super: bool) -> Prim {
    let sel = arg(vm, argc, 1);
    let Some(id) = vm.symbol_id(sel) else {
        return Prim::Error("perform: needs a Symbol as selector".into());
    };
    let mut args: Vec<Value> = Vec::new();
    if with_args {
        let a = arg(vm, argc, 2);
        if !(a.is_ptr() && vm.heap.class_index(a) == cls::ARRAY) {
            return Prim::Error("perform:withArguments: needs an Array of arguments".into());
        }
        args = (0..vm.heap.size(a)).map(|i| vm.heap.slot(a, i)).collect();
    } else {
        let mut k = 2;
        while k <= argc && !(in_super && k == argc) {
            args.push(arg(vm, argc, k));
            k += 1;
        }
    }
    let start_class = if in_super {
        let c = arg(vm, argc, argc);
        match vm.class_index_of_object(c) {
            Some(c) => c,
            None => return Prim::Error("perform:inSuperclass: needs a class".into()),
        }
    } else {
        vm.class_of(arg(vm, argc, 0))
    };
    let sel_name = vm.symbols.name(id).to_string();
    let expected = selector_arity(&sel_name);
    if expected != args.len() {
        return Prim::Error(format!(
            "wrong number of arguments for #{sel_name}: expected {expected}, got {}",
            args.len()
        ));
    }
    let recv = arg(vm, argc, 0);
    let n = vm.stack.len() - argc - 1;
    vm.stack.truncate(n);
    vm.stack.push(recv);
    vm.stack.extend_from_slice(&args);
    if crate::interp::OBSERVE {
        vm.obs.sends += 1;
    }
    match vm.dispatch_in(start_class, id, args.len(), None) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

/// Number of arguments a selector takes, from its spelling (a hidden selector's
/// leading U+0001 is ignored).
pub(crate) fn selector_arity(name: &str) -> usize {
    let name = name.strip_prefix('\u{1}').unwrap_or(name);
    let colons = name.matches(':').count();
    if colons > 0 {
        colons
    } else {
        usize::from(
            name.chars()
                .next()
                .is_some_and(|c| !c.is_alphanumeric() && c != '_'),
        )
    }
}

fn perform(vm: &mut Vm, argc: usize) -> Prim {
    perform_generic(vm, argc, false, false)
}
fn perform_with_args(vm: &mut Vm, argc: usize) -> Prim {
    perform_generic(vm, argc, true, false)
}
fn perform_in_super(vm: &mut Vm, argc: usize) -> Prim {
    perform_generic(vm, argc, false, true)
}
fn perform_with_args_in_super(vm: &mut Vm, argc: usize) -> Prim {
    perform_generic(vm, argc, true, true)
}

pub(crate) fn register(vm: &mut Vm) {
    let table: &[(&'static str, crate::objects::PrimFn)] = &[
        ("perform:", perform),
        ("perform:with:", perform),
        ("perform:with:with:", perform),
        ("perform:with:with:with:", perform),
        ("perform:withArguments:", perform_with_args),
        ("perform:inSuperclass:", perform_in_super),
        (
            "perform:withArguments:inSuperclass:",
            perform_with_args_in_super,
        ),
    ];
    for (sel, f) in table {
        vm.register("Object", sel, *f);
    }
}
