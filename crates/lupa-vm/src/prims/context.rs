//! `Context class` primitives: the frames of the running process seen from
//! Smalltalk, for exceptions, debugging and profilers.
//!
//! A frame is named by its index in the running process's frame list (0 = the
//! bottom frame); `currentFrame` is the frame that sent the primitive, because
//! primitives run without a frame of their own. Frame indices are only valid
//! while the frames they name are alive: the kernel's exception code reads them
//! right away. `unwindTo:return:` and `restart:` unwind the stack (running the
//! `<unwindProtect>` actions on the way) and answer [`Reply::Done`](super::Reply::Done).

use super::outcome::Reply::{Answer, Done};
use super::outcome::{Expected, OrError, PrimFailure};
use super::{Args, PrimResult};
use crate::interp::UnwindAction;
use crate::vm::Vm;
use lupa_compiler::CodeKind;
use lupa_heap::Value;

/// Argument `i` as the index of a live frame of the running process.
fn frame(vm: &Vm, args: Args, i: usize) -> Result<usize, PrimFailure> {
    args.get(vm, i)
        .as_int()
        .and_then(|f| usize::try_from(f).ok())
        .filter(|&f| f < vm.running.frames.len())
        .ok_or_else(|| PrimFailure::wrong(i, Expected::Frame))
}

/// The frame that sent the primitive is the top frame (primitives have none).
fn current_frame(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(vm.running.frames.len() as i64 - 1)))
}

fn sender_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    Ok(Answer(if f > 0 {
        Value::small(f as i64 - 1)
    } else {
        Value::NIL
    }))
}

fn handler_frame_below(vm: &mut Vm, args: Args) -> PrimResult {
    let start = match args.get(vm, 1) {
        v if v == Value::NIL => vm.running.frames.len(),
        _ => frame(vm, args, 1)?,
    };
    let found = (0..start)
        .rev()
        .find(|&i| vm.running.frames[i].code.exception_handler);
    Ok(Answer(
        found.map(|i| Value::small(i as i64)).unwrap_or(Value::NIL),
    ))
}

fn receiver_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    Ok(Answer(vm.running.stack[vm.running.frames[f].bp]))
}

fn argument_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let n = args.int(vm, 2)?;
    let fr = &vm.running.frames[f];
    if n < 1 || n as usize > fr.code.num_args {
        return Err(PrimFailure::Fail);
    }
    Ok(Answer(vm.running.stack[fr.bp + n as usize]))
}

/// Stack index of temporary `args[2]` of frame `args[1]`.
fn temp_index(vm: &Vm, args: Args) -> Result<usize, PrimFailure> {
    let f = frame(vm, args, 1)?;
    let n = args.int(vm, 2)?;
    let fr = &vm.running.frames[f];
    if n < 1 || n as usize > fr.code.num_temps {
        return Err(PrimFailure::Fail);
    }
    Ok(fr.bp + fr.code.num_args + n as usize)
}

fn temp_of(vm: &mut Vm, args: Args) -> PrimResult {
    let i = temp_index(vm, args)?;
    Ok(Answer(vm.running.stack[i]))
}

fn temp_of_put(vm: &mut Vm, args: Args) -> PrimResult {
    let v = args.get(vm, 3);
    let i = temp_index(vm, args)?;
    vm.running.stack[i] = v;
    Ok(Answer(v))
}

fn method_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let home = vm.running.frames[f].code.home.get();
    Ok(Answer(vm.methods[home as usize].object.get()))
}

fn is_block_frame(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    Ok(Answer(Value::bool(
        vm.running.frames[f].code.kind == CodeKind::Block,
    )))
}

fn line_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let fr = &vm.running.frames[f];
    Ok(Answer(Value::small(
        fr.code.line_of(fr.pc.saturating_sub(1)) as i64,
    )))
}

fn unwind_to_return(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1).or_error("unwindTo:return: invalid frame")?;
    let v = args.get(vm, 2);
    let n = vm.running.stack.len() - args.count() - 1;
    vm.running.stack.truncate(n);
    vm.unwind_to(f, UnwindAction::Return(v))
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

fn restart_frame(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1).or_error("restart: invalid frame")?;
    let n = vm.running.stack.len() - args.count() - 1;
    vm.running.stack.truncate(n);
    vm.unwind_to(f, UnwindAction::Restart)
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

fn backtrace(vm: &mut Vm, _args: Args) -> PrimResult {
    let n = vm.running.frames.len();
    let mut s = String::new();
    for i in (0..n).rev() {
        s.push_str(&vm.describe_frame(i));
        s.push('\n');
    }
    Ok(Answer(vm.new_string(&s)?))
}

fn depth(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(vm.running.frames.len() as i64)))
}

pub(crate) fn register(vm: &mut Vm) {
    let ctx: &[(&'static str, crate::objects::PrimFn)] = &[
        ("currentFrame", current_frame),
        ("senderOf:", sender_of),
        ("handlerFrameBelow:", handler_frame_below),
        ("receiverOf:", receiver_of),
        ("argumentOf:at:", argument_of),
        ("tempOf:at:", temp_of),
        ("tempOf:at:put:", temp_of_put),
        ("methodOf:", method_of),
        ("isBlockFrame:", is_block_frame),
        ("lineOf:", line_of),
        ("unwindTo:return:", unwind_to_return),
        ("restart:", restart_frame),
        ("backtrace", backtrace),
        ("depth", depth),
    ];
    for (sel, f) in ctx {
        vm.register("Context class", sel, *f);
    }
}
