//! The files a program has open (`File` in the class library, `prims/file.rs`).
//!
//! A program names an open file by a small integer handle into the VM's
//! [`OpenFiles`] table; the heap never holds an OS resource. Two kinds:
//!
//! - a **reader** is buffered (64 KiB) and answers lines (`\n` or `\r\n`
//!   removed) or chunks of bytes, and counts the lines it has answered so that
//!   a parser can say where an error is;
//! - a **writer** writes to a temporary file beside its target
//!   (`.NAME.lupa-PID-N.tmp`) and renames it over the target only when the
//!   program closes it: a program that fails half-way, or a VM that stops,
//!   never leaves a truncated file where a complete one was. A target that
//!   exists and is not a regular file (`/dev/null`, a FIFO) is written in
//!   place; a symbolic link is kept, its target replaced ([`write_target`]).
//!
//! Dropping the table (the VM ends) closes readers and discards unfinished
//! writers. Every failure is an error message naming the path and the OS
//! reason, for the primitive to signal.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The UTF-8 byte-order mark, which `read_line` skips at the start of a file.
const UTF8_BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Read one line into `buf` without its end: a line ends at `\n`, `\r\n` or
/// a lone `\r` (old Mac files: without it, such a file is one line). False
/// at the end of the input. A line longer than `max` bytes is an error of
/// kind `OutOfMemory` (its start is consumed).
fn read_line_into(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<bool> {
    let mut any = false;
    loop {
        if buf.len() > max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("out of memory: a line is longer than {max} bytes"),
            ));
        }
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok(any);
        }
        any = true;
        match chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) => {
                let cr = chunk[i] == b'\r';
                buf.extend_from_slice(&chunk[..i]);
                input.consume(i + 1);
                if cr && input.fill_buf()?.first() == Some(&b'\n') {
                    input.consume(1);
                }
                return Ok(true);
            }
            None => {
                let n = chunk.len();
                buf.extend_from_slice(chunk);
                input.consume(n);
            }
        }
    }
}

/// Where a write to `path` must land for a symbolic link to stay one: the
/// file at the end of its chain of links (a relative link is read from the
/// link's directory), or `path` itself when it is not a link. A file
/// written atomically (a temporary file renamed over its target) is then
/// written beside that file and renamed over it, and the link keeps
/// pointing at it; a dangling link's target is created. Every file Lupa
/// writes goes through it (`File` here, the command line's `-o FILE`).
pub fn write_target(path: &Path) -> PathBuf {
    /// Links followed at most (as the kernel's ELOOP limit).
    const MAX_LINKS: usize = 40;
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let is_link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            return p;
        }
        match std::fs::read_link(&p) {
            Ok(t) if t.is_absolute() => p = t,
            Ok(t) => p = p.parent().unwrap_or_else(|| Path::new("")).join(t),
            Err(_) => return p,
        }
    }
    p
}

/// Buffer size of readers and writers.
const BUFFER: usize = 1 << 16;

/// One open file.
enum OpenFile {
    Reader {
        input: BufReader<File>,
        path: PathBuf,
        line: u64,
    },
    Writer {
        output: BufWriter<File>,
        /// Where the bytes go until the file is closed (None: in place).
        temp: Option<PathBuf>,
        path: PathBuf,
    },
}

/// The open files of one VM, by handle (1-based; 0 is never a handle).
#[derive(Default)]
pub(crate) struct OpenFiles {
    slots: Vec<Option<OpenFile>>,
    temps: u64,
}

impl std::fmt::Debug for OpenFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenFiles({} open)", self.slots.iter().flatten().count())
    }
}

fn describe(path: &Path, what: &str, e: &std::io::Error) -> String {
    format!("cannot {what} {}: {}", path.display(), e)
}

impl OpenFiles {
    fn insert(&mut self, f: OpenFile) -> i64 {
        if let Some(i) = self.slots.iter().position(Option::is_none) {
            self.slots[i] = Some(f);
            i as i64 + 1
        } else {
            self.slots.push(Some(f));
            self.slots.len() as i64
        }
    }

    fn get(&mut self, handle: i64) -> Result<&mut OpenFile, String> {
        usize::try_from(handle)
            .ok()
            .and_then(|h| h.checked_sub(1))
            .and_then(|i| self.slots.get_mut(i))
            .and_then(Option::as_mut)
            .ok_or_else(|| format!("file handle {handle} is not open"))
    }

