//! The boundary between the interpreter and native code made by a JIT (the
//! `lupa-jit` crate): the context native code runs with ([`NativeCtx`]), the
//! signature of a compiled method or block ([`NativeFn`]) and the status words
//! both sides exchange.
//!
//! Contract (the JIT's code keeps it; `interp/native.rs` relies on it):
//! - Native code runs one activation at a time on the interpreter's own frame
//!   and value stack (the frame's pc, bp, env and closure are the
//!   interpreter's; its receiver, arguments, temporaries and operand stack
//!   are the slots `bp..` of the value stack). Any activation can therefore
//!   be left at a *resume point* and continued by the interpreter, and the
//!   interpreter can enter native code at one: pc 0, the pc after a send, a
//!   backward jump's target.
//! - On entry the value stack's length is the activation's *extent*
//!   (`bp + 1 + arguments + temporaries + max operand stack`); native code reads and
//!   writes only slots below it. Every call into the runtime passes the
//!   operand stack's real top (`sp`), which the runtime makes the stack's
//!   length for the duration of the call.
//! - Native code holds no heap value in a register across a call into the
//!   runtime: it stores its live operands into the value stack before the
//!   call and reads them back (and the stack's and the heap's base
//!   addresses, which calls may move) after it. Collections happen only at
//!   the interpreter's safepoints, never while native code runs, so values
//!   do not move between two calls into the runtime.
//! - Native code calls the native code of a callee the fast-call table
//!   names (`FastEntry::entry`) at its *direct entry* (a `pc` the JIT
//!   encodes, with the caller's operand stack top): the callee makes the
//!   checks a native call needs (or the caller's send through the runtime),
//!   saves the caller's pc and pushes its own frame, as the runtime would,
//!   so the frames are the interpreter's whichever side made them.
//! - Native code counts the sends and inlined sends it executes in
//!   [`NativeCtx::sends`] and [`NativeCtx::inlined`]; the runtime adds them to
//!   the observation counters at each call, so the counts are those of the
//!   interpreter.
//! - Native code calls the runtime (and the JIT's shared stubs) at the
//!   addresses of [`NativeCtx::runtime`], which the VM fills from the
//!   installed JIT's `Jit::runtime_entries` when it enters native code.

use super::MethodCode;
use lupa_heap::Value;
use std::sync::atomic::AtomicU64;

/// Entries of [`NativeCtx::runtime`].
pub const RUNTIME_ENTRIES: usize = 14;

