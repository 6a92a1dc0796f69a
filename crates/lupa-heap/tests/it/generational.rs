//! Targeted tests of the generational collector: barrier and remembered set,
//! tenuring, large objects, ephemerons, weak slots, compaction, parameters,
//! statistics, lifetime events, out-of-memory signalling.

use lupa_heap::{CollectionKind, Format, GcParam, Heap, HeapConfig, Value};

const C: u32 = 1;

fn heap() -> Heap {
    Heap::new(HeapConfig {
        eden_size: 64 << 10,
        growth_headroom: 256 << 10,
        shrink_threshold: 1 << 20,
        ..HeapConfig::default()
    })
}

fn collect(heap: &mut Heap, roots: &mut [Value]) -> CollectionKind {
    let mut c = heap.start_collection();
    let kind = c.kind();
    for r in roots.iter_mut() {
        c.root(r);
    }
    c.finish();
    heap.verify(2).expect("heap verifies");
    kind
}

fn scavenge(heap: &mut Heap, roots: &mut [Value]) {
    heap.request_scavenge();
    assert_eq!(collect(heap, roots), CollectionKind::Scavenge);
}

fn full(heap: &mut Heap, roots: &mut [Value]) {
    heap.request_full_gc();
    assert_eq!(collect(heap, roots), CollectionKind::Full);
}

fn count(heap: &Heap) -> usize {
    let mut n = 0;
    heap.for_each_object(|_| n += 1);
    n
}

/// Make `v` old by scavenging until it is tenured.
fn tenure(heap: &mut Heap, roots: &mut [Value], k: usize) {
    for _ in 0..16 {
        if !heap.is_young(roots[k]) {
            return;
        }
        scavenge(heap, roots);
    }
    panic!("not tenured");
}

#[test]
fn objects_are_tenured_by_age() {
    let mut h = Heap::new(HeapConfig {
        eden_size: 64 << 10,
        tenuring_threshold: 3,
        ..HeapConfig::default()
    });
    let mut roots = [h.alloc_pointers(C, 1).expect("room")];
    let hash = h.identity_hash(roots[0]);
    for age in 1..3 {
        scavenge(&mut h, &mut roots);
        assert!(h.is_young(roots[0]));
        assert_eq!(h.age(roots[0]), age);
    }
    scavenge(&mut h, &mut roots);
    assert!(!h.is_young(roots[0]), "tenured at the third scavenge");
    assert_eq!(h.identity_hash(roots[0]), hash);
    assert_eq!(h.stats().tenured_objects, 1);
}

#[test]
fn survivor_overflow_tenures() {
    let mut h = heap();
    // ~100 KB of live data, more than a survivor space (eden/5 = 12.8 KB).
    let list = h.alloc_pointers(C, 1000).expect("room");
    let mut roots = [list];
    for k in 0..1000 {
        let o = h.alloc_pointers(C, 10).expect("room");
        h.set_slot(roots[0], k, o);
    }
    scavenge(&mut h, &mut roots);
    let mut young = 0;
    for k in 0..1000 {
        if h.is_young(h.slot(roots[0], k)) {
            young += 1;
        }
    }
    assert!(
        young > 0 && young < 1000,
        "some stay young, the rest is tenured: {young}"
    );
    assert!(h.stats().tenured_objects > 0);
}

