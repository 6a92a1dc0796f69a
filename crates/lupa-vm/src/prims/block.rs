//! Block evaluation, frame (`Context`) primitives for exceptions, and processes.

use super::{arg, tryalloc};
use crate::interp::{Prim, UnwindAction};
use crate::objects::cls;
use crate::process::Status;
use crate::vm::Vm;
use lupa_compiler::CodeKind;
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
    let n = vm.running.stack.len() - 2;
    vm.running.stack.truncate(n);
    vm.running.stack.push(b);
    vm.running.stack.extend_from_slice(&args);
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
    let n = vm.running.stack.len() - argc - 1;
    vm.running.stack.truncate(n);
    let Some(top) = vm.running.frames.len().checked_sub(1) else {
        return Prim::Fail;
    };
    match vm.unwind_to(top, UnwindAction::Restart) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

// ----- Context: frames seen from Smalltalk -----

/// The frame that sent the primitive is the top frame (primitives have none).
fn frame_arg(vm: &Vm, argc: usize, i: usize) -> Option<usize> {
    let f = arg(vm, argc, i).as_int()?;
    let f = usize::try_from(f).ok()?;
    (f < vm.running.frames.len()).then_some(f)
}

fn current_frame(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.running.frames.len() as i64 - 1))
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
        v if v == Value::NIL => vm.running.frames.len(),
        _ => match frame_arg(vm, argc, 1) {
            Some(f) => f,
            None => return Prim::Fail,
        },
    };
    let found = (0..start)
        .rev()
        .find(|&i| vm.running.frames[i].code.exception_handler);
    Prim::Ok(found.map(|i| Value::small(i as i64)).unwrap_or(Value::NIL))
}

fn receiver_of(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    Prim::Ok(vm.running.stack[vm.running.frames[f].bp])
}

fn argument_of(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    let Some(n) = arg(vm, argc, 2).as_int() else {
        return Prim::Fail;
    };
    let fr = &vm.running.frames[f];
    if n < 1 || n as usize > fr.code.num_args {
        return Prim::Fail;
    }
    Prim::Ok(vm.running.stack[fr.bp + n as usize])
}

fn temp_index(vm: &Vm, argc: usize) -> Option<usize> {
    let f = frame_arg(vm, argc, 1)?;
    let n = arg(vm, argc, 2).as_int()?;
    let fr = &vm.running.frames[f];
    if n < 1 || n as usize > fr.code.num_temps {
        return None;
    }
    Some(fr.bp + fr.code.num_args + n as usize)
}

fn temp_of(vm: &mut Vm, argc: usize) -> Prim {
    match temp_index(vm, argc) {
        Some(i) => Prim::Ok(vm.running.stack[i]),
        None => Prim::Fail,
    }
}

fn temp_of_put(vm: &mut Vm, argc: usize) -> Prim {
    let v = arg(vm, argc, 3);
    match temp_index(vm, argc) {
        Some(i) => {
            vm.running.stack[i] = v;
            Prim::Ok(v)
        }
        None => Prim::Fail,
    }
}

fn method_of(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    let home = vm.running.frames[f].code.home.get();
    Prim::Ok(vm.methods[home as usize].object.get())
}

fn is_block_frame(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::bool(
        vm.running.frames[f].code.kind == CodeKind::Block,
    ))
}

fn line_of(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Fail;
    };
    let fr = &vm.running.frames[f];
    Prim::Ok(Value::small(fr.code.line_of(fr.pc.saturating_sub(1)) as i64))
}

fn unwind_to_return(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Error("unwindTo:return: invalid frame".into());
    };
    let v = arg(vm, argc, 2);
    let n = vm.running.stack.len() - argc - 1;
    vm.running.stack.truncate(n);
    match vm.unwind_to(f, UnwindAction::Return(v)) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

