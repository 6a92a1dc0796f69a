//! Hip (the Spy paper, section 4.3): profile a program's versions with
//! Compteur's exact send counts, keep them in a store, and compare them.
//!
//! * [`record`]: run a program once under [`ProfileMode::Compteur`] in a
//!   fresh VM and store its per-method metrics as a version.
//! * [`record_git`]: the same for each revision of a git range, each in a
//!   temporary detached worktree ([`git::Worktree`]).
//! * [`diff`], [`series`]: read versions back and compare them with the pure
//!   model of `lupa_prof::history`.
//! * [`store`]: the [`ProfileStore`] trait and its SQLite backend.
//!
//! Contract: nothing here prints; every failure is a [`HistoryError`]; a
//! version is recorded only when its program ran to a zero exit status.

pub mod git;
pub mod store;

use crate::ProfileMode;
use lupa_prof::history::{self as model, Diff, DiffOptions, Measure, Series, VersionInfo};
use lupa_vm::{Vm, VmError, VmOptions};
use std::path::{Path, PathBuf};
pub use store::{NewVersion, ProfileStore, SqliteStore};

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Per-method metrics (`lupa_prof::history::metrics_of`).
    pub methods: Vec<model::MethodMetrics>,
    /// Every send of the run.
    pub total_sends: u64,
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
    vm.capture_output();
    vm.load_class_by_name(class).map_err(fail)?;
    let run = ProfileMode::Compteur
        .run_main(&mut vm, args)
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
    Ok(Recorded {
        methods: model::metrics_of(&run.profile),
        total_sends: run.profile.grand_total(),
    })
}

/// What to record: the program and how to run it.
#[derive(Debug, Clone)]
pub struct Program {
    /// `CLASS ARG...`.
    pub args: Vec<String>,
    /// The VM's options (class path included).
    pub options: VmOptions,
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
    store: &mut SqliteStore,
    program: &Program,
    label: &str,
    replace: bool,
) -> Result<VersionInfo, HistoryError> {
    if !replace && store.has_label(label)? {
        return Err(HistoryError::DuplicateLabel(label.to_string()));
    }
    let run = profile_program(program.options.clone(), &program.args, label)?;
    let v = NewVersion {
        label: label.to_string(),
        git_rev: None,
        date: None,
        command: program.command(&program.options.class_path),
        metric: "sends".to_string(),
        total_sends: Some(run.total_sends),
    };
    store.add_version(&v, &run.methods, replace)
}

/// Record every `every`-th revision of `range` in the git repository at
/// `repo` (always the last), each checked out in a temporary worktree and run
/// with `program`'s class path moved into it ([`git::class_path_in`]);
/// labels are the short hash and subject. `on_version` is told of each
/// version once stored. Stops at the first failure (the versions stored
/// before it stay).
pub fn record_git(
    store: &mut SqliteStore,
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
            if store.has_label(&r.label())? {
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
        let run = profile_program(options, &program.args, &label)?;
        drop(tree);
        let v = NewVersion {
            label,
            git_rev: Some(rev.hash.clone()),
            date: None,
            command: program.command(&program.options.class_path),
            metric: "sends".to_string(),
            total_sends: Some(run.total_sends),
        };
        let stored = store.add_version(&v, &run.methods, replace)?;
        on_version(&stored);
        out.push(stored);
    }
    Ok(out)
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

    #[test]
    fn records_a_bundled_program_and_diffs_it_with_itself() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = SqliteStore::open(&dir.path().join("p.db"), true).expect("store");
        let program = Program {
            args: vec!["Hello".to_string()],
            options: VmOptions {
                quiet: true,
                ..VmOptions::default()
            },
        };
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
        let missing = Program {
            args: vec!["NoSuchClass".to_string()],
            options: program.options.clone(),
        };
        assert!(matches!(
            record(&mut store, &missing, "c", false),
            Err(HistoryError::Program { .. })
        ));
        assert_eq!(store.versions().expect("versions").len(), 2);
    }
}
