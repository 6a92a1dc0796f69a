//! The safepoint's one test for requests made from other threads.
//!
//! Other threads ask a VM to do something at its next safepoint: stop
//! (`interrupt.rs`, every VM of the process) or copy its running stack for a
//! sampler's tick (one VM's [`SampleRegister`](crate::obs::SampleRegister)).
//! Each request writes its own word first and then bumps one process-wide
//! generation word ([`announce`]). Each VM remembers the generation it last
//! looked at (`Observation::polled`); its safepoints (before every frame the
//! dispatch loop runs, and at back jumps) compare the two: one relaxed load
//! of a global and one of a field, the same with a sampler attached or not,
//! so a sampler costs the dispatch loop nothing between its ticks. Only when
//! the generations differ does the VM look at what was asked (`Vm::poll`,
//! out of line). A VM that was asked nothing pays one such look per request
//! made to another VM of the process.
//!
//! Ordering: a request's word is written before the generation is bumped
//! (release); the VM reads the generation (acquire) before it reads the
//! request words, so it sees every request the generation it read announced;
//! a request written after that read bumps the generation again, and is seen
//! at a later safepoint. Native code made by a JIT tests its VM's stack
//! request word at its sends itself (`NativeCtx::request`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped by every request made to any VM of the process.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Announce a request whose word was just written. Async-signal-safe.
#[inline]
pub(crate) fn announce() {
    GENERATION.fetch_add(1, Ordering::Release);
}

/// Was anything announced since generation `seen` (the safepoint's test)?
#[inline(always)]
pub(crate) fn changed(seen: u64) -> bool {
    GENERATION.load(Ordering::Relaxed) != seen
}

/// The generation now, read before the request words it announces.
#[inline]
pub(crate) fn current() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announcement_changes_the_generation_seen() {
        let seen = current();
        announce();
        assert!(changed(seen));
        assert!(!changed(current()));
    }
}
