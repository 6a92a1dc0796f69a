//! What a new user reads first: `--help` (the command's own options before
//! the shared VM flags), `--version`, the shell completions and the man page.

use crate::common::lupa;

/// Every command that runs a VM lists its own options first, then the VM
/// flags under their own heading; `-cp` is named.
#[test]
fn own_options_before_the_vm_flags() {
    for (command, own) in [
        ("count", "--calibration"),
        ("profile", "--rate"),
        ("lifetimes", "--stack-depth"),
        ("coverage", "--no-lines"),
        ("run", "--help"),
    ] {
        let r = lupa(&[command, "--help"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let at = |s: &str| {
            r.stdout
                .find(s)
                .unwrap_or_else(|| panic!("{command}: no {s}"))
        };
        let heading = at("VM options (shared by the commands that run a VM):");
        assert!(at(own) < heading, "{command}: {}", r.stdout);
        assert!(heading < at("--eden-size"), "{command}: {}", r.stdout);
        assert!(heading < at("--cp <DIR:DIR>"), "{command}: {}", r.stdout);
        assert!(r.stdout.contains("-cp"), "{command}");
    }
}

#[test]
fn version_names_the_git_revision() {
    let r = lupa(&["--version"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("lupa 0."), "{}", r.stdout);
    assert!(
        r.stdout.contains("(git ") || r.stdout.contains("(no git revision)"),
        "{}",
        r.stdout
    );
}

#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef lupa"),
        ("fish", "complete -c lupa"),
    ] {
        let r = lupa(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains(marker), "{shell}");
        assert!(r.stdout.contains("calibration"), "{shell}: count's options");
    }
    let r = lupa(&["completions", "tcsh"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn man_pages_of_lupa_and_of_a_command() {
    let r = lupa(&["man"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(".TH lupa"), "{}", r.stdout);
    let r = lupa(&["man", "count"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(".TH lupa-count"), "{}", r.stdout);
    assert!(r.stdout.contains("calibration"));
    let r = lupa(&["man", "nope"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no command nope"), "{}", r.stderr);
}
