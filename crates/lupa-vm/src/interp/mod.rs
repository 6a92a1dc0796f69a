//! The interpreter: frames, the dispatch loop, message sends, returns and unwinding.
//!
//! The loop never recurses on the Rust stack per Smalltalk send: a send pushes a
//! [`Frame`] and the loop continues in the new frame. Garbage collection and
//! process switches happen only at safepoints (the top of the outer loop, which
//! runs after every send and return, and backward jumps), where every live value
//! is in a frame slot, a global or another root.
//!
//! - `run`: the dispatch loop and the entry send from Rust;
//! - `send`: lookup, inline caches, invoking and activating methods and blocks;
//! - `unwind`: returns, non-local returns, unwinding through `ensure:` blocks;
//! - `special`: the arithmetic and comparison fast paths of `Op::Special`;
//! - `runtime_limits`: the stack-depth limit and the stack-overflow state;
//! - `failures`: stack overflow, out of memory, fatal errors and backtraces;
//! - `som_wording`: SOM's words for a primitive's type error, under SOM's core-lib;
//! - `native`: entering native code made by a JIT, hotness, and the runtime
//!   calls native code makes;
//! - `processes`: creating, blocking, switching, ending and terminating processes.

macro_rules! pop {
    ($vm:expr) => {
        $vm.sched.running.stack.pop().unwrap_or(Value::NIL)
    };
}

mod failures;
pub(crate) mod native;
mod processes;
mod run;
pub(crate) mod runtime_limits;
mod send;
mod som_wording;
mod special;
mod unwind;
mod watched;

pub(crate) use runtime_limits::{RuntimeLimits, STACK_SHARE};
pub(crate) use special::floor_div;

/// Observation points compiled in (the default). The `no-observe` feature builds a
/// VM without them, only to measure what they cost.
pub(crate) const OBSERVE: bool = !cfg!(feature = "no-observe");

pub(crate) use crate::objects::layout::{
    BLOCK_CODE, BLOCK_OUTER, BLOCK_RECEIVER, ENV_ALIVE, ENV_PARENT, ENV_VARS,
};
