//! The VM's observation API, what profilers and the primitives call: a sampler
//! attached or detached, deterministic sampling, sends counted by site, line
//! coverage, lifetime recording (Illimani's VM mode) and pretenuring. Each
//! changes the observation state (`obs`) and, where the interpreter must run
//! its other loop, asks for a safepoint ([`Vm::observation_changed`]): the
//! interpreter runs one of two loops depending on
//! [`Observation::per_send`](crate::obs::Observation::per_send), and the
//! running loop hands over to the other there, so neither loop tests the mode
//! at every send.

use super::Vm;
use crate::obs::SampleRegister;
use crate::obs::coverage::LineCoverage;
use crate::obs::lifetimes::{LifetimeOptions, LifetimeRecorder, LifetimeRecording};
use std::sync::Arc;

impl Vm {
    /// Attach a sampler: from now on every send records its method and pc in
    /// the sampling register, which the returned handle reads from any thread.
    pub fn attach_sampler(&mut self) -> Arc<SampleRegister> {
        let r = self.obs.attach_sampler();
        // The state word may be stale from an earlier sampler (detached inside
        // a primitive): the VM is interpreting now.
        self.obs.set_state(
            crate::obs::sampling::VmState::Interpreting,
            0,
            self.sched.current,
        );
        self.observation_changed();
        r
    }

    /// Attach a self-timed sampler (no thread: the VM samples itself at its
    /// polls, `obs/self_timed.rs`), whose first sample is due at `first` and
    /// the next ones about every `mean_interval`, as `timer` says. The state
    /// word is published as for [`attach_sampler`](Self::attach_sampler).
    pub fn attach_self_timer(
        &mut self,
        timer: Box<dyn crate::SelfTimer>,
        mean_interval: std::time::Duration,
        first: std::time::Instant,
    ) {
        self.obs.attach_self_timer(timer, mean_interval, first);
        self.obs.set_state(
            crate::obs::sampling::VmState::Interpreting,
            0,
            self.sched.current,
        );
        self.observation_changed();
    }

    /// Detach a self-timed sampler and give its timer back (`None`: none
    /// is attached).
    pub fn detach_self_timer(&mut self) -> Option<Box<dyn crate::SelfTimer>> {
        let timer = self.obs.detach_self_timer();
        self.observation_changed();
        timer
    }

    /// Stop writing the sampling register.
    pub fn detach_sampler(&mut self) {
        self.obs.detach_sampler();
        self.observation_changed();
    }

    /// Deterministic sampling: from now on the interpreter copies the running
    /// stack every `n` sends ([`Observation::take_stacks`](crate::Observation::take_stacks), sequence number 0);
    /// 0 stops it.
    pub fn sample_every(&mut self, n: u64) {
        self.obs.sample_every(n);
        self.observation_changed();
    }

    /// Count every send from now on by its site: the method and the index of
    /// the send instruction that executed it (for a `perform:` or
    /// `invokeOn:with:`, the instruction that called the primitive). Restarts
    /// the counts when already counting.
    pub fn start_site_counts(&mut self) {
        self.obs.start_site_counts();
        self.observation_changed();
    }

    /// Stop counting sends by site and answer the counts: `(method id,
    /// instruction index, sends)`, in no particular order (empty when not
    /// counting). Every send counted meanwhile is in exactly one site.
    pub fn take_site_counts(&mut self) -> Vec<(u32, u32, u64)> {
        let counts = self.obs.take_site_counts();
        self.observation_changed();
        counts
    }

    /// The observation mode changed: the interpreter looks at it at its next
    /// safepoint (through the scheduler's pending flag, which it tests there
    /// anyway; with the running process still `Running`, no switch happens).
    pub(crate) fn observation_changed(&mut self) {
        if self.watch_cells_wanted() != self.obs.watches.has_cells() {
            self.rebuild_watch_cells();
        }
        self.sched.switch_pending = true;
    }

    /// Should the method watches keep cells (`obs::watch::WatchCell`)? Only
    /// while one is on and native code may run (a JIT, nothing observed one
    /// by one), so that the interpreter does not keep them.
    fn watch_cells_wanted(&self) -> bool {
        self.obs.watches.is_on() && self.jit().is_some() && self.obs.native_may_run()
    }

    /// Rebuild the method watches' cells for the watches and the
    /// observation now.
    fn rebuild_watch_cells(&mut self) {
        let methods = self
            .watch_cells_wanted()
            .then_some(self.image.methods.len());
        self.obs.watches.rebuild_cells(methods);
    }

