//! The interpreter: frames, the dispatch loop, message sends, returns and unwinding.
//!
//! The loop never recurses on the Rust stack per Smalltalk send: a send pushes a
//! [`Frame`] and the loop continues in the new frame. Garbage collection and
//! process switches happen only at safepoints (the top of the outer loop, which
//! runs after every send and return, and backward jumps), where every live value
//! is in a frame slot, a global or another root.

use crate::objects::{MethodCode, cls};
use crate::prims::{Args, PrimFailure, Reply};
use crate::vm::{Lookup, Vm, VmError};
use lupa_compiler::{CodeKind, Op, SpecialOp};
use lupa_heap::Value;
use std::rc::Rc;

/// An activation of a method or block.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The code being run.
    pub code: Rc<MethodCode>,
    /// Index of the next instruction (saved at sends).
    pub pc: usize,
    /// Stack index of the receiver slot.
    pub bp: usize,
    /// Effective environment (own env, or the closure's outer env, or nil).
    pub env: Value,
    /// The block closure being run (nil for a method frame).
    pub closure: Value,
}

/// How an unwind ends.
#[derive(Debug, Clone, Copy)]
pub enum UnwindAction {
    /// Return this value from the target frame.
    Return(Value),
    /// Restart the target frame.
    Restart,
    /// Pop every frame: the process ends.
    Terminate,
}

/// An unwind interrupted to run an `ensure:` block, resumed when the block returns.
#[derive(Debug, Clone, Copy)]
pub struct PendingUnwind {
    /// Frame index of the ensure block's activation.
    pub watch: usize,
    /// Frame to unwind to (`usize::MAX` with `Terminate`).
    pub target: usize,
    /// What to do there.
    pub action: UnwindAction,
}

impl PendingUnwind {
    /// Report GC roots.
    pub fn visit_roots(&mut self, f: &mut dyn FnMut(&mut Value)) {
        if let UnwindAction::Return(v) = &mut self.action {
            f(v);
        }
    }
}

/// The saved state of a process that is not running.
#[derive(Debug, Default)]
pub struct ProcessState {
    /// Value stack.
    pub stack: Vec<Value>,
    /// Frames.
    pub frames: Vec<Frame>,
    /// Interrupted unwinds.
    pub pending_unwinds: Vec<PendingUnwind>,
    /// Frame index whose return resumes the innermost pending unwind.
    pub unwind_watch: usize,
    /// Number of active `<metaLevel>` frames.
    pub meta_depth: u32,
}

impl ProcessState {
    /// Report GC roots.
    pub fn visit_roots(&mut self, f: &mut dyn FnMut(&mut Value)) {
        for v in self.stack.iter_mut() {
            f(v);
        }
        for fr in self.frames.iter_mut() {
            f(&mut fr.env);
            f(&mut fr.closure);
        }
        for u in self.pending_unwinds.iter_mut() {
            u.visit_roots(f);
        }
    }
}

/// Symbols the interpreter sends by itself.
#[derive(Debug, Default, Clone, Copy)]
pub struct WellKnownSymbols {
    pub(crate) dnu: u32,
    pub(crate) run_with_in: u32,
    pub(crate) escaped_block: u32,
    pub(crate) unknown_global: u32,
    pub(crate) must_be_boolean: u32,
    pub(crate) error: u32,
    pub(crate) value: u32,
    pub(crate) is_nil: u32,
    pub(crate) not_nil: u32,
    pub(crate) identical: u32,
    pub(crate) equal: u32,
}

impl WellKnownSymbols {
    pub(crate) fn new(vm: &mut Vm) -> Self {
        WellKnownSymbols {
            dnu: vm.intern("doesNotUnderstand:arguments:"),
            run_with_in: vm.intern("run:with:in:"),
            escaped_block: vm.intern("escapedBlock:"),
            unknown_global: vm.intern("unknownGlobal:"),
            must_be_boolean: vm.intern("mustBeBoolean"),
            error: vm.intern("error:"),
            value: vm.intern("value"),
            is_nil: vm.intern("isNil"),
            not_nil: vm.intern("notNil"),
            identical: vm.intern("=="),
            equal: vm.intern("="),
        }
    }
}

/// Observation points compiled in (the default). The `no-observe` feature builds a
/// VM without them, only to measure what they cost.
pub(crate) const OBSERVE: bool = !cfg!(feature = "no-observe");

/// Slots of a block closure.
pub(crate) const BLOCK_CODE: usize = 0;
pub(crate) const BLOCK_RECEIVER: usize = 1;
pub(crate) const BLOCK_OUTER: usize = 2;
/// Slots of an environment.
pub(crate) const ENV_PARENT: usize = 0;
pub(crate) const ENV_ALIVE: usize = 1;
pub(crate) const ENV_VARS: usize = 2;

macro_rules! pop {
    ($vm:expr) => {
        $vm.stack.pop().unwrap_or(Value::NIL)
    };
}

impl Vm {
    #[inline(always)]
    fn top(&self) -> Value {
        self.stack.last().copied().unwrap_or(Value::NIL)
    }

    /// Send `selector` to `receiver` with `args` and run until it answers.
    pub fn send_message(
        &mut self,
        receiver: Value,
        selector: &str,
        args: &[Value],
    ) -> Result<Value, VmError> {
        let sel = self.intern(selector);
        let base = self.frames.len();
        let entry_proc = self.procs.current;
        self.stack.push(receiver);
        self.stack.extend_from_slice(args);
        self.dispatch(sel, args.len(), None)?;
        if self.frames.len() > base || self.procs.current != entry_proc {
            self.interpret(base, entry_proc)?;
        }
        Ok(pop!(self))
    }

