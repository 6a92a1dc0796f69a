//! The program's input and output: its standard streams ([`Io::print`],
//! [`Io::print_err`], capture for tests and tools), the files it has open
//! (`File`, `files.rs`), its command-line arguments, the exit status it asked
//! for and the clock its `System>>ticks` reads.
//!
//! Standard output is buffered (flushed at line ends when it is a terminal or
//! a pipe, and before the VM sleeps), optionally discarded (`quiet`) or
//! captured in memory. Standard error is written unbuffered, after flushing standard output
//! so that the two interleave as the program wrote them. `output.rs` is the only
//! place the VM library writes to the process's streams.

pub(crate) mod files;
mod output;

pub(crate) use files::OpenFiles;
pub use files::write_target;

/// The program's streams, files, arguments and exit status.
pub struct Io {
    /// Discard standard output (`VmOptions::quiet`).
    pub(crate) quiet: bool,
    pub(crate) out: std::io::BufWriter<Box<dyn std::io::Write>>,
    /// Flush `out` at the end of every print that ends a line (standard
    /// output is a terminal or a pipe, `output.rs`).
    pub(crate) line_flush: bool,
    /// Standard output captured in memory instead (tests, tools).
    pub(crate) captured: Option<String>,
    /// The files the program has open (`File`, `prims/file.rs`).
    pub(crate) files: OpenFiles,
    /// The program's arguments (`System>>arguments`).
    pub(crate) program_args: Vec<String>,
    /// The status the program asked for with `system exit:`.
    pub(crate) exit_code: Option<i32>,
    /// SUnit tests are running (`run_test_classes`): `system exit:` is then an
    /// error of the test that sent it, so it cannot end the run and hide the
    /// results of the other tests.
    pub(crate) running_tests: bool,
    /// The process that runs the tests (while `running_tests`).
    pub(crate) test_process: usize,
    /// Processes forked by tests that ended with `system exit:` (an
    /// unhandled error): each counts as a failed test.
    pub(crate) failed_forks: u64,
    /// When the VM started (`System>>ticks`, `time`).
    pub(crate) start_time: std::time::Instant,
}

impl Io {
    /// Streams to the process's standard output and error.
    pub(crate) fn new(quiet: bool) -> Io {
        Io {
            quiet,
            out: std::io::BufWriter::with_capacity(1 << 16, Box::new(std::io::stdout())),
            line_flush: output::stdout_wants_lines(),
            captured: None,
            files: OpenFiles::default(),
            program_args: Vec::new(),
            exit_code: None,
            running_tests: false,
            test_process: 0,
            failed_forks: 0,
            start_time: std::time::Instant::now(),
        }
    }
}
