//! `lupa gc-bench`: the effect of the GC parameters on an allocation-heavy
//! workload, after the Illimani paper's tables 1 and 3-5 (Jordan Montaño et
//! al., "Improving Performance Through Object Lifetime Profiling: the
//! DataFrame Case", IWST 2023). The CLI parses and prints; this module makes
//! the runs, and [`report`] their tables.
//!
//! Two workloads:
//! - **gcload** ([`gcload`]): the bundled `GcLoad ROWS`, which makes its own
//!   CSV text in memory, loads and queries it, and verifies its result;
//! - **dataframe** ([`dataframe`]): `DataFrameLoad PATH`, loading a CSV file
//!   into a DataFrame (smalltalk/Libraries/DataFrame) and verifying it against
//!   the file's `.sums`. Each size's file is made once by `DataFrameData PATH
//!   SIZE` into a data directory ([`ensure_data`]) and reused while it and its
//!   `.sums` file exist.
//!
//! [`bench()`] runs one workload under every configuration: warm-up runs of
//! the first configuration (not measured), then `runs` rounds, each running
//! every configuration once (interleaved, so that a drift of the machine
//! favours none), each run in a fresh VM ([`Runner`]). Every run must verify
//! its result, and all runs must compute the same checksum: a collector bug
//! would show as a different result under other parameters.

pub mod report;

use crate::gc_config::GcConfig;
use crate::runs::{Check, Job, RunError, RunSample, Runner, Workload};
use crate::{Capture, LabError, measure};
use lupa_prof::table::{Document, Table};
use lupa_vm::{JitFactory, VmOptions};
use std::path::{Path, PathBuf};

/// The GcLoad workload with `rows` rows (its own default when `None`),
/// with `jit` in its runs in this process ([`Workload::jit`]).
pub fn gcload(rows: Option<usize>, class_path: &[PathBuf], jit: Option<JitFactory>) -> Workload {
    let mut args = vec!["GcLoad".to_string()];
    if let Some(n) = rows {
        args.push(n.to_string());
    }
    Workload {
        args,
        class_path: class_path.to_vec(),
        check: Check::Verified {
            verified: "GcLoad: result verified".into(),
            checksum: "GcLoad: checksum ".into(),
        },
        jit,
    }
}

/// The DataFrame workload on the CSV file `data`, with `jit` in its runs in
/// this process ([`Workload::jit`]).
pub fn dataframe(data: &Path, class_path: &[PathBuf], jit: Option<JitFactory>) -> Workload {
    Workload {
        args: vec![
            "DataFrameLoad".to_string(),
            data.to_string_lossy().into_owned(),
        ],
        class_path: class_path.to_vec(),
        check: Check::Verified {
            verified: "DataFrameLoad: result verified".into(),
            checksum: "DataFrameLoad: checksum ".into(),
        },
        jit,
    }
}

/// A size of the DataFrame workload: `small` (1000 rows), a number of rows
/// (`300`) or a file size (`5MB`, `500KB`, `1GB`: a whole number with a unit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSize {
    /// As the user wrote it (`small`, `5MB`), for tables and file names.
    pub label: String,
    /// As `DataFrameData` takes it (`1000`, `5MB`).
    pub arg: String,
}

impl DataSize {
    /// Read a size; `None` when it is not one.
    pub fn parse(s: &str) -> Option<DataSize> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("small") {
            return Some(DataSize {
                label: "small".into(),
                arg: "1000".into(),
            });
        }
        let upper = t.to_ascii_uppercase();
        let digits = upper.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let unit = &upper[digits.len()..];
        let n: u64 = digits.parse().ok()?;
        let ok = n > 0
            && match unit {
                "" => n <= 100_000_000,
                "B" => n <= 64 << 30,
                "KB" => n <= 64 << 20,
                "MB" => n <= 64 << 10,
                "GB" => n <= 64,
                _ => false,
            };
        ok.then(|| DataSize {
            label: upper.clone(),
            arg: upper,
        })
    }
}

/// The sizes `lupa gc-bench --sizes` runs when not told: the paper's 500 MB,
/// 1.6 GB and 3.1 GB files, scaled down a hundred times.
pub const DEFAULT_SIZES: &str = "5MB,16MB,31MB";

