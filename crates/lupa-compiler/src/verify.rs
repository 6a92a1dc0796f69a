//! Static checks of compiled code, and the operand stack depth computation.

use crate::bytecode::{CodeKind, CompiledCode, Const, Op, SpecialOp};
use std::collections::HashSet;

/// Extra operand stack slots an instruction may use transiently, beyond its net
/// effect: the fallback sends of `PushGlobal` (`unknownGlobal:` to self with the
/// symbol), `ForTest` (`>`/`<` with counter and limit) and `ForIncr` (`+` with
/// counter and step) push a receiver and an argument.
fn transient(op: &Op) -> u32 {
    match op {
        Op::PushGlobal(_) | Op::ForTest { .. } | Op::ForIncr { .. } => 2,
        _ => 0,
    }
}

/// The maximum operand stack depth of `code`, following every reachable path
/// from pc 0 (including the transient slots of fallback sends, see
/// [`CompiledCode::max_stack`]). Fails if a path underflows the stack, runs off
/// the end of the code, jumps out of it, or reaches an instruction with two
/// different depths.
pub(crate) fn max_stack(code: &[Op]) -> Result<u32, String> {
    if code.is_empty() {
        return Err("empty code".into());
    }
    let mut depth: Vec<Option<u32>> = vec![None; code.len()];
    depth[0] = Some(0);
    let mut work = vec![0usize];
    let mut max = 0;
    while let Some(pc) = work.pop() {
        let (Some(d), Some(op)) = (depth[pc], code.get(pc)) else {
            continue;
        };
        let (pops, pushes) = op.stack_effect();
        let after = d
            .checked_sub(pops)
            .ok_or_else(|| format!("stack underflow at pc {pc}"))?
            + pushes;
        max = max.max(after).max(d + transient(op));
        let (fall, jump) = op.successors(pc);
        for s in fall.into_iter().chain(jump) {
            match depth.get(s) {
                None => {
                    return Err(if Some(s) == fall {
                        format!("control runs off the end of the code at pc {pc}")
                    } else {
                        format!("jump target {s} out of range at pc {pc}")
                    });
                }
                Some(None) => {
                    depth[s] = Some(after);
                    work.push(s);
                }
                Some(Some(x)) if *x != after => {
                    return Err(format!(
                        "stack depth {after} at pc {pc} reaches pc {s} with depth {x}"
                    ));
                }
                Some(Some(_)) => {}
            }
        }
    }
    Ok(max)
}

/// What a nested unit can see of its enclosing units: `(has_env, env_size)` of
/// each, innermost first.
type Ancestors = Vec<(bool, u16)>;

/// Check the invariants of compiled code that the interpreter relies on, for a
/// method (or block) and all its nested blocks:
///
/// - the code is not empty and no path runs off its end or jumps out of it;
/// - forward jumps (`Jump`, conditional jumps, `ForTest`) go forward, and only
///   `JumpBack`/`ForIncr` go backward (or to themselves);
/// - stack depths agree at joins, never underflow, and `max_stack` is exact;
/// - local indices are below `num_args + num_temps`, loop variables address
///   temporaries (not arguments), env accesses name an existing
///   variable of an existing env at that depth, `CopyArgToEnv` is valid;
/// - literal, block and send-site indices are in range, send sites are unique,
///   selectors and global names are symbols, `Special` ops match their selector;
/// - `ReturnNonLocal` appears only in blocks, and a method containing one has
///   `needs_env`;
/// - the line table is sorted by pc.
pub fn verify(code: &CompiledCode) -> Result<(), String> {
    if code.kind != CodeKind::Method {
        return Err("verify expects a method".into());
    }
    // Depth-first over the nested blocks, without recursion (blocks may nest
    // as deeply as the compiler allows).
    let mut nonlocal = false;
    let mut work: Vec<(&CompiledCode, Ancestors, String)> =
        vec![(code, Vec::new(), "method".into())];
    while let Some((c, ancestors, path)) = work.pop() {
        nonlocal |= verify_unit(c, &ancestors, &path)?;
        let mut inner: Ancestors = Vec::with_capacity(ancestors.len() + 1);
        inner.push((c.env_size > 0 || c.needs_env, c.env_size));
        inner.extend_from_slice(&ancestors);
        for (i, b) in c.blocks.iter().enumerate() {
            if b.kind != CodeKind::Block || !b.pragmas.is_empty() || b.needs_env {
                return Err(format!("{path} block {i}: not a plain block"));
            }
            work.push((b, inner.clone(), format!("{path} block {i}")));
        }
    }
    if nonlocal && !code.needs_env {
        return Err("method with a non-local return in a block lacks needs_env".into());
    }
    Ok(())
}

