//! Saving files atomically: every file Lupa writes (reports, calibrations, CSV
//! measurements) is written (streamed, for reports) to a temporary file in the
//! same directory, flushed to disk, then renamed over the target. A run killed mid-write, or a write that
//! fails (a full disk), never leaves a truncated file nor replaces a good one.
//! A target that exists and is not a regular file (`/dev/null`, a FIFO, a
//! terminal) is written in place: renaming over it would replace the device.
//! A symbolic link is kept: the file it points at is the one replaced
//! ([`lupa_vm::write_target`], which `File` writes use too).

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically; the error names the file.
pub(crate) fn save(path: &Path, bytes: &[u8]) -> Result<(), String> {
    save_with(path, |w| w.write_all(bytes))
}

/// Write what `write` streams to `path` atomically (a failed `write` leaves
/// the target as it was); the error names the file.
pub(crate) fn save_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let target = lupa_vm::write_target(path);
    let path = target.as_path();
    if is_special(path) {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(fail)?;
        let mut w = std::io::BufWriter::new(f);
        return write(&mut w).and_then(|()| w.flush()).map_err(fail);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Readable by others like any file a program writes (0644 less the
    // umask), not the 0600 of a temporary file.
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let tmp = builder.tempfile_in(dir).map_err(fail)?;
    let mut w = std::io::BufWriter::new(tmp);
    write(&mut w).and_then(|()| w.flush()).map_err(fail)?;
    let tmp = w.into_inner().map_err(|e| fail(e.into_error()))?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// Write `bytes` to standard output: exit 0, or 74 when it cannot be
/// written (a closed pipe, a full disk). A pipe its reader closed (`lupa
/// --help | head`) is not reported: the reader had what it wanted.
pub(crate) fn write_stdout(bytes: &[u8]) -> std::process::ExitCode {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::ExitCode::from(74),
        Err(e) => {
            eprintln!("lupa: cannot write to standard output: {e}");
            std::process::ExitCode::from(74)
        }
    }
}

/// Does `path` exist and is it something other than a regular file or a
/// directory (a device, a FIFO, a socket)?
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Check, before any work, that [`save`] will be able to write `path`: its
/// directory exists and takes a new file, and `path` is not a directory (or
/// it is a device or FIFO that opens for writing).
pub(crate) fn check_writable(path: &Path) -> Result<(), String> {
    let fail = |e: String| format!("cannot write {}: {e}", path.display());
    let target = lupa_vm::write_target(path);
    let path = target.as_path();
    if path.is_dir() {
        return Err(fail("it is a directory".to_string()));
    }
    if is_special(path) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map(drop)
            .map_err(|e| fail(e.to_string()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    tempfile::NamedTempFile::new_in(dir)
        .map(drop)
        .map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn devices_are_written_in_place_not_replaced() {
        let null = Path::new("/dev/null");
        check_writable(null).expect("writable");
        save(null, b"gone").expect("save");
        let m = std::fs::metadata(null).expect("metadata");
        assert!(!m.is_file(), "/dev/null is still a device");
    }

    #[test]
    fn saves_and_replaces() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("out.json");
        save(&p, b"first").expect("save");
        save(&p, b"second").expect("save");
        assert_eq!(std::fs::read(&p).expect("read"), b"second");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).expect("meta").permissions().mode();
            assert_eq!(
                mode & 0o044,
                0o044,
                "readable by group and others: {mode:o}"
            );
        }
    }

    #[test]
    #[cfg(unix)]
    fn a_symbolic_link_is_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real.json");
        std::fs::write(&real, b"old").expect("write");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).expect("symlink");
        check_writable(&link).expect("writable");
        save(&link, b"new").expect("save");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).expect("read"), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 2);
    }

    #[test]
    fn a_failed_save_keeps_what_was_there() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).expect("mkdir");
        std::fs::write(target.join("inside"), b"kept").expect("write");
        let e = save(&target, b"new").expect_err("a directory cannot be replaced by a file");
        assert!(e.contains("cannot write"), "{e}");
        assert_eq!(std::fs::read(target.join("inside")).expect("read"), b"kept");
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
    }

    #[test]
    fn writability_is_checked_without_writing() {
        let dir = tempfile::tempdir().expect("tempdir");
        check_writable(&dir.path().join("new.json")).expect("writable");
        assert!(check_writable(dir.path()).is_err());
        assert!(check_writable(Path::new("/nonexistent-lupa-dir/out.json")).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    }

    #[test]
    fn an_unwritable_directory_is_a_clear_error() {
        let e = save(Path::new("/nonexistent-lupa-dir/out.json"), b"x").expect_err("fails");
        assert!(e.contains("/nonexistent-lupa-dir/out.json"), "{e}");
    }
}