    /// Is the value a block closure? Answers its code.
    #[inline]
    pub(crate) fn closure_code(&self, v: Value) -> Option<&Rc<MethodCode>> {
        if !v.is_ptr() {
            return None;
        }
        let c = self.heap.class_index(v);
        if !(cls::BLOCK..=cls::BLOCK4).contains(&c) {
            return None;
        }
        let id = self.heap.slot(v, BLOCK_CODE).as_int()?;
        self.methods.get(id as usize)
    }

    /// Send `sel` to the receiver under `argc` arguments on the stack.
    pub(crate) fn dispatch(
        &mut self,
        sel: u32,
        argc: usize,
        cache: Option<(&MethodCode, usize)>,
    ) -> Result<(), VmError> {
        let recv = self.stack[self.stack.len() - 1 - argc];
        let c = self.class_of(recv);
        if let Some((code, site)) = cache {
            let ic = code.caches[site].get();
            if ic.class == c && ic.epoch == self.epoch {
                if let Some(t) = self.methods[ic.method as usize].trivial
                    && !self.obs.hooks_on
                {
                    self.run_trivial(ic.method as usize, t, argc);
                    return Ok(());
                }
                let m = self.methods[ic.method as usize].clone();
                return self.invoke(m, argc);
            }
        }
        self.dispatch_in(c, sel, argc, cache)
    }

    pub(crate) fn dispatch_in(
        &mut self,
        c: u32,
        sel: u32,
        argc: usize,
        cache: Option<(&MethodCode, usize)>,
    ) -> Result<(), VmError> {
        match self.lookup(c, sel) {
            Lookup::Method(id) => {
                if let Some((code, site)) = cache {
                    code.caches[site].set(crate::objects::InlineCache {
                        class: c,
                        epoch: self.epoch,
                        method: id,
                    });
                }
                let m = self.methods[id as usize].clone();
                self.invoke(m, argc)
            }
            Lookup::Object(obj) => {
                // objects as methods: obj run: selector with: args in: receiver
                let args = self.stack.split_off(self.stack.len() - argc);
                let recv = pop!(self);
                let arr = self.new_array(&args)?;
                let s = self.symbol_object(sel)?;
                self.stack.extend_from_slice(&[obj, s, arr, recv]);
                let rwi = self.sym_cache.run_with_in;
                let oc = self.class_of(obj);
                self.dispatch_in(oc, rwi, 3, None)
            }
            Lookup::NotFound => {
                let dnu = self.sym_cache.dnu;
                if sel == dnu {
                    let recv = self.stack[self.stack.len() - 1 - argc];
                    let name = self.class_name(self.class_of(recv)).to_string();
                    return Err(self.fatal(&format!(
                        "{name} does not understand #doesNotUnderstand:arguments:"
                    )));
                }
                let args = self.stack.split_off(self.stack.len() - argc);
                let arr = self.new_array(&args)?;
                let s = self.symbol_object(sel)?;
                self.stack.push(s);
                self.stack.push(arr);
                self.dispatch_in(c, dnu, 2, None)
            }
        }
    }

    /// Run a trivial method without a frame: receiver and arguments are replaced by its answer.
    #[inline(always)]
    fn run_trivial(&mut self, method: usize, t: crate::objects::Trivial, argc: usize) {
        use crate::objects::Trivial as T;
        let n = self.stack.len() - 1 - argc;
        let recv = self.stack[n];
        let v = match t {
            T::Getter(i) => self.field(recv, i as usize),
            T::Setter(i) => {
                let a = self.stack[n + 1];
                self.set_field(recv, i as usize, a);
                recv
            }
            T::ReturnSelf => recv,
            T::Literal(k) => self.methods[method].literals[k as usize].get(),
            T::Int(i) => Value::small(i as i64),
            T::Nil => Value::NIL,
            T::True => Value::TRUE,
            T::False => Value::FALSE,
        };
        self.stack.truncate(n);
        self.stack.push(v);
    }

    /// Run method `m` on the receiver and `argc` arguments on the stack.
    #[inline]
    pub(crate) fn invoke(&mut self, m: Rc<MethodCode>, argc: usize) -> Result<(), VmError> {
        if m.trap_shortcut
            && m.literals.len() > 1
            && (m.literals[0].get() != Value::TRUE || self.meta_depth > 0)
        {
            // A disabled proxy, or a call made by instrumentation code: go straight to
            // the original (literal 2), through the trap's first send site's cache.
            let sel = m.sel_ids[1].get();
            let site = (!m.caches.is_empty()).then_some((&*m, 0));
            return self.dispatch(sel, argc, site);
        }
        if let Some(t) = m.trivial
            && !self.obs.hooks_on
        {
            self.run_trivial(m.id as usize, t, argc);
            return Ok(());
        }
        if let Some(p) = m.primitive.get() {
            match p(self, Args::new(argc)) {
                Ok(Reply::Answer(v)) => {
                    let n = self.stack.len() - argc - 1;
                    self.stack.truncate(n);
                    self.stack.push(v);
                    return Ok(());
                }
                Ok(Reply::Done) => return Ok(()),
                Err(PrimFailure::Abort(e)) => return Err(e),
                // A failing primitive with a Smalltalk body runs the body (the fallback).
                Err(_) if !m.primitive_only => {}
                Err(PrimFailure::Error(msg)) => return self.send_error(argc, &msg),
                Err(PrimFailure::WrongArg { .. } | PrimFailure::Fail) => {
                    let msg = format!(
                        "primitive {}>>{} failed",
                        self.class_name(m.holder.get()),
                        m.selector_name
                    );
                    return self.send_error(argc, &msg);
                }
            }
        }
        if m.primitive_only && m.primitive.get().is_none() {
            let msg = format!(
                "primitive {}>>{} is not implemented by Lupa",
                self.class_name(m.holder.get()),
                m.selector_name
            );
            return self.send_error(argc, &msg);
        }
        self.activate(m, argc, Value::NIL, Value::NIL)
    }

