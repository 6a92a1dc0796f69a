//! The Rust side of Spy's profilers (`smalltalk/Profiling/Spy/`): running
//! them for the CLI and reading what they found into `lupa_prof` models.
//!
//! The profilers themselves are Smalltalk (Spy is a framework for writing
//! profilers in the language they profile); this module drives them through
//! message sends and reads their spies through the names the Spy paper gives
//! them (`allMethods`, `classSpy`, `theMethod`, `numberOfExecutions`...), so
//! the Smalltalk side stays the one definition of what a profiler measures.
//! It adds what only the VM knows: the method's id, file and line, and, for
//! test coverage, the lines that ran ([`coverage`]). [`types`] drives type
//! feedback; [`time`] turns a profile into the method-level call graph that
//! Spy's time and call graph reads (through `System>>stopProfilerData`), and
//! [`blueprint`] drives the blueprint profiler, its program counted and
//! sampled from here.
//!
//! Every object held across a send is kept in the VM's handles (a collection
//! may move it): `Handles` pushes and pops them in order.

pub mod blueprint;
pub(crate) mod blueprint_config;
pub mod coverage;
pub mod time;
pub mod types;

use lupa_vm::Value;
use lupa_vm::{Vm, VmError};

/// Objects held across sends, rooted in `vm.handles` from `base` on.
pub(crate) struct Handles {
    base: usize,
}

impl Handles {
    /// Start rooting (everything pushed is popped by [`Handles::release`]).
    pub(crate) fn new(vm: &Vm) -> Handles {
        Handles {
            base: vm.handles.len(),
        }
    }

    /// Root `v`; answers its slot.
    pub(crate) fn keep(&self, vm: &mut Vm, v: Value) -> usize {
        vm.handles.push(v);
        vm.handles.len() - 1
    }

    /// The object in `slot` now (it may have moved).
    pub(crate) fn get(&self, vm: &Vm, slot: usize) -> Value {
        vm.handles.get(slot).copied().unwrap_or(Value::NIL)
    }

    /// Drop the objects rooted in slots `slot..` (the later ones first).
    pub(crate) fn truncate(&self, vm: &mut Vm, slot: usize) {
        vm.handles.truncate(slot.max(self.base));
    }

    /// Drop everything this rooted.
    pub(crate) fn release(self, vm: &mut Vm) {
        vm.handles.truncate(self.base);
    }
}

/// A new instance of the Smalltalk profiler class `class`, rooted in fresh
/// [`Handles`]: answers them and its slot (nothing stays rooted on failure).
pub(crate) fn new_profiler(vm: &mut Vm, class: &str) -> Result<(Handles, usize), VmError> {
    let h = Handles::new(vm);
    let made = vm
        .class_named(class)
        .and_then(|c| vm.send_message(c, "new", &[]));
    match made {
        Ok(profiler) => {
            let slot = h.keep(vm, profiler);
            Ok((h, slot))
        }
        Err(e) => {
            h.release(vm);
            Err(e)
        }
    }
}

/// Send `selector` to the object in `slot`.
pub(crate) fn send(
    vm: &mut Vm,
    h: &Handles,
    slot: usize,
    selector: &str,
    args: &[Value],
) -> Result<Value, VmError> {
    let receiver = h.get(vm, slot);
    vm.send_message(receiver, selector, args)
}

/// Does the object in `slot` understand `selector`?
pub(crate) fn understands(
    vm: &mut Vm,
    h: &Handles,
    slot: usize,
    selector: &str,
) -> Result<bool, VmError> {
    let sym = vm
        .image
        .symbol(&mut vm.heap, selector)
        .map_err(|e| VmError::Fatal(e.to_string()))?;
    let receiver = h.get(vm, slot);
    let v = vm.send_message(receiver, "respondsTo:", &[sym])?;
    Ok(v == Value::TRUE)
}

/// `v` as a non-negative integer, or an error naming `what`.
pub(crate) fn count(v: Value, what: &str) -> Result<u64, VmError> {
    v.as_int()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| VmError::Fatal(format!("{what} did not answer a non-negative integer")))
}

/// `v` as text (a String or Symbol), or an error naming `what`.
pub(crate) fn text(vm: &Vm, v: Value, what: &str) -> Result<String, VmError> {
    vm.string_of(v)
        .ok_or_else(|| VmError::Fatal(format!("{what} did not answer a String or Symbol")))
}

/// The elements of the collection in `slot` (anything answering `asArray`),
/// each rooted; answers their slots in order.
pub(crate) fn elements(
    vm: &mut Vm,
    h: &Handles,
    slot: usize,
    what: &str,
) -> Result<Vec<usize>, VmError> {
    let array = send(vm, h, slot, "asArray", &[])?;
    let a = h.keep(vm, array);
    let n = count(send(vm, h, a, "size", &[])?, what)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 1..=n {
        let index = Value::from_i64(i as i64).unwrap_or(Value::NIL);
        let e = send(vm, h, a, "at:", &[index])?;
        out.push(h.keep(vm, e));
    }
    Ok(out)
}

/// A class object for each class name, in a rooted Array; answers its slot.
pub(crate) fn class_array(vm: &mut Vm, h: &Handles, classes: &[u32]) -> Result<usize, VmError> {
    let objects: Vec<Value> = classes.iter().map(|&c| vm.image.class_object(c)).collect();
    let arr = vm
        .new_array(&objects)
        .map_err(|e| VmError::Fatal(e.to_string()))?;
    Ok(h.keep(vm, arr))
}

/// An Array of Strings, rooted; answers its slot.
pub(crate) fn string_array(vm: &mut Vm, h: &Handles, items: &[String]) -> Result<usize, VmError> {
    let start = h.keep(vm, Value::NIL);
    let mut slots = Vec::new();
    for s in items {
        let v = vm
            .new_string(s)
            .map_err(|e| VmError::Fatal(e.to_string()))?;
        slots.push(h.keep(vm, v));
    }
    let values: Vec<Value> = slots.iter().map(|&s| h.get(vm, s)).collect();
    let arr = vm
        .new_array(&values)
        .map_err(|e| VmError::Fatal(e.to_string()))?;
    vm.handles[start] = arr;
    h.truncate(vm, start + 1);
    Ok(start)
}

/// The packages of `packages` that name no package the VM can load classes
/// from ([`lupa_vm::Image::resolve_package`]), with the message that says so
/// and names the packages there are; `None` when every one exists.
pub fn unknown_packages(vm: &Vm, packages: &[String]) -> Option<String> {
    let unknown: Vec<&str> = packages
        .iter()
        .filter(|p| vm.image.resolve_package(p).is_empty())
        .map(String::as_str)
        .collect();
    if unknown.is_empty() {
        return None;
    }
    let mut known: Vec<String> = vm.image.packages().into_iter().map(|p| p.name).collect();
    known.sort();
    known.dedup();
    Some(format!(
        "no package {} (the packages are: {})",
        unknown.join(", "),
        known.join(", ")
    ))
}
