//! Line coverage: which source lines of which methods ran, and how often,
//! measured by the interpreter (cost only while on).
//!
//! While line coverage is on ([`Vm::start_line_coverage`](crate::Vm::start_line_coverage)) the VM counts the
//! *starts of straight-line runs* of bytecode, per method and instruction:
//! an activation starts a run at instruction 0 (activation hooks are on, so
//! trivial methods are activated too), a send starts one at the instruction
//! after it (counted when the send is made: a send that never returns, being
//! unwound, still counts the rest of its run), and every jump or conditional
//! branch starts one at the instruction it goes to, taken or not (the
//! observing interpreter loop marks it). Every executed instruction lies in a
//! run that started at the nearest run start before it with no send, branch
//! or return in between, so the count of an instruction is the count of that
//! run start, and a line's count is the largest count of its instructions
//! ([`LineCoverage::lines_of`]: jumps count only on a line that has no
//! other code, so a branch written on the line of the code it skips does not
//! make that code look run); a method's lines include those of its blocks. Lines without code (comments, declarations) are not lines.
//!
//! Cost: per-send observation (the observing loop, `on_send`) and activation
//! hooks while on; nothing while off.

use lupa_compiler::Op;

use crate::image::Image;
use crate::obs::Observation;

impl Observation {
    /// Count a run starting at instruction `pc` of `method`.
    #[inline]
    pub(crate) fn mark_run(&mut self, method: u32, pc: usize) {
        if let Some(runs) = self.runs.as_mut() {
            let m = method as usize;
            if runs.len() <= m {
                runs.resize_with(m + 1, Vec::new);
            }
            let counts = &mut runs[m];
            if counts.len() <= pc {
                counts.resize(pc + 1, 0);
            }
            counts[pc] = counts[pc].saturating_add(1);
        }
    }

    /// Is line coverage on?
    #[inline(always)]
    pub(crate) fn covering_lines(&self) -> bool {
        self.runs.is_some()
    }
}

/// Is `op` a jump (a branch or a loop test, which only decides where to go)?
fn is_jump(op: &Op) -> bool {
    matches!(
        op,
        Op::Jump(_)
            | Op::JumpBack(_)
            | Op::JumpIfTrue { .. }
            | Op::JumpIfFalse { .. }
            | Op::JumpIfNil { .. }
            | Op::JumpIfNotNil { .. }
            | Op::ForTest { .. }
            | Op::ForIncr { .. }
    )
}

/// The run starts counted by a line-coverage session ([`Vm::take_line_coverage`](crate::Vm::take_line_coverage)).
#[derive(Debug, Clone, Default)]
pub struct LineCoverage {
    pub(crate) runs: Vec<Vec<u64>>,
}

impl LineCoverage {
    /// The lines with code of method `id` and its blocks, ascending, with how
    /// many times each ran (0: missed). Empty for an unknown id.
    pub fn lines_of(&self, image: &Image, id: u32) -> Vec<(u32, u64)> {
        let Some(code) = image.methods.get(id as usize) else {
            return Vec::new();
        };
        let mut lines: std::collections::BTreeMap<u32, (Option<u64>, u64)> = Default::default();
        let mut todo = vec![code.clone()];
        while let Some(c) = todo.pop() {
            let runs = self
                .runs
                .get(c.id as usize)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let n = c.ops.len();
            // Run starts: 0, after a send, branch or return, and branch targets.
            let mut starts = vec![false; n + 1];
            starts[0] = true;
            for (i, op) in c.ops.iter().enumerate() {
                let (ends, target) = match *op {
                    Op::Send { .. } | Op::SuperSend { .. } | Op::Special { .. } => (true, None),
                    Op::Jump(t) | Op::JumpBack(t) => (true, Some(t)),
                    Op::JumpIfTrue { target, .. }
                    | Op::JumpIfFalse { target, .. }
                    | Op::JumpIfNil { target, .. }
                    | Op::JumpIfNotNil { target, .. }
                    | Op::ForIncr { target, .. } => (true, Some(target)),
                    Op::ForTest { exit, .. } => (true, Some(exit)),
                    Op::ReturnTop | Op::ReturnSelf | Op::ReturnNonLocal => (true, None),
                    _ => (false, None),
                };
                if ends {
                    starts[i + 1] = true;
                }
                if let Some(t) = target {
                    starts[(t as usize).min(n)] = true;
                }
            }
            // Per line: the largest count of its instructions other than
            // jumps (a branch on the line of the code it skips must not make
            // that code look run), or of its jumps when it has nothing else.
            let mut current = 0u64;
            for (i, &start) in starts.iter().take(n).enumerate() {
                if start {
                    current = runs.get(i).copied().unwrap_or(0);
                }
                let line = c.line_of(i);
                if line > 0 {
                    let jump = is_jump(&c.ops[i]);
                    let e = lines.entry(line).or_insert((None, 0));
                    if jump {
                        e.1 = e.1.max(current);
                    } else {
                        e.0 = Some(e.0.unwrap_or(0).max(current));
                    }
                }
            }
            todo.extend(c.blocks.iter().cloned());
        }
        lines
            .into_iter()
            .map(|(line, (code, jumps))| (line, code.unwrap_or(jumps)))
            .collect()
    }

    /// The ids of the methods and blocks that ran while covering.
    pub fn methods_run(&self) -> Vec<u32> {
        self.runs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.iter().any(|&n| n > 0))
            .map(|(i, _)| i as u32)
            .collect()
    }
}
