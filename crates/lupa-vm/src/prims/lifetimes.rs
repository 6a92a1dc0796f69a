//! `System` primitives of the VM's lifetime recording (Illimani's VM mode,
//! `IllLifetimeProfiler beVmNative`): start, stop, and the records as arrays.

use super::Primitive;
use super::{Args, PrimResult, Reply::Answer};
use crate::obs::lifetimes::{LifetimeOptions, allocation_stack_from as stack_from, policy_for};
use crate::vm::Vm;
use lupa_heap::Value;

/// `startLifetimes: rate everyNth: n seed: seed stackDepth: depth only: classes ignore: classes`
fn start(vm: &mut Vm, args: Args) -> PrimResult {
    let rate = args.number(vm, 1)?;
    let every = args.int(vm, 2)?.max(0) as u64;
    let seed = args.int(vm, 3)? as u64;
    let depth = args.int(vm, 4)?.clamp(1, 256) as usize;
    let classes = |vm: &mut Vm, i: usize| -> Result<Vec<u32>, super::PrimFailure> {
        let v = args.get(vm, i);
        if v.is_nil() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for e in args.array_elements(vm, i)? {
            if let Some(c) = vm.class_index_of_object(e) {
                out.push(c);
            }
        }
        Ok(out)
    };
    let only = classes(vm, 5)?;
    let ignored = classes(vm, 6)?;
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(super::PrimFailure::Error(format!(
            "the sampling rate must be in (0, 1], not {rate}"
        )));
    }
    let policy = policy_for(rate, every, seed);
    vm.start_lifetimes(LifetimeOptions {
        policy,
        only,
        ignored,
        stack_depth: depth,
    });
    Ok(Answer(args.get(vm, 0)))
}

/// `lifetimesFinalGC`: a full GC at the next safepoint, the recording's final
/// one (it finds who is really alive before `stopLifetimes`); answers the
/// receiver.
fn final_gc(vm: &mut Vm, args: Args) -> PrimResult {
    vm.request_final_lifetimes_gc();
    Ok(Answer(args.get(vm, 0)))
}

/// `stopLifetimes`: the number of records.
fn stop(vm: &mut Vm, _args: Args) -> PrimResult {
    let rec = vm.stop_lifetimes();
    let n = rec.records.len();
    vm.obs.last_lifetimes = Some(rec);
    Ok(Answer(Value::small(n as i64)))
}

/// A frame (method or block id, instruction index) as `#(method pc line name
/// id)`: the Method object of the (home) method, the index, its source line,
/// the display name (`[] in Foo>>bar` for a block) and the id (which
/// `recordLifetimes:totals:` takes back).
fn frame(vm: &mut Vm, (id, pc): (u32, u32)) -> Result<Value, lupa_heap::OutOfMemory> {
    let line = vm.image.line_of(id, pc).unwrap_or(0);
    let name = vm
        .image
        .describe_method(id)
        .map(|d| d.display_name())
        .unwrap_or_default();
    let method = vm
        .image
        .methods
        .get(id as usize)
        .and_then(|c| vm.image.methods.get(c.home.get() as usize))
        .map_or(Value::NIL, |h| h.object.get());
    let name = vm.new_string(&name)?;
    vm.new_array(&[
        method,
        Value::small(pc as i64),
        Value::small(line as i64),
        name,
        Value::small(id as i64),
    ])
}

fn int(n: u64) -> Value {
    Value::from_i64(n.min(i64::MAX as u64) as i64).unwrap_or(Value::small(0))
}

