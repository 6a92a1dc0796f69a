//! Returns and unwinding: popping a frame (meta level, home env marked dead, exit
//! hook), returning to the sender, non-local return (`^` in a block) and
//! [`Vm::unwind_to`], which runs `<unwindProtect>` (`ensure:`/`ifCurtailed:`)
//! blocks on the way down, interrupting itself as a [`PendingUnwind`] while such a
//! block runs and resuming when it returns.

use super::{ENV_ALIVE, ENV_PARENT, OBSERVE};
use crate::sched::{Frame, PendingUnwind, UnwindAction};
use crate::vm::{Vm, VmError};
use lupa_compiler::CodeKind;
use lupa_heap::Value;

impl Vm {
    /// Pop the top frame: leave its meta level, mark its home env dead, and tell the
    /// activation hooks (`unwinding`: popped by an unwind rather than a return;
    /// a method watch needs only the unwinds). The caller truncates the stack.
    #[inline(always)]
    pub(super) fn pop_frame(&mut self, unwinding: bool) -> Option<Frame> {
        let f = self.sched.running.frames.pop()?;
        if OBSERVE && (self.obs.every_activation || (unwinding && self.obs.hooks_on)) {
            self.observe_exit(&f, unwinding);
        }
        if f.flags & Frame::META_LEVEL != 0 {
            self.leave_level(f.flags);
        }
        if f.flags & Frame::HOME_ENV != 0 {
            self.heap.set_slot(f.env, ENV_ALIVE, Value::NIL);
        }
        Some(f)
    }

    /// A frame popped while activation hooks or line coverage are on, or
    /// unwound while a method watch is on (before its level is left): the
    /// hooks see the exit; an unwound frame at the base level is a run cut
    /// short for line coverage; an unwound watched call answers nothing.
    /// Out of line: the return path stays small.
    #[inline(never)]
    fn observe_exit(&mut self, f: &Frame, unwinding: bool) {
        // (An `ANSWER` frame has no expectation.)
        if unwinding && f.flags & (Frame::WATCHED | Frame::ANSWER) == Frame::WATCHED {
            let depth = self.sched.running.frames.len();
            self.obs.watches.unwound(self.sched.current, depth);
        }
        if unwinding && self.obs.covering_lines() && !self.sched.running.at_meta_level() {
            self.obs.mark_abort(f.method, f.pc);
        }
        if self.obs.has_hooks() {
            let ev = self.exit_event(f);
            self.obs.exit(ev, unwinding);
        }
    }

    /// Line coverage: the top frame does not go on from its saved pc (a
    /// non-local return or an exception handler returns from it, or it
    /// restarts).
    fn cut_top_frame_short(&mut self) {
        if OBSERVE
            && self.obs.covering_lines()
            && !self.sched.running.at_meta_level()
            && let Some(f) = self.sched.running.frames.last()
        {
            let (id, pc) = (f.method, f.pc);
            self.obs.mark_abort(id, pc);
        }
    }

    /// Pop the top frame, answering `v` to its sender. Handles unwind resumption.
    #[inline]
    pub(super) fn return_from_top(&mut self, v: Value) -> Result<(), VmError> {
        if OBSERVE
            && self.obs.hooks_on
            && self
                .sched
                .running
                .frames
                .last()
                .is_some_and(|f| f.flags & Frame::WATCHED != 0)
        {
            self.watched_return(v);
        }
        let Some(f) = self.pop_frame(false) else {
            return Ok(());
        };
        self.sched.running.stack.truncate(f.bp + 1);
        self.sched.running.stack[f.bp] = v;
        if self.sched.running.frames.len() == self.sched.running.unwind_watch {
            self.resume_unwind()?;
        }
        self.limits.note_depth(self.sched.running.frames.len());
        Ok(())
    }

    pub(super) fn exit_event(&self, f: &Frame) -> crate::obs::Activation {
        crate::obs::Activation {
            method: f.method,
            receiver_class: self.class_of(
                self.sched
                    .running
                    .stack
                    .get(f.bp)
                    .copied()
                    .unwrap_or(Value::NIL),
            ),
            depth: self.sched.running.frames.len(),
            process: self.sched.current,
            sends: self.obs.sends,
            call_line: 0,
        }
    }

    /// An ensure block run during an unwind has returned: continue the unwind.
    pub(super) fn resume_unwind(&mut self) -> Result<(), VmError> {
        let Some(u) = self.sched.running.pop_pending_unwind() else {
            return Ok(());
        };
        let _ = pop!(self); // the ensure block's value
        self.unwind_to(u.target, u.action)
    }

