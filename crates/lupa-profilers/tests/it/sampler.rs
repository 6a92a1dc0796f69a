//! The sampling profiler through the library: exact and repeatable samples in
//! deterministic mode, CPU-time weights with the thread (bounds wide enough for
//! any load: nothing here depends on wall time), VM states (primitives,
//! scavenges, allocation, finalization, idle), processes, and source lines.

use lupa_prof::report::{self, Format, ReportOptions};
use lupa_profilers::sampler::{RunningSampler, SampleClock, SamplerConfig, SamplerError};
use lupa_vm::{Vm, VmOptions, VmState};

/// `heavy` does four times the work of `light`, each in its own method.
const WORK: &str = "Work = (
    run = ( | s | s := 0. 1 to: 40 do: [ :i | s := s + self heavy + self light ]. ^ s )
    heavy = ( | s | s := 0. 1 to: 4000 do: [ :i | s := s + (self id: i) ]. ^ s )
    light = ( | s | s := 0. 1 to: 1000 do: [ :i | s := s + (self id: i) ]. ^ s )
    id: x = ( ^ x )
)
";

/// Allocates arrays in a loop (primitive `new:`, and scavenges in a small eden).
const ALLOC: &str = "Alloc = (
    run = ( | a | 1 to: 30000 do: [ :i | a := Array new: 100. a at: 1 put: i ]. ^ a )
)
";

/// The main process prepares, then waits while a forked process works.
const FORK: &str = "Fork = (
    run = ( | s | self prepare. s := Semaphore new. [ self work. s signal ] fork. s wait )
    prepare = ( | t | t := 0. 1 to: 20000 do: [ :i | t := t + (self id: i) ]. ^ t )
    work = ( | t | t := 0. 1 to: 20000 do: [ :i | t := t + (self id: i) ]. ^ t )
    id: x = ( ^ x )
)
";

fn vm_with(files: &[(&str, &str)], eden: Option<usize>) -> (tempfile::TempDir, Vm) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let mut options = VmOptions {
        class_path: vec![dir.path().to_path_buf()],
        quiet: true,
        ..VmOptions::default()
    };
    if let Some(e) = eden {
        options.heap.eden_size = e;
    }
    let vm = Vm::new(options).expect("vm");
    (dir, vm)
}

fn sample(
    class: &str,
    source: &str,
    config: SamplerConfig,
    eden: Option<usize>,
) -> lupa_profilers::sampler::Sampled {
    sample_with(class, source, &[], config, eden)
}

/// [`sample`] with other class files beside the main one.
fn sample_with(
    class: &str,
    source: &str,
    others: &[(&str, &str)],
    config: SamplerConfig,
    eden: Option<usize>,
) -> lupa_profilers::sampler::Sampled {
    let main = format!("{class}.som");
    let mut files = vec![(main.as_str(), source)];
    files.extend_from_slice(others);
    let (_dir, mut vm) = vm_with(&files, eden);
    vm.load_class_by_name(class).expect("load");
    let running = RunningSampler::start(&mut vm, config).expect("start");
    let code = vm.run_main(&[class.to_string()]).expect("run");
    assert_eq!(code, 0);
    let sampled = running.finish(&mut vm);
    sampled.profile.validate().expect("a valid profile");
    sampled
}

/// Samples `make(scale)` for growing scales until `enough` holds of the
/// profile (or the largest scale was tried): how many ticks land in a run
/// depends on the machine's load, never on the test, so the work grows instead
/// of the test failing on a busy machine.
fn sample_until(
    class: &str,
    make: impl Fn(u32) -> String,
    config: SamplerConfig,
    eden: Option<usize>,
    enough: impl Fn(&lupa_profilers::sampler::Sampled) -> bool,
) -> lupa_profilers::sampler::Sampled {
    sample_until_with(class, &[], make, config, eden, enough)
}

/// [`sample_until`] with other class files beside the main one.
fn sample_until_with(
    class: &str,
    others: &[(&str, &str)],
    make: impl Fn(u32) -> String,
    config: SamplerConfig,
    eden: Option<usize>,
    enough: impl Fn(&lupa_profilers::sampler::Sampled) -> bool,
) -> lupa_profilers::sampler::Sampled {
    let mut last = None;
    for scale in [1, 4, 16, 64] {
        let s = sample_with(class, &make(scale), others, config, eden);
        if enough(&s) {
            return s;
        }
        eprintln!("scale {scale}: {} samples, not enough yet", s.stats.samples);
        last = Some(s);
    }
    last.expect("at least one scale")
}

