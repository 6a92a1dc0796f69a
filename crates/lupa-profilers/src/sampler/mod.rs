//! The sampling profiler of the whole VM (VMProfiler, Miranda et al.,
//! "A detailed VM profiler for the Cog VM"): where the VM thread's time goes,
//! between interpreted methods (down to their bytecode and source lines),
//! primitives, the collector and process switches, with Smalltalk call trees.
//!
//! Two ways to sample:
//! - **A sampler thread** ([`SamplerConfig::rate_hz`]): at jittered ticks it reads
//!   the VM's published state ([`lupa_vm::obs::sampling`]) and asks the interpreter for
//!   its stack; each sample is weighted by the VM thread's CPU time since the
//!   previous one ([`SampleClock::Cpu`], the default: a profile of the same program
//!   is the same on a loaded machine) or by wall time ([`SampleClock::Wall`]).
//! - **Deterministic** ([`SamplerConfig::every`]): the interpreter copies its stack
//!   every N message sends, each sample weighing 1; no thread, no clock, the same
//!   samples on every run (for tests and for comparing versions).
//!
//! Contract: [`RunningSampler::finish`] answers a [`Profile`] whose grand total
//! is the sum of the sample weights (nanoseconds of the chosen clock, or
//! samples), laid out as its `build` module says, and [`SamplerStats`]: the requested and
//! achieved rate, the jitter seed, lost and missed ticks, the time per
//! [`VmState`], and the collector's and processes' statistics over the run.
//! The VM thread never waits for the sampler; the sampler never touches the
//! VM's objects.

mod build;
mod clock;
mod compare;
mod header;
mod native;
mod symbols;
mod thread;

pub use compare::{compare, work_profile};
pub use header::header;

use build::{Leaf, Sample};
use lupa_prof::report::SamplingInfo;
use lupa_prof::{Marker, MarkerKind, Metric, Profile, Timeline};
use lupa_vm::{HeapStats, SampleRegister, StackSample, Vm, VmEventKind, VmState};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thread::{SamplerThread, ThreadConfig, Tick};

/// The highest rate the sampler thread accepts, in Hz.
pub const MAX_RATE_HZ: u32 = 20_000;

/// Most ticks kept in one profile (beyond, ticks are counted as lost): 40 MB.
pub const MAX_TICKS: usize = 1 << 20;

/// Which clock weighs the samples of the sampler thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SampleClock {
    /// CPU time of the VM thread (the default).
    #[default]
    Cpu,
    /// Wall-clock time (time the VM thread waits or is descheduled shows).
    Wall,
}

impl SampleClock {
    /// `cpu` or `wall`.
    pub fn name(self) -> &'static str {
        match self {
            SampleClock::Cpu => "cpu",
            SampleClock::Wall => "wall",
        }
    }
}

impl fmt::Display for SampleClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SampleClock {
    type Err = String;

    fn from_str(s: &str) -> Result<SampleClock, String> {
        match s {
            "cpu" => Ok(SampleClock::Cpu),
            "wall" => Ok(SampleClock::Wall),
            _ => Err(format!("unknown clock `{s}` (expected cpu or wall)")),
        }
    }
}

/// How to sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SamplerConfig {
    /// Mean sampling rate of the sampler thread, in Hz (1..=[`MAX_RATE_HZ`]).
    pub rate_hz: u32,
    /// The clock that weighs samples.
    pub clock: SampleClock,
    /// Seed of the interval jitter (intervals are uniform in [0.5, 1.5) of the mean).
    pub seed: u64,
    /// Deterministic mode: a sample every this many sends, no thread.
    pub every: Option<u64>,
    /// Every sample weighs 1 (the metric is samples) instead of its clock's
    /// time; the clock still paces nothing else. Spy's blueprints count so.
    pub unweighted: bool,
    /// Also take the VM thread's native pc at each tick (SIGPROF; Linux) and
    /// report it by Rust function.
    pub native: bool,
}

impl SamplerConfig {
    /// The defaults: 1 kHz, weighted by the VM thread's CPU time, seed 1.
    pub const DEFAULT: SamplerConfig = SamplerConfig {
        rate_hz: 1000,
        clock: SampleClock::Cpu,
        seed: 1,
        every: None,
        unweighted: false,
        native: false,
    };

