//! System primitives: globals, loading, printing, time, GC, counters.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::cls;
use crate::vm::{Vm, VmError};
use lupa_heap::Value;

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
    vm.heap.request_gc();
    Prim::Ok(Value::bool(argc == 0))
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
        ("scavenge", full_gc),
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
