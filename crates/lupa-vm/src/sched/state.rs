//! The state of running code: a [`Frame`] per activation, and a [`ProcessState`]
//! per process (value stack, frames, interrupted unwinds, meta level).
//!
//! A frame is `(code, pc, bp, env, closure)`; at `bp` the value stack holds the
//! receiver, the arguments, the stack-resident temporaries, then the operand
//! stack. The running process's state is `Vm::running`; switching processes swaps
//! it with the saved one, so nothing here is duplicated on the `Vm`.

use crate::objects::MethodCode;
use lupa_heap::Value;
use std::rc::Rc;

/// An activation of a method or block.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The code being run.
    pub code: Rc<MethodCode>,
    /// Index of the next instruction (saved at sends).
    pub pc: usize,
    /// Stack index of the receiver slot.
    pub bp: usize,
    /// Effective environment (own env, or the closure's outer env, or nil).
    pub env: Value,
    /// The block closure being run (nil for a method frame).
    pub closure: Value,
}

/// How an unwind ends.
#[derive(Debug, Clone, Copy)]
pub enum UnwindAction {
    /// Return this value from the target frame.
    Return(Value),
    /// Restart the target frame.
    Restart,
    /// Pop every frame: the process ends.
    Terminate,
}

/// An unwind interrupted to run an `ensure:` block, resumed when the block returns.
#[derive(Debug, Clone, Copy)]
pub struct PendingUnwind {
    /// Frame index of the ensure block's activation.
    pub watch: usize,
    /// Frame to unwind to (`usize::MAX` with `Terminate`).
    pub target: usize,
    /// What to do there.
    pub action: UnwindAction,
}

impl PendingUnwind {
    /// Report GC roots.
    pub fn visit_roots<F: FnMut(&mut Value)>(&mut self, f: &mut F) {
        if let UnwindAction::Return(v) = &mut self.action {
            f(v);
        }
    }
}

/// The execution state of one process: its value stack, frames, interrupted
/// unwinds and meta level.
///
/// The running process's state is [`crate::Vm::running`]; every other process keeps its
/// own in the scheduler ([`crate::sched::Proc::saved`]). A process switch is a
/// `std::mem::swap` of the two, and the collector visits every state through the
/// one function [`ProcessState::visit_roots`].
#[derive(Debug)]
pub struct ProcessState {
    /// Value stack.
    pub stack: Vec<Value>,
    /// Frames.
    pub frames: Vec<Frame>,
    /// Interrupted unwinds.
    pub pending_unwinds: Vec<PendingUnwind>,
    /// Frame index whose return resumes the innermost pending unwind
    /// (`usize::MAX`: none).
    pub unwind_watch: usize,
    /// Number of active `<metaLevel>` frames (since the innermost `<baseLevel>` one).
    pub meta_depth: u32,
    /// The level state saved by the active `<baseLevel>` frames, innermost last.
    pub base_saves: Vec<BaseSave>,
    /// Frames of instrumentation on the stack that do not count against
    /// `--max-stack-depth` (trap frames and the meta-level stretches below
    /// `<baseLevel>` frames; see `proxies.rs`).
    pub uncounted: usize,
    /// While at the meta level: the index of the frame that entered it.
    pub meta_entry: usize,
}

/// What a `<baseLevel>` frame saved when it was pushed (restored when it is
/// popped): the meta-level count, where the meta level was entered, and how
/// many frames it added to [`ProcessState::uncounted`].
#[derive(Debug, Clone, Copy, Default)]
pub struct BaseSave {
    /// The meta-level count below the frame.
    pub meta_depth: u32,
    /// [`ProcessState::meta_entry`] below the frame.
    pub meta_entry: usize,
    /// Frames (the meta-level stretch and the frame itself) made uncounted.
    pub uncounted: usize,
}

impl Default for ProcessState {
    fn default() -> Self {
        ProcessState {
            stack: Vec::new(),
            frames: Vec::new(),
            pending_unwinds: Vec::new(),
            unwind_watch: usize::MAX,
            meta_depth: 0,
            base_saves: Vec::new(),
            uncounted: 0,
            meta_entry: 0,
        }
    }
}

impl ProcessState {
    /// Bytes its stacks hold (their capacities): what a process that is not
    /// running is charged against the stack budget (see `runtime_limits`).
    pub fn memory_bytes(&self) -> usize {
        self.stack.capacity() * std::mem::size_of::<Value>()
            + self.frames.capacity() * std::mem::size_of::<Frame>()
            + self.pending_unwinds.capacity() * std::mem::size_of::<PendingUnwind>()
    }

    /// An empty state with room for `stack` values and `frames` frames.
    pub fn with_capacity(stack: usize, frames: usize) -> Self {
        ProcessState {
            stack: Vec::with_capacity(stack),
            frames: Vec::with_capacity(frames),
            ..ProcessState::default()
        }
    }

    /// Record an interrupted unwind (its ensure block is about to run); its frame
    /// index becomes the one whose return resumes it.
    pub(crate) fn push_pending_unwind(&mut self, u: PendingUnwind) {
        self.unwind_watch = u.watch;
        self.pending_unwinds.push(u);
    }

    /// Take the innermost interrupted unwind; the watch moves to the next one (or
    /// to none).
    pub(crate) fn pop_pending_unwind(&mut self) -> Option<PendingUnwind> {
        let u = self.pending_unwinds.pop();
        self.unwind_watch = self
            .pending_unwinds
            .last()
            .map(|p| p.watch)
            .unwrap_or(usize::MAX);
        u
    }

    /// Report GC roots: every stack slot, every frame's env and closure, and the
    /// values of interrupted unwinds.
    pub fn visit_roots<F: FnMut(&mut Value)>(&mut self, f: &mut F) {
        for v in self.stack.iter_mut() {
            f(v);
        }
        for fr in self.frames.iter_mut() {
            f(&mut fr.env);
            f(&mut fr.closure);
        }
        for u in self.pending_unwinds.iter_mut() {
            u.visit_roots(f);
        }
    }
}
