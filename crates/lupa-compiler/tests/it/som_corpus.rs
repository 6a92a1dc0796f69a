//! Compiles every method of every `.som` file under `/work/som` (a checkout of
//! the SOM reference implementation, present on development machines only) and
//! under the project's `smalltalk/` directory, and verifies the result.
use lupa_compiler::{compile_method, verify};
use lupa_syntax::{SourceFile, parse_class};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const CORPUS: &str = "/work/som";

/// Files that must fail to compile (they test compile errors), with a word the
/// message must contain.
const EXPECTED_ERRORS: &[(&str, &str)] = &[("unknown_field_write.som", "'unknown'")];

fn som_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            som_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "som") {
            out.push(path);
        }
    }
}

/// A parsed class, for field inheritance.
struct Class {
    dir: PathBuf,
    superclass: Option<String>,
    instance_fields: Vec<String>,
    class_fields: Vec<String>,
}

/// The class named `name` as seen from `dir`: the one in the same directory if
/// any, else the core library's, else any.
fn find<'a>(classes: &'a HashMap<String, Vec<Class>>, name: &str, dir: &Path) -> Option<&'a Class> {
    let candidates = classes.get(name)?;
    candidates
        .iter()
        .find(|c| c.dir == dir)
        .or_else(|| candidates.iter().find(|c| c.dir.ends_with("Smalltalk")))
        .or_else(|| candidates.first())
}

/// Instance fields of `name` including inherited ones, outermost first;
/// with `meta`, the fields of its metaclass (those of `Class`, then class-side
/// fields down the hierarchy).
fn all_fields(
    classes: &HashMap<String, Vec<Class>>,
    name: &str,
    dir: &Path,
    meta: bool,
) -> Vec<String> {
    let mut chain = Vec::new();
    let mut current = find(classes, name, dir);
    while let Some(c) = current {
        if chain.len() > 100 {
            break;
        }
        chain.push(c);
        current = c
            .superclass
            .as_deref()
            .and_then(|s| find(classes, s, &c.dir));
    }
    let mut fields = if meta {
        all_fields(classes, "Class", dir, false)
    } else {
        Vec::new()
    };
    for c in chain.iter().rev() {
        fields.extend(
            if meta {
                &c.class_fields
            } else {
                &c.instance_fields
            }
            .iter()
            .cloned(),
        );
    }
    fields
}

/// Compile every method of every `.som` file under `root`; answers the number
/// of methods compiled, or the failures. Files that do not parse are listed
/// on stderr (the parser has its own tests) and skipped.
fn compile_tree(root: &Path) -> Result<usize, Vec<String>> {
    let mut files = Vec::new();
    som_files(root, &mut files);
    files.sort();
    let (mut methods, mut parse_failures, mut failures) = (0, Vec::new(), Vec::new());
    let mut parsed = Vec::new();
    let mut classes: HashMap<String, Vec<Class>> = HashMap::new();
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let src = SourceFile::new(path.display().to_string(), text.clone());
        match parse_class(&text) {
            Ok(class) => {
                let names =
                    |ids: &[lupa_syntax::Ident]| ids.iter().map(|i| i.name.clone()).collect();
                let dir = path.parent().unwrap_or(root).to_path_buf();
                let superclass = match &class.superclass {
                    Some(s) if s.name == "nil" => None,
                    Some(s) => Some(s.name.clone()),
                    None if class.name.name == "Object" => None,
                    None => Some("Object".to_string()),
                };
                classes
                    .entry(class.name.name.clone())
                    .or_default()
                    .push(Class {
                        dir,
                        superclass,
                        instance_fields: names(&class.instance_fields),
                        class_fields: names(&class.class_fields),
                    });
                parsed.push((path, src, class));
            }
            Err(d) => parse_failures.push(d.render(&src)),
        }
    }
    for (path, src, class) in &parsed {
        let dir = path.parent().unwrap_or(root);
        let name = &class.name.name;
        let sides = [
            (
                all_fields(&classes, name, dir, false),
                &class.instance_methods,
            ),
            (all_fields(&classes, name, dir, true), &class.class_methods),
        ];
        for (fields, defs) in sides {
            for def in defs {
                methods += 1;
                let expected = EXPECTED_ERRORS.iter().find(|e| path.ends_with(e.0));
                match compile_method(def, &fields, src) {
                    Err(d) if expected.is_some_and(|e| d.message.contains(e.1)) => {}
                    Ok(_) if expected.is_some() => {
                        failures.push(format!("{}: compiled", path.display()))
                    }
                    Ok(code) => {
                        if let Err(e) = verify(&code) {
                            failures.push(format!("{name}>>{}: verify: {e}", def.selector));
                        }
                    }
                    Err(d) => failures.push(d.render(src)),
                }
            }
        }
    }
    eprintln!(
        "{}: {} files, {methods} methods compiled, {} files not parsed",
        root.display(),
        files.len(),
        parse_failures.len()
    );
    for p in &parse_failures {
        eprintln!("{p}");
    }
    if failures.is_empty() {
        Ok(methods)
    } else {
        Err(failures)
    }
}

fn check(root: &Path) {
    if let Err(failures) = compile_tree(root) {
        panic!("{} failures:\n{}", failures.len(), failures.join("\n"));
    }
}

#[test]
fn compiles_every_method_of_the_som_corpus() {
    let root = Path::new(CORPUS);
    if !root.is_dir() {
        eprintln!("note: {CORPUS} does not exist; SOM corpus test skipped");
        return;
    }
    check(root);
}

/// The project's own Smalltalk code (kernel, tests, benchmarks, examples).
#[test]
fn compiles_every_method_of_the_bundled_smalltalk_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../smalltalk");
    if !root.is_dir() {
        eprintln!("note: {} does not exist; test skipped", root.display());
        return;
    }
    check(&root);
}
