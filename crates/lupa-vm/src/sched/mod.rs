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

pub mod interrupt;
pub(crate) mod poll;
mod sem_table;
mod state;

use lupa_heap::Value;
pub use state::Frame;
pub(crate) use state::{BaseSave, PendingUnwind, ProcessState, UnwindAction};
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
    /// other processes' states are saved in their `Proc`s).
    pub running: ProcessState,
    /// Index of the running process.
    pub current: usize,
    /// All processes ever created (terminated ones stay, as tombstones).
    pub procs: Vec<Proc>,
    /// Ready processes, in order.
    pub ready: VecDeque<usize>,
    /// Semaphore records, by index (see `sem_table`).
    pub sems: Vec<Sem>,
    /// The Semaphore of each record, in a weak array (nil until the first
    /// Semaphore; a slot is nil once its Semaphore died).
    pub(crate) sem_objects: Value,
    /// Records whose Semaphore died, to reuse.
    pub(crate) free_sems: Vec<usize>,
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
    /// The index of the running process (0 is the main process), as activation
    /// events report it.
    pub fn current_process(&self) -> usize {
        self.current
    }

    /// Every root the scheduler holds, for the collector: the running
    /// process's state, every process record with its saved state, the
    /// finalization semaphore, the semaphore table's weak array.
    pub(crate) fn visit_roots(&mut self, root: &mut impl FnMut(&mut Value)) {
        self.running.visit_roots(root);
        for p in self.procs.iter_mut() {
            p.visit_roots(root);
        }
        root(&mut self.finalization_semaphore);
        root(&mut self.sem_objects);
    }
}

impl Proc {
    pub(crate) fn visit_roots<F: FnMut(&mut Value)>(&mut self, f: &mut F) {
        f(&mut self.object);
        f(&mut self.name);
        self.saved.visit_roots(f);
    }
}

impl Scheduler {
    /// Make process `p` (not running, not in the ready queue) run at the next
    /// safepoint, before the current process continues: the current one goes to
    /// the front of the ready queue, right after `p` (as when a higher-priority
    /// process preempts it in Pharo).
    pub(crate) fn run_first(&mut self, p: usize) {
        self.procs[p].status = Status::Ready;
        let cur = self.current;
        if self.procs[cur].status == Status::Running {
            self.procs[cur].status = Status::Ready;
            self.ready.push_front(cur);
        }
        self.ready.push_front(p);
        self.switch_pending = true;
    }

    /// Make a process ready (from suspended).
    pub(crate) fn resume_process(&mut self, i: usize) {
        if self.procs[i].status == Status::Suspended {
            self.procs[i].status = Status::Ready;
            self.ready.push_back(i);
        }
    }

    /// Make the processes whose delays expired ready, earliest deadline first
    /// (ties in the order they started waiting), at the back of the ready
    /// queue; drop delays whose process no longer waits on them.
    pub(crate) fn wake_expired_delays(&mut self) {
        if self.delays.is_empty() {
            return;
        }
        let now = std::time::Instant::now();
        let procs = &self.procs;
        let mut due = Vec::new();
        self.delays.retain(|d| {
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
            self.procs[d.process].status = Status::Ready;
            self.ready.push_back(d.process);
        }
    }
}