fn every(n: u64) -> SamplerConfig {
    SamplerConfig {
        every: Some(n),
        ..SamplerConfig::default()
    }
}

fn total_of(p: &lupa_prof::Profile, name: &str) -> u64 {
    let m = p
        .method_index(name)
        .unwrap_or_else(|| panic!("{name} in the profile"));
    p.method_stats()[m.index()].total
}

#[test]
fn deterministic_samples_are_exact_and_repeatable() {
    let a = sample("Work", WORK, every(97), None);
    let b = sample("Work", WORK, every(97), None);
    let folded = |s: &lupa_profilers::sampler::Sampled| {
        report::render(&s.profile, Format::Folded, &ReportOptions::default())
    };
    assert_eq!(folded(&a), folded(&b), "the same samples on every run");
    let st = &a.stats;
    assert_eq!(st.samples, a.profile.grand_total());
    // One sample each time the send counter passes a multiple of 97.
    assert_eq!(st.samples, st.sends / 97, "{} sends", st.sends);
    assert_eq!(st.achieved_hz, None);
    let (heavy, light) = (
        total_of(&a.profile, "Work>>heavy"),
        total_of(&a.profile, "Work>>light"),
    );
    // Sends are 4:1; samples every 97 sends follow within a few samples.
    let ratio = heavy as f64 / light as f64;
    assert!((3.8..4.2).contains(&ratio), "heavy {heavy}, light {light}");
    // Samples are located at their source line: per method, the line costs
    // add up to the self value, on lines of the method.
    for (i, m) in a.profile.methods.iter().enumerate() {
        let self_value = a.profile.method_stats()[i].self_value;
        let by_line: u64 = m.line_costs.iter().map(|&(_, v)| v).sum();
        assert_eq!(by_line, self_value, "{}", m.name);
    }
    let heavy = &a.profile.methods[a
        .profile
        .method_index("Work>>heavy")
        .expect("heavy")
        .index()];
    assert_eq!(
        heavy.line_costs.iter().map(|&(l, _)| l).collect::<Vec<_>>(),
        vec![3]
    );
}

#[test]
fn the_thread_weighs_samples_by_the_vm_threads_cpu_time() {
    let config = SamplerConfig {
        rate_hz: 2000,
        ..SamplerConfig::default()
    };
    // Enough work for a few hundred milliseconds of CPU in a debug build.
    let s = sample_until(
        "Work",
        |scale| WORK.replace("1 to: 40 do:", &format!("1 to: {} do:", 400 * scale)),
        config,
        None,
        |s| s.stats.samples >= 20,
    );
    let st = &s.stats;
    let cpu = st.cpu.expect("a CPU clock on Linux").as_nanos() as u64;
    let total = s.profile.grand_total();
    assert!(st.samples >= 20, "{} samples", st.samples);
    // The weights are CPU time between ticks: they add up to the run's CPU
    // time but for the part after the last tick (at most a few intervals,
    // whatever the machine's load).
    assert!(total <= cpu, "weights {total} > CPU {cpu}");
    assert!(
        total as f64 >= 0.25 * cpu as f64,
        "weights {total} < a quarter of CPU {cpu}"
    );
    let ratio =
        total_of(&s.profile, "Work>>heavy") as f64 / total_of(&s.profile, "Work>>light") as f64;
    assert!((2.0..8.0).contains(&ratio), "heavy/light {ratio}");
    assert!(st.achieved_hz.is_some_and(|hz| hz > 0.0));
    assert_eq!(st.config.clock, SampleClock::Cpu);
}

