//! Array and WeakArray primitives: indexed access, size, copies, and `new:` for
//! every indexable class.
//!
//! Indices count from 1 over the indexable slots, which follow the named fields
//! of the receiver's class. An index out of bounds is an `error:` with a message,
//! a receiver or index of the wrong kind a failure (the fallback runs).

use super::Primitive;
use super::outcome::Reply::Answer;
use super::outcome::{Expected, PrimFailure};
use super::{Args, PrimResult};
use crate::objects::{Shape, cls};
use crate::vm::Vm;
use lupa_heap::Value;

/// Named-field count and indexable size of an indexable pointer object.
#[inline]
fn indexable(vm: &Vm, a: Value) -> Result<(usize, usize), PrimFailure> {
    if !a.is_ptr() {
        return Err(PrimFailure::wrong(0, Expected::Indexable));
    }
    let c = vm.heap.class_index(a);
    let info = &vm.image.classes[c as usize];
    // An environment is indexable for the VM only: its slots are its
    // parent, alive flag and variables (`cls::holds_vm_slots`).
    if !matches!(info.shape, Shape::Indexable | Shape::Weak) || cls::holds_vm_slots(c) {
        return Err(PrimFailure::wrong(0, Expected::Indexable));
    }
    let named = info.fields.len();
    Ok((named, vm.heap.size(a).saturating_sub(named)))
}

#[cold]
fn out_of_bounds(i: i64, size: usize) -> PrimFailure {
    PrimFailure::Error(format!("Index {i} not valid for array of length {size}."))
}

fn at(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    let (named, size) = indexable(vm, a)?;
    let i = args.int(vm, 1)?;
    if i < 1 || i as usize > size {
        return Err(out_of_bounds(i, size));
    }
    Ok(Answer(vm.heap.slot(a, named + i as usize - 1)))
}

fn at_put(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    let (named, size) = indexable(vm, a)?;
    let i = args.int(vm, 1)?;
    let v = args.get(vm, 2);
    if i < 1 || i as usize > size {
        return Err(out_of_bounds(i, size));
    }
    vm.heap.set_slot(a, named + i as usize - 1, v);
    // SOM answers the receiver (its TestSuite and IntegrationTests check it).
    Ok(Answer(a))
}

fn length(vm: &mut Vm, args: Args) -> PrimResult {
    let (_, size) = indexable(vm, args.receiver(vm))?;
    Ok(Answer(Value::small(size as i64)))
}

fn new_sized(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    if let Some(problem) = vm.image.instantiation_problem(c, "new:") {
        return Err(PrimFailure::Error(problem));
    }
    let n = args.int(vm, 1)?;
    if n < 0 {
        return Err(PrimFailure::Error(format!(
            "cannot create an array with a negative size ({n})"
        )));
    }
    let pretenured = vm.pretenure_if_advised(c);
    let v = vm.instantiate(c, n as usize)?;
    if pretenured {
        vm.note_pretenured(v);
    }
    Ok(Answer(v))
}

/// `Class>>new:` for any indexable class (Array subclasses, byte and word classes).
fn class_new_sized(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    if matches!(
        vm.image.classes[c as usize].shape,
        Shape::Fixed | Shape::Ephemeron
    ) || matches!(c, cls::SYMBOL | cls::INTEGER | cls::DOUBLE)
    {
        return Err(PrimFailure::Error(format!(
            "{} is not indexable: use new instead of new:",
            vm.image.class_name(c)
        )));
    }
    new_sized(vm, args)
}

fn new_with_all(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    if let Some(problem) = vm.image.instantiation_problem(c, "new:withAll:") {
        return Err(PrimFailure::Error(problem));
    }
    let n = args.int(vm, 1)?;
    if n < 0 {
        return Err(PrimFailure::Fail);
    }
    let v = args.get(vm, 2);
    let a = vm.instantiate(c, n as usize)?;
    let named = vm.image.classes[c as usize].fields.len();
    for i in 0..n as usize {
        vm.heap.set_slot(a, named + i, v);
    }
    Ok(Answer(a))
}

fn copy_from_to(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    let (named, size) = indexable(vm, a)?;
    let from = args.int(vm, 1)?;
    let to = args.int(vm, 2)?;
    if to < from {
        return Ok(Answer(vm.new_array(&[])?));
    }
    if from < 1 || to as usize > size {
        return Err(PrimFailure::Error(format!(
            "copyFrom: {from} to: {to} out of bounds for an array of {size} elements"
        )));
    }
    let vals: Vec<Value> = (from..=to)
        .map(|i| vm.heap.slot(a, named + i as usize - 1))
        .collect();
    let c = vm.heap.class_index(a);
    let r = vm.instantiate(
        if c == cls::WEAK_ARRAY { cls::ARRAY } else { c },
        vals.len(),
    )?;
    let rnamed = vm.image.classes[vm.heap.class_index(r) as usize]
        .fields
        .len();
    for (k, v) in vals.into_iter().enumerate() {
        vm.heap.set_slot(r, rnamed + k, v);
    }
    Ok(Answer(r))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Array", "WeakArray"], "at:", at).leaf(),
    Primitive::new(&["Array", "WeakArray"], "at:put:", at_put).leaf(),
    Primitive::new(&["Array", "WeakArray"], "length", length).leaf(),
    Primitive::new(&["Array", "WeakArray"], "size", length).leaf(),
    Primitive::new(&["Array", "WeakArray"], "copyFrom:to:", copy_from_to)
        .allocating()
        .leaf(),
    Primitive::new(&["Array class"], "new:", new_sized)
        .allocating()
        .leaf(),
    Primitive::new(&["Class"], "new:", class_new_sized)
        .allocating()
        .leaf(),
    Primitive::new(&["WeakArray class"], "new:", new_sized)
        .allocating()
        .leaf(),
    Primitive::new(&["Array class"], "new:withAll:", new_with_all)
        .allocating()
        .leaf(),
];
