//! The VM support for MethodProxies (paper 3: safe instrumentation).
//!
//! MethodProxies instruments a method by installing a *trap* method in its place
//! and keeping the original under a *hidden selector*; the trap runs the
//! instrumentation's before/after hooks around a send of the hidden selector.
//! Instrumentation code itself runs at the *meta level*, where traps must not
//! fire again (or profiling a method the profiler uses would recurse forever).
//! The Smalltalk side lives in `smalltalk/Profiling/MethodProxies/`; the
//! primitives that expose what is here are in `prims` (`Method>>copyFor:selector:`,
//! `literalAt:put:`, `Symbol>>asHiddenSymbol`/`isHiddenSelector`,
//! `Processor isMeta`/`metaLevel`). This module gathers what the VM does for it:
//!
//! - **hidden selectors** ([`HIDDEN_PREFIX`](crate::image::HIDDEN_PREFIX), [`Symbols::is_hidden`](crate::image::Symbols::is_hidden)): symbols whose
//!   name starts with U+0001. Lookup finds them; reflection (`methods`,
//!   `selectors`, `respondsTo:`) does not list them, so the program does not see
//!   the moved originals;
//! - **method copies** ([`Vm::copy_method`]): a copy of a method with its own
//!   literal frame, inline caches and Method object, for another class or
//!   selector; and **literal patching** ([`Vm::patch_literal`]), which keeps a
//!   patched selector literal's symbol id in step and flushes the inline caches;
//! - **the meta level** ([`ProcessState::enter_level`],
//!   [`ProcessState::leave_level`]): each process counts its active
//!   `<metaLevel>` frames; activation increments, every frame pop (return or
//!   unwind) decrements, and a process switch swaps the count with the rest of
//!   the process state; a `<baseLevel>` method runs at the base level again
//!   (the count is saved when its frame is pushed and restored when it is
//!   popped), so a hook can run the code it wraps as the program's own;
//! - **instrumentation does not count against the stack depth**: trap
//!   frames, and the meta-level frames between a trap and the `<baseLevel>`
//!   frame that runs the original for it, are counted apart
//!   ([`ProcessState::uncounted`]) and raise the running process's frame
//!   limit by as much (`RuntimeLimits::set_allowance`; the stack budget still
//!   bounds them), so a program reaches the same depth instrumented or not;
//!   at the meta level, instrumentation code may nest `--max-stack-depth`
//!   frames above where it started. All of it happens on the one slow path
//!   that activation and frame pop take for methods flagged
//!   [`MethodCode::meta_level`];
//! - **the trap shortcut** ([`Vm::trap_shortcut_applies`], `Vm::send_to_original`):
//!   a `<trapShortcut>` method whose proxy is disabled (literal 1 is not `true`),
//!   or that is called at the meta level, is not activated: the VM sends the
//!   hidden selector of the original (literal 2) directly, through the trap's
//!   first send site's inline cache: no hook, no trap frame.
//!
//! The interpreter calls the helpers here on its hot paths; they are
//! `#[inline(always)]` and compile to what was written there before.

use crate::objects::{MethodCode, cls};
use crate::sched::{BaseSave, Frame, ProcessState};
use crate::vm::{Vm, VmError};
use lupa_heap::{OutOfMemory, Value};
use std::cell::Cell;
use std::rc::Rc;

impl ProcessState {
    /// A frame with `flags` ([`Frame::flags_of`] its code) is being pushed
    /// at frame index `depth`; its code takes the level path
    /// ([`Frame::META_LEVEL`]): a `<baseLevel>` method puts
    /// the process back at the base level while it is active (the level
    /// state is saved, and restored when its frame is popped), a trap frame
    /// (`<trapShortcut>`, pushed at the base level only) is counted as
    /// instrumentation, any other such method is `<metaLevel>` and counts one
    /// more meta-level frame.
    ///
    /// Instrumentation does not count against `--max-stack-depth`
    /// ([`ProcessState::uncounted`]): trap frames, and every frame of a
    /// meta-level stretch below a `<baseLevel>` frame (the hooks and the
    /// handler a spy's `run:with:in:` goes through to run the method), the
    /// `<baseLevel>` frame included. Answers whether the frame allowance
    /// changed.
    #[inline]
    pub(crate) fn enter_level(&mut self, flags: u32, depth: usize) -> bool {
        if flags & Frame::BASE_LEVEL != 0 {
            let uncounted = if self.meta_depth > 0 {
                depth + 1 - self.meta_entry.min(depth)
            } else {
                1
            };
            self.base_saves.push(BaseSave {
                meta_depth: self.meta_depth,
                meta_entry: self.meta_entry,
                uncounted,
            });
            self.uncounted += uncounted;
            self.meta_depth = 0;
            true
        } else if flags & Frame::TRAP_SHORTCUT != 0 {
            if self.meta_depth == 0 {
                self.uncounted += 1;
                return true;
            }
            false
        } else {
            self.meta_depth += 1;
            if self.meta_depth == 1 {
                self.meta_entry = depth;
                return true;
            }
            false
        }
    }

