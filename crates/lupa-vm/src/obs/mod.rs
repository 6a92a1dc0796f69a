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
//! one predictable branch (`per_send`, which also serves counting sends per
//! site) otherwise. What the register holds and how the sampler reads it is
//! written down once, in ARCHITECTURE.md, "The sampler (VMProfiler)".

pub mod coverage;
pub mod lifetimes;
pub mod pretenure;
pub mod sampling;
pub mod self_timed;
pub mod stack_log;
pub mod watch;

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

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
    /// The VM state word ([`crate::obs::sampling::StateWord`]), written on
    /// transitions while a sampler is attached.
    pub state: AtomicU64,
    /// A stack request: the sampler's sequence number (non-zero), cleared by
    /// the interpreter when it copies the stack (see [`crate::obs::sampling`]).
    pub request: AtomicU64,
    /// The primitive running (the id of the method holding it, plus one; 0:
    /// none), written around each primitive call while a sampler is
    /// attached. Primitives are the most frequent short state, so they write
    /// this word alone (a load and two stores a call) rather than swap a
    /// packed state word; [`read_state`](Self::read_state) combines the two.
    pub primitive: AtomicU32,
}

impl SampleRegister {
    /// The VM state now.
    pub fn read_state(&self) -> crate::obs::sampling::StateWord {
        crate::obs::sampling::StateWord::unpack(self.effective_word(false))
    }

    /// The state word a sample reads: the published word and the running
    /// primitive combined, with `Interpreting` read as `Native` when
    /// `in_native` (a self-timed sampler's flag, on the VM thread; another
    /// thread passes false: native code entries rewrite the word for it).
    fn effective_word(&self, in_native: bool) -> u64 {
        crate::obs::sampling::StateWord::effective(
            self.state.load(Ordering::Relaxed),
            self.primitive.load(Ordering::Relaxed),
            in_native,
        )
    }

    /// Ask the interpreter for the running stack, tagged `seq` (non-zero),
    /// at its next safepoint (announced through `sched/poll.rs`).
    pub fn request_stack(&self, seq: u64) {
        self.request.store(seq, Ordering::Relaxed);
        crate::sched::poll::announce();
    }
}

/// What [`Observation::enter_primitive`] never answers: no primitive was
/// entered (nothing observes primitives).
pub(crate) const NOT_ENTERED: u32 = u32::MAX;

