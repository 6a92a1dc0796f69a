//! The integration tests of lupa-profilers, one test binary (one module per
//! area) so that the workspace links few test programs.

mod profile_program;
mod sampler;