fn restart_frame(vm: &mut Vm, argc: usize) -> Prim {
    let Some(f) = frame_arg(vm, argc, 1) else {
        return Prim::Error("restart: invalid frame".into());
    };
    let n = vm.running.stack.len() - argc - 1;
    vm.running.stack.truncate(n);
    match vm.unwind_to(f, UnwindAction::Restart) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

fn backtrace(vm: &mut Vm, _argc: usize) -> Prim {
    let n = vm.running.frames.len();
    let mut s = String::new();
    for i in (0..n).rev() {
        s.push_str(&vm.describe_frame(i));
        s.push('\n');
    }
    Prim::Ok(tryalloc!(vm.new_string(&s)))
}

fn depth(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.running.frames.len() as i64))
}

// ----- processes -----

fn new_process(vm: &mut Vm, argc: usize) -> Prim {
    let b = arg(vm, argc, 0);
    if vm.closure_code(b).is_none_or(|c| c.num_args != 0) {
        return Prim::Error("newProcess needs a block without arguments".into());
    }
    match vm.new_process(b) {
        Ok(p) => Prim::Ok(p),
        Err(e) => Prim::Abort(e),
    }
}

fn process_resume(vm: &mut Vm, argc: usize) -> Prim {
    let p = arg(vm, argc, 0);
    let Some(i) = vm.process_index(p) else {
        return Prim::Fail;
    };
    vm.resume_process(i);
    Prim::Ok(p)
}

fn process_run_first(vm: &mut Vm, argc: usize) -> Prim {
    let p = arg(vm, argc, 0);
    let Some(i) = vm.process_index(p) else {
        return Prim::Fail;
    };
    if i != vm.procs.current && vm.procs.procs[i].status == Status::Suspended {
        vm.run_first(i);
    }
    Prim::Ok(p)
}

fn process_suspend(vm: &mut Vm, argc: usize) -> Prim {
    let p = arg(vm, argc, 0);
    let Some(i) = vm.process_index(p) else {
        return Prim::Fail;
    };
    if i == vm.procs.current {
        if let Err(e) = vm.block_current(Status::Suspended) {
            return Prim::Abort(e);
        }
    } else if vm.procs.procs[i].status == Status::Ready {
        vm.procs.ready.retain(|&r| r != i);
        vm.procs.procs[i].status = Status::Suspended;
    }
    Prim::Ok(p)
}

fn process_terminate(vm: &mut Vm, argc: usize) -> Prim {
    let p = arg(vm, argc, 0);
    let Some(i) = vm.process_index(p) else {
        return Prim::Fail;
    };
    if i == vm.procs.current {
        let n = vm.running.stack.len() - argc - 1;
        vm.running.stack.truncate(n);
        return match vm.terminate_process(i) {
            Ok(()) => Prim::Done,
            Err(e) => Prim::Abort(e),
        };
    }
    match vm.terminate_process(i) {
        Ok(()) => Prim::Ok(p),
        Err(e) => Prim::Abort(e),
    }
}

fn process_is_terminated(vm: &mut Vm, argc: usize) -> Prim {
    let p = arg(vm, argc, 0);
    let Some(i) = vm.process_index(p) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::bool(vm.procs.procs[i].status == Status::Terminated))
}

fn process_name(vm: &mut Vm, argc: usize) -> Prim {
    let Some(i) = vm.process_index(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    Prim::Ok(vm.procs.procs[i].name)
}

fn process_set_name(vm: &mut Vm, argc: usize) -> Prim {
    let p = arg(vm, argc, 0);
    let Some(i) = vm.process_index(p) else {
        return Prim::Fail;
    };
    vm.procs.procs[i].name = arg(vm, argc, 1);
    Prim::Ok(p)
}

fn process_priority(vm: &mut Vm, argc: usize) -> Prim {
    let Some(i) = vm.process_index(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::small(vm.procs.procs[i].priority))
}

fn process_set_priority(vm: &mut Vm, argc: usize) -> Prim {
    let p = arg(vm, argc, 0);
    let Some(i) = vm.process_index(p) else {
        return Prim::Fail;
    };
    let Some(n) = arg(vm, argc, 1).as_int().filter(|n| (1..=100).contains(n)) else {
        return Prim::Error("priority: expects an Integer between 1 and 100".into());
    };
    vm.procs.procs[i].priority = n;
    Prim::Ok(p)
}

/// `Processor isMeta`: is the running process inside a `<metaLevel>` method?
fn is_meta(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::bool(vm.running.meta_depth > 0))
}