    /// Replace the pending send (receiver + argc args on the stack) by `receiver error: msg`.
    pub(crate) fn send_error(&mut self, argc: usize, msg: &str) -> Result<(), VmError> {
        let n = self.stack.len() - argc;
        self.stack.truncate(n);
        let s = self.new_string(msg)?;
        self.stack.push(s);
        let recv = self.stack[self.stack.len() - 2];
        let c = self.class_of(recv);
        let err = self.sym_cache.error;
        match self.lookup(c, err) {
            Lookup::NotFound => Err(self.fatal(msg)),
            _ => self.dispatch_in(c, err, 1, None),
        }
    }

    /// Push a frame for `m`: receiver and arguments are already on the stack.
    /// `outer` is the closure's outer env for blocks.
    #[inline(always)]
    pub(crate) fn activate(
        &mut self,
        m: Rc<MethodCode>,
        argc: usize,
        outer: Value,
        closure: Value,
    ) -> Result<(), VmError> {
        if self.frames.len() >= self.frame_limit {
            return self.stack_overflow(argc);
        }
        let bp = self.stack.len() - 1 - argc;
        if m.num_temps > 0 {
            self.stack
                .resize(self.stack.len() + m.num_temps, Value::NIL);
        }
        let env = if m.has_env() {
            let e = self.heap.alloc_pointers(cls::ENV, ENV_VARS + m.env_size)?;
            self.heap.set_slot(e, ENV_PARENT, outer);
            if m.kind == CodeKind::Method {
                self.heap.set_slot(e, ENV_ALIVE, Value::TRUE);
            }
            e
        } else {
            outer
        };
        if OBSERVE && self.obs.hooks_on {
            let rc = self.class_of(self.stack[bp]);
            let depth = self.frames.len();
            let ev = crate::observe::Activation {
                method: m.id,
                receiver_class: rc,
                depth,
                process: self.procs.current,
                sends: self.obs.sends,
            };
            self.obs.enter(ev);
        }
        if m.meta_level {
            self.meta_depth += 1;
        }
        self.frames.push(Frame {
            code: m,
            pc: 0,
            bp,
            env,
            closure,
        });
        Ok(())
    }

    /// Activate a block closure that is under `argc` arguments on the stack.
    pub(crate) fn activate_block(&mut self, closure: Value, argc: usize) -> Result<(), VmError> {
        let Some(code) = self.closure_code(closure).cloned() else {
            return Err(self.fatal("not a block"));
        };
        if code.num_args != argc {
            let msg = format!(
                "wrong number of arguments: block expects {} but got {}",
                code.num_args, argc
            );
            return self.send_error(argc, &msg);
        }
        let bp = self.stack.len() - 1 - argc;
        self.stack[bp] = self.heap.slot(closure, BLOCK_RECEIVER);
        let outer = self.heap.slot(closure, BLOCK_OUTER);
        self.activate(code, argc, outer, closure)
    }

    fn stack_overflow(&mut self, argc: usize) -> Result<(), VmError> {
        if self.in_overflow {
            return Err(self.fatal("stack overflow while handling a stack overflow"));
        }
        self.in_overflow = true;
        self.frame_limit = self.options.max_frames + 10_000;
        let msg = format!(
            "stack overflow: more than {} nested activations (--max-stack-depth)",
            self.options.max_frames
        );
        self.send_error(argc, &msg)
    }

    /// The heap went past `--max-heap`: send `error:` to the running frame's receiver.
    fn signal_out_of_memory(&mut self) -> Result<(), VmError> {
        let Some(f) = self.frames.last() else {
            return Ok(());
        };
        let recv = self.stack[f.bp];
        let max = self.heap.config().max_bytes;
        self.stack.push(recv);
        self.send_error(
            0,
            &format!(
                "out of memory: the heap is full (--max-heap {} MB)",
                max >> 20
            ),
        )
    }

    /// Build a fatal error with a Smalltalk backtrace.
    pub fn fatal(&mut self, msg: &str) -> VmError {
        self.flush();
        VmError::Fatal(format!("{msg}\n{}", self.backtrace(30)))
    }

    /// The current process's backtrace, innermost first, at most `limit` frames
    /// (the outermost frames are elided in the middle).
    pub fn backtrace(&self, limit: usize) -> String {
        let mut out = String::new();
        let n = self.frames.len();
        for (k, i) in (0..n).rev().enumerate() {
            if n > limit && k == limit / 2 {
                out.push_str(&format!("  ... {} more frames ...\n", n - limit));
            }
            if n > limit && k >= limit / 2 && k < n - limit / 2 {
                continue;
            }
            out.push_str("  ");
            out.push_str(&self.describe_frame(i));
            out.push('\n');
        }
        out
    }

