//! Sources a report can point at. Methods of Lupa's bundled class library live
//! inside the binary (their file is `<lupa>/Kernel/Object.som`, which exists
//! nowhere on disk), so a tool that annotates sources (`callgrind_annotate`,
//! KCachegrind) could not open them. [`export_bundled`] writes the bundled
//! files a profile uses into a directory and points the profile at them.
//!
//! Contract: only files named `<lupa>/...` are written and renamed; files of
//! the class path keep their paths; the written text is exactly what the VM
//! compiled.

use lupa_prof::Profile;
use lupa_vm::Vm;
use std::path::Path;

/// The prefix of a bundled file's name.
const BUNDLED: &str = "<lupa>/";

/// Write the bundled source files that methods of `profile` come from under
/// `dir` (created if needed) and make those methods point at the written
/// files. Answers how many files were written.
pub fn export_bundled(vm: &Vm, profile: &mut Profile, dir: &Path) -> std::io::Result<usize> {
    export_bundled_files(
        vm,
        profile.methods.iter_mut().filter_map(|m| m.file.as_mut()),
        dir,
    )
}

/// [`export_bundled`] for any file names: each `<lupa>/...` name is written
/// under `dir` once and replaced by the written file's absolute path; other
/// names are left as they are. Answers how many files were written.
pub fn export_bundled_files<'a>(
    vm: &Vm,
    files: impl Iterator<Item = &'a mut String>,
    dir: &Path,
) -> std::io::Result<usize> {
    let mut written = std::collections::BTreeMap::new();
    for file in files {
        let Some(rel) = file.strip_prefix(BUNDLED) else {
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
