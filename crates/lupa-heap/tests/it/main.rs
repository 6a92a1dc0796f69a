//! The integration tests of lupa-heap, one test binary (one module per
//! area) so that the workspace links few test programs.

mod alloc_sampling;
mod gc;
mod generational;
mod model;
