//! The interpreter's side of native code: when code gets compiled (hotness
//! counters, the compile queue), entering native code from the dispatch loop,
//! and the runtime calls native code makes (its sends, returns and slow
//! paths), which run the interpreter's own send path, so that everything
//! observable about a send (counts, activation hooks, the sampler's stacks,
//! inline caches, the trap shortcut, primitives) is what the interpreter does.
//! The boundary itself (context, status words, the invariants native code
//! keeps) is `objects/native.rs`; the compiler and the code zone are the
//! `lupa-jit` crate, installed with [`Vm::install_jit`].
//!
//! **When.** Every method and block counts down its `hotness` at each
//! activation and each backward jump. At zero it is queued for compilation
//! and the loop is asked for a safepoint (the scheduler's pending flag, which
//! the loop tests anyway), where the queue is compiled; a backward jump that
//! made its code hot leaves at the safepoint too, so the loop enters the new
//! native code at the jump's target (the loop head). With `--jit always` the
//! count starts at zero; without a JIT, or with `--jit off`, it never reaches
//! it. With a compiler thread (`--jit-thread on`, the default of `--jit on`)
//! the safepoint only hands the code to the JIT ([`Jit::submit`]), which
//! copies what its compiler reads, and the code stays interpreted until a
//! poll finds the thread's work ready ([`Jit::ready`]) and asks for another
//! safepoint, where it is installed ([`Jit::install_ready`]); the code zone
//! is written on the VM thread only, at safepoints, either way.
//!
//! **Where.** At the top of its loop (after every send and return, and after
//! a safepoint), the interpreter enters the top frame's native code when it
//! has some and the observation allows it (nothing observes per send but
//! line coverage, whose arrivals native code compiled for it counts itself;
//! a sampler's stack requests native code tests at its sends itself).
//! Code is made for the [`CompileOptions`] in force, and all of it is
//! dropped when they change (`Vm::drop_native_code`: line coverage starts
//! or stops).
//! Native code then runs that activation and calls the native code of its
//! callees directly, up to [`MAX_NATIVE_DEPTH`] nested activations; anything
//! else — a callee without native code, a collection or a process switch
//! due, a non-local return, an unwind, an error — leaves to the loop
//! ([`BAIL`]), which goes on with the frames as they are.

use crate::image::Image;
use crate::objects::MethodCode;
use crate::objects::native::{
    BAIL, DECLINE, DONE, FastEntry, NativeCtx, NativeFn, RETURNED, RUNTIME_ENTRIES,
};
use crate::obs::sampling::VmState;
use crate::vm::{JitMode, Vm, VmError};
use lupa_compiler::Op;
use lupa_heap::Value;
use std::rc::Rc;

/// Native activations that may be nested before a call is left to the loop
/// (which then starts a new chain): bounds the native stack whatever the
/// depth of Smalltalk recursion.
pub const MAX_NATIVE_DEPTH: u64 = 400;

/// Is `slow_returns` (`NativeCtx::slow_returns`) that of method watches
/// alone ([`SLOW_CALLS`](crate::SLOW_CALLS) or
/// [`SLOW_ANSWERS`](crate::SLOW_ANSWERS))?
fn watches_alone(slow_returns: u64) -> bool {
    slow_returns != 0 && slow_returns != crate::objects::native::SLOW_ALL
}

/// A compiler of native code for methods and blocks (the `lupa-jit` crate).
pub trait Jit {
    /// Compile `code`: its native function and a line naming the
    /// compilation (`--jit-log`). It may make room by evicting other code
    /// (clearing their `native`); it is only ever called from the dispatch
    /// loop, when no native code is running.
    /// Making room runs inside [`JitWork::evicting`], so that a sampler
    /// charges it to [`VmState::CodeEviction`].
    fn compile(
        &mut self,
        code: &Rc<MethodCode>,
        image: &Image,
        options: CompileOptions,
        work: &JitWork<'_>,
    ) -> Result<(NativeFn, String), String>;

    /// The addresses its native code calls out of line, which it reads
    /// from [`NativeCtx::runtime`] (zeros: its code does not read them).
    fn runtime_entries(&self) -> [u64; RUNTIME_ENTRIES] {
        [0; RUNTIME_ENTRIES]
    }

    /// Queue `code` for compiling on a compiler thread (`--jit-thread on`):
    /// copy what the compiler reads of it now (it is called at a safepoint,
    /// like [`compile`](Self::compile)), and answer at once; the native code
    /// comes back through [`install_ready`](Self::install_ready). `Err`:
    /// not queued, and why (the code stays interpreted). The default has no
    /// compiler thread.
    fn submit(
        &mut self,
        code: &Rc<MethodCode>,
        image: &Image,
        options: CompileOptions,
        work: &JitWork<'_>,
    ) -> Result<(), String> {
        let _ = (code, image, options, work);
        Err("this JIT has no compiler thread".to_string())
    }

    /// Has the compiler thread finished something for
    /// [`install_ready`](Self::install_ready)? Cheap (an atomic load): the
    /// VM asks at its polls.
    fn ready(&self) -> bool {
        false
    }

    /// Install what the compiler thread finished (with `wait`, everything
    /// queued, waiting for it): each method or block with its native
    /// function and a line naming the compilation (`--jit-log`), or why it
    /// stays interpreted. Results whose method is gone or already has native
    /// code, or that were made with other options than `options` (those in
    /// force now), are dropped. Called only where [`compile`](Self::compile)
    /// may be (no native code running); making room runs inside
    /// [`JitWork::evicting`].
    fn install_ready(
        &mut self,
        image: &Image,
        options: CompileOptions,
        work: &JitWork<'_>,
        wait: bool,
    ) -> Vec<Installed> {
        let _ = (image, options, work, wait);
        Vec::new()
    }

    /// The VM dropped every method's native code (`Vm::drop_native_code`):
    /// no function in the code zone is entered again, nor may its method
    /// get it back; eviction frees them first. Called from anywhere (a
    /// primitive may run inside native code): the zone is not written.
    fn forget_code(&mut self) {}

    /// Every native function in the code zone, and those evicted or moved
    /// since the run started (where they were, and when), oldest first.
    fn functions(&self) -> Vec<NativeFunctionInfo>;

