//! The integration tests of lupa-syntax, one test binary (one module per
//! area) so that the workspace links few test programs.

mod corpus;
mod diagnostics;
mod parse;
mod robustness;