#[test]
fn write_barrier_remembers_old_objects_pointing_to_young_ones() {
    let mut h = heap();
    let mut roots = [h.alloc_pointers(C, 2).expect("room")];
    tenure(&mut h, &mut roots, 0);
    let young = h.alloc_with(C, &[Value::small(42)]).expect("room");
    let hash = h.identity_hash(young);
    assert!(!h.is_remembered(roots[0]));
    h.set_slot(roots[0], 0, Value::small(1));
    assert!(!h.is_remembered(roots[0]), "immediates are not remembered");
    h.set_slot(roots[0], 1, young);
    assert!(h.is_remembered(roots[0]));
    h.verify(2).expect("verifies before the collection");
    // The old object is not a root: the remembered set keeps the young one alive.
    scavenge(&mut h, &mut []);
    let y = h.slot(roots[0], 1);
    assert_eq!(h.identity_hash(y), hash);
    assert_eq!(h.slot(y, 0), Value::small(42));
    assert!(h.is_remembered(roots[0]), "still refers to a young object");
    tenure(&mut h, &mut roots, 0);
    for _ in 0..4 {
        scavenge(&mut h, &mut []);
    }
    assert!(!h.is_young(h.slot(roots[0], 1)));
    assert!(
        !h.is_remembered(roots[0]),
        "forgotten once its referent is old"
    );
}

#[test]
fn store_buffer_overflow_is_handled() {
    let mut h = Heap::new(HeapConfig {
        eden_size: 64 << 10,
        growth_headroom: 8 << 20,
        ..HeapConfig::default()
    });
    let n = 40_000;
    let mut roots = [h.alloc_pointers(C, n).expect("room")];
    assert!(!h.is_young(roots[0]), "large objects are allocated old");
    for k in 0..n {
        let o = h.alloc_pointers(C, 1).expect("room");
        h.set_slot(roots[0], k, o);
    }
    for _ in 0..3 {
        scavenge(&mut h, &mut roots);
    }
    let mut olds = Vec::new();
    for k in 0..n {
        olds.push(h.slot(roots[0], k));
    }
    for &o in &olds {
        assert!(!h.is_young(o));
    }
    // Many distinct old objects remembered between two collections.
    let mut kept = Vec::new();
    for (k, &o) in olds.iter().enumerate() {
        let y = h.alloc_with(C, &[Value::small(k as i64)]).expect("room");
        h.set_slot(o, 0, y);
        kept.push(h.identity_hash(y));
    }
    h.verify(2).expect("verifies with a full store buffer");
    scavenge(&mut h, &mut roots);
    for (k, &hash) in kept.iter().enumerate() {
        let o = h.slot(roots[0], k);
        let y = h.slot(o, 0);
        assert_eq!(h.slot(y, 0), Value::small(k as i64));
        assert_eq!(h.identity_hash(y), hash);
    }
}

#[test]
fn large_objects_are_allocated_in_old_space() {
    let mut h = heap();
    let big = h.alloc_pointers(C, 10_000).expect("room");
    assert!(!h.is_young(big));
    let small = h.alloc_pointers(C, 10).expect("room");
    assert!(h.is_young(small));
    let bytes = h.alloc_bytes(C, &vec![7u8; 100_000]).expect("room");
    assert!(!h.is_young(bytes));
    h.set_slot(big, 0, small);
    let mut roots = [big, bytes];
    scavenge(&mut h, &mut roots);
    assert_eq!(roots[0], big, "old objects do not move in a scavenge");
    assert!(h.bytes(roots[1]).iter().all(|&b| b == 7));
    full(&mut h, &mut roots);
    assert_eq!(h.size(roots[0]), 10_000);
}

#[test]
fn ephemeron_whose_value_refers_to_its_key_does_not_keep_it() {
    for full_gc in [false, true] {
        let mut h = heap();
        let key = h.alloc_pointers(C, 0).expect("room");
        let value = h.alloc_with(C, &[key]).expect("room");
        let e = h.alloc_ephemeron(C, 2).expect("room");
        h.set_slot(e, 0, key);
        h.set_slot(e, 1, value);
        let kh = h.identity_hash(key);
        let mut roots = [e];
        if full_gc {
            full(&mut h, &mut roots);
        } else {
            scavenge(&mut h, &mut roots);
        }
        let q = h.take_mourn_queue();
        assert_eq!(q, vec![roots[0]], "queued for mourning");
        assert_eq!(h.format(roots[0]), Format::Pointers, "fired once");
        let key = h.slot(roots[0], 0);
        assert_eq!(h.identity_hash(key), kh, "key kept for this cycle");
        assert_eq!(h.slot(h.slot(roots[0], 1), 0), key);
        assert_eq!(count(&h), 3);
        // The VM mourns; the ephemeron lets go of its key and value.
        h.set_slot(roots[0], 0, Value::NIL);
        h.set_slot(roots[0], 1, Value::NIL);
        full(&mut h, &mut roots);
        assert!(h.take_mourn_queue().is_empty());
        assert_eq!(count(&h), 1, "key and value collected after mourning");
    }
}

