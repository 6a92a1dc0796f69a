//! The interpreter: frames, the dispatch loop, message sends, returns and unwinding.
//!
//! The loop never recurses on the Rust stack per Smalltalk send: a send pushes a
//! [`Frame`] and the loop continues in the new frame. Garbage collection and
//! process switches happen only at safepoints (the top of the outer loop, which
//! runs after every send and return, and backward jumps), where every live value
//! is in a frame slot, a global or another root.
//!
//! - `state`: [`Frame`] and [`ProcessState`] (a process's stack, frames, pending unwinds);
//! - `run`: the dispatch loop and the entry send from Rust;
//! - `send`: lookup, inline caches, invoking and activating methods and blocks;
//! - `unwind`: returns, non-local returns, unwinding through `ensure:` blocks;
//! - `special`: the arithmetic and comparison fast paths of `Op::Special`;
//! - `fast_path_cache`: the per-class "default method still installed" checks they rely on;
//! - `runtime_limits`: the stack-depth limit and the stack-overflow state;
//! - `failures`: stack overflow, out of memory, fatal errors and backtraces.

use crate::vm::Vm;

macro_rules! pop {
    ($vm:expr) => {
        $vm.running.stack.pop().unwrap_or(Value::NIL)
    };
}

mod failures;
mod fast_path_cache;
mod run;
pub(crate) mod runtime_limits;
mod send;
mod special;
mod state;
mod unwind;

pub use fast_path_cache::{FastPath, FastPathCache};
pub use runtime_limits::{FRAME_COST, OVERFLOW_HEADROOM, RESET_MARGIN, RuntimeLimits, STACK_SHARE};
pub(crate) use special::floor_div;
pub use state::{Frame, PendingUnwind, ProcessState, UnwindAction};

/// Symbols the interpreter sends by itself.
#[derive(Debug, Default, Clone, Copy)]
pub struct WellKnownSymbols {
    pub(crate) dnu: u32,
    pub(crate) run_with_in: u32,
    pub(crate) escaped_block: u32,
    pub(crate) unknown_global: u32,
    pub(crate) must_be_boolean: u32,
    pub(crate) error: u32,
    pub(crate) value: u32,
    pub(crate) is_nil: u32,
    pub(crate) not_nil: u32,
    pub(crate) identical: u32,
    pub(crate) equal: u32,
}

impl WellKnownSymbols {
    pub(crate) fn new(vm: &mut Vm) -> Self {
        WellKnownSymbols {
            dnu: vm.intern("doesNotUnderstand:arguments:"),
            run_with_in: vm.intern("run:with:in:"),
            escaped_block: vm.intern("escapedBlock:"),
            unknown_global: vm.intern("unknownGlobal:"),
            must_be_boolean: vm.intern("mustBeBoolean"),
            error: vm.intern("error:"),
            value: vm.intern("value"),
            is_nil: vm.intern("isNil"),
            not_nil: vm.intern("notNil"),
            identical: vm.intern("=="),
            equal: vm.intern("="),
        }
    }
}

/// Observation points compiled in (the default). The `no-observe` feature builds a
/// VM without them, only to measure what they cost.
pub(crate) const OBSERVE: bool = !cfg!(feature = "no-observe");

/// Slots of a block closure.
pub(crate) const BLOCK_CODE: usize = 0;
pub(crate) const BLOCK_RECEIVER: usize = 1;
pub(crate) const BLOCK_OUTER: usize = 2;
/// Slots of an environment.
pub(crate) const ENV_PARENT: usize = 0;
pub(crate) const ENV_ALIVE: usize = 1;
pub(crate) const ENV_VARS: usize = 2;
