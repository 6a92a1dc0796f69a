//! Native primitives, one module per class family. Each is registered under the
//! class name and selector that the class library declares (`Integer>>+`,
//! `Array class>>new:`), so SOM's core-lib and Lupa's own library bind to the
//! same implementations (`docs/primitives.md` is that contract).
//!
//! A primitive is a [`PrimFn`]: `fn(&mut Vm, Args) -> PrimResult`. It decodes
//! its receiver and arguments with the typed accessors of [`Args`] (`?` on a
//! wrong argument), allocates with `?` (out of memory becomes an `error:`), and
//! answers a [`Reply`] or a [`PrimFailure`]; `outcome.rs` says what the send
//! path does with each.

pub(crate) mod args;
pub(crate) mod outcome;

pub(crate) mod array;
pub(crate) mod block;
pub(crate) mod boolean;
pub(crate) mod class;
pub(crate) mod context;
pub(crate) mod double;
mod file;
pub(crate) mod gc;
pub(crate) mod integer;
mod lifetimes;
pub(crate) mod method;
pub(crate) mod object;
pub(crate) mod perform;
pub(crate) mod process;
pub(crate) mod profiling;
pub(crate) mod proxies;
pub(crate) mod string;
pub(crate) mod system;

pub use args::Args;
pub use outcome::{Expected, PrimFailure, PrimResult, Reply};

use crate::objects::PrimFn;
use crate::vm::Vm;
use lupa_heap::Value;

/// Receiver (`i == 0`) or argument `i` of a primitive with `argc` arguments.
#[inline(always)]
pub(crate) fn arg(vm: &Vm, argc: usize, i: usize) -> Value {
    vm.running.stack[vm.running.stack.len() - 1 - argc + i]
}

impl Vm {
    /// Bind `f` as the primitive of `class>>selector` (`"Array class"` for the class side).
    pub(crate) fn register(&mut self, class: &'static str, selector: &'static str, f: PrimFn) {
        self.prims.insert(format!("{class}>>{selector}"), f);
    }

    /// The primitive registered for `class>>selector`, if any.
    pub(crate) fn find_primitive(&self, class: &str, selector: &str) -> Option<PrimFn> {
        self.prims.get(&format!("{class}>>{selector}")).copied()
    }
}

/// Register every primitive of every class family (at VM creation).
pub(crate) fn register_all(vm: &mut Vm) {
    object::register(vm);
    perform::register(vm);
    class::register(vm);
    method::register(vm);
    proxies::register(vm);
    integer::register(vm);
    double::register(vm);
    string::register(vm);
    array::register(vm);
    block::register(vm);
    boolean::register(vm);
    context::register(vm);
    process::register(vm);
    profiling::register(vm);
    system::register(vm);
    gc::register(vm);
    lifetimes::register(vm);
    file::register(vm);
}

#[cfg(test)]
mod tests;
