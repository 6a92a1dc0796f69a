//! Green-thread processes and a deterministic, non-preemptive scheduler.
//!
//! The running process's state (stack, frames, pending unwinds, meta level) is
//! [`Vm::running`]; the others are saved in the scheduler, and a switch swaps
//! them. Switches happen only at safepoints,
//! after a primitive (`yield`, `wait`, `terminate`, `suspend`) asked for one or
//! when a process ends, so the same program always interleaves the same way.
//!
//! Delays (`Delay>>wait`, `Vm::delay_current`): the waiting process is
//! `Delayed` until its deadline; other ready processes run meanwhile. Expired
//! delays make their processes ready (earliest deadline first, at the back of
//! the ready queue) whenever the scheduler picks the next process: at a yield,
//! when a process blocks and when one ends. When no process is ready but a
//! delay is pending, the VM thread sleeps until the earliest deadline
//! (publishing [`VmState::Idle`](crate::obs::sampling::VmState::Idle) to a
//! sampler); with nothing ready and no delay pending it is still a deadlock.
//! The pending delays hold process indices, not objects (the process records
//! root their objects), and a delay whose process no longer waits on it
//! (terminated, suspended) is dropped without waking anything. Only the order
//! of deadlines is deterministic, not the interleaving with processes that
//! never wait: a delay is looked at when the scheduler runs.

use crate::interp::{ProcessState, UnwindAction};
use crate::objects::cls;
use crate::vm::{Vm, VmError};
use lupa_heap::Value;
use std::collections::VecDeque;

/// Scheduling state of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Running now.
    Running,
    /// In the ready queue.
    Ready,
    /// Suspended (new, or by `suspend`).
    Suspended,
    /// Waiting on a semaphore (its index).
    Waiting(usize),
    /// Waiting for a `Delay` to expire (its entry in [`Scheduler::delays`]).
    Delayed,
    /// Finished or terminated.
    Terminated,
}

/// One process.
#[derive(Debug)]
pub struct Proc {
    /// Its state while not running; empty while it runs (then its state is
    /// [`Vm::running`]).
    pub saved: ProcessState,
    /// The Smalltalk Process object.
    pub object: Value,
    /// Scheduling status.
    pub status: Status,
    /// Unwind and end at the next safepoint where it runs.
    pub terminate_requested: bool,
    /// `Process>>name` (any object; nil by default).
    pub name: Value,
    /// `Process>>priority` (recorded; scheduling is round-robin).
    pub priority: i64,
    /// Bytes charged for it against the stack budget: its record, plus its
    /// saved stacks while it is not running (see `runtime_limits`).
    pub charged: usize,
}

/// A semaphore's VM-side state.
#[derive(Debug, Default)]
pub struct Sem {
    /// Signals not yet consumed.
    pub excess: i64,
    /// Waiting processes, first come first served.
    pub waiting: VecDeque<usize>,
}

/// A process waiting on a `Delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingDelay {
    /// When the process may run again.
    pub deadline: std::time::Instant,
    /// The waiting process (its index).
    pub process: usize,
}

/// The scheduler: the running process's state, every process, semaphores,
/// pending delays and the finalization process's semaphore.
#[derive(Debug, Default)]
pub struct Scheduler {
    /// The running process's stack, frames, pending unwinds and meta level (the
    /// other processes' states are saved in their [`Proc`]s).
    pub running: ProcessState,
    /// Index of the running process.
    pub current: usize,
    /// All processes ever created (terminated ones stay, as tombstones).
    pub procs: Vec<Proc>,
    /// Ready processes, in order.
    pub ready: VecDeque<usize>,
    /// Semaphores.
    pub sems: Vec<Sem>,
    /// Pending delays, in the order their processes started waiting.
    pub delays: Vec<PendingDelay>,
    /// The next safepoint must look at the scheduler: a switch to the front of
    /// the ready queue is due (the running process is no longer `Running`), or
    /// the observation mode changed (`Vm::observation_changed`; then the
    /// running process stays `Running` and keeps running).
    pub switch_pending: bool,
    /// The semaphore the finalization process waits on (`System>>finalizationSemaphore:`);
    /// signalled after a collection that queued ephemerons for mourning.
    pub(crate) finalization_semaphore: Value,
    /// A collection queued ephemerons for mourning and the finalization process
    /// has not been scheduled yet.
    pub(crate) finalization_due: bool,
}

