//! Recording versions: run a program in fresh VMs under a profiler of
//! `lupa-profilers` ([`RecordMetric`]: Compteur's exact sends, the sampler's
//! CPU time over several runs, Spy's test coverage), turn the run into
//! per-method metrics ([`Recorded`]) and store them as a version ([`record`]),
//! or do that for each revision of a git range ([`record_git`]).
//!
//! Contract: a version is stored only when its program ran to a zero exit
//! status; the label is checked before the program runs.

use crate::git;
use crate::store::{NewVersion, ProfileStore, VersionExtras};
use crate::{
    HistoryError, METRIC_BROKEN, METRIC_COVERAGE, METRIC_SENDS, METRIC_TIME, METRIC_TIME_SAMPLES,
};
use lupa_prof::Profile;
use lupa_prof::coverage::Coverage;
use lupa_prof::history::timed::{self, RunValue};
use lupa_prof::history::{self as model, VersionInfo};
use lupa_profilers::compteur::CompteurConfig;
use lupa_profilers::sampler::SamplerConfig;
use lupa_profilers::spy::coverage::CoverageConfig;
use lupa_profilers::{ProfileMode, Workload};
use lupa_vm::{Vm, VmError, VmOptions};
use std::path::{Path, PathBuf};

/// One profiled run: its per-method metrics and grand total.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// Per-method metrics (`lupa_prof::history::metrics_of`).
    pub methods: Vec<model::MethodMetrics>,
    /// Every send of the run (`None` for time and coverage).
    pub total_sends: Option<u64>,
    /// Folded stacks and per-run values.
    pub extras: VersionExtras,
    /// The version's metric ([`METRIC_SENDS`], ...).
    pub metric: &'static str,
}

/// What a version records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RecordMetric {
    /// One run under Compteur: exact sends per method, and the folded
    /// stacks (the default).
    #[default]
    Sends,
    /// `runs` runs under the sampler (on the VM thread's CPU clock, or every
    /// `every` sends, deterministic): per method and run its self and total
    /// time.
    Time {
        /// How many runs (at least 1; 2 or more for a significance test).
        runs: usize,
        /// The sampler's deterministic mode: a sample every this many sends.
        every: Option<u64>,
    },
    /// The SUnit test classes `tests` (none: every one on the class path)
    /// under Spy's `TestCoverage` over `packages` (none: the class path's
    /// directories holding classes that are not tests); the program's
    /// arguments are not used.
    Coverage {
        /// TestCase classes.
        tests: Vec<String>,
        /// Packages to cover.
        packages: Vec<String>,
    },
}

/// A fresh VM for `label`'s run, its output captured.
fn fresh_vm(options: &VmOptions, label: &str) -> Result<Vm, HistoryError> {
    let mut vm = Vm::new(options.clone()).map_err(|error| HistoryError::Program {
        label: label.to_string(),
        error,
    })?;
    lupa_profilers::install(&mut vm);
    vm.io.capture_output();
    Ok(vm)
}

/// The exit status of a run, or the failure.
fn exit_status(result: Result<i32, VmError>, label: &str) -> Result<(), HistoryError> {
    let code = match result {
        Ok(code) => code,
        Err(VmError::Exit(code)) => code,
        Err(error) => {
            return Err(HistoryError::Program {
                label: label.to_string(),
                error,
            });
        }
    };
    if code != 0 {
        return Err(HistoryError::ProgramExit {
            label: label.to_string(),
            code,
        });
    }
    Ok(())
}

/// Profile `args` in fresh VMs as `metric` says.
pub fn profile_with(
    options: VmOptions,
    args: &[String],
    label: &str,
    metric: &RecordMetric,
) -> Result<Recorded, HistoryError> {
    match metric {
        RecordMetric::Sends => profile_program(options, args, label),
        RecordMetric::Time { runs, every } => profile_time(&options, args, label, *runs, *every),
        RecordMetric::Coverage { tests, packages } => {
            profile_coverage(&options, label, tests, packages)
        }
    }
}

