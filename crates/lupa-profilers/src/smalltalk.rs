//! The profilers seen from Smalltalk: [`install`] gives a VM the factory behind
//! `System>>startProfiler:` / `stopProfiler` (and so `Compteur profile: aBlock`).
//!
//! A session is a [`RunningProfiler`] of the named [`ProfileMode`]; stopping it
//! finishes the profile and answers the ranking report (the same text as
//! `lupa count --format ranking`, the command line being the profiler's name).
//! The `lupa` binary installs it in every VM it creates; a Rust embedder that
//! wants the Smalltalk side to profile calls [`install`] itself.

use crate::mode::{ProfileMode, RunningProfiler};
use crate::sampler;
use lupa_prof::report::{self, Format, ReportOptions};
use lupa_vm::{ProfilerReport, ProfilerSession, Vm};

/// Let Smalltalk code running in `vm` start and stop the profilers of this crate.
pub fn install(vm: &mut Vm) {
    vm.set_profiler_factory(start);
}

/// The factory: start the profiler called `name`.
fn start(vm: &mut Vm, name: &str) -> Result<Box<dyn ProfilerSession>, String> {
    let mode: ProfileMode = name.parse().map_err(|e| format!("{e}"))?;
    let running = mode.start(vm).map_err(|e| format!("{e}"))?;
    Ok(Box::new(Session(running)))
}

/// A profiler started from Smalltalk.
struct Session(RunningProfiler);

impl ProfilerSession for Session {
    fn stop(self: Box<Self>, vm: &mut Vm) -> ProfilerReport {
        let mode = self.0.mode();
        let (profile, stats) = self.0.finish_with_stats(vm);
        let command = format!("{mode} profile");
        let header = match &stats {
            Some(st) => sampler::header(vm, &profile, st, &command),
            None => vec![format!(
                "{mode} profile: {} {} in {} methods and blocks",
                profile.grand_total(),
                profile.metric.unit(),
                profile.methods.len().saturating_sub(1)
            )],
        };
        let options = ReportOptions {
            command,
            header,
            top: Some(25),
            max_depth: Some(lupa_prof::report::DEFAULT_TREE_DEPTH),
            cutoff: 0.01,
            ..ReportOptions::default()
        };
        let gc = stats.map_or(0, |st| {
            st.states
                .iter()
                .filter(|s| s.state.is_gc())
                .map(|s| s.value)
                .sum()
        });
        let methods = profile
            .method_stats()
            .iter()
            .zip(&profile.methods)
            .filter(|(_, m)| !m.is_synthetic_root())
            .map(|(s, m)| (m.name.clone(), s.self_value, s.total))
            .collect();
        ProfilerReport {
            text: report::render(&profile, Format::Ranking, &options),
            tree: report::render(&profile, Format::Tree, &options),
            total: profile.grand_total(),
            gc,
            methods,
            graph: crate::spy::time::call_graph(&profile),
        }
    }
}