    /// Start measuring line coverage (restarting it when on). The frames
    /// already active go on from their saved pcs when their sends return:
    /// each is counted as an arrival there (see `obs/coverage.rs`). Native
    /// code made without counting lines is dropped
    /// (`Vm::drop_native_code`): what is compiled from
    /// now on counts them.
    pub fn start_line_coverage(&mut self) {
        let was = self.compile_options();
        self.clear_arrivals();
        self.obs.lines = Some(Default::default());
        self.obs.refresh_hooks_on();
        for (id, pc) in self.base_level_positions() {
            self.mark_run(id, pc);
        }
        self.obs.refresh_per_send();
        self.compile_options_changed(was);
        self.observation_changed();
    }

    /// Stop measuring line coverage and answer what it counted. The frames
    /// still active have not gone on from their saved pcs: each is counted
    /// as a run cut short there. Native code made to count lines is
    /// dropped.
    pub fn take_line_coverage(&mut self) -> LineCoverage {
        let was = self.compile_options();
        for (id, pc) in self.base_level_positions() {
            self.obs.mark_abort(id, pc);
        }
        let arrivals = self.take_arrivals();
        let counts = self
            .obs
            .lines
            .take()
            .unwrap_or_default()
            .with_arrivals(arrivals);
        self.obs.refresh_hooks_on();
        self.obs.refresh_per_send();
        self.compile_options_changed(was);
        self.observation_changed();
        LineCoverage { counts }
    }

    /// The observation changed what compiled code must do (`was`: the
    /// [`CompileOptions`](crate::CompileOptions) before): drop the code
    /// made for the old options.
    fn compile_options_changed(&mut self, was: crate::CompileOptions) {
        if self.compile_options() != was {
            self.drop_native_code();
        }
    }

    /// Start a method watch (`obs/watch.rs`) of `methods` (method ids) with
    /// `options` (`obs::watch::RECEIVERS`...): from now on every call of one
    /// of them at the base level is recorded. Answers the watch's number.
    pub fn start_watch(&mut self, methods: &[u32], options: u32) -> u32 {
        let id = self.obs.watches.start(methods, options);
        self.watch_changed();
        id
    }

    /// Set the tag in force for watch `id` (None: no tag); false when no
    /// such watch is on.
    pub fn set_watch_tag(&mut self, id: u32, tag: Option<u32>) -> bool {
        self.obs.watches.set_tag(id, tag)
    }

    /// Stop watch `id` and answer what it saw (None: no such watch is on).
    pub fn stop_watch(&mut self, id: u32) -> Option<crate::obs::watch::Watch> {
        let w = self.obs.watches.stop(id);
        if !self.obs.watches.answers_expected() {
            self.forget_answer_frames();
        }
        self.watch_changed();
        w
    }

    /// The watches changed: the activation path (and native code's
    /// `slow_returns`, which sends its watched calls and returns through the
    /// runtime), and the guard on special sends (a watched method that a
    /// special send's fast path would run instead must not be skipped).
    fn watch_changed(&mut self) {
        self.obs.refresh_hooks_on();
        self.rebuild_watch_cells();
        self.refresh_watch_guard();
        self.observation_changed();
    }