#[test]
fn ephemeron_with_a_reachable_key_keeps_its_value() {
    let mut h = heap();
    let key = h.alloc_pointers(C, 0).expect("room");
    let value = h.alloc_pointers(C, 0).expect("room");
    let e = h.alloc_ephemeron(C, 3).expect("room");
    let extra = h.alloc_pointers(C, 0).expect("room");
    h.set_slot(e, 0, key);
    h.set_slot(e, 1, value);
    h.set_slot(e, 2, extra);
    let mut roots = [e, key];
    scavenge(&mut h, &mut roots);
    full(&mut h, &mut roots);
    assert!(h.take_mourn_queue().is_empty());
    assert_eq!(h.format(roots[0]), Format::Ephemeron);
    assert_eq!(count(&h), 4);
    assert_eq!(h.slot(roots[0], 0), roots[1]);
    // Drop the key: the ephemeron fires, in a full GC too.
    roots[1] = Value::NIL;
    tenure(&mut h, &mut roots, 0);
    full(&mut h, &mut roots);
    assert_eq!(h.take_mourn_queue(), vec![roots[0]]);
}

#[test]
fn ephemeron_chains_resolve_to_a_fixed_point() {
    for full_gc in [false, true] {
        let mut h = heap();
        // e[i]: key k[i], value k[i+1]; only k[0] is a root. The ephemerons are in
        // an array in reverse order, so each pass resolves one more.
        let n = 6;
        let ks: Vec<Value> = (0..=n)
            .map(|_| h.alloc_pointers(C, 0).expect("room"))
            .collect();
        let arr = h.alloc_pointers(C, n).expect("room");
        for i in 0..n {
            let e = h.alloc_ephemeron(C, 2).expect("room");
            h.set_slot(e, 0, ks[i]);
            h.set_slot(e, 1, ks[i + 1]);
            h.set_slot(arr, n - 1 - i, e);
        }
        let mut roots = [arr, ks[0]];
        if full_gc {
            full(&mut h, &mut roots);
        } else {
            scavenge(&mut h, &mut roots);
        }
        assert!(h.take_mourn_queue().is_empty(), "every key is reachable");
        assert_eq!(count(&h), 1 + n + n + 1);
        // Without k[0] nothing is reachable but through ephemerons: all fire.
        roots[1] = Value::NIL;
        if full_gc {
            full(&mut h, &mut roots);
        } else {
            scavenge(&mut h, &mut roots);
        }
        assert_eq!(h.take_mourn_queue().len(), n);
        // Once mourned (the ephemerons dropped), everything but the array goes.
        for i in 0..n {
            h.set_slot(roots[0], i, Value::NIL);
        }
        full(&mut h, &mut roots);
        assert_eq!(count(&h), 1);
    }
}

#[test]
fn mourn_queue_entries_stay_valid_until_taken() {
    let mut h = heap();
    let key = h.alloc_pointers(C, 0).expect("room");
    let e = h.alloc_ephemeron(C, 2).expect("room");
    h.set_slot(e, 0, key);
    let eh = h.identity_hash(e);
    let mut roots = [e];
    scavenge(&mut h, &mut roots);
    // Not taken yet: the heap keeps the ephemeron alive and up to date.
    roots[0] = Value::NIL;
    scavenge(&mut h, &mut roots);
    full(&mut h, &mut roots);
    let q = h.take_mourn_queue();
    assert_eq!(q.len(), 1);
    assert_eq!(h.identity_hash(q[0]), eh);
    assert_eq!(h.stats().ephemerons_mourned, 1);
}

