//! Stopping a running program from outside the VM (Ctrl-C, `kill`): a
//! process-wide request that every VM of the process honours at its next
//! safepoint, and while it sleeps idle, by ending the run with
//! [`VmError::Interrupted`](crate::VmError::Interrupted).
//!
//! The request is one atomic word, so that setting it is async-signal-safe
//! (a signal handler or a signal-watching thread may call [`request`]); it is
//! announced to the interpreter's safepoints through `poll.rs`, and stays
//! set: every later safepoint stops again. Native code made by a JIT sees
//! it when it next calls into the runtime (a send it cannot complete inline,
//! an allocation), and at its inline sends: there it tests a request word
//! anyway (`NativeCtx::request`), its sampler's or, with no sampler
//! attached, this one (`word`). So a compiled loop stops at once with no
//! sampler, and at the sampler's next tick with one (the tick's runtime call
//! sees the stop), at no cost to native code's hot path.

use std::sync::atomic::{AtomicU64, Ordering};

/// 0, or the exit status the process should end with (128 + the signal).
/// Native code with no sampler attached tests it at its inline sends.
static REQUESTED: AtomicU64 = AtomicU64::new(0);

/// Ask every VM of the process to stop; `status` (non-zero: 130 for
/// SIGINT, 143 for SIGTERM) is what [`requested`] answers afterwards.
/// Answers false when a stop was already requested (the first status
/// stays). Async-signal-safe.
pub fn request(status: i32) -> bool {
    let status = if status == 0 {
        1
    } else {
        u64::from(status as u32)
    };
    let first = REQUESTED
        .compare_exchange(0, status, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok();
    super::poll::announce();
    first
}

/// The status given to the first [`request`], if a stop was requested.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s as u32 as i32),
    }
}

/// The request word itself, for native code to test while no sampler is
/// attached (non-zero once a stop is requested).
pub(crate) fn word() -> &'static AtomicU64 {
    &REQUESTED
}

/// Was a stop requested (the safepoint's test)?
#[inline(always)]
pub(crate) fn pending() -> bool {
    REQUESTED.load(Ordering::Relaxed) != 0
}