/// The VM's observation state.
pub struct Observation {
    /// Executed message sends (including fast-path arithmetic and comparisons).
    pub sends: u64,
    /// Executed inlined control-structure sends (`ifTrue:`, `whileTrue:`, `to:do:`...).
    pub inlined: u64,
    /// Process switches (the running process changed).
    pub process_switches: u64,
    /// Is the activation path on (activation hooks, line coverage or a
    /// method watch)? Trivial methods then go through `invoke`, returns
    /// test the frame's `WATCHED` flag and unwinds are told.
    pub hooks_on: bool,
    /// Is every activation announced (activation hooks or line coverage;
    /// not while only method watches are on, which need only `invoke`,
    /// returns and unwinds)?
    pub(crate) every_activation: bool,
    /// What native code is told of returns and direct entries
    /// ([`NativeCtx::slow_returns`](crate::NativeCtx::slow_returns)):
    /// [`SLOW_ALL`](crate::SLOW_ALL) while activation hooks are installed,
    /// [`SLOW_ANSWERS`](crate::SLOW_ANSWERS) or
    /// [`SLOW_CALLS`](crate::SLOW_CALLS) while only method watches are on
    /// (whether one records something at the end of calls), 0 otherwise
    /// (line coverage alone: native code compiled for it counts its own
    /// arrivals, `obs/coverage.rs`).
    pub(crate) slow_returns: u64,
    hooks: Option<Box<dyn ActivationHooks>>,
    /// The sampling register (shared with sampler threads): its state word is
    /// written on transitions while a sampler is attached
    /// (`Vm::attach_sampler`).
    pub sample: Arc<SampleRegister>,
    /// The generation of requests from other threads last looked at (see
    /// `sched/poll.rs`).
    pub(crate) polled: u64,
    /// The send count at which the next *poll* is due (`self_timed.rs`): the
    /// safepoints compare the send counter with it. A poll looks at requests
    /// from other threads and, with a self-timed sampler, at the clock. A
    /// cell, so that a state that ends past a self-timed deadline can bring
    /// the poll forward from `&self`.
    pub(crate) poll_at: Cell<u64>,
    /// A self-timed sampler (`self_timed.rs`).
    self_timing: Option<Box<crate::obs::self_timed::SelfTiming>>,
    /// With a self-timed sampler: when its next sample is due.
    self_deadline: Cell<Option<Instant>>,
    /// The same deadline in the units of the self-timed sampler's stamp
    /// counter (`u64::MAX`: none, or the counter not calibrated yet), which
    /// the ends of states compare (a stamp costs a few instructions where the
    /// clock costs fifty).
    deadline_stamp: Cell<u64>,
    /// The self-timed sampler's stamp counter (`SelfTimer` says which).
    stamp: fn() -> u64,
    /// Is the deadline near (within the armed part of `self_timed.rs`'s
    /// approach, and not found passed yet)? Then the start and the end of
    /// every primitive and lookup test it; the starts and ends of long
    /// operations (collections, large allocations, blocking calls, the idle
    /// sleep, JIT work) always do.
    stamp_armed: Cell<bool>,
    /// With a self-timed sampler: the state word of an operation that ended
    /// past the deadline, the state of the sample the next poll takes.
    pending_state: Cell<Option<u64>>,
    /// Is every send observed beyond its count? The interpreter runs the loop
    /// compiled for it (a lifetime recording, line coverage, guarded traps,
    /// or [`on_each_send`](Self::on_each_send)). A sampler alone does not
    /// need it: its stack requests reach the safepoints of either loop.
    pub per_send: bool,
    /// Is every send observed beyond what native code does itself, i.e.
    /// `per_send` for another reason than line coverage (whose branch
    /// marks native code compiled for it makes)? Native code does not run
    /// then.
    pub(crate) each_send: bool,
    /// With `per_send`: does every send call `Observation::on_send` (sends
    /// counted by site, deterministic sampling)?
    pub on_each_send: bool,
    /// Do primitive calls publish their state or take the lifetime
    /// recorder's samples (a sampler attached, or `per_send`)?
    pub(crate) around_primitives: bool,
    sampler_attached: bool,
    /// The finalization process while it mourns (published as
    /// [`VmState::Finalization`](crate::obs::sampling::VmState::Finalization)
    /// instead of `Interpreting`), or `usize::MAX`.
    pub(crate) finalizer: usize,
    /// Is native code running (entered from the loop, not yet left)? Then
    /// `Interpreting` is published as
    /// [`VmState::Native`](crate::obs::sampling::VmState::Native).
    pub(crate) in_native: bool,
    /// Sends per send site, indexed by method id then instruction index
    /// (grown on demand), while counting ([`Observation::start_site_counts`]).
    sites: Option<Vec<Vec<u64>>>,
    /// Deterministic sampling: a sample every this many sends (0: off).
    every: u64,
    /// The send count at which the next deterministic sample is due.
    next_every: u64,
    /// Stacks copied for samples, oldest first.
    stacks: crate::obs::stack_log::StackLog,
    /// Line coverage, while on: per method id and instruction index, runs
    /// cut short (the arrivals are counted in the methods' own counters,
    /// `MethodCode::arrivals`; see `coverage.rs`).
    pub(crate) lines: Option<crate::obs::coverage::LineCounts>,
    /// Is a trap (or an object) installed under a selector the interpreter
    /// has a fast path for? Then the observing loop runs and a special send
    /// whose method is instrumented is sent, not taken by its fast path
    /// (`Vm::special_is_instrumented`).
    pub(crate) guarding_traps: bool,
    /// Collections and process switches while a sampler thread is attached.
    events: Vec<crate::obs::sampling::VmEvent>,
    /// Events not kept (more than [`MAX_EVENTS`](crate::obs::sampling::MAX_EVENTS)).
    events_dropped: u64,
    /// Nanoseconds spent in garbage collection.
    pub gc_time_ns: u64,
    gc_hooks: Option<Box<dyn GcHooks>>,
    /// Object lifetimes being recorded (`lifetimes.rs`).
    pub(crate) lifetimes: Option<crate::obs::lifetimes::LifetimeRecorder>,
    /// The last lifetime recording stopped from Smalltalk (`System>>stopLifetimes`).
    pub(crate) last_lifetimes: Option<crate::obs::lifetimes::LifetimeRecording>,
    /// Pretenuring advice in force (`VmOptions::pretenure`), if any.
    pub(crate) pretenuring: Option<crate::obs::pretenure::Pretenuring>,
    /// Method watches (`watch.rs`).
    pub(crate) watches: crate::obs::watch::Watches,
    /// Is a trap (or an object) installed under a special selector? With a
    /// watched method of a special selector, this makes `guarding_traps`.
    traps_installed: bool,
    /// Does a watch name a method with a special selector?
    watches_special: bool,
    /// The meta level's allocations are an observer's (`System>>observerAllocations:`,
    /// Illimani's faithful mode): while a process runs at the meta level, the heap
    /// puts them in old space, off the allocation clock (`Heap::set_observer_allocations`).
    pub(crate) observer_allocations: bool,
}