#[test]
fn weak_slots_are_cleared_in_both_collectors() {
    let mut h = heap();
    let weak = h.alloc_weak(C, 3).expect("room");
    let mut roots = [weak, Value::NIL, Value::NIL];
    tenure(&mut h, &mut roots, 0);
    let a = h.alloc_pointers(C, 0).expect("room");
    let b = h.alloc_pointers(C, 0).expect("room");
    h.set_slot(roots[0], 0, a);
    h.set_slot(roots[0], 1, b);
    h.set_slot(roots[0], 2, Value::small(3));
    roots[1] = a;
    scavenge(&mut h, &mut roots);
    assert_eq!(h.slot(roots[0], 0), roots[1]);
    assert_eq!(h.slot(roots[0], 1), Value::NIL, "young referent died");
    assert_eq!(h.slot(roots[0], 2), Value::small(3));
    tenure(&mut h, &mut roots, 1);
    roots[1] = Value::NIL;
    scavenge(&mut h, &mut roots);
    assert!(
        h.slot(roots[0], 0).is_ptr(),
        "a scavenge keeps old referents"
    );
    full(&mut h, &mut roots);
    assert_eq!(h.slot(roots[0], 0), Value::NIL, "old referent died");
    assert!(h.stats().weak_slots_cleared >= 2);
}

#[test]
fn full_gc_compacts_old_space_and_keeps_roots_in_place() {
    let mut h = heap();
    let keep = h.alloc_pointers(C, 500).expect("room");
    let mut roots = [keep];
    for i in 0..500 {
        let o = h.alloc_with(C, &[Value::small(i)]).expect("room");
        h.set_slot(roots[0], i as usize, o);
        let _garbage = h.alloc_pointers(C, 20).expect("room");
    }
    // Everything tenured: the survivors and (by overflow) garbage.
    for _ in 0..4 {
        scavenge(&mut h, &mut roots);
    }
    let before = h.stats().old_used_bytes;
    let root_before = roots[0];
    for i in (0..500).step_by(2) {
        h.set_slot(roots[0], i, Value::NIL);
    }
    full(&mut h, &mut roots);
    assert_eq!(roots[0], root_before, "root targets are pinned");
    let after = h.stats().old_used_bytes;
    assert!(after < before, "{after} < {before}");
    for i in (1..500).step_by(2) {
        assert_eq!(h.slot(h.slot(roots[0], i), 0), Value::small(i as i64));
    }
    assert!(h.stats().copied_bytes > 0);
}

#[test]
fn parameters_have_pharo_defaults_and_can_be_changed() {
    let mut h = Heap::new(HeapConfig::default());
    assert_eq!(h.parameter(GcParam::EdenSize), (15 << 20) as f64);
    assert_eq!(h.parameter(GcParam::GrowthHeadroom), (16 << 20) as f64);
    assert_eq!(h.parameter(GcParam::ShrinkThreshold), (32 << 20) as f64);
    assert_eq!(h.parameter(GcParam::GcRatio), 0.33);
    assert_eq!(h.stats().eden_bytes, 15 << 20);
    assert_eq!(h.stats().survivor_bytes, 3 << 20);
    for p in GcParam::ALL {
        assert_eq!(GcParam::from_name(p.name()), Some(p));
        if let Some(i) = p.pharo_index() {
            assert_eq!(GcParam::from_pharo_index(i), Some(p));
        }
    }
    assert_eq!(h.set_parameter(GcParam::GcRatio, 2.5).expect("ok"), 0.33);
    assert_eq!(h.parameter(GcParam::GcRatio), 2.5);
    assert!(h.set_parameter(GcParam::TenuringThreshold, 0.0).is_err());
    assert!(h.set_parameter(GcParam::EdenSize, -1.0).is_err());
    // A new eden size takes effect at the next full GC, objects intact.
    let a = h.alloc_bytes(C, b"survivor").expect("room");
    let mut roots = [a];
    h.set_parameter(GcParam::EdenSize, (1 << 20) as f64)
        .expect("ok");
    scavenge(&mut h, &mut roots);
    assert_eq!(h.stats().eden_bytes, 15 << 20);
    full(&mut h, &mut roots);
    assert_eq!(h.stats().eden_bytes, 1 << 20);
    assert_eq!(h.stats().survivor_bytes, (1 << 20) / 5 / 8 * 8);
    assert_eq!(h.bytes(roots[0]), b"survivor");
    let b = h.alloc_bytes(C, b"young").expect("room");
    assert!(h.is_young(b));
}

