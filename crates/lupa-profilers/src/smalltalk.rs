//! The profilers seen from Smalltalk: [`install`] gives a VM the factory behind
//! `System>>startProfiler:` / `stopProfiler` (and so `Compteur profile: aBlock`).
//!
//! A session is a [`RunningProfiler`] of the named [`ProfileMode`] (the same
//! names as everywhere: `compteur`, `timing`, `sampling`, `sampling:HZ`,
//! `lifetimes`; Spy's profilers and Illimani's faithful mode are Smalltalk
//! objects a program uses directly, and starting them here says so);
//! stopping it finishes the profiler and answers its report: for a profile
//! the ranking report (the same text as `lupa count --format ranking`, the
//! command line being the profiler's name), for lifetimes the text report.
//! The `lupa` binary installs it in every VM it creates; a Rust embedder that
//! wants the Smalltalk side to profile calls [`install`] itself.

use crate::mode::ProfileMode;
use crate::output::ProfileOutput;
use crate::profiler::RunningProfiler;
use crate::sampler::{self, SamplerStats};
use crate::view::View;
use lupa_prof::lifetimes::{Lifetimes, LifetimesFormat};
use lupa_prof::report::{self, Format};
use lupa_prof::{Profile, Report};
use lupa_vm::{ProfilerReport, ProfilerSession, Vm};

/// Let Smalltalk code running in `vm` start and stop the profilers of this crate.
pub fn install(vm: &mut Vm) {
    vm.set_profiler_factory(start);
}

/// The factory: start the profiler called `name`.
fn start(vm: &mut Vm, name: &str) -> Result<Box<dyn ProfilerSession>, String> {
    let mode: ProfileMode = name.parse().map_err(|e| format!("{e}"))?;
    mode.check_startable_from_smalltalk()
        .map_err(|e| format!("{e}"))?;
    let running = mode.start(vm).map_err(|e| format!("{e}"))?;
    Ok(Box::new(Session(running)))
}

/// A profiler started from Smalltalk.
struct Session(RunningProfiler);

impl ProfilerSession for Session {
    fn stop(self: Box<Self>, vm: &mut Vm) -> ProfilerReport {
        let mode = self.0.mode().name();
        match self.0.finish(vm) {
            Ok(ProfileOutput::Profile(p)) => profile_report(vm, mode, &p, None),
            Ok(ProfileOutput::Sampled(s)) => profile_report(vm, mode, &s.profile, Some(&s.stats)),
            Ok(ProfileOutput::Lifetimes(l)) => lifetimes_report(mode, *l),
            Ok(other) => ProfilerReport {
                text: format!("{mode} profile: {} output\n", other.kind()),
                ..ProfilerReport::default()
            },
            // Stopping cannot fail: the report says why it has nothing.
            Err(e) => ProfilerReport {
                text: format!("{mode} profile: {e}\n"),
                ..ProfilerReport::default()
            },
        }
    }
}

/// The report of a lifetime profile: its text report.
fn lifetimes_report(mode: &str, mut l: Lifetimes) -> ProfilerReport {
    l.command = format!("{mode} profile");
    l.program = "the code run between startProfiler: and stopProfiler".to_string();
    ProfilerReport {
        text: l.render(LifetimesFormat::Text, &Default::default()),
        total: l.records.len() as u64,
        ..ProfilerReport::default()
    }
}

/// The report of a profile (and, for the sampler, its measures).
fn profile_report(
    vm: &Vm,
    mode: &str,
    profile: &Profile,
    stats: Option<&SamplerStats>,
) -> ProfilerReport {
    let command = format!("{mode} profile");
    let header = match stats {
        Some(st) => sampler::header(vm, profile, st, &command),
        None => vec![format!(
            "{mode} profile: {} {} in {} methods and blocks",
            profile.grand_total(),
            profile.metric.unit(),
            profile.methods.len().saturating_sub(1)
        )],
    };
    let options = View::default().report_options(Format::Ranking, command, header);
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
        text: report::render(profile, Format::Ranking, &options),
        tree: report::render(profile, Format::Tree, &options),
        total: profile.grand_total(),
        gc,
        methods,
        graph: crate::spy::time::call_graph(profile),
    }
}
