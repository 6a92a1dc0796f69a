//! What the JIT did: functions compiled (methods and blocks), their code
//! size against their bytecode, compile time in total and per function,
//! failures, evictions, the code zone's use, the frames native code left to
//! the interpreter and the states of the compiled code's inline caches
//! (`--jit-stats`), what the compiler thread cost each thread, plus the
//! description of every function in the code zone (name, address, pc map)
//! that the VM profiler maps native pcs with.

use crate::zone::CodeZone;
use lupa_vm::{CodeKind, DEOPT_REASONS, MethodCode, NativeFunctionInfo, PIC_SIZE, Vm};
use std::time::Duration;

/// Running counts.
#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) methods: u64,
    pub(crate) blocks: u64,
    pub(crate) code_bytes: u64,
    pub(crate) bytecode_bytes: u64,
    pub(crate) compile_time: Duration,
    pub(crate) failed: u64,
    /// The slowest compilations: (time, name).
    pub(crate) slowest: Vec<(Duration, String)>,
    /// The perf map could not be written and was given up.
    pub(crate) perf_map_lost: bool,
    /// Jobs given to the compiler thread.
    pub(crate) submitted: u64,
    /// Its results dropped (their method gone, or compiled meanwhile).
    pub(crate) dropped: u64,
    /// The VM thread's time for the compiler thread: copying what it reads
    /// and installing what it made.
    pub(crate) vm_thread_time: Duration,
}

/// The compiler thread as it is at the report.
pub(crate) struct ThreadCounts {
    /// Its CPU time so far.
    pub(crate) cpu_time: Duration,
    /// Jobs it holds, not installed.
    pub(crate) queued: usize,
    /// Why it is gone, if it is.
    pub(crate) lost: Option<String>,
}

impl Counts {
    pub(crate) fn note(&mut self, code: &MethodCode, name: String, len: usize, t: Duration) {
        match code.kind {
            CodeKind::Method => self.methods += 1,
            CodeKind::Block => self.blocks += 1,
        }
        self.code_bytes += len as u64;
        self.bytecode_bytes += (code.ops.len() * std::mem::size_of::<lupa_compiler::Op>()) as u64;
        self.compile_time += t;
        self.slowest.push((t, name));
        self.slowest.sort_by_key(|e| std::cmp::Reverse(e.0));
        self.slowest.truncate(5);
    }

    pub(crate) fn report(
        &self,
        zone: &CodeZone,
        vm: &Vm,
        thread: Option<ThreadCounts>,
    ) -> JitStats {
        let (zone_bytes, zone_used) = zone.usage();
        let epoch = vm.class_epoch();
        let mut cache_states = [0u64; PIC_SIZE + 1];
        for code in zone.functions.iter().filter_map(|f| f.method.upgrade()) {
            for (sum, n) in cache_states.iter_mut().zip(code.cache_states(epoch)) {
                *sum += n;
            }
        }
        JitStats {
            methods: self.methods,
            blocks: self.blocks,
            code_bytes: self.code_bytes,
            bytecode_bytes: self.bytecode_bytes,
            compile_time: self.compile_time,
            failed: self.failed,
            evictions: zone.evictions,
            evicted: zone.evicted,
            zone_bytes,
            zone_used,
            stub_bytes: zone.stub_bytes(),
            slowest: self.slowest.clone(),
            perf_map_lost: self.perf_map_lost,
            bails: vm.native_bails(),
            cache_states,
            functions: functions(zone),
            thread: thread.map(|t| ThreadStats {
                submitted: self.submitted,
                queued: t.queued,
                dropped: self.dropped,
                cpu_time: t.cpu_time,
                vm_thread_time: self.vm_thread_time,
                lost: t.lost,
            }),
        }
    }
}

/// The functions of `zone`: those evicted or moved first (oldest first),
/// then those in it now, the entry stubs at its start first.
pub(crate) fn functions(zone: &CodeZone) -> Vec<NativeFunctionInfo> {
    let start = zone.start();
    zone.retired
        .iter()
        .cloned()
        .chain(zone.stubs.iter().cloned())
        .chain(zone.functions.iter().map(|f| f.info(start, None)))
        .collect()
}

