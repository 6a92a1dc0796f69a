//! Scope analysis: AST → [`Program`].
//!
//! This pass resolves every name (locals and arguments innermost first, then
//! instance fields, then the pseudo variables, then globals), decides which sends
//! are inlined, gives the variables of inlined blocks to the enclosing code unit,
//! and records which variables are *captured* (used by a code unit other than the
//! one that owns them) and whether the method is the home of a non-local return.
//! It reports every semantic error: assignment to a pseudo variable or to a name
//! that is not a variable or field, duplicate or reserved variable names, and
//! the limits of the instruction set. (Arguments may be assigned, as in SOM.)
//!
//! # Loops whose variables are captured
//! The parameter and locals of an inlined loop body (and the locals of its
//! condition block, and of blocks inlined inside either) become variables of the
//! enclosing code unit, so every iteration uses the same slot. That is invisible
//! unless a real block created in the loop captures one of them: in SOM each
//! iteration is a new block activation with fresh variables, so
//! `1 to: 3 do: [:i | bs add: [i]]` must collect blocks answering 1, 2 and 3.
//! Such a loop is therefore not inlined: [`Lowerer::try_inline`] lowers it as
//! an inlined loop, and if one of the variables it declared for the current unit
//! turned out to be captured, undoes that work and lowers it as an ordinary send
//! with real blocks. Whether a loop gets inlined depends only on its own source
//! (and on the same decision for the loops inside it), so a loop that was
//! refused is remembered and not tried again when an enclosing loop is lowered
//! again in turn: every expression is lowered at most once per enclosing loop.

use crate::bytecode::Const;
use crate::ir::{
    Expr, METHOD_UNIT, Msg, NilBranch, Node, Program, Seq, Stmt, Storage, Target, Unit, UnitId,
    Var, VarId, VarKind,
};
use lupa_syntax::{Diagnostic, Ident, Literal, Span, ast};
use std::collections::{HashMap, HashSet};

/// How deeply expressions (and blocks, and literal arrays) may nest: twice
/// what the parser accepts, so that anything it produces compiles. Deeper
/// (hand-built) input is rejected rather than risking a stack overflow in the
/// compiler's recursive passes.
pub(crate) const MAX_NESTING: u32 = 2 * {
    let (a, b) = (lupa_syntax::MAX_EXPR_DEPTH, lupa_syntax::MAX_NESTING);
    if a > b { a } else { b }
};

/// Most arguments a method or block may have (`Op::CopyArgToEnv::arg` is a `u8`).
const MAX_ARGS: usize = u8::MAX as usize;

/// Names that can never be declared or assigned.
const RESERVED: [&str; 5] = ["self", "super", "nil", "true", "false"];

/// Lower a method body. `params` are the method's parameters.
pub(crate) fn lower_method(
    params: &[Ident],
    body: &ast::Body,
    span: Span,
    fields: &[String],
) -> Result<Program, Diagnostic> {
    let mut l = Lowerer {
        fields,
        units: vec![Unit::new(None, span)],
        vars: Vec::new(),
        scopes: vec![HashMap::new()],
        unit: METHOD_UNIT,
        loop_depth: 0,
        nesting: 0,
        journal: Vec::new(),
        not_inlined: HashSet::new(),
    };
    if params.len() > MAX_ARGS {
        return Err(err(
            format!("too many arguments (at most {MAX_ARGS})"),
            span,
        ));
    }
    for p in params {
        l.declare(p, VarKind::Arg)?;
    }
    for t in &body.locals {
        l.declare(t, VarKind::Temp)?;
    }
    let stmts = l.stmts(&body.statements)?;
    l.units[METHOD_UNIT.0].body = Seq {
        resets: Vec::new(),
        stmts,
        span: body.span,
    };
    Ok(Program {
        units: l.units,
        vars: l.vars,
    })
}

fn err(message: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic {
        message: message.into(),
        span,
    }
}

impl Unit {
    fn new(parent: Option<UnitId>, span: Span) -> Unit {
        Unit {
            parent,
            span,
            args: Vec::new(),
            temps: Vec::new(),
            blocks: Vec::new(),
            body: Seq::default(),
            needs_env: false,
            num_temps: 0,
            env_size: 0,
            arg_copies: Vec::new(),
        }
    }
}

