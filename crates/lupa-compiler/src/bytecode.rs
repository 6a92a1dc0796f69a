//! Lupa's instruction set and the compiled form of methods and blocks.
//!
//! # Frames and variables
//! A frame (method or block activation) owns a contiguous slice of its process's
//! value stack:
//!
//! ```text
//! bp+0            receiver (for a block: the receiver of its home method)
//! bp+1 ..         arguments (num_args of them)
//! bp+1+num_args.. stack-resident temporaries (num_temps of them, nil-initialised)
//! then            the operand stack (at most max_stack values)
//! ```
//! `PushLocal(i)` / `StoreLocal(i)` / `PopLocal(i)` address `bp+1+i`: index 0 is the
//! first argument, index `num_args` the first temporary.
//!
//! Variables captured by an inner block live instead in a heap *environment*
//! ("env") so that blocks can outlive their frame. A code unit with
//! `env_size > 0` or `needs_env` gets a fresh env at activation; env variable `i`
//! is addressed by `PushEnv { depth: 0, index: i }`. An env's parent is the env
//! its closure captured (its *outer* env). Code units without their own env do not
//! appear in the chain: `depth` counts only scopes that have an env, starting at the
//! frame's *effective env* (its own env if it has one, else its closure's outer env).
//! Captured arguments are copied into the env by `CopyArgToEnv` at the start of the
//! code (the compiler emits these first); afterwards the argument is only accessed
//! in the env. Arguments may be assigned (SOM allows it): `StoreLocal`/`PopLocal`
//! can address an argument slot.
//!
//! A method whose blocks contain `^` always has an env (`needs_env`): it is the home
//! marker that a non-local return looks for. The home env is the root of the env
//! chain (the env whose parent is nil).
//!
//! # Jumps
//! Jump targets are absolute indices into `CompiledCode::code`. A backwards jump is
//! always `JumpBack`: a safepoint, like the return to the interpreter's frame loop
//! after every send and return. Collections and process switches happen only at
//! safepoints (the sampler's stack copies are taken at sends instead:
//! ARCHITECTURE.md, "The sampler (VMProfiler)").
//!
//! # Inlined control structures
//! `ifTrue:` & co. compile to conditional jumps, `whileTrue:` & co. to a loop closed
//! by `JumpBack`, `to:do:`/`timesRepeat:` to `ForTest`/`ForIncr` over two hidden
//! stack temporaries; the exact sequences are listed in the docs of the compiler's
//! `emit` module (`crates/lupa-compiler/src/emit.rs`). Their stack discipline is
//! simple: every instruction is reached with one operand stack depth, whatever the
//! path (`max_stack` relies on it), and all jumps of one inlined construct stay
//! inside it.
//! A loop is only inlined when no block created inside it captures one of its
//! per-iteration variables (the parameter and locals of its body and condition
//! blocks, and of blocks inlined inside them): SOM gives each iteration fresh
//! ones, so such a loop is compiled as a normal send with real blocks.
//!
//! # Counting
//! Every `Send*`/`SuperSend` instruction counts as one executed message send,
//! whether the VM ran it by a fast path or by a real lookup. Conditional jumps and
//! loop instructions emitted for inlined control structures (`ifTrue:`, `whileTrue:`,
//! `to:do:`, `and:`, ...) count as *inlined sends* instead, when they carry
//! `inlined: true`.

use num_bigint::BigInt;

/// A constant in a literal frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Const {
    /// `nil`
    Nil,
    /// `true`
    True,
    /// `false`
    False,
    /// A small enough integer.
    Int(i64),
    /// An integer that does not fit in i64.
    BigInt(BigInt),
    /// A double.
    Double(f64),
    /// A string (a new copy is NOT made at each evaluation; SOM strings are immutable).
    String(String),
    /// A symbol; also used for selectors and global names.
    Symbol(String),
    /// A literal array.
    Array(Vec<Const>),
}

/// Binary/unary selectors the interpreter runs by a fast path when both operands
/// are SmallIntegers (or Doubles, where it says so); otherwise it performs a
/// normal send of the selector. Either way it counts as one send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialOp {
    /// `+` (ints, doubles)
    Add,
    /// `-` (ints, doubles)
    Sub,
    /// `*` (ints, doubles)
    Mul,
    /// `<` (ints, doubles)
    Lt,
    /// `>` (ints, doubles)
    Gt,
    /// `<=` (ints, doubles)
    Le,
    /// `>=` (ints, doubles)
    Ge,
    /// `=` (ints, doubles)
    Eq,
    /// `~=` and `<>` (ints, doubles)
    Ne,
    /// `==` (always by fast path: identity)
    IdentityEq,
    /// `//` on doubles: float division; `/` on ints: integer division (SOM semantics)
    Div,
    /// `%` (modulo, sign of divisor), ints
    Mod,
    /// `&` bitwise and, ints
    BitAnd,
    /// `at:` on Arrays (index checked; falls back to a send otherwise)
    At,
    /// `at:put:` on Arrays
    AtPut,
    /// `value` on a 0-argument block closure (falls back to a send otherwise)
    Value,
    /// `value:` on a 1-argument block closure
    ValueWith,
    /// `isNil`
    IsNil,
    /// `notNil`
    NotNil,
    /// `not` on booleans
    Not,
    /// `length` of Arrays/Strings (falls back to a send)
    Length,
}

