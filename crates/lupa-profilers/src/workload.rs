//! [`Workload`]: what a profiler runs, a program or SUnit test classes, and
//! how it runs without a profiler's help. Every profiler takes one
//! ([`crate::RunningProfiler::run`], [`crate::ProfileMode::run`]); the
//! profilers that run it their own way read it from here too.

use lupa_vm::{Vm, VmError};

/// What a profiler runs.
#[derive(Debug, Clone, Copy)]
pub enum Workload<'a> {
    /// A program: `CLASS ARGS` as `lupa run` takes them (`Vm::run_main`; the
    /// class is expected to be loaded).
    Program(&'a [String]),
    /// SUnit test classes, as `lupa test` runs them.
    Tests(&'a [u32]),
}

impl Workload<'_> {
    /// Run it without a profiler's help: the program's status, or 0 when
    /// every test passed and 1 otherwise.
    pub fn run(self, vm: &mut Vm) -> Result<i32, VmError> {
        match self {
            Workload::Program(args) => vm.run_main(args),
            Workload::Tests(classes) => {
                let summary = vm.run_test_classes(classes)?;
                Ok(if summary.ok() { 0 } else { 1 })
            }
        }
    }

    /// What runs, in a few words: the program and its arguments, or the
    /// test classes' names.
    pub fn describe(self, vm: &Vm) -> String {
        match self {
            Workload::Program(args) => args.join(" "),
            Workload::Tests(classes) => classes
                .iter()
                .map(|&c| vm.image.class_name(c).to_string())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}
