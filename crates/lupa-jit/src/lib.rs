//! `lupa-jit`: Lupa's JIT compiler. Hot methods and blocks are compiled with
//! Cranelift into native functions that run on the interpreter's own frames
//! and value stack (as V8's Sparkplug does), so that any native activation
//! can be continued by the interpreter at a resume point and every observer
//! of the VM sees what it sees in interpreted code.
//!
//! | module | what |
//! | --- | --- |
//! | `unit` | what codegen reads of a method, copied on the VM thread ([`Send`]) |
//! | `codegen` | bytecode -> Cranelift IR -> machine code, with its pc map (`codegen/lines.rs`: line coverage's arrivals, counted by code compiled while lines are counted; `codegen/watch.rs`: method watches' cells, asked by code compiled under a watch; `codegen/stubs.rs`: the shared entry stubs a direct entry calls) |
//! | `worker` | the compiler thread (`--jit-thread on`) |
//! | `zone` | the code zone (W^X, eviction, the entry stubs pinned at its start), entering and leaving native code: the crate's only `unsafe` |
//! | `perf_map` | `/tmp/perf-PID.map` for Linux perf and samply (`--perf-map`) |
//! | `stats` | what was compiled, how long it took, what was evicted ([`JitStats`]) |
//!
//! Use: make a VM with options that name this crate's [`factory`]
//! ([`with_jit`]); the interpreter compiles what gets hot (per
//! `VmOptions::jit` and `jit_threshold`), on a compiler thread with
//! `VmOptions::jit_thread` and `--jit on`.
//!
//! **Two ways to compile, one installation.** Either way the VM thread
//! copies what codegen reads of the method (`unit.rs`'s `Unit`, at the
//! safepoint where it got hot) and later installs the machine code in the
//! code zone (at a safepoint: the zone is the VM thread's alone). In
//! between, Cranelift runs on the VM thread ([`Jit::compile`]) or on the
//! compiler thread ([`Jit::submit`], then [`Jit::install_ready`]). A result
//! from the thread is installed only on the very `MethodCode` it was made
//! from (its `Weak` still upgrades; the image keeps every method for the
//! run, so it does unless the VM is ending) that has no native code yet:
//! the code embeds the addresses of that `MethodCode`'s cells (literals,
//! selector ids, inline caches), and whatever changed meanwhile (a cache
//! refilled, a method redefined, the epoch bumped) is checked by the code
//! itself at run time, as it is for code compiled in place and run later.
//!
//! ```
//! use lupa_vm::{JitMode, Vm, VmOptions};
//! let options = VmOptions { quiet: true, jit: JitMode::Always, ..VmOptions::default() };
//! let mut vm = Vm::new(lupa_jit::with_jit(options)).expect("vm");
//! assert_eq!(vm.run_main(&["Hello".to_string()]).expect("runs"), 0);
//! assert!(lupa_jit::stats(&vm).is_some() || !lupa_jit::SUPPORTED);
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod codegen;
mod perf_map;
mod stats;
#[cfg(test)]
mod tests;
mod unit;
mod worker;
#[allow(unsafe_code)]
mod zone;

pub use stats::{JitStats, ThreadStats};

use codegen::Entries;
use cranelift_codegen::Context;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use lupa_vm::{
    CompileOptions, Image, Installed, Jit, JitWork, MethodCode, NativeFn, NativeFunctionInfo, Vm,
    VmOptions,
};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use std::time::{Duration, Instant};
use unit::Unit;

/// Does this target run native code? (x86-64 Linux; elsewhere [`factory`]
/// fails and the VM interprets everything.)
pub const SUPPORTED: bool = cfg!(all(target_arch = "x86_64", target_os = "linux"));

/// Why the JIT cannot be installed.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    /// Not x86-64 Linux.
    #[error("the JIT runs on x86-64 Linux only")]
    Unsupported,
    /// Cranelift does not know this machine.
    #[error("the JIT does not support this machine: {0}")]
    Isa(String),
    /// The code zone could not be mapped.
    #[error("{0}")]
    Zone(String),
}

/// The factory `VmOptions::jit_factory` takes: a JIT for a VM with
/// `options` (its code zone of `code_zone_bytes`), or why there is none.
pub fn factory(options: &VmOptions) -> Result<Box<dyn Jit>, String> {
    if !SUPPORTED {
        return Err(JitError::Unsupported.to_string());
    }
    let mut jit = CraneliftJit::new(options.code_zone_bytes).map_err(|e| e.to_string())?;
    if options.perf_map {
        let mut map = perf_map::PerfMap::create()?;
        for stub in &jit.zone.stubs {
            map.note(stub.start, stub.len, &stub.name)?;
        }
        jit.perf_map = Some(map);
    }
    Ok(Box::new(jit))
}

