//! Observation points: the send counter, activation hooks and the sampling register.
//!
//! What counts as a send: every executed send instruction of the program
//! (`Send`, `SuperSend`, `Special` — whether the VM ran it by a fast path or a
//! real lookup) and the message a `perform:` family primitive or
//! `Method>>invokeOn:with:` sends. Sends the VM makes by itself — the entry
//! send of `Vm::send_message`, `doesNotUnderstand:arguments:`, `error:`,
//! `unknownGlobal:`, `mustBeBoolean`, `escapedBlock:`, `run:with:in:` and the
//! `value` of an `ensure:` block run during an unwind — are not counted: they
//! replace or complete a send that was.
//!
//! All of them are designed to cost next to nothing when unused: the counters are
//! plain increments of a field the interpreter already has in cache, the hooks
//! are behind one predictable branch (`hooks_on`), and the sampling register is
//! written (one relaxed atomic store) only while a sampler is attached — behind
//! one predictable branch (`sampling`) otherwise. What the register holds today
//! and how the sampler will grow it (a state block, stack requests honoured at
//! safepoints) is written down once, in ARCHITECTURE.md, "The sampling decision".

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One activation event.
#[derive(Debug, Clone, Copy)]
pub struct Activation {
    /// Method (or block) id: an index into `Vm::methods`.
    pub method: u32,
    /// Class index of the receiver.
    pub receiver_class: u32,
    /// Frame index of the activation in its process.
    pub depth: usize,
    /// Index of the process it runs in.
    pub process: usize,
    /// The send counter at the event.
    pub sends: u64,
    /// At an enter: the source line of the send in the calling frame that
    /// made this activation (0 when unknown: no caller, or an exit event).
    pub call_line: u32,
}

/// Receives activation enter/exit events (including exits by unwinding) and
/// process switches.
pub trait ActivationHooks {
    /// A method or block activation started.
    fn enter(&mut self, ev: &Activation);
    /// An activation ended; `unwinding` is true when it was popped by an unwind
    /// (exception, non-local return, termination) rather than a return.
    fn exit(&mut self, ev: &Activation, unwinding: bool);
    /// The scheduler switched from process `from` to process `to`.
    fn process_switch(&mut self, from: usize, to: usize, sends: u64) {
        let _ = (from, to, sends);
    }
}

/// One garbage collection, reported after it finished.
#[derive(Debug)]
pub struct GcEvent<'a> {
    /// Scavenge or full GC.
    pub kind: lupa_heap::CollectionKind,
    /// How long it took.
    pub duration: std::time::Duration,
    /// Its number (counting collections of both kinds from 1).
    pub number: u64,
    /// Tracked objects ([`lupa_heap::Heap::set_tracked`]) it found dead.
    pub deaths: &'a [lupa_heap::Death],
}

/// Receives collection events (with the deaths of tracked objects). While no
/// GC hook is installed, deaths stay queued in the heap
/// ([`lupa_heap::Heap::take_deaths`], `System>>takeDeaths`).
pub trait GcHooks {
    /// A collection finished.
    fn collection(&mut self, ev: &GcEvent<'_>);
}

/// What a sampler can read at any time from another thread.
#[derive(Debug, Default)]
pub struct SampleRegister {
    /// `method id << 32 | pc` of the last send instruction that went through a
    /// lookup (`Send`, `SuperSend`, an `Op::Special` whose fast path did not
    /// apply), written only while a sampler is attached.
    pub last: AtomicU64,
}

impl SampleRegister {
    /// Decode: (method id, pc).
    pub fn read(&self) -> (u32, u32) {
        let v = self.last.load(Ordering::Relaxed);
        ((v >> 32) as u32, v as u32)
    }
}

/// The VM's observation state.
#[derive(Default)]
pub struct Observation {
    /// Executed message sends (including fast-path arithmetic and comparisons).
    pub sends: u64,
    /// Executed inlined control-structure sends (`ifTrue:`, `whileTrue:`, `to:do:`...).
    pub inlined: u64,
    /// Are activation hooks installed?
    pub hooks_on: bool,
    hooks: Option<Box<dyn ActivationHooks>>,
    /// The sampling register (shared with sampler threads). Written at every send
    /// while a sampler is attached ([`Observation::attach_sampler`]).
    pub sample: Arc<SampleRegister>,
    /// Is a sampler attached? (Then every send writes the sampling register.)
    pub sampling: bool,
    /// Nanoseconds spent in garbage collection.
    pub gc_time_ns: u64,
    gc_hooks: Option<Box<dyn GcHooks>>,
}

impl Observation {
    /// Attach a sampler: from now on every send records its method and pc in the
    /// sampling register, which the returned handle reads from any thread.
    pub fn attach_sampler(&mut self) -> Arc<SampleRegister> {
        self.sampling = true;
        self.sample.clone()
    }

    /// Stop writing the sampling register.
    pub fn detach_sampler(&mut self) {
        self.sampling = false;
    }

    /// Install activation hooks (replacing any).
    pub fn set_hooks(&mut self, hooks: Option<Box<dyn ActivationHooks>>) {
        self.hooks_on = hooks.is_some();
        self.hooks = hooks;
    }

    /// Remove and answer the hooks.
    pub fn take_hooks(&mut self) -> Option<Box<dyn ActivationHooks>> {
        self.hooks_on = false;
        self.hooks.take()
    }

    /// Install GC hooks (replacing any).
    pub fn set_gc_hooks(&mut self, hooks: Option<Box<dyn GcHooks>>) {
        self.gc_hooks = hooks;
    }

    /// Remove and answer the GC hooks.
    pub fn take_gc_hooks(&mut self) -> Option<Box<dyn GcHooks>> {
        self.gc_hooks.take()
    }

    /// Are GC hooks installed?
    pub fn gc_hooks_on(&self) -> bool {
        self.gc_hooks.is_some()
    }

    pub(crate) fn collection(&mut self, ev: &GcEvent<'_>) {
        if let Some(h) = self.gc_hooks.as_mut() {
            h.collection(ev);
        }
    }

    #[inline]
    pub(crate) fn enter(&mut self, ev: Activation) {
        if let Some(h) = self.hooks.as_mut() {
            h.enter(&ev);
        }
    }

    #[inline]
    pub(crate) fn exit(&mut self, ev: Activation, unwinding: bool) {
        if let Some(h) = self.hooks.as_mut() {
            h.exit(&ev, unwinding);
        }
    }

    pub(crate) fn process_switch(&mut self, from: usize, to: usize) {
        let sends = self.sends;
        if let Some(h) = self.hooks.as_mut() {
            h.process_switch(from, to, sends);
        }
    }

    #[inline(always)]
    pub(crate) fn sample(&self, method: u32, pc: usize) {
        self.sample.last.store(
            ((method as u64) << 32) | (pc as u64 & 0xFFFF_FFFF),
            Ordering::Relaxed,
        );
    }
}
