//! The collector's decisions, one test per rule (Spur's, as Pharo's VM takes
//! them; see the crate's README, "When is a collection full?"):
//!
//! 1. after a scavenge, a full GC runs at once when old space grew by the GC
//!    ratio since the last full GC;
//! 2. otherwise the free room at the end of old space is topped up to the
//!    growth headroom;
//! 3. tenuring into exhausted old space grows it by a segment, without a full
//!    GC;
//! 4. a program's allocation that finds old space exhausted grows it by a
//!    segment (the headroom, or the whole request rounded up to a power of
//!    two) and the full GC runs at the next safepoint;
//! 5. after a full GC, free room beyond the shrink threshold is given back,
//!    and the next threshold is the live size times one plus the ratio.

use lupa_heap::{CollectionKind, Heap, HeapConfig, Value};

const C: u32 = 1;
const KB: usize = 1 << 10;

fn heap(ratio: f64, headroom: usize) -> Heap {
    Heap::new(HeapConfig {
        eden_size: 64 * KB,
        growth_headroom: headroom,
        shrink_threshold: 4 * headroom,
        gc_ratio: ratio,
        tenuring_threshold: 1,
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

/// Free room at the end of old space (no holes in these heaps: nothing in
/// front of a pinned object is ever freed).
fn free(heap: &Heap) -> usize {
    heap.stats().old_free_bytes as usize
}

/// A large (old) array of `n` slots holding everything the tests keep.
fn keeper(heap: &mut Heap, n: usize) -> Value {
    let a = heap.alloc_pointers(C, n).expect("room");
    assert!(
        !heap.is_young(a),
        "the keeper is a large object, in old space"
    );
    a
}

/// A first full GC: before it, old space may grow by one headroom (Lupa's
/// image is a few objects where Pharo's is tens of megabytes); after it, the
/// threshold follows the ratio.
fn first_full_gc(heap: &mut Heap, roots: &mut [Value]) {
    heap.request_full_gc();
    assert_eq!(collect(heap, roots), CollectionKind::Full);
}

#[test]
fn rule_1_a_scavenge_past_the_ratio_is_followed_by_a_full_gc() {
    let mut h = heap(0.5, 256 * KB);
    let mut roots = [keeper(&mut h, 40_000)];
    let mut k = 0;
    // Some live data, then a full GC: the ratio is measured from here.
    while k < 5_000 {
        let o = h.alloc_pointers(C, 4).expect("room");
        h.set_slot(roots[0], k, o);
        k += 1;
        if h.needs_gc() {
            collect(&mut h, &mut roots);
        }
    }
    h.request_full_gc();
    assert_eq!(collect(&mut h, &mut roots), CollectionKind::Full);
    let used = h.stats().old_used_bytes as f64;
    let eden = h.stats().eden_bytes as f64;
    let threshold = (used * 1.5).max(used + eden / 4.0);
    let exhausted = h.stats().exhaustion_full_gcs;
    let (mut scavenges, mut crossed) = (0, false);
    while !crossed {
        let o = h.alloc_pointers(C, 4).expect("room");
        h.set_slot(roots[0], k, o);
        k += 1;
        if h.needs_gc() {
            let kind = collect(&mut h, &mut roots);
            assert_eq!(
                kind,
                CollectionKind::Scavenge,
                "old space is below the ratio"
            );
            scavenges += 1;
            let grown = h.stats().old_used_bytes as f64 > threshold;
            // Right after the scavenge: a full GC is due exactly when the
            // scavenge took old space past the ratio.
            assert_eq!(h.needs_gc(), grown);
            assert_eq!(
                h.next_collection_kind() == CollectionKind::Full,
                grown,
                "after scavenge {scavenges}"
            );
            crossed = grown;
        }
    }
    assert!(
        scavenges > 1,
        "several scavenges before the ratio is reached"
    );
    let before = h.stats().ratio_full_gcs;
    assert_eq!(collect(&mut h, &mut roots), CollectionKind::Full);
    assert_eq!(h.stats().ratio_full_gcs, before + 1);
    assert_eq!(h.stats().exhaustion_full_gcs, exhausted);
}

#[test]
fn rule_2_a_scavenge_tops_the_free_room_up_to_the_headroom() {
    let headroom = 256 * KB;
    let mut h = heap(1000.0, headroom);
    let mut roots = [keeper(&mut h, 60_000)];
    first_full_gc(&mut h, &mut roots);
    let mut scavenges = 0;
    for k in 0..60_000 {
        let o = h.alloc_pointers(C, 4).expect("room");
        h.set_slot(roots[0], k, o);
        if h.needs_gc() {
            assert_eq!(collect(&mut h, &mut roots), CollectionKind::Scavenge);
            scavenges += 1;
            assert!(
                free(&h) >= headroom,
                "after scavenge {scavenges}: {} bytes free",
                free(&h)
            );
        }
    }
    assert!(
        h.stats().tenured_bytes as usize > 4 * headroom,
        "old space grew"
    );
}

#[test]
fn rule_3_tenuring_into_exhausted_old_space_grows_it_without_a_full_gc() {
    let mut h = heap(1000.0, 64 * KB);
    let mut roots = [keeper(&mut h, 60_000)];
    first_full_gc(&mut h, &mut roots);
    for k in 0..60_000 {
        let o = h.alloc_pointers(C, 4).expect("room");
        h.set_slot(roots[0], k, o);
        if h.needs_gc() {
            assert_eq!(collect(&mut h, &mut roots), CollectionKind::Scavenge);
        }
    }
    let s = h.stats();
    assert!(
        s.tenured_bytes > 2 << 20,
        "{} bytes tenured",
        s.tenured_bytes
    );
    assert!(s.growths > 10, "{} growths", s.growths);
    assert_eq!(s.full_gcs, 1, "the first one only");
}

#[test]
fn rule_4_an_allocation_that_finds_old_space_exhausted_grows_it_and_asks_for_a_full_gc() {
    let headroom = 256 * KB;
    let mut h = heap(1000.0, headroom);
    let mut roots = [keeper(&mut h, 3_000)];
    first_full_gc(&mut h, &mut roots);
    // A scavenge: the free room is now at least one headroom.
    h.request_scavenge();
    assert_eq!(collect(&mut h, &mut roots), CollectionKind::Scavenge);
    let slots = 4 * KB; // 32 KB and a header: a large object (over eden / 4)
    let size = (slots + 2) * 8;
    let mut k = 0;
    while free(&h) >= size {
        let before = h.stats().heap_bytes;
        let o = h.alloc_pointers(C, slots).expect("room");
        assert!(!h.is_young(o));
        h.set_slot(roots[0], k, o);
        k += 1;
        assert!(!h.needs_gc(), "it fitted: no collection");
        assert_eq!(h.stats().heap_bytes, before, "it fitted: no growth");
    }
    // The next one does not fit: old space grows by a segment of one
    // headroom, and the full GC comes at the next safepoint.
    let before = h.stats().heap_bytes as usize;
    let o = h.alloc_pointers(C, slots).expect("room");
    h.set_slot(roots[0], k, o);
    assert!(h.needs_gc());
    assert_eq!(h.next_collection_kind(), CollectionKind::Full);
    assert_eq!(h.stats().heap_bytes as usize, before + headroom);
    assert_eq!(collect(&mut h, &mut roots), CollectionKind::Full);
    assert_eq!(h.stats().exhaustion_full_gcs, 1);
    assert_eq!(h.stats().ratio_full_gcs, 0);
    assert_eq!(h.stats().full_gcs, 2);
    // A request larger than the headroom: a segment for the whole request
    // (not only what the free room lacks), rounded up to a power of two, as
    // `handleFailingBasicNew:` asks `growMemoryByAtLeast:` the bytes requested.
    h.request_scavenge();
    collect(&mut h, &mut roots);
    let big = 65_600; // 512.5 KB and a header: just past a power of two
    let before = h.stats().heap_bytes as usize;
    let room = free(&h);
    assert!(room < (big + 2) * 8, "it cannot fit in {room} bytes");
    assert!(
        (big + 2 - room / 8).next_power_of_two() < (big + 2).next_power_of_two(),
        "what the free room lacks would round to a smaller segment"
    );
    let o = h.alloc_pointers(C, big).expect("room");
    h.set_slot(roots[0], k + 1, o);
    assert!(h.needs_gc());
    assert_eq!(h.next_collection_kind(), CollectionKind::Full);
    let need = (h.stats().heap_bytes as usize - before) / 8;
    assert_eq!(
        need,
        (big + 2).next_power_of_two(),
        "the request rounded up to a power of two: {need} words"
    );
    assert!(need * 8 > (big + 2) * 8 - room, "more than the shortfall");
}

#[test]
fn rule_5_a_full_gc_gives_free_room_back_and_sets_the_next_threshold() {
    let headroom = 256 * KB;
    let mut h = heap(0.5, headroom);
    let mut roots = [keeper(&mut h, 60_000)];
    for k in 0..60_000 {
        let o = h.alloc_pointers(C, 4).expect("room");
        h.set_slot(roots[0], k, o);
        if h.needs_gc() {
            collect(&mut h, &mut roots);
        }
    }
    let big = h.stats().heap_bytes;
    // Drop most of it: a full GC frees it, and gives back what is past the
    // shrink threshold (keeping one headroom).
    for k in 1_000..60_000 {
        h.set_slot(roots[0], k, Value::NIL);
    }
    h.request_full_gc();
    assert_eq!(collect(&mut h, &mut roots), CollectionKind::Full);
    assert!(h.stats().shrinks > 0);
    assert!(h.stats().heap_bytes < big / 2);
    assert!(free(&h) <= headroom, "{} bytes free", free(&h));
    // The next full GC comes when old space has grown by the ratio again.
    let used = h.stats().old_used_bytes as f64;
    let eden = h.stats().eden_bytes as f64;
    let threshold = (used * 1.5).max(used + eden / 4.0);
    let ratio_gcs = h.stats().ratio_full_gcs;
    let mut k = 1_000;
    loop {
        let o = h.alloc_pointers(C, 4).expect("room");
        h.set_slot(roots[0], k, o);
        k += 1;
        if h.needs_gc() {
            let kind = collect(&mut h, &mut roots);
            if kind == CollectionKind::Full {
                break;
            }
            let past = h.stats().old_used_bytes as f64 > threshold;
            assert_eq!(h.next_collection_kind() == CollectionKind::Full, past);
        }
    }
    assert_eq!(h.stats().ratio_full_gcs, ratio_gcs + 1);
}
