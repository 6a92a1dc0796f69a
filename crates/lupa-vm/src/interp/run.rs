//! The dispatch loop: [`Vm::send_message`] (the entry from Rust) and
//! [`Vm::interpret`], which runs the ops of the top frame until the frame stack of
//! the entry process is back to its base, plus the small frame and field helpers
//! the ops use.
//!
//! The top of the outer loop is the safepoint: garbage collection, the
//! out-of-memory signal, finalization, process switches and a stop requested
//! from outside (`sched::interrupt`) happen there (after every send and
//! return) and at backward jumps, never inside an op.

use super::{ENV_PARENT, ENV_VARS, OBSERVE};
use crate::objects::{MethodCode, cls};
use crate::vm::{Vm, VmError};
use lupa_compiler::Op;
use lupa_heap::Value;

impl Vm {
    #[inline(always)]
    pub(super) fn top(&self) -> Value {
        self.sched
            .running
            .stack
            .last()
            .copied()
            .unwrap_or(Value::NIL)
    }

    /// Send `selector` to `receiver` with `args` and run until it answers.
    pub fn send_message(
        &mut self,
        receiver: Value,
        selector: &str,
        args: &[Value],
    ) -> Result<Value, VmError> {
        let sel = self.image.intern(selector);
        let base = self.sched.running.frames.len();
        let entry_proc = self.sched.current;
        self.sched.running.stack.push(receiver);
        self.sched.running.stack.extend_from_slice(args);
        self.dispatch(sel, args.len(), None)?;
        if self.sched.running.frames.len() > base || self.sched.current != entry_proc {
            self.interpret(base, entry_proc)?;
        }
        Ok(pop!(self))
    }

    /// Run until the frame stack of process `entry_proc` is back to `base` frames.
    ///
    /// The loop exists twice ([`Vm::interpret_in`]): without per-send
    /// observation ([`Observation::per_send`] off), where a send costs nothing
    /// beyond the send counter, and with it (a lifetime recording, line
    /// coverage, guarded traps; [`Observation::on_send`] for sends counted by
    /// site and deterministic sampling). A sampler thread alone runs the
    /// first: its stack requests reach the safepoints of both loops through
    /// `sched/poll.rs`, the test they make for a stop requested from outside.
    /// (A third loop for the sampler alone made the unobserved loop 2%
    /// slower: LLVM inlines less into three copies.) A change of mode takes effect at the next
    /// safepoint, where the running loop hands over to the other one: the
    /// mode is changed only through the `Vm` methods that ask for that
    /// safepoint ([`Vm::observation_changed`]), so the loops test nothing
    /// more than they did.
    ///
    /// [`Observation::per_send`]: crate::obs::Observation::per_send
    /// [`Observation::on_send`]: crate::obs::Observation
    // Never inlined: inlined into `send_message` (as LLVM chose once the
    // observing loop's `PushBlock` published its allocation), the plain loop
    // ran 2.4% more instructions on Richards.
    #[inline(never)]
    pub(crate) fn interpret(&mut self, base: usize, entry_proc: usize) -> Result<(), VmError> {
        loop {
            let finished = if OBSERVE && self.obs.per_send {
                self.interpret_in::<true>(base, entry_proc)?
            } else {
                self.interpret_in::<false>(base, entry_proc)?
            };
            if finished {
                return Ok(());
            }
        }
    }