fn profile_time(
    options: &VmOptions,
    args: &[String],
    label: &str,
    runs: usize,
    every: Option<u64>,
) -> Result<Recorded, HistoryError> {
    let fail = |error: VmError| HistoryError::Program {
        label: label.to_string(),
        error,
    };
    let class = args
        .first()
        .ok_or_else(|| fail(VmError::Fatal("no class to run".to_string())))?;
    let config = SamplerConfig {
        every,
        ..SamplerConfig::DEFAULT
    };
    // ns -> ms on the CPU clock; samples as they are.
    let scale = if every.is_some() { 1.0 } else { 1e-6 };
    let mut by_method: std::collections::BTreeMap<String, (model::MethodMetrics, f64, f64)> =
        std::collections::BTreeMap::new();
    let mut values = Vec::new();
    let n = runs.max(1);
    for run in 0..n {
        let mut vm = fresh_vm(options, label)?;
        vm.load_class_by_name(class).map_err(fail)?;
        let done = ProfileMode::Sampling(config)
            .run(&mut vm, Workload::Program(args))
            .map_err(|e| fail(VmError::Fatal(e.to_string())))?;
        exit_status(done.result, label)?;
        let profile = Profile::try_from(done.output).map_err(|e| fail(e.into()))?;
        values.push(RunValue {
            run: u32::try_from(run).unwrap_or(u32::MAX),
            method: timed::RUN_TOTAL.to_string(),
            self_value: 0.0,
            total_value: profile.grand_total() as f64 * scale,
        });
        for m in model::metrics_of(&profile) {
            let (s, t) = (m.sends_self as f64 * scale, m.sends_total as f64 * scale);
            values.push(RunValue {
                run: u32::try_from(run).unwrap_or(u32::MAX),
                method: m.method.clone(),
                self_value: s,
                total_value: t,
            });
            let e = by_method
                .entry(m.method.clone())
                .or_insert_with(|| (m.clone(), 0.0, 0.0));
            e.1 += s;
            e.2 += t;
        }
    }
    // The per-method rows hold the mean over the runs, in thousandths of the
    // unit (microseconds, or thousandths of a sample).
    let methods = by_method
        .into_values()
        .map(|(mut m, s, t)| {
            m.sends_self = (s / n as f64 * 1000.0).round() as u64;
            m.sends_total = (t / n as f64 * 1000.0).round() as u64;
            m.activations = 0;
            m
        })
        .collect();
    Ok(Recorded {
        methods,
        total_sends: None,
        extras: VersionExtras {
            stacks: Vec::new(),
            runs: values,
        },
        metric: if every.is_some() {
            METRIC_TIME_SAMPLES
        } else {
            METRIC_TIME
        },
    })
}

fn profile_coverage(
    options: &VmOptions,
    label: &str,
    tests: &[String],
    packages: &[String],
) -> Result<Recorded, HistoryError> {
    let fail = |error: VmError| HistoryError::Program {
        label: label.to_string(),
        error,
    };
    let mut vm = fresh_vm(options, label)?;
    let names = if tests.is_empty() {
        vm.test_candidates(options.class_path.is_empty())
    } else {
        tests.to_vec()
    };
    let mut classes = Vec::new();
    for name in &names {
        let found = vm.test_classes(std::slice::from_ref(name)).map_err(fail)?;
        if found.is_empty() && !tests.is_empty() {
            return Err(fail(VmError::Fatal(format!(
                "{name} is not a TestCase subclass"
            ))));
        }
        classes.extend(found);
    }
    if classes.is_empty() {
        return Err(fail(VmError::Fatal(
            "no TestCase subclass found".to_string(),
        )));
    }
    let packages = if packages.is_empty() {
        lupa_profilers::spy::coverage::default_packages(&mut vm, &options.class_path)
            .map_err(fail)?
    } else {
        packages.to_vec()
    };
    if packages.is_empty() {
        return Err(fail(VmError::Fatal(
            "no package to cover (give a class path holding the classes under test)".to_string(),
        )));
    }
    let mode = ProfileMode::Coverage(CoverageConfig {
        packages,
        lines: false,
    });
    let run = mode
        .run(&mut vm, Workload::Tests(&classes))
        .map_err(|e| fail(e.into()))?;
    run.result.map_err(fail)?;
    let coverage = Coverage::try_from(run.output).map_err(|e| fail(e.into()))?;
    let mut methods = Vec::new();
    for c in &coverage.classes {
        for m in c.methods.iter().filter(|m| m.executions > 0) {
            let class = if m.class_side {
                format!("{} class", c.name)
            } else {
                c.name.clone()
            };
            methods.push(model::MethodMetrics {
                package: c.package.clone(),
                method: format!("{class}>>{}", m.selector),
                class,
                sends_self: m.executions,
                sends_total: m.executions,
                activations: m.executions,
            });
        }
    }
    methods.sort_by(|a, b| a.method.cmp(&b.method));
    Ok(Recorded {
        methods,
        total_sends: None,
        extras: VersionExtras::default(),
        metric: METRIC_COVERAGE,
    })
}