/// `lifetimeRecordFrom: start count: n`: records `start` (from 1) on, at most
/// `n`, each `#(class sizeInBytes stack birthBytes deathBytes birthUs deathUs
/// survivedScavenges survivedFullGCs censored probability)`, `stack` an Array
/// of frames (see `frame`), the site first.
fn records(vm: &mut Vm, args: Args) -> PrimResult {
    let from = args.int(vm, 1)?.max(1) as usize - 1;
    let count = args.int(vm, 2)?.max(0) as usize;
    let rows: Vec<(crate::obs::lifetimes::AllocationRecord, Vec<(u32, u32)>)> = vm
        .obs
        .last_lifetimes
        .as_ref()
        .map(|l| {
            l.records
                .iter()
                .skip(from)
                .take(count)
                .map(|r| (r.clone(), l.stack_of(r).to_vec()))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::with_capacity(rows.len());
    for (r, stack) in rows {
        let mut frames = Vec::with_capacity(stack.len());
        for &f in &stack {
            frames.push(frame(vm, f)?);
        }
        let stack = vm.new_array(&frames)?;
        let class = vm.image.class_object(r.class);
        let prob = vm.new_double(r.probability)?;
        let vals = [
            class,
            int(r.bytes),
            stack,
            int(r.birth_bytes),
            int(r.death_bytes),
            int(r.birth_us),
            int(r.death_us),
            int(r.survived_scavenges as u64),
            int(r.survived_full_gcs as u64),
            Value::bool(r.censored),
            prob,
        ];
        out.push(vm.new_array(&vals)?);
    }
    Ok(Answer(vm.new_array(&out)?))
}

/// `lifetimeTotals`: `#(records durationUs allocatedBytes allocatedObjects
/// scavenges fullGCs gcUs seed lateSites)` of the last recording (`seed` 0
/// unless a rate below 1 sampled each object with that probability).
fn totals(vm: &mut Vm, _args: Args) -> PrimResult {
    let Some(r) = vm.obs.last_lifetimes.as_ref() else {
        return Ok(Answer(Value::NIL));
    };
    let seed = match r.policy {
        Some(lupa_heap::SamplingPolicy::PerObject { seed, .. }) => seed,
        _ => 0,
    };
    let vals = [
        int(r.records.len() as u64),
        int(r.duration_us),
        int(r.allocated_bytes),
        int(r.allocated_objects),
        int(r.scavenges),
        int(r.full_gcs),
        int(r.gc_us),
        int(seed),
        int(r.late_sites),
    ];
    Ok(Answer(vm.new_array(&vals)?))
}

/// `Context allocationStackFrom: frame depth: n for: anObject`: the
/// allocation stack of `anObject` seen from `frame` (Illimani's faithful
/// mode, from its allocator hook), as VM mode records it: allocator wrappers
/// skipped, then up to `n` frames, each `#(method pc line name)`, the site
/// first.
fn allocation_stack_from(vm: &mut Vm, args: Args) -> PrimResult {
    let f = super::context::frame(vm, args, 1)?;
    let depth = args.int(vm, 2)?.clamp(1, 256) as usize;
    let class = vm.class_of(args.get(vm, 3));
    let stack = stack_from(&vm.image, &vm.sched.running, f, None, depth, class);
    let mut frames = Vec::with_capacity(stack.len());
    for s in stack {
        frames.push(frame(vm, s)?);
    }
    Ok(Answer(vm.new_array(&frames)?))
}

/// `System sizeInBytesOf: anObject`: its size in the heap, header included
/// (0 for an immediate value).
fn size_in_bytes(vm: &mut Vm, args: Args) -> PrimResult {
    let o = args.get(vm, 1);
    let bytes = if o.is_ptr() {
        vm.heap.total_bytes(o)
    } else {
        0
    };
    Ok(Answer(int(bytes)))
}

/// `System lastCollectionWasFull`: was the last collection a full GC (false
/// before the first)?
fn last_collection_was_full(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::bool(
        vm.heap.last_collection() == Some(lupa_heap::CollectionKind::Full),
    )))
}

/// `System observerAllocations: aBoolean`: from now on, are the allocations
/// a process makes at the meta level an observer's (a profiler's own objects:
/// Illimani's faithful mode)? They then go to old space, off the allocation
/// clock (`totalAllocatedBytes`, `gcStatAt: #allocatedObjects`) and the GC
/// ratio (`Heap::set_observer_allocations`), so that the observer neither
/// brings a collection forward nor moves the clock it reads. Answers the
/// previous setting.
fn observer_allocations(vm: &mut Vm, args: Args) -> PrimResult {
    let v = args.get(vm, 1);
    let on = if v == Value::TRUE {
        true
    } else if v == Value::FALSE {
        false
    } else {
        return Err(super::PrimFailure::Error(
            "observerAllocations: takes true or false".into(),
        ));
    };
    let was = vm.obs.observer_allocations;
    vm.obs.observer_allocations = on;
    if was != on {
        vm.heap.reset_observer_words();
    }
    vm.level_changed();
    Ok(Answer(Value::bool(was)))
}

