//! System primitives: globals, loading, printing, time, GC, counters.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::cls;
use crate::vm::{Vm, VmError};
use lupa_heap::{GcParam, Value};

fn global(vm: &mut Vm, argc: usize) -> Prim {
    let Some(id) = vm.symbol_id(arg(vm, argc, 1)) else {
        return Prim::Ok(Value::NIL);
    };
    Prim::Ok(vm.globals.get(&id).copied().unwrap_or(Value::NIL))
}

fn global_put(vm: &mut Vm, argc: usize) -> Prim {
    let Some(id) = vm.symbol_id(arg(vm, argc, 1)) else {
        return Prim::Fail;
    };
    let v = arg(vm, argc, 2);
    vm.globals.insert(id, v);
    Prim::Ok(v)
}

fn has_global(vm: &mut Vm, argc: usize) -> Prim {
    let Some(id) = vm.symbol_id(arg(vm, argc, 1)) else {
        return Prim::Ok(Value::FALSE);
    };
    Prim::Ok(Value::bool(vm.globals.contains_key(&id)))
}

fn load(vm: &mut Vm, argc: usize) -> Prim {
    let Some(name) = vm.string_of(arg(vm, argc, 1)) else {
        return Prim::Fail;
    };
    match vm.load_class_by_name(&name) {
        Ok(c) => Prim::Ok(vm.class_object(c)),
        Err(VmError::ClassNotFound(_)) => Prim::Ok(Value::NIL),
        Err(e) => Prim::Abort(e),
    }
}

fn load_file(vm: &mut Vm, argc: usize) -> Prim {
    let Some(path) = vm.string_of(arg(vm, argc, 1)) else {
        return Prim::Fail;
    };
    match std::fs::read(&path) {
        Ok(bytes) => Prim::Ok(tryalloc!(
            vm.heap.alloc_bytes(crate::objects::cls::STRING, &bytes)
        )),
        Err(_) => Prim::Ok(Value::NIL),
    }
}

fn exit(vm: &mut Vm, argc: usize) -> Prim {
    let code = match arg(vm, argc, 1).as_int() {
        Some(c) if (i32::MIN as i64..=i32::MAX as i64).contains(&c) => c as i32,
        Some(c) => {
            vm.flush();
            eprintln!("lupa: system exit: {c} is not a valid exit code (it must fit in 32 bits)");
            1
        }
        None => {
            let c = vm.class_of(arg(vm, argc, 1));
            let what = if c == cls::INTEGER {
                "an Integer too large for an exit code".to_string()
            } else {
                format!("an instance of {}", vm.class_name(c))
            };
            vm.flush();
            eprintln!("lupa: system exit: expects a small Integer, got {what}");
            1
        }
    };
    vm.flush();
    vm.exit_code = Some(code);
    Prim::Abort(VmError::Exit(code))
}

fn print_string(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 1);
    let Some(s) = vm.string_of(a) else {
        return Prim::Fail;
    };
    vm.print(&s);
    Prim::Ok(arg(vm, argc, 0))
}

fn print_newline(vm: &mut Vm, argc: usize) -> Prim {
    vm.print("\n");
    Prim::Ok(arg(vm, argc, 0))
}

fn error_print(vm: &mut Vm, argc: usize) -> Prim {
    let s = vm.string_of(arg(vm, argc, 1)).unwrap_or_default();
    vm.flush();
    eprint!("{s}");
    Prim::Ok(arg(vm, argc, 0))
}

fn error_println(vm: &mut Vm, argc: usize) -> Prim {
    let s = if argc >= 1 {
        vm.string_of(arg(vm, argc, 1)).unwrap_or_default()
    } else {
        String::new()
    };
    vm.flush();
    eprintln!("{s}");
    Prim::Ok(arg(vm, argc, 0))
}

fn print_stack_trace(vm: &mut Vm, argc: usize) -> Prim {
    vm.flush();
    eprint!("{}", vm.backtrace(usize::MAX));
    Prim::Ok(arg(vm, argc, 0))
}

fn time(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.start_time.elapsed().as_millis() as i64))
}

fn ticks(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.start_time.elapsed().as_micros() as i64))
}

fn full_gc(vm: &mut Vm, argc: usize) -> Prim {
    // Collect at the next safepoint, which comes right after this primitive.
    vm.heap.request_full_gc();
    Prim::Ok(Value::bool(argc == 0))
}

fn scavenge(vm: &mut Vm, argc: usize) -> Prim {
    // A scavenge at the next safepoint (a full GC if the heap's policy calls for one).
    vm.heap.request_scavenge();
    Prim::Ok(Value::bool(argc == 0))
}

