//! The interpreter's side of method watches (`obs/watch.rs`): a call of a
//! watched method is recorded before it runs, and its end when it answers.
//! Out of line: `invoke` only tests whether a watch is on.

use std::rc::Rc;

use crate::objects::MethodCode;
use crate::obs::watch::{ARGUMENTS, AT_THE_END, Fields, RECEIVER_FIELDS, RECEIVERS};
use crate::vm::{Vm, VmError};
use lupa_heap::Value;

impl Vm {
    /// [`Vm::invoke`] while a watch is on: record the call when a watch
    /// names `m` and the caller runs at the base level, run it, and record
    /// its end (at once when it answered without a frame, else when the
    /// frame it pushed returns).
    #[inline(never)]
    pub(super) fn invoke_watched(&mut self, m: Rc<MethodCode>, argc: usize) -> Result<(), VmError> {
        let wants = self.obs.watches.wants(m.id);
        if wants == 0 || self.sched.running.at_meta_level() {
            return self.invoke_unwatched(m, argc);
        }
        let bp = self.sched.running.stack.len() - 1 - argc;
        let receiver = self.sched.running.stack[bp];
        let key = if wants & RECEIVERS != 0 {
            self.identity_key(receiver)
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
        self.obs.watches.call(m.id, key, &classes[..n]);
        if wants & AT_THE_END == 0 {
            return self.invoke_unwatched(m, argc);
        }
        let fields = (wants & RECEIVER_FIELDS != 0 && self.obs.watches.compares_fields(m.id))
            .then(|| self.named_fields(receiver));
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
                self.watched_answer(id, receiver, v, changed);
            }
        } else if frames == depth + 1 {
            self.obs
                .watches
                .expect_answer(process, depth, id, receiver, fields.as_ref());
            if let Some(f) = self.sched.running.frames.last_mut() {
                f.flags |= crate::sched::Frame::WATCHED;
            }
        }
        Ok(())
    }

    /// The top frame returns `v`: when it answers for a watched call, record
    /// its end.
    #[inline(never)]
    pub(super) fn watched_return(&mut self, v: Value) {
        let Some(depth) = self.sched.running.frames.len().checked_sub(1) else {
            return;
        };
        if let Some(p) = self.obs.watches.answered(self.sched.current, depth) {
            let changed = p.fields.map(|s| {
                let before = self.obs.watches.fields(s);
                self.fields_changed(p.receiver, before.len(), before.iter().copied())
            });
            self.watched_answer(p.method, p.receiver, v, changed);
        }
    }

    /// A watched call of `method` on `receiver` answered `v`; `changed`
    /// tells whether it changed a named field of the receiver, when they
    /// are compared.
    fn watched_answer(&mut self, method: u32, receiver: Value, v: Value, changed: Option<bool>) {
        let class = self.class_of(v);
        self.obs.watches.answer(method, receiver, v, class, changed);
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