/// What a name denotes.
enum Name {
    Var(VarId),
    Field(u16),
    SelfRef { is_super: bool },
    Nil,
    True,
    False,
    Global,
}

struct Lowerer<'a> {
    fields: &'a [String],
    units: Vec<Unit>,
    vars: Vec<Var>,
    /// Lexical scopes, innermost last: the method, blocks and inlined blocks.
    scopes: Vec<HashMap<String, VarId>>,
    /// The code unit being lowered.
    unit: UnitId,
    /// Number of inlined loops of the current unit around the current point.
    loop_depth: u32,
    /// Current expression nesting.
    nesting: u32,
    /// The previous `(captured, assigned)` flags of each variable whose flags were
    /// changed, in order, so that a refused loop inlining can be undone.
    journal: Vec<(VarId, bool, bool)>,
    /// Loop sends (by address of their message) found not to be inlinable
    /// because a real block inside captures one of their per-iteration variables.
    not_inlined: HashSet<*const ast::Message>,
}

/// The state of a [`Lowerer`] before an attempt to inline a loop.
struct Mark {
    vars: usize,
    units: usize,
    temps: usize,
    blocks: usize,
    journal: usize,
    needs_env: bool,
}

/// The selectors of the inlined loops.
fn is_loop_selector(sel: &str) -> bool {
    matches!(
        sel,
        "whileTrue:"
            | "whileFalse:"
            | "whileTrue"
            | "whileFalse"
            | "to:do:"
            | "downTo:do:"
            | "to:by:do:"
            | "timesRepeat:"
    )
}

/// A literal block with exactly `n` parameters.
fn literal_block(e: &ast::Expr, n: usize) -> Option<&ast::BlockDef> {
    match e {
        ast::Expr::Block(b) if b.params.len() == n => Some(b),
        _ => None,
    }
}

/// A literal block with 0 or 1 parameter (`ifNotNil:` accepts both).
fn literal_block_0_or_1(e: &ast::Expr) -> Option<&ast::BlockDef> {
    literal_block(e, 0).or_else(|| literal_block(e, 1))
}