impl Scheduler {
    pub(crate) fn init_main(vm: &mut Vm) -> Result<(), VmError> {
        let obj = vm.instantiate(cls::PROCESS, 0)?;
        vm.heap.set_identity_hash(obj, 1);
        vm.sched.procs.push(Proc {
            saved: ProcessState::default(),
            object: obj,
            status: Status::Running,
            terminate_requested: false,
            name: Value::NIL,
            priority: 40,
            charged: 0,
        });
        vm.sched.current = 0;
        vm.recharge(0);
        Ok(())
    }

    /// Every root the scheduler holds, for the collector: the running
    /// process's state, every process record with its saved state, the
    /// finalization semaphore.
    pub(crate) fn visit_roots(&mut self, root: &mut impl FnMut(&mut Value)) {
        self.running.visit_roots(root);
        for p in self.procs.iter_mut() {
            p.visit_roots(root);
        }
        root(&mut self.finalization_semaphore);
    }
}

impl Proc {
    pub(crate) fn visit_roots<F: FnMut(&mut Value)>(&mut self, f: &mut F) {
        f(&mut self.object);
        f(&mut self.name);
        self.saved.visit_roots(f);
    }
}

impl Vm {
    /// The process index of a Process object.
    pub(crate) fn process_index(&mut self, v: Value) -> Option<usize> {
        if !v.is_ptr() || !self.image.is_kind_of(self.class_of(v), cls::PROCESS) {
            return None;
        }
        let i = self.heap.identity_hash(v) as usize;
        let i = i.checked_sub(1)?;
        (i < self.sched.procs.len() && self.sched.procs[i].object == v).then_some(i)
    }

    /// Why no process can be created now (the stack budget is spent), or `None`.
    pub(crate) fn process_budget_problem(&self) -> Option<String> {
        let cost = std::mem::size_of::<Proc>() + 64 * std::mem::size_of::<Value>();
        (!self.limits.can_charge(cost)).then(|| {
            format!(
                "out of memory: {} processes and their stacks fill the stack budget (1/{} of --max-heap, {} MB)",
                self.sched.procs.len(),
                crate::interp::STACK_SHARE,
                self.limits.budget_bytes() >> 20
            )
        })
    }

    /// Charge process `p` what it holds now: its record, and its saved stacks
    /// unless it is the running process (whose stacks the frame limit bounds).
    pub(crate) fn recharge(&mut self, p: usize) {
        let proc = &self.sched.procs[p];
        let stacks = if p == self.sched.current {
            0
        } else {
            proc.saved.memory_bytes()
        };
        let new = std::mem::size_of::<Proc>() + stacks;
        let others = self.limits.others_bytes() - proc.charged + new;
        self.sched.procs[p].charged = new;
        self.limits.set_others(others);
    }

    /// Create a suspended process that will evaluate the 0-argument block `closure`.
    /// The caller checks [`Vm::process_budget_problem`] first.
    pub(crate) fn new_process(&mut self, closure: Value) -> Result<Value, VmError> {
        let obj = self.instantiate(cls::PROCESS, 0)?;
        let idx = self.sched.procs.len();
        self.heap.set_identity_hash(obj, idx as u32 + 1);
        self.sched.procs.push(Proc {
            saved: ProcessState::default(),
            object: obj,
            status: Status::Suspended,
            terminate_requested: false,
            name: Value::NIL,
            priority: 40,
            charged: 0,
        });
        // Build its first frame by activating the block on a fresh stack, as
        // the new process: observers see that activation in the new process,
        // not in its creator's calling context.
        let creator = self.sched.current;
        let mut fresh = ProcessState::default();
        std::mem::swap(&mut self.sched.running, &mut fresh);
        self.sched.current = idx;
        self.sched.running.stack.push(closure);
        let r = self.activate_block(closure, 0);
        self.sched.current = creator;
        std::mem::swap(&mut self.sched.running, &mut fresh);
        self.sched.procs[idx].saved = fresh;
        if let Err(e) = r {
            self.sched.procs[idx].status = Status::Terminated;
            self.sched.procs[idx].saved = ProcessState::default();
            self.recharge(idx);
            return Err(e);
        }
        self.recharge(idx);
        Ok(obj)
    }

