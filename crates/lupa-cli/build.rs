//! The git revision of the build, for `lupa --version` (`LUPA_GIT_REV`):
//! the short hash of the checkout's HEAD, or "no git revision" when the
//! sources are not a git checkout (a crate tarball) or git is not installed.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn main() {
    let rev = git(&["rev-parse", "--short=10", "HEAD"])
        .map(|r| format!("git {r}"))
        .unwrap_or_else(|| "no git revision".to_string());
    println!("cargo:rustc-env=LUPA_GIT_REV={rev}");
    // Built again when HEAD moves: a commit or a checkout (HEAD names a
    // branch whose ref file, loose or packed, changes).
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        let common = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"])
            .unwrap_or_else(|| dir.clone());
        println!("cargo:rerun-if-changed={common}/packed-refs");
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={common}/{branch}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
