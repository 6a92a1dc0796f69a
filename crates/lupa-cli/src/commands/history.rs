//! `lupa history`: Hip, the profile history of a program across versions
//! (record, log, diff, show, check). The recording, the store and the diff
//! are in `lupa_history` and `lupa_prof::history` (whose diff,
//! log and series are reports: `--format` and `-o` as every command has
//! them); this file parses arguments, prints and chooses exit codes.

use clap::{Args, Subcommand, ValueEnum};
use lupa_history::{self as hip, HistoryError};
use lupa_prof::Report;
use lupa_prof::history::{
    self as model, DiffFormat, DiffOptions, HistoryDiff, Measure, Series, SeriesOptions, StackDiff,
    VersionLog, text,
};
use lupa_vm::VmError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::report_args::ReportArgs;
use crate::vm_args::{VmArgs, options};

/// The exit codes of `lupa history`, shown in its `--help`.
pub(crate) const EXIT_CODES: &str = "Exit codes (lupa history):
  0    success; check: no method grew past the bound
  1    check: a method grew past the bound (each one is named); record: the program
       failed (an uncaught error or a non-zero exit status; nothing is recorded; with
       --git a failing revision is recorded as broken and the range goes on, unless
       --stop-at-failure)
  2    bad usage: unknown option or argument, unknown version or method, a label that
       exists already (record --replace), REPO not a git repository, unknown revision
  65   record: a syntax or compile error in the program
  66   record: a class that cannot be found
  70   record: a fatal runtime error in the program, or git failed (cannot run, worktree)
  74   the database is missing (log, diff, show, check), is not a Lupa profile
       database (corrupt, another file, a newer schema), or cannot be read or
       written; -o FILE cannot be written
  130  record: interrupted by SIGINT (Ctrl-C; 143: SIGTERM): the run stops, nothing
       more is recorded (the versions stored before stay) and a --git worktree is
       removed";

/// `lupa history` arguments.
#[derive(Args, Debug)]
pub(crate) struct HistoryArgs {
    /// The profile database: a SQLite file (`record` creates it and its directory), or a
    /// PostgreSQL database given as a URL, postgres://USER[:PASSWORD]@HOST[:PORT]/DB.
    #[arg(
        long,
        value_name = "FILE|URL",
        default_value = hip::store::DEFAULT_PATH,
        global = true
    )]
    db: PathBuf,
    #[command(subcommand)]
    command: HistoryCommand,
}

#[derive(Subcommand, Debug)]
enum HistoryCommand {
    /// Profile a program once with Compteur's exact send counts and store its
    /// per-method metrics and call stacks as a version (--label NAME); or each
    /// revision of a git range, checked out in a temporary worktree (--git
    /// REPO --revs A..B). --metric time records N sampled runs' CPU time,
    /// --metric coverage the methods SUnit tests run.
    #[command(after_help = EXIT_CODES)]
    Record(Box<RecordArgs>),
    /// List the recorded versions, oldest first.
    #[command(after_help = EXIT_CODES)]
    Log(LogArgs),
    /// Compare two versions (labels or ids): per method, class and package
    /// one of five states, higher (red), lower (green), unchanged (white),
    /// removed (black), new (yellow), with the delta.
    #[command(after_help = EXIT_CODES)]
    Diff(DiffArgs),
    /// One method across all versions, version V marked.
    #[command(after_help = EXIT_CODES)]
    Show(ShowArgs),
    /// Fail (exit 1) when a method's total sends grew by more than a bound
    /// between a baseline and another version (the latest by default).
    #[command(after_help = EXIT_CODES)]
    Check(CheckArgs),
}

