//! Runs under memory pressure: each worker process of a [`Runner`] with a
//! memory limit runs in a memory cgroup of its own (below this process's on
//! cgroup v1, beside it on v2), where the kernel keeps it near the limit by
//! paging it out to swap (the experiment of a machine with less memory than
//! the program wants: the Illimani paper's 3.1 GB load, whose full GCs each
//! cost 7 times those of the 1.6 GB load).
//!
//! Two kernels' ways, one behaviour: the run is slowed down and paged.
//! - **cgroup v2**: `memory.high` is the limit; the kernel itself reclaims
//!   above it and throttles the process (`memory.max` stays unlimited). A v2
//!   cgroup that holds processes cannot give its children a controller, so
//!   the workers' cgroups are made beside this process's own (in its parent,
//!   whose `cgroup.subtree_control` must have `memory`), or in the root.
//! - **cgroup v1** has no `memory.high`, and its `memory.limit_in_bytes` is a
//!   hard limit whose reclaim often gives up and calls the OOM killer while
//!   swap is slow to take pages (on this machine, 6 of 8 runs of the 31 MB
//!   DataFrame load under a plain 64 MB limit; with a 16 MB slack and the
//!   tending below but the OOM killer on, the first 31 MB run of a table).
//!   So the hard limit is set a slack above the limit, the cgroup's OOM
//!   killer is disabled (a run at the hard limit waits instead), and the
//!   driver [`tend`](Pressure::tend)s the cgroup while its worker runs: every
//!   couple of milliseconds, when usage is above the limit, it writes the
//!   limit as the hard limit (the kernel reclaims down to it, in the driver's
//!   time, or refuses) and puts the hard limit back, which also wakes a run
//!   waiting at it. When the kernel refuses for 30 s while the run waits (the
//!   swap is full: the run is more than the limit and the swap hold), the
//!   OOM killer is turned back on and ends the run (a failed run that says
//!   so). A worker left waiting by a driver that died is ended by the next
//!   `lupa` that makes cgroups in the same place (it turns the OOM killer back
//!   on in the cgroups it sweeps).
//!
//! Contract: [`Pressure::create`] fails with a sentence that says what the
//! machine lacks (Linux, a memory cgroup this process may create cgroups in:
//! root or a delegated hierarchy, swap), and makes nothing then; [`probe`]
//! also starts a process in a cgroup. A cgroup is removed when its
//! [`Pressure`] is dropped, and those an interrupted `lupa` left behind in
//! the same place (empty, and no process of their pid in `/proc`) when the
//! next one makes its own. A worker enters its cgroup before it runs anything
//! ([`Pressure::command`]: `/bin/sh` writes its own pid to `cgroup.procs`,
//! then execs the worker, or exits with [`CANNOT_ENTER`]), so all of its
//! memory is charged there.
//!
//! [`Runner`]: crate::Runner

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// What a v1 cgroup's hard limit is above the limit.
const SLACK: u64 = 16 << 20;

/// How long a run may wait at its v1 hard limit while the kernel refuses
/// every push before its OOM killer is turned back on. Swap takes pages
/// slowly (writeback), so pushes fail for seconds at a time on a run that
/// will go on: only a long wait means nothing is left to page out.
const STUCK: Duration = Duration::from_secs(30);

/// The smallest limit: a worker's VM needs more than this to start.
pub const MIN_LIMIT: u64 = 16 << 20;

/// The largest limit (1 TB).
pub const MAX_LIMIT: u64 = 1 << 40;

/// The exit status of a worker's shell that could not enter its cgroup.
pub const CANNOT_ENTER: i32 = 69;

/// A memory limit as `--memory-limit` takes it: a size (`64MB`, `1GB`) from
/// [`MIN_LIMIT`] to [`MAX_LIMIT`].
pub fn parse_limit(s: &str) -> Result<u64, String> {
    let bytes = lupa_heap::units::parse_size(s)? as u64;
    if bytes < MIN_LIMIT {
        return Err(format!(
            "'{s}' is too small a memory limit: a worker needs more than 16MB to start"
        ));
    }
    if bytes > MAX_LIMIT {
        return Err(format!("'{s}' is too large a memory limit (at most 1TB)"));
    }
    Ok(bytes)
}

