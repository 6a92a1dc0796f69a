//! Code emission: [`Program`] → [`CompiledCode`].
//!
//! Expressions are compiled either for their *value* (it is left on the stack)
//! or for *effect* only (nothing is left), which lets statements skip useless
//! pushes and pops (`x := 3.` is `PushInt 3; PopLocal x`; an `ifTrue:` statement
//! does not push the nil of its missing branch).
//!
//! Inlined control structures compile to these sequences (`V` marks what only
//! the value form emits; labels are absolute pcs; `PopLocal x`/`StoreLocal x`
//! become `PopEnv`/`StoreEnv` when `x` is captured; `n` and `m` are hidden stack
//! temporaries):
//!
//! ```text
//! c ifTrue: [a] ifFalse: [b]   c; JumpIfFalse L; a; Jump E; L: b; E:
//! c ifTrue: [a]                c; JumpIfFalse L; a; Jump E; L: PushNil; E:      (V)
//!                              c; JumpIfFalse E; a; E:                          (effect)
//! c and: [a]                   c; JumpIfFalse L; a; Jump E; L: PushFalse; E:    (V)
//!                              c; JumpIfFalse E; a; E:                          (effect)
//! [c] whileTrue: [a]           L: c; JumpIfFalse E; a; JumpBack L; E: PushNil(V)
//! r ifNil: [a]                 r; Dup; JumpIfNotNil E; Pop; a; E:               (V)
//!                              r; JumpIfNotNil E; a; E:                         (effect)
//! r ifNotNil: [:x | a]         r; Dup; JumpIfNil E; PopLocal x; a; E:           (V)
//!                              r; StoreLocal x; JumpIfNil E; a; E:              (effect)
//! r ifNil: [a] ifNotNil: [:x | b]
//!                              r; StoreLocal x; JumpIfNotNil L; a; Jump E; L: b; E:
//! f to: l by: s do: [:i | a]   f; Dup(V); PopLocal n; l; PopLocal m;
//!                              L: ForTest n m s E; (i := n); a; ForIncr n s L; E:
//! r timesRepeat: [a]           r; Dup(V); PopLocal m; PushInt 1; PopLocal n;
//!                              L: ForTest n m 1 E; a; ForIncr n 1 L; E:
//! ```
//! (`ifFalse:`, `or:`, `whileFalse:` and `ifNotNil:ifNil:` are the mirror images,
//! branches are emitted in source order; locals of inlined blocks inside loops
//! are reset to nil at the start of the block; a `^` ending a branch makes the
//! `Jump E` after it unnecessary, so it is not emitted.) The value of a `to:do:`
//! or `timesRepeat:` is the receiver, kept on the stack under the loop. The copy
//! `i := n` (`PushLocal n; PopLocal i`) is only emitted when `i` has a slot of
//! its own, i.e. when it is assigned; otherwise `i` *is* `n`. (A loop is never
//! inlined when a block created in it captures its parameter or one of its
//! locals: see the docs of the `lower` module.)

use crate::bytecode::{CodeKind, CompiledCode, Const, Op, SpecialOp};
use crate::ir::{
    Expr, METHOD_UNIT, Msg, NilBranch, Node, Program, Seq, Stmt, Storage, Target, UnitId, VarId,
};
use crate::verify;
use lupa_syntax::{Diagnostic, SourceFile, Span};
use num_bigint::BigInt;
use std::collections::HashMap;

/// Source lines of byte offsets. `SourceFile::line_col` also computes a column,
/// which costs a scan of the line: this map answers lines inside the method's
/// span by binary search instead (and asks the source file for anything else).
pub(crate) struct LineMap<'a> {
    src: &'a SourceFile,
    start: u32,
    end: u32,
    first_line: u32,
    /// Offsets of the `\n` characters in `start..end`.
    newlines: Vec<u32>,
}