/// Run `args` (`CLASS ARG...`) in a fresh VM configured by `options` under
/// Compteur, its standard output captured and discarded; `label` names the
/// version in errors.
pub fn profile_program(
    options: VmOptions,
    args: &[String],
    label: &str,
) -> Result<Recorded, HistoryError> {
    let fail = |error: VmError| HistoryError::Program {
        label: label.to_string(),
        error,
    };
    let class = args
        .first()
        .ok_or_else(|| fail(VmError::Fatal("no class to run".to_string())))?;
    let mut vm = fresh_vm(&options, label)?;
    vm.load_class_by_name(class).map_err(fail)?;
    let run = ProfileMode::Compteur(CompteurConfig::BY_METHOD)
        .run(&mut vm, Workload::Program(args))
        .map_err(|e| fail(VmError::Fatal(e.to_string())))?;
    exit_status(run.result, label)?;
    let profile = Profile::try_from(run.output).map_err(|e| fail(e.into()))?;
    Ok(Recorded {
        methods: model::metrics_of(&profile),
        total_sends: Some(profile.grand_total()),
        extras: VersionExtras {
            stacks: model::flame::parse_folded(&lupa_prof::report::folded::to_string_limited(
                &profile,
                STORED_STACK_DEPTH,
            )),
            runs: Vec::new(),
        },
        metric: METRIC_SENDS,
    })
}

/// The most frames of a stored call stack: the contexts below are summed
/// into their ancestor at that depth (`folded::write_limited`), so a deep
/// recursion stores stacks that grow linearly with its depth, not with its
/// square (20,000 levels would otherwise take gigabytes).
pub const STORED_STACK_DEPTH: usize = 256;

/// What to record: the program and how to run it.
#[derive(Debug, Clone)]
pub struct Program {
    /// `CLASS ARG...`.
    pub args: Vec<String>,
    /// The VM's options (class path included).
    pub options: VmOptions,
    /// What is recorded.
    pub metric: RecordMetric,
}

impl Program {
    /// The command stored with a version: the class path (if any) and the
    /// program.
    pub fn command(&self, class_path: &[PathBuf]) -> String {
        let mut s = String::new();
        if !class_path.is_empty() {
            let cp: Vec<String> = class_path.iter().map(|p| p.display().to_string()).collect();
            s.push_str(&format!("-cp {} ", cp.join(":")));
        }
        s.push_str(&self.args.join(" "));
        s
    }
}

/// Record `program` as version `label` (replacing a version of that label
/// with `replace`). The label is checked before the program runs.
pub fn record(
    store: &mut dyn ProfileStore,
    program: &Program,
    label: &str,
    replace: bool,
) -> Result<VersionInfo, HistoryError> {
    if !replace && has_label(store, label)? {
        return Err(HistoryError::DuplicateLabel(label.to_string()));
    }
    let run = profile_with(
        program.options.clone(),
        &program.args,
        label,
        &program.metric,
    )?;
    let v = NewVersion {
        label: label.to_string(),
        git_rev: None,
        date: None,
        command: program.command(&program.options.class_path),
        metric: run.metric.to_string(),
        total_sends: run.total_sends,
    };
    store.add_version_with(&v, &run.methods, &run.extras, replace)
}

/// Record every `every`-th revision of `range` in the git repository at
/// `repo` (always the last), each checked out in a temporary worktree and run
/// with `program`'s class path moved into it ([`git::class_path_in`]);
/// labels are the short hash and subject. `on_version` is told of each
/// version once stored. A revision whose program fails to load or run
/// (a compile error, an uncaught error, a non-zero exit) is recorded as a
/// broken version ([`METRIC_BROKEN`], no methods, the failure in its command)
/// when `keep_going`, and the range goes on; otherwise the range stops there
/// (the versions stored before it stay). Other failures (git, the store)
/// always stop it, and so does a stop requested from outside
/// ([`lupa_vm::interrupt`]: Ctrl-C), before the next revision or during its
/// run, which is then not recorded; the worktree is removed in every case.
#[allow(clippy::too_many_arguments)]
pub fn record_git(
    store: &mut dyn ProfileStore,
    program: &Program,
    repo: &Path,
    range: &str,
    every: usize,
    replace: bool,
    keep_going: bool,
    on_version: &mut dyn FnMut(&VersionInfo),
) -> Result<Vec<VersionInfo>, HistoryError> {
    let top = git::toplevel(repo)?;
    let revisions = git::revisions(&top, range, every)?;
    if !replace {
        for r in &revisions {
            if has_label(store, &r.label())? {
                return Err(HistoryError::DuplicateLabel(r.label()));
            }
        }
    }
    let mut out = Vec::new();
    for rev in &revisions {
        let label = rev.label();
        let interrupted = |label: &str| {
            lupa_vm::interrupt::requested().map(|status| HistoryError::Program {
                label: label.to_string(),
                error: VmError::Interrupted(status),
            })
        };
        if let Some(e) = interrupted(&label) {
            return Err(e);
        }
        let tree = match git::Worktree::add(&top, rev) {
            Ok(tree) => tree,
            // Ctrl-C in a terminal reaches git too: say why it failed.
            Err(e) => return Err(interrupted(&label).unwrap_or(e)),
        };
        let mut options = program.options.clone();
        options.class_path = git::class_path_in(&program.options.class_path, &top, tree.path());
        let run = profile_with(options, &program.args, &label, &program.metric);
        drop(tree);
        let run = match run {
            Ok(run) => run,
            // An interrupted run is not a broken version: the range stops.
            Err(e @ (HistoryError::Program { .. } | HistoryError::ProgramExit { .. }))
                if keep_going && interrupted(&label).is_none() =>
            {
                let v = NewVersion {
                    label,
                    git_rev: Some(rev.hash.clone()),
                    date: None,
                    command: format!(
                        "{} (broken: {e})",
                        program.command(&program.options.class_path)
                    ),
                    metric: METRIC_BROKEN.to_string(),
                    total_sends: None,
                };
                let stored = store.add_version_with(&v, &[], &VersionExtras::default(), replace)?;
                on_version(&stored);
                out.push(stored);
                continue;
            }
            Err(e) => return Err(e),
        };
        let v = NewVersion {
            label,
            git_rev: Some(rev.hash.clone()),
            date: None,
            command: program.command(&program.options.class_path),
            metric: run.metric.to_string(),
            total_sends: run.total_sends,
        };
        let stored = store.add_version_with(&v, &run.methods, &run.extras, replace)?;
        on_version(&stored);
        out.push(stored);
    }
    Ok(out)
}

