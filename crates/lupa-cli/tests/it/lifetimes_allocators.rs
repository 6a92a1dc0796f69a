//! Issue 28, point 4: Illimani's faithful mode instruments every method bound
//! to an allocating primitive (the VM's tables flag them,
//! `System>>allocatingMethods`), so it sees what each allocator makes: Array
//! copies, `copyFrom:to:`, `new:` and `new:withAll:`, `shallowCopy`, String
//! concatenation and substrings, printing, `String new:`, and the lines
//! `File>>readLine` answers. At rate 1 it records the same objects as VM mode.

use crate::common::lupa_in;
use std::collections::BTreeMap;

/// Each line allocates a known number of objects through one allocator; the
/// file `lines.txt` (three lines) is read twice.
const ALLOCS: &str = "Allocs = (
    run = (
        | a s keep |
        a := Array new: 6 withAll: 7.
        s := 'abcdef'.
        keep := Array new: 2.
        1 to: 10 do: [ :i | a copy ].
        1 to: 11 do: [ :i | a copyFrom: 2 to: 4 ].
        1 to: 12 do: [ :i | Array new: 3 ].
        1 to: 13 do: [ :i | s concatenate: 'gh' ].
        1 to: 14 do: [ :i | s primSubstringFrom: 2 to: 3 ].
        1 to: 15 do: [ :i | i printString ].
        1 to: 16 do: [ :i | String new: 4 ].
        1 to: 17 do: [ :i | a shallowCopy ].
        1 to: 2 do: [ :i |
            File readingFrom: 'lines.txt' do: [ :f | f linesDo: [ :line | keep at: 1 put: line ] ] ].
        keep at: 2 put: a copy.
        'done' println
    )
)
";

/// The Strings `File>>readLine` made, in `counts`.
fn lines_read(counts: &BTreeMap<(String, String, u32), u32>) -> u32 {
    counts
        .iter()
        .filter(|((class, method, _), _)| class == "String" && method == "File>>readLine")
        .map(|(_, n)| n)
        .sum()
}

/// The records of one run (class path `cp`), counted by class, site method
/// and site line.
fn counts(dir: &std::path::Path, cp: &str, mode: &str) -> BTreeMap<(String, String, u32), u32> {
    let r = lupa_in(
        dir,
        &[
            "lifetimes",
            "-cp",
            cp,
            "--mode",
            mode,
            "--rate",
            "1",
            "--only",
            "Array",
            "--only",
            "String",
            "--only",
            "File",
            "--format",
            "csv",
            "-o",
            "-",
            "Allocs",
        ],
    );
    assert_eq!(r.code, 0, "{mode}: {}", r.stderr);
    let mut lines = r.stdout.lines();
    assert_eq!(
        lines
            .next()
            .map(|h| h.split(',').take(5).collect::<Vec<_>>()),
        Some(vec![
            "class",
            "size_bytes",
            "site_method",
            "site_pc",
            "site_line"
        ])
    );
    let mut out = BTreeMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 5 {
            continue; // the program's own output ("done")
        }
        let line_no = f[4].parse().unwrap_or(0);
        *out.entry((f[0].to_string(), f[2].to_string(), line_no))
            .or_insert(0) += 1;
    }
    out
}

#[test]
fn faithful_mode_sees_every_allocating_primitive_as_vm_mode_does() {
    let dir = crate::common::classes(&[("Allocs.som", ALLOCS)]);
    std::fs::write(dir.path().join("lines.txt"), "alpha\nbeta\ngamma\n").expect("written");
    let faithful = counts(dir.path(), ".", "faithful");
    let site = |class: &str, method: &str, line: u32| {
        faithful
            .get(&(class.to_string(), method.to_string(), line))
            .copied()
            .unwrap_or(0)
    };
    let run = "Allocs>>run";
    assert_eq!(site("Array", run, 4), 1, "new:withAll: {faithful:?}");
    assert_eq!(site("Array", run, 6), 1, "new:");
    assert_eq!(site("Array", run, 7), 10, "copy (copyFrom:to:)");
    assert_eq!(site("Array", run, 8), 11, "copyFrom:to:");
    assert_eq!(site("Array", run, 9), 12, "Array new:");
    assert_eq!(site("String", run, 10), 13, "concatenate:");
    assert_eq!(site("String", run, 11), 14, "primSubstringFrom:to:");
    assert_eq!(site("String", "Integer>>printString", 116), 15, "asString");
    assert_eq!(site("String", run, 13), 16, "String new:");
    assert_eq!(site("Array", run, 14), 17, "shallowCopy");
    assert_eq!(site("Array", run, 17), 1, "copy");
    assert_eq!(lines_read(&faithful), 6, "readLine: 3 lines, twice");
    let files: u32 = faithful
        .iter()
        .filter(|((class, _, _), _)| class == "File")
        .map(|(_, n)| n)
        .sum();
    assert_eq!(files, 2, "File new");

    // VM mode records the same, plus what the VM makes before the program's
    // first send (the arguments of `System>>initialize:`), which no method
    // of the program's allocates.
    let mut vm = counts(dir.path(), ".", "vm");
    vm.retain(|(_, method, _), _| method != "System>>initialize:");
    assert_eq!(vm, faithful);
}

/// The same program on SOM's own core-lib (when a checkout is at hand,
/// `LUPA_SOM_DIR`): faithful mode runs (MethodProxies' registries stand on
/// Array alone, `ProfilingMap`) and records what VM mode records, but for
/// the Arrays SOM's `Class>>hasMethod:` gets from `Class>>methods` (not an
/// allocator: it answers the class's cached Array when it has one).
#[test]
fn faithful_mode_sees_the_allocators_on_soms_core_lib() {
    let Some(som) = crate::common::som_dir("Smalltalk/Object.som") else {
        return;
    };
    let dir = crate::common::classes(&[("Allocs.som", ALLOCS)]);
    std::fs::write(dir.path().join("lines.txt"), "alpha\nbeta\ngamma\n").expect("written");
    let cp = format!("{}:.", som.join("Smalltalk").display());
    let faithful = counts(dir.path(), &cp, "faithful");
    let mut vm = counts(dir.path(), &cp, "vm");
    vm.retain(|(_, method, _), _| method != "System>>initialize:" && method != "Class>>hasMethod:");
    assert_eq!(vm, faithful);
    assert_eq!(lines_read(&faithful), 6, "readLine: 3 lines, twice");
}
