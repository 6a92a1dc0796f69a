//! Array and WeakArray primitives.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::{Shape, cls};
use crate::vm::Vm;
use lupa_heap::Value;

/// Named-field count and indexable size of an indexable pointer object.
fn indexable(vm: &Vm, a: Value) -> Option<(usize, usize)> {
    if !a.is_ptr() {
        return None;
    }
    let c = vm.heap.class_index(a);
    let info = &vm.classes[c as usize];
    if !matches!(info.shape, Shape::Indexable | Shape::Weak) {
        return None;
    }
    let named = info.fields.len();
    Some((named, vm.heap.size(a).saturating_sub(named)))
}

fn at(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let Some((named, size)) = indexable(vm, a) else {
        return Prim::Fail;
    };
    let Some(i) = arg(vm, argc, 1).as_int() else {
        return Prim::Fail;
    };
    if i < 1 || i as usize > size {
        return Prim::Error(format!(
            "index {i} out of bounds: the array has {size} elements"
        ));
    }
    Prim::Ok(vm.heap.slot(a, named + i as usize - 1))
}

fn at_put(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let Some((named, size)) = indexable(vm, a) else {
        return Prim::Fail;
    };
    let Some(i) = arg(vm, argc, 1).as_int() else {
        return Prim::Fail;
    };
    let v = arg(vm, argc, 2);
    if i < 1 || i as usize > size {
        return Prim::Error(format!(
            "index {i} out of bounds: the array has {size} elements"
        ));
    }
    vm.heap.set_slot(a, named + i as usize - 1, v);
    Prim::Ok(v)
}

fn length(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    match indexable(vm, a) {
        Some((_, size)) => Prim::Ok(Value::small(size as i64)),
        None => Prim::Fail,
    }
}

fn new_sized(vm: &mut Vm, argc: usize) -> Prim {
    let cobj = arg(vm, argc, 0);
    let Some(c) = vm.class_index_of_object(cobj) else {
        return Prim::Fail;
    };
    let Some(n) = arg(vm, argc, 1).as_int() else {
        return Prim::Fail;
    };
    if n < 0 {
        return Prim::Error(format!("cannot create an array with a negative size ({n})"));
    }
    Prim::Ok(tryalloc!(vm.instantiate(c, n as usize)))
}

/// `Class>>new:` for any indexable class (Array subclasses, byte and word classes).
fn class_new_sized(vm: &mut Vm, argc: usize) -> Prim {
    let cobj = arg(vm, argc, 0);
    let Some(c) = vm.class_index_of_object(cobj) else {
        return Prim::Fail;
    };
    if matches!(
        vm.classes[c as usize].shape,
        Shape::Fixed | Shape::Ephemeron
    ) || matches!(c, cls::SYMBOL | cls::INTEGER | cls::DOUBLE)
    {
        return Prim::Error(format!(
            "{} is not indexable: use new instead of new:",
            vm.class_name(c)
        ));
    }
    new_sized(vm, argc)
}

fn new_with_all(vm: &mut Vm, argc: usize) -> Prim {
    let cobj = arg(vm, argc, 0);
    let Some(c) = vm.class_index_of_object(cobj) else {
        return Prim::Fail;
    };
    let Some(n) = arg(vm, argc, 1).as_int().filter(|n| *n >= 0) else {
        return Prim::Fail;
    };
    let v = arg(vm, argc, 2);
    let a = tryalloc!(vm.instantiate(c, n as usize));
    let named = vm.classes[c as usize].fields.len();
    for i in 0..n as usize {
        vm.heap.set_slot(a, named + i, v);
    }
    Prim::Ok(a)
}

fn copy_from_to(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let Some((named, size)) = indexable(vm, a) else {
        return Prim::Fail;
    };
    let (Some(from), Some(to)) = (arg(vm, argc, 1).as_int(), arg(vm, argc, 2).as_int()) else {
        return Prim::Fail;
    };
    if to < from {
        return Prim::Ok(tryalloc!(vm.new_array(&[])));
    }
    if from < 1 || to as usize > size {
        return Prim::Error(format!(
            "copyFrom: {from} to: {to} out of bounds for an array of {size} elements"
        ));
    }
    let vals: Vec<Value> = (from..=to)
        .map(|i| vm.heap.slot(a, named + i as usize - 1))
        .collect();
    let c = vm.heap.class_index(a);
    let r = tryalloc!(vm.instantiate(
        if c == cls::WEAK_ARRAY { cls::ARRAY } else { c },
        vals.len()
    ));
    let rnamed = vm.classes[vm.heap.class_index(r) as usize].fields.len();
    for (k, v) in vals.into_iter().enumerate() {
        vm.heap.set_slot(r, rnamed + k, v);
    }
    Prim::Ok(r)
}

pub(crate) fn register(vm: &mut Vm) {
    for class in ["Array", "WeakArray"] {
        vm.register(class, "at:", at);
        vm.register(class, "at:put:", at_put);
        vm.register(class, "length", length);
        vm.register(class, "size", length);
        vm.register(class, "copyFrom:to:", copy_from_to);
    }
    vm.register("Array class", "new:", new_sized);
    vm.register("Class", "new:", class_new_sized);
    vm.register("WeakArray class", "new:", new_sized);
    vm.register("Array class", "new:withAll:", new_with_all);
}