    /// The JIT itself, for its owner to read its statistics.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// How code compiled now must be made: what the observation in force needs
/// of native code ([`Vm::compile_options`]). Code is made for the options of
/// its compilation and never runs under others: when they change, the VM
/// drops all native code (`Vm::drop_native_code`) and a JIT drops the
/// results of compilations made with the old options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Count line coverage's arrivals (`obs/coverage.rs`), as the
    /// interpreter does while lines are counted: at pc 0 where native code
    /// pushes a frame itself (a direct entry) or runs a trivial method
    /// inline, and at the destination of every branch and jump, taken or
    /// not, by adding 1 (at the base level: [`NativeCtx::meta_depth`]) to the method's
    /// [`Arrivals`](crate::obs::coverage::Arrivals) counters.
    pub count_lines: bool,
}

/// A compilation made on a compiler thread, as
/// [`Jit::install_ready`] answers it: the method or block, and its native
/// function with the line naming it, or why it stays interpreted.
pub type Installed = (Rc<MethodCode>, Result<(NativeFn, String), String>);

/// What a JIT tells the VM profiler while it compiles.
pub struct JitWork<'a> {
    obs: &'a crate::obs::Observation,
    process: usize,
}

impl JitWork<'_> {
    /// Do the method watches keep cells (`obs::watch::WatchCell`: a watch is
    /// on while native code may run, `Vm::observation_changed`)? Code made
    /// now then looks at them; code made while there are none, which could
    /// not use them, does not.
    pub fn watching(&self) -> bool {
        self.obs.watches.has_cells()
    }

    /// Run `f`, which makes room in the code zone, under the
    /// [`VmState::CodeEviction`] state.
    pub fn evicting<R>(&self, f: impl FnOnce() -> R) -> R {
        let saved = self.obs.push_state(VmState::CodeEviction, 0, self.process);
        let r = f();
        self.obs.pop_state(saved);
        r
    }
}

/// One native function of the code zone, as the JIT describes it (Cog's
/// `primitiveCollectCogCodeConstituents`, the VMProfiler paper's figures 3
/// and 5): its name, where it is, and which machine code runs which
/// bytecode instruction.
///
/// Contract: a function evicted or moved keeps its description, with the
/// time it left that place (`until`), so that a native pc sampled there
/// before is still named: a pc is the function's when
/// [`covers`](Self::covers) says so for the sample's time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeFunctionInfo {
    /// `Class>>selector` or `[]#k in Class>>selector`.
    pub name: String,
    /// The id of the method or block it runs ([`NO_METHOD`](Self::NO_METHOD):
    /// a stub of the JIT's).
    pub method: u32,
    /// Its first address.
    pub start: usize,
    /// Its length in bytes.
    pub len: usize,
    /// `(start, end, pc)` offsets from `start`: the machine code in
    /// `start..end` runs bytecode instruction `pc`. Code in no range is the
    /// function's entry (prologue, resume dispatch, exits).
    pub pcs: Vec<(u32, u32, u32)>,
    /// When it was put at `start`.
    pub since: std::time::Instant,
    /// When it left `start` (evicted, or moved by an eviction); `None`:
    /// still there.
    pub until: Option<std::time::Instant>,
}

impl NativeFunctionInfo {
    /// The `method` of a function that runs no method: one of the JIT's
    /// shared stubs (its name says which, `<entry stub: ...>`).
    pub const NO_METHOD: u32 = u32::MAX;

    /// Is it still in the code zone at `start`?
    pub fn live(&self) -> bool {
        self.until.is_none()
    }

    /// Was native address `pc` in this function at time `at`?
    pub fn covers(&self, pc: usize, at: std::time::Instant) -> bool {
        pc >= self.start
            && pc - self.start < self.len
            && at >= self.since
            && self.until.is_none_or(|u| at < u)
    }

    /// The bytecode instruction that native address `pc` (inside the
    /// function) runs; `None`: the entry (code mapped to no instruction).
    pub fn bytecode_pc(&self, pc: usize) -> Option<u32> {
        let off = pc.checked_sub(self.start)? as u64;
        let i = self.pcs.partition_point(|r| u64::from(r.1) <= off);
        self.pcs
            .get(i)
            .filter(|r| u64::from(r.0) <= off)
            .map(|r| r.2)
    }

    /// `(machine-code address, bytecode pc)` of the first address running
    /// each instruction, in address order (Cog's mcpc/bcpc map).
    pub fn pc_map(&self) -> Vec<(usize, u32)> {
        let mut map: Vec<(usize, u32)> = Vec::with_capacity(self.pcs.len());
        for &(start, _, pc) in &self.pcs {
            if map.last().is_none_or(|last| last.1 != pc) {
                map.push((self.start + start as usize, pc));
            }
        }
        map
    }

    /// The function holding native address `pc` at time `at`, among
    /// `functions`.
    pub fn find(
        functions: &[NativeFunctionInfo],
        pc: usize,
        at: std::time::Instant,
    ) -> Option<&NativeFunctionInfo> {
        functions.iter().rev().find(|f| f.covers(pc, at))
    }
}

/// Why native code left a frame to the interpreter (answered [`BAIL`]), as
/// `--jit-stats` counts the deoptimisations: indices into this table.
pub const DEOPT_REASONS: [&str; 7] = [
    "at a safepoint (a collection, a process switch, a sampler's or a hook's request)",
    "at a call of code with no native code (not hot yet, or not compilable)",
    "at a return the interpreter finishes (an unwinding, a non-local return)",
    "at an instruction native code does not run",
    "at an error",
    "at another change of frames (a primitive that restarted or replaced a frame)",
    "at a call past the native call depth",
];
const SAFEPOINT: usize = 0;
const CALLEE: usize = 1;
const RETURN: usize = 2;
const INSTRUCTION: usize = 3;
const ERROR: usize = 4;
const OTHER: usize = 5;
const DEPTH: usize = 6;

/// The VM's native tier: the installed JIT, the methods waiting to be
/// compiled, and an error raised inside a runtime call of native code.
#[derive(Default)]
pub(crate) struct NativeTier {
    jit: Option<Box<dyn Jit>>,
    /// Methods and blocks that got hot, to compile (or to queue for the
    /// compiler thread) at the next safepoint.
    pending: Vec<Rc<MethodCode>>,
    /// Hot code is compiled on the JIT's compiler thread
    /// ([`VmOptions::jit_thread`](crate::VmOptions::jit_thread) with
    /// `--jit on`).
    threaded: bool,
    /// The compiler thread finished something: install it at the next
    /// safepoint.
    install_due: bool,
    /// An error a runtime call of native code could not return through it.
    error: Option<VmError>,
    /// The installed JIT's [`Jit::runtime_entries`], for each [`NativeCtx`].
    runtime: [u64; RUNTIME_ENTRIES],
    /// Why the JIT the options asked for could not be installed.
    pub(crate) unavailable: Option<String>,
    /// Native code left the top frame at an instruction for the interpreter
    /// to run: the loop interprets it before entering native code again.
    pub(crate) interpret_next: bool,
    /// The fast-call table native code reads (`objects/native.rs`).
    fast: Vec<FastEntry>,
    /// Times native code left its frame to the interpreter (answered
    /// [`BAIL`]), by reason ([`DEOPT_REASONS`]): the deoptimisations
    /// `--jit-stats` reports.
    bails: [u64; DEOPT_REASONS.len()],
    /// The reason of the last `BAIL` a runtime call answered.
    why: usize,
}