/// `each in a memory cgroup of 64MB, paged out to swap beyond it`: how the
/// reports say a limit.
pub fn describe_limit(bytes: u64) -> String {
    format!(
        "each in a memory cgroup of {}, paged out to swap beyond it",
        lupa_heap::units::size_label(usize::try_from(bytes).unwrap_or(usize::MAX))
    )
}

/// The two kinds of memory cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// cgroup v2: `memory.high`.
    V2,
    /// cgroup v1: `memory.limit_in_bytes`, tended.
    V1,
}

/// Where this process's memory cgroup is, and what the machine has.
#[derive(Debug, Clone, PartialEq)]
pub struct Hierarchy {
    /// The cgroup file system's mount point (`/sys/fs/cgroup`).
    pub root: PathBuf,
    /// `/proc/self/cgroup`.
    pub own: String,
    /// `/proc/swaps`.
    pub swaps: String,
}

impl Hierarchy {
    /// This machine's.
    pub fn system() -> Result<Hierarchy, String> {
        if !cfg!(target_os = "linux") {
            return Err("a memory limit needs Linux's memory cgroups".into());
        }
        let read =
            |p: &str| std::fs::read_to_string(p).map_err(|e| format!("cannot read {p}: {e}"));
        Ok(Hierarchy {
            root: PathBuf::from("/sys/fs/cgroup"),
            own: read("/proc/self/cgroup")?,
            swaps: read("/proc/swaps")?,
        })
    }

    /// The directory new memory cgroups go in, and their kind.
    pub fn parent(&self) -> Result<(PathBuf, Version), String> {
        let v2_root = self.root.join("cgroup.controllers");
        if v2_root.is_file() {
            let own = self
                .own
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .unwrap_or("/")
                .trim_matches('/');
            // The root may hold processes and give controllers; any other
            // cgroup of ours holds this process, so its parent is used.
            let parent = match own.rsplit_once('/') {
                _ if own.is_empty() => String::new(),
                Some((up, _)) => up.to_string(),
                None => String::new(),
            };
            let dir = self.root.join(&parent);
            let enabled =
                std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
            if !own.is_empty() && !enabled.split_whitespace().any(|c| c == "memory") {
                return Err(format!(
                    "the memory controller is not enabled for the children of {} (cgroup v2: \
`echo +memory > {}/cgroup.subtree_control` as root; this process's cgroup, {}, holds it, so \
the workers' cgroups go beside it)",
                    dir.display(),
                    dir.display(),
                    self.root.join(own).display()
                ));
            }
            return Ok((dir, Version::V2));
        }
        let path = self.own.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == "memory")
                .then_some(path)
        });
        let Some(path) = path else {
            return Err(
                "this machine has no memory cgroup controller (cgroup v2 with the memory \
controller, or cgroup v1's memory hierarchy)"
                    .into(),
            );
        };
        let dir = self.root.join("memory").join(path.trim_start_matches('/'));
        if !dir.is_dir() {
            return Err(format!(
                "the memory cgroup of this process, {}, is not mounted",
                dir.display()
            ));
        }
        Ok((dir, Version::V1))
    }

    /// Total swap, bytes (`/proc/swaps`, in KiB).
    pub fn swap_bytes(&self) -> u64 {
        self.swaps
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(2)?.parse::<u64>().ok())
            .sum::<u64>()
            * 1024
    }
}

/// One memory cgroup with a limit, for one worker at a time.
#[derive(Debug)]
pub struct Pressure {
    dir: PathBuf,
    version: Version,
    limit: u64,
    /// v1: since when every tend found the run waiting and could not push.
    stuck: Option<Instant>,
}

/// The names of this process's cgroups begin with one of these and its pid
/// (what [`sweep`] recognises).
const RUN: &str = "lupa-run-";
const PROBE: &str = "lupa-probe-";

impl Pressure {
    /// The cgroup of this process's worker slot `slot`, with `limit` bytes.
    pub fn for_worker(slot: usize, limit: u64) -> Result<Pressure, String> {
        let name = format!("{RUN}{}-{slot}", std::process::id());
        Pressure::create(&Hierarchy::system()?, &name, limit)
    }

