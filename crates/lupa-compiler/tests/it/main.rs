//! The integration tests of lupa-compiler, one test binary (one module per
//! area) so that the workspace links few test programs.

mod ast;
mod codegen;
mod random_ast;
mod som_corpus;