#[test]
fn statistics_count_both_collectors() {
    let mut h = heap();
    let mut roots = [h.alloc_pointers(C, 1).expect("room")];
    for _ in 0..3 {
        scavenge(&mut h, &mut roots);
    }
    full(&mut h, &mut roots);
    let s = h.stats();
    assert_eq!(s.collections, 4);
    assert_eq!(s.scavenges, 3);
    assert_eq!(s.full_gcs, 1);
    assert_eq!(s.gc_time, s.scavenge_time + s.full_gc_time);
    assert!(s.max_pause >= s.max_scavenge_pause && s.max_pause >= s.max_full_gc_pause);
    assert!(s.mean_scavenge() <= s.max_scavenge_pause);
    assert_eq!(s.allocated_objects, 1);
    assert!(s.heap_bytes > 0 && s.old_free_bytes > 0);
    assert_eq!(h.last_collection(), Some(CollectionKind::Full));
}

#[test]
fn tracked_objects_report_their_death() {
    let mut h = heap();
    let a = h.alloc_pointers(7, 3).expect("room");
    let b = h.alloc_pointers(8, 1).expect("room");
    h.set_tracked(a, true);
    h.set_tracked(b, true);
    let ah = h.identity_hash(a);
    let clock = h.stats().allocated_bytes;
    assert_eq!(h.tracked_count(), 2);
    let mut roots = [a, b];
    h.verify(9).expect("verifies");
    // Both survive two scavenges, then a dies in a scavenge (b is tenured).
    h.set_parameter(GcParam::TenuringThreshold, 3.0)
        .expect("ok");
    let check = |h: &mut Heap, roots: &mut [Value]| {
        h.request_scavenge();
        let mut c = h.start_collection();
        for r in roots.iter_mut() {
            c.root(r);
        }
        c.finish();
        h.verify(9).expect("verifies");
    };
    check(&mut h, &mut roots);
    check(&mut h, &mut roots);
    assert!(h.take_deaths().is_empty());
    roots[0] = Value::NIL;
    check(&mut h, &mut roots);
    let d = h.take_deaths();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].class, 7);
    assert_eq!(d[0].bytes, 5 * 8);
    assert_eq!(d[0].hash, ah);
    assert_eq!(d[0].scavenges_survived, 2);
    assert_eq!(d[0].full_gcs_survived, 0);
    assert_eq!(d[0].allocated_at, clock);
    assert_eq!(d[0].died_at_gc, 3);
    assert!(!d[0].died_in_full_gc);
    // b is old now; it survives one more scavenge (counted although a
    // scavenge does not visit old tracked objects), then dies in a full GC.
    assert!(!h.is_young(roots[1]));
    check(&mut h, &mut roots);
    roots[1] = Value::NIL;
    h.request_full_gc();
    check(&mut h, &mut roots);
    let d = h.take_deaths();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].class, 8);
    assert!(d[0].died_in_full_gc);
    assert_eq!(d[0].scavenges_survived, 4);
    assert_eq!(h.tracked_count(), 0);
}

