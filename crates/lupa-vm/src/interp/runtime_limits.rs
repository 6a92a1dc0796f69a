//! Runtime limits of the interpreter: the stack-depth limit (`--max-stack-depth`,
//! [`crate::VmOptions::max_frames`]) and what happens past it.
//!
//! Contract:
//! - a process may hold at most `max_frames` frames; the activation that would
//!   exceed it is replaced by `receiver error: 'stack overflow: ...'`, a catchable
//!   Smalltalk error;
//! - to let the program handle that error, the limit is then raised by
//!   [`OVERFLOW_HEADROOM`] frames and the VM is "in overflow"; a second overflow
//!   while in overflow is fatal;
//! - the state resets (limit back to `max_frames`) once the frame stack has come
//!   back more than [`RESET_MARGIN`] frames below `max_frames`, checked after every
//!   return and unwind through [`RuntimeLimits::note_depth`];
//! - processes and their stacks live outside the object heap but count against
//!   `--max-heap`: together they may use [`STACK_SHARE`] of it (the stack
//!   budget). The processes that are not running are charged their exact
//!   memory ([`RuntimeLimits::set_others`], kept up to date by the scheduler);
//!   the running one gets what is left, as a frame count at
//!   [`FRAME_COST`] bytes a frame, so a deep recursion under a huge
//!   `--max-stack-depth` is a stack-overflow error and a fork bomb an
//!   out-of-memory error, never an allocation failure that aborts the VM.
//!   The budget changes only at process switches, creation and termination:
//!   the activation path still compares one number;
//! - instrumentation does not count ([`RuntimeLimits::set_allowance`]): the
//!   running process may hold its uncounted instrumentation frames beyond
//!   `max_frames` (trap frames and the meta-level frames that run an
//!   original; `proxies.rs` counts them), and at the meta level `max_frames`
//!   frames above where it entered it; the stack budget bounds both.

use crate::proxies::FrameAllowance;

/// Frames of headroom granted to handle a stack-overflow error.
pub(crate) const OVERFLOW_HEADROOM: usize = 10_000;

/// How far below the limit the frame stack must come back to leave the overflow state.
pub(crate) const RESET_MARGIN: usize = 1000;

/// The share of `--max-heap` that processes and their stacks may use (1/4).
pub(crate) const STACK_SHARE: usize = 4;

/// Bytes one activation costs the running process's stacks, an upper estimate:
/// the frame record plus the operand-stack slots of a typical method, with
/// the slack of a growing vector (measured: about 125 bytes a frame in a deep
/// recursion).
pub(crate) const FRAME_COST: usize = 160;

/// The stack-depth limit and the overflow state of one VM.
#[derive(Debug, Clone)]
pub(crate) struct RuntimeLimits {
    /// The configured maximum number of frames.
    max_frames: usize,
    /// The limit in force: `max_frames`, or `max_frames + OVERFLOW_HEADROOM` in overflow.
    frame_limit: usize,
    /// A stack-overflow error is being handled.
    in_overflow: bool,
    /// Bytes all processes and their stacks may use ([`STACK_SHARE`] of the heap limit).
    budget_bytes: usize,
    /// Bytes charged to the processes that are not running.
    others_bytes: usize,
    /// What the running process may hold beyond `max_frames`.
    allowance: FrameAllowance,
}

impl RuntimeLimits {
    /// Limits for at most `max_frames` frames per process, with every process
    /// and stack together within [`STACK_SHARE`] of `max_heap_bytes`.
    pub(crate) fn new(max_frames: usize, max_heap_bytes: usize) -> Self {
        let mut limits = RuntimeLimits {
            max_frames,
            frame_limit: max_frames,
            in_overflow: false,
            budget_bytes: max_heap_bytes / STACK_SHARE,
            others_bytes: 0,
            allowance: FrameAllowance::Uncounted(0),
        };
        limits.recompute();
        limits
    }

    /// The configured maximum number of frames.
    pub(crate) fn max_frames(&self) -> usize {
        self.max_frames
    }

    /// The frames the running process may hold now: `max_frames` (plus its
    /// instrumentation's allowance), or fewer when the stack budget left by
    /// the other processes is smaller.
    pub(crate) fn effective_max_frames(&self) -> usize {
        self.allowed_frames().min(self.budget_frames())
    }

    /// The frames the stack budget left by the other processes pays for.
    fn budget_frames(&self) -> usize {
        self.budget_bytes.saturating_sub(self.others_bytes) / FRAME_COST
    }