/// This crate's JIT as a VM's factory (`VmOptions::jit_factory`; what the
/// binary gives the VMs it makes, its experiments' too).
pub const FACTORY: lupa_vm::JitFactory = factory;

/// `options` with this crate's JIT as their factory: a VM made with them
/// compiles hot code (as `options.jit` says).
pub fn with_jit(options: VmOptions) -> VmOptions {
    VmOptions {
        jit_factory: Some(FACTORY),
        ..options
    }
}

/// The JIT's statistics, if `vm` has one.
pub fn stats(vm: &Vm) -> Option<JitStats> {
    let jit = vm.jit()?.as_any().downcast_ref::<CraneliftJit>()?;
    Some(jit.stats(vm))
}

/// The JIT: a Cranelift backend for the host, its scratch state, the code
/// zone and its statistics, and the compiler thread with what it was given.
struct CraneliftJit {
    isa: OwnedTargetIsa,
    ctx: Context,
    fctx: FunctionBuilderContext,
    zone: zone::CodeZone,
    entries: Entries,
    stats: stats::Counts,
    /// Where functions are named for perf (`--perf-map`).
    perf_map: Option<perf_map::PerfMap>,
    /// The compiler thread, started at the first [`Jit::submit`].
    worker: Option<worker::Worker>,
    /// Why there is no compiler thread any more (it could not start, or
    /// ended): nothing more is submitted.
    worker_lost: Option<String>,
    /// The jobs given to the compiler thread and not installed yet, oldest
    /// first.
    queued: VecDeque<Queued>,
    /// The next job's ticket.
    next_ticket: u64,
}

/// A job the compiler thread holds, as the VM thread remembers it.
struct Queued {
    ticket: u64,
    /// Its method or block: the result is installed on it alone.
    method: Weak<MethodCode>,
    /// Its entry counter's slot in the zone (given back if not installed).
    slot: usize,
    /// The options it was compiled with: installed only while they are
    /// still those in force.
    options: CompileOptions,
}

/// The calling thread's CPU time (or, where that clock cannot be read, the
/// time since the first call): what the VM thread's part of a compilation
/// on the compiler thread is measured with. On a loaded machine the wall
/// time around waking the compiler thread includes the VM thread being
/// preempted (the woken thread runs first), which is not work done.
fn thread_clock() -> Duration {
    zone::thread_cpu_time().unwrap_or_else(|| {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        START.get_or_init(Instant::now).elapsed()
    })
}

/// The Cranelift target for this machine, with the JIT's settings.
fn host_isa() -> Result<OwnedTargetIsa, JitError> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v).map_err(|e| JitError::Isa(e.to_string()))
    };
    // Cranelift's own optimisations cost a third of the compile time and
    // bought nothing measurable on the bundled benchmarks (the code is
    // straight-line templates over SSA operands already).
    set(&mut flags, "opt_level", "none")?;
    // Nothing unwinds through native code (panics abort; the VM leaves
    // native code by returning a status): no unwind tables to make.
    set(&mut flags, "unwind_info", "false")?;
    // The context lives in the pinned register (r15 on x86-64, which the
    // register allocator then never takes): callee-saved for the runtime,
    // it survives every call out of native code, where a value in any other
    // register is spilled and reloaded (codegen's `Gen::ctx`).
    set(&mut flags, "enable_pinned_reg", "true")?;
    // The single-pass register allocator halves compile time but makes
    // code 2x larger and Json, DeltaBlue, CD and Richards 1.3-1.8x
    // slower in CPU time: backtracking stays (ARCHITECTURE.md, "The JIT").
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    cranelift_native::builder()
        .map_err(|e| JitError::Isa(e.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Isa(e.to_string()))
}

/// The addresses of the runtime's entry points, which native code calls.
fn runtime_entries() -> Entries {
    Entries {
        send: zone::rt_send as *const () as u64,
        primitive: zone::rt_primitive as *const () as u64,
        ret: zone::rt_return as *const () as u64,
        bail: zone::rt_bail as *const () as u64,
        push_block: zone::rt_push_block as *const () as u64,
        global: zone::rt_global as *const () as u64,
        string_equal: zone::rt_string_equal as *const () as u64,
        store: zone::rt_store as *const () as u64,
        sample: zone::rt_sample as *const () as u64,
        watched_call: zone::rt_watched_call as *const () as u64,
        stubs: [0; codegen::stubs::SHAPES],
    }
}