impl Default for Observation {
    fn default() -> Self {
        Observation {
            sends: 0,
            inlined: 0,
            process_switches: 0,
            hooks_on: false,
            every_activation: false,
            slow_returns: 0,
            hooks: None,
            sample: Arc::default(),
            polled: 0,
            poll_at: Cell::new(crate::obs::self_timed::IDLE_EVERY),
            self_timing: None,
            self_deadline: Cell::new(None),
            deadline_stamp: Cell::new(u64::MAX),
            stamp: crate::obs::self_timed::no_stamp,
            stamp_armed: Cell::new(false),
            pending_state: Cell::new(None),
            per_send: false,
            each_send: false,
            on_each_send: false,
            around_primitives: false,
            sampler_attached: false,
            finalizer: usize::MAX,
            in_native: false,
            sites: None,
            every: 0,
            next_every: 0,
            stacks: crate::obs::stack_log::StackLog::default(),
            lines: None,
            guarding_traps: false,
            events: Vec::new(),
            events_dropped: 0,
            gc_time_ns: 0,
            gc_hooks: None,
            lifetimes: None,
            last_lifetimes: None,
            pretenuring: None,
            watches: Default::default(),
            traps_installed: false,
            watches_special: false,
            observer_allocations: false,
        }
    }
}

impl Observation {
    /// Attach a sampler: from now on the VM publishes its state in the
    /// sampling register, which the returned handle reads from any thread,
    /// and answers its stack requests.
    pub(crate) fn attach_sampler(&mut self) -> Arc<SampleRegister> {
        self.sampler_attached = true;
        self.schedule_poll();
        self.sample.request.store(0, Ordering::Relaxed);
        self.update_per_send();
        self.sample.clone()
    }

    /// Stop writing the sampling register.
    pub(crate) fn detach_sampler(&mut self) {
        self.sampler_attached = false;
        self.self_timing = None;
        self.self_deadline.set(None);
        self.deadline_stamp.set(u64::MAX);
        self.stamp_armed.set(false);
        self.pending_state.set(None);
        self.poll_at
            .set(self.sends + crate::obs::self_timed::IDLE_EVERY);
        self.sample.request.store(0, Ordering::Relaxed);
        self.update_per_send();
    }