    /// What Smalltalk's `VMProfiler` starts: the defaults, each sample
    /// weighted by the VM thread's CPU time as `lupa profile` does (so that
    /// its shares hold on a loaded machine).
    pub const SMALLTALK: SamplerConfig = SamplerConfig::DEFAULT;
}

impl Default for SamplerConfig {
    fn default() -> SamplerConfig {
        SamplerConfig::DEFAULT
    }
}

/// Why a sampler cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SamplerError {
    /// The rate is outside 1..=[`MAX_RATE_HZ`].
    #[error("sampling rate {0} Hz is out of range (1 to {MAX_RATE_HZ} Hz)")]
    Rate(u32),
    /// `every` is 0.
    #[error("--every needs a positive number of sends")]
    Every,
    /// This system gives no CPU clock for the VM thread.
    #[error("this system has no CPU clock for the VM thread; use the wall clock (--clock wall)")]
    NoCpuClock,
    /// The thread could not be started.
    #[error("cannot start the sampler thread: {0}")]
    Thread(String),
    /// Native pcs cannot be taken.
    #[error("--native: {0}")]
    Native(String),
    /// A sampler already runs on this VM.
    #[error("a sampler is already running on this VM (one at a time)")]
    Busy,
}

impl SamplerConfig {
    /// Check the configuration.
    pub fn validate(&self) -> Result<(), SamplerError> {
        match self.every {
            Some(0) => Err(SamplerError::Every),
            Some(_) if self.native => Err(SamplerError::Native(
                "native pcs need the sampler thread, not --every".to_string(),
            )),
            Some(_) => Ok(()),
            None if self.rate_hz == 0 || self.rate_hz > MAX_RATE_HZ => {
                Err(SamplerError::Rate(self.rate_hz))
            }
            None => Ok(()),
        }
    }

    /// The profile's metric: samples in deterministic or unweighted mode,
    /// else nanoseconds.
    pub fn metric(&self) -> Metric {
        if self.every.is_some() || self.unweighted {
            Metric::Samples
        } else {
            Metric::Nanoseconds
        }
    }
}

/// A started sampler; [`finish`](RunningSampler::finish) it.
pub struct RunningSampler {
    config: SamplerConfig,
    thread: Option<(Arc<SampleRegister>, SamplerThread)>,
    heap_before: HeapStats,
    sends_before: u64,
    switches_before: u64,
    start: Instant,
}

impl fmt::Debug for RunningSampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningSampler")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Time (or samples) spent in one VM state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateShare {
    /// The state.
    pub state: VmState,
    /// Samples taken in it.
    pub samples: u64,
    /// Their weight (the profile's unit).
    pub value: u64,
}

/// What the sampler measured besides the profile.
#[derive(Debug, Clone)]
pub struct SamplerStats {
    /// The configuration it ran with.
    pub config: SamplerConfig,
    /// Every sample in time order, with the collections and process switches
    /// around them (for the exporters that show time or sends).
    pub timeline: Timeline,
    /// Samples in the profile.
    pub samples: u64,
    /// Ticks taken but not in the profile: storage full, or the program ended
    /// before the interpreter copied their stack.
    pub lost: u64,
    /// Ticks skipped because the sampler thread was not scheduled in time.
    pub missed: u64,
    /// Ticks per second of wall time (`None` in deterministic mode).
    pub achieved_hz: Option<f64>,
    /// Wall time of the run.
    pub wall: Duration,
    /// CPU time of the VM thread over the run (`None`: deterministic mode, or no CPU clock).
    pub cpu: Option<Duration>,
    /// CPU time of the sampler thread itself (`None`: deterministic mode, or
    /// no CPU clock): the sampling's own cost, reported next to the run's.
    pub sampler_cpu: Option<Duration>,
    /// Message sends over the run.
    pub sends: u64,
    /// Samples and weight per VM state, in [`VmState::ALL`] order.
    pub states: Vec<StateShare>,
    /// Collector statistics over the run (the difference of the heap's counters).
    pub gc: GcShare,
    /// Processes seen in samples.
    pub processes: usize,
    /// Process switches over the run.
    pub process_switches: u64,
    /// The heap's statistics at the end of the run.
    pub heap_after: HeapStats,
    /// Interpreted samples by bytecode: `(method id, instruction index,
    /// value)`, the instruction being the send at which the stack was copied.
    pub sites: Vec<(u32, u32, u64)>,
    /// Samples taken in primitives: `(id of the method holding the primitive,
    /// samples, value)`.
    pub primitives: Vec<(u32, u64, u64)>,
    /// With `native`: samples by Rust function of the `lupa` binary
    /// (`(function, samples, value)`, most first; `<unknown>` for pcs outside
    /// it), or why they could not be symbolised.
    pub native: NativeFunctions,
    /// With `native`: ticks whose native pc was not taken (the VM thread did
    /// not run the handler in time).
    pub native_missed: u64,
}