impl CraneliftJit {
    fn new(zone_bytes: usize) -> Result<CraneliftJit, JitError> {
        let isa = host_isa()?;
        let mut zone =
            zone::CodeZone::new(zone_bytes).map_err(|e| JitError::Zone(e.to_string()))?;
        let mut ctx = Context::new();
        let mut fctx = FunctionBuilderContext::new();
        // The shared entry stubs first: every function calls them.
        let mut entries = runtime_entries();
        for shape in 0..codegen::stubs::SHAPES {
            let code = codegen::stubs::compile_stub(&*isa, &mut ctx, &mut fctx, shape)
                .map_err(JitError::Zone)?;
            entries.stubs[shape] = zone
                .install_stub(&code, codegen::stubs::name(shape))
                .map_err(|e| JitError::Zone(e.to_string()))?;
        }
        Ok(CraneliftJit {
            isa,
            ctx,
            fctx,
            zone,
            entries,
            stats: stats::Counts::default(),
            perf_map: None,
            worker: None,
            worker_lost: None,
            queued: VecDeque::new(),
            next_ticket: 0,
        })
    }

    fn stats(&self, vm: &Vm) -> JitStats {
        let thread = self.worker.as_ref().map(|w| stats::ThreadCounts {
            cpu_time: w.cpu_time(),
            queued: self.queued.len(),
            lost: self.worker_lost.clone(),
        });
        self.stats.report(&self.zone, vm, thread)
    }

    /// Put `compiled` (made for `code`, with the counter of `slot`) in the
    /// code zone: its native function and the line naming it. `took` says
    /// how long the compilation took, asked once it is in place (on the VM
    /// thread that includes installing it); `where_` where it was made.
    #[allow(clippy::too_many_arguments)] // a compilation's parts, from either thread
    fn install(
        &mut self,
        code: &Rc<MethodCode>,
        compiled: codegen::Compiled,
        slot: usize,
        image: &Image,
        work: &JitWork<'_>,
        took: impl FnOnce() -> Duration,
        where_: &str,
    ) -> Result<(NativeFn, String), String> {
        let name = image
            .describe_method(code.id)
            .map_or_else(|| format!("#{}", code.id), |d| d.display_name());
        let len = compiled.code.len();
        let evictions = self.zone.evictions;
        let f = match self
            .zone
            .install(compiled, Rc::downgrade(code), slot, name.clone(), work)
        {
            Ok(f) => f,
            Err(e) => {
                self.zone.return_counter(slot);
                self.stats.failed += 1;
                return Err(e.to_string());
            }
        };
        if let Some(map) = &mut self.perf_map {
            // After an eviction every function may have moved: name them all
            // again; otherwise only the new one.
            let fresh = if self.zone.evictions != evictions {
                0
            } else {
                self.zone.functions.len().saturating_sub(1)
            };
            let start = self.zone.start();
            let written = self.zone.functions[fresh..]
                .iter()
                .try_for_each(|f| map.note(start + f.offset, f.len, &f.name));
            if written.is_err() {
                // A perf map that cannot be written (a full /tmp) is given
                // up; the code runs on.
                self.perf_map = None;
                self.stats.perf_map_lost = true;
            }
        }
        let compile_time = took();
        self.stats.note(code, name.clone(), len, compile_time);
        let line = format!(
            "jit: compiled {name} ({} instructions -> {len} bytes) in {} us{where_}",
            code.ops.len(),
            compile_time.as_micros()
        );
        Ok((f, line))
    }

    /// Start the compiler thread if it is not running; `Err`: why there is
    /// none.
    fn ensure_worker(&mut self) -> Result<&worker::Worker, String> {
        if let Some(why) = &self.worker_lost {
            return Err(why.clone());
        }
        if self.worker.is_none() {
            match worker::Worker::spawn(self.isa.clone()) {
                Ok(w) => self.worker = Some(w),
                Err(e) => {
                    let why = format!("the compiler thread could not start: {e}");
                    self.worker_lost = Some(why.clone());
                    return Err(why);
                }
            }
        }
        self.worker
            .as_ref()
            .ok_or_else(|| "no compiler thread".to_string())
    }

