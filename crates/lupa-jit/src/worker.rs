//! The compiler thread: Cranelift runs beside the VM thread (as HotSpot's
//! and V8's compiler threads do), so that compiling a hot method costs the
//! VM thread only copying what codegen reads of it and installing the
//! machine code that comes back.
//!
//! **Contract.** The VM thread sends a [`Job`] (a [`Unit`], the address of
//! the function's entry counter, a ticket) and goes on interpreting; the
//! thread compiles jobs one at a time, in order, with its own ISA handle,
//! Cranelift `Context` and `FunctionBuilderContext`, and sends back a
//! [`Done`] (the machine code and pc map, or why not, and how long it took).
//! It owns nothing of the VM: no `Rc`, no `Image`, never the code zone,
//! which the VM thread alone writes, at a safepoint ([`Worker::take`] is
//! called there; see `lib.rs` for what is checked before a result is
//! installed). [`Worker::ready`] is one atomic load, for the VM's polls.
//!
//! **Failures.** A panic while compiling a job is caught where panics unwind
//! (debug and test builds): that job answers an error (its method stays
//! interpreted) and the thread goes on with fresh Cranelift contexts. In a
//! release build a panic aborts the process, as on the VM thread (the
//! workspace's `panic = "abort"`), with the panic's message. A thread that
//! is gone (it could not be spawned, or ended) makes [`Worker::take`] answer
//! [`Stopped`]: the jobs it held stay interpreted.
//!
//! **Ending.** Dropping the [`Worker`] asks the thread to stop before its
//! next job, closes its queue and joins it: at most the job being compiled
//! finishes (a few milliseconds), so a VM that ends with jobs queued does not
//! wait for them.

use crate::codegen::{self, Compiled};
use crate::unit::Unit;
use cranelift_codegen::Context;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_frontend::FunctionBuilderContext;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One function to compile.
pub(crate) struct Job {
    /// Names the job in its [`Done`].
    pub(crate) ticket: u64,
    /// What codegen reads of the method or block (boxed: a job is moved
    /// through the queue).
    pub(crate) unit: Box<Unit>,
    /// The address of the function's entry counter (a code-zone slot the
    /// VM thread took for it).
    pub(crate) counter: u64,
}

/// A job compiled (or not).
pub(crate) struct Done {
    /// The job's ticket.
    pub(crate) ticket: u64,
    /// Its machine code and maps, or why there is none.
    pub(crate) result: Result<Compiled, String>,
    /// The thread's CPU time on it (its wall time where the thread's CPU
    /// clock cannot be read): the time it took on a machine with a core to
    /// spare, which the wall time on a loaded one is not.
    pub(crate) elapsed: Duration,
}

/// The compiler thread is gone: nothing more will come back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stopped;

/// What the two threads share besides the queues.
#[derive(Default)]
struct Shared {
    /// Results sent and not taken yet.
    ready: AtomicUsize,
    /// Stop before the next job.
    stop: AtomicBool,
    /// The thread's CPU time so far, in nanoseconds (after its last job).
    cpu_ns: AtomicU64,
}

/// The VM thread's handle on the compiler thread.
pub(crate) struct Worker {
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Start a compiler thread for `isa`.
    pub(crate) fn spawn(isa: OwnedTargetIsa) -> std::io::Result<Worker> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done) = mpsc::channel::<Done>();
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("lupa-jit".to_string())
            // As much stack as the VM thread has had its compilations on
            // (the main thread's 8 MB; a spawned thread gets 2 MB).
            .stack_size(8 << 20)
            .spawn(move || run(isa, job_rx, done_tx, theirs))?;
        Ok(Worker {
            jobs: Some(jobs),
            done,
            shared,
            thread: Some(thread),
        })
    }

    /// Queue `job`; gives it back when the thread is gone.
    pub(crate) fn submit(&self, job: Job) -> Result<(), Job> {
        match &self.jobs {
            Some(q) => q.send(job).map_err(|e| e.0),
            None => Err(job),
        }
    }

    /// Has the thread finished a job not taken yet? (One atomic load.)
    pub(crate) fn ready(&self) -> bool {
        self.shared.ready.load(Ordering::Acquire) > 0
    }

    /// The next finished job: `None` when none is finished yet (with
    /// `wait`, block until one is instead).
    pub(crate) fn take(&self, wait: bool) -> Result<Option<Done>, Stopped> {
        let done = if wait {
            self.done.recv().map_err(|_| Stopped)?
        } else {
            match self.done.try_recv() {
                Ok(d) => d,
                Err(TryRecvError::Empty) => return Ok(None),
                Err(TryRecvError::Disconnected) => return Err(Stopped),
            }
        };
        self.shared.ready.fetch_sub(1, Ordering::AcqRel);
        Ok(Some(done))
    }

    /// The thread's CPU time so far (as of its last job).
    pub(crate) fn cpu_time(&self) -> Duration {
        Duration::from_nanos(self.shared.cpu_ns.load(Ordering::Relaxed))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            // A thread that panicked has nothing more to say.
            let _ = t.join();
        }
    }
}