impl SpecialOp {
    /// The selector this operation stands for, and its number of arguments.
    pub fn selector(self) -> (&'static str, u8) {
        match self {
            SpecialOp::Add => ("+", 1),
            SpecialOp::Sub => ("-", 1),
            SpecialOp::Mul => ("*", 1),
            SpecialOp::Lt => ("<", 1),
            SpecialOp::Gt => (">", 1),
            SpecialOp::Le => ("<=", 1),
            SpecialOp::Ge => (">=", 1),
            SpecialOp::Eq => ("=", 1),
            SpecialOp::Ne => ("~=", 1),
            SpecialOp::IdentityEq => ("==", 1),
            SpecialOp::Div => ("/", 1),
            SpecialOp::Mod => ("%", 1),
            SpecialOp::BitAnd => ("&", 1),
            SpecialOp::At => ("at:", 1),
            SpecialOp::AtPut => ("at:put:", 2),
            SpecialOp::Value => ("value", 0),
            SpecialOp::ValueWith => ("value:", 1),
            SpecialOp::IsNil => ("isNil", 0),
            SpecialOp::NotNil => ("notNil", 0),
            SpecialOp::Not => ("not", 0),
            SpecialOp::Length => ("length", 0),
        }
    }

    /// The special op for a selector, if it has one. `<>` maps to `Ne`; `//` is
    /// not special (only `/` is).
    pub fn for_selector(sel: &str) -> Option<SpecialOp> {
        Some(match sel {
            "+" => SpecialOp::Add,
            "-" => SpecialOp::Sub,
            "*" => SpecialOp::Mul,
            "<" => SpecialOp::Lt,
            ">" => SpecialOp::Gt,
            "<=" => SpecialOp::Le,
            ">=" => SpecialOp::Ge,
            "=" => SpecialOp::Eq,
            "~=" | "<>" => SpecialOp::Ne,
            "==" => SpecialOp::IdentityEq,
            "/" => SpecialOp::Div,
            "%" => SpecialOp::Mod,
            "&" => SpecialOp::BitAnd,
            "at:" => SpecialOp::At,
            "at:put:" => SpecialOp::AtPut,
            "value" => SpecialOp::Value,
            "value:" => SpecialOp::ValueWith,
            "isNil" => SpecialOp::IsNil,
            "notNil" => SpecialOp::NotNil,
            "not" => SpecialOp::Not,
            "length" => SpecialOp::Length,
            _ => return None,
        })
    }
}

