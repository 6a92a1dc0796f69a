//! Time profiling blueprints ([`crate::ProfileMode::Blueprint`], `lupa
//! blueprint`): Spy's `BlueprintProfiler` over the configured packages while
//! a program runs under Compteur (the VM watches its methods: nothing the
//! program does changes, so the counted run is this one), then its time (the
//! program run once more, not instrumented, sampled, each sample counting 1,
//! deterministically with [`BlueprintConfig::every`]; its output is
//! discarded), read into a
//! [`lupa_prof::blueprint::Blueprint`]. A block's time and executions are its
//! own, read into its home method's [`lupa_prof::blueprint::BlueprintBlock`]s
//! (Spy's `BlockSpy`), not charged to the method that created it.
//!
//! The numbers are the Smalltalk spies' (`executionTime`,
//! `numberOfExecutions`, `outgoingCalls`, `answersAlwaysTheSame`...); this
//! module only drives the profiler and reads them.

use lupa_prof::Profile;
use lupa_prof::blueprint::{
    Blueprint, BlueprintBlock, BlueprintClass, BlueprintMethod, Call, VERSION,
};
use lupa_vm::{Value, Vm, VmError};

use std::time::Instant;

pub use super::blueprint_config::BlueprintConfig;
use super::time::call_graph;
use super::{Handles, count, elements, new_profiler, send, string_array, text};
use crate::mode::ProfileMode;
use crate::sampler::SamplerConfig;
use crate::workload::Workload;

/// A running blueprint profiler (of [`crate::ProfileMode::Blueprint`]):
/// Spy's `BlueprintProfiler`, rooted, and the program that ran instrumented.
pub(crate) struct RunningBlueprint {
    h: Handles,
    profiler: usize,
    config: BlueprintConfig,
    /// The program and its counted profile, once it ran to its end.
    program: Option<(Vec<String>, Profile)>,
}

impl RunningBlueprint {
    /// Make and configure the profiler.
    pub(crate) fn start(
        vm: &mut Vm,
        config: &BlueprintConfig,
    ) -> Result<RunningBlueprint, VmError> {
        let (h, profiler) = new_profiler(vm, "BlueprintProfiler")?;
        let rate = Value::from_i64(i64::from(config.rate_hz)).unwrap_or(Value::NIL);
        if let Err(e) = send(vm, &h, profiler, "samplingRate:", &[rate]) {
            h.release(vm);
            return Err(e);
        }
        Ok(RunningBlueprint {
            h,
            profiler,
            config: config.clone(),
            program: None,
        })
    }

    /// Run the program counted (Compteur), with the packages instrumented
    /// (a blueprint profiles a program, not tests; uninstrumented however
    /// it ends).
    pub(crate) fn run(&mut self, vm: &mut Vm, workload: Workload<'_>) -> Result<i32, VmError> {
        let Workload::Program(args) = workload else {
            return Err(VmError::Fatal(
                "the blueprint profiler profiles a program, not tests".to_string(),
            ));
        };
        let (h, p) = (&self.h, self.profiler);
        let names = string_array(vm, h, &self.config.packages)?;
        let names = h.get(vm, names);
        send(vm, h, p, "addPackagesNamed:", &[names])?;
        send(vm, h, p, "install", &[])?;
        let counted = profile_of(vm, ProfileMode::COMPTEUR, args);
        let uninstalled = send(vm, h, p, "uninstall", &[]);
        h.truncate(vm, p + 1);
        let (status, profile) = counted?;
        uninstalled?;
        self.program = Some((args.to_vec(), profile));
        Ok(status)
    }

    /// Run the program once more, sampled (its output discarded), give the
    /// profiler its time and call graph, and read the blueprint (the command
    /// is left empty). Without a program that ran to its end there is no
    /// timed run: the blueprint has no time.
    pub(crate) fn finish(self, vm: &mut Vm) -> Result<Blueprint, VmError> {
        let done = self.timed_and_read(vm);
        self.h.release(vm);
        done
    }

    fn timed_and_read(&self, vm: &mut Vm) -> Result<Blueprint, VmError> {
        let (h, p) = (&self.h, self.profiler);
        if let Some((args, counted)) = &self.program {
            vm.io.flush()?;
            // The timed run's output is not the program's output again.
            vm.io.capture_output();
            let timed = timed_run(vm, h, p, args, counted, &self.config);
            drop(vm.io.take_captured());
            timed?;
        }
        read(vm, h, p, &self.config.packages)
    }
}

/// Send `selector` to the object in `slot`; its answer as a number.
fn number(vm: &mut Vm, h: &Handles, slot: usize, selector: &str) -> Result<f64, VmError> {
    let v = send(vm, h, slot, selector, &[])?;
    vm.number_as_f64(v)
        .ok_or_else(|| VmError::Fatal(format!("{selector} did not answer a number")))
}

/// The sampled run of the program (driven from here, so that a program
/// ending with `system exit:` is measured too), handed to the profiler in
/// `p` with the `counted` profile as `System>>stopProfilerData` would hand
/// them (`setCallGraph:timeGraph:samples:milliseconds:`).
fn timed_run(
    vm: &mut Vm,
    h: &Handles,
    p: usize,
    args: &[String],
    counted: &Profile,
    blueprint: &BlueprintConfig,
) -> Result<(), VmError> {
    let config = SamplerConfig {
        rate_hz: blueprint.rate_hz,
        every: blueprint.every,
        unweighted: true,
        ..SamplerConfig::SMALLTALK
    };
    let started = Instant::now();
    let (_, sampled) = profile_of(vm, ProfileMode::Sampling(config), args)?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let graph = call_graph(counted).to_smalltalk(vm)?;
    let graph = h.keep(vm, graph);
    let time_graph = call_graph(&sampled).to_smalltalk(vm)?;
    let time_graph = h.keep(vm, time_graph);
    let samples = Value::from_i64(i64::try_from(sampled.grand_total()).unwrap_or(i64::MAX >> 2))
        .unwrap_or(Value::NIL);
    let ms = vm.new_double(ms)?;
    let (graph, time_graph) = (h.get(vm, graph), h.get(vm, time_graph));
    send(
        vm,
        h,
        p,
        "setCallGraph:timeGraph:samples:milliseconds:",
        &[graph, time_graph, samples, ms],
    )?;
    Ok(())
}