impl NativeTier {
    /// Compile-queue entries waiting.
    #[inline(always)]
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty() || self.install_due
    }
}

/// What entering native code at the top of the loop came to.
pub(super) enum Entered {
    /// Native code ran: go on with the frames as they are.
    Ran,
    /// Not a resume point of that code: interpret.
    Declined,
}

impl Vm {
    /// Install a JIT: from now on hot methods and blocks (per
    /// [`VmOptions::jit`](crate::VmOptions::jit)) are compiled with it.
    pub fn install_jit(&mut self, jit: Box<dyn Jit>) {
        self.native.runtime = jit.runtime_entries();
        self.native.jit = Some(jit);
        self.native.threaded = self.options.jit == JitMode::On && self.options.jit_thread;
        let start = match self.options.jit {
            JitMode::Off => u32::MAX,
            JitMode::On => self.options.jit_threshold,
            JitMode::Always => 0,
        };
        self.image.start_hotness = start;
        for m in self.image.methods.iter() {
            if m.native.get().is_none() {
                m.hotness.set(start);
            }
        }
    }

    /// The installed JIT, if any (for its statistics).
    pub fn jit(&self) -> Option<&dyn Jit> {
        self.native.jit.as_deref()
    }

    /// Times native code left its frame to the interpreter, by reason
    /// (indexed like [`DEOPT_REASONS`]): the deoptimisations of
    /// `--jit-stats`.
    pub fn native_bails(&self) -> [u64; DEOPT_REASONS.len()] {
        self.native.bails
    }

    /// The epoch of the class table: inline-cache entries of another epoch
    /// are stale.
    pub fn class_epoch(&self) -> u32 {
        self.image.classes.epoch()
    }

    /// Why the JIT the options asked for is not installed, if it is not.
    pub fn jit_unavailable(&self) -> Option<&str> {
        self.native.unavailable.as_deref()
    }

    /// May native code run now? Not while sends are observed one by one
    /// (counts by site, deterministic sampling, a lifetime recording,
    /// guarded traps: the observing loop does those) or activation hooks are
    /// installed (`Observation::native_may_run`; line coverage lets native
    /// code compiled for it run), nor right
    /// after native code left an instruction to the interpreter (which runs
    /// it first).
    #[inline(always)]
    pub(super) fn native_allowed(&mut self) -> bool {
        if std::mem::take(&mut self.native.interpret_next) {
            return false;
        }
        self.obs.native_may_run()
    }

    /// `m`'s hotness reached zero: queue it for compilation at the next
    /// safepoint (or, without a JIT, never count again).
    #[cold]
    #[inline(never)]
    pub(super) fn got_hot(&mut self, m: &Rc<MethodCode>) {
        m.hotness.set(u32::MAX);
        if self.native.jit.is_some() && self.options.jit != JitMode::Off {
            self.native.pending.push(m.clone());
            self.sched.switch_pending = true;
        }
    }

    /// Count an activation or a backward jump of `m`; answers true when it
    /// made `m` hot.
    #[inline(always)]
    pub(super) fn count_hotness(&mut self, m: &Rc<MethodCode>) -> bool {
        let h = m.hotness.get();
        if h == 0 {
            self.got_hot(m);
            true
        } else {
            m.hotness.set(h - 1);
            false
        }
    }

    /// Compile what got hot, or queue it for the compiler thread, and
    /// install what the compiler thread finished (at a safepoint of the
    /// loop: no native code runs).
    #[cold]
    #[inline(never)]
    pub(super) fn compile_pending(&mut self) {
        let pending = std::mem::take(&mut self.native.pending);
        let install = std::mem::take(&mut self.native.install_due);
        let Some(mut jit) = self.native.jit.take() else {
            return;
        };
        let mut changed = false;
        let options = self.compile_options();
        if !pending.is_empty() {
            // Compiling here, or (with a compiler thread) copying what the
            // compiler reads.
            let saved = self
                .obs
                .push_state(VmState::JitCompile, 0, self.sched.current);
            for m in pending {
                if m.native.get().is_some() {
                    continue;
                }
                // A method the JIT declines stays interpreted (and is not
                // asked again: its hotness stays at the maximum); so does
                // one queued, until its code is installed.
                let work = JitWork {
                    obs: &self.obs,
                    process: self.sched.current,
                };
                if self.native.threaded {
                    if let Err(why) = jit.submit(&m, &self.image, options, &work) {
                        self.log_interpreted(&m, &why);
                    }
                    continue;
                }
                changed = true;
                match jit.compile(&m, &self.image, options, &work) {
                    Ok((f, line)) => {
                        m.native.set(Some(f));
                        if self.options.jit_log {
                            self.io.print_err(&format!("{line}\n"));
                        }
                    }
                    Err(why) => self.log_interpreted(&m, &why),
                }
            }
            self.obs.pop_state(saved);
        }
        if install {
            changed |= self.install_compiled(&mut *jit, false);
        }
        self.native.jit = Some(jit);
        if changed {
            self.rebuild_fast_table();
        }
    }

    /// Install what the compiler thread finished (all it was given, with
    /// `wait`); answers whether anything came back.
    fn install_compiled(&mut self, jit: &mut dyn Jit, wait: bool) -> bool {
        let saved = self
            .obs
            .push_state(VmState::JitInstall, 0, self.sched.current);
        let work = JitWork {
            obs: &self.obs,
            process: self.sched.current,
        };
        let done = jit.install_ready(&self.image, self.compile_options(), &work, wait);
        self.obs.pop_state(saved);
        let any = !done.is_empty();
        for (m, r) in done {
            match r {
                Ok((f, line)) => {
                    m.native.set(Some(f));
                    if self.options.jit_log {
                        self.io.print_err(&format!("{line}\n"));
                    }
                }
                Err(why) => self.log_interpreted(&m, &why),
            }
        }
        any
    }

    /// What code compiled now must do for the observation in force.
    pub fn compile_options(&self) -> CompileOptions {
        CompileOptions {
            count_lines: self.obs.covering_lines(),
        }
    }

