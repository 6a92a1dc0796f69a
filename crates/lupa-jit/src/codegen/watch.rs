//! Method watches in native code: code compiled while a watch is on
//! (`Unit::watching`) asks the called method's watch cell
//! (`lupa_vm::obs::watch::WatchCell`, the contract) at its direct entry, at
//! a trivial method's site and at its return, and goes on natively when the
//! call would record nothing but its count (added in the cell); anything
//! else goes to the runtime, which records it.

use super::{Gen, NIL, NO};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, Value, types};
use lupa_vm::obs::watch::{
    CELL_ANSWER, CELL_ARGUMENTS, CELL_ARGUMENTS_MAX, CELL_OFF, CELL_RECEIVER, CellTable, WatchCell,
};
use lupa_vm::{
    Frame, NativeCtx, SLOW_ANSWERS, SLOW_CALLS, TRIVIAL_CONSTANT, TRIVIAL_GETTER, TRIVIAL_SELF,
    TRIVIAL_SETTER,
};
use std::mem::offset_of;

impl Gen<'_, '_> {
    /// The check a return makes in code compiled under a method watch
    /// (reached when the inline return is not taken at once; `sa` is
    /// `NativeCtx::slow_returns`, `no` whether the inline return is
    /// impossible anyway, `after` the frame count after it): under watches
    /// alone at the base level (`sa` is `SLOW_ANSWERS`), a frame not
    /// flagged `WATCHED` returns inline (`fast`), as the runtime's return
    /// would pop it; so
    /// does an `ANSWER` frame (its method's, pushed by the direct entry)
    /// whose answer is of the class its cell holds, one its watch recorded
    /// (`WatchCell::answer`). Anything else is the runtime's return (`slow`).
    pub(super) fn watched_return(
        &mut self,
        v: Value,
        (sa, no, after): (Value, Value, Value),
        fast: Block,
        slow: Block,
    ) {
        let watched = u64::from(Frame::WATCHED);
        let alone = self
            .b
            .ins()
            .icmp_imm_u(IntCC::Equal, sa, SLOW_ANSWERS as i64);
        let yes = self.b.create_block();
        let go = self.b.ins().band_not(alone, no);
        self.b.ins().brif(go, yes, NO, slow, NO);
        self.b.switch_to_block(yes);
        let frames = self.ctx_field(offset_of!(NativeCtx, frames));
        let size = std::mem::size_of::<Frame>() as i64;
        let off = self.b.ins().imul_imm_s(after, size);
        let f = self.b.ins().iadd(frames, off);
        let flags = self.load32(f, offset_of!(Frame, flags) as i32);
        let w = self.b.ins().band_imm_u(flags, watched as i64);
        let flagged = self.b.create_block();
        self.b.ins().brif(w, flagged, NO, fast, NO);
        self.b.switch_to_block(flagged);
        let a = self.b.ins().band_imm_u(flags, i64::from(Frame::ANSWER));
        let answer = self.b.create_block();
        self.b.ins().brif(a, answer, NO, slow, NO);
        self.b.switch_to_block(answer);
        let class = self.class_of(v, true, slow);
        let c = self.cell_of(self.code.id, slow);
        let known = self.load(c, offset_of!(WatchCell, answer) as i32);
        let same = self.b.ins().icmp(IntCC::Equal, class, known);
        self.b.ins().brif(same, fast, NO, slow, NO);
    }

    /// The address of method `id`'s watch cell (`NativeCtx::watch_cells`),
    /// or a jump to `none` when there is none (not under watches alone, at
    /// the meta level, or a method made after the cells).
    fn watch_cell(&mut self, id: u32, none: Block) -> Value {
        let sr = self.ctx_field(offset_of!(NativeCtx, slow_returns));
        let other = self
            .b
            .ins()
            .band_imm_u(sr, !(SLOW_CALLS | SLOW_ANSWERS) as i64);
        let alone = self.b.create_block();
        self.b.ins().brif(other, none, NO, alone, NO);
        self.b.switch_to_block(alone);
        let meta = self.ctx_field(offset_of!(NativeCtx, meta_depth));
        let meta = self.load32(meta, 0);
        let base = self.b.create_block();
        self.b.ins().brif(meta, none, NO, base, NO);
        self.b.switch_to_block(base);
        self.cell_of(id, none)
    }

