//! Profiling a small program through the library: exact Compteur counts and
//! the timing profiler's shape.

use lupa_prof::Profile;
use lupa_prof::report::{self, Format, ReportOptions};
use lupa_profilers::{ProfileMode, ProfileOutput, ProfilerError, Workload};
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
    let run = ProfileMode::COMPTEUR
        .run(&mut vm, Workload::Program(&args))
        .expect("Compteur starts");
    assert_eq!(run.result.expect("run"), 0);
    let p = &Profile::try_from(run.output).expect("a profile");
    let fib = p.method_index("Fib>>fib:").expect("Fib>>fib: named");
    let stats = p.method_stats();
    // fib(10) makes 177 activations of fib:.
    assert_eq!(stats[fib].activations, 177);
    let folded = report::render(p, Format::Folded, &ReportOptions::default());
    assert!(folded.contains("Fib>>run;Fib>>fib:;Fib>>fib: "), "{folded}");
    // Deterministic: a second run counts the same.
    let mut vm2 = Vm::new(options(&dir)).expect("vm");
    vm2.load_class_by_name("Fib").expect("Fib");
    let again = ProfileMode::COMPTEUR
        .run(&mut vm2, Workload::Program(&args))
        .expect("Compteur starts");
    assert_eq!(
        again.output.profile().map(Profile::grand_total),
        Some(p.grand_total())
    );
    assert_eq!(p.grand_total(), SENDS);
}

/// Executed sends of `Fib new run` (pinned; `lupa count` reports the same).
const SENDS: u64 = 630;

#[test]
fn timing_profiles_the_same_methods() {
    let (dir, args) = program();
    let mut vm = Vm::new(options(&dir)).expect("vm");
    vm.load_class_by_name("Fib").expect("Fib");
    let running = ProfileMode::Timing.start(&mut vm).expect("timing starts");
    assert_eq!(running.mode(), &ProfileMode::Timing);
    vm.run_main(&args).expect("run");
    let p = Profile::try_from(running.finish(&mut vm).expect("finishes")).expect("a profile");
    assert_eq!(p.metric, lupa_prof::Metric::Nanoseconds);
    let fib = p.method_index("Fib>>fib:").expect("Fib>>fib: named");
    assert_eq!(p.method_stats()[fib].activations, 177);
}

#[test]
fn modes_parse_by_name() {
    let names: Vec<&str> = ProfileMode::ALL.iter().map(ProfileMode::name).collect();
    assert_eq!(
        names,
        [
            "compteur",
            "timing",
            "sampling",
            "lifetimes",
            "coverage",
            "types",
            "blueprint"
        ]
    );
    for m in ProfileMode::ALL {
        assert_eq!(m.name().parse::<ProfileMode>().ok(), Some(m));
    }
    assert!(matches!(
        "sampler".parse::<ProfileMode>(),
        Err(ProfilerError::Unknown(_))
    ));
    assert!(matches!(
        "sampling:250".parse::<ProfileMode>(),
        Ok(ProfileMode::Sampling(c)) if c.rate_hz == 250
    ));
}

