//! Observation points: activation hooks see every exit (returns and unwinds),
//! the send counter is exact, and the sampling register is readable from
//! another thread while the VM runs.

use crate::method_id;
use lupa_vm::{Activation, ActivationHooks, Vm, VmOptions};
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Default)]
struct Log {
    enters: usize,
    exits: usize,
    unwinds: usize,
    max_depth: usize,
    open: Vec<(u32, usize)>,
    mismatches: usize,
}

struct Recorder(Rc<RefCell<Log>>);

impl ActivationHooks for Recorder {
    fn enter(&mut self, ev: &Activation) {
        let (method, depth) = (ev.method, ev.depth);
        let mut l = self.0.borrow_mut();
        l.enters += 1;
        l.max_depth = l.max_depth.max(depth);
        l.open.push((method, depth));
    }
    fn exit(&mut self, ev: &Activation, unwinding: bool) {
        let (method, depth) = (ev.method, ev.depth);
        let mut l = self.0.borrow_mut();
        l.exits += 1;
        if unwinding {
            l.unwinds += 1;
        }
        match l.open.pop() {
            Some((m, d)) if m == method && d == depth => {}
            _ => l.mismatches += 1,
        }
    }
}

const SOURCE: &str = "ObsProbe = (
  leaf = ( ^ 1 )
  twice = ( ^ self leaf + self leaf )
  nlr = ( #(1 2 3) do: [ :x | x = 2 ifTrue: [ ^ x ] ]. ^ 0 )
  raise = ( ^ Error new signal: 'boom' )
  guarded = ( ^ [ self deep: 5 ] on: Error do: [ :e | e return: 7 ] )
  deep: n = ( n = 0 ifTrue: [ ^ self raise ]. ^ self deep: n - 1 )
  ensured = ( | log | log := 0. [ [ self raise ] ensure: [ log := log + 1 ] ] on: Error do: [ :e | e return: nil ]. ^ log )
  spin: n = ( | s | s := 0. 1 to: n do: [ :i | s := s + (self leaf) ]. ^ s )
  loopWithoutSends: n = ( | i s | i := 0. s := 0. [ i < n ] whileTrue: [ s := s + i. i := i + 1 ]. ^ s )
  at: i = ( ^ i )
)
";

fn vm_with_probe() -> (Vm, lupa_vm::Value) {
    let mut vm = Vm::new(VmOptions::default()).expect("vm boots");
    vm.load_class_source("ObsProbe.som", SOURCE, "test", Some("ObsProbe"))
        .expect("probe compiles");
    let class = vm.class_named("ObsProbe").expect("class");
    let probe = vm.send_message(class, "new", &[]).expect("instance");
    vm.handles.push(probe);
    (vm, probe)
}

fn probe(vm: &Vm) -> lupa_vm::Value {
    *vm.handles.last().expect("probe handle")
}

#[test]
fn hooks_see_balanced_enters_and_exits_including_unwinds() {
    let (mut vm, _) = vm_with_probe();
    let log = Rc::new(RefCell::new(Log::default()));
    vm.obs.set_hooks(Some(Box::new(Recorder(log.clone()))));
    for sel in ["twice", "nlr", "guarded", "ensured"] {
        let p = probe(&vm);
        vm.send_message(p, sel, &[]).expect("runs");
    }
    vm.obs.set_hooks(None);
    let l = log.borrow();
    assert!(l.enters > 20, "enters: {}", l.enters);
    assert_eq!(l.enters, l.exits, "every activation exits exactly once");
    assert_eq!(l.mismatches, 0, "exits come in stack order");
    assert!(l.open.is_empty());
    assert!(
        l.unwinds >= 6,
        "non-local return and exceptions unwind frames: {}",
        l.unwinds
    );
}

#[test]
fn hooks_see_trivial_methods_too() {
    let (mut vm, _) = vm_with_probe();
    let log = Rc::new(RefCell::new(Log::default()));
    vm.obs.set_hooks(Some(Box::new(Recorder(log.clone()))));
    let p = probe(&vm);
    vm.send_message(p, "twice", &[]).expect("runs");
    vm.obs.set_hooks(None);
    // twice + 2 x leaf (a trivial method, which normally runs without a frame).
    assert_eq!(log.borrow().enters, 3);
}

