//! Hip's profile store on a PostgreSQL server ([`PgStore`]), selected when
//! the database is a `postgres://` or `postgresql://` URL ([`is_url`]), so
//! that a team or a CI fleet shares one history.
//!
//! The tables and their semantics are those of the SQLite store
//! ([`crate::store`], [`crate::schema`]): `versions(id, label UNIQUE, git_rev, date, command,
//! metric, total_sends)` and `samples(version_id, package, class, method,
//! sends_self, sends_total, activations)`, primary key `(version_id,
//! method)`, index `samples_by_method(method, version_id)`; integers are
//! `BIGINT`. The schema version is the row of the table `lupa_schema`
//! (`id = 1, version, application = 'lupa'`), which also marks the database
//! as holding a Lupa store. [`SCHEMA_VERSION`] numbers the same steps as the
//! SQLite store's (version 1: the two tables; version 2: `total_sends` and
//! the index; version 3: the tables `stacks(version_id, stack, sends)` and
//! `runs(version_id, run, method, self_value, total_value)`, reals as
//! `DOUBLE PRECISION`).
//!
//! Opening a store upgrades an older schema in one transaction, under a
//! transaction-level advisory lock (two clients opening a new store at once
//! do not both create it); a newer schema is refused, never changed; a
//! database with `versions` or `samples` tables of its own but no
//! `lupa_schema` is [`HistoryError::NotAStore`]. Recording a version is one
//! transaction, as with SQLite. With `create`, a database that does not
//! exist on the server is created (`CREATE DATABASE`, through the `postgres`
//! maintenance database, which needs the `CREATEDB` privilege).
//!
//! Connections are unencrypted ([`postgres::NoTls`]: no TLS support is built
//! in, so `sslmode=require` fails). A password comes from the URL or, when
//! the URL has none, from the `PGPASSWORD` environment variable. Errors name
//! the URL with its password removed; a connection failure also names the
//! host and port.

use crate::HistoryError;
pub use crate::location::{is_url, redact};
use crate::schema::Dialect;
use crate::store::{NewVersion, ProfileStore, RunValue, VersionExtras};
use lupa_prof::history::{MethodMetrics, VersionInfo};
use postgres::error::SqlState;
use postgres::{Client, Config, GenericClient, NoTls, Row};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::schema::SCHEMA_VERSION;

/// The key of the advisory lock taken while a schema is created or
/// migrated ("LUPA").
const LOCK_KEY: i64 = 0x4C55_5041;

/// How long a connection attempt waits when the URL does not say
/// (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Open the store at the PostgreSQL URL `url` ([`PgStore::open`]).
pub fn open(url: &str, create: bool) -> Result<PgStore, HistoryError> {
    PgStore::open(url, create)
}

/// The table holding the schema version (created before the first step).
const SCHEMA_TABLE: &str = "
CREATE TABLE lupa_schema (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL,
    application TEXT NOT NULL
);
INSERT INTO lupa_schema (id, version, application) VALUES (1, 0, 'lupa');
";

const VERSION_COLUMNS: &str = "id, label, git_rev, date, command, metric, total_sends";

/// Now, as the SQLite store writes dates (RFC 3339, UTC, seconds).
const NOW: &str = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";

/// A metric as PostgreSQL stores it (saturating at `i64::MAX`).
fn to_sql(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A stored metric (negative values, which Lupa never writes, read as 0).
fn from_sql(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// A PostgreSQL error as one line: the server's message (and detail), or
/// the client's error and its causes.
fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut s = db.message().to_string();
        if let Some(detail) = db.detail() {
            s.push_str(&format!(" ({detail})"));
        }
        return s;
    }
    let mut s = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        s.push_str(&format!(": {c}"));
        cause = c.source();
    }
    s
}

/// The hosts and ports of `config`, as `host:port[,host:port...]`.
fn endpoints(config: &Config) -> String {
    use postgres::config::Host;
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let port = ports
                .get(i)
                .or_else(|| ports.first())
                .copied()
                .unwrap_or(5432);
            match h {
                Host::Tcp(name) => format!("{name}:{port}"),
                #[cfg(unix)]
                Host::Unix(dir) => format!("{}/.s.PGSQL.{port}", dir.display()),
            }
        })
        .collect();
    if hosts.is_empty() {
        "(no host in the URL)".to_string()
    } else {
        hosts.join(",")
    }
}

/// A store in a PostgreSQL database.
pub struct PgStore {
    /// The URL without its password.
    url: String,
    client: RefCell<Client>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("url", &self.url).finish()
    }
}

