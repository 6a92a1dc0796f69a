//! `lupa gc-bench`: the effect of the GC parameters on an allocation-heavy
//! workload, in the shape of the Illimani paper's tables 1 and 3-5 (Jordan
//! Montaño et al., "Improving Performance Through Object Lifetime Profiling:
//! the DataFrame Case", IWST 2023).
//!
//! Two workloads (the runs are `lupa_profilers::gcbench`): the bundled
//! `GcLoad` program (smalltalk/Benchmarks/GcLoad), which writes a synthetic CSV
//! text, loads it into a table of row objects, queries it and verifies its own
//! result; and `DataFrameLoad` (smalltalk/Libraries/DataFrame), which loads a
//! CSV file made once per size by `DataFrameData` into a DataFrame and
//! verifies it. Every run happens in a fresh VM (in this process, or in
//! `--jobs N` worker processes); the time of the run (`run_main`, bootstrap
//! excluded) and the heap's statistics over the run are recorded. Runs are
//! interleaved (run 1 of every configuration, then run 2...) so that a drift
//! of the machine does not favour one configuration. This file parses the
//! options and prints the tables.

use crate::units::{mean_sd, parse_ratio, parse_size, size_label};
use clap::{Args, ValueEnum};
use lupa_profilers::gcbench::{self, Bench, BenchError, BenchOptions, DataSize};
use lupa_profilers::gctune::{GcConfig, RunSample, Runner, paper_configs, speed_up};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const MB: usize = 1 << 20;

/// Configurations run when `--configs` is not given: the default parameters and
/// three of the paper's larger configurations.
const DEFAULT_CONFIGS: &str = "default,c1,c2,c5";

/// DataFrame sizes run when `--sizes` is not given: the paper's 500 MB, 1.6 GB
/// and 3.1 GB files, scaled down a hundred times.
const DEFAULT_SIZES: &str = "5MB,16MB,31MB";

/// The workload of `lupa gc-bench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum WorkloadArg {
    /// The bundled GcLoad program (--size ROWS).
    Gcload,
    /// Loading a CSV file into a DataFrame (--sizes LIST, --data-dir DIR).
    Dataframe,
}

