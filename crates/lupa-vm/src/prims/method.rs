//! Method and Primitive reflection primitives: selector, holder, arity, source
//! line and text, pragmas, and `invokeOn:with:` (run a method on any receiver).
//!
//! The receiver is a Method or Primitive object; a primitive given anything
//! else fails. The literal-frame primitives that MethodProxies needs live in
//! `proxies.rs`.

use super::Primitive;
use super::outcome::PrimFailure;
use super::outcome::Reply::{Answer, Done};
use super::{Args, PrimResult};
use crate::objects::{MethodCode, cls};
use crate::vm::Vm;
use lupa_heap::Value;

fn method_signature(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    Ok(Answer(vm.image.symbol_object(&mut vm.heap, code.selector)?))
}

fn method_holder(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    Ok(Answer(vm.image.class_object(code.holder.get())))
}

fn method_num_args(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    Ok(Answer(Value::small(code.num_args as i64)))
}

fn method_source_line(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    Ok(Answer(Value::small(code.first_line as i64)))
}

fn method_has_pragma(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    let name = args.string(vm, 1)?;
    Ok(Answer(Value::bool(code.has_pragma(&name))))
}

fn method_pragmas(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    let mut out = Vec::new();
    for (name, _args) in &code.pragmas {
        let s = vm.image.symbol(&mut vm.heap, name)?;
        out.push(vm.new_array(&[s])?);
    }
    Ok(Answer(vm.new_array(&out)?))
}

/// Why `code` cannot run on `recv` ([`Image::receiver_problem`](crate::image::Image::receiver_problem) with the
/// receiver's own pointer slots: none for an immediate, a byte or word
/// object, a closure or an environment), or `None`.
pub(super) fn invocation_problem(vm: &Vm, code: &MethodCode, recv: Value) -> Option<String> {
    let class = vm.class_of(recv);
    let slots = if recv.is_ptr() && !cls::holds_vm_slots(class) {
        vm.heap.slot_count(recv)
    } else {
        0
    };
    let whose = format!("the receiver (a {}) has", vm.image.class_name(class));
    vm.image.receiver_problem(code, class, slots, &whose)
}

fn method_invoke(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    let recv = args.get(vm, 1);
    let arguments: Vec<Value> = match args.array_elements(vm, 2) {
        Ok(elements) => elements,
        Err(_) if args.get(vm, 2) == Value::NIL => Vec::new(),
        Err(_) => {
            return Err(PrimFailure::error(
                "invokeOn:with: needs an Array of arguments",
            ));
        }
    };
    if arguments.len() != code.num_args {
        return Err(PrimFailure::Error(format!(
            "invokeOn:with: the method #{} takes {} arguments, got {}",
            code.selector_name,
            code.num_args,
            arguments.len()
        )));
    }
    if let Some(problem) = invocation_problem(vm, &code, recv) {
        return Err(PrimFailure::Error(format!("invokeOn:with: {problem}")));
    }
    let n = vm.sched.running.stack.len() - args.count() - 1;
    vm.sched.running.stack.truncate(n);
    vm.sched.running.stack.push(recv);
    vm.sched.running.stack.extend_from_slice(&arguments);
    vm.note_prim_send();
    vm.invoke(code, arguments.len())
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

fn method_source_code(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    Ok(Answer(match vm.image.method_source(&code) {
        Some(text) => vm.new_string(&text)?,
        None => Value::NIL,
    }))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Method", "Primitive"], "signature", method_signature),
    Primitive::new(&["Method", "Primitive"], "selector", method_signature),
    Primitive::new(&["Method", "Primitive"], "holder", method_holder),
    Primitive::new(&["Method", "Primitive"], "numArgs", method_num_args),
    Primitive::new(&["Method", "Primitive"], "sourceLine", method_source_line),
    Primitive::new(&["Method", "Primitive"], "hasPragma:", method_has_pragma),
    Primitive::new(&["Method", "Primitive"], "pragmas", method_pragmas).allocating(),
    Primitive::new(&["Method", "Primitive"], "invokeOn:with:", method_invoke),
    Primitive::new(&["Method", "Primitive"], "sourceCode", method_source_code).allocating(),
];