/// Verify one unit (not its blocks); answers whether it contains `ReturnNonLocal`.
fn verify_unit(c: &CompiledCode, ancestors: &Ancestors, path: &str) -> Result<bool, String> {
    let fail = |pc: usize, msg: String| Err(format!("{path} pc {pc}: {msg}"));
    let max = max_stack(&c.code).map_err(|e| format!("{path}: {e}"))?;
    if max != u32::from(c.max_stack) {
        return Err(format!(
            "{path}: max_stack is {} but should be {max}",
            c.max_stack
        ));
    }
    let has_env = c.env_size > 0 || c.needs_env;
    // The env chain seen from this unit: (env_size) by depth.
    let chain: Vec<u16> = has_env
        .then_some(c.env_size)
        .into_iter()
        .chain(ancestors.iter().filter(|a| a.0).map(|a| a.1))
        .collect();
    let slots = usize::from(c.num_args) + usize::from(c.num_temps);
    let args = usize::from(c.num_args);
    let mut sites = HashSet::new();
    let mut nonlocal = false;
    let code_len = c.code.len();
    for (pc, op) in c.code.iter().enumerate() {
        let symbol = |i: u16| matches!(c.literals.get(usize::from(i)), Some(Const::Symbol(_)));
        let bad: Option<String> = match *op {
            Op::PushLiteral(i) if usize::from(i) >= c.literals.len() => {
                Some(format!("literal {i} out of range"))
            }
            Op::PushGlobal(i) if !symbol(i) => {
                Some(format!("global name {i} is not a symbol literal"))
            }
            Op::PushLocal(i) if usize::from(i) >= slots => Some(format!("local {i} out of range")),
            Op::StoreLocal(i) | Op::PopLocal(i) if usize::from(i) >= slots => {
                Some(format!("local {i} out of range"))
            }
            Op::PushEnv { depth, index }
            | Op::StoreEnv { depth, index }
            | Op::PopEnv { depth, index } => match chain.get(usize::from(depth)) {
                None => Some(format!("env depth {depth} beyond the env chain")),
                Some(&size) if index >= size => {
                    Some(format!("env index {index} out of range at depth {depth}"))
                }
                _ => None,
            },
            Op::CopyArgToEnv { arg, index }
                if !has_env || index >= c.env_size || arg >= c.num_args =>
            {
                Some("invalid CopyArgToEnv".into())
            }
            Op::PushBlock(i) => match c.blocks.get(usize::from(i)) {
                Some(b) if b.kind == CodeKind::Block => None,
                _ => Some(format!("block {i} out of range")),
            },
            Op::Send { sel, site, .. }
            | Op::SuperSend { sel, site, .. }
            | Op::Special { sel, site, .. } => {
                if !symbol(sel) {
                    Some(format!("selector {sel} is not a symbol literal"))
                } else if site >= c.num_send_sites || !sites.insert(site) {
                    Some(format!("send site {site} out of range or reused"))
                } else if let Op::Special { op, .. } = *op {
                    match c.literals.get(usize::from(sel)) {
                        Some(Const::Symbol(s)) if SpecialOp::for_selector(s) == Some(op) => None,
                        _ => Some(format!("special op {op:?} does not match its selector")),
                    }
                } else {
                    None
                }
            }
            Op::ReturnNonLocal if c.kind == CodeKind::Method => {
                Some("ReturnNonLocal in a method".into())
            }
            Op::ReturnNonLocal => {
                nonlocal = true;
                None
            }
            Op::Jump(t)
            | Op::JumpIfTrue { target: t, .. }
            | Op::JumpIfFalse { target: t, .. }
            | Op::JumpIfNil { target: t, .. }
            | Op::JumpIfNotNil { target: t, .. }
                if t as usize <= pc || t as usize >= code_len =>
            {
                Some(format!(
                    "forward jump to {t} is not forward or out of range"
                ))
            }
            Op::JumpBack(t) if t as usize > pc => Some(format!("JumpBack to {t} goes forward")),
            Op::ForTest {
                counter,
                limit,
                step,
                exit,
            } => {
                let temp = |i: u16| usize::from(i) >= args && usize::from(i) < slots;
                if !temp(counter)
                    || !temp(limit)
                    || step == 0
                    || exit as usize <= pc
                    || exit as usize >= code_len
                {
                    Some("invalid ForTest".into())
                } else {
                    None
                }
            }
            Op::ForIncr {
                counter,
                step,
                target,
            } => {
                let temp = usize::from(counter) >= args && usize::from(counter) < slots;
                if !temp
                    || step == 0
                    || target as usize > pc
                    || !matches!(c.code.get(target as usize), Some(Op::ForTest { .. }))
                {
                    Some("invalid ForIncr".into())
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some(msg) = bad {
            return fail(pc, msg);
        }
    }
    if !c.lines.windows(2).all(|w| w[0].0 < w[1].0)
        || c.lines.iter().any(|l| l.0 as usize >= code_len)
    {
        return Err(format!("{path}: line table not sorted or out of range"));
    }
    if c.local_names.len() != slots || c.env_names.len() != usize::from(c.env_size) {
        return Err(format!(
            "{path}: local_names/env_names do not match the frame layout"
        ));
    }
    Ok(nonlocal)
}
