//! Measuring one run of a program in a fresh VM: wall time, exact sends, heap
//! statistics before and after, and optionally the program's output.
//!
//! `lupa calibrate`, `lupa gc-bench` and `lupa gc-tune` (and their worker
//! processes) all measure this way; this is their one helper. Contract: the VM is created from the given options
//! (the caller sets seeds, heap parameters and `quiet`), the program's class is
//! loaded *before* the clock starts (so class loading is not measured), and only
//! `run_main` is timed. A run that fails answers the VM's error; a run that exits
//! with a non-zero status is a [`Measurement`] (the caller decides).

use lupa_vm::{HeapStats, Vm, VmError, VmOptions};
use std::time::{Duration, Instant};

/// What [`measure`] observed of one run.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// The program's exit status.
    pub exit_code: i32,
    /// Wall time of `run_main`.
    pub elapsed: Duration,
    /// Message sends executed by the VM (class loading included, which sends none).
    pub sends: u64,
    /// Heap statistics just before the run.
    pub heap_before: HeapStats,
    /// Heap statistics just after the run.
    pub heap_after: HeapStats,
    /// Page faults of the process during the run (minor and major; 0 where
    /// the system does not say).
    pub page_faults: u64,
    /// Everything the program printed, when [`Capture::Output`] was asked.
    pub output: Option<String>,
}

/// Whether [`measure`] keeps the program's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// Output goes where the options send it (nowhere when `quiet`).
    None,
    /// Output is kept in [`Measurement::output`].
    Output,
}

/// Run `args` (`CLASS ARG...`, as for `lupa run`) once in a fresh VM made from
/// `options`, and measure it.
pub fn measure(
    options: VmOptions,
    args: &[String],
    capture: Capture,
) -> Result<Measurement, VmError> {
    let mut vm = Vm::new(options)?;
    lupa_profilers::install(&mut vm);
    let class = args
        .first()
        .ok_or_else(|| VmError::Fatal("no class to run".to_string()))?;
    vm.load_class_by_name(class)?;
    if capture == Capture::Output {
        vm.io.capture_output();
    }
    let heap_before = vm.heap.stats().clone();
    let faults = || lupa_heap::page_faults().map_or(0, |(minor, major)| minor + major);
    let faults_before = faults();
    let t0 = Instant::now();
    let result = vm.run_main(args);
    let elapsed = t0.elapsed();
    let page_faults = faults().saturating_sub(faults_before);
    let heap_after = vm.heap.stats().clone();
    let output = (capture == Capture::Output).then(|| vm.io.take_captured());
    Ok(Measurement {
        exit_code: result?,
        elapsed,
        sends: vm.obs.sends,
        heap_before,
        heap_after,
        page_faults,
        output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_one_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fib = "Fib = (\n    run = ( ^ self fib: 10 )\n    fib: n = ( n < 2 ifTrue: [ ^ n ]. ^ (self fib: n - 1) + (self fib: n - 2) )\n)\n";
        std::fs::write(dir.path().join("Fib.som"), fib).expect("write Fib.som");
        let options = VmOptions {
            class_path: vec![dir.path().to_path_buf()],
            quiet: true,
            ..VmOptions::default()
        };
        let m = measure(options.clone(), &["Fib".to_string()], Capture::Output).expect("measure");
        assert_eq!(m.exit_code, 0);
        assert_eq!(m.output.as_deref(), Some(""));
        assert!(m.sends > 0);
        assert!(measure(options, &["Nope".to_string()], Capture::None).is_err());
    }
}
