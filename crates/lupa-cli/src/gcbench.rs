//! `lupa gc-bench`: the effect of the GC parameters on an allocation-heavy
//! workload, in the shape of the Illimani paper's tables 1 and 3-5 (Jordan
//! Montaño et al., "Improving Performance Through Object Lifetime Profiling:
//! the DataFrame Case", IWST 2023).
//!
//! The workload is the bundled `GcLoad` program (smalltalk/Benchmarks/GcLoad):
//! it writes a synthetic CSV text, loads it into a table of row objects and
//! queries it, and verifies its own result. Every run happens in-process in a
//! fresh VM whose heap has the configuration's parameters; the time of the run
//! (`run_main`, bootstrap excluded) and the heap's statistics over the run are
//! recorded. Runs are interleaved (run 1 of every configuration, then run 2...)
//! so that a drift of the machine does not favour one configuration.

use crate::units::{mean_sd, parse_ratio, parse_size, size_label};
use clap::Args;
use lupa_profilers::{Capture, measure};
use lupa_vm::{HeapConfig, HeapStats, VmError, VmOptions};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

const MB: usize = 1 << 20;

/// The workload class.
const WORKLOAD: &str = "GcLoad";

/// What the workload prints when its result is right.
const VERIFIED: &str = "GcLoad: result verified";

/// Prefix of the workload's checksum line.
const CHECKSUM: &str = "GcLoad: checksum ";

/// Configurations run when `--configs` is not given: the default parameters and
/// three of the paper's larger configurations.
const DEFAULT_CONFIGS: &str = "default,c1,c2,c5";

/// Options of `lupa gc-bench`.
#[derive(Args, Debug)]
pub(crate) struct GcBenchArgs {
    /// Number of runs per configuration (each in a fresh VM).
    #[arg(long, default_value_t = 3, value_parser = parse_runs)]
    pub runs: usize,
    /// Workload size: rows of the synthetic CSV file (default: GcLoad's own, 60000).
    #[arg(long, value_name = "ROWS", value_parser = parse_rows)]
    pub size: Option<usize>,
    /// GC configurations, comma-separated: `default` (Pharo's defaults), `c1`..`c5` (the
    /// Illimani paper's table 2), `all` (those six), or EDEN/HEADROOM/SHRINK/RATIO such as
    /// `32MB/64MB/128MB/100%` (ratio as a fraction or a percentage).
    #[arg(long, value_name = "LIST", default_value = DEFAULT_CONFIGS, value_parser = parse_configs)]
    pub configs: ConfigList,
    /// Tenuring threshold for every configuration (scavenges survived before tenuring, 1..=15).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=15))]
    pub tenuring_threshold: Option<u32>,
    /// Class path searched before the bundled library (directories separated by ':'), e.g. to
    /// run a modified copy of GcLoad.
    #[arg(long = "cp", alias = "classpath", value_name = "DIR:DIR")]
    pub class_path: Option<String>,
    /// Also write one CSV line per run to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Unmeasured warm-up runs (of the first configuration) before the measured ones.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_warmup)]
    pub warmup: usize,
    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// One set of GC parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GcConfig {
    /// Display name.
    pub name: String,
    /// Eden size (bytes).
    pub eden: usize,
    /// Growth headroom (bytes).
    pub headroom: usize,
    /// Shrink threshold (bytes).
    pub shrink: usize,
    /// Full-GC ratio (0.33 = 33%).
    pub ratio: f64,
}

impl GcConfig {
    fn new(name: &str, eden_mb: usize, headroom_mb: usize, shrink_mb: usize, ratio: f64) -> Self {
        GcConfig {
            name: name.to_string(),
            eden: eden_mb * MB,
            headroom: headroom_mb * MB,
            shrink: shrink_mb * MB,
            ratio,
        }
    }

    /// The heap configuration of a run.
    fn heap(&self, tenuring: Option<u32>) -> HeapConfig {
        let mut h = HeapConfig {
            initial_bytes: self.eden,
            growth_headroom: self.headroom,
            shrink_threshold: self.shrink,
            full_gc_ratio: self.ratio,
            ..HeapConfig::default()
        };
        if let Some(t) = tenuring {
            h.tenuring_threshold = t;
        }
        h
    }
}

