//! `lupa`: run, test and benchmark SOM Smalltalk programs on the Lupa VM.

mod blueprint;
mod calibrate;
mod coverage;
mod gcbench;
mod gctune;
mod history;
mod lifetimes;
mod progress;
mod proxies;
mod report_args;
mod save;
mod stability;
mod types;
mod vm_args;

use clap::{Args, Parser, Subcommand};
use lupa_heap::units::size_label;
use lupa_vm::{Vm, VmError};
use report_args::ReportArgs;
use std::path::PathBuf;
use std::process::ExitCode;
pub(crate) use vm_args::{VmArgs, options};

/// The exit codes every command shares, shown in `--help`.
const EXIT_CODES: &str = "Exit codes:
  0    success (run: the program ended normally or with `system exit: 0`)
  1    an uncaught Smalltalk error (with a backtrace), failed tests, or `system exit:`
       with a status outside 0..255 (reported); run: the program's own `system exit: N`
  2    bad usage (unknown option, missing argument, argument that is not UTF-8)
  65   a syntax or compile error in a class file (file:line:col)
  66   a class that cannot be found
  70   a fatal runtime error (deadlock, error while handling an error); stability: the
       profiled program failed
  74   a file or the standard output cannot be read or written (checked before the run
       for -o FILE)
  134  a bug in the VM: a Rust panic prints its message and aborts (SIGABRT; a debug
       build unwinds and exits with 101)";

