//! The one error of the profiler lifecycle: why a profiler could not be
//! named, started, run or finished, or its outputs merged.
//!
//! Contract: a failure of the VM itself (a class that cannot be found, a
//! Smalltalk error in a profiler written in Smalltalk, an I/O error) is
//! [`ProfilerError::Vm`] with the VM's error unchanged, so that a command
//! line reports it as it reports any run; [`VmError::from`] gives it back
//! (every other error becomes a fatal error carrying its message).

use lupa_vm::VmError;

use crate::sampler::SamplerError;

/// Why a profiler cannot do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ProfilerError {
    /// No profiler has this name ([`crate::ProfileMode`]'s `FromStr`).
    #[error(
        "unknown profiler `{0}` (expected compteur, timing, sampling, sampling:HZ, lifetimes, coverage, types or blueprint)"
    )]
    Unknown(String),
    /// The sampler cannot start.
    #[error(transparent)]
    Sampler(#[from] SamplerError),
    /// A configuration value is out of range.
    #[error("{0}")]
    Config(String),
    /// The VM failed (or the profiler's Smalltalk side did).
    #[error(transparent)]
    Vm(#[from] VmError),
    /// This profiler is not started from inside a running program.
    #[error("the {profiler} profiler cannot be started from Smalltalk: {why}")]
    NotFromSmalltalk {
        /// The profiler's name.
        profiler: &'static str,
        /// What to do instead.
        why: &'static str,
    },
    /// The profiler cannot run this workload (the blueprint needs a program).
    #[error("{0}")]
    Workload(String),
    /// An output is not what was asked for (a profile from a coverage run),
    /// or two outputs cannot be merged.
    #[error("{0}")]
    Output(String),
}

impl From<ProfilerError> for VmError {
    fn from(e: ProfilerError) -> VmError {
        match e {
            ProfilerError::Vm(e) => e,
            other => VmError::Fatal(other.to_string()),
        }
    }
}
