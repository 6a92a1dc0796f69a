//! Process, ProcessorScheduler and Semaphore primitives: the Smalltalk face of
//! the VM's green-thread scheduler (`crate::process`).
//!
//! A Process or Semaphore object names its VM-side record by its identity hash
//! (index + 1); a primitive given anything else fails. Primitives that block or
//! end the running process switch processes before they answer.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::cls;
use crate::process::Status;
use crate::vm::Vm;
use lupa_heap::Value;

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
        let n = vm.stack.len() - argc - 1;
        vm.stack.truncate(n);
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
}
