//! Runs of a workload under GC configurations, each in a fresh VM: in this
//! process one after the other ([`Runner::InProcess`]), or in up to N worker
//! processes at a time ([`Runner::Processes`]: the `lupa` binary itself, given
//! a [`WorkerArgs`]; the protocol is in [`crate::worker`]).
//!
//! Only `run_main` is timed, in the worker: process start, bootstrap and
//! class loading are not measured, so a run's time never depends on how runs
//! were scheduled, only on the machine's load while it ran. Runs of a batch
//! start in the order given, so a batch listed in interleaved order (default,
//! proposal, default, proposal...) is run interleaved.

use crate::gc_config::GcConfig;
use crate::pressure::{CANNOT_ENTER, Pressure};
use crate::worker::{RunStats, WorkerArgs};
use crate::{Capture, measure};
use lupa_vm::{HeapConfig, JitFactory, VmError, VmOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a run's result is checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// The program must exit with status 0.
    ExitZero,
    /// Status 0, a line `verified` in its output, and a line starting with
    /// `checksum` (the rest of it is the run's checksum).
    Verified {
        /// The line that says the result is right.
        verified: String,
        /// The prefix of the checksum line.
        checksum: String,
    },
}

/// A program to run, and how to check each run.
#[derive(Debug, Clone)]
pub struct Workload {
    /// `CLASS ARG...`, as for `lupa run`.
    pub args: Vec<String>,
    /// Class path searched before the bundled library.
    pub class_path: Vec<PathBuf>,
    /// How a run is checked.
    pub check: Check,
    /// The JIT of its runs in this process (the binary's, as `lupa run`
    /// has it by default); `None`: they interpret everything. Worker
    /// processes are `lupa run` and have it anyway.
    pub jit: Option<JitFactory>,
}

impl Workload {
    /// `CLASS ARG...` as one string.
    pub fn command(&self) -> String {
        self.args.join(" ")
    }

    /// The options of a run in this process under `config`.
    pub fn options(&self, config: &GcConfig) -> VmOptions {
        VmOptions {
            heap: config.heap(&HeapConfig::default()),
            class_path: self.class_path.clone(),
            jit_factory: self.jit,
            ..VmOptions::default()
        }
    }
}

/// One checked run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSample {
    /// Its statistics.
    pub stats: RunStats,
    /// What the program printed.
    pub output: String,
    /// Its checksum ([`Check::Verified`] only).
    pub checksum: Option<String>,
    /// Wall time of the whole run, process start and bootstrap included.
    pub wall: Duration,
}

impl RunSample {
    /// The first line of the output (the workload's summary).
    pub fn summary(&self) -> &str {
        self.output.lines().next().unwrap_or_default().trim()
    }
}

/// Why a run failed.
#[derive(Debug)]
pub enum RunError {
    /// The VM failed (in-process runs).
    Vm(VmError),
    /// The program failed, did not verify its result, or the worker died.
    Failed(String),
    /// The run was stopped after this long (a worker's time limit).
    TimedOut(Duration),
    /// A worker process could not be started.
    Spawn(String),
    /// The machine cannot run workers as asked (a memory limit without a
    /// memory cgroup or swap: [`crate::pressure`]).
    Unavailable(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Vm(e) => write!(f, "{e}"),
            RunError::Failed(m) | RunError::Spawn(m) | RunError::Unavailable(m) => f.write_str(m),
            RunError::TimedOut(d) => write!(f, "stopped after {:.1} s", d.as_secs_f64()),
        }
    }
}

/// One run to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The configuration.
    pub config: GcConfig,
    /// Stop the run after this long (worker processes only; process start included).
    pub limit: Option<Duration>,
}

impl Job {
    /// A run of `config` without a time limit.
    pub fn of(config: &GcConfig) -> Job {
        Job {
            config: config.clone(),
            limit: None,
        }
    }
}

/// Where runs happen.
#[derive(Debug, Clone, PartialEq)]
pub enum Runner {
    /// In this process, one after the other, each in a fresh VM.
    InProcess,
    /// In worker processes, `jobs` at a time: `exe` is the `lupa` binary.
    Processes {
        /// The `lupa` binary (`std::env::current_exe()` from the CLI).
        exe: PathBuf,
        /// Runs at a time (at least 1).
        jobs: usize,
        /// Run each worker in a memory cgroup of its own with this many
        /// bytes, paged out beyond them ([`crate::pressure`]).
        memory: Option<u64>,
    },
}

