//! The integration tests of lupa-vm, one test binary (one module per
//! area) so that the workspace links few test programs.

mod coverage;
mod delay;
mod fuzz_pipeline;
mod observe;
mod side_tables;
