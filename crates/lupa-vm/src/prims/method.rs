//! Method and Primitive reflection primitives: selector, holder, arity, source
//! line and text, pragmas, and `invokeOn:with:` (run a method on any receiver).
//!
//! The receiver is a Method or Primitive object; a primitive given anything
//! else fails. The literal-frame primitives that MethodProxies needs live in
//! `proxies.rs`.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::cls;
use crate::vm::Vm;
use lupa_heap::Value;

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
    let n = vm.stack.len() - argc - 1;
    vm.stack.truncate(n);
    vm.stack.push(recv);
    vm.stack.extend_from_slice(&args);
    if crate::interp::OBSERVE {
        vm.obs.sends += 1;
    }
    match vm.invoke(code, args.len()) {
        Ok(()) => Prim::Done,
        Err(e) => Prim::Abort(e),
    }
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

pub(crate) fn register(vm: &mut Vm) {
    for class in ["Method", "Primitive"] {
        vm.register(class, "signature", method_signature);
        vm.register(class, "selector", method_signature);
        vm.register(class, "holder", method_holder);
        vm.register(class, "numArgs", method_num_args);
        vm.register(class, "sourceLine", method_source_line);
        vm.register(class, "hasPragma:", method_has_pragma);
        vm.register(class, "pragmas", method_pragmas);
        vm.register(class, "invokeOn:with:", method_invoke);
        vm.register(class, "sourceCode", method_source_code);
    }
}
