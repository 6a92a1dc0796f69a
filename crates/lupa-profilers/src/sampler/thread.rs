//! The sampler thread: at each jittered tick it reads the VM's sampling
//! register, asks the interpreter for the running stack, and writes a
//! [`Tick`] into preallocated storage. It never stops the VM thread and never
//! takes a lock the VM thread takes.
//!
//! Contract. Ticks are numbered from 1 in order; tick `seq` asks for the
//! stack with [`SampleRegister::request_stack`]`(seq)`, so the stack the
//! interpreter copies at its next send carries that number (a later request
//! may overwrite an unanswered one: both ticks then share the later copy, which
//! is the same stack since no send ran in between). Storage is a list of
//! chunks of [`CHUNK`] ticks, the next one allocated on the sampler thread
//! before it is needed; past `max_ticks` ticks are counted as lost, never
//! stored.

use super::clock::ThreadCpuClock;
use super::native::NativeTarget;
use lupa_vm::{SampleRegister, StateWord};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Ticks per storage chunk.
pub(crate) const CHUNK: usize = 4096;

/// One tick of the sampler: what the VM was doing and how much time passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tick {
    /// Its sequence number (from 1), the number of the stack it asked for.
    pub(crate) seq: u64,
    /// The VM state then.
    pub(crate) state: StateWord,
    /// VM thread CPU nanoseconds since the previous tick (or the start).
    pub(crate) cpu_ns: u64,
    /// Wall nanoseconds since the previous tick (or the start).
    pub(crate) wall_ns: u64,
    /// The VM thread's native pc (0: not taken).
    pub(crate) native_pc: u64,
}

/// What the thread reports when stopped.
#[derive(Debug, Default)]
pub(crate) struct ThreadReport {
    /// Every stored tick, in order.
    pub(crate) ticks: Vec<Tick>,
    /// Ticks not stored (storage full).
    pub(crate) lost: u64,
    /// Deadlines missed by more than one mean interval (the thread was not
    /// scheduled in time): those ticks were skipped, not taken late.
    pub(crate) missed: u64,
    /// Wall time from the start to the stop.
    pub(crate) wall: Duration,
    /// VM thread CPU time from the start to the stop (`None`: no CPU clock).
    pub(crate) cpu_ns: Option<u64>,
    /// When the thread started: the time origin of its ticks.
    pub(crate) started: Option<Instant>,
    /// The sampler thread's own CPU time (`None`: no CPU clock): what the
    /// sampling cost besides the VM thread's stack copies.
    pub(crate) own_cpu_ns: Option<u64>,
}

/// A running sampler thread.
pub(crate) struct SamplerThread {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<ThreadReport>,
}

/// How the thread samples.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThreadConfig {
    /// Mean interval between ticks.
    pub(crate) interval: Duration,
    /// Jitter seed.
    pub(crate) seed: u64,
    /// Most ticks stored.
    pub(crate) max_ticks: usize,
}

impl SamplerThread {
    /// Start sampling `register`, timing with `cpu` (the VM thread's clock;
    /// `None`: wall time only).
    pub(crate) fn spawn(
        register: Arc<SampleRegister>,
        cpu: Option<ThreadCpuClock>,
        config: ThreadConfig,
        native: Option<NativeTarget>,
    ) -> std::io::Result<SamplerThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("lupa-sampler".to_string())
            .spawn(move || run(&register, cpu, config, native.as_ref(), &flag))?;
        Ok(SamplerThread { stop, handle })
    }

    /// Stop the thread (waking it from its sleep) and answer what it sampled.
    pub(crate) fn stop(self) -> ThreadReport {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.thread().unpark();
        self.handle.join().unwrap_or_default()
    }
}

/// An interval uniform in [0.5, 1.5) of `mean`: no period for a program to
/// alias with.
pub(crate) fn jittered(rng: &mut StdRng, mean: Duration) -> Duration {
    let mean = mean.as_nanos().max(1) as f64;
    Duration::from_nanos((mean * rng.random_range(0.5..1.5)) as u64)
}

/// Give the last stored tick the native pc its signal's handler copied.
fn collect_native(native: &NativeTarget, chunks: &mut [Vec<Tick>]) {
    if let Some(last) = chunks.last_mut().and_then(|c| c.last_mut())
        && let Some(pc) = native.collect(last.seq)
    {
        last.native_pc = pc;
    }
}

fn run(
    register: &SampleRegister,
    cpu: Option<ThreadCpuClock>,
    config: ThreadConfig,
    native: Option<&NativeTarget>,
    stop: &AtomicBool,
) -> ThreadReport {
    let mut rng = StdRng::seed_from_u64(config.seed);
    let start = Instant::now();
    let cpu_start = cpu.and_then(|c| c.read_ns());
    let mut chunks: Vec<Vec<Tick>> = vec![Vec::with_capacity(CHUNK)];
    let mut spare: Option<Vec<Tick>> = Some(Vec::with_capacity(CHUNK));
    let mut report = ThreadReport {
        started: Some(start),
        ..ThreadReport::default()
    };
    let (mut last_wall, mut last_cpu) = (start, cpu_start.unwrap_or(0));
    let mut deadline = start;
    let mut stored = 0usize;
    let mut seq = 0u64;
    loop {
        deadline += jittered(&mut rng, config.interval);
        let mut now = Instant::now();
        if now > deadline && now - deadline > config.interval {
            report.missed += 1;
            deadline = now;
        }
        // Parked, not asleep: `stop` wakes it at once (a wake-up for another
        // reason parks again until the deadline).
        while deadline > now && !stop.load(Ordering::Relaxed) {
            std::thread::park_timeout(deadline - now);
            now = Instant::now();
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let wall = Instant::now();
        let cpu_now = cpu.and_then(|c| c.read_ns()).unwrap_or(0);
        if let Some(n) = native {
            collect_native(n, &mut chunks);
        }
        seq += 1;
        if let Some(n) = native {
            n.send(seq);
        }
        let tick = Tick {
            native_pc: 0,
            seq,
            state: register.read_state(),
            cpu_ns: cpu_now.saturating_sub(last_cpu),
            wall_ns: (wall - last_wall).as_nanos() as u64,
        };
        register.request_stack(seq);
        (last_wall, last_cpu) = (wall, cpu_now);
        if stored >= config.max_ticks {
            report.lost += 1;
            continue;
        }
        let full = chunks.last().is_none_or(|c| c.len() == CHUNK);
        if full {
            chunks.push(spare.take().unwrap_or_else(|| Vec::with_capacity(CHUNK)));
        }
        if let Some(c) = chunks.last_mut() {
            c.push(tick);
            stored += 1;
        }
        if spare.is_none() {
            spare = Some(Vec::with_capacity(CHUNK));
        }
    }
    if let Some(n) = native {
        // The last signal's handler has had the time the VM took to stop.
        collect_native(n, &mut chunks);
    }
    report.wall = start.elapsed();
    report.cpu_ns = cpu_start.and_then(|s| Some(cpu?.read_ns()?.saturating_sub(s)));
    report.ticks = chunks.into_iter().flatten().collect();
    report.own_cpu_ns = ThreadCpuClock::of_current_thread().and_then(|c| c.read_ns());
    report
}