#[test]
fn results_are_right_with_and_without_hooks() {
    let (mut vm, _) = vm_with_probe();
    let p = probe(&vm);
    let a = vm.send_message(p, "guarded", &[]).expect("runs");
    let b = vm.send_message(p, "nlr", &[]).expect("runs");
    let c = vm.send_message(p, "ensured", &[]).expect("runs");
    assert_eq!(
        (a.as_int(), b.as_int(), c.as_int()),
        (Some(7), Some(2), Some(1))
    );
    let log = Rc::new(RefCell::new(Log::default()));
    vm.obs.set_hooks(Some(Box::new(Recorder(log))));
    let p = probe(&vm);
    let a2 = vm.send_message(p, "guarded", &[]).expect("runs");
    assert_eq!(a2.as_int(), Some(7));
}

#[test]
fn send_counter_is_exact_and_resettable() {
    let (mut vm, _) = vm_with_probe();
    let p = probe(&vm);
    let before = vm.send_count();
    vm.send_message(p, "twice", &[]).expect("runs");
    // twice -> 2 x leaf + 1 x (+); the entry send comes from the VM and is not counted.
    assert_eq!(vm.send_count() - before, 3);
    let before = vm.send_count();
    let n = lupa_vm::Value::small(100);
    vm.send_message(p, "spin:", &[n]).expect("runs");
    // 100 x (leaf, +); the to:do: loop itself is inlined, not sent.
    assert_eq!(vm.send_count() - before, 200);
    assert!(vm.obs.inlined >= 100);
}

/// A stand-in sampler thread: asks for a stack, notes the VM state, pauses
/// `pause` (a yield when zero), until stopped; answers the states seen.
struct Requester {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<std::collections::HashSet<lupa_vm::VmState>>,
}

impl Requester {
    fn start(reg: std::sync::Arc<lupa_vm::SampleRegister>, pause: std::time::Duration) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut states = std::collections::HashSet::new();
            let mut seq = 0;
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                seq += 1;
                reg.request_stack(seq);
                states.insert(reg.read_state().state);
                if pause.is_zero() {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(pause);
                }
            }
            states
        });
        Requester { stop, thread }
    }

    fn stop(self) -> std::collections::HashSet<lupa_vm::VmState> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().expect("sampler thread")
    }
}

#[test]
fn a_sampler_thread_gets_stacks_without_walking_frames() {
    let (mut vm, _) = vm_with_probe();
    let sampler = Requester::start(vm.attach_sampler(), std::time::Duration::ZERO);
    let p = probe(&vm);
    for _ in 0..20 {
        vm.send_message(p, "spin:", &[lupa_vm::Value::small(20_000)])
            .expect("runs");
    }
    let states = sampler.stop();
    vm.detach_sampler();
    assert!(
        states.contains(&lupa_vm::VmState::Interpreting),
        "{states:?}"
    );
    let spin = method_id(&vm, "spin:");
    let stacks = vm.obs.take_stacks();
    assert!(
        stacks.entries().iter().any(|s| s.seq > 0
            && stacks
                .paths()
                .frame(s.node)
                .is_some_and(|&(m, _)| m == spin)),
        "the interpreter copied stacks with spin: running: {} stacks",
        stacks.len()
    );
    // Numbers only grow: each copy answers the latest request.
    assert!(stacks.entries().windows(2).all(|w| w[0].seq < w[1].seq));
}

/// A sampler alone needs no per-send observation: the VM keeps its plain
/// loop (and native code may run); the stack requests reach its safepoints.
#[test]
fn a_sampler_alone_keeps_the_plain_loop() {
    let (mut vm, _) = vm_with_probe();
    let _reg = vm.attach_sampler();
    assert!(!vm.obs.per_send, "no per-send observation for a sampler");
    assert!(vm.obs.native_may_run());
    vm.sample_every(10);
    assert!(vm.obs.per_send && !vm.obs.native_may_run());
    vm.sample_every(0);
    vm.detach_sampler();
    assert!(!vm.obs.per_send);
}

/// A loop that sends nothing (its comparisons and additions are fast paths)
/// answers a stack request at its back jumps, with its own frame on top.
#[test]
fn a_loop_without_sends_answers_stack_requests() {
    let (mut vm, _) = vm_with_probe();
    let sampler = Requester::start(vm.attach_sampler(), std::time::Duration::from_micros(200));
    let p = probe(&vm);
    for _ in 0..5 {
        vm.send_message(p, "loopWithoutSends:", &[lupa_vm::Value::small(2_000_000)])
            .expect("runs");
    }
    sampler.stop();
    vm.detach_sampler();
    let looping = method_id(&vm, "loopWithoutSends:");
    let stacks = vm.obs.take_stacks();
    assert!(
        stacks.entries().iter().any(|s| s.seq > 0
            && stacks
                .paths()
                .frame(s.node)
                .is_some_and(|&(m, pc)| m == looping && pc > 0)),
        "stacks copied inside the loop: {} stacks",
        stacks.len()
    );
}