/// The exit status and profile of one run of `args` under `mode`; the
/// run's failure is the error.
fn profile_of(vm: &mut Vm, mode: ProfileMode, args: &[String]) -> Result<(i32, Profile), VmError> {
    let run = mode.run(vm, Workload::Program(args))?;
    let status = run.result?;
    Ok((status, Profile::try_from(run.output)?))
}

/// Read the profiler in `p` into a blueprint.
fn read(vm: &mut Vm, h: &Handles, p: usize, packages: &[String]) -> Result<Blueprint, VmError> {
    let total_ms = number(vm, h, p, "totalTime")?;
    let samples = count(send(vm, h, p, "totalSamples", &[])?, "totalSamples")?;
    let v = send(vm, h, p, "allClasses", &[])?;
    let all = h.keep(vm, v);
    let mut classes = Vec::new();
    let mut calls = Vec::new();
    for c in elements(vm, h, all, "allClasses")? {
        let name = send(vm, h, c, "name", &[])?;
        let name = text(vm, name, "a class spy's name")?;
        let package = send(vm, h, c, "packageSpy", &[])?;
        let package = vm.send_message(package, "name", &[])?;
        let package = text(vm, package, "a package spy's name")?;
        let the_class = send(vm, h, c, "theClass", &[])?;
        let sup = vm.send_message(the_class, "superclass", &[])?;
        let superclass = if sup == Value::NIL {
            None
        } else {
            let n = vm.send_message(sup, "name", &[])?;
            Some(text(vm, n, "a class's name")?)
        };
        let mut methods = Vec::new();
        let meta = send(vm, h, c, "metaclassSpy", &[])?;
        let meta = h.keep(vm, meta);
        for (side, class_side) in [(c, false), (meta, true)] {
            let v = send(vm, h, side, "methods", &[])?;
            let list = h.keep(vm, v);
            for spy in elements(vm, h, list, "methods")? {
                methods.push(read_method(vm, h, spy, class_side, &mut calls)?);
            }
        }
        classes.push(BlueprintClass {
            name,
            package,
            superclass,
            methods,
        });
    }
    calls.sort_by(|a: &Call, b: &Call| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.caller.cmp(&b.caller))
            .then_with(|| a.callee.cmp(&b.callee))
    });
    Ok(Blueprint {
        version: VERSION,
        command: String::new(),
        packages: packages.to_vec(),
        total_ms,
        samples,
        classes,
        calls,
    })
}

/// One method spy (in `spy`), its outgoing calls appended to `calls`.
fn read_method(
    vm: &mut Vm,
    h: &Handles,
    spy: usize,
    class_side: bool,
    calls: &mut Vec<Call>,
) -> Result<BlueprintMethod, VmError> {
    let sel = send(vm, h, spy, "selector", &[])?;
    let selector = text(vm, sel, "selector")?;
    let name = send(vm, h, spy, "printString", &[])?;
    let name = text(vm, name, "a method spy's printString")?;
    let executions = count(
        send(vm, h, spy, "numberOfExecutions", &[])?,
        "numberOfExecutions",
    )?;
    let sends = count(send(vm, h, spy, "numberOfSends", &[])?, "numberOfSends")?;
    let time_ms = number(vm, h, spy, "executionTime")?;
    let self_ms = number(vm, h, spy, "selfTime")?;
    let percentage = number(vm, h, spy, "percentageOfTime")?;
    let same_answer = send(vm, h, spy, "answersAlwaysTheSame", &[])? == Value::TRUE;
    let side_effect_free = send(vm, h, spy, "isLikelySideEffectFree", &[])? == Value::TRUE;
    let v = send(vm, h, spy, "outgoingCalls", &[])?;
    let out = h.keep(vm, v);
    for callee in elements(vm, h, out, "outgoingCalls")? {
        let to = h.get(vm, callee);
        let n = count(
            send(vm, h, spy, "numberOfCallsTo:", &[to])?,
            "numberOfCallsTo:",
        )?;
        let callee = vm.send_message(to, "printString", &[])?;
        calls.push(Call {
            caller: name.clone(),
            callee: text(vm, callee, "a method spy's printString")?,
            count: n,
        });
    }
    let v = send(vm, h, spy, "blocks", &[])?;
    let list = h.keep(vm, v);
    let mut blocks = Vec::new();
    for block in elements(vm, h, list, "blocks")? {
        let name = send(vm, h, block, "name", &[])?;
        blocks.push(BlueprintBlock {
            name: text(vm, name, "a block spy's name")?,
            executions: count(
                send(vm, h, block, "numberOfExecutions", &[])?,
                "numberOfExecutions",
            )?,
            time_ms: number(vm, h, block, "executionTime")?,
            self_ms: number(vm, h, block, "selfTime")?,
            percentage: number(vm, h, block, "percentageOfTime")?,
            sends: count(send(vm, h, block, "numberOfSends", &[])?, "numberOfSends")?,
        });
    }
    Ok(BlueprintMethod {
        blocks,
        selector,
        class_side,
        executions,
        time_ms,
        self_ms,
        percentage,
        sends,
        same_answer,
        side_effect_free,
    })
}