    /// Attach a self-timed sampler (`self_timed.rs`): the state word is
    /// published as for a sampler thread, and the VM's polls look at the
    /// clock; the first sample is due at `first`.
    pub(crate) fn attach_self_timer(
        &mut self,
        timer: Box<dyn crate::obs::self_timed::SelfTimer>,
        mean_interval: std::time::Duration,
        first: Instant,
    ) {
        self.attach_sampler();
        self.stamp = timer.stamp_fn();
        let timing = crate::obs::self_timed::SelfTiming::new(timer, mean_interval, self.sends);
        self.poll_at.set(self.sends + timing.every);
        self.self_timing = Some(Box::new(timing));
        self.self_deadline.set(Some(first));
        self.deadline_stamp.set(u64::MAX);
        self.stamp_armed.set(true);
    }

    /// Detach a self-timed sampler and give its timer back (`None`: none was
    /// attached; a sampler thread's attachment is left as it is).
    pub(crate) fn detach_self_timer(
        &mut self,
    ) -> Option<Box<dyn crate::obs::self_timed::SelfTimer>> {
        let timing = self.self_timing.take()?;
        self.detach_sampler();
        Some(timing.timer)
    }

    /// Is a self-timed sampler attached?
    pub(crate) fn self_timed(&self) -> bool {
        self.self_timing.is_some()
    }

    /// Is a sampler thread attached (one that writes the request word)?
    pub(crate) fn thread_sampler(&self) -> bool {
        self.sampler_attached && self.self_timing.is_none()
    }

    /// A poll (the send counter reached [`poll_at`](Self::poll_at)) at `now`,
    /// with a self-timed sampler attached: answers the sequence number of a
    /// sample to take now, if one is due, and schedules the next poll.
    pub(crate) fn self_poll(&mut self) -> Option<u64> {
        let stamp = (self.stamp)();
        let pending = self.pending_state.take();
        let Some(t) = self.self_timing.as_mut() else {
            self.poll_at
                .set(self.sends + crate::obs::self_timed::IDLE_EVERY);
            return None;
        };
        let at = self.deadline_stamp.get();
        if pending.is_none() && at != u64::MAX && stamp < at {
            // Most polls: the deadline is not due, which the stamp counter
            // tells without the clock.
            t.adapt_stamps(stamp, self.sends);
            let (gap, armed) = t.approach(at - stamp);
            self.stamp_armed.set(armed);
            self.poll_at.set(self.sends + gap);
            return None;
        }
        // Read with the stamp, so that the pair calibrates the deadline's stamp.
        let now = Instant::now();
        if pending.is_none() {
            t.adapt(now, stamp, self.sends);
        }
        // Past the deadline's stamp is due, whatever the clock says: the
        // boundaries of short operations decided by the stamp, and a clock
        // read tens of nanoseconds after it must not move the deadline.
        let due = pending.is_some()
            || at != u64::MAX
            || self.self_deadline.get().is_some_and(|d| now >= d);
        let seq = if due {
            let word = pending.unwrap_or_else(|| self.sample.effective_word(self.in_native));
            let (seq, next) = t
                .timer
                .take(crate::obs::sampling::StateWord::unpack(word), now);
            self.self_deadline.set(Some(next));
            Some(seq)
        } else {
            None
        };
        let at = self
            .self_deadline
            .get()
            .map_or(u64::MAX, |d| t.stamp_at(d, now, stamp));
        self.deadline_stamp.set(at);
        let (gap, armed) = if at == u64::MAX {
            // Not calibrated yet: the ends of operations read the clock.
            (t.next_gap(), true)
        } else {
            t.approach(at.saturating_sub(stamp))
        };
        self.stamp_armed.set(armed);
        self.poll_at.set(self.sends + gap);
        seq
    }

    /// Where no self-timed sampler runs: the next poll, for requests from
    /// other threads (a stop, a sampler thread's tick).
    pub(crate) fn schedule_poll(&self) {
        let gap = if self.sampler_attached {
            crate::obs::self_timed::THREAD_EVERY
        } else {
            crate::obs::self_timed::IDLE_EVERY
        };
        self.poll_at.set(self.sends + gap);
    }