/// A comma-separated list of sizes (see [`DataSize::parse`]), each once.
pub fn parse_sizes(s: &str) -> Result<Vec<DataSize>, String> {
    let mut out: Vec<DataSize> = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some(d) = DataSize::parse(item) else {
            return Err(format!(
                "bad size '{item}': expected small, a number of rows (300) or a file size \
such as 5MB or 500KB (a whole number)"
            ));
        };
        if !out.contains(&d) {
            out.push(d);
        }
    }
    if out.is_empty() {
        return Err("no size given".into());
    }
    Ok(out)
}

/// Where the data file of a size lives: `DIR/dataframe-LABEL.csv`.
pub fn data_file(dir: &Path, size: &DataSize) -> PathBuf {
    dir.join(format!("dataframe-{}.csv", size.label))
}

/// The `.sums` file beside a data file.
pub fn sums_file(data: &Path) -> PathBuf {
    let mut s = data.as_os_str().to_owned();
    s.push(".sums");
    PathBuf::from(s)
}

/// The data file of `size` in `dir`, made by `DataFrameData` (in a fresh VM
/// in this process) unless it and its `.sums` file exist. Answers the path
/// and whether it was made now.
pub fn ensure_data(
    dir: &Path,
    size: &DataSize,
    class_path: &[PathBuf],
    jit: Option<JitFactory>,
    progress: &mut dyn FnMut(String),
) -> Result<(PathBuf, bool), LabError> {
    let path = data_file(dir, size);
    if path.is_file() && sums_file(&path).is_file() {
        return Ok((path, false));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        LabError::Io(format!(
            "cannot create the data directory {}: {e}",
            dir.display()
        ))
    })?;
    progress(format!(
        "making {} ({})",
        path.display(),
        if size.label == size.arg {
            size.label.clone()
        } else {
            format!("{}: {} rows", size.label, size.arg)
        }
    ));
    let args = vec![
        "DataFrameData".to_string(),
        path.to_string_lossy().into_owned(),
        size.arg.clone(),
    ];
    let options = VmOptions {
        class_path: class_path.to_vec(),
        jit_factory: jit,
        ..VmOptions::default()
    };
    let m = measure(options, &args, Capture::Output).map_err(LabError::Vm)?;
    let out = m.output.unwrap_or_default();
    if m.exit_code != 0 {
        return Err(LabError::Workload(format!(
            "DataFrameData {} {} exited with status {}; its output was:\n{}",
            path.display(),
            size.arg,
            m.exit_code,
            out.trim_end()
        )));
    }
    if !(path.is_file() && sums_file(&path).is_file()) {
        return Err(LabError::Workload(format!(
            "DataFrameData did not write {} and its .sums file",
            path.display()
        )));
    }
    Ok((path, true))
}

/// How to bench.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The configurations, the baseline first.
    pub configs: Vec<GcConfig>,
    /// Measured runs of each configuration.
    pub runs: usize,
    /// Unmeasured runs of the first configuration before.
    pub warmup: usize,
    /// Where runs happen.
    pub runner: Runner,
    /// The JIT of the runs in this process and of the DataFrame files'
    /// generation (the binary's: the workloads are measured with it, as
    /// `lupa run` runs them); `None`: interpreted.
    pub jit: Option<JitFactory>,
}

/// The runs of one workload.
#[derive(Debug, Clone)]
pub struct Bench {
    /// The configurations, as given.
    pub configs: Vec<GcConfig>,
    /// Their runs, in the order of `configs`.
    pub samples: Vec<Vec<RunSample>>,
    /// The checksum every run computed.
    pub checksum: String,
    /// The workload's first output line (`GcLoad: 60000 rows, ...`).
    pub summary: String,
}

impl Bench {
    /// The run times of configuration `i`, seconds.
    pub fn times(&self, i: usize) -> Vec<f64> {
        self.samples
            .get(i)
            .map(|s| s.iter().map(|x| x.stats.total_s()).collect())
            .unwrap_or_default()
    }

