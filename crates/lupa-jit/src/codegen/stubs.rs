//! The shared entry stubs: what a direct entry ([`DIRECT`](super::DIRECT))
//! does before pc 0, made once per shape of callee rather than in every
//! function (Cog's methods share their entry sequences the same way, in
//! its method-entry trampolines).
//!
//! A direct entry checks that the native call may be made (native depth,
//! frame room, room on the value stack for the frame's extent, no
//! activation hooks, no poll due), probes a method's
//! inline-cache entry, checks the receiver's fields, counts the send and
//! pushes the callee's frame (a block unpacks its closure): the same
//! sequence in every function but for the callee's id, arguments and
//! fields, and whether it is a block. Each function compiled without a
//! method watch calls the stub of its shape ([`shape`]: a block or a
//! method, using fields or not) with those as parameters, `(ctx, pc, cell,
//! word, bp, extent)`: `pc` and `cell` its own (the caller's pc after the
//! send plus `DIRECT`, its inline-cache entry or 0), `word` the callee's
//! id, the slots its receiver needs and its arguments ([`word`]), `bp` the
//! frame's receiver slot and `extent` the slots past it its activation
//! uses. The stub answers [`ENTERED`] with the frame pushed (a
//! block's outer environment left in `NativeCtx::env`, as the runtime's
//! send leaves it) and the function goes on at pc 0; otherwise it has made
//! the caller's send through the runtime (`refused_entry`, a due poll
//! included) and answers its status, which the function answers. Every
//! call a stub makes is its last, so no value is live across one.
//!
//! The stubs are made when the JIT is made, put at the start of the code
//! zone, which never evicts or moves them (`zone.rs`), and their addresses
//! listed with the runtime's entry points ([`Entries`](super::Entries)), which native code
//! calls through `NativeCtx::runtime`. Code
//! compiled under a method watch makes the checks itself, asking the watch
//! cells (`watch.rs`), with the same generator ([`Gen::enter`]).

use super::{Callee, Gen, machine_code, signature};
use crate::unit::Unit;
use cranelift_codegen::Context;
use cranelift_codegen::ir::{InstBuilder, types};
use cranelift_codegen::isa::TargetIsa;
use cranelift_frontend::FunctionBuilderContext;
use lupa_vm::NativeCtx;
use std::mem::offset_of;

/// The shapes of callees, one stub each ([`shape`]).
pub(crate) const SHAPES: usize = 4;

/// What a stub answers when it pushed the frame (not a status: a refused
/// entry answers the runtime send's, `DONE` or `BAIL`).
pub(crate) const ENTERED: i64 = 3;

/// Where a [`word`] keeps the callee's arguments: below it, its id and the
/// slots its receiver needs, as the runtime's `watched call` entry takes
/// them.
pub(crate) const ARGS_SHIFT: i64 = 56;

/// The stub of a block's or a method's code, using fields or not.
pub(crate) fn shape(block: bool, fields: bool) -> usize {
    usize::from(block) * 2 + usize::from(fields)
}

/// The name of the stub of `shape`, as the code zone's description and the
/// perf map give it.
pub(crate) fn name(shape: usize) -> &'static str {
    match shape {
        0 => "<entry stub: method>",
        1 => "<entry stub: method using fields>",
        2 => "<entry stub: block>",
        _ => "<entry stub: block using fields>",
    }
}

/// The word a function passes its stub: its id, the slots its receiver
/// needs (`need`, if it uses fields) and its arguments, or `None` when they
/// do not fit (the function then makes its checks itself).
pub(crate) fn word(id: u32, need: Option<u32>, args: usize) -> Option<i64> {
    let need = i64::from(need.unwrap_or(0));
    let args = i64::try_from(args).ok()?;
    (need < 1 << (ARGS_SHIFT - 32) && args < 1 << (63 - ARGS_SHIFT))
        .then(|| i64::from(id) | (need << 32) | (args << ARGS_SHIFT))
}

/// The machine code of the stub of `shape` ([`shape`]), calling the
/// runtime's entries through the context's table ([`Entries::table`](super::Entries::table)).
pub(crate) fn compile_stub(
    isa: &dyn TargetIsa,
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    shape: usize,
) -> Result<Vec<u8>, String> {
    let block = shape & 2 != 0;
    let fields = shape & 1 != 0;
    let unit = Unit::stub(block);
    let sig = signature(isa, 6, true);
    let (mut g, params) = Gen::begin(isa, ctx, fctx, &unit, sig, 0);
    let (pc, cell, word, bp, extent) = (params[1], params[2], params[3], params[4], params[5]);
    // The context and `bp` are the parameters, everywhere (no stack slot).
    g.held = [Some(params[0]), Some(bp), None];
    let id = g.b.ins().ireduce(types::I32, word);
    let id = g.b.ins().uextend(types::I64, id);
    let need = fields.then(|| {
        let n = g.b.ins().ushr_imm_u(word, 32);
        g.b.ins().band_imm_u(n, (1 << (ARGS_SHIFT - 32)) - 1)
    });
    let callee = Callee {
        bp,
        word,
        id,
        need,
        sp: None,
        extent,
    };
    let env = g.enter(pc, cell, &callee);
    if block {
        g.set_ctx_field(env, offset_of!(NativeCtx, env));
    }
    let entered = g.iconst(ENTERED);
    g.b.ins().return_(&[entered]);
    g.end(isa);
    machine_code(isa, ctx, None, &[]).map(|(code, _)| code)
}
