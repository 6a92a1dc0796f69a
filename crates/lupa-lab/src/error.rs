//! [`LabError`]: why an experiment stopped, in four kinds that the `lupa`
//! command maps to its exit codes (the VM's own, 1, 74, 69), and the one
//! conversion of a run's failure ([`RunError`]) into it.

use crate::runs::RunError;
use lupa_vm::VmError;

/// Why an experiment stopped.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The VM failed (unknown class, compile error, a fatal error while
    /// profiling or measuring...).
    #[error("{0}")]
    Vm(VmError),
    /// The program failed, did not verify its result, or printed something
    /// the experiment cannot read.
    #[error("{0}")]
    Workload(String),
    /// A worker process could not be started, or a file cannot be written.
    #[error("{0}")]
    Io(String),
    /// The machine cannot run the experiment as asked (a memory limit
    /// without a memory cgroup this process may use, or without swap).
    #[error("{0}")]
    Unavailable(String),
}

impl From<VmError> for LabError {
    fn from(e: VmError) -> LabError {
        LabError::Vm(e)
    }
}

/// A lab error as the VM's: a workload failure is fatal (exit 70 in `lupa`),
/// an I/O failure an I/O error (74).
/// A run's failure as the experiment's: the VM's own, a worker that cannot
/// start (I/O), a machine that cannot run it; anything else is the
/// workload's.
impl From<RunError> for LabError {
    fn from(e: RunError) -> LabError {
        match e {
            RunError::Vm(e) => LabError::Vm(e),
            RunError::Spawn(m) => LabError::Io(m),
            RunError::Unavailable(m) => LabError::Unavailable(m),
            other => LabError::Workload(other.to_string()),
        }
    }
}

impl From<LabError> for VmError {
    fn from(e: LabError) -> VmError {
        match e {
            LabError::Vm(e) => e,
            LabError::Workload(m) => VmError::Fatal(m),
            LabError::Io(m) => VmError::Io(m),
            // No VM error says "the machine cannot": callers exit 69 themselves.
            LabError::Unavailable(m) => VmError::Fatal(m),
        }
    }
}
