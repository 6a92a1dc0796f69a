//! The code zone and the doors between Rust and native code: the only
//! module of Lupa's JIT with `unsafe` (and, with lupa-heap's byte views and
//! the sampler's signal code, one of the three places in the workspace).
//!
//! - **Executable memory, W^X.** One anonymous mapping of `size` bytes,
//!   readable and executable; code is appended at its end. To write new code
//!   the pages it covers are made readable and writable (not executable),
//!   written, and made readable and executable again: no page is ever
//!   writable and executable at once. Installing, and therefore every write,
//!   happens only on the VM thread at a safepoint of the interpreter's loop,
//!   when no native code runs (a compiler thread makes machine code in its
//!   own buffers and never touches the zone: `worker.rs`).
//! - **Stubs.** The shared entry stubs (`codegen/stubs.rs`) are put at the
//!   zone's start when the JIT is made, before any function: every
//!   function's direct entry calls them, so they are never evicted or
//!   moved (compaction starts after them).
//! - **Eviction.** When the zone is full, the quarter of the functions
//!   entered least since the last eviction (each function's prologue counts
//!   its entries in a slot of [`CodeZone::counters`]), and every function
//!   whose method is gone, are freed: their methods lose their native code,
//!   and the remaining functions are moved down to close the gaps (the code
//!   has no relocations, so it runs anywhere) and their methods get their new
//!   addresses. As for writes, no native code runs meanwhile, so no return
//!   address points into moved code.
//! - **Entering native code.** A function's address becomes a
//!   [`NativeFn`] only here: after its code is in place, and in the send
//!   and leaf-primitive entry points, which call the native code of the
//!   callee the runtime's send activated (native code's slow path of a send
//!   is one call).
//! - **Leaving native code.** The runtime entry points native code calls
//!   (`extern "C"` functions) turn the context's raw VM pointer back into
//!   `&mut Vm` and call the VM's safe runtime calls.

use crate::codegen::{Compiled, DIRECT};
use lupa_vm::{
    BAIL, DONE, JitWork, MethodCode, NativeCtx, NativeFn, NativeFunctionInfo, RETURNED, Value, Vm,
};
use std::ptr::NonNull;
use std::rc::Weak;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), `None` where
/// the clock cannot be read: what the compiler thread reports of itself
/// (`worker.rs`). Here because this is the crate's one module allowed
/// `unsafe`.
pub(crate) fn thread_cpu_time() -> Option<std::time::Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live local the call writes one timespec into; the
    // clock id is a constant every Linux has (an error return otherwise,
    // never undefined behaviour).
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// The most descriptions of evicted or moved functions kept: past it, the
/// oldest half is forgotten (a pc sampled there long before is then named
/// by no function).
pub(crate) const MAX_RETIRED: usize = 1 << 16;

/// One function in the zone.
pub(crate) struct Function {
    /// Its offset in the zone.
    pub(crate) offset: usize,
    /// Its length in bytes.
    pub(crate) len: usize,
    /// The method or block it runs (gone: the function is dead).
    pub(crate) method: Weak<MethodCode>,
    /// Its slot in the entry counters.
    pub(crate) counter: usize,
    /// Its name (`Class>>selector`, `[] in Class>>selector`).
    pub(crate) name: String,
    /// `(start, end, pc)` relative to `offset`: the machine code running
    /// bytecode instruction `pc`.
    pub(crate) pcs: Vec<(u32, u32, u32)>,
    /// The id of the method or block.
    pub(crate) method_id: u32,
    /// When it was put at `offset`.
    pub(crate) since: Instant,
    /// The table its resume dispatch reads (its address is in the code).
    pub(crate) _resume_table: Box<[u32]>,
}

impl Function {
    /// Its description at `zone_start + offset`, left there at `until`.
    pub(crate) fn info(&self, zone_start: usize, until: Option<Instant>) -> NativeFunctionInfo {
        NativeFunctionInfo {
            name: self.name.clone(),
            method: self.method_id,
            start: zone_start + self.offset,
            len: self.len,
            pcs: self.pcs.clone(),
            since: self.since,
            until,
        }
    }
}

