//! Line coverage in native code: code compiled while lines are counted
//! (`CompileOptions::count_lines`, `Unit::lines`) counts its own
//! *arrivals*, exactly where the interpreter counts them (`obs/coverage.rs`
//! in lupa-vm is the contract): at pc 0 where native code activates a method
//! or block itself (its direct entry, which pushes the frame; a trivial
//! method run inline at a send site), and at the destination of every jump
//! and branch, taken or not (the interpreter's `cover_branch`). An arrival
//! adds 1 to the method's counter for that instruction, at the counters'
//! address (they live as long as the method), while the running process is
//! at the base level (`NativeCtx::meta_depth` is 0: nothing is counted at
//! the meta level; no branch: the test's outcome is what is added; the
//! code runs only while lines are counted). Activations made by the
//! runtime (its send, a primitive's fallback, a watched call) are counted
//! by the runtime, and resuming an activation at a resume point is no
//! arrival (the interpreter counted it, or execution falls through there).
//! Code compiled without counting lines never runs while lines are counted,
//! nor the other way round: the VM drops all native code when the options
//! change (`Vm::drop_native_code`).

use super::{Gen, NO};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, types};
use lupa_vm::NativeCtx;
use std::mem::offset_of;

impl Gen<'_, '_> {
    /// Does this code count line coverage's arrivals?
    fn counts_lines(&self) -> bool {
        self.code.lines.is_some()
    }

    /// An arrival at instruction `pc` of this code (when it counts lines).
    pub(super) fn count_arrival(&mut self, pc: usize) {
        if let Some(first) = self.code.lines.as_ref().map(|l| l.arrivals) {
            self.add_arrival(first + 8 * pc as i64);
        }
    }

    /// Trivial method `mid`, run inline, arrives at its pc 0 (when this
    /// code counts lines).
    pub(super) fn count_trivial_arrival(&mut self, mid: u32) {
        let first = self
            .code
            .lines
            .as_ref()
            .and_then(|l| l.trivial.iter().find(|t| t.0 == mid))
            .map(|t| t.1);
        if let Some(a) = first {
            self.add_arrival(a);
        }
    }

    /// Add 1 to the counter at `addr` at the base level, 0 at the meta
    /// level.
    fn add_arrival(&mut self, addr: i64) {
        let depth = self.ctx_field(offset_of!(NativeCtx, meta_depth));
        let depth = self.load32(depth, 0);
        let base = self.b.ins().icmp_imm_u(IntCC::Equal, depth, 0);
        let step = self.b.ins().uextend(types::I64, base);
        let a = self.iconst(addr);
        let n = self.load(a, 0);
        let n = self.b.ins().iadd(n, step);
        self.store(n, a, 0);
    }

    /// Where a branch goes for instruction `target`: its block, or (when
    /// this code counts lines) a block that counts the arrival there first,
    /// made by [`fill_edges`](Self::fill_edges) once the branch is made.
    pub(super) fn edge(&mut self, target: usize) -> Block {
        if !self.counts_lines() {
            return self.blocks[target];
        }
        let blk = self.b.create_block();
        self.edges.push((blk, target));
        blk
    }

    /// Make the counting blocks [`edge`](Self::edge) answered (the current
    /// block is ended).
    pub(super) fn fill_edges(&mut self) {
        for (blk, target) in std::mem::take(&mut self.edges) {
            self.b.switch_to_block(blk);
            self.count_arrival(target);
            let to = self.blocks[target];
            self.b.ins().jump(to, NO);
        }
    }
}