    /// A state ends (a primitive, a lookup, a collection...), or is
    /// interrupted by a long operation (a collection, a large allocation, a
    /// blocking call), while a self-timed sampler runs: if its deadline has
    /// passed, the sample is that state's, taken at the next safepoint
    /// (`self_timed.rs`).
    #[cold]
    #[inline(never)]
    fn self_timed_state_ends(&self) {
        let passed = match self.deadline_stamp.get() {
            // Not calibrated yet (no poll since the sampler started): the clock.
            u64::MAX => self
                .self_deadline
                .get()
                .is_some_and(|d| Instant::now() >= d),
            at => (self.stamp)() >= at,
        };
        if passed && self.pending_state.get().is_none() {
            self.pending_state
                .set(Some(self.sample.effective_word(self.in_native)));
            self.poll_at.set(0);
            // The sample is decided: no more reads until the poll takes it.
            self.stamp_armed.set(false);
        }
    }

    /// A short operation (a primitive, a lookup) starts while the deadline's
    /// boundaries are armed: if the deadline has passed already, the sample
    /// is not this operation's, nor is it decided here (a boundary is not a
    /// random point in the program's time: a sample charged to the stack at
    /// every primitive's start would charge the caller of every primitive
    /// with the time of the callees that ran before it): the boundaries
    /// are disarmed, and the next poll takes the sample (`self_timed.rs`).
    #[cold]
    #[inline(never)]
    fn short_state_starts(&self) {
        if self.deadline_stamp.get() != u64::MAX && (self.stamp)() >= self.deadline_stamp.get() {
            self.stamp_armed.set(false);
        }
    }

    /// Recompute the per-send mode after a change of what is observed.
    pub(crate) fn refresh_per_send(&mut self) {
        self.update_per_send();
    }

    /// Are activation hooks installed (besides line coverage, which is not
    /// a hook)?
    #[inline]
    pub(crate) fn has_hooks(&self) -> bool {
        self.hooks.is_some()
    }

    fn update_per_send(&mut self) {
        let full = self.sites.is_some() || self.every > 0;
        // A lifetime recording needs the observing loop (its looks at the
        // heap's samples), line coverage its branch marks, guarded traps its
        // special sends; none of them `on_send`.
        let light = self.lifetimes.is_some() || self.guarding_traps;
        self.each_send = full || light;
        self.per_send = self.each_send || self.lines.is_some();
        self.on_each_send = full;
        self.around_primitives = self.per_send || self.sampler_attached;
    }

    /// May native code (a JIT's) run now? It counts sends and tests a
    /// sampler's stack requests at its sends, nothing else: not while
    /// activation hooks are installed or while anything observes sends one
    /// by one (exact counts, guarded traps, a lifetime recording), which the
    /// interpreter's observing loop does. Line coverage lets it run: code
    /// compiled while lines are counted counts its own arrivals (at pc 0
    /// where it pushes a frame or runs a trivial method inline, and at every
    /// branch and jump destination), and starting or stopping line coverage
    /// drops all native code (`Vm::drop_native_code`), so code made for the
    /// other mode never runs. Method watches let it run: code compiled under
    /// a watch asks the called method's watch cell (`obs::watch::WatchCell`)
    /// at its direct entry, its trivial sites and its return, and goes on
    /// natively when the call records nothing new (its count added in the
    /// cell); otherwise, and in code compiled without a watch, a direct
    /// entry refuses its native call and the runtime records it and pushes
    /// the frame (`Vm::native_watched_call`), other sends of a watched
    /// method go through the runtime's `invoke`, and returns whose answer is
    /// to be recorded go through the runtime's return (`NativeCtx::slow_returns`).
    pub fn native_may_run(&self) -> bool {
        self.hooks.is_none() && !self.each_send
    }