/// The machine-code zone.
pub(crate) struct CodeZone {
    base: NonNull<u8>,
    size: usize,
    used: usize,
    /// The bytes at the start that hold the entry stubs (never moved).
    pinned: usize,
    /// The entry stubs there, described as functions running no method
    /// (`NativeFunctionInfo::NO_METHOD`), for the zone's description.
    pub(crate) stubs: Vec<NativeFunctionInfo>,
    page: usize,
    /// The functions, in address order.
    pub(crate) functions: Vec<Function>,
    /// Per function slot: entries since the last eviction (incremented by the
    /// function's prologue).
    counters: Box<[AtomicU64]>,
    free_counters: Vec<usize>,
    /// Evictions so far, and functions they freed.
    pub(crate) evictions: u64,
    pub(crate) evicted: u64,
    /// Functions that were evicted or moved, with where they were and when.
    pub(crate) retired: Vec<NativeFunctionInfo>,
}

/// What the zone could not do.
#[derive(Debug)]
pub(crate) enum ZoneError {
    /// The operating system refused the mapping or a protection change.
    Os(String),
    /// A function larger than the whole zone.
    TooLarge(usize),
}

impl std::fmt::Display for ZoneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ZoneError::Os(e) => write!(f, "code zone: {e}"),
            ZoneError::TooLarge(n) => {
                write!(f, "a function of {n} bytes does not fit in the code zone")
            }
        }
    }
}

fn os_error(what: &str) -> ZoneError {
    ZoneError::Os(format!("{what}: {}", std::io::Error::last_os_error()))
}

