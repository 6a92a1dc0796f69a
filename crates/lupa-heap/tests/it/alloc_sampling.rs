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

#[test]
fn poisson_sampling_is_unbiased_by_bytes_and_seeded() {
    let run = |seed: u64| {
        let mut h = heap();
        h.start_allocation_sampling(
            SamplingPolicy::Poisson {
                mean_bytes: 32.0 * 10.0,
                seed,
            },
            &[],
            &[],
        );
        let mut samples = Vec::new();
        // 20,000 objects of 32 bytes and 2,000 of 400 bytes, interleaved.
        for i in 0..22_000u32 {
            let slots = if i % 11 == 0 { 48 } else { 2 };
            h.alloc_pointers(5, slots).expect("fits");
            if h.has_allocation_samples() {
                samples.extend(h.take_allocation_samples());
            }
            if i % 4000 == 3999 {
                scavenge(&mut h, &mut []);
            }
        }
        samples
    };
    let a = run(1);
    assert_eq!(a, run(1), "the same seed gives the same samples");
    assert_ne!(a, run(2));
    // Horvitz-Thompson: the weighted counts estimate the true counts.
    let est = |bytes: u64| -> f64 {
        a.iter()
            .filter(|s| s.bytes == bytes)
            .map(|s| 1.0 / s.probability)
            .sum()
    };
    let small = est(32);
    let large = est(400);
    assert!((small - 20_000.0).abs() < 20_000.0 * 0.15, "small: {small}");
    assert!((large - 2_000.0).abs() < 2_000.0 * 0.15, "large: {large}");
    // Large objects are sampled more often (1 - exp(-400/320) = 0.71).
    let p_large = a.iter().find(|s| s.bytes == 400).map(|s| s.probability);
    assert!(p_large.is_some_and(|p| (p - (1.0 - (-400.0f64 / 320.0).exp())).abs() < 1e-9));
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
