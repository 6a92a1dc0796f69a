//! Object primitives every object answers: class, identity and hash, size,
//! shallow copy, instance variables by index or name, `respondsTo:`, and the
//! `halt`/`inspect` debugging aids.

use super::Primitive;
use super::outcome::PrimFailure;
use super::outcome::Reply::Answer;
use super::{Args, PrimResult};
use crate::objects::cls;
use crate::vm::{Lookup, Vm};
use lupa_heap::{Format, Value};

fn class(vm: &mut Vm, args: Args) -> PrimResult {
    let c = vm.class_of(args.receiver(vm));
    Ok(Answer(vm.image.class_object(c)))
}

fn identical(vm: &mut Vm, args: Args) -> PrimResult {
    Ok(Answer(Value::bool(args.receiver(vm) == args.get(vm, 1))))
}

fn hashcode(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    let h = if a.is_ptr() {
        vm.heap.identity_hash(a) as i64
    } else if let Some(i) = a.as_int() {
        i
    } else {
        (a.raw() >> 3) as i64 + 17
    };
    Ok(Answer(Value::small(h)))
}

fn object_size(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    Ok(Answer(Value::small(if a.is_ptr() {
        vm.heap.object_bytes(a) as i64
    } else {
        8
    })))
}

fn shallow_copy(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    if !a.is_ptr() {
        return Ok(Answer(a));
    }
    let c = vm.heap.class_index(a);
    let r = match vm.heap.format(a) {
        fmt @ (Format::Pointers | Format::Weak | Format::Ephemeron) => {
            let vals: Vec<Value> = (0..vm.heap.size(a)).map(|i| vm.heap.slot(a, i)).collect();
            let n = vals.len();
            let r = vm.allocating(n, |h| match fmt {
                Format::Weak => h.alloc_weak(c, n),
                Format::Ephemeron => h.alloc_ephemeron(c, n),
                _ => h.alloc_pointers(c, n),
            })?;
            for (i, v) in vals.into_iter().enumerate() {
                vm.heap.set_slot(r, i, v);
            }
            r
        }
        Format::Bytes => {
            if c == cls::SYMBOL {
                return Ok(Answer(a));
            }
            let b = vm.heap.bytes(a).to_vec();
            vm.new_bytes(c, &b)?
        }
        Format::Words => {
            let w = vm.heap.words(a).to_vec();
            vm.new_words(c, &w)?
        }
    };
    Ok(Answer(r))
}

fn halt(vm: &mut Vm, _args: Args) -> PrimResult {
    let trace = vm.backtrace(20);
    vm.io.print_err(&format!("halt:\n{trace}\n"));
    Ok(Answer(Value::NIL))
}

fn inspect(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    let c = vm.class_of(a);
    let line = format!("{} {:?}\n", vm.image.class_name(c), a);
    vm.io.print(&line).map_err(PrimFailure::Abort)?;
    Ok(Answer(a))
}

/// Number of named and indexed slots of `a` (0 for an object without slots).
fn slot_count(vm: &Vm, a: Value) -> usize {
    if a.is_ptr() { vm.heap.slot_count(a) } else { 0 }
}

fn inst_var_at(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    let i = args.int(vm, 1)?;
    let n = slot_count(vm, a);
    if i < 1 || i as usize > n {
        return Err(PrimFailure::Error(format!(
            "Index {i} not valid for array of length {n}."
        )));
    }
    Ok(Answer(vm.heap.slot(a, i as usize - 1)))
}

/// Refuse a reflective write into an object whose slots the VM reads as its
/// own data (a block closure or an environment: [`cls::holds_vm_slots`]):
/// a forged code id, outer environment or parent would make the interpreter
/// read and write outside objects.
fn refuse_vm_slots(vm: &Vm, a: Value, selector: &str) -> Result<(), PrimFailure> {
    if !a.is_ptr() || !cls::holds_vm_slots(vm.heap.class_index(a)) {
        return Ok(());
    }
    let name = vm.image.class_name(vm.heap.class_index(a));
    Err(PrimFailure::Error(format!(
        "{selector} cannot write into a {name}: its slots belong to the VM (a block's code, receiver and outer environment; an environment's parent and variables)"
    )))
}

fn inst_var_at_put(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    refuse_vm_slots(vm, a, "instVarAt:put:")?;
    let i = args.int(vm, 1)?;
    let v = args.get(vm, 2);
    let n = slot_count(vm, a);
    if i < 1 || i as usize > n {
        return Err(PrimFailure::Error(format!(
            "Index {i} not valid for array of length {n}."
        )));
    }
    vm.heap.set_slot(a, i as usize - 1, v);
    Ok(Answer(a))
}

/// The receiver and the slot index of the instance variable named by `args[1]`.
fn field_index(vm: &Vm, args: Args) -> Option<(Value, usize)> {
    let a = args.receiver(vm);
    let name = args.string(vm, 1).ok()?;
    let c = vm.class_of(a);
    let idx = vm.image.classes[c as usize]
        .fields
        .iter()
        .position(|f| **f == *name)?;
    // A class's field list describes its ordinary instances; an immediate or
    // a bytes object of a redefined class has no such slot.
    (idx < slot_count(vm, a)).then_some((a, idx))
}

fn inst_var_named(vm: &mut Vm, args: Args) -> PrimResult {
    match field_index(vm, args) {
        Some((a, i)) => Ok(Answer(vm.heap.slot(a, i))),
        None => Err(PrimFailure::error(
            "instVarNamed: no such instance variable",
        )),
    }
}

fn inst_var_named_put(vm: &mut Vm, args: Args) -> PrimResult {
    refuse_vm_slots(vm, args.receiver(vm), "instVarNamed:put:")?;
    let v = args.get(vm, 2);
    match field_index(vm, args) {
        Some((a, i)) => {
            vm.heap.set_slot(a, i, v);
            Ok(Answer(v))
        }
        None => Err(PrimFailure::error(
            "instVarNamed:put: no such instance variable",
        )),
    }
}

fn responds_to(vm: &mut Vm, args: Args) -> PrimResult {
    let c = vm.class_of(args.receiver(vm));
    let Ok(id) = args.symbol(vm, 1) else {
        return Ok(Answer(Value::FALSE));
    };
    if vm.image.symbols.is_hidden(id) {
        return Ok(Answer(Value::FALSE));
    }
    Ok(Answer(Value::bool(!matches!(
        vm.image.lookup(&vm.heap, c, id),
        Lookup::NotFound
    ))))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Object"], "class", class).leaf(),
    Primitive::new(&["Object"], "==", identical).leaf(),
    Primitive::new(&["Object"], "hashcode", hashcode).leaf(),
    Primitive::new(&["Object"], "identityHash", hashcode).leaf(),
    Primitive::new(&["Object"], "objectSize", object_size).leaf(),
    Primitive::new(&["Object"], "shallowCopy", shallow_copy)
        .allocating()
        .leaf(),
    Primitive::new(&["Object"], "halt", halt),
    Primitive::new(&["Object"], "inspect", inspect),
    Primitive::new(&["Object"], "instVarAt:", inst_var_at),
    Primitive::new(&["Object"], "instVarAt:put:", inst_var_at_put),
    Primitive::new(&["Object"], "instVarNamed:", inst_var_named),
    Primitive::new(&["Object"], "instVarNamed:put:", inst_var_named_put),
    Primitive::new(&["Object"], "respondsTo:", responds_to),
];