#[derive(Parser, Debug)]
#[command(
    name = "lupa",
    after_help = EXIT_CODES,
    version,
    about = "Lupa: a SOM Smalltalk VM built to observe programs",
    long_about = "Lupa runs SOM Smalltalk programs. Classes are looked up along the class path \
(-cp DIR:DIR, searched in order) and then in Lupa's bundled class library.\n\n\
`lupa -cp DIR Foo a b` is short for `lupa run -cp DIR Foo a b`."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a program: load CLASS, send it `new run` (or `new run: args` if it understands run:).
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),
    /// Run SUnit tests: the named TestCase classes, or every TestCase subclass on the class path
    /// (the bundled test suites when no class path is given). Ends with `N passed, M failed`.
    #[command(after_help = EXIT_CODES)]
    Test(TestArgs),
    /// Count message sends per method (Compteur): run CLASS like `run`, charging every executed send
    /// to the method that executed it. Prints a ranking and a call tree, or writes a report file.
    #[command(after_help = EXIT_CODES)]
    Count(CountArgs),
    /// Test coverage (Spy's TestCoverage, after Hapao): run SUnit tests like `test` (same output,
    /// same exit code) and report which methods and lines of the covered packages ran, how often,
    /// on how many distinct receivers, and which tests reached them.
    #[command(after_help = EXIT_CODES)]
    Coverage(coverage::CoverageArgs),
    /// Type feedback (Spy's TypeProfiler): run SUnit tests (or a program, --run CLASS ARGS) and
    /// report, per method of the profiled packages, the classes of its arguments and answer,
    /// generalised to their common superclass, and the argument classes that sibling
    /// implementations saw and it did not.
    #[command(after_help = EXIT_CODES)]
    Types(types::TypesArgs),
    /// Time profiling blueprints (Spy's BlueprintProfiler): run CLASS like `run` with the methods of
    /// the profiled packages instrumented, then twice more (counted, then sampled), and draw the
    /// structural blueprint (classes, methods as boxes) or the behavioral one (the call graph):
    /// height = time, width = executions, gray = every call answered the same object.
    #[command(after_help = EXIT_CODES)]
    Blueprint(blueprint::BlueprintArgs),
    /// Sample the whole VM (VMProfiler): run CLASS like `run` while a sampler thread records, at
    /// jittered ticks, the Smalltalk stack and what the VM is doing (interpreting, a primitive, a
    /// method lookup, a scavenge, a full GC, a process switch, an allocation, finalization, waiting
    /// in a file call, idle until a Delay expires), weighted by the VM thread's CPU
    /// time. Prints where
    /// the time went by VM state, a ranking and a call tree, or writes a report file.
    #[command(after_help = EXIT_CODES)]
    Profile(ProfileArgs),
    /// Object lifetimes (Illimani): run CLASS like `run` while sampled allocations are followed
    /// from birth to death (by the VM, or by the paper's MethodProxies and ephemerons with
    /// --mode faithful); report lifetime densities on three clocks (bytes allocated, time,
    /// collections survived), allocation sites and their short/long/immortal advice.
    #[command(after_help = EXIT_CODES)]
    Lifetimes(lifetimes::LifetimesArgs),
    /// Estimate time from message counts (Compteur, section 3): run a basket of programs several
    /// times, measure wall time and sends, and fit the message rate with its confidence interval.
    #[command(after_help = EXIT_CODES)]
    Calibrate(calibrate::CalibrateArgs),
    /// Ranking stability (Compteur, section 4.4): profile a program several times by counting and
    /// by timing, and compare the instability psi of the first methods of each ranking.
    #[command(after_help = EXIT_CODES)]
    Stability(stability::StabilityArgs),
    /// MethodProxies benchmark (the paper's tables 2, 3 and 5): instrument every method of several
    /// bundled projects with each technique (trap methods, run:with:in:, source rewriting) and each
    /// handler, and report instrumentation, execution and uninstrumentation overheads.
    #[command(name = "proxies-bench", after_help = EXIT_CODES)]
    ProxiesBench(proxies::ProxiesArgs),
    /// GC parameter benchmark (the Illimani paper's tables 1 and 3-5): run an allocation-heavy
    /// workload (GcLoad, or loading generated CSV files into a DataFrame with --workload
    /// dataframe) under the default GC parameters and under larger configurations, and report GC
    /// time, total time, scavenges and full GCs.
    #[command(name = "gc-bench", after_help = EXIT_CODES)]
    GcBench(gcbench::GcBenchArgs),
    /// GC tuning for a program: profile its object lifetimes, propose GC parameters from them
    /// (each with its reason), search the same parameters black-box under a time budget, and
    /// measure both against the defaults in interleaved runs (speed-ups with 95% intervals).
    #[command(name = "gc-tune", after_help = gctune::EXIT_CODES)]
    GcTune(gctune::GcTuneArgs),
    /// Profile history across versions (Hip, the Spy paper's section 4.3): record a program's
    /// send counts (exact), sampled CPU time or test coverage per method for each version (or git
    /// revision) in SQLite or PostgreSQL, list them, compare two
    /// versions (higher, lower, unchanged, removed, new), follow a method, check for growth.
    #[command(after_help = history::EXIT_CODES)]
    History(history::HistoryArgs),
    /// Run a bundled benchmark: NAME (Richards, DeltaBlue, Json, NBody, Havlak, CD, Bounce, List,
    /// Mandelbrot, Permute, Queens, Sieve, Storage, Towers, or All) [ITERATIONS [INNER]].
    #[command(after_help = EXIT_CODES)]
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    vm: VmArgs,
    /// Print one JSON line of the run's time and heap statistics on stderr at the end (the
    /// workers of `lupa gc-tune` and `lupa gc-bench --jobs`).
    #[arg(long = lupa_lab::worker::STATS_FLAG.trim_start_matches('-'), hide = true)]
    stats_json: bool,
    /// The class to run.
    class: String,
    /// Arguments passed to `run:` (after the class name).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// What part of a profile a profiler command reports.
#[derive(Args, Debug)]
struct ViewArgs {
    /// Report only methods of these packages (class directories, e.g. Benchmarks/Richards);
    /// their values still include what they cause in other packages.
    #[arg(long = "package", value_name = "PACKAGE")]
    packages: Vec<String>,
    /// Report only methods of these classes (same folding as --package).
    #[arg(long = "class", value_name = "CLASS")]
    classes: Vec<String>,
    /// Number of methods in the ranking.
    #[arg(long, default_value_t = 25)]
    top: usize,
    /// Deepest level of the call tree printed by the text and tree reports
    /// (deeper contexts are summarised in one line); 0 for no limit.
    #[arg(long, default_value_t = lupa_prof::report::DEFAULT_TREE_DEPTH)]
    depth: usize,
    /// Tree: leave out subtrees below this percentage of the total.
    #[arg(long, default_value_t = 1.0)]
    cutoff: f64,
}

