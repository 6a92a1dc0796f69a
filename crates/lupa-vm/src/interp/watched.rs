//! The interpreter's side of method watches (`obs/watch.rs`): a call of a
//! watched method is recorded before it runs, and its end when it answers.
//! Out of line: `invoke` only tests whether a watch is on.

use std::rc::Rc;

use crate::objects::MethodCode;
use crate::obs::watch::{ARGUMENTS, AT_THE_END, CELLED, Fields, RECEIVER_FIELDS, RECEIVERS};
use crate::vm::{Vm, VmError};
use lupa_heap::Value;

impl Vm {
    /// [`Vm::invoke`] while a watch is on: record the call when a watch
    /// names `m` and the caller runs at the base level, run it, and record
    /// its end (at once when it answered without a frame, else when the
    /// frame it pushed returns).
    #[inline(never)]
    pub(super) fn invoke_watched(&mut self, m: Rc<MethodCode>, argc: usize) -> Result<(), VmError> {
        let bp = self.sched.running.stack.len() - 1 - argc;
        let at_end = self.watched_call(m.id, bp, argc);
        if at_end == 0 {
            return self.invoke_unwatched(m, argc);
        }
        let receiver = self.sched.running.stack[bp];
        let fields = self.fields_to_compare(at_end, m.id, receiver);
        let (process, depth, id) = (self.sched.current, self.sched.running.frames.len(), m.id);
        self.invoke_unwatched(m, argc)?;
        if self.sched.current != process {
            return Ok(());
        }
        let frames = self.sched.running.frames.len();
        if frames == depth {
            // Answered without a frame (and without a collection: the
            // receiver and the fields read above are still what they were).
            if let Some(&v) = self.sched.running.stack.last() {
                let changed = fields.map(|f| self.fields_changed(receiver, f.len(), f.iter()));
                let class = self.watched_answer(id, receiver, v, changed);
                if self.obs.watches.wants(id) & CELLED != 0 {
                    self.obs.watches.note_answer(id, class);
                }
            }
        } else if frames == depth + 1 {
            self.expect_watched_answer(id, receiver, fields.as_ref());
        }
        Ok(())
    }

    /// A call of method `id` on the receiver at stack index `bp` with
    /// `argc` arguments, made by the running process before its frame (if
    /// any) is pushed: recorded when a watch names the method and the caller
    /// runs at the base level. Answers what is to be recorded at its end
    /// (the options of [`AT_THE_END`] asked; 0 when the call was not
    /// recorded).
    #[inline(always)]
    fn watched_call(&mut self, id: u32, bp: usize, argc: usize) -> u32 {
        let wants = self.obs.watches.wants(id);
        if wants == 0 || self.sched.running.at_meta_level() {
            return 0;
        }
        let key = if wants & RECEIVERS != 0 {
            self.identity_key(self.sched.running.stack[bp])
        } else {
            0
        };
        let mut classes = [0u32; 8];
        let n = if wants & ARGUMENTS != 0 {
            argc.min(classes.len())
        } else {
            0
        };
        for (i, c) in classes.iter_mut().enumerate().take(n) {
            *c = self.class_of(self.sched.running.stack[bp + 1 + i]);
        }
        self.obs.watches.call(id, key, &classes[..n]);
        if wants & CELLED != 0 {
            let receiver = self.sched.running.stack[bp];
            self.obs.watches.refill(id, receiver, &classes[..n]);
        }
        wants & AT_THE_END
    }

    /// The named fields of `receiver` before a recorded call of method `id`
    /// whose end records `at_end` ([`watched_call`](Self::watched_call)),
    /// when a watch still compares them.
    #[inline(always)]
    fn fields_to_compare(&mut self, at_end: u32, id: u32, receiver: Value) -> Option<Fields> {
        (at_end & RECEIVER_FIELDS != 0 && self.obs.watches.compares_fields(id))
            .then(|| self.named_fields(receiver))
    }

    /// The top frame, just pushed for a watched call of method `id` on
    /// `receiver` (whose `fields` were read before it), answers for it: its
    /// return records the call's end.
    #[inline(always)]
    fn expect_watched_answer(&mut self, id: u32, receiver: Value, fields: Option<&Fields>) {
        let (process, depth) = (self.sched.current, self.sched.running.frames.len() - 1);
        self.obs
            .watches
            .expect_answer(process, depth, id, receiver, fields);
        if let Some(f) = self.sched.running.frames.last_mut() {
            f.flags |= crate::sched::Frame::WATCHED;
        }
    }

