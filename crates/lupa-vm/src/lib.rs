//! The Lupa virtual machine: runs SOM Smalltalk with observation built in.
//!
//! - [`Vm`] owns the heap, the class table, the method table and the processes;
//! - [`interp`] is the non-recursive bytecode interpreter;
//! - [`prims`] holds the native primitives, one module per class family;
//! - [`observe`] holds the observation points (send counter, activation hooks,
//!   sampling register).

pub mod interp;
pub mod objects;
pub mod observe;
pub(crate) mod prims;
pub mod process;
pub mod query;
mod vm;

pub use lupa_compiler::CodeKind;
pub use lupa_heap::{CollectionKind, Death, GcParam, HeapConfig, HeapStats, Value};
pub use objects::cls;
pub use observe::{Activation, ActivationHooks, GcEvent, GcHooks, Observation, SampleRegister};
pub use prims::{Args, Expected, PrimFailure, PrimResult, Reply};
pub use query::MethodDescription;
pub use vm::{BUNDLED, Lookup, Vm, VmError, VmOptions};

impl Vm {
    /// Run a program the SOM way: `system initialize: #('ClassName' 'arg'...)`.
    /// Answers the process exit code.
    pub fn run_main(&mut self, args: &[String]) -> Result<i32, VmError> {
        self.program_args = args.to_vec();
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.new_string(a)?);
        }
        let arr = self.new_array(&vals)?;
        let sys = self.system_object;
        let r = self.send_message(sys, "initialize:", &[arr]);
        self.flush();
        match r {
            Ok(_) => Ok(0),
            Err(VmError::Exit(code)) => Ok(code),
            Err(e) => Err(e),
        }
    }

    /// Answer the class object for a name, loading it if needed.
    pub fn class_named(&mut self, name: &str) -> Result<lupa_heap::Value, VmError> {
        let c = self.load_class_by_name(name)?;
        Ok(self.class_object(c))
    }

    /// Total messages sent so far.
    pub fn send_count(&self) -> u64 {
        self.obs.sends
    }
}