#[derive(Args, Debug)]
struct CountArgs {
    #[command(flatten)]
    vm: VmArgs,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    view: ViewArgs,
    /// Calibration used to estimate time from the count (see `lupa calibrate`).
    #[arg(long, value_name = "FILE", default_value = "lupa-calibration.json")]
    calibration: PathBuf,
    /// The class to run.
    class: String,
    /// Arguments passed to `run:`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

#[derive(Args, Debug)]
struct ProfileArgs {
    #[command(flatten)]
    vm: VmArgs,
    #[command(flatten)]
    report: ReportArgs,
    /// Mean sampling rate in Hz (intervals are jittered uniformly in 0.5..1.5 of the mean).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=i64::from(lupa_profilers::sampler::MAX_RATE_HZ)))]
    rate: u32,
    /// The clock that weighs each sample: cpu (the VM thread's CPU time since the previous
    /// sample; the same program gives the same profile on a loaded machine) or wall (time spent
    /// descheduled shows too).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "wall"])]
    clock: String,
    /// Seed of the interval jitter (printed in the report).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also run the program a second time, sampled deterministically every N message sends
    /// (default 1000), and show each method's share of the time next to its share of the work.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1000",
          conflicts_with = "every", value_parser = clap::value_parser!(u64).range(1..))]
    compare_modes: Option<u64>,
    /// Also take the VM thread's native program counter at each tick (SIGPROF to the VM thread;
    /// Linux on x86-64 or AArch64) and report the time by Rust function of the lupa binary.
    #[arg(long, conflicts_with = "every")]
    native: bool,
    /// Deterministic mode: no sampler thread; the interpreter samples its stack every N message
    /// sends, each sample weighing 1 (the same samples on every run).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    every: Option<u64>,
    #[command(flatten)]
    view: ViewArgs,
    /// Profile the bundled benchmark NAME: the positional arguments are then its outer and inner
    /// iterations (`lupa profile --bench Richards 5 10` runs `BenchmarkRunner Richards 5 10`).
    #[arg(long, value_name = "NAME")]
    bench: Option<String>,
    /// The class to run (with --bench: the outer iterations).
    #[arg(required_unless_present = "bench")]
    class: Option<String>,
    /// Arguments passed to `run:`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

#[derive(Args, Debug)]
struct TestArgs {
    #[command(flatten)]
    vm: VmArgs,
    /// TestCase classes to run (default: all found).
    classes: Vec<String>,
}

#[derive(Args, Debug)]
struct BenchArgs {
    #[command(flatten)]
    vm: VmArgs,
    /// Benchmark name, or All.
    name: String,
    /// Outer iterations (default 1).
    iterations: Option<u32>,
    /// Inner iterations / problem size (default: the benchmark's own).
    inner: Option<u32>,
}

/// The process status for a program's `system exit: code`: 0..=255 as is; any other
/// value (negative, or too large for a Unix status) is reported and exits 1, so that
/// it never reads as success.
fn exit_status(code: i32) -> ExitCode {
    match u8::try_from(code) {
        Ok(c) => ExitCode::from(c),
        Err(_) => {
            eprintln!("lupa: exit status {code} is outside 0..255; exiting with status 1");
            ExitCode::from(1)
        }
    }
}

fn report(e: &VmError) -> ExitCode {
    match e {
        VmError::Exit(code) => exit_status(*code),
        VmError::Compile(m) => {
            eprintln!("{m}");
            ExitCode::from(65)
        }
        VmError::ClassNotFound(m) => {
            eprintln!("lupa: {m}");
            ExitCode::from(66)
        }
        VmError::Io(m) => {
            eprintln!("lupa: {m}");
            ExitCode::from(74)
        }
        VmError::Fatal(m) => {
            eprintln!("lupa: error: {m}");
            ExitCode::from(70)
        }
    }
}