/// The GC parameter named by `v`: a Pharo `vm parameterAt:` index, or a name
/// (`#edenSize`, `#growthHeadroom`, `#shrinkThreshold`, `#gcRatio`,
/// `#tenuringThreshold`, `#maxHeap`, `#largeObjectSize`, or the option spelling
/// `'eden-size'`...).
fn gc_param(vm: &mut Vm, v: Value) -> Result<GcParam, String> {
    if let Some(i) = v.as_int() {
        return u32::try_from(i)
            .ok()
            .and_then(GcParam::from_pharo_index)
            .ok_or_else(|| format!("no settable GC parameter has the index {i}"));
    }
    let Some(name) = vm.string_of(v) else {
        return Err("a GC parameter is named by a Symbol or a Pharo index".into());
    };
    GcParam::ALL
        .into_iter()
        .find(|p| p.name() == name || camel(p.name()) == name)
        .ok_or_else(|| {
            let names: Vec<String> = GcParam::ALL.iter().map(|p| camel(p.name())).collect();
            format!("unknown GC parameter: {name} (known: {})", names.join(", "))
        })
}

/// `eden-size` -> `edenSize`.
fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut up = false;
    for ch in name.chars() {
        if ch == '-' {
            up = true;
        } else if up {
            out.push(ch.to_ascii_uppercase());
            up = false;
        } else {
            out.push(ch);
        }
    }
    out
}

fn param_value(vm: &mut Vm, p: GcParam, v: f64) -> Prim {
    match p {
        GcParam::FullGcRatio => Prim::Ok(tryalloc!(vm.new_double(v))),
        _ => Prim::Ok(Value::small(v as i64)),
    }
}

fn gc_parameter_at(vm: &mut Vm, argc: usize) -> Prim {
    match gc_param(vm, arg(vm, argc, 1)) {
        Ok(p) => {
            let v = vm.heap.parameter(p);
            param_value(vm, p, v)
        }
        Err(e) => Prim::Error(e),
    }
}

fn gc_parameter_at_put(vm: &mut Vm, argc: usize) -> Prim {
    let p = match gc_param(vm, arg(vm, argc, 1)) {
        Ok(p) => p,
        Err(e) => return Prim::Error(e),
    };
    let Some(x) = vm.number_as_f64(arg(vm, argc, 2)) else {
        return Prim::Error(format!("{}: the value must be a number", camel(p.name())));
    };
    match vm.heap.set_parameter(p, x) {
        Ok(old) => param_value(vm, p, old),
        Err(e) => Prim::Error(e.to_string()),
    }
}

/// Pharo's `Smalltalk vm parameterAt:` for the indices Lupa has: the settable
/// GC parameters (6, 24, 25, 45, 55) and read-only statistics.
fn vm_parameter_at(vm: &mut Vm, argc: usize) -> Prim {
    let Some(i) = arg(vm, argc, 1).as_int() else {
        return Prim::Error("vmParameterAt: expects an Integer index".into());
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
        _ => return Prim::Ok(Value::NIL),
    };
    Prim::Ok(Value::small(v as i64))
}

fn vm_parameter_at_put(vm: &mut Vm, argc: usize) -> Prim {
    // Only the settable indices resolve (gc_param answers the error for the others).
    if arg(vm, argc, 1).as_int().is_none() {
        return Prim::Error("vmParameterAt:put: expects an Integer index".into());
    }
    gc_parameter_at_put(vm, argc)
}

fn gc_stat_at(vm: &mut Vm, argc: usize) -> Prim {
    vm.heap.refresh_stats();
    let Some(name) = vm.string_of(arg(vm, argc, 1)) else {
        return Prim::Error("gcStatAt: expects a Symbol".into());
    };
    match vm
        .heap
        .stats()
        .named()
        .into_iter()
        .find(|(n, _)| *n == name)
    {
        Some((_, v)) => Prim::Ok(Value::small(v as i64)),
        None => Prim::Error(format!("unknown GC statistic: {name}")),
    }
}

fn gc_stat_names(vm: &mut Vm, _argc: usize) -> Prim {
    let names: Vec<&'static str> = vm.heap.stats().named().iter().map(|(n, _)| *n).collect();
    let mut vals = Vec::with_capacity(names.len());
    for n in names {
        vals.push(tryalloc!(vm.symbol(n)));
    }
    Prim::Ok(tryalloc!(vm.new_array(&vals)))
}

fn gc_stat_values(vm: &mut Vm, _argc: usize) -> Prim {
    vm.heap.refresh_stats();
    let vals: Vec<Value> = vm
        .heap
        .stats()
        .named()
        .iter()
        .map(|(_, v)| Value::small(*v as i64))
        .collect();
    Prim::Ok(tryalloc!(vm.new_array(&vals)))
}

fn finalization_semaphore(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(vm.finalization_semaphore)
}

fn set_finalization_semaphore(vm: &mut Vm, argc: usize) -> Prim {
    let s = arg(vm, argc, 1);
    if !s.is_nil() && super::process::sem_index(vm, s).is_none() {
        return Prim::Error("finalizationSemaphore: expects a Semaphore or nil".into());
    }
    vm.finalization_semaphore = s;
    if vm.heap.mourn_queue_len() > 0 && !s.is_nil() {
        vm.finalization_due = true;
    }
    Prim::Ok(arg(vm, argc, 0))
}

