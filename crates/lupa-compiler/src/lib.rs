//! Lupa's bytecode compiler: turns a parsed method ([`lupa_syntax::MethodDef`])
//! into [`CompiledCode`], inlining the usual control structures.
//!
//! See [`bytecode`] for the instruction set and the frame/variable model. The
//! compiler runs three passes (`lower`: names, captures and inlining decisions;
//! `alloc`: stack or env slots; `emit`: instructions; the docs of `emit.rs` list
//! the exact code of every inlined control structure). [`verify`] checks the
//! invariants of compiled code and [`disassemble`] lists it.

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod alloc;
pub mod bytecode;
mod codegen;
mod disasm;
mod emit;
mod ir;
mod lower;
mod verify;

pub use bytecode::*;
pub use codegen::compile_method;
pub use disasm::disassemble;
pub use verify::verify;
