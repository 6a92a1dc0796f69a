//! `lupa completions SHELL`: the shell completion script of the whole
//! command line (clap_complete), generated from the same definitions as
//! `--help`, so that it never lists an option that does not exist.

use clap::{Args, ValueEnum};
use std::process::ExitCode;

/// The shells a completion script is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Shell {
    /// bash: `source <(lupa completions bash)`, or save it in
    /// /etc/bash_completion.d/lupa.
    Bash,
    /// zsh: save it as `_lupa` in a directory of `$fpath`.
    Zsh,
    /// fish: save it as ~/.config/fish/completions/lupa.fish.
    Fish,
}

/// `lupa completions` arguments.
#[derive(Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    shell: Shell,
}

/// Write the completion script to standard output.
pub(crate) fn main(a: &CompletionsArgs) -> ExitCode {
    let mut cmd = crate::command();
    let shell = match a.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "lupa", &mut out);
    crate::save::write_stdout(&out)
}
