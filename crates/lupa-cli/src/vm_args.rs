//! What every command that runs a VM shares: the VM options (class path,
//! heap and GC parameters, checks), making the VM with the profilers
//! installed, and the exit codes that errors map to.

use clap::Args;
use lupa_vm::{JitMode, Vm, VmError, VmOptions};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::units::{parse_ratio, parse_size, size_label};

/// The exit codes every command shares, shown in `--help`.
pub(crate) const EXIT_CODES: &str = "Exit codes:
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

#[derive(Args, Debug, Clone)]
pub(crate) struct VmArgs {
    /// Class path: directories separated by ':' searched before the bundled library.
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
    /// Upper bound of the heap, e.g. 512MB, 2GB.
    #[arg(long, value_name = "SIZE", global = true, value_parser = parse_size)]
    pub(crate) max_heap: Option<usize>,
    /// Eden size (Pharo's parameter 45), e.g. 15MB (the default) or 64MB. New space is eden plus
    /// two survivor spaces of eden/5 each.
    #[arg(long, value_name = "SIZE", global = true, value_parser = parse_size)]
    pub(crate) eden_size: Option<usize>,
    /// Growth headroom (Pharo's parameter 25): the minimum amount old space grows by when it is
    /// full, e.g. 16MB (the default) or 128MB.
    #[arg(long, value_name = "SIZE", global = true, value_parser = parse_size)]
    pub(crate) growth_headroom: Option<usize>,
    /// Shrink threshold (Pharo's parameter 24): free old space kept after a full GC before
    /// memory is given back to the system, e.g. 32MB (the default) or 256MB.
    #[arg(long, value_name = "SIZE", global = true, value_parser = parse_size)]
    pub(crate) shrink_threshold: Option<usize>,
    /// Full-GC ratio (Pharo's parameter 55): old-space growth since the last full GC, relative
    /// to its size after it, that triggers the next full GC (default 0.33; e.g. 2.5 or 250%).
    #[arg(long, value_name = "RATIO", global = true, value_parser = parse_ratio)]
    pub(crate) gc_ratio: Option<f64>,
    /// Scavenges an object survives in new space before it is tenured (1-15, default 3).
    #[arg(long, value_name = "N", global = true, value_parser = clap::value_parser!(u32).range(1..=15))]
    pub(crate) tenuring_threshold: Option<u32>,
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
    /// Activations plus backward jumps of a method or block before the JIT compiles it.
    #[arg(long, value_name = "N", global = true)]
    pub(crate) jit_threshold: Option<u32>,
    /// Size of the JIT's code zone, e.g. 32MB (the default); when it is full, the quarter of
    /// the code entered least is evicted.
    #[arg(long, value_name = "SIZE", global = true, value_parser = parse_size)]
    pub(crate) code_zone: Option<usize>,
    /// Print the JIT's statistics to stderr at exit (functions compiled, code size, compile
    /// time, evictions).
    #[arg(long, global = true)]
    pub(crate) jit_stats: bool,
    /// Name each compilation of the JIT on stderr.
    #[arg(long, global = true)]
    pub(crate) jit_log: bool,
}

/// `--jit off|on|always`.
fn parse_jit_mode(s: &str) -> Result<JitMode, String> {
    JitMode::from_name(s).ok_or_else(|| format!("'{s}' is not a JIT mode (off, on, always)"))
}

pub(crate) fn options(a: &VmArgs) -> VmOptions {
    let mut o = VmOptions::default();
    if let Some(cp) = &a.class_path {
        o.class_path = cp
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
    }
    o.use_bundled = !a.no_bundled;
    if let Some(s) = a.hash_seed {
        o.heap.hash_seed = s;
    }
    if let Some(m) = a.max_heap {
        o.heap.max_bytes = m;
    }
    if let Some(e) = a.eden_size {
        o.heap.initial_bytes = e;
    }
    if let Some(h) = a.growth_headroom {
        o.heap.growth_headroom = h;
    }
    if let Some(t) = a.shrink_threshold {
        o.heap.shrink_threshold = t;
    }
    if let Some(r) = a.gc_ratio {
        o.heap.full_gc_ratio = r;
    }
    if let Some(t) = a.tenuring_threshold {
        o.heap.tenuring_threshold = t;
    }
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
    if let Some(z) = a.code_zone {
        o.code_zone_bytes = z;
    }
    o.jit_log = a.jit_log;
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
        size_label(c.initial_bytes),
        size_label(c.growth_headroom),
        size_label(c.shrink_threshold),
        c.full_gc_ratio,
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

pub(crate) fn with_vm(args: &VmArgs, f: impl FnOnce(&mut Vm) -> Result<i32, VmError>) -> ExitCode {
    let mut vm = match Vm::new(options(args)) {
        Ok(vm) => vm,
        Err(e) => return report(&e),
    };
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