    /// Make the cgroup `NAME` in `h`'s memory hierarchy with `limit` bytes.
    pub fn create(h: &Hierarchy, name: &str, limit: u64) -> Result<Pressure, String> {
        let (parent, version) = h.parent()?;
        if h.swap_bytes() == 0 {
            return Err(
                "there is no swap: a run over its memory limit would have nowhere to be paged \
out (make some, e.g. `fallocate -l 4G /swapfile && chmod 600 /swapfile && mkswap /swapfile && \
swapon /swapfile`)"
                    .into(),
            );
        }
        sweep(&parent);
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|e| {
            format!(
                "cannot make the memory cgroup {}: {e} (it needs root, or a cgroup delegated to \
this user)",
                dir.display()
            )
        })?;
        let p = Pressure {
            dir,
            version,
            limit,
            stuck: None,
        };
        let set = match version {
            Version::V2 => p.write("memory.high", limit),
            Version::V1 => p
                .write("memory.limit_in_bytes", p.hard())
                .and_then(|()| p.write("memory.oom_control", 1)),
        };
        if let Err(e) = set {
            return Err(format!(
                "cannot set the limit of the memory cgroup {}: {e}",
                p.dir.display()
            ));
        }
        if version == Version::V1 {
            // Swap anonymous memory as readily as the page cache: what a
            // program's heap is. Not every kernel lets it be set: a default.
            let _ = p.write("memory.swappiness", 100);
        }
        Ok(p)
    }

    /// How the limit is kept: `cgroup v2 memory.high`, or v1's hard limit
    /// tended by the driver.
    pub fn describe(&self) -> &'static str {
        match self.version {
            Version::V2 => "cgroup v2 memory.high",
            Version::V1 => "cgroup v1 memory.limit_in_bytes, kept at the limit by the driver",
        }
    }

    /// The limit, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// v1: the hard limit, a slack above the limit.
    fn hard(&self) -> u64 {
        self.limit.saturating_add(SLACK)
    }

    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How often to [`tend`](Pressure::tend) while a worker runs (`None`: the
    /// kernel keeps the limit by itself).
    pub fn tending(&self) -> Option<Duration> {
        (self.version == Version::V1).then_some(Duration::from_millis(2))
    }

    /// `exe ARGS`, entering this cgroup before it starts.
    pub fn command(&self, exe: &Path, args: &[String]) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c")
            .arg(format!(
                "echo $$ > \"$0\" || exit {CANNOT_ENTER}; exec \"$@\""
            ))
            .arg(self.dir.join("cgroup.procs"))
            .arg(exe)
            .args(args);
        c
    }

    /// Keep a v1 cgroup near its limit (see the module doc); nothing on v2.
    pub fn tend(&mut self) {
        if self.version != Version::V1 {
            return;
        }
        let Some(usage) = self
            .read("memory.usage_in_bytes")
            .and_then(|s| s.trim().parse::<u64>().ok())
        else {
            return;
        };
        if usage <= self.limit {
            self.stuck = None;
            return;
        }
        // The kernel reclaims down to the limit, or answers EBUSY when it
        // cannot; either way the hard limit goes back at once, and raising
        // it wakes a run that waits at it.
        let pushed = self.write("memory.limit_in_bytes", self.limit).is_ok();
        let _ = self.write("memory.limit_in_bytes", self.hard());
        let waiting = self
            .read("memory.oom_control")
            .is_some_and(|s| field(&s, "under_oom") == Some(1));
        if pushed || !waiting {
            self.stuck = None;
            return;
        }
        let since = *self.stuck.get_or_insert_with(Instant::now);
        if since.elapsed() >= STUCK {
            // Nothing more can be paged out: the run is more than the limit
            // and the swap hold. The kernel's OOM killer ends it.
            let _ = self.write("memory.oom_control", 0);
        }
    }

    /// Processes the kernel's OOM killer killed in this cgroup.
    pub fn oom_kills(&self) -> u64 {
        let file = match self.version {
            Version::V2 => "memory.events",
            Version::V1 => "memory.oom_control",
        };
        self.read(file)
            .and_then(|s| field(&s, "oom_kill"))
            .unwrap_or(0)
    }

    fn write(&self, file: &str, value: u64) -> std::io::Result<()> {
        std::fs::write(self.dir.join(file), value.to_string())
    }

    fn read(&self, file: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(file)).ok()
    }
}

