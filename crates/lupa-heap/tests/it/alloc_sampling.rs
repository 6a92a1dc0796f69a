//! Allocation sampling (`Heap::start_allocation_sampling`): which objects are
//! sampled under each policy, their tags, and their deaths.

use lupa_heap::{Heap, HeapConfig, SamplingPolicy, Value};

fn heap() -> Heap {
    Heap::new(HeapConfig {
        eden_size: 64 << 10,
        growth_headroom: 256 << 10,
        shrink_threshold: 1 << 20,
        ..HeapConfig::default()
    })
}

fn scavenge(heap: &mut Heap, roots: &mut [Value]) {
    heap.request_scavenge();
    let mut c = heap.start_collection();
    for r in roots.iter_mut() {
        c.root(r);
    }
    c.finish();
}

#[test]
fn every_object_is_sampled_at_rate_one_with_consecutive_tags() {
    let mut h = heap();
    h.start_allocation_sampling(SamplingPolicy::All, &[], &[]);
    for i in 0..10 {
        h.alloc_pointers(5 + (i % 2), 2).expect("fits");
    }
    let s = h.take_allocation_samples();
    assert_eq!(s.len(), 10);
    for (i, x) in s.iter().enumerate() {
        assert_eq!(x.tag, i as u64 + 1);
        assert_eq!(x.class, 5 + (i as u32 % 2));
        assert_eq!(x.bytes, 4 * 8);
        assert_eq!(x.probability, 1.0);
    }
    assert!(s.windows(2).all(|w| w[0].allocated_at < w[1].allocated_at));
    assert_eq!(h.tracked_count(), 10);
    h.stop_allocation_sampling();
    assert_eq!(h.untrack_samples().len(), 10);
    assert_eq!(h.tracked_count(), 0);
    h.verify(9).expect("verifies");
}

#[test]
fn every_nth_and_class_filters() {
    let mut h = heap();
    h.start_allocation_sampling(SamplingPolicy::EveryNth(3), &[], &[6]);
    for i in 0..30 {
        h.alloc_pointers(5 + (i % 2), 1).expect("fits");
    }
    let s = h.take_allocation_samples();
    // Objects 3, 6, ..., 30 are chosen; the odd-numbered ones (class 5) are kept.
    assert!(
        s.iter()
            .all(|x| x.class == 5 && (x.probability - 1.0 / 3.0).abs() < 1e-12)
    );
    assert_eq!(s.len(), 5);
    h.start_allocation_sampling(SamplingPolicy::All, &[6], &[]);
    for i in 0..10 {
        h.alloc_pointers(5 + (i % 2), 1).expect("fits");
    }
    assert!(h.take_allocation_samples().iter().all(|x| x.class == 6));
}

/// Allocate `n` objects of class 5, the `i`-th with `slots(i)` slots,
/// scavenging now and then; answers the samples.
fn run_sizes(
    h: &mut Heap,
    n: u32,
    slots: impl Fn(u32) -> usize,
) -> Vec<lupa_heap::AllocationSample> {
    let mut samples = Vec::new();
    for i in 0..n {
        h.alloc_pointers(5, slots(i)).expect("fits");
        if h.has_allocation_samples() {
            samples.extend(h.take_allocation_samples());
        }
        if i % 4000 == 3999 {
            scavenge(h, &mut []);
        }
    }
    samples.extend(h.take_allocation_samples());
    samples
}

/// Is `kept` of `n` within 5 standard errors of `n p`?
fn within_five_se(kept: usize, n: f64, p: f64) -> bool {
    (kept as f64 - n * p).abs() <= 5.0 * (n * p * (1.0 - p)).sqrt()
}

#[test]
fn per_object_sampling_keeps_the_rate_of_every_size_and_is_seeded() {
    for p in [0.01, 0.25] {
        let run = |seed: u64| {
            let mut h = heap();
            // Large objects before the start change nothing.
            for _ in 0..50 {
                h.alloc_pointers(9, 500).expect("fits");
            }
            h.start_allocation_sampling(
                SamplingPolicy::PerObject {
                    probability: p,
                    seed,
                },
                &[],
                &[],
            );
            // 20,000 objects of 16 bytes (no slot), 20,000 of 32 and 4,000 of
            // 800, interleaved.
            run_sizes(&mut h, 44_000, |i| match i % 11 {
                0 => 98,
                k if k % 2 == 0 => 0,
                _ => 2,
            })
        };
        let a = run(42);
        assert_eq!(a, run(42), "the same seed gives the same samples");
        assert_ne!(a, run(43));
        for (bytes, n) in [(16, 20_000.0), (32, 20_000.0), (800, 4_000.0)] {
            let kept = a.iter().filter(|s| s.bytes == bytes).count();
            assert!(
                within_five_se(kept, n, p),
                "{bytes}-byte objects at {p}: {kept} of {n}"
            );
        }
        assert!(a.iter().all(|s| s.probability == p));
        assert!(a.windows(2).all(|w| w[0].tag + 1 == w[1].tag));
    }
}

#[test]
fn holding_per_object_sampling_keeps_the_distance_in_objects() {
    let policy = SamplingPolicy::PerObject {
        probability: 0.05,
        seed: 7,
    };
    // The same program with and without objects allocated while held: the
    // program's own objects are sampled alike (the same positions).
    let run = |hold: bool| {
        let mut h = heap();
        h.start_allocation_sampling(policy, &[], &[]);
        let mut picked = Vec::new();
        for i in 0..5_000u32 {
            if hold && i % 100 == 50 {
                let held = h.hold_allocation_sampling();
                for _ in 0..37 {
                    h.alloc_pointers(9, 60).expect("fits");
                }
                h.release_allocation_sampling(held);
            }
            h.alloc_pointers(5, (i % 7) as usize).expect("fits");
            if h.has_allocation_samples() {
                let s = h.take_allocation_samples();
                assert!(s.iter().all(|x| x.class == 5));
                picked.extend(s.iter().map(|_| i));
            }
        }
        picked
    };
    let plain = run(false);
    assert_eq!(plain, run(true));
    assert!(
        within_five_se(plain.len(), 5_000.0, 0.05),
        "{}",
        plain.len()
    );
}

#[test]
fn sampled_deaths_carry_their_tags_and_leave_other_deaths_queued() {
    let mut h = heap();
    let plain = h.alloc_pointers(7, 1).expect("fits");
    h.set_tracked(plain, true);
    h.start_allocation_sampling(SamplingPolicy::All, &[], &[]);
    let a = h.alloc_pointers(5, 1).expect("fits");
    let b = h.alloc_pointers(5, 1).expect("fits");
    h.stop_allocation_sampling();
    let mut roots = [a, b];
    scavenge(&mut h, &mut roots);
    roots[0] = Value::NIL;
    scavenge(&mut h, &mut roots);
    let d = h.take_sample_deaths();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].tag, 1);
    assert_eq!(d[0].scavenges_survived, 1);
    // The plain tracked object died in the first scavenge: still queued, tag 0.
    let rest = h.take_deaths();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].tag, 0);
    // b is alive: untracking answers it with the collections it survived.
    assert_eq!(h.untrack_samples(), vec![(2, 2, 0)]);
    h.verify(9).expect("verifies");
}