    /// Open `path` for reading.
    pub(crate) fn open_read(&mut self, path: &str) -> Result<i64, String> {
        let p = PathBuf::from(path);
        let f = File::open(&p).map_err(|e| describe(&p, "open", &e))?;
        if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(format!("cannot open {}: it is a directory", p.display()));
        }
        Ok(self.insert(OpenFile::Reader {
            input: BufReader::with_capacity(BUFFER, f),
            path: p,
            line: 0,
        }))
    }

    /// Open `path` for writing (replaced atomically at `close`).
    pub(crate) fn open_write(&mut self, path: &str) -> Result<i64, String> {
        let p = write_target(Path::new(path));
        let in_place = std::fs::metadata(&p).is_ok_and(|m| !m.is_file());
        let (file, temp) = if in_place {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&p)
                .map_err(|e| describe(&p, "write", &e))?;
            (f, None)
        } else {
            let name = p
                .file_name()
                .ok_or_else(|| format!("cannot write {}: not a file name", p.display()))?;
            self.temps += 1;
            let t = p.with_file_name(format!(
                ".{}.lupa-{}-{}.tmp",
                name.to_string_lossy(),
                std::process::id(),
                self.temps
            ));
            let f = File::create(&t).map_err(|e| describe(&p, "write", &e))?;
            (f, Some(t))
        };
        Ok(self.insert(OpenFile::Writer {
            output: BufWriter::with_capacity(BUFFER, file),
            temp,
            path: p,
        }))
    }

    /// The next line of a reader (without its end of line), or None at the
    /// end; a line longer than `max` bytes is an error.
    pub(crate) fn read_line(&mut self, handle: i64, max: usize) -> Result<Option<Vec<u8>>, String> {
        match self.get(handle)? {
            OpenFile::Reader { input, path, line } => {
                let mut buf = Vec::new();
                let read =
                    read_line_into(input, &mut buf, max).map_err(|e| describe(path, "read", &e))?;
                if !read {
                    return Ok(None);
                }
                // A UTF-8 byte-order mark starts the text, not its first line.
                if *line == 0 && buf.starts_with(&UTF8_BOM) {
                    buf.drain(..UTF8_BOM.len());
                }
                *line += 1;
                Ok(Some(buf))
            }
            OpenFile::Writer { path, .. } => Err(format!(
                "cannot read {}: it is open for writing",
                path.display()
            )),
        }
    }

    /// Up to `count` bytes of a reader, or None at the end.
    pub(crate) fn read(&mut self, handle: i64, count: usize) -> Result<Option<Vec<u8>>, String> {
        match self.get(handle)? {
            OpenFile::Reader { input, path, .. } => {
                let mut buf = Vec::with_capacity(count.min(BUFFER * 16));
                input
                    .by_ref()
                    .take(count as u64)
                    .read_to_end(&mut buf)
                    .map_err(|e| describe(path, "read", &e))?;
                Ok(if buf.is_empty() && count > 0 {
                    None
                } else {
                    Some(buf)
                })
            }
            OpenFile::Writer { path, .. } => Err(format!(
                "cannot read {}: it is open for writing",
                path.display()
            )),
        }
    }

    /// The number of lines a reader has answered.
    pub(crate) fn line_number(&mut self, handle: i64) -> Result<u64, String> {
        match self.get(handle)? {
            OpenFile::Reader { line, .. } => Ok(*line),
            OpenFile::Writer { .. } => Ok(0),
        }
    }

    /// Append bytes to a writer.
    pub(crate) fn write(&mut self, handle: i64, bytes: &[u8]) -> Result<(), String> {
        match self.get(handle)? {
            OpenFile::Writer { output, path, .. } => output
                .write_all(bytes)
                .map_err(|e| describe(path, "write", &e)),
            OpenFile::Reader { path, .. } => Err(format!(
                "cannot write {}: it is open for reading",
                path.display()
            )),
        }
    }

    /// Close a file: a writer is flushed, synced and renamed over its target.
    pub(crate) fn close(&mut self, handle: i64) -> Result<(), String> {
        self.get(handle)?;
        let i = handle as usize - 1;
        match self.slots[i].take() {
            Some(OpenFile::Writer { output, temp, path }) => {
                let finish = |output: BufWriter<File>| -> std::io::Result<()> {
                    let f = output.into_inner().map_err(|e| e.into_error())?;
                    if temp.is_some() {
                        f.sync_all()?;
                    }
                    Ok(())
                };
                if let Err(e) = finish(output) {
                    if let Some(t) = &temp {
                        let _ = std::fs::remove_file(t);
                    }
                    return Err(describe(&path, "write", &e));
                }
                if let Some(t) = temp {
                    std::fs::rename(&t, &path).map_err(|e| {
                        let _ = std::fs::remove_file(&t);
                        describe(&path, "write", &e)
                    })?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Close a file without finishing it: a writer's bytes are discarded and
    /// its target left as it was.
    pub(crate) fn abandon(&mut self, handle: i64) -> Result<(), String> {
        self.get(handle)?;
        if let Some(OpenFile::Writer {
            temp: Some(t),
            output,
            ..
        }) = self.slots[handle as usize - 1].take()
        {
            drop(output);
            let _ = std::fs::remove_file(t);
        }
        Ok(())
    }
}

impl Drop for OpenFiles {
    fn drop(&mut self) {
        for i in 0..self.slots.len() {
            let _ = self.abandon(i as i64 + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_replaces_its_target_only_when_closed() {
        let dir = std::env::temp_dir().join(format!("lupa-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("works");
        let target = dir.join("out.csv");
        std::fs::write(&target, "old\n").expect("works");
        let mut files = OpenFiles::default();
        let w = files
            .open_write(target.to_str().expect("works"))
            .expect("works");
        files.write(w, b"a,b\r\n1,2\n3").expect("works");
        assert_eq!(std::fs::read_to_string(&target).expect("works"), "old\n");
        files.close(w).expect("works");
        let r = files
            .open_read(target.to_str().expect("works"))
            .expect("works");
        assert_eq!(
            files.read_line(r, usize::MAX).expect("works"),
            Some(b"a,b".to_vec())
        );
        assert_eq!(
            files.read_line(r, usize::MAX).expect("works"),
            Some(b"1,2".to_vec())
        );
        assert_eq!(
            files.read_line(r, usize::MAX).expect("works"),
            Some(b"3".to_vec())
        );
        assert_eq!(files.line_number(r).expect("works"), 3);
        assert_eq!(files.read_line(r, usize::MAX).expect("works"), None);
        files.close(r).expect("works");
        assert!(files.read_line(r, usize::MAX).is_err());
        let w = files
            .open_write(target.to_str().expect("works"))
            .expect("works");
        files.write(w, b"half").expect("works");
        drop(files);
        assert_eq!(
            std::fs::read_to_string(&target).expect("works"),
            "a,b\r\n1,2\n3"
        );
        assert_eq!(std::fs::read_dir(&dir).expect("works").count(), 1);
        std::fs::remove_dir_all(&dir).expect("works");
    }

    /// Issue 26, kind 6: writing through a symbolic link (relative, or a
    /// chain of two) replaces the file it points at and keeps the link.
    #[test]
    #[cfg(unix)]
    fn a_symbolic_link_is_kept_and_its_target_written() {
        let dir = std::env::temp_dir().join(format!("lupa-files-link-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("data")).expect("works");
        let real = dir.join("data/real.csv");
        std::fs::write(&real, "old\n").expect("works");
        std::os::unix::fs::symlink("data/real.csv", dir.join("first")).expect("works");
        std::os::unix::fs::symlink(dir.join("first"), dir.join("second")).expect("works");
        let mut files = OpenFiles::default();
        for (name, text) in [("first", &b"one\n"[..]), ("second", b"two\n")] {
            let link = dir.join(name);
            let w = files
                .open_write(link.to_str().expect("works"))
                .expect("works");
            files.write(w, text).expect("works");
            files.close(w).expect("works");
            let m = std::fs::symlink_metadata(&link).expect("works");
            assert!(m.file_type().is_symlink(), "{name} is still a link");
            assert_eq!(std::fs::read(&real).expect("works"), text);
        }
        assert_eq!(
            std::fs::read_dir(dir.join("data")).expect("works").count(),
            1
        );
        // A dangling link: its target is created.
        std::os::unix::fs::symlink("data/new.csv", dir.join("dangling")).expect("works");
        let w = files
            .open_write(dir.join("dangling").to_str().expect("works"))
            .expect("works");
        files.close(w).expect("works");
        assert!(dir.join("data/new.csv").is_file());
        std::fs::remove_dir_all(&dir).expect("works");
    }

    /// Issue 28, point 8: a byte-order mark is not part of the first line, and
    /// a lone CR ends a line as LF and CRLF do (even across buffer refills).
    #[test]
    fn lines_end_at_lf_crlf_or_cr_and_a_bom_is_skipped() {
        let mut buf = Vec::new();
        let mut input =
            std::io::BufReader::with_capacity(3, &b"\xEF\xBB\xBFid,name\r1,a\r\n2,b\n\r3,c"[..]);
        let mut lines = Vec::new();
        while read_line_into(&mut input, &mut buf, usize::MAX).expect("reads") {
            lines.push(String::from_utf8_lossy(&std::mem::take(&mut buf)).into_owned());
        }
        assert_eq!(lines, ["\u{feff}id,name", "1,a", "2,b", "", "3,c"]);
        let dir = std::env::temp_dir().join(format!("lupa-files-bom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("works");
        let path = dir.join("bom.csv");
        std::fs::write(&path, b"\xEF\xBB\xBFid\r1\r2").expect("works");
        let mut files = OpenFiles::default();
        let r = files
            .open_read(path.to_str().expect("works"))
            .expect("works");
        assert_eq!(
            files.read_line(r, usize::MAX).expect("works"),
            Some(b"id".to_vec())
        );
        assert_eq!(
            files.read_line(r, usize::MAX).expect("works"),
            Some(b"1".to_vec())
        );
        assert_eq!(
            files.read_line(r, usize::MAX).expect("works"),
            Some(b"2".to_vec())
        );
        assert_eq!(files.read_line(r, usize::MAX).expect("works"), None);
        std::fs::remove_dir_all(&dir).expect("works");
    }

    #[test]
    fn errors_name_the_path_and_the_reason() {
        let mut files = OpenFiles::default();
        let e = files
            .open_read("/nonexistent/lupa/x.csv")
            .expect_err("fails");
        assert!(
            e.starts_with("cannot open /nonexistent/lupa/x.csv: "),
            "{e}"
        );
        let e = files
            .open_write("/nonexistent/lupa/x.csv")
            .expect_err("fails");
        assert!(
            e.starts_with("cannot write /nonexistent/lupa/x.csv: "),
            "{e}"
        );
        assert!(files.read(7, 10).is_err());
    }
}
