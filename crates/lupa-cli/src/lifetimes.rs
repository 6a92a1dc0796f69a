//! `lupa lifetimes`: run a program under Illimani's object-lifetime
//! profiler (VM mode by default, or the paper's faithful mode) and report
//! the lifetimes of the sampled allocations.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use lupa_prof::lifetimes::{self, Lifetimes};
use lupa_profilers::lifetimes::{LifetimeConfig, LifetimeMode};
use lupa_vm::{Vm, VmError};

use crate::VmArgs;

/// How the lifetimes are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModeArg {
    /// The VM samples allocations and the collector reports deaths (no proxies, no ephemerons).
    Vm,
    /// The paper's technique: MethodProxies on the allocating methods, an ephemeron per object.
    Faithful,
}

/// The report formats of `lupa lifetimes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LifetimesFormat {
    /// Summary, lifetime densities on each clock, allocation sites and classes.
    Text,
    /// Metadata (program, mode, sampling, totals, units) and the analysis.
    Json,
    /// One row per sampled allocation, with a header stating units.
    Csv,
    /// The lifetime density charts (by objects and by memory) on the three clocks.
    Svg,
    /// One HTML page: the charts, the summary and the site table.
    Html,
    /// Chrome trace events: collections and allocation rate over time (Perfetto).
    Trace,
    /// Pretenuring advice: the long-lived and immortal sites, as JSON for `--pretenure FILE`.
    Advice,
}

impl LifetimesFormat {
    fn default_file(self) -> Option<&'static str> {
        match self {
            LifetimesFormat::Text => None,
            LifetimesFormat::Json => Some("lifetimes.json"),
            LifetimesFormat::Csv => Some("lifetimes.csv"),
            LifetimesFormat::Svg => Some("lifetimes.svg"),
            LifetimesFormat::Html => Some("lifetimes.html"),
            LifetimesFormat::Trace => Some("lifetimes.trace.json"),
            LifetimesFormat::Advice => Some("pretenure.json"),
        }
    }
}

/// `lupa lifetimes` arguments.
#[derive(Args, Debug)]
pub(crate) struct LifetimesArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// How lifetimes are recorded.
    #[arg(long, value_enum, default_value = "vm")]
    mode: ModeArg,
    /// Sampling rate in (0, 1]: about this share of the objects is sampled, by bytes with
    /// random intervals (1: every allocation).
    #[arg(long, default_value_t = 0.01, value_name = "R")]
    rate: f64,
    /// Sample every N-th allocation instead (deterministic).
    #[arg(long, value_name = "N")]
    every: Option<u64>,
    /// Seed of the sampling intervals.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Frames kept per allocation.
    #[arg(long, default_value_t = 8, value_name = "N")]
    stack_depth: usize,
    /// Only objects of this class (repeatable).
    #[arg(long = "only", value_name = "CLASS")]
    only: Vec<String>,
    /// Never objects of this class (repeatable).
    #[arg(long = "ignore", value_name = "CLASS")]
    ignore: Vec<String>,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    format: LifetimesFormat,
    /// Sites and classes listed in the text report.
    #[arg(long, default_value_t = 20, value_name = "N")]
    top: usize,
    /// Write the report to FILE (`-` for standard output; default: standard output for text,
    /// otherwise lifetimes.json, .csv, .svg, .html or lifetimes.trace.json).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// The class to run.
    class: String,
    /// Its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Run `lupa lifetimes`.
pub(crate) fn run(vm: &mut Vm, a: &LifetimesArgs) -> Result<i32, VmError> {
    if !(a.rate > 0.0 && a.rate <= 1.0) {
        eprintln!("lupa: --rate takes a number in (0, 1], not {}", a.rate);
        return Ok(2);
    }
    if a.every == Some(0) {
        eprintln!("lupa: --every takes a positive number");
        return Ok(2);
    }
    let dest = crate::save::destination(a.output.as_deref(), a.format.default_file())?;
    if dest.is_none() && a.format != LifetimesFormat::Text {
        // Standard output holds the report alone; the program's output goes to stderr.
        vm.io.send_output_to_stderr()?;
    }
    vm.load_class_by_name(&a.class)?;
    let args = crate::program_args(&a.class, &a.args);
    let config = LifetimeConfig {
        mode: match a.mode {
            ModeArg::Vm => LifetimeMode::Vm,
            ModeArg::Faithful => LifetimeMode::Faithful,
        },
        rate: a.rate,
        every_nth: a.every.unwrap_or(0),
        seed: a.seed,
        stack_depth: a.stack_depth,
        only: a.only.clone(),
        ignore: a.ignore.clone(),
    };
    let command = format!("lupa lifetimes {}", args.join(" "));
    let progress = crate::progress::Ticker::start("lupa lifetimes", &a.class);
    let run = lupa_profilers::lifetimes::run_main(vm, &config, &args, &command);
    progress.finish();
    let run = run?;
    vm.io.flush()?;
    let code = run.result?;
    let bytes = render(&run.lifetimes, a)?;
    crate::save::deliver(dest.as_deref(), &bytes, "lifetime", a.output.is_none())
        .map_err(VmError::Io)?;
    Ok(code)
}

fn render(l: &Lifetimes, a: &LifetimesArgs) -> Result<Vec<u8>, VmError> {
    let mut out = Vec::new();
    let io = |e: std::io::Error| VmError::Io(format!("cannot render the report: {e}"));
    match a.format {
        LifetimesFormat::Text => {
            let options = lifetimes::text::TextOptions { top: a.top };
            lifetimes::text::write(l, &options, &mut out).map_err(io)?;
        }
        LifetimesFormat::Json => l.write_json(&mut out).map_err(io)?,
        LifetimesFormat::Csv => lifetimes::csv::write(l, &mut out).map_err(io)?,
        LifetimesFormat::Svg => lifetimes::svg::write_all(l, &mut out).map_err(io)?,
        LifetimesFormat::Html => lifetimes::html::write(l, &mut out).map_err(io)?,
        LifetimesFormat::Trace => lifetimes::trace::write(l, &mut out).map_err(io)?,
        LifetimesFormat::Advice => lifetimes::advice::write(l, &mut out).map_err(io)?,
    }
    Ok(out)
}

/// The sites of a pretenuring advice file (`--pretenure FILE`), one per class
/// of each site, for the VM.
#[derive(Debug, Clone, Default)]
pub(crate) struct PretenureArg(pub Vec<lupa_vm::PretenureSite>);

/// Read and check an advice file written by `lupa lifetimes --format advice`.
pub(crate) fn parse_pretenure(path: &str) -> Result<PretenureArg, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let advice = lifetimes::advice::Advice::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    let mut sites = Vec::new();
    for s in advice.sites {
        for c in s.classes {
            sites.push(lupa_vm::PretenureSite {
                class: c,
                method: s.method.clone(),
                pc: s.pc,
            });
        }
    }
    Ok(PretenureArg(sites))
}