    /// Is a sampler attached, or deterministic sampling on? (One sampler at a
    /// time: they share the register and the copied stacks.)
    pub fn sampling(&self) -> bool {
        self.sampler_attached || self.every > 0
    }

    /// Take a deterministic sample every `n` sends from now on (0: stop).
    pub(crate) fn sample_every(&mut self, n: u64) {
        self.every = n;
        self.next_every = self.sends.saturating_add(n);
        self.update_per_send();
    }

    /// Count every send from now on by its site: the method and the index of
    /// the send instruction that executed it (for a `perform:` or
    /// `invokeOn:with:`, the instruction that called the primitive). Restarts
    /// the counts when already counting.
    pub(crate) fn start_site_counts(&mut self) {
        self.sites = Some(Vec::new());
        self.update_per_send();
    }

    /// Stop counting sends by site and answer the counts: `(method id,
    /// instruction index, sends)`, in no particular order (empty when not
    /// counting). Every counted send is in exactly one site.
    pub(crate) fn take_site_counts(&mut self) -> Vec<(u32, u32, u64)> {
        let sites = self.sites.take().unwrap_or_default();
        let mut out = Vec::new();
        for (method, counts) in sites.into_iter().enumerate() {
            for (index, n) in counts.into_iter().enumerate() {
                if n > 0 {
                    out.push((method as u32, index as u32, n));
                }
            }
        }
        self.update_per_send();
        out
    }

    /// Install activation hooks (replacing any).
    pub fn set_hooks(&mut self, hooks: Option<Box<dyn ActivationHooks>>) {
        self.hooks = hooks;
        self.refresh_hooks_on();
    }

    /// Remove and answer the hooks.
    pub fn take_hooks(&mut self) -> Option<Box<dyn ActivationHooks>> {
        let hooks = self.hooks.take();
        self.refresh_hooks_on();
        hooks
    }

    /// Recompute `hooks_on`: activation hooks, line coverage or a method
    /// watch need the activation path; and `every_activation`: hooks and
    /// line coverage need every activation announced.
    pub(crate) fn refresh_hooks_on(&mut self) {
        self.every_activation = self.hooks.is_some() || self.lines.is_some();
        self.hooks_on = self.every_activation || self.watches.is_on();
        self.slow_returns = if self.hooks.is_some() {
            crate::SLOW_ALL
        } else if self.watches.answers_expected() {
            crate::SLOW_ANSWERS
        } else if self.watches.is_on() {
            crate::SLOW_CALLS
        } else {
            0
        };
    }

    /// Guard the special sends whose method is instrumented (see
    /// [`Observation::guarding_traps`]); answers whether that changed.
    pub(crate) fn set_guarding_traps(&mut self, on: bool) -> bool {
        self.traps_installed = on;
        self.update_guard()
    }

    /// Guard the special sends while a watched method has a special
    /// selector (`on`); answers whether the guard changed.
    pub(crate) fn set_guarding_watches(&mut self, on: bool) -> bool {
        self.watches_special = on;
        self.update_guard()
    }