#[test]
fn primitives_and_scavenges_are_leaves_of_their_own() {
    let config = SamplerConfig {
        rate_hz: 5000,
        ..SamplerConfig::default()
    };
    let s = sample_until(
        "Alloc",
        |scale| ALLOC.replace("30000", &(300_000 * scale).to_string()),
        config,
        Some(128 * 1024),
        |s| {
            let st = &s.stats.states;
            st[VmState::Scavenge as usize].samples > 0
                && st[VmState::Primitive as usize].samples > 0
        },
    );
    let st = &s.stats;
    assert!(st.gc.scavenges > 10, "{} scavenges", st.gc.scavenges);
    let share = |state: VmState| st.states[state as usize];
    assert!(share(VmState::Scavenge).samples > 0, "{:?}", st.states);
    assert!(share(VmState::Primitive).samples > 0, "{:?}", st.states);
    let p = &s.profile;
    let scavenge = p.method_index("<scavenge>").expect("a <scavenge> leaf");
    assert_eq!(
        p.methods[scavenge.index()].category,
        "GC",
        "the Firefox category"
    );
    let new = p
        .method_index("Array class>>new:")
        .expect("the primitive's method is a leaf");
    // Its time is its own and its allocation's (`<allocation>` below it).
    assert!(p.method_stats()[new.index()].total > 0);
    let folded = report::render(p, Format::Folded, &ReportOptions::default());
    assert!(folded.contains("Alloc>>run;Array class>>new:"), "{folded}");
    assert!(folded.contains("Alloc>>run;<scavenge> "), "{folded}");
}

#[test]
fn forked_processes_have_trees_of_their_own() {
    let s = sample("Fork", FORK, every(50), None);
    let p = &s.profile;
    let folded = report::render(p, Format::Folded, &ReportOptions::default());
    assert!(
        folded
            .lines()
            .any(|l| l.starts_with("<process 1>;") && l.contains("Fork>>work")),
        "{folded}"
    );
    assert!(
        folded
            .lines()
            .any(|l| l.contains("Fork>>run;Fork>>prepare")),
        "{folded}"
    );
    assert!(
        !folded
            .lines()
            .any(|l| !l.starts_with("<process") && l.contains("Fork>>work"))
    );
    assert_eq!(s.stats.processes, 2);
}

#[test]
fn bad_configurations_are_refused() {
    let (_dir, mut vm) = vm_with(&[], None);
    let bad = |c: SamplerConfig| c.validate().err();
    assert_eq!(bad(every(0)), Some(SamplerError::Every));
    let rate = |r| SamplerConfig {
        rate_hz: r,
        ..SamplerConfig::default()
    };
    assert_eq!(bad(rate(0)), Some(SamplerError::Rate(0)));
    assert_eq!(bad(rate(1_000_000)), Some(SamplerError::Rate(1_000_000)));
    assert!(RunningSampler::start(&mut vm, rate(0)).is_err());
    assert_eq!("wall".parse::<SampleClock>(), Ok(SampleClock::Wall));
    assert!("gpu".parse::<SampleClock>().is_err());
}

#[test]
fn a_vm_can_be_sampled_again() {
    let (_dir, mut vm) = vm_with(&[("Work.som", WORK)], None);
    vm.load_class_by_name("Work").expect("load");
    for round in 0..3 {
        let running = RunningSampler::start(&mut vm, every(97)).expect("start");
        vm.run_main(&["Work".to_string()]).expect("run");
        let s = running.finish(&mut vm);
        assert!(
            s.profile.method_index("Work>>heavy").is_some(),
            "round {round}"
        );
    }
    for round in 0..3 {
        let config = SamplerConfig {
            rate_hz: 5000,
            ..SamplerConfig::default()
        };
        let running = RunningSampler::start(&mut vm, config).expect("start");
        // Ten runs (about 0.2 s of the VM's CPU time in a test build): on a loaded
        // machine the sampler thread may not get the CPU during a single short run.
        for _ in 0..10 {
            vm.run_main(&["Work".to_string()]).expect("run");
        }
        let s = running.finish(&mut vm);
        let folded = report::render(&s.profile, Format::Folded, &ReportOptions::default());
        assert!(
            s.profile.method_index("Work>>heavy").is_some(),
            "round {round}: {folded}"
        );
    }
}