impl SamplerStats {
    /// What the JSON export says of how the profile was sampled.
    pub fn sampling_info(&self) -> SamplingInfo {
        let deterministic = self.config.every.is_some();
        SamplingInfo {
            clock: if deterministic {
                "sends".to_string()
            } else {
                self.config.clock.name().to_string()
            },
            requested_hz: (!deterministic).then_some(self.config.rate_hz),
            achieved_hz: self.achieved_hz,
            seed: (!deterministic).then_some(self.config.seed),
            every: self.config.every,
            samples: self.samples,
            lost: self.lost,
            missed: self.missed,
        }
    }
}

/// The collector's work over a profiled run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcShare {
    /// Scavenges.
    pub scavenges: u64,
    /// Time in scavenges.
    pub scavenge_time: Duration,
    /// Full collections.
    pub full_gcs: u64,
    /// Time in full collections.
    pub full_gc_time: Duration,
    /// Bytes allocated.
    pub allocated_bytes: u64,
    /// Bytes tenured (promoted to the old space).
    pub tenured_bytes: u64,
}

/// Native samples by Rust function: `(function, samples, value)`, most
/// first, or why the pcs could not be symbolised.
pub type NativeFunctions = Result<Vec<(String, u64, u64)>, String>;

/// A finished sampling profile.
#[derive(Debug, Clone)]
pub struct Sampled {
    /// The call tree, weighted.
    pub profile: Profile,
    /// The sampler's own measures.
    pub stats: SamplerStats,
}

