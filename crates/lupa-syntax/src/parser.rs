//! The parser: a recursive-descent parser over the token stream of
//! [`Lexer`], producing the AST of [`crate::ast`].
//!
//! Grammar (SOM, plus Lupa's cascades and pragmas):
//!
//! ```text
//! class      = Ident '=' [Ident] '(' [decl] method* ['----' [decl] method*] ')'
//! method     = pattern '=' ('primitive' | '(' pragma* [decl] pragma* statements ')')
//! pattern    = Ident | BinOp Ident | (Keyword Ident)+
//! pragma     = '<' (Ident | (Keyword literal)+) '>'
//! decl       = '|' Ident* '|'
//! statements = [stmt ('.' stmt)* ['.']]          (empty statements are tolerated)
//! stmt       = '^' expr | expr
//! expr       = (Ident ':=')* cascade
//! cascade    = keywordExpr (';' message)*        (keywordExpr must end with a send)
//! keywordExpr= binaryExpr [(Keyword binaryExpr)+]
//! binaryExpr = unaryExpr (BinOp unaryExpr)*
//! unaryExpr  = primary Ident*
//! primary    = Ident | literal | '(' expr ')' | block
//! block      = '[' [(':' Ident)+ ('|' | &']')] [decl] statements ']'
//! literal    = ['-'] number | string | symbol | '#(' arrayItem* ')'
//! ```
//!
//! Recursion is bounded by [`MAX_NESTING`] (parentheses, blocks and literal
//! arrays), and the depth of the produced expression trees (long chains of
//! sends) by [`MAX_EXPR_DEPTH`], so that neither the parser nor code walking
//! the AST recursively can overflow the stack.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use num_bigint::BigInt;
use num_traits::ToPrimitive;

use crate::ast::{
    BlockDef, Body, ClassDef, Expr, Ident, Literal, Message, MethodBody, MethodDef, Pragma,
    SelectorKind, Span, Stmt,
};
use crate::diag::Diagnostic;
use crate::lexer::{Lexer, Token, TokenKind};

/// Maximum nesting of parentheses, blocks and literal arrays accepted by the
/// parser (deeper input is rejected with a diagnostic). The parser recurses
/// once per level, using about 2 KiB of stack per level in debug builds, so
/// parsing needs well under 1 MiB of stack whatever the input.
pub const MAX_NESTING: u32 = 256;

/// Maximum depth of an expression tree accepted by the parser: every send,
/// assignment and block adds a level, so a chain of `N` sends such as
/// `a foo foo foo` or `1 + 1 + 1` is `N` levels deep. Code that walks the AST
/// recursively (the compiler, `Drop`) can rely on this bound.
pub const MAX_EXPR_DEPTH: u32 = 1000;

/// Names that cannot be declared as fields, parameters or locals, nor assigned.
const RESERVED: [&str; 5] = ["self", "super", "nil", "true", "false"];

type PResult<T> = Result<T, Diagnostic>;

static EOF: Token = Token {
    kind: TokenKind::Eof,
    span: Span { start: 0, end: 0 },
};

/// Parse a class definition file.
pub fn parse_class(text: &str) -> Result<ClassDef, Diagnostic> {
    check_size(text)?;
    let mut p = Parser::new(text);
    p.class_def()
}

/// Parse one method definition (`pattern = ( ... )` or `pattern = primitive`).
///
/// Spans are byte offsets into `text`.
pub fn parse_method(text: &str) -> Result<MethodDef, Diagnostic> {
    check_size(text)?;
    let mut p = Parser::new(text);
    let m = p.method_def()?;
    if p.cur().kind != TokenKind::Eof {
        return Err(p.unexpected(format_args!(
            "the end of the input after the definition of method '{}'",
            m.selector
        )));
    }
    Ok(m)
}

fn check_size(text: &str) -> PResult<()> {
    if text.len() >= u32::MAX as usize {
        return Err(Diagnostic::new(
            "source text too large (4 GiB or more)",
            Span::default(),
        ));
    }
    Ok(())
}

/// What closes a sequence of statements, for error messages.
#[derive(Clone, Copy)]
enum Closer<'s> {
    /// A method body opened at the given offset.
    Method(&'s str, u32),
    /// A block opened at the given offset.
    Block(u32),
}

/// Kind of a declared name, for duplicate/reserved diagnostics.
#[derive(Clone, Copy, PartialEq)]
enum DeclKind {
    Field,
    Param,
    BlockParam,
    Local,
}

impl DeclKind {
    fn describe(self) -> &'static str {
        match self {
            DeclKind::Field => "field",
            DeclKind::Param => "method parameter",
            DeclKind::BlockParam => "block parameter",
            DeclKind::Local => "local variable",
        }
    }
}

