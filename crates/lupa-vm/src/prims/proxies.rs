//! The Smalltalk face of the VM's support for MethodProxies
//! (`smalltalk/Profiling/MethodProxies`), the instrumentation library that
//! replaces a method by a trap method which runs hooks around the original.
//!
//! - Method copies and literal patching: `Method>>copyFor:selector:` makes an
//!   uninstalled copy of a method (own literal frame, own inline caches, own
//!   Method object) and `literalAt:put:` patches one of its literals; a patched
//!   selector literal redirects the sends that use it (the copy's selector-id
//!   table is kept in step and its caches are flushed). `literalAt:` and
//!   `numLiterals` read the literal frame.
//! - Hidden selectors: `String>>asHiddenSymbol` makes a selector (U+0001
//!   followed by the text) that lookup finds but `methods`, `selectors` and
//!   `respondsTo:` do not list; originals live under such selectors while a
//!   proxy is installed. `Symbol>>isHiddenSelector` tests for one.
//! - The meta level: `Processor isMeta` and `Processor metaLevel` tell whether
//!   (and how deeply) the running process is inside `<metaLevel>` methods, the
//!   hooks' own code, so that instrumentation does not instrument itself.
//!
//! The rest of that support is in the interpreter: the trap shortcut (a disabled
//! proxy, or one called at the meta level, goes straight to the original) and the
//! per-process meta-level count.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::vm::Vm;
use lupa_heap::Value;

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

/// `Processor isMeta`: is the running process inside a `<metaLevel>` method?
fn is_meta(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::bool(vm.meta_depth > 0))
}

fn meta_level(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(Value::small(vm.meta_depth as i64))
}

pub(crate) fn register(vm: &mut Vm) {
    for class in ["Method", "Primitive"] {
        vm.register(class, "copyFor:selector:", method_copy_for);
        vm.register(class, "literalAt:", method_literal_at);
        vm.register(class, "literalAt:put:", method_literal_at_put);
        vm.register(class, "numLiterals", method_num_literals);
    }
    vm.register("String", "asHiddenSymbol", as_hidden_symbol);
    vm.register("Symbol", "isHiddenSelector", is_hidden_selector);
    vm.register("ProcessorScheduler", "isMeta", is_meta);
    vm.register("ProcessorScheduler", "metaLevel", meta_level);
}