fn mourn_queue(vm: &mut Vm, _argc: usize) -> Prim {
    // Allocate first: the queue stays rooted by the heap until it is taken.
    let n = vm.heap.mourn_queue_len();
    let a = tryalloc!(vm.heap.alloc_pointers(cls::ARRAY, n));
    for (i, e) in vm.heap.take_mourn_queue().into_iter().enumerate() {
        vm.heap.set_slot(a, i, e);
    }
    Prim::Ok(a)
}

fn track(vm: &mut Vm, argc: usize) -> Prim {
    let o = arg(vm, argc, 1);
    if o.is_ptr() {
        vm.heap.set_tracked(o, true);
    }
    Prim::Ok(o)
}

fn untrack(vm: &mut Vm, argc: usize) -> Prim {
    let o = arg(vm, argc, 1);
    if o.is_ptr() {
        vm.heap.set_tracked(o, false);
    }
    Prim::Ok(o)
}

fn is_tracked(vm: &mut Vm, argc: usize) -> Prim {
    let o = arg(vm, argc, 1);
    Prim::Ok(Value::bool(o.is_ptr() && vm.heap.is_tracked(o)))
}

fn take_deaths(vm: &mut Vm, _argc: usize) -> Prim {
    let deaths = vm.heap.take_deaths();
    let mut rows = Vec::with_capacity(deaths.len());
    for d in &deaths {
        let class = vm
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
        rows.push(tryalloc!(vm.new_array(&vals)));
    }
    Prim::Ok(tryalloc!(vm.new_array(&rows)))
}

fn send_count(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.obs.sends as i64))
}

fn inlined_send_count(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.obs.inlined as i64))
}

fn reset_send_count(vm: &mut Vm, argc: usize) -> Prim {
    vm.obs.sends = 0;
    vm.obs.inlined = 0;
    Prim::Ok(arg(vm, argc, 0))
}

fn gc_count(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.heap.stats().collections as i64))
}

fn allocated_bytes(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.heap.stats().allocated_bytes as i64))
}

fn gc_stats(vm: &mut Vm, _argc: usize) -> Prim {
    let st = vm.heap.stats().clone();
    let vals = [
        Value::small(st.collections as i64),
        Value::small(st.gc_time.as_millis() as i64),
        Value::small(st.allocated_bytes as i64),
    ];
    Prim::Ok(tryalloc!(vm.new_array(&vals)))
}

fn arguments(vm: &mut Vm, _argc: usize) -> Prim {
    let args = vm.program_args.clone();
    let mut vals = Vec::with_capacity(args.len());
    for a in &args {
        vals.push(tryalloc!(vm.new_string(a)));
    }
    Prim::Ok(tryalloc!(vm.new_array(&vals)))
}

fn class_path(vm: &mut Vm, _argc: usize) -> Prim {
    let cp: Vec<String> = vm
        .options
        .class_path
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut vals = Vec::with_capacity(cp.len());
    for a in &cp {
        vals.push(tryalloc!(vm.new_string(a)));
    }
    Prim::Ok(tryalloc!(vm.new_array(&vals)))
}

pub(crate) fn register(vm: &mut Vm) {
    let table: &[(&'static str, crate::objects::PrimFn)] = &[
        ("global:", global),
        ("global:put:", global_put),
        ("hasGlobal:", has_global),
        ("load:", load),
        ("loadFile:", load_file),
        ("exit:", exit),
        ("printString:", print_string),
        ("printNewline", print_newline),
        ("errorPrint:", error_print),
        ("errorPrintln:", error_println),
        ("errorPrintln", error_println),
        ("printStackTrace", print_stack_trace),
        ("time", time),
        ("ticks", ticks),
        ("fullGC", full_gc),
        ("scavenge", scavenge),
        ("gcParameterAt:", gc_parameter_at),
        ("gcParameterAt:put:", gc_parameter_at_put),
        ("vmParameterAt:", vm_parameter_at),
        ("vmParameterAt:put:", vm_parameter_at_put),
        ("gcStatAt:", gc_stat_at),
        ("gcStatNames", gc_stat_names),
        ("gcStatValues", gc_stat_values),
        ("finalizationSemaphore", finalization_semaphore),
        ("finalizationSemaphore:", set_finalization_semaphore),
        ("mournQueue", mourn_queue),
        ("track:", track),
        ("untrack:", untrack),
        ("isTracked:", is_tracked),
        ("takeDeaths", take_deaths),
        ("sendCount", send_count),
        ("inlinedSendCount", inlined_send_count),
        ("resetSendCount", reset_send_count),
        ("gcCount", gc_count),
        ("totalAllocatedBytes", allocated_bytes),
        ("gcStats", gc_stats),
        ("arguments", arguments),
        ("classPath", class_path),
    ];
    for (sel, f) in table {
        vm.register("System", sel, *f);
    }
}