    /// Mean bytes allocated per run.
    pub fn allocated_per_run(&self) -> f64 {
        let all: Vec<f64> = self
            .samples
            .iter()
            .flatten()
            .map(|s| s.stats.allocated_bytes as f64)
            .collect();
        all.iter().sum::<f64>() / all.len().max(1) as f64
    }
}

/// A run's failure, the workload's named by its configuration and run.
fn failure(e: RunError, config: &GcConfig, which: &str) -> LabError {
    match LabError::from(e) {
        LabError::Workload(m) => {
            LabError::Workload(format!("configuration {} ({which}): {m}", config.name))
        }
        other => other,
    }
}

/// Run the workload under every configuration (see the module doc). Progress:
/// `warm-up 1/1 default: 0.123 s (not measured)` and `3/12 c1 run 1: 0.456 s,
/// GC 0.012 s, 3 scavenges, 0 full GCs`.
pub fn bench(
    w: &Workload,
    o: &BenchOptions,
    progress: &mut dyn FnMut(String),
) -> Result<Bench, LabError> {
    let configs = &o.configs;
    let Some(first) = configs.first() else {
        return Err(LabError::Workload("no configuration given".into()));
    };
    for k in 0..o.warmup {
        let r = o.runner.run_batch(w, &[Job::of(first)], &mut |_, _| {});
        for r in r {
            let s = r.map_err(|e| failure(e, first, "warm-up"))?;
            progress(format!(
                "warm-up {}/{} {}: {:.3} s (not measured)",
                k + 1,
                o.warmup,
                first.name,
                s.stats.total_s()
            ));
        }
    }
    let n = configs.len();
    let jobs: Vec<Job> = (0..o.runs.max(1))
        .flat_map(|_| configs.iter().map(Job::of))
        .collect();
    let total = jobs.len();
    let mut done = 0;
    let results = o.runner.run_batch(w, &jobs, &mut |i, r| {
        done += 1;
        if let Ok(s) = r {
            progress(format!(
                "{done}/{total} {} run {}: {:.3} s, GC {:.3} s, {} scavenges, {} full GCs",
                configs[i % n].name,
                i / n + 1,
                s.stats.total_s(),
                s.stats.gc_s(),
                s.stats.scavenges,
                s.stats.full_gcs
            ));
        }
    });
    let mut samples: Vec<Vec<RunSample>> = vec![Vec::with_capacity(o.runs); n];
    for (i, r) in results.into_iter().enumerate() {
        let c = &configs[i % n];
        let s = r.map_err(|e| failure(e, c, &format!("run {}", i / n + 1)))?;
        samples[i % n].push(s);
    }
    let checksum = samples[0][0].checksum.clone().unwrap_or_default();
    for (c, ss) in configs.iter().zip(&samples) {
        for (r, s) in ss.iter().enumerate() {
            let got = s.checksum.clone().unwrap_or_default();
            if got != checksum {
                return Err(LabError::Workload(format!(
                    "configuration {} (run {}) computed checksum {got} but {} (run 1) computed {checksum}",
                    c.name,
                    r + 1,
                    first.name
                )));
            }
        }
    }
    let summary = samples[0][0].summary().to_string();
    Ok(Bench {
        configs: configs.clone(),
        samples,
        checksum,
        summary,
    })
}

/// The workloads of one `lupa gc-bench`.
#[derive(Debug, Clone, PartialEq)]
pub enum Workloads {
    /// GcLoad with this many rows (its own default when `None`).
    GcLoad {
        /// Rows of its synthetic CSV text.
        rows: Option<usize>,
    },
    /// DataFrameLoad on a file of each size, made once in `data_dir`.
    DataFrame {
        /// The sizes, in order.
        sizes: Vec<DataSize>,
        /// Where the data files are kept.
        data_dir: PathBuf,
    },
}

/// What `lupa gc-bench` found: its report, and every run as a table (for
/// `--csv`).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The report ([`report::gcload`] or [`report::dataframe`]).
    pub report: Document,
    /// One row per run ([`report::runs_csv`]).
    pub runs: Table,
}