/// Errors of one store: each names its URL (without the password).
#[derive(Clone)]
struct Errors {
    url: String,
}

impl Errors {
    fn path(&self) -> PathBuf {
        PathBuf::from(&self.url)
    }

    fn db(&self, e: &postgres::Error) -> HistoryError {
        HistoryError::Database {
            path: self.path(),
            message: describe(e),
        }
    }

    fn not_a_store(&self, reason: impl Into<String>) -> HistoryError {
        HistoryError::NotAStore {
            path: self.path(),
            reason: reason.into(),
        }
    }
}

/// Is a table (or view) named `name` visible on the search path? Read from
/// `pg_class` with the statement's snapshot: `to_regclass` may answer from a
/// cache that has not yet seen a table another client just committed (the
/// schema is created under an advisory lock, which does not refresh it).
fn has_table(
    client: &mut impl GenericClient,
    name: &str,
    err: &Errors,
) -> Result<bool, HistoryError> {
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.relname = $1 \
             AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND pg_catalog.pg_table_is_visible(c.oid))",
            &[&name],
        )
        .map_err(|e| err.db(&e))?;
    row.try_get(0).map_err(|e| err.db(&e))
}

/// The schema version of the store behind `client`; `None` when it has no
/// `lupa_schema` table.
fn read_version(
    client: &mut impl GenericClient,
    err: &Errors,
) -> Result<Option<i64>, HistoryError> {
    if !has_table(client, "lupa_schema", err)? {
        return Ok(None);
    }
    let rows = client
        .query(
            "SELECT version, application FROM lupa_schema WHERE id = 1",
            &[],
        )
        .map_err(|e| {
            err.not_a_store(format!(
                "its lupa_schema table cannot be read: {}",
                describe(&e)
            ))
        })?;
    let [row] = rows.as_slice() else {
        return Err(err.not_a_store("its lupa_schema table holds no version"));
    };
    let version: i64 = row.try_get(0).map_err(|e| {
        err.not_a_store(format!(
            "its lupa_schema table is not Lupa's: {}",
            describe(&e)
        ))
    })?;
    let application: String = row.try_get(1).map_err(|e| {
        err.not_a_store(format!(
            "its lupa_schema table is not Lupa's: {}",
            describe(&e)
        ))
    })?;
    if application != "lupa" {
        return Err(err.not_a_store(format!("its lupa_schema table belongs to `{application}`")));
    }
    Ok(Some(version))
}

