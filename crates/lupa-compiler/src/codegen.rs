//! Code generation: the entry point tying the passes together.
//!
//! 1. [`crate::lower`]: scope analysis and inlining decisions (AST → IR);
//! 2. [`crate::alloc`]: stack or env placement of every variable;
//! 3. [`crate::emit`]: instructions, literal frames, line tables, `max_stack`.
use crate::bytecode::{CodeKind, CompiledCode, Const, Op};
use crate::ir::METHOD_UNIT;
use crate::{alloc, emit, lower};
use lupa_syntax::{Diagnostic, Expr, Literal, MethodBody, MethodDef, SourceFile, Stmt};

/// Compile one method. `fields` are all instance variable names of the class the
/// method is compiled in (inherited ones first), so that field `i` is
/// `PushField(i)`. Names that are neither locals, arguments, fields nor pseudo
/// variables compile to `PushGlobal`.
///
/// Never panics: every problem (including absurd inputs beyond the limits of
/// the instruction set) is reported as a [`Diagnostic`].
pub fn compile_method(
    def: &MethodDef,
    fields: &[String],
    src: &SourceFile,
) -> Result<CompiledCode, Diagnostic> {
    // The passes are recursive. Deeply nested methods are compiled on a thread
    // with a stack sized for their depth, so that no input can overflow the
    // caller's stack (nesting beyond `MAX_NESTING` is rejected by the passes
    // themselves before it would need more).
    let depth = nesting_depth(def);
    if depth <= DEPTH_ON_CALLER_STACK {
        return compile(def, fields, src);
    }
    let levels = depth.min(lower::MAX_NESTING) as usize;
    let stack_size = STACK_BASE + STACK_PER_LEVEL * levels;
    let failed = |what: String| Diagnostic {
        message: format!("internal compiler error: {what}"),
        span: def.span,
    };
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("lupa-compiler".into())
            .stack_size(stack_size)
            .spawn_scoped(scope, || compile(def, fields, src))
            .map_err(|e| failed(format!("cannot start a compiler thread: {e}")))?
            .join()
            .map_err(|_| failed("the compiler panicked".into()))?
    })
}

/// Methods nested at most this deep are compiled on the caller's stack.
const DEPTH_ON_CALLER_STACK: u32 = 32;
/// Stack for a compiler thread: a base plus a generous allowance per nesting
/// level (debug builds use about 5 KiB per level).
const STACK_BASE: usize = 1 << 20;
const STACK_PER_LEVEL: usize = 32 << 10;

fn compile(
    def: &MethodDef,
    fields: &[String],
    src: &SourceFile,
) -> Result<CompiledCode, Diagnostic> {
    let pragmas = def
        .pragmas
        .iter()
        .map(|p| {
            let args = p
                .args
                .iter()
                .map(|a| lower::literal_const(a, p.span, 0))
                .collect::<Result<Vec<Const>, _>>()?;
            Ok((p.selector.clone(), args))
        })
        .collect::<Result<Vec<_>, Diagnostic>>()?;
    let mut code = match &def.body {
        MethodBody::Primitive => primitive(def, src)?,
        MethodBody::Code(body) => {
            let mut prog = lower::lower_method(&def.params, body, def.span, fields)?;
            alloc::allocate(&mut prog)?;
            emit::emit_unit(
                &prog,
                METHOD_UNIT,
                &def.selector,
                &emit::LineMap::new(src, def.span),
            )?
        }
    };
    code.pragmas = pragmas;
    Ok(code)
}

/// The maximum nesting of expressions and literal arrays in a method, computed
/// without recursion. It bounds the recursion depth of the compiler passes.
fn nesting_depth(def: &MethodDef) -> u32 {
    let mut max = 0;
    let mut literals: Vec<(&Literal, u32)> = def
        .pragmas
        .iter()
        .flat_map(|p| p.args.iter().map(|a| (a, 1)))
        .collect();
    let mut exprs: Vec<(&Expr, u32)> = Vec::new();
    if let MethodBody::Code(body) = &def.body {
        exprs.extend(body.statements.iter().map(|s| (stmt_expr(s), 1)));
    }
    while let Some((e, d)) = exprs.pop() {
        max = max.max(d);
        match e {
            Expr::Literal(lit, _) => literals.push((lit, d + 1)),
            Expr::Var(_) => {}
            Expr::Assign(_, value) => exprs.push((value, d + 1)),
            Expr::Send(recv, msg) => {
                exprs.push((recv, d + 1));
                exprs.extend(msg.args.iter().map(|a| (a, d + 1)));
            }
            Expr::Cascade(recv, msgs) => {
                exprs.push((recv, d + 1));
                exprs.extend(msgs.iter().flat_map(|m| m.args.iter().map(|a| (a, d + 1))));
            }
            Expr::Block(b) => exprs.extend(b.body.statements.iter().map(|s| (stmt_expr(s), d + 1))),
        }
    }
    while let Some((lit, d)) = literals.pop() {
        max = max.max(d);
        if let Literal::Array(items) = lit {
            literals.extend(items.iter().map(|i| (i, d + 1)));
        }
    }
    max
}

fn stmt_expr(s: &Stmt) -> &Expr {
    match s {
        Stmt::Expr(e) | Stmt::Return(e, _) => e,
    }
}

/// The unit of a `= primitive` method: it just returns self.
fn primitive(def: &MethodDef, src: &SourceFile) -> Result<CompiledCode, Diagnostic> {
    let num_args = u8::try_from(def.params.len()).map_err(|_| Diagnostic {
        message: "too many arguments (at most 255)".into(),
        span: def.span,
    })?;
    let line = src.line_col(def.span.start).0;
    Ok(CompiledCode {
        kind: CodeKind::Method,
        selector: def.selector.clone(),
        num_args,
        num_temps: 0,
        env_size: 0,
        needs_env: false,
        max_stack: 0,
        code: vec![Op::ReturnSelf],
        literals: Vec::new(),
        blocks: Vec::new(),
        num_send_sites: 0,
        pragmas: Vec::new(),
        is_primitive: true,
        lines: vec![(0, line)],
        first_line: line,
        local_names: def.params.iter().map(|p| p.name.clone()).collect(),
        env_names: Vec::new(),
    })
}
