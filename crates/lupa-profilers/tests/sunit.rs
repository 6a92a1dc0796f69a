//! Every bundled SUnit class as its own Rust test, run through the VM library in a
//! VM set up as the `lupa` binary sets it up (the profilers installed, so that
//! `Compteur profile:` works): a failure names its suite
//! (`cargo test -p lupa-profilers --test sunit -- LupaArrayTest`).
//!
//! The suites are the bundled classes directly in `Tests` folders (see `lupa_vm::sunit`)
//! that are `TestCase` subclasses: helpers (a package's fixtures beside its tests) are
//! not listed; abstract suites pass trivially.
//! Each suite runs in a fresh VM with its output captured, and the failure message
//! is the runner's `FAIL`/`ERROR` lines and summary.

use libtest_mimic::{Arguments, Failed, Trial};
use lupa_vm::{Vm, VmOptions};

fn run_suite(name: &str) -> Result<(), Failed> {
    let mut vm = Vm::new(VmOptions::default()).map_err(|e| format!("VM start: {e}"))?;
    lupa_profilers::install(&mut vm);
    vm.io.capture_output();
    let classes = vm
        .test_classes(&[name.to_string()])
        .map_err(|e| format!("loading {name}: {e}"))?;
    if classes.is_empty() {
        return Ok(()); // not a TestCase (listed only when the listing VM could not start)
    }
    let summary = vm.run_test_classes(&classes);
    let output = vm.io.take_captured();
    match summary {
        Ok(s) if s.ok() => Ok(()),
        Ok(s) => Err(format!("{} failed of {}:\n{output}", s.failed, s.failed + s.passed).into()),
        Err(e) => Err(format!("the suite did not finish: {e}\n{output}").into()),
    }
}

/// The bundled candidates that are `TestCase` subclasses, found by loading them in one
/// VM. A candidate that does not load stays, so that its trial says why.
fn suites() -> Vec<String> {
    let candidates = lupa_vm::sunit::bundled_test_candidates();
    let Ok(mut vm) = Vm::new(VmOptions::default()) else {
        return candidates;
    };
    candidates
        .into_iter()
        .filter(|name| {
            vm.test_classes(std::slice::from_ref(name))
                .map_or(true, |classes| !classes.is_empty())
        })
        .collect()
}

fn main() {
    let args = Arguments::from_args();
    let trials = suites()
        .into_iter()
        .map(|name| Trial::test(name.clone(), move || run_suite(&name)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
