//! Sources a report can point at. Methods of Lupa's bundled class library live
//! inside the binary (their file is `<lupa>/Kernel/Object.som`, which exists
//! nowhere on disk), so a tool that annotates sources (`callgrind_annotate`,
//! KCachegrind, genhtml) could not open them. [`export_beside`] writes the
//! bundled files a report names beside it (`FILE.sources/`) and points the
//! report at them, for the formats that name source files
//! ([`SourceFiles`]: a profile as callgrind, a coverage as LCOV or
//! Cobertura).
//!
//! Contract: only files named `<lupa>/...` are written; files of the class
//! path are named by their absolute paths (a relative `-cp .` would name them
//! from the run's directory, which a tool run elsewhere cannot resolve); the
//! written text is exactly what the VM compiled.

use lupa_prof::coverage::{Coverage, CoverageFormat};
use lupa_prof::report::Format;
use lupa_prof::{Profile, Report};
use lupa_vm::{Vm, VmError};
use std::path::Path;

/// A report that may name source files.
pub trait SourceFiles: Report {
    /// Does a report in `format` name source files that a tool opens?
    fn names_sources(format: Self::Format) -> bool;
    /// The source files it names.
    fn source_files(&mut self) -> impl Iterator<Item = &mut String>;
}

impl SourceFiles for Profile {
    fn names_sources(format: Format) -> bool {
        format == Format::Callgrind
    }

    fn source_files(&mut self) -> impl Iterator<Item = &mut String> {
        self.methods.iter_mut().filter_map(|m| m.file.as_mut())
    }
}

impl SourceFiles for Coverage {
    fn names_sources(format: CoverageFormat) -> bool {
        format.names_source_files()
    }

    fn source_files(&mut self) -> impl Iterator<Item = &mut String> {
        self.classes.iter_mut().filter_map(|k| k.file.as_mut())
    }
}

/// When `report` is written in `format` to the file `path` and names source
/// files, write the bundled ones under `PATH.sources/` and point the report
/// at them (the files of the class path by their absolute paths).
pub fn export_beside<R: SourceFiles>(
    vm: &Vm,
    report: &mut R,
    format: R::Format,
    path: &Path,
) -> Result<(), VmError> {
    if !R::names_sources(format) {
        return Ok(());
    }
    let mut dir = path.as_os_str().to_owned();
    dir.push(".sources");
    export_bundled_files(vm, report.source_files(), Path::new(&dir))
        .map(drop)
        .map_err(|e| {
            VmError::Io(format!(
                "cannot write the sources beside {}: {e}",
                path.display()
            ))
        })
}

/// The prefix of a bundled file's name.
const BUNDLED: &str = "<lupa>/";

/// Each `<lupa>/...` name among `files` is written under `dir` (created if
/// needed) once and replaced by the written file's absolute path; other
/// names of existing files (the class path's) are made absolute. Answers how many files
/// were written.
pub fn export_bundled_files<'a>(
    vm: &Vm,
    files: impl Iterator<Item = &'a mut String>,
    dir: &Path,
) -> std::io::Result<usize> {
    let mut written = std::collections::BTreeMap::new();
    for file in files {
        let Some(rel) = file.strip_prefix(BUNDLED) else {
            let path = Path::new(file.as_str());
            if let Ok(absolute) = std::fs::canonicalize(path) {
                *file = absolute.display().to_string();
            }
            continue;
        };
        if !written.contains_key(file.as_str()) {
            let Some(src) = vm.image.source(file) else {
                continue;
            };
            let target = dir.join(rel);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&target, src.text.as_bytes())?;
            let absolute = std::fs::canonicalize(&target).unwrap_or(target);
            written.insert(file.clone(), absolute.display().to_string());
        }
        if let Some(path) = written.get(file.as_str()) {
            *file = path.clone();
        }
    }
    Ok(written.len())
}