/// One instruction.
///
/// `sel` operands are indices into the literal frame holding the selector as a
/// `Const::Symbol`; `site` operands are send-site numbers `0..num_send_sites`
/// (one inline cache each, unique within one `CompiledCode`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// Push the receiver.
    PushSelf,
    /// Push nil.
    PushNil,
    /// Push true.
    PushTrue,
    /// Push false.
    PushFalse,
    /// Push a small integer constant.
    PushInt(i32),
    /// Push literal `i` of the literal frame.
    PushLiteral(u16),
    /// Push a stack-resident argument or temporary (see module docs).
    PushLocal(u16),
    /// Store the top of stack into a local; the value stays on the stack.
    StoreLocal(u16),
    /// Pop the top of stack into a local.
    PopLocal(u16),
    /// Push an env variable `depth` env-scopes out.
    PushEnv {
        /// How many env scopes outwards (0 = the frame's effective env).
        depth: u8,
        /// Variable index in that env.
        index: u16,
    },
    /// Store top into an env variable (value stays).
    StoreEnv {
        /// As in `PushEnv`.
        depth: u8,
        /// As in `PushEnv`.
        index: u16,
    },
    /// Pop top into an env variable.
    PopEnv {
        /// As in `PushEnv`.
        depth: u8,
        /// As in `PushEnv`.
        index: u16,
    },
    /// Copy argument `arg` (0-based) into variable `index` of the frame's own env.
    CopyArgToEnv {
        /// Argument number.
        arg: u8,
        /// Env variable index.
        index: u16,
    },
    /// Push instance variable `i` (0-based) of the receiver.
    PushField(u16),
    /// Store top into instance variable `i` of the receiver (value stays).
    StoreField(u16),
    /// Pop top into instance variable `i` of the receiver.
    PopField(u16),
    /// Push the value of the global named by literal `i` (a symbol). If there is
    /// no such global, send `unknownGlobal:` to self with the symbol.
    PushGlobal(u16),
    /// Create a closure for nested block `i` (`CompiledCode::blocks[i]`) capturing
    /// the receiver and the current effective env.
    PushBlock(u16),
    /// Discard the top of stack.
    Pop,
    /// Duplicate the top of stack.
    Dup,
    /// Send `sel` with `argc` arguments (receiver and args on the stack, receiver deepest).
    Send {
        /// Selector literal index.
        sel: u16,
        /// Number of arguments.
        argc: u8,
        /// Send site (inline cache) number.
        site: u16,
    },
    /// Send to `super`: lookup starts in the superclass of the class holding the method.
    SuperSend {
        /// Selector literal index.
        sel: u16,
        /// Number of arguments.
        argc: u8,
        /// Send site number.
        site: u16,
    },
    /// A send of a special selector with a fast path (see [`SpecialOp`]).
    Special {
        /// Which operation.
        op: SpecialOp,
        /// Selector literal index (for the fallback send).
        sel: u16,
        /// Send site number.
        site: u16,
    },
    /// Return the top of stack from this frame (a method returns to its sender; a
    /// block returns the value to whoever sent it `value`).
    ReturnTop,
    /// Return the receiver from this method frame.
    ReturnSelf,
    /// `^expr` inside a block: return top of stack from the home method.
    ReturnNonLocal,
    /// Jump forward to an absolute target.
    Jump(u32),
    /// Jump backward to an absolute target (a safepoint).
    JumpBack(u32),
    /// Pop; jump if it is true. Not a boolean: send `mustBeBoolean` to it.
    JumpIfTrue {
        /// Target.
        target: u32,
        /// Emitted for an inlined send (counts as an inlined send).
        inlined: bool,
    },
    /// Pop; jump if it is false. Not a boolean: send `mustBeBoolean` to it.
    JumpIfFalse {
        /// Target.
        target: u32,
        /// Emitted for an inlined send (counts as an inlined send).
        inlined: bool,
    },
    /// Pop; jump if it is nil.
    JumpIfNil {
        /// Target.
        target: u32,
        /// Emitted for an inlined send (counts as an inlined send).
        inlined: bool,
    },
    /// Pop; jump if it is not nil.
    JumpIfNotNil {
        /// Target.
        target: u32,
        /// Emitted for an inlined send (counts as an inlined send).
        inlined: bool,
    },
    /// Loop test of an inlined `to:do:` / `to:by:do:` / `downTo:do:` /
    /// `timesRepeat:` (counts as an inlined send): if local `counter` is past
    /// local `limit` (greater when `step` is positive, smaller when it is
    /// negative), jump to `exit`. Works on SmallIntegers and Doubles; other
    /// operands send `>`/`<` normally (the loop exits when that answers true).
    ForTest {
        /// Stack-resident local holding the counter.
        counter: u16,
        /// Stack-resident local holding the limit.
        limit: u16,
        /// +1/-1 for to:do:/downTo:do:, or any non-zero constant for to:by:do:
        /// with a literal integer step.
        step: i32,
        /// Where to go when the loop ends.
        exit: u32,
    },
    /// End of an inlined loop body: add `step` to local `counter` and jump back to
    /// `target` (a safepoint).
    ForIncr {
        /// Stack-resident local holding the counter.
        counter: u16,
        /// The step (same as the matching `ForTest`).
        step: i32,
        /// The loop head (the `ForTest`).
        target: u32,
    },
}

/// What kind of code unit this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeKind {
    /// A method.
    Method,
    /// A block (closure); its number of parameters is `num_args`.
    Block,
}

