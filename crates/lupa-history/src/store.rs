//! The profile store of Hip: versions and their per-method metrics, behind
//! the [`ProfileStore`] trait, kept in SQLite by [`SqliteStore`].
//!
//! Schema (version 3; `PRAGMA user_version` holds the version and
//! `PRAGMA application_id` marks a Lupa store):
//!
//! * `versions(id, label UNIQUE, git_rev, date, command, metric, total_sends)`;
//! * `samples(version_id, package, class, method, sends_self, sends_total,
//!   activations)`, primary key `(version_id, method)` (a version's methods
//!   are one indexed range), and the index `samples_by_method(method,
//!   version_id)` for one method's series;
//! * `stacks(version_id, stack, sends)`, primary key `(version_id, stack)`:
//!   the folded call stacks of the run (`frame;frame;frame`, the outermost
//!   first) with their self value, for differential flame graphs;
//! * `runs(version_id, run, method, self_value, total_value)`, primary key
//!   `(version_id, method, run)`: the per-run values of a version recorded
//!   from several sampled runs (`--metric time`), for significance tests.
//!
//! [`migrate`] upgrades an older store in one transaction: version 1 had no
//! `total_sends` column and no `samples_by_method` index; version 2 had no
//! `stacks` and `runs` tables (its versions have neither). A store of a newer
//! schema than this build knows is refused, never changed.
//!
//! Contract: every failure is a [`HistoryError`] naming the file; a file that
//! is not a SQLite database, or a database that is not a Lupa store, is
//! [`HistoryError::NotAStore`]; recording a version is one transaction (a
//! failed recording leaves nothing). Several processes may record into one
//! store at once: creating or upgrading the schema and recording a version
//! take the write lock first (`BEGIN IMMEDIATE`) and wait for each other (a
//! busy timeout of 10 s), so every version lands.

use crate::HistoryError;
use crate::schema::Dialect;
use lupa_prof::history::{MethodMetrics, VersionInfo};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use std::path::{Path, PathBuf};

pub use crate::schema::SCHEMA_VERSION;

/// `PRAGMA application_id` of a Lupa store ("LUPA").
pub const APPLICATION_ID: i64 = 0x4C55_5041;

/// Where `lupa history` keeps its store unless told otherwise (relative to
/// the current directory).
pub const DEFAULT_PATH: &str = ".lupa/profiles.db";

/// A version to record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewVersion {
    /// Its label (unique in a store).
    pub label: String,
    /// The git revision it comes from.
    pub git_rev: Option<String>,
    /// When it was recorded (RFC 3339); `None`: now.
    pub date: Option<String>,
    /// The profiled command.
    pub command: String,
    /// The metric (`sends`).
    pub metric: String,
    /// The run's grand total.
    pub total_sends: Option<u64>,
}

/// What Hip needs of a store: [`SqliteStore`] (a file) and
/// `PgStore` (a PostgreSQL server, with the `postgres` feature) implement it
/// with the same schema ([`crate::schema`]).
pub trait ProfileStore {
    /// Record a version, its methods, and its folded stacks and per-run values
    /// (atomically); with `replace`, an existing version of the same label is
    /// replaced, otherwise it is [`HistoryError::DuplicateLabel`].
    fn add_version_with(
        &mut self,
        version: &NewVersion,
        methods: &[MethodMetrics],
        extras: &VersionExtras,
        replace: bool,
    ) -> Result<VersionInfo, HistoryError>;

    /// [`ProfileStore::add_version_with`] without stacks or per-run values.
    fn add_version(
        &mut self,
        version: &NewVersion,
        methods: &[MethodMetrics],
        replace: bool,
    ) -> Result<VersionInfo, HistoryError> {
        self.add_version_with(version, methods, &VersionExtras::default(), replace)
    }

    /// Every version, oldest first.
    fn versions(&self) -> Result<Vec<VersionInfo>, HistoryError>;

