//! The interpreter's side of processes: creating a process (its first
//! frame is an activation of its block), blocking and switching at a
//! safepoint (with the observation of the switch), ending and terminating a
//! process (unwinding its `ensure:` blocks), scheduling the finalization
//! process, delays, and charging processes against the stack budget. The
//! scheduler's own state and rules are in `sched`.

use crate::objects::cls;
use crate::sched::{PendingDelay, Proc, Status};
use crate::sched::{ProcessState, UnwindAction};
use crate::vm::{Vm, VmError};
use lupa_heap::Value;

impl Vm {
    pub(crate) fn init_main_process(&mut self) -> Result<(), VmError> {
        let obj = self.instantiate(cls::PROCESS, 0)?;
        self.heap.set_identity_hash(obj, 1);
        self.sched.procs.push(Proc {
            saved: ProcessState::default(),
            object: obj,
            status: Status::Running,
            terminate_requested: false,
            name: Value::NIL,
            priority: 40,
            charged: 0,
        });
        self.sched.current = 0;
        self.recharge(0);
        Ok(())
    }

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
        self.level_changed();
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
        self.sched.run_first(p);
    }

    /// Yield: the current process goes to the back of the ready queue (after
    /// the processes whose delays expired).
    pub(crate) fn yield_process(&mut self) {
        self.sched.wake_expired_delays();
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
        if !self.await_ready()? {
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
            self.level_changed();
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
        if !self.await_ready()? {
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
                    self.sched.procs[i].saved = ProcessState::default();
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

    /// Before the scheduler picks the next process: wake the expired delays
    /// and, while no process is ready but a delay is pending, sleep until the
    /// earliest deadline (the VM is idle; what the program printed is flushed
    /// first, and the sleep ends early when a stop is requested from
    /// outside: [`VmError::Interrupted`]). Answers false when nothing is ready
    /// and no delay is pending (a deadlock). Out of line: `process_finished`
    /// is inlined into the interpreter loop.
    #[inline(never)]
    fn await_ready(&mut self) -> Result<bool, VmError> {
        /// The longest sleep between two looks at a stop request.
        const SLICE: std::time::Duration = std::time::Duration::from_millis(50);
        self.sched.wake_expired_delays();
        while self.sched.ready.is_empty() {
            let Some(earliest) = self.sched.delays.iter().map(|d| d.deadline).min() else {
                return Ok(false);
            };
            // Best effort: a failed flush is reported by the next write.
            let _ = self.io.flush();
            let saved =
                self.obs
                    .push_state(crate::obs::sampling::VmState::Idle, 0, self.sched.current);
            loop {
                if crate::sched::interrupt::pending() {
                    self.obs.pop_state(saved);
                    return Err(self.interrupted());
                }
                let now = std::time::Instant::now();
                if earliest <= now {
                    break;
                }
                std::thread::sleep((earliest - now).min(SLICE));
            }
            self.obs.pop_state(saved);
            self.sched.wake_expired_delays();
        }
        Ok(true)
    }
}