    /// The guard is on while traps or watched methods are under special
    /// selectors; answers whether it changed.
    fn update_guard(&mut self) -> bool {
        let on = self.traps_installed || self.watches_special;
        let changed = self.guarding_traps != on;
        self.guarding_traps = on;
        self.update_per_send();
        changed
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

    /// An activation, told to the hooks.
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

    /// A send is executed by the instruction before `pc` of `method` (called
    /// only while [`on_each_send`](Self::on_each_send); kept out of line so
    /// the interpreter's send paths stay small). Answers whether a
    /// deterministic sample is due now.
    #[inline(never)]
    pub(crate) fn on_send(&mut self, method: u32, pc: usize) -> bool {
        let due = self.every > 0 && self.sends >= self.next_every;
        if let Some(sites) = self.sites.as_mut() {
            let (m, i) = (method as usize, pc.saturating_sub(1));
            if sites.len() <= m {
                sites.resize_with(m + 1, Vec::new);
            }
            let counts = &mut sites[m];
            if counts.len() <= i {
                counts.resize(i + 1, 0);
            }
            counts[i] += 1;
        }
        due
    }

    /// Publish the VM state (while a sampler is attached). `Interpreting` in
    /// the finalization process while it mourns is published as
    /// `Finalization`, and while native code runs (a runtime call it made
    /// ends) as `Native` (the one place `Interpreting` is packed).
    #[inline]
    pub(crate) fn set_state(
        &self,
        state: crate::obs::sampling::VmState,
        detail: u32,
        process: usize,
    ) {
        if self.sampler_attached {
            let state = match state {
                crate::obs::sampling::VmState::Interpreting if process == self.finalizer => {
                    crate::obs::sampling::VmState::Finalization
                }
                crate::obs::sampling::VmState::Interpreting if self.in_native => {
                    crate::obs::sampling::VmState::Native
                }
                state => state,
            };
            self.sample.state.store(
                crate::obs::sampling::StateWord::pack(state, detail, process),
                Ordering::Relaxed,
            );
        }
    }

    /// Is a sampler thread attached (the state word published)? The one
    /// branch the VM's allocation and blocking paths test before
    /// [`push_state`](Self::push_state).
    #[inline(always)]
    pub(crate) fn sampler_attached(&self) -> bool {
        self.sampler_attached
    }

    /// Publish `state` for an operation that interrupts the current one (an
    /// allocation, a collection, a blocking call, an idle sleep): answers the
    /// word it replaced, for [`pop_state`](Self::pop_state) when the operation
    /// ends. Callers test [`sampler_attached`](Self::sampler_attached) first
    /// on hot paths; without a sampler it stores nothing.
    #[inline(never)]
    pub(crate) fn push_state(
        &self,
        state: crate::obs::sampling::VmState,
        detail: u32,
        process: usize,
    ) -> u64 {
        if !self.sampler_attached {
            return 0;
        }
        if self.self_timing.is_some() {
            // The operation interrupted is the sample's if the deadline passed
            // in it (a long primitive that allocates at its end).
            self.self_timed_state_ends();
        }
        self.store_state(state, detail, process)
    }

    /// Publish `state` for a short operation that interrupts the current one
    /// and ends before any process switch (a primitive call, a method
    /// lookup): answers the word it replaced, for
    /// [`restore_state`](Self::restore_state). The caller tests
    /// [`sampler_attached`](Self::sampler_attached) first.
    #[inline(always)]
    pub(crate) fn swap_state(
        &self,
        state: crate::obs::sampling::VmState,
        detail: u32,
        process: usize,
    ) -> u64 {
        if self.stamp_armed.get() {
            self.short_state_starts();
        }
        self.store_state(state, detail, process)
    }

    /// Publish `state`, answering the word it replaced.
    #[inline(always)]
    fn store_state(
        &self,
        state: crate::obs::sampling::VmState,
        detail: u32,
        process: usize,
    ) -> u64 {
        let saved = self.sample.state.load(Ordering::Relaxed);
        self.sample.state.store(
            crate::obs::sampling::StateWord::pack(state, detail, process),
            Ordering::Relaxed,
        );
        saved
    }

    /// A primitive of method `id` starts (while primitives are observed):
    /// answers the primitive it interrupts, for
    /// [`leave_primitive`](Self::leave_primitive) (never [`NOT_ENTERED`]).
    #[inline(always)]
    pub(crate) fn enter_primitive(&self, id: u32) -> u32 {
        if self.stamp_armed.get() {
            self.short_state_starts();
        }
        let saved = self.sample.primitive.load(Ordering::Relaxed);
        self.sample
            .primitive
            .store(id.wrapping_add(1), Ordering::Relaxed);
        saved
    }

    /// The primitive [`enter_primitive`](Self::enter_primitive) announced
    /// ended: a self-timed sample whose deadline passed while it ran is its
    /// (`self_timed.rs`).
    #[inline(always)]
    pub(crate) fn leave_primitive(&self, saved: u32) {
        if self.stamp_armed.get() {
            self.self_timed_state_ends();
        }
        self.sample.primitive.store(saved, Ordering::Relaxed);
    }

    /// Put back the word [`swap_state`](Self::swap_state) answered.
    #[inline(always)]
    pub(crate) fn restore_state(&self, saved: u64) {
        if self.stamp_armed.get() {
            self.self_timed_state_ends();
        }
        self.sample.state.store(saved, Ordering::Relaxed);
    }

    /// [`push_state`](Self::push_state) for an allocation: publishes
    /// `Allocation` whose detail names the primitive it happens in (the id of
    /// the method holding it, plus one; 0 outside a primitive), and answers the
    /// word to restore (nothing without a sampler).
    #[inline]
    pub(crate) fn push_allocation(&self, process: usize) -> u64 {
        if !self.sampler_attached {
            return 0;
        }
        if self.self_timing.is_some() {
            self.self_timed_state_ends();
        }
        let saved = self.sample.state.load(Ordering::Relaxed);
        let before = crate::obs::sampling::StateWord::unpack(saved);
        let detail = if before.state == crate::obs::sampling::VmState::Primitive {
            before.detail.wrapping_add(1)
        } else {
            self.sample.primitive.load(Ordering::Relaxed)
        };
        self.sample.state.store(
            crate::obs::sampling::StateWord::pack(
                crate::obs::sampling::VmState::Allocation,
                detail,
                process,
            ),
            Ordering::Relaxed,
        );
        saved
    }

    /// Restore the word [`push_state`](Self::push_state) answered (nothing
    /// without a sampler; a sampler attached in between is given the word of
    /// the interrupted operation, which is what the VM goes back to).
    #[inline]
    pub(crate) fn pop_state(&self, saved: u64) {
        if self.sampler_attached {
            if self.self_timing.is_some() {
                self.self_timed_state_ends();
            }
            self.sample.state.store(saved, Ordering::Relaxed);
        }
    }

    /// Is a stack requested by the sampler, or a deterministic sample due?
    /// Answers the sampler's sequence number (cleared) and whether a
    /// deterministic sample is due (the next one scheduled).
    pub(crate) fn take_due(&mut self) -> (u64, bool) {
        let seq = self.take_request();
        let every = self.every > 0 && self.sends >= self.next_every;
        if every {
            self.next_every = self.sends + self.every;
        }
        (seq, every)
    }

    /// The sampler's stack request, if any (cleared).
    pub(crate) fn take_request(&mut self) -> u64 {
        if self.sampler_attached {
            self.sample.request.swap(0, Ordering::Relaxed)
        } else {
            0
        }
    }

    /// The stacks copied for samples, to push a copy to.
    pub(crate) fn stack_log(&mut self) -> &mut crate::obs::stack_log::StackLog {
        &mut self.stacks
    }

    /// The stacks copied since the last call, oldest first.
    pub fn take_stacks(&mut self) -> crate::obs::stack_log::StackLog {
        std::mem::take(&mut self.stacks)
    }

    /// Are events recorded (a sampler thread attached)? Collections and
    /// process switches test it; they are rare enough for the test to cost
    /// nothing.
    #[inline]
    pub(crate) fn recording_events(&self) -> bool {
        self.sampler_attached
    }

    /// Record an event (the first [`MAX_EVENTS`](crate::obs::sampling::MAX_EVENTS) of a session).
    pub(crate) fn record_event(&mut self, e: crate::obs::sampling::VmEvent) {
        if self.events.len() < crate::obs::sampling::MAX_EVENTS {
            self.events.push(e);
        } else {
            self.events_dropped += 1;
        }
    }

    /// The events recorded since the last call, oldest first, and how many
    /// were dropped.
    pub fn take_events(&mut self) -> (Vec<crate::obs::sampling::VmEvent>, u64) {
        (
            std::mem::take(&mut self.events),
            std::mem::take(&mut self.events_dropped),
        )
    }
}
