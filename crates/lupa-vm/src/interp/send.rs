//! The send path: inline-cache check, lookup ([`Vm::dispatch`],
//! [`Vm::dispatch_in`]), what a lookup found (a method, an object to
//! `run:with:in:`, nothing: `doesNotUnderstand:arguments:`), invoking a method
//! (trap shortcut, trivial method without a frame, primitive with its fallback)
//! and activating a frame for a method or block.
//!
//! A send never recurses on the Rust stack: activation pushes a [`Frame`] and
//! returns to the loop.

use super::{BLOCK_CODE, BLOCK_OUTER, BLOCK_RECEIVER, ENV_ALIVE, ENV_PARENT, ENV_VARS, OBSERVE};
use crate::objects::{MethodCode, cls};
use crate::obs::sampling::VmState;
use crate::prims::{Args, PrimFailure, Reply};
use crate::sched::Frame;
use crate::vm::{Lookup, Vm, VmError};
use lupa_compiler::CodeKind;
use lupa_heap::{OutOfMemory, Value};
use std::rc::Rc;

/// How many objects-as-methods a send may go through (each one's
/// `run:with:in:` being found as another object) before it is an error.
pub(crate) const MAX_OBJECT_METHOD_CHAIN: usize = 64;

impl Vm {
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
        self.image.methods.get(id as usize)
    }

    /// Send `sel` to the receiver under `argc` arguments on the stack.
    pub(crate) fn dispatch(
        &mut self,
        sel: u32,
        argc: usize,
        cache: Option<(&MethodCode, usize)>,
    ) -> Result<(), VmError> {
        let recv = self.sched.running.stack[self.sched.running.stack.len() - 1 - argc];
        let c = self.class_of(recv);
        if let Some((code, site)) = cache {
            let epoch = self.image.classes.epoch();
            for entry in &code.caches[site] {
                let ic = entry.get();
                if ic.class == c && ic.epoch == epoch {
                    if let Some(t) = self.image.methods[ic.method as usize].trivial
                        && !self.obs.hooks_on
                    {
                        self.run_trivial(ic.method as usize, t, argc);
                        return Ok(());
                    }
                    let m = self.image.methods[ic.method as usize].clone();
                    return self.invoke(m, argc);
                }
            }
        }
        self.dispatch_in(c, sel, argc, cache)
    }

    #[inline(never)]
    pub(crate) fn dispatch_in(
        &mut self,
        c: u32,
        sel: u32,
        argc: usize,
        cache: Option<(&MethodCode, usize)>,
    ) -> Result<(), VmError> {
        // A sampler sees the lookup state only where the lookup walks the
        // classes: a hit in the lookup cache is one hash probe, charged to
        // the send (publishing the state there cost a sampled run more
        // than the probe itself).
        let found = match self.image.classes.cached(c, sel) {
            Some(id) => Lookup::Method(id),
            None => self.lookup_walking(c, sel),
        };
        match found {
            Lookup::Method(id) => {
                if let Some((code, site)) = cache {
                    let epoch = self.image.classes.epoch();
                    crate::objects::pic_fill(&code.caches[site], c, epoch, id);
                }
                let m = self.image.methods[id as usize].clone();
                self.invoke(m, argc)
            }
            Lookup::Object(obj) => self.run_object_as_method(obj, sel, argc),
            Lookup::NotFound => self.does_not_understand(c, sel, argc),
        }
    }

    /// The lookup of `sel` for class `c` past the lookup cache, in the
    /// sampler's `Lookup` state when one is attached.
    #[inline(never)]
    fn lookup_walking(&mut self, c: u32, sel: u32) -> Lookup {
        let observed = crate::interp::OBSERVE && self.obs.sampler_attached();
        let saved = if observed {
            self.obs
                .swap_state(VmState::Lookup, sel, self.sched.current)
        } else {
            0
        };
        let found = self.image.lookup_uncached(&self.heap, c, sel);
        if observed {
            self.obs.restore_state(saved);
        }
        found
    }

    /// An object found in a method dictionary runs the send:
    /// `obj run: selector with: args in: receiver`. If `run:with:in:` is
    /// itself an object in a method dictionary, that object runs it, and so on;
    /// the chain is followed in a loop (never on the Rust stack) and a chain
    /// longer than [`MAX_OBJECT_METHOD_CHAIN`] is an error (the usual cause is
    /// an object installed as its own `run:with:in:`).
    #[cold]
    #[inline(never)]
    fn run_object_as_method(&mut self, obj: Value, sel: u32, argc: usize) -> Result<(), VmError> {
        let (mut obj, mut sel, mut argc) = (obj, sel, argc);
        let rwi = self.image.sym_cache.run_with_in;
        for _ in 0..MAX_OBJECT_METHOD_CHAIN {
            let args = self
                .sched
                .running
                .stack
                .split_off(self.sched.running.stack.len() - argc);
            let recv = pop!(self);
            let arr = self.new_array(&args)?;
            let s = self.image.symbol_object(&mut self.heap, sel)?;
            self.sched
                .running
                .stack
                .extend_from_slice(&[obj, s, arr, recv]);
            let oc = self.class_of(obj);
            match self.image.lookup(&self.heap, oc, rwi) {
                Lookup::Object(next) => (obj, sel, argc) = (next, rwi, 3),
                Lookup::Method(_) => return self.dispatch_in(oc, rwi, 3, None),
                Lookup::NotFound => return self.does_not_understand(oc, rwi, 3),
            }
        }
        let msg = format!(
            "objects as methods nested more than {MAX_OBJECT_METHOD_CHAIN} deep: #run:with:in: of an instance of {} is itself an object, not a method",
            self.image.class_name(self.class_of(obj))
        );
        self.send_error(argc, &msg)
    }

    /// No method for `sel` in class `c`: `receiver doesNotUnderstand: sel
    /// arguments: args` (a fatal error if that is not understood either).
    #[cold]
    #[inline(never)]
    fn does_not_understand(&mut self, c: u32, sel: u32, argc: usize) -> Result<(), VmError> {
        let dnu = self.image.sym_cache.dnu;
        if sel == dnu {
            let recv = self.sched.running.stack[self.sched.running.stack.len() - 1 - argc];
            let name = self.image.class_name(self.class_of(recv)).to_string();
            return Err(self.fatal(&format!(
                "{name} does not understand #doesNotUnderstand:arguments:"
            )));
        }
        let args = self
            .sched
            .running
            .stack
            .split_off(self.sched.running.stack.len() - argc);
        let arr = self.new_array(&args)?;
        let s = self.image.symbol_object(&mut self.heap, sel)?;
        self.sched.running.stack.push(s);
        self.sched.running.stack.push(arr);
        self.dispatch_in(c, dnu, 2, None)
    }

    /// Run a trivial method without a frame: receiver and arguments are replaced by its answer.
    #[inline(always)]
    pub(super) fn run_trivial(&mut self, method: usize, t: crate::objects::Trivial, argc: usize) {
        use crate::objects::Trivial as T;
        let n = self.sched.running.stack.len() - 1 - argc;
        let recv = self.sched.running.stack[n];
        let v = match t {
            T::Getter(i) => self.field(recv, i as usize),
            T::Setter(i) => {
                let a = self.sched.running.stack[n + 1];
                self.set_field(recv, i as usize, a);
                recv
            }
            T::ReturnSelf => recv,
            T::Literal(k) => self.image.methods[method].literals[k as usize].get(),
            T::Int(i) => Value::small(i as i64),
            T::Nil => Value::NIL,
            T::True => Value::TRUE,
            T::False => Value::FALSE,
        };
        self.sched.running.stack.truncate(n);
        self.sched.running.stack.push(v);
    }

    /// A trivial method run while activation hooks (or line coverage) are on:
    /// still without a frame, but the hooks see its activation, entered and
    /// left at the same send count, exactly as if it had one (Compteur counts
    /// every activation; giving each accessor a frame made a counted run of
    /// DeltaBlue 2.2 times a plain one).
    #[inline(never)]
    fn run_trivial_observed(&mut self, m: &MethodCode, t: crate::objects::Trivial, argc: usize) {
        let bp = self.sched.running.stack.len() - 1 - argc;
        let exit = self.obs.has_hooks().then(|| crate::obs::Activation {
            method: m.id,
            receiver_class: self.class_of(self.sched.running.stack[bp]),
            depth: self.sched.running.frames.len(),
            process: self.sched.current,
            sends: self.obs.sends,
            call_line: 0,
        });
        self.observe_activation(m, bp);
        self.run_trivial(m.id as usize, t, argc);
        if let Some(ev) = exit {
            self.obs.exit(ev, false);
        }
    }

    /// Run method `m` on the receiver and `argc` arguments on the stack.
    #[inline]
    pub(crate) fn invoke(&mut self, m: Rc<MethodCode>, argc: usize) -> Result<(), VmError> {
        if crate::interp::OBSERVE && self.obs.watches.is_on() {
            return self.invoke_watched(m, argc);
        }
        self.invoke_unwatched(m, argc)
    }

    /// [`Vm::invoke`] with no method watch to tell.
    #[inline(always)]
    pub(super) fn invoke_unwatched(
        &mut self,
        m: Rc<MethodCode>,
        argc: usize,
    ) -> Result<(), VmError> {
        if m.trap_shortcut && self.trap_shortcut_applies(&m) {
            // A disabled proxy, or a call made by instrumentation code (see `proxies`).
            return self.send_to_original(&m, argc);
        }
        if let Some(t) = m.trivial {
            if self.obs.every_activation {
                self.run_trivial_observed(&m, t, argc);
            } else {
                self.run_trivial(m.id as usize, t, argc);
            }
            return Ok(());
        }
        if let Some(p) = m.primitive.get() {
            match self.call_primitive::<true>(p, m.id, argc) {
                Ok(Reply::Answer(v)) => {
                    self.primitive_answered(argc, v);
                    return Ok(());
                }
                Ok(Reply::Done) => return Ok(()),
                reply => return self.primitive_not_answered(m, argc, reply),
            }
        }
        if m.primitive_only && m.primitive.get().is_none() {
            let msg = format!(
                "primitive {}>>{} is not implemented by Lupa",
                self.image.class_name(m.holder.get()),
                m.selector_name
            );
            return self.send_error(argc, &msg);
        }
        self.activate(m, argc, Value::NIL, Value::NIL)
    }

    /// Run primitive `p` of method `id` on the receiver and `argc`
    /// arguments on the stack, observed: a sampler reads `Primitive` while
    /// the register names it (`SampleRegister::primitive`, combined with the
    /// state word it interrupts), and a lifetime recording takes the
    /// allocation samples it made. The primitive it replaces (none, or an
    /// enclosing one's) is what the VM goes back to: no process switch
    /// happens inside a primitive. (Named also when only a lifetime recording
    /// observes primitives: nobody reads it then, and one flag tested here is
    /// cheaper than two.) The interpreter's `invoke` and native code's leaf
    /// primitive calls (`SAMPLED` false: no lifetime recording runs while
    /// native code does, and it is the only one that samples allocations, so
    /// none can be waiting) both run primitives here.
    #[inline(always)]
    pub(super) fn call_primitive<const SAMPLED: bool>(
        &mut self,
        p: crate::objects::PrimId,
        id: u32,
        argc: usize,
    ) -> crate::prims::PrimResult {
        let saved = if crate::interp::OBSERVE && self.obs.around_primitives {
            self.obs.enter_primitive(id)
        } else {
            crate::obs::NOT_ENTERED
        };
        let reply = crate::prims::function(p)(self, Args::new(argc));
        if saved != crate::obs::NOT_ENTERED {
            self.obs.leave_primitive(saved);
            debug_assert!(SAMPLED || !self.heap.has_allocation_samples());
            if SAMPLED && self.heap.has_allocation_samples() {
                self.take_allocation_samples(None, false);
            }
        }
        reply
    }

    /// A primitive answered `v`: it replaces the receiver and the `argc`
    /// arguments on the stack.
    #[inline(always)]
    pub(super) fn primitive_answered(&mut self, argc: usize, v: Value) {
        let stack = &mut self.sched.running.stack;
        let n = stack.len() - argc - 1;
        stack.truncate(n);
        stack.push(v);
    }

    /// The rest of a send to primitive method `m` whose primitive did not
    /// answer a value (`reply`, from [`call_primitive`](Self::call_primitive)
    /// in `invoke` or in native code's `Vm::native_primitive`): its fallback
    /// code, an `error:`, or the program stopped.
    #[cold]
    #[inline(never)]
    pub(super) fn primitive_not_answered(
        &mut self,
        m: Rc<MethodCode>,
        argc: usize,
        reply: crate::prims::PrimResult,
    ) -> Result<(), VmError> {
        match reply {
            Ok(Reply::Answer(v)) => {
                self.primitive_answered(argc, v);
                Ok(())
            }
            Ok(Reply::Done) => Ok(()),
            Err(PrimFailure::Abort(e)) => Err(e),
            Err(PrimFailure::Limit(msg)) => self.send_error(argc, &msg),
            // A failing primitive with a Smalltalk body runs the body (the fallback).
            Err(_) if !m.primitive_only => self.activate(m, argc, Value::NIL, Value::NIL),
            Err(PrimFailure::Error(msg)) => self.send_error(argc, &msg),
            Err(failure) => {
                let msg = self.primitive_failure_message(&m, argc, &failure);
                self.send_error(argc, &msg)
            }
        }
    }

    /// What went wrong in primitive `m` (receiver and `argc` arguments still on
    /// the stack): which argument is not of the kind it takes, and what it got.
    #[cold]
    #[inline(never)]
    fn primitive_failure_message(
        &self,
        m: &MethodCode,
        argc: usize,
        failure: &PrimFailure,
    ) -> String {
        let name = format!(
            "{}>>{}",
            self.image.class_name(m.holder.get()),
            m.selector_name
        );
        let PrimFailure::WrongArg { index, expected } = failure else {
            return format!("primitive {name} failed: it cannot handle these arguments");
        };
        let index = *index as usize;
        let base = self.sched.running.stack.len() - 1 - argc;
        let got = self
            .sched
            .running
            .stack
            .get(base + index)
            .copied()
            .unwrap_or(Value::NIL);
        let class = self.image.class_name(self.class_of(got));
        let which = if index == 0 {
            "the receiver".to_string()
        } else {
            format!("argument {index}")
        };
        let msg = format!(
            "primitive {name} failed: {which} must be {expected}, not an instance of {class}"
        );
        // Under SOM's core-lib, SOM's own words follow (see `som_wording`).
        if self.image.foreign_kernel
            && let Some(som) = self.som_type_error(*expected, got)
        {
            format!("{msg}\n{som}")
        } else {
            msg
        }
    }

    /// Replace the pending send (receiver + argc args on the stack) by `receiver error: msg`.
    #[cold]
    #[inline(never)]
    pub(crate) fn send_error(&mut self, argc: usize, msg: &str) -> Result<(), VmError> {
        if self.image.foreign_kernel {
            return Err(self.som_error(msg));
        }
        let n = self.sched.running.stack.len() - argc;
        self.sched.running.stack.truncate(n);
        let s = self.new_string(msg)?;
        self.sched.running.stack.push(s);
        let recv = self.sched.running.stack[self.sched.running.stack.len() - 2];
        let c = self.class_of(recv);
        let err = self.image.sym_cache.error;
        match self.image.lookup(&self.heap, c, err) {
            Lookup::NotFound => Err(self.fatal(msg)),
            _ => self.dispatch_in(c, err, 1, None),
        }
    }

    /// The send of a special selector whose fast path did not apply (the
    /// receiver and its arguments on the stack): a block's `value`/`value:`
    /// activates it at once (with `direct_blocks`: not while a trap is
    /// installed under the selector), anything else is a normal send.
    #[inline(always)]
    pub(super) fn special_send(
        &mut self,
        code: &MethodCode,
        op: lupa_compiler::SpecialOp,
        sel: u16,
        site: u16,
        direct_blocks: bool,
    ) -> Result<(), VmError> {
        let id = code.sel_ids[sel as usize].get();
        let argc = op.selector().1 as usize;
        // Blocks: activate directly.
        if direct_blocks
            && matches!(
                op,
                lupa_compiler::SpecialOp::Value | lupa_compiler::SpecialOp::ValueWith
            )
        {
            let r = self.sched.running.stack[self.sched.running.stack.len() - 1 - argc];
            if self.closure_code(r).is_some_and(|c| c.num_args == argc) {
                return self.activate_block(r, argc);
            }
        }
        self.dispatch(id, argc, Some((code, site as usize)))
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
        if !self.limits.allows_push(self.sched.running.frames.len()) {
            return self.stack_overflow(argc);
        }
        self.count_hotness(&m);
        let bp = self.sched.running.stack.len() - 1 - argc;
        if m.num_temps > 0 {
            self.sched
                .running
                .stack
                .resize(self.sched.running.stack.len() + m.num_temps, Value::NIL);
        }
        let env = if m.has_env() {
            self.new_env(&m, outer)?
        } else {
            outer
        };
        if OBSERVE && self.obs.every_activation {
            self.observe_activation(&m, bp);
        }
        if m.meta_level {
            self.enter_level(m.frame_flags);
        }
        self.sched.running.frames.push(Frame {
            method: m.id,
            flags: m.frame_flags,
            pc: 0,
            bp,
            env,
            closure,
        });
        Ok(())
    }

    /// An activation of `m` (receiver at `bp`) while activation hooks or line
    /// coverage are on: line coverage needs only the method (an arrival at
    /// its first instruction, when the frame runs at the base level), hooks
    /// get the whole event. Out of line: the activation path stays small.
    #[inline(never)]
    fn observe_activation(&mut self, m: &MethodCode, bp: usize) {
        if self.obs.covering_lines() && !self.runs_at_meta_level(m) {
            self.mark_run(m.id, 0);
        }
        if !self.obs.has_hooks() {
            return;
        }
        let rc = self.class_of(self.sched.running.stack[bp]);
        let depth = self.sched.running.frames.len();
        let ev = crate::obs::Activation {
            method: m.id,
            receiver_class: rc,
            depth,
            process: self.sched.current,
            sends: self.obs.sends,
            call_line: self
                .sched
                .running
                .frames
                .last()
                .map(|f| self.image.code(f.method).line_of(f.pc.saturating_sub(1)))
                .unwrap_or(0),
        };
        self.obs.enter(ev);
    }

    /// Will an activation of `m` pushed now run at the meta level (`m` is
    /// `<metaLevel>`, or the process is at the meta level and `m` is not
    /// `<baseLevel>`)?
    fn runs_at_meta_level(&self, m: &MethodCode) -> bool {
        if m.base_level {
            false
        } else if m.meta_level && !m.trap_shortcut {
            true
        } else {
            self.sched.running.at_meta_level()
        }
    }

    /// A fresh environment for an activation of `m` (which [`MethodCode::has_env`]),
    /// whose parent is `outer`; a method's own env is marked alive (the home of its
    /// blocks' non-local returns) until the method returns.
    #[inline(always)]
    pub(super) fn new_env(&mut self, m: &MethodCode, outer: Value) -> Result<Value, OutOfMemory> {
        let e = self.heap.alloc_pointers(cls::ENV, ENV_VARS + m.env_size)?;
        self.heap.set_slot(e, ENV_PARENT, outer);
        if m.kind == CodeKind::Method {
            self.heap.set_slot(e, ENV_ALIVE, Value::TRUE);
        }
        Ok(e)
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
        let bp = self.sched.running.stack.len() - 1 - argc;
        self.sched.running.stack[bp] = self.heap.slot(closure, BLOCK_RECEIVER);
        let outer = self.heap.slot(closure, BLOCK_OUTER);
        self.activate(code, argc, outer, closure)
    }
}
