//! `Context class` primitives: the frames of the running process seen from
//! Smalltalk, for exceptions, debugging and profilers.
//!
//! A frame is named by a SmallInteger handle: the running process's number in
//! the high bits and the frame's index in its frame list (0 = the bottom
//! frame) in the low 32; `currentFrame` is the frame that sent the primitive,
//! because primitives run without a frame of their own. Every primitive checks
//! that a handle names a frame of the running process that is still on its
//! stack (another process's frame is an error, never a frame of this stack);
//! the kernel's exception code reads handles right away. `unwindTo:return:` and `restart:` unwind the stack (running the
//! `<unwindProtect>` actions on the way) and answer [`Reply::Done`](super::Reply::Done).

use super::Primitive;
use super::outcome::Reply::{Answer, Done};
use super::outcome::{Expected, PrimFailure};
use super::{Args, PrimResult};
use crate::sched::UnwindAction;
use crate::vm::Vm;
use lupa_compiler::CodeKind;
use lupa_heap::Value;

/// The Smalltalk handle of frame `index` of the running process: the
/// process's number in the high bits, the frame index in the low 32, so a
/// frame captured in one process is never taken for a frame of another.
fn frame_handle(vm: &Vm, index: usize) -> Value {
    Value::small(((vm.sched.current as i64 + 1) << 32) | index as i64)
}

/// Argument `i` as the index of a live frame of the running process. A
/// handle of another process's frame is an error (unwinding or restarting it
/// would act on the wrong stack), as is a frame that has since returned.
pub(crate) fn frame(vm: &Vm, args: Args, i: usize) -> Result<usize, PrimFailure> {
    let handle = args
        .get(vm, i)
        .as_int()
        .filter(|h| *h >= 1 << 32)
        .ok_or_else(|| PrimFailure::wrong(i, Expected::Frame))?;
    let (proc, index) = ((handle >> 32) as usize - 1, (handle & 0xFFFF_FFFF) as usize);
    if proc != vm.sched.current {
        return Err(PrimFailure::Error(format!(
            "the frame belongs to another process (process {}, not the running process {})",
            proc + 1,
            vm.sched.current + 1
        )));
    }
    if index >= vm.sched.running.frames.len() {
        return Err(PrimFailure::error(
            "the frame has returned (it is no longer on the stack)",
        ));
    }
    Ok(index)
}

/// The frame that sent the primitive is the top frame (primitives have none).
fn current_frame(vm: &mut Vm, _args: Args) -> PrimResult {
    match vm.sched.running.frames.len().checked_sub(1) {
        Some(top) => Ok(Answer(frame_handle(vm, top))),
        None => Ok(Answer(Value::NIL)),
    }
}

fn sender_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    Ok(Answer(if f > 0 {
        frame_handle(vm, f - 1)
    } else {
        Value::NIL
    }))
}

fn handler_frame_below(vm: &mut Vm, args: Args) -> PrimResult {
    let start = match args.get(vm, 1) {
        v if v == Value::NIL => vm.sched.running.frames.len(),
        _ => frame(vm, args, 1)?,
    };
    let found = (0..start).rev().find(|&i| {
        vm.image
            .code(vm.sched.running.frames[i].method)
            .exception_handler
    });
    Ok(Answer(
        found.map(|i| frame_handle(vm, i)).unwrap_or(Value::NIL),
    ))
}

fn receiver_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    Ok(Answer(
        vm.sched.running.stack[vm.sched.running.frames[f].bp],
    ))
}

fn argument_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let n = args.int(vm, 2)?;
    let fr = &vm.sched.running.frames[f];
    if n < 1 || n as usize > vm.image.code(fr.method).num_args {
        return Err(PrimFailure::Fail);
    }
    Ok(Answer(vm.sched.running.stack[fr.bp + n as usize]))
}

/// Stack index of temporary `args[2]` of frame `args[1]`.
fn temp_index(vm: &Vm, args: Args) -> Result<usize, PrimFailure> {
    let f = frame(vm, args, 1)?;
    let n = args.int(vm, 2)?;
    let fr = &vm.sched.running.frames[f];
    if n < 1 || n as usize > vm.image.code(fr.method).num_temps {
        return Err(PrimFailure::Fail);
    }
    Ok(fr.bp + vm.image.code(fr.method).num_args + n as usize)
}

fn temp_of(vm: &mut Vm, args: Args) -> PrimResult {
    let i = temp_index(vm, args)?;
    Ok(Answer(vm.sched.running.stack[i]))
}

fn temp_of_put(vm: &mut Vm, args: Args) -> PrimResult {
    let v = args.get(vm, 3);
    let i = temp_index(vm, args)?;
    vm.sched.running.stack[i] = v;
    Ok(Answer(v))
}