    /// `Class>>selector (file:line)`, or `[] in Class>>selector (file:line)`.
    pub fn describe_frame(&self, i: usize) -> String {
        let f = &self.frames[i];
        let code = &f.code;
        let pc = f.pc.saturating_sub(1);
        let holder = self.class_name(code.holder.get());
        let prefix = if code.kind == CodeKind::Block {
            "[] in "
        } else {
            ""
        };
        format!(
            "{prefix}{holder}>>{} ({}:{})",
            code.selector_name,
            code.file,
            code.line_of(pc)
        )
    }

    /// Pop the top frame: leave its meta level, mark its home env dead, and tell the
    /// activation hooks (`unwinding`: popped by an unwind rather than a return).
    /// The caller truncates the stack.
    #[inline(always)]
    fn pop_frame(&mut self, unwinding: bool) -> Option<Frame> {
        let f = self.frames.pop()?;
        if f.code.meta_level {
            self.meta_depth -= 1;
        }
        if f.code.home_env {
            self.heap.set_slot(f.env, ENV_ALIVE, Value::NIL);
        }
        if OBSERVE && self.obs.hooks_on {
            let ev = self.exit_event(&f);
            self.obs.exit(ev, unwinding);
        }
        Some(f)
    }

    /// Pop the top frame, answering `v` to its sender. Handles unwind resumption.
    #[inline]
    fn return_from_top(&mut self, v: Value) -> Result<(), VmError> {
        let Some(f) = self.pop_frame(false) else {
            return Ok(());
        };
        self.stack.truncate(f.bp + 1);
        self.stack[f.bp] = v;
        if self.frames.len() == self.unwind_watch {
            self.resume_unwind()?;
        }
        if self.in_overflow && self.frames.len() + 1000 < self.options.max_frames {
            self.in_overflow = false;
            self.frame_limit = self.options.max_frames;
        }
        Ok(())
    }

    fn exit_event(&self, f: &Frame) -> crate::observe::Activation {
        crate::observe::Activation {
            method: f.code.id,
            receiver_class: self.class_of(self.stack.get(f.bp).copied().unwrap_or(Value::NIL)),
            depth: self.frames.len(),
            process: self.procs.current,
            sends: self.obs.sends,
        }
    }

    /// An ensure block run during an unwind has returned: continue the unwind.
    fn resume_unwind(&mut self) -> Result<(), VmError> {
        let Some(u) = self.pending_unwinds.pop() else {
            self.unwind_watch = usize::MAX;
            return Ok(());
        };
        self.unwind_watch = self
            .pending_unwinds
            .last()
            .map(|p| p.watch)
            .unwrap_or(usize::MAX);
        let _ = pop!(self); // the ensure block's value
        self.unwind_to(u.target, u.action)
    }

    /// Unwind the current process down to frame `target` (exclusive: it stays),
    /// running `<unwindProtect>` blocks, then perform `action` there.
    pub fn unwind_to(&mut self, target: usize, action: UnwindAction) -> Result<(), VmError> {
        loop {
            let n = self.frames.len();
            if n == 0 || (target != usize::MAX && n - 1 <= target) {
                break;
            }
            // Drop interrupted unwinds whose ensure block frame is being unwound itself.
            while self
                .pending_unwinds
                .last()
                .is_some_and(|p| p.watch >= n - 1)
            {
                self.pending_unwinds.pop();
                self.unwind_watch = self
                    .pending_unwinds
                    .last()
                    .map(|p| p.watch)
                    .unwrap_or(usize::MAX);
            }
            let top = n - 1;
            let (protect, bp, nargs) = {
                let f = &self.frames[top];
                (f.code.unwind_protect, f.bp, f.code.num_args)
            };
            // <unwindProtect> frames (Pharo's convention): temp 1 holds the unwind
            // action (anything that understands `value`), temp 2 the completion flag.
            let flag = bp + 1 + nargs + 1;
            if protect && has_unwind_temps(&self.frames[top]) && self.stack[flag] == Value::NIL {
                self.stack[flag] = Value::TRUE;
                let block = self.stack[bp + 1 + nargs];
                self.pending_unwinds.push(PendingUnwind {
                    watch: n,
                    target,
                    action,
                });
                self.unwind_watch = n;
                self.stack.push(block);
                let value = self.sym_cache.value;
                self.dispatch(value, 0, None)?;
                if self.frames.len() == n {
                    // `value` answered without a frame (not a block): continue at once.
                    self.resume_unwind()?;
                }
                return Ok(());
            }
            let f = self
                .pop_frame(true)
                .ok_or_else(|| VmError::Fatal("frame stack underflow".into()))?;
            self.stack.truncate(f.bp);
        }
        if self.in_overflow && self.frames.len() + 1000 < self.options.max_frames {
            self.in_overflow = false;
            self.frame_limit = self.options.max_frames;
        }
        match action {
            UnwindAction::Return(v) => self.return_from_top(v),
            UnwindAction::Restart => {
                let Some(f) = self.frames.last_mut() else {
                    return Ok(());
                };
                f.pc = 0;
                let code = f.code.clone();
                let bp = f.bp;
                let outer = if code.has_env() && f.env.is_ptr() {
                    self.heap.slot(f.env, ENV_PARENT)
                } else {
                    f.env
                };
                self.stack.truncate(bp + 1 + code.num_args);
                for _ in 0..code.num_temps {
                    self.stack.push(Value::NIL);
                }
                if code.has_env() {
                    let e = self
                        .heap
                        .alloc_pointers(cls::ENV, ENV_VARS + code.env_size)?;
                    self.heap.set_slot(e, ENV_PARENT, outer);
                    if code.kind == CodeKind::Method {
                        self.heap.set_slot(e, ENV_ALIVE, Value::TRUE);
                    }
                    if let Some(f) = self.frames.last_mut() {
                        f.env = e;
                    }
                }
                Ok(())
            }
            UnwindAction::Terminate => Ok(()),
        }
    }

