//! Process, ProcessorScheduler and Semaphore primitives: the Smalltalk face of
//! the VM's green-thread scheduler (`crate::sched`).
//!
//! A Process or Semaphore object names its VM-side record by its identity hash
//! (index + 1); a primitive given anything else fails. Primitives that block or
//! end the running process switch processes before they answer.

use super::Primitive;
use super::outcome::Reply::{Answer, Done};
use super::outcome::{OrError, PrimFailure};
use super::{Args, PrimResult};
use crate::objects::cls;
use crate::sched::Status;
use crate::vm::Vm;
use lupa_heap::Value;

fn new_process(vm: &mut Vm, args: Args) -> PrimResult {
    let b = args.receiver(vm);
    if vm.closure_code(b).is_none_or(|c| c.num_args != 0) {
        return Err(PrimFailure::error(
            "newProcess needs a block without arguments",
        ));
    }
    if let Some(problem) = vm.process_budget_problem() {
        return Err(PrimFailure::Limit(problem));
    }
    Ok(Answer(vm.new_process(b).map_err(PrimFailure::Abort)?))
}

fn process_resume(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    vm.sched.resume_process(i);
    Ok(Answer(p))
}

fn process_run_first(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    if i != vm.sched.current && vm.sched.procs[i].status == Status::Suspended {
        vm.sched.run_first(i);
    }
    Ok(Answer(p))
}

fn process_suspend(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    if i == vm.sched.current {
        vm.block_current(Status::Suspended)
            .map_err(PrimFailure::Abort)?;
    } else if vm.sched.procs[i].status == Status::Ready {
        vm.sched.ready.retain(|&r| r != i);
        vm.sched.procs[i].status = Status::Suspended;
    } else if vm.sched.procs[i].status == Status::Delayed {
        // Its delay is cancelled (a resume makes it ready at once).
        vm.sched.delays.retain(|d| d.process != i);
        vm.sched.procs[i].status = Status::Suspended;
    }
    Ok(Answer(p))
}

fn process_terminate(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    if i == vm.sched.current {
        let n = vm.sched.running.stack.len() - args.count() - 1;
        vm.sched.running.stack.truncate(n);
        vm.terminate_process(i).map_err(PrimFailure::Abort)?;
        return Ok(Done);
    }
    vm.terminate_process(i).map_err(PrimFailure::Abort)?;
    Ok(Answer(p))
}

fn process_is_terminated(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.process(vm, 0)?;
    Ok(Answer(Value::bool(
        vm.sched.procs[i].status == Status::Terminated,
    )))
}

fn process_name(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.process(vm, 0)?;
    Ok(Answer(vm.sched.procs[i].name))
}

fn process_set_name(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    vm.sched.procs[i].name = args.get(vm, 1);
    Ok(Answer(p))
}

fn process_priority(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.process(vm, 0)?;
    Ok(Answer(Value::small(vm.sched.procs[i].priority)))
}

fn process_set_priority(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    let n = args
        .int(vm, 1)
        .ok()
        .filter(|n| (1..=100).contains(n))
        .or_error("priority: expects an Integer between 1 and 100")?;
    vm.sched.procs[i].priority = n;
    Ok(Answer(p))
}

fn yield_(vm: &mut Vm, args: Args) -> PrimResult {
    vm.yield_process();
    Ok(Answer(args.receiver(vm)))
}

fn active_process(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(vm.sched.procs[vm.sched.current].object))
}

/// The semaphore index of a Semaphore object (its identity hash minus one,
/// when the semaphore table registered that object: `sched::sem_table`).
pub(crate) fn sem_index(vm: &mut Vm, v: Value) -> Option<usize> {
    if !v.is_ptr() || !vm.image.is_kind_of(vm.class_of(v), cls::SEMAPHORE) {
        return None;
    }
    vm.sched.sem_record(&mut vm.heap, v)
}

fn sem_new(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    if !vm.image.is_kind_of(c, cls::SEMAPHORE) {
        return Err(PrimFailure::wrong(0, super::outcome::Expected::Class));
    }
    let s = vm.instantiate(c, 0)?;
    vm.sched
        .register_semaphore(&mut vm.heap, cls::WEAK_ARRAY, s)?;
    Ok(Answer(s))
}

fn sem_signal(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.semaphore(vm, 0)?;
    match vm.sched.sems[i].waiting.pop_front() {
        Some(p) => {
            vm.sched.procs[p].status = Status::Ready;
            vm.sched.ready.push_back(p);
        }
        None => vm.sched.sems[i].excess += 1,
    }
    Ok(Answer(p))
}

fn sem_wait(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.receiver(vm);
    let i = args.semaphore(vm, 0)?;
    if vm.sched.sems[i].excess > 0 {
        vm.sched.sems[i].excess -= 1;
        return Ok(Answer(s));
    }
    let cur = vm.sched.current;
    vm.sched.sems[i].waiting.push_back(cur);
    vm.block_current(Status::Waiting(i))
        .map_err(PrimFailure::Abort)?;
    Ok(Answer(s))
}

/// `Delay>>primWait: milliseconds`: the running process waits that long
/// (other processes run meanwhile; see `crate::sched`).
fn delay_wait(vm: &mut Vm, args: Args) -> PrimResult {
    let ms = args.number(vm, 1)?;
    if ms.is_nan() {
        return Err(PrimFailure::error("a Delay needs a number of milliseconds"));
    }
    // At most about a century: `Instant` arithmetic must not overflow.
    let ms = ms.clamp(0.0, 3.0e12);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(ms / 1000.0);
    vm.delay_current(deadline).map_err(PrimFailure::Abort)?;
    Ok(Answer(args.receiver(vm)))
}

fn sem_excess(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.semaphore(vm, 0)?;
    Ok(Answer(Value::small(vm.sched.sems[i].excess)))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(
        &["Block", "Block1", "Block2", "Block3", "Block4"],
        "newProcess",
        new_process,
    ),
    Primitive::new(&["Process"], "resume", process_resume),
    Primitive::new(&["Process"], "resumeFirst", process_run_first),
    Primitive::new(&["Process"], "suspend", process_suspend),
    Primitive::new(&["Process"], "terminate", process_terminate),
    Primitive::new(&["Process"], "isTerminated", process_is_terminated),
    Primitive::new(&["Process"], "name", process_name),
    Primitive::new(&["Process"], "name:", process_set_name),
    Primitive::new(&["Process"], "priority", process_priority),
    Primitive::new(&["Process"], "priority:", process_set_priority),
    Primitive::new(&["ProcessorScheduler"], "yield", yield_),
    Primitive::new(&["ProcessorScheduler"], "activeProcess", active_process),
    Primitive::new(&["Semaphore class"], "new", sem_new).allocating(),
    Primitive::new(&["Semaphore"], "signal", sem_signal),
    Primitive::new(&["Semaphore"], "wait", sem_wait),
    Primitive::new(&["Semaphore"], "excessSignals", sem_excess),
    Primitive::new(&["Delay"], "primWait:", delay_wait),
];