fn method_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let home = vm.image.code(vm.sched.running.frames[f].method).home.get();
    Ok(Answer(vm.image.methods[home as usize].object.get()))
}

fn is_block_frame(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    Ok(Answer(Value::bool(
        vm.image.code(vm.sched.running.frames[f].method).kind == CodeKind::Block,
    )))
}

fn line_of(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let fr = &vm.sched.running.frames[f];
    Ok(Answer(Value::small(
        vm.image.code(fr.method).line_of(fr.pc.saturating_sub(1)) as i64,
    )))
}

fn unwind_to_return(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let v = args.get(vm, 2);
    let n = vm.sched.running.stack.len() - args.count() - 1;
    vm.sched.running.stack.truncate(n);
    vm.unwind_to(f, UnwindAction::Return(v))
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

/// `isUnwindingTo: frame`: is the running process unwinding to that frame
/// (an `ensure:` block of the unwind is running)? False for a frame that is
/// not a live frame of the running process.
fn is_unwinding_to(vm: &mut Vm, args: Args) -> PrimResult {
    let unwinding = frame(vm, args, 1).is_ok_and(|f| {
        vm.sched
            .running
            .pending_unwinds
            .iter()
            .any(|p| p.target == f)
    });
    Ok(Answer(Value::bool(unwinding)))
}

fn restart_frame(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let n = vm.sched.running.stack.len() - args.count() - 1;
    vm.sched.running.stack.truncate(n);
    vm.unwind_to(f, UnwindAction::Restart)
        .map_err(PrimFailure::Abort)?;
    Ok(Done)
}

fn backtrace(vm: &mut Vm, _args: Args) -> PrimResult {
    let n = vm.sched.running.frames.len();
    let mut s = String::new();
    for i in (0..n).rev() {
        s.push_str(&vm.describe_frame(i));
        s.push('\n');
    }
    Ok(Answer(vm.new_string(&s)?))
}

/// Frames of a backtrace shown in full; a longer one keeps its first
/// [`BACKTRACE_HEAD`] and last [`BACKTRACE_TAIL`] lines around a count of
/// the frames left out.
const BACKTRACE_FULL: usize = 100;
const BACKTRACE_HEAD: usize = 60;
const BACKTRACE_TAIL: usize = 20;

/// `Context backtraceFrom: frame`: the backtrace from `frame` downwards, one
/// line per frame, with the middle left out when it is longer than
/// [`BACKTRACE_FULL`] lines. Built here rather than in Smalltalk so that
/// reporting a stack overflow a million frames deep takes milliseconds.
fn backtrace_from(vm: &mut Vm, args: Args) -> PrimResult {
    let f = frame(vm, args, 1)?;
    let lines = f + 1;
    let mut s = String::new();
    let line = |vm: &Vm, i: usize, s: &mut String| {
        s.push_str(&vm.describe_frame(i));
        s.push('\n');
    };
    if lines > BACKTRACE_FULL {
        for i in (f + 1 - BACKTRACE_HEAD..=f).rev() {
            line(vm, i, &mut s);
        }
        let left_out = lines - BACKTRACE_HEAD - BACKTRACE_TAIL;
        s.push_str(&format!("... {left_out} more frames ...\n"));
        for i in (0..BACKTRACE_TAIL).rev() {
            line(vm, i, &mut s);
        }
    } else {
        for i in (0..=f).rev() {
            line(vm, i, &mut s);
        }
    }
    Ok(Answer(vm.new_string(&s)?))
}

fn depth(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(vm.sched.running.frames.len() as i64)))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Context class"], "currentFrame", current_frame),
    Primitive::new(&["Context class"], "senderOf:", sender_of),
    Primitive::new(
        &["Context class"],
        "handlerFrameBelow:",
        handler_frame_below,
    ),
    Primitive::new(&["Context class"], "receiverOf:", receiver_of),
    Primitive::new(&["Context class"], "argumentOf:at:", argument_of),
    Primitive::new(&["Context class"], "tempOf:at:", temp_of),
    Primitive::new(&["Context class"], "tempOf:at:put:", temp_of_put),
    Primitive::new(&["Context class"], "methodOf:", method_of),
    Primitive::new(&["Context class"], "isBlockFrame:", is_block_frame),
    Primitive::new(&["Context class"], "lineOf:", line_of),
    Primitive::new(&["Context class"], "unwindTo:return:", unwind_to_return),
    Primitive::new(&["Context class"], "restart:", restart_frame),
    Primitive::new(&["Context class"], "isUnwindingTo:", is_unwinding_to),
    Primitive::new(&["Context class"], "backtrace", backtrace),
    Primitive::new(&["Context class"], "backtraceFrom:", backtrace_from),
    Primitive::new(&["Context class"], "depth", depth),
];
