//! Class reflection primitives (`Class`, `Class class`, `System loadedClasses`):
//! name, superclass, fields, method dictionary (read, install, remove, compile),
//! instantiation with `new`, subclasses and the list of loaded classes.
//!
//! The receiver is a class object (or a metaclass object); a primitive given
//! anything else fails. Method-dictionary changes go through the VM
//! (`put_method`, `remove_method`, `compile_and_install`) so that the lookup
//! caches are invalidated.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::{Shape, cls};
use crate::vm::Vm;
use lupa_heap::Value;

fn this_class(vm: &mut Vm, argc: usize) -> Option<u32> {
    vm.class_index_of_object(arg(vm, argc, 0))
}

fn class_name(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let name = vm.classes[c as usize].name.to_string();
    Prim::Ok(tryalloc!(vm.symbol(&name)))
}

fn class_new(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    if matches!(
        c,
        cls::INTEGER | cls::DOUBLE | cls::SYMBOL | cls::NIL | cls::TRUE | cls::FALSE
    ) {
        return Prim::Error(format!(
            "{} cannot be instantiated with new",
            vm.class_name(c)
        ));
    }
    Prim::Ok(tryalloc!(vm.instantiate(c, 0)))
}

fn class_superclass(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let s = vm.classes[c as usize].superclass;
    Prim::Ok(s.map(|s| vm.class_object(s)).unwrap_or(Value::NIL))
}

fn class_fields(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let names: Vec<String> = vm.classes[c as usize]
        .fields
        .iter()
        .map(|f| f.to_string())
        .collect();
    let mut syms = Vec::with_capacity(names.len());
    for n in names {
        syms.push(tryalloc!(vm.symbol(&n)));
    }
    Prim::Ok(tryalloc!(vm.new_array(&syms)))
}

fn class_methods(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let info = &vm.classes[c as usize];
    let ms: Vec<Value> = info
        .method_order
        .iter()
        .filter(|s| !vm.symbols.is_hidden(**s))
        .filter_map(|s| info.methods.get(s).copied())
        .collect();
    Prim::Ok(tryalloc!(vm.new_array(&ms)))
}

fn class_at(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let Some(id) = vm.symbol_id(arg(vm, argc, 1)) else {
        return Prim::Ok(Value::NIL);
    };
    Prim::Ok(
        vm.classes[c as usize]
            .methods
            .get(&id)
            .copied()
            .unwrap_or(Value::NIL),
    )
}

fn class_at_put(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let Some(id) = vm.symbol_id(arg(vm, argc, 1)) else {
        return Prim::Error("methodAt:put: needs a Symbol".into());
    };
    let m = arg(vm, argc, 2);
    vm.put_method(c, id, m);
    Prim::Ok(m)
}

fn class_remove(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let Some(id) = vm.symbol_id(arg(vm, argc, 1)) else {
        return Prim::Ok(Value::NIL);
    };
    Prim::Ok(vm.remove_method(c, id).unwrap_or(Value::NIL))
}

fn class_compile(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let Some(src) = vm.string_of(arg(vm, argc, 1)) else {
        return Prim::Error("compile: needs a String".into());
    };
    let file = format!("<compiled in {}>", vm.class_name(c));
    match vm.compile_and_install(c, &src, &file) {
        Ok(id) => Prim::Ok(vm.methods[id as usize].object.get()),
        Err(e) => Prim::Error(format!("compile error: {e}")),
    }
}

fn class_field_count(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::small(vm.classes[c as usize].fields.len() as i64))
}

fn class_category(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let cat = vm.classes[c as usize].category.to_string();
    Prim::Ok(tryalloc!(vm.new_string(&cat)))
}

fn class_subclasses(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    let subs: Vec<Value> = vm
        .classes
        .iter()
        .filter(|i| i.loaded && i.superclass == Some(c) && i.object != Value::NIL)
        .map(|i| i.object)
        .collect();
    Prim::Ok(tryalloc!(vm.new_array(&subs)))
}

fn all_classes(vm: &mut Vm, _argc: usize) -> Prim {
    let all: Vec<Value> = vm
        .classes
        .iter()
        .enumerate()
        .filter(|(i, info)| *i != 0 && *i != cls::ENV as usize && info.loaded && !info.is_meta)
        .map(|(_, info)| info.object)
        .collect();
    Prim::Ok(tryalloc!(vm.new_array(&all)))
}

fn class_is_indexable(vm: &mut Vm, argc: usize) -> Prim {
    let Some(c) = this_class(vm, argc) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::bool(!matches!(
        vm.classes[c as usize].shape,
        Shape::Fixed | Shape::Ephemeron
    )))
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
