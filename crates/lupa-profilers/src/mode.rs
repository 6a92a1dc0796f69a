//! The one profiler lifecycle: choose a [`ProfileMode`], [`start`](ProfileMode::start)
//! it on a VM, run Smalltalk, [`finish`](RunningProfiler::finish) it into a
//! [`Profile`].
//!
//! Contract: while a [`RunningProfiler`] is alive the profiler owns the VM's
//! activation hooks (one profiler at a time); `finish` gives them back, merges
//! the per-process trees (other processes under `<process N>` children of the
//! root) and names every method through the VM's query API. Dropping a running
//! profiler without finishing it leaves its hooks installed: always finish.

use crate::context_tree::{Clock, ContextTrees};
use crate::naming::name_methods;
use crate::sampler::{RunningSampler, SamplerConfig, SamplerError, SamplerStats};
use lupa_prof::Profile;
use lupa_vm::{Vm, VmError};
use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;
use std::str::FromStr;
use std::time::Instant;

/// The profilers of the one lifecycle: the two that build a calling-context
/// tree from the VM's activations, and the sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileMode {
    /// Compteur (Bergel, ECOOP 2011): every executed message send is charged to
    /// the activation that executed it, and counted at its source line (the
    /// profile's per-line self costs). Deterministic for a given hash seed.
    Compteur,
    /// Exact wall-clock timing: elapsed nanoseconds measured at every enter and
    /// exit (MessageTally-like, without sampling); the time-based reference of
    /// `lupa stability`.
    Timing,
    /// The sampling profiler of the whole VM ([`crate::sampler`]); from
    /// Smalltalk (`sampling` or `sampling:HZ`) every sample weighs 1.
    Sampling(SamplerConfig),
}

impl ProfileMode {
    /// Every mode (the sampler with its defaults), in the order of
    /// [`ProfileMode::name`]s listed by the CLI.
    pub const ALL: [ProfileMode; 3] = [
        ProfileMode::Compteur,
        ProfileMode::Timing,
        ProfileMode::Sampling(SamplerConfig::SMALLTALK),
    ];

    /// The name used by the CLI and the Smalltalk side: `compteur`, `timing`,
    /// `sampling`.
    pub fn name(self) -> &'static str {
        match self {
            ProfileMode::Compteur => "compteur",
            ProfileMode::Timing => "timing",
            ProfileMode::Sampling(_) => "sampling",
        }
    }

    /// Start profiling `vm` now (a sampler that cannot start says why).
    pub fn start(self, vm: &mut Vm) -> Result<RunningProfiler, SamplerError> {
        self.start_with(vm, true)
    }

    /// [`start`](Self::start); `lines`: a Compteur profile also counts sends
    /// by site for its per-line costs (without them the VM runs its loop
    /// without per-send observation, the activation hooks alone).
    fn start_with(self, vm: &mut Vm, lines: bool) -> Result<RunningProfiler, SamplerError> {
        let inner = match self {
            ProfileMode::Compteur => {
                if lines {
                    vm.start_site_counts();
                }
                Inner::Trees(Clock::Sends, ContextTrees::install(vm, Clock::Sends))
            }
            ProfileMode::Timing => {
                let clock = Clock::Time(Instant::now());
                Inner::Trees(clock, ContextTrees::install(vm, clock))
            }
            ProfileMode::Sampling(config) => {
                Inner::Sampler(Box::new(RunningSampler::start(vm, config)?))
            }
        };
        Ok(RunningProfiler {
            mode: self,
            inlined_before: vm.obs.inlined,
            inner,
        })
    }

    /// Profile `vm.run_main(args)`: start, run the program, finish. The run's
    /// result is answered beside the profile (a failed run still has one).
    pub fn run_main(self, vm: &mut Vm, args: &[String]) -> Result<Profiled, SamplerError> {
        self.run_main_with(vm, args, true)
    }

    /// [`run_main`](Self::run_main) for callers that keep method totals and
    /// stacks only (Hip's records): a Compteur profile then has no per-line
    /// costs, and the run is cheaper (no per-send site counts).
    pub fn run_main_by_method(
        self,
        vm: &mut Vm,
        args: &[String],
    ) -> Result<Profiled, SamplerError> {
        self.run_main_with(vm, args, false)
    }

    fn run_main_with(
        self,
        vm: &mut Vm,
        args: &[String],
        lines: bool,
    ) -> Result<Profiled, SamplerError> {
        let running = self.start_with(vm, lines)?;
        let result = vm.run_main(args);
        let (profile, inlined) = running.finish_counting_inlined(vm);
        Ok(Profiled {
            profile,
            inlined,
            result,
        })
    }
}