    /// Drop every method's and block's native code, because the
    /// [`CompileOptions`] changed (line coverage started or stopped): code
    /// made for the other options must never run. The methods are
    /// interpreted and compiled again when they get hot (their hotness
    /// starts over; so does that of code queued for the compiler thread,
    /// whose result the JIT drops), the fast-call table no longer names any
    /// native code, and the JIT forgets its functions (the zone frees them
    /// at its next eviction: none is freed now, as this may run inside a
    /// primitive called from native code, which leaves at its next runtime
    /// call since the observation change asked for a safepoint).
    pub(crate) fn drop_native_code(&mut self) {
        let Some(jit) = self.native.jit.as_mut() else {
            return;
        };
        jit.forget_code();
        let start = self.image.start_hotness;
        for m in self.image.methods.iter() {
            m.native.set(None);
            // Code that got hot counts down from the maximum (interpreted
            // activations after it was queued): above the start.
            if m.hotness.get() > start {
                m.hotness.set(start);
            }
        }
        self.rebuild_fast_table();
    }

    /// `--jit-log`: `m` stays interpreted, because of `why`.
    fn log_interpreted(&mut self, m: &MethodCode, why: &str) {
        if self.options.jit_log {
            let name = self
                .image
                .describe_method(m.id)
                .map(|d| d.display_name())
                .unwrap_or_default();
            self.io
                .print_err(&format!("jit: {name} stays interpreted: {why}\n"));
        }
    }

    /// At a poll: has the compiler thread finished something? Then the next
    /// safepoint installs it (native code leaves at its next runtime call,
    /// which sees the safepoint due).
    #[inline(always)]
    pub(super) fn poll_compiler_thread(&mut self) {
        if self.native.threaded
            && !self.native.install_due
            && self.native.jit.as_ref().is_some_and(|j| j.ready())
        {
            self.native.install_due = true;
            self.sched.switch_pending = true;
        }
    }

    /// Wait for the compiler thread to finish everything it was given, and
    /// install it (tests and tools that need the native code now). Call it
    /// between runs, never from a primitive: it writes the code zone, which
    /// only happens while no native code runs.
    pub fn finish_compiling(&mut self) {
        let Some(mut jit) = self.native.jit.take() else {
            return;
        };
        let changed = self.install_compiled(&mut *jit, true);
        self.native.jit = Some(jit);
        if changed {
            self.rebuild_fast_table();
        }
    }

    /// The code zone's functions now, and those evicted or moved (empty
    /// without a JIT).
    pub fn native_functions(&self) -> Vec<NativeFunctionInfo> {
        self.native
            .jit
            .as_ref()
            .map_or_else(Vec::new, |j| j.functions())
    }

    /// The fast-call table from the methods' native code now (compilation
    /// adds entries, eviction removes and moves them). Rebuilt after every
    /// installation, from every method: native code reads the entry of a
    /// method its send site named when it was compiled without a bounds
    /// check, the table having covered it since that code was installed.
    fn rebuild_fast_table(&mut self) {
        let fast = &mut self.native.fast;
        fast.clear();
        fast.extend(self.image.methods.iter().map(|m| {
            let (trivial, operand) = FastEntry::trivial_of(m);
            let direct = m.trivial.is_none()
                && m.primitive.get().is_none()
                && !m.trap_shortcut
                && !m.meta_level
                && !m.has_env();
            let entry = match m.native.get() {
                Some(f) if direct => f as usize as u64,
                _ => 0,
            };
            FastEntry {
                entry,
                num_args: m.num_args as u64,
                trivial,
                operand,
            }
        }));
    }

    /// The stack slots an activation of `code` at `bp` uses, operand stack
    /// included: native code reads and writes only below it.
    #[inline(always)]
    fn extent(code: &MethodCode, bp: usize) -> usize {
        bp + 1 + code.num_args + code.num_temps + code.max_stack
    }

    /// Make the value stack `n` slots long for native code (the slots above
    /// the live ones are native code's to write; see `ValueStack`).
    #[inline(always)]
    fn stack_to(&mut self, n: usize) {
        self.sched.running.stack.set_len(n);
    }

    /// Take what native code did since it last called: its counts, and the
    /// frames it pushed and popped itself.
    #[inline(always)]
    fn sync_in(&mut self, ctx: &mut NativeCtx) {
        self.obs.sends += ctx.counted_sends();
        self.obs.inlined += std::mem::take(&mut ctx.inlined);
        self.sched.running.frames.set_len(ctx.frames_len as usize);
        let start = self.poll_start();
        ctx.poll_at = start;
        ctx.sends = start;
    }

    /// Give native code the sends to its next poll: `ctx.sends` counts
    /// from minus them (`ctx.poll_at`, [`poll_start`](Self::poll_start)),
    /// and the poll is due when it is no longer negative; the sends it
    /// counted and the runtime has not taken yet are kept.
    #[inline(always)]
    fn sync_poll(&self, ctx: &mut NativeCtx) {
        let pending = ctx.counted_sends();
        ctx.poll_at = self.poll_start();
        ctx.sends = ctx.poll_at.wrapping_add(pending);
    }

    /// Minus the sends left to the next poll (wrapping; a poll overdue
    /// gives 0 or more: due at native code's next send). The gaps between
    /// polls are a few thousand sends (`obs/self_timed.rs`), far from the
    /// sign bit.
    #[inline(always)]
    fn poll_start(&self) -> u64 {
        self.obs.sends.wrapping_sub(self.obs.poll_at.get())
    }

    /// Give native code the value stack's address and capacity again (a
    /// push or a reservation may have moved it).
    #[inline(always)]
    fn sync_stack(&mut self, ctx: &mut NativeCtx) {
        let stack = &mut self.sched.running.stack;
        ctx.stack = stack.as_mut_ptr();
        ctx.stack_cap = stack.capacity() as u64;
    }