impl LineMap<'_> {
    pub(crate) fn new(src: &SourceFile, span: Span) -> LineMap<'_> {
        let text = src.text.as_bytes();
        let (start, end) = (span.start.min(span.end), span.end);
        let newlines = text
            .get(start as usize..(end as usize).min(text.len()))
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .map(|(i, _)| start + i as u32)
            .collect();
        LineMap {
            src,
            start,
            end,
            first_line: src.line_col(start).0,
            newlines,
        }
    }

    pub(crate) fn line(&self, offset: u32) -> u32 {
        if offset < self.start || offset >= self.end {
            return self.src.line_col(offset).0;
        }
        let before = self.newlines.partition_point(|&n| n < offset) as u32;
        self.first_line.saturating_add(before)
    }
}

/// Whether an expression's value is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Value,
    Effect,
}

/// Compile unit `id` of `prog` (and, recursively, its blocks).
pub(crate) fn emit_unit(
    prog: &Program,
    id: UnitId,
    selector: &str,
    lines: &LineMap<'_>,
) -> Result<CompiledCode, Diagnostic> {
    let unit = prog.unit(id);
    let mut e = Emitter {
        prog,
        line_map: lines,
        unit: id,
        code: Vec::new(),
        lines: Vec::new(),
        literals: Vec::new(),
        literal_index: HashMap::new(),
        sites: 0,
    };
    let first_line = e.line_at(unit.span.start);
    for &(arg, index) in &unit.arg_copies {
        e.emit(Op::CopyArgToEnv { arg, index }, unit.span);
    }
    let end = Span::new(unit.span.end.saturating_sub(1), unit.span.end);
    if id == METHOD_UNIT {
        if !e.seq(&unit.body, Want::Effect)? {
            e.emit(Op::ReturnSelf, end);
        }
    } else if !e.seq(&unit.body, Want::Value)? {
        e.emit(Op::ReturnTop, end);
    }

    let blocks = unit
        .blocks
        .iter()
        .map(|&b| emit_unit(prog, b, selector, lines))
        .collect::<Result<Vec<_>, _>>()?;

    let internal = |msg: String| Diagnostic {
        message: format!("internal compiler error: {msg}"),
        span: unit.span,
    };
    u32::try_from(e.code.len()).map_err(|_| e.error("method too large", unit.span))?;
    let max_stack = verify::max_stack(&e.code).map_err(internal)?;
    let max_stack = u16::try_from(max_stack)
        .map_err(|_| e.error("expression too complex (operand stack too deep)", unit.span))?;
    let num_send_sites = u16::try_from(e.sites)
        .map_err(|_| e.error("too many message sends in one method or block", unit.span))?;

    let (local_names, env_names) = variable_names(prog, id);
    Ok(CompiledCode {
        kind: if id == METHOD_UNIT {
            CodeKind::Method
        } else {
            CodeKind::Block
        },
        selector: selector.to_string(),
        num_args: u8::try_from(unit.args.len())
            .map_err(|_| e.error("too many arguments", unit.span))?,
        num_temps: unit.num_temps,
        env_size: unit.env_size,
        needs_env: unit.needs_env,
        max_stack,
        code: e.code,
        literals: e.literals,
        blocks,
        num_send_sites,
        pragmas: Vec::new(),
        is_primitive: false,
        lines: e.lines,
        first_line,
        local_names,
        env_names,
    })
}

/// Names of the stack slots (arguments then temporaries) and of the env slots.
fn variable_names(prog: &Program, id: UnitId) -> (Vec<String>, Vec<String>) {
    let unit = prog.unit(id);
    let mut locals = vec![String::new(); unit.args.len() + unit.num_temps as usize];
    let mut env = vec![String::new(); unit.env_size as usize];
    for &v in unit.args.iter().chain(&unit.temps) {
        let var = prog.var(v);
        let slot = match var.storage {
            Storage::Stack(i) => locals.get_mut(i as usize),
            Storage::Env(i) => env.get_mut(i as usize),
            Storage::Unassigned => None,
        };
        if let Some(slot) = slot
            && (slot.is_empty() || var.alias.is_some())
        {
            slot.clone_from(&var.name);
        }
    }
    // A captured argument also keeps its (unused) stack slot.
    for (i, &v) in unit.args.iter().enumerate() {
        if let Some(slot) = locals.get_mut(i)
            && slot.is_empty()
        {
            slot.clone_from(&prog.var(v).name);
        }
    }
    (locals, env)
}