impl RunningSampler {
    /// Start sampling `vm` (call on the VM's thread: its CPU clock is this
    /// thread's).
    pub fn start(vm: &mut Vm, config: SamplerConfig) -> Result<RunningSampler, SamplerError> {
        config.validate()?;
        if vm.obs.sampling() {
            return Err(SamplerError::Busy);
        }
        let thread = match config.every {
            Some(n) => {
                vm.sample_every(n);
                None
            }
            None => {
                let cpu = clock::ThreadCpuClock::of_current_thread();
                if config.clock == SampleClock::Cpu && cpu.is_none() {
                    return Err(SamplerError::NoCpuClock);
                }
                let native = if config.native {
                    Some(native::NativeTarget::for_current_thread().map_err(SamplerError::Native)?)
                } else {
                    None
                };
                let register = vm.attach_sampler();
                let t = SamplerThread::spawn(
                    register.clone(),
                    cpu,
                    ThreadConfig {
                        interval: Duration::from_nanos(1_000_000_000 / u64::from(config.rate_hz)),
                        seed: config.seed,
                        max_ticks: MAX_TICKS,
                    },
                    native,
                )
                .map_err(|e| {
                    vm.detach_sampler();
                    SamplerError::Thread(e.to_string())
                })?;
                Some((register, t))
            }
        };
        Ok(RunningSampler {
            config,
            thread,
            heap_before: vm.heap.stats().clone(),
            sends_before: vm.obs.sends,
            switches_before: vm.obs.process_switches,
            start: Instant::now(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> SamplerConfig {
        self.config
    }

    /// Stop sampling and build the profile.
    pub fn finish(self, vm: &mut Vm) -> Sampled {
        let wall = self.start.elapsed();
        let report = match self.thread {
            Some((_, t)) => {
                let r = t.stop();
                vm.detach_sampler();
                Some(r)
            }
            None => {
                vm.sample_every(0);
                None
            }
        };
        let stacks = vm.obs.take_stacks();
        vm.heap.refresh_stats();
        let heap = vm.heap.stats().clone();
        let gc = GcShare {
            scavenges: heap.scavenges - self.heap_before.scavenges,
            scavenge_time: heap
                .scavenge_time
                .saturating_sub(self.heap_before.scavenge_time),
            full_gcs: heap.full_gcs - self.heap_before.full_gcs,
            full_gc_time: heap
                .full_gc_time
                .saturating_sub(self.heap_before.full_gc_time),
            allocated_bytes: heap.allocated_bytes - self.heap_before.allocated_bytes,
            tenured_bytes: heap.tenured_bytes - self.heap_before.tenured_bytes,
        };
        let sends = vm.obs.sends - self.sends_before;
        let mut states: Vec<StateShare> = VmState::ALL
            .iter()
            .map(|&state| StateShare {
                state,
                samples: 0,
                value: 0,
            })
            .collect();
        let mut processes = std::collections::BTreeSet::new();
        let mut primitives: std::collections::BTreeMap<u32, (u64, u64)> = Default::default();
        let mut native_functions: NativeFunctions = Ok(Vec::new());
        let mut native_missed = 0;
        let metric = self.config.metric();
        let sampler_cpu = report
            .as_ref()
            .and_then(|r| r.own_cpu_ns)
            .map(Duration::from_nanos);
        let (profile, sites, lost, missed, achieved_hz, cpu, wall, timeline) = match report {
            None => {
                let mut prev = self.sends_before;
                let samples = stacks.iter().filter(|s| s.seq == 0).map(|s| {
                    processes.insert(s.process);
                    states[0].samples += 1;
                    states[0].value += 1;
                    let sends = s.sends.saturating_sub(prev);
                    prev = prev.max(s.sends);
                    Sample {
                        process: s.process,
                        frames: &s.frames,
                        leaf: Leaf::Interpreted,
                        weight: 1,
                        time_ns: s.sends.saturating_sub(self.sends_before),
                        state: VmState::Interpreting,
                        sends,
                    }
                });
                let (mut profile, sites, timeline) = build::build(vm, metric, samples);
                crate::site_lines::attach(vm, &sites, &mut profile);
                (profile, sites, 0, 0, None, None, wall, timeline)
            }
            Some(r) => {
                let (clock, unweighted) = (self.config.clock, self.config.unweighted);
                let matched = match_stacks(&r.ticks, &stacks);
                let mut lost = r.lost;
                let mut prev = self.sends_before;
                let mut now_ns = 0u64;
                let samples = r.ticks.iter().zip(matched).filter_map(|(t, s)| {
                    now_ns = now_ns.saturating_add(t.wall_ns);
                    let Some(s) = s else {
                        lost += 1;
                        return None;
                    };
                    let sends = s.sends.saturating_sub(prev);
                    prev = prev.max(s.sends);
                    let weight = match clock {
                        _ if unweighted => 1,
                        SampleClock::Cpu => t.cpu_ns,
                        SampleClock::Wall => t.wall_ns,
                    };
                    let share = &mut states[t.state.state as usize];
                    share.samples += 1;
                    share.value += weight;
                    if t.state.state == VmState::Primitive {
                        let p = primitives.entry(t.state.detail).or_default();
                        p.0 += 1;
                        p.1 += weight;
                    }
                    processes.insert(s.process);
                    Some(Sample {
                        process: s.process,
                        frames: &s.frames,
                        leaf: Leaf::of(t.state.state, t.state.detail),
                        weight,
                        time_ns: now_ns,
                        state: t.state.state,
                        sends,
                    })
                });
                let (mut profile, sites, mut timeline) = build::build(vm, metric, samples);
                timeline.cpu_weights = clock == SampleClock::Cpu && !unweighted;
                let (events, dropped) = vm.obs.take_events();
                timeline.dropped_markers = dropped;
                if let Some(origin) = r.started {
                    timeline.markers = events.iter().map(|e| marker(e, origin)).collect();
                }
                crate::site_lines::attach(vm, &sites, &mut profile);
                if self.config.native {
                    (native_functions, native_missed) = by_function(&r.ticks, clock, unweighted);
                }
                let secs = r.wall.as_secs_f64();
                let hz = (secs > 0.0).then(|| r.ticks.len() as f64 / secs);
                (
                    profile,
                    sites,
                    lost,
                    r.missed,
                    hz,
                    r.cpu_ns.map(Duration::from_nanos),
                    r.wall,
                    timeline,
                )
            }
        };
        let samples = states.iter().map(|s| s.samples).sum();
        Sampled {
            profile,
            stats: SamplerStats {
                config: self.config,
                samples,
                lost,
                missed,
                achieved_hz,
                wall,
                cpu,
                sampler_cpu,
                sends,
                states,
                gc,
                processes: processes.len(),
                process_switches: vm.obs.process_switches - self.switches_before,
                heap_after: heap,
                sites,
                primitives: primitives
                    .into_iter()
                    .map(|(id, (n, v))| (id, n, v))
                    .collect(),
                native: native_functions,
                native_missed,
                timeline,
            },
        }
    }
}

/// A VM event as a timeline marker, its time from `origin`.
fn marker(e: &lupa_vm::VmEvent, origin: Instant) -> Marker {
    let (kind, detail) = match e.kind {
        VmEventKind::Scavenge { tenured_bytes } => (
            MarkerKind::Scavenge,
            format!("{tenured_bytes} bytes tenured"),
        ),
        VmEventKind::FullGc { live_bytes } => {
            (MarkerKind::FullGc, format!("{live_bytes} bytes live after"))
        }
        VmEventKind::ProcessSwitch { from, to } => (
            MarkerKind::ProcessSwitch,
            format!(
                "{} to {}",
                lupa_prof::process_label(from as usize),
                lupa_prof::process_label(to as usize)
            ),
        ),
    };
    Marker {
        kind,
        start_ns: e.start.saturating_duration_since(origin).as_nanos() as u64,
        duration_ns: e.duration.as_nanos() as u64,
        process: e.process as usize,
        detail,
    }
}

/// The ticks' native pcs by Rust function: `(function, samples, value)`,
/// most first, and the ticks without a pc.
fn by_function(ticks: &[Tick], clock: SampleClock, unweighted: bool) -> (NativeFunctions, u64) {
    let missed = ticks.iter().filter(|t| t.native_pc == 0).count() as u64;
    let symbols = match symbols::Symbols::of_this_binary() {
        Ok(s) => s,
        Err(e) => return (Err(e), missed),
    };
    let mut by: std::collections::HashMap<&str, (u64, u64)> = Default::default();
    for t in ticks.iter().filter(|t| t.native_pc != 0) {
        let name = symbols.name_of(t.native_pc).unwrap_or("<unknown>");
        let weight = match clock {
            _ if unweighted => 1,
            SampleClock::Cpu => t.cpu_ns,
            SampleClock::Wall => t.wall_ns,
        };
        let e = by.entry(name).or_default();
        e.0 += 1;
        e.1 += weight;
    }
    let mut out: Vec<(String, u64, u64)> = by
        .into_iter()
        .map(|(n, (c, v))| (n.to_string(), c, v))
        .collect();
    out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    (Ok(out), missed)
}

/// For each tick (in order), the first copied stack whose number is at
/// least the tick's: the stack the interpreter copied at its first send after
/// the tick (see `thread`'s contract). `None`: no send came after it.
fn match_stacks<'a>(ticks: &[Tick], stacks: &'a [StackSample]) -> Vec<Option<&'a StackSample>> {
    let mut copied: Vec<&StackSample> = stacks.iter().filter(|s| s.seq != 0).collect();
    copied.sort_by_key(|s| s.seq);
    let mut j = 0;
    ticks
        .iter()
        .map(|t| {
            while j < copied.len() && copied[j].seq < t.seq {
                j += 1;
            }
            copied.get(j).copied()
        })
        .collect()
}
