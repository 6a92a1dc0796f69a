//! Block primitives: evaluating a block (`value`, `value:`..., `valueWithArguments:`),
//! its arity, and `restart` (the loop primitive of SOM's `whileTrue:`).
//!
//! Evaluation activates the block in a new frame and answers [`Prim::Done`]: the
//! block's result arrives later, when its frame returns.

use super::arg;
use crate::interp::{Prim, UnwindAction};
use crate::objects::cls;
use crate::vm::Vm;
use lupa_heap::Value;

fn value(vm: &mut Vm, argc: usize) -> Prim {
    let b = arg(vm, argc, 0);
    if vm.closure_code(b).is_none() {
        return Prim::Fail;
    }
    match vm.activate_block(b, argc) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

fn value_with_arguments(vm: &mut Vm, argc: usize) -> Prim {
    let b = arg(vm, argc, 0);
    let a = arg(vm, argc, 1);
    if vm.closure_code(b).is_none() || !(a.is_ptr() && vm.heap.class_index(a) == cls::ARRAY) {
        return Prim::Fail;
    }
    let args: Vec<Value> = (0..vm.heap.size(a)).map(|i| vm.heap.slot(a, i)).collect();
    let n = vm.stack.len() - 2;
    vm.stack.truncate(n);
    vm.stack.push(b);
    vm.stack.extend_from_slice(&args);
    match vm.activate_block(b, args.len()) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

fn num_args(vm: &mut Vm, argc: usize) -> Prim {
    match vm.closure_code(arg(vm, argc, 0)) {
        Some(c) => Prim::Ok(Value::small(c.num_args as i64)),
        None => Prim::Fail,
    }
}

/// `restart`: the sender (a block frame evaluating `[...] whileTrue: ...` in
/// SOM's Block) starts over. It restarts the frame that sent `restart`.
fn restart(vm: &mut Vm, argc: usize) -> Prim {
    let n = vm.stack.len() - argc - 1;
    vm.stack.truncate(n);
    let Some(top) = vm.frames.len().checked_sub(1) else {
        return Prim::Fail;
    };
    match vm.unwind_to(top, UnwindAction::Restart) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

pub(crate) fn register(vm: &mut Vm) {
    for class in ["Block", "Block1", "Block2", "Block3", "Block4"] {
        vm.register(class, "value", value);
        vm.register(class, "value:", value);
        vm.register(class, "value:with:", value);
        vm.register(class, "value:with:with:", value);
        vm.register(class, "numArgs", num_args);
        vm.register(class, "valueWithArguments:", value_with_arguments);
        vm.register(class, "restart", restart);
    }
}