/// The configurations of the paper's table 2 (Pharo's defaults first).
pub(crate) fn paper_configs() -> Vec<GcConfig> {
    let d = HeapConfig::default();
    vec![
        GcConfig {
            name: "default".into(),
            eden: d.initial_bytes,
            headroom: d.growth_headroom,
            shrink: d.shrink_threshold,
            ratio: d.full_gc_ratio,
        },
        GcConfig::new("c1", 64, 64, 128, 2.5),
        GcConfig::new("c2", 150, 128, 128, 2.5),
        GcConfig::new("c3", 300, 128, 128, 5.0),
        GcConfig::new("c4", 300, 256, 256, 10.0),
        GcConfig::new("c5", 300, 512, 512, 10.0),
    ]
}

/// The parsed `--configs` list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConfigList(pub Vec<GcConfig>);

fn parse_runs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=10_000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a number of runs from 1 to 10000")),
    }
}

fn parse_warmup(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n <= 100 => Ok(n),
        _ => Err(format!(
            "'{s}' is not a number of warm-up runs from 0 to 100"
        )),
    }
}

fn parse_rows(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        // GcLoad's integers are 62-bit SmallIntegers: stay far from overflow.
        Ok(n) if (1..=100_000_000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a number of rows from 1 to 100000000")),
    }
}

/// A size in a configuration: at most 1 GB (eden is at most a quarter of the 4 GB heap bound).
fn config_size(s: &str) -> Option<usize> {
    parse_size(s).ok().filter(|&b| b <= 1 << 30)
}

fn parse_custom(spec: &str) -> Option<GcConfig> {
    let parts: Vec<&str> = spec.split('/').collect();
    let [eden, headroom, shrink, ratio] = parts.as_slice() else {
        return None;
    };
    Some(GcConfig {
        name: spec.to_string(),
        eden: config_size(eden)?,
        headroom: config_size(headroom)?,
        shrink: config_size(shrink)?,
        ratio: parse_ratio(ratio).ok()?,
    })
}

