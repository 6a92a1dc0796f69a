//! The `perform:` family: a send whose selector (and arguments) are values.
//!
//! Each primitive checks the selector and the argument count against the
//! selector's spelling, rearranges the stack into `receiver arg1 ... argN` and
//! dispatches a normal send from there (counted as one send), so it answers
//! [`Reply::Done`](super::Reply::Done): the result arrives when the sent method returns.

use super::Primitive;
use super::outcome::Reply::Done;
use super::outcome::{OrError, PrimFailure};
use super::{Args, PrimResult};
use crate::vm::{Lookup, Vm};
use lupa_heap::Value;

/// perform: family. Rearranges the stack into a normal send.
fn perform_generic(vm: &mut Vm, args: Args, with_args: bool, in_super: bool) -> PrimResult {
    let argc = args.count();
    let id = args.symbol_named(vm, 1)?;
    let arguments: Vec<Value> = if with_args {
        args.array_elements(vm, 2)
            .or_error("perform:withArguments: needs an Array of arguments")?
    } else {
        let last = if in_super {
            argc.saturating_sub(1)
        } else {
            argc
        };
        (2..=last).map(|k| args.get(vm, k)).collect()
    };
    let start_class = if in_super {
        args.class(vm, argc)
            .or_error("perform:inSuperclass: needs a class")?
    } else {
        vm.class_of(args.receiver(vm))
    };
    let sel_name = vm.image.symbols.name(id).to_string();
    let expected = crate::image::selector_arity(&sel_name);
    if expected != arguments.len() {
        return Err(PrimFailure::Error(format!(
            "wrong number of arguments for #{sel_name}: expected {expected}, got {}",
            arguments.len()
        )));
    }
    let recv = args.receiver(vm);
    if in_super {
        superclass_problem(vm, recv, start_class, id, with_args)?;
    }
    let n = vm.sched.running.stack.len() - argc - 1;
    vm.sched.running.stack.truncate(n);
    vm.sched.running.stack.push(recv);
    vm.sched.running.stack.extend_from_slice(&arguments);
    vm.note_prim_send();
    vm.dispatch_in(start_class, id, arguments.len(), None)
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

/// `perform:inSuperclass:` starts the lookup in any class: when `recv` is
/// not an instance of it (or of a subclass), the method found must fit
/// `recv` as `invokeOn:with:` requires ([`super::method::invocation_problem`]);
/// a lookup in one of the receiver's own superclasses always finds one that does.
fn superclass_problem(
    vm: &mut Vm,
    recv: Value,
    start: u32,
    sel: u32,
    with_args: bool,
) -> Result<(), PrimFailure> {
    if vm.image.is_kind_of(vm.class_of(recv), start) {
        return Ok(());
    }
    let Lookup::Method(m) = vm.image.lookup(&vm.heap, start, sel) else {
        return Ok(());
    };
    let code = vm.image.code(m).clone();
    match super::method::invocation_problem(vm, &code, recv) {
        Some(problem) => Err(PrimFailure::Error(format!(
            "{} {problem}",
            if with_args {
                "perform:withArguments:inSuperclass:"
            } else {
                "perform:inSuperclass:"
            }
        ))),
        None => Ok(()),
    }
}

fn perform(vm: &mut Vm, args: Args) -> PrimResult {
    perform_generic(vm, args, false, false)
}
fn perform_with_args(vm: &mut Vm, args: Args) -> PrimResult {
    perform_generic(vm, args, true, false)
}
fn perform_in_super(vm: &mut Vm, args: Args) -> PrimResult {
    perform_generic(vm, args, false, true)
}
fn perform_with_args_in_super(vm: &mut Vm, args: Args) -> PrimResult {
    perform_generic(vm, args, true, true)
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Object"], "perform:", perform),
    Primitive::new(&["Object"], "perform:with:", perform),
    Primitive::new(&["Object"], "perform:with:with:", perform),
    Primitive::new(&["Object"], "perform:with:with:with:", perform),
    Primitive::new(&["Object"], "perform:withArguments:", perform_with_args),
    Primitive::new(&["Object"], "perform:inSuperclass:", perform_in_super),
    Primitive::new(
        &["Object"],
        "perform:withArguments:inSuperclass:",
        perform_with_args_in_super,
    ),
];