impl CodeZone {
    /// A zone of `size` bytes (rounded up to whole pages).
    pub(crate) fn new(size: usize) -> Result<CodeZone, ZoneError> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let size = size.max(page).div_ceil(page) * page;
        // SAFETY: an anonymous private mapping at an address the kernel
        // chooses; no existing memory is affected. Checked for failure below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_EXEC,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_error("mmap"));
        }
        let base = NonNull::new(p.cast::<u8>()).ok_or_else(|| os_error("mmap"))?;
        let slots = (size / 64).max(16);
        Ok(CodeZone {
            base,
            size,
            used: 0,
            pinned: 0,
            stubs: Vec::new(),
            page,
            functions: Vec::new(),
            counters: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            free_counters: (0..slots).rev().collect(),
            evictions: 0,
            evicted: 0,
            retired: Vec::new(),
        })
    }

    /// The zone's size and the bytes in use.
    pub(crate) fn usage(&self) -> (usize, usize) {
        (self.size, self.used)
    }

    /// The bytes the entry stubs take.
    pub(crate) fn stub_bytes(&self) -> usize {
        self.pinned
    }

    /// Put the entry stub `name`'s `code` in the zone, which keeps it where
    /// it is for the zone's life; answers its address. Only before any
    /// function is installed (the stubs come first).
    pub(crate) fn install_stub(&mut self, code: &[u8], name: &str) -> Result<u64, ZoneError> {
        let len = code.len().div_ceil(16) * 16;
        if !self.functions.is_empty() || self.used + len > self.size {
            return Err(ZoneError::TooLarge(len));
        }
        let offset = self.used;
        self.write(offset, code)?;
        self.used += len;
        self.pinned = self.used;
        let start = self.start() + offset;
        self.stubs.push(NativeFunctionInfo {
            name: name.to_string(),
            method: NativeFunctionInfo::NO_METHOD,
            start,
            len: code.len(),
            pcs: Vec::new(),
            since: Instant::now(),
            until: None,
        });
        Ok(start as u64)
    }

    /// The zone's first address.
    pub(crate) fn start(&self) -> usize {
        self.base.as_ptr() as usize
    }

    /// A free entry counter slot and its address (for the next function's
    /// prologue), or `None` when every slot is taken.
    pub(crate) fn take_counter(&mut self) -> Option<(usize, u64)> {
        let slot = self.free_counters.pop()?;
        self.counters[slot].store(0, Ordering::Relaxed);
        Some((slot, self.counters[slot].as_ptr() as u64))
    }

    /// The entries counted (since the last eviction) of the functions of
    /// method `id` in the zone (for tests: did native code run?).
    #[cfg(test)]
    pub(crate) fn entries_of(&self, id: u32) -> u64 {
        self.functions
            .iter()
            .filter(|f| f.method_id == id)
            .map(|f| self.counters[f.counter].load(Ordering::Relaxed))
            .sum()
    }

    /// Give back a counter slot a compilation did not use.
    pub(crate) fn return_counter(&mut self, slot: usize) {
        self.free_counters.push(slot);
    }

    /// Make `[from, from + len)` of the zone writable (`true`) or executable.
    fn protect(&self, from: usize, len: usize, writable: bool) -> Result<(), ZoneError> {
        if len == 0 {
            return Ok(());
        }
        let start = from / self.page * self.page;
        let end = (from + len).div_ceil(self.page) * self.page;
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ | libc::PROT_EXEC
        };
        // SAFETY: the range is whole pages inside our own mapping (start and
        // end are within 0..=size, as `from + len <= size` is checked by the
        // callers). Changing protections affects only this mapping.
        let r = unsafe { libc::mprotect(self.base.as_ptr().add(start).cast(), end - start, prot) };
        if r != 0 {
            return Err(os_error("mprotect"));
        }
        Ok(())
    }

    /// Copy `bytes` to `offset` of the zone (writable only meanwhile).
    fn write(&mut self, offset: usize, bytes: &[u8]) -> Result<(), ZoneError> {
        debug_assert!(offset + bytes.len() <= self.size);
        self.protect(offset, bytes.len(), true)?;
        // SAFETY: the destination lies inside the mapping (checked by the
        // callers: offset + len <= size) and was just made writable; no
        // native code runs while the zone is written (the interpreter
        // compiles only at its safepoints), and the source is a Rust slice
        // that cannot overlap the mapping.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.base.as_ptr().add(offset),
                bytes.len(),
            );
        }
        self.protect(offset, bytes.len(), false)
    }

    /// The native function at `offset`.
    fn function_at(&self, offset: usize) -> NativeFn {
        // SAFETY: `offset` is the start of a function that `install` copied
        // into the zone, compiled by Cranelift for this machine with the
        // `NativeFn` signature and calling convention (`codegen::
        // native_signature`); its pages are executable. The code keeps the
        // contract of lupa-vm's native boundary (objects/native.rs) and
        // calls only the entry points of this module. It keeps the
        // registers the convention makes callee-saved, r15 too (Cranelift's
        // pinned register, which it never allocates: codegen saves its
        // caller's at entry and puts it back at each return).
        unsafe {
            std::mem::transmute::<*const u8, NativeFn>(self.base.as_ptr().add(offset).cast_const())
        }
    }

    /// Put `compiled`'s code in the zone (evicting when full) for `method`,
    /// keeping its pc map and resume table; answers its native function.
    pub(crate) fn install(
        &mut self,
        compiled: Compiled,
        method: Weak<MethodCode>,
        counter: usize,
        name: String,
        work: &JitWork<'_>,
    ) -> Result<NativeFn, ZoneError> {
        let Compiled {
            code,
            pcs,
            resume_table,
        } = compiled;
        let len = code.len().div_ceil(16) * 16;
        if len > self.size - self.pinned {
            return Err(ZoneError::TooLarge(len));
        }
        if self.used + len > self.size {
            work.evicting(|| self.evict(len))?;
        }
        let method_id = method.upgrade().map_or(u32::MAX, |m| m.id);
        let offset = self.used;
        self.write(offset, &code)?;
        self.used += len;
        self.functions.push(Function {
            offset,
            len,
            method,
            counter,
            name,
            pcs,
            method_id,
            since: Instant::now(),
            _resume_table: resume_table,
        });
        Ok(self.function_at(offset))
    }

    /// Every function stops being its method's (the VM dropped all native
    /// code: none is entered again): its method is forgotten, so the next
    /// eviction frees it first and never touches the method's newer code.
    /// The zone itself is not written (native code may be running).
    pub(crate) fn forget_methods(&mut self) {
        for f in &mut self.functions {
            f.method = Weak::new();
        }
    }

    /// Free at least `need` bytes: the dead functions, then the quarter
    /// entered least since the last eviction (more until `need` fits), and
    /// move the rest down.
    fn evict(&mut self, need: usize) -> Result<(), ZoneError> {
        self.evictions += 1;
        let n = self.functions.len();
        let mut order: Vec<usize> = (0..n).collect();
        let uses = |f: &Function| {
            if f.method.strong_count() == 0 {
                0
            } else {
                1 + self.counters[f.counter].load(Ordering::Relaxed)
            }
        };
        order.sort_by_key(|&i| uses(&self.functions[i]));
        let mut evict = vec![false; n];
        let mut freed = 0usize;
        let quarter = n.div_ceil(4);
        for (k, &i) in order.iter().enumerate() {
            let f = &self.functions[i];
            let dead = f.method.strong_count() == 0;
            if !dead && k >= quarter && self.used - freed + need <= self.size {
                break;
            }
            evict[i] = true;
            freed += f.len;
        }
        // Everything but the stubs moves: the zone is writable while it
        // does, and no native code runs.
        self.protect(self.pinned, self.used - self.pinned, true)?;
        let now = Instant::now();
        let zone_start = self.start();
        let mut to = self.pinned;
        let mut kept = Vec::with_capacity(n);
        for (i, f) in std::mem::take(&mut self.functions).into_iter().enumerate() {
            if evict[i] {
                if let Some(m) = f.method.upgrade() {
                    m.native.set(None);
                    m.hotness.set(u32::MAX);
                }
                self.free_counters.push(f.counter);
                self.evicted += 1;
                self.retired.push(f.info(zone_start, Some(now)));
                continue;
            }
            if f.offset != to {
                // SAFETY: both ranges are inside the mapping, which is
                // writable now; `copy` allows them to overlap.
                unsafe {
                    std::ptr::copy(
                        self.base.as_ptr().add(f.offset),
                        self.base.as_ptr().add(to),
                        f.len,
                    );
                }
                self.retired.push(f.info(zone_start, Some(now)));
                kept.push(Function {
                    offset: to,
                    since: now,
                    ..f
                });
            } else {
                kept.push(f);
            }
            to += kept.last().map_or(0, |f: &Function| f.len);
        }
        self.protect(self.pinned, self.used - self.pinned, false)?;
        if self.retired.len() > MAX_RETIRED {
            // A run that evicts without end keeps the newest descriptions.
            let excess = self.retired.len() - MAX_RETIRED / 2;
            self.retired.drain(..excess);
        }
        self.used = to;
        for f in &kept {
            self.counters[f.counter].store(0, Ordering::Relaxed);
            if let Some(m) = f.method.upgrade() {
                m.native.set(Some(self.function_at(f.offset)));
            }
        }
        self.functions = kept;
        Ok(())
    }
}