fn parse_configs(s: &str) -> Result<ConfigList, String> {
    let known = paper_configs();
    let mut out: Vec<GcConfig> = Vec::new();
    for item in s.split(',').map(str::trim) {
        if item.is_empty() {
            continue;
        }
        let found: Vec<GcConfig> = if item.eq_ignore_ascii_case("all") {
            known.clone()
        } else if let Some(c) = known.iter().find(|c| c.name.eq_ignore_ascii_case(item)) {
            vec![c.clone()]
        } else if item.contains('/') {
            match parse_custom(item) {
                Some(c) => vec![c],
                None => {
                    return Err(format!(
                        "bad configuration '{item}': expected EDEN/HEADROOM/SHRINK/RATIO with \
sizes up to 1GB, e.g. 32MB/64MB/128MB/100%"
                    ));
                }
            }
        } else {
            return Err(format!(
                "unknown configuration '{item}' (use default, c1, c2, c3, c4, c5, all, or \
EDEN/HEADROOM/SHRINK/RATIO such as 32MB/64MB/128MB/100%)"
            ));
        };
        for c in found {
            if !out.iter().any(|o| o.name == c.name) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err("no configuration given".into());
    }
    Ok(ConfigList(out))
}

/// The measurements of one run.
#[derive(Debug, Clone)]
struct Sample {
    /// Wall time of the run, seconds.
    total: f64,
    /// GC time, seconds.
    gc: f64,
    scavenges: u64,
    scavenge_time: f64,
    full_gcs: u64,
    full_gc_time: f64,
    max_pause: f64,
    tenured_bytes: u64,
    allocated_bytes: u64,
    heap_bytes: u64,
    growths: u64,
    shrinks: u64,
    checksum: String,
    /// The workload's first line ("GcLoad: 60000 rows, ...").
    summary: String,
}

impl Sample {
    fn of(total: f64, before: &HeapStats, after: &HeapStats, checksum: String) -> Sample {
        let secs = |d: std::time::Duration| d.as_secs_f64();
        Sample {
            total,
            gc: secs(after.gc_time.saturating_sub(before.gc_time)),
            scavenges: after.scavenges - before.scavenges,
            scavenge_time: secs(after.scavenge_time.saturating_sub(before.scavenge_time)),
            full_gcs: after.full_gcs - before.full_gcs,
            full_gc_time: secs(after.full_gc_time.saturating_sub(before.full_gc_time)),
            max_pause: secs(after.max_pause),
            tenured_bytes: after.tenured_bytes - before.tenured_bytes,
            allocated_bytes: after.allocated_bytes - before.allocated_bytes,
            heap_bytes: after.heap_bytes,
            growths: after.growths - before.growths,
            shrinks: after.shrinks - before.shrinks,
            checksum,
            summary: String::new(),
        }
    }
}

/// Why the benchmark stopped.
enum Failure {
    /// The VM failed (already described).
    Vm(VmError),
    /// The workload ran but its result is wrong or missing.
    Workload(String),
    /// Anything else (I/O).
    Other(String),
}

impl From<VmError> for Failure {
    fn from(e: VmError) -> Self {
        Failure::Vm(e)
    }
}

/// Run the workload once under `config`.
fn run_once(config: &GcConfig, a: &GcBenchArgs, argv: &[String]) -> Result<Sample, Failure> {
    let options = VmOptions {
        heap: config.heap(a.tenuring_threshold),
        class_path: a
            .class_path
            .as_deref()
            .unwrap_or("")
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect(),
        ..VmOptions::default()
    };
    let m = measure(options, argv, Capture::Output)?;
    let total = m.elapsed.as_secs_f64();
    let (before, after) = (m.heap_before, m.heap_after);
    let out = m.output.unwrap_or_default();
    let code = m.exit_code;
    if code != 0 {
        return Err(Failure::Workload(format!(
            "{WORKLOAD} exited with status {code}; its output was:\n{out}"
        )));
    }
    if !out.lines().any(|l| l.trim() == VERIFIED) {
        return Err(Failure::Workload(format!(
            "{WORKLOAD} did not verify its result; its output was:\n{out}"
        )));
    }
    let Some(checksum) = out
        .lines()
        .find_map(|l| l.strip_prefix(CHECKSUM))
        .map(|c| c.trim().to_string())
    else {
        return Err(Failure::Workload(format!(
            "{WORKLOAD} printed no checksum; its output was:\n{out}"
        )));
    };
    let mut sample = Sample::of(total, &before, &after, checksum);
    sample.summary = out.lines().next().unwrap_or_default().trim().to_string();
    Ok(sample)
}

/// Mean and sample standard deviation (0 for a single value).
fn mb(bytes: f64) -> f64 {
    bytes / MB as f64
}

/// `33%`, `250%`.
fn ratio_label(r: f64) -> String {
    let p = r * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// `1.234 ± 0.012` (the mean alone for one run).
fn pm(xs: &[f64], decimals: usize) -> String {
    let (m, sd) = mean_sd(xs);
    if xs.len() < 2 {
        format!("{m:.decimals$}")
    } else {
        format!("{m:.decimals$} ± {sd:.decimals$}")
    }
}

/// A count: an integer when every run had the same, else mean ± sd.
fn count(xs: &[u64]) -> String {
    if xs.windows(2).all(|w| w[0] == w[1]) {
        xs.first().map(u64::to_string).unwrap_or_default()
    } else {
        let f: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
        pm(&f, 1)
    }
}

/// Render rows of cells: the first column left-aligned, the others right-aligned.
fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(c.chars().count());
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str("  ");
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    out.push_str(&line(rule.iter().map(String::as_str).collect()));
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

/// The results table (the paper's tables 1 and 3-5 in one).
fn table(configs: &[GcConfig], samples: &[Vec<Sample>]) -> String {
    let base_total = mean_sd(&samples[0].iter().map(|s| s.total).collect::<Vec<_>>()).0;
    let base_gc = mean_sd(&samples[0].iter().map(|s| s.gc).collect::<Vec<_>>()).0;
    let header = [
        "config",
        "eden",
        "headroom",
        "shrink",
        "ratio",
        "total s",
        "GC s",
        "GC %",
        "scavenges",
        "full GCs",
        "scavenge ms",
        "full GC ms",
        "tenured MB",
        "heap MB",
        "GC speed-up",
        "speed-up",
    ];
    let mut rows = Vec::new();
    for (c, ss) in configs.iter().zip(samples) {
        let col = |f: &dyn Fn(&Sample) -> f64| ss.iter().map(f).collect::<Vec<f64>>();
        let total = col(&|s| s.total);
        let gc = col(&|s| s.gc);
        let gc_pct = col(&|s| {
            if s.total > 0.0 {
                100.0 * s.gc / s.total
            } else {
                0.0
            }
        });
        let mean_scavenge = col(&|s| {
            if s.scavenges == 0 {
                0.0
            } else {
                1e3 * s.scavenge_time / s.scavenges as f64
            }
        });
        let mean_full = col(&|s| {
            if s.full_gcs == 0 {
                0.0
            } else {
                1e3 * s.full_gc_time / s.full_gcs as f64
            }
        });
        let ratio = |base: f64, x: f64| {
            if x > 0.0 {
                format!("{:.2}x", base / x)
            } else {
                "-".to_string()
            }
        };
        rows.push(vec![
            c.name.clone(),
            size_label(c.eden),
            size_label(c.headroom),
            size_label(c.shrink),
            ratio_label(c.ratio),
            pm(&total, 3),
            pm(&gc, 3),
            format!("{:.1}", mean_sd(&gc_pct).0),
            count(&ss.iter().map(|s| s.scavenges).collect::<Vec<_>>()),
            count(&ss.iter().map(|s| s.full_gcs).collect::<Vec<_>>()),
            format!("{:.2}", mean_sd(&mean_scavenge).0),
            format!("{:.2}", mean_sd(&mean_full).0),
            format!("{:.1}", mb(mean_sd(&col(&|s| s.tenured_bytes as f64)).0)),
            format!("{:.1}", mb(mean_sd(&col(&|s| s.heap_bytes as f64)).0)),
            ratio(base_gc, mean_sd(&gc).0),
            ratio(base_total, mean_sd(&total).0),
        ]);
    }
    render(&header, &rows)
}

fn csv_text(configs: &[GcConfig], samples: &[Vec<Sample>]) -> String {
    let mut out = String::from(
        "config,eden_bytes,growth_headroom_bytes,shrink_threshold_bytes,gc_ratio,run,total_s,gc_s,\
scavenges,scavenge_s,full_gcs,full_gc_s,max_pause_s,tenured_bytes,allocated_bytes,heap_bytes,\
growths,shrinks,checksum\n",
    );
    for (c, ss) in configs.iter().zip(samples) {
        for (i, s) in ss.iter().enumerate() {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.6},{:.6},{},{:.6},{},{:.6},{:.6},{},{},{},{},{},{}",
                c.name,
                c.eden,
                c.headroom,
                c.shrink,
                c.ratio,
                i + 1,
                s.total,
                s.gc,
                s.scavenges,
                s.scavenge_time,
                s.full_gcs,
                s.full_gc_time,
                s.max_pause,
                s.tenured_bytes,
                s.allocated_bytes,
                s.heap_bytes,
                s.growths,
                s.shrinks,
                s.checksum
            );
        }
    }
    out
}