impl Drop for Pressure {
    fn drop(&mut self) {
        // A cgroup goes once its last process has been reaped; give the
        // kernel a moment after a worker's exit.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Remove the cgroups an interrupted `lupa` left in `parent`: those named
/// `lupa-run-PID-N` or `lupa-probe-PID` with no process of that pid in
/// `/proc` (and only if empty: a cgroup with a process in it cannot be
/// removed).
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix(RUN)
            .or_else(|| name.strip_prefix(PROBE))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            // A worker left waiting at a v1 hard limit: let the kernel end it.
            let oom = e.path().join("memory.oom_control");
            if oom.is_file() {
                let _ = std::fs::write(oom, "0");
            }
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// The number after `name ` on a line of a cgroup's key-value file.
fn field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok()).flatten()
    })
}

/// Check that this machine can run workers under `limit` bytes: make one
/// cgroup, start `/bin/true` in it, and remove it; answers how the limit is
/// kept.
pub fn probe(limit: u64) -> Result<&'static str, String> {
    let p = Pressure::create(
        &Hierarchy::system()?,
        &format!("{PROBE}{}", std::process::id()),
        limit,
    )?;
    let status = p
        .command(Path::new("/bin/true"), &[])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start /bin/sh: {e}"))?;
    if !status.status.success() {
        return Err(format!(
            "a process cannot enter the memory cgroup {}: {}",
            p.dir().display(),
            String::from_utf8_lossy(&status.stderr).trim()
        ));
    }
    Ok(p.describe())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWAPS: &str = "Filename\tType\tSize\tUsed\tPriority\n/swapfile file 4194300 0 -2\n";

    fn v1(root: &Path) -> Hierarchy {
        std::fs::create_dir_all(root.join("memory/jobs/a")).expect("dirs");
        Hierarchy {
            root: root.to_path_buf(),
            own: "5:devices:/\n4:memory:/jobs/a\n0::/\n".into(),
            swaps: SWAPS.into(),
        }
    }

    #[test]
    fn a_v1_cgroup_is_made_below_the_own_one_with_a_slack_tended_and_no_oom_killer() {
        let t = tempfile::tempdir().expect("temp dir");
        let h = v1(t.path());
        assert_eq!(h.swap_bytes(), 4_194_300 * 1024);
        // Left by a `lupa` that is gone (no pid is this large), and one of a live process.
        let stale = t.path().join("memory/jobs/a/lupa-run-4294967290-0");
        let live = t
            .path()
            .join(format!("memory/jobs/a/lupa-run-{}-9", std::process::id()));
        std::fs::create_dir(&stale).expect("dir");
        std::fs::create_dir(&live).expect("dir");
        let mut p = Pressure::create(&h, "w0", 64 << 20).expect("made");
        let dir = t.path().join("memory/jobs/a/w0");
        assert_eq!(p.dir(), dir);
        assert!(
            !stale.exists() && live.exists(),
            "only the stale cgroup is swept"
        );
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("written");
        assert_eq!(read("memory.limit_in_bytes"), (80u64 << 20).to_string());
        assert_eq!(read("memory.oom_control"), "1");
        assert_eq!(read("memory.swappiness"), "100");
        assert!(p.tending().is_some());
        let oom = |text: &str| std::fs::write(dir.join("memory.oom_control"), text).expect("write");
        let usage = |mb: u64| {
            std::fs::write(dir.join("memory.usage_in_bytes"), (mb << 20).to_string())
                .expect("write")
        };
        // Over the limit: pushed down to it, the hard limit put back (a fake
        // cgroup takes every write, as a kernel that could reclaim does).
        oom("oom_kill_disable 1\nunder_oom 1\noom_kill 0\n");
        usage(70);
        p.stuck = Instant::now().checked_sub(STUCK);
        for _ in 0..10 {
            p.tend();
        }
        assert_eq!(read("memory.limit_in_bytes"), (80u64 << 20).to_string());
        assert_eq!(
            read("memory.oom_control"),
            "oom_kill_disable 1\nunder_oom 1\noom_kill 0\n"
        );
        // A kernel that cannot page any more (the limit refused) while the run
        // waits: the OOM killer comes back on once that has lasted STUCK.
        std::fs::remove_file(dir.join("memory.limit_in_bytes")).expect("remove");
        std::fs::create_dir(dir.join("memory.limit_in_bytes")).expect("a file no write can open");
        p.tend();
        assert!(
            read("memory.oom_control").contains("under_oom 1"),
            "not yet"
        );
        p.stuck = Instant::now().checked_sub(STUCK);
        p.tend();
        assert_eq!(
            read("memory.oom_control"),
            "0",
            "the OOM killer ends the run"
        );
        std::fs::remove_dir(dir.join("memory.limit_in_bytes")).expect("remove");
        oom("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
        assert_eq!(p.oom_kills(), 1);
        let c = p.command(Path::new("/bin/lupa"), &["run".into()]);
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(args[1].contains("|| exit 69;"), "{}", args[1]);
        assert_eq!(args[2], dir.join("cgroup.procs").to_string_lossy());
        assert_eq!(&args[3..], ["/bin/lupa", "run"]);
        // Files the fake cgroup holds keep it from going: remove them first.
        for f in std::fs::read_dir(&dir).expect("dir") {
            std::fs::remove_file(f.expect("entry").path()).expect("remove");
        }
        drop(p);
        assert!(!dir.exists());
    }

    #[test]
    fn a_v2_cgroup_has_memory_high_beside_the_own_one() {
        let t = tempfile::tempdir().expect("temp dir");
        let own = t.path().join("user/me");
        std::fs::create_dir_all(&own).expect("dirs");
        std::fs::write(t.path().join("cgroup.controllers"), "cpu memory pids").expect("write");
        let mut h = Hierarchy {
            root: t.path().to_path_buf(),
            own: "0::/user/me\n".into(),
            swaps: SWAPS.into(),
        };
        let e = Pressure::create(&h, "w0", 1 << 30).expect_err("not delegated");
        assert!(e.contains("+memory"), "{e}");
        // The own cgroup holds this process: the controller is its parent's to give.
        std::fs::write(t.path().join("user/cgroup.subtree_control"), "cpu memory").expect("write");
        let p = Pressure::create(&h, "w0", 1 << 30).expect("made");
        assert_eq!(p.dir(), t.path().join("user/w0"));
        assert_eq!(
            std::fs::read_to_string(t.path().join("user/w0/memory.high")).expect("written"),
            (1u64 << 30).to_string()
        );
        assert!(p.tending().is_none());
        std::mem::forget(p);
        // In the root cgroup: made in the root.
        h.own = "0::/\n".into();
        let p = Pressure::create(&h, "w1", 1 << 30).expect("made");
        assert_eq!(p.dir(), t.path().join("w1"));
        std::mem::forget(p);
        h.swaps = "Filename\tType\tSize\tUsed\tPriority\n".into();
        let e = Pressure::create(&h, "w2", 1 << 30).expect_err("no swap");
        assert!(e.contains("no swap"), "{e}");
        assert!(!t.path().join("w2").exists(), "nothing made");
    }

    #[test]
    fn limits_parse_within_bounds() {
        assert_eq!(parse_limit("64MB"), Ok(64 << 20));
        assert!(parse_limit("1TB").is_err(), "no TB unit");
        assert!(
            parse_limit("15MB")
                .expect_err("small")
                .contains("too small")
        );
        assert!(
            parse_limit("2048GB")
                .expect_err("large")
                .contains("too large")
        );
        assert!(parse_limit("lots").is_err());
        assert_eq!(
            describe_limit(64 << 20),
            "each in a memory cgroup of 64MB, paged out to swap beyond it"
        );
    }

    #[test]
    fn a_machine_without_a_memory_controller_says_so() {
        let t = tempfile::tempdir().expect("temp dir");
        let h = Hierarchy {
            root: t.path().to_path_buf(),
            own: "1:cpu:/\n".into(),
            swaps: SWAPS.into(),
        };
        let e = Pressure::create(&h, "w0", 1 << 30).expect_err("no controller");
        assert!(e.contains("no memory cgroup controller"), "{e}");
    }
}