/// What native code runs with: given by the interpreter when it enters
/// native code, updated by every call into the runtime. `#[repr(C)]`: the
/// JIT reads its fields at fixed offsets (`std::mem::offset_of!`), from
/// the context's address plus [`NativeCtx::BIAS`], which native code holds
/// (and passes to the runtime's entry points) instead of the address: an
/// offset from -128 to 127 takes one byte of code, so the first 256 bytes
/// of the context are a one-byte offset away. The fields native code reads
/// at its sites come first, then the runtime table, within them (shorter
/// code at every use); those only the runtime, the entry stubs or one place
/// per function reads come after.
#[repr(C)]
#[derive(Debug)]
pub struct NativeCtx {
    /// The value stack's first slot (moves when the stack grows).
    pub stack: *mut Value,
    /// The heap's first word: a heap pointer's address is this plus the
    /// pointer's bits (moves when the heap grows).
    pub heap: *mut u64,
    /// Sends executed by native code since the last call into the runtime,
    /// counted from `poll_at` (`sends - poll_at` of them, wrapping): native
    /// code's poll is due when it is no longer negative (one test of it,
    /// no second field read).
    pub sends: u64,
    /// Inlined sends (control structures) executed likewise.
    pub inlined: u64,
    /// Native activations nested in the one the interpreter entered: a
    /// native call adds one (the callee's direct entry, or the runtime's
    /// send entry calling the code of the callee it activated), the
    /// callee's return to its native sender takes it back.
    pub depth: u64,
    /// Minus the sends left to native code's next poll (the runtime's
    /// `sample` entry: requests from other threads, a self-timed sampler's
    /// clock, `obs/self_timed.rs`), where `sends` counts from (wrapping):
    /// set at each runtime call.
    pub poll_at: u64,
    /// The sampler's stack-request word while a sampler is attached, a
    /// word that stays zero otherwise (never null: native code tests it at
    /// its inline sends with one load, the same cost attached or not).
    pub request: *const AtomicU64,
    /// The entered activation's environment (nil without one).
    pub env: Value,
    /// Live frames (native code's count; the runtime takes it at each call).
    pub frames_len: u64,
    /// The class table's epoch (inline caches hold for it).
    pub epoch: u64,
    /// Not 0 when direct entries and trivial methods' sites must not run
    /// as they are, and above [`SLOW_CALLS`] when every return goes
    /// through the runtime: [`SLOW_ALL`] while activation hooks are on
    /// or a stack overflow is being handled (direct entries are refused
    /// too; line coverage alone is 0: native code compiled for it counts
    /// its own arrivals); [`SLOW_CALLS`] or [`SLOW_ANSWERS`] while only
    /// method watches are on:
    /// a method's direct entry asks the runtime, which pushes its frame,
    /// recording the call of a watched method, and calls its native code;
    /// a trivial method is sent through the runtime; with [`SLOW_ANSWERS`]
    /// every return goes through the runtime, which records a `WATCHED`
    /// frame's answer and pops the frame of a native sender itself, as the
    /// inline return does. Code compiled under a watch asks the watches'
    /// cells first ([`NativeCtx::watch_cells`]).
    pub slow_returns: u64,
    /// The fast-call table: per method id, the native code native code may
    /// call directly, at its direct entry, which pushes the callee's frame
    /// ([`FastEntry`]).
    pub fast: *const FastEntry,
    /// Per class index, the epoch in which `isNil`/`notNil` were last found
    /// to be Object's (the fast path holds when it is the epoch now).
    pub nil_test: *const u32,
    /// Entries in `nil_test`.
    pub nil_test_len: u64,
    /// Per class index, the epoch in which `==` was last found to be
    /// Object's primitive.
    pub identity: *const u32,
    /// Entries in `identity`.
    pub identity_len: u64,
    /// The epoch in which `String>>=` was last found to be String's own
    /// primitive (one word: native code compares short Strings itself while
    /// it is the epoch now).
    pub string_eq: *const u32,
    /// The running process's frames (`FrameStack`'s slots; moves when they
    /// grow): native code pushes and pops frames there itself on its fast
    /// paths.
    pub frames: *mut u8,
    /// The entered activation's stack index of its receiver.
    pub bp: u64,
    /// The VM (opaque to native code; the JIT's runtime entry points turn it
    /// back into `&mut Vm`).
    pub vm: *mut (),
    /// Non-zero when the next safepoint of native code must leave to the
    /// interpreter (a collection is due, a process switch, a change of the
    /// observation mode, a method to compile).
    pub attention: u64,
    /// The frame index whose return resumes an interrupted unwind (its
    /// return goes through the runtime), or `u64::MAX`.
    pub unwind_watch: u64,
    /// The addresses native code calls out of line (the JIT's runtime
    /// entry points and shared stubs, in the JIT's order:
    /// [`Jit::runtime_entries`](crate::Jit::runtime_entries)): a call reads
    /// its target here, seven bytes of code where the address as a constant
    /// takes ten, at every site. Before the fields only the runtime, the
    /// stubs or one place per function reads, so that its first ten
    /// entries are within a one-byte offset of native code's context
    /// pointer ([`NativeCtx::BIAS`]).
    pub runtime: [u64; RUNTIME_ENTRIES],
    /// Frames native code may push before it must ask the runtime: the
    /// stack-depth limit, and the frame slots allocated.
    pub frames_cap: u64,
    /// Value stack slots allocated: the runtime makes room for an
    /// activation's extent before it enters native code at pc 0, and a
    /// direct entry without room for its frame's makes the send through the
    /// runtime.
    pub stack_cap: u64,
    /// Per method id, what its direct entry, a trivial method's site and
    /// a return may do themselves under method watches alone
    /// (`obs::watch::WatchCell`), through the watches' table of them
    /// (`obs::watch::CellTable`; read only when `slow_returns` is
    /// [`SLOW_CALLS`] or [`SLOW_ANSWERS`]).
    pub watch_cells: *const crate::obs::watch::CellTable,
    /// The running process's count of active meta-level frames
    /// (`ProcessState::meta_depth`, a `u32` that stays where it is while
    /// native code runs): calls made while it is not 0 are not recorded, so
    /// the watches' cells are not asked; native code compiled to count line
    /// coverage adds an arrival only while it is 0 (`obs/coverage.rs`).
    pub meta_depth: *const u32,
    /// Entries in `fast`.
    pub fast_len: u64,
}

impl NativeCtx {
    /// What native code's pointer to its context is past the context's
    /// address (the interpreter enters native code with it, the runtime's
    /// entry points take it back): the fields at offsets 0 to 255 are then
    /// at -128 to 127 from it, a one-byte displacement.
    pub const BIAS: usize = 128;

    /// The sends native code counted that the runtime has not taken yet
    /// (`sends` counts from `poll_at`, wrapping).
    #[inline(always)]
    pub fn counted_sends(&self) -> u64 {
        self.sends.wrapping_sub(self.poll_at)
    }
}

const _: () = assert!(size_of::<NativeCtx>() > NativeCtx::BIAS);

/// What native code may do itself for a method or block, by method id: call
/// its native code at its direct entry, which pushes its own frame
/// (`entry`), or run it without a frame when it is trivial (`trivial`,
/// `operand`), as the interpreter does. While `NativeCtx::slow_returns` is
/// not 0, a trivial method is sent through the runtime (whose `invoke`
/// records a watched call) and a method's direct entry asks the runtime,
/// which pushes its frame and records a watched method's call (code
/// compiled under a method watch asks the watches' cells first,
/// `NativeCtx::watch_cells`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct FastEntry {
    /// The native function's address, or 0.
    pub entry: u64,
    /// Arguments it takes.
    pub num_args: u64,
    /// [`TRIVIAL_NONE`], or how the method runs without a frame.
    pub trivial: u64,
    /// The field index, the constant's bits, or the literal's address.
    pub operand: u64,
}

