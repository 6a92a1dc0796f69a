//! Typed access to a primitive's receiver and arguments.
//!
//! [`Args`] is a copyable handle (the argument count): each accessor reads one
//! slot from the stack through [`arg`] when it is called (nothing is
//! copied up front, nothing allocated) and checks its kind, failing with
//! [`PrimFailure::WrongArg`] naming the argument (0 = the receiver) and the
//! [`Expected`] kind, so that primitives decode with `?`:
//!
//! ```text
//! fn at(vm: &mut Vm, args: Args) -> PrimResult {
//!     let i = args.int(vm, 1)?;
//!     ...
//! }
//! ```
//!
//! A primitive whose contract is to report a wrong argument with a message
//! rather than to fail converts the failure with
//! [`or_error`](super::outcome::OrError::or_error).

use super::arg;
use super::outcome::{Expected, PrimFailure};
use crate::objects::{MethodCode, cls};
use crate::vm::Vm;
use lupa_heap::Value;
use num_bigint::BigInt;
use std::rc::Rc;

/// The receiver and arguments of a running primitive (on top of the stack).
#[derive(Debug, Clone, Copy)]
pub struct Args {
    argc: usize,
}

impl Args {
    /// The arguments of a primitive called with `argc` arguments.
    #[inline(always)]
    pub(crate) fn new(argc: usize) -> Args {
        Args { argc }
    }

    /// Number of arguments (the receiver not counted).
    #[inline(always)]
    pub fn count(self) -> usize {
        self.argc
    }

    /// The receiver.
    #[inline(always)]
    pub(crate) fn receiver(self, vm: &Vm) -> Value {
        arg(vm, self.argc, 0)
    }

    /// Argument `i` (0 = the receiver), of any kind.
    #[inline(always)]
    pub(crate) fn get(self, vm: &Vm, i: usize) -> Value {
        arg(vm, self.argc, i)
    }

    /// Argument `i` as a SmallInteger.
    #[inline(always)]
    pub(crate) fn int(self, vm: &Vm, i: usize) -> Result<i64, PrimFailure> {
        match self.get(vm, i).as_int() {
            Some(n) => Ok(n),
            None => Err(PrimFailure::wrong(i, Expected::SmallInteger)),
        }
    }

    /// Argument `i` as an Integer (small or large).
    #[inline]
    pub(crate) fn integer(self, vm: &Vm, i: usize) -> Result<BigInt, PrimFailure> {
        super::integer::big_of(vm, self.get(vm, i))
            .ok_or_else(|| PrimFailure::wrong(i, Expected::Integer))
    }

    /// Argument `i` as a number (Integer or Double) converted to `f64`.
    #[inline]
    pub(crate) fn number(self, vm: &Vm, i: usize) -> Result<f64, PrimFailure> {
        let v = self.get(vm, i);
        let x = vm
            .number_as_f64(v)
            .ok_or_else(|| PrimFailure::wrong(i, Expected::Number))?;
        if x.is_infinite() && !v.is_float() && vm.heap.class_index(v) != cls::DOUBLE {
            // An Integer beyond the Doubles: an error, not a silent infinity.
            return Err(PrimFailure::Error("Can't represent as double.".to_string()));
        }
        Ok(x)
    }

    /// The text of argument `i`, a String or Symbol (any byte object; invalid
    /// UTF-8 is replaced).
    #[inline]
    pub(crate) fn string(self, vm: &Vm, i: usize) -> Result<String, PrimFailure> {
        vm.string_of(self.get(vm, i))
            .ok_or_else(|| PrimFailure::wrong(i, Expected::String))
    }

    /// The symbol id of argument `i`, a Symbol.
    #[inline]
    pub(crate) fn symbol(self, vm: &mut Vm, i: usize) -> Result<u32, PrimFailure> {
        let v = self.get(vm, i);
        vm.symbol_id(v)
            .ok_or_else(|| PrimFailure::wrong(i, Expected::Symbol))
    }

    /// [`Args::symbol`], failing with SOM's message when argument `i` is not
    /// a Symbol (a String included): "Expected instance of 'Symbol' but got
    /// instance of 'String'.".
    pub(crate) fn symbol_named(self, vm: &mut Vm, i: usize) -> Result<u32, PrimFailure> {
        self.symbol(vm, i).map_err(|_| {
            let got = self.get(vm, i);
            let class = vm.image.class_name(vm.class_of(got));
            PrimFailure::Error(format!(
                "Expected instance of 'Symbol' but got instance of '{class}'."
            ))
        })
    }

    /// The class index of argument `i`, a class or metaclass object.
    #[inline]
    pub(crate) fn class(self, vm: &mut Vm, i: usize) -> Result<u32, PrimFailure> {
        let v = self.get(vm, i);
        vm.class_index_of_object(v)
            .ok_or_else(|| PrimFailure::wrong(i, Expected::Class))
    }

    /// The code of argument `i`, a Method or Primitive object.
    #[inline]
    pub(crate) fn method(self, vm: &mut Vm, i: usize) -> Result<Rc<MethodCode>, PrimFailure> {
        let v = self.get(vm, i);
        vm.image
            .method_code_of(&vm.heap, v)
            .ok_or_else(|| PrimFailure::wrong(i, Expected::Method))
    }

    /// Argument `i`, checked to be a block.
    #[inline]
    pub(crate) fn block(self, vm: &Vm, i: usize) -> Result<Value, PrimFailure> {
        let b = self.get(vm, i);
        match vm.closure_code(b) {
            Some(_) => Ok(b),
            None => Err(PrimFailure::wrong(i, Expected::Block)),
        }
    }

    /// The elements of argument `i`, an Array.
    #[inline]
    pub(crate) fn array_elements(self, vm: &Vm, i: usize) -> Result<Vec<Value>, PrimFailure> {
        let a = self.get(vm, i);
        if a.is_ptr() && vm.heap.class_index(a) == cls::ARRAY {
            Ok((0..vm.heap.size(a)).map(|k| vm.heap.slot(a, k)).collect())
        } else {
            Err(PrimFailure::wrong(i, Expected::Array))
        }
    }

    /// The process index of argument `i`, a Process.
    #[inline]
    pub(crate) fn process(self, vm: &mut Vm, i: usize) -> Result<usize, PrimFailure> {
        let v = self.get(vm, i);
        vm.process_index(v)
            .ok_or_else(|| PrimFailure::wrong(i, Expected::Process))
    }

    /// The semaphore index of argument `i`, a Semaphore.
    #[inline]
    pub(crate) fn semaphore(self, vm: &mut Vm, i: usize) -> Result<usize, PrimFailure> {
        let v = self.get(vm, i);
        super::process::sem_index(vm, v).ok_or_else(|| PrimFailure::wrong(i, Expected::Semaphore))
    }
}