/// The thread's loop: compile each job in turn until the queue closes or a
/// stop is asked for.
fn run(isa: OwnedTargetIsa, jobs: Receiver<Job>, done: Sender<Done>, shared: Arc<Shared>) {
    let mut ctx = Context::new();
    let mut fctx = FunctionBuilderContext::new();
    while let Ok(job) = jobs.recv() {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let t0 = Instant::now();
        let c0 = crate::zone::thread_cpu_time();
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            codegen::compile(&*isa, &mut ctx, &mut fctx, &job.unit, job.counter)
        }));
        let result = compiled.unwrap_or_else(|panic| {
            // The contexts may be half-way through a function: start anew.
            ctx = Context::new();
            fctx = FunctionBuilderContext::new();
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(format!("the compiler thread panicked: {what}"))
        });
        let wall = t0.elapsed();
        let c1 = crate::zone::thread_cpu_time();
        if let Some(t) = c1 {
            shared
                .cpu_ns
                .store(t.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
        }
        let elapsed = match (c0, c1) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => wall,
        };
        // Counted before it is sent, so that a result taken is always
        // counted (the count may say ready a moment before it arrives).
        shared.ready.fetch_add(1, Ordering::AcqRel);
        let sent = done.send(Done {
            ticket: job.ticket,
            result,
            elapsed,
        });
        if sent.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_compiler::Op;

    fn worker() -> Worker {
        let isa = crate::host_isa().expect("an ISA for the host");
        Worker::spawn(isa).expect("a thread")
    }

    /// A unit whose code pushes a literal it does not have: codegen
    /// indexes past the literals and panics.
    fn broken_unit() -> Unit {
        Unit::for_tests(vec![Op::PushLiteral(3), Op::ReturnTop])
    }

    #[test]
    fn a_job_is_compiled_on_the_thread_and_comes_back() {
        let w = worker();
        let counter = Box::new(0u64);
        let unit = Unit::for_tests(vec![Op::PushSelf, Op::ReturnTop]);
        let job = Job {
            ticket: 7,
            unit: Box::new(unit),
            counter: &*counter as *const u64 as u64,
        };
        assert!(w.submit(job).is_ok());
        let done = w.take(true).expect("the thread runs").expect("a result");
        assert_eq!(done.ticket, 7);
        let compiled = done.result.expect("compiled");
        assert!(!compiled.code.is_empty());
        assert!(!w.ready());
        assert!(matches!(w.take(false), Ok(None)));
    }

    #[test]
    fn a_panic_while_compiling_fails_that_job_only() {
        if !cfg!(panic = "unwind") {
            return;
        }
        let w = worker();
        let counter = Box::new(0u64);
        let at = &*counter as *const u64 as u64;
        let jobs = [
            broken_unit(),
            Unit::for_tests(vec![Op::PushSelf, Op::ReturnTop]),
        ];
        for (ticket, unit) in jobs.into_iter().enumerate() {
            let job = Job {
                ticket: ticket as u64,
                unit: Box::new(unit),
                counter: at,
            };
            assert!(w.submit(job).is_ok());
        }
        let first = w.take(true).expect("runs").expect("a result");
        let why = first.result.err().expect("the broken job fails");
        assert!(why.contains("panicked"), "{why}");
        let second = w.take(true).expect("still runs").expect("a result");
        assert!(second.result.is_ok(), "the next job compiles");
    }

    #[test]
    fn dropping_the_worker_with_jobs_queued_does_not_wait_for_them() {
        let w = worker();
        let counter = Box::new(0u64);
        for ticket in 0..200 {
            let job = Job {
                ticket,
                unit: Box::new(Unit::for_tests(vec![Op::PushSelf, Op::ReturnTop])),
                counter: &*counter as *const u64 as u64,
            };
            assert!(w.submit(job).is_ok());
        }
        drop(w);
    }
}
