//! The git side of `lupa history record --git`: the revisions of a range and
//! detached worktrees of them in temporary directories.
//!
//! Contract: the user's working tree is never touched; a [`Worktree`] is
//! removed (and pruned from the repository's worktree list) when dropped,
//! whether the profiling of its revision succeeded or not. Git runs as a
//! child process (`git` on the `PATH`).

use crate::HistoryError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One revision to profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The full hash.
    pub hash: String,
    /// The abbreviated hash.
    pub short: String,
    /// The subject line of its message.
    pub subject: String,
}

impl Revision {
    /// The label of its version: short hash and subject.
    pub fn label(&self) -> String {
        if self.subject.is_empty() {
            self.short.clone()
        } else {
            format!("{} {}", self.short, self.subject)
        }
    }
}

/// Run `git -C repo ARGS`; its standard output, trimmed, or its error.
fn git(repo: &Path, args: &[&str]) -> Result<Result<String, String>, HistoryError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| HistoryError::Git(format!("cannot run git: {e}")))?;
    if out.status.success() {
        Ok(Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()))
    } else {
        Ok(Err(String::from_utf8_lossy(&out.stderr).trim().to_string()))
    }
}

/// The top directory of the repository at `repo`.
pub fn toplevel(repo: &Path) -> Result<PathBuf, HistoryError> {
    if !repo.is_dir() {
        return Err(HistoryError::NotAGitRepository {
            path: repo.to_path_buf(),
            reason: "no such directory".to_string(),
        });
    }
    match git(repo, &["rev-parse", "--show-toplevel"])? {
        Ok(top) if !top.is_empty() => Ok(PathBuf::from(top)),
        Ok(_) => Err(HistoryError::NotAGitRepository {
            path: repo.to_path_buf(),
            reason: "it has no working tree".to_string(),
        }),
        Err(reason) => Err(HistoryError::NotAGitRepository {
            path: repo.to_path_buf(),
            reason,
        }),
    }
}

/// The commit `rev` names, or [`HistoryError::UnknownRevision`].
fn resolve(repo: &Path, rev: &str) -> Result<String, HistoryError> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(HistoryError::UnknownRevision(rev.to_string()));
    }
    match git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )? {
        Ok(h) if !h.is_empty() => Ok(h),
        _ => Err(HistoryError::UnknownRevision(rev.to_string())),
    }
}

/// Every `every`-th revision of `range` (`A..B`: `git rev-list --reverse
/// A..B`; a single revision: just it), oldest first, always including the
/// last one.
pub fn revisions(repo: &Path, range: &str, every: usize) -> Result<Vec<Revision>, HistoryError> {
    let hashes: Vec<String> = match range.split_once("..") {
        Some((from, to)) => {
            let to = to.strip_prefix('.').unwrap_or(to);
            let from = resolve(repo, if from.is_empty() { "HEAD" } else { from })?;
            let to = resolve(repo, if to.is_empty() { "HEAD" } else { to })?;
            match git(repo, &["rev-list", "--reverse", &format!("{from}..{to}")])? {
                Ok(list) => list.lines().map(str::to_string).collect(),
                Err(e) => return Err(HistoryError::Git(e)),
            }
        }
        None => vec![resolve(repo, range)?],
    };
    if hashes.is_empty() {
        return Err(HistoryError::EmptyRange(range.to_string()));
    }
    let every = every.max(1);
    let last = hashes.len() - 1;
    let mut out = Vec::new();
    for (i, hash) in hashes.iter().enumerate() {
        if i % every != 0 && i != last {
            continue;
        }
        let line =
            git(repo, &["show", "-s", "--format=%h%x1f%s", hash])?.map_err(HistoryError::Git)?;
        let (short, subject) = line.split_once('\u{1f}').unwrap_or((line.as_str(), ""));
        out.push(Revision {
            hash: hash.clone(),
            short: short.to_string(),
            subject: subject.to_string(),
        });
    }
    Ok(out)
}