    /// The version labelled `label`, if any.
    fn version_by_label(&self, label: &str) -> Result<Option<VersionInfo>, HistoryError>;

    /// The version of id `id`, if any.
    fn version_by_id(&self, id: i64) -> Result<Option<VersionInfo>, HistoryError>;

    /// The version labelled `key`, or else of id `key` (`3` or `#3`).
    fn version(&self, key: &str) -> Result<VersionInfo, HistoryError> {
        if let Some(v) = self.version_by_label(key)? {
            return Ok(v);
        }
        if let Ok(id) = key.strip_prefix('#').unwrap_or(key).parse::<i64>()
            && let Some(v) = self.version_by_id(id)?
        {
            return Ok(v);
        }
        Err(HistoryError::UnknownVersion(key.to_string()))
    }

    /// The methods recorded for version `id`, by name.
    fn methods(&self, id: i64) -> Result<Vec<MethodMetrics>, HistoryError>;

    /// `method` in every version, oldest first (`None` where it did not run);
    /// [`HistoryError::UnknownMethod`] when no version has it.
    fn series(
        &self,
        method: &str,
    ) -> Result<Vec<(VersionInfo, Option<MethodMetrics>)>, HistoryError>;

    /// The most recent version.
    fn latest(&self) -> Result<VersionInfo, HistoryError> {
        self.versions()?
            .pop()
            .ok_or_else(|| HistoryError::UnknownVersion("latest (the store is empty)".into()))
    }

    /// The folded stacks of version `id` (`frame;frame;frame`, outermost
    /// first) with their self value, by stack; empty for a version recorded
    /// without them.
    fn stacks(&self, id: i64) -> Result<Vec<(String, u64)>, HistoryError>;

    /// The per-run values of version `id` (`--metric time`), by method then
    /// run; empty for a version of one run.
    fn runs(&self, id: i64) -> Result<Vec<RunValue>, HistoryError>;
}

/// What a version may store beside its per-method metrics
/// ([`ProfileStore::add_version_with`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VersionExtras {
    /// Folded stacks (`frame;frame`, outermost first) and their self value.
    pub stacks: Vec<(String, u64)>,
    /// Per-run values of each method (several sampled runs).
    pub runs: Vec<RunValue>,
}

impl VersionExtras {
    /// Nothing beside the metrics?
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty() && self.runs.is_empty()
    }
}

pub use lupa_prof::history::timed::RunValue;

/// A store in a SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    conn: Connection,
}

/// Bring the store of `conn` (empty, or of an older schema) to
/// [`SCHEMA_VERSION`] in one transaction; answers the version it found.
/// A database of another application, or of a newer schema, is refused.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<i64, HistoryError> {
    migrate_to(conn, path, SCHEMA_VERSION)
}

/// [`migrate`] up to `target` (tests create version-1 stores with it).
pub(crate) fn migrate_to(
    conn: &mut Connection,
    path: &Path,
    target: i64,
) -> Result<i64, HistoryError> {
    let sql = |e: rusqlite::Error| HistoryError::sqlite(path, e);
    // The first read of the file: a file that is not SQLite fails here.
    let found = schema_of(conn, path)?;
    if found >= target {
        return Ok(found);
    }
    // Another process may be creating or upgrading the same store: the
    // write lock is taken first (IMMEDIATE, waiting up to the busy timeout),
    // then the version read again under it, so that exactly one of them
    // runs the steps and the others find them done.
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql)?;
    let found = schema_of(&tx, path)?;
    if found >= target {
        return Ok(found);
    }
    for step in Dialect::Sqlite.steps(found, target) {
        tx.execute_batch(&step).map_err(sql)?;
    }
    tx.execute_batch(&format!(
        "PRAGMA user_version = {target}; PRAGMA application_id = {APPLICATION_ID};"
    ))
    .map_err(sql)?;
    tx.commit().map_err(sql)?;
    Ok(found)
}

