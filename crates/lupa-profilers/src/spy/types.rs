//! Type feedback from the command line: Spy's `TypeProfiler` over the named
//! packages while SUnit tests or a program run; per method, the generalised
//! classes of its arguments and answer, and the argument classes that sibling
//! implementations saw and it did not.

use lupa_vm::{Value, Vm, VmError};
use serde::Serialize;

use super::{Handles, class_array, count, elements, send, string_array, text};

/// One method's types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MethodTypes {
    /// `Foo` or `Foo class`.
    pub class: String,
    /// The selector.
    pub selector: String,
    /// Calls seen.
    pub calls: u64,
    /// One type per argument (a class name, `nil` when it was only nil,
    /// `?` when never called), `| nil` appended when nil was seen too.
    pub arguments: Vec<String>,
    /// The answer's type, the same way.
    pub returns: String,
    /// `Foo >> at: <Integer> put: <String | nil> ^ <Foo>`.
    pub signature: String,
}

/// What a type-feedback run answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TypesRun {
    /// Schema version of the JSON form.
    pub version: u32,
    /// The command.
    pub command: String,
    /// Methods, sorted by signature.
    pub methods: Vec<MethodTypes>,
    /// `C>>sel: argument N was never X (as in D>>sel:)` and `never called` lines.
    pub missing: Vec<String>,
}

/// How the profiled code is run.
pub enum Workload<'a> {
    /// SUnit test classes (their output as `lupa test` prints it).
    Tests(&'a [u32]),
    /// A program: `CLASS ARGS` as `lupa run` takes them.
    Program(&'a [String]),
}

/// Run `work` under `TypeProfiler` over `packages`. The exit status is
/// answered beside the result: the program's, or 1 when a test did not pass.
pub fn run(
    vm: &mut Vm,
    work: Workload<'_>,
    packages: &[String],
    command: &str,
) -> Result<(TypesRun, Option<i32>), VmError> {
    let h = Handles::new(vm);
    let result = run_rooted(vm, &h, work, packages, command);
    h.release(vm);
    result
}

fn run_rooted(
    vm: &mut Vm,
    h: &Handles,
    work: Workload<'_>,
    packages: &[String],
    command: &str,
) -> Result<(TypesRun, Option<i32>), VmError> {
    let class = vm.class_named("TypeProfiler")?;
    let profiler = vm.send_message(class, "new", &[])?;
    let p = h.keep(vm, profiler);
    let names = string_array(vm, h, packages)?;
    let status = match work {
        Workload::Tests(tests) => {
            let classes = class_array(vm, h, tests)?;
            let (classes, names) = (h.get(vm, classes), h.get(vm, names));
            send(
                vm,
                h,
                p,
                "runTestClasses:inPackagesNamed:",
                &[classes, names],
            )?;
            let passed = send(vm, h, p, "testsPassed", &[])? == Value::TRUE;
            if passed { 0 } else { 1 }
        }
        Workload::Program(args) => {
            let names = h.get(vm, names);
            send(vm, h, p, "addPackagesNamed:", &[names])?;
            send(vm, h, p, "install", &[])?;
            let ran = vm.run_main(args);
            send(vm, h, p, "uninstall", &[])?;
            ran?
        }
    };
    let v = send(vm, h, p, "allMethods", &[])?;
    let all = h.keep(vm, v);
    let spies = elements(vm, h, all, "allMethods")?;
    let mark = vm.handles.len();
    let mut methods = Vec::new();
    for spy in spies {
        h.truncate(vm, mark);
        let cs = send(vm, h, spy, "classSpy", &[])?;
        let name = vm.send_message(cs, "name", &[])?;
        let class = text(vm, name, "a class spy's name")?;
        let sel = send(vm, h, spy, "selector", &[])?;
        let selector = text(vm, sel, "selector")?;
        let calls = count(send(vm, h, spy, "numberOfCalls", &[])?, "numberOfCalls")?;
        let sig = send(vm, h, spy, "signature", &[])?;
        let signature = text(vm, sig, "signature")?;
        let (arguments, returns) = parse_signature(&signature);
        methods.push(MethodTypes {
            class,
            selector,
            calls,
            arguments,
            returns,
            signature,
        });
    }
    h.truncate(vm, mark);
    methods.sort_by(|a, b| a.signature.cmp(&b.signature));
    let v = send(vm, h, p, "missingArgumentClasses", &[])?;
    let m = h.keep(vm, v);
    let mut missing = Vec::new();
    for e in elements(vm, h, m, "missingArgumentClasses")? {
        let v: Value = h.get(vm, e);
        missing.push(text(vm, v, "a missing-class line")?);
    }
    Ok((
        TypesRun {
            version: 1,
            command: command.to_string(),
            methods,
            missing,
        },
        Some(status),
    ))
}

/// The argument and answer types written in a signature (`<...>` groups;
/// the last is the answer's).
fn parse_signature(signature: &str) -> (Vec<String>, String) {
    let mut types: Vec<String> = signature
        .split('<')
        .skip(1)
        .filter_map(|s| s.split_once('>').map(|(t, _)| t.trim().to_string()))
        .collect();
    let returns = types.pop().unwrap_or_default();
    (types, returns)
}

impl TypesRun {
    /// The text report: one signature per line, then the missing argument classes.
    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n", self.command);
        for m in &self.methods {
            out.push_str(&m.signature);
            if m.calls == 0 {
                out.push_str("    (never called)");
            }
            out.push('\n');
        }
        if !self.missing.is_empty() {
            out.push_str("\nArgument classes sibling implementations saw and these did not:\n");
            for l in &self.missing {
                out.push_str("  ");
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    /// The JSON document (pretty), `version` first.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::parse_signature;

    #[test]
    fn signatures_split_into_types() {
        let (args, ret) = parse_signature("Foo >> at: <Integer> put: <String | nil> ^ <Foo>");
        assert_eq!(args, ["Integer", "String | nil"]);
        assert_eq!(ret, "Foo");
        let (args, ret) = parse_signature("Foo >> size ^ <?>");
        assert!(args.is_empty());
        assert_eq!(ret, "?");
    }
}
