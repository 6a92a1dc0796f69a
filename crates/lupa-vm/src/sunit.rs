//! Running the SUnit tests of the class library from Rust: what `lupa test` and the
//! per-suite Rust tests (`crates/lupa-profilers/tests/sunit.rs`) share.
//!
//! Where tests live: a test class is a concrete `TestCase` subclass. In the bundled
//! library, every class directly in a folder named `Tests` is a candidate — the
//! kernel's `smalltalk/Tests/` as well as a package's own folder such as
//! `smalltalk/Profiling/MethodProxies/Tests/` or `smalltalk/SUnit/Tests/` — so each
//! package owns its tests. Helper classes may live apart in `Tests/Support/` (the
//! kernel's and SUnit's do): they are found by the class-path search like any bundled
//! class but are never candidates, so a `TestCase` subclass that only serves as a
//! fixture there is not run as a suite. On a user class path, every class directly in
//! a class-path directory is a candidate. Candidates that are not `TestCase`
//! subclasses (helpers) are skipped.
//!
//! The run itself is Smalltalk: `LupaTestRunner>>runOnly:` runs every test
//! selector of each class and prints one `FAIL`/`ERROR` line per problem through
//! the VM's output; then `LupaTestRunner>>printSummaryWith:` prints the final
//! `N passed, M failed` line, given the processes forked by tests that ended
//! with an unhandled error, which count as failed tests (the runner does not
//! see them: the VM ends them).

use crate::image::BUNDLED;
use crate::vm::{Vm, VmError};
use lupa_heap::Value;

/// The outcome of a test run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestSummary {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed or raised an error.
    pub failed: u64,
}

impl TestSummary {
    /// Every test passed (and at least one ran).
    pub fn ok(&self) -> bool {
        self.failed == 0
    }
}

/// Does a bundled path (relative to `smalltalk/`) lie directly in a `Tests` folder
/// (not in a subfolder such as `Tests/Support/`)?
fn in_tests_folder(path: &str) -> bool {
    path.rsplit('/').nth(1) == Some("Tests")
}

/// Names of the bundled classes that live directly in a `Tests` folder, sorted.
pub fn bundled_test_candidates() -> Vec<String> {
    let mut names: Vec<String> = BUNDLED
        .iter()
        .filter(|(path, _)| in_tests_folder(path))
        .map(|(path, _)| {
            let base = path.rsplit('/').next().unwrap_or(path);
            base.trim_end_matches(".som").to_string()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

impl Vm {
    /// Names of the classes `lupa test` considers when no class is named: those of the
    /// class path, and — when `with_bundled` — the bundled classes in `Tests` folders.
    pub fn test_candidates(&self, with_bundled: bool) -> Vec<String> {
        let mut names = self.image.available_class_names(None);
        if with_bundled {
            names.extend(bundled_test_candidates());
        }
        names.sort();
        names.dedup();
        names
    }

    /// The `TestCase` subclasses among `names` (loading them; other classes are skipped).
    pub fn test_classes(&mut self, names: &[String]) -> Result<Vec<u32>, VmError> {
        let test_case = self.load_class_by_name("TestCase")?;
        let mut classes = Vec::new();
        for name in names {
            let c = self.load_class_by_name(name)?;
            if c != test_case && self.image.is_kind_of(c, test_case) {
                classes.push(c);
            }
        }
        Ok(classes)
    }

    /// Run the tests of these classes with `LupaTestRunner`, printing its lines and the
    /// summary line through the VM's output, and answer the counts.
    pub fn run_test_classes(&mut self, classes: &[u32]) -> Result<TestSummary, VmError> {
        let objects: Vec<Value> = classes
            .iter()
            .map(|&c| self.image.class_object(c))
            .collect();
        let arr = self.new_array(&objects)?;
        self.handles.push(arr);
        let runner_class = self.class_named("LupaTestRunner");
        let runner = match runner_class {
            Ok(rc) => self.send_message(rc, "new", &[]),
            Err(e) => Err(e),
        };
        let arr = self.handles.pop().unwrap_or(Value::NIL);
        let runner = runner?;
        self.handles.push(runner);
        self.io.running_tests = true;
        self.io.test_process = self.sched.current;
        self.io.failed_forks = 0;
        let ran = self.send_message(runner, "runOnly:", &[arr]);
        self.io.running_tests = false;
        // The summary line: the runner's wording, with the failed forks.
        let forks = Value::small(self.io.failed_forks.min(1 << 30) as i64);
        let printed = ran.and_then(|_| {
            let runner = self.handles.last().copied().unwrap_or(Value::NIL);
            self.send_message(runner, "printSummaryWith:", &[forks])
        });
        let runner = self.handles.pop().unwrap_or(Value::NIL);
        printed?;
        let result = self.send_message(runner, "result", &[])?;
        self.handles.push(result);
        let passed = self.send_message(result, "passedCount", &[]);
        let failures = self.send_message(result, "failureCount", &[]);
        let errors = self.send_message(result, "errorCount", &[]);
        self.handles.pop();
        let count = |v: Result<Value, VmError>| -> Result<u64, VmError> {
            let v = v?;
            v.as_int()
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| {
                    VmError::Fatal("TestResult answered a count that is not an integer".into())
                })
        };
        Ok(TestSummary {
            passed: count(passed)?,
            failed: count(failures)? + count(errors)? + self.io.failed_forks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_folders() {
        assert!(in_tests_folder("Tests/LupaArrayTest.som"));
        assert!(in_tests_folder(
            "Profiling/MethodProxies/Tests/LupaMpTrapTest.som"
        ));
        assert!(in_tests_folder("SUnit/Tests/LupaSUnitTest.som"));
        assert!(!in_tests_folder("Tests/Support/LupaCustomError.som"));
        assert!(!in_tests_folder("Kernel/Tests.som"));
        assert!(!in_tests_folder("SUnit/TestCase.som"));
        assert!(!in_tests_folder("Tests"));
        let names = bundled_test_candidates();
        assert!(names.iter().any(|n| n == "LupaArrayTest"));
        assert!(names.iter().any(|n| n == "LupaMpTrapTest"));
        assert!(names.iter().any(|n| n == "LupaCompteurTest"));
        assert!(names.iter().any(|n| n == "LupaSUnitTest"));
        assert!(!names.iter().any(|n| n == "TestCase"));
        // Helpers apart from the tests, among them a TestCase that is only a fixture.
        assert!(!names.iter().any(|n| n == "LupaCustomError"));
        assert!(!names.iter().any(|n| n == "LupaSUnitExample"));
    }
}