/// Names declared in one scope (a class side, a method or a block).
type Scope<'a> = HashMap<&'a str, DeclKind>;

struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    /// Lookahead buffer; `buf[0]` is the current token.
    buf: VecDeque<Token>,
    /// Current recursion depth (parentheses, blocks, literal arrays).
    depth: u32,
    /// End offset of the last consumed token.
    prev_end: u32,
}

fn is_number(kind: &TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Integer(_) | TokenKind::BigInteger(_) | TokenKind::Double(_)
    )
}

/// Shorten a source excerpt for a message: first line, at most 40 characters.
fn excerpt(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(40).collect();
    if out.len() < text.len() {
        out.push_str("...");
    }
    out
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Parser<'a> {
        Parser {
            src,
            lexer: Lexer::new(src),
            buf: VecDeque::with_capacity(4),
            depth: 0,
            prev_end: 0,
        }
    }

    // ----- token access -------------------------------------------------

    fn peek(&mut self, n: usize) -> &Token {
        while self.buf.len() <= n {
            let t = self.lexer.next_token();
            self.buf.push_back(t);
        }
        self.buf.get(n).unwrap_or(&EOF)
    }

    fn cur(&mut self) -> &Token {
        self.peek(0)
    }

    fn cur_span(&mut self) -> Span {
        self.peek(0).span
    }

    fn bump(&mut self) -> Token {
        self.peek(0);
        let t = self.buf.pop_front().unwrap_or_else(|| EOF.clone());
        self.prev_end = t.span.end;
        t
    }

    fn text(&self, span: Span) -> &'a str {
        self.src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    fn at(&mut self, kind: &TokenKind) -> bool {
        &self.cur().kind == kind
    }

    /// Whether token `n` is the operator `op` exactly.
    fn is_op(&mut self, n: usize, op: &str) -> bool {
        let t = self.peek(n);
        let (kind, span) = (&t.kind, t.span);
        *kind == TokenKind::Operator && self.text(span) == op
    }

    /// Whether the current token is an operator starting with `c`.
    fn op_starts_with(&mut self, c: u8) -> bool {
        let t = self.peek(0);
        let (is_op, span) = (t.kind == TokenKind::Operator, t.span);
        is_op && self.text(span).as_bytes().first() == Some(&c)
    }

    /// If the current token is an operator starting with `c`, consume that one
    /// character (splitting e.g. `||` into `|` `|`) and return its span.
    fn take_op_prefix(&mut self, c: u8) -> Option<Span> {
        if !self.op_starts_with(c) {
            return None;
        }
        let span = self.cur_span();
        if span.end - span.start <= 1 {
            self.bump();
            return Some(span);
        }
        if let Some(t) = self.buf.front_mut() {
            t.span.start += 1;
        }
        self.prev_end = span.start + 1;
        Some(Span::new(span.start, span.start + 1))
    }

    fn ident(&self, t: &Token) -> Ident {
        Ident {
            name: self.text(t.span).to_string(),
            span: t.span,
        }
    }

    fn line_of(&self, offset: u32) -> usize {
        let end = (offset as usize).min(self.src.len());
        self.src
            .as_bytes()
            .get(..end)
            .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
            + 1
    }

    // ----- diagnostics --------------------------------------------------

    fn describe(&self, t: &Token) -> String {
        let text = self.text(t.span);
        match &t.kind {
            TokenKind::Eof => "end of file".into(),
            TokenKind::Identifier => format!("identifier '{text}'"),
            TokenKind::Keyword => format!("keyword '{text}'"),
            TokenKind::Operator => format!("operator '{text}'"),
            TokenKind::Separator => format!("separator '{text}'"),
            TokenKind::Integer(_) | TokenKind::BigInteger(_) | TokenKind::Double(_) => {
                format!("number {}", excerpt(text))
            }
            TokenKind::String(_) => format!("string {}", excerpt(text)),
            TokenKind::Symbol(_) => format!("symbol {}", excerpt(text)),
            TokenKind::Error(msg) => msg.clone(),
            _ => format!("'{text}'"),
        }
    }

    /// "expected {expected}, found {current token}", at the current token.
    /// A lexical error token is reported as itself.
    #[cold]
    #[inline(never)]
    fn unexpected(&mut self, expected: impl fmt::Display) -> Diagnostic {
        let t = self.cur().clone();
        if let TokenKind::Error(msg) = &t.kind {
            return Diagnostic::new(msg.clone(), t.span);
        }
        let mut msg = format!("expected {expected}, found {}", self.describe(&t));
        match t.kind {
            TokenKind::Assign => msg.push_str(" (only a variable name can be assigned to)"),
            TokenKind::Operator if self.text(t.span) == "<" => {
                msg.push_str(" (pragmas are only allowed at the start of a method body)")
            }
            _ => {}
        }
        Diagnostic::new(msg, t.span)
    }

    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_NESTING {
            let span = self.cur_span();
            return Err(Diagnostic::new(
                format!(
                    "nesting too deep: more than {MAX_NESTING} nested parentheses, blocks or literal arrays"
                ),
                span,
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    #[inline]
    fn check_depth(depth: u32, span: Span) -> PResult<()> {
        if depth > MAX_EXPR_DEPTH {
            Err(Self::too_deep(span))
        } else {
            Ok(())
        }
    }

    #[cold]
    #[inline(never)]
    fn too_deep(span: Span) -> Diagnostic {
        Diagnostic::new(
            format!(
                "expression too deeply nested: more than {MAX_EXPR_DEPTH} levels of message sends, assignments and blocks (split it into several statements)"
            ),
            span,
        )
    }

    /// Record a declaration in `scope`, rejecting reserved and duplicate names.
    fn declare(&self, scope: &mut Scope<'a>, t: &Token, kind: DeclKind) -> PResult<()> {
        let name = self.text(t.span);
        if RESERVED.contains(&name) {
            return Err(Diagnostic::new(
                format!(
                    "'{name}' is a reserved name and cannot be declared as a {}",
                    kind.describe()
                ),
                t.span,
            ));
        }
        if let Some(&prev) = scope.get(name) {
            let msg = if prev == kind {
                format!("duplicate {} '{name}'", kind.describe())
            } else {
                format!(
                    "{} '{name}' has the same name as a {} in the same scope",
                    kind.describe(),
                    prev.describe()
                )
            };
            return Err(Diagnostic::new(msg, t.span));
        }
        scope.insert(name, kind);
        Ok(())
    }

    // ----- class --------------------------------------------------------

    fn class_def(&mut self) -> PResult<ClassDef> {
        if !self.at(&TokenKind::Identifier) {
            return Err(self.unexpected(
                "a class name at the start of the class definition (as in 'Foo = Object ( ... )')",
            ));
        }
        let t = self.bump();
        let name = self.ident(&t);
        if !self.is_op(0, "=") {
            return Err(self.unexpected(format_args!("'=' after the class name '{}'", name.name)));
        }
        self.bump();
        let superclass = if self.at(&TokenKind::Identifier) {
            let t = self.bump();
            Some(self.ident(&t))
        } else {
            None
        };
        if !self.at(&TokenKind::LParen) {
            let what = if superclass.is_some() {
                format!("'(' to start the body of class '{}'", name.name)
            } else {
                format!(
                    "a superclass name or '(' to start the body of class '{}'",
                    name.name
                )
            };
            return Err(self.unexpected(what));
        }
        let open = self.bump().span;

        let instance_fields = self.class_fields()?;
        let instance_methods = self.methods(&name.name, open, true)?;
        let (class_fields, class_methods) = if self.at(&TokenKind::Separator) {
            self.bump();
            let fields = self.class_fields()?;
            (fields, self.methods(&name.name, open, false)?)
        } else {
            (Vec::new(), Vec::new())
        };
        // `methods` stops only at ')' (or '----' on the instance side, handled above).
        let close = self.bump().span;
        if !self.at(&TokenKind::Eof) {
            return Err(self.unexpected(format_args!(
                "the end of the file after the definition of class '{}'",
                name.name
            )));
        }
        let span = name.span.to(close);
        Ok(ClassDef {
            name,
            superclass,
            instance_fields,
            instance_methods,
            class_fields,
            class_methods,
            span,
        })
    }

    /// Optional `| a b |` at the start of a class side. `| x = (` and
    /// `|| x = (` are method definitions (of `|` and `||`), not fields.
    fn class_fields(&mut self) -> PResult<Vec<Ident>> {
        if !(self.is_op(0, "|") || self.is_op(0, "||")) {
            return Ok(Vec::new());
        }
        if self.peek(1).kind == TokenKind::Identifier && self.is_op(2, "=") {
            return Ok(Vec::new());
        }
        let mut scope = Scope::new();
        self.declaration(&mut scope, DeclKind::Field)
    }

    /// `| a b c |` (the current token starts with `|`).
    fn declaration(&mut self, scope: &mut Scope<'a>, kind: DeclKind) -> PResult<Vec<Ident>> {
        let _open = self.take_op_prefix(b'|');
        let mut names = Vec::new();
        loop {
            if self.at(&TokenKind::Identifier) {
                let t = self.bump();
                self.declare(scope, &t, kind)?;
                names.push(self.ident(&t));
            } else if self.take_op_prefix(b'|').is_some() {
                return Ok(names);
            } else {
                let what = kind.describe();
                return Err(self.unexpected(format_args!(
                    "a {what} name or '|' to end the {what} declaration"
                )));
            }
        }
    }

    fn methods(&mut self, class: &str, open: Span, instance_side: bool) -> PResult<Vec<MethodDef>> {
        let mut methods = Vec::new();
        loop {
            match self.cur().kind {
                TokenKind::Identifier | TokenKind::Keyword | TokenKind::Operator => {
                    methods.push(self.method_def()?);
                }
                TokenKind::RParen => return Ok(methods),
                TokenKind::Separator if instance_side => return Ok(methods),
                TokenKind::Separator => {
                    return Err(self.unexpected(format_args!(
                        "a method definition or ')' to close the body of class '{class}' (the class side separator may appear only once)"
                    )));
                }
                TokenKind::Eof => {
                    let line = self.line_of(open.start);
                    return Err(self.unexpected(format_args!(
                        "')' to close the body of class '{class}' (opened on line {line})"
                    )));
                }
                _ => {
                    let sep = if instance_side { ", '----'" } else { "" };
                    return Err(self.unexpected(format_args!(
                        "a method definition{sep} or ')' to close the body of class '{class}'"
                    )));
                }
            }
        }
    }

    // ----- methods ------------------------------------------------------

    fn method_def(&mut self) -> PResult<MethodDef> {
        let start = self.cur_span();
        let mut scope = Scope::new();
        let mut params = Vec::new();
        let (selector, kind) = match self.cur().kind {
            TokenKind::Identifier => {
                let t = self.bump();
                (self.text(t.span).to_string(), SelectorKind::Unary)
            }
            TokenKind::Operator => {
                let op = self.bump();
                let sel = self.text(op.span);
                if !self.at(&TokenKind::Identifier) {
                    return Err(self.unexpected(format_args!(
                        "a parameter name after the binary selector '{sel}' in the method pattern"
                    )));
                }
                let t = self.bump();
                self.declare(&mut scope, &t, DeclKind::Param)?;
                params.push(self.ident(&t));
                (sel.to_string(), SelectorKind::Binary)
            }
            TokenKind::Keyword => {
                let mut sel = String::new();
                while self.at(&TokenKind::Keyword) {
                    let kw = self.bump();
                    let kw = self.text(kw.span);
                    sel.push_str(kw);
                    if !self.at(&TokenKind::Identifier) {
                        return Err(self.unexpected(format_args!(
                            "a parameter name after '{kw}' in the method pattern"
                        )));
                    }
                    let t = self.bump();
                    self.declare(&mut scope, &t, DeclKind::Param)?;
                    params.push(self.ident(&t));
                }
                (sel, SelectorKind::Keyword)
            }
            _ => {
                return Err(self.unexpected(
                    "a method definition (a unary selector, a binary operator or a keyword pattern)",
                ));
            }
        };
        if !self.is_op(0, "=") {
            return Err(
                self.unexpected(format_args!("'=' after the pattern of method '{selector}'"))
            );
        }
        self.bump();

        let mut pragmas = Vec::new();
        let is_primitive = {
            let t = self.cur();
            let (kind, span) = (&t.kind, t.span);
            *kind == TokenKind::Identifier && self.text(span) == "primitive"
        };
        let (body, end) = if is_primitive {
            let t = self.bump();
            (MethodBody::Primitive, t.span)
        } else if self.at(&TokenKind::LParen) {
            let open = self.bump().span;
            self.pragmas(&mut pragmas)?;
            let locals = if self.op_starts_with(b'|') {
                self.declaration(&mut scope, DeclKind::Local)?
            } else {
                Vec::new()
            };
            self.pragmas(&mut pragmas)?;
            let (statements, _) =
                self.statements(&TokenKind::RParen, Closer::Method(&selector, open.start))?;
            let close = self.bump().span;
            let body = Body {
                locals,
                statements,
                span: Span::new(open.end, close.start),
            };
            (MethodBody::Code(body), close)
        } else {
            return Err(self.unexpected(format_args!(
                "'(' or 'primitive' after '=' in the definition of method '{selector}'"
            )));
        };
        Ok(MethodDef {
            selector,
            kind,
            params,
            pragmas,
            body,
            span: start.to(end),
        })
    }

    /// Zero or more pragmas `<foo>` / `<foo: lit bar: lit>`.
    fn pragmas(&mut self, out: &mut Vec<Pragma>) -> PResult<()> {
        while self.is_op(0, "<") {
            let open = self.bump().span;
            let mut selector = String::new();
            let mut args = Vec::new();
            match self.cur().kind {
                TokenKind::Identifier => {
                    let t = self.bump();
                    selector.push_str(self.text(t.span));
                }
                TokenKind::Keyword => {
                    while self.at(&TokenKind::Keyword) {
                        let kw = self.bump();
                        let kw = self.text(kw.span);
                        selector.push_str(kw);
                        match self.literal(false)? {
                            Some((lit, _)) => args.push(lit),
                            None => {
                                return Err(self.unexpected(format_args!(
                                    "a literal argument (number, string, symbol, literal array, true, false or nil) after '{kw}' in the pragma"
                                )));
                            }
                        }
                    }
                }
                _ => {
                    return Err(self.unexpected(
                        "a pragma selector after '<' (as in <primitive> or <name: 'value'>)",
                    ));
                }
            }
            let Some(close) = self.take_op_prefix(b'>') else {
                return Err(self.unexpected(format_args!("'>' to close the pragma <{selector}")));
            };
            out.push(Pragma {
                selector,
                args,
                span: open.to(close),
            });
        }
        Ok(())
    }

    // ----- statements ---------------------------------------------------

    /// Statements up to (not including) `close`. Returns them and their
    /// maximum expression depth.
    fn statements(&mut self, close: &TokenKind, closer: Closer<'_>) -> PResult<(Vec<Stmt>, u32)> {
        let mut stmts = Vec::new();
        let mut depth = 0;
        loop {
            while self.at(&TokenKind::Period) {
                self.bump();
            }
            if self.at(close) {
                return Ok((stmts, depth));
            }
            let stmt = if self.at(&TokenKind::Caret) {
                let caret = self.bump().span;
                self.expect_operand(|| "an expression to return after '^'".into())?;
                let (e, d) = self.expression()?;
                depth = depth.max(d);
                Stmt::Return(e, Span::new(caret.start, self.prev_end))
            } else {
                if !self.starts_operand() {
                    return Err(self.statement_error(closer, false));
                }
                let (e, d) = self.expression()?;
                depth = depth.max(d);
                Stmt::Expr(e)
            };
            stmts.push(stmt);
            if self.at(&TokenKind::Period) {
                continue;
            }
            if self.at(close) {
                return Ok((stmts, depth));
            }
            return Err(self.statement_error(closer, true));
        }
    }

    /// The error for a token that can neither start (`after == false`) nor
    /// follow (`after == true`) a statement.
    #[cold]
    #[inline(never)]
    fn statement_error(&mut self, closer: Closer<'_>, after: bool) -> Diagnostic {
        if self.at(&TokenKind::Eof) {
            return self.unclosed(closer);
        }
        let what = match (closer, after) {
            (Closer::Method(sel, _), false) => {
                format!("a statement or ')' to close the body of method '{sel}'")
            }
            (Closer::Block(_), false) => "a statement or ']' to close the block".to_string(),
            (Closer::Method(sel, _), true) => {
                format!("'.' to end the statement or ')' to close the body of method '{sel}'")
            }
            (Closer::Block(_), true) => "'.' to end the statement or ']' to close the block".into(),
        };
        self.unexpected(what)
    }

    #[cold]
    #[inline(never)]
    fn unclosed(&mut self, closer: Closer<'_>) -> Diagnostic {
        match closer {
            Closer::Method(sel, open) => {
                let line = self.line_of(open);
                self.unexpected(format_args!(
                    "')' to close the body of method '{sel}' (opened on line {line})"
                ))
            }
            Closer::Block(open) => {
                let line = self.line_of(open);
                self.unexpected(format_args!("']' to close the block opened on line {line}"))
            }
        }
    }

    // ----- expressions --------------------------------------------------

    /// Whether the current token can start an expression.
    fn starts_operand(&mut self) -> bool {
        match &self.cur().kind {
            TokenKind::Identifier
            | TokenKind::Integer(_)
            | TokenKind::BigInteger(_)
            | TokenKind::Double(_)
            | TokenKind::String(_)
            | TokenKind::Symbol(_)
            | TokenKind::LiteralArrayStart
            | TokenKind::LParen
            | TokenKind::LBracket => true,
            TokenKind::Operator => self.negative_number_follows(),
            _ => false,
        }
    }

    fn expect_operand(&mut self, what: impl FnOnce() -> String) -> PResult<()> {
        if self.starts_operand() {
            Ok(())
        } else {
            Err(self.operand_error(what))
        }
    }

    #[cold]
    #[inline(never)]
    fn operand_error(&mut self, what: impl FnOnce() -> String) -> Diagnostic {
        let what = what();
        self.unexpected(what)
    }

    /// `-` followed by a number: a negative literal in operand position.
    fn negative_number_follows(&mut self) -> bool {
        self.is_op(0, "-") && is_number(&self.peek(1).kind)
    }

    /// `(name ':=')* cascade`
    fn expression(&mut self) -> PResult<(Expr, u32)> {
        if self.at(&TokenKind::Identifier) && self.peek(1).kind == TokenKind::Assign {
            self.assignment()
        } else {
            self.cascade()
        }
    }

    /// `(name ':=')+ cascade`
    #[inline(never)]
    fn assignment(&mut self) -> PResult<(Expr, u32)> {
        let mut targets = Vec::new();
        while self.at(&TokenKind::Identifier) && self.peek(1).kind == TokenKind::Assign {
            let t = self.bump();
            let name = self.text(t.span);
            if RESERVED.contains(&name) {
                return Err(Diagnostic::new(
                    format!("cannot assign to '{name}': it is a pseudo-variable"),
                    t.span,
                ));
            }
            self.bump();
            targets.push(self.ident(&t));
        }
        if let Some(last) = targets.last() {
            let name = last.name.clone();
            self.expect_operand(|| format!("an expression to assign to '{name}' after ':='"))?;
        }
        let (mut e, mut d) = self.cascade()?;
        while let Some(target) = targets.pop() {
            d += 1;
            Self::check_depth(d, target.span)?;
            e = Expr::Assign(target, Box::new(e));
        }
        Ok((e, d))
    }

    /// `keywordExpr (';' message)*`
    fn cascade(&mut self) -> PResult<(Expr, u32)> {
        let (first, depth) = self.keyword_expr()?;
        if !self.at(&TokenKind::Semicolon) {
            return Ok((first, depth));
        }
        self.cascade_rest(first, depth)
    }

    /// The `; message` parts of a cascade whose first part is `first`.
    #[inline(never)]
    fn cascade_rest(&mut self, first: Expr, mut depth: u32) -> PResult<(Expr, u32)> {
        // The first part must end with a send made at this level: not `(a foo); bar`.
        let (receiver, first_msg) = match first {
            Expr::Send(r, m) if m.span.end == self.prev_end => (r, m),
            _ => {
                let span = self.cur_span();
                return Err(Diagnostic::new(
                    "a cascade ';' must follow a message send (as in 'Transcript show: 1; cr')",
                    span,
                ));
            }
        };
        let mut messages = vec![first_msg];
        while self.at(&TokenKind::Semicolon) {
            self.bump();
            let (m, d) = match self.cur().kind {
                TokenKind::Identifier => {
                    let t = self.bump();
                    let sel = self.text(t.span).to_string();
                    (
                        Message {
                            selector: sel,
                            args: Vec::new(),
                            span: t.span,
                        },
                        0,
                    )
                }
                TokenKind::Operator => self.binary_message()?,
                TokenKind::Keyword => self.keyword_message()?,
                _ => return Err(self.unexpected("a message after ';' in the cascade")),
            };
            depth = depth.max(d + 1);
            let sel = m.selector.clone();
            messages.push(m);
            if matches!(
                self.cur().kind,
                TokenKind::Identifier | TokenKind::Keyword | TokenKind::Operator
            ) {
                return Err(self.unexpected(format_args!(
                    "';' or the end of the statement after cascade message '{sel}' (each part of a cascade is a single message; use parentheses to send more)"
                )));
            }
        }
        let span = receiver.span();
        Self::check_depth(depth, span)?;
        Ok((Expr::Cascade(receiver, messages), depth))
    }

    /// `binaryExpr [(Keyword binaryExpr)+]`
    fn keyword_expr(&mut self) -> PResult<(Expr, u32)> {
        let (recv, d) = self.binary_expr()?;
        if !self.at(&TokenKind::Keyword) {
            return Ok((recv, d));
        }
        let (m, md) = self.keyword_message()?;
        let d = d.max(md) + 1;
        Self::check_depth(d, m.span)?;
        Ok((Expr::Send(Box::new(recv), m), d))
    }

    /// `(Keyword binaryExpr)+`
    fn keyword_message(&mut self) -> PResult<(Message, u32)> {
        let start = self.cur_span();
        let mut selector = String::new();
        let mut args = Vec::new();
        let mut depth = 0;
        while self.at(&TokenKind::Keyword) {
            let kw = self.bump();
            let kw = self.text(kw.span);
            selector.push_str(kw);
            self.expect_operand(|| format!("an argument after keyword '{kw}'"))?;
            let (arg, d) = self.binary_expr()?;
            depth = depth.max(d);
            args.push(arg);
        }
        Ok((
            Message {
                selector,
                args,
                span: Span::new(start.start, self.prev_end),
            },
            depth,
        ))
    }

    /// `unaryExpr (BinOp unaryExpr)*`
    fn binary_expr(&mut self) -> PResult<(Expr, u32)> {
        let (mut e, mut depth) = self.unary_expr()?;
        while self.at(&TokenKind::Operator) {
            let (m, d) = self.binary_message()?;
            depth = depth.max(d) + 1;
            Self::check_depth(depth, m.span)?;
            e = Expr::Send(Box::new(e), m);
        }
        Ok((e, depth))
    }

    /// `BinOp unaryExpr`
    fn binary_message(&mut self) -> PResult<(Message, u32)> {
        let op = self.bump();
        let sel = self.text(op.span);
        self.expect_operand(|| format!("an argument after binary operator '{sel}'"))?;
        let (arg, d) = self.unary_expr()?;
        let span = Span::new(op.span.start, self.prev_end);
        Ok((
            Message {
                selector: sel.to_string(),
                args: vec![arg],
                span,
            },
            d,
        ))
    }

    /// `primary Ident*`
    fn unary_expr(&mut self) -> PResult<(Expr, u32)> {
        let (mut e, mut depth) = self.primary()?;
        while self.at(&TokenKind::Identifier) {
            let t = self.bump();
            depth += 1;
            Self::check_depth(depth, t.span)?;
            let m = Message {
                selector: self.text(t.span).to_string(),
                args: Vec::new(),
                span: t.span,
            };
            e = Expr::Send(Box::new(e), m);
        }
        Ok((e, depth))
    }

    /// `'(' expr ')'`
    #[inline(never)]
    fn parenthesized(&mut self) -> PResult<(Expr, u32)> {
        self.enter()?;
        let open = self.bump().span;
        self.expect_operand(|| "an expression after '('".into())?;
        let (e, d) = self.expression()?;
        if !self.at(&TokenKind::RParen) {
            let line = self.line_of(open.start);
            return Err(self.unexpected(format_args!(
                "')' to close the parenthesis opened on line {line}"
            )));
        }
        self.bump();
        self.leave();
        Ok((e, d))
    }

    #[inline(never)]
    fn primary(&mut self) -> PResult<(Expr, u32)> {
        match self.cur().kind {
            TokenKind::Identifier => {
                let t = self.bump();
                Ok((Expr::Var(self.ident(&t)), 1))
            }
            TokenKind::LParen => self.parenthesized(),
            TokenKind::LBracket => self.block(),
            _ => match self.literal(false)? {
                Some((lit, span)) => Ok((Expr::Literal(lit, span), 1)),
                None => Err(self.unexpected("an expression")),
            },
        }
    }

    /// `'[' [(':' Ident)+ ('|' | &']')] [decl] statements ']'`
    #[inline(never)]
    fn block(&mut self) -> PResult<(Expr, u32)> {
        self.enter()?;
        let open = self.bump().span;
        let mut scope = Scope::new();
        let mut params = Vec::new();
        while self.at(&TokenKind::Colon) {
            self.bump();
            if !self.at(&TokenKind::Identifier) {
                return Err(self.unexpected("a block parameter name after ':'"));
            }
            let t = self.bump();
            self.declare(&mut scope, &t, DeclKind::BlockParam)?;
            params.push(self.ident(&t));
        }
        if !params.is_empty()
            && !self.at(&TokenKind::RBracket)
            && self.take_op_prefix(b'|').is_none()
        {
            return Err(self.unexpected("another ':parameter' or '|' after the block parameters"));
        }
        let locals = if self.op_starts_with(b'|') {
            self.declaration(&mut scope, DeclKind::Local)?
        } else {
            Vec::new()
        };
        let (statements, depth) =
            self.statements(&TokenKind::RBracket, Closer::Block(open.start))?;
        let close = self.bump().span;
        self.leave();
        let depth = depth + 1;
        let span = open.to(close);
        Self::check_depth(depth, span)?;
        let body = Body {
            locals,
            statements,
            span: Span::new(open.end, close.start),
        };
        Ok((
            Expr::Block(Box::new(BlockDef { params, body, span })),
            depth,
        ))
    }

    // ----- literals -----------------------------------------------------

    /// A literal in operand (or pragma argument) position, or `None` if the
    /// current token does not start one. With `in_array`, bare identifiers,
    /// keywords and operators are symbols and `( ... )` is a nested array;
    /// `true`, `false` and `nil` are accepted in arrays and pragmas.
    #[inline(never)]
    fn literal(&mut self, in_array: bool) -> PResult<Option<(Literal, Span)>> {
        let kind = shallow(&self.cur().kind);
        let result = match kind {
            Shallow::Number | Shallow::String | Shallow::Symbol => {
                let t = self.bump();
                (token_literal(t.kind), t.span)
            }
            Shallow::Operator if self.negative_number_follows() => {
                let minus = self.bump().span;
                let t = self.bump();
                (negate(token_literal(t.kind)), minus.to(t.span))
            }
            Shallow::ArrayStart => self.literal_array()?,
            Shallow::LParen if in_array => self.literal_array()?,
            Shallow::Identifier => {
                let span = self.cur_span();
                let lit = match self.text(span) {
                    "true" => Literal::True,
                    "false" => Literal::False,
                    "nil" => Literal::Nil,
                    name if in_array => Literal::Symbol(name.to_string()),
                    _ => return Ok(None),
                };
                self.bump();
                (lit, span)
            }
            Shallow::Operator if in_array => {
                let t = self.bump();
                (Literal::Symbol(self.text(t.span).to_string()), t.span)
            }
            Shallow::Keyword if in_array => {
                // `foo:bar:` (adjacent keywords, optionally ending with an identifier).
                let first = self.bump().span;
                let mut span = first;
                loop {
                    let next = self.peek(0);
                    let adjacent = next.span.start == span.end;
                    let next_kind = shallow(&next.kind);
                    match next_kind {
                        Shallow::Keyword if adjacent => {
                            span = span.to(self.bump().span);
                        }
                        Shallow::Identifier if adjacent => {
                            span = span.to(self.bump().span);
                            break;
                        }
                        _ => break,
                    }
                }
                (Literal::Symbol(self.text(span).to_string()), span)
            }
            _ => return Ok(None),
        };
        Ok(Some(result))
    }

    /// `#( items )` or, inside an array, `( items )`. The current token is the opener.
    fn literal_array(&mut self) -> PResult<(Literal, Span)> {
        self.enter()?;
        let open = self.bump().span;
        let mut items = Vec::new();
        loop {
            if self.at(&TokenKind::RParen) {
                let close = self.bump().span;
                self.leave();
                return Ok((Literal::Array(items), open.to(close)));
            }
            match self.literal(true)? {
                Some((lit, _)) => items.push(lit),
                None => {
                    let what = if self.at(&TokenKind::Eof) {
                        let line = self.line_of(open.start);
                        format!("')' to close the literal array opened on line {line}")
                    } else {
                        "a literal or ')' to close the literal array".to_string()
                    };
                    return Err(self.unexpected(what));
                }
            }
        }
    }
}

/// Token kinds without payload, to dispatch without cloning strings.
enum Shallow {
    Number,
    String,
    Symbol,
    ArrayStart,
    LParen,
    Identifier,
    Keyword,
    Operator,
    Other,
}

fn shallow(kind: &TokenKind) -> Shallow {
    match kind {
        TokenKind::Integer(_) | TokenKind::BigInteger(_) | TokenKind::Double(_) => Shallow::Number,
        TokenKind::String(_) => Shallow::String,
        TokenKind::Symbol(_) => Shallow::Symbol,
        TokenKind::LiteralArrayStart => Shallow::ArrayStart,
        TokenKind::LParen => Shallow::LParen,
        TokenKind::Identifier => Shallow::Identifier,
        TokenKind::Keyword => Shallow::Keyword,
        TokenKind::Operator => Shallow::Operator,
        _ => Shallow::Other,
    }
}

/// The literal of a number, string or symbol token.
fn token_literal(kind: TokenKind) -> Literal {
    match kind {
        TokenKind::Integer(i) => Literal::Integer(i),
        TokenKind::BigInteger(b) => normalize(b),
        TokenKind::Double(d) => Literal::Double(d),
        TokenKind::String(s) => Literal::String(s),
        TokenKind::Symbol(s) => Literal::Symbol(s),
        _ => Literal::Nil,
    }
}

/// `Integer` if it fits in i64, else `BigInteger`.
fn normalize(b: BigInt) -> Literal {
    match b.to_i64() {
        Some(i) => Literal::Integer(i),
        None => Literal::BigInteger(b),
    }
}

fn negate(lit: Literal) -> Literal {
    match lit {
        Literal::Integer(i) => match i.checked_neg() {
            Some(n) => Literal::Integer(n),
            None => Literal::BigInteger(-BigInt::from(i)),
        },
        Literal::BigInteger(b) => normalize(-b),
        Literal::Double(d) => Literal::Double(-d),
        other => other,
    }
}