/// The schema version of the store of `conn` (0: empty), or why it is not
/// a Lupa store this build can open.
fn schema_of(conn: &Connection, path: &Path) -> Result<i64, HistoryError> {
    let not_a_store = |reason: String| HistoryError::NotAStore {
        path: path.to_path_buf(),
        reason,
    };
    // One statement, so one snapshot: read apart, another process could
    // create the schema between the version and the tables (found 0 with
    // tables: "other tables").
    let (found, app, tables): (i64, i64, i64) = conn
        .query_row(
            "SELECT (SELECT user_version FROM pragma_user_version), \
                    (SELECT application_id FROM pragma_application_id), \
                    (SELECT count(*) FROM sqlite_master)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|e| not_a_store(e.to_string()))?;
    if app != 0 && app != APPLICATION_ID {
        return Err(not_a_store(format!(
            "it belongs to another application (application id {app:#x})"
        )));
    }
    if found == 0 && tables > 0 {
        return Err(not_a_store(
            "it is a SQLite database with other tables".to_string(),
        ));
    }
    if found < 0 {
        return Err(not_a_store(format!(
            "its schema version {found} is not Lupa's"
        )));
    }
    if found > SCHEMA_VERSION {
        return Err(HistoryError::NewerSchema {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    Ok(found)
}

/// A metric as SQLite stores it (saturating at `i64::MAX`).
fn to_sql(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A stored metric (negative values, which Lupa never writes, read as 0).
fn from_sql(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

const VERSION_COLUMNS: &str = "id, label, git_rev, date, command, metric, total_sends";

fn version_of_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<VersionInfo> {
    Ok(VersionInfo {
        id: r.get(0)?,
        label: r.get(1)?,
        git_rev: r.get(2)?,
        date: r.get(3)?,
        command: r.get(4)?,
        metric: r.get(5)?,
        total_sends: r.get::<_, Option<i64>>(6)?.map(from_sql),
    })
}

fn metrics_of_row(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<MethodMetrics> {
    Ok(MethodMetrics {
        package: r.get(at)?,
        class: r.get(at + 1)?,
        method: r.get(at + 2)?,
        sends_self: from_sql(r.get(at + 3)?),
        sends_total: from_sql(r.get(at + 4)?),
        activations: from_sql(r.get(at + 5)?),
    })
}

impl SqliteStore {
    /// Open the store at `path`, upgrading an older schema. With `create`, a
    /// missing file (and its directory) is created; without, it is
    /// [`HistoryError::NoDatabase`].
    pub fn open(path: &Path, create: bool) -> Result<SqliteStore, HistoryError> {
        if !path.exists() {
            if !create {
                return Err(HistoryError::NoDatabase(path.to_path_buf()));
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| {
                    HistoryError::Io(format!("cannot create {}: {e}", dir.display()))
                })?;
            }
        } else if path.is_dir() {
            return Err(HistoryError::NotAStore {
                path: path.to_path_buf(),
                reason: "it is a directory".to_string(),
            });
        }
        let flags = if create {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn =
            Connection::open_with_flags(path, flags).map_err(|e| HistoryError::sqlite(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| HistoryError::sqlite(path, e))?;
        migrate(&mut conn, path)?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(|e| HistoryError::sqlite(path, e))?;
        Ok(SqliteStore {
            path: path.to_path_buf(),
            conn,
        })
    }

    /// The file of this store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open store.
    pub fn schema_version(&self) -> Result<i64, HistoryError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    fn err(&self, e: rusqlite::Error) -> HistoryError {
        HistoryError::sqlite(&self.path, e)
    }

    /// Method names containing `text` (for "did you mean"), at most 8.
    fn similar_methods(&self, text: &str) -> Result<Vec<String>, HistoryError> {
        let escaped = text
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let mut st = self
            .conn
            .prepare(
                "SELECT DISTINCT method FROM samples WHERE method LIKE ?1 ESCAPE '\\' \
                 ORDER BY method LIMIT 8",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([format!("%{escaped}%")], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Is there a version labelled `label`?
    pub fn has_label(&self, label: &str) -> Result<bool, HistoryError> {
        Ok(self.version_by_label(label)?.is_some())
    }
}

impl ProfileStore for SqliteStore {
    fn add_version_with(
        &mut self,
        v: &NewVersion,
        methods: &[MethodMetrics],
        extras: &VersionExtras,
        replace: bool,
    ) -> Result<VersionInfo, HistoryError> {
        let path = self.path.clone();
        let sql = |e: rusqlite::Error| HistoryError::sqlite(&path, e);
        // The write lock first (waiting for another writer up to the busy
        // timeout): a deferred transaction that reads, then writes, fails at
        // once with "database is locked" when another one writes meanwhile.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql)?;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM versions WHERE label = ?1",
                [&v.label],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        if let Some(id) = existing {
            if !replace {
                return Err(HistoryError::DuplicateLabel(v.label.clone()));
            }
            for table in ["samples", "stacks", "runs"] {
                tx.execute(&format!("DELETE FROM {table} WHERE version_id = ?1"), [id])
                    .map_err(sql)?;
            }
            tx.execute("DELETE FROM versions WHERE id = ?1", [id])
                .map_err(sql)?;
        }
        tx.execute(
            "INSERT INTO versions (label, git_rev, date, command, metric, total_sends) \
             VALUES (?1, ?2, COALESCE(?3, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')), ?4, ?5, ?6)",
            params![
                v.label,
                v.git_rev,
                v.date,
                v.command,
                v.metric,
                v.total_sends.map(to_sql)
            ],
        )
        .map_err(sql)?;
        let id = tx.last_insert_rowid();
        {
            let mut st = tx
                .prepare(
                    "INSERT INTO samples (version_id, package, class, method, sends_self, \
                     sends_total, activations) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                     ON CONFLICT (version_id, method) DO UPDATE SET \
                     sends_self = sends_self + excluded.sends_self, \
                     sends_total = sends_total + excluded.sends_total, \
                     activations = activations + excluded.activations",
                )
                .map_err(sql)?;
            for m in methods {
                st.execute(params![
                    id,
                    m.package,
                    m.class,
                    m.method,
                    to_sql(m.sends_self),
                    to_sql(m.sends_total),
                    to_sql(m.activations)
                ])
                .map_err(sql)?;
            }
            let mut st = tx
                .prepare(
                    "INSERT INTO stacks (version_id, stack, sends) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (version_id, stack) DO UPDATE SET sends = sends + excluded.sends",
                )
                .map_err(sql)?;
            for (stack, sends) in &extras.stacks {
                st.execute(params![id, stack, to_sql(*sends)])
                    .map_err(sql)?;
            }
            let mut st = tx
                .prepare(
                    "INSERT INTO runs (version_id, run, method, self_value, total_value) \
                     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (version_id, method, run) DO UPDATE \
                     SET self_value = self_value + excluded.self_value, \
                     total_value = total_value + excluded.total_value",
                )
                .map_err(sql)?;
            for r in &extras.runs {
                st.execute(params![
                    id,
                    i64::from(r.run),
                    r.method,
                    r.self_value,
                    r.total_value
                ])
                .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        self.version_by_id(id)?
            .ok_or_else(|| HistoryError::UnknownVersion(format!("#{id}")))
    }

    fn versions(&self) -> Result<Vec<VersionInfo>, HistoryError> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {VERSION_COLUMNS} FROM versions ORDER BY id"
            ))
            .map_err(|e| self.err(e))?;
        let rows = st.query_map([], version_of_row).map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    fn version_by_label(&self, label: &str) -> Result<Option<VersionInfo>, HistoryError> {
        self.conn
            .query_row(
                &format!("SELECT {VERSION_COLUMNS} FROM versions WHERE label = ?1"),
                [label],
                version_of_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    fn version_by_id(&self, id: i64) -> Result<Option<VersionInfo>, HistoryError> {
        self.conn
            .query_row(
                &format!("SELECT {VERSION_COLUMNS} FROM versions WHERE id = ?1"),
                [id],
                version_of_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    fn methods(&self, id: i64) -> Result<Vec<MethodMetrics>, HistoryError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT package, class, method, sends_self, sends_total, activations \
                 FROM samples WHERE version_id = ?1 ORDER BY method",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([id], |r| metrics_of_row(r, 0))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    fn stacks(&self, id: i64) -> Result<Vec<(String, u64)>, HistoryError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT stack, sends FROM stacks WHERE version_id = ?1 ORDER BY stack")
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([id], |r| Ok((r.get::<_, String>(0)?, from_sql(r.get(1)?))))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    fn runs(&self, id: i64) -> Result<Vec<RunValue>, HistoryError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT run, method, self_value, total_value FROM runs WHERE version_id = ?1 \
                 ORDER BY method, run",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([id], |r| {
                Ok(RunValue {
                    run: u32::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                    method: r.get(1)?,
                    self_value: r.get(2)?,
                    total_value: r.get(3)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    fn series(
        &self,
        method: &str,
    ) -> Result<Vec<(VersionInfo, Option<MethodMetrics>)>, HistoryError> {
        let known: Option<i64> = self
            .conn
            .query_row(
                "SELECT 1 FROM samples WHERE method = ?1 LIMIT 1",
                [method],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if known.is_none() {
            return Err(HistoryError::UnknownMethod {
                method: method.to_string(),
                similar: self.similar_methods(method)?,
            });
        }
        let mut st = self
            .conn
            .prepare(
                "SELECT v.id, v.label, v.git_rev, v.date, v.command, v.metric, v.total_sends, \
                 s.package, s.class, s.method, s.sends_self, s.sends_total, s.activations \
                 FROM versions v LEFT JOIN samples s ON s.version_id = v.id AND s.method = ?1 \
                 ORDER BY v.id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([method], |r| {
                let v = version_of_row(r)?;
                let present: Option<String> = r.get(9)?;
                let m = match present {
                    Some(_) => Some(metrics_of_row(r, 7)?),
                    None => None,
                };
                Ok((v, m))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mm(class: &str, sel: &str, total: u64) -> MethodMetrics {
        MethodMetrics {
            package: "App".to_string(),
            class: class.to_string(),
            method: format!("{class}>>{sel}"),
            sends_self: total / 2,
            sends_total: total,
            activations: 3,
        }
    }

    fn new_version(label: &str) -> NewVersion {
        NewVersion {
            label: label.to_string(),
            command: "Foo".to_string(),
            metric: "sends".to_string(),
            total_sends: Some(100),
            ..NewVersion::default()
        }
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/dir/profiles.db");
        let methods = vec![mm("A", "x", 10), mm("A", "y", u64::MAX), mm("B", "z", 0)];
        {
            let mut s = SqliteStore::open(&path, true).expect("creates");
            assert_eq!(s.schema_version().expect("version"), SCHEMA_VERSION);
            let v = s
                .add_version(&new_version("v1"), &methods, false)
                .expect("adds");
            assert_eq!((v.id, v.label.as_str()), (1, "v1"));
            assert!(v.date.ends_with('Z') && v.date.len() == 20, "{}", v.date);
            let mut v2 = new_version("v2");
            v2.git_rev = Some("abc".to_string());
            v2.date = Some("2026-01-02T03:04:05Z".to_string());
            s.add_version(&v2, &methods[..1], false).expect("adds");
        }
        let s = SqliteStore::open(&path, false).expect("reopens");
        let vs = s.versions().expect("versions");
        assert_eq!(vs.len(), 2);
        assert_eq!(vs[1].git_rev.as_deref(), Some("abc"));
        assert_eq!(vs[1].total_sends, Some(100));
        let mut back = s.methods(1).expect("methods");
        back.sort_by(|a, b| a.method.cmp(&b.method));
        let mut expect = methods.clone();
        expect[1].sends_total = i64::MAX as u64;
        expect[1].sends_self = (u64::MAX / 2).min(i64::MAX as u64);
        assert_eq!(back, expect);
        assert_eq!(s.version("v2").expect("label").id, 2);
        assert_eq!(s.version("#1").expect("id").label, "v1");
        assert_eq!(s.version("2").expect("id").label, "v2");
        assert_eq!(s.latest().expect("latest").label, "v2");
        assert!(matches!(
            s.version("nope"),
            Err(HistoryError::UnknownVersion(_))
        ));
        let series = s.series("A>>y").expect("series");
        assert_eq!(series.len(), 2);
        assert!(series[0].1.is_some() && series[1].1.is_none());
        match s.series("x") {
            Err(HistoryError::UnknownMethod { similar, .. }) => {
                assert_eq!(similar, vec!["A>>x".to_string()]);
            }
            other => panic!("expected an unknown method, got {other:?}"),
        }
    }

    /// Issue 26, kind 6: writers started together on a new store (the
    /// schema created by one of them) and on an existing one wait for each
    /// other; every version lands.
    #[test]
    fn concurrent_writers_wait_for_each_other() {
        const WRITERS: usize = 6;
        for round in 0..4 {
            let dir = tempfile::tempdir().expect("tempdir");
            let path = dir.path().join(format!("new-{round}.db"));
            let start = std::sync::Arc::new(std::sync::Barrier::new(WRITERS));
            let threads: Vec<_> = (0..WRITERS)
                .map(|i| {
                    let (path, start) = (path.clone(), start.clone());
                    std::thread::spawn(move || -> Result<(), HistoryError> {
                        start.wait();
                        let mut s = SqliteStore::open(&path, true)?;
                        for k in 0..3 {
                            s.add_version(
                                &new_version(&format!("w{i}-{k}")),
                                &[mm("A", "x", 1)],
                                false,
                            )?;
                        }
                        Ok(())
                    })
                })
                .collect();
            for t in threads {
                t.join().expect("no panic").expect("every writer records");
            }
            let s = SqliteStore::open(&path, false).expect("opens");
            assert_eq!(s.versions().expect("versions").len(), WRITERS * 3);
        }
    }

    #[test]
    fn labels_are_unique_unless_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("p.db");
        let mut s = SqliteStore::open(&path, true).expect("creates");
        s.add_version(&new_version("v"), &[mm("A", "x", 1)], false)
            .expect("adds");
        assert!(matches!(
            s.add_version(&new_version("v"), &[], false),
            Err(HistoryError::DuplicateLabel(_))
        ));
        let v = s
            .add_version(&new_version("v"), &[mm("A", "x", 5)], true)
            .expect("replaces");
        assert_eq!(s.versions().expect("versions").len(), 1);
        assert_eq!(s.methods(v.id).expect("methods")[0].sends_total, 5);
    }

    #[test]
    fn migrates_a_version_1_store() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("old.db");
        {
            let mut conn = Connection::open(&path).expect("opens");
            assert_eq!(migrate_to(&mut conn, &path, 1).expect("v1"), 0);
            conn.execute(
                "INSERT INTO versions (label, git_rev, date, command, metric) \
                 VALUES ('old', NULL, '2025-01-01T00:00:00Z', 'Foo', 'sends')",
                [],
            )
            .expect("insert");
            conn.execute(
                "INSERT INTO samples VALUES (1, 'App', 'A', 'A>>x', 1, 2, 3)",
                [],
            )
            .expect("insert");
            let v: i64 = conn
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .expect("version");
            assert_eq!(v, 1);
        }
        let mut s = SqliteStore::open(&path, false).expect("migrates");
        assert_eq!(s.schema_version().expect("version"), SCHEMA_VERSION);
        let old = s.version("old").expect("kept");
        assert_eq!(old.total_sends, None);
        assert_eq!(s.methods(old.id).expect("methods")[0].activations, 3);
        let index: i64 = s
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'samples_by_method'",
                [],
                |r| r.get(0),
            )
            .expect("query");
        assert_eq!(index, 1);
        // A new version after the migration has the new column.
        let v = s
            .add_version(&new_version("new"), &[mm("A", "x", 4)], false)
            .expect("adds");
        assert_eq!(v.total_sends, Some(100));
        assert_eq!(s.series("A>>x").expect("series").len(), 2);
    }

    #[test]
    fn migrates_a_version_2_store() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("v2.db");
        {
            let mut conn = Connection::open(&path).expect("opens");
            assert_eq!(migrate_to(&mut conn, &path, 2).expect("v2"), 0);
            conn.execute(
                "INSERT INTO versions (label, git_rev, date, command, metric, total_sends) \
                 VALUES ('old', NULL, '2025-01-01T00:00:00Z', 'Foo', 'sends', 9)",
                [],
            )
            .expect("insert");
            conn.execute(
                "INSERT INTO samples VALUES (1, 'App', 'A', 'A>>x', 1, 2, 3)",
                [],
            )
            .expect("insert");
            let tables: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name IN ('stacks', 'runs')",
                    [],
                    |r| r.get(0),
                )
                .expect("query");
            assert_eq!(tables, 0);
        }
        let mut s = SqliteStore::open(&path, false).expect("migrates");
        assert_eq!(s.schema_version().expect("version"), 3);
        let old = s.version("old").expect("kept");
        assert_eq!(old.total_sends, Some(9));
        assert_eq!(s.methods(old.id).expect("methods")[0].sends_total, 2);
        assert!(s.stacks(old.id).expect("stacks").is_empty());
        assert!(s.runs(old.id).expect("runs").is_empty());
        let extras = VersionExtras {
            stacks: vec![("A>>x".to_string(), 2), ("A>>x;B>>y".to_string(), 5)],
            runs: vec![
                RunValue {
                    run: 0,
                    method: "A>>x".to_string(),
                    self_value: 1.5,
                    total_value: 2.5,
                },
                RunValue {
                    run: 1,
                    method: "A>>x".to_string(),
                    self_value: 1.25,
                    total_value: 2.0,
                },
            ],
        };
        let v = s
            .add_version_with(&new_version("new"), &[mm("A", "x", 4)], &extras, false)
            .expect("adds");
        assert_eq!(s.stacks(v.id).expect("stacks"), extras.stacks);
        assert_eq!(s.runs(v.id).expect("runs"), extras.runs);
        // Replacing drops the old extras.
        let v = s
            .add_version(&new_version("new"), &[mm("A", "x", 4)], true)
            .expect("replaces");
        assert!(s.stacks(v.id).expect("stacks").is_empty());
        let left: i64 = s
            .conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .expect("query");
        assert_eq!(left, 0);
    }

    #[test]
    fn bad_files_are_clear_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.db");
        assert!(matches!(
            SqliteStore::open(&missing, false),
            Err(HistoryError::NoDatabase(_))
        ));
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, vec![b'x'; 4096]).expect("write");
        let e = SqliteStore::open(&junk, false).expect_err("refused");
        assert!(matches!(e, HistoryError::NotAStore { .. }), "{e:?}");
        assert!(e.to_string().contains("junk.db"), "{e}");
        let other = dir.path().join("other.db");
        Connection::open(&other)
            .expect("opens")
            .execute_batch("CREATE TABLE t (x);")
            .expect("create");
        assert!(matches!(
            SqliteStore::open(&other, true),
            Err(HistoryError::NotAStore { .. })
        ));
        let newer = dir.path().join("newer.db");
        Connection::open(&newer)
            .expect("opens")
            .execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 99;"
            ))
            .expect("pragma");
        assert!(matches!(
            SqliteStore::open(&newer, false),
            Err(HistoryError::NewerSchema { found: 99, .. })
        ));
        assert!(matches!(
            SqliteStore::open(dir.path(), false),
            Err(HistoryError::NotAStore { .. })
        ));
    }
}