fn print_stats(vm: &mut Vm, args: &VmArgs) {
    if !args.gc_stats {
        return;
    }
    vm.heap.refresh_stats();
    let st = vm.heap.stats();
    let c = vm.heap.config();
    eprintln!("--- lupa statistics ---");
    eprintln!("sends:              {}", vm.obs.sends);
    eprintln!("inlined sends:      {}", vm.obs.inlined);
    eprintln!(
        "gc parameters:      eden {}, growth headroom {}, shrink threshold {}, gc ratio {}, tenuring threshold {}",
        size_label(c.eden_size),
        size_label(c.growth_headroom),
        size_label(c.shrink_threshold),
        c.gc_ratio,
        c.tenuring_threshold
    );
    eprint!("{}", st.report());
    if args.pretenure.is_some() {
        let (objects, bytes) = vm.pretenured();
        eprintln!(
            "pretenured:         {objects} objects, {} (allocated in old space by the advice)",
            size_label(bytes as usize)
        );
    }
}

fn with_vm(args: &VmArgs, f: impl FnOnce(&mut Vm) -> Result<i32, VmError>) -> ExitCode {
    let mut vm = match Vm::new(options(args)) {
        Ok(vm) => vm,
        Err(e) => return report(&e),
    };
    // Smalltalk code may start profilers (`Compteur profile: aBlock`).
    lupa_profilers::install(&mut vm);
    let mut r = f(&mut vm);
    // Output the program wrote but that never reached its destination is a failure.
    if let (Ok(_), Err(e)) = (&r, vm.flush()) {
        r = Err(e);
    }
    print_stats(&mut vm, args);
    match r {
        Ok(code) => exit_status(code),
        Err(e) => report(&e),
    }
}