/// Started and stopped from Smalltalk several times in one run: the VM state
/// published by one session (stopped inside a primitive) does not leak into
/// the next (it did: every sample of the second session was charged to
/// `System>>stopProfilerData`).
#[test]
fn sampled_again_from_smalltalk() {
    let again = "Again = (
        heavy = ( | s | s := 0. 1 to: 4000 do: [ :i | s := s + (self id: i) ]. ^ s )
        id: x = ( ^ x )
        run = ( 1 to: 3 do: [ :k | | p |
            p := VMProfiler spyOn: [ 1 to: 50 do: [ :i | self heavy ] ] rate: 5000.
            (p samplesFor: Again >> #heavy) * 2 > p totalSamples ifFalse: [ system exit: 10 + k ] ] )
    )";
    let (_dir, mut vm) = vm_with(&[("Again.som", again)], None);
    lupa_profilers::install(&mut vm);
    vm.load_class_by_name("Again").expect("load");
    assert_eq!(vm.run_main(&["Again".to_string()]).expect("run"), 0);
}

/// Three methods with the same loop body and 5:3:2 iterations; `five` runs
/// two loops, 3:1.
const SHARES: &str = "Shares = (
    run = ( 1 to: 240 do: [ :k | self five. self three. self two ] )
    five = ( | s |
        s := 0.
        1 to: 3750 do: [ :i | s := s + (self id: i) ].
        1 to: 1250 do: [ :i | s := s + (self id: i) ].
        ^ s )
    three = ( | s | s := 0. 1 to: 3000 do: [ :i | s := s + (self id: i) ]. ^ s )
    two = ( | s | s := 0. 1 to: 2000 do: [ :i | s := s + (self id: i) ]. ^ s )
    id: x = ( ^ x )
)
";

/// A share is within this of its expected value in every run: four binomial
/// standard deviations, and 3 points for what is not in the loops (calls,
/// loop set-up) and for the clock's granularity.
fn bound(p: f64, n: u64) -> f64 {
    4.0 * (p * (1.0 - p) / n as f64).sqrt() + 0.03
}

#[test]
fn sampled_shares_are_within_the_binomial_bound() {
    let config = SamplerConfig {
        rate_hz: 5000,
        unweighted: true,
        ..SamplerConfig::default()
    };
    let s = sample_until(
        "Shares",
        |scale| SHARES.replace("1 to: 240 do:", &format!("1 to: {} do:", 240 * scale)),
        config,
        None,
        |s| s.profile.grand_total() >= 100,
    );
    let p = &s.profile;
    let n = p.grand_total();
    assert!(n >= 100, "{n} samples");
    let self_of = |name: &str| {
        let m = p.method_index(name).unwrap_or_else(|| panic!("{name}"));
        p.method_stats()[m.index()].self_value
    };
    let (five, three, two) = (
        self_of("Shares>>five"),
        self_of("Shares>>three"),
        self_of("Shares>>two"),
    );
    let loops = (five + three + two) as f64;
    assert!(loops / n as f64 > 0.9, "the loops are nearly all the time");
    for (name, got, want) in [
        ("five", five, 0.5),
        ("three", three, 0.3),
        ("two", two, 0.2),
    ] {
        let share = got as f64 / loops;
        eprintln!("{name}: {share:.3} (expected {want}, {n} samples)");
        assert!(
            (share - want).abs() <= bound(want, loops as u64),
            "{name}: {share:.3} of the samples, expected {want} ± {:.3} ({n} samples)",
            bound(want, loops as u64)
        );
    }
    assert!(five > three && three > two, "the hottest method is right");
    // The two loops of `five`, by source line (lines 5 and 6 of the file).
    let m = &p.methods[p.method_index("Shares>>five").expect("five").index()];
    let line = |l: u32| {
        m.line_costs
            .iter()
            .find(|&&(x, _)| x == l)
            .map_or(0, |&(_, v)| v)
    };
    let (first, second) = (line(5), line(6));
    let share = first as f64 / (first + second) as f64;
    eprintln!("first loop: {share:.3} (expected 0.75)");
    assert!(
        (share - 0.75).abs() <= bound(0.75, first + second),
        "first loop {first}, second {second}: {:?}",
        m.line_costs
    );
}

/// The collector times itself on the wall clock, so the sampler uses it
/// too here: both shares then move together when the machine is loaded (the
/// VM thread descheduled in a collection counts in both).
#[test]
fn the_sampled_gc_share_matches_the_collectors_own_time() {
    let config = SamplerConfig {
        rate_hz: 5000,
        clock: SampleClock::Wall,
        ..SamplerConfig::default()
    };
    let source = ALLOC.replace("30000", "400000");
    let s = sample("Alloc", &source, config, Some(64 * 1024));
    let st = &s.stats;
    let total = s.profile.grand_total().max(1);
    let timed = (st.gc.scavenge_time + st.gc.full_gc_time).as_nanos() as f64 / total as f64;
    let gc_value: u64 = st
        .states
        .iter()
        .filter(|x| x.state.is_gc())
        .map(|x| x.value)
        .sum();
    let sampled = gc_value as f64 / total as f64;
    eprintln!(
        "GC share: sampled {sampled:.3}, timed {timed:.3}, {} samples",
        st.samples
    );
    assert!(timed > 0.02, "the program collects: {timed:.3} of its time");
    assert!(
        (sampled - timed).abs() <= bound(timed, st.samples),
        "sampled GC share {sampled:.3}, timed {timed:.3}, {} samples",
        st.samples
    );
}

#[test]
fn a_long_primitive_receives_its_samples() {
    let config = SamplerConfig {
        rate_hz: 5000,
        unweighted: true,
        ..SamplerConfig::default()
    };
    let s = sample_until(
        "Long",
        |scale| {
            format!(
                "Long = (
        run = ( 1 to: {} do: [ :i | self print ] )
        print = ( ^ (2 raisedTo: 30000) printString )
    )",
                40 * scale
            )
        },
        config,
        None,
        |s| s.profile.grand_total() >= 20,
    );
    let p = &s.profile;
    let n = p.grand_total();
    let prim: u64 = p
        .method_stats()
        .iter()
        .zip(&p.methods)
        .filter(|(_, m)| m.class.starts_with("Integer") || m.class.starts_with("LargeInteger"))
        .map(|(st, _)| st.self_value)
        .sum();
    let print = p
        .method_index("Long>>print")
        .map_or(0, |m| p.method_stats()[m.index()].self_value);
    eprintln!("long primitive: {prim} of {n} samples, its caller {print}");
    assert!(n >= 20, "{n} samples");
    assert!(
        prim * 2 > n,
        "the primitive's own samples: {prim} of {n} (its caller has {print})"
    );
    assert!(print * 4 < n, "not its caller: {print} of {n}");
}