    /// Give native code what it reads and compares: the stacks' and the
    /// heap's addresses and sizes, the epoch, whether returns are slow, the
    /// fast-call table.
    #[inline(always)]
    fn sync_out(&mut self, ctx: &mut NativeCtx) {
        self.sync_stack(ctx);
        let running = &mut self.sched.running;
        ctx.frames = running.frames.as_mut_ptr().cast();
        ctx.frames_len = running.frames.len() as u64;
        ctx.frames_cap = self.limits.frame_limit().min(running.frames.capacity()) as u64;
        ctx.unwind_watch = if running.unwind_watch == usize::MAX {
            u64::MAX
        } else {
            running.unwind_watch as u64
        };
        ctx.heap = self.heap.words_ptr();
        ctx.epoch = self.image.classes.epoch() as u64;
        self.sync_poll(ctx);
        ctx.slow_returns = if self.limits.in_overflow() {
            crate::objects::native::SLOW_ALL
        } else {
            self.obs.slow_returns
        };
        ctx.fast = self.native.fast.as_ptr();
        ctx.fast_len = self.native.fast.len() as u64;
        let (p, n) = self.image.fast_paths.table(crate::image::FastPath::NilTest);
        ctx.nil_test = p;
        ctx.nil_test_len = n as u64;
        let (p, n) = self
            .image
            .fast_paths
            .table(crate::image::FastPath::Identity);
        ctx.identity = p;
        ctx.identity_len = n as u64;
        ctx.string_eq = self.image.fast_paths.string_eq_word();
    }

    /// Must the loop see to something before native code goes on (a
    /// collection, a process switch, a mode change, code to compile, a stop
    /// requested from outside)?
    #[inline(always)]
    fn needs_attention(&self) -> bool {
        self.heap.needs_gc() || self.sched.switch_pending || crate::sched::interrupt::pending()
    }

    /// Enter native code `f` of the top frame (running `code` at `bp`) at
    /// `pc`, from the dispatch loop.
    #[inline(never)]
    pub(super) fn enter_native(
        &mut self,
        f: NativeFn,
        code: &MethodCode,
        pc: usize,
        bp: usize,
    ) -> Result<Entered, VmError> {
        let len = self.sched.running.stack.len();
        self.stack_to(Self::extent(code, bp).max(len));
        let env = self
            .sched
            .running
            .frames
            .last()
            .map_or(Value::NIL, |f| f.env);
        // A sampler thread's request word, which a stop also announces; with
        // no thread (none, or a self-timed sampler), the stop's own word.
        let request = if self.obs.thread_sampler() {
            &self.obs.sample.request as *const std::sync::atomic::AtomicU64
        } else {
            crate::sched::interrupt::word() as *const std::sync::atomic::AtomicU64
        };
        let mut ctx = NativeCtx {
            vm: (self as *mut Vm).cast(),
            stack: std::ptr::null_mut(),
            heap: std::ptr::null_mut(),
            bp: bp as u64,
            env,
            sends: 0,
            inlined: 0,
            depth: 0,
            poll_at: 0,
            attention: 0,
            request,
            frames: std::ptr::null_mut(),
            frames_len: 0,
            frames_cap: 0,
            stack_cap: 0,
            epoch: 0,
            slow_returns: 0,
            unwind_watch: u64::MAX,
            watch_cells: self.obs.watches.table(),
            meta_depth: &self.sched.running.meta_depth,
            fast: std::ptr::null(),
            fast_len: 0,
            nil_test: std::ptr::null(),
            nil_test_len: 0,
            identity: std::ptr::null(),
            identity_len: 0,
            string_eq: std::ptr::null(),
            runtime: self.native.runtime,
        };
        self.sync_out(&mut ctx);
        // A sampler sees native code as its own state, `Native` (runtime
        // calls that publish a state of their own go back to it; no process
        // switch happens inside native code, so the word it replaces is the
        // one to go back to). A sampler thread reads the published word; a
        // self-timed one reads it on this thread, where `in_native` alone
        // says it (`SampleRegister::effective_word`): no word to swap per entry.
        let was_native = self.obs.in_native;
        self.obs.in_native = true;
        let saved = if self.obs.thread_sampler() {
            let state = if self.sched.current == self.obs.finalizer {
                VmState::Finalization
            } else {
                VmState::Native
            };
            Some(self.obs.swap_state(state, 0, self.sched.current))
        } else {
            None
        };
        // Native code holds the context's address plus `NativeCtx::BIAS`.
        let biased = std::ptr::from_mut(&mut ctx).wrapping_byte_add(NativeCtx::BIAS);
        let status = f(biased, pc as u64, 0, 0);
        self.obs.in_native = was_native;
        if let Some(word) = saved {
            self.obs.restore_state(word);
        }
        // Native code always leaves through a runtime call, which took its
        // frames; only the counts since are left.
        self.obs.sends += ctx.counted_sends();
        self.obs.inlined += ctx.inlined;
        if let Some(e) = self.native.error.take() {
            return Err(e);
        }
        if status == DECLINE {
            self.sched.running.stack.truncate(len);
            return Ok(Entered::Declined);
        }
        if status == BAIL {
            let why = std::mem::replace(&mut self.native.why, OTHER);
            if let Some(n) = self.native.bails.get_mut(why) {
                *n += 1;
            }
        }
        Ok(Entered::Ran)
    }

    /// An error inside a runtime call: kept for the loop, which returns it
    /// once native code has left.
    #[cold]
    fn native_failed(&mut self, e: VmError) -> u64 {
        self.native.error = Some(e);
        self.bail(ERROR)
    }

    /// Leave to the interpreter, saying why (for `--jit-stats`).
    #[inline]
    fn bail(&mut self, why: usize) -> u64 {
        self.native.why = why;
        BAIL
    }

    /// After a send made by native code: the send completed (the sender's
    /// frame is on top again with the answer pushed) and native code goes on
    /// (`DONE`), a frame was pushed whose native code native code calls
    /// itself (the function's address), or the loop takes over (`BAIL`).
    fn after_native_send(&mut self, ctx: &mut NativeCtx, frames_before: usize, pc: usize) -> u64 {
        let n = self.sched.running.frames.len();
        if self.native.error.is_some() {
            return self.bail(ERROR);
        }
        if self.needs_attention() {
            return self.bail(SAFEPOINT);
        }
        if n == frames_before {
            // The same frame, at the same place (a primitive may have
            // restarted it: the loop then goes on).
            if let Some(f) = self.sched.running.frames.last()
                && f.pc == pc
            {
                let extent = Self::extent(self.image.code(f.method), f.bp);
                self.stack_to(extent);
                self.sync_out(ctx);
                return DONE;
            }
            return self.bail(OTHER);
        }
        if n == frames_before + 1
            && ctx.depth < MAX_NATIVE_DEPTH
            && let Some(f) = self.sched.running.frames.last()
            && let Some(native) = self.image.code(f.method).native.get()
            && f.pc == 0
        {
            ctx.bp = f.bp as u64;
            ctx.env = f.env;
            let extent = Self::extent(self.image.code(f.method), f.bp);
            self.stack_to(extent);
            self.sync_out(ctx);
            return native as usize as u64;
        }
        self.bail(if n != frames_before + 1 {
            OTHER
        } else if ctx.depth >= MAX_NATIVE_DEPTH {
            DEPTH
        } else {
            CALLEE
        })
    }