/// Is there a version labelled `label` in `store`?
pub(crate) fn has_label(store: &dyn ProfileStore, label: &str) -> Result<bool, HistoryError> {
    match store.version(label) {
        Ok(v) => Ok(v.label == label),
        Err(HistoryError::UnknownVersion(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SqliteStore;
    use crate::{DiffOptions, Measure, TimeMeasure, diff, series, stacks_of, time_diff};

    /// The bundled `Hello`, quiet, recorded with `metric`.
    fn hello(metric: RecordMetric) -> Program {
        Program {
            args: vec!["Hello".to_string()],
            options: VmOptions {
                quiet: true,
                ..VmOptions::default()
            },
            metric,
        }
    }

    #[test]
    fn records_a_bundled_program_and_diffs_it_with_itself() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = SqliteStore::open(&dir.path().join("p.db"), true).expect("store");
        let program = hello(RecordMetric::Sends);
        let a = record(&mut store, &program, "a", false).expect("records");
        assert!(a.total_sends.is_some_and(|t| t > 0));
        assert!(matches!(
            record(&mut store, &program, "a", false),
            Err(HistoryError::DuplicateLabel(_))
        ));
        record(&mut store, &program, "b", false).expect("records");
        let d = diff(&store, "a", "b", DiffOptions::default()).expect("diff");
        assert!(d.methods.iter().any(|c| c.name == "Hello>>run"));
        assert!(
            d.methods.iter().all(|c| c.state == model::State::Unchanged),
            "a deterministic program counts the same sends twice"
        );
        let s = series(&store, "Hello>>run", Measure::Total).expect("series");
        assert_eq!(s.points.len(), 2);
        assert!(!store.stacks(a.id).expect("stacks").is_empty());
        let (_, sa, _, sb, _) = stacks_of(&store, "a", "b").expect("stacks");
        assert_eq!(sa, sb);
        let missing = Program {
            args: vec!["NoSuchClass".to_string()],
            options: program.options.clone(),
            metric: RecordMetric::Sends,
        };
        assert!(matches!(
            record(&mut store, &missing, "c", false),
            Err(HistoryError::Program { .. })
        ));
        assert_eq!(store.versions().expect("versions").len(), 2);
    }

    #[test]
    fn records_time_with_the_deterministic_sampler() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = SqliteStore::open(&dir.path().join("p.db"), true).expect("store");
        let program = hello(RecordMetric::Time {
            runs: 3,
            every: Some(7),
        });
        let a = record(&mut store, &program, "a", false).expect("records");
        assert_eq!(
            (a.metric.as_str(), a.total_sends),
            (METRIC_TIME_SAMPLES, None)
        );
        record(&mut store, &program, "b", false).expect("records");
        let runs = store.runs(a.id).expect("runs");
        assert_eq!(runs.iter().map(|r| r.run).max(), Some(2));
        let d = time_diff(&store, "a", "b", TimeMeasure::Total).expect("diff");
        assert_eq!(d.runs, (3, 3));
        assert!(
            d.methods.iter().all(|c| c.state == model::State::Unchanged),
            "the same samples every run: {d:?}"
        );
        // Send versions are not time versions.
        let sends = Program {
            metric: RecordMetric::Sends,
            ..program
        };
        record(&mut store, &sends, "s", false).expect("records");
        assert!(matches!(
            time_diff(&store, "a", "s", TimeMeasure::Total),
            Err(HistoryError::Incomparable(_))
        ));
        assert!(matches!(
            stacks_of(&store, "a", "b"),
            Err(HistoryError::Incomparable(_))
        ));
    }
}