    /// Ephemerons were queued for mourning: run the finalization process (the
    /// one waiting on the registered finalization semaphore) before the current
    /// process continues, as Pharo's higher-priority finalization process would.
    /// Without a registered semaphore nothing happens (the heap keeps the queue).
    pub(crate) fn schedule_finalization(&mut self) {
        self.sched.finalization_due = false;
        let s = self.sched.finalization_semaphore;
        let Some(i) = crate::prims::process::sem_index(self, s) else {
            return;
        };
        let Some(p) = self.sched.sems[i].waiting.pop_front() else {
            // The finalization process is busy (or not waiting yet): make it loop
            // again (busy, it is still published as mourning).
            if self.sched.sems[i].excess == 0 {
                self.sched.sems[i].excess = 1;
            }
            return;
        };
        // Until it waits on the semaphore again, its Smalltalk code is
        // published as `Finalization` (`Observation::set_state`).
        self.obs.finalizer = p;
        self.run_first(p);
    }

    /// Make process `p` (not running, not in the ready queue) run at the next
    /// safepoint, before the current process continues: the current one goes to
    /// the front of the ready queue, right after `p` (as when a higher-priority
    /// process preempts it in Pharo).
    pub(crate) fn run_first(&mut self, p: usize) {
        self.sched.procs[p].status = Status::Ready;
        let cur = self.sched.current;
        if self.sched.procs[cur].status == Status::Running {
            self.sched.procs[cur].status = Status::Ready;
            self.sched.ready.push_front(cur);
        }
        self.sched.ready.push_front(p);
        self.sched.switch_pending = true;
    }

    /// Make a process ready (from suspended).
    pub(crate) fn resume_process(&mut self, i: usize) {
        if self.sched.procs[i].status == Status::Suspended {
            self.sched.procs[i].status = Status::Ready;
            self.sched.ready.push_back(i);
        }
    }

    /// Yield: the current process goes to the back of the ready queue (after
    /// the processes whose delays expired).
    pub(crate) fn yield_process(&mut self) {
        self.wake_expired_delays();
        if !self.sched.ready.is_empty() || self.sched.finalization_due {
            let cur = self.sched.current;
            self.sched.procs[cur].status = Status::Ready;
            self.sched.ready.push_back(cur);
            self.sched.switch_pending = true;
            if self.sched.finalization_due {
                // Mourning comes first.
                self.schedule_finalization();
            }
        }
    }

    /// Block the current process (waiting or suspended) and schedule another.
    pub(crate) fn block_current(&mut self, status: Status) -> Result<(), VmError> {
        let cur = self.sched.current;
        self.sched.procs[cur].status = status;
        if cur == self.obs.finalizer
            && let Status::Waiting(s) = status
        {
            let fs = self.sched.finalization_semaphore;
            if crate::prims::process::sem_index(self, fs) == Some(s) {
                // Mourning is over: it waits for the next queue.
                self.obs.finalizer = usize::MAX;
            }
        }
        if self.sched.finalization_due {
            self.schedule_finalization();
        }
        if !self.await_ready() {
            return Err(self.fatal("deadlock: every process is waiting or suspended"));
        }
        self.sched.switch_pending = true;
        Ok(())
    }

    /// Perform a pending switch to the front of the ready queue.
    #[inline(never)]
    pub(crate) fn switch_process(&mut self) -> Result<(), VmError> {
        self.sched.switch_pending = false;
        if self.sched.procs.get(self.sched.current).map(|p| p.status) == Some(Status::Running) {
            // No switch was asked for: only the observation mode changed.
            return Ok(());
        }
        let Some(next) = self.sched.ready.pop_front() else {
            return Ok(());
        };
        let cur = self.sched.current;
        if next != cur {
            self.obs.process_switches += 1;
            if self.obs.recording_events() {
                self.obs.record_event(crate::obs::sampling::VmEvent {
                    kind: crate::obs::sampling::VmEventKind::ProcessSwitch {
                        from: cur as u32,
                        to: next as u32,
                    },
                    start: std::time::Instant::now(),
                    duration: std::time::Duration::ZERO,
                    process: next as u32,
                });
            }
            self.obs
                .set_state(crate::obs::sampling::VmState::ProcessSwitch, 0, next);
            // A running process's `saved` is always empty: park the running state
            // there, then take the next process's in.
            std::mem::swap(&mut self.sched.running, &mut self.sched.procs[cur].saved);
            std::mem::swap(&mut self.sched.running, &mut self.sched.procs[next].saved);
            self.sched.current = next;
            if self.sched.procs[cur].status == Status::Terminated {
                // A finished process keeps no stacks in its tombstone.
                self.sched.procs[cur].saved = ProcessState::default();
            }
            self.recharge(cur);
            self.recharge(next);
            if crate::interp::OBSERVE && self.obs.hooks_on {
                self.obs.process_switch(cur, next);
            }
        }
        self.sched.procs[next].status = Status::Running;
        self.obs
            .set_state(crate::obs::sampling::VmState::Interpreting, 0, next);
        if self.sched.procs[next].terminate_requested {
            self.sched.procs[next].terminate_requested = false;
            self.unwind_to(usize::MAX, UnwindAction::Terminate)?;
        }
        Ok(())
    }