    /// A frame with `flags` (its code takes the level path) is being popped,
    /// returned from or unwound: undo what [`ProcessState::enter_level`] did. Answers
    /// whether the frame allowance changed.
    #[inline]
    pub(crate) fn leave_level(&mut self, flags: u32) -> bool {
        if flags & Frame::BASE_LEVEL != 0 {
            let saved = self.base_saves.pop().unwrap_or_default();
            self.meta_depth = saved.meta_depth;
            self.meta_entry = saved.meta_entry;
            self.uncounted = self.uncounted.saturating_sub(saved.uncounted);
            true
        } else if flags & Frame::TRAP_SHORTCUT != 0 {
            if self.meta_depth == 0 {
                self.uncounted = self.uncounted.saturating_sub(1);
                return true;
            }
            false
        } else {
            self.meta_depth = self.meta_depth.saturating_sub(1);
            self.meta_depth == 0
        }
    }

    /// Is the process running instrumentation code (a `<metaLevel>` frame is active)?
    #[inline(always)]
    pub fn at_meta_level(&self) -> bool {
        self.meta_depth > 0
    }

    /// How many frames the process may hold beyond `--max-stack-depth` now
    /// ([`FrameAllowance`]).
    pub(crate) fn frame_allowance(&self) -> FrameAllowance {
        if self.meta_depth > 0 {
            FrameAllowance::MetaFrom(self.meta_entry)
        } else {
            FrameAllowance::Uncounted(self.uncounted)
        }
    }

    /// For each frame, bottom first: does it run at the meta level? (The
    /// level inside the frame: a `<metaLevel>` frame is, a `<baseLevel>` one
    /// is not, any other frame is at its caller's level.)
    pub(crate) fn frame_levels(&self) -> Vec<bool> {
        let mut meta = 0u32;
        let mut saved = Vec::new();
        self.frames
            .iter()
            .map(|f| {
                if f.flags & Frame::META_LEVEL != 0 {
                    if f.flags & Frame::BASE_LEVEL != 0 {
                        saved.push(meta);
                        meta = 0;
                    } else if f.flags & Frame::TRAP_SHORTCUT == 0 {
                        meta += 1;
                    }
                }
                meta > 0
            })
            .collect()
    }
}

/// What the running process may hold beyond `--max-stack-depth`
/// (`RuntimeLimits::set_allowance`): at the base level, its uncounted
/// instrumentation frames; at the meta level, `--max-stack-depth` frames
/// above the frame that entered it (instrumentation code is bounded on its
/// own, not by the program's depth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameAllowance {
    /// At the base level, with this many uncounted frames.
    Uncounted(usize),
    /// At the meta level, entered at this frame index.
    MetaFrom(usize),
}

impl Vm {
    /// A frame with `flags` (its code takes the level path: [`Frame::META_LEVEL`])
    /// is being pushed: update the process's level and, when it changed, the
    /// frame limit. Out of line: the activation path tests one flag.
    #[inline(never)]
    pub(crate) fn enter_level(&mut self, flags: u32) {
        let depth = self.sched.running.frames.len();
        if self.sched.running.enter_level(flags, depth) {
            self.level_changed();
        }
    }

    /// A frame with `flags` (its code takes the level path) was popped.
    #[inline(never)]
    pub(crate) fn leave_level(&mut self, flags: u32) {
        if self.sched.running.leave_level(flags) {
            self.level_changed();
        }
    }