/// Options of `lupa gc-bench`.
#[derive(Args, Debug)]
pub(crate) struct GcBenchArgs {
    /// The workload: gcload (the bundled GcLoad program) or dataframe (DataFrameLoad on CSV
    /// files of the sizes in --sizes).
    #[arg(long, value_enum, default_value = "gcload")]
    pub workload: WorkloadArg,
    /// Number of runs per configuration (each in a fresh VM).
    #[arg(long, default_value_t = 3, value_parser = parse_runs)]
    pub runs: usize,
    /// GcLoad's size: rows of the synthetic CSV text (default: GcLoad's own, 60000).
    #[arg(long, value_name = "ROWS", value_parser = parse_rows)]
    pub size: Option<usize>,
    /// DataFrame sizes, comma-separated: `small` (1000 rows), rows (`300`) or file sizes (`5MB`,
    /// `500KB`, `1GB`) [default: 5MB,16MB,31MB, the paper's files scaled down 100 times].
    #[arg(long, value_name = "LIST", value_parser = parse_sizes)]
    pub sizes: Option<SizeList>,
    /// Where the DataFrame files are made once and kept (DIR/dataframe-SIZE.csv and its .sums).
    #[arg(long, value_name = "DIR", default_value = ".lupa/data")]
    pub data_dir: PathBuf,
    /// Run in N worker processes at a time (the lupa binary itself) instead of one after the
    /// other in this process.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: Option<u16>,
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

/// The parsed `--sizes` list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SizeList(pub Vec<DataSize>);

fn parse_sizes(s: &str) -> Result<SizeList, String> {
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
    Ok(SizeList(out))
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
        tenuring: None,
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

/// Bytes in MB.
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
pub(crate) fn pm(xs: &[f64], decimals: usize) -> String {
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
pub(crate) fn render(header: &[&str], rows: &[Vec<String>]) -> String {
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

/// A column of the runs of one configuration.
fn col(ss: &[RunSample], f: &dyn Fn(&RunSample) -> f64) -> Vec<f64> {
    ss.iter().map(f).collect()
}

fn total_s(s: &RunSample) -> f64 {
    s.stats.total_s()
}

fn gc_s(s: &RunSample) -> f64 {
    s.stats.gc_s()
}

fn gc_pct(s: &RunSample) -> f64 {
    if s.stats.total_s() > 0.0 {
        100.0 * s.stats.gc_s() / s.stats.total_s()
    } else {
        0.0
    }
}

fn counts(ss: &[RunSample], f: &dyn Fn(&RunSample) -> u64) -> String {
    count(&ss.iter().map(f).collect::<Vec<u64>>())
}

/// The columns that name a configuration, first in every table ([`config_cells`]).
const CONFIG_COLUMNS: [&str; 5] = ["config", "eden", "headroom", "shrink", "ratio"];

/// A configuration's cells under [`CONFIG_COLUMNS`].
fn config_cells(c: &GcConfig) -> Vec<String> {
    vec![
        c.name.clone(),
        size_label(c.eden),
        size_label(c.headroom),
        size_label(c.shrink),
        ratio_label(c.ratio),
    ]
}

/// The GcLoad table (the paper's tables 1 and 3-5 in one).
fn table(b: &Bench) -> String {
    let base_total = mean_sd(&col(&b.samples[0], &total_s)).0;
    let base_gc = mean_sd(&col(&b.samples[0], &gc_s)).0;
    let header: Vec<&str> = CONFIG_COLUMNS
        .into_iter()
        .chain([
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
        ])
        .collect();
    let mut rows = Vec::new();
    for (c, ss) in b.configs.iter().zip(&b.samples) {
        let total = col(ss, &total_s);
        let gc = col(ss, &gc_s);
        let mean_scavenge = col(ss, &|s| {
            if s.stats.scavenges == 0 {
                0.0
            } else {
                s.stats.scavenge_us as f64 / 1e3 / s.stats.scavenges as f64
            }
        });
        let mean_full = col(ss, &|s| {
            if s.stats.full_gcs == 0 {
                0.0
            } else {
                s.stats.full_gc_us as f64 / 1e3 / s.stats.full_gcs as f64
            }
        });
        let ratio = |base: f64, x: f64| {
            if x > 0.0 {
                format!("{:.2}x", base / x)
            } else {
                "-".to_string()
            }
        };
        let mut row = config_cells(c);
        row.extend([
            pm(&total, 3),
            pm(&gc, 3),
            format!("{:.1}", mean_sd(&col(ss, &gc_pct)).0),
            counts(ss, &|s| s.stats.scavenges),
            counts(ss, &|s| s.stats.full_gcs),
            format!("{:.2}", mean_sd(&mean_scavenge).0),
            format!("{:.2}", mean_sd(&mean_full).0),
            format!(
                "{:.1}",
                mb(mean_sd(&col(ss, &|s| s.stats.tenured_bytes as f64)).0)
            ),
            format!(
                "{:.1}",
                mb(mean_sd(&col(ss, &|s| s.stats.heap_bytes as f64)).0)
            ),
            ratio(base_gc, mean_sd(&gc).0),
            ratio(base_total, mean_sd(&total).0),
        ]);
        rows.push(row);
    }
    render(&header, &rows)
}

/// The paper's table 1: every size under the first configuration.
fn table_1(sizes: &[(DataSize, PathBuf, Bench)]) -> String {
    let header = [
        "size",
        "rows",
        "file MB",
        "allocated MB",
        "scavenges",
        "full GCs",
        "GC time s",
        "total time s",
        "GC %",
    ];
    let rows: Vec<Vec<String>> = sizes
        .iter()
        .map(|(size, path, b)| {
            let ss = &b.samples[0];
            let file = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            vec![
                size.label.clone(),
                rows_of(&b.summary),
                format!("{:.1}", mb(file as f64)),
                format!(
                    "{:.1}",
                    mb(mean_sd(&col(ss, &|s| s.stats.allocated_bytes as f64)).0)
                ),
                counts(ss, &|s| s.stats.scavenges),
                counts(ss, &|s| s.stats.full_gcs),
                pm(&col(ss, &gc_s), 3),
                pm(&col(ss, &total_s), 3),
                format!("{:.1}", mean_sd(&col(ss, &gc_pct)).0),
            ]
        })
        .collect();
    render(&header, &rows)
}

/// `52169` from `DataFrameLoad: 52169 rows, 10 columns`.
fn rows_of(summary: &str) -> String {
    summary
        .split_once(": ")
        .map(|(_, r)| r)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("?")
        .to_string()
}

/// The paper's tables 3-5: one size under every configuration.
fn size_table(b: &Bench) -> String {
    let header: Vec<&str> = CONFIG_COLUMNS
        .into_iter()
        .chain([
            "scavenges",
            "full GCs",
            "GC time s",
            "total time s",
            "GC %",
            "speed-up (95% CI)",
        ])
        .collect();
    let base = b.times(0);
    let rows: Vec<Vec<String>> = b
        .configs
        .iter()
        .zip(&b.samples)
        .enumerate()
        .map(|(i, (c, ss))| {
            let up = if i == 0 {
                "1.00x".to_string()
            } else {
                speed_up(&base, &b.times(i)).map_or_else(|| "-".to_string(), |s| s.label())
            };
            let mut row = config_cells(c);
            row.extend([
                counts(ss, &|s| s.stats.scavenges),
                counts(ss, &|s| s.stats.full_gcs),
                pm(&col(ss, &gc_s), 3),
                pm(&col(ss, &total_s), 3),
                format!("{:.1}", mean_sd(&col(ss, &gc_pct)).0),
                up,
            ]);
            row
        })
        .collect();
    render(&header, &rows)
}

const CSV_HEADER: &str = "config,eden_bytes,growth_headroom_bytes,shrink_threshold_bytes,gc_ratio,\
run,total_s,gc_s,scavenges,scavenge_s,full_gcs,full_gc_s,max_pause_s,tenured_bytes,\
allocated_bytes,heap_bytes,growths,shrinks,checksum";

/// One line per run; `size` first when there is one (the DataFrame workload).
fn csv_rows(out: &mut String, size: Option<&str>, b: &Bench) {
    for (c, ss) in b.configs.iter().zip(&b.samples) {
        for (i, s) in ss.iter().enumerate() {
            let st = &s.stats;
            if let Some(size) = size {
                let _ = write!(out, "{size},");
            }
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.6},{:.6},{},{:.6},{},{:.6},{:.6},{},{},{},{},{},{}",
                c.name,
                c.eden,
                c.headroom,
                c.shrink,
                c.ratio,
                i + 1,
                st.total_s(),
                st.gc_s(),
                st.scavenges,
                st.scavenge_us as f64 / 1e6,
                st.full_gcs,
                st.full_gc_us as f64 / 1e6,
                st.max_pause_us as f64 / 1e6,
                st.tenured_bytes,
                st.allocated_bytes,
                st.heap_bytes,
                st.growths,
                st.shrinks,
                s.checksum.as_deref().unwrap_or_default()
            );
        }
    }
}

/// How runs were made, for the report's second line.
fn method_line(a: &GcBenchArgs, what: &str) -> String {
    format!(
        "{} run{} per {what} (interleaved, after {} warm-up run{}), each in a fresh VM{}; \
times are mean{} of the workload's wall time; speed-ups are relative to {}",
        a.runs,
        if a.runs == 1 { "" } else { "s" },
        a.warmup,
        if a.warmup == 1 { "" } else { "s" },
        match a.jobs {
            Some(n) => format!(" in worker processes, {n} at a time"),
            None => String::new(),
        },
        if a.runs == 1 { "" } else { " ± sd" },
        a.configs.0[0].name
    )
}

fn class_path(a: &GcBenchArgs) -> Vec<PathBuf> {
    a.class_path
        .as_deref()
        .unwrap_or("")
        .split(':')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

fn runner(a: &GcBenchArgs) -> Result<Runner, BenchError> {
    match a.jobs {
        None => Ok(Runner::InProcess),
        Some(n) => std::env::current_exe()
            .map(|exe| Runner::Processes {
                exe,
                jobs: usize::from(n),
            })
            .map_err(|e| {
                BenchError::Io(format!("cannot find the lupa binary to start workers: {e}"))
            }),
    }
}

fn options(a: &GcBenchArgs) -> Result<BenchOptions, BenchError> {
    let mut configs = a.configs.0.clone();
    if let Some(t) = a.tenuring_threshold {
        for c in &mut configs {
            c.tenuring = Some(t);
        }
    }
    Ok(BenchOptions {
        configs,
        runs: a.runs,
        warmup: a.warmup,
        runner: runner(a)?,
    })
}

fn progress_to_stderr(quiet: bool, tag: String) -> impl FnMut(String) {
    move |line: String| {
        if !quiet {
            eprintln!("gc-bench: {tag}{line}");
        }
    }
}

fn bench_gcload(a: &GcBenchArgs) -> Result<String, BenchError> {
    let w = gcbench::gcload(a.size, &class_path(a));
    let o = options(a)?;
    let mut progress = progress_to_stderr(a.quiet, String::new());
    let b = gcbench::bench(&w, &o, &mut progress)?;
    if let Some(path) = &a.csv {
        let mut text = String::from(CSV_HEADER);
        text.push('\n');
        csv_rows(&mut text, None, &b);
        crate::save::save(path, text.as_bytes()).map_err(BenchError::Io)?;
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}; {:.0} MB allocated per run; checksum {}, verified in every run",
        b.summary,
        mb(b.allocated_per_run()),
        b.checksum
    );
    let _ = writeln!(out, "{}", method_line(a, "configuration"));
    out.push('\n');
    out.push_str(&table(&b));
    if let Some(path) = &a.csv {
        let _ = writeln!(out, "\nraw measurements written to {}", path.display());
    }
    Ok(out)
}

fn bench_dataframe(a: &GcBenchArgs, sizes: &[DataSize]) -> Result<String, BenchError> {
    let cp = class_path(a);
    let o = options(a)?;
    let mut results: Vec<(DataSize, PathBuf, Bench)> = Vec::new();
    for size in sizes {
        let mut progress = progress_to_stderr(a.quiet, String::new());
        let (path, _) = gcbench::ensure_data(&a.data_dir, size, &cp, &mut progress)?;
        let w = gcbench::dataframe(&path, &cp);
        let mut progress = progress_to_stderr(a.quiet, format!("{}: ", size.label));
        let b = gcbench::bench(&w, &o, &mut progress)?;
        results.push((size.clone(), path, b));
    }
    if let Some(path) = &a.csv {
        let mut text = format!("size,{CSV_HEADER}\n");
        for (size, _, b) in &results {
            csv_rows(&mut text, Some(&size.label), b);
        }
        crate::save::save(path, text.as_bytes()).map_err(BenchError::Io)?;
    }
    let mut out = String::new();
    let labels: Vec<&str> = results.iter().map(|(s, _, _)| s.label.as_str()).collect();
    let _ = writeln!(
        out,
        "DataFrameLoad: sizes {}, data files in {}; every run verified its result",
        labels.join(", "),
        a.data_dir.display()
    );
    let _ = writeln!(out, "{}", method_line(a, "configuration and size"));
    out.push('\n');
    let _ = writeln!(
        out,
        "Table 1: loading a DataFrame with the {} GC parameters",
        a.configs.0[0].name
    );
    out.push_str(&table_1(&results));
    for (k, (size, path, b)) in results.iter().enumerate() {
        out.push('\n');
        let _ = writeln!(
            out,
            "Table {}: the {} DataFrame ({}: {}; checksum {})",
            k + 3,
            if size.label.bytes().all(|b| b.is_ascii_digit()) {
                format!("{}-row", size.label)
            } else {
                size.label.clone()
            },
            Path::new(path).display(),
            b.summary
                .strip_prefix("DataFrameLoad: ")
                .unwrap_or(&b.summary),
            b.checksum
        );
        out.push_str(&size_table(b));
    }
    if let Some(path) = &a.csv {
        let _ = writeln!(out, "\nraw measurements written to {}", path.display());
    }
    Ok(out)
}

fn bench(a: &GcBenchArgs) -> Result<String, BenchError> {
    if let Some(path) = &a.csv {
        crate::save::check_writable(path).map_err(BenchError::Io)?;
    }
    match a.workload {
        WorkloadArg::Gcload => bench_gcload(a),
        WorkloadArg::Dataframe => {
            let sizes = match &a.sizes {
                Some(l) => l.0.clone(),
                None => parse_sizes(DEFAULT_SIZES).map(|l| l.0).unwrap_or_default(),
            };
            bench_dataframe(a, &sizes)
        }
    }
}

/// Run the command.
pub(crate) fn main(a: &GcBenchArgs) -> ExitCode {
    let misuse = match a.workload {
        WorkloadArg::Gcload if a.sizes.is_some() => {
            Some("--sizes is for --workload dataframe (GcLoad takes --size ROWS)")
        }
        WorkloadArg::Dataframe if a.size.is_some() => {
            Some("--size is for --workload gcload (the DataFrame workload takes --sizes LIST)")
        }
        _ => None,
    };
    if let Some(m) = misuse {
        eprintln!("lupa gc-bench: {m}");
        return ExitCode::from(2);
    }
    match bench(a) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(BenchError::Vm(e)) => {
            eprintln!("lupa gc-bench: the workload failed:");
            crate::report(&e)
        }
        Err(BenchError::Workload(m)) => {
            eprintln!("lupa gc-bench: {m}");
            ExitCode::from(1)
        }
        Err(BenchError::Io(m)) => {
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
    fn sizes_parse() {
        let l = parse_sizes("small, 5mb,300,5MB").expect("sizes").0;
        let labels: Vec<&str> = l.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(labels, ["small", "5MB", "300"]);
        assert!(parse_sizes("5XB").is_err());
        assert!(parse_sizes(",").is_err());
        assert_eq!(rows_of("DataFrameLoad: 300 rows, 10 columns"), "300");
        assert_eq!(rows_of("nothing"), "?");
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
