//! Ctrl-C (SIGINT) and SIGTERM during a command that profiles a program
//! (`count`, `profile`, `lifetimes`, `coverage`, `history record`): the first
//! signal asks the VM to stop at its next safepoint
//! ([`lupa_vm::interrupt`]); the command then writes the report of what ran
//! (saying it was interrupted), cleans up (`history record --git` removes its
//! worktree) and exits 130 (SIGINT) or 143 (SIGTERM). A second signal ends
//! the process at once with that status (for a program that does not reach
//! a safepoint, such as one inside a long primitive). Other commands keep
//! the default behaviour (the process ends).
//!
//! The signals are received by a thread of their own (`signal_hook`'s
//! iterator: its handler only writes to a pipe), which sets the VM's atomic
//! request word.

use lupa_vm::VmError;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Handle SIGINT and SIGTERM as this module says, from now on. When the
/// handlers cannot be installed, the signals keep their default action.
pub(crate) fn stop_gracefully() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("lupa-signals".to_string())
        .spawn(move || {
            for signal in signals.forever() {
                let status = 128 + signal;
                if !lupa_vm::interrupt::request(status) {
                    // The second signal: the user insists.
                    std::process::exit(lupa_vm::interrupt::requested().unwrap_or(status));
                }
            }
        });
}

/// The name of the signal behind an interrupted run's exit status.
fn signal_name(status: i32) -> &'static str {
    match status - 128 {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// The line a report's header carries when the run was interrupted (None
/// otherwise).
pub(crate) fn interrupted_line() -> Option<String> {
    lupa_vm::interrupt::requested().map(|status| {
        format!(
            "interrupted ({}): the profile covers the run until then",
            signal_name(status)
        )
    })
}

/// A profiled program's status: an interrupted run is not an error here
/// (its profile is written, and the process exits 128 + the signal), said
/// on standard error.
pub(crate) fn program_status(result: Result<i32, VmError>) -> Result<i32, VmError> {
    match result {
        Err(VmError::Interrupted(status)) => {
            eprintln!(
                "lupa: interrupted ({}); writing the report of what ran",
                signal_name(status)
            );
            Ok(status)
        }
        r => r,
    }
}
