//! [`HistoryError`]: every way a history command fails, each naming what it
//! failed on (the store, the version, the revision, the program).

use lupa_vm::VmError;
use std::path::{Path, PathBuf};

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
    /// The store is a PostgreSQL URL and this build has no PostgreSQL
    /// support (the `postgres` cargo feature).
    #[error(
        "{0}: this lupa was built without PostgreSQL support (the cargo feature `postgres`); \
use a SQLite file, or build lupa with it: cargo build --release -p lupa-cli --features postgres"
    )]
    NoPostgres(String),
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
