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
//!   return and unwind through [`RuntimeLimits::note_depth`].

/// Frames of headroom granted to handle a stack-overflow error.
pub const OVERFLOW_HEADROOM: usize = 10_000;

/// How far below the limit the frame stack must come back to leave the overflow state.
pub const RESET_MARGIN: usize = 1000;

/// The stack-depth limit and the overflow state of one VM.
#[derive(Debug, Clone)]
pub struct RuntimeLimits {
    /// The configured maximum number of frames.
    max_frames: usize,
    /// The limit in force: `max_frames`, or `max_frames + OVERFLOW_HEADROOM` in overflow.
    frame_limit: usize,
    /// A stack-overflow error is being handled.
    in_overflow: bool,
}

impl RuntimeLimits {
    /// Limits for at most `max_frames` frames per process.
    pub fn new(max_frames: usize) -> Self {
        RuntimeLimits {
            max_frames,
            frame_limit: max_frames,
            in_overflow: false,
        }
    }

    /// The configured maximum number of frames.
    pub fn max_frames(&self) -> usize {
        self.max_frames
    }

    /// May a process with `depth` frames push one more?
    #[inline(always)]
    pub fn allows_push(&self, depth: usize) -> bool {
        depth < self.frame_limit
    }

    /// The limit was hit: enter the overflow state (raising the limit by the
    /// headroom). Answers false if already in overflow (the caller then stops).
    pub fn enter_overflow(&mut self) -> bool {
        if self.in_overflow {
            return false;
        }
        self.in_overflow = true;
        self.frame_limit = self.max_frames + OVERFLOW_HEADROOM;
        true
    }

    /// A frame was popped, leaving `depth` frames: leave the overflow state once
    /// the stack is back well below the limit.
    #[inline(always)]
    pub fn note_depth(&mut self, depth: usize) {
        if self.in_overflow && depth + RESET_MARGIN < self.max_frames {
            self.in_overflow = false;
            self.frame_limit = self.max_frames;
        }
    }
}
