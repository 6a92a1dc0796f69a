//! Native primitives, one module per class family, as data: each module has a
//! static table, [`PRIMITIVES`](object::PRIMITIVES) (class names, selector,
//! function), and [`MODULES`] lists the tables. A method is bound to the
//! primitive of its class name and selector (`Integer>>+`, the class side as
//! `Array class>>new:`), so SOM's core-lib and Lupa's own library bind to the
//! same implementations; `docs/primitives.md` is that contract, and a test
//! checks it against the tables (every primitive documented, nothing
//! documented that does not exist).
//!
//! A primitive is a [`PrimFn`]: `fn(&mut Vm, Args) -> PrimResult`. It decodes
//! its receiver and arguments with the typed accessors of [`Args`] (`?` on a
//! wrong argument), allocates with `?` (out of memory becomes an `error:`), and
//! answers a [`Reply`] or a [`PrimFailure`]; `outcome.rs` says what the send
//! path does with each. A method holds the [`PrimId`] of its primitive (module
//! and index in [`MODULES`]), which [`function`] turns into the function.

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
pub(crate) mod watch;

pub use args::Args;
pub use outcome::{Expected, PrimFailure, PrimResult, Reply};

use crate::objects::PrimId;
use crate::vm::Vm;
use lupa_heap::Value;

/// A native primitive: the receiver and its arguments are on top of the stack
/// (read through [`Args`]); `outcome.rs` says what the send path does with its
/// [`PrimResult`].
pub(crate) type PrimFn = fn(&mut Vm, Args) -> PrimResult;

/// One entry of a primitive table: the classes whose methods of `selector`
/// it is bound to (`"Array class"` for the class side), the function, and
/// whether it is an *allocator*.
#[derive(Clone, Copy)]
pub(crate) struct Primitive {
    /// Class names (the class side as `"Name class"`).
    pub(crate) classes: &'static [&'static str],
    /// The selector.
    pub(crate) selector: &'static str,
    /// The implementation.
    pub(crate) function: PrimFn,
    /// An allocator ([`Primitive::allocating`]): every answer that is a heap
    /// object, other than the receiver itself, is one it has just made.
    pub(crate) allocates: bool,
    /// A leaf ([`Primitive::leaf`]): native code may call it directly.
    pub(crate) leaf: bool,
}

impl Primitive {
    /// The primitive `function` bound to `selector` in each of `classes`.
    pub(crate) const fn new(
        classes: &'static [&'static str],
        selector: &'static str,
        function: PrimFn,
    ) -> Primitive {
        Primitive {
            classes,
            selector,
            function,
            allocates: false,
            leaf: false,
        }
    }

    /// The same primitive marked as an allocator: it answers a new object
    /// (`nil`, an immediate or the receiver itself aside; a Symbol's
    /// `shallowCopy` is the Symbol). Illimani's faithful mode instruments the
    /// methods bound to these (`System>>allocatingMethods`), and a unit test
    /// checks that each does allocate. Primitives whose new objects are
    /// numbers (arithmetic, `asDouble`, `asNumber`: the interpreter makes the
    /// same on its fast paths, without a send), error reporting's (`Context
    /// backtrace`) and the profilers' own (records, reports, deaths, the JIT's
    /// code map) are not marked.
    pub(crate) const fn allocating(self) -> Primitive {
        Primitive {
            allocates: true,
            ..self
        }
    }

    /// The same primitive marked as a *leaf*: it works on its receiver and
    /// arguments and answers a value or fails (`Reply::Answer` or a
    /// `PrimFailure`, never `Reply::Done`); it pushes or pops no frame, sends
    /// nothing, runs no Smalltalk code, switches no process, unwinds nothing
    /// and changes no method, class or inline cache (it may allocate, which
    /// never collects). A send site that native code specialised on a method
    /// bound to a leaf runs it by one runtime call (`Vm::native_primitive`)
    /// instead of the whole send.
    pub(crate) const fn leaf(self) -> Primitive {
        Primitive { leaf: true, ..self }
    }
}

/// Every module's table; a [`PrimId`] is a module's position here and the
/// entry's position in its table.
pub(crate) const MODULES: &[&[Primitive]] = &[
    object::PRIMITIVES,
    perform::PRIMITIVES,
    class::PRIMITIVES,
    method::PRIMITIVES,
    proxies::PRIMITIVES,
    integer::PRIMITIVES,
    double::PRIMITIVES,
    string::PRIMITIVES,
    array::PRIMITIVES,
    block::PRIMITIVES,
    boolean::PRIMITIVES,
    context::PRIMITIVES,
    process::PRIMITIVES,
    profiling::PRIMITIVES,
    system::PRIMITIVES,
    gc::PRIMITIVES,
    lifetimes::PRIMITIVES,
    file::PRIMITIVES,
    watch::PRIMITIVES,
];

/// The function of primitive `id`.
#[inline(always)]
pub(crate) fn function(id: PrimId) -> PrimFn {
    MODULES[id.module as usize][id.index as usize].function
}

/// Is primitive `id` a leaf ([`Primitive::leaf`])?
pub(crate) fn is_leaf(id: PrimId) -> bool {
    MODULES
        .get(id.module as usize)
        .and_then(|t| t.get(id.index as usize))
        .is_some_and(|p| p.leaf)
}

/// Every primitive's binding: `(class name, selector, id)`, one per class it
/// is bound to (what the image binds methods by).
pub(crate) fn bindings() -> impl Iterator<Item = (&'static str, &'static str, PrimId)> {
    MODULES.iter().enumerate().flat_map(|(m, table)| {
        table.iter().enumerate().flat_map(move |(i, p)| {
            let id = PrimId {
                module: m as u16,
                index: i as u16,
            };
            p.classes.iter().map(move |c| (*c, p.selector, id))
        })
    })
}

/// The bindings of the allocators ([`Primitive::allocating`]), as
/// [`bindings`] gives them.
pub(crate) fn allocating_bindings() -> impl Iterator<Item = (&'static str, &'static str, PrimId)> {
    bindings().filter(|(_, _, id)| MODULES[id.module as usize][id.index as usize].allocates)
}

/// Receiver (`i == 0`) or argument `i` of a primitive with `argc` arguments.
#[inline(always)]
pub(crate) fn arg(vm: &Vm, argc: usize, i: usize) -> Value {
    vm.sched.running.stack[vm.sched.running.stack.len() - 1 - argc + i]
}

#[cfg(test)]
mod tests;
