//! What every command that runs a VM shares: the VM flags ([`VmArgs`]: class
//! path, seeds, heap and GC parameters, checks), the VM options they make
//! ([`options`]), making the VM with the profilers installed ([`with_vm`]),
//! printing its statistics (`--gc-stats`), and the exit codes that errors
//! map to.
//!
//! The GC parameter flags (`--eden-size`, `--growth-headroom`,
//! `--shrink-threshold`, `--gc-ratio`, `--tenuring-threshold`, `--max-heap`)
//! are not declared here: [`GcFlags`] builds them with clap's builder API from
//! lupa-heap's table of GC parameters ([`GcParam::info`]: flag, value name,
//! help, parser), so that a parameter has one description.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use lupa_heap::units::size_label;
use lupa_heap::{GcParam, GcSettings};
use lupa_vm::{JitMode, Vm, VmError, VmOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// The exit codes every command shares, shown in `--help`.
pub(crate) const EXIT_CODES: &str = "Exit codes:
  0    success (run: the program ended normally or with `system exit: 0`)
  1    an uncaught Smalltalk error (with a backtrace), failed tests, or `system exit:`
       with a status outside 0..255 (reported); run: the program's own `system exit: N`
  2    bad usage (unknown option, missing argument, argument that is not UTF-8; a
       --package that names no package, or for count a --class or --package no method
       that ran is in)
  65   a syntax or compile error in a class file (file:line:col)
  66   a class that cannot be found
  69   gc-bench: --memory-limit on a machine that cannot give it (no memory cgroup this
       process may create cgroups in, or no swap)
  70   a fatal runtime error (deadlock, error while handling an error); stability: the
       profiled program failed
  74   a file or the standard output cannot be read or written (checked before the run
       for -o FILE)
  130  interrupted by SIGINT (Ctrl-C; 143: SIGTERM); count, profile, lifetimes and
       coverage stop the program and still write the report of what ran, saying so (a
       second signal ends the process at once)
  134  a bug in the VM: a Rust panic prints its message and aborts (SIGABRT; a debug
       build unwinds and exits with 101)";

/// The heading of the VM flags in every command's `--help`, after the
/// command's own options.
pub(crate) const VM_HEADING: &str = "VM options (shared by the commands that run a VM)";

#[derive(Args, Debug, Clone)]
#[command(next_help_heading = VM_HEADING)]
pub(crate) struct VmArgs {
    /// Class path (also spelled -cp, as SOM VMs do): directories separated by ':' searched
    /// before the bundled library.
    #[arg(
        long = "cp",
        alias = "classpath",
        value_name = "DIR:DIR",
        global = true
    )]
    pub(crate) class_path: Option<String>,
    /// Do not search the bundled class library.
    #[arg(long, global = true)]
    pub(crate) no_bundled: bool,
    /// Seed of identity hashes and `atRandom` (runs are deterministic for a given seed).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) hash_seed: Option<u64>,
    #[command(flatten)]
    pub(crate) gc: GcFlags,
    /// Collect garbage at every safepoint after an allocation (slow; for testing the VM).
    #[arg(long, global = true)]
    pub(crate) gc_stress: bool,
    /// Allocate the objects of the long-lived and immortal sites of FILE (written by
    /// `lupa lifetimes --format advice`) directly in old space.
    #[arg(long, value_name = "FILE", global = true, value_parser = parse_pretenure)]
    pub(crate) pretenure: Option<PretenureArg>,
    /// Check the whole heap after every collection.
    #[arg(long, global = true)]
    pub(crate) verify_heap: bool,
    /// Maximum number of nested activations before a stack-overflow error.
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_stack_depth: Option<usize>,
    /// Print garbage-collector and send statistics to stderr at exit.
    #[arg(long, global = true)]
    pub(crate) gc_stats: bool,
    /// The JIT: `on` compiles methods and blocks to native code once they are hot (the
    /// default), `always` at their first activation, `off` interprets everything.
    #[arg(long, value_name = "MODE", global = true, value_parser = parse_jit_mode)]
    pub(crate) jit: Option<JitMode>,
    /// Activations plus backward jumps of a method or block before the JIT compiles it
    /// (default 2000).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) jit_threshold: Option<u32>,
    /// `on` (the default) compiles hot code on a compiler thread while the VM thread goes on
    /// interpreting it, and installs the native code at a later safepoint; `off` compiles on the
    /// VM thread where the code got hot (deterministic compile points). `--jit always` always
    /// compiles on the VM thread.
    #[arg(long, value_name = "on|off", global = true, value_parser = parse_on_off)]
    pub(crate) jit_thread: Option<bool>,
    /// Size of the JIT's code zone, e.g. 32MB (the default); when it is full, the quarter of
    /// the code entered least is evicted.
    #[arg(long, value_name = "SIZE", global = true, value_parser = lupa_heap::units::parse_size)]
    pub(crate) code_zone: Option<usize>,
    /// Print the JIT's statistics to stderr at exit (functions compiled, code size, compile
    /// time, evictions).
    #[arg(long, global = true)]
    pub(crate) jit_stats: bool,
    /// Name each compilation of the JIT on stderr.
    #[arg(long, global = true)]
    pub(crate) jit_log: bool,
    /// Write /tmp/perf-PID.map, naming the JIT's native functions for Linux perf and samply.
    #[arg(long, global = true)]
    pub(crate) perf_map: bool,
}

