//! Line coverage: which source lines of which methods ran, and how often,
//! measured by the interpreter and by native code compiled to count them
//! (cost only while on).
//!
//! While line coverage is on ([`Vm::start_line_coverage`](crate::Vm::start_line_coverage))
//! the VM counts, per method and instruction, how many times execution
//! *arrived* at an instruction other than by falling through from the one
//! before it, and how many times a run of instructions was *cut short*:
//!
//! - an activation arrives at instruction 0 (every activation is announced
//!   to the interpreter's `observe_activation` while lines are counted, so
//!   trivial methods are activated too);
//! - every jump or conditional branch arrives at the instruction it goes to,
//!   taken or not (the observing interpreter loop marks it);
//! - native code counts the same arrivals where it does the same work
//!   itself (`lupa-jit`'s `codegen/lines.rs`): at pc 0 where it pushes a
//!   frame (a direct entry) or runs a trivial method inline, and at every
//!   jump and branch destination; the runtime counts the activations it
//!   makes for native code (its sends, a watched call's frame). Code
//!   compiled while lines are counted does that
//!   ([`CompileOptions::count_lines`](crate::CompileOptions)); starting or
//!   stopping line coverage drops all native code (`Vm::drop_native_code`),
//!   so code made for the other mode never runs, and native code goes on
//!   running while lines are counted
//!   ([`Observation::native_may_run`]);
//! - a frame that does not go on after its pending send (unwound by an
//!   exception, a non-local return or a process termination, returned from
//!   by a non-local return or an exception handler, restarted, or still
//!   waiting when coverage stops) is cut short at its saved pc: the
//!   instructions from there on did not run that time (`Observation::mark_abort`);
//! - when coverage starts, each frame already active arrives at its saved
//!   pc (it goes on from there when its send returns).
//!
//! Sends do not start anything: execution falls through them. So the count
//! of an instruction is the count of the one before it, when execution can
//! fall through from there (it is not a jump, a branch or a return), plus
//! its arrivals, minus the runs cut short at it ([`LineCoverage::lines_of`]);
//! a line's count is the largest count of its instructions (jumps and
//! branches count only on a line that has no other code: the jump at the end
//! of an arm is written on the line of the arm it skips, and the branch of
//! `ifTrue:` on the line of the arm it may skip, and neither may make that
//! arm look run); a method's lines include those of its blocks. Lines without code (comments,
//! declarations) are not lines.
//!
//! Only the program's own code is counted: nothing is marked while the
//! process runs at the meta level (instrumentation hooks, a profiler's own
//! work), so the lines a tool runs for itself never look covered (native
//! code adds 0 while `NativeCtx::meta_depth` is not).
//!
//! The arrivals are counted in per-method counters
//! ([`MethodCode::arrivals`](crate::MethodCode::arrivals), made at the first
//! count, at an address that stays valid for the run), which both the
//! interpreter and native code add to; runs cut short, rarer and always
//! seen by the runtime, in a table of the session.
//!
//! Cost: for interpreted code, the observing loop in its light mode (branch
//! marks, no per-send call) and the announced activations; for native code,
//! a load, an add and a store per arrival (and the code compiled again when
//! coverage starts and stops); nothing while off.

use std::cell::{Cell, OnceCell};

use lupa_compiler::Op;

use crate::image::Image;
use crate::obs::Observation;
use crate::vm::Vm;

/// A method's (or block's) arrivals counters, one per instruction, made at
/// the first count ([`MethodCode::arrivals`](crate::MethodCode::arrivals)).
/// The interpreter adds to them, and so does native code compiled while
/// line coverage is on (at their addresses, which never change while the
/// method lives: the image keeps every method for the run). They count only
/// while line coverage is on: zeroed when it starts and when its counts are
/// taken.
#[derive(Debug, Default)]
pub struct Arrivals(OnceCell<Box<[Cell<u64>]>>);

impl Arrivals {
    /// The counters of code of `len` instructions (made now if need be).
    pub fn counters(&self, len: usize) -> &[Cell<u64>] {
        self.0
            .get_or_init(|| (0..len).map(|_| Cell::new(0)).collect())
    }

    /// The counts, each set back to 0 (empty when none were made).
    fn take(&self) -> Vec<u64> {
        self.0
            .get()
            .map(|c| c.iter().map(|n| n.replace(0)).collect())
            .unwrap_or_default()
    }
}

/// Counts of one line-coverage session, per method id then instruction
/// index (grown on demand).
#[derive(Debug, Clone, Default)]
pub struct LineCounts {
    /// Arrivals at an instruction other than by falling through (filled
    /// from the methods' [`Arrivals`] when the counts are taken).
    arrivals: Vec<Vec<u64>>,
    /// Runs cut short at an instruction (it and the rest of its run did not
    /// run that time).
    aborts: Vec<Vec<u64>>,
}

/// Add one to `table[method][pc]`.
#[inline]
fn bump(table: &mut Vec<Vec<u64>>, method: u32, pc: usize) {
    let m = method as usize;
    if table.len() <= m {
        table.resize_with(m + 1, Vec::new);
    }
    let counts = &mut table[m];
    if counts.len() <= pc {
        counts.resize(pc + 1, 0);
    }
    counts[pc] = counts[pc].saturating_add(1);
}

