//! The collector seen from Smalltalk (`System` primitives): requesting a
//! scavenge or a full GC, the GC parameters (by name or by Pharo's
//! `vm parameterAt:` index), the collector's statistics, finalization (the
//! finalization semaphore and the queue of ephemerons whose keys died) and
//! object-lifetime tracking (`track:`, `takeDeaths`).
//!
//! `fullGC` and `scavenge` only request a collection: it runs at the next
//! safepoint, right after the primitive.

use super::Primitive;
use super::outcome::PrimFailure;
use super::outcome::Reply::Answer;
use super::{Args, PrimResult};
use crate::objects::cls;
use crate::vm::Vm;
use lupa_heap::{GcParam, Value};

fn full_gc(vm: &mut Vm, args: Args) -> PrimResult {
    // Collect at the next safepoint, which comes right after this primitive.
    vm.heap.request_full_gc();
    Ok(Answer(Value::bool(args.count() == 0)))
}

fn scavenge(vm: &mut Vm, args: Args) -> PrimResult {
    // A scavenge at the next safepoint (a full GC if the heap's policy calls for one).
    vm.heap.request_scavenge();
    Ok(Answer(Value::bool(args.count() == 0)))
}

/// The GC parameter named by `v`: a Pharo `vm parameterAt:` index, or a name
/// (`#edenSize`, `#growthHeadroom`, `#shrinkThreshold`, `#gcRatio`,
/// `#tenuringThreshold`, `#maxHeap`, `#largeObjectSize`, or the option spelling
/// `'eden-size'`...).
fn gc_param(vm: &mut Vm, v: Value) -> Result<GcParam, PrimFailure> {
    if let Some(i) = v.as_int() {
        return u32::try_from(i)
            .ok()
            .and_then(GcParam::from_pharo_index)
            .ok_or_else(|| {
                PrimFailure::Error(format!("no settable GC parameter has the index {i}"))
            });
    }
    let Some(name) = vm.string_of(v) else {
        return Err(PrimFailure::error(
            "a GC parameter is named by a Symbol or a Pharo index",
        ));
    };
    GcParam::from_symbol(&name).ok_or_else(|| {
        let names: Vec<&str> = GcParam::ALL.iter().map(|p| p.symbol()).collect();
        PrimFailure::Error(format!(
            "unknown GC parameter: {name} (known: {})",
            names.join(", ")
        ))
    })
}

/// The Smalltalk value of GC parameter `p` (a Double for the ratio, else an Integer).
fn param_value(vm: &mut Vm, p: GcParam, v: f64) -> PrimResult {
    Ok(Answer(match p {
        GcParam::GcRatio => vm.new_double(v)?,
        _ => Value::small(v as i64),
    }))
}

fn gc_parameter_at(vm: &mut Vm, args: Args) -> PrimResult {
    let p = gc_param(vm, args.get(vm, 1))?;
    let v = vm.heap.parameter(p);
    param_value(vm, p, v)
}

fn gc_parameter_at_put(vm: &mut Vm, args: Args) -> PrimResult {
    let p = gc_param(vm, args.get(vm, 1))?;
    let Ok(x) = args.number(vm, 2) else {
        return Err(PrimFailure::Error(format!(
            "{}: the value must be a number",
            p.symbol()
        )));
    };
    match vm.heap.set_parameter(p, x) {
        Ok(old) => param_value(vm, p, old),
        Err(e) => Err(PrimFailure::Error(e.to_string())),
    }
}