    /// Runtime call: the send (`Send`, `SuperSend` or the fallback of a
    /// `Special` whose inline path did not apply) just before resume point
    /// `pc` of the top frame, with the operand stack's top at `sp`. Answers
    /// `DONE`, `BAIL` or the native code of the activated callee (which the
    /// JIT's send entry point then calls).
    pub fn native_send(&mut self, ctx: &mut NativeCtx, pc: u64, sp: u64) -> u64 {
        self.sync_in(ctx);
        let pc = pc as usize;
        self.sched.running.stack.set_len(sp as usize);
        self.save_pc(pc);
        let Some(code) = self.top_code() else {
            return self.bail(OTHER);
        };
        let frames_before = self.sched.running.frames.len();
        if self.obs.per_send {
            self.note_send::<true>(code.id, pc);
        } else {
            self.note_send::<false>(code.id, pc);
        }
        if self.poll_wanted()
            && let Err(e) = self.native_send_poll(pc)
        {
            return self.native_failed(e);
        }
        let r = match code.ops.get(pc.wrapping_sub(1)) {
            Some(&Op::Send { sel, argc, site }) => {
                let id = code.sel_ids[sel as usize].get();
                self.dispatch(id, argc as usize, Some((&code, site as usize)))
            }
            Some(&Op::SuperSend { sel, argc, .. }) => {
                let id = code.sel_ids[sel as usize].get();
                let start = self.image.classes[code.holder.get() as usize]
                    .superclass
                    .unwrap_or(0);
                self.dispatch_in(start, id, argc as usize, None)
            }
            Some(&Op::Special { op, sel, site }) => match self.special(op, &code) {
                Ok(true) => Ok(()),
                // Native code runs only while no trap guards special sends.
                Ok(false) => self.special_send(&code, op, sel, site, true),
                Err(e) => Err(e),
            },
            _ => Err(self.fatal("internal error: a native send at an instruction that is not one")),
        };
        if let Err(e) = r {
            return self.native_failed(e);
        }
        self.after_native_send(ctx, frames_before, pc)
    }

    /// The poll of a send made by the runtime for native code (the one its
    /// inline sends make), before the callee's frame exists, so that a sample
    /// is the sender's, at its send: a stop requested from outside is the
    /// run's error.
    #[cold]
    #[inline(never)]
    fn native_send_poll(&mut self, pc: usize) -> Result<(), VmError> {
        if crate::sched::interrupt::pending() {
            return Err(self.interrupted());
        }
        self.copy_sample_stack(pc);
        self.self_timed_poll(Some(pc), false);
        Ok(())
    }

    /// Runtime call: the send just before resume point `pc` of the top frame
    /// (the operand stack's top at `sp`) at a site native code specialised on
    /// `method`, a leaf primitive's method (`leaf_primitive`), after probing
    /// that the site's inline cache still names it for the receiver's class.
    /// The send is counted and polled as [`native_send`](Self::native_send)
    /// does, then the primitive runs on the receiver and arguments in place
    /// through the interpreter's own `Vm::call_primitive` (the sampler's
    /// `Primitive` state, the lifetime recorder's allocation samples); when
    /// it does not answer, the rest of the send runs as in `Vm::invoke` (the
    /// fallback code is activated, or `error:` sent). Answers as
    /// `native_send` does.
    pub fn native_primitive(&mut self, ctx: &mut NativeCtx, pc: u64, sp: u64, method: u64) -> u64 {
        let prim = self
            .image
            .methods
            .get(method as usize)
            .and_then(|m| Some((m.primitive.get()?, m.num_args)));
        let watched = self.obs.watches.wants(method as u32) != 0;
        let Some((p, argc)) = prim.filter(|_| !self.obs.each_send && !watched) else {
            // Not a leaf primitive's method, a watched method (its `invoke`
            // records the call), or sends observed one by one.
            return self.native_invoke(ctx, pc, sp, method);
        };
        let pc = pc as usize;
        let frames_before = match self.begin_specialised_send(ctx, pc, sp) {
            Ok(n) => n,
            Err(answer) => return answer,
        };
        let reply = self.call_primitive::<false>(p, method as u32, argc);
        let Ok(crate::prims::Reply::Answer(v)) = reply else {
            let m = self.image.methods[method as usize].clone();
            if let Err(e) = self.primitive_not_answered(m, argc, reply) {
                return self.native_failed(e);
            }
            return self.after_native_send(ctx, frames_before, pc);
        };
        self.primitive_answered(argc, v);
        self.answered_at_once(ctx)
    }

    /// The start of a send at a specialised site ([`native_primitive`],
    /// [`native_invoke`]): the context synced in, the stack cut at `sp`, the
    /// resume point `pc` saved, the send counted (not per send: the callers
    /// test that) and polled. Answers the frame count before the send, or
    /// what native code gets back when the poll failed.
    ///
    /// [`native_primitive`]: Self::native_primitive
    /// [`native_invoke`]: Self::native_invoke
    #[inline(always)]
    fn begin_specialised_send(
        &mut self,
        ctx: &mut NativeCtx,
        pc: usize,
        sp: u64,
    ) -> Result<usize, u64> {
        self.sync_in(ctx);
        self.sched.running.stack.set_len(sp as usize);
        self.save_pc(pc);
        let frames_before = self.sched.running.frames.len();
        self.note_send::<false>(0, pc);
        if self.poll_wanted()
            && let Err(e) = self.native_send_poll(pc)
        {
            return Err(self.native_failed(e));
        }
        Ok(frames_before)
    }

    /// The end of a send at a specialised site whose method answered at
    /// once (a leaf primitive, a trivial method): it touched no frame and no
    /// cache, so only the stack's and the heap's addresses (which may have
    /// grown) are given back, unless a collection its allocation made due
    /// (always, under GC stress) or a stop needs the loop, which goes on
    /// after the send.
    #[inline(always)]
    fn answered_at_once(&mut self, ctx: &mut NativeCtx) -> u64 {
        if self.needs_attention() {
            return self.bail(SAFEPOINT);
        }
        self.sync_stack(ctx);
        ctx.heap = self.heap.words_ptr();
        self.sync_poll(ctx);
        DONE
    }