fn bench(a: &GcBenchArgs) -> Result<String, Failure> {
    let configs = &a.configs.0;
    let mut argv = vec![WORKLOAD.to_string()];
    if let Some(n) = a.size {
        argv.push(n.to_string());
    }
    for w in 0..a.warmup {
        let s = run_once(&configs[0], a, &argv).map_err(|e| match e {
            Failure::Workload(m) => {
                Failure::Workload(format!("configuration {} (warm-up): {m}", configs[0].name))
            }
            other => other,
        })?;
        if !a.quiet {
            eprintln!(
                "gc-bench: warm-up {}/{} {}: {:.3} s (not measured)",
                w + 1,
                a.warmup,
                configs[0].name,
                s.total
            );
        }
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::with_capacity(a.runs); configs.len()];
    let total_runs = a.runs * configs.len();
    let mut done = 0;
    for run in 0..a.runs {
        for (i, c) in configs.iter().enumerate() {
            done += 1;
            let s = run_once(c, a, &argv).map_err(|e| match e {
                Failure::Workload(m) => {
                    Failure::Workload(format!("configuration {} (run {}): {m}", c.name, run + 1))
                }
                other => other,
            })?;
            if !a.quiet {
                eprintln!(
                    "gc-bench: {done}/{total_runs} {} run {}: {:.3} s, GC {:.3} s, {} scavenges, {} full GCs",
                    c.name,
                    run + 1,
                    s.total,
                    s.gc,
                    s.scavenges,
                    s.full_gcs
                );
            }
            samples[i].push(s);
        }
    }
    // A collector bug would show as a different result under other parameters.
    let first = &samples[0][0].checksum;
    for (c, ss) in configs.iter().zip(&samples) {
        for (r, s) in ss.iter().enumerate() {
            if s.checksum != *first {
                return Err(Failure::Workload(format!(
                    "configuration {} (run {}) computed checksum {} but {} (run 1) computed {first}",
                    c.name,
                    r + 1,
                    s.checksum,
                    configs[0].name
                )));
            }
        }
    }
    if let Some(path) = &a.csv {
        crate::save::save(path, csv_text(configs, &samples).as_bytes()).map_err(Failure::Other)?;
    }
    let allocated = samples
        .iter()
        .flatten()
        .map(|s| s.allocated_bytes as f64)
        .sum::<f64>()
        / total_runs as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}; {:.0} MB allocated per run; checksum {first}, verified in every run",
        samples[0][0].summary,
        mb(allocated)
    );
    let _ = writeln!(
        out,
        "{} run{} per configuration (interleaved, after {} warm-up run{}), each in a fresh VM; \
times are mean{} of the workload's wall time; speed-ups are relative to {}",
        a.runs,
        if a.runs == 1 { "" } else { "s" },
        a.warmup,
        if a.warmup == 1 { "" } else { "s" },
        if a.runs == 1 { "" } else { " ± sd" },
        configs[0].name
    );
    out.push('\n');
    out.push_str(&table(configs, &samples));
    if let Some(path) = &a.csv {
        let _ = writeln!(out, "\nraw measurements written to {}", path.display());
    }
    Ok(out)
}

