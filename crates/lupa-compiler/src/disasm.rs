//! A readable listing of compiled code (`lupa disasm`, snapshot tests).

use crate::bytecode::{CodeKind, CompiledCode, Const, Op};
use std::fmt::Write;

/// Disassemble a method (or block) and its nested blocks.
///
/// ```text
/// method foo: args=1 temps=1 env=0 stack=2 sites=1 line=1
///   locals: x t
///   literals: #bar
///    0  L2  push_local 0  ; x
///    1      send #bar/0 @0
///    ...
///   block 0 args=0 ...
/// ```
/// Each instruction shows its pc and, when it starts a new source line, `L<line>`.
/// Variable, literal and selector operands are annotated with their names.
pub fn disassemble(code: &CompiledCode) -> String {
    let mut out = String::new();
    // Depth-first without recursion.
    let mut work: Vec<Pending<'_>> = vec![(code, Vec::new(), 0, None)];
    while let Some((c, outer, indent, index)) = work.pop() {
        let chain = unit(&mut out, c, &outer, indent, index);
        for (i, b) in c.blocks.iter().enumerate().rev() {
            work.push((b, chain.clone(), indent + 1, Some(i)));
        }
    }
    out
}

/// A unit still to list: the unit, the env chain outside it, its indent and its
/// block index.
type Pending<'a> = (&'a CompiledCode, Vec<&'a [String]>, usize, Option<usize>);

/// List one unit (not its blocks). `outer`: env names of the enclosing units
/// that have an env, innermost first. Answers the env chain seen from inside it.
fn unit<'a>(
    out: &mut String,
    c: &'a CompiledCode,
    outer: &[&'a [String]],
    indent: usize,
    index: Option<usize>,
) -> Vec<&'a [String]> {
    let pad = "  ".repeat(indent);
    let title = match (c.kind, index) {
        (CodeKind::Method, _) => format!("method {}", c.selector),
        (CodeKind::Block, Some(i)) => format!("block {i}"),
        (CodeKind::Block, None) => format!("block in {}", c.selector),
    };
    let _ = write!(
        out,
        "{pad}{title} args={} temps={} env={}{} stack={} sites={} line={}",
        c.num_args,
        c.num_temps,
        c.env_size,
        if c.needs_env { " needs_env" } else { "" },
        c.max_stack,
        c.num_send_sites,
        c.first_line
    );
    if c.is_primitive {
        out.push_str(" primitive");
    }
    out.push('\n');
    for (sel, args) in &c.pragmas {
        let args: String = args.iter().map(|a| format!(" {}", constant(a))).collect();
        let _ = writeln!(out, "{pad}  pragma <{sel}>{args}");
    }
    if !c.local_names.is_empty() {
        let _ = writeln!(out, "{pad}  locals: {}", c.local_names.join(" "));
    }
    if !c.env_names.is_empty() {
        let _ = writeln!(out, "{pad}  env: {}", c.env_names.join(" "));
    }
    if !c.literals.is_empty() {
        let lits: Vec<String> = c.literals.iter().map(constant).collect();
        let _ = writeln!(out, "{pad}  literals: {}", lits.join(" "));
    }
    // The env chain as seen from this unit, by depth.
    let has_env = c.env_size > 0 || c.needs_env;
    let mut chain: Vec<&[String]> = Vec::with_capacity(outer.len() + 1);
    if has_env {
        chain.push(&c.env_names);
    }
    chain.extend_from_slice(outer);
    let width = c.code.len().saturating_sub(1).to_string().len();
    let mut lines = c.lines.iter().peekable();
    for (pc, op) in c.code.iter().enumerate() {
        let mut line = String::new();
        while let Some(&&(start, l)) = lines.peek() {
            if start as usize > pc {
                break;
            }
            if start as usize == pc {
                line = format!("L{l}");
            }
            lines.next();
        }
        let _ = writeln!(
            out,
            "{pad}  {pc:>width$} {line:<4} {}",
            instruction(c, op, &chain)
        );
    }
    chain
}

fn name_of(names: &[String], i: usize) -> &str {
    names.get(i).map_or("?", String::as_str)
}

