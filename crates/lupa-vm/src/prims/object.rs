//! Object, Class, Metaclass and Method primitives (identity, reflection, perform).

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::{Shape, cls};
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

/// perform: family. Rearranges the stack into a normal send.
fn perform_generic(vm: &mut Vm, argc: usize, with_args: bool, in_super: bool) -> Prim {
    let sel = arg(vm, argc, 1);
    let Some(id) = vm.symbol_id(sel) else {
        return Prim::Error("perform: needs a Symbol as selector".into());
    };
    let mut args: Vec<Value> = Vec::new();
    if with_args {
        let a = arg(vm, argc, 2);
        if !(a.is_ptr() && vm.heap.class_index(a) == cls::ARRAY) {
            return Prim::Error("perform:withArguments: needs an Array of arguments".into());
        }
        args = (0..vm.heap.size(a)).map(|i| vm.heap.slot(a, i)).collect();
    } else {
        let mut k = 2;
        while k <= argc && !(in_super && k == argc) {
            args.push(arg(vm, argc, k));
            k += 1;
        }
    }
    let start_class = if in_super {
        let c = arg(vm, argc, argc);
        match vm.class_index_of_object(c) {
            Some(c) => c,
            None => return Prim::Error("perform:inSuperclass: needs a class".into()),
        }
    } else {
        vm.class_of(arg(vm, argc, 0))
    };
    let sel_name = vm.symbols.name(id).to_string();
    let expected = selector_arity(&sel_name);
    if expected != args.len() {
        return Prim::Error(format!(
            "wrong number of arguments for #{sel_name}: expected {expected}, got {}",
            args.len()
        ));
    }
    let recv = arg(vm, argc, 0);
    let n = vm.running.stack.len() - argc - 1;
    vm.running.stack.truncate(n);
    vm.running.stack.push(recv);
    vm.running.stack.extend_from_slice(&args);
    if crate::interp::OBSERVE {
        vm.obs.sends += 1;
    }
    match vm.dispatch_in(start_class, id, args.len(), None) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
}

/// Number of arguments a selector takes, from its spelling (a hidden selector's
/// leading U+0001 is ignored).
pub(crate) fn selector_arity(name: &str) -> usize {
    let name = name.strip_prefix('\u{1}').unwrap_or(name);
    let colons = name.matches(':').count();
    if colons > 0 {
        colons
    } else {
        usize::from(
            name.chars()
                .next()
                .is_some_and(|c| !c.is_alphanumeric() && c != '_'),
        )
    }
}

fn perform(vm: &mut Vm, argc: usize) -> Prim {
    perform_generic(vm, argc, false, false)
}
fn perform_with_args(vm: &mut Vm, argc: usize) -> Prim {
    perform_generic(vm, argc, true, false)
}
fn perform_in_super(vm: &mut Vm, argc: usize) -> Prim {
    perform_generic(vm, argc, false, true)
}
fn perform_with_args_in_super(vm: &mut Vm, argc: usize) -> Prim {
    perform_generic(vm, argc, true, true)
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

// ----- method copies and literal patching (MethodProxies) -----

fn method_copy_for(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    let Some(holder) = vm.class_index_of_object(arg(vm, argc, 1)) else {
        return Prim::Error("copyFor:selector: needs a class".into());
    };
    let Some(sel) = vm.symbol_id(arg(vm, argc, 2)) else {
        return Prim::Error("copyFor:selector: needs a Symbol".into());
    };
    let copy = tryalloc!(vm.copy_method(&code, holder, sel));
    Prim::Ok(copy.object.get())
}

fn literal_index(
    vm: &mut Vm,
    argc: usize,
) -> Option<(std::rc::Rc<crate::objects::MethodCode>, usize)> {
    let code = vm.method_code_of(arg(vm, argc, 0))?;
    let i = arg(vm, argc, 1).as_int()?;
    (i >= 1 && i as usize <= code.literals.len()).then_some((code, i as usize - 1))
}

fn method_literal_at(vm: &mut Vm, argc: usize) -> Prim {
    match literal_index(vm, argc) {
        Some((code, i)) => Prim::Ok(code.literals[i].get()),
        None => Prim::Error("literalAt: index out of bounds".into()),
    }
}

fn method_literal_at_put(vm: &mut Vm, argc: usize) -> Prim {
    let v = arg(vm, argc, 2);
    let Some((code, i)) = literal_index(vm, argc) else {
        return Prim::Error("literalAt:put: index out of bounds".into());
    };
    code.literals[i].set(v);
    // A patched selector literal changes what its send sites call.
    code.sel_ids[i].set(vm.symbol_id(v).unwrap_or(u32::MAX));
    for c in code.caches.iter() {
        c.set(Default::default());
    }
    Prim::Ok(v)
}

fn method_source_code(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    match vm.method_source(&code) {
        Some(text) => Prim::Ok(tryalloc!(vm.new_string(&text))),
        None => Prim::Ok(Value::NIL),
    }
}

fn method_num_literals(vm: &mut Vm, argc: usize) -> Prim {
    match vm.method_code_of(arg(vm, argc, 0)) {
        Some(code) => Prim::Ok(Value::small(code.literals.len() as i64)),
        None => Prim::Fail,
    }
}

/// `String>>asHiddenSymbol`: the selector U+0001 followed by the string, found by lookup
/// but hidden from `methods`, `selectors` and `respondsTo:`.
fn as_hidden_symbol(vm: &mut Vm, argc: usize) -> Prim {
    let Some(s) = vm.string_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    Prim::Ok(tryalloc!(vm.symbol(&format!("\u{1}{s}"))))
}

fn is_hidden_selector(vm: &mut Vm, argc: usize) -> Prim {
    match vm.symbol_id(arg(vm, argc, 0)) {
        Some(id) => Prim::Ok(Value::bool(vm.symbols.is_hidden(id))),
        None => Prim::Ok(Value::FALSE),
    }
}

// ----- Class -----

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

// ----- Method / Primitive -----

fn method_signature(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    Prim::Ok(tryalloc!(vm.symbol_object(code.selector)))
}

fn method_holder(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    Prim::Ok(vm.class_object(code.holder.get()))
}

fn method_num_args(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::small(code.num_args as i64))
}