#[derive(Args, Debug)]
struct RecordArgs {
    #[command(flatten)]
    vm: VmArgs,
    /// The version's label (unique in the database).
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "git",
        conflicts_with = "git"
    )]
    label: Option<String>,
    /// Record revisions of the git repository REPO (labels: short hash and subject);
    /// -cp paths are resolved inside each checkout (default: its top directory).
    #[arg(long, value_name = "REPO", requires = "revs")]
    git: Option<PathBuf>,
    /// The revisions: A..B (git rev-list --reverse A..B) or one revision.
    #[arg(long, value_name = "A..B", requires = "git")]
    revs: Option<String>,
    /// Record every K-th revision of the range (the last one always).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    every: Option<u64>,
    /// With --git (the default for a range A..B): a revision whose program fails to load
    /// or run is recorded as a broken version (shown in log; diff refuses it) and the
    /// range goes on.
    #[arg(long, requires = "git", overrides_with = "stop_at_failure")]
    keep_going: bool,
    /// With --git: stop at the first revision whose program fails (exit as for one
    /// version; the versions before it stay recorded).
    #[arg(long, requires = "git", overrides_with = "keep_going")]
    stop_at_failure: bool,
    /// Replace a version of the same label instead of refusing.
    #[arg(long)]
    replace: bool,
    /// What to record: sends (one run under Compteur: exact sends per method and the
    /// call stacks), time (N runs under the sampler: per method self and total CPU time,
    /// compared with Welch's t-test), coverage (the SUnit test classes given instead of a
    /// program, under Spy's TestCoverage: executions per method).
    #[arg(long, value_enum, default_value_t = RecordMetricArg::Sends)]
    metric: RecordMetricArg,
    /// --metric time: the number of runs.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..1000))]
    runs: u64,
    /// --metric time: the sampler's deterministic mode, a sample every N sends
    /// (values in samples, identical at every run) instead of the CPU clock.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    sample_every: Option<u64>,
    /// --metric coverage: a package to cover (repeatable; default: the class path's
    /// directories holding classes that are not tests).
    #[arg(long = "package", value_name = "P")]
    packages: Vec<String>,
    /// The program: CLASS and its arguments (after `--`); with --metric coverage, the
    /// TestCase classes to run (default: every one on the class path).
    #[arg(
        value_name = "CLASS [ARGS]",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    program: Vec<String>,
}

/// `record --metric`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RecordMetricArg {
    /// Exact send counts and call stacks (one run).
    Sends,
    /// Sampled CPU time of N runs.
    Time,
    /// Method executions under SUnit tests.
    Coverage,
}

#[derive(Args, Debug)]
struct LogArgs {
    #[command(flatten)]
    report: ReportArgs<VersionLog>,
}

fn parse_measure(s: &str) -> Result<Measure, String> {
    s.parse()
}

