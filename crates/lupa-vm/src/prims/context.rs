//! `Context class` primitives: the frames of the running process seen from
//! Smalltalk, for exceptions, debugging and profilers.
//!
//! A frame is named by its index in the running process's frame list (0 = the
//! bottom frame); `currentFrame` is the frame that sent the primitive, because
//! primitives run without a frame of their own. Frame indices are only valid
//! while the frames they name are alive: the kernel's exception code reads them
//! right away. `unwindTo:return:` and `restart:` unwind the stack (running the
//! `<unwindProtect>` actions on the way) and answer [`Prim::Done`].

use super::{arg, tryalloc};
use crate::interp::{Prim, UnwindAction};
use crate::vm::Vm;
use lupa_compiler::CodeKind;
use lupa_heap::Value;

/// The frame that sent the primitive is the top frame (primitives have none).
fn frame_arg(vm: &Vm, argc: usize, i: usize) -> Option<usize> {
    let f = arg(vm, argc, i).as_int()?;
    let f = usize::try_from(f).ok()?;
    (f < vm.frames.len()).then_some(f)
}

fn current_frame(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.frames.len() as i64 - 1))
}

fn sender_of(vm: &mut Vm, argc: usize) -> Prim {
    match frame_arg(vm, argc, 1) {
        Some(f) if f > 0 => Prim::Ok(Value::small(f as i64 - 1)),
        Some(_) => Prim::Ok(Value::NIL),
        None => Prim::Fail,
    }
}

fn handler_frame_below(vm: &mut Vm, argc: usize) -> Prim {
    let start = match arg(vm, argc, 1) {
        v if v == Value::NIL => vm.frames.len(),
        _ => match frame_arg(vm, argc, 1) {
            Some(f) => f,
            None => return Prim::Fail,
        },
    };
    let found = (0..start)
        .rev()
        .find(|&i| vm.frames[i].code.exception_handler);
    Prim::Ok(found.map(|i| Value::small(i as i64)).unwrap_or(Value::NIL))
}

fn receiver_of(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    Prim::Ok(vm.stack[vm.frames[f].bp])
}

fn argument_of(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    let Some(n) = arg(vm, argc, 2).as_int() else {
        return Prim::Fail;
    };
    let fr = &vm.frames[f];
    if n < 1 || n as usize > fr.code.num_args {
        return Prim::Fail;
    }
    Prim::Ok(vm.stack[fr.bp + n as usize])
}

fn temp_index(vm: &Vm, argc: usize) -> Option<usize> {
    let f = frame_arg(vm, argc, 1)?;
    let n = arg(vm, argc, 2).as_int()?;
    let fr = &vm.frames[f];
    if n < 1 || n as usize > fr.code.num_temps {
        return None;
    }
    Some(fr.bp + fr.code.num_args + n as usize)
}

fn temp_of(vm: &mut Vm, argc: usize) -> Prim {
    match temp_index(vm, argc) {
        Some(i) => Prim::Ok(vm.stack[i]),
        None => Prim::Fail,
    }
}

fn temp_of_put(vm: &mut Vm, argc: usize) -> Prim {
    let v = arg(vm, argc, 3);
    match temp_index(vm, argc) {
        Some(i) => {
            vm.stack[i] = v;
            Prim::Ok(v)
        }
        None => Prim::Fail,
    }
}

fn method_of(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    let home = vm.frames[f].code.home.get();
    Prim::Ok(vm.methods[home as usize].object.get())
}

fn is_block_frame(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::bool(vm.frames[f].code.kind == CodeKind::Block))
}

fn line_of(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    let fr = &vm.frames[f];
    Prim::Ok(Value::small(fr.code.line_of(fr.pc.saturating_sub(1)) as i64))
}

fn unwind_to_return(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Error("unwindTo:return: invalid frame".into());
    };
    let v = arg(vm, argc, 2);
    let n = vm.stack.len() - argc - 1;
    vm.stack.truncate(n);
    match vm.unwind_to(f, UnwindAction::Return(v)) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

fn restart_frame(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Error("restart: invalid frame".into());
    };
    let n = vm.stack.len() - argc - 1;
    vm.stack.truncate(n);
    match vm.unwind_to(f, UnwindAction::Restart) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

fn backtrace(vm: &mut Vm, _argc: usize) -> Prim {
    let n = vm.frames.len();
    let mut s = String::new();
    for i in (0..n).rev() {
        s.push_str(&vm.describe_frame(i));
        s.push('\n');
    }
    Prim::Ok(tryalloc!(vm.new_string(&s)))
}

fn depth(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.frames.len() as i64))
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
