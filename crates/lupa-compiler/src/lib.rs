//! Lupa's bytecode compiler: turns a parsed method ([`lupa_syntax::MethodDef`])
//! into [`CompiledCode`], inlining the usual control structures.
//!
//! See [`bytecode`] for the instruction set and the frame/variable model.

pub mod bytecode;
mod codegen;

pub use bytecode::*;
pub use codegen::compile_method;