impl Lowerer<'_> {
    // ----- variables and names -------------------------------------------

    fn declare(&mut self, id: &Ident, kind: VarKind) -> Result<VarId, Diagnostic> {
        if RESERVED.contains(&id.name.as_str()) {
            return Err(err(
                format!(
                    "'{}' is a reserved name and cannot be used as a variable name",
                    id.name
                ),
                id.span,
            ));
        }
        let scope = self
            .scopes
            .last_mut()
            .ok_or_else(|| err("internal error: no scope", id.span))?;
        let v = VarId(self.vars.len());
        if scope.insert(id.name.clone(), v).is_some() {
            return Err(err(
                format!("variable '{}' is declared twice", id.name),
                id.span,
            ));
        }
        self.vars.push(Var {
            name: id.name.clone(),
            unit: self.unit,
            captured: false,
            assigned: false,
            alias: None,
            storage: Storage::Unassigned,
        });
        let unit = &mut self.units[self.unit.0];
        match kind {
            VarKind::Arg => unit.args.push(v),
            VarKind::Temp => unit.temps.push(v),
        }
        Ok(v)
    }

    /// A compiler temporary of the current unit (not visible by name).
    fn hidden(&mut self, name: &str) -> VarId {
        let v = VarId(self.vars.len());
        self.vars.push(Var {
            name: name.to_string(),
            unit: self.unit,
            captured: false,
            assigned: false,
            alias: None,
            storage: Storage::Unassigned,
        });
        self.units[self.unit.0].temps.push(v);
        v
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// What `name` denotes here (without recording a capture).
    fn classify(&self, id: &Ident) -> Result<Name, Diagnostic> {
        if let Some(v) = self.lookup(&id.name) {
            return Ok(Name::Var(v));
        }
        if let Some(i) = self.fields.iter().rposition(|f| *f == id.name) {
            let i = u16::try_from(i).map_err(|_| {
                err(
                    format!("field '{}' is beyond the limit of 65536 fields", id.name),
                    id.span,
                )
            })?;
            return Ok(Name::Field(i));
        }
        Ok(match id.name.as_str() {
            "self" => Name::SelfRef { is_super: false },
            "super" => Name::SelfRef { is_super: true },
            "nil" => Name::Nil,
            "true" => Name::True,
            "false" => Name::False,
            _ => Name::Global,
        })
    }

    /// Resolve a name used in the current unit, marking variables of enclosing
    /// units as captured.
    fn resolve(&mut self, id: &Ident) -> Result<Name, Diagnostic> {
        let name = self.classify(id)?;
        if let Name::Var(v) = name
            && self.vars[v.0].unit != self.unit
        {
            self.set_flags(v, true, false);
        }
        Ok(name)
    }

    /// Mark `v` captured and/or assigned, journaling the change.
    fn set_flags(&mut self, v: VarId, captured: bool, assigned: bool) {
        let var = &mut self.vars[v.0];
        let old = (var.captured, var.assigned);
        let new = (old.0 || captured, old.1 || assigned);
        if new != old {
            self.journal.push((v, old.0, old.1));
            (var.captured, var.assigned) = new;
        }
    }

    /// Whether `e` is `super` (as a receiver it makes a super send).
    fn is_super(&self, e: &ast::Expr) -> bool {
        match e {
            ast::Expr::Var(id) => matches!(self.classify(id), Ok(Name::SelfRef { is_super: true })),
            _ => false,
        }
    }

    // ----- statements and expressions ------------------------------------

    fn stmts(&mut self, stmts: &[ast::Stmt]) -> Result<Vec<Stmt>, Diagnostic> {
        stmts
            .iter()
            .map(|s| match s {
                ast::Stmt::Expr(e) => Ok(Stmt::Expr(self.expr(e)?)),
                ast::Stmt::Return(e, span) => {
                    if self.unit != METHOD_UNIT {
                        self.units[METHOD_UNIT.0].needs_env = true;
                    }
                    Ok(Stmt::Return(self.expr(e)?, *span))
                }
            })
            .collect()
    }

    fn expr(&mut self, e: &ast::Expr) -> Result<Node, Diagnostic> {
        if self.nesting >= MAX_NESTING {
            return Err(err(
                format!("expression nested too deeply (more than {MAX_NESTING} levels)"),
                e.span(),
            ));
        }
        self.nesting += 1;
        let r = self.expr_inner(e);
        self.nesting -= 1;
        r
    }

    fn expr_inner(&mut self, e: &ast::Expr) -> Result<Node, Diagnostic> {
        let span = e.span();
        let kind = match e {
            ast::Expr::Literal(lit, span) => literal_expr(lit, *span)?,
            ast::Expr::Var(id) => match self.resolve(id)? {
                Name::Var(v) => Expr::Var(v),
                Name::Field(i) => Expr::Field(i),
                Name::SelfRef { .. } => Expr::SelfRef,
                Name::Nil => Expr::Nil,
                Name::True => Expr::True,
                Name::False => Expr::False,
                Name::Global => Expr::Global(id.name.clone()),
            },
            ast::Expr::Assign(id, value) => {
                let target = self.assign_target(id)?;
                Expr::Assign(target, Box::new(self.expr(value)?))
            }
            ast::Expr::Send(recv, msg) => {
                if !self.is_super(recv)
                    && let Some(node) = self.try_inline(recv, msg)?
                {
                    return Ok(node);
                }
                let is_super = self.is_super(recv);
                let recv = Box::new(self.expr(recv)?);
                let msg = self.msg(msg)?;
                return Ok(Node {
                    span: msg.span,
                    kind: Expr::Send {
                        recv,
                        is_super,
                        msg,
                    },
                });
            }
            ast::Expr::Cascade(recv, msgs) => {
                let is_super = self.is_super(recv);
                let recv = Box::new(self.expr(recv)?);
                let msgs = msgs.iter().map(|m| self.msg(m)).collect::<Result<_, _>>()?;
                Expr::Cascade {
                    recv,
                    is_super,
                    msgs,
                }
            }
            ast::Expr::Block(b) => self.real_block(b)?,
        };
        Ok(Node { kind, span })
    }

    fn assign_target(&mut self, id: &Ident) -> Result<Target, Diagnostic> {
        match self.resolve(id)? {
            Name::Var(v) => {
                self.set_flags(v, false, true);
                Ok(Target::Var(v))
            }
            Name::Field(i) => Ok(Target::Field(i)),
            Name::SelfRef { .. } | Name::Nil | Name::True | Name::False => Err(err(
                format!("cannot assign to pseudo-variable '{}'", id.name),
                id.span,
            )),
            Name::Global => Err(err(
                format!("cannot assign to '{}': no such variable or field", id.name),
                id.span,
            )),
        }
    }

    fn msg(&mut self, m: &ast::Message) -> Result<Msg, Diagnostic> {
        Ok(Msg {
            selector: m.selector.clone(),
            args: m
                .args
                .iter()
                .map(|a| self.expr(a))
                .collect::<Result<_, _>>()?,
            span: m.span,
        })
    }

    /// A non-inlined block: a new code unit.
    fn real_block(&mut self, b: &ast::BlockDef) -> Result<Expr, Diagnostic> {
        if b.params.len() > MAX_ARGS {
            return Err(err(
                format!("too many block parameters (at most {MAX_ARGS})"),
                b.span,
            ));
        }
        let parent = self.unit;
        let index = u16::try_from(self.units[parent.0].blocks.len()).map_err(|_| {
            err(
                "too many blocks in one method or block (limit 65536)",
                b.span,
            )
        })?;
        let id = UnitId(self.units.len());
        self.units.push(Unit::new(Some(parent), b.span));
        self.units[parent.0].blocks.push(id);

        let saved_loops = std::mem::replace(&mut self.loop_depth, 0);
        self.unit = id;
        self.scopes.push(HashMap::new());
        let result = (|| {
            for p in &b.params {
                self.declare(p, VarKind::Arg)?;
            }
            for t in &b.body.locals {
                self.declare(t, VarKind::Temp)?;
            }
            self.stmts(&b.body.statements)
        })();
        self.scopes.pop();
        self.unit = parent;
        self.loop_depth = saved_loops;
        let stmts = result?;
        self.units[id.0].body = Seq {
            resets: Vec::new(),
            stmts,
            span: b.body.span,
        };
        Ok(Expr::Block(index))
    }

    /// The body of an inlined block, in a new lexical scope of the current unit.
    /// `param_alias` is given to its parameters (see [`Var::alias`]).
    fn inline_block(
        &mut self,
        b: &ast::BlockDef,
        param_alias: Option<VarId>,
    ) -> Result<(Vec<VarId>, Seq), Diagnostic> {
        self.scopes.push(HashMap::new());
        let result = (|| {
            let mut params = Vec::new();
            for p in &b.params {
                let v = self.declare(p, VarKind::Temp)?;
                self.vars[v.0].alias = param_alias;
                params.push(v);
            }
            let mut resets = Vec::new();
            for t in &b.body.locals {
                let v = self.declare(t, VarKind::Temp)?;
                if self.loop_depth > 0 {
                    resets.push(v);
                }
            }
            let stmts = self.stmts(&b.body.statements)?;
            Ok((
                params,
                Seq {
                    resets,
                    stmts,
                    span: b.body.span,
                },
            ))
        })();
        self.scopes.pop();
        result
    }

    fn inline_seq(&mut self, b: &ast::BlockDef) -> Result<Seq, Diagnostic> {
        Ok(self.inline_block(b, None)?.1)
    }

    fn inline_loop_seq(&mut self, b: &ast::BlockDef) -> Result<Seq, Diagnostic> {
        self.loop_depth += 1;
        let r = self.inline_seq(b);
        self.loop_depth -= 1;
        r
    }

    fn nil_branch(&mut self, b: &ast::BlockDef) -> Result<NilBranch, Diagnostic> {
        let (params, body) = self.inline_block(b, None)?;
        Ok(NilBranch {
            param: params.first().copied(),
            body,
        })
    }

    /// Inline `recv msg` if it is one of the inlined control structures with
    /// literal block arguments of the right arity, unless it is a loop whose
    /// per-iteration variables are captured (see the module docs).
    fn try_inline(
        &mut self,
        recv: &ast::Expr,
        msg: &ast::Message,
    ) -> Result<Option<Node>, Diagnostic> {
        if !is_loop_selector(&msg.selector) {
            return self.inline_send(recv, msg);
        }
        let key = std::ptr::from_ref(msg);
        if self.not_inlined.contains(&key) {
            return Ok(None);
        }
        let mark = self.mark();
        let Some(node) = self.inline_send(recv, msg)? else {
            return Ok(None);
        };
        let unit = self.unit;
        if self.vars[mark.vars..]
            .iter()
            .any(|v| v.unit == unit && v.captured)
        {
            self.rollback(mark);
            self.not_inlined.insert(key);
            return Ok(None);
        }
        Ok(Some(node))
    }

    fn mark(&self) -> Mark {
        let unit = &self.units[self.unit.0];
        Mark {
            vars: self.vars.len(),
            units: self.units.len(),
            temps: unit.temps.len(),
            blocks: unit.blocks.len(),
            journal: self.journal.len(),
            needs_env: self.units[METHOD_UNIT.0].needs_env,
        }
    }

    /// Forget everything lowered since `mark` was taken (scopes, loop depth and
    /// nesting are balanced by then).
    fn rollback(&mut self, mark: Mark) {
        for (v, captured, assigned) in self.journal.drain(mark.journal..).rev() {
            let var = &mut self.vars[v.0];
            (var.captured, var.assigned) = (captured, assigned);
        }
        self.vars.truncate(mark.vars);
        self.units.truncate(mark.units);
        let unit = &mut self.units[self.unit.0];
        unit.temps.truncate(mark.temps);
        unit.blocks.truncate(mark.blocks);
        self.units[METHOD_UNIT.0].needs_env = mark.needs_env;
    }

    /// Inline `recv msg` if it is one of the inlined control structures with
    /// literal block arguments of the right arity.
    fn inline_send(
        &mut self,
        recv: &ast::Expr,
        msg: &ast::Message,
    ) -> Result<Option<Node>, Diagnostic> {
        let span = msg.span;
        let node = |kind| Ok(Some(Node { kind, span }));
        let sel = msg.selector.as_str();
        match (sel, msg.args.as_slice()) {
            ("ifTrue:" | "ifFalse:" | "ifTrue:ifFalse:" | "ifFalse:ifTrue:", [a, rest @ ..]) => {
                let Some(a) = literal_block(a, 0) else {
                    return Ok(None);
                };
                let b = match rest {
                    [] => None,
                    [b] => match literal_block(b, 0) {
                        Some(b) => Some(b),
                        None => return Ok(None),
                    },
                    _ => return Ok(None),
                };
                let cond = Box::new(self.expr(recv)?);
                let first = self.inline_seq(a)?;
                let second = match b {
                    Some(b) => Some(self.inline_seq(b)?),
                    None => None,
                };
                node(Expr::If {
                    cond,
                    first_when: sel.starts_with("ifTrue:"),
                    first,
                    second,
                })
            }
            ("and:" | "or:" | "&&" | "||", [a]) => {
                let Some(b) = literal_block(a, 0) else {
                    return Ok(None);
                };
                let left = Box::new(self.expr(recv)?);
                let right = self.inline_seq(b)?;
                node(Expr::Logic {
                    left,
                    is_and: matches!(sel, "and:" | "&&"),
                    right,
                })
            }
            ("whileTrue:" | "whileFalse:" | "whileTrue" | "whileFalse", args) => {
                let Some(c) = literal_block(recv, 0) else {
                    return Ok(None);
                };
                let b = match args {
                    [] => None,
                    [b] => match literal_block(b, 0) {
                        Some(b) => Some(b),
                        None => return Ok(None),
                    },
                    _ => return Ok(None),
                };
                let cond = self.inline_loop_seq(c)?;
                let body = match b {
                    Some(b) => Some(self.inline_loop_seq(b)?),
                    None => None,
                };
                node(Expr::While {
                    cond,
                    while_true: sel.starts_with("whileTrue"),
                    body,
                })
            }
            ("ifNil:" | "ifNotNil:" | "ifNil:ifNotNil:" | "ifNotNil:ifNil:", [a, rest @ ..]) => {
                // The nil arm takes no argument; the other may take the receiver.
                let first_when_nil = sel.starts_with("ifNil:");
                let arm = |e, nil: bool| {
                    if nil {
                        literal_block(e, 0)
                    } else {
                        literal_block_0_or_1(e)
                    }
                };
                let Some(a) = arm(a, first_when_nil) else {
                    return Ok(None);
                };
                let b = match rest {
                    [] => None,
                    [b] => match arm(b, !first_when_nil) {
                        Some(b) => Some(b),
                        None => return Ok(None),
                    },
                    _ => return Ok(None),
                };
                let recv = Box::new(self.expr(recv)?);
                let first = self.nil_branch(a)?;
                let second = match b {
                    Some(b) => Some(self.nil_branch(b)?),
                    None => None,
                };
                node(Expr::IfNil {
                    recv,
                    first_when_nil,
                    first,
                    second,
                })
            }
            ("to:do:" | "downTo:do:", [limit, blk]) => {
                let Some(blk) = literal_block(blk, 1) else {
                    return Ok(None);
                };
                let step = if sel == "to:do:" { 1 } else { -1 };
                self.inline_to_do(recv, limit, step, blk, span)
            }
            ("to:by:do:", [limit, step, blk]) => {
                let Some(blk) = literal_block(blk, 1) else {
                    return Ok(None);
                };
                let step = match step {
                    ast::Expr::Literal(Literal::Integer(n), _) => match i32::try_from(*n) {
                        Ok(n) if n != 0 => n,
                        _ => return Ok(None),
                    },
                    _ => return Ok(None),
                };
                self.inline_to_do(recv, limit, step, blk, span)
            }
            ("timesRepeat:", [a]) => {
                let Some(b) = literal_block(a, 0) else {
                    return Ok(None);
                };
                let count = Box::new(self.expr(recv)?);
                let counter = self.hidden("<counter>");
                let limit_var = self.hidden("<limit>");
                let body = self.inline_loop_seq(b)?;
                node(Expr::TimesRepeat {
                    count,
                    counter,
                    limit_var,
                    body,
                })
            }
            _ => Ok(None),
        }
    }

    fn inline_to_do(
        &mut self,
        from: &ast::Expr,
        limit: &ast::Expr,
        step: i32,
        blk: &ast::BlockDef,
        span: Span,
    ) -> Result<Option<Node>, Diagnostic> {
        let from = Box::new(self.expr(from)?);
        let limit = Box::new(self.expr(limit)?);
        let counter = self.hidden("<counter>");
        let limit_var = self.hidden("<limit>");
        self.loop_depth += 1;
        let r = self.inline_block(blk, Some(counter));
        self.loop_depth -= 1;
        let (params, body) = r?;
        let param = params
            .first()
            .copied()
            .ok_or_else(|| err("internal error: to:do: block without parameter", span))?;
        Ok(Some(Node {
            kind: Expr::ToDo {
                from,
                limit,
                step,
                counter,
                limit_var,
                param,
                body,
            },
            span,
        }))
    }
}