    /// The running process has no frames left: end it and run the next one.
    pub(crate) fn process_finished(&mut self) -> Result<(), VmError> {
        let cur = self.sched.current;
        self.sched.procs[cur].status = Status::Terminated;
        // Its stacks are freed by the switch (not here: replacing the running
        // state in this function, which the interpreter loop inlines, made the
        // whole loop 2-5% slower).
        self.sched.running.stack.clear();
        if cur == self.obs.finalizer {
            self.obs.finalizer = usize::MAX;
        }
        if !self.await_ready() {
            return Err(self.fatal("deadlock: a process ended and no other process can run"));
        }
        self.switch_process()
    }

    /// Terminate process `i` (running its unwind blocks).
    pub(crate) fn terminate_process(&mut self, i: usize) -> Result<(), VmError> {
        let cur = self.sched.current;
        match self.sched.procs[i].status {
            Status::Terminated => Ok(()),
            _ if i == cur => self.unwind_to(usize::MAX, UnwindAction::Terminate),
            status => {
                if let Status::Waiting(s) = status {
                    self.sched.sems[s].waiting.retain(|&p| p != i);
                }
                if status == Status::Delayed {
                    // Its delay must wake nothing.
                    self.sched.delays.retain(|d| d.process != i);
                }
                if i == self.obs.finalizer {
                    self.obs.finalizer = usize::MAX;
                }
                self.sched.ready.retain(|&p| p != i);
                if self.sched.procs[i].saved.frames.is_empty() {
                    self.sched.procs[i].status = Status::Terminated;
                    self.sched.procs[i].saved = crate::interp::ProcessState::default();
                    self.recharge(i);
                    return Ok(());
                }
                // Run it now, unwinding, then come back.
                self.sched.procs[i].terminate_requested = true;
                self.sched.procs[i].status = Status::Ready;
                self.sched.procs[cur].status = Status::Ready;
                self.sched.ready.push_front(cur);
                self.sched.ready.push_front(i);
                self.sched.switch_pending = true;
                Ok(())
            }
        }
    }

    /// `Delay>>wait`: the current process waits until `deadline` (already
    /// past: it goes to the back of the ready queue, as a yield), and the
    /// scheduler picks the next process.
    pub(crate) fn delay_current(&mut self, deadline: std::time::Instant) -> Result<(), VmError> {
        let cur = self.sched.current;
        self.sched.delays.push(PendingDelay {
            deadline,
            process: cur,
        });
        self.block_current(Status::Delayed)
    }

    /// Make the processes whose delays expired ready, earliest deadline first
    /// (ties in the order they started waiting), at the back of the ready
    /// queue; drop delays whose process no longer waits on them.
    pub(crate) fn wake_expired_delays(&mut self) {
        if self.sched.delays.is_empty() {
            return;
        }
        let now = std::time::Instant::now();
        let procs = &self.sched.procs;
        let mut due = Vec::new();
        self.sched.delays.retain(|d| {
            if procs[d.process].status != Status::Delayed {
                false
            } else if d.deadline <= now {
                due.push(*d);
                false
            } else {
                true
            }
        });
        due.sort_by_key(|d| d.deadline);
        for d in due {
            self.sched.procs[d.process].status = Status::Ready;
            self.sched.ready.push_back(d.process);
        }
    }

    /// Before the scheduler picks the next process: wake the expired delays
    /// and, while no process is ready but a delay is pending, sleep until the
    /// earliest deadline (the VM is idle). Answers false when nothing is ready
    /// and no delay is pending (a deadlock). Out of line: `process_finished`
    /// is inlined into the interpreter loop.
    #[inline(never)]
    fn await_ready(&mut self) -> bool {
        self.wake_expired_delays();
        while self.sched.ready.is_empty() {
            let Some(earliest) = self.sched.delays.iter().map(|d| d.deadline).min() else {
                return false;
            };
            let saved =
                self.obs
                    .push_state(crate::obs::sampling::VmState::Idle, 0, self.sched.current);
            let now = std::time::Instant::now();
            if earliest > now {
                std::thread::sleep(earliest - now);
            }
            self.obs.pop_state(saved);
            self.wake_expired_delays();
        }
        true
    }
}
