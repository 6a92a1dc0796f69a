//! The intermediate form between the AST and the bytecode.
//!
//! [`crate::lower`] turns a [`lupa_syntax::MethodDef`] into a [`Program`]: every
//! name is resolved (to a [`VarId`], a field, a pseudo variable or a global),
//! every inlining decision is taken, and every code unit (the method and each
//! non-inlined block) knows its variables. [`crate::alloc`] then places each
//! variable on the stack or in an env, and [`crate::emit`] produces the code.

use crate::bytecode::Const;
use lupa_syntax::Span;

/// A variable of some code unit (index into [`Program::vars`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct VarId(pub usize);

/// A code unit: the method (always unit 0) or a non-inlined block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct UnitId(pub usize);

/// The method's unit.
pub(crate) const METHOD_UNIT: UnitId = UnitId(0);

/// Whether a declared variable is an argument of its unit (passed on the stack)
/// or a temporary (declared temporaries, parameters of inlined blocks). SOM
/// allows assigning to both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarKind {
    /// An argument of its unit (in order).
    Arg,
    /// Anything else.
    Temp,
}

/// Where a variable lives once [`crate::alloc`] has run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storage {
    /// Not yet allocated.
    Unassigned,
    /// Frame slot `bp + 1 + i` (`PushLocal(i)`).
    Stack(u16),
    /// Variable `i` of the owning unit's env.
    Env(u16),
}

/// One variable.
#[derive(Debug, Clone)]
pub(crate) struct Var {
    /// The source name (hidden temps get a descriptive pseudo name).
    pub name: String,
    /// The code unit whose frame (or env) holds it.
    pub unit: UnitId,
    /// Referenced from a unit other than `unit`: must live in `unit`'s env.
    pub captured: bool,
    /// Assigned somewhere.
    pub assigned: bool,
    /// An inlined `to:do:` parameter shares the stack slot of the hidden counter
    /// when it is neither captured nor assigned (the two are then always equal
    /// inside the loop body).
    pub alias: Option<VarId>,
    /// Set by the allocator.
    pub storage: Storage,
}

/// A method or non-inlined block.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    /// The enclosing unit (`None` for the method).
    pub parent: Option<UnitId>,
    /// Source span (the whole method or the block literal).
    pub span: Span,
    /// Arguments, in order.
    pub args: Vec<VarId>,
    /// Every other variable owned by the unit, in declaration order: the unit's
    /// own temporaries first, then those of inlined blocks and hidden temps.
    pub temps: Vec<VarId>,
    /// Nested non-inlined blocks, in `PushBlock` index order.
    pub blocks: Vec<UnitId>,
    /// The statements.
    pub body: Seq,
    /// The method contains a `^` inside some non-inlined block.
    pub needs_env: bool,
    // Filled in by the allocator:
    /// Number of stack temporaries.
    pub num_temps: u16,
    /// Number of env variables.
    pub env_size: u16,
    /// `(arg, env index)` for each captured argument.
    pub arg_copies: Vec<(u8, u16)>,
}

impl Unit {
    /// Whether activations of this unit allocate their own env.
    pub(crate) fn has_env(&self) -> bool {
        self.env_size > 0 || self.needs_env
    }
}

/// The lowered method.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    /// Unit 0 is the method.
    pub units: Vec<Unit>,
    /// All variables of all units.
    pub vars: Vec<Var>,
}

impl Program {
    pub(crate) fn unit(&self, id: UnitId) -> &Unit {
        &self.units[id.0]
    }
    pub(crate) fn var(&self, id: VarId) -> &Var {
        &self.vars[id.0]
    }
}

/// A sequence of statements: a unit body or an inlined block body.
#[derive(Debug, Clone, Default)]
pub(crate) struct Seq {
    /// Locals of an inlined block that must be reset to nil on each entry
    /// (only inside inlined loops: elsewhere they are entered once per frame).
    pub resets: Vec<VarId>,
    /// The statements.
    pub stmts: Vec<Stmt>,
    /// Where the body is (for the line of an implicit `nil`).
    pub span: Span,
}

/// A statement.
#[derive(Debug, Clone)]
pub(crate) enum Stmt {
    /// An expression.
    Expr(Node),
    /// `^expr`
    Return(Node, Span),
}

/// An expression with the span used for its line number.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub kind: Expr,
    pub span: Span,
}

/// What an assignment writes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Var(VarId),
    Field(u16),
}

/// One message of a send or cascade.
#[derive(Debug, Clone)]
pub(crate) struct Msg {
    pub selector: String,
    pub args: Vec<Node>,
    pub span: Span,
}

/// One branch of an inlined `ifNil:`-family send.
#[derive(Debug, Clone)]
pub(crate) struct NilBranch {
    /// The block parameter that receives the (non-nil) receiver, if any.
    pub param: Option<VarId>,
    pub body: Seq,
}

/// An expression.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    Nil,
    True,
    False,
    /// `self`, or `super` not used as a receiver.
    SelfRef,
    Int(i32),
    /// Anything stored in the literal frame.
    Lit(Const),
    Field(u16),
    Global(String),
    Var(VarId),
    Assign(Target, Box<Node>),
    Send {
        recv: Box<Node>,
        is_super: bool,
        msg: Msg,
    },
    Cascade {
        recv: Box<Node>,
        is_super: bool,
        msgs: Vec<Msg>,
    },
    /// A closure over nested block `i` of the current unit.
    Block(u16),
    /// `ifTrue:`, `ifFalse:`, `ifTrue:ifFalse:`, `ifFalse:ifTrue:`: `first` runs when
    /// `cond` is `first_when`, `second` (nil when absent) otherwise.
    If {
        cond: Box<Node>,
        first_when: bool,
        first: Seq,
        second: Option<Seq>,
    },
    /// `and:`/`&&` (`is_and`) or `or:`/`||`.
    Logic {
        left: Box<Node>,
        is_and: bool,
        right: Seq,
    },
    /// `whileTrue:`/`whileFalse:` (and unary `whileTrue`/`whileFalse`: no body).
    While {
        cond: Seq,
        while_true: bool,
        body: Option<Seq>,
    },
    /// `ifNil:`, `ifNotNil:`, `ifNil:ifNotNil:`, `ifNotNil:ifNil:`: `first` runs when
    /// the receiver's nil-ness is `first_when_nil`; a missing branch answers the receiver.
    IfNil {
        recv: Box<Node>,
        first_when_nil: bool,
        first: NilBranch,
        second: Option<NilBranch>,
    },
    /// `to:do:`, `to:by:do:`, `downTo:do:`.
    ToDo {
        from: Box<Node>,
        limit: Box<Node>,
        step: i32,
        counter: VarId,
        limit_var: VarId,
        param: VarId,
        body: Seq,
    },
    /// `timesRepeat:`.
    TimesRepeat {
        count: Box<Node>,
        counter: VarId,
        limit_var: VarId,
        body: Seq,
    },
}