/// A method or block, compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledCode {
    /// Method or block.
    pub kind: CodeKind,
    /// The method selector (for a block: the selector of its home method).
    pub selector: String,
    /// Number of arguments (for blocks: parameters).
    pub num_args: u8,
    /// Number of stack-resident temporaries (includes hidden temps of inlined loops
    /// and inlined blocks' locals that are not captured).
    pub num_temps: u16,
    /// Number of variables in this unit's own env (0 = none unless `needs_env`).
    pub env_size: u16,
    /// This unit must allocate an env even when `env_size == 0` (it is the home of
    /// a non-local return).
    pub needs_env: bool,
    /// Maximum operand stack depth, including the transient slots of the fallback
    /// sends some instructions make on the operand stack: 2 for `PushGlobal`
    /// (`unknownGlobal:` to self with the symbol), `ForTest` (`>`/`<` with counter
    /// and limit) and `ForIncr` (`+` with counter and step).
    pub max_stack: u16,
    /// The instructions. Never empty: every path ends in a return.
    pub code: Vec<Op>,
    /// Literal frame.
    pub literals: Vec<Const>,
    /// Nested blocks, referenced by `PushBlock(i)`.
    pub blocks: Vec<CompiledCode>,
    /// Number of send sites (`Send`, `SuperSend`, `Special`).
    pub num_send_sites: u16,
    /// Pragmas of the method (empty for blocks): selector and literal arguments.
    pub pragmas: Vec<(String, Vec<Const>)>,
    /// The method was declared `= primitive` (its `code` then just returns self;
    /// the VM binds the native primitive by class and selector).
    pub is_primitive: bool,
    /// `(first pc, source line)` pairs, ascending by pc: instruction `pc` belongs to the
    /// line of the last entry whose first pc is <= pc. Lines are 1-based.
    pub lines: Vec<(u32, u32)>,
    /// Source line of the method/block start.
    pub first_line: u32,
    /// Names of the arguments then stack-resident temps, by local index (for
    /// debuggers; hidden loop temps are named `<counter>`/`<limit>`).
    pub local_names: Vec<String>,
    /// Names of env variables, by index.
    pub env_names: Vec<String>,
}

impl Op {
    /// `(values popped, values pushed)`: the instruction's net effect on the
    /// operand stack (the verifier's and the JIT's stack-depth analyses).
    pub fn stack_effect(&self) -> (u32, u32) {
        match *self {
            Op::PushSelf
            | Op::PushNil
            | Op::PushTrue
            | Op::PushFalse
            | Op::PushInt(_)
            | Op::PushLiteral(_)
            | Op::PushLocal(_)
            | Op::PushEnv { .. }
            | Op::PushField(_)
            | Op::PushGlobal(_)
            | Op::PushBlock(_) => (0, 1),
            Op::Dup => (1, 2),
            Op::StoreLocal(_) | Op::StoreEnv { .. } | Op::StoreField(_) => (1, 1),
            Op::PopLocal(_) | Op::PopEnv { .. } | Op::PopField(_) | Op::Pop => (1, 0),
            Op::CopyArgToEnv { .. } => (0, 0),
            Op::Send { argc, .. } | Op::SuperSend { argc, .. } => (u32::from(argc) + 1, 1),
            Op::Special { op, .. } => (u32::from(op.selector().1) + 1, 1),
            Op::ReturnTop | Op::ReturnNonLocal => (1, 0),
            Op::ReturnSelf => (0, 0),
            Op::Jump(_) | Op::JumpBack(_) => (0, 0),
            Op::JumpIfTrue { .. }
            | Op::JumpIfFalse { .. }
            | Op::JumpIfNil { .. }
            | Op::JumpIfNotNil { .. } => (1, 0),
            Op::ForTest { .. } | Op::ForIncr { .. } => (0, 0),
        }
    }

    /// Where control may go after this instruction at `pc`: (falls through,
    /// jump target).
    pub fn successors(&self, pc: usize) -> (Option<usize>, Option<usize>) {
        let next = Some(pc + 1);
        match *self {
            Op::ReturnTop | Op::ReturnNonLocal | Op::ReturnSelf => (None, None),
            Op::Jump(t) | Op::JumpBack(t) => (None, Some(t as usize)),
            Op::ForIncr { target, .. } => (None, Some(target as usize)),
            Op::JumpIfTrue { target, .. }
            | Op::JumpIfFalse { target, .. }
            | Op::JumpIfNil { target, .. }
            | Op::JumpIfNotNil { target, .. } => (next, Some(target as usize)),
            Op::ForTest { exit, .. } => (next, Some(exit as usize)),
            _ => (next, None),
        }
    }
}

impl CompiledCode {
    /// The source line of instruction `pc`.
    pub fn line_of(&self, pc: usize) -> u32 {
        line_at(&self.lines, self.first_line, pc)
    }
}

/// The source line of instruction `pc` in a line table of `(first pc, line)` pairs
/// (ascending by pc); `first_line` before the first entry.
pub fn line_at(lines: &[(u32, u32)], first_line: u32, pc: usize) -> u32 {
    let k = lines.partition_point(|&(start, _)| start as usize <= pc);
    if k == 0 { first_line } else { lines[k - 1].1 }
}