type GcLog = Vec<(lupa_vm::CollectionKind, u64, Vec<lupa_vm::Death>)>;

struct GcRecorder(Rc<RefCell<GcLog>>);

impl lupa_vm::GcHooks for GcRecorder {
    fn collection(&mut self, ev: &lupa_vm::GcEvent<'_>) {
        self.0
            .borrow_mut()
            .push((ev.kind, ev.number, ev.deaths.to_vec()));
    }
}

#[test]
fn gc_hooks_see_every_collection_and_the_deaths_of_tracked_objects() {
    let mut vm = Vm::new(VmOptions::default()).expect("vm boots");
    vm.load_class_source(
        "Tracker.som",
        "Tracker = (
  | kept |
  run = (
    | a |
    kept := Array new: 2.
    system track: kept.
    a := Array new: 5.
    system track: a.
    system scavenge.
    system scavenge.
    a := nil.
    system fullGC.
    ^ kept
  )
)
",
        "test",
        Some("Tracker"),
    )
    .expect("compiles");
    let class = vm.class_named("Tracker").expect("class");
    let t = vm.send_message(class, "new", &[]).expect("instance");
    let log = Rc::new(RefCell::new(Vec::new()));
    vm.obs.set_gc_hooks(Some(Box::new(GcRecorder(log.clone()))));
    vm.send_message(t, "run", &[]).expect("runs");
    assert!(vm.obs.take_gc_hooks().is_some());
    let log = log.borrow();
    use lupa_vm::CollectionKind::{Full, Scavenge};
    let kinds: Vec<_> = log.iter().map(|(k, _, _)| *k).collect();
    assert_eq!(kinds, vec![Scavenge, Scavenge, Full]);
    let numbers: Vec<u64> = log.iter().map(|(_, n, _)| *n).collect();
    assert_eq!(numbers[1], numbers[0] + 1);
    assert_eq!(numbers[2], numbers[0] + 2);
    // Only the dropped array died, in the full GC, after surviving both scavenges.
    assert!(log[0].2.is_empty() && log[1].2.is_empty());
    let deaths = &log[2].2;
    assert_eq!(deaths.len(), 1);
    let d = deaths[0];
    assert_eq!(d.class, lupa_vm::cls::ARRAY);
    assert_eq!(d.scavenges_survived, 2);
    assert_eq!(d.full_gcs_survived, 0);
    assert!(d.died_in_full_gc);
    assert_eq!(d.died_at_gc, numbers[2]);
    assert!(d.bytes >= 5 * 8);
    assert_eq!(vm.heap.tracked_count(), 1);
}

/// A method watch guards the special sends (the observing loop looks up
/// the method before a fast path may run instead of it) only while a
/// watched method is one a fast path would run instead (`Integer>>+`); a
/// user's method under a special selector (`ObsProbe>>at:`) is on no fast
/// path: its calls reach `invoke` anyway. A watch lets native code run
/// (it sends watched methods through `invoke` and returns from their
/// frames through the runtime) unless special sends are guarded;
/// activation hooks still keep it out.
#[test]
fn method_watches_guard_special_sends_only_where_a_fast_path_would_skip_them() {
    let (mut vm, _) = vm_with_probe();
    let lookup = |vm: &mut Vm, class: u32, selector: &str| {
        let sel = vm.image.intern(selector);
        match vm.image.lookup(&vm.heap, class, sel) {
            lupa_vm::Lookup::Method(id) => id,
            _ => panic!("no {selector}"),
        }
    };
    let class = vm.class_named("ObsProbe").expect("the class");
    let c = vm.class_index_of_object(class).expect("its index");
    let (leaf, at) = (lookup(&mut vm, c, "leaf"), lookup(&mut vm, c, "at:"));
    let w = vm.start_watch(&[leaf, at], lupa_vm::obs::watch::ALL);
    assert!(!vm.obs.per_send && vm.obs.native_may_run());
    let plus = lookup(&mut vm, lupa_vm::cls::INTEGER, "+");
    let guarded = vm.start_watch(&[plus], 0);
    assert!(vm.obs.per_send && !vm.obs.native_may_run());
    vm.stop_watch(guarded).expect("the watch of +");
    assert!(!vm.obs.per_send && vm.obs.native_may_run());
    // Activation hooks still keep native code out.
    vm.obs.set_hooks(Some(Box::new(Recorder(Rc::default()))));
    assert!(!vm.obs.native_may_run());
    vm.obs.set_hooks(None);
    vm.stop_watch(w).expect("the watch of leaf");
    assert!(vm.obs.native_may_run() && !vm.obs.hooks_on);
}