    /// Unwind the current process down to frame `target` (exclusive: it stays),
    /// running `<unwindProtect>` blocks, then perform `action` there.
    pub fn unwind_to(&mut self, target: usize, action: UnwindAction) -> Result<(), VmError> {
        loop {
            let n = self.sched.running.frames.len();
            if n == 0 || (target != usize::MAX && n - 1 <= target) {
                break;
            }
            // Drop interrupted unwinds whose ensure block frame is being unwound itself.
            while self
                .sched
                .running
                .pending_unwinds
                .last()
                .is_some_and(|p| p.watch >= n - 1)
            {
                self.sched.running.pop_pending_unwind();
            }
            let top = n - 1;
            let (protect, bp, nargs) = {
                let f = &self.sched.running.frames[top];
                (
                    self.image.code(f.method).unwind_protect,
                    f.bp,
                    self.image.code(f.method).num_args,
                )
            };
            // <unwindProtect> frames (Pharo's convention): temp 1 holds the unwind
            // action (anything that understands `value`), temp 2 the completion flag.
            let flag = bp + 1 + nargs + 1;
            if protect
                && has_unwind_temps(self.image.code(self.sched.running.frames[top].method))
                && self.sched.running.stack[flag] == Value::NIL
            {
                self.sched.running.stack[flag] = Value::TRUE;
                let block = self.sched.running.stack[bp + 1 + nargs];
                self.sched.running.push_pending_unwind(PendingUnwind {
                    watch: n,
                    target,
                    action,
                });
                self.sched.running.stack.push(block);
                let value = self.image.sym_cache.value;
                self.dispatch(value, 0, None)?;
                if self.sched.running.frames.len() == n {
                    // `value` answered without a frame (not a block): continue at once.
                    self.resume_unwind()?;
                }
                return Ok(());
            }
            let f = self
                .pop_frame(true)
                .ok_or_else(|| VmError::Fatal("frame stack underflow".into()))?;
            self.sched.running.stack.truncate(f.bp);
        }
        self.limits.note_depth(self.sched.running.frames.len());
        match action {
            UnwindAction::Return(v) => {
                self.cut_top_frame_short();
                self.return_from_top(v)
            }
            UnwindAction::Restart => {
                self.cut_top_frame_short();
                if OBSERVE
                    && self.obs.covering_lines()
                    && !self.sched.running.at_meta_level()
                    && let Some(f) = self.sched.running.frames.last()
                {
                    let id = f.method;
                    self.mark_run(id, 0);
                }
                let Some(f) = self.sched.running.frames.last_mut() else {
                    return Ok(());
                };
                f.pc = 0;
                let code = self.image.code(f.method).clone();
                let bp = f.bp;
                let outer = if code.has_env() && f.env.is_ptr() {
                    self.heap.slot(f.env, ENV_PARENT)
                } else {
                    f.env
                };
                self.sched.running.stack.truncate(bp + 1 + code.num_args);
                for _ in 0..code.num_temps {
                    self.sched.running.stack.push(Value::NIL);
                }
                if code.has_env() {
                    let e = self.new_env(&code, outer)?;
                    if let Some(f) = self.sched.running.frames.last_mut() {
                        f.env = e;
                    }
                }
                Ok(())
            }
            UnwindAction::Terminate => Ok(()),
        }
    }

    pub(super) fn non_local_return(&mut self, v: Value) -> Result<(), VmError> {
        let Some(f) = self.sched.running.frames.last() else {
            return Ok(());
        };
        // The home env is the root of the env chain.
        let mut home = f.env;
        while home.is_ptr() {
            let p = self.heap.slot(home, ENV_PARENT);
            if !p.is_ptr() {
                break;
            }
            home = p;
        }
        let alive = home.is_ptr() && self.heap.slot(home, ENV_ALIVE) == Value::TRUE;
        let target = if alive {
            self.sched.running.frames.iter().rposition(|fr| {
                fr.env == home && self.image.code(fr.method).kind == CodeKind::Method
            })
        } else {
            None
        };
        match target {
            Some(t) => self.unwind_to(t, UnwindAction::Return(v)),
            None => {
                // escapedBlock: sent to the block's receiver, answered as the block's value.
                let bp = f.bp;
                let recv = self.sched.running.stack[bp];
                let closure = f.closure;
                let _ = self.return_from_top(v);
                // Replace the block's result by `recv escapedBlock: closure`.
                let _ = pop!(self);
                self.sched.running.stack.push(recv);
                self.sched.running.stack.push(closure);
                let sel = self.image.sym_cache.escaped_block;
                self.dispatch(sel, 1, None)
            }
        }
    }
}

fn has_unwind_temps(code: &crate::objects::MethodCode) -> bool {
    code.num_temps >= 2
}