    /// The address of method `id`'s watch cell, or a jump to `none` when
    /// the cells have none (a method made after them); read only under
    /// watches alone (a return's check, which needs no level: an answer is
    /// recorded whatever the level, `watched_return`).
    fn cell_of(&mut self, id: u32, none: Block) -> Value {
        let table = self.ctx_field(offset_of!(NativeCtx, watch_cells));
        let len = self.load(table, offset_of!(CellTable, len) as i32);
        let id = i64::from(id);
        let inside = self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, len, id);
        let has = self.b.create_block();
        self.b.ins().brif(inside, has, NO, none, NO);
        self.b.switch_to_block(has);
        let cells = self.load(table, offset_of!(CellTable, cells) as i32);
        self.b
            .ins()
            .iadd_imm_s(cells, id * std::mem::size_of::<WatchCell>() as i64)
    }

    /// A method's direct entry in code compiled under a method watch, with
    /// the checks of a native call and the probe passed and a watch on
    /// (`slow_returns` not 0): the method's cell (`WatchCell`) decides. No
    /// watch names it: `go` with no flags, as without a watch. The call
    /// would record nothing but its count (the receiver the cell holds, the
    /// classes of its arguments): the count added there, and `go` with the
    /// frame flagged `WATCHED | ANSWER` when its answer is to be recorded.
    /// Otherwise (no cell, a cell off or missed, anything else):
    /// `refuse`, which asks the runtime.
    pub(super) fn watched_entry(&mut self, go: Block, refuse: Block) {
        let zero = self.iconst(0);
        let (c, mode) = self.cell_on(self.code.id, (go, &[BlockArg::Value(zero)]), refuse);
        let argc = self.code.num_args;
        let args: Vec<Value> = (0..argc).map(|i| self.read_slot(1 + i as i64)).collect();
        let rcv = self.read_slot(0);
        self.same_call(c, mode, rcv, &args, refuse);
        self.count_call(c);
        let answer = self.b.ins().band_imm_u(mode, CELL_ANSWER as i64);
        let flags = self.iconst(i64::from(Frame::WATCHED | Frame::ANSWER) << 32);
        let flags = self.b.ins().select(answer, flags, zero);
        self.b.ins().jump(go, &[BlockArg::Value(flags)]);
    }

    /// Method `id`'s watch cell and its mode, when a watch names the method
    /// and its cell is on (neither off nor missed); otherwise a jump to
    /// `unnamed` (with its arguments) when no watch names it, or to `other`
    /// (the runtime) when there is no cell or it is off or missed.
    fn cell_on(&mut self, id: u32, unnamed: (Block, &[BlockArg]), other: Block) -> (Value, Value) {
        let c = self.watch_cell(id, other);
        let mode = self.load(c, offset_of!(WatchCell, mode) as i32);
        let named = self.b.create_block();
        self.b.ins().brif(mode, named, NO, unnamed.0, unnamed.1);
        self.b.switch_to_block(named);
        let off = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, mode, CELL_OFF as i64);
        let on = self.b.create_block();
        self.b.ins().brif(off, other, NO, on, NO);
        self.b.switch_to_block(on);
        (c, mode)
    }

    /// Does a call on `rcv` with `args` record nothing new in the watch
    /// cell at `c` whose mode is `mode` (not 0, not off)? The classes of
    /// the arguments (with `CELL_ARGUMENTS`) and the receiver (with
    /// `CELL_RECEIVER`) are those the cell holds, or a jump to `other`.
    fn same_call(&mut self, c: Value, mode: Value, rcv: Value, args: &[Value], other: Block) {
        if !args.is_empty() {
            let a = self.b.ins().band_imm_u(mode, CELL_ARGUMENTS as i64);
            let after = self.b.create_block();
            if args.len() > CELL_ARGUMENTS_MAX {
                self.b.ins().brif(a, other, NO, after, NO);
            } else {
                let compare = self.b.create_block();
                self.b.ins().brif(a, compare, NO, after, NO);
                self.b.switch_to_block(compare);
                for (i, &arg) in args.iter().enumerate() {
                    let class = self.class_of(arg, true, other);
                    let offset = offset_of!(WatchCell, arguments) + 8 * i;
                    let known = self.load(c, offset as i32);
                    let same = self.b.ins().icmp(IntCC::Equal, class, known);
                    let next = if i + 1 == args.len() {
                        after
                    } else {
                        self.b.create_block()
                    };
                    self.b.ins().brif(same, next, NO, other, NO);
                    if i + 1 < args.len() {
                        self.b.switch_to_block(next);
                    }
                }
            }
            self.b.switch_to_block(after);
        }
        let r = self.b.ins().band_imm_u(mode, CELL_RECEIVER as i64);
        let compare = self.b.create_block();
        let same_receiver = self.b.create_block();
        self.b.ins().brif(r, compare, NO, same_receiver, NO);
        self.b.switch_to_block(compare);
        let known = self.load(c, offset_of!(WatchCell, receiver) as i32);
        let same = self.b.ins().icmp(IntCC::Equal, rcv, known);
        self.b.ins().brif(same, same_receiver, NO, other, NO);
        self.b.switch_to_block(same_receiver);
    }

    /// Count a call in the watch cell at `c` (`WatchCell::calls`).
    fn count_call(&mut self, c: Value) {
        let calls = self.load(c, offset_of!(WatchCell, calls) as i32);
        let calls = self.b.ins().iadd_imm_s(calls, 1);
        self.store(calls, c, offset_of!(WatchCell, calls) as i32);
    }

    /// A trivial method's site in code compiled under a method watch, with
    /// a watch on (`slow_returns` not 0): the callee's cell (`WatchCell`)
    /// decides. No watch names `mid`: `run`, inline as without a watch. The
    /// call would record nothing but its count (its receiver and
    /// argument's class those the cell holds, and with `CELL_ANSWER` its
    /// answer, which the trivial method computes without side effects, of
    /// the class the cell holds): the count added there, and `run`.
    /// Otherwise `runtime` (`invoke` records it).
    #[allow(clippy::too_many_arguments)] // the call's parts, as `trivial` has them
    pub(super) fn watched_trivial(
        &mut self,
        (mid, kind, operand): (u32, u64, u64),
        rcv: Value,
        depth: usize,
        argc: usize,
        run: Block,
        runtime: Block,
    ) {
        let (c, mode) = self.cell_on(mid, (run, NO), runtime);
        let args: Vec<Value> = (0..argc)
            .map(|i| self.b.use_var(self.s[depth - argc + i]))
            .collect();
        self.same_call(c, mode, rcv, &args, runtime);
        let a = self.b.ins().band_imm_u(mode, CELL_ANSWER as i64);
        let compare = self.b.create_block();
        let count = self.b.create_block();
        self.b.ins().brif(a, compare, NO, count, NO);
        self.b.switch_to_block(compare);
        let v = match kind {
            TRIVIAL_GETTER => {
                // A receiver without the field answers nil.
                let join = self.b.create_block();
                let v = self.b.append_block_param(join, types::I64);
                let index = self.iconst(operand as i64);
                let nil = self.iconst(NIL);
                let fa = self.field_address(rcv, index, join, &[BlockArg::Value(nil)]);
                let field = self.load(fa, 0);
                self.b.ins().jump(join, &[BlockArg::Value(field)]);
                self.b.switch_to_block(join);
                v
            }
            TRIVIAL_SETTER | TRIVIAL_SELF => rcv,
            TRIVIAL_CONSTANT => self.iconst(operand as i64),
            _ => {
                let cell = self.iconst(operand as i64);
                self.load(cell, 0)
            }
        };
        let class = self.class_of(v, true, runtime);
        let known = self.load(c, offset_of!(WatchCell, answer) as i32);
        let same = self.b.ins().icmp(IntCC::Equal, class, known);
        self.b.ins().brif(same, count, NO, runtime, NO);
        self.b.switch_to_block(count);
        self.count_call(c);
        self.b.ins().jump(run, NO);
    }
}