/// The expression for a literal in code.
fn literal_expr(lit: &Literal, span: Span) -> Result<Expr, Diagnostic> {
    Ok(match lit {
        Literal::Integer(n) => match i32::try_from(*n) {
            Ok(n) => Expr::Int(n),
            Err(_) => Expr::Lit(Const::Int(*n)),
        },
        Literal::True => Expr::True,
        Literal::False => Expr::False,
        Literal::Nil => Expr::Nil,
        other => Expr::Lit(literal_const(other, span, 0)?),
    })
}

/// Convert a literal (possibly a nested literal array) to a constant.
pub(crate) fn literal_const(lit: &Literal, span: Span, depth: u32) -> Result<Const, Diagnostic> {
    if depth >= MAX_NESTING {
        return Err(err("literal array nested too deeply", span));
    }
    Ok(match lit {
        Literal::Integer(n) => Const::Int(*n),
        Literal::BigInteger(n) => Const::BigInt(n.clone()),
        Literal::Double(d) => Const::Double(*d),
        Literal::String(s) => Const::String(s.clone()),
        Literal::Symbol(s) => Const::Symbol(s.clone()),
        Literal::Array(items) => Const::Array(
            items
                .iter()
                .map(|i| literal_const(i, span, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Literal::True => Const::True,
        Literal::False => Const::False,
        Literal::Nil => Const::Nil,
    })
}
