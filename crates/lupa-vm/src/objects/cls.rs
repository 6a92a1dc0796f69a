//! Fixed class indices of the kernel classes (`objects::cls`).
//!
//! Contract: the bootstrap (`image/loader.rs`) creates the kernel classes in exactly
//! this order, so class `i` of the class table is `NAMES[i]` for every `i < COUNT`;
//! index 0 is never a class (it marks an empty inline cache). These constants are
//! what the interpreter, the primitives and the collector test a receiver's class
//! index against, so they must never be renumbered without changing the bootstrap.

/// `Object`
pub const OBJECT: u32 = 1;
/// `Class`
pub const CLASS: u32 = 2;
/// `Metaclass`
pub const METACLASS: u32 = 3;
/// `Nil` (class of nil)
pub const NIL: u32 = 4;
/// `True`
pub const TRUE: u32 = 5;
/// `False`
pub const FALSE: u32 = 6;
/// `Boolean`
pub const BOOLEAN: u32 = 7;
/// `Integer` (SmallIntegers and large integers alike)
pub const INTEGER: u32 = 8;
/// `Double`
pub const DOUBLE: u32 = 9;
/// `String`
pub const STRING: u32 = 10;
/// `Symbol`
pub const SYMBOL: u32 = 11;
/// `Array`
pub const ARRAY: u32 = 12;
/// `Method`
pub const METHOD: u32 = 13;
/// `Primitive`
pub const PRIMITIVE: u32 = 14;
/// `Block`
pub const BLOCK: u32 = 15;
/// `Block1` (no-argument blocks)
pub const BLOCK1: u32 = 16;
/// `Block2` (one argument)
pub const BLOCK2: u32 = 17;
/// `Block3` (two arguments)
pub const BLOCK3: u32 = 18;
/// `Block4` (three arguments)
pub const BLOCK4: u32 = 19;
/// `System`
pub const SYSTEM: u32 = 20;
/// Lupa's hidden environment class (captured variables).
pub const ENV: u32 = 21;
/// `Process`
pub const PROCESS: u32 = 22;
/// `ProcessorScheduler`
pub const SCHEDULER: u32 = 23;
/// `Semaphore`
pub const SEMAPHORE: u32 = 24;
/// `WeakArray`
pub const WEAK_ARRAY: u32 = 25;
/// `Context` (holder of the frame primitives)
pub const CONTEXT: u32 = 26;
/// `Ephemeron`
pub const EPHEMERON: u32 = 27;
/// Number of well-known classes (+1).
pub const COUNT: u32 = 28;

/// Names of the well-known classes, by index.
pub const NAMES: [&str; COUNT as usize] = [
    "",
    "Object",
    "Class",
    "Metaclass",
    "Nil",
    "True",
    "False",
    "Boolean",
    "Integer",
    "Double",
    "String",
    "Symbol",
    "Array",
    "Method",
    "Primitive",
    "Block",
    "Block1",
    "Block2",
    "Block3",
    "Block4",
    "System",
    "LupaEnvironment",
    "Process",
    "ProcessorScheduler",
    "Semaphore",
    "WeakArray",
    "Context",
    "Ephemeron",
];

/// Does the VM read the slots of instances of `c` as its own data? Block
/// closures (`Block`, `Block1`..`Block4`: code id, home receiver, outer
/// environment) and environments (`LupaEnvironment`: parent, alive flag,
/// captured variables) are made only by the VM, and the interpreter and
/// native code trust what their slots hold. Such a class may declare no
/// field (the loader refuses one, inherited ones included), its instances
/// count as having no named field for a method (installation, `invokeOn:with:`,
/// `perform:inSuperclass:`), and no primitive writes their slots
/// (`instVarAt:put:`, `instVarNamed:put:`, `at:put:`) or makes one (`new`, `new:`).
#[inline]
pub fn holds_vm_slots(c: u32) -> bool {
    (BLOCK..=BLOCK4).contains(&c) || c == ENV
}

/// Are the instances of `c` made only by the VM, never by `new`/`new:`?
/// Integers, Doubles and Symbols (their identity and contents are the VM's),
/// the three constants, and the classes of [`holds_vm_slots`].
#[inline]
pub fn made_by_vm(c: u32) -> bool {
    matches!(c, INTEGER | DOUBLE | SYMBOL | NIL | TRUE | FALSE) || holds_vm_slots(c)
}
