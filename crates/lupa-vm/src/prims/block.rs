//! Block primitives: evaluating a block (`value`, `value:`..., `valueWithArguments:`),
//! its arity, and `restart` (the loop primitive of SOM's `whileTrue:`).
//!
//! Evaluation activates the block in a new frame and answers [`Reply::Done`](super::Reply::Done): the
//! block's result arrives later, when its frame returns.

use super::Primitive;
use super::outcome::Reply::{Answer, Done};
use super::outcome::{Expected, PrimFailure};
use super::{Args, PrimResult};
use crate::sched::UnwindAction;
use crate::vm::Vm;
use lupa_heap::Value;

fn value(vm: &mut Vm, args: Args) -> PrimResult {
    let b = args.block(vm, 0)?;
    vm.activate_block(b, args.count())
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

fn value_with_arguments(vm: &mut Vm, args: Args) -> PrimResult {
    let b = args.block(vm, 0)?;
    let elements = args.array_elements(vm, 1)?;
    let n = vm.sched.running.stack.len() - 2;
    vm.sched.running.stack.truncate(n);
    vm.sched.running.stack.push(b);
    vm.sched.running.stack.extend_from_slice(&elements);
    vm.activate_block(b, elements.len())
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

fn num_args(vm: &mut Vm, args: Args) -> PrimResult {
    match vm.closure_code(args.receiver(vm)) {
        Some(c) => Ok(Answer(Value::small(c.num_args as i64))),
        None => Err(PrimFailure::wrong(0, Expected::Block)),
    }
}

/// `restart`: the sender (a block frame evaluating `[...] whileTrue: ...` in
/// SOM's Block) starts over. It restarts the frame that sent `restart`.
fn restart(vm: &mut Vm, args: Args) -> PrimResult {
    let Some(top) = vm.sched.running.frames.len().checked_sub(1) else {
        return Err(PrimFailure::Fail);
    };
    // Only the frame the receiver runs in may restart: a block's own frame,
    // or a Block method sending `self restart` (SOM's loops); any other
    // receiver would restart its caller's frame.
    let frame = &vm.sched.running.frames[top];
    let recv = args.receiver(vm);
    if frame.closure != recv && vm.sched.running.stack[frame.bp] != recv {
        return Err(PrimFailure::error(
            "restart: a block can only restart the frame it is running in",
        ));
    }
    let n = vm.sched.running.stack.len() - args.count() - 1;
    vm.sched.running.stack.truncate(n);
    vm.unwind_to(top, UnwindAction::Restart)
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(
        &["Block", "Block1", "Block2", "Block3", "Block4"],
        "value",
        value,
    ),
    Primitive::new(
        &["Block", "Block1", "Block2", "Block3", "Block4"],
        "value:",
        value,
    ),
    Primitive::new(
        &["Block", "Block1", "Block2", "Block3", "Block4"],
        "value:with:",
        value,
    ),
    Primitive::new(
        &["Block", "Block1", "Block2", "Block3", "Block4"],
        "value:with:with:",
        value,
    ),
    Primitive::new(
        &["Block", "Block1", "Block2", "Block3", "Block4"],
        "numArgs",
        num_args,
    ),
    Primitive::new(
        &["Block", "Block1", "Block2", "Block3", "Block4"],
        "valueWithArguments:",
        value_with_arguments,
    ),
    Primitive::new(
        &["Block", "Block1", "Block2", "Block3", "Block4"],
        "restart",
        restart,
    ),
];
