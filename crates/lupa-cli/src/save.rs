//! Saving files atomically: every file Lupa writes (reports, calibrations, CSV
//! measurements) is written to a temporary file in the same directory, flushed to
//! disk, then renamed over the target. A run killed mid-write, or a write that
//! fails (a full disk), never leaves a truncated file nor replaces a good one.
//! A target that exists and is not a regular file (`/dev/null`, a FIFO, a
//! terminal) is written in place: renaming over it would replace the device.

use lupa_vm::{Vm, VmError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically; the error names the file.
pub(crate) fn save(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if is_special(path) {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(fail)?;
        return f.write_all(bytes).and_then(|()| f.flush()).map_err(fail);
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
    let mut tmp = builder.tempfile_in(dir).map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
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

/// Where the report of `-o OUTPUT` goes: `None` for standard output (`-o -`,
/// or no `-o` and no `default_file`), else the file (`OUTPUT`, or
/// `default_file`), checked writable before any work (exit 74 otherwise).
pub(crate) fn destination(
    output: Option<&Path>,
    default_file: Option<&str>,
) -> Result<Option<PathBuf>, VmError> {
    let dest = match output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) => Some(p.to_path_buf()),
        None => default_file.map(PathBuf::from),
    };
    if let Some(p) = &dest {
        check_writable(p).map_err(VmError::Io)?;
    }
    Ok(dest)
}

/// [`destination`], and with `-o -` the program's own output goes to standard
/// error, so that standard output holds the report alone.
pub(crate) fn prepare_destination(
    vm: &mut Vm,
    output: Option<&Path>,
    default_file: Option<&str>,
) -> Result<Option<PathBuf>, VmError> {
    let dest = destination(output, default_file)?;
    if output.is_some_and(|p| p.as_os_str() == "-") {
        vm.io.send_output_to_stderr()?;
    }
    Ok(dest)
}

/// Deliver a report: to `dest` (atomically, saying where when the path was
/// chosen by default: `announce`), or to standard output when `dest` is None.
/// `what` names the report in the message ("coverage", "lifetime").
pub(crate) fn deliver(
    dest: Option<&Path>,
    bytes: &[u8],
    what: &str,
    announce: bool,
) -> Result<(), String> {
    match dest {
        Some(p) => {
            save(p, bytes)?;
            if announce {
                eprintln!(
                    "lupa: wrote the {what} report to {} (-o FILE to choose, -o - for standard output)",
                    p.display()
                );
            }
            Ok(())
        }
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write the report to standard output: {e}"))
        }
    }
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
