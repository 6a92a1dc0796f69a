//! Time profiling blueprints from the command line: Spy's
//! `BlueprintProfiler` over the named packages while a program runs, then
//! its time and call graph (the program run twice more, not instrumented:
//! counted, then sampled, each sample counting 1; their output is
//! discarded), read into a [`lupa_prof::blueprint::Blueprint`].
//!
//! The numbers are the Smalltalk spies' (`executionTime`,
//! `numberOfExecutions`, `outgoingCalls`, `answersAlwaysTheSame`...); this
//! module only drives the profiler and reads them.

use lupa_prof::blueprint::{Blueprint, BlueprintClass, BlueprintMethod, Call, VERSION};
use lupa_vm::{Value, Vm, VmError};

use std::time::Instant;

use super::time::call_graph;
use super::{Handles, count, elements, send, string_array, text};
use crate::mode::ProfileMode;
use crate::sampler::{SamplerConfig, SamplerError};

/// Run the program `args` (`CLASS ARGS` as `lupa run` takes them) under
/// `BlueprintProfiler` over `packages`, sampling its timed run at `rate_hz`.
/// Answers the blueprint and the exit status of the program's first run.
pub fn run(
    vm: &mut Vm,
    args: &[String],
    packages: &[String],
    command: &str,
    rate_hz: u32,
) -> Result<(Blueprint, i32), VmError> {
    let h = Handles::new(vm);
    let result = run_rooted(vm, &h, args, packages, command, rate_hz);
    h.release(vm);
    result
}

/// Send `selector` to the object in `slot`; its answer as a number.
fn number(vm: &mut Vm, h: &Handles, slot: usize, selector: &str) -> Result<f64, VmError> {
    let v = send(vm, h, slot, selector, &[])?;
    vm.number_as_f64(v)
        .ok_or_else(|| VmError::Fatal(format!("{selector} did not answer a number")))
}

/// The counted and the sampled runs of the program (driven from here, so
/// that a program ending with `system exit:` is measured too), handed to the
/// profiler in `p` as `System>>stopProfilerData` would hand them
/// (`setCallGraph:timeGraph:samples:milliseconds:`).
fn timed_runs(
    vm: &mut Vm,
    h: &Handles,
    p: usize,
    args: &[String],
    rate_hz: u32,
) -> Result<(), VmError> {
    let fail = |e: SamplerError| VmError::Fatal(format!("cannot start the profiler: {e}"));
    let counting = ProfileMode::Compteur.start(vm).map_err(fail)?;
    let ran = vm.run_main(args);
    let counted = counting.finish(vm);
    ran?;
    let config = SamplerConfig {
        rate_hz,
        ..SamplerConfig::SMALLTALK
    };
    let started = Instant::now();
    let sampling = ProfileMode::Sampling(config).start(vm).map_err(fail)?;
    let ran = vm.run_main(args);
    let (sampled, _) = sampling.finish_with_stats(vm);
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    ran?;
    let graph = call_graph(&counted).to_smalltalk(vm)?;
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

fn run_rooted(
    vm: &mut Vm,
    h: &Handles,
    args: &[String],
    packages: &[String],
    command: &str,
    rate_hz: u32,
) -> Result<(Blueprint, i32), VmError> {
    let class = vm.class_named("BlueprintProfiler")?;
    let profiler = vm.send_message(class, "new", &[])?;
    let p = h.keep(vm, profiler);
    let rate = Value::from_i64(i64::from(rate_hz)).unwrap_or(Value::NIL);
    send(vm, h, p, "samplingRate:", &[rate])?;
    let names = string_array(vm, h, packages)?;
    let names = h.get(vm, names);
    send(vm, h, p, "addPackagesNamed:", &[names])?;
    send(vm, h, p, "install", &[])?;
    let ran = vm.run_main(args);
    send(vm, h, p, "uninstall", &[])?;
    let status = ran?;
    vm.io.flush()?;
    // The timed runs' output is not the program's output again.
    vm.io.capture_output();
    let timed = timed_runs(vm, h, p, args, rate_hz);
    drop(vm.io.take_captured());
    timed?;
    let blueprint = read(vm, h, p, packages, command)?;
    Ok((blueprint, status))
}

/// Read the profiler in `p` into a blueprint.
fn read(
    vm: &mut Vm,
    h: &Handles,
    p: usize,
    packages: &[String],
    command: &str,
) -> Result<Blueprint, VmError> {
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
        command: command.to_string(),
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
    Ok(BlueprintMethod {
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