    /// A call of method `id` that native code makes at its callee's direct
    /// entry while a watch is on (the receiver and `argc` arguments at stack
    /// index `bp`, the caller's pc saved): its frame (method id, no
    /// environment, no closure, no flags but `WATCHED`) is pushed here, as
    /// the direct entry would push it, after the call is recorded as
    /// [`invoke_watched`](Self::invoke_watched) records it (when a watch
    /// names the method).
    pub(super) fn push_watched_frame(&mut self, id: u32, bp: usize, argc: usize) {
        let at_end = self.watched_call(id, bp, argc);
        let receiver = self.sched.running.stack[bp];
        let fields = self.fields_to_compare(at_end, id, receiver);
        self.sched.running.frames.push(crate::sched::Frame {
            method: id,
            flags: 0,
            pc: 0,
            bp,
            env: Value::NIL,
            closure: Value::NIL,
        });
        if at_end != 0 {
            self.expect_watched_answer(id, receiver, fields.as_ref());
        }
    }

    /// The top frame returns `v`: when it answers for a watched call, record
    /// its end.
    #[inline(never)]
    pub(super) fn watched_return(&mut self, v: Value) {
        let frames = &self.sched.running.frames;
        if let Some(&f) = frames.last() {
            self.watched_return_at(&f, frames.len() - 1, v);
        }
    }

    /// Frame `f`, a `WATCHED` one at `depth` of the running process,
    /// returns `v`: record the end of the call it answers for (an `ANSWER`
    /// frame's is a call of its method on its receiver, whose fields no
    /// watch compared when it was pushed).
    #[inline(always)]
    pub(super) fn watched_return_at(&mut self, f: &crate::sched::Frame, depth: usize, v: Value) {
        if f.flags & crate::sched::Frame::ANSWER != 0 {
            let receiver = self.sched.running.stack[f.bp];
            let class = self.watched_answer(f.method, receiver, v, None);
            self.obs.watches.note_answer(f.method, class);
            return;
        }
        if let Some(p) = self.obs.watches.answered(self.sched.current, depth) {
            let changed = p.fields.map(|s| {
                let before = self.obs.watches.fields(s);
                self.fields_changed(p.receiver, before.len(), before.iter().copied())
            });
            self.watched_answer(p.method, p.receiver, v, changed);
        }
    }

    /// No watch records anything at the end of calls any more (the
    /// expectations were dropped): the `ANSWER` frames of every process
    /// answer nothing either.
    pub(crate) fn forget_answer_frames(&mut self) {
        let current = self.sched.current;
        let others = self
            .sched
            .procs
            .iter_mut()
            .enumerate()
            .filter(|&(i, _)| i != current)
            .map(|(_, p)| &mut p.saved);
        for state in std::iter::once(&mut self.sched.running).chain(others) {
            for f in state.frames.iter_mut() {
                f.flags &= !crate::sched::Frame::ANSWER;
            }
        }
    }

    /// A watched call of `method` on `receiver` answered `v`; `changed`
    /// tells whether it changed a named field of the receiver, when they
    /// are compared. Answers the class of `v`.
    #[inline(always)]
    fn watched_answer(
        &mut self,
        method: u32,
        receiver: Value,
        v: Value,
        changed: Option<bool>,
    ) -> u32 {
        let class = self.class_of(v);
        self.obs.watches.answer(method, receiver, v, class, changed);
        class
    }

    /// Are the named fields of `receiver` now other than `before` (`len`
    /// of them, read before the call)?
    fn fields_changed(
        &self,
        receiver: Value,
        len: usize,
        mut before: impl Iterator<Item = Value>,
    ) -> bool {
        let n = self.named_field_count(receiver);
        n != len || (0..n).any(|i| before.next() != Some(self.heap.slot(receiver, i)))
    }

    /// The named fields of `v` now.
    fn named_fields(&mut self, v: Value) -> Fields {
        let mut f = Fields::default();
        for i in 0..self.named_field_count(v) {
            f.push(self.heap.slot(v, i));
        }
        f
    }

    /// How many named fields `v` has (none for an immediate or an instance
    /// of a metaclass, a class, whose fields are the VM's).
    fn named_field_count(&self, v: Value) -> usize {
        if !v.is_ptr() {
            return 0;
        }
        let c = self.heap.class_index(v);
        match self.image.classes.get(c as usize) {
            Some(info) if !info.is_meta && c != crate::objects::cls::METACLASS => {
                info.fields.len().min(self.heap.slot_count(v))
            }
            _ => 0,
        }
    }

    /// A key that tells objects apart by identity without keeping them: the
    /// identity hash and class of a heap object, the bits of an immediate.
    fn identity_key(&mut self, v: Value) -> u64 {
        if v.is_ptr() {
            let class = self.heap.class_index(v);
            (1 << 62) | (u64::from(self.heap.identity_hash(v)) << 32) | u64::from(class)
        } else {
            v.raw() & !(1 << 62)
        }
    }
}
