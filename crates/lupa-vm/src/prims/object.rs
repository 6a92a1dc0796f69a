//! Object primitives every object answers: class, identity and hash, size,
//! shallow copy, instance variables by index or name, `respondsTo:`, and the
//! `halt`/`inspect` debugging aids.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::cls;
use crate::vm::{Lookup, Vm};
use lupa_heap::{Format, Value};

fn class(vm: &mut Vm, argc: usize) -> Prim {
    let c = vm.class_of(arg(vm, argc, 0));
    Prim::Ok(vm.class_object(c))
}

fn identical(vm: &mut Vm, argc: usize) -> Prim {
    Prim::Ok(Value::bool(arg(vm, argc, 0) == arg(vm, argc, 1)))
}

fn hashcode(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let h = if a.is_ptr() {
        vm.heap.identity_hash(a) as i64
    } else if let Some(i) = a.as_int() {
        i
    } else {
        (a.raw() >> 3) as i64 + 17
    };
    Prim::Ok(Value::small(h))
}

fn object_size(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    Prim::Ok(Value::small(if a.is_ptr() {
        vm.heap.object_bytes(a) as i64
    } else {
        8
    }))
}

fn shallow_copy(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    if !a.is_ptr() {
        return Prim::Ok(a);
    }
    let c = vm.heap.class_index(a);
    let r = match vm.heap.format(a) {
        fmt @ (Format::Pointers | Format::Weak | Format::Ephemeron) => {
            let vals: Vec<Value> = (0..vm.heap.size(a)).map(|i| vm.heap.slot(a, i)).collect();
            let r = tryalloc!(match fmt {
                Format::Weak => vm.heap.alloc_weak(c, vals.len()),
                Format::Ephemeron => vm.heap.alloc_ephemeron(c, vals.len()),
                _ => vm.heap.alloc_pointers(c, vals.len()),
            });
            for (i, v) in vals.into_iter().enumerate() {
                vm.heap.set_slot(r, i, v);
            }
            r
        }
        Format::Bytes => {
            if c == cls::SYMBOL {
                return Prim::Ok(a);
            }
            let b = vm.heap.bytes(a).to_vec();
            tryalloc!(vm.heap.alloc_bytes(c, &b))
        }
        Format::Words => {
            let w = vm.heap.words(a).to_vec();
            tryalloc!(vm.heap.alloc_words(c, &w))
        }
    };
    Prim::Ok(r)
}

fn halt(vm: &mut Vm, _argc: usize) -> Prim {
    vm.flush();
    eprintln!("halt:\n{}", vm.backtrace(20));
    Prim::Ok(Value::NIL)
}

fn inspect(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let c = vm.class_of(a);
    let line = format!("{} {:?}\n", vm.class_name(c), a);
    vm.print(&line);
    Prim::Ok(a)
}

fn inst_var_at(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let Some(i) = arg(vm, argc, 1).as_int() else {
        return Prim::Fail;
    };
    let n = if a.is_ptr() && vm.heap.format(a).has_slots() {
        vm.heap.size(a)
    } else {
        0
    };
    if i < 1 || i as usize > n {
        return Prim::Error(format!(
            "instVarAt: {i} out of bounds (the object has {n} slots)"
        ));
    }
    Prim::Ok(vm.heap.slot(a, i as usize - 1))
}

fn inst_var_at_put(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let Some(i) = arg(vm, argc, 1).as_int() else {
        return Prim::Fail;
    };
    let v = arg(vm, argc, 2);
    let n = if a.is_ptr() && vm.heap.format(a).has_slots() {
        vm.heap.size(a)
    } else {
        0
    };
    if i < 1 || i as usize > n {
        return Prim::Error(format!(
            "instVarAt: {i} put: out of bounds (the object has {n} slots)"
        ));
    }
    vm.heap.set_slot(a, i as usize - 1, v);
    Prim::Ok(v)
}

fn field_index(vm: &mut Vm, argc: usize) -> Option<(Value, usize)> {
    let a = arg(vm, argc, 0);
    let name = vm.string_of(arg(vm, argc, 1))?;
    let c = vm.class_of(a);
    let idx = vm.classes[c as usize]
        .fields
        .iter()
        .position(|f| **f == *name)?;
    Some((a, idx))
}

fn inst_var_named(vm: &mut Vm, argc: usize) -> Prim {
    match field_index(vm, argc) {
        Some((a, i)) => Prim::Ok(vm.heap.slot(a, i)),
        None => Prim::Error("instVarNamed: no such instance variable".into()),
    }
}

fn inst_var_named_put(vm: &mut Vm, argc: usize) -> Prim {
    let v = arg(vm, argc, 2);
    match field_index(vm, argc) {
        Some((a, i)) => {
            vm.heap.set_slot(a, i, v);
            Prim::Ok(v)
        }
        None => Prim::Error("instVarNamed:put: no such instance variable".into()),
    }
}

fn responds_to(vm: &mut Vm, argc: usize) -> Prim {
    let c = vm.class_of(arg(vm, argc, 0));
    let Some(id) = vm.symbol_id(arg(vm, argc, 1)) else {
        return Prim::Ok(Value::FALSE);
    };
    if vm.symbols.is_hidden(id) {
        return Prim::Ok(Value::FALSE);
    }
    Prim::Ok(Value::bool(!matches!(vm.lookup(c, id), Lookup::NotFound)))
}

pub(crate) fn register(vm: &mut Vm) {
    let table: &[(&'static str, crate::objects::PrimFn)] = &[
        ("class", class),
        ("==", identical),
        ("hashcode", hashcode),
        ("identityHash", hashcode),
        ("objectSize", object_size),
        ("shallowCopy", shallow_copy),
        ("halt", halt),
        ("inspect", inspect),
        ("instVarAt:", inst_var_at),
        ("instVarAt:put:", inst_var_at_put),
        ("instVarNamed:", inst_var_named),
        ("instVarNamed:put:", inst_var_named_put),
        ("respondsTo:", responds_to),
    ];
    for (sel, f) in table {
        vm.register("Object", sel, *f);
    }
}