/// The converse of a long primitive: a short one called once per loop of
/// method code takes only its own share. (The self-timed sampler once
/// tested the deadline only at primitives' ends, over a whole poll interval:
/// each sample whose deadline passed in the method code went to the next
/// primitive to end, 73% of such a loop's time where its own was 11%.)
#[test]
fn short_primitives_do_not_take_the_time_of_the_code_around_them() {
    let config = SamplerConfig {
        rate_hz: 5000,
        ..SamplerConfig::default()
    };
    let s = sample_until(
        "Short",
        |scale| {
            format!(
                "Short = (
        run = ( | a s | s := 0. 1 to: {} do: [ :i | a := Array new: 3. s := s + (self work: i) ]. ^ s )
        work: x = ( | t | t := x. 1 to: 30 do: [ :k | t := t + k ]. ^ t )
    )",
                20_000 * scale
            )
        },
        config,
        None,
        |s| s.stats.samples >= 200,
    );
    let st = &s.stats;
    let prim = st.states[VmState::Primitive as usize].samples;
    let work = total_of(&s.profile, "Short>>work:");
    eprintln!(
        "primitive {prim} of {} samples; Short>>work: {work} of {}",
        st.samples,
        s.profile.grand_total()
    );
    assert!(st.samples >= 100, "{} samples", st.samples);
    assert!(
        prim * 3 < st.samples,
        "a short primitive took {prim} of {} samples",
        st.samples
    );
    assert!(
        work * 2 > s.profile.grand_total(),
        "the method code between the primitives: {work} of {}",
        s.profile.grand_total()
    );
}

/// One sampler at a time: a VMProfiler started from Smalltalk while the VM is
/// being sampled is a Smalltalk error, and the outer profile keeps its samples.
#[test]
fn a_second_sampler_is_refused() {
    let nested = "Nested = (
        run = ( | s | s := 0.
            1 to: 20000 do: [ :i | s := s + i ].
            [ VMProfiler spyOn: [ 3 + 4 ] ] on: Error do: [ :e | e messageText println. ^ 7 ].
            ^ 0 )
    )";
    let (_dir, mut vm) = vm_with(&[("Nested.som", nested)], None);
    lupa_profilers::install(&mut vm);
    vm.io.capture_output();
    vm.load_class_by_name("Nested").expect("load");
    let running = RunningSampler::start(&mut vm, every(100)).expect("start");
    assert_eq!(
        RunningSampler::start(&mut vm, every(100)).err(),
        Some(SamplerError::Busy)
    );
    vm.run_main(&["Nested".to_string()]).expect("run");
    let s = running.finish(&mut vm);
    let out = vm.io.take_captured();
    assert!(out.contains("a sampler is already running"), "{out}");
    assert!(
        s.stats.samples >= 200,
        "the outer profile kept its samples: {}",
        s.stats.samples
    );
}

