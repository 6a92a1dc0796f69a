//! Hip (the Spy paper, section 4.3): profile a program's versions with
//! Compteur's exact send counts, keep them in a store, and compare them.
//!
//! * [`record`]: run a program once under [`ProfileMode::Compteur`] in a
//!   fresh VM and store its per-method metrics and folded stacks as a
//!   version; or ([`RecordMetric`]) N times under the sampler (per-run CPU
//!   time, for significance tests), or its SUnit tests under Spy's
//!   `TestCoverage` (per-method executions).
//! * [`record_git`]: the same for each revision of a git range, each in a
//!   temporary detached worktree ([`git::Worktree`]).
//! * [`diff`], [`series`]: read versions back and compare them with the pure
//!   model of `lupa_prof::history`.
//! * [`store`]: the [`ProfileStore`] trait and its SQLite backend.
//! * [`store_pg`]: the PostgreSQL backend, for a `postgres://` URL
//!   ([`open_store`] chooses).
//!
//! Contract: nothing here prints; every failure is a [`HistoryError`]; a
//! version is recorded only when its program ran to a zero exit status.

pub mod git;
pub mod store;
pub mod store_pg;

use crate::compteur::CompteurConfig;
use crate::sampler::SamplerConfig;
use crate::{ProfileMode, Workload};
use lupa_prof::Profile;
use lupa_prof::coverage::Coverage;
use lupa_prof::history::timed::{self, RunValue, TimeDiff, TimeMeasure, TimeSide};
use lupa_prof::history::{self as model, Diff, DiffOptions, Measure, Series, VersionInfo};
use lupa_vm::{Vm, VmError, VmOptions};
use std::path::{Path, PathBuf};
pub use store::{NewVersion, ProfileStore, SqliteStore, VersionExtras};

/// The `metric` of a version of send counts.
pub const METRIC_SENDS: &str = "sends";
/// The `metric` of a version of sampled CPU time (values in milliseconds).
pub const METRIC_TIME: &str = "time";
/// The `metric` of a version sampled every N sends (values in samples).
pub const METRIC_TIME_SAMPLES: &str = "time-samples";
/// The `metric` of a coverage version (values: executions).
pub const METRIC_COVERAGE: &str = "coverage";

/// Why a history command failed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// There is no store at this path.
    #[error(
        "no profile database at {} (record a version first: lupa history record)",
        .0.display()
    )]
    NoDatabase(PathBuf),
    /// The file is not a Lupa profile store (not SQLite, corrupt, another
    /// application's database).
    #[error("{} is not a Lupa profile database: {reason}", path.display())]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The store was written by a newer Lupa.
    #[error(
        "{} has schema version {found}; this lupa knows versions up to {known} (a newer lupa wrote it)",
        path.display()
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// A database operation failed.
    #[error("profile database {}: {message}", path.display())]
    Database {
        /// The file.
        path: PathBuf,
        /// SQLite's message.
        message: String,
    },
    /// A file or directory could not be read or written.
    #[error("{0}")]
    Io(String),
    /// No version has this label or id.
    #[error("unknown version `{0}` (lupa history log lists them)")]
    UnknownVersion(String),
    /// No version has this method.
    #[error("no version has the method `{method}`{}", similar_hint(similar))]
    UnknownMethod {
        /// The name asked for.
        method: String,
        /// Recorded method names containing it.
        similar: Vec<String>,
    },
    /// A version of this label exists.
    #[error("a version labelled `{0}` exists already (--replace replaces it)")]
    DuplicateLabel(String),
    /// The directory is not in a git repository.
    #[error("{} is not a git repository: {reason}", path.display())]
    NotAGitRepository {
        /// The directory.
        path: PathBuf,
        /// Git's message.
        reason: String,
    },
    /// Git does not know this revision.
    #[error("unknown git revision `{0}`")]
    UnknownRevision(String),
    /// The range holds no commit.
    #[error("the git range `{0}` holds no commit")]
    EmptyRange(String),
    /// Git failed otherwise.
    #[error("git: {0}")]
    Git(String),
    /// The profiled program could not run or failed (nothing was recorded).
    #[error("{label}: the program failed: {error}")]
    Program {
        /// The version being recorded.
        label: String,
        /// The VM's error.
        error: VmError,
    },
    /// The profiled program exited with a non-zero status (nothing was
    /// recorded).
    #[error("{label}: the program exited with status {code}; nothing recorded")]
    ProgramExit {
        /// The version being recorded.
        label: String,
        /// Its exit status.
        code: i32,
    },
    /// The versions cannot be compared this way (different metrics, no
    /// stacks recorded, ...).
    #[error("{0}")]
    Incomparable(String),
}

