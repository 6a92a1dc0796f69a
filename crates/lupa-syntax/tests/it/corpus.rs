//! Parses every `.som` file of the SOM reference repository, when present at
//! `/work/som` (or at the path in the `SOM_CORPUS` environment variable).
//! Skipped (with a note) when the directory does not exist, as on CI.

use std::path::{Path, PathBuf};

use lupa_syntax::{SourceFile, parse_class};

/// Files of the corpus that are meant to be rejected, with a fragment of the
/// expected message.
const EXPECTED_FAILURES: &[(&str, &str)] = &[
    (
        "IntegrationTests/Tests/str_escape_unknown.som",
        "unknown escape sequence '\\a'",
    ),
    (
        "IntegrationTests/Tests/call2.som",
        "duplicate method parameter 'arg1'",
    ),
    (
        "IntegrationTests/Tests/instance_fields_overlap2.som",
        "duplicate field 'a'",
    ),
    // Missing periods: 500 keyword parts, then `^vector` where a '.' is needed.
    (
        "IntegrationTests/Tests/test_literals_limit_1.som",
        "found '^'",
    ),
    // Expected to be rejected by SOM's basic interpreter tests.
    (
        "TestSuite/BasicInterpreterTests/Self.som",
        "cannot assign to 'super'",
    ),
];

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "som") {
            out.push(path);
        }
    }
}

#[test]
fn parses_the_som_corpus() {
    let root = PathBuf::from(std::env::var("SOM_CORPUS").unwrap_or_else(|_| "/work/som".into()));
    if !root.is_dir() {
        eprintln!(
            "note: {} not found, skipping the SOM corpus test",
            root.display()
        );
        return;
    }
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut failures = Vec::new();
    let mut parsed = 0;
    for path in &files {
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let result = parse_class(&text);
        let expected = EXPECTED_FAILURES.iter().find(|(f, _)| *f == rel);
        match (result, expected) {
            (Ok(_), None) => parsed += 1,
            (Err(d), None) => failures.push(d.render(&SourceFile::new(rel, text))),
            (Ok(_), Some(_)) => failures.push(format!("{rel}: expected a parse error")),
            (Err(d), Some((_, fragment))) => {
                if !d.message.contains(fragment) {
                    failures.push(format!("{rel}: unexpected message: {}", d.message));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(parsed > 100, "only {parsed} files parsed");
    eprintln!("parsed {parsed} SOM files");
}