/// The JIT's statistics (`--jit-stats`).
#[derive(Debug, Clone)]
pub struct JitStats {
    /// Methods compiled.
    pub methods: u64,
    /// Blocks compiled.
    pub blocks: u64,
    /// Bytes of native code made.
    pub code_bytes: u64,
    /// Bytes of the bytecode compiled (instructions, as the VM holds them).
    pub bytecode_bytes: u64,
    /// Time spent compiling.
    pub compile_time: Duration,
    /// Compilations that failed (the code stays interpreted).
    pub failed: u64,
    /// Times the code zone was full.
    pub evictions: u64,
    /// Functions freed by them.
    pub evicted: u64,
    /// The code zone's size.
    pub zone_bytes: usize,
    /// Bytes of it in use.
    pub zone_used: usize,
    /// Bytes of it the shared entry stubs take (in `zone_used`, not in
    /// `code_bytes`: made once, whatever is compiled).
    pub stub_bytes: usize,
    /// The slowest compilations, slowest first.
    pub slowest: Vec<(Duration, String)>,
    /// Times native code left its frame to the interpreter (deoptimisations),
    /// by reason ([`DEOPT_REASONS`]).
    pub bails: [u64; DEOPT_REASONS.len()],
    /// The send sites of the code in the zone by how many receiver classes
    /// their inline cache holds now: 0 (never run, or stale), 1
    /// (monomorphic), 2 to [`PIC_SIZE`] (polymorphic; full is megamorphic).
    pub cache_states: [u64; PIC_SIZE + 1],
    /// Every function in the zone, and those evicted or moved.
    pub functions: Vec<NativeFunctionInfo>,
    /// `--perf-map` was asked for but the map could not be written to the
    /// end (it names the functions made before).
    pub perf_map_lost: bool,
    /// The compiler thread, if one was started (`--jit-thread on`): then
    /// `compile_time` and `slowest` are its CPU time per job, not the VM
    /// thread's.
    pub thread: Option<ThreadStats>,
}

/// What the compiler thread did, and what it cost each thread.
#[derive(Debug, Clone)]
pub struct ThreadStats {
    /// Jobs given to it.
    pub submitted: u64,
    /// Jobs it still held (or had not had installed) at the report.
    pub queued: usize,
    /// Results dropped: their method was gone, or had native code already.
    pub dropped: u64,
    /// Its own CPU time (its thread's CPU clock).
    pub cpu_time: Duration,
    /// The VM thread's CPU time on its behalf: copying what it reads of
    /// each method, installing its code.
    pub vm_thread_time: Duration,
    /// Why it stopped, if it did (its jobs stayed interpreted).
    pub lost: Option<String>,
}

impl JitStats {
    /// The report `--jit-stats` prints.
    pub fn report(&self) -> String {
        let n = self.methods + self.blocks;
        let mut s = format!(
            "jit: compiled {} methods and {} blocks, {} bytes of native code for {} bytes of bytecode ({:.1}x)\n",
            self.methods,
            self.blocks,
            self.code_bytes,
            self.bytecode_bytes,
            self.code_bytes as f64 / self.bytecode_bytes.max(1) as f64
        );
        s += &format!(
            "jit: compile time {:.3} ms in total{}, {:.1} us per function{}\n",
            self.compile_time.as_secs_f64() * 1e3,
            if self.thread.is_some() {
                " (the compiler thread's CPU time per job)"
            } else {
                ""
            },
            self.compile_time.as_secs_f64() * 1e6 / n.max(1) as f64,
            if self.failed > 0 {
                format!(", {} failed (interpreted)", self.failed)
            } else {
                String::new()
            }
        );
        s += &format!(
            "jit: code zone {} of {} bytes in use ({} of them the shared entry stubs), {} evictions freed {} functions\n",
            self.zone_used, self.zone_bytes, self.stub_bytes, self.evictions, self.evicted
        );
        let reasons: Vec<String> = self
            .bails
            .iter()
            .zip(DEOPT_REASONS)
            .filter(|(n, _)| **n > 0)
            .map(|(n, why)| format!("{n} {why}"))
            .collect();
        s += &format!(
            "jit: {} frames left to the interpreter (deoptimisations){}{}\n",
            self.bails.iter().sum::<u64>(),
            if reasons.is_empty() { "" } else { ": " },
            reasons.join("; ")
        );
        let poly: u64 = self.cache_states[2..PIC_SIZE].iter().sum();
        s += &format!(
            "jit: inline caches of compiled code: {} send sites empty, {} monomorphic, {} polymorphic, {} full ({PIC_SIZE} classes: megamorphic)\n",
            self.cache_states[0], self.cache_states[1], poly, self.cache_states[PIC_SIZE]
        );
        if let Some(t) = &self.thread {
            s += &format!(
                "jit: compiler thread: {} jobs, {:.3} ms of its CPU time; the VM thread's part (copying methods, installing code) {:.3} ms of CPU time; {} queued at exit, {} dropped{}\n",
                t.submitted,
                t.cpu_time.as_secs_f64() * 1e3,
                t.vm_thread_time.as_secs_f64() * 1e3,
                t.queued,
                t.dropped,
                t.lost.as_ref().map_or_else(String::new, |why| format!(
                    "; {why}: its jobs stay interpreted"
                ))
            );
        }
        if let Some((t, name)) = self.slowest.first() {
            s += &format!(
                "jit: slowest compilation {:.1} us ({name})\n",
                t.as_secs_f64() * 1e6
            );
        }
        if self.perf_map_lost {
            s += "jit: the perf map could not be written to the end (it names the functions made before)\n";
        }
        s
    }
}