/// A literal frame key: constants compare by value, doubles by bits (so that
/// `0.0` and `-0.0` stay distinct and NaNs are shared).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ConstKey {
    Nil,
    True,
    False,
    Int(i64),
    BigInt(BigInt),
    Double(u64),
    String(String),
    Symbol(String),
    Array(Vec<ConstKey>),
}

impl ConstKey {
    fn of(c: &Const) -> ConstKey {
        match c {
            Const::Nil => ConstKey::Nil,
            Const::True => ConstKey::True,
            Const::False => ConstKey::False,
            Const::Int(n) => ConstKey::Int(*n),
            Const::BigInt(n) => ConstKey::BigInt(n.clone()),
            Const::Double(d) => ConstKey::Double(d.to_bits()),
            Const::String(s) => ConstKey::String(s.clone()),
            Const::Symbol(s) => ConstKey::Symbol(s.clone()),
            Const::Array(a) => ConstKey::Array(a.iter().map(ConstKey::of).collect()),
        }
    }
}

struct Emitter<'a> {
    prog: &'a Program,
    line_map: &'a LineMap<'a>,
    unit: UnitId,
    code: Vec<Op>,
    lines: Vec<(u32, u32)>,
    literals: Vec<Const>,
    literal_index: HashMap<ConstKey, u16>,
    sites: u32,
}

