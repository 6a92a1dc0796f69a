//! [`VmError`]: the errors that end a run (compile errors, missing classes,
//! `system exit:`, fatal runtime problems, I/O).

use lupa_heap::OutOfMemory;

/// Errors that end a run.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// A source file failed to parse or compile (already rendered with location).
    #[error("{0}")]
    Compile(String),
    /// A class could not be found on the class path.
    #[error("{0}")]
    ClassNotFound(String),
    /// The program exited via `system exit: code`.
    #[error("exit {0}")]
    Exit(i32),
    /// A fatal runtime problem (already described, with a backtrace when known).
    #[error("{0}")]
    Fatal(String),
    /// I/O problem reading a source file.
    #[error("{0}")]
    Io(String),
    /// The run was stopped from outside ([`crate::interrupt::request`]: Ctrl-C,
    /// SIGTERM) at a safepoint; the exit status the process should end with
    /// (128 + the signal number).
    #[error("interrupted")]
    Interrupted(i32),
}

impl From<OutOfMemory> for VmError {
    fn from(e: OutOfMemory) -> Self {
        VmError::Fatal(format!("{e}"))
    }
}
