//! `lupa-history`: Hip (the Spy paper, section 4.3), the profile history of
//! a program across its versions: profile each version, keep it in a store,
//! compare versions. The data model and the writers of a comparison are
//! `lupa_prof::history`; the profilers are `lupa-profilers`'; this crate is
//! the storage and the recording between them.
//!
//! | module | what |
//! | --- | --- |
//! | [`record`](mod@record) | [`record()`]: run a program once under Compteur in a fresh VM and store its per-method metrics and folded stacks as a version; or ([`RecordMetric`]) N times under the sampler, or its SUnit tests under Spy's `TestCoverage`; [`record_git`]: each revision of a git range |
//! | [`compare`] | [`diff`], [`time_diff`], [`stacks_of`], [`series`]: versions read back and compared |
//! | [`store`] | the [`ProfileStore`] trait and its SQLite backend, [`SqliteStore`] |
//! | `store_pg` | the PostgreSQL backend (cargo feature `postgres`), for a `postgres://` URL |
//! | [`schema`] | the tables, written once as steps and rendered per dialect |
//! | [`location`] | which store a `--db` names (file or URL), URLs without passwords |
//! | [`git`] | revisions of a range, detached worktrees in temporary directories |
//! | [`error`] | [`HistoryError`] |
//!
//! [`open_store`] chooses the backend. Without the `postgres` feature a
//! `postgres://` URL is [`HistoryError::NoPostgres`].
//!
//! Contract: nothing here prints or exits; every failure is a
//! [`HistoryError`]; a version is recorded only when its program ran to a
//! zero exit status.

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

pub mod compare;
pub mod error;
pub mod git;
pub mod location;
pub mod record;
pub mod schema;
pub mod store;
#[cfg(feature = "postgres")]
pub mod store_pg;

pub use compare::{comparable, diff, is_time, series, stacks_of, time_diff};
pub use error::HistoryError;
pub use lupa_prof::history::timed::TimeMeasure;
pub use lupa_prof::history::{DiffOptions, Measure};
pub use record::{
    Program, RecordMetric, Recorded, profile_program, profile_with, record, record_git,
};
use std::path::Path;
pub use store::{NewVersion, ProfileStore, SqliteStore, VersionExtras};

/// The `metric` of a version of send counts.
pub const METRIC_SENDS: &str = "sends";
/// The `metric` of a version of sampled CPU time (values in milliseconds).
pub const METRIC_TIME: &str = "time";
/// The `metric` of a version sampled every N sends (values in samples).
pub const METRIC_TIME_SAMPLES: &str = "time-samples";
/// The `metric` of a coverage version (values: executions).
pub const METRIC_COVERAGE: &str = "coverage";
pub use lupa_prof::history::METRIC_BROKEN;

/// Open the store `db`: a PostgreSQL database when it is a `postgres://` or
/// `postgresql://` URL (`store_pg`, with the `postgres` feature; without it,
/// [`HistoryError::NoPostgres`]), else a SQLite file ([`SqliteStore`]).
/// With `create`, a missing store is created; without, it is
/// [`HistoryError::NoDatabase`].
pub fn open_store(db: &Path, create: bool) -> Result<Box<dyn ProfileStore>, HistoryError> {
    if let Some(url) = db.to_str().filter(|s| location::is_url(s)) {
        #[cfg(feature = "postgres")]
        return Ok(Box::new(store_pg::open(url, create)?));
        #[cfg(not(feature = "postgres"))]
        return Err(HistoryError::NoPostgres(location::redact(url)));
    }
    Ok(Box::new(SqliteStore::open(db, create)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "postgres"))]
    #[test]
    fn a_url_without_the_postgres_feature_is_a_clear_error() {
        let Err(e) = open_store(Path::new("postgres://lupa:secret@db.example/hip"), true) else {
            panic!("a build without the postgres feature opened a PostgreSQL store");
        };
        assert!(matches!(e, HistoryError::NoPostgres(_)), "{e:?}");
        let text = e.to_string();
        assert!(
            text.starts_with("postgres://lupa@db.example/hip: "),
            "{text}"
        );
        assert!(text.contains("without PostgreSQL support"), "{text}");
    }

    #[test]
    fn a_file_is_a_sqlite_store() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open_store(&dir.path().join("p.db"), true).expect("a SQLite store");
        assert!(store.versions().expect("versions").is_empty());
    }
}