#[test]
fn stress_mode_collects_after_every_allocation() {
    let mut h = Heap::new(HeapConfig {
        eden_size: 64 << 10,
        stress: true,
        ..HeapConfig::default()
    });
    let mut roots = [Value::NIL];
    let mut kinds = Vec::new();
    for i in 0..16 {
        assert!(!h.needs_gc());
        let o = h.alloc_with(C, &[roots[0], Value::small(i)]).expect("room");
        roots[0] = o;
        assert!(h.needs_gc());
        kinds.push(collect(&mut h, &mut roots));
    }
    assert_eq!(
        kinds.iter().filter(|&&k| k == CollectionKind::Full).count(),
        4
    );
    let mut v = roots[0];
    for i in (0..16).rev() {
        assert_eq!(h.slot(v, 1), Value::small(i));
        v = h.slot(v, 0);
    }
}

#[test]
fn exhaustion_is_signalled_after_a_full_gc() {
    let mut h = Heap::new(HeapConfig {
        eden_size: 64 << 10,
        max_heap: 2 << 20,
        growth_headroom: 64 << 10,
        ..HeapConfig::default()
    });
    let mut roots = [Value::NIL];
    let mut signalled = false;
    for _ in 0..100_000 {
        match h.alloc_pointers(C, 64) {
            Ok(o) => {
                h.set_slot(o, 0, roots[0]);
                roots[0] = o;
            }
            Err(_) => {
                signalled = true;
                break;
            }
        }
        if h.needs_gc() {
            collect(&mut h, &mut roots);
            if h.take_oom_signal() {
                signalled = true;
                break;
            }
        }
    }
    assert!(signalled);
    // Dropping the data and collecting recovers.
    roots[0] = Value::NIL;
    full(&mut h, &mut roots);
    assert!(!h.take_oom_signal());
    assert!(h.alloc_pointers(C, 64).is_ok());
}

#[test]
fn old_space_grows_and_shrinks() {
    let mut h = heap();
    let n = 4000;
    let mut roots = [h.alloc_pointers(C, n).expect("room")];
    for k in 0..n {
        let o = h.alloc_pointers(C, 200).expect("room");
        h.set_slot(roots[0], k, o);
        if h.needs_gc() {
            collect(&mut h, &mut roots);
        }
    }
    full(&mut h, &mut roots);
    let big = h.stats().heap_bytes;
    assert!(h.stats().growths > 0);
    assert!(big > 6 << 20, "{big}");
    for k in 0..n {
        h.set_slot(roots[0], k, Value::NIL);
    }
    full(&mut h, &mut roots);
    assert!(h.stats().shrinks > 0);
    assert!(h.stats().heap_bytes < big / 2);
}

#[test]
fn holes_in_front_of_pinned_objects_are_reused() {
    let mut h = heap();
    let mut roots = vec![Value::NIL; 64];
    // Garbage interleaved with root-referenced (pinned) objects in old space.
    for r in roots.iter_mut() {
        for _ in 0..20 {
            h.alloc_pointers(C, 300).expect("room");
        }
        *r = h.alloc_pointers(C, 300).expect("room");
    }
    full(&mut h, &mut roots);
    let used = h.stats().old_used_bytes;
    let heap_bytes = h.stats().heap_bytes;
    // Many cycles of tenured garbage do not make the heap grow.
    for _ in 0..50 {
        for _ in 0..100 {
            h.alloc_pointers(C, 300).expect("room");
        }
        full(&mut h, &mut roots);
    }
    assert_eq!(h.stats().old_used_bytes, used);
    assert!(h.stats().heap_bytes <= heap_bytes + (1 << 20));
}