/// Run the command.
pub(crate) fn main(a: &GcBenchArgs) -> ExitCode {
    match bench(a) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(Failure::Vm(e)) => {
            eprintln!("lupa gc-bench: the workload failed:");
            crate::report(&e)
        }
        Err(Failure::Workload(m)) => {
            eprintln!("lupa gc-bench: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Other(m)) => {
            eprintln!("lupa gc-bench: {m}");
            ExitCode::from(74)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_parse() {
        let l = parse_configs("default, C1,32MB/64MB/128MB/100%,all")
            .expect("a valid list")
            .0;
        let names: Vec<&str> = l.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "default",
                "c1",
                "32MB/64MB/128MB/100%",
                "c2",
                "c3",
                "c4",
                "c5"
            ]
        );
        assert_eq!(l[2].eden, 32 * MB);
        assert_eq!(l[2].headroom, 64 * MB);
        assert_eq!(l[2].shrink, 128 * MB);
        assert_eq!(l[2].ratio, 1.0);
        assert_eq!(l[0].eden, 15 * MB);
        assert_eq!(l[0].ratio, 0.33);
        assert!(parse_configs("c9").is_err());
        assert!(parse_configs("1MB/2MB/3MB").is_err());
        assert!(parse_configs("1MB/2MB/3MB/x").is_err());
        assert!(parse_configs("0MB/2MB/3MB/1").is_err());
        assert!(parse_configs("8GB/2MB/3MB/1").is_err());
        assert!(parse_configs(",").is_err());
    }

    #[test]
    fn labels() {
        assert_eq!(ratio_label(0.33), "33%");
        assert_eq!(ratio_label(2.5), "250%");
        assert_eq!(pm(&[1.0], 3), "1.000");
        assert_eq!(pm(&[1.0, 3.0], 1), "2.0 ± 1.4");
        assert_eq!(count(&[3, 3]), "3");
        assert_eq!(count(&[2, 4]), "3.0 ± 1.4");
    }
}