impl Runner {
    /// Runs at a time.
    pub fn parallelism(&self) -> usize {
        match self {
            Runner::InProcess => 1,
            Runner::Processes { jobs, .. } => (*jobs).max(1),
        }
    }

    /// Each worker's memory limit, bytes (`None`: none; in this process, never).
    pub fn memory(&self) -> Option<u64> {
        match self {
            Runner::InProcess => None,
            Runner::Processes { memory, .. } => *memory,
        }
    }

    /// Make the runs of `jobs` (started in that order), calling `on_done` with
    /// each result as it comes; answers the results in the order of `jobs`.
    pub fn run_batch(
        &self,
        w: &Workload,
        jobs: &[Job],
        on_done: &mut dyn FnMut(usize, &Result<RunSample, RunError>),
    ) -> Vec<Result<RunSample, RunError>> {
        match self {
            Runner::InProcess => jobs
                .iter()
                .enumerate()
                .map(|(i, j)| {
                    let r = run_in_process(w, j);
                    on_done(i, &r);
                    r
                })
                .collect(),
            Runner::Processes {
                exe,
                jobs: n,
                memory,
            } => {
                let count = jobs.len();
                let slots = (*n).max(1).min(count);
                let made: Result<Vec<Option<Pressure>>, String> = (0..slots)
                    .map(|slot| memory.map(|b| Pressure::for_worker(slot, b)).transpose())
                    .collect();
                let cgroups = match made {
                    Ok(c) => c,
                    Err(m) => {
                        return jobs
                            .iter()
                            .map(|_| Err(RunError::Unavailable(m.clone())))
                            .collect();
                    }
                };
                let next = AtomicUsize::new(0);
                let mut results: Vec<Option<Result<RunSample, RunError>>> =
                    (0..count).map(|_| None).collect();
                let (tx, rx) = mpsc::channel();
                std::thread::scope(|s| {
                    for mut cgroup in cgroups {
                        let tx = tx.clone();
                        let next = &next;
                        s.spawn(move || {
                            loop {
                                let i = next.fetch_add(1, Ordering::SeqCst);
                                if i >= count {
                                    break;
                                }
                                let r = run_process(exe, w, &jobs[i], cgroup.as_mut());
                                if tx.send((i, r)).is_err() {
                                    break;
                                }
                            }
                        });
                    }
                    drop(tx);
                    for (i, r) in rx {
                        on_done(i, &r);
                        results[i] = Some(r);
                    }
                });
                results
                    .into_iter()
                    .map(|r| {
                        r.unwrap_or_else(|| Err(RunError::Failed("a worker thread stopped".into())))
                    })
                    .collect()
            }
        }
    }
}

fn run_in_process(w: &Workload, job: &Job) -> Result<RunSample, RunError> {
    let t0 = Instant::now();
    let m = measure(w.options(&job.config), &w.args, Capture::Output).map_err(RunError::Vm)?;
    let stats = RunStats::of(&m);
    checked(w, stats, m.output.unwrap_or_default(), "", t0.elapsed())
}

