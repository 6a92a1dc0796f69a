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
mod self_timed;
mod symbols;
mod thread;

pub use build::ENTRY;
pub use compare::{compare, work_profile};
pub use header::header;

use build::{Leaf, Sample};
use lupa_prof::report::{NativeFunctionDoc, SamplingInfo};
use lupa_prof::{Marker, MarkerKind, Metric, Profile, Timeline};
use lupa_vm::{HeapStats, NativeFunctionInfo, StackEntry, Vm, VmEventKind, VmState};
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};
use thread::{SamplerThread, ThreadConfig, ThreadReport, Tick};

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
    driver: Driver,
    heap_before: HeapStats,
    sends_before: u64,
    switches_before: u64,
    start: Instant,
}

/// What takes the samples.
enum Driver {
    /// The interpreter, every N sends (deterministic).
    Every,
    /// The VM thread itself, at its polls (the default; `self_timed.rs`).
    SelfTimed,
    /// A sampler thread (for `--native`, whose pcs need a signal at the tick).
    Thread(SamplerThread),
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
    /// value)`, the instruction being the send at which the stack was copied;
    /// each site once (the values of its samples summed), ordered by method
    /// id and instruction.
    pub sites: Vec<(u32, u32, u64)>,
    /// Samples in native code (the JIT's) by bytecode: `(method id,
    /// instruction index or [`ENTRY`], value)`; the instruction is where the
    /// native pc was (`native`), else the send at which the stack was copied;
    /// each site once, in order.
    pub native_sites: Vec<(u32, u32, u64)>,
    /// The code zone's functions at the end of the run, and those evicted or
    /// moved during it (Cog's code-zone constituents).
    pub code_zone: Vec<NativeFunctionInfo>,
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
            native_value: self.native_sites.iter().map(|s| s.2).sum(),
            interpreted_value: self.sites.iter().map(|s| s.2).sum(),
            code_zone: self
                .code_zone
                .iter()
                .map(|f| NativeFunctionDoc {
                    name: f.name.clone(),
                    start: f.start as u64,
                    size: f.len as u64,
                    live: f.live(),
                    pc_map: f
                        .pc_map()
                        .into_iter()
                        .map(|(mcpc, bcpc)| [mcpc as u64, u64::from(bcpc)])
                        .collect(),
                })
                .collect(),
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
        let driver = match config.every {
            Some(n) => {
                vm.sample_every(n);
                Driver::Every
            }
            None => {
                let cpu = clock::ThreadCpuClock::of_current_thread();
                if config.clock == SampleClock::Cpu && cpu.is_none() {
                    return Err(SamplerError::NoCpuClock);
                }
                let interval = Duration::from_nanos(1_000_000_000 / u64::from(config.rate_hz));
                if config.native {
                    let native =
                        native::NativeTarget::for_current_thread().map_err(SamplerError::Native)?;
                    let register = vm.attach_sampler();
                    let t = SamplerThread::spawn(
                        register,
                        cpu,
                        ThreadConfig {
                            interval,
                            seed: config.seed,
                            max_ticks: MAX_TICKS,
                        },
                        Some(native),
                    )
                    .map_err(|e| {
                        vm.detach_sampler();
                        SamplerError::Thread(e.to_string())
                    })?;
                    Driver::Thread(t)
                } else {
                    let (timer, first) = self_timed::SelfSampler::new(
                        cpu,
                        config.clock == SampleClock::Cpu,
                        interval,
                        config.seed,
                        MAX_TICKS,
                    );
                    vm.attach_self_timer(Box::new(timer), interval, first);
                    Driver::SelfTimed
                }
            }
        };
        Ok(RunningSampler {
            config,
            driver,
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
        let report = match self.driver {
            Driver::Thread(t) => {
                let r = t.stop();
                vm.detach_sampler();
                Some(r)
            }
            Driver::SelfTimed => vm
                .detach_self_timer()
                .and_then(|t| t.into_any().downcast::<self_timed::SelfSampler>().ok())
                .map(|s| s.into_report()),
            Driver::Every => {
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
        // The code zone's functions, those evicted or moved included: native
        // pcs are named with them.
        let code_zone = vm.native_functions();
        let (built, lost, missed, achieved_hz, cpu, wall) = match report {
            None => {
                let mut prev = self.sends_before;
                let entries = stacks.entries().iter().enumerate();
                let samples = entries.filter(|(_, s)| s.seq == 0).map(|(stack, s)| {
                    processes.insert(s.process);
                    states[0].samples += 1;
                    states[0].value += 1;
                    let sends = s.sends.saturating_sub(prev);
                    prev = prev.max(s.sends);
                    Sample {
                        process: s.process,
                        stack,
                        leaf: Leaf::Interpreted,
                        weight: 1,
                        time_ns: s.sends.saturating_sub(self.sends_before),
                        state: VmState::Interpreting,
                        sends,
                    }
                });
                let built = build::build(vm, metric, &stacks, samples);
                (built, 0, 0, None, None, wall)
            }
            Some(r) => {
                let (clock, unweighted) = (self.config.clock, self.config.unweighted);
                let matched = match_stacks(&r.ticks, stacks.entries());
                let in_zone = code_zone_hits(&r, &code_zone);
                let mut lost = r.lost;
                let mut prev = self.sends_before;
                let mut now_ns = 0u64;
                let samples =
                    r.ticks
                        .iter()
                        .zip(matched)
                        .zip(&in_zone)
                        .filter_map(|((t, s), hit)| {
                            now_ns = now_ns.saturating_add(t.wall_ns);
                            let Some((stack, s)) = s else {
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
                                stack,
                                leaf: match (Leaf::of(t.state.state, t.state.detail), hit) {
                                    // The native pc says where native code was at
                                    // the tick (the stack was copied at the next send);
                                    // in an entry stub, the call it makes is the
                                    // caller's send, where the stack locates it.
                                    (Leaf::Native(_) | Leaf::Interpreted, Some(at))
                                        if at.0 != NativeFunctionInfo::NO_METHOD =>
                                    {
                                        Leaf::Native(Some(*at))
                                    }
                                    (leaf, _) => leaf,
                                },
                                weight,
                                time_ns: now_ns,
                                state: t.state.state,
                                sends,
                            })
                        });
                let mut built = build::build(vm, metric, &stacks, samples);
                let timeline = &mut built.timeline;
                timeline.cpu_weights = clock == SampleClock::Cpu && !unweighted;
                let (events, dropped) = vm.obs.take_events();
                timeline.dropped_markers = dropped;
                if let Some(origin) = r.started {
                    timeline.markers = events.iter().map(|e| marker(e, origin)).collect();
                }
                if self.config.native {
                    (native_functions, native_missed) =
                        by_function(&r.ticks, &in_zone, clock, unweighted);
                }
                let secs = r.wall.as_secs_f64();
                let hz = (secs > 0.0).then(|| r.ticks.len() as f64 / secs);
                (
                    built,
                    lost,
                    r.missed,
                    hz,
                    r.cpu_ns.map(Duration::from_nanos),
                    r.wall,
                )
            }
        };
        let build::Built {
            mut profile,
            sites,
            native_sites,
            timeline,
        } = built;
        let all_sites: Vec<(u32, u32, u64)> = sites
            .iter()
            .chain(native_sites.iter().filter(|s| s.1 != build::ENTRY))
            .copied()
            .collect();
        crate::site_lines::attach(vm, &all_sites, &mut profile);
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
                native_sites,
                code_zone,
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

/// The name the by-Rust-function list (`--native`) gives the pcs in the JIT's code zone (listed by
/// compiled method and bytecode range in the native-code section).
pub const CODE_ZONE: &str = "<JIT code zone>";

/// For each tick, where its native pc was in the code zone: `(method id,
/// instruction index or ENTRY)` of the function holding it at the tick's time.
fn code_zone_hits(r: &ThreadReport, zone: &[NativeFunctionInfo]) -> Vec<Option<(u32, u32)>> {
    let Some(origin) = r.started else {
        return vec![None; r.ticks.len()];
    };
    let mut now_ns = 0u64;
    r.ticks
        .iter()
        .map(|t| {
            now_ns = now_ns.saturating_add(t.wall_ns);
            if t.native_pc == 0 || zone.is_empty() {
                return None;
            }
            let pc = t.native_pc as usize;
            let at = origin + Duration::from_nanos(now_ns);
            NativeFunctionInfo::find(zone, pc, at)
                .map(|f| (f.method, f.bytecode_pc(pc).unwrap_or(build::ENTRY)))
        })
        .collect()
}

/// The ticks' native pcs by Rust function: `(function, samples, value)`,
/// most first, and the ticks without a pc. Pcs in the code zone (`in_zone`)
/// are [`CODE_ZONE`].
fn by_function(
    ticks: &[Tick],
    in_zone: &[Option<(u32, u32)>],
    clock: SampleClock,
    unweighted: bool,
) -> (NativeFunctions, u64) {
    let missed = ticks.iter().filter(|t| t.native_pc == 0).count() as u64;
    let symbols = match symbols::Symbols::of_this_binary() {
        Ok(s) => s,
        Err(e) => return (Err(e), missed),
    };
    let mut by: std::collections::HashMap<&str, (u64, u64)> = Default::default();
    for (t, hit) in ticks.iter().zip(in_zone).filter(|(t, _)| t.native_pc != 0) {
        let name = match hit {
            Some(_) => CODE_ZONE,
            None => symbols.name_of(t.native_pc).unwrap_or("<unknown>"),
        };
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
fn match_stacks(ticks: &[Tick], stacks: &[StackEntry]) -> Vec<Option<(usize, StackEntry)>> {
    let mut copied: Vec<(usize, StackEntry)> = stacks
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, s)| s.seq != 0)
        .collect();
    copied.sort_by_key(|(_, s)| s.seq);
    let mut j = 0;
    ticks
        .iter()
        .map(|t| {
            while j < copied.len() && copied[j].1.seq < t.seq {
                j += 1;
            }
            copied.get(j).copied()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_vm::{StateWord, VmState};

    fn tick(wall_ns: u64, native_pc: u64) -> Tick {
        Tick {
            seq: 1,
            state: StateWord {
                state: VmState::Native,
                detail: 0,
                process: 0,
            },
            cpu_ns: wall_ns,
            wall_ns,
            native_pc,
        }
    }

    #[test]
    fn native_pcs_are_named_by_the_function_there_at_their_time() {
        // Function 7 sat at 0x1000 until 50 µs after the start, then was
        // moved to 0x2000 and function 8 took 0x1000: a pc at 0x1010 is 7's
        // before the move and 8's after.
        let origin = Instant::now();
        let at = |us: u64| origin + Duration::from_micros(us);
        let f = |method, start, since, until| NativeFunctionInfo {
            name: format!("F{method}"),
            method,
            start,
            len: 0x100,
            pcs: vec![(0x10, 0x20, 3), (0x20, 0x30, 4)],
            since,
            until,
        };
        let zone = vec![
            f(7, 0x1000, at(0), Some(at(50))),
            f(7, 0x2000, at(50), None),
            f(8, 0x1000, at(50), None),
        ];
        let report = ThreadReport {
            ticks: vec![
                tick(10_000, 0x1010),
                tick(10_000, 0x1008),
                tick(40_000, 0x1025),
                tick(1_000, 0x2010),
                tick(1_000, 0x9999),
                tick(1_000, 0),
            ],
            started: Some(origin),
            ..ThreadReport::default()
        };
        let hits = code_zone_hits(&report, &zone);
        assert_eq!(
            hits,
            vec![
                Some((7, 3)),
                Some((7, build::ENTRY)),
                Some((8, 4)),
                Some((7, 3)),
                None,
                None
            ]
        );
        assert!(code_zone_hits(&report, &[]).iter().all(Option::is_none));
    }
}