    /// `max_frames` plus the running process's allowance.
    fn allowed_frames(&self) -> usize {
        match self.allowance {
            FrameAllowance::Uncounted(n) => self.max_frames.saturating_add(n),
            FrameAllowance::MetaFrom(entry) => entry.saturating_add(self.max_frames),
        }
    }

    /// The running process's instrumentation frames changed (it holds
    /// `allowance` beyond `max_frames`): a trap frame was pushed or popped,
    /// or the process entered or left the meta level, or another process
    /// runs now.
    pub(crate) fn set_allowance(&mut self, allowance: FrameAllowance) {
        self.allowance = allowance;
        self.recompute();
    }

    /// Is the running process's limit lower than `--max-stack-depth` (and
    /// its allowance) because of the stack budget?
    pub(crate) fn limited_by_budget(&self) -> bool {
        self.budget_frames() < self.allowed_frames()
    }

    /// The stack budget in bytes.
    pub(crate) fn budget_bytes(&self) -> usize {
        self.budget_bytes
    }

    /// Bytes charged to the processes that are not running.
    pub(crate) fn others_bytes(&self) -> usize {
        self.others_bytes
    }

    /// Would charging `bytes` more to the processes that are not running stay
    /// within the budget, leaving the running process room for a few frames?
    pub(crate) fn can_charge(&self, bytes: usize) -> bool {
        self.others_bytes
            .saturating_add(bytes)
            .saturating_add(RESET_MARGIN * FRAME_COST)
            <= self.budget_bytes
    }

    /// The processes that are not running now use `bytes`.
    pub(crate) fn set_others(&mut self, bytes: usize) {
        self.others_bytes = bytes;
        self.recompute();
    }

    fn recompute(&mut self) {
        let base = self.effective_max_frames();
        self.frame_limit = if self.in_overflow {
            base + OVERFLOW_HEADROOM
        } else {
            base
        };
    }

    /// Frames a process may hold now (the limit `allows_push` compares).
    #[inline(always)]
    pub(crate) fn frame_limit(&self) -> usize {
        self.frame_limit
    }

    /// Is a stack-overflow error being handled (returns then watch the depth)?
    #[inline(always)]
    pub(crate) fn in_overflow(&self) -> bool {
        self.in_overflow
    }

    /// May a process with `depth` frames push one more?
    #[inline(always)]
    pub(crate) fn allows_push(&self, depth: usize) -> bool {
        depth < self.frame_limit
    }

    /// The limit was hit: enter the overflow state (raising the limit by the
    /// headroom). Answers false if already in overflow (the caller then stops).
    pub(crate) fn enter_overflow(&mut self) -> bool {
        if self.in_overflow {
            return false;
        }
        self.in_overflow = true;
        self.recompute();
        true
    }

    /// A frame was popped, leaving `depth` frames: leave the overflow state once
    /// the stack is back well below the limit ([`RESET_MARGIN`] frames, or half
    /// the limit when the stack budget makes it smaller than that: waiting
    /// processes may leave the running one a few hundred frames, and a margin
    /// it can never get under would make its next overflow fatal).
    #[inline(always)]
    pub(crate) fn note_depth(&mut self, depth: usize) {
        if self.in_overflow {
            let base = self.frame_limit.saturating_sub(OVERFLOW_HEADROOM);
            if depth + RESET_MARGIN.min(base / 2) < base {
                self.in_overflow = false;
                self.frame_limit = base;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overflow_state_is_left_under_a_small_budget() {
        // 20000 frames allowed, but waiting processes leave a budget of 400.
        let mut limits = RuntimeLimits::new(20_000, 1 << 30);
        limits.set_others(limits.budget_bytes() - 400 * FRAME_COST);
        assert_eq!(limits.frame_limit(), 400);
        assert!(limits.enter_overflow());
        assert_eq!(limits.frame_limit(), 400 + OVERFLOW_HEADROOM);
        // The handler returns to a shallow frame: the state is left.
        limits.note_depth(5);
        assert!(!limits.in_overflow());
        assert_eq!(limits.frame_limit(), 400);
        // So the next overflow is handled too.
        assert!(limits.enter_overflow());
    }

    #[test]
    fn the_overflow_state_holds_until_well_below_the_limit() {
        let mut limits = RuntimeLimits::new(20_000, 1 << 30);
        assert!(limits.enter_overflow());
        limits.note_depth(19_500);
        assert!(limits.in_overflow());
        limits.note_depth(18_000);
        assert!(!limits.in_overflow());
        assert_eq!(limits.frame_limit(), 20_000);
    }
}