impl Observation {
    /// Count a run of `method` cut short at instruction `pc`: a frame at the
    /// base level that does not go on from its saved pc.
    #[inline]
    pub(crate) fn mark_abort(&mut self, method: u32, pc: usize) {
        if let Some(lines) = self.lines.as_mut() {
            bump(&mut lines.aborts, method, pc);
        }
    }

    /// Is line coverage on?
    #[inline(always)]
    pub(crate) fn covering_lines(&self) -> bool {
        self.lines.is_some()
    }
}

impl Vm {
    /// Count an arrival at instruction `pc` of `method` while line coverage
    /// is on (the caller checked that the process runs at the base level).
    #[inline]
    pub(crate) fn mark_run(&self, method: u32, pc: usize) {
        if self.obs.covering_lines()
            && let Some(code) = self.image.methods.get(method as usize)
            && let Some(n) = code.arrivals.counters(code.ops.len()).get(pc)
        {
            n.set(n.get().wrapping_add(1));
        }
    }

    /// The runtime pushed a frame of `method` (not `<metaLevel>` nor
    /// `<baseLevel>`) for native code, as its direct entry would have (a
    /// method watch's call): its arrival at pc 0, at the base level.
    #[inline]
    pub(crate) fn mark_native_activation(&self, method: u32) {
        if self.obs.covering_lines() && !self.sched.running.at_meta_level() {
            self.mark_run(method, 0);
        }
    }

    /// Set every method's arrivals counters back to 0 (line coverage
    /// starts).
    pub(crate) fn clear_arrivals(&self) {
        for m in self.image.methods.iter() {
            m.arrivals.take();
        }
    }

    /// The arrivals counted since line coverage started, by method id, the
    /// counters set back to 0 (line coverage stops).
    pub(crate) fn take_arrivals(&self) -> Vec<Vec<u64>> {
        self.image
            .methods
            .iter()
            .map(|m| m.arrivals.take())
            .collect()
    }
}

impl LineCounts {
    /// These counts with `arrivals` (by method id) as their arrivals.
    pub(crate) fn with_arrivals(self, arrivals: Vec<Vec<u64>>) -> LineCounts {
        LineCounts { arrivals, ..self }
    }
}

/// Does execution never fall through from `op` to the next instruction by
/// itself (a jump, a branch, a loop test or step, a return)? After a branch
/// both ways are marked as arrivals.
fn ends_flow(op: &Op) -> bool {
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
            | Op::ReturnTop
            | Op::ReturnSelf
            | Op::ReturnNonLocal
    )
}

/// Is `op` a jump or a branch (it only decides where to go): it counts on a
/// line only when the line has no other code.
fn is_plain_jump(op: &Op) -> bool {
    ends_flow(op) && !matches!(op, Op::ReturnTop | Op::ReturnSelf | Op::ReturnNonLocal)
}

/// The line counts of a line-coverage session ([`Vm::take_line_coverage`](crate::Vm::take_line_coverage)).
#[derive(Debug, Clone, Default)]
pub struct LineCoverage {
    pub(crate) counts: LineCounts,
}

impl LineCoverage {
    /// How many times each instruction of method (or block) `id` ran,
    /// `len` instructions.
    fn instruction_counts(&self, id: u32, ops: &[Op]) -> Vec<u64> {
        let get = |t: &Vec<Vec<u64>>, i: usize| {
            t.get(id as usize)
                .and_then(|c| c.get(i))
                .copied()
                .unwrap_or(0)
        };
        let mut out = Vec::with_capacity(ops.len());
        let mut current = 0u64;
        let mut falls_through = false;
        for (i, op) in ops.iter().enumerate() {
            let before = if falls_through { current } else { 0 };
            current = before
                .saturating_add(get(&self.counts.arrivals, i))
                .saturating_sub(get(&self.counts.aborts, i));
            out.push(current);
            falls_through = !ends_flow(op);
        }
        out
    }

    /// The lines with code of method `id` and its blocks, ascending, with how
    /// many times each ran (0: missed). Empty for an unknown id.
    pub fn lines_of(&self, image: &Image, id: u32) -> Vec<(u32, u64)> {
        let Some(code) = image.methods.get(id as usize) else {
            return Vec::new();
        };
        let mut lines: std::collections::BTreeMap<u32, (Option<u64>, u64)> = Default::default();
        let mut todo = vec![code.clone()];
        while let Some(c) = todo.pop() {
            let counts = self.instruction_counts(c.id, &c.ops);
            // Per line: the largest count of its instructions other than
            // jumps and branches (written on the line of an arm they may
            // skip), or of its jumps when it has nothing else.
            for (i, (op, &n)) in c.ops.iter().zip(&counts).enumerate() {
                let line = c.line_of(i);
                if line == 0 {
                    continue;
                }
                let e = lines.entry(line).or_insert((None, 0));
                if is_plain_jump(op) {
                    e.1 = e.1.max(n);
                } else {
                    e.0 = Some(e.0.unwrap_or(0).max(n));
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
        self.counts
            .arrivals
            .iter()
            .enumerate()
            .filter(|(_, r)| r.iter().any(|&n| n > 0))
            .map(|(i, _)| i as u32)
            .collect()
    }
}