impl FastEntry {
    /// How method `m` runs without a frame: its `trivial` kind and
    /// `operand` ([`TRIVIAL_NONE`] and 0 for a method that needs one). A
    /// method's code never changes, so neither does its kind: the JIT
    /// specialises a send site on the kind of the method its inline cache
    /// held when it compiled it.
    pub fn trivial_of(m: &MethodCode) -> (u64, u64) {
        use super::Trivial as T;
        match m.trivial {
            Some(T::Getter(i)) => (TRIVIAL_GETTER, i as u64),
            Some(T::Setter(i)) => (TRIVIAL_SETTER, i as u64),
            Some(T::ReturnSelf) => (TRIVIAL_SELF, 0),
            Some(T::Literal(k)) => match m.literals.get(k as usize) {
                Some(cell) => (TRIVIAL_LITERAL, cell.as_ptr() as u64),
                None => (TRIVIAL_NONE, 0),
            },
            Some(T::Int(i)) => (TRIVIAL_CONSTANT, Value::small(i as i64).raw()),
            Some(T::Nil) => (TRIVIAL_CONSTANT, Value::NIL.raw()),
            Some(T::True) => (TRIVIAL_CONSTANT, Value::TRUE.raw()),
            Some(T::False) => (TRIVIAL_CONSTANT, Value::FALSE.raw()),
            None => (TRIVIAL_NONE, 0),
        }
    }
}

/// Does method `m` run as a *leaf primitive* at a send site native code
/// specialised on it: its primitive is a leaf (`prims::Primitive::leaf`: it
/// answers or fails, and does nothing else the send path must see), it is
/// not trivial (those run inline) and not a proxy's trap (which runs its
/// shortcut first). Native code then calls the runtime's `primitive` entry
/// (`Vm::native_primitive`) with the method's id, which runs the primitive
/// on the receiver and arguments in place and, when it fails, the rest of
/// the send (the fallback code or the error), as `Vm::invoke` does. A
/// method's primitive and pragmas never change, so neither does this.
pub fn leaf_primitive(m: &MethodCode) -> bool {
    m.trivial.is_none() && !m.trap_shortcut && m.primitive.get().is_some_and(crate::prims::is_leaf)
}

/// [`NativeCtx::slow_returns`] under activation hooks: every return goes
/// through the runtime and direct entries are refused.
pub const SLOW_ALL: u64 = u64::MAX;
/// [`NativeCtx::slow_returns`] under method watches alone that record
/// nothing at the end of calls: returns stay inline (native code compares
/// `slow_returns` with it: a return above it is slow); direct entries and
/// trivial methods' sites ask the watches' cells, or the runtime.
pub const SLOW_CALLS: u64 = 1;
/// [`NativeCtx::slow_returns`] under method watches alone, one of which
/// records something at the end of calls (answers, same answers, receiver
/// fields): every return goes through the runtime (or, in code compiled
/// under a watch, asks the cells first), which records a `WATCHED` frame's
/// answer; direct entries and trivial methods' sites as with [`SLOW_CALLS`].
pub const SLOW_ANSWERS: u64 = crate::sched::Frame::WATCHED as u64;

/// Not a trivial method.
pub const TRIVIAL_NONE: u64 = 0;
/// `^field` (`operand`: the field index).
pub const TRIVIAL_GETTER: u64 = 1;
/// `field := arg` answering self (`operand`: the field index).
pub const TRIVIAL_SETTER: u64 = 2;
/// `^self`.
pub const TRIVIAL_SELF: u64 = 3;
/// `^constant` (`operand`: the value's bits).
pub const TRIVIAL_CONSTANT: u64 = 4;
/// `^literal` (`operand`: the address of the literal's cell).
pub const TRIVIAL_LITERAL: u64 = 5;

/// A compiled method or block: `f(ctx, pc, 0, 0)` continues the top
/// activation at resume point `pc` and answers [`RETURNED`], [`BAIL`] or
/// [`DECLINE`]. (Native code also calls native code at a *direct entry*,
/// with a `pc` of its own encoding, its operand stack's top and an inline
/// cache entry as the other arguments: the callee probes the entry and
/// pushes its own frame there; see the JIT's `codegen.rs`.)
pub type NativeFn = extern "C" fn(*mut NativeCtx, u64, u64, u64) -> u64;

/// The activation returned to its sender (through the runtime's return).
pub const RETURNED: u64 = 0;
/// Native code left the activation (or a callee's) to the interpreter, at a
/// resume point or at an instruction it does not run itself; the frames, the
/// value stack and the saved pcs say where to go on.
pub const BAIL: u64 = 1;
/// `pc` is not a resume point of this code: nothing was done.
pub const DECLINE: u64 = 2;

/// A runtime call completed the operation: native code continues.
pub const DONE: u64 = 0;