impl Drop for CodeZone {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; the zone is dropped
        // with its JIT, whose VM runs no native code any more.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.size);
        }
    }
}

/// The VM and the context of a runtime call.
///
/// # Safety
/// `ctx` is what the interpreter passed to native code
/// (`Vm::enter_native`): its context's address plus `NativeCtx::BIAS`,
/// the context valid for the call, not aliased by any Rust
/// reference while native code runs, and its `vm` field points to the VM that
/// entered native code, whose own `&mut` is not used until native code
/// returns to it.
unsafe fn parts<'a>(ctx: *mut NativeCtx) -> (&'a mut Vm, &'a mut NativeCtx) {
    // SAFETY: as the function's contract says (the context is `BIAS`
    // bytes before `ctx`, inside the same `NativeCtx`).
    unsafe {
        let ctx = &mut *ctx.byte_sub(NativeCtx::BIAS);
        let vm = &mut *ctx.vm.cast::<Vm>();
        (vm, ctx)
    }
}

/// A send: `DONE` (native code goes on) or `BAIL`. When the send activated
/// a method with native code, that code is called from here, so that a send
/// site's slow path in native code is one call and one test (its callers'
/// code stays small, which is most of what compiling it costs).
pub(crate) extern "C" fn rt_send(ctx: *mut NativeCtx, pc: u64, sp: u64, _cell: u64) -> u64 {
    let r = {
        // SAFETY: called by native code with its context (see `parts`); the
        // references end with this block, before native code runs again.
        let (vm, ctx) = unsafe { parts(ctx) };
        vm.native_send(ctx, site_pc(pc), sp)
    };
    run_activated(ctx, r)
}

/// A send to a leaf primitive's method at a site specialised on it
/// (`Vm::native_primitive`): answers as [`rt_send`], whose path it takes
/// when the primitive does not answer (its fallback code may have native
/// code, called from here in the same way).
pub(crate) extern "C" fn rt_primitive(ctx: *mut NativeCtx, pc: u64, sp: u64, method: u64) -> u64 {
    let r = {
        // SAFETY: called by native code with its context (see `parts`); the
        // references end with this block, before native code runs again.
        let (vm, ctx) = unsafe { parts(ctx) };
        vm.native_primitive(ctx, site_pc(pc), sp, method)
    };
    run_activated(ctx, r)
}