    /// A result from the compiler thread for `q`: installed when its
    /// method is still there without native code and it was made with the
    /// `options` in force (else dropped: `None`; the VM made the method's
    /// hotness start over when the options changed).
    fn finish(
        &mut self,
        q: Queued,
        done: worker::Done,
        image: &Image,
        options: CompileOptions,
        work: &JitWork<'_>,
    ) -> Option<Installed> {
        let Some(code) = q
            .method
            .upgrade()
            .filter(|m| m.native.get().is_none() && q.options == options)
        else {
            self.zone.return_counter(q.slot);
            self.stats.dropped += 1;
            return None;
        };
        let r = match done.result {
            Ok(compiled) => self.install(
                &code,
                compiled,
                q.slot,
                image,
                work,
                || done.elapsed,
                " on the compiler thread (its CPU time)",
            ),
            Err(e) => {
                self.zone.return_counter(q.slot);
                self.stats.failed += 1;
                Err(e)
            }
        };
        Some((code, r))
    }
}

impl Jit for CraneliftJit {
    fn runtime_entries(&self) -> [u64; lupa_vm::RUNTIME_ENTRIES] {
        self.entries.table()
    }

    fn compile(
        &mut self,
        code: &Rc<MethodCode>,
        image: &Image,
        options: CompileOptions,
        work: &JitWork<'_>,
    ) -> Result<(NativeFn, String), String> {
        let t0 = Instant::now();
        let (slot, counter) = self
            .zone
            .take_counter()
            .ok_or_else(|| "the code zone has no room for another function".to_string())?;
        let unit = Unit::of(code, image, options, work.watching());
        let compiled = codegen::compile(&*self.isa, &mut self.ctx, &mut self.fctx, &unit, counter);
        let compiled = match compiled {
            Ok(c) => c,
            Err(e) => {
                self.zone.return_counter(slot);
                self.stats.failed += 1;
                return Err(e);
            }
        };
        // The compile time of a function compiled here includes installing
        // it (and any eviction): the VM thread pays for both.
        self.install(code, compiled, slot, image, work, || t0.elapsed(), "")
    }

    fn submit(
        &mut self,
        code: &Rc<MethodCode>,
        image: &Image,
        options: CompileOptions,
        work: &JitWork<'_>,
    ) -> Result<(), String> {
        let t0 = thread_clock();
        self.ensure_worker()?;
        let (slot, counter) = self
            .zone
            .take_counter()
            .ok_or_else(|| "the code zone has no room for another function".to_string())?;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let job = worker::Job {
            ticket,
            unit: Box::new(Unit::of(code, image, options, work.watching())),
            counter,
        };
        let sent = match &self.worker {
            Some(w) => w.submit(job).is_ok(),
            None => false,
        };
        if !sent {
            self.zone.return_counter(slot);
            let why = "the compiler thread stopped".to_string();
            self.worker_lost = Some(why.clone());
            return Err(why);
        }
        self.queued.push_back(Queued {
            ticket,
            method: Rc::downgrade(code),
            slot,
            options,
        });
        self.stats.submitted += 1;
        self.stats.vm_thread_time += thread_clock().saturating_sub(t0);
        Ok(())
    }

    fn ready(&self) -> bool {
        match &self.worker {
            Some(w) => w.ready() || (self.worker_lost.is_some() && !self.queued.is_empty()),
            None => false,
        }
    }

    fn install_ready(
        &mut self,
        image: &Image,
        options: CompileOptions,
        work: &JitWork<'_>,
        wait: bool,
    ) -> Vec<Installed> {
        let mut out = Vec::new();
        while !self.queued.is_empty() {
            let taken = match &self.worker {
                Some(w) => w.take(wait),
                None => Err(worker::Stopped),
            };
            let t0 = thread_clock();
            match taken {
                Ok(None) => break,
                Ok(Some(done)) => {
                    let Some(i) = self.queued.iter().position(|q| q.ticket == done.ticket) else {
                        continue;
                    };
                    if let Some(q) = self.queued.remove(i)
                        && let Some(r) = self.finish(q, done, image, options, work)
                    {
                        out.push(r);
                    }
                }
                Err(worker::Stopped) => {
                    // Whatever it held stays interpreted.
                    let why = "the compiler thread stopped".to_string();
                    self.worker_lost.get_or_insert(why.clone());
                    for q in std::mem::take(&mut self.queued) {
                        self.zone.return_counter(q.slot);
                        self.stats.failed += 1;
                        if let Some(m) = q.method.upgrade() {
                            out.push((m, Err(why.clone())));
                        }
                    }
                }
            }
            self.stats.vm_thread_time += thread_clock().saturating_sub(t0);
        }
        out
    }

    fn forget_code(&mut self) {
        self.zone.forget_methods();
    }

    fn functions(&self) -> Vec<NativeFunctionInfo> {
        stats::functions(&self.zone)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
