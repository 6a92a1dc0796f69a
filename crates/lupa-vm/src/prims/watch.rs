//! The Smalltalk face of method watches (`obs/watch.rs`), what Spy's
//! built-in profilers use instead of a trap per method:
//!
//! - `System>>watchMethods: anArray options: anInteger` starts a watch of
//!   the Methods (or Primitives) in the Array and answers its number;
//!   options add up `1` (distinct receivers), `2` (tags), `4` (argument
//!   classes), `8` (answer classes), `16` (the same answer) and `32`
//!   (receiver fields changed);
//! - `System>>watch: aNumber tag: anIntegerOrNil` sets the tag in force
//!   (e.g. which test runs; nil: none);
//! - `System>>stopWatch: aNumber` stops it and answers, for each method
//!   in the order given, `{ executions. receivers. receiversAreEstimated.
//!   tags. argumentClasses. answerClasses. answered. alwaysSame.
//!   sameAnswer. changedReceiver }`: tags an Array of the tags in force at
//!   its calls, argumentClasses an Array with, per argument, an Array of
//!   the classes seen, answerClasses an Array of classes (each in the order
//!   first seen; empty when not recorded); answered the calls that
//!   answered (not unwound), alwaysSame whether they all answered one
//!   object other than their receiver, sameAnswer that object (else nil),
//!   changedReceiver whether a call changed a named field of its receiver.

use super::Primitive;
use super::outcome::OrError;
use super::outcome::Reply::Answer;
use super::{Args, PrimResult};
use crate::obs::watch::{MethodFacts, Same};
use crate::vm::Vm;
use lupa_heap::{OutOfMemory, Value};

/// Argument `i`, a SmallInteger from 0 to 2^32-1, or `None`.
fn u32_arg(vm: &Vm, args: Args, i: usize) -> Option<u32> {
    args.int(vm, i).ok().and_then(|n| u32::try_from(n).ok())
}

/// A watch number in a SmallInteger.
fn watch_id(vm: &Vm, args: Args, i: usize) -> Result<u32, super::PrimFailure> {
    u32_arg(vm, args, i).or_error("not a watch number (System>>watchMethods:options: answers one)")
}

fn watch_methods(vm: &mut Vm, args: Args) -> PrimResult {
    let elements = args
        .array_elements(vm, 1)
        .or_error("watchMethods:options: needs an Array of methods")?;
    let options = u32_arg(vm, args, 2)
        .filter(|&o| o <= crate::obs::watch::ALL)
        .or_error("watchMethods:options: needs options from 0 to 63")?;
    let mut ids = Vec::with_capacity(elements.len());
    for e in elements {
        let code = vm
            .image
            .method_code_of(&vm.heap, e)
            .or_error("watchMethods:options: needs an Array of methods")?;
        ids.push(code.id);
    }
    let id = vm.start_watch(&ids, options);
    Ok(Answer(Value::small(i64::from(id))))
}

fn watch_tag(vm: &mut Vm, args: Args) -> PrimResult {
    let id = watch_id(vm, args, 1)?;
    let tag = match args.get(vm, 2) {
        Value::NIL => None,
        _ => {
            Some(u32_arg(vm, args, 2).or_error("watch:tag: needs a tag from 0 to 2^32-1, or nil")?)
        }
    };
    if !vm.set_watch_tag(id, tag) {
        return Err(super::PrimFailure::error("watch:tag: no such watch is on"));
    }
    Ok(Answer(args.receiver(vm)))
}

/// `{ executions. receivers. estimated. tags. argumentClasses. answerClasses.
/// answered. alwaysSame. sameAnswer. changedReceiver }` of one method
/// (allocation does not collect: the values built stay valid).
fn facts_row(vm: &mut Vm, f: &MethodFacts) -> Result<Value, OutOfMemory> {
    let tags: Vec<Value> = f.tags.iter().map(|&t| Value::small(i64::from(t))).collect();
    let tags = vm.new_array(&tags)?;
    let mut per_argument = Vec::with_capacity(f.arguments.len());
    for classes in &f.arguments {
        let classes: Vec<Value> = classes.iter().map(|&c| vm.image.class_object(c)).collect();
        per_argument.push(vm.new_array(&classes)?);
    }
    let arguments = vm.new_array(&per_argument)?;
    let answers: Vec<Value> = f
        .answers
        .iter()
        .map(|&c| vm.image.class_object(c))
        .collect();
    let answers = vm.new_array(&answers)?;
    vm.new_array(&[
        Value::small(i64::try_from(f.executions).unwrap_or(i64::MAX)),
        Value::small(i64::try_from(f.receivers.count()).unwrap_or(i64::MAX)),
        Value::bool(f.receivers.is_estimated()),
        tags,
        arguments,
        answers,
        Value::small(i64::try_from(f.answered).unwrap_or(i64::MAX)),
        Value::bool(matches!(f.same, Same::One(_))),
        match f.same {
            Same::One(v) => v,
            _ => Value::NIL,
        },
        Value::bool(f.changed_receiver),
    ])
}

fn stop_watch(vm: &mut Vm, args: Args) -> PrimResult {
    let id = watch_id(vm, args, 1)?;
    let watch = vm
        .stop_watch(id)
        .or_error("stopWatch: no such watch is on")?;
    let mut rows = Vec::new();
    for f in watch.facts() {
        rows.push(facts_row(vm, f)?);
    }
    Ok(Answer(vm.new_array(&rows)?))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["System"], "watchMethods:options:", watch_methods),
    Primitive::new(&["System"], "watch:tag:", watch_tag),
    Primitive::new(&["System"], "stopWatch:", stop_watch),
];
