//! Process, ProcessorScheduler and Semaphore primitives: the Smalltalk face of
//! the VM's green-thread scheduler (`crate::process`).
//!
//! A Process or Semaphore object names its VM-side record by its identity hash
//! (index + 1); a primitive given anything else fails. Primitives that block or
//! end the running process switch processes before they answer.

use super::outcome::Reply::{Answer, Done};
use super::outcome::{OrError, PrimFailure};
use super::{Args, PrimResult};
use crate::objects::cls;
use crate::process::Status;
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
    vm.resume_process(i);
    Ok(Answer(p))
}

fn process_run_first(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    if i != vm.procs.current && vm.procs.procs[i].status == Status::Suspended {
        vm.run_first(i);
    }
    Ok(Answer(p))
}

fn process_suspend(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    if i == vm.procs.current {
        vm.block_current(Status::Suspended)
            .map_err(PrimFailure::Abort)?;
    } else if vm.procs.procs[i].status == Status::Ready {
        vm.procs.ready.retain(|&r| r != i);
        vm.procs.procs[i].status = Status::Suspended;
    } else if vm.procs.procs[i].status == Status::Delayed {
        // Its delay is cancelled (a resume makes it ready at once).
        vm.procs.delays.retain(|d| d.process != i);
        vm.procs.procs[i].status = Status::Suspended;
    }
    Ok(Answer(p))
}

fn process_terminate(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    if i == vm.procs.current {
        let n = vm.running.stack.len() - args.count() - 1;
        vm.running.stack.truncate(n);
        vm.terminate_process(i).map_err(PrimFailure::Abort)?;
        return Ok(Done);
    }
    vm.terminate_process(i).map_err(PrimFailure::Abort)?;
    Ok(Answer(p))
}

fn process_is_terminated(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.process(vm, 0)?;
    Ok(Answer(Value::bool(
        vm.procs.procs[i].status == Status::Terminated,
    )))
}

fn process_name(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.process(vm, 0)?;
    Ok(Answer(vm.procs.procs[i].name))
}

fn process_set_name(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    vm.procs.procs[i].name = args.get(vm, 1);
    Ok(Answer(p))
}

fn process_priority(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.process(vm, 0)?;
    Ok(Answer(Value::small(vm.procs.procs[i].priority)))
}

fn process_set_priority(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.process(vm, 0)?;
    let n = args
        .int(vm, 1)
        .ok()
        .filter(|n| (1..=100).contains(n))
        .or_error("priority: expects an Integer between 1 and 100")?;
    vm.procs.procs[i].priority = n;
    Ok(Answer(p))
}

fn yield_(vm: &mut Vm, args: Args) -> PrimResult {
    vm.yield_process();
    Ok(Answer(args.receiver(vm)))
}

fn active_process(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(vm.procs.procs[vm.procs.current].object))
}

/// The semaphore index of a Semaphore object (its identity hash minus one).
pub(crate) fn sem_index(vm: &mut Vm, v: Value) -> Option<usize> {
    if !v.is_ptr() || !vm.is_kind_of(vm.class_of(v), cls::SEMAPHORE) {
        return None;
    }
    let i = (vm.heap.identity_hash(v) as usize).checked_sub(1)?;
    (i < vm.procs.sems.len()).then_some(i)
}

fn sem_new(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let s = vm.instantiate(c, 0)?;
    vm.procs.sems.push(Default::default());
    let i = vm.procs.sems.len() as u32;
    vm.heap.set_identity_hash(s, i);
    Ok(Answer(s))
}

fn sem_signal(vm: &mut Vm, args: Args) -> PrimResult {
    let p = args.receiver(vm);
    let i = args.semaphore(vm, 0)?;
    match vm.procs.sems[i].waiting.pop_front() {
        Some(p) => {
            vm.procs.procs[p].status = Status::Ready;
            vm.procs.ready.push_back(p);
        }
        None => vm.procs.sems[i].excess += 1,
    }
    Ok(Answer(p))
}

fn sem_wait(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.receiver(vm);
    let i = args.semaphore(vm, 0)?;
    if vm.procs.sems[i].excess > 0 {
        vm.procs.sems[i].excess -= 1;
        return Ok(Answer(s));
    }
    let cur = vm.procs.current;
    vm.procs.sems[i].waiting.push_back(cur);
    vm.block_current(Status::Waiting(i))
        .map_err(PrimFailure::Abort)?;
    Ok(Answer(s))
}

/// `Delay>>primWait: milliseconds`: the running process waits that long
/// (other processes run meanwhile; see `crate::process`).
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
    Ok(Answer(Value::small(vm.procs.sems[i].excess)))
}

pub(crate) fn register(vm: &mut Vm) {
    for class in ["Block", "Block1", "Block2", "Block3", "Block4"] {
        vm.register(class, "newProcess", new_process);
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
    vm.register("ProcessorScheduler", "activeProcess", active_process);
    vm.register("Semaphore class", "new", sem_new);
    vm.register("Semaphore", "signal", sem_signal);
    vm.register("Semaphore", "wait", sem_wait);
    vm.register("Semaphore", "excessSignals", sem_excess);
    vm.register("Delay", "primWait:", delay_wait);
}