/// Every profiler has the same lifecycle and answers its own kind of
/// output: a profile, a sampled profile, lifetimes.
#[test]
fn every_mode_runs_through_the_one_lifecycle() {
    use lupa_profilers::lifetimes::LifetimeConfig;
    use lupa_profilers::sampler::SamplerConfig;
    let (dir, args) = program();
    let modes = [
        (ProfileMode::COMPTEUR, "profile"),
        (ProfileMode::Timing, "profile"),
        (
            ProfileMode::Sampling(SamplerConfig {
                every: Some(10),
                ..SamplerConfig::DEFAULT
            }),
            "sampled profile",
        ),
        (
            ProfileMode::Lifetimes(LifetimeConfig {
                rate: 1.0,
                ..LifetimeConfig::DEFAULT
            }),
            "lifetimes",
        ),
    ];
    for (mode, kind) in modes {
        let mut vm = Vm::new(options(&dir)).expect("vm");
        vm.load_class_by_name("Fib").expect("Fib");
        let run = mode.run(&mut vm, Workload::Program(&args)).expect("starts");
        assert_eq!(run.result.expect("runs"), 0, "{mode}");
        assert_eq!(run.output.kind(), kind, "{mode}");
    }
    // A bad configuration is the one error type too.
    let mut vm = Vm::new(options(&dir)).expect("vm");
    let bad = ProfileMode::Lifetimes(LifetimeConfig {
        rate: 2.0,
        ..LifetimeConfig::DEFAULT
    });
    assert!(matches!(bad.start(&mut vm), Err(ProfilerError::Config(_))));
    let bad = ProfileMode::Sampling(SamplerConfig {
        rate_hz: 0,
        ..SamplerConfig::DEFAULT
    });
    assert!(matches!(bad.start(&mut vm), Err(ProfilerError::Sampler(_))));
}

/// The outputs of several runs merge into one profile: its counts are the
/// sum of the runs'.
#[test]
fn compteur_runs_merge() {
    let (dir, args) = program();
    let outputs = (0..3).map(|_| {
        let mut vm = Vm::new(options(&dir)).expect("vm");
        vm.load_class_by_name("Fib").expect("Fib");
        ProfileMode::COMPTEUR
            .run(&mut vm, Workload::Program(&args))
            .expect("runs")
            .output
    });
    let merged = ProfileOutput::merge_all(outputs)
        .expect("profiles merge")
        .expect("three outputs");
    let p = merged.profile().expect("a profile");
    assert_eq!(p.grand_total(), 3 * SENDS);
    let fib = p.method_index("Fib>>fib:").expect("Fib>>fib:");
    assert_eq!(p.method_stats()[fib].activations, 3 * 177);
}

const LINES: &str = "Lines = (
    run = (
        | s p |
        s := 0.
        1 to: 10 do: [:i |
            s := s + (self twice: i)].
        s := s + (self perform: #twice: with: 3).
        p := [ s := s + 1. s := s + 2 ] fork.
        Processor yield.
        ^ s printString
    )
    twice: x = ( ^ x * 2 )
)
";

/// Compteur counts each send at its line: the line costs of every method add
/// up to its self value (over processes, perform:, blocks and fast paths),
/// and the lines of one method are exactly where its sends are written.
#[test]
fn compteur_counts_sends_by_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("Lines.som"), LINES).expect("write Lines.som");
    let mut vm = Vm::new(options(&dir)).expect("vm");
    vm.load_class_by_name("Lines").expect("Lines");
    let run = ProfileMode::COMPTEUR
        .run(&mut vm, Workload::Program(&["Lines".to_string()]))
        .expect("Compteur starts");
    assert_eq!(run.result.expect("run"), 0);
    let p = &Profile::try_from(run.output).expect("a profile");
    let stats = p.method_stats();
    for (m, info) in p.methods.iter().enumerate() {
        if info.is_synthetic_root() || info.class.is_empty() {
            continue;
        }
        let by_line: u64 = info.line_costs.iter().map(|&(_, v)| v).sum();
        assert_eq!(
            by_line, stats[m].self_value,
            "{}: {:?}",
            info.name, info.line_costs
        );
    }
    let run_m = p.method_index("Lines>>run").expect("run");
    // Line 6 (the inlined loop's body), ten times: + and twice:; 7: + and
    // perform:with:; 8: fork; 9: yield; 10: printString.
    assert_eq!(
        p.methods[run_m.index()].line_costs,
        [(6, 20), (7, 2), (8, 1), (9, 1), (10, 1)]
    );
    let forked = p
        .methods
        .iter()
        .find(|m| m.name.contains("in Lines>>run"))
        .expect("the forked block");
    assert_eq!(forked.line_costs, [(8, 2)]);
    let twice = p.method_index("Lines>>twice:").expect("twice:");
    assert_eq!(p.methods[twice.index()].line_costs, [(12, 11)]);
}
