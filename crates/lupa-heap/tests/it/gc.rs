//! Collector tests: random object graphs survive collection exactly.

use lupa_heap::{Format, Heap, HeapConfig, Value};
use proptest::prelude::*;
use std::collections::HashSet;

fn small_heap(stress: bool) -> Heap {
    Heap::new(HeapConfig {
        eden_size: 64 << 10,
        stress,
        ..HeapConfig::default()
    })
}

#[derive(Debug, Clone)]
struct Graph {
    /// per object: number of slots
    sizes: Vec<usize>,
    /// edges: (from, slot, to)
    edges: Vec<(usize, usize, usize)>,
    /// roots
    roots: Vec<usize>,
    /// which objects are weak
    weak: Vec<bool>,
}

fn graph() -> impl Strategy<Value = Graph> {
    (1usize..60).prop_flat_map(|n| {
        (
            proptest::collection::vec(0usize..5, n),
            proptest::collection::vec((0..n, 0usize..5, 0..n), 0..(n * 3)),
            proptest::collection::vec(0..n, 0..4),
            proptest::collection::vec(proptest::bool::weighted(0.15), n),
        )
            .prop_map(|(sizes, edges, roots, weak)| Graph {
                sizes,
                edges,
                roots,
                weak,
            })
    })
}

proptest! {
    #[test]
    fn collection_keeps_exactly_the_reachable(g in graph()) {
        let mut heap = small_heap(false);
        let mut objs = Vec::new();
        for (i, &n) in g.sizes.iter().enumerate() {
            let v = if g.weak[i] { heap.alloc_weak(1, n) } else { heap.alloc_pointers(1, n) };
            let v = v.expect("room");
            // tag each object with a payload in a companion word object
            objs.push(v);
        }
        for &(from, slot, to) in &g.edges {
            if slot < g.sizes[from] {
                heap.set_slot(objs[from], slot, objs[to]);
            }
        }
        let hashes: Vec<u32> = objs.iter().map(|&v| heap.identity_hash(v)).collect();
        // Reachability (weak slots do not count).
        let mut reach = HashSet::new();
        let mut todo: Vec<usize> = g.roots.clone();
        while let Some(o) = todo.pop() {
            if !reach.insert(o) { continue; }
            if g.weak[o] { continue; }
            for &(from, slot, to) in &g.edges {
                if from == o && slot < g.sizes[from] && heap.slot(objs[from], slot) == objs[to] {
                    todo.push(to);
                }
            }
        }
        let mut roots: Vec<Value> = g.roots.iter().map(|&r| objs[r]).collect();
        // Expected shape of each root: its slots, as object numbers (None for nil).
        let shape = |heap: &Heap, objs: &[Value], v: Value| -> Vec<Option<usize>> {
            (0..heap.size(v)).map(|k| objs.iter().position(|&o| o == heap.slot(v, k))).collect()
        };
        let before: Vec<Vec<Option<usize>>> = roots.iter().map(|&r| shape(&heap, &objs, r)).collect();
        let mut c = heap.start_collection();
        for r in roots.iter_mut() { c.root(r); }
        c.finish();
        heap.verify(2).map_err(TestCaseError::fail)?;
        let mut count = 0;
        heap.for_each_object(|_| count += 1);
        prop_assert_eq!(count, reach.len(), "exactly the reachable objects survive");
        for (i, &r) in g.roots.iter().enumerate() {
            prop_assert_eq!(heap.identity_hash(roots[i]), hashes[r]);
            prop_assert_eq!(heap.size(roots[i]), g.sizes[r]);
            let fmt = heap.format(roots[i]);
            prop_assert_eq!(fmt == Format::Weak, g.weak[r]);
        }
        // Strong slots of the roots still point to objects with the same identity hashes.
        for (i, &r) in roots.iter().enumerate() {
            if g.weak[g.roots[i]] { continue; }
            for (k, target) in before[i].iter().enumerate() {
                let now = heap.slot(r, k);
                match target {
                    Some(t) => prop_assert_eq!(heap.identity_hash(now), hashes[*t]),
                    None => prop_assert!(!now.is_ptr()),
                }
            }
        }
    }
}

#[test]
fn weak_slots_are_cleared_when_referent_dies() {
    let mut heap = small_heap(false);
    let weak = heap.alloc_weak(1, 2).expect("room");
    let kept = heap.alloc_pointers(1, 0).expect("room");
    let dead = heap.alloc_pointers(1, 0).expect("room");
    heap.set_slot(weak, 0, kept);
    heap.set_slot(weak, 1, dead);
    let mut roots = [weak, kept];
    let mut c = heap.start_collection();
    for r in roots.iter_mut() {
        c.root(r);
    }
    c.finish();
    assert_eq!(heap.slot(roots[0], 0), roots[1]);
    assert_eq!(heap.slot(roots[0], 1), Value::NIL);
}

#[test]
fn bytes_and_words_survive_and_move() {
    let mut heap = small_heap(false);
    let _garbage = heap.alloc_pointers(1, 100).expect("room");
    let s = heap.alloc_bytes(1, b"hello, world!").expect("room");
    let w = heap.alloc_words(1, &[1.5f64.to_bits()]).expect("room");
    let holder = heap.alloc_with(1, &[s, w, Value::small(7)]).expect("room");
    let mut root = holder;
    let mut c = heap.start_collection();
    c.root(&mut root);
    c.finish();
    assert_ne!(root, holder, "objects moved");
    let s2 = heap.slot(root, 0);
    assert_eq!(heap.bytes(s2), b"hello, world!");
    assert_eq!(f64::from_bits(heap.word(heap.slot(root, 1), 0)), 1.5);
    assert_eq!(heap.slot(root, 2), Value::small(7));
    assert_eq!(heap.age(root), 1);
}

#[test]
fn max_heap_is_enforced() {
    let mut heap = Heap::new(HeapConfig {
        eden_size: 64 << 10,
        max_heap: 1 << 20,
        ..HeapConfig::default()
    });
    let mut failed = false;
    for _ in 0..10_000 {
        if heap.alloc_pointers(1, 100).is_err() {
            failed = true;
            break;
        }
    }
    assert!(
        failed,
        "allocation beyond --max-heap fails instead of growing"
    );
}

#[test]
fn garbage_is_reclaimed_in_bounded_memory() {
    let mut heap = small_heap(false);
    let mut root = heap.alloc_pointers(1, 1).expect("room");
    for i in 0..200_000 {
        let tmp = heap.alloc_pointers(1, 4).expect("room");
        if i % 1000 == 0 {
            heap.set_slot(root, 0, tmp);
        }
        if heap.needs_gc() {
            let mut c = heap.start_collection();
            c.root(&mut root);
            c.finish();
        }
    }
    assert!(heap.stats().collections > 0);
    assert!(heap.used_bytes() < 1 << 20);
}