fn meta_level(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.running.meta_depth as i64))
}

fn yield_(vm: &mut Vm, argc: usize) -> Prim {
    vm.yield_process();
    Prim::Ok(arg(vm, argc, 0))
}

fn active_process(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(vm.procs.procs[vm.procs.current].object)
}

pub(crate) fn sem_index(vm: &mut Vm, v: Value) -> Option<usize> {
    if !v.is_ptr() || !vm.is_kind_of(vm.class_of(v), cls::SEMAPHORE) {
        return None;
    }
    let i = (vm.heap.identity_hash(v) as usize).checked_sub(1)?;
    (i < vm.procs.sems.len()).then_some(i)
}

fn sem_new(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = vm.class_index_of_object(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    let s = tryalloc!(vm.instantiate(c, 0));
    vm.procs.sems.push(Default::default());
    let i = vm.procs.sems.len() as u32;
    vm.heap.set_identity_hash(s, i);
    Prim::Ok(s)
}

fn sem_signal(vm: &mut Vm, argc: usize) -> Prim {
    let s = arg(vm, argc, 0);
    let Some(i) = sem_index(vm, s) else {
        return Prim::Fail;
    };
    match vm.procs.sems[i].waiting.pop_front() {
        Some(p) => {
            vm.procs.procs[p].status = Status::Ready;
            vm.procs.ready.push_back(p);
        }
        None => vm.procs.sems[i].excess += 1,
    }
    Prim::Ok(s)
}

fn sem_wait(vm: &mut Vm, argc: usize) -> Prim {
    let s = arg(vm, argc, 0);
    let Some(i) = sem_index(vm, s) else {
        return Prim::Fail;
    };
    if vm.procs.sems[i].excess > 0 {
        vm.procs.sems[i].excess -= 1;
        return Prim::Ok(s);
    }
    let cur = vm.procs.current;
    vm.procs.sems[i].waiting.push_back(cur);
    if let Err(e) = vm.block_current(Status::Waiting(i)) {
        return Prim::Abort(e);
    }
    Prim::Ok(s)
}

fn sem_excess(vm: &mut Vm, argc: usize) -> Prim {
    let s = arg(vm, argc, 0);
    let Some(i) = sem_index(vm, s) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::small(vm.procs.sems[i].excess))
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
        vm.register(class, "newProcess", new_process);
    }
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
    vm.register("Process", "resume", process_resume);
    vm.register("Process", "resumeFirst", process_run_first);
    vm.register("Process", "suspend", process_suspend);
    vm.register("Process", "terminate", process_terminate);
    vm.register("Process", "isTerminated", process_is_terminated);
    vm.register("Process", "name", process_name);
    vm.register("Process", "name:", process_set_name);
    vm.register("Process", "priority", process_priority);
    vm.register("Process", "priority:", process_set_priority);
    vm.register("ProcessorScheduler", "yield", yield_);
    vm.register("ProcessorScheduler", "isMeta", is_meta);
    vm.register("ProcessorScheduler", "metaLevel", meta_level);
    vm.register("ProcessorScheduler", "activeProcess", active_process);
    vm.register("Semaphore class", "new", sem_new);
    vm.register("Semaphore", "signal", sem_signal);
    vm.register("Semaphore", "wait", sem_wait);
    vm.register("Semaphore", "excessSignals", sem_excess);
}
