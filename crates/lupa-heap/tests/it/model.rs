//! Model-based property test of the generational collector: random programs
//! allocate objects of every format (pointers, weak, ephemerons, bytes, large
//! objects), store references (also into old objects, so the write barrier
//! matters), move roots, track objects and collect (scavenges and full GCs,
//! interleaved, with the eden size sometimes changed). A model computes what
//! must survive each collection (Hayes' ephemeron semantics; in a scavenge every
//! old object is assumed alive); the test checks that exactly those objects
//! survive, with their contents and identity hashes, that weak slots to the dead
//! became nil, that exactly the right ephemerons were queued for mourning, that
//! the right tracked objects were reported dead, and that the heap verifies.

use lupa_heap::{CollectionKind, Format, GcParam, Heap, HeapConfig, Value};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ptr,
    Weak,
    Eph,
    Bytes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MVal {
    Nil,
    Int(i64),
    Ref(u32),
}

#[derive(Debug, Clone)]
struct MObj {
    kind: Kind,
    slots: Vec<MVal>,
    /// Byte objects: their length (contents derive from the id).
    len: usize,
    tracked: bool,
}

#[derive(Debug, Clone)]
enum Op {
    Alloc(u8, usize),
    /// Allocate, then store the new object into slot `.3` of object `.2`.
    AllocInto(u8, usize, usize, usize),
    Store(usize, usize, Option<usize>, i64),
    SetRoot(usize, Option<usize>),
    Track(usize),
    /// 0: scavenge, 1: full GC, 2: full GC tenuring everything.
    Gc(u8),
    EdenSize(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..4, 0usize..6).prop_map(|(k, n)| Op::Alloc(k, n)),
        10 => (0u8..4, 0usize..6, any::<usize>(), any::<usize>()).prop_map(|(k, n, a, s)| Op::AllocInto(k, n, a, s)),
        1 => (0u8..2, 130usize..200).prop_map(|(k, n)| Op::Alloc(k, n)),
        10 => (any::<usize>(), any::<usize>(), proptest::option::weighted(0.8, any::<usize>()), -5i64..5)
            .prop_map(|(a, s, b, i)| Op::Store(a, s, b, i)),
        3 => (0usize..6, proptest::option::weighted(0.9, any::<usize>())).prop_map(|(r, o)| Op::SetRoot(r, o)),
        1 => any::<usize>().prop_map(Op::Track),
        2 => prop_oneof![6 => Just(0u8), 3 => Just(1u8), 1 => Just(2u8)].prop_map(Op::Gc),
        1 => (1usize..4).prop_map(|k| Op::EdenSize((k * 8) << 10)),
    ]
}

const CLASS: u32 = 1;

struct World {
    heap: Heap,
    /// Model objects by id (= identity hash).
    objs: HashMap<u32, MObj>,
    /// Where each model object is now.
    at: HashMap<u32, Value>,
    /// Ids in allocation order (for picking objects by index).
    order: Vec<u32>,
    roots: [Option<u32>; 6],
    root_vals: [Value; 6],
    /// Ephemerons handed out for mourning, held as roots for one more collection.
    mourners: Vec<u32>,
    mourner_vals: Vec<Value>,
    next_id: u32,
}

fn bytes_of(id: u32, len: usize) -> Vec<u8> {
    (0..len).map(|k| (id as usize * 31 + k) as u8).collect()
}

impl World {
    fn new() -> World {
        World {
            heap: Heap::new(HeapConfig {
                eden_size: 8 << 10,
                tenuring_threshold: 2,
                gc_ratio: 1000.0,
                large_object_size: 1024,
                growth_headroom: 64 << 10,
                shrink_threshold: 128 << 10,
                ..HeapConfig::default()
            }),
            objs: HashMap::new(),
            at: HashMap::new(),
            order: Vec::new(),
            roots: [None; 6],
            root_vals: [Value::NIL; 6],
            mourners: Vec::new(),
            mourner_vals: Vec::new(),
            next_id: 1,
        }
    }

    fn pick(&self, k: usize) -> Option<u32> {
        if self.order.is_empty() {
            None
        } else {
            Some(self.order[k % self.order.len()])
        }
    }