/// A rough micro benchmark (run with `--release -- --ignored --nocapture`):
/// short-lived objects, plus a ring of medium-lived ones (a rolling window kept
/// by a large old array, so the barrier, the remembered set, tenuring and full
/// GCs all work).
#[test]
#[ignore]
fn micro_benchmark() {
    for ring in [1000usize, 100_000, 400_000] {
        let mut h = Heap::new(HeapConfig::default());
        let t = std::time::Instant::now();
        let mut roots = [h.alloc_pointers(C, ring).expect("room")];
        for i in 0..20_000_000usize {
            let o = h.alloc_pointers(C, 4).expect("room");
            h.set_slot(o, 0, Value::small(i as i64));
            if i % 4 == 0 {
                // o refers to its predecessor in the ring; the evicted object lets go.
                let k = i / 4 % ring;
                let evicted = h.slot(roots[0], k);
                if evicted.is_ptr() {
                    h.set_slot(evicted, 1, Value::NIL);
                }
                let prev = h.slot(roots[0], (k + ring - 1) % ring);
                h.set_slot(o, 1, prev);
                h.set_slot(roots[0], k, o);
            }
            if h.needs_gc() {
                let mut c = h.start_collection();
                for r in roots.iter_mut() {
                    c.root(r);
                }
                c.finish();
            }
        }
        let s = h.stats();
        println!(
            "ring {ring}: 20M allocations: {:?}; {} scavenges ({:?} mean), {} full GCs ({:?} mean), {} MB tenured",
            t.elapsed(),
            s.scavenges,
            s.mean_scavenge(),
            s.full_gcs,
            s.mean_full_gc(),
            s.tenured_bytes >> 20
        );
    }
}

/// Observer allocations (a profiler's own objects): in old space, off the
/// allocation clock, never asking for a collection however many; an old
/// observer object that refers to a young one keeps it through a scavenge
/// (the write barrier); when off again, allocation is as before.
#[test]
fn observer_allocations_stay_out_of_eden_and_off_the_clock() {
    let mut h = heap();
    let young = h.alloc_pointers(C, 2).expect("young");
    let bytes = h.stats().allocated_bytes;
    let objects = h.stats().allocated_objects;
    h.set_observer_allocations(true);
    assert!(h.observer_allocations());
    // Many times eden's size in observer objects.
    let mut kept = Value::NIL;
    for _ in 0..20_000 {
        let o = h.alloc_pointers(C, 4).expect("observer");
        assert!(!h.is_young(o));
        h.set_slot(o, 0, kept);
        kept = o;
    }
    h.set_slot(kept, 1, young);
    assert!(!h.needs_gc(), "the observer brings no collection forward");
    assert_eq!(h.stats().allocated_bytes, bytes);
    assert_eq!(h.stats().allocated_objects, objects);
    assert_eq!(h.stats().observer_objects, 20_000);
    assert_eq!(h.stats().observer_bytes, 20_000 * 48);
    h.set_observer_allocations(false);
    let o = h.alloc_pointers(C, 2).expect("program");
    assert!(h.is_young(o));
    assert_eq!(h.stats().allocated_bytes, bytes + 32);
    let mut roots = [kept];
    scavenge(&mut h, &mut roots);
    assert!(h.slot(roots[0], 1).is_ptr(), "the young object survived");
    assert_eq!(count(&h), 20_000 + 1);
}

/// Each queued ephemeron carries the collections done before the one that
/// found its key dead, even when another collection runs before the queue is
/// taken (a full GC right after the scavenge).
#[test]
fn queued_ephemerons_say_which_collection_found_their_key_dead() {
    let mut h = heap();
    let mut roots = [Value::NIL];
    full(&mut h, &mut roots);
    scavenge(&mut h, &mut roots);
    let e = h.alloc_ephemeron(C, 2).expect("ephemeron");
    let key = h.alloc_pointers(C, 1).expect("key");
    h.set_slot(e, 0, key);
    let mut roots = [e];
    scavenge(&mut h, &mut roots);
    full(&mut h, &mut roots);
    assert_eq!(h.take_mourn_queue(), vec![roots[0]]);
    assert_eq!(h.mourn_queue_collections(), &[[1, 1]][..]);
    assert!(h.take_mourn_queue().is_empty());
    assert!(h.mourn_queue_collections().is_empty());
}
