//! Delays in the cooperative scheduler, and the VM states published for the
//! finalization process. No test asserts wall time: the delays only order
//! processes (their deadlines), and a sleep of the VM shows as order.

use lupa_vm::{Activation, ActivationHooks, Vm, VmOptions, VmState};
use std::sync::{Arc, Mutex};

const SOURCE: &str = "DelayProbe = (
  interleave = (
    | log |
    log := Vector new.
    [ log append: #f1. (Delay forMilliseconds: 30) wait. log append: #f2 ] fork.
    log append: #m1.
    (Delay forMilliseconds: 10) wait.
    log append: #m2.
    (Delay forMilliseconds: 40) wait.
    log append: #m3.
    ^ log asArray printString
  )
  byDeadline = (
    | log |
    log := Vector new.
    [ (Delay forMilliseconds: 30) wait. log append: #late ] fork.
    [ (Delay forMilliseconds: 5) wait. log append: #early ] fork.
    (Delay forMilliseconds: 60) wait.
    log append: #main.
    ^ log asArray printString
  )
  zero = (
    | log |
    log := Vector new.
    [ log append: #forked ] fork.
    (Delay forMilliseconds: 0) wait.
    log append: #main.
    (Delay forMilliseconds: 0) wait.
    (Delay forSeconds: 0) wait.
    log append: #again.
    ^ log asArray printString
  )
  terminated = (
    | log p |
    log := Vector new.
    p := [ (Delay forMilliseconds: 5) wait. log append: #woke ] fork.
    Processor yield.
    p terminate.
    (Delay forMilliseconds: 20) wait.
    log append: #main.
    ^ log asArray printString
  )
  suspended = (
    | log p |
    log := Vector new.
    p := [ (Delay forMilliseconds: 5) wait. log append: #woke ] fork.
    Processor yield.
    p suspend.
    (Delay forMilliseconds: 20) wait.
    log append: #main.
    ^ log asArray printString
  )
  deadlock = ( Semaphore new wait )
  deadlockAfterDelay = ( (Delay forMilliseconds: 1) wait. Semaphore new wait )
  badDelay = ( [ (Delay forMilliseconds: 'ten') wait ] on: Error do: [ :e | ^ e messageText ]. ^ 'no error' )
)
";

fn vm() -> Vm {
    let mut vm = Vm::new(VmOptions::default()).expect("vm boots");
    vm.load_class_source("DelayProbe.som", SOURCE, "test", Some("DelayProbe"))
        .expect("probe compiles");
    vm
}

fn run(vm: &mut Vm, sel: &str) -> Result<String, String> {
    let class = vm.class_named("DelayProbe").expect("class");
    let probe = vm.send_message(class, "new", &[]).expect("instance");
    match vm.send_message(probe, sel, &[]) {
        Ok(v) => Ok(vm.string_of(v).expect("a String")),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn delays_interleave_a_forked_process_and_the_main_one_by_deadline() {
    let mut vm = vm();
    assert_eq!(
        run(&mut vm, "interleave").as_deref(),
        Ok("#(#m1 #f1 #m2 #f2 #m3)")
    );
    assert_eq!(
        run(&mut vm, "byDeadline").as_deref(),
        Ok("#(#early #late #main)")
    );
}

#[test]
fn a_zero_delay_lets_ready_processes_run_and_returns() {
    let mut vm = vm();
    assert_eq!(
        run(&mut vm, "zero").as_deref(),
        Ok("#(#forked #main #again)")
    );
}

#[test]
fn delays_of_terminated_or_suspended_processes_wake_nothing() {
    let mut vm = vm();
    assert_eq!(run(&mut vm, "terminated").as_deref(), Ok("#(#main)"));
    assert_eq!(run(&mut vm, "suspended").as_deref(), Ok("#(#main)"));
}

#[test]
fn deadlock_is_still_detected_without_pending_delays() {
    for sel in ["deadlock", "deadlockAfterDelay"] {
        let mut vm = vm();
        let e = run(&mut vm, sel).expect_err("a deadlock");
        assert!(e.contains("deadlock"), "{sel}: {e}");
    }
}

#[test]
fn a_delay_needs_a_number() {
    let mut vm = vm();
    let e = run(&mut vm, "badDelay").expect("answers the error's text");
    assert!(e.contains("number"), "{e}");
}

/// Records the published state at every activation.
struct StateAt {
    reg: Arc<lupa_vm::obs::SampleRegister>,
    seen: Arc<Mutex<Vec<(u32, VmState)>>>,
}

impl ActivationHooks for StateAt {
    fn enter(&mut self, ev: &Activation) {
        let w = self.reg.read_state();
        if let Ok(mut s) = self.seen.lock() {
            s.push((ev.method, w.state));
        }
    }
    fn exit(&mut self, _ev: &Activation, _unwinding: bool) {}
}

const MOURNING: &str = "MourningProbe = Ephemeron (
  mourn = ( self mournWork: 10. super mourn )
  mournWork: n = ( | s | s := 0. 1 to: n do: [ :i | s := s + i ]. ^ s )
  ----
  drop: n = (
    | keep |
    keep := Vector new.
    1 to: n do: [ :i | keep append: (self key: (Array new: 3) value: i) ].
    system fullGC.
    ^ keep size
  )
  mainWork = ( ^ 3 )
)
";

#[test]
fn the_finalization_process_is_published_as_finalization_while_it_mourns() {
    let mut vm = Vm::new(VmOptions::default()).expect("vm boots");
    vm.load_class_source("MourningProbe.som", MOURNING, "test", Some("MourningProbe"))
        .expect("probe compiles");
    let class = vm.class_named("MourningProbe").expect("class");
    let reg = vm.attach_sampler();
    let seen = Arc::new(Mutex::new(Vec::new()));
    vm.obs.set_hooks(Some(Box::new(StateAt {
        reg,
        seen: seen.clone(),
    })));
    vm.send_message(class, "drop:", &[lupa_vm::Value::small(5)])
        .expect("runs");
    // The class object moved in the collection: look it up again.
    let class = vm.class_named("MourningProbe").expect("class");
    vm.send_message(class, "mainWork", &[]).expect("runs");
    vm.obs.set_hooks(None);
    vm.detach_sampler();
    let (work, main) = (
        crate::method_id(&vm, "mournWork:"),
        crate::method_id(&vm, "mainWork"),
    );
    let seen = seen.lock().expect("lock").clone();
    let mourning: Vec<VmState> = seen
        .iter()
        .filter(|(m, _)| *m == work)
        .map(|&(_, s)| s)
        .collect();
    assert_eq!(mourning.len(), 5, "{seen:?}");
    assert!(
        mourning.iter().all(|&s| s == VmState::Finalization),
        "{mourning:?}"
    );
    let after: Vec<VmState> = seen
        .iter()
        .filter(|(m, _)| *m == main)
        .map(|&(_, s)| s)
        .collect();
    assert_eq!(after, vec![VmState::Interpreting]);
}