/// The pc after a send as [`rt_send`] and [`rt_primitive`] take it: a send
/// site's call passes it as a direct entry's (`codegen::DIRECT` plus the
/// pc, whichever it calls: one constant for its paths).
fn site_pc(pc: u64) -> u64 {
    pc & (DIRECT as u64 - 1)
}

/// The end of a send's runtime call that answered `r`: `DONE` and `BAIL` as
/// they are, or the native code of the callee the send activated, called
/// here; answers `DONE` when it returned, `BAIL` otherwise.
#[inline(always)]
fn run_activated(ctx: *mut NativeCtx, r: u64) -> u64 {
    if r == DONE || r == BAIL {
        return r;
    }
    // SAFETY: the VM's send entries answer DONE, BAIL or the address of the
    // native code of the callee they activated (a `NativeFn` in this zone,
    // entered at pc 0 with the context native code runs with, its frame
    // pushed by the runtime). `ctx` (the context's address plus `BIAS`,
    // as native code holds it) is valid for this call and no Rust
    // reference to it or to the VM is live while the callee runs. The
    // callee's return to a native sender takes the depth added here back
    // (after any other answer native code leaves, and the depth is not read
    // again).
    unsafe {
        let f = std::mem::transmute::<usize, NativeFn>(r as usize);
        (*ctx.byte_sub(NativeCtx::BIAS)).depth += 1;
        let status = f(ctx, 0, 0, 0);
        if status == RETURNED { DONE } else { BAIL }
    }
}

/// A method's direct entry refused its native call (`Vm::native_watched_call`):
/// the runtime's send, or (under a method watch) the frame pushed by the
/// runtime, a watched call recorded, and its native code called here as
/// [`rt_send`] calls a callee's; answered as [`rt_send`] answers.
pub(crate) extern "C" fn rt_watched_call(
    ctx: *mut NativeCtx,
    pc: u64,
    sp: u64,
    cell: u64,
    method: u64,
) -> u64 {
    let r = {
        // SAFETY: called by native code with its context (see `parts`); the
        // references end with this block, before native code runs again.
        let (vm, ctx) = unsafe { parts(ctx) };
        vm.native_watched_call(ctx, pc, sp, cell, method)
    };
    run_activated(ctx, r)
}

pub(crate) extern "C" fn rt_return(ctx: *mut NativeCtx, sp: u64, value: u64) -> u64 {
    // SAFETY: called by native code with its context (see `parts`).
    let (vm, ctx) = unsafe { parts(ctx) };
    vm.native_return(ctx, sp, Value::from_raw(value))
}

pub(crate) extern "C" fn rt_bail(ctx: *mut NativeCtx, pc: u64, sp: u64) -> u64 {
    // SAFETY: called by native code with its context (see `parts`).
    let (vm, ctx) = unsafe { parts(ctx) };
    vm.native_bail(ctx, pc, sp)
}

pub(crate) extern "C" fn rt_push_block(ctx: *mut NativeCtx, pc: u64, sp: u64, index: u64) -> u64 {
    // SAFETY: called by native code with its context (see `parts`).
    let (vm, ctx) = unsafe { parts(ctx) };
    vm.native_push_block(ctx, pc, sp, index)
}

pub(crate) extern "C" fn rt_global(ctx: *mut NativeCtx, symbol: u64) -> u64 {
    // SAFETY: called by native code with its context (see `parts`).
    let (vm, _) = unsafe { parts(ctx) };
    vm.native_global(symbol)
}

pub(crate) extern "C" fn rt_string_equal(ctx: *mut NativeCtx, a: u64, b: u64) -> u64 {
    // SAFETY: called by native code with its context (see `parts`).
    let (vm, _) = unsafe { parts(ctx) };
    vm.native_string_equal(Value::from_raw(a), Value::from_raw(b))
}

pub(crate) extern "C" fn rt_store(ctx: *mut NativeCtx, object: u64, index: u64, value: u64) {
    // SAFETY: called by native code with its context (see `parts`).
    let (vm, _) = unsafe { parts(ctx) };
    vm.native_store(Value::from_raw(object), index, Value::from_raw(value));
}

pub(crate) extern "C" fn rt_sample(ctx: *mut NativeCtx, pc: u64) -> u64 {
    // SAFETY: called by native code with its context (see `parts`).
    let (vm, ctx) = unsafe { parts(ctx) };
    vm.native_sample(ctx, pc)
}
