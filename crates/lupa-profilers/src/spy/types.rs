//! Type feedback ([`crate::ProfileMode::Types`], `lupa types`): Spy's
//! `TypeProfiler` over the configured packages while SUnit tests or a program
//! run; per method, the generalised classes of its arguments and answer, and
//! the argument classes that sibling implementations saw and it did not (a
//! [`lupa_prof::types::Types`]).

use lupa_prof::types::{MethodTypes, Types, VERSION, parse_signature};
use lupa_vm::{Value, Vm, VmError};

use super::coverage::instrumented;
use super::{Handles, class_array, count, elements, new_profiler, send, string_array, text};
use crate::workload::Workload;

/// What to profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypesConfig {
    /// The packages whose methods are profiled.
    pub packages: Vec<String>,
}

impl TypesConfig {
    /// No package yet.
    pub const DEFAULT: TypesConfig = TypesConfig {
        packages: Vec::new(),
    };
}

impl Default for TypesConfig {
    fn default() -> TypesConfig {
        TypesConfig::DEFAULT
    }
}

/// A running type profiler (of [`crate::ProfileMode::Types`]): Spy's
/// `TypeProfiler`, rooted.
pub(crate) struct RunningTypes {
    h: Handles,
    profiler: usize,
    config: TypesConfig,
}

impl RunningTypes {
    /// Make the profiler.
    pub(crate) fn start(vm: &mut Vm, config: &TypesConfig) -> Result<RunningTypes, VmError> {
        let (h, profiler) = new_profiler(vm, "TypeProfiler")?;
        Ok(RunningTypes {
            h,
            profiler,
            config: config.clone(),
        })
    }

    /// Run the workload profiled: test classes (their output as `lupa test`
    /// prints it; the status is 1 when a test did not pass), or a program.
    pub(crate) fn run(&mut self, vm: &mut Vm, workload: Workload<'_>) -> Result<i32, VmError> {
        let (h, p) = (&self.h, self.profiler);
        let names = string_array(vm, h, &self.config.packages)?;
        let ran = match workload {
            Workload::Tests(tests) => {
                let classes = class_array(vm, h, tests)?;
                let (classes, names) = (h.get(vm, classes), h.get(vm, names));
                send(
                    vm,
                    h,
                    p,
                    "runTestClasses:inPackagesNamed:",
                    &[classes, names],
                )
                .and_then(|_| send(vm, h, p, "testsPassed", &[]))
                .map(|passed| if passed == Value::TRUE { 0 } else { 1 })
            }
            Workload::Program(args) => {
                let names = h.get(vm, names);
                instrumented(vm, h, p, names, args)
            }
        };
        h.truncate(vm, p + 1);
        ran
    }

    /// Read what the profiler found (the command is left empty).
    pub(crate) fn finish(self, vm: &mut Vm) -> Result<Types, VmError> {
        let read = read(vm, &self.h, self.profiler);
        self.h.release(vm);
        read
    }
}

/// The types the profiler in `p` found.
fn read(vm: &mut Vm, h: &Handles, p: usize) -> Result<Types, VmError> {
    let v = send(vm, h, p, "allMethods", &[])?;
    let all = h.keep(vm, v);
    let spies = elements(vm, h, all, "allMethods")?;
    let mark = vm.handles.len();
    let mut methods = Vec::new();
    for spy in spies {
        h.truncate(vm, mark);
        let cs = send(vm, h, spy, "classSpy", &[])?;
        let name = vm.send_message(cs, "name", &[])?;
        let class = text(vm, name, "a class spy's name")?;
        let sel = send(vm, h, spy, "selector", &[])?;
        let selector = text(vm, sel, "selector")?;
        let calls = count(send(vm, h, spy, "numberOfCalls", &[])?, "numberOfCalls")?;
        let sig = send(vm, h, spy, "signature", &[])?;
        let signature = text(vm, sig, "signature")?;
        let (arguments, returns) = parse_signature(&signature);
        methods.push(MethodTypes {
            class,
            selector,
            calls,
            arguments,
            returns,
            signature,
        });
    }
    h.truncate(vm, mark);
    methods.sort_by(|a, b| a.signature.cmp(&b.signature));
    let v = send(vm, h, p, "missingArgumentClasses", &[])?;
    let m = h.keep(vm, v);
    let mut missing = Vec::new();
    for e in elements(vm, h, m, "missingArgumentClasses")? {
        let v: Value = h.get(vm, e);
        missing.push(text(vm, v, "a missing-class line")?);
    }
    Ok(Types {
        version: VERSION,
        command: String::new(),
        methods,
        missing,
    })
}
