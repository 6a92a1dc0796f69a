//! The program's standard streams. Standard output is buffered, optionally
//! discarded (`quiet`) or captured in memory (tests and tools read it with
//! [`Vm::take_captured`]). Standard error ([`Vm::print_err`]: `System>>errorPrint:`,
//! `printStackTrace`, `halt`, diagnostics of the program's own actions) is written
//! unbuffered, after flushing standard output so that the two interleave as the
//! program wrote them. This file is the only place the VM library writes to the
//! process's streams.

use super::Vm;
use std::io::Write;

impl Vm {
    /// Write to standard output (buffered).
    pub fn print(&mut self, s: &str) {
        if let Some(buf) = self.captured.as_mut() {
            buf.push_str(s);
        } else if !self.options.quiet {
            let _ = self.out.write_all(s.as_bytes());
        }
    }

    /// Write to standard error (after flushing standard output).
    pub fn print_err(&mut self, s: &str) {
        self.flush();
        let _ = std::io::stderr().write_all(s.as_bytes());
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

    /// Flush standard output.
    pub fn flush(&mut self) {
        let _ = self.out.flush();
    }
}
