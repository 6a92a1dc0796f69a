//! The abstract syntax tree of a SOM class definition.
//!
//! Every node that can be the subject of an error message carries a [`Span`]
//! (byte offsets into the source). [`crate::SourceFile`] turns spans into
//! line/column positions.

use num_bigint::BigInt;

/// A half-open byte range `start..end` in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Byte offset of the first character.
    pub start: u32,
    /// Byte offset one past the last character.
    pub end: u32,
}

impl Span {
    /// A span covering `start..end`.
    pub fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// An identifier with its location.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    /// The name as written.
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

/// `Name = Super ( | fields | methods ---- | classFields | classMethods )`
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDef {
    /// The class name.
    pub name: Ident,
    /// The superclass name; `None` when omitted (the loader then uses `Object`).
    /// The literal `nil` as superclass is represented as `Some(Ident { name: "nil" })`.
    pub superclass: Option<Ident>,
    /// Instance field names, in order.
    pub instance_fields: Vec<Ident>,
    /// Instance-side methods, in source order.
    pub instance_methods: Vec<MethodDef>,
    /// Class-side field names (fields of the metaclass), in order.
    pub class_fields: Vec<Ident>,
    /// Class-side methods, in source order.
    pub class_methods: Vec<MethodDef>,
    /// The whole definition.
    pub span: Span,
}

/// The three kinds of message patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectorKind {
    /// `foo`
    Unary,
    /// `+ other`
    Binary,
    /// `at: i put: v`
    Keyword,
}

/// A pragma such as `<noInstrumentation>`, `<primitive>` or `<foo: 1 bar: #baz>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pragma {
    /// The full selector, e.g. `noInstrumentation` or `foo:bar:`.
    pub selector: String,
    /// Literal arguments, one per keyword.
    pub args: Vec<Literal>,
    /// Where it was written.
    pub span: Span,
}

/// One method definition.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodDef {
    /// The full selector, e.g. `at:put:`, `+`, `printOn:`.
    pub selector: String,
    /// The pattern kind.
    pub kind: SelectorKind,
    /// Parameter names (empty for unary).
    pub params: Vec<Ident>,
    /// Pragmas, in source order (they may appear before and/or after the locals).
    pub pragmas: Vec<Pragma>,
    /// The body.
    pub body: MethodBody,
    /// From the first token of the pattern to the closing parenthesis (or `primitive`).
    pub span: Span,
}

/// The body of a method.
#[derive(Debug, Clone, PartialEq)]
pub enum MethodBody {
    /// `pattern = primitive`: implemented natively by the VM.
    Primitive,
    /// `pattern = ( | locals | statements )`
    Code(Body),
}

/// Locals and statements of a method or block.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    /// Local variable names.
    pub locals: Vec<Ident>,
    /// Statements in order. A `^expr` statement is [`Stmt::Return`].
    pub statements: Vec<Stmt>,
    /// Span of the body (inside the parentheses / brackets).
    pub span: Span,
}

/// A statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// An expression evaluated for effect (or, as the last statement of a block, its value).
    Expr(Expr),
    /// `^ expr`: return from the enclosing method (a non-local return inside a block).
    Return(Expr, Span),
}

impl Stmt {
    /// The source span of this statement (for a return, from the `^`).
    pub fn span(&self) -> Span {
        match self {
            Stmt::Expr(e) => e.span(),
            Stmt::Return(_, s) => *s,
        }
    }
}

/// A message send: `receiver selector args`.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Full selector (`foo`, `+`, `at:put:`).
    pub selector: String,
    /// Arguments, one per keyword, or one for a binary message.
    pub args: Vec<Expr>,
    /// Span of the selector part (keywords and arguments), used for error locations.
    /// It ends at the last token of the last argument (a closing parenthesis included).
    pub span: Span,
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal constant.
    Literal(Literal, Span),
    /// A variable reference: local, argument, field, global, or one of the
    /// pseudo variables `self`, `super`, `nil`, `true`, `false` (the parser
    /// produces `Var` for them; the compiler resolves them).
    Var(Ident),
    /// `name := value`
    Assign(Ident, Box<Expr>),
    /// `receiver message` (a `super` receiver is `Var` named `super`).
    Send(Box<Expr>, Message),
    /// `receiver m1; m2; m3`: every message goes to the same receiver; the value is the last result.
    /// `messages` has at least two entries.
    Cascade(Box<Expr>, Vec<Message>),
    /// `[ :a :b | | t | statements ]`
    Block(Box<BlockDef>),
}

impl Expr {
    /// The source span of this expression.
    pub fn span(&self) -> Span {
        match self {
            Expr::Literal(_, s) => *s,
            Expr::Var(id) => id.span,
            Expr::Assign(id, e) => id.span.to(e.span()),
            Expr::Send(r, m) => r.span().to(m.span),
            Expr::Cascade(r, ms) => ms.iter().fold(r.span(), |s, m| s.to(m.span)),
            Expr::Block(b) => b.span,
        }
    }
}

/// A block literal.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockDef {
    /// Parameter names (`:a :b`).
    pub params: Vec<Ident>,
    /// Locals and statements.
    pub body: Body,
    /// From `[` to `]`.
    pub span: Span,
}

/// A literal constant.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// An integer that fits in i64.
    Integer(i64),
    /// An integer of any size that does not fit in i64.
    BigInteger(BigInt),
    /// A floating point number.
    Double(f64),
    /// `'text'` (escapes already processed).
    String(String),
    /// `#foo`, `#at:put:`, `#+`, `#'with space'`.
    Symbol(String),
    /// `#( ... )`; nested arrays, `true`, `false`, `nil` and bare identifiers (as symbols) allowed inside.
    Array(Vec<Literal>),
    /// `true` inside a literal array.
    True,
    /// `false` inside a literal array.
    False,
    /// `nil` inside a literal array.
    Nil,
}