fn similar_hint(similar: &[String]) -> String {
    if similar.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", similar.join(", "))
    }
}

impl HistoryError {
    /// A SQLite error on the store at `path`; a file that turns out not to
    /// be a database (or to be corrupt) is [`HistoryError::NotAStore`].
    pub fn sqlite(path: &Path, e: rusqlite::Error) -> HistoryError {
        use rusqlite::ErrorCode;
        let code = e.sqlite_error_code();
        if matches!(
            code,
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
        ) {
            return HistoryError::NotAStore {
                path: path.to_path_buf(),
                reason: e.to_string(),
            };
        }
        HistoryError::Database {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}

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
    crate::install(&mut vm);
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
        crate::spy::coverage::default_packages(&mut vm, &options.class_path).map_err(fail)?
    } else {
        packages.to_vec()
    };
    if packages.is_empty() {
        return Err(fail(VmError::Fatal(
            "no package to cover (give a class path holding the classes under test)".to_string(),
        )));
    }
    let mode = ProfileMode::Coverage(crate::spy::coverage::CoverageConfig {
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
    let mut vm = Vm::new(options).map_err(fail)?;
    crate::install(&mut vm);
    vm.io.capture_output();
    vm.load_class_by_name(class).map_err(fail)?;
    let run = ProfileMode::Compteur(CompteurConfig::BY_METHOD)
        .run(&mut vm, Workload::Program(args))
        .map_err(|e| fail(VmError::Fatal(e.to_string())))?;
    let code = match run.result {
        Ok(code) => code,
        Err(VmError::Exit(code)) => code,
        Err(e) => return Err(fail(e)),
    };
    if code != 0 {
        return Err(HistoryError::ProgramExit {
            label: label.to_string(),
            code,
        });
    }
    let profile = Profile::try_from(run.output).map_err(|e| fail(e.into()))?;
    Ok(Recorded {
        methods: model::metrics_of(&profile),
        total_sends: Some(profile.grand_total()),
        extras: VersionExtras {
            stacks: model::flame::parse_folded(&lupa_prof::report::folded::to_string(&profile)),
            runs: Vec::new(),
        },
        metric: METRIC_SENDS,
    })
}

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
/// version once stored. Stops at the first failure (the versions stored
/// before it stay).
pub fn record_git(
    store: &mut dyn ProfileStore,
    program: &Program,
    repo: &Path,
    range: &str,
    every: usize,
    replace: bool,
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
        let tree = git::Worktree::add(&top, rev)?;
        let mut options = program.options.clone();
        options.class_path = git::class_path_in(&program.options.class_path, &top, tree.path());
        let run = profile_with(options, &program.args, &label, &program.metric)?;
        drop(tree);
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

/// Open the store `db`: a PostgreSQL database when it is a `postgres://` or
/// `postgresql://` URL ([`store_pg`]), else a SQLite file ([`SqliteStore`]).
/// With `create`, a missing store is created; without, it is
/// [`HistoryError::NoDatabase`].
pub fn open_store(db: &Path, create: bool) -> Result<Box<dyn ProfileStore>, HistoryError> {
    if let Some(url) = db.to_str().filter(|s| store_pg::is_url(s)) {
        return Ok(Box::new(store_pg::open(url, create)?));
    }
    Ok(Box::new(SqliteStore::open(db, create)?))
}

/// Is there a version labelled `label` in `store`?
fn has_label(store: &dyn ProfileStore, label: &str) -> Result<bool, HistoryError> {
    match store.version(label) {
        Ok(v) => Ok(v.label == label),
        Err(HistoryError::UnknownVersion(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Compare versions `from` and `to` (labels or ids) of `store`.
pub fn diff(
    store: &dyn ProfileStore,
    from: &str,
    to: &str,
    options: DiffOptions,
) -> Result<Diff, HistoryError> {
    let a = store.version(from)?;
    let b = store.version(to)?;
    let before = store.methods(a.id)?;
    let after = store.methods(b.id)?;
    Ok(model::diff(a, &before, b, &after, options))
}

/// Is `metric` a version's sampled time ([`METRIC_TIME`],
/// [`METRIC_TIME_SAMPLES`])?
pub fn is_time(metric: &str) -> bool {
    metric == METRIC_TIME || metric == METRIC_TIME_SAMPLES
}

/// Versions `from` and `to` of `store`, refused unless both are of one
/// metric.
pub fn comparable(
    store: &dyn ProfileStore,
    from: &str,
    to: &str,
) -> Result<(VersionInfo, VersionInfo), HistoryError> {
    let a = store.version(from)?;
    let b = store.version(to)?;
    if a.metric != b.metric {
        return Err(HistoryError::Incomparable(format!(
            "`{}` was recorded with the metric {} and `{}` with {}: record both with the same --metric",
            a.label, a.metric, b.label, b.metric
        )));
    }
    Ok((a, b))
}

/// Compare two time versions (`--metric time`) with Welch's t-test per
/// method, class and package.
pub fn time_diff(
    store: &dyn ProfileStore,
    from: &str,
    to: &str,
    measure: TimeMeasure,
) -> Result<TimeDiff, HistoryError> {
    let (a, b) = comparable(store, from, to)?;
    if !is_time(&a.metric) {
        return Err(HistoryError::Incomparable(format!(
            "`{}` holds {}, not sampled time",
            a.label, a.metric
        )));
    }
    let (ma, mb) = (store.methods(a.id)?, store.methods(b.id)?);
    let (ra, rb) = (store.runs(a.id)?, store.runs(b.id)?);
    let unit = if a.metric == METRIC_TIME {
        "ms"
    } else {
        "samples"
    };
    Ok(timed::diff(
        TimeSide {
            version: &a,
            methods: &ma,
            runs: &ra,
        },
        TimeSide {
            version: &b,
            methods: &mb,
            runs: &rb,
        },
        measure,
        unit,
    ))
}

/// Two versions' folded stacks, with a method -> package map of the later
/// one; [`HistoryError::Incomparable`] when a version has none.
#[allow(clippy::type_complexity)]
pub fn stacks_of(
    store: &dyn ProfileStore,
    from: &str,
    to: &str,
) -> Result<
    (
        VersionInfo,
        Vec<(String, u64)>,
        VersionInfo,
        Vec<(String, u64)>,
        rustc_hash::FxHashMap<String, String>,
    ),
    HistoryError,
> {
    let (a, b) = comparable(store, from, to)?;
    let sa = store.stacks(a.id)?;
    let sb = store.stacks(b.id)?;
    for (v, s) in [(&a, &sa), (&b, &sb)] {
        if s.is_empty() {
            return Err(HistoryError::Incomparable(format!(
                "`{}` has no call stacks (recorded with --metric {} or by an older lupa); \
                 record it again with send counts",
                v.label, v.metric
            )));
        }
    }
    let mut packages: rustc_hash::FxHashMap<String, String> = Default::default();
    for v in [&a, &b] {
        for m in store.methods(v.id)? {
            packages.insert(m.method, m.package);
        }
    }
    Ok((a, sa, b, sb, packages))
}

/// `method` across every version of `store`.
pub fn series(
    store: &dyn ProfileStore,
    method: &str,
    measure: Measure,
) -> Result<Series, HistoryError> {
    Ok(model::series(method, store.series(method)?, measure))
}

#[cfg(test)]
mod tests {
    use super::*;

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