/// A detached worktree of one revision in a temporary directory, removed
/// when dropped.
#[derive(Debug)]
pub struct Worktree {
    repo: PathBuf,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Worktree {
    /// `git worktree add --detach` of `rev` into a new temporary directory,
    /// in a subdirectory named like the repository's top directory (so that
    /// its package names are those of the user's checkout).
    pub fn add(repo: &Path, rev: &Revision) -> Result<Worktree, HistoryError> {
        let top = toplevel(repo)?;
        let dir = tempfile::Builder::new()
            .prefix("lupa-history-")
            .tempdir()
            .map_err(|e| HistoryError::Io(format!("cannot create a temporary directory: {e}")))?;
        let name = top
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "checkout".into());
        let path = dir.path().join(name);
        let path_text = path.to_string_lossy().into_owned();
        match git(
            &top,
            &[
                "-c",
                "core.hooksPath=/dev/null",
                "worktree",
                "add",
                "--detach",
                "--quiet",
                &path_text,
                &rev.hash,
            ],
        )? {
            Ok(_) => Ok(Worktree {
                repo: top,
                path,
                _dir: dir,
            }),
            Err(e) => {
                // A half-made worktree is pruned like a removed one.
                let _ = git(&top, &["worktree", "prune"]);
                Err(HistoryError::Git(format!(
                    "cannot check out {} into a worktree: {e}",
                    rev.short
                )))
            }
        }
    }

    /// The checkout's top directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The repository's top directory (of the user's checkout).
    pub fn repository(&self) -> &Path {
        &self.repo
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let path = self.path.to_string_lossy().into_owned();
        let removed = matches!(
            git(&self.repo, &["worktree", "remove", "--force", &path]),
            Ok(Ok(_))
        );
        if !removed {
            let _ = std::fs::remove_dir_all(&self.path);
            let _ = git(&self.repo, &["worktree", "prune"]);
        }
    }
}

/// The class path of a program in `worktree`: relative entries inside the
/// worktree, absolute entries inside the user's checkout `top` moved to the
/// same place in the worktree, other absolute entries as they are; an
/// empty class path is the worktree's top directory.
pub fn class_path_in(class_path: &[PathBuf], top: &Path, worktree: &Path) -> Vec<PathBuf> {
    if class_path.is_empty() {
        return vec![worktree.to_path_buf()];
    }
    let top_real = top.canonicalize().unwrap_or_else(|_| top.to_path_buf());
    class_path
        .iter()
        .map(|p| {
            if p.is_relative() {
                return worktree.join(p);
            }
            let real = p.canonicalize().unwrap_or_else(|_| p.clone());
            match real.strip_prefix(&top_real) {
                Ok(rest) => worktree.join(rest),
                Err(_) => p.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_paths_move_into_the_worktree() {
        let dir = tempfile::tempdir().expect("tempdir");
        let top = dir.path().join("repo");
        std::fs::create_dir_all(top.join("src")).expect("mkdir");
        let wt = Path::new("/tmp/wt/repo");
        assert_eq!(class_path_in(&[], &top, wt), vec![wt.to_path_buf()]);
        assert_eq!(
            class_path_in(&[PathBuf::from("src")], &top, wt),
            vec![wt.join("src")]
        );
        assert_eq!(
            class_path_in(&[top.join("src")], &top, wt),
            vec![wt.join("src")]
        );
        assert_eq!(
            class_path_in(&[PathBuf::from("/elsewhere")], &top, wt),
            vec![PathBuf::from("/elsewhere")]
        );
    }

    #[test]
    fn a_directory_that_is_not_a_repository_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A temporary directory is not inside a git repository unless the
        // system's temp dir is (then the check proves nothing).
        if let Err(e) = toplevel(dir.path()) {
            assert!(
                matches!(
                    e,
                    HistoryError::NotAGitRepository { .. } | HistoryError::Git(_)
                ),
                "{e:?}"
            );
        }
        assert!(matches!(
            toplevel(&dir.path().join("missing")),
            Err(HistoryError::NotAGitRepository { .. })
        ));
    }
}
