//! The program's standard streams. Standard output is buffered, optionally
//! discarded (`quiet`) or captured in memory (tests and tools read it with
//! [`Io::take_captured`]). When it is a terminal or a pipe, a print that ends
//! a line flushes it (one write per print, not per character), and the VM
//! flushes it before it sleeps idle: a VM killed or aborting loses at most
//! the line being written. A regular file keeps the full 64 KiB buffer. Standard error ([`Io::print_err`]: `System>>errorPrint:`,
//! `printStackTrace`, `halt`, diagnostics of the program's own actions) is written
//! unbuffered, after flushing standard output so that the two interleave as the
//! program wrote them. This file is the only place the VM library writes to the
//! process's streams.

use super::Io;
use crate::VmError;
use std::io::Write;

impl Io {
    /// Write to standard output (buffered). Fails when standard output cannot be
    /// written (a closed pipe, a full disk): the program must stop rather than
    /// run on with its output lost.
    pub fn print(&mut self, s: &str) -> Result<(), VmError> {
        if let Some(buf) = self.captured.as_mut() {
            buf.push_str(s);
        } else if !self.quiet {
            self.out.write_all(s.as_bytes()).map_err(output_error)?;
            if self.line_flush && s.contains('\n') {
                self.out.flush().map_err(output_error)?;
            }
        }
        Ok(())
    }

    /// Write to standard error (after flushing standard output; a failure to
    /// write either is ignored here: this reports a problem already).
    pub fn print_err(&mut self, s: &str) {
        let _ = self.flush();
        let _ = std::io::stderr().write_all(s.as_bytes());
    }

    /// Send the program's standard output to standard error from now on (a
    /// profiler writing its report to standard output keeps the two apart).
    pub fn send_output_to_stderr(&mut self) -> Result<(), VmError> {
        self.flush()?;
        self.out = std::io::BufWriter::with_capacity(1 << 16, Box::new(std::io::stderr()));
        self.line_flush = true;
        Ok(())
    }

    /// Capture the program's standard output in memory from now on.
    pub fn capture_output(&mut self) {
        self.captured = Some(String::new());
    }

    /// Take what was captured so far.
    pub fn take_captured(&mut self) -> String {
        self.captured
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Flush standard output; fails as [`Io::print`] does.
    pub fn flush(&mut self) -> Result<(), VmError> {
        self.out.flush().map_err(output_error)
    }
}

/// The error that stops a program whose standard output cannot be written.
fn output_error(e: std::io::Error) -> VmError {
    VmError::Io(format!("cannot write the program's standard output: {e}"))
}

/// Is standard output a terminal or a pipe (where a reader is waiting for
/// lines), rather than a regular file or `/dev/null`?
pub(super) fn stdout_wants_lines() -> bool {
    use std::io::IsTerminal;
    let out = std::io::stdout();
    if out.is_terminal() {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        out.as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
    }
    #[cfg(not(unix))]
    {
        false
    }
}