/// Refuse a version this build cannot use.
fn check_version(found: i64, err: &Errors) -> Result<(), HistoryError> {
    if found < 0 {
        return Err(err.not_a_store(format!("its schema version {found} is not Lupa's")));
    }
    if found > SCHEMA_VERSION {
        return Err(HistoryError::NewerSchema {
            path: err.path(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Bring the store behind `client` to `target` in one transaction; answers
/// the version found (0: none). Without `create`, a database without a store
/// is [`HistoryError::NoDatabase`].
fn migrate_to(
    client: &mut Client,
    err: &Errors,
    create: bool,
    target: i64,
) -> Result<i64, HistoryError> {
    let found = read_version(client, err)?;
    if found.is_none() && !create {
        return Err(HistoryError::NoDatabase(err.path()));
    }
    let found = found.unwrap_or(0);
    check_version(found, err)?;
    if found >= target {
        return Ok(found);
    }
    let mut tx = client.transaction().map_err(|e| err.db(&e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .map_err(|e| err.db(&e))?;
    // Another client may have created or migrated the store meanwhile.
    let found = match read_version(&mut tx, err)? {
        Some(v) => v,
        None => {
            if has_table(&mut tx, "versions", err)? || has_table(&mut tx, "samples", err)? {
                return Err(err.not_a_store(
                    "it has a `versions` or `samples` table that Lupa did not create (no lupa_schema table)",
                ));
            }
            tx.batch_execute(SCHEMA_TABLE).map_err(|e| err.db(&e))?;
            0
        }
    };
    check_version(found, err)?;
    if found >= target {
        return Ok(found);
    }
    for step in Dialect::Postgres.steps(found, target) {
        tx.batch_execute(&step).map_err(|e| err.db(&e))?;
    }
    tx.execute(
        "UPDATE lupa_schema SET version = $1 WHERE id = 1",
        &[&target],
    )
    .map_err(|e| err.db(&e))?;
    tx.commit().map_err(|e| err.db(&e))?;
    Ok(found)
}

fn version_of_row(r: &Row, err: &Errors) -> Result<VersionInfo, HistoryError> {
    let e = |e: postgres::Error| err.db(&e);
    Ok(VersionInfo {
        id: r.try_get(0).map_err(e)?,
        label: r.try_get(1).map_err(e)?,
        git_rev: r.try_get(2).map_err(e)?,
        date: r.try_get(3).map_err(e)?,
        command: r.try_get(4).map_err(e)?,
        metric: r.try_get(5).map_err(e)?,
        total_sends: r.try_get::<_, Option<i64>>(6).map_err(e)?.map(from_sql),
    })
}

fn metrics_of_row(r: &Row, at: usize, err: &Errors) -> Result<MethodMetrics, HistoryError> {
    let e = |e: postgres::Error| err.db(&e);
    Ok(MethodMetrics {
        package: r.try_get(at).map_err(e)?,
        class: r.try_get(at + 1).map_err(e)?,
        method: r.try_get(at + 2).map_err(e)?,
        sends_self: from_sql(r.try_get(at + 3).map_err(e)?),
        sends_total: from_sql(r.try_get(at + 4).map_err(e)?),
        activations: from_sql(r.try_get(at + 5).map_err(e)?),
    })
}

/// `methods` with the rows of one method name merged (their counts added,
/// saturating; the first row's package and class kept), as the SQLite
/// store's `ON CONFLICT` does; in their first order.
fn merged(methods: &[MethodMetrics]) -> Vec<MethodMetrics> {
    let mut out: Vec<MethodMetrics> = Vec::with_capacity(methods.len());
    let mut at: HashMap<&str, usize> = HashMap::with_capacity(methods.len());
    for m in methods {
        match at.get(m.method.as_str()) {
            Some(&i) => {
                let o = &mut out[i];
                o.sends_self = o.sends_self.saturating_add(m.sends_self);
                o.sends_total = o.sends_total.saturating_add(m.sends_total);
                o.activations = o.activations.saturating_add(m.activations);
            }
            None => {
                at.insert(&m.method, out.len());
                out.push(m.clone());
            }
        }
    }
    out
}

/// Folded stacks with the sends of one stack added (saturating), as the
/// SQLite store's `ON CONFLICT` does; in their first order.
fn merged_stacks(stacks: &[(String, u64)]) -> Vec<(&str, i64)> {
    let mut out: Vec<(&str, u64)> = Vec::with_capacity(stacks.len());
    let mut at: HashMap<&str, usize> = HashMap::with_capacity(stacks.len());
    for (stack, sends) in stacks {
        match at.get(stack.as_str()) {
            Some(&i) => out[i].1 = out[i].1.saturating_add(*sends),
            None => {
                at.insert(stack, out.len());
                out.push((stack, *sends));
            }
        }
    }
    out.into_iter().map(|(s, n)| (s, to_sql(n))).collect()
}

/// Per-run values with those of one method and run added, as the SQLite
/// store's `ON CONFLICT` does; in their first order.
fn merged_runs(runs: &[RunValue]) -> Vec<RunValue> {
    let mut out: Vec<RunValue> = Vec::with_capacity(runs.len());
    let mut at: HashMap<(&str, u32), usize> = HashMap::with_capacity(runs.len());
    for r in runs {
        match at.get(&(r.method.as_str(), r.run)) {
            Some(&i) => {
                out[i].self_value += r.self_value;
                out[i].total_value += r.total_value;
            }
            None => {
                at.insert((&r.method, r.run), out.len());
                out.push(r.clone());
            }
        }
    }
    out
}

impl PgStore {
    /// Connect to the database of `url` (`postgres://user[:password]@host[:port]/db`
    /// or `postgresql://...`) and open its store, upgrading an older schema.
    /// With `create`, a missing store (and a missing database) is created;
    /// without, it is [`HistoryError::NoDatabase`]. A server that cannot be
    /// reached is a [`HistoryError::Database`] naming the host and port.
    pub fn open(url: &str, create: bool) -> Result<PgStore, HistoryError> {
        let err = Errors { url: redact(url) };
        let mut config: Config = url.trim().parse().map_err(|e| HistoryError::Database {
            path: err.path(),
            message: format!("not a valid PostgreSQL URL: {}", describe(&e)),
        })?;
        if config.get_password().is_none()
            && let Ok(password) = std::env::var("PGPASSWORD")
        {
            config.password(password);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("lupa");
        }
        let mut client = match config.connect(NoTls) {
            Ok(c) => c,
            Err(e) if create && e.code() == Some(&SqlState::INVALID_CATALOG_NAME) => {
                create_database(&config, &err)?;
                config
                    .connect(NoTls)
                    .map_err(|e| connect_error(&config, &err, &e))?
            }
            Err(e) if e.code() == Some(&SqlState::INVALID_CATALOG_NAME) => {
                return Err(HistoryError::NoDatabase(err.path()));
            }
            Err(e) => return Err(connect_error(&config, &err, &e)),
        };
        migrate_to(&mut client, &err, create, SCHEMA_VERSION)?;
        Ok(PgStore {
            url: err.url,
            client: RefCell::new(client),
        })
    }

    /// The URL of this store, without its password.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The schema version of the open store.
    pub fn schema_version(&self) -> Result<i64, HistoryError> {
        let err = self.errors();
        read_version(&mut *self.client.borrow_mut(), &err)?
            .ok_or_else(|| HistoryError::NoDatabase(err.path()))
    }

    /// Is there a version labelled `label`?
    pub fn has_label(&self, label: &str) -> Result<bool, HistoryError> {
        Ok(self.version_by_label(label)?.is_some())
    }

    fn errors(&self) -> Errors {
        Errors {
            url: self.url.clone(),
        }
    }

    fn one_version(
        &self,
        condition: &str,
        param: &(dyn postgres::types::ToSql + Sync),
    ) -> Result<Option<VersionInfo>, HistoryError> {
        let err = self.errors();
        let row = self
            .client
            .borrow_mut()
            .query_opt(
                &format!("SELECT {VERSION_COLUMNS} FROM versions WHERE {condition}"),
                &[param],
            )
            .map_err(|e| err.db(&e))?;
        row.map(|r| version_of_row(&r, &err)).transpose()
    }

    /// Method names containing `text`, ignoring case (for "did you mean"),
    /// at most 8.
    fn similar_methods(&self, text: &str) -> Result<Vec<String>, HistoryError> {
        let err = self.errors();
        let escaped = text
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let rows = self
            .client
            .borrow_mut()
            .query(
                "SELECT method FROM samples WHERE method ILIKE $1 ESCAPE '\\' \
                 GROUP BY method ORDER BY method COLLATE \"C\" LIMIT 8",
                &[&format!("%{escaped}%")],
            )
            .map_err(|e| err.db(&e))?;
        rows.iter()
            .map(|r| r.try_get(0).map_err(|e| err.db(&e)))
            .collect()
    }
}

/// `CREATE DATABASE` the database of `config`, through the `postgres`
/// maintenance database (another client creating it at the same time is no
/// error).
fn create_database(config: &Config, err: &Errors) -> Result<(), HistoryError> {
    let name = config
        .get_dbname()
        .or(config.get_user())
        .ok_or_else(|| err.not_a_store("the URL names no database"))?
        .to_string();
    let mut admin = config.clone();
    admin.dbname("postgres");
    let mut client = admin
        .connect(NoTls)
        .map_err(|e| connect_error(&admin, err, &e))?;
    let quoted = format!("\"{}\"", name.replace('"', "\"\""));
    match client.batch_execute(&format!("CREATE DATABASE {quoted}")) {
        Ok(()) => Ok(()),
        Err(e) if e.code() == Some(&SqlState::DUPLICATE_DATABASE) => Ok(()),
        Err(e) => Err(HistoryError::Database {
            path: err.path(),
            message: format!("cannot create the database `{name}`: {}", describe(&e)),
        }),
    }
}

/// A failed connection: the server's refusal (authentication, unknown role)
/// as the server says it, or the unreachable host and port.
fn connect_error(config: &Config, err: &Errors, e: &postgres::Error) -> HistoryError {
    let message = if e.as_db_error().is_some() {
        format!(
            "the PostgreSQL server at {} refused the connection: {}",
            endpoints(config),
            describe(e)
        )
    } else {
        format!(
            "cannot connect to the PostgreSQL server at {}: {}",
            endpoints(config),
            describe(e)
        )
    };
    HistoryError::Database {
        path: err.path(),
        message,
    }
}

impl ProfileStore for PgStore {
    fn add_version_with(
        &mut self,
        v: &NewVersion,
        methods: &[MethodMetrics],
        extras: &VersionExtras,
        replace: bool,
    ) -> Result<VersionInfo, HistoryError> {
        let err = self.errors();
        let sql = |e: postgres::Error| err.db(&e);
        let client = self.client.get_mut();
        let mut tx = client.transaction().map_err(sql)?;
        let existing = tx
            .query_opt(
                "SELECT id FROM versions WHERE label = $1 FOR UPDATE",
                &[&v.label],
            )
            .map_err(sql)?;
        if let Some(row) = existing {
            if !replace {
                return Err(HistoryError::DuplicateLabel(v.label.clone()));
            }
            let id: i64 = row.try_get(0).map_err(sql)?;
            for table in ["samples", "stacks", "runs"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE version_id = $1"),
                    &[&id],
                )
                .map_err(sql)?;
            }
            tx.execute("DELETE FROM versions WHERE id = $1", &[&id])
                .map_err(sql)?;
        }
        let total = v.total_sends.map(to_sql);
        let row = tx
            .query_one(
                &format!(
                    "INSERT INTO versions (label, git_rev, date, command, metric, total_sends) \
                     VALUES ($1, $2, COALESCE($3, {NOW}), $4, $5, $6) RETURNING {VERSION_COLUMNS}"
                ),
                &[&v.label, &v.git_rev, &v.date, &v.command, &v.metric, &total],
            )
            .map_err(|e| {
                // Another client recorded the label since the check above.
                if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                    HistoryError::DuplicateLabel(v.label.clone())
                } else {
                    err.db(&e)
                }
            })?;
        let info = version_of_row(&row, &err)?;
        let methods = merged(methods);
        if !methods.is_empty() {
            let package: Vec<&str> = methods.iter().map(|m| m.package.as_str()).collect();
            let class: Vec<&str> = methods.iter().map(|m| m.class.as_str()).collect();
            let method: Vec<&str> = methods.iter().map(|m| m.method.as_str()).collect();
            let sends_self: Vec<i64> = methods.iter().map(|m| to_sql(m.sends_self)).collect();
            let sends_total: Vec<i64> = methods.iter().map(|m| to_sql(m.sends_total)).collect();
            let activations: Vec<i64> = methods.iter().map(|m| to_sql(m.activations)).collect();
            tx.execute(
                "INSERT INTO samples (version_id, package, class, method, sends_self, \
                 sends_total, activations) \
                 SELECT $1::bigint, * FROM unnest($2::text[], $3::text[], $4::text[], \
                 $5::bigint[], $6::bigint[], $7::bigint[])",
                &[
                    &info.id,
                    &package,
                    &class,
                    &method,
                    &sends_self,
                    &sends_total,
                    &activations,
                ],
            )
            .map_err(sql)?;
        }
        let stacks = merged_stacks(&extras.stacks);
        if !stacks.is_empty() {
            let (stack, sends): (Vec<&str>, Vec<i64>) = stacks.into_iter().unzip();
            tx.execute(
                "INSERT INTO stacks (version_id, stack, sends) \
                 SELECT $1::bigint, * FROM unnest($2::text[], $3::bigint[])",
                &[&info.id, &stack, &sends],
            )
            .map_err(sql)?;
        }
        let runs = merged_runs(&extras.runs);
        if !runs.is_empty() {
            let run: Vec<i64> = runs.iter().map(|r| i64::from(r.run)).collect();
            let method: Vec<&str> = runs.iter().map(|r| r.method.as_str()).collect();
            let self_value: Vec<f64> = runs.iter().map(|r| r.self_value).collect();
            let total_value: Vec<f64> = runs.iter().map(|r| r.total_value).collect();
            tx.execute(
                "INSERT INTO runs (version_id, run, method, self_value, total_value) \
                 SELECT $1::bigint, * FROM unnest($2::bigint[], $3::text[], \
                 $4::float8[], $5::float8[])",
                &[&info.id, &run, &method, &self_value, &total_value],
            )
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        Ok(info)
    }

    fn stacks(&self, id: i64) -> Result<Vec<(String, u64)>, HistoryError> {
        let err = self.errors();
        let rows = self
            .client
            .borrow_mut()
            .query(
                "SELECT stack, sends FROM stacks WHERE version_id = $1 ORDER BY stack COLLATE \"C\"",
                &[&id],
            )
            .map_err(|e| err.db(&e))?;
        rows.iter()
            .map(|r| {
                let stack: String = r.try_get(0).map_err(|e| err.db(&e))?;
                let sends: i64 = r.try_get(1).map_err(|e| err.db(&e))?;
                Ok((stack, from_sql(sends)))
            })
            .collect()
    }

    fn runs(&self, id: i64) -> Result<Vec<RunValue>, HistoryError> {
        let err = self.errors();
        let rows = self
            .client
            .borrow_mut()
            .query(
                "SELECT run, method, self_value, total_value FROM runs WHERE version_id = $1 \
                 ORDER BY method COLLATE \"C\", run",
                &[&id],
            )
            .map_err(|e| err.db(&e))?;
        rows.iter()
            .map(|r| {
                let e = |e: postgres::Error| err.db(&e);
                Ok(RunValue {
                    run: u32::try_from(r.try_get::<_, i64>(0).map_err(e)?).unwrap_or(0),
                    method: r.try_get(1).map_err(e)?,
                    self_value: r.try_get(2).map_err(e)?,
                    total_value: r.try_get(3).map_err(e)?,
                })
            })
            .collect()
    }

    fn versions(&self) -> Result<Vec<VersionInfo>, HistoryError> {
        let err = self.errors();
        let rows = self
            .client
            .borrow_mut()
            .query(
                &format!("SELECT {VERSION_COLUMNS} FROM versions ORDER BY id"),
                &[],
            )
            .map_err(|e| err.db(&e))?;
        rows.iter().map(|r| version_of_row(r, &err)).collect()
    }

    fn version_by_label(&self, label: &str) -> Result<Option<VersionInfo>, HistoryError> {
        self.one_version("label = $1", &label)
    }

    fn version_by_id(&self, id: i64) -> Result<Option<VersionInfo>, HistoryError> {
        self.one_version("id = $1", &id)
    }

    fn methods(&self, id: i64) -> Result<Vec<MethodMetrics>, HistoryError> {
        let err = self.errors();
        let rows = self
            .client
            .borrow_mut()
            .query(
                "SELECT package, class, method, sends_self, sends_total, activations \
                 FROM samples WHERE version_id = $1 ORDER BY method COLLATE \"C\"",
                &[&id],
            )
            .map_err(|e| err.db(&e))?;
        rows.iter().map(|r| metrics_of_row(r, 0, &err)).collect()
    }

    fn series(
        &self,
        method: &str,
    ) -> Result<Vec<(VersionInfo, Option<MethodMetrics>)>, HistoryError> {
        let err = self.errors();
        let known = self
            .client
            .borrow_mut()
            .query_opt(
                "SELECT 1 FROM samples WHERE method = $1 LIMIT 1",
                &[&method],
            )
            .map_err(|e| err.db(&e))?;
        if known.is_none() {
            return Err(HistoryError::UnknownMethod {
                method: method.to_string(),
                similar: self.similar_methods(method)?,
            });
        }
        let rows = self
            .client
            .borrow_mut()
            .query(
                "SELECT v.id, v.label, v.git_rev, v.date, v.command, v.metric, v.total_sends, \
                 s.package, s.class, s.method, s.sends_self, s.sends_total, s.activations \
                 FROM versions v LEFT JOIN samples s ON s.version_id = v.id AND s.method = $1 \
                 ORDER BY v.id",
                &[&method],
            )
            .map_err(|e| err.db(&e))?;
        rows.iter()
            .map(|r| {
                let v = version_of_row(r, &err)?;
                let present: Option<String> = r.try_get(9).map_err(|e| err.db(&e))?;
                let m = match present {
                    Some(_) => Some(metrics_of_row(r, 7, &err)?),
                    None => None,
                };
                Ok((v, m))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_methods_are_merged_like_sqlite() {
        let m = |method: &str, n: u64| MethodMetrics {
            package: "P".to_string(),
            class: "C".to_string(),
            method: method.to_string(),
            sends_self: n,
            sends_total: n,
            activations: 1,
        };
        let out = merged(&[m("C>>a", 1), m("C>>b", 2), m("C>>a", u64::MAX)]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].method, "C>>a");
        assert_eq!(out[0].sends_total, u64::MAX);
        assert_eq!(out[0].activations, 2);
        assert_eq!(out[1].method, "C>>b");
    }

    #[test]
    fn an_unreachable_server_names_its_host_and_port() {
        // Port 1 on the loopback: nothing listens there.
        let e = PgStore::open("postgres://lupa:secret@127.0.0.1:1/lupa", false)
            .expect_err("nothing listens on port 1");
        let text = e.to_string();
        assert!(matches!(e, HistoryError::Database { .. }), "{e:?}");
        assert!(text.contains("127.0.0.1:1"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        let bad = PgStore::open("postgres://h:notaport/db", false).expect_err("bad URL");
        assert!(
            bad.to_string().contains("not a valid PostgreSQL URL"),
            "{bad}"
        );
    }
}