    /// The send just before resume point `pc` of the top frame (the operand
    /// stack's top at `sp`) at a site native code specialised on `method`,
    /// after probing that the site's inline cache still names it for the
    /// receiver's class: what the interpreter's `dispatch` does on that
    /// cache hit, `invoke` (which records a watched method's call), without
    /// decoding the instruction or probing the cache again. Native code asks
    /// for it (through the runtime's `primitive` entry) for a leaf
    /// primitive's method while a watch names it. Counted and polled as
    /// [`native_send`](Self::native_send), which it is while sends are
    /// observed one by one. A method that answered at once (trivial, or a
    /// leaf primitive that answered) touched no frame and no cache: only the
    /// stack's and the heap's addresses are given back, as
    /// [`native_primitive`](Self::native_primitive) does. Answers as
    /// `native_send`.
    fn native_invoke(&mut self, ctx: &mut NativeCtx, pc: u64, sp: u64, method: u64) -> u64 {
        let Some(m) = self
            .image
            .methods
            .get(method as usize)
            .filter(|_| !self.obs.each_send)
            .cloned()
        else {
            return self.native_send(ctx, pc, sp);
        };
        let pc = pc as usize;
        let frames_before = match self.begin_specialised_send(ctx, pc, sp) {
            Ok(n) => n,
            Err(answer) => return answer,
        };
        let at_once = m.trivial.is_some() || crate::objects::native::leaf_primitive(&m);
        let argc = m.num_args;
        if let Err(e) = self.invoke(m, argc) {
            return self.native_failed(e);
        }
        if !at_once
            || self.sched.running.frames.len() != frames_before
            || self.native.error.is_some()
        {
            return self.after_native_send(ctx, frames_before, pc);
        }
        self.answered_at_once(ctx)
    }

    /// Runtime call: return `v` from the top frame (`ReturnTop`,
    /// `ReturnSelf`), whose operand stack, dead, starts at `sp`. Answers
    /// `RETURNED` when the sender, a native activation waiting for the
    /// answer, goes on (one native call fewer deep: `ctx.depth`); `BAIL`
    /// otherwise.
    pub fn native_return(&mut self, ctx: &mut NativeCtx, sp: u64, v: Value) -> u64 {
        if watches_alone(ctx.slow_returns)
            && let Some(r) = self.watched_native_return(ctx, v)
        {
            return r;
        }
        self.sync_in(ctx);
        self.sched.running.stack.set_len(sp as usize);
        let n = self.sched.running.frames.len();
        let unwinds = n.checked_sub(1) == Some(self.sched.running.unwind_watch);
        if let Err(e) = self.return_from_top(v) {
            return self.native_failed(e);
        }
        if ctx.depth == 0 {
            // Entered by the loop: it goes on with the sender.
            return RETURNED;
        }
        if unwinds || self.sched.running.frames.len() + 1 != n {
            return self.bail(RETURN);
        }
        if self.needs_attention() {
            return self.bail(SAFEPOINT);
        }
        match self.sched.running.frames.last() {
            Some(f) => {
                let extent = Self::extent(self.image.code(f.method), f.bp);
                self.stack_to(extent);
                self.sync_out(ctx);
                ctx.depth -= 1;
                RETURNED
            }
            None => self.bail(RETURN),
        }
    }

    /// Runtime call: the direct entry of method `word & 0xffff_ffff`,
    /// whose code uses the receiver's fields below `word >> 32`, refused a
    /// native call (under activation hooks or a method watch, or a check
    /// failed), made by the send just before resume point `pc` of the top
    /// frame with the operand stack's top at `sp`, whose site's inline-cache
    /// entry `cell` (0: probed by the caller) the direct entry probes. Under
    /// a method watch alone, with the direct entry's checks passed (native
    /// depth, frame room, the probe, the receiver's fields, made here as
    /// native code makes them), the send is counted and polled as the
    /// direct entry does, the call recorded as `invoke` records it when a
    /// watch names the method, and the frame pushed, flagged `WATCHED` when
    /// its answer is to be recorded: answers the method's native code, which
    /// the JIT's entry then calls at pc 0 (as after the runtime's send).
    /// Otherwise the send is the runtime's ([`native_send`](Self::native_send),
    /// answered as it is), the direct entry's refusal.
    pub fn native_watched_call(
        &mut self,
        ctx: &mut NativeCtx,
        pc: u64,
        sp: u64,
        cell: u64,
        word: u64,
    ) -> u64 {
        let (method, need) = (word as u32, (word >> 32) as usize);
        let callee = match self.image.methods.get(method as usize) {
            Some(m)
                if watches_alone(ctx.slow_returns)
                    && ctx.depth < MAX_NATIVE_DEPTH
                    && ctx.frames_len < ctx.frames_cap =>
            {
                m.native.get().map(|f| (f, m.num_args, m.num_temps))
            }
            _ => None,
        };
        let Some((native, argc, temps)) = callee.filter(|_| !self.needs_attention()) else {
            return self.native_send(ctx, pc, sp);
        };
        let bp = (sp as usize).wrapping_sub(1 + argc);
        let pc = pc as usize;
        self.sync_in(ctx);
        self.sched.running.stack.set_len(sp as usize);
        let fits = (cell == 0 || self.site_names(ctx, pc, cell, method, bp))
            && self
                .sched
                .running
                .stack
                .get(bp)
                .is_some_and(|&r| need == 0 || (r.is_ptr() && self.heap.size(r) >= need));
        if !fits {
            return self.native_send(ctx, pc as u64, sp);
        }
        self.save_pc(pc);
        self.note_send::<false>(0, pc);
        if self.poll_wanted()
            && let Err(e) = self.native_send_poll(pc)
        {
            return self.native_failed(e);
        }
        self.push_watched_frame(method, bp, argc);
        self.mark_native_activation(method);
        if self.needs_attention() {
            // The loop runs the frame from pc 0, as one `invoke` pushed:
            // its temporaries on the stack.
            self.sched
                .running
                .stack
                .resize(sp as usize + temps, Value::NIL);
            return self.bail(SAFEPOINT);
        }
        let extent = Self::extent(self.image.code(method), bp);
        ctx.bp = bp as u64;
        ctx.env = Value::NIL;
        self.stack_to(extent);
        self.sync_stack(ctx);
        let frames = &mut self.sched.running.frames;
        ctx.frames = frames.as_mut_ptr().cast();
        ctx.frames_len = frames.len() as u64;
        self.sync_poll(ctx);
        native as usize as u64
    }