    /// The method id and saved pc of every frame of every process that runs
    /// at the base level.
    fn base_level_positions(&self) -> Vec<(u32, usize)> {
        let states = std::iter::once(&self.sched.running).chain(
            self.sched
                .procs
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != self.sched.current)
                .map(|(_, p)| &p.saved),
        );
        let mut out = Vec::new();
        for state in states {
            for (f, meta) in state.frames.iter().zip(state.frame_levels()) {
                if !meta {
                    out.push((f.method, f.pc));
                }
            }
        }
        out
    }

    /// Start recording object lifetimes (restarting when on). See
    /// `obs/lifetimes.rs`.
    pub fn start_lifetimes(&mut self, options: LifetimeOptions) {
        if self.obs.lifetimes.is_some() {
            let _ = self.stop_lifetimes();
        }
        self.obs.lifetimes = Some(LifetimeRecorder::start(&mut self.heap, options));
        self.obs.refresh_per_send();
        self.observation_changed();
    }

    /// The last recording stopped from Smalltalk (`System>>stopLifetimes`,
    /// or a faithful-mode recording handed over with
    /// `System>>recordLifetimes:totals:`), taken.
    pub fn take_last_lifetimes(&mut self) -> Option<LifetimeRecording> {
        self.obs.last_lifetimes.take()
    }

    /// Is a lifetime recording on?
    pub fn recording_lifetimes(&self) -> bool {
        self.obs.lifetimes.is_some()
    }

    /// Ask for the final full GC of a lifetime recording, at the next
    /// safepoint (or the next [`Vm::collect_garbage`]): it finds which of the
    /// sampled objects are really alive at the stop, so that
    /// [`Vm::stop_lifetimes`] right after it censors only those
    /// ([`LifetimeRecording::final_gc`]). Nothing when no recording is on.
    pub fn request_final_lifetimes_gc(&mut self) {
        if let Some(rec) = self.obs.lifetimes.as_mut() {
            rec.expect_final_gc();
            self.heap.request_full_gc();
        }
    }

    /// Stop recording and answer the records: objects still alive are
    /// censored at the stop's clocks (and no longer followed).
    pub fn stop_lifetimes(&mut self) -> LifetimeRecording {
        self.take_allocation_samples(None, true);
        let Some(rec) = self.obs.lifetimes.take() else {
            let _ = self.heap.stop_allocation_sampling();
            return LifetimeRecording::default();
        };
        self.obs.refresh_per_send();
        self.observation_changed();
        rec.finish(&mut self.heap)
    }

    /// Add the allocation site to the samples the heap took since the last
    /// look. `top_pc`: the running frame's current position when its saved
    /// pc is stale (before a send), `None` otherwise; `late`: not right after
    /// the primitive that allocated (the site is then the running method's
    /// next send or safepoint).
    #[cold]
    #[inline(never)]
    pub(crate) fn take_allocation_samples(&mut self, top_pc: Option<usize>, late: bool) {
        if !self.heap.has_allocation_samples() {
            return;
        }
        match self.obs.lifetimes.as_mut() {
            Some(rec) => rec.take_samples(
                &mut self.heap,
                &self.image,
                &self.sched.running,
                top_pc,
                late,
            ),
            None => {
                self.heap.take_allocation_samples();
            }
        }
    }

    /// Before a primitive instantiates class `c` for the running frame: if the
    /// pretenuring advice names this allocation site, make the heap put the
    /// object in old space. Answers whether it did.
    #[inline]
    pub(crate) fn pretenure_if_advised(&mut self, c: u32) -> bool {
        match self.obs.pretenuring.as_mut() {
            None => false,
            Some(p) => p.advise(&mut self.heap, &self.image, &self.sched.running, c),
        }
    }

    /// A new String with these bytes, made by a primitive for the running
    /// frame: in old space when the advice names the site.
    pub(crate) fn string_at_site(
        &mut self,
        bytes: &[u8],
    ) -> Result<lupa_heap::Value, lupa_heap::OutOfMemory> {
        let pretenured = self.pretenure_if_advised(crate::objects::cls::STRING);
        let v = self.heap.alloc_bytes(crate::objects::cls::STRING, bytes)?;
        if pretenured {
            self.note_pretenured(v);
        }
        Ok(v)
    }

    /// Objects allocated in old space by the pretenuring advice, and their bytes.
    pub fn pretenured(&self) -> (u64, u64) {
        self.obs
            .pretenuring
            .as_ref()
            .map_or((0, 0), |p| (p.objects, p.bytes))
    }

    /// Count the bytes of an object pretenured just now.
    pub(crate) fn note_pretenured(&mut self, v: lupa_heap::Value) {
        let bytes = self.heap.total_bytes(v);
        if let Some(p) = self.obs.pretenuring.as_mut() {
            p.bytes += bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::obs::sampling::VmState;
    use crate::vm::{Vm, VmOptions};

    fn state(vm: &Vm) -> (VmState, u32, u32) {
        let w = vm.obs.sample.read_state();
        (w.state, w.detail, w.process)
    }

    #[test]
    fn interrupting_states_restore_the_word_they_replaced() {
        let mut vm = Vm::new(VmOptions::default()).expect("vm");
        // Without a sampler nothing is published.
        vm.obs.set_state(VmState::Primitive, 42, 0);
        let saved = vm.obs.push_allocation(0);
        vm.obs.pop_state(saved);
        assert_eq!(state(&vm), (VmState::Interpreting, 0, 0));
        let _reg = vm.attach_sampler();
        vm.obs.set_state(VmState::Primitive, 42, 0);
        // An allocation in a primitive names it (id + 1), then gives it back.
        let saved = vm.obs.push_allocation(0);
        assert_eq!(state(&vm), (VmState::Allocation, 43, 0));
        vm.obs.pop_state(saved);
        assert_eq!(state(&vm), (VmState::Primitive, 42, 0));
        vm.instantiate(crate::objects::cls::ARRAY, 10)
            .expect("array");
        vm.new_string("abc").expect("string");
        assert_eq!(state(&vm), (VmState::Primitive, 42, 0));
        // Outside a primitive, no detail.
        vm.obs.set_state(VmState::Interpreting, 0, 0);
        let saved = vm.obs.push_allocation(0);
        assert_eq!(state(&vm), (VmState::Allocation, 0, 0));
        vm.obs.pop_state(saved);
        // A collection inside a primitive (or an allocation) restores it.
        for (s, d) in [(VmState::Primitive, 7), (VmState::Allocation, 8)] {
            vm.obs.set_state(s, d, 0);
            vm.collect_garbage().expect("collects");
            assert_eq!(state(&vm), (s, d, 0));
        }
        // A blocking call.
        vm.obs.set_state(VmState::Primitive, 9, 0);
        let inside = vm.blocking(|vm| state(vm));
        assert_eq!(inside, (VmState::Waiting, 0, 0));
        assert_eq!(state(&vm), (VmState::Primitive, 9, 0));
        vm.detach_sampler();
    }

    #[test]
    fn a_running_primitive_is_read_with_the_word_it_interrupts() {
        let mut vm = Vm::new(VmOptions::default()).expect("vm");
        let _reg = vm.attach_sampler();
        let outer = vm.obs.enter_primitive(41);
        assert_eq!(state(&vm), (VmState::Primitive, 41, 0));
        // An allocation in it names it (id + 1), then gives it back.
        let saved = vm.obs.push_allocation(0);
        assert_eq!(state(&vm), (VmState::Allocation, 42, 0));
        vm.obs.pop_state(saved);
        assert_eq!(state(&vm), (VmState::Primitive, 41, 0));
        // A collection or a blocking call in it is itself, then gives it back.
        vm.collect_garbage().expect("collects");
        assert_eq!(state(&vm), (VmState::Primitive, 41, 0));
        let inside = vm.blocking(|vm| state(vm));
        assert_eq!(inside, (VmState::Waiting, 0, 0));
        // In native code (a sampler thread's word) and in the finalizer.
        vm.obs.set_state(VmState::Native, 0, 0);
        assert_eq!(state(&vm), (VmState::Primitive, 41, 0));
        vm.obs.leave_primitive(outer);
        assert_eq!(state(&vm), (VmState::Native, 0, 0));
        vm.obs.finalizer = 3;
        vm.obs.set_state(VmState::Interpreting, 0, 3);
        let outer = vm.obs.enter_primitive(7);
        assert_eq!(state(&vm), (VmState::Primitive, 7, 3));
        vm.obs.leave_primitive(outer);
        assert_eq!(state(&vm), (VmState::Finalization, 0, 3));
        vm.obs.finalizer = usize::MAX;
        vm.detach_sampler();
    }

    #[test]
    fn a_self_timed_sample_reads_native_code_from_its_flag() {
        use crate::obs::sampling::StateWord;
        let word = StateWord::pack(VmState::Interpreting, 0, 2);
        let read = |primitive, in_native| {
            StateWord::unpack(StateWord::effective(word, primitive, in_native))
        };
        assert_eq!(read(0, false).state, VmState::Interpreting);
        let native = read(0, true);
        assert_eq!((native.state, native.process), (VmState::Native, 2));
        let prim = read(10, true);
        assert_eq!(
            (prim.state, prim.detail, prim.process),
            (VmState::Primitive, 9, 2)
        );
        let gc = StateWord::pack(VmState::Scavenge, 0, 2);
        assert_eq!(StateWord::effective(gc, 10, true), gc);
    }

    #[test]
    fn the_finalizer_interprets_as_finalization() {
        let mut vm = Vm::new(VmOptions::default()).expect("vm");
        let _reg = vm.attach_sampler();
        vm.obs.finalizer = 3;
        vm.obs.set_state(VmState::Interpreting, 0, 3);
        assert_eq!(state(&vm), (VmState::Finalization, 0, 3));
        vm.obs.set_state(VmState::Primitive, 5, 3);
        assert_eq!(state(&vm), (VmState::Primitive, 5, 3));
        vm.obs.set_state(VmState::Interpreting, 0, 2);
        assert_eq!(state(&vm), (VmState::Interpreting, 0, 2));
        vm.obs.finalizer = usize::MAX;
        vm.obs.set_state(VmState::Interpreting, 0, 3);
        assert_eq!(state(&vm), (VmState::Interpreting, 0, 3));
        vm.detach_sampler();
    }
}
