//! `lupa man [COMMAND]`: the manual page (roff, for `man -l -`), generated
//! from the clap definitions by clap_mangen: lupa(1), or lupa-COMMAND(1) for
//! one command.

use clap::Args;
use std::process::ExitCode;

/// `lupa man` arguments.
#[derive(Args, Debug)]
pub(crate) struct ManArgs {
    /// The command whose page to write (default: the page of lupa itself, which lists them).
    command: Option<String>,
}

/// Write the page to standard output (exit 2 for an unknown command).
pub(crate) fn main(a: &ManArgs) -> ExitCode {
    let lupa = crate::command();
    let cmd = match &a.command {
        None => lupa,
        Some(name) => match lupa.find_subcommand(name) {
            Some(sub) => {
                let page = format!("lupa-{name}");
                sub.clone()
                    .name(page.clone())
                    .bin_name(format!("lupa {name}"))
                    .display_name(page)
                    .version(crate::VERSION)
            }
            None => {
                eprintln!("lupa man: no command {name} (see lupa --help)");
                return ExitCode::from(2);
            }
        },
    };
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(cmd).render(&mut out) {
        eprintln!("lupa man: {e}");
        return ExitCode::from(74);
    }
    crate::save::write_stdout(&out)
}