/// Bench `what` under `o` (see [`bench()`]); progress lines of a DataFrame
/// size's runs start with its label (`5MB: `).
pub fn run(
    what: &Workloads,
    class_path: &[PathBuf],
    o: &BenchOptions,
    progress: &mut dyn FnMut(String),
) -> Result<Outcome, LabError> {
    let setup = report::Setup {
        runs: o.runs,
        warmup: o.warmup,
        jobs: match &o.runner {
            Runner::InProcess => None,
            Runner::Processes { jobs, .. } => Some(*jobs),
        },
        memory: o.runner.memory(),
        // Workers are `lupa run`, which has the JIT.
        jit: o.jit.is_some() || matches!(o.runner, Runner::Processes { .. }),
        baseline: o
            .configs
            .first()
            .map(|c| c.name.clone())
            .unwrap_or_default(),
    };
    match what {
        Workloads::GcLoad { rows } => {
            let b = bench(&gcload(*rows, class_path, o.jit), o, progress)?;
            Ok(Outcome {
                report: report::gcload(&b, &setup),
                runs: report::runs_csv([(None, &b)]),
            })
        }
        Workloads::DataFrame { sizes, data_dir } => {
            let mut results: Vec<(DataSize, PathBuf, Bench)> = Vec::new();
            for size in sizes {
                let (path, _) = ensure_data(data_dir, size, class_path, o.jit, progress)?;
                let w = dataframe(&path, class_path, o.jit);
                let b = bench(&w, o, &mut |line| {
                    progress(format!("{}: {line}", size.label))
                })?;
                results.push((size.clone(), path, b));
            }
            Ok(Outcome {
                report: report::dataframe(&results, data_dir, &setup),
                runs: report::runs_csv(
                    results
                        .iter()
                        .map(|(size, _, b)| (Some(size.label.as_str()), b)),
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        let s = |x: &str| DataSize::parse(x).map(|d| (d.label, d.arg));
        assert_eq!(s("small"), Some(("small".into(), "1000".into())));
        assert_eq!(s("5mb"), Some(("5MB".into(), "5MB".into())));
        assert_eq!(s("300"), Some(("300".into(), "300".into())));
        assert_eq!(s("1GB"), Some(("1GB".into(), "1GB".into())));
        for bad in ["", "0", "5XB", "1.5MB", "-3", "MB", "100GB"] {
            assert_eq!(s(bad), None, "{bad}");
        }
        let d = data_file(Path::new("/d"), &DataSize::parse("5MB").expect("size"));
        assert_eq!(d, PathBuf::from("/d/dataframe-5MB.csv"));
        assert_eq!(sums_file(&d), PathBuf::from("/d/dataframe-5MB.csv.sums"));
        let l = parse_sizes("small, 5mb,300,5MB").expect("sizes");
        let labels: Vec<&str> = l.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(labels, ["small", "5MB", "300"]);
        assert!(parse_sizes("5XB").is_err());
        assert!(parse_sizes(",").is_err());
        assert_eq!(parse_sizes(DEFAULT_SIZES).expect("sizes").len(), 3);
    }

    #[test]
    fn gcload_benches_in_process() {
        let w = gcload(Some(200), &[], None);
        let mut small = GcConfig::defaults().named("small");
        small.set(lupa_heap::GcParam::EdenSize, (1 << 20) as f64);
        let o = BenchOptions {
            configs: vec![GcConfig::defaults(), small],
            runs: 2,
            warmup: 1,
            runner: Runner::InProcess,
            jit: None,
        };
        let mut lines = Vec::new();
        let b = bench(&w, &o, &mut |l| lines.push(l)).expect("GcLoad verifies");
        assert_eq!(b.samples.len(), 2);
        assert!(b.samples.iter().all(|s| s.len() == 2));
        assert!(b.summary.starts_with("GcLoad: 200 rows"), "{}", b.summary);
        assert!(!b.checksum.is_empty());
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert!(lines[0].starts_with("warm-up 1/1 default: "));
        assert!(lines[2].starts_with("2/4 small run 1: "), "{lines:?}");
        assert_eq!(b.times(1).len(), 2);
    }
}
