//! The state of running code: a [`Frame`] per activation, and a [`ProcessState`]
//! per process (value stack, frames, interrupted unwinds, meta level).
//!
//! A frame is `(method, pc, bp, env, closure)`; at `bp` the value stack holds
//! the receiver, the arguments, the stack-resident temporaries, then the
//! operand stack. The running process's state is the scheduler's `running`;
//! switching processes swaps it with the saved one.
//!
//! Frames and values are plain words, laid out `#[repr(C)]`: native code made
//! by a JIT pushes and pops frames and writes stack slots in place, and the
//! runtime sets the two stacks' lengths from what it did at each call
//! native code makes (`objects/native.rs`).

use lupa_heap::Value;

/// An activation of a method or block.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Frame {
    /// The code being run: its id in the image's method table (`Image::code`).
    pub method: u32,
    /// What popping the frame must do, from its code ([`Frame::flags_of`]):
    /// [`Frame::HOME_ENV`], [`Frame::META_LEVEL`], [`Frame::BASE_LEVEL`],
    /// [`Frame::TRAP_SHORTCUT`].
    pub flags: u32,
    /// Index of the next instruction (saved at sends).
    pub pc: usize,
    /// Stack index of the receiver slot.
    pub bp: usize,
    /// Effective environment (own env, or the closure's outer env, or nil).
    pub env: Value,
    /// The block closure being run (nil for a method frame).
    pub closure: Value,
}

impl Frame {
    /// The frame's environment is its method's own, marked dead when it returns.
    pub const HOME_ENV: u32 = 1;
    /// A `<metaLevel>` method (the process is at the meta level while it runs).
    pub const META_LEVEL: u32 = 2;
    /// A `<baseLevel>` method (it also has `META_LEVEL`).
    pub const BASE_LEVEL: u32 = 4;
    /// A `<trapShortcut>` method, a MethodProxies trap (it also has
    /// `META_LEVEL`: it takes the level path).
    pub const TRAP_SHORTCUT: u32 = 8;
    /// Its return answers a watched call (`obs/watch.rs`): set by the
    /// interpreter on the frame a watched call pushed, never by
    /// [`Frame::flags_of`].
    pub const WATCHED: u32 = 16;
    /// With [`Frame::WATCHED`]: its return records its answer for its own
    /// method (no expectation was pushed for it: native code pushed it at a
    /// direct entry that a method watch's cell let through,
    /// `obs::watch::WatchCell`).
    pub const ANSWER: u32 = 32;

    /// The flags of a frame running `m`.
    #[inline(always)]
    pub fn flags_of(m: &crate::objects::MethodCode) -> u32 {
        (if m.home_env { Frame::HOME_ENV } else { 0 })
            | (if m.meta_level { Frame::META_LEVEL } else { 0 })
            | (if m.base_level { Frame::BASE_LEVEL } else { 0 })
            | (if m.trap_shortcut {
                Frame::TRAP_SHORTCUT
            } else {
                0
            })
    }
}

/// A stack whose slots `0..len()` are live and whose slots above them are
/// initialised memory (`T::default()`, or what native code wrote there):
/// native code made by a JIT writes a callee's frame and its operands below
/// an activation's extent (`objects/native.rs`) without the length following
/// each write, and the runtime sets the length ([`Slots::set_len`]) at every
/// call native code makes. Only `0..len()` is ever read as live (by the
/// collector, the interpreter, the primitives). A process has two:
/// [`ValueStack`] and [`FrameStack`].
#[derive(Debug, Default)]
pub struct Slots<T> {
    /// Every slot, live or not (all initialised).
    slots: Vec<T>,
    /// The number of live slots.
    len: usize,
}

/// A process's value stack: receivers, arguments, temporaries and operands
/// of its frames.
pub(crate) type ValueStack = Slots<Value>;

/// A process's frames.
pub(crate) type FrameStack = Slots<Frame>;

impl<T: Copy + Default> Slots<T> {
    /// An empty stack with room for `n` slots.
    pub fn with_capacity(n: usize) -> Self {
        Slots {
            slots: vec![T::default(); n],
            len: 0,
        }
    }

