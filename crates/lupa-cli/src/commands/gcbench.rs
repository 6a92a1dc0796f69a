//! `lupa gc-bench`: the effect of the GC parameters on an allocation-heavy
//! workload, in the shape of the Illimani paper's tables 1 and 3-5 (Jordan
//! Montaño et al., "Improving Performance Through Object Lifetime Profiling:
//! the DataFrame Case", IWST 2023). The experiment is
//! `lupa_lab::gcbench` (workloads, interleaved runs in fresh VMs, the
//! tables); this file parses the options, writes `--csv`, prints the report
//! and chooses the exit code.

use clap::{Args, ValueEnum};
use lupa_heap::GcParam;
use lupa_lab::gc_config::{GcConfig, parse_configs};
use lupa_lab::gcbench::{self, BenchOptions, DataSize, Workloads};
use lupa_lab::{LabError, Runner};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::vm_args::{class_path, report};

/// Configurations run when `--configs` is not given: the default parameters and
/// three of the paper's larger configurations.
const DEFAULT_CONFIGS: &str = "default,c1,c2,c5";

/// The parameter of `--tenuring-threshold` (its values, range and parsing are the table's).
const TENURING: GcParam = GcParam::TenuringThreshold;

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
    /// Run each worker in a memory cgroup of SIZE, paged out to swap beyond it (the paper's
    /// machine, short of memory for its largest file): implies --jobs 1 unless --jobs is given.
    /// Needs Linux, a memory cgroup this process may create cgroups in (root) and swap.
    #[arg(long, value_name = "SIZE", value_parser = lupa_lab::pressure::parse_limit)]
    pub memory_limit: Option<u64>,
    /// GC configurations, comma-separated: `default` (Pharo's defaults), `c1`..`c5` (the
    /// Illimani paper's table 2), `all` (those six), or EDEN/HEADROOM/SHRINK/RATIO such as
    /// `32MB/64MB/128MB/100%` (ratio as a fraction or a percentage).
    #[arg(long, value_name = "LIST", default_value = DEFAULT_CONFIGS, value_parser = parse_config_list)]
    pub configs: ConfigList,
    /// Tenuring threshold for every configuration (scavenges survived before tenuring, 1..=15).
    #[arg(long, value_name = TENURING.unit().value_name(), value_parser = |s: &str| TENURING.parse(s))]
    pub tenuring_threshold: Option<f64>,
    /// Class path searched before the bundled library (directories separated by ':'), e.g. to
    /// run a modified copy of GcLoad.
    #[arg(long = "cp", alias = "classpath", value_name = "DIR:DIR")]
    pub class_path: Option<String>,
    /// Also write one CSV line per run to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Divide the sizes of every configuration (eden, growth headroom, shrink threshold; not the
    /// GC ratio) by N, `default` included: with `--sizes 5MB,16MB,31MB` (the paper's files
    /// divided by 100), `--param-scale 100` keeps the paper's proportions of data to parameters.
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = parse_scale)]
    pub param_scale: f64,
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
    gcbench::parse_sizes(s).map(SizeList)
}

/// The parsed `--configs` list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConfigList(pub Vec<GcConfig>);

fn parse_config_list(s: &str) -> Result<ConfigList, String> {
    parse_configs(s).map(ConfigList)
}

fn parse_runs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=10_000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a number of runs from 1 to 10000")),
    }
}

pub(crate) fn parse_scale(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(n) if (1.0..=10_000.0).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a scale from 1 to 10000")),
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

fn runner(a: &GcBenchArgs) -> Result<Runner, LabError> {
    let jobs = match (a.jobs, a.memory_limit) {
        (None, None) => return Ok(Runner::InProcess),
        (Some(n), _) => usize::from(n),
        (None, Some(_)) => 1,
    };
    std::env::current_exe()
        .map(|exe| Runner::Processes {
            exe,
            jobs,
            memory: a.memory_limit,
        })
        .map_err(|e| LabError::Io(format!("cannot find the lupa binary to start workers: {e}")))
}

fn bench(a: &GcBenchArgs) -> Result<String, LabError> {
    if let Some(path) = &a.csv {
        crate::save::check_writable(path).map_err(LabError::Io)?;
    }
    // Before any run or data file: a machine that cannot limit memory says so at once.
    let limited = match a.memory_limit {
        Some(bytes) => Some((
            bytes,
            lupa_lab::pressure::probe(bytes).map_err(LabError::Unavailable)?,
        )),
        None => None,
    };
    let mut configs: Vec<GcConfig> = a
        .configs
        .0
        .iter()
        .map(|c| c.clone().scaled_down(a.param_scale))
        .collect();
    if let Some(t) = a.tenuring_threshold {
        for c in &mut configs {
            c.set(TENURING, t);
        }
    }
    let options = BenchOptions {
        configs,
        runs: a.runs,
        warmup: a.warmup,
        runner: runner(a)?,
        // Measured with the JIT, as `lupa run` runs the workloads.
        jit: Some(lupa_jit::FACTORY),
    };
    let what = match a.workload {
        WorkloadArg::Gcload => Workloads::GcLoad { rows: a.size },
        WorkloadArg::Dataframe => Workloads::DataFrame {
            sizes: match &a.sizes {
                Some(l) => l.0.clone(),
                None => parse_sizes(gcbench::DEFAULT_SIZES)
                    .map(|l| l.0)
                    .unwrap_or_default(),
            },
            data_dir: a.data_dir.clone(),
        },
    };
    let quiet = a.quiet;
    let mut progress = |line: String| {
        if !quiet {
            eprintln!("gc-bench: {line}");
        }
    };
    let outcome = gcbench::run(
        &what,
        &class_path(a.class_path.as_deref()),
        &options,
        &mut progress,
    )?;
    let mut out = String::new();
    if a.param_scale > 1.0 {
        out.push_str(&format!(
            "GC parameter sizes divided by {} (--param-scale): eden, growth headroom and shrink \
threshold of every configuration, the defaults included; GC ratios as given.\n\n",
            a.param_scale
        ));
    }
    if let Some((bytes, how)) = limited {
        out.push_str(&format!(
            "Memory limit {} per worker ({how}), swap beyond it: runs that outgrow it are paged.\n\n",
            lupa_heap::units::size_label(bytes as usize)
        ));
    }
    out.push_str(&outcome.report.to_text());
    if let Some(path) = &a.csv {
        crate::save::save(path, outcome.runs.csv().as_bytes()).map_err(LabError::Io)?;
        out.push_str(&format!(
            "\nraw measurements written to {}\n",
            path.display()
        ));
    }
    Ok(out)
}

/// Run `lupa gc-bench`.
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
        Err(LabError::Vm(e)) => {
            eprintln!("lupa gc-bench: the workload failed:");
            report(&e)
        }
        Err(LabError::Workload(m)) => {
            eprintln!("lupa gc-bench: {m}");
            ExitCode::from(1)
        }
        Err(LabError::Io(m)) => {
            eprintln!("lupa gc-bench: {m}");
            ExitCode::from(74)
        }
        Err(LabError::Unavailable(m)) => {
            eprintln!("lupa gc-bench: --memory-limit: {m}");
            ExitCode::from(69)
        }
    }
}