/// Pharo's `Smalltalk vm parameterAt:` for the indices Lupa has: the settable
/// GC parameters (6, 24, 25, 45, 55) and read-only statistics.
fn vm_parameter_at(vm: &mut Vm, args: Args) -> PrimResult {
    let Ok(i) = args.int(vm, 1) else {
        return Err(PrimFailure::error(
            "vmParameterAt: expects an Integer index",
        ));
    };
    if let Some(p) = u32::try_from(i).ok().and_then(GcParam::from_pharo_index) {
        let v = vm.heap.parameter(p);
        return param_value(vm, p, v);
    }
    vm.heap.refresh_stats();
    let st = vm.heap.stats();
    let ms = |d: std::time::Duration| d.as_millis() as u64;
    let v = match i {
        1 => st.old_used_bytes + st.old_free_bytes,
        2 => st.eden_bytes + 2 * st.survivor_bytes,
        3 => st.heap_bytes,
        7 => st.full_gcs,
        8 => ms(st.full_gc_time),
        9 => st.scavenges,
        10 => ms(st.scavenge_time),
        11 => st.tenured_objects,
        34 => st.allocated_bytes,
        44 => st.eden_bytes,
        _ => return Ok(Answer(Value::NIL)),
    };
    Ok(Answer(Value::small(v as i64)))
}

fn vm_parameter_at_put(vm: &mut Vm, args: Args) -> PrimResult {
    // Only the settable indices resolve (gc_param answers the error for the others).
    if args.int(vm, 1).is_err() {
        return Err(PrimFailure::error(
            "vmParameterAt:put: expects an Integer index",
        ));
    }
    gc_parameter_at_put(vm, args)
}

fn gc_stat_at(vm: &mut Vm, args: Args) -> PrimResult {
    vm.heap.refresh_stats();
    let Ok(name) = args.string(vm, 1) else {
        return Err(PrimFailure::error("gcStatAt: expects a Symbol"));
    };
    match vm
        .heap
        .stats()
        .named()
        .into_iter()
        .find(|(n, _)| *n == name)
    {
        Some((_, v)) => Ok(Answer(Value::small(v as i64))),
        None => Err(PrimFailure::Error(format!("unknown GC statistic: {name}"))),
    }
}

fn gc_stat_names(vm: &mut Vm, _args: Args) -> PrimResult {
    let names: Vec<&'static str> = vm.heap.stats().named().iter().map(|(n, _)| *n).collect();
    let mut vals = Vec::with_capacity(names.len());
    for n in names {
        vals.push(vm.image.symbol(&mut vm.heap, n)?);
    }
    Ok(Answer(vm.new_array(&vals)?))
}

fn gc_stat_values(vm: &mut Vm, _args: Args) -> PrimResult {
    vm.heap.refresh_stats();
    let vals: Vec<Value> = vm
        .heap
        .stats()
        .named()
        .iter()
        .map(|(_, v)| Value::small(*v as i64))
        .collect();
    Ok(Answer(vm.new_array(&vals)?))
}

fn finalization_semaphore(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(vm.sched.finalization_semaphore))
}

fn set_finalization_semaphore(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.get(vm, 1);
    if !s.is_nil() && args.semaphore(vm, 1).is_err() {
        return Err(PrimFailure::error(
            "finalizationSemaphore: expects a Semaphore or nil",
        ));
    }
    vm.sched.finalization_semaphore = s;
    if vm.heap.mourn_queue_len() > 0 && !s.is_nil() {
        vm.sched.finalization_due = true;
    }
    Ok(Answer(args.receiver(vm)))
}

fn mourn_queue(vm: &mut Vm, _args: Args) -> PrimResult {
    // Allocate first: the queue stays rooted by the heap until it is taken.
    let n = vm.heap.mourn_queue_len();
    let a = vm.allocating(n, |h| h.alloc_pointers(cls::ARRAY, n))?;
    for (i, e) in vm.heap.take_mourn_queue().into_iter().enumerate() {
        vm.heap.set_slot(a, i, e);
    }
    Ok(Answer(a))
}

/// `System mournQueueCollections`: for each ephemeron the last `mournQueue`
/// answered, the scavenges and full GCs done before the collection that found
/// its key dead, flat (`s1 f1 s2 f2 ...`): a profiler's ephemeron learns which
/// collection found its object dead even when another ran before it was
/// mourned.
fn mourn_queue_collections(vm: &mut Vm, _args: Args) -> PrimResult {
    let vals: Vec<Value> = vm
        .heap
        .mourn_queue_collections()
        .iter()
        .flat_map(|c| c.map(|n| Value::small(n as i64)))
        .collect();
    Ok(Answer(vm.new_array(&vals)?))
}

