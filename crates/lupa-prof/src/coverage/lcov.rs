//! LCOV tracefiles (the `geninfo` format): read by `genhtml`, Codecov,
//! Coveralls and editor gutters.
//!
//! One record per source file (`SF:` to `end_of_record`, files in class
//! order, a class's file once): `FN:line,name` and `FNDA:executions,name` per
//! method (names `Class>>selector`, `Class class>>selector`), `FNF`/`FNH`,
//! then `DA:line,hits` per line in ascending order (the VM's line counts when
//! measured, otherwise every line of each method with its executions), `LF`/
//! `LH`. A class with no known file is written under `PACKAGE/CLASS.som`.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::Coverage;

/// Write `coverage` as an LCOV tracefile, test name `test_name` (`TN:`).
pub fn write<W: Write + ?Sized>(coverage: &Coverage, test_name: &str, w: &mut W) -> io::Result<()> {
    // Classes by file, in first-seen order.
    let mut files: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, c) in coverage.classes.iter().enumerate() {
        let file = c
            .file
            .clone()
            .unwrap_or_else(|| format!("{}/{}.som", c.package, c.name));
        match files.iter_mut().find(|(f, _)| *f == file) {
            Some((_, v)) => v.push(i),
            None => files.push((file, vec![i])),
        }
    }
    for (file, classes) in files {
        writeln!(w, "TN:{}", clean(test_name))?;
        writeln!(w, "SF:{}", clean(&file))?;
        let (mut found, mut hit) = (0, 0);
        let mut lines: BTreeMap<u32, u64> = BTreeMap::new();
        for &i in &classes {
            let c = &coverage.classes[i];
            for m in &c.methods {
                let name = clean(&m.name_in(&c.name)).replace(',', ";");
                writeln!(w, "FN:{},{name}", m.line.max(1))?;
                writeln!(w, "FNDA:{},{name}", m.executions)?;
                found += 1;
                hit += usize::from(m.is_covered());
                for l in m.line_hits() {
                    let e = lines.entry(l.line).or_insert(0);
                    *e = e.saturating_add(l.hits);
                }
            }
        }
        writeln!(w, "FNF:{found}")?;
        writeln!(w, "FNH:{hit}")?;
        for (line, hits) in &lines {
            writeln!(w, "DA:{line},{hits}")?;
        }
        writeln!(w, "LF:{}", lines.len())?;
        writeln!(w, "LH:{}", lines.values().filter(|&&h| h > 0).count())?;
        writeln!(w, "end_of_record")?;
    }
    Ok(())
}

/// Records are lines: no line breaks inside a field.
fn clean(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// [`write()`] into a string.
pub fn to_string(coverage: &Coverage, test_name: &str) -> String {
    let mut buf = Vec::new();
    let _ = write(coverage, test_name, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::tests::sample;

    /// Parse the tracefile by the format's rules and check its sums.
    #[test]
    fn records_follow_the_format() {
        let text = to_string(&sample(), "lupa");
        let mut records = 0;
        let (mut fnf, mut fnh, mut da, mut lh) = (0, 0, 0, 0);
        let mut in_record = false;
        for line in text.lines() {
            let (key, value) = line.split_once(':').unwrap_or((line, ""));
            match key {
                "TN" => assert!(!in_record),
                "SF" => {
                    assert!(!in_record, "{text}");
                    in_record = true;
                    (fnf, fnh, da, lh) = (0, 0, 0, 0);
                }
                "FN" => {
                    let (l, name) = value.split_once(',').expect("FN:line,name");
                    assert!(l.parse::<u32>().expect("line") > 0);
                    assert!(name.contains(">>"));
                    fnf += 1;
                }
                "FNDA" => {
                    let (n, _) = value.split_once(',').expect("FNDA:count,name");
                    fnh += usize::from(n.parse::<u64>().expect("count") > 0);
                }
                "DA" => {
                    let (_, h) = value.split_once(',').expect("DA:line,hits");
                    da += 1;
                    lh += usize::from(h.parse::<u64>().expect("hits") > 0);
                }
                "FNF" => assert_eq!(value.parse::<usize>().ok(), Some(fnf)),
                "FNH" => assert_eq!(value.parse::<usize>().ok(), Some(fnh)),
                "LF" => assert_eq!(value.parse::<usize>().ok(), Some(da)),
                "LH" => assert_eq!(value.parse::<usize>().ok(), Some(lh)),
                "end_of_record" => {
                    assert!(in_record);
                    in_record = false;
                    records += 1;
                }
                other => panic!("unknown record {other}: {text}"),
            }
        }
        assert!(!in_record);
        assert_eq!(records, 2, "{text}");
        // The measured lines of Square class>>side: are used as they are.
        assert!(text.contains("DA:10,0"), "{text}");
        assert!(text.contains("FNDA:0,Shape>>printOn:"), "{text}");
    }

    /// Run genhtml (Debian `lcov`) on the tracefile when it is installed:
    /// it reads every record and writes its pages without a warning.
    #[test]
    #[allow(clippy::print_stderr)] // a test's note that it was skipped
    fn genhtml_reads_it() {
        let tool = std::path::Path::new("/usr/bin/genhtml");
        if !tool.exists() {
            eprintln!("genhtml not installed (Debian lcov): skipped");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let c = sample();
        for class in &c.classes {
            let file = dir.path().join(class.file.as_deref().expect("file"));
            std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
            let text: String = (1..=12).map(|i| format!("line {i}\n")).collect();
            std::fs::write(&file, text).expect("source");
        }
        std::fs::write(dir.path().join("lupa.info"), to_string(&c, "lupa")).expect("write");
        let out = std::process::Command::new(tool)
            .args(["--quiet", "--output-directory", "html", "lupa.info"])
            .current_dir(dir.path())
            .output()
            .expect("run genhtml");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "genhtml failed: {stderr}");
        assert!(!stderr.to_lowercase().contains("warning"), "{stderr}");
        let index = std::fs::read_to_string(dir.path().join("html/index.html")).expect("index");
        assert!(index.contains("Shapes"), "{index}");
    }
}
