//! Class reflection primitives (`Class`, `Class class`, `System loadedClasses`):
//! name, superclass, fields, method dictionary (read, install, remove, compile),
//! instantiation with `new`, subclasses and the list of loaded classes.
//!
//! The receiver is a class object (or a metaclass object); a primitive given
//! anything else fails. Method-dictionary changes go through the VM
//! (`put_method`, `remove_method`, `compile_and_install`) so that the lookup
//! caches are invalidated.

use super::outcome::Reply::Answer;
use super::outcome::{OrError, PrimFailure};
use super::{Args, PrimResult};
use crate::objects::{Shape, cls};
use crate::vm::Vm;
use lupa_heap::Value;

fn class_name(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let name = vm.classes[c as usize].name.to_string();
    Ok(Answer(vm.symbol(&name)?))
}

fn class_new(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    // Integers, Doubles, Symbols and the constants are made by the VM; so are
    // blocks, whose slots the interpreter trusts (code, receiver, outer env).
    if matches!(
        c,
        cls::INTEGER | cls::DOUBLE | cls::SYMBOL | cls::NIL | cls::TRUE | cls::FALSE
    ) || (cls::BLOCK..=cls::BLOCK4).contains(&c)
    {
        return Err(PrimFailure::Error(format!(
            "{} cannot be instantiated with new",
            vm.class_name(c)
        )));
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
    let s = vm.classes[c as usize].superclass;
    Ok(Answer(s.map(|s| vm.class_object(s)).unwrap_or(Value::NIL)))
}

fn class_fields(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let names: Vec<String> = vm.classes[c as usize]
        .fields
        .iter()
        .map(|f| f.to_string())
        .collect();
    let mut syms = Vec::with_capacity(names.len());
    for n in names {
        syms.push(vm.symbol(&n)?);
    }
    Ok(Answer(vm.new_array(&syms)?))
}

fn class_methods(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let info = &vm.classes[c as usize];
    let ms: Vec<Value> = info
        .method_order
        .iter()
        .filter(|s| !vm.symbols.is_hidden(**s))
        .filter_map(|s| info.methods.get(s).copied())
        .collect();
    Ok(Answer(vm.new_array(&ms)?))
}

fn class_at(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let Ok(id) = args.symbol(vm, 1) else {
        return Ok(Answer(Value::NIL));
    };
    Ok(Answer(
        vm.classes[c as usize]
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
    if let Some(problem) = vm.install_problem(c, id, m) {
        return Err(PrimFailure::Error(format!("methodAt:put: {problem}")));
    }
    vm.put_method(c, id, m);
    Ok(Answer(m))
}

fn class_remove(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let Ok(id) = args.symbol(vm, 1) else {
        return Ok(Answer(Value::NIL));
    };
    Ok(Answer(vm.remove_method(c, id).unwrap_or(Value::NIL)))
}

fn class_compile(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let src = args.string(vm, 1).or_error("compile: needs a String")?;
    let file = format!("<compiled in {}>", vm.class_name(c));
    match vm.compile_and_install(c, &src, &file) {
        Ok(id) => Ok(Answer(vm.methods[id as usize].object.get())),
        Err(e) => Err(PrimFailure::Error(format!("compile error: {e}"))),
    }
}

fn class_field_count(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    Ok(Answer(Value::small(
        vm.classes[c as usize].fields.len() as i64
    )))
}

fn class_category(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let cat = vm.classes[c as usize].category.to_string();
    Ok(Answer(vm.new_string(&cat)?))
}

fn class_subclasses(vm: &mut Vm, args: Args) -> PrimResult {
    let c = args.class(vm, 0)?;
    let subs: Vec<Value> = vm
        .classes
        .iter()
        .filter(|i| i.loaded && i.superclass == Some(c) && i.object != Value::NIL)
        .map(|i| i.object)
        .collect();
    Ok(Answer(vm.new_array(&subs)?))
}

fn all_classes(vm: &mut Vm, _args: Args) -> PrimResult {
    let all: Vec<Value> = vm
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
        vm.classes[c as usize].shape,
        Shape::Fixed | Shape::Ephemeron
    ))))
}

pub(crate) fn register(vm: &mut Vm) {
    let class_table: &[(&'static str, crate::objects::PrimFn)] = &[
        ("name", class_name),
        ("new", class_new),
        ("superclass", class_superclass),
        ("fields", class_fields),
        ("methods", class_methods),
        (">>", class_at),
        ("methodAt:", class_at),
        ("methodAt:put:", class_at_put),
        ("removeMethodAt:", class_remove),
        ("compile:", class_compile),
        ("instanceFieldCount", class_field_count),
        ("category", class_category),
        ("subclasses", class_subclasses),
        ("isIndexable", class_is_indexable),
    ];
    for (sel, f) in class_table {
        vm.register("Class", sel, *f);
    }
    vm.register("Class class", "allClasses", all_classes);
    vm.register("System", "loadedClasses", all_classes);
}