/// `--jit-thread on|off`.
fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("'{s}' is neither on nor off")),
    }
}

/// `--jit off|on|always`.
fn parse_jit_mode(s: &str) -> Result<JitMode, String> {
    JitMode::from_name(s).ok_or_else(|| format!("'{s}' is not a JIT mode (off, on, always)"))
}

/// The GC parameters set by flags: one flag per parameter of lupa-heap's
/// table that has one ([`lupa_heap::ParamInfo::flag`]), global to the
/// subcommands.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GcFlags(pub(crate) GcSettings);

impl GcFlags {
    /// The parameters that are flags, in the table's order.
    fn flagged() -> impl Iterator<Item = (GcParam, &'static str)> {
        GcParam::ALL
            .into_iter()
            .filter_map(|p| p.info().flag.map(|f| (p, f)))
    }

    /// The flag of `p` (its argument id is the parameter's name).
    fn arg(p: GcParam, flag: &'static str) -> Arg {
        let info = p.info();
        Arg::new(info.name)
            .long(flag.trim_start_matches('-'))
            .value_name(info.unit.value_name())
            .help(info.help)
            .help_heading(VM_HEADING)
            .global(true)
            .action(ArgAction::Set)
            .value_parser(move |s: &str| p.parse(s))
    }
}

impl FromArgMatches for GcFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut s = GcSettings::default();
        for (p, _) in GcFlags::flagged() {
            if let Some(v) = m.get_one::<f64>(p.name()) {
                s.set(p, *v);
            }
        }
        Ok(GcFlags(s))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        for (p, _) in GcFlags::flagged() {
            if let Some(v) = m.get_one::<f64>(p.name()) {
                self.0.set(p, *v);
            }
        }
        Ok(())
    }
}