/// The last lines of a text, for an error message.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn run_process(
    exe: &Path,
    w: &Workload,
    job: &Job,
    mut cgroup: Option<&mut Pressure>,
) -> Result<RunSample, RunError> {
    let worker = WorkerArgs {
        config: job.config.clone(),
        class_path: w.class_path.clone(),
        program: w.args.clone(),
    };
    let mut cmd = match cgroup.as_deref() {
        Some(p) => p.command(exe, &worker.to_args()),
        None => {
            let mut c = Command::new(exe);
            c.args(worker.to_args());
            c
        }
    };
    let kills_before = cgroup.as_deref().map_or(0, Pressure::oom_kills);
    let poll = cgroup
        .as_deref()
        .and_then(Pressure::tending)
        .unwrap_or(Duration::from_millis(5));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| RunError::Spawn(format!("cannot start {}: {e}", exe.display())))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => {
                // Its pipes close only when it is gone.
                let _ = child.kill();
                let _ = child.wait();
                break Err(e);
            }
        }
        if let Some(limit) = job.limit
            && t0.elapsed() > limit
        {
            let _ = child.kill();
            let _ = child.wait();
            let _ = out.join();
            let _ = err.join();
            return Err(RunError::TimedOut(limit));
        }
        if let Some(p) = cgroup.as_deref_mut() {
            p.tend();
        }
        std::thread::sleep(poll);
    };
    let wall = t0.elapsed();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let status = status.map_err(|e| RunError::Failed(format!("cannot wait for a worker: {e}")))?;
    if let Some(p) = cgroup.as_deref()
        && p.oom_kills() > kills_before
    {
        return Err(RunError::Failed(format!(
            "`lupa run {}` under {} was killed by the kernel's OOM killer in its memory cgroup \
({} limit, {}): the run needs more memory than the limit and the swap give it",
            w.command(),
            job.config.name,
            lupa_heap::units::size_label(p.limit() as usize),
            p.describe()
        )));
    }
    match stderr.lines().rev().find_map(RunStats::from_json_line) {
        Some(stats) => {
            if let Some((name, asked, got)) = stats.mismatch(&job.config.settings) {
                return Err(RunError::Failed(format!(
                    "`lupa run {}` under {} ran with {name} {} instead of {asked}: the worker \
did not read its flags as they were meant",
                    w.command(),
                    job.config.name,
                    got.map_or_else(|| "unset".to_string(), |g| g.to_string())
                )));
            }
            let said: Vec<&str> = stderr
                .lines()
                .filter(|l| RunStats::from_json_line(l).is_none())
                .collect();
            checked(w, stats, stdout, &said.join("\n"), wall)
        }
        None if cgroup.is_some() && status.code() == Some(CANNOT_ENTER) => {
            Err(RunError::Unavailable(format!(
                "a worker cannot enter its memory cgroup: {}",
                tail(&stderr, 3).trim()
            )))
        }
        None => {
            let said = tail(&stderr, 20);
            Err(RunError::Failed(format!(
                "`lupa run {}` under {} ended ({status}) without run statistics{}",
                w.command(),
                job.config.name,
                if said.is_empty() {
                    String::new()
                } else {
                    format!("; its standard error ended with:\n{said}")
                }
            )))
        }
    }
}

/// Check a run against its workload; a failure quotes the end of what the
/// run printed on each stream (or says that it printed nothing).
fn checked(
    w: &Workload,
    stats: RunStats,
    output: String,
    errors: &str,
    wall: Duration,
) -> Result<RunSample, RunError> {
    let fail = |why: String| {
        let out = tail(&output, 20);
        let err = tail(errors, 20);
        let mut m = format!("{} {why}", w.command());
        if out.trim().is_empty() {
            m.push_str("; it printed nothing on standard output");
        } else {
            m.push_str(&format!("; its output ended with:\n{out}"));
        }
        if !err.trim().is_empty() {
            m.push_str(&format!("\nits standard error ended with:\n{err}"));
        }
        RunError::Failed(m)
    };
    if stats.exit_code != 0 {
        return Err(fail(format!("exited with status {}", stats.exit_code)));
    }
    let checksum = match &w.check {
        Check::ExitZero => None,
        Check::Verified { verified, checksum } => {
            if !output.lines().any(|l| l.trim() == verified) {
                return Err(fail("did not verify its result".to_string()));
            }
            match output
                .lines()
                .find_map(|l| l.strip_prefix(checksum.as_str()))
            {
                Some(c) => Some(c.trim().to_string()),
                None => return Err(fail("printed no checksum".to_string())),
            }
        }
    };
    Ok(RunSample {
        stats,
        output,
        checksum,
        wall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_process_runs_are_checked() {
        let w = Workload {
            args: vec!["Hello".into()],
            class_path: Vec::new(),
            check: Check::ExitZero,
            jit: None,
        };
        let mut seen = Vec::new();
        let r = Runner::InProcess.run_batch(&w, &[Job::of(&GcConfig::defaults())], &mut |i, r| {
            seen.push((i, r.is_ok()))
        });
        assert_eq!(seen, [(0, true)]);
        let s = r[0].as_ref().expect("Hello runs");
        assert!(s.output.contains("Hello"), "{}", s.output);
        let strict = Workload {
            check: Check::Verified {
                verified: "never printed".into(),
                checksum: "x".into(),
            },
            ..w
        };
        let r =
            Runner::InProcess.run_batch(&strict, &[Job::of(&GcConfig::defaults())], &mut |_, _| {});
        assert!(
            matches!(&r[0], Err(RunError::Failed(m)) if m.contains("did not verify")),
            "{r:?}"
        );
    }
}
