//! VM-side tables (issue 26, kind 4): the semaphore table gives back the
//! records of dead Semaphores, and a lifetime recording at rate 1 stops
//! sampling at its share of `--max-heap`. Sizes are asserted, never time.

use lupa_vm::{LifetimeOptions, Vm, VmOptions};

const SOURCE: &str = "TableProbe = (
  garbageSemaphores = (
    | live |
    live := Semaphore new.
    live signal.
    1 to: 40 do: [ :k | 1 to: 5000 do: [ :i | Semaphore new ]. system fullGC ].
    ^ live excessSignals printString
  )
  allocate = (
    | keep |
    keep := Vector new.
    1 to: 200000 do: [ :i | keep append: (Array new: 2) ].
    ^ keep size printString
  )
)
";

fn vm(max_heap: usize) -> Vm {
    let mut options = VmOptions::default();
    options.heap.max_heap = max_heap;
    let mut vm = Vm::new(options).expect("vm boots");
    vm.load_class_source("TableProbe.som", SOURCE, "test", Some("TableProbe"))
        .expect("probe compiles");
    vm
}

fn run(vm: &mut Vm, sel: &str) -> String {
    let class = vm.class_named("TableProbe").expect("class");
    let probe = vm.send_message(class, "new", &[]).expect("instance");
    let v = vm.send_message(probe, sel, &[]).expect("runs");
    vm.string_of(v).expect("a String")
}

#[test]
fn the_records_of_dead_semaphores_are_reused() {
    let mut vm = vm(64 << 20);
    assert_eq!(run(&mut vm, "garbageSemaphores"), "1");
    // 200,001 Semaphores were made, at most 5,001 of them alive between two
    // collections: the table holds a few times that, not 200,001 records.
    let records = vm.sched.sems.len();
    assert!(records <= 16_384, "{records} semaphore records");
    assert!(vm.sched.semaphore_records() <= records);
}

#[test]
fn a_lifetime_recording_at_rate_1_stops_at_its_share_of_the_heap() {
    let max_heap = 16 << 20;
    let mut vm = vm(max_heap);
    vm.start_lifetimes(LifetimeOptions::default());
    assert_eq!(run(&mut vm, "allocate"), "200000");
    let rec = vm.stop_lifetimes();
    let bound = max_heap / 8 / std::mem::size_of::<lupa_vm::AllocationRecord>();
    assert!(rec.stopped_at_limit, "{} records", rec.records.len());
    assert!(
        rec.records.len() <= bound,
        "{} > {bound}",
        rec.records.len()
    );
    assert!(
        rec.records.len() >= bound / 2,
        "{} records",
        rec.records.len()
    );
    // A recording under its share is complete.
    let mut vm = self::vm(256 << 20);
    vm.start_lifetimes(LifetimeOptions::default());
    run(&mut vm, "allocate");
    let rec = vm.stop_lifetimes();
    assert!(!rec.stopped_at_limit);
}
