//! The worker protocol of [`Runner::Processes`](crate::Runner::Processes):
//! a worker is the `lupa` binary itself, started with the arguments of a
//! [`WorkerArgs`] (`lupa run --stats-json FLAGS [--cp DIR:DIR] CLASS ARGS`,
//! made in one place, [`WorkerArgs::to_args`], from typed values: the GC
//! flags come from the configuration). It runs the program once in a fresh
//! VM ([`worker_run`]), prints the program's output on its standard output
//! and, last on its standard error, one JSON line of the run's time and heap
//! statistics ([`RunStats`]).
//!
//! Contract: the arguments parse back, through `lupa run`'s flags, to the
//! configuration they were made from, and the statistics line says which
//! parameters the run had ([`RunStats::gc`]), which the driver checks
//! ([`RunStats::mismatch`]); a statistics line is recognised by its first
//! key, `lupa_run_stats`, whose value is [`STATS_VERSION`].

use crate::gc_config::GcConfig;
use crate::{Capture, Measurement, measure};
use lupa_heap::{GcParam, GcSettings};
use lupa_vm::{HeapConfig, VmError, VmOptions};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The version of the statistics line ([`RunStats::lupa_run_stats`]).
pub const STATS_VERSION: u32 = 1;

/// The hidden `lupa run` flag that prints the statistics line.
pub const STATS_FLAG: &str = "--stats-json";

/// One run's time and heap statistics, as a worker reports them: one JSON
/// line on standard error. Counts and times cover `run_main` only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    /// The line's version, [`STATS_VERSION`] (also what marks the line).
    pub lupa_run_stats: u32,
    /// The program's exit status.
    pub exit_code: i32,
    /// Wall time of `run_main`, µs.
    pub elapsed_us: u64,
    /// Message sends.
    pub sends: u64,
    /// Time in collections, µs.
    pub gc_us: u64,
    /// Scavenges.
    pub scavenges: u64,
    /// Time in scavenges, µs.
    pub scavenge_us: u64,
    /// Full GCs.
    pub full_gcs: u64,
    /// Time in full GCs, µs.
    pub full_gc_us: u64,
    /// Longest collection, µs.
    pub max_pause_us: u64,
    /// Bytes tenured.
    pub tenured_bytes: u64,
    /// Bytes allocated.
    pub allocated_bytes: u64,
    /// Objects allocated.
    pub allocated_objects: u64,
    /// Heap size at the end (bytes held from the system).
    pub heap_bytes: u64,
    /// Old-space bytes in use at the end.
    pub old_used_bytes: u64,
    /// Old-space growths.
    pub growths: u64,
    /// Times memory was given back.
    pub shrinks: u64,
    /// Page faults of the worker during the run.
    #[serde(default)]
    pub page_faults: u64,
    /// The GC parameters the run started with, every one of lupa-heap's
    /// table by its name (`eden-size`...): what the worker made of its flags.
    #[serde(default)]
    pub gc: BTreeMap<String, f64>,
}

impl RunStats {
    /// The statistics of a measured run.
    pub fn of(m: &Measurement) -> RunStats {
        let (b, a) = (&m.heap_before, &m.heap_after);
        let us = |d: Duration| d.as_micros() as u64;
        RunStats {
            lupa_run_stats: STATS_VERSION,
            exit_code: m.exit_code,
            elapsed_us: us(m.elapsed),
            sends: m.sends,
            gc_us: us(a.gc_time.saturating_sub(b.gc_time)),
            scavenges: a.scavenges.saturating_sub(b.scavenges),
            scavenge_us: us(a.scavenge_time.saturating_sub(b.scavenge_time)),
            full_gcs: a.full_gcs.saturating_sub(b.full_gcs),
            full_gc_us: us(a.full_gc_time.saturating_sub(b.full_gc_time)),
            max_pause_us: us(a.max_pause),
            tenured_bytes: a.tenured_bytes.saturating_sub(b.tenured_bytes),
            allocated_bytes: a.allocated_bytes.saturating_sub(b.allocated_bytes),
            allocated_objects: a.allocated_objects.saturating_sub(b.allocated_objects),
            heap_bytes: a.heap_bytes,
            old_used_bytes: a.old_used_bytes,
            growths: a.growths.saturating_sub(b.growths),
            shrinks: a.shrinks.saturating_sub(b.shrinks),
            page_faults: m.page_faults,
            gc: BTreeMap::new(),
        }
    }