    fn value_of(&self, v: MVal) -> Value {
        match v {
            MVal::Nil => Value::NIL,
            MVal::Int(i) => Value::small(i),
            MVal::Ref(id) => self.at[&id],
        }
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match *op {
            Op::AllocInto(k, n, a, s) => {
                let target = self.pick(a);
                self.apply(&Op::Alloc(k, n))?;
                if let Some(t) = target {
                    let new = self.order.len() - 1;
                    let from = self.order.iter().position(|&id| id == t).expect("live");
                    self.apply(&Op::Store(from, s, Some(new), 0))?;
                }
            }
            Op::Alloc(k, n) => {
                let kind = [Kind::Ptr, Kind::Weak, Kind::Eph, Kind::Bytes][k as usize];
                let id = self.next_id;
                self.next_id += 1;
                let (v, obj) = match kind {
                    Kind::Ptr => (
                        self.heap.alloc_pointers(CLASS, n),
                        MObj {
                            kind,
                            slots: vec![MVal::Nil; n],
                            len: 0,
                            tracked: false,
                        },
                    ),
                    Kind::Weak => (
                        self.heap.alloc_weak(CLASS, n),
                        MObj {
                            kind,
                            slots: vec![MVal::Nil; n],
                            len: 0,
                            tracked: false,
                        },
                    ),
                    Kind::Eph => {
                        let n = 2 + n % 3;
                        (
                            self.heap.alloc_ephemeron(CLASS, n),
                            MObj {
                                kind,
                                slots: vec![MVal::Nil; n],
                                len: 0,
                                tracked: false,
                            },
                        )
                    }
                    Kind::Bytes => {
                        let len = n * 5;
                        (
                            self.heap.alloc_bytes(CLASS, &bytes_of(id, len)),
                            MObj {
                                kind,
                                slots: Vec::new(),
                                len,
                                tracked: false,
                            },
                        )
                    }
                };
                let v = v.map_err(|e| TestCaseError::fail(e.to_string()))?;
                self.heap.set_identity_hash(v, id);
                self.objs.insert(id, obj);
                self.at.insert(id, v);
                self.order.push(id);
            }
            Op::Store(a, s, b, i) => {
                let Some(from) = self.pick(a) else {
                    return Ok(());
                };
                let n = self.objs[&from].slots.len();
                if n == 0 {
                    return Ok(());
                }
                let s = s % n;
                let val = match b.and_then(|b| self.pick(b)) {
                    Some(to) => MVal::Ref(to),
                    None if i == 0 => MVal::Nil,
                    None => MVal::Int(i),
                };
                let hv = self.value_of(val);
                let fv = self.at[&from];
                self.heap.set_slot(fv, s, hv);
                self.objs.get_mut(&from).expect("object").slots[s] = val;
            }
            Op::SetRoot(r, o) => {
                self.roots[r] = o.and_then(|o| self.pick(o));
                self.root_vals[r] = self.roots[r].map_or(Value::NIL, |id| self.at[&id]);
            }
            Op::Track(k) => {
                if let Some(id) = self.pick(k) {
                    self.heap.set_tracked(self.at[&id], true);
                    self.objs.get_mut(&id).expect("object").tracked = true;
                }
            }
            Op::EdenSize(bytes) => {
                self.heap
                    .set_parameter(GcParam::EdenSize, bytes as f64)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            Op::Gc(k) => self.collect(k)?,
        }
        self.heap.verify(2).map_err(TestCaseError::fail)?;
        Ok(())
    }

    /// What survives a collection of `kind`, and which ephemerons are fired.
    fn expect(&self, kind: CollectionKind) -> (HashSet<u32>, HashSet<u32>) {
        let mut live: HashSet<u32> = HashSet::new();
        let mut work: Vec<u32> = Vec::new();
        let mut fired: HashSet<u32> = HashSet::new();
        let add = |id: u32, live: &mut HashSet<u32>, work: &mut Vec<u32>| {
            if live.insert(id) {
                work.push(id);
            }
        };
        for id in self.roots.iter().flatten().chain(&self.mourners) {
            add(*id, &mut live, &mut work);
        }
        if kind == CollectionKind::Scavenge {
            for (&id, &v) in &self.at {
                if !self.heap.is_young(v) {
                    add(id, &mut live, &mut work);
                }
            }
        }
        let key_alive = |e: u32, live: &HashSet<u32>| match self.objs[&e].slots[0] {
            MVal::Ref(k) => live.contains(&k),
            _ => true,
        };
        let mut pending: Vec<u32> = Vec::new();
        loop {
            while let Some(id) = work.pop() {
                let o = &self.objs[&id];
                let kind = if fired.contains(&id) {
                    Kind::Ptr
                } else {
                    o.kind
                };
                let strong = match kind {
                    Kind::Ptr => true,
                    Kind::Eph => {
                        if key_alive(id, &live) {
                            true
                        } else {
                            pending.push(id);
                            false
                        }
                    }
                    Kind::Weak | Kind::Bytes => false,
                };
                if strong {
                    for s in &o.slots {
                        if let MVal::Ref(t) = s {
                            add(*t, &mut live, &mut work);
                        }
                    }
                }
            }
            let mut progress = false;
            for e in std::mem::take(&mut pending) {
                if key_alive(e, &live) {
                    progress = true;
                    for s in &self.objs[&e].slots {
                        if let MVal::Ref(t) = s {
                            add(*t, &mut live, &mut work);
                        }
                    }
                } else {
                    pending.push(e);
                }
            }
            if progress {
                continue;
            }
            if pending.is_empty() {
                break;
            }
            for e in std::mem::take(&mut pending) {
                fired.insert(e);
                for s in &self.objs[&e].slots {
                    if let MVal::Ref(t) = s {
                        add(*t, &mut live, &mut work);
                    }
                }
            }
        }
        (live, fired)
    }

    fn collect(&mut self, how: u8) -> Result<(), TestCaseError> {
        let full = how > 0;
        match how {
            0 => self.heap.request_scavenge(),
            1 => self.heap.request_full_gc(),
            _ => self.heap.request_tenuring_full_gc(),
        }
        let kind = self.heap.next_collection_kind();
        if full {
            prop_assert_eq!(kind, CollectionKind::Full);
        }
        // The model is computed before anything moves.
        let mut roots = self.root_vals;
        let mut mourners = std::mem::take(&mut self.mourner_vals);
        let (live, fired) = self.expect(kind);
        let mut c = self.heap.start_collection();
        prop_assert_eq!(c.kind(), kind);
        for r in roots.iter_mut() {
            c.root(r);
        }
        for m in mourners.iter_mut() {
            c.root(m);
        }
        c.finish();
        prop_assert_eq!(self.heap.last_collection(), Some(kind));
        self.heap.verify(2).map_err(TestCaseError::fail)?;
        // Exactly the expected objects survive.
        let mut now: HashMap<u32, Value> = HashMap::new();
        let mut heap = std::mem::replace(&mut self.heap, Heap::new(HeapConfig::default()));
        let mut all = Vec::new();
        heap.for_each_object(|v| all.push(v));
        for v in all {
            let id = heap.identity_hash(v);
            prop_assert!(now.insert(id, v).is_none(), "identity hash {} twice", id);
        }
        self.heap = heap;
        let survivors: HashSet<u32> = now.keys().copied().collect();
        prop_assert_eq!(&survivors, &live, "{:?}: survivors", kind);
        // Deaths of tracked objects.
        let mut dead_tracked: Vec<u32> = self
            .objs
            .iter()
            .filter(|(id, o)| o.tracked && !live.contains(id))
            .map(|(id, _)| *id)
            .collect();
        dead_tracked.sort_unstable();
        let mut deaths: Vec<u32> = self.heap.take_deaths().iter().map(|d| d.hash).collect();
        deaths.sort_unstable();
        prop_assert_eq!(deaths, dead_tracked);
        // The model after the collection.
        self.objs.retain(|id, _| live.contains(id));
        self.order.retain(|id| live.contains(id));
        for o in self.objs.values_mut() {
            if o.kind == Kind::Weak {
                for s in o.slots.iter_mut() {
                    if let MVal::Ref(t) = s
                        && !live.contains(t)
                    {
                        *s = MVal::Nil;
                    }
                }
            }
        }
        for id in &fired {
            self.objs
                .get_mut(id)
                .expect("fired ephemeron survives")
                .kind = Kind::Ptr;
        }
        self.at = now;
        if how == 2 {
            for (&id, &v) in &self.at {
                prop_assert!(!self.heap.is_young(v), "{} tenured", id);
            }
        }
        // Roots were updated to the same objects.
        for (k, r) in self.roots.iter().enumerate() {
            let want = r.map_or(Value::NIL, |id| self.at[&id]);
            prop_assert_eq!(roots[k], want);
        }
        self.root_vals = roots;
        // Contents.
        for (id, o) in &self.objs {
            let v = self.at[id];
            let fmt = self.heap.format(v);
            let want = match o.kind {
                Kind::Ptr => Format::Pointers,
                Kind::Weak => Format::Weak,
                Kind::Eph => Format::Ephemeron,
                Kind::Bytes => Format::Bytes,
            };
            prop_assert_eq!(fmt, want, "format of {}", id);
            if o.kind == Kind::Bytes {
                prop_assert_eq!(self.heap.bytes(v), &bytes_of(*id, o.len)[..]);
            } else {
                prop_assert_eq!(self.heap.size(v), o.slots.len());
                for (k, s) in o.slots.iter().enumerate() {
                    prop_assert_eq!(
                        self.heap.slot(v, k),
                        self.value_of(*s),
                        "slot {} of {}",
                        k,
                        id
                    );
                }
            }
        }
        // Mourning: exactly the fired ephemerons, held for one more collection.
        let queue = self.heap.take_mourn_queue();
        let mut got: Vec<u32> = Vec::new();
        for v in &queue {
            got.push(self.heap.identity_hash(*v));
        }
        got.sort_unstable();
        let mut want: Vec<u32> = fired.iter().copied().collect();
        want.sort_unstable();
        prop_assert_eq!(got, want, "mourn queue");
        self.mourners = fired.into_iter().collect();
        self.mourner_vals = self.mourners.iter().map(|id| self.at[id]).collect();
        Ok(())
    }
}

proptest! {
    // PROPTEST_CASES=n runs more cases.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn collections_keep_exactly_what_the_model_says(ops in proptest::collection::vec(op(), 1..300)) {
        let mut w = World::new();
        for op in &ops {
            w.apply(op)?;
        }
        w.collect(0)?;
        w.collect(1)?;
        w.collect(2)?;
        prop_assert_eq!(w.heap.stats().survivor_used_bytes, 0, "everything tenured");
        if std::env::var_os("MODEL_STATS").is_some() {
            let s = w.heap.stats();
            eprintln!("ops {} scav {} full {} tenured {} mourned {} weak {} maxrs {} objs {}", ops.len(), s.scavenges, s.full_gcs, s.tenured_objects, s.ephemerons_mourned, s.weak_slots_cleared, s.max_remembered_set_size, w.objs.len());
        }
    }
}
