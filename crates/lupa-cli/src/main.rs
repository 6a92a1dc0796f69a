//! `lupa`: run, test and benchmark SOM Smalltalk programs on the Lupa VM.
//!
//! This file is the command line's shape only: [`Cli`], its [`Command`]s and
//! the dispatch to one file per command (`commands/`); what every command
//! shares is in `vm_args.rs` (the VM options, exit codes) and
//! `report_args.rs` (`--format`, `-o`).

mod commands;
mod progress;
mod report_args;
mod save;
mod signals;
mod vm_args;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use vm_args::{EXIT_CODES, with_vm};

/// `lupa --version`: the crate's version and the git revision it was built from.
pub(crate) const VERSION: &str =
    concat!(env!("CARGO_PKG_VERSION"), " (", env!("LUPA_GIT_REV"), ")");

#[derive(Parser, Debug)]
#[command(
    name = "lupa",
    after_help = EXIT_CODES,
    version = VERSION,
    about = "Lupa: a SOM Smalltalk VM built to observe programs",
    long_about = "Lupa runs SOM Smalltalk programs. Classes are looked up along the class path \
(-cp DIR:DIR, searched in order) and then in Lupa's bundled class library.\n\n\
`lupa -cp DIR Foo a b` is short for `lupa run -cp DIR Foo a b`."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a program: load CLASS, send it `new run` (or `new run: args` if it understands run:).
    #[command(after_help = EXIT_CODES)]
    Run(commands::run::RunArgs),
    /// Run SUnit tests: the named TestCase classes, or every TestCase subclass on the class path
    /// (the bundled test suites when no class path is given). Ends with `N passed, M failed`.
    #[command(after_help = EXIT_CODES)]
    Test(commands::test::TestArgs),
    /// Count message sends per method (Compteur): run CLASS like `run`, charging every executed send
    /// to the method that executed it. Prints a ranking and a call tree, or writes a report file.
    #[command(after_help = EXIT_CODES)]
    Count(commands::count::CountArgs),
    /// Test coverage (Spy's TestCoverage, after Hapao): run SUnit tests like `test` (same output,
    /// same exit code) and report which methods and lines of the covered packages ran, how often,
    /// on how many distinct receivers, and which tests reached them.
    #[command(after_help = EXIT_CODES)]
    Coverage(commands::coverage::CoverageArgs),
    /// Type feedback (Spy's TypeProfiler): run SUnit tests (or a program, --run CLASS ARGS) and
    /// report, per method of the profiled packages, the classes of its arguments and answer,
    /// generalised to their common superclass, and the argument classes that sibling
    /// implementations saw and it did not.
    #[command(after_help = EXIT_CODES)]
    Types(commands::types::TypesArgs),
    /// Time profiling blueprints (Spy's BlueprintProfiler): run CLASS like `run`, counted, with the
    /// methods of the profiled packages watched, then once more (sampled), and draw the
    /// structural blueprint (classes, methods as boxes) or the behavioral one (the call graph):
    /// height = time, width = executions, gray = every call answered the same object.
    #[command(after_help = EXIT_CODES)]
    Blueprint(commands::blueprint::BlueprintArgs),
    /// Sample the whole VM (VMProfiler): run CLASS like `run` while the VM thread records, at
    /// jittered deadlines it checks itself (no sampler thread; one with --native), the Smalltalk stack and what the VM is doing (interpreting, running native
    /// code the JIT compiled, a primitive, a method lookup, a scavenge, a full GC, a process switch,
    /// an allocation, finalization, waiting in a file call, idle until a Delay expires, the JIT
    /// compiling or evicting), weighted by the VM thread's CPU time. Prints where the time went
    /// (native and interpreted code by method and bytecode range, the runtime by VM state), a
    /// ranking and a call tree, or writes a report file.
    #[command(after_help = EXIT_CODES)]
    Profile(commands::profile::ProfileArgs),
    /// Object lifetimes (Illimani): run CLASS like `run` while sampled allocations are followed
    /// from birth to death (by the VM, or by the paper's MethodProxies and ephemerons with
    /// --mode faithful); report lifetime densities on three clocks (bytes allocated, time,
    /// collections survived), allocation sites and their short/long/immortal advice.
    #[command(after_help = EXIT_CODES)]
    Lifetimes(commands::lifetimes::LifetimesArgs),
    /// Estimate time from message counts (Compteur, section 3): run a basket of programs several
    /// times, measure wall time and sends, and fit the message rate with its confidence interval.
    #[command(after_help = EXIT_CODES)]
    Calibrate(commands::calibrate::CalibrateArgs),
    /// Ranking stability (Compteur, section 4.4): profile a program several times by counting and
    /// by timing, and compare the instability psi of the first methods of each ranking.
    #[command(after_help = EXIT_CODES)]
    Stability(commands::stability::StabilityArgs),
    /// MethodProxies benchmark (the paper's tables 2, 3 and 5): instrument every method of several
    /// bundled projects with each technique (trap methods, run:with:in:, source rewriting) and each
    /// handler, and report instrumentation, execution and uninstrumentation overheads.
    #[command(name = "proxies-bench", after_help = EXIT_CODES)]
    ProxiesBench(commands::proxies_bench::ProxiesArgs),
    /// GC parameter benchmark (the Illimani paper's tables 1 and 3-5): run an allocation-heavy
    /// workload (GcLoad, or loading generated CSV files into a DataFrame with --workload
    /// dataframe) under the default GC parameters and under larger configurations, and report GC
    /// time, total time, scavenges and full GCs.
    #[command(name = "gc-bench", after_help = EXIT_CODES)]
    GcBench(commands::gcbench::GcBenchArgs),
    /// GC tuning for a program: profile its object lifetimes, propose GC parameters from them
    /// (each with its reason), search the same parameters black-box under a time budget, and
    /// measure both against the defaults in interleaved runs (speed-ups with 95% intervals).
    #[command(name = "gc-tune", after_help = commands::gctune::EXIT_CODES)]
    GcTune(commands::gctune::GcTuneArgs),
    /// Profile history across versions (Hip, the Spy paper's section 4.3): record a program's
    /// send counts (exact), sampled CPU time or test coverage per method for each version (or git
    /// revision) in SQLite or PostgreSQL, list them, compare two
    /// versions (higher, lower, unchanged, removed, new), follow a method, check for growth.
    #[command(after_help = commands::history::EXIT_CODES)]
    History(commands::history::HistoryArgs),
    /// Run a bundled benchmark: NAME (Richards, DeltaBlue, Json, NBody, Havlak, CD, Bounce, List,
    /// Mandelbrot, Permute, Queens, Sieve, Storage, Towers, or All) [ITERATIONS [INNER]].
    #[command(after_help = EXIT_CODES)]
    Bench(commands::bench::BenchArgs),
    /// Write the shell completion script for bash, zsh or fish to standard output
    /// (`source <(lupa completions bash)`).
    Completions(commands::completions::CompletionsArgs),
    /// Write the manual page (roff) of lupa, or of one command, to standard output
    /// (`lupa man | man -l -`, `lupa man count | man -l -`).
    Man(commands::man::ManArgs),
}

