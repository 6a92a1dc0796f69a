//! The perf map (`--perf-map`): Linux `perf report` and samply name code
//! that is in no binary by reading `/tmp/perf-PID.map`, one line per
//! function, `START SIZE NAME` (hexadecimal start and size). A line is
//! appended when a function is installed and, after an eviction, for every
//! function that moved; readers take the latest line for an address, so a
//! moved function is named at its new place. Code evicted and replaced keeps
//! no line of its own (its old range is named by whatever is there now).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// An open perf map.
pub(crate) struct PerfMap {
    path: PathBuf,
    out: BufWriter<File>,
}

impl PerfMap {
    /// Create (or truncate) `/tmp/perf-PID.map` for this process.
    pub(crate) fn create() -> Result<PerfMap, String> {
        let path = PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()));
        let file = File::create(&path)
            .map_err(|e| format!("cannot write the perf map {}: {e}", path.display()))?;
        Ok(PerfMap {
            path,
            out: BufWriter::new(file),
        })
    }

    /// Name `[start, start + len)` `name`, and flush: `perf` may read the
    /// file while the VM runs or after it was killed.
    pub(crate) fn note(&mut self, start: usize, len: usize, name: &str) -> Result<(), String> {
        // perf reads a name up to the end of the line.
        let name = name.replace(['\n', '\r'], " ");
        writeln!(self.out, "{start:x} {len:x} {name}")
            .and_then(|()| self.out.flush())
            .map_err(|e| format!("cannot write the perf map {}: {e}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_start_size_name_in_hex() {
        let mut m = PerfMap::create().expect("perf map");
        m.note(0x7f00_0000_1000, 0x40, "Foo>>bar:").expect("note");
        m.note(0x7f00_0000_1040, 0x20, "[] in Foo>>bar:\nx")
            .expect("note");
        let text = std::fs::read_to_string(&m.path).expect("read");
        assert_eq!(
            text,
            "7f0000001000 40 Foo>>bar:\n7f0000001040 20 [] in Foo>>bar: x\n"
        );
        let _ = std::fs::remove_file(&m.path);
    }
}
