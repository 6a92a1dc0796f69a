//! The integration tests of lupa-cli, one test binary (one module per
//! area) so that the workspace links few test programs.

mod blueprint;
mod cli;
mod common;
mod data_kept;
mod fuzz;
mod gc;
mod gcbench;
mod gcbench_dataframe;
mod gctune;
mod help;
mod history;
mod history_pg;
mod hostile;
mod jit;
mod lifetimes;
mod lifetimes_allocators;
mod lifetimes_rate;
mod profile;
mod proxies;
mod readme;
mod som_integration;
mod spy;
mod streams;
mod suites;
mod vm_doors;
mod vm_tables;