/// Allocation publishes its own state: an allocation-heavy program gets
/// samples in it, charged below the primitive that allocated.
#[test]
fn allocations_receive_samples_below_their_primitive() {
    let config = SamplerConfig {
        rate_hz: 5000,
        unweighted: true,
        ..SamplerConfig::default()
    };
    let s = sample_until(
        "Alloc",
        |scale| {
            ALLOC
                .replace("30000", &(100_000 * scale).to_string())
                .replace("Array new: 100", "Array new: 1000")
        },
        config,
        None,
        |s| s.stats.states[VmState::Allocation as usize].samples > 0,
    );
    let st = &s.stats;
    let allocation = st.states[VmState::Allocation as usize];
    eprintln!("allocation: {allocation:?}, {} samples", st.samples);
    assert!(allocation.samples > 0, "{:?}", st.states);
    let p = &s.profile;
    let leaf = p
        .method_index("<allocation>")
        .expect("an <allocation> leaf");
    assert_eq!(p.methods[leaf.index()].category, "Memory");
    let folded = report::render(p, Format::Folded, &ReportOptions::default());
    assert!(
        folded.contains("Alloc>>run;Array class>>new:;<allocation> "),
        "{folded}"
    );
}

/// The main process waits on a Delay for most of its run: with the wall
/// clock, most samples (and most of the time) are idle.
#[test]
fn waiting_on_a_delay_is_idle_time() {
    let config = SamplerConfig {
        rate_hz: 1000,
        clock: SampleClock::Wall,
        ..SamplerConfig::default()
    };
    let s = sample_until(
        "Sleepy",
        |scale| {
            format!(
                "Sleepy = (
        run = ( self work. (Delay forMilliseconds: {}) wait. ^ self work )
        work = ( | s | s := 0. 1 to: 1000 do: [ :i | s := s + i ]. ^ s )
    )",
                100 * scale
            )
        },
        config,
        None,
        |s| s.stats.samples >= 20,
    );
    let st = &s.stats;
    let idle = st.states[VmState::Idle as usize];
    let value: u64 = st.states.iter().map(|x| x.value).sum();
    eprintln!("idle: {idle:?} of {} samples, {value} ns", st.samples);
    assert!(st.samples >= 20, "{} samples", st.samples);
    assert!(idle.samples * 2 > st.samples, "{:?}", st.states);
    assert!(idle.value * 2 > value, "{:?}", st.states);
    let p = &s.profile;
    let leaf = p.method_index("<idle>").expect("an <idle> leaf");
    assert_eq!(p.methods[leaf.index()].category, "Idle");
}

/// Ephemerons whose mourning loops: the finalization process's Smalltalk
/// code is sampled as `finalization`, at its own methods.
const MOURNER: &str = "Mourner = Ephemeron (
    mourn = ( | s | s := 0. 1 to: 3000 do: [ :i | s := s + (self id: i) ]. super mourn )
    id: x = ( ^ x )
    ----
    churn: n = (
        | keep |
        keep := Vector new.
        1 to: n do: [ :i | keep append: (self key: (Array new: 2) value: i) ].
        system fullGC.
        ^ keep size )
)
";

#[test]
fn mourning_is_finalization_time() {
    let config = SamplerConfig {
        rate_hz: 5000,
        unweighted: true,
        ..SamplerConfig::default()
    };
    let s = sample_until_with(
        "Fin",
        &[("Mourner.som", MOURNER)],
        |scale| {
            format!(
                "Fin = ( run = ( 1 to: {} do: [ :k | Mourner churn: 20 ] ) )",
                10 * scale
            )
        },
        config,
        None,
        |s| s.stats.states[VmState::Finalization as usize].samples >= 5,
    );
    let st = &s.stats;
    let fin = st.states[VmState::Finalization as usize];
    assert!(fin.samples >= 5, "{:?}", st.states);
    // Interpreted samples of the mourning code: charged to its methods, in
    // the finalization process's tree.
    let folded = report::render(&s.profile, Format::Folded, &ReportOptions::default());
    assert!(
        folded
            .lines()
            .any(|l| l.starts_with("<process") && l.contains("Mourner>>mourn")),
        "{folded}"
    );
}