/// Bytes a tracked object costs the VM: its entry in the tracked table, then
/// its death record until `takeDeaths` (an upper estimate of both).
const TRACKED_COST: usize = 128;

fn track(vm: &mut Vm, args: Args) -> PrimResult {
    let o = args.get(vm, 1);
    if o.is_ptr() && !vm.heap.is_tracked(o) {
        let entries = vm.heap.tracked_count() + vm.heap.deaths_len() + 1;
        vm.check_side_table(
            "the table of tracked objects and their deaths",
            entries.saturating_mul(TRACKED_COST),
            "; take the deaths with takeDeaths",
        )?;
        vm.heap.set_tracked(o, true);
    }
    Ok(Answer(o))
}

fn untrack(vm: &mut Vm, args: Args) -> PrimResult {
    let o = args.get(vm, 1);
    if o.is_ptr() {
        vm.heap.set_tracked(o, false);
    }
    Ok(Answer(o))
}

fn is_tracked(vm: &mut Vm, args: Args) -> PrimResult {
    let o = args.get(vm, 1);
    Ok(Answer(Value::bool(o.is_ptr() && vm.heap.is_tracked(o))))
}

fn take_deaths(vm: &mut Vm, _args: Args) -> PrimResult {
    let deaths = vm.heap.take_deaths();
    let mut rows = Vec::with_capacity(deaths.len());
    for d in &deaths {
        let class = vm
            .image
            .classes
            .get(d.class as usize)
            .map(|c| c.object)
            .unwrap_or(Value::NIL);
        let vals = [
            class,
            Value::small(d.bytes as i64),
            Value::small(d.hash as i64),
            Value::small(d.scavenges_survived as i64),
            Value::small(d.full_gcs_survived as i64),
            Value::small(d.allocated_at as i64),
            Value::small(d.died_at as i64),
            Value::small(d.died_at_gc as i64),
            Value::bool(d.died_in_full_gc),
        ];
        rows.push(vm.new_array(&vals)?);
    }
    Ok(Answer(vm.new_array(&rows)?))
}

fn gc_count(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(vm.heap.stats().collections as i64)))
}

fn allocated_bytes(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(vm.heap.stats().allocated_bytes as i64)))
}

fn gc_stats(vm: &mut Vm, _args: Args) -> PrimResult {
    let st = vm.heap.stats().clone();
    let vals = [
        Value::small(st.collections as i64),
        Value::small(st.gc_time.as_millis() as i64),
        Value::small(st.allocated_bytes as i64),
    ];
    Ok(Answer(vm.new_array(&vals)?))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["System"], "fullGC", full_gc),
    Primitive::new(&["System"], "scavenge", scavenge),
    Primitive::new(&["System"], "gcParameterAt:", gc_parameter_at),
    Primitive::new(&["System"], "gcParameterAt:put:", gc_parameter_at_put),
    Primitive::new(&["System"], "vmParameterAt:", vm_parameter_at),
    Primitive::new(&["System"], "vmParameterAt:put:", vm_parameter_at_put),
    Primitive::new(&["System"], "gcStatAt:", gc_stat_at),
    Primitive::new(&["System"], "gcStatNames", gc_stat_names).allocating(),
    Primitive::new(&["System"], "gcStatValues", gc_stat_values).allocating(),
    Primitive::new(&["System"], "finalizationSemaphore", finalization_semaphore),
    Primitive::new(
        &["System"],
        "finalizationSemaphore:",
        set_finalization_semaphore,
    ),
    Primitive::new(&["System"], "mournQueue", mourn_queue),
    Primitive::new(
        &["System"],
        "mournQueueCollections",
        mourn_queue_collections,
    ),
    Primitive::new(&["System"], "track:", track),
    Primitive::new(&["System"], "untrack:", untrack),
    Primitive::new(&["System"], "isTracked:", is_tracked),
    Primitive::new(&["System"], "takeDeaths", take_deaths),
    Primitive::new(&["System"], "gcCount", gc_count),
    Primitive::new(&["System"], "totalAllocatedBytes", allocated_bytes),
    Primitive::new(&["System"], "gcStats", gc_stats).allocating(),
];