/// `5%`, `5` or `0.5%` as a percentage (not negative).
fn parse_percent(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a percentage (e.g. 5%)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{s}`: the percentage must be 0 or more"));
    }
    Ok(v)
}

#[derive(Args, Debug)]
struct DiffArgs {
    /// The earlier version (label or id).
    from: String,
    /// The later version (label or id).
    to: String,
    #[command(flatten)]
    report: ReportArgs<HistoryDiff>,
    /// What methods are compared by: total (sends of the method and all it called),
    /// self (sends in the method itself) or activations.
    #[arg(long, value_name = "METRIC", default_value = "total", value_parser = parse_measure)]
    metric: Measure,
    /// Changes up to this percentage count as unchanged (counts are exact: 0 by default).
    #[arg(long, value_name = "PCT", default_value = "0", value_parser = parse_percent)]
    tolerance: f64,
    /// Text: also list unchanged methods.
    #[arg(long)]
    all: bool,
    /// Text: at most N method rows.
    #[arg(long, value_name = "N")]
    top: Option<usize>,
}

#[derive(Args, Debug)]
struct ShowArgs {
    /// The version to mark (label or id).
    version: String,
    /// The method, as reports name it (`Class>>selector`).
    method: String,
    /// The metric whose states are shown (total, self, activations).
    #[arg(long, value_name = "METRIC", default_value = "total", value_parser = parse_measure)]
    metric: Measure,
    #[command(flatten)]
    report: ReportArgs<Series>,
}

#[derive(Args, Debug)]
struct CheckArgs {
    /// The reference version (label or id).
    #[arg(long, value_name = "V")]
    baseline: String,
    /// The version checked (label or id; default: the latest).
    #[arg(long, value_name = "V")]
    against: Option<String>,
    /// The largest allowed growth of a method's total sends, e.g. 5%.
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    max_increase: f64,
}

/// Run `lupa history`.
pub(crate) fn main(a: &HistoryArgs) -> ExitCode {
    match run(a) {
        Ok(code) => code,
        Err(Failure::History(e)) => report(&e),
        Err(Failure::Write(m)) => {
            eprintln!("lupa: {m}");
            ExitCode::from(74)
        }
    }
}

/// Why a history command stopped.
enum Failure {
    History(HistoryError),
    Write(String),
}

impl From<HistoryError> for Failure {
    fn from(e: HistoryError) -> Failure {
        Failure::History(e)
    }
}

/// Print `e` and answer its exit code (see [`EXIT_CODES`]).
fn report(e: &HistoryError) -> ExitCode {
    use HistoryError as H;
    let code = match e {
        H::UnknownVersion(_)
        | H::Incomparable(_)
        | H::UnknownMethod { .. }
        | H::DuplicateLabel(_)
        | H::NotAGitRepository { .. }
        | H::UnknownRevision(_)
        | H::EmptyRange(_) => 2,
        H::ProgramExit { .. } => 1,
        H::Program { error, .. } => match error {
            VmError::Compile(_) => 65,
            VmError::ClassNotFound(_) => 66,
            VmError::Io(_) => 74,
            VmError::Fatal(_) => 70,
            VmError::Exit(_) => 1,
            VmError::Interrupted(status) => u8::try_from(*status).unwrap_or(130),
        },
        H::Git(_) => 70,
        H::NoDatabase(_)
        | H::NotAStore { .. }
        | H::NewerSchema { .. }
        | H::Database { .. }
        | H::NoPostgres(_)
        | H::Io(_) => 74,
    };
    eprintln!("lupa: history: {e}");
    ExitCode::from(code)
}

/// Print `text` on standard output.
fn print_text(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::Write(format!("cannot write the standard output: {e}")))
}

/// Write `report` where `args` say (standard output by default).
fn emit<R: Report>(args: &ReportArgs<R>, report: &R, options: &R::Options) -> Result<(), Failure> {
    let dest = args.destination("history").map_err(write_failure)?;
    args.deliver(report, options, &dest).map_err(write_failure)
}

/// A failure to write a report (exit 74).
fn write_failure(e: VmError) -> Failure {
    Failure::Write(e.to_string())
}

fn run(a: &HistoryArgs) -> Result<ExitCode, Failure> {
    match &a.command {
        HistoryCommand::Record(r) => record(&a.db, r),
        HistoryCommand::Log(l) => {
            let store = hip::open_store(&a.db, false)?;
            let versions = VersionLog(store.versions()?);
            emit(&l.report, &versions, &())?;
            Ok(ExitCode::SUCCESS)
        }
        HistoryCommand::Diff(d) => {
            let store = hip::open_store(&a.db, false)?;
            let format = d.report.format;
            let diff = if format.needs_stacks() {
                let (from, before, to, after, packages) = hip::stacks_of(&*store, &d.from, &d.to)?;
                HistoryDiff::Stacks(StackDiff {
                    from,
                    before,
                    to,
                    after,
                    packages: packages.into_iter().collect(),
                })
            } else if hip::is_time(&hip::comparable(&*store, &d.from, &d.to)?.0.metric) {
                let measure = match d.metric {
                    Measure::Total => model::timed::TimeMeasure::Total,
                    Measure::SelfSends => model::timed::TimeMeasure::SelfTime,
                    Measure::Activations => {
                        return Err(HistoryError::Incomparable(
                            "time versions compare total or self time, not activations".to_string(),
                        )
                        .into());
                    }
                };
                if !matches!(format, DiffFormat::Text | DiffFormat::Json) {
                    return Err(HistoryError::Incomparable(
                        "time versions are shown as text or json".to_string(),
                    )
                    .into());
                }
                HistoryDiff::Time(hip::time_diff(&*store, &d.from, &d.to, measure)?)
            } else {
                let options = DiffOptions {
                    measure: d.metric,
                    tolerance: d.tolerance / 100.0,
                };
                HistoryDiff::Sends(hip::diff(&*store, &d.from, &d.to, options)?)
            };
            let options = text::TextOptions {
                all: d.all,
                top: d.top,
            };
            emit(&d.report, &diff, &options)?;
            Ok(ExitCode::SUCCESS)
        }
        HistoryCommand::Show(s) => {
            let store = hip::open_store(&a.db, false)?;
            let v = store.version(&s.version)?;
            let series = hip::series(&*store, &s.method, s.metric)?;
            emit(&s.report, &series, &SeriesOptions { mark: Some(v.id) })?;
            Ok(ExitCode::SUCCESS)
        }
        HistoryCommand::Check(c) => {
            let store = hip::open_store(&a.db, false)?;
            let against = match &c.against {
                Some(v) => store.version(v)?,
                None => store.latest()?,
            };
            let diff = hip::diff(
                &*store,
                &c.baseline,
                &against.id.to_string(),
                DiffOptions::default(),
            )?;
            let violations = model::check(&diff, c.max_increase);
            print_text(&text::check_text(&diff, &violations, c.max_increase))?;
            Ok(if violations.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}

fn record(db: &Path, r: &RecordArgs) -> Result<ExitCode, Failure> {
    crate::signals::stop_gracefully();
    if r.every.is_some() && r.git.is_none() {
        eprintln!("lupa: history record: --every needs --git REPO --revs A..B");
        return Ok(ExitCode::from(2));
    }
    if let Some(label) = &r.label
        && label.trim().is_empty()
    {
        eprintln!("lupa: history record: the label is empty");
        return Ok(ExitCode::from(2));
    }
    let metric = match r.metric {
        RecordMetricArg::Sends => hip::RecordMetric::Sends,
        RecordMetricArg::Time => hip::RecordMetric::Time {
            runs: usize::try_from(r.runs).unwrap_or(usize::MAX),
            every: r.sample_every,
        },
        RecordMetricArg::Coverage => hip::RecordMetric::Coverage {
            tests: r.program.clone(),
            packages: r.packages.clone(),
        },
    };
    if r.metric != RecordMetricArg::Coverage && r.program.is_empty() {
        eprintln!("lupa: history record: give the program to run: -- CLASS [ARGS...]");
        return Ok(ExitCode::from(2));
    }
    if r.metric != RecordMetricArg::Time && r.sample_every.is_some() {
        eprintln!("lupa: history record: --sample-every needs --metric time");
        return Ok(ExitCode::from(2));
    }
    if r.metric != RecordMetricArg::Coverage && !r.packages.is_empty() {
        eprintln!("lupa: history record: --package needs --metric coverage");
        return Ok(ExitCode::from(2));
    }
    let program = hip::Program {
        args: r.program.clone(),
        options: options(&r.vm),
        metric,
    };
    let mut store = hip::open_store(db, true)?;
    let say = |v: &model::VersionInfo| match v.total_sends {
        _ if v.is_broken() => println!("recorded {} : broken", text::version_line(v)),
        Some(n) => println!("recorded {} : {n} sends", text::version_line(v)),
        None => println!("recorded {} : {}", text::version_line(v), v.metric),
    };
    match (&r.git, &r.revs, &r.label) {
        (Some(repo), Some(revs), _) => {
            let every = usize::try_from(r.every.unwrap_or(1)).unwrap_or(usize::MAX);
            let mut on_version = |v: &model::VersionInfo| say(v);
            hip::record_git(
                &mut *store,
                &program,
                repo,
                revs,
                every,
                r.replace,
                r.keep_going || (!r.stop_at_failure && revs.contains("..")),
                &mut on_version,
            )?;
        }
        (None, _, Some(label)) => {
            let v = hip::record(&mut *store, &program, label, r.replace)?;
            say(&v);
        }
        _ => {
            eprintln!("lupa: history record: give --label NAME, or --git REPO --revs A..B");
            return Ok(ExitCode::from(2));
        }
    }
    Ok(ExitCode::SUCCESS)
}
