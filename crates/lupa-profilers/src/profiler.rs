//! The one profiler lifecycle: a [`ProfileMode`] is
//! [`start`](ProfileMode::start)ed on a VM with its configuration, the
//! [`RunningProfiler`] observes while Smalltalk runs (any code, or a
//! [`Workload`] it runs its own way), and [`finish`](RunningProfiler::finish)
//! answers its [`ProfileOutput`]; [`ProfileMode::run`] does the three for a
//! workload. Every profiler has this shape and the one error,
//! [`ProfilerError`].
//!
//! Contract: while a [`RunningProfiler`] is alive the profiler owns what it
//! installed (the activation hooks, the sampler register, the lifetime
//! recorder, a Spy profiler rooted in the VM's handles): one profiler at a
//! time; `finish` gives it back. Dropping a running profiler without
//! finishing it leaves that installed: always finish. A workload that fails
//! does not make `finish` fail: the output holds what was observed, and the
//! workload's result is answered beside it ([`Profiled::result`]).
//!
//! | mode | observes through | output |
//! | --- | --- | --- |
//! | Compteur, timing | activation hooks (one context tree per process) | [`ProfileOutput::Profile`] |
//! | sampling | the sampler register, a thread or every N sends | [`ProfileOutput::Sampled`] |
//! | lifetimes | the VM's lifetime recorder, or Illimani's proxies | [`ProfileOutput::Lifetimes`] |
//! | coverage, types, blueprint | Spy's profilers (MethodProxies), driven by message sends | [`ProfileOutput::Coverage`], [`ProfileOutput::Types`], [`ProfileOutput::Blueprint`] |

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;
use std::time::Instant;

use lupa_prof::Profile;
use lupa_vm::{Vm, VmError};

use crate::context_tree::{Clock, ContextTrees};
use crate::error::ProfilerError;
use crate::lifetimes::Recording;
use crate::mode::ProfileMode;
use crate::naming::name_methods;
use crate::output::ProfileOutput;
use crate::sampler::RunningSampler;
use crate::spy::blueprint::RunningBlueprint;
use crate::spy::coverage::RunningCoverage;
use crate::spy::types::RunningTypes;
use crate::workload::Workload;

impl ProfileMode {
    /// Start profiling `vm` now, or say why not.
    pub fn start(&self, vm: &mut Vm) -> Result<RunningProfiler, ProfilerError> {
        let inner = match self {
            ProfileMode::Compteur(config) => {
                if config.lines {
                    vm.start_site_counts();
                }
                Inner::Trees(Clock::Sends, ContextTrees::install(vm, Clock::Sends))
            }
            ProfileMode::Timing => {
                let clock = Clock::Time(Instant::now());
                Inner::Trees(clock, ContextTrees::install(vm, clock))
            }
            ProfileMode::Sampling(config) => {
                Inner::Sampler(Box::new(RunningSampler::start(vm, *config)?))
            }
            ProfileMode::Lifetimes(config) => {
                Inner::Lifetimes(Box::new(Recording::start(vm, config)?))
            }
            ProfileMode::Coverage(config) => {
                Inner::Coverage(Box::new(RunningCoverage::start(vm, config)?))
            }
            ProfileMode::Types(config) => Inner::Types(Box::new(RunningTypes::start(vm, config)?)),
            ProfileMode::Blueprint(config) => {
                Inner::Blueprint(Box::new(RunningBlueprint::start(vm, config)?))
            }
        };
        Ok(RunningProfiler {
            mode: self.clone(),
            inlined_before: vm.obs.inlined,
            inner,
        })
    }

    /// Profile `workload`: start, run it, finish. The workload's result is
    /// answered beside the output (a failed run still has one).
    pub fn run(&self, vm: &mut Vm, workload: Workload<'_>) -> Result<Profiled, ProfilerError> {
        let mut running = self.start(vm)?;
        let result = running.run(vm, workload);
        let (output, inlined) = running.finish_counting_inlined(vm)?;
        Ok(Profiled {
            output,
            inlined,
            result,
        })
    }
}

/// A started profiler; [`finish`](RunningProfiler::finish) it to get its output.
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
    /// The lifetime recorder.
    Lifetimes(Box<Recording>),
    /// Spy's test coverage.
    Coverage(Box<RunningCoverage>),
    /// Spy's type feedback.
    Types(Box<RunningTypes>),
    /// Spy's blueprint profiler.
    Blueprint(Box<RunningBlueprint>),
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
    pub fn mode(&self) -> &ProfileMode {
        &self.mode
    }

    /// Run `workload` under this profiler, the profiler's way: Spy's
    /// profilers instrument their packages around it (and run tests through
    /// their own test runner); the others just run it.
    pub fn run(&mut self, vm: &mut Vm, workload: Workload<'_>) -> Result<i32, VmError> {
        match &mut self.inner {
            Inner::Lifetimes(r) => r.run(vm, workload),
            Inner::Coverage(c) => c.run(vm, workload),
            Inner::Types(t) => t.run(vm, workload),
            Inner::Blueprint(b) => b.run(vm, workload),
            Inner::Trees(..) | Inner::Sampler(_) => workload.run(vm),
        }
    }

    /// Stop profiling and answer the output.
    pub fn finish(self, vm: &mut Vm) -> Result<ProfileOutput, ProfilerError> {
        self.finish_counting_inlined(vm).map(|(output, _)| output)
    }

    /// [`finish`](Self::finish), also answering the inlined control-structure
    /// sends executed meanwhile (not in a Compteur profile: they are not sends).
    fn finish_counting_inlined(self, vm: &mut Vm) -> Result<(ProfileOutput, u64), ProfilerError> {
        let inlined = vm.obs.inlined - self.inlined_before;
        let output = match self.inner {
            Inner::Trees(clock, trees) => {
                let lines = matches!(self.mode, ProfileMode::Compteur(_));
                ProfileOutput::Profile(finish_trees(vm, clock, &trees, lines))
            }
            Inner::Sampler(s) => ProfileOutput::Sampled(Box::new(s.finish(vm))),
            Inner::Lifetimes(r) => ProfileOutput::Lifetimes(Box::new(r.finish(vm)?)),
            Inner::Coverage(c) => ProfileOutput::Coverage(Box::new(c.finish(vm)?)),
            Inner::Types(t) => ProfileOutput::Types(t.finish(vm)?),
            Inner::Blueprint(b) => ProfileOutput::Blueprint(Box::new(b.finish(vm)?)),
        };
        Ok((output, inlined))
    }
}

/// Remove the hooks, merge the per-process trees (other processes under
/// `<process N>` children of the root), name every method and attach the
/// per-line costs counted by site (Compteur).
fn finish_trees(
    vm: &mut Vm,
    clock: Clock,
    trees: &Rc<RefCell<ContextTrees>>,
    compteur: bool,
) -> Profile {
    let procs = ContextTrees::take(vm, trees);
    let sites = if compteur {
        vm.take_site_counts()
    } else {
        Vec::new()
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
    let mut profile = merged.unwrap_or_else(|| Profile::new(clock.metric()));
    crate::site_lines::attach(vm, &sites, &mut profile);
    profile
}

/// A profiled workload: the output and what the workload answered.
#[derive(Debug)]
pub struct Profiled {
    /// What the profiler observed.
    pub output: ProfileOutput,
    /// Inlined control-structure sends executed during the run (not profiled).
    pub inlined: u64,
    /// The workload's exit status, or why it failed.
    pub result: Result<i32, VmError>,
}
