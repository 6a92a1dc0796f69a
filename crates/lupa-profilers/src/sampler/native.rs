//! Native program counters of the VM thread (`lupa profile --native`), as the
//! paper's profiler takes them: at a tick the sampler thread sends `SIGPROF` to
//! the VM thread, whose signal handler copies the interrupted pc from the
//! signal context into an atomic, tagged with the tick's number; the sampler
//! collects it at its next tick (it never waits for the VM thread, which is
//! stopped only for the handler) and the pcs are symbolised at the end
//! ([`super::symbols`]). A tick whose handler has not run by the next tick has
//! no pc (counted).
//!
//! This is the sampler's signal code, one of the two modules of the profiler
//! layer allowed `unsafe` (the other is `clock.rs`; ARCHITECTURE.md, "Where
//! `unsafe` lives"). The handler is
//! async-signal-safe: it reads one register from the context the kernel passed
//! and stores two atomics. It is installed once per process and never removed
//! (a late signal must never meet the default action, which would end the
//! process); when no native sampler runs, nobody sends the signal. One native
//! sampler runs at a time.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The last pc the handler copied.
static PC: AtomicU64 = AtomicU64::new(0);
/// The number of the tick whose signal was sent last.
static TICK: AtomicU64 = AtomicU64::new(0);
/// The tick number the handler read with its last copy.
static DONE: AtomicU64 = AtomicU64::new(0);
/// Is a native sampler running?
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Was the handler installed (once per process)?
static INSTALLED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();

/// The VM thread, as the sampler thread interrupts it.
#[derive(Debug)]
pub(crate) struct NativeTarget {
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    thread: libc::pthread_t,
}

impl NativeTarget {
    /// Target the calling thread (the VM thread), installing the handler on
    /// first use; an error says why it is not possible (another native sampler
    /// runs, or this platform is not supported).
    pub(crate) fn for_current_thread() -> Result<NativeTarget, String> {
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        {
            INSTALLED.get_or_init(install).clone()?;
            if ACTIVE.swap(true, Ordering::AcqRel) {
                return Err("another native sampler is running in this process".to_string());
            }
            // SAFETY: pthread_self has no preconditions and answers the caller's id.
            let thread = unsafe { libc::pthread_self() };
            Ok(NativeTarget { thread })
        }
        #[cfg(not(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        {
            Err("native program counters (--native) need Linux on x86-64 or AArch64".to_string())
        }
    }

    /// Interrupt the VM thread for tick `seq` (non-zero); its pc is
    /// [`collect`](Self::collect)ed later.
    pub(crate) fn send(&self, seq: u64) {
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        {
            TICK.store(seq, Ordering::Release);
            // SAFETY: `thread` is the VM thread, alive while this target lives
            // (the VM thread joins the sampler thread, which owns the target,
            // before it goes on); SIGPROF runs only our handler.
            unsafe {
                libc::pthread_kill(self.thread, libc::SIGPROF);
            }
        }
        #[cfg(not(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        let _ = seq;
    }

    /// The pc copied for tick `seq`, if the handler ran for it.
    pub(crate) fn collect(&self, seq: u64) -> Option<u64> {
        (DONE.load(Ordering::Acquire) == seq).then(|| PC.load(Ordering::Relaxed))
    }
}

impl Drop for NativeTarget {
    fn drop(&mut self) {
        ACTIVE.store(false, Ordering::Release);
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn install() -> Result<(), String> {
    // SAFETY: `sigaction` is plain data (all-zero is a valid empty value);
    // `sa_mask` is initialised by sigemptyset before use; the handler has the
    // three-argument signature SA_SIGINFO requires; `old` is a live local.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigprof as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGPROF, &action, &mut old) != 0 {
            return Err(format!(
                "cannot install the SIGPROF handler: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// The SIGPROF handler: copy the interrupted pc. Async-signal-safe (atomics only).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
extern "C" fn on_sigprof(
    _sig: libc::c_int,
    _info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    if context.is_null() {
        return;
    }
    // SAFETY: for an SA_SIGINFO handler the kernel passes a pointer to the
    // interrupted thread's `ucontext_t`, valid for the handler's duration; it
    // is only read.
    let pc = unsafe { interrupted_pc(&*(context as *const libc::ucontext_t)) };
    let tick = TICK.load(Ordering::Acquire);
    PC.store(pc, Ordering::Relaxed);
    DONE.store(tick, Ordering::Release);
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn interrupted_pc(uc: &libc::ucontext_t) -> u64 {
    uc.uc_mcontext.gregs[libc::REG_RIP as usize] as u64
}

#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
fn interrupted_pc(uc: &libc::ucontext_t) -> u64 {
    uc.uc_mcontext.pc
}

#[cfg(all(
    test,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_signalled_copies_its_pc_and_one_sampler_runs_at_a_time() {
        let target = NativeTarget::for_current_thread().expect("supported here");
        assert!(NativeTarget::for_current_thread().is_err(), "one at a time");
        // A signal to the calling thread runs its handler before pthread_kill
        // returns to it.
        target.send(7);
        let pc = target.collect(7).expect("the handler ran");
        assert_ne!(pc, 0);
        assert_eq!(target.collect(8), None);
        drop(target);
        let again = NativeTarget::for_current_thread().expect("free again");
        drop(again);
    }
}
