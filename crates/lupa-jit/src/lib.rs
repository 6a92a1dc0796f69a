//! `lupa-jit`: Lupa's JIT compiler. Hot methods and blocks are compiled with
//! Cranelift into native functions that run on the interpreter's own frames
//! and value stack (as V8's Sparkplug does), so that any native activation
//! can be continued by the interpreter at a resume point and every observer
//! of the VM sees what it sees in interpreted code.
//!
//! | module | what |
//! | --- | --- |
//! | `codegen` | bytecode -> Cranelift IR -> machine code, with its pc map |
//! | `zone` | the code zone (W^X, eviction), entering and leaving native code: the crate's only `unsafe` |
//! | `perf_map` | `/tmp/perf-PID.map` for Linux perf and samply (`--perf-map`) |
//! | `stats` | what was compiled, how long it took, what was evicted ([`JitStats`]) |
//!
//! Use: make a VM with options that name this crate's [`factory`]
//! ([`with_jit`]); the interpreter compiles what gets hot (per
//! `VmOptions::jit` and `jit_threshold`).
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
#[allow(unsafe_code)]
mod zone;

pub use stats::JitStats;

use codegen::Entries;
use cranelift_codegen::Context;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use lupa_vm::{Image, Jit, JitWork, MethodCode, NativeFn, NativeFunctionInfo, Vm, VmOptions};
use std::rc::Rc;
use std::time::Instant;

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
        jit.perf_map = Some(perf_map::PerfMap::create()?);
    }
    Ok(Box::new(jit))
}

/// `options` with this crate's JIT as their factory: a VM made with them
/// compiles hot code (as `options.jit` says).
pub fn with_jit(options: VmOptions) -> VmOptions {
    VmOptions {
        jit_factory: Some(factory),
        ..options
    }
}

/// The JIT's statistics, if `vm` has one.
pub fn stats(vm: &Vm) -> Option<JitStats> {
    let jit = vm.jit()?.as_any().downcast_ref::<CraneliftJit>()?;
    Some(jit.stats(vm))
}

/// The JIT: a Cranelift backend for the host, its scratch state, the code
/// zone and its statistics.
struct CraneliftJit {
    isa: OwnedTargetIsa,
    ctx: Context,
    fctx: FunctionBuilderContext,
    zone: zone::CodeZone,
    entries: Entries,
    stats: stats::Counts,
    /// Where functions are named for perf (`--perf-map`).
    perf_map: Option<perf_map::PerfMap>,
}

impl CraneliftJit {
    fn new(zone_bytes: usize) -> Result<CraneliftJit, JitError> {
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
        let isa = cranelift_native::builder()
            .map_err(|e| JitError::Isa(e.to_string()))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| JitError::Isa(e.to_string()))?;
        let zone = zone::CodeZone::new(zone_bytes).map_err(|e| JitError::Zone(e.to_string()))?;
        Ok(CraneliftJit {
            isa,
            ctx: Context::new(),
            fctx: FunctionBuilderContext::new(),
            zone,
            entries: Entries {
                send: zone::rt_send as *const () as u64,
                ret: zone::rt_return as *const () as u64,
                bail: zone::rt_bail as *const () as u64,
                push_block: zone::rt_push_block as *const () as u64,
                global: zone::rt_global as *const () as u64,
                string_equal: zone::rt_string_equal as *const () as u64,
                store: zone::rt_store as *const () as u64,
                sample: zone::rt_sample as *const () as u64,
                reserve: zone::rt_reserve as *const () as u64,
            },
            stats: stats::Counts::default(),
            perf_map: None,
        })
    }

    fn stats(&self, vm: &Vm) -> JitStats {
        self.stats.report(&self.zone, vm)
    }
}

impl Jit for CraneliftJit {
    fn compile(
        &mut self,
        code: &Rc<MethodCode>,
        image: &Image,
        work: &JitWork<'_>,
    ) -> Result<(NativeFn, String), String> {
        let t0 = Instant::now();
        let (slot, counter) = self
            .zone
            .take_counter()
            .ok_or_else(|| "the code zone has no room for another function".to_string())?;
        let compiled = codegen::compile(
            &*self.isa,
            &mut self.ctx,
            &mut self.fctx,
            code,
            image,
            self.entries,
            counter,
        );
        let compiled = match compiled {
            Ok(c) => c,
            Err(e) => {
                self.zone.return_counter(slot);
                self.stats.failed += 1;
                return Err(e);
            }
        };
        let name = image
            .describe_method(code.id)
            .map_or_else(|| format!("#{}", code.id), |d| d.display_name());
        let len = compiled.code.len();
        let evictions = self.zone.evictions;
        let f = self
            .zone
            .install(compiled, Rc::downgrade(code), slot, name.clone(), work)
            .map_err(|e| e.to_string())?;
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
        let elapsed = t0.elapsed();
        self.stats.note(code, name.clone(), len, elapsed);
        let line = format!(
            "jit: compiled {name} ({} instructions -> {len} bytes) in {} us",
            code.ops.len(),
            elapsed.as_micros()
        );
        Ok((f, line))
    }

    fn functions(&self) -> Vec<NativeFunctionInfo> {
        stats::functions(&self.zone)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
