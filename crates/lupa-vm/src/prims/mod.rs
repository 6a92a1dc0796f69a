//! Native primitives, one module per class family. Each is registered under the
//! class name and selector that the class library declares (`Integer>>+`,
//! `Array class>>new:`), so SOM's core-lib and Lupa's own library bind to the
//! same implementations.

pub(crate) mod array;
pub(crate) mod block;
pub(crate) mod class;
pub(crate) mod context;
pub(crate) mod double;
pub(crate) mod integer;
pub(crate) mod method;
pub(crate) mod object;
pub(crate) mod perform;
pub(crate) mod process;
pub(crate) mod proxies;
pub(crate) mod string;
pub(crate) mod system;

use crate::interp::Prim;
use crate::objects::PrimFn;
use crate::vm::Vm;
use lupa_heap::{OutOfMemory, Value};

/// Receiver (`i == 0`) or argument `i` of a primitive with `argc` arguments.
#[inline(always)]
pub(crate) fn arg(vm: &Vm, argc: usize, i: usize) -> Value {
    vm.stack[vm.stack.len() - 1 - argc + i]
}

/// Map an allocation failure to a primitive error.
pub(crate) fn oom(e: OutOfMemory) -> Prim {
    Prim::Error(format!("out of memory: {e}"))
}

/// `?`-like helper for allocation inside primitives.
macro_rules! tryalloc {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return $crate::prims::oom(e),
        }
    };
}
pub(crate) use tryalloc;

impl Vm {
    pub(crate) fn register(&mut self, class: &'static str, selector: &'static str, f: PrimFn) {
        self.prims.insert(format!("{class}>>{selector}"), f);
    }

    pub(crate) fn find_primitive(&self, class: &str, selector: &str) -> Option<PrimFn> {
        self.prims.get(&format!("{class}>>{selector}")).copied()
    }
}

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
    context::register(vm);
    process::register(vm);
    system::register(vm);
}
