//! Calling-context trees built from the VM's activation hooks, one per process.
//!
//! Every enter/exit/process switch reads a [`Clock`] (the VM's send counter, or
//! wall time) and charges the elapsed amount to the current activation of the
//! current process. Contract: between `install` and `take`, the hooks own the
//! VM's activation-hook slot; `take` removes them, charges the rest to the
//! current process and answers the finished per-process profiles, process 0
//! (the main process) first, others by process number.

use lupa_prof::{MethodInfo, Metric, Profile, ProfileBuilder};
use lupa_vm::{Activation, ActivationHooks, Vm};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

/// What is charged to activations.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Clock {
    /// The VM's send counter.
    Sends,
    /// Nanoseconds since this instant.
    Time(Instant),
}

impl Clock {
    pub(crate) fn metric(self) -> Metric {
        match self {
            Clock::Sends => Metric::Sends,
            Clock::Time(_) => Metric::Nanoseconds,
        }
    }

    #[inline]
    fn read(self, sends: u64) -> u64 {
        match self {
            Clock::Sends => sends,
            Clock::Time(t0) => t0.elapsed().as_nanos() as u64,
        }
    }
}

/// Per-process builders, driven by the activation hooks.
pub(crate) struct ContextTrees {
    /// Indexed by process number (the VM numbers processes densely from 0):
    /// a vector, not a map, as every activation looks its builder up.
    builders: Vec<Option<ProfileBuilder>>,
    current: usize,
    clock: Clock,
}

impl ContextTrees {
    /// The builder of `process`, made if it has none yet (then `true`).
    #[inline]
    fn builder_or_new(&mut self, process: usize) -> (&mut ProfileBuilder, bool) {
        if self.builders.len() <= process {
            self.builders.resize_with(process + 1, || None);
        }
        let slot = &mut self.builders[process];
        let new = slot.is_none();
        let metric = self.clock.metric();
        (slot.get_or_insert_with(|| ProfileBuilder::new(metric)), new)
    }

    #[inline]
    fn builder(&mut self, process: usize) -> &mut ProfileBuilder {
        self.builder_or_new(process).0
    }

    /// Install the hooks in `vm`, charging from now on.
    pub(crate) fn install(vm: &mut Vm, clock: Clock) -> Rc<RefCell<ContextTrees>> {
        let now = clock.read(vm.obs.sends);
        let mut main = ProfileBuilder::new(clock.metric());
        main.set_counter_mark(now);
        let current = vm.sched.current_process();
        let mut builders: Vec<Option<ProfileBuilder>> = Vec::new();
        builders.resize_with(current + 1, || None);
        builders[current] = Some(main);
        let trees = Rc::new(RefCell::new(ContextTrees {
            builders,
            current,
            clock,
        }));
        vm.obs.set_hooks(Some(Box::new(Hooks(trees.clone()))));
        trees
    }

    /// Remove the hooks and answer the per-process profiles, by process number.
    pub(crate) fn take(vm: &mut Vm, trees: &RefCell<ContextTrees>) -> Vec<(usize, Profile)> {
        vm.obs.set_hooks(None);
        let mut c = trees.borrow_mut();
        let now = c.clock.read(vm.obs.sends);
        let current = c.current;
        c.builder(current).advance_counter(now);
        c.builders
            .drain(..)
            .enumerate()
            .filter_map(|(p, b)| Some((p, b?.finish())))
            .collect()
    }
}

/// The hook object installed in the VM (shares the trees with the profiler).
struct Hooks(Rc<RefCell<ContextTrees>>);

impl ActivationHooks for Hooks {
    fn enter(&mut self, ev: &Activation) {
        let mut c = self.0.borrow_mut();
        let now = c.clock.read(ev.sends);
        // A process seen for the first time is being created (its block's
        // first activation, made while its creator runs): its tree starts
        // now, and its creator stays the current process.
        let (b, first) = c.builder_or_new(ev.process);
        if first {
            b.set_counter_mark(now);
        } else {
            b.advance_counter(now);
        }
        let m = b.method_for_key(ev.method, || {
            MethodInfo::named(crate::naming::placeholder(ev.method))
        });
        b.enter_from(m, (ev.call_line > 0).then_some(ev.call_line));
    }

    fn exit(&mut self, ev: &Activation, unwinding: bool) {
        let mut c = self.0.borrow_mut();
        let now = c.clock.read(ev.sends);
        let b = c.builder(ev.process);
        b.advance_counter(now);
        if unwinding {
            b.exit_unwinding();
        } else {
            b.exit();
        }
    }

    fn process_switch(&mut self, from: usize, to: usize, sends: u64) {
        let mut c = self.0.borrow_mut();
        let now = c.clock.read(sends);
        c.builder(from).advance_counter(now);
        c.builder(to).set_counter_mark(now);
        c.current = to;
    }
}