/// `recordLifetimes: rows totals: totals`: a lifetime recording made in
/// Smalltalk (Illimani's faithful mode) becomes the VM's last recording, for
/// the profiler layer (`lupa lifetimes --mode faithful`). `rows` as
/// `lifetimeRecordFrom:count:` answers them (a frame's id is its 5th
/// element); `totals` as `lifetimeTotals` answers them, followed by the rate
/// and every-n-th.
fn record_lifetimes(vm: &mut Vm, args: Args) -> PrimResult {
    use crate::obs::lifetimes::{AllocationRecord, LifetimeRecording};
    let bad = || {
        super::PrimFailure::error(
            "recordLifetimes:totals: expects rows and totals as lifetimeRecordFrom:count: and lifetimeTotals answer them",
        )
    };
    let u = |vm: &Vm, v: Value| -> Result<u64, super::PrimFailure> {
        vm.number_as_f64(v)
            .map(|f| f.max(0.0) as u64)
            .ok_or_else(bad)
    };
    let elems = |vm: &Vm, v: Value| -> Result<Vec<Value>, super::PrimFailure> {
        if v.is_ptr() && vm.class_of(v) == crate::objects::cls::ARRAY {
            Ok((0..vm.heap.size(v)).map(|i| vm.heap.slot(v, i)).collect())
        } else {
            Err(bad())
        }
    };
    let rows = elems(vm, args.get(vm, 1))?;
    let totals = elems(vm, args.get(vm, 2))?;
    if totals.len() < 11 {
        return Err(bad());
    }
    let mut records = Vec::with_capacity(rows.len());
    let mut stacks = crate::obs::lifetimes::StackTable::default();
    for row in rows {
        let f = elems(vm, row)?;
        if f.len() < 11 {
            return Err(bad());
        }
        let mut stack = Vec::new();
        for fr in elems(vm, f[2])? {
            let fr = elems(vm, fr)?;
            if fr.len() < 5 {
                return Err(bad());
            }
            stack.push((u(vm, fr[4])? as u32, u(vm, fr[1])? as u32));
        }
        records.push(AllocationRecord {
            class: vm.class_index_of_object(f[0]).unwrap_or(0),
            bytes: u(vm, f[1])?,
            stack: stacks.intern(&stack),
            birth_bytes: u(vm, f[3])?,
            death_bytes: u(vm, f[4])?,
            birth_us: u(vm, f[5])?,
            death_us: u(vm, f[6])?,
            survived_scavenges: u(vm, f[7])? as u32,
            survived_full_gcs: u(vm, f[8])? as u32,
            censored: f[9] == Value::TRUE,
            probability: vm.number_as_f64(f[10]).ok_or_else(bad)?,
        });
    }
    let t: Vec<u64> = totals[..9]
        .iter()
        .map(|&v| u(vm, v))
        .collect::<Result<_, _>>()?;
    let rate = vm.number_as_f64(totals[9]).ok_or_else(bad)?;
    let every = u(vm, totals[10])?;
    // Faithful mode samples by the rule of `policy_for`.
    let policy = policy_for(rate, every, t[7]);
    let start_bytes = records.first().map_or(0, |r| r.birth_bytes);
    vm.obs.last_lifetimes = Some(LifetimeRecording {
        records,
        policy: Some(policy),
        duration_us: t[1],
        allocated_bytes: t[2],
        allocated_objects: t[3],
        scavenges: t[4],
        full_gcs: t[5],
        gc_us: t[6],
        start_bytes,
        collections: Vec::new(),
        stacks: stacks.stacks,
        late_sites: t[8],
        // The faithful profiler's own final GC is known to its caller.
        final_gc: false,
        stopped_at_limit: false,
    });
    Ok(Answer(args.get(vm, 0)))
}

/// `allocatingMethods`: the methods bound to an allocator
/// ([`Primitive::allocating`]), what Illimani's faithful mode instruments. The
/// classes the allocators are bound to are loaded first (a program may load
/// `File` only after the profiler started); one that cannot be loaded (absent
/// from the class path and the library, or not compiling) is left out, and so
/// is a method of an allocator's selector that is not bound to it (a core-lib
/// that writes it in Smalltalk).
fn allocating_methods(vm: &mut Vm, _args: Args) -> PrimResult {
    let bindings: Vec<_> = super::allocating_bindings().collect();
    // Load first (loading allocates), then read the methods without allocating.
    let mut sites = Vec::with_capacity(bindings.len());
    for (class, selector, id) in bindings {
        let (name, meta) = match class.strip_suffix(" class") {
            Some(name) => (name, true),
            None => (class, false),
        };
        let Ok(c) = vm.load_class_by_name(name) else {
            continue;
        };
        let c = if meta {
            vm.image.classes[c as usize].partner
        } else {
            c
        };
        sites.push((c, selector, id));
    }
    let mut methods = Vec::with_capacity(sites.len());
    for (c, selector, id) in sites {
        let Some(sel) = vm.image.symbols.lookup(selector) else {
            continue;
        };
        let Some(m) = vm.image.classes[c as usize].methods.get(&sel).copied() else {
            continue;
        };
        let bound = vm
            .image
            .method_code_of(&vm.heap, m)
            .is_some_and(|code| code.primitive.get() == Some(id));
        if bound && !methods.contains(&m) {
            methods.push(m);
        }
    }
    Ok(Answer(vm.new_array(&methods)?))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(
        &["Context class"],
        "allocationStackFrom:depth:for:",
        allocation_stack_from,
    ),
    Primitive::new(
        &["System"],
        "startLifetimes:everyNth:seed:stackDepth:only:ignore:",
        start,
    ),
    Primitive::new(&["System"], "lifetimesFinalGC", final_gc),
    Primitive::new(&["System"], "stopLifetimes", stop),
    Primitive::new(&["System"], "lifetimeRecordFrom:count:", records),
    Primitive::new(&["System"], "lifetimeTotals", totals),
    Primitive::new(&["System"], "sizeInBytesOf:", size_in_bytes),
    Primitive::new(
        &["System"],
        "lastCollectionWasFull",
        last_collection_was_full,
    ),
    Primitive::new(&["System"], "recordLifetimes:totals:", record_lifetimes),
    Primitive::new(&["System"], "observerAllocations:", observer_allocations),
    Primitive::new(&["System"], "allocatingMethods", allocating_methods),
];
