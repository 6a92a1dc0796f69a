//! Profiling a small program through the library: exact Compteur counts, the
//! timing profiler's shape, and the measuring helper.

use lupa_prof::report::{self, Format, ReportOptions};
use lupa_profilers::{Capture, ProfileMode, measure};
use lupa_vm::{Vm, VmOptions};

const FIB: &str = "Fib = (
    run = ( ^ self fib: 10 )
    fib: n = ( n < 2 ifTrue: [ ^ n ]. ^ (self fib: n - 1) + (self fib: n - 2) )
)
";

fn options(dir: &tempfile::TempDir) -> VmOptions {
    VmOptions {
        class_path: vec![dir.path().to_path_buf()],
        quiet: true,
        ..VmOptions::default()
    }
}

fn program() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("Fib.som"), FIB).expect("write Fib.som");
    (dir, vec!["Fib".to_string()])
}

#[test]
fn compteur_counts_exactly() {
    let (dir, args) = program();
    let mut vm = Vm::new(options(&dir)).expect("vm");
    vm.load_class_by_name("Fib").expect("Fib");
    let run = ProfileMode::Compteur.run_main(&mut vm, &args);
    assert_eq!(run.result.expect("run"), 0);
    let p = &run.profile;
    let fib = p.method_index("Fib>>fib:").expect("Fib>>fib: named");
    let stats = p.method_stats();
    // fib(10) makes 177 activations of fib:.
    assert_eq!(stats[fib].activations, 177);
    let folded = report::render(p, Format::Folded, &ReportOptions::default());
    assert!(folded.contains("Fib>>run;Fib>>fib:;Fib>>fib: "), "{folded}");
    // Deterministic: a second run counts the same.
    let mut vm2 = Vm::new(options(&dir)).expect("vm");
    vm2.load_class_by_name("Fib").expect("Fib");
    let again = ProfileMode::Compteur.run_main(&mut vm2, &args);
    assert_eq!(again.profile.grand_total(), p.grand_total());
    assert_eq!(p.grand_total(), SENDS);
}

/// Executed sends of `Fib new run` (pinned; `lupa count` reports the same).
const SENDS: u64 = 630;

#[test]
fn timing_profiles_the_same_methods() {
    let (dir, args) = program();
    let mut vm = Vm::new(options(&dir)).expect("vm");
    vm.load_class_by_name("Fib").expect("Fib");
    let running = ProfileMode::Timing.start(&mut vm);
    assert_eq!(running.mode(), ProfileMode::Timing);
    vm.run_main(&args).expect("run");
    let p = running.finish(&mut vm);
    assert_eq!(p.metric, lupa_prof::Metric::Nanoseconds);
    let fib = p.method_index("Fib>>fib:").expect("Fib>>fib: named");
    assert_eq!(p.method_stats()[fib].activations, 177);
}

#[test]
fn modes_parse_by_name() {
    for m in ProfileMode::ALL {
        assert_eq!(m.name().parse::<ProfileMode>(), Ok(m));
    }
    assert!("sampler".parse::<ProfileMode>().is_err());
}

#[test]
fn measure_one_run() {
    let (dir, args) = program();
    let m = measure(options(&dir), &args, Capture::Output).expect("measure");
    assert_eq!(m.exit_code, 0);
    assert_eq!(m.output.as_deref(), Some(""));
    assert!(m.sends > 0);
    assert!(measure(options(&dir), &["Nope".to_string()], Capture::None).is_err());
}
