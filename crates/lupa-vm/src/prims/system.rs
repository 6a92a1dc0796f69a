//! System primitives (the `system` global): globals, class loading, printing,
//! exit, time, the program's arguments and class path, and the send counters.
//! The collector's primitives, also on `System`, are in `gc.rs`.

use super::Primitive;
use super::outcome::PrimFailure;
use super::outcome::Reply::Answer;
use super::{Args, PrimResult};
use crate::objects::cls;
use crate::vm::{Vm, VmError};
use lupa_heap::Value;

fn global(vm: &mut Vm, args: Args) -> PrimResult {
    let id = args.symbol_named(vm, 1)?;
    Ok(Answer(
        vm.image.globals.get(&id).copied().unwrap_or(Value::NIL),
    ))
}

fn global_put(vm: &mut Vm, args: Args) -> PrimResult {
    let id = args.symbol_named(vm, 1)?;
    let v = args.get(vm, 2);
    vm.image.globals.insert(id, v);
    Ok(Answer(args.receiver(vm)))
}

fn has_global(vm: &mut Vm, args: Args) -> PrimResult {
    let Ok(id) = args.symbol(vm, 1) else {
        return Ok(Answer(Value::FALSE));
    };
    Ok(Answer(Value::bool(vm.image.globals.contains_key(&id))))
}

fn load(vm: &mut Vm, args: Args) -> PrimResult {
    args.symbol_named(vm, 1)?;
    let name = args.string(vm, 1)?;
    match vm.load_class_by_name(&name) {
        Ok(c) => Ok(Answer(vm.image.class_object(c))),
        Err(VmError::ClassNotFound(_)) => Ok(Answer(Value::NIL)),
        Err(e) => Err(PrimFailure::Abort(e)),
    }
}

fn load_file(vm: &mut Vm, args: Args) -> PrimResult {
    let path = args.string(vm, 1)?;
    let read = vm.blocking(|_| std::fs::read(&path));
    Ok(Answer(match read {
        Ok(bytes) => vm.new_bytes(cls::STRING, &bytes)?,
        Err(_) => Value::NIL,
    }))
}

fn exit(vm: &mut Vm, args: Args) -> PrimResult {
    if vm.io.running_tests && vm.sched.current != vm.io.test_process {
        // A process a test forked: signalling the error below in it would
        // be unhandled again, and report and exit again, forever. It ends
        // here (it has reported why) and counts as a failed test.
        vm.io.failed_forks += 1;
        vm.io.print_err(
            "lupa: a process forked by a test ended with an unhandled error: it is terminated and counts as a failed test\n",
        );
        let cur = vm.sched.current;
        let n = vm.sched.running.stack.len() - args.count() - 1;
        vm.sched.running.stack.truncate(n);
        vm.terminate_process(cur).map_err(PrimFailure::Abort)?;
        return Ok(super::Reply::Done);
    }
    if vm.io.running_tests {
        let what = match args.get(vm, 1).as_int() {
            Some(c) => c.to_string(),
            None => "...".to_string(),
        };
        return Err(PrimFailure::Limit(format!(
            "system exit: {what} inside a test: tests may not end the run (the test is an error; the other tests go on)"
        )));
    }
    // A wrong status is an error (with a backtrace), as any wrong argument.
    let n = args.integer(vm, 1)?;
    let code = i32::try_from(&n).map_err(|_| {
        PrimFailure::error(format!(
            "system exit: {} is not a valid exit status (it must fit in 32 bits)",
            if n.bits() <= 64 {
                n.to_string()
            } else {
                format!("an Integer of {} bits", n.bits())
            }
        ))
    })?;
    vm.io.flush().map_err(PrimFailure::Abort)?;
    vm.io.exit_code = Some(code);
    Err(PrimFailure::Abort(VmError::Exit(code)))
}

fn print_string(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.string(vm, 1)?;
    vm.io.print(&s).map_err(PrimFailure::Abort)?;
    Ok(Answer(args.receiver(vm)))
}

fn print_newline(vm: &mut Vm, args: Args) -> PrimResult {
    vm.io.print("\n").map_err(PrimFailure::Abort)?;
    Ok(Answer(args.receiver(vm)))
}

fn error_print(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.string(vm, 1).unwrap_or_default();
    vm.io.print_err(&s);
    Ok(Answer(args.receiver(vm)))
}

fn error_println(vm: &mut Vm, args: Args) -> PrimResult {
    let s = if args.count() >= 1 {
        args.string(vm, 1).unwrap_or_default()
    } else {
        String::new()
    };
    vm.io.print_err(&format!("{s}\n"));
    Ok(Answer(args.receiver(vm)))
}

fn print_stack_trace(vm: &mut Vm, args: Args) -> PrimResult {
    let trace = vm.backtrace(usize::MAX);
    vm.io.print_err(&trace);
    Ok(Answer(args.receiver(vm)))
}

fn time(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(
        vm.io.start_time.elapsed().as_millis() as i64
    )))
}

fn ticks(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(
        vm.io.start_time.elapsed().as_micros() as i64
    )))
}

fn send_count(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(vm.obs.sends as i64)))
}

fn inlined_send_count(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(Value::small(vm.obs.inlined as i64)))
}

fn reset_send_count(vm: &mut Vm, args: Args) -> PrimResult {
    vm.obs.sends = 0;
    vm.obs.inlined = 0;
    // The next poll was due at a count of the old scale.
    vm.obs.poll_at.set(0);
    Ok(Answer(args.receiver(vm)))
}

/// An Array of new Strings.
fn string_array(vm: &mut Vm, strings: &[String]) -> PrimResult {
    let mut vals = Vec::with_capacity(strings.len());
    for a in strings {
        vals.push(vm.new_string(a)?);
    }
    Ok(Answer(vm.new_array(&vals)?))
}

fn arguments(vm: &mut Vm, _args: Args) -> PrimResult {
    let args = vm.io.program_args.clone();
    string_array(vm, &args)
}

fn class_path(vm: &mut Vm, _args: Args) -> PrimResult {
    let cp: Vec<String> = vm
        .options
        .class_path
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    string_array(vm, &cp)
}

fn package_class_names(vm: &mut Vm, args: Args) -> PrimResult {
    let package = args.string(vm, 1)?;
    let names = vm.image.package_class_names(&package);
    string_array(vm, &names)
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["System"], "global:", global),
    Primitive::new(&["System"], "global:put:", global_put),
    Primitive::new(&["System"], "hasGlobal:", has_global),
    Primitive::new(&["System"], "load:", load),
    Primitive::new(&["System"], "loadFile:", load_file).allocating(),
    Primitive::new(&["System"], "exit:", exit),
    Primitive::new(&["System"], "printString:", print_string),
    Primitive::new(&["System"], "printNewline", print_newline),
    Primitive::new(&["System"], "errorPrint:", error_print),
    Primitive::new(&["System"], "errorPrintln:", error_println),
    Primitive::new(&["System"], "errorPrintln", error_println),
    Primitive::new(&["System"], "printStackTrace", print_stack_trace),
    Primitive::new(&["System"], "time", time),
    Primitive::new(&["System"], "ticks", ticks),
    Primitive::new(&["System"], "sendCount", send_count),
    Primitive::new(&["System"], "inlinedSendCount", inlined_send_count),
    Primitive::new(&["System"], "resetSendCount", reset_send_count),
    Primitive::new(&["System"], "arguments", arguments).allocating(),
    Primitive::new(&["System"], "classPath", class_path).allocating(),
    Primitive::new(&["System"], "classNamesInPackage:", package_class_names).allocating(),
];