/// The command line as `--help`, the completions and the man page show it:
/// in every command, the command's own options first ("Options") and the
/// VM flags it shares with the other commands after them, under their own
/// heading ([`vm_args::VM_HEADING`]). (clap carries the heading of a
/// flattened group over to the options declared after it; they get theirs
/// back here.)
pub(crate) fn command() -> clap::Command {
    let vm = <vm_args::VmArgs as clap::Args>::augment_args(clap::Command::new("vm"));
    let ids: Vec<clap::Id> = vm.get_arguments().map(|a| a.get_id().clone()).collect();
    own_options_first(<Cli as clap::CommandFactory>::command(), &ids)
}

fn own_options_first(mut cmd: clap::Command, vm: &[clap::Id]) -> clap::Command {
    let strays: Vec<clap::Id> = cmd
        .get_arguments()
        .filter(|a| a.get_help_heading() == Some(vm_args::VM_HEADING) && !vm.contains(a.get_id()))
        .map(|a| a.get_id().clone())
        .collect();
    for id in strays {
        cmd = cmd.mut_arg(id, |a| a.help_heading(None::<&str>));
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in subs {
        cmd = cmd.mut_subcommand(name, |c| own_options_first(c, vm));
    }
    cmd
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
        let cmd = command();
        let known = cmd.get_subcommands().any(|c| c.get_name() == first)
            || ["help", "-h", "--help", "-V", "--version"].contains(&first);
        if !known {
            argv.insert(1, "run".into());
        }
    }
    let parsed = command()
        .try_get_matches_from(&argv)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
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
    if matches!(
        &cli.command,
        Command::Count(_) | Command::Profile(_) | Command::Lifetimes(_) | Command::Coverage(_)
    ) {
        signals::stop_gracefully();
    }
    match cli.command {
        Command::Run(a) => commands::run::main(&a),
        Command::Test(t) => with_vm(&t.vm, |vm| commands::test::run(vm, &t)),
        Command::Count(c) => with_vm(&c.vm, |vm| commands::count::run(vm, &c)),
        Command::Profile(p) => with_vm(&p.vm, |vm| commands::profile::run(vm, &p)),
        Command::Coverage(c) => with_vm(&c.vm, |vm| commands::coverage::run(vm, &c)),
        Command::Types(t) => with_vm(&t.vm, |vm| commands::types::run(vm, &t)),
        Command::Blueprint(b) => with_vm(&b.vm, |vm| commands::blueprint::run(vm, &b)),
        Command::Lifetimes(l) => with_vm(&l.vm, |vm| commands::lifetimes::run(vm, &l)),
        Command::Calibrate(c) => commands::calibrate::main(&c),
        Command::Stability(s) => commands::stability::main(&s),
        Command::ProxiesBench(p) => commands::proxies_bench::main(&p),
        Command::GcBench(g) => commands::gcbench::main(&g),
        Command::GcTune(g) => commands::gctune::main(&g),
        Command::History(h) => commands::history::main(&h),
        Command::Bench(b) => commands::bench::main(&b),
        Command::Completions(c) => commands::completions::main(&c),
        Command::Man(m) => commands::man::main(&m),
    }
}
