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

use super::Primitive;
use super::outcome::Reply::Answer;
use super::outcome::{OrError, PrimFailure};
use super::{Args, PrimResult};
use crate::image::HIDDEN_PREFIX;
use crate::objects::MethodCode;
use crate::vm::Vm;
use lupa_heap::Value;
use std::rc::Rc;

fn method_copy_for(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    let holder = args
        .class(vm, 1)
        .or_error("copyFor:selector: needs a class")?;
    let sel = args
        .symbol(vm, 2)
        .or_error("copyFor:selector: needs a Symbol")?;
    if let Some(problem) = vm.image.primitive_holder_problem(&code, holder) {
        return Err(PrimFailure::Error(format!("copyFor:selector: {problem}")));
    }
    vm.check_runtime_code(code.memory_bytes())?;
    let copy = vm.copy_method(&code, holder, sel)?;
    vm.image.runtime_code_bytes += copy.memory_bytes();
    Ok(Answer(copy.object.get()))
}

/// The code of the receiver and the 0-based index of literal `args[1]` in it.
fn literal_index(vm: &mut Vm, args: Args) -> Option<(Rc<MethodCode>, usize)> {
    let code = args.method(vm, 0).ok()?;
    let i = args.int(vm, 1).ok()?;
    // 1-based; checked before subtracting (0 must not compute `0 - 1`).
    let i = usize::try_from(i)
        .ok()
        .filter(|&i| i >= 1 && i <= code.literals.len())?;
    Some((code, i - 1))
}

fn method_literal_at(vm: &mut Vm, args: Args) -> PrimResult {
    let (code, i) = literal_index(vm, args).or_error("literalAt: index out of bounds")?;
    Ok(Answer(code.literals[i].get()))
}

fn method_literal_at_put(vm: &mut Vm, args: Args) -> PrimResult {
    let v = args.get(vm, 2);
    let (code, i) = literal_index(vm, args).or_error("literalAt:put: index out of bounds")?;
    // A patched selector literal changes what its send sites call.
    vm.patch_literal(&code, i, v)
        .map_err(|e| PrimFailure::Error(format!("literalAt:put: {e}")))?;
    Ok(Answer(v))
}

fn method_num_literals(vm: &mut Vm, args: Args) -> PrimResult {
    let code = args.method(vm, 0)?;
    Ok(Answer(Value::small(code.literals.len() as i64)))
}

/// `String>>asHiddenSymbol`: the selector U+0001 followed by the string, found by lookup
/// but hidden from `methods`, `selectors` and `respondsTo:`.
fn as_hidden_symbol(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.string(vm, 0)?;
    Ok(Answer(
        vm.image
            .symbol(&mut vm.heap, &format!("{HIDDEN_PREFIX}{s}"))?,
    ))
}

fn is_hidden_selector(vm: &mut Vm, args: Args) -> PrimResult {
    Ok(Answer(match args.symbol(vm, 0) {
        Ok(id) => Value::bool(vm.image.symbols.is_hidden(id)),
        Err(_) => Value::FALSE,
    }))
}

/// `Processor isMeta`: is the running process inside a `<metaLevel>` method?
fn is_meta(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::bool(vm.sched.running.meta_depth > 0)))
}

/// `Processor metaLevel`: how many `<metaLevel>` methods the running process is in.
fn meta_level(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(vm.sched.running.meta_depth as i64)))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(
        &["Method", "Primitive"],
        "copyFor:selector:",
        method_copy_for,
    ),
    Primitive::new(&["Method", "Primitive"], "literalAt:", method_literal_at),
    Primitive::new(
        &["Method", "Primitive"],
        "literalAt:put:",
        method_literal_at_put,
    ),
    Primitive::new(&["Method", "Primitive"], "numLiterals", method_num_literals),
    Primitive::new(&["String"], "asHiddenSymbol", as_hidden_symbol),
    Primitive::new(&["Symbol"], "isHiddenSelector", is_hidden_selector),
    Primitive::new(&["ProcessorScheduler"], "isMeta", is_meta),
    Primitive::new(&["ProcessorScheduler"], "metaLevel", meta_level),
];
