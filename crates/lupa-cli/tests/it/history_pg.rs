//! `lupa history` on PostgreSQL (`--db postgres://...`), against a real,
//! throwaway server: `initdb` and `pg_ctl` of Debian's `postgresql` (under
//! `/usr/lib/postgresql/*/bin/`) start one on a free loopback port with its
//! data in a temporary directory (run as the `postgres` user when the test
//! runs as root, since PostgreSQL refuses root), and a guard stops it and
//! removes the directory however the test ends.
//!
//! Checked: the SQLite CLI round trip (record two versions, log, diff, show,
//! check, exit codes) gives the same output on PostgreSQL as on a SQLite
//! file; the database is created by the first `record`; errors (no store
//! yet, unreachable server, a newer schema, another application's tables)
//! are clean exits 74; a version-1 store is migrated; the library store
//! (extreme counts, replace, folded stacks, per-run values, several clients
//! creating one store at once).
//!
//! Without PostgreSQL the test says `SKIPPED: ...` on stderr and passes,
//! except under `CI=true` (`.ci/run` installs it), where it fails.

// The PostgreSQL store is built with lupa-cli's `postgres` feature (off by default; `.ci/run` runs
// this file with it).
#![cfg(feature = "postgres")]

use crate::common::hip::{MAIN, MAIN_2, WORK_1, WORK_2};
use crate::common::{Run, lupa_in};
use lupa_history::store::{NewVersion, ProfileStore, VersionExtras};
use lupa_history::store_pg::{self, PgStore};
use lupa_history::{self as hip, HistoryError};
use lupa_prof::history::MethodMetrics;
use lupa_prof::history::timed::RunValue;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// The directory of `initdb` and `pg_ctl`: the newest
/// `/usr/lib/postgresql/N/bin` (Debian), else the `PATH`'s.
fn pg_bin_dir() -> Option<PathBuf> {
    let complete = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            complete(&bin).then_some((n, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|d| complete(d))
        // A symbolic link (e.g. /usr/local/bin/initdb): the directory of its
        // target, which holds psql too.
        .map(|d| {
            std::fs::canonicalize(d.join("initdb"))
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .filter(|p| complete(p))
                .unwrap_or(d)
        })
}

/// A free TCP port on the loopback (free when asked: the server is started
/// on it at once, and again on another one should it be taken meanwhile).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

fn output_text(o: &Output) -> String {
    format!(
        "status {}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A throwaway PostgreSQL server; dropping it stops the server and removes
/// its directory.
struct PgServer {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    /// Run the server's programs as the `postgres` user (the test runs as
    /// root).
    as_postgres: bool,
    started: bool,
    /// The data directory, the socket and the log; removed last.
    dir: tempfile::TempDir,
}

impl PgServer {
    /// `initdb` a cluster in a temporary directory and start it on a free
    /// port, waiting until it accepts connections.
    fn start(bin: PathBuf) -> PgServer {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let as_postgres = std::fs::metadata(dir.path()).expect("stat").uid() == 0;
        if as_postgres {
            let o = Command::new("chown")
                .arg("postgres:")
                .arg(dir.path())
                .output()
                .expect("chown runs");
            assert!(
                o.status.success(),
                "cannot give the server's directory to the postgres user: {}",
                output_text(&o)
            );
        }
        let mut server = PgServer {
            bin,
            data: dir.path().join("data"),
            port: 0,
            as_postgres,
            started: false,
            dir,
        };
        let t = Instant::now();
        let o = server
            .command("initdb")
            .arg("-D")
            .arg(&server.data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .output()
            .expect("initdb runs");
        assert!(o.status.success(), "initdb failed: {}", output_text(&o));
        let initdb = t.elapsed();
        let t = Instant::now();
        let mut last = String::new();
        for _ in 0..3 {
            server.port = free_port();
            let options = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
                 -c full_page_writes=off",
                server.port,
                server.dir.path().display()
            );
            let o = server
                .command("pg_ctl")
                .arg("-D")
                .arg(&server.data)
                .arg("-l")
                .arg(server.dir.path().join("server.log"))
                .args(["-w", "-t", "60", "-o", &options, "start"])
                .output()
                .expect("pg_ctl runs");
            server.started = true;
            if o.status.success() {
                eprintln!(
                    "PostgreSQL ({}) on 127.0.0.1:{}: initdb {:.1} s, start {:.1} s",
                    server.bin.display(),
                    server.port,
                    initdb.as_secs_f64(),
                    t.elapsed().as_secs_f64()
                );
                return server;
            }
            last = format!(
                "{}\nserver log: {}",
                output_text(&o),
                std::fs::read_to_string(server.dir.path().join("server.log")).unwrap_or_default()
            );
            server.stop();
        }
        panic!("the PostgreSQL server did not start: {last}");
    }

    /// `program` of the server's directory, as the server's user.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut c = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        };
        c.current_dir(self.dir.path());
        c
    }

    fn stop(&mut self) {
        if self.started {
            let _ = self
                .command("pg_ctl")
                .arg("-D")
                .arg(&self.data)
                .args(["-w", "-t", "30", "-m", "immediate", "stop"])
                .output();
            self.started = false;
        }
    }

    /// The URL of database `db` on this server.
    fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Run `sql` in database `db` with `psql` (stops at the first error).
    fn psql(&self, db: &str, sql: &str) {
        let o = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", db])
            .args(["-c", sql])
            .current_dir(self.dir.path())
            .output()
            .expect("psql runs");
        assert!(o.status.success(), "psql {sql}: {}", output_text(&o));
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server, or `None` (said on stderr) when PostgreSQL is not installed;
/// under `CI=true` its absence fails the test.
fn server() -> Option<PgServer> {
    let Some(bin) = pg_bin_dir() else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "PostgreSQL is not installed (no initdb and pg_ctl under /usr/lib/postgresql/*/bin \
                 or on the PATH), but CI=true: .ci/run installs it (apt install postgresql)"
            );
        }
        eprintln!("SKIPPED: PostgreSQL not installed (apt install postgresql)");
        return None;
    };
    Some(PgServer::start(bin))
}

/// Replace RFC 3339 dates (`2026-01-02T03:04:05Z`) by `<date>`.
fn scrub_dates(text: &str) -> String {
    let b = text.as_bytes();
    let is_date = |s: &[u8]| {
        s.len() == 20
            && s.iter().enumerate().all(|(k, &c)| match k {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'Z',
                _ => c.is_ascii_digit(),
            })
    };
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if i + 20 <= b.len() && is_date(&b[i..i + 20]) {
            out.push_str("<date>");
            i += 20;
        } else {
            let ch = text[i..].chars().next().expect("a char");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn assert_clean_failure(r: &Run, code: i32, message: &str) {
    assert_eq!(r.code, code, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(r.stderr.contains(message), "stderr: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "stderr: {}", r.stderr);
}

/// `lupa history --db DB ARGS...` in `dir`.
fn hist(dir: &Path, db: &str, args: &[&str]) -> Run {
    let mut all = vec!["history", "--db", db];
    all.extend_from_slice(args);
    lupa_in(dir, &all)
}

/// The CLI round trip on `db` (a SQLite file or a URL) in `dir`: the outputs
/// of log, diff (text and JSON), show and check, dates scrubbed.
fn round_trip(dir: &Path, db: &str) -> Vec<String> {
    std::fs::write(dir.join("Main.som"), MAIN).expect("write");
    std::fs::write(dir.join("Work.som"), WORK_1).expect("write");
    let record = |label: &str| {
        hist(
            dir,
            db,
            &["record", "--label", label, "-cp", ".", "--", "Main"],
        )
    };
    let r = record("a");
    assert_eq!(r.code, 0, "{db}: {}", r.stderr);
    assert_clean_failure(&record("a"), 2, "exists already");
    std::fs::write(dir.join("Main.som"), MAIN_2).expect("write");
    std::fs::write(dir.join("Work.som"), WORK_2).expect("write");
    let r = record("b");
    assert_eq!(r.code, 0, "{db}: {}", r.stderr);
    // A failing program records nothing.
    let missing = hist(dir, db, &["record", "--label", "c", "--", "NoSuchClass"]);
    assert_clean_failure(&missing, 66, "NoSuchClass");

    let mut outputs = Vec::new();
    let ok = |args: &[&str], outputs: &mut Vec<String>| {
        let r = hist(dir, db, args);
        assert_eq!(r.code, 0, "{db} {args:?}: {}", r.stderr);
        outputs.push(scrub_dates(&r.stdout));
        r.stdout
    };
    let log = ok(&["log"], &mut outputs);
    assert!(log.contains(" a ") || log.contains("a\n"), "{log}");
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["log", "--format", "json"], &mut outputs)).expect("JSON");
    assert_eq!(doc["versions"].as_array().expect("versions").len(), 2);
    ok(&["diff", "a", "b"], &mut outputs);
    ok(
        &["diff", "1", "#2", "--all", "--metric", "self"],
        &mut outputs,
    );
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["diff", "a", "b", "--format", "json"], &mut outputs))
            .expect("JSON");
    let state = |name: &str| {
        doc["methods"]
            .as_array()
            .expect("methods")
            .iter()
            .find(|m| m["name"] == name)
            .map(|m| m["state"].as_str().expect("state").to_string())
            .unwrap_or_else(|| panic!("{name} in the diff"))
    };
    assert_eq!(state("Work>>slow"), "higher");
    assert_eq!(state("Work>>fast"), "lower");
    assert_eq!(state("Work>>same"), "unchanged");
    assert_eq!(state("Work>>old"), "removed");
    assert_eq!(state("Work>>fresh"), "new");
    ok(&["diff", "a", "b", "--format", "svg"], &mut outputs);
    // The folded stacks (send versions keep them).
    let folded = ok(&["diff", "a", "b", "--format", "folded-diff"], &mut outputs);
    assert!(folded.contains("Work>>slow"), "{folded}");
    let show = ok(&["show", "b", "Work>>slow"], &mut outputs);
    assert!(show.contains("higher (red)"), "{show}");
    assert_clean_failure(
        &hist(dir, db, &["show", "b", "SLOW"]),
        2,
        "did you mean Work>>slow",
    );
    assert_clean_failure(
        &hist(dir, db, &["diff", "a", "zz"]),
        2,
        "unknown version `zz`",
    );
    let c = hist(
        dir,
        db,
        &["check", "--baseline", "a", "--max-increase", "5%"],
    );
    assert_eq!(c.code, 1, "{}{}", c.stdout, c.stderr);
    assert!(c.stdout.contains("Work>>slow"), "{}", c.stdout);
    outputs.push(scrub_dates(&c.stdout));
    ok(
        &[
            "check",
            "--baseline",
            "a",
            "--against",
            "a",
            "--max-increase",
            "0",
        ],
        &mut outputs,
    );
    let r = hist(
        dir,
        db,
        &[
            "record",
            "--label",
            "a",
            "--replace",
            "-cp",
            ".",
            "--",
            "Main",
        ],
    );
    assert_eq!(r.code, 0, "{db}: {}", r.stderr);
    ok(&["log"], &mut outputs);
    outputs
}

fn mm(method: &str, total: u64) -> MethodMetrics {
    let class = method.split(">>").next().unwrap_or("A");
    MethodMetrics {
        package: "App".to_string(),
        class: class.to_string(),
        method: method.to_string(),
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

/// The library store on `url`.
fn library_store(url: &str) {
    assert!(matches!(
        PgStore::open(url, false),
        Err(HistoryError::NoDatabase(_))
    ));
    let mut s = PgStore::open(url, true).expect("creates the database and the store");
    assert_eq!(
        s.schema_version().expect("version"),
        store_pg::SCHEMA_VERSION
    );
    let methods = vec![
        mm("A>>x", 10),
        mm("A>>y", u64::MAX),
        mm("B>>z", 0),
        mm("A>>x", 5),
    ];
    let v = s
        .add_version(&new_version("v1"), &methods, false)
        .expect("adds");
    assert_eq!((v.id, v.label.as_str()), (1, "v1"));
    assert!(v.date.ends_with('Z') && v.date.len() == 20, "{}", v.date);
    let mut v2 = new_version("v2");
    v2.git_rev = Some("abc".to_string());
    v2.date = Some("2026-01-02T03:04:05Z".to_string());
    let extras = VersionExtras {
        stacks: vec![
            ("Main>>run;A>>x".to_string(), 4),
            ("Main>>run".to_string(), 1),
            ("Main>>run;A>>x".to_string(), 2),
        ],
        runs: vec![
            RunValue {
                run: 1,
                method: "A>>x".to_string(),
                self_value: 1.5,
                total_value: 2.0,
            },
            RunValue {
                run: 0,
                method: "A>>x".to_string(),
                self_value: 0.25,
                total_value: 0.5,
            },
        ],
    };
    s.add_version_with(&v2, &methods[..1], &extras, false)
        .expect("adds with extras");
    drop(s);

    let mut s = PgStore::open(url, false).expect("reopens");
    let vs = s.versions().expect("versions");
    assert_eq!(vs.len(), 2);
    assert_eq!(vs[1].git_rev.as_deref(), Some("abc"));
    assert_eq!(vs[1].date, "2026-01-02T03:04:05Z");
    assert_eq!(vs[1].total_sends, Some(100));
    let back = s.methods(1).expect("methods");
    let names: Vec<&str> = back.iter().map(|m| m.method.as_str()).collect();
    assert_eq!(names, ["A>>x", "A>>y", "B>>z"]);
    assert_eq!(back[0].sends_total, 15, "one method's rows are added");
    assert_eq!(back[1].sends_total, i64::MAX as u64, "saturated");
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
    match s.series("a>>") {
        Err(HistoryError::UnknownMethod { similar, .. }) => {
            assert_eq!(similar, ["A>>x", "A>>y"]);
        }
        other => panic!("expected an unknown method, got {other:?}"),
    }
    assert_eq!(
        s.stacks(2).expect("stacks"),
        [
            ("Main>>run".to_string(), 1),
            ("Main>>run;A>>x".to_string(), 6)
        ]
    );
    let runs = s.runs(2).expect("runs");
    assert_eq!(
        runs.iter().map(|r| r.run).collect::<Vec<_>>(),
        [0, 1],
        "{runs:?}"
    );
    assert!(s.stacks(1).expect("stacks").is_empty());
    assert!(matches!(
        s.add_version(&new_version("v1"), &[], false),
        Err(HistoryError::DuplicateLabel(_))
    ));
    let v = s
        .add_version(&new_version("v2"), &[mm("A>>x", 5)], true)
        .expect("replaces");
    assert_eq!(s.versions().expect("versions").len(), 2);
    assert_eq!(s.methods(v.id).expect("methods")[0].sends_total, 5);
    assert!(s.stacks(v.id).expect("stacks").is_empty());
    assert!(s.has_label("v2").expect("label") && !s.has_label("3").expect("label"));
    let d = hip::diff(&s, "v1", "v2", Default::default()).expect("diff");
    assert!(!d.methods.is_empty());
}

/// A version-1 store (tables made here, as a Lupa of schema 1 would) is
/// migrated when opened, its versions kept.
fn migrates_version_1(server: &PgServer) {
    server.psql("postgres", "CREATE DATABASE old");
    server.psql(
        "old",
        "CREATE TABLE lupa_schema (id INTEGER PRIMARY KEY CHECK (id = 1), \
         version BIGINT NOT NULL, application TEXT NOT NULL); \
         INSERT INTO lupa_schema VALUES (1, 1, 'lupa'); \
         CREATE TABLE versions (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, \
         label TEXT NOT NULL UNIQUE, git_rev TEXT, date TEXT NOT NULL, command TEXT NOT NULL, \
         metric TEXT NOT NULL); \
         CREATE TABLE samples (version_id BIGINT NOT NULL REFERENCES versions(id) ON DELETE CASCADE, \
         package TEXT NOT NULL, class TEXT NOT NULL, method TEXT NOT NULL, \
         sends_self BIGINT NOT NULL, sends_total BIGINT NOT NULL, activations BIGINT NOT NULL, \
         PRIMARY KEY (version_id, method)); \
         INSERT INTO versions (label, date, command, metric) \
         VALUES ('old', '2025-01-01T00:00:00Z', 'Foo', 'sends'); \
         INSERT INTO samples VALUES (1, 'App', 'A', 'A>>x', 1, 2, 3);",
    );
    let mut s = PgStore::open(&server.url("old"), false).expect("migrates");
    assert_eq!(
        s.schema_version().expect("version"),
        store_pg::SCHEMA_VERSION
    );
    let old = s.version("old").expect("kept");
    assert_eq!(old.total_sends, None);
    assert_eq!(s.methods(old.id).expect("methods")[0].activations, 3);
    let v = s
        .add_version(&new_version("new"), &[mm("A>>x", 4)], false)
        .expect("adds after the migration");
    assert_eq!(v.total_sends, Some(100));
    assert_eq!(s.series("A>>x").expect("series").len(), 2);
}

#[test]
fn history_on_postgresql() {
    let start = Instant::now();
    let Some(server) = server() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let url = server.url("lupa");

    // Nothing recorded yet: the database does not even exist.
    assert_clean_failure(&hist(d, &url, &["log"]), 74, "no profile database");

    // The round trip, on PostgreSQL and on SQLite: the same outputs.
    // The same directory name: it is the package of the classes.
    let pg_dir = d.join("pg").join("app");
    let sqlite_dir = d.join("sqlite").join("app");
    for p in [&pg_dir, &sqlite_dir] {
        std::fs::create_dir_all(p).expect("mkdir");
    }
    let t = Instant::now();
    let on_pg = round_trip(&pg_dir, &url);
    let pg_time = t.elapsed();
    let on_sqlite = round_trip(&sqlite_dir, "h.db");
    assert_eq!(on_pg.len(), on_sqlite.len());
    for (pg, sqlite) in on_pg.iter().zip(&on_sqlite) {
        assert_eq!(
            pg.replace(&pg_dir.display().to_string(), "<dir>"),
            sqlite.replace(&sqlite_dir.display().to_string(), "<dir>"),
            "PostgreSQL and SQLite differ"
        );
    }
    // `postgresql://` works too.
    let other = url.replacen("postgres://", "postgresql://", 1);
    assert_eq!(hist(d, &other, &["log"]).code, 0);

    // A server that does not answer: a clean exit 74 naming it.
    let closed = free_port();
    let r = hist(
        d,
        &format!("postgres://postgres:hidden@127.0.0.1:{closed}/lupa"),
        &["log"],
    );
    assert_clean_failure(&r, 74, &format!("127.0.0.1:{closed}"));
    assert!(
        !r.stderr.contains("hidden"),
        "the password is not shown: {}",
        r.stderr
    );

    // A store of a newer schema is refused, and left alone.
    server.psql("lupa", "UPDATE lupa_schema SET version = 99");
    assert_clean_failure(&hist(d, &url, &["log"]), 74, "schema version 99");
    server.psql(
        "lupa",
        &format!(
            "UPDATE lupa_schema SET version = {}",
            store_pg::SCHEMA_VERSION
        ),
    );
    assert_eq!(hist(d, &url, &["log"]).code, 0);

    // Another application's `versions` table: not a Lupa store.
    server.psql("postgres", "CREATE DATABASE foreign_app");
    server.psql("foreign_app", "CREATE TABLE versions (x INTEGER)");
    std::fs::write(pg_dir.join("Main.som"), MAIN).expect("write");
    let r = hist(
        &pg_dir,
        &server.url("foreign_app"),
        &["record", "--label", "x", "-cp", ".", "--", "Main"],
    );
    assert_clean_failure(&r, 74, "is not a Lupa profile database");

    library_store(&server.url("library"));
    migrates_version_1(&server);

    // Several clients opening one new store at once: one creates it, the
    // others wait for it (an advisory lock), none fails.
    server.psql("postgres", "CREATE DATABASE race");
    let race = server.url("race");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let race = race.clone();
            std::thread::spawn(move || PgStore::open(&race, true).map(|_| ()))
        })
        .collect();
    for t in threads {
        t.join().expect("thread").expect("opens");
    }

    drop(server);
    eprintln!(
        "history on PostgreSQL: {:.1} s in all, {:.2} s for the CLI round trip",
        start.elapsed().as_secs_f64(),
        pg_time.as_secs_f64()
    );
}
