//! Boolean primitives: `&&` and `||` with a Boolean argument, bound as
//! intrinsics (`image/methods.rs`) to `Boolean>>&&`/`||`, which SOM's core-lib
//! and Lupa's kernel write in Smalltalk as `^self and: x` / `^self or: x`.
//! They answer what those bodies answer when the argument is already a
//! Boolean (`true && b` is `b value`, which is `b`; `false && x` is `false`);
//! with any other argument (a block, say) they fail, and the Smalltalk body
//! runs.

use super::Primitive;
use super::{Args, PrimFailure, PrimResult, Reply::Answer};
use crate::vm::Vm;
use lupa_heap::Value;

fn and(vm: &mut Vm, args: Args) -> PrimResult {
    let (receiver, arg) = (args.receiver(vm), args.get(vm, 1));
    match (receiver == Value::TRUE, receiver == Value::FALSE) {
        (false, true) => Ok(Answer(Value::FALSE)),
        (true, false) if arg == Value::TRUE || arg == Value::FALSE => Ok(Answer(arg)),
        _ => Err(PrimFailure::Fail),
    }
}

fn or(vm: &mut Vm, args: Args) -> PrimResult {
    let (receiver, arg) = (args.receiver(vm), args.get(vm, 1));
    match (receiver == Value::TRUE, receiver == Value::FALSE) {
        (true, false) => Ok(Answer(Value::TRUE)),
        (false, true) if arg == Value::TRUE || arg == Value::FALSE => Ok(Answer(arg)),
        _ => Err(PrimFailure::Fail),
    }
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Boolean"], "&&", and).leaf(),
    Primitive::new(&["Boolean"], "||", or).leaf(),
];
