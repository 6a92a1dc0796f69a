//! What a primitive answers: the contract between a primitive and the send path.
//!
//! A primitive ([`PrimFn`](super::PrimFn)) runs with its receiver and
//! arguments still on the stack (read through [`Args`](super::Args)) and returns
//! a [`PrimResult`]. The send path (`Vm::invoke`) then:
//! - `Ok(Reply::Answer(v))`: pops the receiver and arguments and pushes `v`;
//! - `Ok(Reply::Done)`: does nothing more: the primitive arranged the stack and
//!   the frames itself (it activated a block, dispatched a send, unwound, or
//!   switched processes);
//! - `Err(PrimFailure::WrongArg { .. })` or `Err(PrimFailure::Fail)`: runs the
//!   method's Smalltalk body (the fallback of a `<primitive>` method), or, for a
//!   `= primitive` method, sends `error: 'primitive Class>>selector failed'`,
//!   saying which argument was wrong, what was expected and what came;
//! - `Err(PrimFailure::Error(message))`: runs the fallback, or sends
//!   `error: message`;
//! - `Err(PrimFailure::Limit(message))`: sends `error: message` (no fallback);
//! - `Err(PrimFailure::Abort(e))`: stops the program with `e`.
//!
//! A primitive that fails has not changed the stack. `?` works on the argument
//! decoders of [`Args`](super::Args) (a wrong argument is a `WrongArg`) and on
//! allocations (out of memory is an `Error`, as the SOM kernel expects).

use crate::vm::VmError;
use lupa_heap::{OutOfMemory, Value};
use std::fmt;

/// What a successful primitive did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Answer this value: the send path pops receiver and arguments and pushes it.
    Answer(Value),
    /// The primitive arranged the stack and frames itself (e.g. activated a block).
    Done,
}

/// Why a primitive did not answer.
#[derive(Debug)]
pub enum PrimFailure {
    /// Argument `index` (0 = the receiver) is not of the kind the primitive
    /// takes. Handled as [`PrimFailure::Fail`]; the detail is for diagnostics.
    WrongArg {
        /// Which argument: 0 is the receiver, 1 the first argument.
        index: u32,
        /// What the primitive expected there.
        expected: Expected,
    },
    /// Failed for another reason (an argument of the right kind but an
    /// unsuitable value): the fallback runs.
    Fail,
    /// Failed with a message: the fallback runs, or the VM sends `error:` with
    /// the message to the receiver.
    Error(String),
    /// A resource limit was hit (an Integer or a process past the share of
    /// `--max-heap` it may use...): no fallback runs (it could not do
    /// better, and would hide the reason); the VM sends `error:` with the
    /// message to the receiver.
    Limit(String),
    /// Stop the program.
    Abort(VmError),
}

/// The result of a primitive.
pub type PrimResult = Result<Reply, PrimFailure>;

impl PrimFailure {
    /// A failure with a message (sent as `error:` when there is no fallback).
    #[cold]
    pub fn error(message: impl Into<String>) -> PrimFailure {
        PrimFailure::Error(message.into())
    }

    /// Argument `index` is not the `expected` kind.
    #[inline]
    pub fn wrong(index: usize, expected: Expected) -> PrimFailure {
        PrimFailure::WrongArg {
            index: index as u32,
            expected,
        }
    }
}

impl From<OutOfMemory> for PrimFailure {
    #[cold]
    fn from(e: OutOfMemory) -> PrimFailure {
        PrimFailure::Error(format!("out of memory: {e}"))
    }
}

/// Turn a decoding failure into a failure with a message, for primitives whose
/// contract is to report a wrong argument with `error:` rather than to fail.
pub(crate) trait OrError<T> {
    /// `Err(PrimFailure::Error(message))` when `self` is a failure.
    fn or_error(self, message: &str) -> Result<T, PrimFailure>;
}

impl<T> OrError<T> for Result<T, PrimFailure> {
    #[inline]
    fn or_error(self, message: &str) -> Result<T, PrimFailure> {
        self.map_err(|_| PrimFailure::error(message))
    }
}

impl<T> OrError<T> for Option<T> {
    #[inline]
    fn or_error(self, message: &str) -> Result<T, PrimFailure> {
        self.ok_or_else(|| PrimFailure::error(message))
    }
}

/// The kind of value a primitive expected in an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// A SmallInteger.
    SmallInteger,
    /// An Integer, small or large.
    Integer,
    /// A number: an Integer or a Double.
    Number,
    /// A String or Symbol (or another byte class, for text).
    String,
    /// A Symbol.
    Symbol,
    /// A class or metaclass object.
    Class,
    /// A Method or Primitive object.
    Method,
    /// A block.
    Block,
    /// An Array.
    Array,
    /// An object with indexable pointer slots (an Array, a WeakArray...).
    Indexable,
    /// A Process.
    Process,
    /// A Semaphore.
    Semaphore,
    /// The index of a live frame of the running process.
    Frame,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expected::SmallInteger => "a SmallInteger",
            Expected::Integer => "an Integer",
            Expected::Number => "a number",
            Expected::String => "a String or Symbol",
            Expected::Symbol => "a Symbol",
            Expected::Class => "a class",
            Expected::Method => "a Method",
            Expected::Block => "a Block",
            Expected::Array => "an Array",
            Expected::Indexable => "an indexable object",
            Expected::Process => "a Process",
            // A copy, or an instance made without `Semaphore new` (e.g. by
            // `perform: #new inSuperclass: Class`), has no VM record.
            Expected::Semaphore => "a Semaphore made by Semaphore new",
            Expected::Frame => "a frame (from Context currentFrame or senderOf:)",
        })
    }
}