    /// Does inline-cache entry `cell` (its address) of the site of the send
    /// just before `pc` of the top frame (the caller's, per `ctx`) name
    /// `method` for the class of the receiver at stack index `bp`, in the
    /// epoch now? The probe a direct entry makes, made by the runtime.
    fn site_names(&self, ctx: &NativeCtx, pc: usize, cell: u64, method: u32, bp: usize) -> bool {
        let Some(f) = self.sched.running.frames.last() else {
            return false;
        };
        let code = self.image.code(f.method);
        let site = match code.ops.get(pc.wrapping_sub(1)) {
            Some(&Op::Send { site, .. }) | Some(&Op::Special { site, .. }) => site,
            _ => return false,
        };
        // Native code probes SmallIntegers and pointers only, against the
        // epoch it was given.
        let class = match self.sched.running.stack.get(bp) {
            Some(&r) if r.is_int() => crate::objects::cls::INTEGER,
            Some(&r) if r.is_ptr() => self.heap.class_index(r),
            _ => return false,
        };
        let epoch = ctx.epoch as u32;
        code.caches.get(site as usize).is_some_and(|pic| {
            pic.iter().any(|e| {
                let ic = e.get();
                e.as_ptr() as u64 == cell
                    && ic.class == class
                    && ic.epoch == epoch
                    && ic.method == method
            })
        })
    }

    /// [`native_return`](Self::native_return) under a method watch alone
    /// (every return comes here) of `v` from the top frame, when native code
    /// would have returned inline without the watch (a native sender waits
    /// for the answer, no unwind to resume, no environment of its own, not
    /// at the meta level: `fill_ret_block` in the JIT): a `WATCHED` frame's
    /// answer is recorded, and the frame popped as the inline return pops
    /// it (`RETURNED`). `None`: the whole return.
    fn watched_native_return(&mut self, ctx: &mut NativeCtx, v: Value) -> Option<u64> {
        let top = (ctx.frames_len as usize).checked_sub(1)?;
        if ctx.depth == 0 || top as u64 == ctx.unwind_watch {
            return None;
        }
        self.sched.running.frames.set_len(top + 1);
        let f = *self.sched.running.frames.last()?;
        let code = self.image.code(f.method);
        if code.has_env() || code.meta_level {
            return None;
        }
        // The receiver's slot is the stack's top (an `ANSWER` frame's
        // answer is recorded for it), then the answer's.
        self.sched.running.stack.set_len(f.bp + 1);
        if f.flags & crate::sched::Frame::WATCHED != 0 {
            self.watched_return_at(&f, top, v);
        }
        self.sched.running.stack[f.bp] = v;
        ctx.frames_len -= 1;
        ctx.depth -= 1;
        Some(RETURNED)
    }

    /// Runtime call: leave the top frame to the loop at `pc` with the operand
    /// stack's top at `sp` (an instruction native code does not run, or a
    /// case its inline path does not handle: the interpreter runs it).
    pub fn native_bail(&mut self, ctx: &mut NativeCtx, pc: u64, sp: u64) -> u64 {
        self.sync_in(ctx);
        self.native.interpret_next = true;
        self.save_pc(pc as usize);
        self.sched.running.stack.set_len(sp as usize);
        self.bail(INSTRUCTION)
    }

    /// Runtime call: push a closure of block `index` of the top frame's code
    /// (`PushBlock`, just before resume point `pc`, the operand stack's top at
    /// `sp`). Answers `DONE` (native code goes on) or `BAIL`.
    pub fn native_push_block(&mut self, ctx: &mut NativeCtx, pc: u64, sp: u64, index: u64) -> u64 {
        self.sync_in(ctx);
        self.sched.running.stack.set_len(sp as usize);
        self.save_pc(pc as usize);
        let Some((code, bp)) = self
            .sched
            .running
            .frames
            .last()
            .map(|f| (self.image.code(f.method).clone(), f.bp))
        else {
            return self.bail(OTHER);
        };
        let Some(block) = code.blocks.get(index as usize) else {
            return self.bail(OTHER);
        };
        match self.make_closure(block, bp) {
            Ok(clo) => self.sched.running.stack.push(clo),
            Err(e) => return self.native_failed(e.into()),
        }
        let frames = self.sched.running.frames.len();
        self.after_native_send(ctx, frames, pc as usize)
    }

    /// The code of the top frame of the running process.
    fn top_code(&self) -> Option<Rc<MethodCode>> {
        let f = self.sched.running.frames.last()?;
        Some(self.image.code(f.method).clone())
    }

    /// Runtime call: the value of the global named by symbol `symbol` (native
    /// code reads the symbol's id from its literal's `sel_ids` cell, which
    /// literal patching updates), or 0 when there is none (native code then
    /// leaves to the interpreter, which sends `unknownGlobal:`).
    pub fn native_global(&self, symbol: u64) -> u64 {
        u32::try_from(symbol)
            .ok()
            .and_then(|id| self.image.globals.get(&id))
            .map_or(0, |v| v.raw())
    }

    /// Runtime call: `a = b` on a String receiver (the interpreter's fast
    /// path, `string_equal`): 1 when equal, 2 when not, 0 when the fast path
    /// does not apply (native code then makes the send). Reads the heap
    /// only: native code calls it without storing its operands.
    pub fn native_string_equal(&mut self, a: Value, b: Value) -> u64 {
        match self.string_equal(a, b) {
            Some(true) => 1,
            Some(false) => 2,
            None => 0,
        }
    }

    /// Runtime call: store `value` into slot `index` of `object` through the
    /// heap's write barrier (field and environment stores of pointers).
    pub fn native_store(&mut self, object: Value, index: u64, value: Value) {
        self.heap.set_slot(object, index as usize, value);
    }

    /// Runtime call: a poll of native code, at the send just before `pc`
    /// that it ran inline (the sends it counted reached `ctx.poll_at`), or at
    /// the back jump of a loop that sends nothing (its request word was set).
    /// A stop requested from outside answers `BAIL` with the run's error kept
    /// (native code leaves without storing its operands: the run ends);
    /// otherwise the stack copy a sampler thread asked for, or a self-timed
    /// sampler's, is made and native code goes on (`DONE`).
    pub fn native_sample(&mut self, ctx: &mut NativeCtx, pc: u64) -> u64 {
        self.sync_in(ctx);
        let in_frame = !self.sched.running.frames.is_empty();
        if in_frame {
            self.save_pc(pc as usize);
        }
        if crate::sched::interrupt::pending() {
            let e = self.interrupted();
            return self.native_failed(e);
        }
        if in_frame {
            self.copy_sample_stack(pc as usize);
            self.self_timed_poll(Some(pc as usize), false);
        } else {
            self.obs.schedule_poll();
        }
        self.sync_poll(ctx);
        DONE
    }
}