impl fmt::Display for ProfileMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profiler name that [`ProfileMode::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profiler `{0}` (expected compteur, timing, sampling or sampling:HZ)")]
pub struct UnknownProfiler(pub String);

impl FromStr for ProfileMode {
    type Err = UnknownProfiler;

    fn from_str(s: &str) -> Result<ProfileMode, UnknownProfiler> {
        if let Some(hz) = s.strip_prefix("sampling:") {
            let config = SamplerConfig {
                rate_hz: hz.parse().map_err(|_| UnknownProfiler(s.to_string()))?,
                ..SamplerConfig::SMALLTALK
            };
            return Ok(ProfileMode::Sampling(config));
        }
        ProfileMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownProfiler(s.to_string()))
    }
}

/// A started profiler; [`finish`](RunningProfiler::finish) it to get the profile.
pub struct RunningProfiler {
    mode: ProfileMode,
    inlined_before: u64,
    inner: Inner,
}

/// What a running profiler holds.
enum Inner {
    /// Per-process context trees fed by the activation hooks.
    Trees(Clock, Rc<RefCell<ContextTrees>>),
    /// The sampler.
    Sampler(Box<RunningSampler>),
}

impl fmt::Debug for RunningProfiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningProfiler")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl RunningProfiler {
    /// The mode this profiler was started in.
    pub fn mode(&self) -> ProfileMode {
        self.mode
    }

    /// Stop profiling and build the merged, named profile.
    pub fn finish(self, vm: &mut Vm) -> Profile {
        self.finish_counting_inlined(vm).0
    }

    /// Stop profiling; answer the profile and, for the sampler, its statistics.
    pub fn finish_with_stats(self, vm: &mut Vm) -> (Profile, Option<SamplerStats>) {
        match self.inner {
            Inner::Sampler(s) => {
                let sampled = s.finish(vm);
                (sampled.profile, Some(sampled.stats))
            }
            Inner::Trees(..) => (self.finish(vm), None),
        }
    }

    /// [`finish`](Self::finish), also answering the inlined control-structure
    /// sends executed meanwhile (not in a Compteur profile: they are not sends).
    fn finish_counting_inlined(self, vm: &mut Vm) -> (Profile, u64) {
        let inlined = vm.obs.inlined - self.inlined_before;
        let (metric_clock, trees) = match self.inner {
            Inner::Sampler(s) => return (s.finish(vm).profile, inlined),
            Inner::Trees(clock, trees) => (clock, trees),
        };
        let procs = ContextTrees::take(vm, &trees);
        let sites = match self.mode {
            ProfileMode::Compteur => vm.take_site_counts(),
            _ => Vec::new(),
        };
        let mut merged: Option<Profile> = None;
        for (p, mut prof) in procs {
            name_methods(vm, &mut prof);
            merged = Some(match merged {
                None => prof,
                Some(mut main) => {
                    main.graft(&prof, &lupa_prof::process_label(p));
                    main
                }
            });
        }
        let mut profile = merged.unwrap_or_else(|| Profile::new(metric_clock.metric()));
        crate::site_lines::attach(vm, &sites, &mut profile);
        (profile, inlined)
    }
}

/// A profiled run: the profile and what the run answered.
#[derive(Debug)]
pub struct Profiled {
    /// The merged, named profile.
    pub profile: Profile,
    /// Inlined control-structure sends executed during the run (not profiled).
    pub inlined: u64,
    /// The run's exit status, or why it failed.
    pub result: Result<i32, VmError>,
}
