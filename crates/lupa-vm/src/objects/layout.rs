//! The slots of the objects the VM makes for running code: block closures and
//! environments (the interpreter reads them, native code too).

/// A block closure's slot holding its code's method id (a SmallInteger).
pub const BLOCK_CODE: usize = 0;
/// A block closure's slot holding the receiver of its home method.
pub const BLOCK_RECEIVER: usize = 1;
/// A block closure's slot holding its outer environment (or nil).
pub const BLOCK_OUTER: usize = 2;
/// An environment's slot holding its parent environment (nil at the root).
pub const ENV_PARENT: usize = 0;
/// An environment's slot saying whether its method still runs (home envs).
pub const ENV_ALIVE: usize = 1;
/// An environment's first variable slot.
pub const ENV_VARS: usize = 2;
