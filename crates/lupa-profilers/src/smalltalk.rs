//! The profilers seen from Smalltalk: [`install`] gives a VM the factory behind
//! `System>>startProfiler:` / `stopProfiler` (and so `Compteur profile: aBlock`).
//!
//! A session is a [`RunningProfiler`] of the named [`ProfileMode`]; stopping it
//! finishes the profile and answers the ranking report (the same text as
//! `lupa count --format ranking`, the command line being the profiler's name).
//! The `lupa` binary installs it in every VM it creates; a Rust embedder that
//! wants the Smalltalk side to profile calls [`install`] itself.

use crate::mode::{ProfileMode, RunningProfiler};
use lupa_prof::report::{self, Format, ReportOptions};
use lupa_vm::{ProfilerSession, Vm};

/// Let Smalltalk code running in `vm` start and stop the profilers of this crate.
pub fn install(vm: &mut Vm) {
    vm.set_profiler_factory(start);
}

/// The factory: start the profiler called `name`.
fn start(vm: &mut Vm, name: &str) -> Result<Box<dyn ProfilerSession>, String> {
    let mode: ProfileMode = name.parse().map_err(|e| format!("{e}"))?;
    Ok(Box::new(Session(mode.start(vm))))
}

/// A profiler started from Smalltalk.
struct Session(RunningProfiler);

impl ProfilerSession for Session {
    fn stop(self: Box<Self>, vm: &mut Vm) -> String {
        let mode = self.0.mode();
        let profile = self.0.finish(vm);
        let options = ReportOptions {
            command: format!("{mode} profile"),
            header: vec![format!(
                "{mode} profile: {} {} in {} methods and blocks",
                profile.grand_total(),
                profile.metric.unit(),
                profile.methods.len().saturating_sub(1)
            )],
            top: Some(25),
            max_depth: Some(lupa_prof::report::DEFAULT_TREE_DEPTH),
            cutoff: 0.01,
            ..ReportOptions::default()
        };
        report::render(&profile, Format::Ranking, &options)
    }
}