    /// The running process's level may have changed (a level frame pushed or
    /// popped, a process switch): its frame limit, and whether its allocations
    /// are an observer's (`System>>observerAllocations:`).
    pub(crate) fn level_changed(&mut self) {
        self.limits
            .set_allowance(self.sched.running.frame_allowance());
        self.heap.set_observer_allocations(
            self.obs.observer_allocations && self.sched.running.at_meta_level(),
        );
    }

    /// Should the `<trapShortcut>` method `m` be bypassed: is its proxy disabled
    /// (literal 1 not `true`), or is the running process at the meta level?
    #[inline(always)]
    pub fn trap_shortcut_applies(&self, m: &MethodCode) -> bool {
        m.literals.len() > 1
            && (m.literals[0].get() != Value::TRUE || self.sched.running.at_meta_level())
    }

    /// Instead of activating trap `m`, send the original's hidden selector (literal
    /// 2) to the same receiver and `argc` arguments, through the trap's first
    /// send site's inline cache.
    #[inline(always)]
    pub(crate) fn send_to_original(&mut self, m: &MethodCode, argc: usize) -> Result<(), VmError> {
        let sel = m.sel_ids[1].get();
        let site = (!m.caches.is_empty()).then_some((m, 0));
        self.dispatch(sel, argc, site)
    }

    /// A copy of method `m` (fresh literal frame and inline caches) for class `holder`
    /// under `selector`, with its own Method object. Not installed anywhere.
    pub fn copy_method(
        &mut self,
        m: &MethodCode,
        holder: u32,
        selector: u32,
    ) -> Result<Rc<MethodCode>, OutOfMemory> {
        let id = self.image.methods.len() as u32;
        let selector_name: Rc<str> = Rc::from(self.image.symbols.name(selector));
        let code = Rc::new(MethodCode {
            id,
            kind: m.kind,
            selector,
            selector_name,
            holder: Cell::new(holder),
            num_args: m.num_args,
            num_temps: m.num_temps,
            env_size: m.env_size,
            needs_env: m.needs_env,
            saw_double: Cell::new(false),
            saw_string: Cell::new(false),
            home_env: m.home_env,
            max_stack: m.max_stack,
            ops: m.ops.clone(),
            literals: m.literals.iter().map(|c| Cell::new(c.get())).collect(),
            sel_ids: m.sel_ids.iter().map(|c| Cell::new(c.get())).collect(),
            caches: m.caches.iter().map(|_| Default::default()).collect(),
            blocks: m.blocks.clone(),
            trivial: m.trivial,
            native: Cell::new(None),
            hotness: Cell::new(m.hotness.get()),
            primitive: Cell::new(m.primitive.get()),
            primitive_only: m.primitive_only,
            unwind_protect: m.unwind_protect,
            exception_handler: m.exception_handler,
            meta_level: m.meta_level,
            base_level: m.base_level,
            frame_flags: m.frame_flags,
            trap_shortcut: m.trap_shortcut,
            pragmas: m.pragmas.clone(),
            lines: m.lines.clone(),
            line_by_pc: m.line_by_pc.clone(),
            first_line: m.first_line,
            file: m.file.clone(),
            source_range: Cell::new(m.source_range.get()),
            object: Cell::new(Value::NIL),
            home: Cell::new(id),
            arrivals: Default::default(),
            local_names: m.local_names.clone(),
        });
        let mclass = if code.primitive_only {
            cls::PRIMITIVE
        } else {
            cls::METHOD
        };
        let obj = self.heap.alloc_pointers(mclass, 0)?;
        self.heap.set_identity_hash(obj, id + 1);
        code.object.set(obj);
        self.image.methods.push(code.clone());
        Ok(code)
    }