fn run_tests(vm: &mut Vm, args: &TestArgs) -> Result<i32, VmError> {
    let classes = match find_test_classes(vm, &args.classes, args.vm.class_path.as_deref())? {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let summary = vm.run_test_classes(&classes)?;
    Ok(if summary.ok() { 0 } else { 1 })
}

/// The test classes `lupa test` and `lupa coverage` run: the named ones, or
/// every TestCase subclass on the class path (the bundled suites without
/// one). `Err(code)`: nothing to run, said on standard error (2: a named
/// class is not a TestCase; 1: none found).
fn find_test_classes(
    vm: &mut Vm,
    named: &[String],
    class_path: Option<&str>,
) -> Result<Result<Vec<u32>, i32>, VmError> {
    let names = if named.is_empty() {
        vm.test_candidates(class_path.is_none())
    } else {
        named.to_vec()
    };
    let mut classes = Vec::new();
    for name in &names {
        let found = vm.test_classes(std::slice::from_ref(name))?;
        if found.is_empty() && !named.is_empty() {
            eprintln!("lupa: {name} is not a TestCase subclass");
            return Ok(Err(2));
        }
        classes.extend(found);
    }
    if classes.is_empty() {
        let looked = match class_path {
            Some(cp) => format!("the class path {cp}"),
            None => "the bundled library's Tests folders".to_string(),
        };
        eprintln!("lupa: no TestCase subclass found in {looked}");
        return Ok(Err(1));
    }
    Ok(Ok(classes))
}

fn run_count(vm: &mut Vm, a: &CountArgs) -> Result<i32, VmError> {
    use lupa_profilers::{ProfileMode, compteur};
    let dest = a.report.prepare(vm, &a.class)?;
    vm.load_class_by_name(&a.class)?;
    let args = program_args(&a.class, &a.args);
    let run = ProfileMode::Compteur
        .run_main(vm, &args)
        .map_err(|e| VmError::Fatal(e.to_string()))?;
    let code = run.result?;
    let profile = compteur::keep_only(run.profile, &a.view.packages, &a.view.classes);
    let command = format!("lupa count {}", args.join(" "));
    let header = compteur::header(&profile, &command, run.inlined, &a.calibration);
    let estimate = compteur::estimate(profile.grand_total(), &a.calibration);
    write_profile(
        vm,
        &a.report,
        &dest,
        profile,
        command,
        header,
        &a.view,
        Extras {
            estimate,
            ..Extras::default()
        },
    )?;
    Ok(code)
}

fn run_profile(vm: &mut Vm, a: &ProfileArgs) -> Result<i32, VmError> {
    use lupa_profilers::sampler::{self, SamplerConfig};
    use lupa_profilers::{ProfileMode, compteur};
    let config = SamplerConfig {
        rate_hz: a.rate,
        clock: a.clock.parse().map_err(VmError::Fatal)?,
        seed: a.seed,
        every: a.every,
        unweighted: false,
        native: a.native,
    };
    let args = match (&a.bench, &a.class) {
        (Some(name), outer) => {
            let mut all = vec!["BenchmarkRunner".to_string(), name.clone()];
            all.push(outer.clone().unwrap_or_else(|| "1".to_string()));
            all.extend(a.args.iter().cloned());
            all
        }
        (None, Some(class)) => program_args(class, &a.args),
        (None, None) => return Err(VmError::Fatal("no class to run".to_string())),
    };
    let dest = a.report.prepare(vm, &args[0])?;
    vm.load_class_by_name(&args[0])?;
    let running = ProfileMode::Sampling(config)
        .start(vm)
        .map_err(|e| VmError::Fatal(e.to_string()))?;
    let result = vm.run_main(&args);
    let (profile, mut stats) = running.finish_with_stats(vm);
    let code = result?;
    let profile = match stats.as_mut() {
        Some(st) => compteur::keep_only_sampled(
            profile,
            &mut st.timeline,
            &a.view.packages,
            &a.view.classes,
        ),
        None => compteur::keep_only(profile, &a.view.packages, &a.view.classes),
    };
    let command = format!("lupa profile {}", args.join(" "));
    let mut header = stats
        .as_ref()
        .map(|st| sampler::header(vm, &profile, st, &command))
        .unwrap_or_default();
    let sampling = stats.as_ref().map(sampler::SamplerStats::sampling_info);
    let timeline = stats.map(|st| std::sync::Arc::new(st.timeline));
    if let Some(every) = a.compare_modes {
        let work = work_profile(a, &args, every)?;
        let lines = sampler::compare(&profile, &work, every, a.view.top);
        if a.report.format.0.is_terminal_text() {
            header.push(String::new());
            header.extend(lines);
        } else {
            eprintln!("{}", lines.join("\n"));
        }
    }
    write_profile(
        vm,
        &a.report,
        &dest,
        profile,
        command,
        header,
        &a.view,
        Extras {
            estimate: None,
            sampling,
            timeline,
        },
    )?;
    Ok(code)
}

/// `--compare-modes`: the program run again in a fresh VM, sampled every
/// `every` sends (its output discarded).
fn work_profile(
    a: &ProfileArgs,
    args: &[String],
    every: u64,
) -> Result<lupa_prof::Profile, VmError> {
    use lupa_profilers::sampler::SamplerConfig;
    use lupa_profilers::{ProfileMode, compteur};
    let mut vm = Vm::new(options(&a.vm))?;
    lupa_profilers::install(&mut vm);
    vm.capture_output();
    vm.load_class_by_name(&args[0])?;
    let config = SamplerConfig {
        every: Some(every),
        ..SamplerConfig::DEFAULT
    };
    let run = ProfileMode::Sampling(config)
        .run_main(&mut vm, args)
        .map_err(|e| VmError::Fatal(e.to_string()))?;
    run.result?;
    Ok(compteur::keep_only(
        run.profile,
        &a.view.packages,
        &a.view.classes,
    ))
}

/// `CLASS ARG...` as `run_main` takes them.
fn program_args(class: &str, args: &[String]) -> Vec<String> {
    let mut all = vec![class.to_string()];
    all.extend(args.iter().cloned());
    all
}

/// What a profiler's report carries besides its profile.
#[derive(Default)]
struct Extras {
    /// Compteur: the calibrated time estimate.
    estimate: Option<lupa_prof::report::TimeEstimate>,
    /// The sampler: how it sampled.
    sampling: Option<lupa_prof::report::SamplingInfo>,
    /// The sampler: its samples in time order.
    timeline: Option<std::sync::Arc<lupa_prof::Timeline>>,
}

/// Write a profiler command's report: the header (text formats only), the
/// bundled sources beside a callgrind file, then the report itself.
#[allow(clippy::too_many_arguments)]
fn write_profile(
    vm: &mut Vm,
    report: &ReportArgs,
    dest: &report_args::Destination,
    mut profile: lupa_prof::Profile,
    command: String,
    header: Vec<String>,
    shape: &ViewArgs,
    extras: Extras,
) -> Result<(), VmError> {
    // A callgrind file names its sources for annotation: the bundled ones
    // are written beside it (FILE.sources/) so the tools can open them.
    if report.format.0 == lupa_prof::report::Format::Callgrind
        && let report_args::Destination::File { path, .. } = dest
    {
        let mut dir = path.as_os_str().to_owned();
        dir.push(".sources");
        lupa_profilers::sources::export_bundled(vm, &mut profile, std::path::Path::new(&dir))
            .map_err(|e| {
                VmError::Io(format!(
                    "cannot write the sources beside {}: {e}",
                    path.display()
                ))
            })?;
    }
    let options = lupa_prof::report::ReportOptions {
        header: if report.format.0.is_terminal_text() {
            header
        } else {
            Vec::new()
        },
        command,
        top: Some(shape.top),
        cutoff: shape.cutoff / 100.0,
        max_depth: (shape.depth > 0).then_some(shape.depth),
        estimate: extras.estimate,
        sampling: extras.sampling,
        timeline: extras.timeline,
        title: report.title.clone(),
        width: report.width,
        min_width: report.min_width,
    };
    vm.flush()?;
    report.write(&profile, &options, dest)
}

fn main() -> ExitCode {
    // SOM VMs spell the class path option `-cp`; clap would read it as `-c p`.
    // Arguments must be text: Smalltalk receives them as Strings, class paths name files.
    let mut argv = Vec::new();
    for (i, a) in std::env::args_os().enumerate() {
        match a.into_string() {
            Ok(a) if a == "-cp" => argv.push("--cp".to_string()),
            Ok(a) => argv.push(a),
            Err(a) => {
                eprintln!(
                    "lupa: argument {i} is not valid UTF-8: {}",
                    a.to_string_lossy()
                );
                return ExitCode::from(2);
            }
        }
    }
    // `lupa -cp DIR Class args` / `lupa Class` without a subcommand means `run`.
    if argv.len() > 1 {
        let first = argv[1].as_str();
        let cmd = <Cli as clap::CommandFactory>::command();
        let known = cmd.get_subcommands().any(|c| c.get_name() == first)
            || ["help", "-h", "--help", "-V", "--version"].contains(&first);
        if !known {
            argv.insert(1, "run".into());
        }
    }
    let cli = match Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Run(a) if a.stats_json => gctune::worker(&a),
        Command::Run(a) => {
            let mut args = vec![a.class.clone()];
            args.extend(a.args.iter().cloned());
            with_vm(&a.vm, |vm| {
                // Load the class first so that a missing class is a clear error.
                vm.load_class_by_name(&a.class)?;
                vm.run_main(&args)
            })
        }
        Command::Test(t) => with_vm(&t.vm, |vm| run_tests(vm, &t)),
        Command::Coverage(c) => with_vm(&c.vm, |vm| coverage::run(vm, &c)),
        Command::Types(t) => with_vm(&t.vm, |vm| types::run(vm, &t)),
        Command::Blueprint(b) => with_vm(&b.vm, |vm| blueprint::run(vm, &b)),
        Command::Lifetimes(l) => with_vm(&l.vm, |vm| lifetimes::run(vm, &l)),
        Command::Count(c) => with_vm(&c.vm, |vm| run_count(vm, &c)),
        Command::Profile(p) => with_vm(&p.vm, |vm| run_profile(vm, &p)),
        Command::ProxiesBench(p) => proxies::main(&p),
        Command::GcBench(g) => gcbench::main(&g),
        Command::GcTune(g) => gctune::main(&g),
        Command::Calibrate(c) => calibrate::main(&c),
        Command::Stability(s) => stability::main(&s),
        Command::History(h) => history::main(&h),
        Command::Bench(b) => {
            let mut args = vec!["BenchmarkRunner".to_string(), b.name.clone()];
            args.push(b.iterations.unwrap_or(1).to_string());
            if let Some(i) = b.inner {
                args.push(i.to_string());
            }
            with_vm(&b.vm, |vm| vm.run_main(&args))
        }
    }
}