impl Args for GcFlags {
    fn augment_args(cmd: Command) -> Command {
        GcFlags::flagged().fold(cmd, |cmd, (p, flag)| cmd.arg(GcFlags::arg(p, flag)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        GcFlags::augment_args(cmd)
    }
}

/// A class path as the `--cp` flags take it (`DIR:DIR`, empty parts ignored).
pub(crate) fn class_path(cp: Option<&str>) -> Vec<PathBuf> {
    cp.unwrap_or("")
        .split(':')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// The VM options the flags ask for.
pub(crate) fn options(a: &VmArgs) -> VmOptions {
    let mut o = VmOptions::default();
    if a.class_path.is_some() {
        o.class_path = class_path(a.class_path.as_deref());
    }
    o.use_bundled = !a.no_bundled;
    if let Some(s) = a.hash_seed {
        o.heap.hash_seed = s;
    }
    a.gc.0.apply(&mut o.heap);
    if let Some(p) = &a.pretenure {
        o.pretenure = p.0.clone();
    }
    o.heap.stress = a.gc_stress;
    // Debug builds (the test suite) always verify the heap after every collection.
    o.verify_heap = a.verify_heap || o.verify_heap;
    if let Some(d) = a.max_stack_depth {
        o.max_frames = d.max(100);
    }
    o.jit = a.jit.unwrap_or_default();
    if let Some(t) = a.jit_threshold {
        o.jit_threshold = t;
    }
    if let Some(t) = a.jit_thread {
        o.jit_thread = t;
    }
    if let Some(z) = a.code_zone {
        o.code_zone_bytes = z;
    }
    o.jit_log = a.jit_log;
    o.perf_map = a.perf_map;
    lupa_jit::with_jit(o)
}

/// The process status for a program's `system exit: code`: 0..=255 as is; any other
/// value (negative, or too large for a Unix status) is reported and exits 1, so that
/// it never reads as success.
pub(crate) fn exit_status(code: i32) -> ExitCode {
    match u8::try_from(code) {
        Ok(c) => ExitCode::from(c),
        Err(_) => {
            eprintln!("lupa: exit status {code} is outside 0..255; exiting with status 1");
            ExitCode::from(1)
        }
    }
}

pub(crate) fn report(e: &VmError) -> ExitCode {
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
        VmError::Interrupted(status) => {
            eprintln!("lupa: interrupted");
            exit_status(*status)
        }
    }
}

fn print_stats(vm: &mut Vm, args: &VmArgs) {
    if args.jit_stats {
        match (lupa_jit::stats(vm), vm.jit_unavailable()) {
            (Some(s), _) => eprint!("{}", s.report()),
            (None, Some(why)) => eprintln!("jit: not installed: {why}"),
            (None, None) => eprintln!("jit: off"),
        }
    }
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
    if let Some(j) = lupa_jit::stats(vm) {
        eprintln!(
            "code zone:          {} of {} in use (native code, outside the heap), {} evictions",
            size_label(j.zone_used),
            size_label(j.zone_bytes),
            j.evictions
        );
    }
    if let Some((minor, major)) = lupa_heap::page_faults() {
        eprintln!("page faults:        {minor} minor, {major} major (the whole process)");
    }
    if args.pretenure.is_some() {
        let (objects, bytes) = vm.pretenured();
        eprintln!(
            "pretenured:         {objects} objects, {} (allocated in old space by the advice)",
            size_label(bytes as usize)
        );
    }
}

pub(crate) fn with_vm(args: &VmArgs, f: impl FnOnce(&mut Vm) -> Result<i32, VmError>) -> ExitCode {
    let mut vm = match Vm::new(options(args)) {
        Ok(vm) => vm,
        Err(e) => return report(&e),
    };
    if args.perf_map
        && let Some(why) = vm.jit_unavailable()
    {
        eprintln!("lupa: warning: --perf-map: no native code is made ({why})");
    }
    // Smalltalk code may start profilers (`Compteur profile: aBlock`).
    lupa_profilers::install(&mut vm);
    let mut r = f(&mut vm);
    // Output the program wrote but that never reached its destination is a failure.
    if let (Ok(_), Err(e)) = (&r, vm.io.flush()) {
        r = Err(e);
    }
    print_stats(&mut vm, args);
    match r {
        Ok(code) => exit_status(code),
        Err(e) => report(&e),
    }
}

/// The sites of a pretenuring advice file (`--pretenure FILE`), one per class
/// of each site, for the VM.
#[derive(Debug, Clone, Default)]
pub(crate) struct PretenureArg(pub(crate) Vec<lupa_vm::PretenureSite>);

/// Read and check an advice file written by `lupa lifetimes --format advice`.
pub(crate) fn parse_pretenure(path: &str) -> Result<PretenureArg, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let advice =
        lupa_prof::lifetimes::advice::Advice::parse(&text).map_err(|e| format!("{path}: {e}"))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use lupa_lab::{GcConfig, WorkerArgs, gc_config::paper_configs};

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        vm: VmArgs,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        program: Vec<String>,
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("lupa").chain(args.iter().copied()))
    }

    #[test]
    fn every_flagged_parameter_is_a_flag_with_the_tables_help() {
        let cmd = <Cli as clap::CommandFactory>::command();
        for p in GcParam::ALL {
            let arg = cmd.get_arguments().find(|a| a.get_id() == p.name());
            match p.info().flag {
                Some(flag) => {
                    let arg = arg.unwrap_or_else(|| panic!("{flag} is a flag"));
                    assert_eq!(
                        arg.get_long().map(|l| format!("--{l}")).as_deref(),
                        Some(flag)
                    );
                    assert_eq!(
                        arg.get_help().map(ToString::to_string).as_deref(),
                        Some(p.info().help)
                    );
                }
                None => assert!(arg.is_none(), "{} has no flag", p.name()),
            }
        }
    }

    #[test]
    fn flags_fill_the_heap_configuration() {
        let cli = parse(&[
            "--eden-size",
            "64MB",
            "--gc-ratio",
            "250%",
            "--tenuring-threshold",
            "7",
            "--max-heap",
            "1GB",
            "Foo",
        ])
        .expect("parses");
        let o = options(&cli.vm);
        assert_eq!(o.heap.eden_size, 64 << 20);
        assert_eq!(o.heap.gc_ratio, 2.5);
        assert_eq!(o.heap.tenuring_threshold, 7);
        assert_eq!(o.heap.max_heap, 1 << 30);
        // Not given: the table's default.
        assert_eq!(o.heap.growth_headroom, 16 << 20);
        let e = parse(&["--tenuring-threshold", "20", "Foo"]).expect_err("out of range");
        assert!(e.to_string().contains("20 is not in 1..=15"), "{e}");
        let e = parse(&["--eden-size", "lots", "Foo"]).expect_err("not a size");
        assert!(e.to_string().contains("invalid size 'lots'"), "{e}");
    }

    /// What a worker is told parses back, through these flags, to the
    /// configuration it was made from.
    #[test]
    fn worker_arguments_parse_back_to_their_configuration() {
        let mut odd = GcConfig::defaults().named("odd");
        odd.set(GcParam::EdenSize, 1_572_864.0);
        odd.set(GcParam::GcRatio, 0.23);
        odd.set(GcParam::TenuringThreshold, 1.0);
        for config in paper_configs().into_iter().chain([odd]) {
            let w = WorkerArgs {
                config: config.clone(),
                class_path: vec![PathBuf::from("a"), PathBuf::from("b")],
                program: vec!["GcLoad".to_string(), "200".to_string()],
            };
            let args = w.to_args();
            assert_eq!(&args[..2], ["run", lupa_lab::worker::STATS_FLAG]);
            let refs: Vec<&str> = args[2..].iter().map(String::as_str).collect();
            let cli = parse(&refs).expect("the worker's flags parse");
            assert_eq!(cli.vm.gc.0, config.settings, "{}", config.name);
            assert_eq!(cli.program, ["GcLoad", "200"]);
            let o = options(&cli.vm);
            assert_eq!(o.class_path, w.class_path);
            assert_eq!(
                o.heap.settings(),
                config.heap(&Default::default()).settings()
            );
        }
    }
}