fn instruction(c: &CompiledCode, op: &Op, chain: &[&[String]]) -> String {
    let lit = |i: u16| {
        c.literals
            .get(usize::from(i))
            .map_or_else(|| "?".to_string(), constant)
    };
    let local = |i: u16| name_of(&c.local_names, usize::from(i)).to_string();
    let env = |depth: u8, index: u16| {
        chain
            .get(usize::from(depth))
            .map_or("?", |names| name_of(names, usize::from(index)))
            .to_string()
    };
    let inl = |inlined: bool| if inlined { " (inlined)" } else { "" };
    match *op {
        Op::PushSelf => "push_self".into(),
        Op::PushNil => "push_nil".into(),
        Op::PushTrue => "push_true".into(),
        Op::PushFalse => "push_false".into(),
        Op::PushInt(n) => format!("push_int {n}"),
        Op::PushLiteral(i) => format!("push_literal {i}  ; {}", lit(i)),
        Op::PushLocal(i) => format!("push_local {i}  ; {}", local(i)),
        Op::StoreLocal(i) => format!("store_local {i}  ; {}", local(i)),
        Op::PopLocal(i) => format!("pop_local {i}  ; {}", local(i)),
        Op::PushEnv { depth, index } => {
            format!("push_env {depth}.{index}  ; {}", env(depth, index))
        }
        Op::StoreEnv { depth, index } => {
            format!("store_env {depth}.{index}  ; {}", env(depth, index))
        }
        Op::PopEnv { depth, index } => format!("pop_env {depth}.{index}  ; {}", env(depth, index)),
        Op::CopyArgToEnv { arg, index } => {
            format!(
                "copy_arg_to_env {arg} -> {index}  ; {}",
                name_of(&c.env_names, usize::from(index))
            )
        }
        Op::PushField(i) => format!("push_field {i}"),
        Op::StoreField(i) => format!("store_field {i}"),
        Op::PopField(i) => format!("pop_field {i}"),
        Op::PushGlobal(i) => format!("push_global {}", lit(i)),
        Op::PushBlock(i) => format!("push_block {i}"),
        Op::Pop => "pop".into(),
        Op::Dup => "dup".into(),
        Op::Send { sel, argc, site } => format!("send {}/{argc} @{site}", lit(sel)),
        Op::SuperSend { sel, argc, site } => format!("super_send {}/{argc} @{site}", lit(sel)),
        Op::Special { op, sel, site } => format!("special {op:?} {} @{site}", lit(sel)),
        Op::ReturnTop => "return_top".into(),
        Op::ReturnSelf => "return_self".into(),
        Op::ReturnNonLocal => "return_non_local".into(),
        Op::Jump(t) => format!("jump {t}"),
        Op::JumpBack(t) => format!("jump_back {t}"),
        Op::JumpIfTrue { target, inlined } => format!("jump_if_true {target}{}", inl(inlined)),
        Op::JumpIfFalse { target, inlined } => format!("jump_if_false {target}{}", inl(inlined)),
        Op::JumpIfNil { target, inlined } => format!("jump_if_nil {target}{}", inl(inlined)),
        Op::JumpIfNotNil { target, inlined } => format!("jump_if_not_nil {target}{}", inl(inlined)),
        Op::ForTest {
            counter,
            limit,
            step,
            exit,
        } => format!(
            "for_test {counter} {limit} step {step} exit {exit}  ; {} {}",
            local(counter),
            local(limit)
        ),
        Op::ForIncr {
            counter,
            step,
            target,
        } => {
            format!(
                "for_incr {counter} step {step} -> {target}  ; {}",
                local(counter)
            )
        }
    }
}

/// A constant in Smalltalk literal syntax.
fn constant(c: &Const) -> String {
    match c {
        Const::Nil => "nil".into(),
        Const::True => "true".into(),
        Const::False => "false".into(),
        Const::Int(n) => n.to_string(),
        Const::BigInt(n) => n.to_string(),
        Const::Double(d) => format!("{d:?}"),
        Const::String(s) => format!("'{}'", s.replace('\'', "''")),
        Const::Symbol(s) => {
            let plain = s
                .chars()
                .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == ':')
                || s.chars().all(|ch| "~&|*/\\+=<>,@%-".contains(ch));
            if plain && !s.is_empty() {
                format!("#{s}")
            } else {
                format!("#'{}'", s.replace('\'', "''"))
            }
        }
        Const::Array(items) => {
            let items: Vec<String> = items.iter().map(constant).collect();
            format!("#({})", items.join(" "))
        }
    }
}