    /// Set literal `i` (0-based, in range) of method `code` to `v`. A patched
    /// selector literal changes what its send sites call: its symbol id follows
    /// and the method's inline caches are flushed.
    ///
    /// Fails (changing nothing) when literal `i` names a selector or a global
    /// and `v` is not a Symbol of the same arity: a send site's argument count
    /// is fixed in its instruction, so any other value would make it call a
    /// method with the wrong number of arguments.
    pub fn patch_literal(&mut self, code: &MethodCode, i: usize, v: Value) -> Result<(), String> {
        let role = literal_role(code, i);
        if role != LiteralRole::Constant {
            let Some(id) = self.symbol_id(v) else {
                return Err(format!(
                    "literal {} of {} is a {}: it can only be replaced by a Symbol",
                    i + 1,
                    code.selector_name,
                    role.describe()
                ));
            };
            if let LiteralRole::Selector(argc) = role {
                let arity = crate::image::selector_arity(self.image.symbols.name(id));
                if arity != argc {
                    return Err(format!(
                        "literal {} of {} is a selector sent with {argc} argument(s); #{} takes {arity}",
                        i + 1,
                        code.selector_name,
                        self.image.symbols.name(id)
                    ));
                }
            }
        }
        code.literals[i].set(v);
        code.sel_ids[i].set(self.symbol_id(v).unwrap_or(u32::MAX));
        for site in code.caches.iter() {
            for c in site {
                c.set(Default::default());
            }
        }
        Ok(())
    }
}

/// Why compiled method `cc`, marked `<trapShortcut>`, cannot be one, or
/// `None` when it can (or is not marked). The VM acts on the pragma without
/// running the method ([`Vm::send_to_original`]): it sends literal 2 to the
/// receiver with the method's own arguments, through the method's first send
/// site's inline cache. So literal 2 must be a selector of the method's
/// arity, and the first send site, if any, a send of it with those arguments
/// (the cache then only ever holds methods for that selector). The
/// prototypes of `MpTrapPrototypes` have that shape; a hand-written method
/// without it is a compile error. `literalAt:put:` keeps the shape
/// (literal 2 takes only a Symbol of that arity).
pub(crate) fn trap_shortcut_problem(cc: &lupa_compiler::CompiledCode) -> Option<String> {
    use lupa_compiler::{Const, Op};
    if !cc.pragmas.iter().any(|(p, _)| p == "trapShortcut") {
        return None;
    }
    let argc = cc.num_args as usize;
    const SHAPE: &str = "a trap (MethodProxies) must have as literal 2 a selector of its own arity, which it sends first";
    let Some(Const::Symbol(original)) = cc.literals.get(1) else {
        return Some(format!(
            "is marked <trapShortcut> but its literal 2 is not a Symbol: {SHAPE}"
        ));
    };
    let arity = crate::image::selector_arity(original);
    if arity != argc {
        return Some(format!(
            "is marked <trapShortcut> but its literal 2, #{original}, takes {arity} argument(s), not {argc}: {SHAPE}"
        ));
    }
    let first_site = cc.code.iter().find(|op| {
        matches!(
            op,
            Op::Send { site: 0, .. } | Op::SuperSend { site: 0, .. } | Op::Special { site: 0, .. }
        )
    });
    match first_site {
        None | Some(Op::Send { sel: 1, .. }) => None,
        Some(_) => Some(format!(
            "is marked <trapShortcut> but its first send is not of #{original} (its literal 2): {SHAPE}"
        )),
    }
}

/// What the instructions of a method use a literal for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LiteralRole {
    /// Pushed as a value (or unused): anything may replace it.
    Constant,
    /// The name of a global.
    Global,
    /// A selector sent with this many arguments.
    Selector(usize),
}

impl LiteralRole {
    fn describe(self) -> &'static str {
        match self {
            LiteralRole::Constant => "constant",
            LiteralRole::Global => "global name",
            LiteralRole::Selector(_) => "selector",
        }
    }
}

/// The role of literal `i` in `code` (its instructions and a trap's hidden
/// selector, literal 2, sent with the method's own arguments).
fn literal_role(code: &MethodCode, i: usize) -> LiteralRole {
    use lupa_compiler::Op;
    if code.trap_shortcut && i == 1 {
        return LiteralRole::Selector(code.num_args);
    }
    for op in code.ops.iter() {
        match *op {
            Op::Send { sel, argc, .. } | Op::SuperSend { sel, argc, .. } if sel as usize == i => {
                return LiteralRole::Selector(argc as usize);
            }
            Op::Special { op, sel, .. } if sel as usize == i => {
                return LiteralRole::Selector(op.selector().1 as usize);
            }
            Op::PushGlobal(g) if g as usize == i => return LiteralRole::Global,
            _ => {}
        }
    }
    LiteralRole::Constant
}
