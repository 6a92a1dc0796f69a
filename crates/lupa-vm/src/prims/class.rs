//! Class reflection primitives (`Class`, `Class class`, `System loadedClasses`):
//! name, superclass, fields, method dictionary (read, install, remove, compile),
//! instantiation with `new`, subclasses and the list of loaded classes.
//!
//! The receiver is a class object (or a metaclass object); a primitive given
//! anything else fails. Method-dictionary changes go through the VM
//! (`put_method`, `remove_method`, `compile_and_install`) so that the lookup
//! caches are invalidated.

use super::Primitive;
use super::outcome::Reply::Answer;
use super::outcome::{OrError, PrimFailure};
use super::{Args, PrimResult};
use crate::objects::{Shape, cls};
use crate::vm::Vm;
use lupa_heap::Value;

fn class_name(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let name = vm.image.classes[c as usize].name.to_string();
    Ok(Answer(vm.image.symbol(&mut vm.heap, &name)?))
}

fn class_new(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    if let Some(problem) = vm.image.instantiation_problem(c, "new") {
        return Err(PrimFailure::Error(problem));
    }
    let pretenured = vm.pretenure_if_advised(c);
    let v = vm.instantiate(c, 0)?;
    if pretenured {
        vm.note_pretenured(v);
    }
    Ok(Answer(v))
}

fn class_superclass(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let s = vm.image.classes[c as usize].superclass;
    Ok(Answer(
        s.map(|s| vm.image.class_object(s)).unwrap_or(Value::NIL),
    ))
}

fn class_fields(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let names: Vec<String> = vm.image.classes[c as usize]
        .fields
        .iter()
        .map(|f| f.to_string())
        .collect();
    let mut syms = Vec::with_capacity(names.len());
    for n in names {
        syms.push(vm.image.symbol(&mut vm.heap, &n)?);
    }
    Ok(Answer(vm.new_array(&syms)?))
}

/// The class's methods in definition order: the same Array at every call
/// until a method is added or removed (SOM's `methods` is the class's own
/// array; writing into it does not change the class here).
fn class_methods(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let kept = vm.image.classes[c as usize].methods_array;
    if !kept.is_nil() {
        return Ok(Answer(kept));
    }
    let info = &vm.image.classes[c as usize];
    let ms: Vec<Value> = info
        .method_order
        .iter()
        .filter(|s| !vm.image.symbols.is_hidden(**s))
        .filter_map(|s| info.methods.get(s).copied())
        .collect();
    let array = vm.new_array(&ms)?;
    vm.image.classes.set_methods_array(c, array);
    Ok(Answer(array))
}

fn class_at(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let Ok(id) = args.symbol(vm, 1) else {
        return Ok(Answer(Value::NIL));
    };
    Ok(Answer(
        vm.image.classes[c as usize]
            .methods
            .get(&id)
            .copied()
            .unwrap_or(Value::NIL),
    ))
}

fn class_at_put(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let id = args
        .symbol(vm, 1)
        .or_error("methodAt:put: needs a Symbol")?;
    let m = args.get(vm, 2);
    if let Some(problem) = vm.image.install_problem(&vm.heap, c, id, m) {
        return Err(PrimFailure::Error(format!("methodAt:put: {problem}")));
    }
    vm.image.classes.put_method(c, id, m);
    vm.special_selector_changed(id);
    Ok(Answer(m))
}

fn class_remove(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let Ok(id) = args.symbol(vm, 1) else {
        return Ok(Answer(Value::NIL));
    };
    let removed = vm.image.classes.remove_method(c, id).unwrap_or(Value::NIL);
    vm.special_selector_changed(id);
    Ok(Answer(removed))
}

fn class_compile(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let src = args.string(vm, 1).or_error("compile: needs a String")?;
    let file = format!("<compiled in {}>", vm.image.class_name(c));
    vm.check_runtime_code(src.len())?;
    match vm.image.compile_and_install(&mut vm.heap, c, &src, &file) {
        Ok(id) => {
            let bytes = src.len() + vm.image.methods[id as usize].memory_bytes();
            vm.image.runtime_code_bytes += bytes;
            let sel = vm.image.methods[id as usize].selector;
            vm.special_selector_changed(sel);
            Ok(Answer(vm.image.methods[id as usize].object.get()))
        }
        Err(e) => Err(PrimFailure::Error(format!("compile error: {e}"))),
    }
}

fn class_field_count(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    Ok(Answer(Value::small(
        vm.image.classes[c as usize].fields.len() as i64,
    )))
}

fn class_category(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let cat = vm.image.classes[c as usize].category.to_string();
    Ok(Answer(vm.new_string(&cat)?))
}

fn class_package_location(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let location = vm.image.package_location(c);
    Ok(Answer(vm.new_string(&location)?))
}

fn class_subclasses(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let subs: Vec<Value> = vm
        .image
        .classes
        .iter()
        .filter(|i| i.loaded && i.superclass == Some(c) && i.object != Value::NIL)
        .map(|i| i.object)
        .collect();
    Ok(Answer(vm.new_array(&subs)?))
}

fn all_classes(vm: &mut Vm, _args: Args) -> PrimResult {
    let all: Vec<Value> = vm
        .image
        .classes
        .iter()
        .enumerate()
        .filter(|(i, info)| *i != 0 && *i != cls::ENV as usize && info.loaded && !info.is_meta)
        .map(|(_, info)| info.object)
        .collect();
    Ok(Answer(vm.new_array(&all)?))
}

fn class_is_indexable(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    Ok(Answer(Value::bool(!matches!(
        vm.image.classes[c as usize].shape,
        Shape::Fixed | Shape::Ephemeron
    ))))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Class"], "name", class_name).leaf(),
    Primitive::new(&["Class"], "new", class_new)
        .allocating()
        .leaf(),
    Primitive::new(&["Class"], "superclass", class_superclass).leaf(),
    Primitive::new(&["Class"], "fields", class_fields).allocating(),
    Primitive::new(&["Class"], "methods", class_methods),
    Primitive::new(&["Class"], ">>", class_at),
    Primitive::new(&["Class"], "methodAt:", class_at),
    Primitive::new(&["Class"], "methodAt:put:", class_at_put),
    Primitive::new(&["Class"], "removeMethodAt:", class_remove),
    Primitive::new(&["Class"], "compile:", class_compile),
    Primitive::new(&["Class"], "instanceFieldCount", class_field_count).leaf(),
    Primitive::new(&["Class"], "category", class_category).allocating(),
    Primitive::new(&["Class"], "packageLocation", class_package_location).allocating(),
    Primitive::new(&["Class"], "subclasses", class_subclasses).allocating(),
    Primitive::new(&["Class"], "isIndexable", class_is_indexable).leaf(),
    Primitive::new(&["Class class"], "allClasses", all_classes).allocating(),
    Primitive::new(&["System"], "loadedClasses", all_classes).allocating(),
];
