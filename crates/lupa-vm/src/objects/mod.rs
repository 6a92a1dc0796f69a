//! The object model on the Rust side: well-known classes, class descriptions,
//! runtime method code, numbers and trivial methods, one file each (symbols
//! are the image's, `image/symbols.rs`):
//!
//! - [`cls`] (`objects/cls.rs`): the fixed indices and names of the kernel classes;
//! - `objects/classes.rs`: [`Shape`] and [`ClassInfo`], a class as the VM sees it;
//! - `objects/method_code.rs`: [`MethodCode`], [`InlineCache`] and [`PrimId`];
//! - `objects/layout.rs`: the slots of block closures and environments;
//! - `objects/native.rs`: the boundary with native code made by a JIT ([`native::NativeCtx`]);
//! - `objects/numbers.rs`: large Integers and boxed Doubles, made and read with the heap;
//! - `objects/trivial.rs`: [`Trivial`], methods that run without a frame;
//!
//! Every item is re-exported here, so `crate::objects::X` is the one path to
//! use inside the crate (outside it, only `lupa_vm::cls` can be named).

mod classes;
pub mod cls;
pub mod layout;
mod method_code;
pub(crate) mod native;
pub(crate) mod numbers;
mod trivial;

pub(crate) use classes::{ClassInfo, Shape};
pub(crate) use method_code::PrimId;
pub use method_code::{InlineCache, MethodCode, PIC_SIZE};
pub(crate) use method_code::{pic_fill, pic_lookup};
pub use trivial::Trivial;