    fn non_local_return(&mut self, v: Value) -> Result<(), VmError> {
        let Some(f) = self.frames.last() else {
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
            self.frames
                .iter()
                .rposition(|fr| fr.env == home && fr.code.kind == CodeKind::Method)
        } else {
            None
        };
        match target {
            Some(t) => self.unwind_to(t, UnwindAction::Return(v)),
            None => {
                // escapedBlock: sent to the block's receiver, answered as the block's value.
                let bp = f.bp;
                let recv = self.stack[bp];
                let closure = f.closure;
                let _ = self.return_from_top(v);
                // Replace the block's result by `recv escapedBlock: closure`.
                let _ = pop!(self);
                self.stack.push(recv);
                self.stack.push(closure);
                let sel = self.sym_cache.escaped_block;
                self.dispatch(sel, 1, None)
            }
        }
    }

    /// Run until the frame stack of process `entry_proc` is back to `base` frames.
    pub(crate) fn interpret(&mut self, base: usize, entry_proc: usize) -> Result<(), VmError> {
        'frame: loop {
            // ---- safepoint ----
            if self.heap.needs_gc() {
                self.collect_garbage();
                if self.heap.take_oom_signal() && !self.frames.is_empty() {
                    self.signal_out_of_memory()?;
                    continue 'frame;
                }
                // Mourn at once: the finalization process preempts this one (unless
                // this one is about to end; then at its next yield or wait).
                if self.finalization_due
                    && !self.frames.is_empty()
                    && !(self.procs.current == entry_proc && self.frames.len() <= base)
                {
                    self.schedule_finalization();
                }
            }
            if self.procs.current == entry_proc && self.frames.len() <= base {
                return Ok(());
            }
            if self.frames.is_empty() {
                // A process other than the entry one has finished.
                self.process_finished()?;
                continue 'frame;
            }
            if self.procs.switch_pending {
                self.switch_process()?;
                continue 'frame;
            }
            let (code, mut pc, bp) = match self.frames.last() {
                Some(f) => (f.code.clone(), f.pc, f.bp),
                None => continue 'frame,
            };
            loop {
                let Some(&op) = code.ops.get(pc) else {
                    return Err(self.fatal("internal error: fell off the end of a method"));
                };
                pc += 1;
                match op {
                    Op::PushSelf => {
                        let v = self.stack[bp];
                        self.stack.push(v);
                    }
                    Op::PushNil => self.stack.push(Value::NIL),
                    Op::PushTrue => self.stack.push(Value::TRUE),
                    Op::PushFalse => self.stack.push(Value::FALSE),
                    Op::PushInt(i) => self.stack.push(Value::small(i as i64)),
                    Op::PushLiteral(i) => {
                        let v = code.literals[i as usize].get();
                        self.stack.push(v);
                    }
                    Op::PushLocal(i) => {
                        let v = self.stack[bp + 1 + i as usize];
                        self.stack.push(v);
                    }
                    Op::StoreLocal(i) => {
                        let v = self.top();
                        self.stack[bp + 1 + i as usize] = v;
                    }
                    Op::PopLocal(i) => {
                        let v = pop!(self);
                        self.stack[bp + 1 + i as usize] = v;
                    }
                    Op::PushEnv { depth, index } => {
                        let e = self.env_at(depth);
                        let v = self.heap.slot(e, ENV_VARS + index as usize);
                        self.stack.push(v);
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
                        let v = self.stack[bp + 1 + arg as usize];
                        self.heap.set_slot(e, ENV_VARS + index as usize, v);
                    }
                    Op::PushField(i) => {
                        let r = self.stack[bp];
                        let v = self.field(r, i as usize);
                        self.stack.push(v);
                    }
                    Op::StoreField(i) => {
                        let r = self.stack[bp];
                        let v = self.top();
                        self.set_field(r, i as usize, v);
                    }
                    Op::PopField(i) => {
                        let r = self.stack[bp];
                        let v = pop!(self);
                        self.set_field(r, i as usize, v);
                    }
                    Op::PushGlobal(i) => {
                        let sym = code.literals[i as usize].get();
                        let id = code.sel_ids[i as usize].get();
                        match self.globals.get(&id) {
                            Some(&v) => self.stack.push(v),
                            None => {
                                self.save_pc(pc);
                                let r = self.stack[bp];
                                self.stack.push(r);
                                self.stack.push(sym);
                                // A VM-initiated send: not counted (see observe.rs).
                                let sel = self.sym_cache.unknown_global;
                                self.dispatch(sel, 1, None)?;
                                continue 'frame;
                            }
                        }
                    }
                    Op::PushBlock(i) => {
                        let b = &code.blocks[i as usize];
                        let c = match b.num_args {
                            0 => cls::BLOCK1,
                            1 => cls::BLOCK2,
                            2 => cls::BLOCK3,
                            3 => cls::BLOCK4,
                            _ => cls::BLOCK,
                        };
                        let recv = self.stack[bp];
                        let env = self.frames.last().map(|f| f.env).unwrap_or(Value::NIL);
                        let id = Value::small(b.id as i64);
                        let clo = self.heap.alloc_with(c, &[id, recv, env])?;
                        self.stack.push(clo);
                    }
                    Op::Pop => {
                        self.stack.pop();
                    }
                    Op::Dup => {
                        let v = self.top();
                        self.stack.push(v);
                    }
                    Op::Send { sel, argc, site } => {
                        self.save_pc(pc);
                        self.note_send(code.id, pc);
                        let id = code.sel_ids[sel as usize].get();
                        self.dispatch(id, argc as usize, Some((&code, site as usize)))?;
                        continue 'frame;
                    }
                    Op::SuperSend { sel, argc, site: _ } => {
                        self.save_pc(pc);
                        self.note_send(code.id, pc);
                        let id = code.sel_ids[sel as usize].get();
                        // No superclass: class index 0 has no methods, so doesNotUnderstand.
                        let start = self.classes[code.holder.get() as usize]
                            .superclass
                            .unwrap_or(0);
                        self.dispatch_in(start, id, argc as usize, None)?;
                        continue 'frame;
                    }
                    Op::Special { op, sel, site } => {
                        if OBSERVE {
                            self.obs.sends += 1;
                        }
                        if self.special(op)? {
                            continue;
                        }
                        self.save_pc(pc);
                        if OBSERVE && self.obs.sampling {
                            self.obs.sample(code.id, pc);
                        }
                        let id = code.sel_ids[sel as usize].get();
                        let argc = op.selector().1 as usize;
                        // Blocks: activate directly.
                        if matches!(op, SpecialOp::Value | SpecialOp::ValueWith) {
                            let r = self.stack[self.stack.len() - 1 - argc];
                            if self.closure_code(r).is_some_and(|c| c.num_args == argc) {
                                self.activate_block(r, argc)?;
                                continue 'frame;
                            }
                        }
                        self.dispatch(id, argc, Some((&code, site as usize)))?;
                        continue 'frame;
                    }
                    Op::ReturnTop => {
                        let v = pop!(self);
                        self.return_from_top(v)?;
                        continue 'frame;
                    }
                    Op::ReturnSelf => {
                        let v = self.stack[bp];
                        self.return_from_top(v)?;
                        continue 'frame;
                    }
                    Op::ReturnNonLocal => {
                        self.save_pc(pc);
                        let v = pop!(self);
                        self.non_local_return(v)?;
                        continue 'frame;
                    }
                    Op::Jump(t) => pc = t as usize,
                    Op::JumpBack(t) => {
                        pc = t as usize;
                        if self.heap.needs_gc() || self.procs.switch_pending {
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
                            self.stack.push(v);
                            let sel = self.sym_cache.must_be_boolean;
                            self.dispatch(sel, 0, None)?;
                            continue 'frame;
                        }
                    }
                    Op::JumpIfNil { target, inlined } => {
                        let v = pop!(self);
                        if inlined && OBSERVE {
                            self.obs.inlined += 1;
                        }
                        if v == Value::NIL {
                            pc = target as usize;
                        }
                    }
                    Op::JumpIfNotNil { target, inlined } => {
                        let v = pop!(self);
                        if inlined && OBSERVE {
                            self.obs.inlined += 1;
                        }
                        if v != Value::NIL {
                            pc = target as usize;
                        }
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
                        let c = self.stack[bp + 1 + counter as usize];
                        let l = self.stack[bp + 1 + limit as usize];
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
                                    let r = self.stack[bp];
                                    self.stack.push(r);
                                    self.send_error(0, "to:do: needs numbers as bounds")?;
                                    continue 'frame;
                                }
                            },
                        };
                        if done {
                            pc = exit as usize;
                        }
                    }
                    Op::ForIncr {
                        counter,
                        step,
                        target,
                    } => {
                        let slot = bp + 1 + counter as usize;
                        let c = self.stack[slot];
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
                        self.stack[slot] = next;
                        pc = target as usize;
                        if self.heap.needs_gc() || self.procs.switch_pending {
                            self.save_pc(pc);
                            continue 'frame;
                        }
                    }
                }
            }
        }
    }

    /// Observation at a send: count it and, while a sampler is attached, record
    /// the method and pc in the sampling register.
    #[inline(always)]
    fn note_send(&mut self, method: u32, pc: usize) {
        if OBSERVE {
            self.obs.sends += 1;
            if self.obs.sampling {
                self.obs.sample(method, pc);
            }
        }
    }

    #[inline(always)]
    fn save_pc(&mut self, pc: usize) {
        if let Some(f) = self.frames.last_mut() {
            f.pc = pc;
        }
    }

    #[inline(always)]
    fn env_at(&self, depth: u8) -> Value {
        let mut e = self.frames.last().map(|f| f.env).unwrap_or(Value::NIL);
        for _ in 0..depth {
            e = self.heap.slot(e, ENV_PARENT);
        }
        e
    }

    #[inline(always)]
    fn field(&self, r: Value, i: usize) -> Value {
        if r.is_ptr() && i < self.heap.size(r) {
            self.heap.slot(r, i)
        } else {
            Value::NIL
        }
    }

    #[inline(always)]
    fn set_field(&mut self, r: Value, i: usize, v: Value) {
        if r.is_ptr() && i < self.heap.size(r) {
            self.heap.set_slot(r, i, v);
        }
    }

    /// A number as f64 (SmallInteger, Double, large Integer).
    pub fn number_as_f64(&self, v: Value) -> Option<f64> {
        if let Some(i) = v.as_int() {
            return Some(i as f64);
        }
        if v.is_float() {
            return Some(v.float_unchecked());
        }
        if v.is_ptr() {
            match self.heap.class_index(v) {
                cls::DOUBLE => return Some(f64::from_bits(self.heap.word(v, 0))),
                cls::INTEGER => {
                    use num_traits::ToPrimitive;
                    return crate::prims::integer::big_of(self, v).and_then(|b| b.to_f64());
                }
                _ => {}
            }
        }
        None
    }

    #[inline(always)]
    fn double_of(&self, v: Value) -> Option<f64> {
        if v.is_float() {
            Some(v.float_unchecked())
        } else if v.is_ptr() && self.heap.class_index(v) == cls::DOUBLE {
            Some(f64::from_bits(self.heap.word(v, 0)))
        } else {
            None
        }
    }

    /// The 0-based slot that index `i` (a SmallInteger, 1-based) denotes in `a`, if `a`
    /// is an Array and `i` is in range: the fast paths of `at:` and `at:put:`.
    #[inline(always)]
    fn array_slot(&self, a: Value, i: Value) -> Option<usize> {
        if a.is_ptr() && self.heap.class_index(a) == cls::ARRAY {
            let i = i.as_int()?;
            (i >= 1 && (i as usize) <= self.heap.size(a)).then(|| i as usize - 1)
        } else {
            None
        }
    }

    /// Fast paths of special sends. Answers true when done (result on the stack).
    #[inline(always)]
    fn special(&mut self, op: SpecialOp) -> Result<bool, VmError> {
        let n = self.stack.len();
        match op {
            SpecialOp::Add
            | SpecialOp::Sub
            | SpecialOp::Mul
            | SpecialOp::Lt
            | SpecialOp::Gt
            | SpecialOp::Le
            | SpecialOp::Ge
            | SpecialOp::Eq
            | SpecialOp::Ne
            | SpecialOp::Div
            | SpecialOp::Mod
            | SpecialOp::BitAnd => {
                let a = self.stack[n - 2];
                let b = self.stack[n - 1];
                if a.is_int() && b.is_int() {
                    let (x, y) = (a.int_unchecked(), b.int_unchecked());
                    let r = match op {
                        SpecialOp::Add => match x.checked_add(y).and_then(Value::from_i64) {
                            Some(v) => v,
                            None => return Ok(false),
                        },
                        SpecialOp::Sub => match x.checked_sub(y).and_then(Value::from_i64) {
                            Some(v) => v,
                            None => return Ok(false),
                        },
                        SpecialOp::Mul => match x.checked_mul(y).and_then(Value::from_i64) {
                            Some(v) => v,
                            None => return Ok(false),
                        },
                        SpecialOp::Lt => Value::bool(x < y),
                        SpecialOp::Gt => Value::bool(x > y),
                        SpecialOp::Le => Value::bool(x <= y),
                        SpecialOp::Ge => Value::bool(x >= y),
                        SpecialOp::Eq => Value::bool(x == y),
                        SpecialOp::Ne => Value::bool(x != y),
                        SpecialOp::Div => {
                            if y == 0 {
                                return Ok(false);
                            }
                            match Value::from_i64(floor_div(x, y)) {
                                Some(v) => v,
                                None => return Ok(false),
                            }
                        }
                        SpecialOp::Mod => {
                            if y == 0 {
                                return Ok(false);
                            }
                            let m = x % y;
                            Value::small(if m != 0 && ((m < 0) != (y < 0)) {
                                m + y
                            } else {
                                m
                            })
                        }
                        SpecialOp::BitAnd => Value::small(x & y),
                        _ => return Ok(false),
                    };
                    self.stack.truncate(n - 2);
                    self.stack.push(r);
                    return Ok(true);
                }
                let (Some(x), Some(y)) = (
                    self.double_of(a),
                    self.double_of(b).or_else(|| b.as_int().map(|i| i as f64)),
                ) else {
                    if matches!(op, SpecialOp::Eq | SpecialOp::Ne) {
                        return self.string_equality(op, a, b, n);
                    }
                    return Ok(false);
                };
                let r = match op {
                    SpecialOp::Add => self.new_double(x + y)?,
                    SpecialOp::Sub => self.new_double(x - y)?,
                    SpecialOp::Mul => self.new_double(x * y)?,
                    SpecialOp::Lt => Value::bool(x < y),
                    SpecialOp::Gt => Value::bool(x > y),
                    SpecialOp::Le => Value::bool(x <= y),
                    SpecialOp::Ge => Value::bool(x >= y),
                    SpecialOp::Eq => Value::bool(x == y),
                    SpecialOp::Ne => Value::bool(x != y),
                    _ => return Ok(false),
                };
                self.stack.truncate(n - 2);
                self.stack.push(r);
                Ok(true)
            }
            SpecialOp::IdentityEq => {
                let b = self.stack[n - 1];
                let a = self.stack[n - 2];
                // A class may override == (SOM's Integer>>== is `=`): then send it.
                let c = self.class_of(a);
                if !self.default_identity_ok(c) {
                    return Ok(false);
                }
                self.stack.truncate(n - 2);
                self.stack.push(Value::bool(a == b));
                Ok(true)
            }
            SpecialOp::IsNil | SpecialOp::NotNil => {
                // Only nil itself and plain objects take the fast path; a class may override.
                let a = self.stack[n - 1];
                let c = self.class_of(a);
                if c != cls::NIL && !self.fast_nil_test_ok(c) {
                    return Ok(false);
                }
                let isnil = a == Value::NIL;
                self.stack[n - 1] = Value::bool(if op == SpecialOp::IsNil {
                    isnil
                } else {
                    !isnil
                });
                Ok(true)
            }
            SpecialOp::Not => {
                let a = self.stack[n - 1];
                if a == Value::TRUE {
                    self.stack[n - 1] = Value::FALSE;
                } else if a == Value::FALSE {
                    self.stack[n - 1] = Value::TRUE;
                } else {
                    return Ok(false);
                }
                Ok(true)
            }
            SpecialOp::At => {
                let a = self.stack[n - 2];
                let i = self.stack[n - 1];
                if let Some(k) = self.array_slot(a, i) {
                    let v = self.heap.slot(a, k);
                    self.stack.truncate(n - 2);
                    self.stack.push(v);
                    return Ok(true);
                }
                Ok(false)
            }
            SpecialOp::AtPut => {
                let a = self.stack[n - 3];
                let i = self.stack[n - 2];
                let v = self.stack[n - 1];
                if let Some(k) = self.array_slot(a, i) {
                    self.heap.set_slot(a, k, v);
                    self.stack.truncate(n - 3);
                    self.stack.push(v);
                    return Ok(true);
                }
                Ok(false)
            }
            SpecialOp::Length => {
                let a = self.stack[n - 1];
                if a.is_ptr() {
                    let c = self.heap.class_index(a);
                    if c == cls::ARRAY || c == cls::STRING || c == cls::SYMBOL {
                        self.stack[n - 1] = Value::small(self.heap.size(a) as i64);
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            SpecialOp::Value | SpecialOp::ValueWith => Ok(false),
        }
    }

    /// `isNil`/`notNil` may take the fast path for class `c` when neither is
    /// overridden below Object.
    /// `=`/`~=` between two Strings (or a String and a Symbol) by byte comparison, when
    /// the receiver is a plain String whose `=` is the primitive. Answers false (send
    /// normally) otherwise.
    #[inline]
    fn string_equality(
        &mut self,
        op: SpecialOp,
        a: Value,
        b: Value,
        n: usize,
    ) -> Result<bool, VmError> {
        if !(a.is_ptr() && b.is_ptr()) || self.heap.class_index(a) != cls::STRING {
            return Ok(false);
        }
        let cb = self.heap.class_index(b);
        if !self.string_eq_is_primitive() {
            return Ok(false);
        }
        let eq =
            (cb == cls::STRING || cb == cls::SYMBOL) && self.heap.bytes(a) == self.heap.bytes(b);
        self.stack.truncate(n - 2);
        self.stack
            .push(Value::bool(if op == SpecialOp::Eq { eq } else { !eq }));
        Ok(true)
    }

    /// Is `String>>=` the native primitive (not overridden by the class library)?
    fn string_eq_is_primitive(&mut self) -> bool {
        if self.string_eq_ok == self.epoch {
            return true;
        }
        let sel = self.sym_cache.equal;
        let ok = match self.lookup(cls::STRING, sel) {
            Lookup::Method(id) => {
                let m = &self.methods[id as usize];
                m.holder.get() == cls::STRING && m.primitive.get().is_some()
            }
            _ => false,
        };
        if ok {
            self.string_eq_ok = self.epoch;
        }
        ok
    }

    /// `==` may take the fast path for class `c` (it inherits Object's primitive).
    #[inline]
    fn default_identity_ok(&mut self, c: u32) -> bool {
        if self.identity_ok.get(c as usize) == Some(&self.epoch) {
            return true;
        }
        let sel = self.sym_cache.identical;
        let ok = match self.lookup(c, sel) {
            Lookup::Method(id) => {
                let m = &self.methods[id as usize];
                m.holder.get() == cls::OBJECT && m.primitive.get().is_some()
            }
            _ => false,
        };
        if ok {
            if self.identity_ok.len() <= c as usize {
                self.identity_ok.resize(c as usize + 1, 0);
            }
            self.identity_ok[c as usize] = self.epoch;
        }
        ok
    }

    fn fast_nil_test_ok(&mut self, c: u32) -> bool {
        if self.nil_test_ok.get(c as usize) == Some(&self.epoch) {
            return true;
        }
        let (isnil, notnil) = (self.sym_cache.is_nil, self.sym_cache.not_nil);
        let default = |vm: &mut Vm, sel| match vm.lookup(c, sel) {
            Lookup::Method(id) => vm.methods[id as usize].holder.get() == cls::OBJECT,
            _ => false,
        };
        let ok = default(self, isnil) && default(self, notnil);
        if ok {
            if self.nil_test_ok.len() <= c as usize {
                self.nil_test_ok.resize(c as usize + 1, 0);
            }
            self.nil_test_ok[c as usize] = self.epoch;
        }
        ok
    }
}

fn has_unwind_temps(f: &Frame) -> bool {
    f.code.num_temps >= 2
}

/// Integer division rounding towards negative infinity (SOM's `/` and `//` on Integers).
pub(crate) fn floor_div(x: i64, y: i64) -> i64 {
    let q = x / y;
    if (x % y != 0) && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}