    /// The same statistics, with the parameters of `heap` ([`RunStats::gc`]).
    pub fn with_parameters(mut self, heap: &HeapConfig) -> RunStats {
        self.gc = GcParam::ALL
            .into_iter()
            .map(|p| (p.name().to_string(), heap.get(p)))
            .collect();
        self
    }

    /// The first parameter `settings` set that the run did not start with,
    /// as `(name, asked, got)`.
    pub fn mismatch(&self, settings: &GcSettings) -> Option<(&'static str, f64, Option<f64>)> {
        settings.iter().find_map(|(p, v)| {
            let got = self.gc.get(p.name()).copied();
            (got != Some(v)).then_some((p.name(), v, got))
        })
    }

    /// The JSON line (no newline).
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }

    /// Read a statistics line; `None` when `line` is not one.
    pub fn from_json_line(line: &str) -> Option<RunStats> {
        let t = line.trim();
        if !t.starts_with("{\"lupa_run_stats\":") {
            return None;
        }
        serde_json::from_str(t).ok()
    }

    /// Wall time of the run, seconds.
    pub fn total_s(&self) -> f64 {
        self.elapsed_us as f64 / 1e6
    }

    /// GC time, seconds.
    pub fn gc_s(&self) -> f64 {
        self.gc_us as f64 / 1e6
    }
}

/// The worker's side of a run (`lupa run --stats-json`): run `args` once in a
/// fresh VM made from `options`, answering the statistics and the program's
/// output (which the caller prints).
pub fn worker_run(options: VmOptions, args: &[String]) -> Result<(RunStats, String), VmError> {
    let heap = options.heap.clone();
    let m = measure(options, args, Capture::Output)?;
    let stats = RunStats::of(&m).with_parameters(&heap);
    Ok((stats, m.output.unwrap_or_default()))
}

/// One run for a worker process: what `lupa run --stats-json` is told.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerArgs {
    /// The GC parameters of the run.
    pub config: GcConfig,
    /// Class path searched before the bundled library.
    pub class_path: Vec<PathBuf>,
    /// `CLASS ARG...`.
    pub program: Vec<String>,
}

impl WorkerArgs {
    /// The worker's command line (after the binary): `run`, the statistics
    /// flag, the configuration's flags, the class path, the program.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec!["run".to_string(), STATS_FLAG.to_string()];
        args.extend(self.config.flags());
        if !self.class_path.is_empty() {
            let cp: Vec<String> = self
                .class_path
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            args.push("--cp".to_string());
            args.push(cp.join(":"));
        }
        args.extend(self.program.iter().cloned());
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_lines_round_trip() {
        let s = RunStats {
            lupa_run_stats: STATS_VERSION,
            exit_code: 3,
            elapsed_us: 1_500_000,
            scavenges: 7,
            ..RunStats::default()
        };
        let line = s.to_json_line();
        assert!(!line.contains('\n'));
        assert_eq!(RunStats::from_json_line(&line), Some(s.clone()));
        assert_eq!(s.total_s(), 1.5);
        assert_eq!(RunStats::from_json_line("GcLoad: checksum 1"), None);
        assert_eq!(RunStats::from_json_line("{\"other\":1}"), None);
    }

    #[test]
    fn the_line_says_the_parameters_of_the_run() {
        let c = crate::gc_config::paper_configs()[1].clone();
        let s = RunStats::default().with_parameters(&c.heap(&HeapConfig::default()));
        assert_eq!(s.gc["eden-size"], (64 << 20) as f64);
        assert_eq!(s.gc["tenuring-threshold"], 3.0);
        assert_eq!(s.gc.len(), GcParam::ALL.len());
        let back = RunStats::from_json_line(&s.to_json_line()).expect("a line");
        assert_eq!(back.mismatch(&c.settings), None);
        let other = crate::gc_config::paper_configs()[2].clone();
        assert_eq!(
            back.mismatch(&other.settings),
            Some(("eden-size", (150 << 20) as f64, Some((64 << 20) as f64)))
        );
    }

    #[test]
    fn worker_arguments() {
        let w = WorkerArgs {
            config: crate::gc_config::paper_configs()[1].clone(),
            class_path: vec![PathBuf::from("a"), PathBuf::from("b")],
            program: vec!["GcLoad".to_string(), "-1".to_string()],
        };
        assert_eq!(
            w.to_args().join(" "),
            "run --stats-json --eden-size 64MB --growth-headroom 64MB --shrink-threshold 128MB \
--gc-ratio 2.5 --cp a:b GcLoad -1"
        );
    }
}