    /// Live slots.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// No live slot?
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slots allocated (live or not).
    #[inline(always)]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        let new = n.max(self.slots.len() * 2).max(64);
        self.slots.resize(new, T::default());
    }

    /// Make at least `n` slots allocated.
    #[inline(always)]
    pub fn reserve_slots(&mut self, n: usize) {
        if n > self.slots.len() {
            self.grow(n);
        }
    }

    /// Push a value.
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        match self.slots.get_mut(self.len) {
            Some(slot) => {
                *slot = v;
                self.len += 1;
            }
            None => self.push_grown(v),
        }
    }

    #[cold]
    #[inline(never)]
    fn push_grown(&mut self, v: T) {
        self.grow(self.len + 1);
        self.slots[self.len] = v;
        self.len += 1;
    }

    /// Pop the top value.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        let i = self.len.wrapping_sub(1);
        let v = *self.slots.get(i)?;
        self.len = i;
        Some(v)
    }

    /// The top value.
    #[inline(always)]
    pub fn last(&self) -> Option<&T> {
        self.slots.get(self.len.wrapping_sub(1))
    }

    /// The top value, to change.
    #[inline(always)]
    pub fn last_mut(&mut self) -> Option<&mut T> {
        self.slots.get_mut(self.len.wrapping_sub(1))
    }

    /// Keep the first `n` live slots.
    #[inline(always)]
    pub fn truncate(&mut self, n: usize) {
        if n < self.len {
            self.len = n;
        }
    }

    /// Drop every live slot.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Make `n` slots live, whatever the slots above the old length hold
    /// (native code wrote them; see the type's documentation).
    #[inline(always)]
    pub fn set_len(&mut self, n: usize) {
        self.reserve_slots(n);
        self.len = n;
    }

    /// The live slots, to change.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.slots[..self.len].iter_mut()
    }

    /// The address of the first slot, for native code (moves when the stack
    /// grows; nothing here reads or writes through it).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.slots.as_mut_ptr()
    }
}

impl Slots<Value> {
    /// Make `n` slots live; new ones hold `v`.
    #[inline(always)]
    pub fn resize(&mut self, n: usize, v: Value) {
        if n > self.len {
            self.reserve_slots(n);
            self.slots[self.len..n].fill(v);
        }
        self.len = n;
    }

    /// Live slot `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&Value> {
        if i < self.len {
            self.slots.get(i)
        } else {
            None
        }
    }

    /// Push all of `values`.
    pub fn extend_from_slice(&mut self, values: &[Value]) {
        let n = self.len + values.len();
        self.reserve_slots(n);
        self.slots[self.len..n].copy_from_slice(values);
        self.len = n;
    }

    /// Pop the values from index `at` up, answering them.
    pub fn split_off(&mut self, at: usize) -> Vec<Value> {
        let at = at.min(self.len);
        let out = self.slots[at..self.len].to_vec();
        self.len = at;
        out
    }
}

/// Indexing a value stack checks the slots allocated (memory safety); that
/// the index is live is the interpreter's invariant (checked in debug
/// builds).
impl std::ops::Index<usize> for Slots<Value> {
    type Output = Value;
    #[inline(always)]
    fn index(&self, i: usize) -> &Value {
        debug_assert!(i < self.len, "stack slot {i} read above the stack's top");
        &self.slots[i]
    }
}

impl std::ops::IndexMut<usize> for Slots<Value> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut Value {
        debug_assert!(i < self.len, "stack slot {i} written above the stack's top");
        &mut self.slots[i]
    }
}

/// The live frames, as a slice.
impl std::ops::Deref for Slots<Frame> {
    type Target = [Frame];
    #[inline(always)]
    fn deref(&self) -> &[Frame] {
        &self.slots[..self.len]
    }
}

impl std::ops::DerefMut for Slots<Frame> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Frame] {
        &mut self.slots[..self.len]
    }
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
    pub stack: ValueStack,
    /// Frames.
    pub frames: FrameStack,
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
            stack: ValueStack::default(),
            frames: FrameStack::default(),
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
            stack: ValueStack::with_capacity(stack),
            frames: FrameStack::with_capacity(frames),
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