impl Emitter<'_> {
    fn error(&self, message: &str, span: Span) -> Diagnostic {
        Diagnostic {
            message: message.to_string(),
            span,
        }
    }

    fn internal(&self, message: &str, span: Span) -> Diagnostic {
        Diagnostic {
            message: format!("internal compiler error: {message}"),
            span,
        }
    }

    fn line_at(&self, offset: u32) -> u32 {
        self.line_map.line(offset)
    }

    fn emit(&mut self, op: Op, span: Span) {
        let line = self.line_at(span.start);
        if self.lines.last().is_none_or(|&(_, l)| l != line) {
            // `code.len()` fits in u32 (checked when the unit is finished; a
            // wrapped value here could only affect a method that is rejected).
            self.lines.push((self.code.len() as u32, line));
        }
        self.code.push(op);
    }

    /// The pc of the next instruction.
    fn here(&self, span: Span) -> Result<u32, Diagnostic> {
        u32::try_from(self.code.len()).map_err(|_| self.error("method too large", span))
    }

    /// Emit a forward jump whose target is set later by [`Emitter::patch`].
    fn emit_forward(&mut self, op: Op, span: Span) -> usize {
        self.emit(op, span);
        self.code.len() - 1
    }

    /// Point the forward jump at `at` to the next instruction.
    fn patch(&mut self, at: usize, span: Span) -> Result<(), Diagnostic> {
        let here = self.here(span)?;
        match self.code.get_mut(at) {
            Some(
                Op::Jump(t)
                | Op::JumpIfTrue { target: t, .. }
                | Op::JumpIfFalse { target: t, .. }
                | Op::JumpIfNil { target: t, .. }
                | Op::JumpIfNotNil { target: t, .. }
                | Op::ForTest { exit: t, .. },
            ) => {
                *t = here;
                Ok(())
            }
            _ => Err(self.internal("patching a non-jump", span)),
        }
    }

    fn literal(&mut self, c: Const, span: Span) -> Result<u16, Diagnostic> {
        let key = ConstKey::of(&c);
        if let Some(&i) = self.literal_index.get(&key) {
            return Ok(i);
        }
        let i = u16::try_from(self.literals.len()).map_err(|_| {
            self.error(
                "too many literals in one method or block (limit 65536)",
                span,
            )
        })?;
        self.literals.push(c);
        self.literal_index.insert(key, i);
        Ok(i)
    }

    fn site(&mut self, span: Span) -> Result<u16, Diagnostic> {
        let s = u16::try_from(self.sites)
            .ok()
            .filter(|&s| s < u16::MAX)
            .ok_or_else(|| self.error("too many message sends in one method or block", span))?;
        self.sites += 1;
        Ok(s)
    }

    // ----- variables -----------------------------------------------------

    /// Depth of `owner`'s env seen from the current unit: the number of units
    /// with an env from the current one (inclusive) to `owner` (exclusive).
    fn env_depth(&self, owner: UnitId, span: Span) -> Result<u8, Diagnostic> {
        let mut depth = 0u32;
        let mut u = self.unit;
        while u != owner {
            let unit = self.prog.unit(u);
            if unit.has_env() {
                depth += 1;
            }
            u = unit
                .parent
                .ok_or_else(|| self.internal("variable of a non-enclosing unit", span))?;
        }
        u8::try_from(depth)
            .map_err(|_| self.error("blocks nested too deeply (env depth over 255)", span))
    }

    fn push_var(&mut self, v: VarId, span: Span) -> Result<(), Diagnostic> {
        let var = self.prog.var(v);
        let op = match var.storage {
            Storage::Stack(i) => Op::PushLocal(i),
            Storage::Env(index) => Op::PushEnv {
                depth: self.env_depth(var.unit, span)?,
                index,
            },
            Storage::Unassigned => return Err(self.internal("unallocated variable", span)),
        };
        self.emit(op, span);
        Ok(())
    }

    /// Store the top of stack into a variable; pop it when `pop`.
    fn store_var(&mut self, v: VarId, pop: bool, span: Span) -> Result<(), Diagnostic> {
        let var = self.prog.var(v);
        let op = match (var.storage, pop) {
            (Storage::Stack(i), false) => Op::StoreLocal(i),
            (Storage::Stack(i), true) => Op::PopLocal(i),
            (Storage::Env(index), false) => Op::StoreEnv {
                depth: self.env_depth(var.unit, span)?,
                index,
            },
            (Storage::Env(index), true) => Op::PopEnv {
                depth: self.env_depth(var.unit, span)?,
                index,
            },
            (Storage::Unassigned, _) => return Err(self.internal("unallocated variable", span)),
        };
        self.emit(op, span);
        Ok(())
    }

    fn stack_slot(&self, v: VarId, span: Span) -> Result<u16, Diagnostic> {
        match self.prog.var(v).storage {
            Storage::Stack(i) => Ok(i),
            _ => Err(self.internal("loop temporary not on the stack", span)),
        }
    }

    // ----- statements ----------------------------------------------------

    /// Compile a statement sequence. In value form it leaves the value of its
    /// last statement (nil if empty). Answers whether it ends with a `^`
    /// (statements after a `^` are unreachable and not compiled).
    fn seq(&mut self, seq: &Seq, want: Want) -> Result<bool, Diagnostic> {
        for &v in &seq.resets {
            self.emit(Op::PushNil, seq.span);
            self.store_var(v, true, seq.span)?;
        }
        if seq.stmts.is_empty() && want == Want::Value {
            self.emit(Op::PushNil, seq.span);
        }
        let n = seq.stmts.len();
        for (i, stmt) in seq.stmts.iter().enumerate() {
            match stmt {
                Stmt::Expr(e) => self.expr(e, if i + 1 == n { want } else { Want::Effect })?,
                Stmt::Return(e, span) => {
                    self.ret(e, *span)?;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    fn ret(&mut self, e: &Node, span: Span) -> Result<(), Diagnostic> {
        if self.unit == METHOD_UNIT {
            if matches!(e.kind, Expr::SelfRef) {
                self.emit(Op::ReturnSelf, span);
            } else {
                self.expr(e, Want::Value)?;
                self.emit(Op::ReturnTop, span);
            }
        } else {
            self.expr(e, Want::Value)?;
            self.emit(Op::ReturnNonLocal, span);
        }
        Ok(())
    }

    // ----- expressions ---------------------------------------------------

    /// Emit `op` (which pushes a value) unless only the effect is wanted.
    fn push(&mut self, op: Op, want: Want, span: Span) {
        if want == Want::Value {
            self.emit(op, span);
        }
    }

    fn pop_unless_value(&mut self, want: Want, span: Span) {
        if want == Want::Effect {
            self.emit(Op::Pop, span);
        }
    }

    fn expr(&mut self, node: &Node, want: Want) -> Result<(), Diagnostic> {
        let span = node.span;
        match &node.kind {
            Expr::Nil => self.push(Op::PushNil, want, span),
            Expr::True => self.push(Op::PushTrue, want, span),
            Expr::False => self.push(Op::PushFalse, want, span),
            Expr::SelfRef => self.push(Op::PushSelf, want, span),
            Expr::Int(n) => self.push(Op::PushInt(*n), want, span),
            Expr::Lit(c) => {
                if want == Want::Value {
                    let i = self.literal(c.clone(), span)?;
                    self.emit(Op::PushLiteral(i), span);
                }
            }
            Expr::Field(i) => self.push(Op::PushField(*i), want, span),
            Expr::Global(name) => {
                // Reading an unknown global sends `unknownGlobal:`, so it is kept
                // even for effect.
                let i = self.literal(Const::Symbol(name.clone()), span)?;
                self.emit(Op::PushGlobal(i), span);
                self.pop_unless_value(want, span);
            }
            Expr::Var(v) => {
                if want == Want::Value {
                    self.push_var(*v, span)?;
                }
            }
            Expr::Block(i) => self.push(Op::PushBlock(*i), want, span),
            Expr::Assign(target, value) => {
                self.expr(value, Want::Value)?;
                let pop = want == Want::Effect;
                match *target {
                    Target::Var(v) => self.store_var(v, pop, span)?,
                    Target::Field(i) => self.emit(
                        if pop {
                            Op::PopField(i)
                        } else {
                            Op::StoreField(i)
                        },
                        span,
                    ),
                }
            }
            Expr::Send {
                recv,
                is_super,
                msg,
            } => {
                self.expr(recv, Want::Value)?;
                self.send(msg, *is_super)?;
                self.pop_unless_value(want, span);
            }
            Expr::Cascade {
                recv,
                is_super,
                msgs,
            } => {
                self.expr(recv, Want::Value)?;
                let n = msgs.len();
                for (i, msg) in msgs.iter().enumerate() {
                    if i + 1 < n {
                        self.emit(Op::Dup, msg.span);
                        self.send(msg, *is_super)?;
                        self.emit(Op::Pop, msg.span);
                    } else {
                        self.send(msg, *is_super)?;
                    }
                }
                self.pop_unless_value(want, span);
            }
            Expr::If {
                cond,
                first_when,
                first,
                second,
            } => self.if_(cond, *first_when, first, second.as_ref(), want, span)?,
            Expr::Logic {
                left,
                is_and,
                right,
            } => self.logic(left, *is_and, right, want, span)?,
            Expr::While {
                cond,
                while_true,
                body,
            } => self.while_(cond, *while_true, body.as_ref(), want, span)?,
            Expr::IfNil {
                recv,
                first_when_nil,
                first,
                second,
            } => self.if_nil(recv, *first_when_nil, first, second.as_ref(), want, span)?,
            Expr::ToDo {
                from,
                limit,
                step,
                counter,
                limit_var,
                param,
                body,
            } => {
                self.expr(from, Want::Value)?;
                if want == Want::Value {
                    self.emit(Op::Dup, span);
                }
                self.store_var(*counter, true, span)?;
                self.expr(limit, Want::Value)?;
                self.store_var(*limit_var, true, span)?;
                self.counting_loop(*counter, *limit_var, *step, Some(*param), body, span)?;
            }
            Expr::TimesRepeat {
                count,
                counter,
                limit_var,
                body,
            } => {
                self.expr(count, Want::Value)?;
                if want == Want::Value {
                    self.emit(Op::Dup, span);
                }
                self.store_var(*limit_var, true, span)?;
                self.emit(Op::PushInt(1), span);
                self.store_var(*counter, true, span)?;
                self.counting_loop(*counter, *limit_var, 1, None, body, span)?;
            }
        }
        Ok(())
    }

    /// Arguments and the send instruction (the receiver is already pushed).
    fn send(&mut self, msg: &Msg, is_super: bool) -> Result<(), Diagnostic> {
        for a in &msg.args {
            self.expr(a, Want::Value)?;
        }
        let span = msg.span;
        let sel = self.literal(Const::Symbol(msg.selector.clone()), span)?;
        let site = self.site(span)?;
        let argc = u8::try_from(msg.args.len())
            .map_err(|_| self.error("too many arguments in a message send (at most 255)", span))?;
        let op = match SpecialOp::for_selector(&msg.selector) {
            _ if is_super => Op::SuperSend { sel, argc, site },
            Some(op) if op.selector().1 == argc => Op::Special { op, sel, site },
            _ => Op::Send { sel, argc, site },
        };
        self.emit(op, span);
        Ok(())
    }

    fn if_(
        &mut self,
        cond: &Node,
        first_when: bool,
        first: &Seq,
        second: Option<&Seq>,
        want: Want,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.expr(cond, Want::Value)?;
        self.branch(first_when, first, second, Op::PushNil, want, span)
    }

    /// `and:`/`or:` are `ifTrue:ifFalse:`/`ifFalse:ifTrue:` whose other branch is a constant.
    fn logic(
        &mut self,
        left: &Node,
        is_and: bool,
        right: &Seq,
        want: Want,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.expr(left, Want::Value)?;
        let other = if is_and { Op::PushFalse } else { Op::PushTrue };
        self.branch(is_and, right, None, other, want, span)
    }

    /// The two arms of an inlined conditional whose condition is on the stack: `first` when it
    /// is `when`, else `second` (or, without one, `other`, when a value is wanted).
    fn branch(
        &mut self,
        when: bool,
        first: &Seq,
        second: Option<&Seq>,
        other: Op,
        want: Want,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let skip = self.emit_skip_unless(when, span);
        let returned = self.seq(first, want)?;
        if second.is_none() && want == Want::Effect {
            return self.patch(skip, span);
        }
        let end = (!returned).then(|| self.emit_forward(Op::Jump(0), span));
        self.patch(skip, span)?;
        match second {
            Some(s) => {
                self.seq(s, want)?;
            }
            None => self.emit(other, span),
        }
        if let Some(end) = end {
            self.patch(end, span)?;
        }
        Ok(())
    }

    /// Emit the inlined conditional jump taken when the value on the stack is not `when`;
    /// answers it, to be patched.
    fn emit_skip_unless(&mut self, when: bool, span: Span) -> usize {
        let op = if when {
            Op::JumpIfFalse {
                target: 0,
                inlined: true,
            }
        } else {
            Op::JumpIfTrue {
                target: 0,
                inlined: true,
            }
        };
        self.emit_forward(op, span)
    }

    fn while_(
        &mut self,
        cond: &Seq,
        while_true: bool,
        body: Option<&Seq>,
        want: Want,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let head = self.here(span)?;
        if self.seq(cond, Want::Value)? {
            // The condition always returns: nothing after it is reachable.
            return Ok(());
        }
        let exit = self.emit_skip_unless(while_true, span);
        let returned = match body {
            Some(b) => self.seq(b, Want::Effect)?,
            None => false,
        };
        if !returned {
            self.emit(Op::JumpBack(head), span);
        }
        self.patch(exit, span)?;
        self.push(Op::PushNil, want, span);
        Ok(())
    }

    /// `ifNil:`, `ifNotNil:`, `ifNil:ifNotNil:`, `ifNotNil:ifNil:`.
    fn if_nil(
        &mut self,
        recv: &Node,
        first_when_nil: bool,
        first: &NilBranch,
        second: Option<&NilBranch>,
        want: Want,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let jump = |to_second_when_nil: bool| {
            if to_second_when_nil {
                Op::JumpIfNil {
                    target: 0,
                    inlined: true,
                }
            } else {
                Op::JumpIfNotNil {
                    target: 0,
                    inlined: true,
                }
            }
        };
        self.expr(recv, Want::Value)?;
        match second {
            None if want == Want::Value => {
                // The receiver is the value when the branch is skipped.
                self.emit(Op::Dup, span);
                let skip = self.emit_forward(jump(!first_when_nil), span);
                match first.param {
                    Some(p) => self.store_var(p, true, span)?,
                    None => self.emit(Op::Pop, span),
                }
                self.seq(&first.body, want)?;
                self.patch(skip, span)
            }
            None => {
                if let Some(p) = first.param {
                    self.store_var(p, false, span)?;
                }
                let skip = self.emit_forward(jump(!first_when_nil), span);
                self.seq(&first.body, want)?;
                self.patch(skip, span)
            }
            Some(second) => {
                // Only the not-nil branch can have a parameter; binding it before
                // the test (to nil on the other path) is unobservable.
                let (not_nil, _) = if first_when_nil {
                    (second, first)
                } else {
                    (first, second)
                };
                if let Some(p) = not_nil.param {
                    self.store_var(p, false, span)?;
                }
                let skip = self.emit_forward(jump(!first_when_nil), span);
                let returned = self.seq(&first.body, want)?;
                let end = (!returned).then(|| self.emit_forward(Op::Jump(0), span));
                self.patch(skip, span)?;
                self.seq(&second.body, want)?;
                if let Some(end) = end {
                    self.patch(end, span)?;
                }
                Ok(())
            }
        }
    }

    /// The loop part of `to:do:` and `timesRepeat:` (counter and limit set).
    fn counting_loop(
        &mut self,
        counter: VarId,
        limit: VarId,
        step: i32,
        param: Option<VarId>,
        body: &Seq,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let counter_slot = self.stack_slot(counter, span)?;
        let limit_slot = self.stack_slot(limit, span)?;
        let head = self.here(span)?;
        let test = self.emit_forward(
            Op::ForTest {
                counter: counter_slot,
                limit: limit_slot,
                step,
                exit: 0,
            },
            span,
        );
        if let Some(p) = param
            && self.prog.var(p).storage != Storage::Stack(counter_slot)
        {
            self.emit(Op::PushLocal(counter_slot), span);
            self.store_var(p, true, span)?;
        }
        if !self.seq(body, Want::Effect)? {
            self.emit(
                Op::ForIncr {
                    counter: counter_slot,
                    step,
                    target: head,
                },
                span,
            );
        }
        self.patch(test, span)
    }
}

#[cfg(test)]
mod tests {
    use super::LineMap;
    use lupa_syntax::{SourceFile, Span};

    #[test]
    fn line_map_agrees_with_the_source_file() {
        let src = SourceFile::new("t", "ab\ncd\r\n\n\néf\ng");
        let len = src.text.len() as u32;
        for (start, end) in [(0, len), (3, 9), (4, 4), (len, len), (9, 3), (2, 100)] {
            let map = LineMap::new(&src, Span { start, end });
            for offset in 0..len + 3 {
                assert_eq!(
                    map.line(offset),
                    src.line_col(offset).0,
                    "{start}..{end} at {offset}"
                );
            }
        }
    }
}