fn method_source_line(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::small(code.first_line as i64))
}

fn method_has_pragma(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    let Some(name) = vm.string_of(arg(vm, argc, 1)) else {
        return Prim::Fail;
    };
    Prim::Ok(Value::bool(code.has_pragma(&name)))
}

fn method_pragmas(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    let mut out = Vec::new();
    for (name, _args) in &code.pragmas {
        let s = tryalloc!(vm.symbol(name));
        out.push(tryalloc!(vm.new_array(&[s])));
    }
    Prim::Ok(tryalloc!(vm.new_array(&out)))
}

fn method_invoke(vm: &mut Vm, argc: usize) -> Prim {
    let Some(code) = vm.method_code_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    let recv = arg(vm, argc, 1);
    let a = arg(vm, argc, 2);
    let args: Vec<Value> = if a.is_ptr() && vm.heap.class_index(a) == cls::ARRAY {
        (0..vm.heap.size(a)).map(|i| vm.heap.slot(a, i)).collect()
    } else if a == Value::NIL {
        Vec::new()
    } else {
        return Prim::Error("invokeOn:with: needs an Array of arguments".into());
    };
    if args.len() != code.num_args {
        return Prim::Error(format!(
            "invokeOn:with: the method #{} takes {} arguments, got {}",
            code.selector_name,
            code.num_args,
            args.len()
        ));
    }
    let n = vm.running.stack.len() - argc - 1;
    vm.running.stack.truncate(n);
    vm.running.stack.push(recv);
    vm.running.stack.extend_from_slice(&args);
    if crate::interp::OBSERVE {
        vm.obs.sends += 1;
    }
    match vm.invoke(code, args.len()) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
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
        ("perform:", perform),
        ("perform:with:", perform),
        ("perform:with:with:", perform),
        ("perform:with:with:with:", perform),
        ("perform:withArguments:", perform_with_args),
        ("perform:inSuperclass:", perform_in_super),
        (
            "perform:withArguments:inSuperclass:",
            perform_with_args_in_super,
        ),
        ("instVarAt:", inst_var_at),
        ("instVarAt:put:", inst_var_at_put),
        ("instVarNamed:", inst_var_named),
        ("instVarNamed:put:", inst_var_named_put),
        ("respondsTo:", responds_to),
    ];
    for (sel, f) in table {
        vm.register("Object", sel, *f);
    }
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
    vm.register("String", "asHiddenSymbol", as_hidden_symbol);
    vm.register("Symbol", "isHiddenSelector", is_hidden_selector);
    vm.register("System", "loadedClasses", all_classes);
    for class in ["Method", "Primitive"] {
        vm.register(class, "signature", method_signature);
        vm.register(class, "selector", method_signature);
        vm.register(class, "holder", method_holder);
        vm.register(class, "numArgs", method_num_args);
        vm.register(class, "sourceLine", method_source_line);
        vm.register(class, "hasPragma:", method_has_pragma);
        vm.register(class, "pragmas", method_pragmas);
        vm.register(class, "invokeOn:with:", method_invoke);
        vm.register(class, "copyFor:selector:", method_copy_for);
        vm.register(class, "literalAt:", method_literal_at);
        vm.register(class, "literalAt:put:", method_literal_at_put);
        vm.register(class, "numLiterals", method_num_literals);
        vm.register(class, "sourceCode", method_source_code);
    }
}