    /// The dispatch loop with per-send observation on (`PER_SEND`) or off:
    /// answers true when the entry process is back to `base` frames, false when
    /// the observation mode changed (at a safepoint; run the other loop).
    fn interpret_in<const PER_SEND: bool>(
        &mut self,
        base: usize,
        entry_proc: usize,
    ) -> Result<bool, VmError> {
        'frame: loop {
            // ---- safepoint ----
            if PER_SEND && self.heap.has_allocation_samples() {
                self.take_allocation_samples(None, true);
            }
            if self.heap.needs_gc() {
                self.collect_garbage()?;
                if self.heap.take_oom_signal() && !self.sched.running.frames.is_empty() {
                    self.signal_out_of_memory()?;
                    continue 'frame;
                }
                // Mourn at once: the finalization process preempts this one (unless
                // this one is about to end; then at its next yield or wait).
                if self.sched.finalization_due
                    && !self.sched.running.frames.is_empty()
                    && !(self.sched.current == entry_proc
                        && self.sched.running.frames.len() <= base)
                {
                    self.schedule_finalization();
                }
            }
            if self.sched.current == entry_proc && self.sched.running.frames.len() <= base {
                return Ok(true);
            }
            if self.poll_wanted() {
                self.poll_due(true)?;
            }
            if self.sched.running.frames.is_empty() {
                // A process other than the entry one has finished.
                self.process_finished()?;
                continue 'frame;
            }
            if self.sched.switch_pending {
                if self.native.has_pending() {
                    self.compile_pending();
                }
                if OBSERVE && self.obs.per_send != PER_SEND {
                    // The mode changed (Vm::observation_changed): the other loop
                    // takes over at this safepoint and looks at the scheduler.
                    return Ok(false);
                }
                self.switch_process()?;
                continue 'frame;
            }
            let (code, mut pc, bp) = match self.sched.running.frames.last() {
                Some(f) => (self.image.code(f.method).clone(), f.pc, f.bp),
                None => continue 'frame,
            };
            if let Some(f) = code.native.get()
                && self.native_allowed()
                && let super::native::Entered::Ran = self.enter_native(f, &code, pc, bp)?
            {
                continue 'frame;
            }
            loop {
                let Some(&op) = code.ops.get(pc) else {
                    return Err(self.fatal("internal error: fell off the end of a method"));
                };
                pc += 1;
                match op {
                    Op::PushSelf => {
                        let v = self.sched.running.stack[bp];
                        self.sched.running.stack.push(v);
                    }
                    Op::PushNil => self.sched.running.stack.push(Value::NIL),
                    Op::PushTrue => self.sched.running.stack.push(Value::TRUE),
                    Op::PushFalse => self.sched.running.stack.push(Value::FALSE),
                    Op::PushInt(i) => self.sched.running.stack.push(Value::small(i as i64)),
                    Op::PushLiteral(i) => {
                        let v = code.literals[i as usize].get();
                        self.sched.running.stack.push(v);
                    }
                    Op::PushLocal(i) => {
                        let v = self.sched.running.stack[bp + 1 + i as usize];
                        self.sched.running.stack.push(v);
                    }
                    Op::StoreLocal(i) => {
                        let v = self.top();
                        self.sched.running.stack[bp + 1 + i as usize] = v;
                    }
                    Op::PopLocal(i) => {
                        let v = pop!(self);
                        self.sched.running.stack[bp + 1 + i as usize] = v;
                    }
                    Op::PushEnv { depth, index } => {
                        let e = self.env_at(depth);
                        let v = self.heap.slot(e, ENV_VARS + index as usize);
                        self.sched.running.stack.push(v);
                    }
                    Op::StoreEnv { depth, index } => {
                        let e = self.env_at(depth);
                        let v = self.top();
                        self.heap.set_slot(e, ENV_VARS + index as usize, v);
                    }
                    Op::PopEnv { depth, index } => {
                        let e = self.env_at(depth);
                        let v = pop!(self);
                        self.heap.set_slot(e, ENV_VARS + index as usize, v);
                    }
                    Op::CopyArgToEnv { arg, index } => {
                        let e = self.env_at(0);
                        let v = self.sched.running.stack[bp + 1 + arg as usize];
                        self.heap.set_slot(e, ENV_VARS + index as usize, v);
                    }
                    Op::PushField(i) => {
                        let r = self.sched.running.stack[bp];
                        let v = self.field(r, i as usize);
                        self.sched.running.stack.push(v);
                    }
                    Op::StoreField(i) => {
                        let r = self.sched.running.stack[bp];
                        let v = self.top();
                        self.set_field(r, i as usize, v);
                    }
                    Op::PopField(i) => {
                        let r = self.sched.running.stack[bp];
                        let v = pop!(self);
                        self.set_field(r, i as usize, v);
                    }
                    Op::PushGlobal(i) => {
                        let sym = code.literals[i as usize].get();
                        let id = code.sel_ids[i as usize].get();
                        match self.image.globals.get(&id) {
                            Some(&v) => self.sched.running.stack.push(v),
                            None => {
                                self.save_pc(pc);
                                let r = self.sched.running.stack[bp];
                                self.sched.running.stack.push(r);
                                self.sched.running.stack.push(sym);
                                // A VM-initiated send: not counted (see observe.rs).
                                let sel = self.image.sym_cache.unknown_global;
                                self.dispatch(sel, 1, None)?;
                                continue 'frame;
                            }
                        }
                    }
                    Op::PushBlock(i) => {
                        // Not published as an allocation (a bump allocation, as
                        // activation environments and boxed Doubles are).
                        let clo = self.make_closure(&code.blocks[i as usize], bp)?;
                        self.sched.running.stack.push(clo);
                    }
                    Op::Pop => {
                        self.sched.running.stack.pop();
                    }
                    Op::Dup => {
                        let v = self.top();
                        self.sched.running.stack.push(v);
                    }
                    Op::Send { sel, argc, site } => {
                        self.save_pc(pc);
                        self.note_send::<PER_SEND>(code.id, pc);
                        let id = code.sel_ids[sel as usize].get();
                        self.dispatch(id, argc as usize, Some((&code, site as usize)))?;
                        continue 'frame;
                    }
                    Op::SuperSend { sel, argc, site: _ } => {
                        self.save_pc(pc);
                        self.note_send::<PER_SEND>(code.id, pc);
                        let id = code.sel_ids[sel as usize].get();
                        // No superclass: class index 0 has no methods, so doesNotUnderstand.
                        let start = self.image.classes[code.holder.get() as usize]
                            .superclass
                            .unwrap_or(0);
                        self.dispatch_in(start, id, argc as usize, None)?;
                        continue 'frame;
                    }
                    Op::Special { op, sel, site } => {
                        self.note_send::<PER_SEND>(code.id, pc);
                        // Observing, a send whose method is instrumented is
                        // sent (the trap runs), never taken by its fast path.
                        let instrumented = OBSERVE
                            && PER_SEND
                            && self.obs.guarding_traps
                            && self.special_is_instrumented(&code, sel, site, op);
                        if !instrumented && self.special(op, &code)? {
                            continue;
                        }
                        self.save_pc(pc);
                        self.special_send(&code, op, sel, site, !instrumented)?;
                        continue 'frame;
                    }
                    Op::ReturnTop => {
                        let v = pop!(self);
                        self.return_from_top(v)?;
                        continue 'frame;
                    }
                    Op::ReturnSelf => {
                        let v = self.sched.running.stack[bp];
                        self.return_from_top(v)?;
                        continue 'frame;
                    }
                    Op::ReturnNonLocal => {
                        self.save_pc(pc);
                        let v = pop!(self);
                        self.non_local_return(v)?;
                        continue 'frame;
                    }
                    Op::Jump(t) => {
                        pc = t as usize;
                        self.cover_branch::<PER_SEND>(code.id, pc);
                    }
                    Op::JumpBack(t) => {
                        pc = t as usize;
                        self.cover_branch::<PER_SEND>(code.id, pc);
                        self.count_hotness(&code);
                        if self.poll_wanted() || crate::sched::poll::changed(self.obs.polled) {
                            // A loop that sends nothing still answers a stop
                            // or a sampler thread's request at once.
                            self.save_pc(pc);
                            self.poll_due(false)?;
                        }
                        if self.heap.needs_gc() || self.sched.switch_pending {
                            self.save_pc(pc);
                            continue 'frame;
                        }
                    }
                    Op::JumpIfTrue { target, inlined } | Op::JumpIfFalse { target, inlined } => {
                        let v = pop!(self);
                        if inlined && OBSERVE {
                            self.obs.inlined += 1;
                        }
                        let want = matches!(op, Op::JumpIfTrue { .. });
                        if v == Value::TRUE {
                            if want {
                                pc = target as usize;
                            }
                        } else if v == Value::FALSE {
                            if !want {
                                pc = target as usize;
                            }
                        } else {
                            // Send mustBeBoolean and re-execute this jump with its answer.
                            self.save_pc(pc - 1);
                            self.sched.running.stack.push(v);
                            let sel = self.image.sym_cache.must_be_boolean;
                            self.dispatch(sel, 0, None)?;
                            continue 'frame;
                        }
                        self.cover_branch::<PER_SEND>(code.id, pc);
                    }
                    Op::JumpIfNil { target, inlined } => {
                        let v = pop!(self);
                        if inlined && OBSERVE {
                            self.obs.inlined += 1;
                        }
                        if v == Value::NIL {
                            pc = target as usize;
                        }
                        self.cover_branch::<PER_SEND>(code.id, pc);
                    }
                    Op::JumpIfNotNil { target, inlined } => {
                        let v = pop!(self);
                        if inlined && OBSERVE {
                            self.obs.inlined += 1;
                        }
                        if v != Value::NIL {
                            pc = target as usize;
                        }
                        self.cover_branch::<PER_SEND>(code.id, pc);
                    }
                    Op::ForTest {
                        counter,
                        limit,
                        step,
                        exit,
                    } => {
                        if OBSERVE {
                            self.obs.inlined += 1;
                        }
                        let c = self.sched.running.stack[bp + 1 + counter as usize];
                        let l = self.sched.running.stack[bp + 1 + limit as usize];
                        let done = match (c.as_int(), l.as_int()) {
                            (Some(a), Some(b)) => {
                                if step > 0 {
                                    a > b
                                } else {
                                    a < b
                                }
                            }
                            _ => match (self.number_as_f64(c), self.number_as_f64(l)) {
                                // Written as !(a <= b) so that a NaN bound ends the loop, as
                                // SOM's `[i <= limit] whileTrue:` does.
                                (Some(a), Some(b)) => {
                                    if step > 0 {
                                        a.partial_cmp(&b)
                                            .is_none_or(|o| o == std::cmp::Ordering::Greater)
                                    } else {
                                        a.partial_cmp(&b)
                                            .is_none_or(|o| o == std::cmp::Ordering::Less)
                                    }
                                }
                                _ => {
                                    self.save_pc(pc);
                                    let r = self.sched.running.stack[bp];
                                    self.sched.running.stack.push(r);
                                    self.send_error(0, "to:do: needs numbers as bounds")?;
                                    continue 'frame;
                                }
                            },
                        };
                        if done {
                            pc = exit as usize;
                        }
                        self.cover_branch::<PER_SEND>(code.id, pc);
                    }
                    Op::ForIncr {
                        counter,
                        step,
                        target,
                    } => {
                        let slot = bp + 1 + counter as usize;
                        let c = self.sched.running.stack[slot];
                        let next = match c
                            .as_int()
                            .and_then(|a| a.checked_add(step as i64))
                            .and_then(Value::from_i64)
                        {
                            Some(v) => v,
                            None => match self.number_as_f64(c) {
                                Some(d) => self.new_double(d + step as f64)?,
                                None => crate::prims::integer::add_values(
                                    self,
                                    c,
                                    Value::small(step as i64),
                                )?,
                            },
                        };
                        self.sched.running.stack[slot] = next;
                        pc = target as usize;
                        self.cover_branch::<PER_SEND>(code.id, pc);
                        self.count_hotness(&code);
                        if self.poll_wanted() {
                            // A loop whose sends make no frames (primitives,
                            // fast paths, trivial methods) polls here.
                            self.save_pc(pc);
                            self.poll_due(false)?;
                        }
                        if self.heap.needs_gc() || self.sched.switch_pending {
                            self.save_pc(pc);
                            continue 'frame;
                        }
                    }
                }
            }
        }
    }

    /// Line coverage: a branch (taken or not) starts a run at `pc` of
    /// `method` (only in the observing loop, only while covering lines).
    #[inline(always)]
    fn cover_branch<const PER_SEND: bool>(&mut self, method: u32, pc: usize) {
        if OBSERVE && PER_SEND && self.obs.covering_lines() && !self.sched.running.at_meta_level() {
            self.mark_run(method, pc);
        }
    }

    /// Observation at a send executed by the instruction before `pc` of
    /// `method`: count it and, while a sampler is attached or sends are counted
    /// by site, tell the observation ([`Observation::on_send`]).
    ///
    /// [`Observation::on_send`]: crate::obs::Observation
    #[inline(always)]
    pub(super) fn note_send<const PER_SEND: bool>(&mut self, method: u32, pc: usize) {
        if OBSERVE {
            self.obs.sends += 1;
            if PER_SEND {
                self.observe_send(method, pc);
            }
        }
    }

    /// The per-send observation of a send just counted (see
    /// [`note_send`](Self::note_send)): the lifetime recorder's samples and
    /// [`Observation::on_send`].
    ///
    /// [`Observation::on_send`]: crate::obs::Observation
    #[inline(always)]
    pub(super) fn observe_send(&mut self, method: u32, pc: usize) {
        if self.heap.has_allocation_samples() {
            self.take_allocation_samples(Some(pc), true);
        }
        if self.obs.on_each_send && self.obs.on_send(method, pc) {
            self.copy_sample_stack(pc);
        }
    }

    /// Is a poll due (`obs/self_timed.rs`)? The safepoints' one test: the
    /// send counter against the count at which the next poll is due (without
    /// the send counter, in a `no-observe` build: a request announced).
    #[inline(always)]
    pub(super) fn poll_wanted(&self) -> bool {
        if OBSERVE {
            self.obs.sends >= self.obs.poll_at.get()
        } else {
            crate::sched::poll::changed(self.obs.polled)
        }
    }

    /// A poll: requests from other threads, announced since the last one
    /// ([`poll`](Self::poll)), and a self-timed sampler's clock. `at_frame`
    /// as for `poll`.
    #[cold]
    #[inline(never)]
    pub(super) fn poll_due(&mut self, at_frame: bool) -> Result<(), VmError> {
        if crate::sched::poll::changed(self.obs.polled) {
            self.poll(at_frame)?;
        }
        self.self_timed_poll(None, at_frame);
        Ok(())
    }

    /// The clock of a self-timed sampler at a poll (`obs/self_timed.rs`):
    /// copy the stack when a sample is due; schedule the next poll. Also
    /// where the compiler thread's finished work is noticed. `top_pc`
    /// as for [`copy_sample_stack`](Self::copy_sample_stack).
    pub(super) fn self_timed_poll(&mut self, top_pc: Option<usize>, at_frame: bool) {
        self.poll_compiler_thread();
        if !self.obs.self_timed() {
            self.obs.schedule_poll();
            return;
        }
        if let Some(seq) = self.obs.self_poll() {
            self.copy_stack(seq, top_pc, at_frame);
        }
    }

    /// A safepoint found a request from another thread announced
    /// (`sched/poll.rs`): end the run when a stop was requested, copy the
    /// running stack when this VM's sampler asked for it. `at_frame`: the
    /// safepoint before the dispatch loop runs the top frame, which may be an
    /// activation just made by a send, not yet running: the sample is then
    /// the sender's, at its send (as a sample taken at the send instruction
    /// would be), since the callee has run nothing yet.
    #[cold]
    #[inline(never)]
    pub(super) fn poll(&mut self, at_frame: bool) -> Result<(), VmError> {
        let generation = crate::sched::poll::current();
        if crate::sched::interrupt::pending() {
            // Not marked seen: every later safepoint stops again.
            return Err(self.interrupted());
        }
        self.obs.polled = generation;
        let seq = self.obs.take_request();
        if seq != 0 {
            self.copy_stack(seq, None, at_frame);
        }
        Ok(())
    }

    /// Observation of a send made by a primitive (`perform:`, `invokeOn:with:`)
    /// on behalf of the instruction that called it: counted at that
    /// instruction's site.
    #[inline]
    pub(crate) fn note_prim_send(&mut self) {
        if OBSERVE {
            self.obs.sends += 1;
            if self.obs.on_each_send
                && let Some((id, pc)) = self.sched.running.frames.last().map(|f| (f.method, f.pc))
                && self.obs.on_send(id, pc)
            {
                self.copy_sample_stack(pc);
            }
        }
    }

    /// Copy the running stack for the samples due now (a sampler's request,
    /// a deterministic period or both); `pc` is the top frame's current
    /// position (its saved pc may be stale inside a send).
    #[cold]
    #[inline(never)]
    pub(super) fn copy_sample_stack(&mut self, pc: usize) {
        let (seq, every) = self.obs.take_due();
        if seq == 0 && !every {
            return;
        }
        if every {
            self.copy_stack(0, Some(pc), false);
        }
        if seq != 0 {
            self.copy_stack(seq, Some(pc), false);
        }
    }

    /// Copy the running stack for a sample tagged `seq` into the
    /// observation's stack log: every frame at its saved pc, the top one at
    /// `top_pc` when given (its saved pc may be stale inside a send).
    /// `skip_entered`: leave out a top frame that has not run its first
    /// instruction (see [`Vm::poll`]).
    pub(super) fn copy_stack(&mut self, seq: u64, top_pc: Option<usize>, skip_entered: bool) {
        let all = &self.sched.running.frames;
        let mut n = all.len();
        if skip_entered && n > 1 && all[n - 1].pc == 0 {
            n -= 1;
        }
        let skip = n.saturating_sub(crate::obs::sampling::MAX_STACK);
        let frames = &all[skip..n];
        // The top frame's pc is the interpreter's (not saved yet) when given.
        let (body, top) = match frames.split_last() {
            Some((t, body)) => (body, Some((t.method, top_pc.unwrap_or(t.pc) as u32))),
            None => (frames, None),
        };
        let (process, sends) = (self.sched.current as u32, self.obs.sends);
        self.obs
            .stack_log()
            .push(seq, process, skip > 0, sends, (body, top), |f| {
                (f.method, f.pc as u32)
            });
    }

    /// A closure of `block` (a block of the top frame's code, whose receiver
    /// is at `bp`) over the frame's environment.
    #[inline(always)]
    pub(super) fn make_closure(
        &mut self,
        block: &MethodCode,
        bp: usize,
    ) -> Result<Value, lupa_heap::OutOfMemory> {
        let c = match block.num_args {
            0 => cls::BLOCK1,
            1 => cls::BLOCK2,
            2 => cls::BLOCK3,
            3 => cls::BLOCK4,
            _ => cls::BLOCK,
        };
        let recv = self.sched.running.stack[bp];
        let env = self
            .sched
            .running
            .frames
            .last()
            .map(|f| f.env)
            .unwrap_or(Value::NIL);
        let id = Value::small(block.id as i64);
        self.heap.alloc_with(c, &[id, recv, env])
    }

    #[inline(always)]
    pub(super) fn save_pc(&mut self, pc: usize) {
        if let Some(f) = self.sched.running.frames.last_mut() {
            f.pc = pc;
        }
    }

    #[inline(always)]
    pub(super) fn env_at(&self, depth: u8) -> Value {
        let mut e = self
            .sched
            .running
            .frames
            .last()
            .map(|f| f.env)
            .unwrap_or(Value::NIL);
        for _ in 0..depth {
            e = self.heap.slot(e, ENV_PARENT);
        }
        e
    }

    #[inline(always)]
    pub(super) fn field(&self, r: Value, i: usize) -> Value {
        if r.is_ptr() && i < self.heap.size(r) {
            self.heap.slot(r, i)
        } else {
            Value::NIL
        }
    }

    #[inline(always)]
    pub(super) fn set_field(&mut self, r: Value, i: usize, v: Value) {
        if r.is_ptr() && i < self.heap.size(r) {
            self.heap.set_slot(r, i, v);
        }
    }
}
