//! `lupa run CLASS ARGS`: load a class and send it `new run` (or `run:`);
//! with the hidden `--stats-json`, the worker side of the lab's runs
//! (`lupa_lab::worker`: `lupa gc-tune`, `lupa gc-bench --jobs`).

use clap::Args;
use std::io::Write as _;
use std::process::ExitCode;

use crate::vm_args::{VmArgs, exit_status, options, report, with_vm};

/// `lupa run` arguments.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) vm: VmArgs,
    /// Print one JSON line of the run's time and heap statistics on stderr at the end (the
    /// workers of `lupa gc-tune` and `lupa gc-bench --jobs`).
    #[arg(long = lupa_lab::worker::STATS_FLAG.trim_start_matches('-'), hide = true)]
    pub(crate) stats_json: bool,
    /// The class to run.
    pub(crate) class: String,
    /// Arguments passed to `run:` (after the class name).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) args: Vec<String>,
}

/// Run `lupa run`.
pub(crate) fn main(a: &RunArgs) -> ExitCode {
    if a.stats_json {
        return worker(a);
    }
    let (vm_args, class) = class_file(&a.vm, &a.class);
    let args = program_args(&class, &a.args);
    with_vm(&vm_args, |vm| {
        // Load the class first so that a missing class is a clear error.
        vm.load_class_by_name(&class)?;
        vm.run_main(&args)
    })
}

/// A class given as a file, `DIR/Foo.som` (as SOM VMs and SOM's test runner
/// take it): the class `Foo`, with `DIR` searched after the class path. Any
/// other CLASS is a class name, as it is.
fn class_file(vm: &VmArgs, class: &str) -> (VmArgs, String) {
    let path = std::path::Path::new(class);
    let stem = path.file_stem().and_then(|s| s.to_str());
    match (class.strip_suffix(".som"), stem) {
        (Some(_), Some(stem)) => {
            let mut vm = vm.clone();
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.display().to_string(),
                _ => ".".to_string(),
            };
            vm.class_path = Some(match &vm.class_path {
                Some(cp) => format!("{cp}:{dir}"),
                None => dir,
            });
            (vm, stem.to_string())
        }
        _ => (vm.clone(), class.to_string()),
    }
}

/// The worker side of a run: `lupa run --stats-json ...` runs the program in a
/// fresh VM, prints its output, then one JSON line of statistics on stderr.
fn worker(a: &RunArgs) -> ExitCode {
    let args = program_args(&a.class, &a.args);
    match lupa_lab::worker::worker_run(options(&a.vm), &args) {
        Ok((stats, output)) => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = out.write_all(output.as_bytes()).and_then(|()| out.flush()) {
                eprintln!("lupa: cannot write the program's output: {e}");
                return ExitCode::from(74);
            }
            eprintln!("{}", stats.to_json_line());
            exit_status(stats.exit_code)
        }
        Err(e) => report(&e),
    }
}

/// `CLASS ARG...` as `run_main` takes them.
pub(crate) fn program_args(class: &str, args: &[String]) -> Vec<String> {
    let mut all = vec![class.to_string()];
    all.extend(args.iter().cloned());
    all
}

/// The arguments among a program's `args` (those after its class) that
/// spell one of `lupa COMMAND`'s own options (`--format json`, `-o FILE`):
/// clap hands everything after the class to the program, so they would be
/// silently lost for the command.
pub(crate) fn stray_options(command: &str, args: &[String]) -> Vec<String> {
    // Building the command line's definition costs a millisecond: only when
    // an argument looks like an option.
    if !args.iter().any(|a| a.starts_with('-')) {
        return Vec::new();
    }
    let cli = crate::command();
    let Some(sub) = cli.find_subcommand(command) else {
        return Vec::new();
    };
    let is_option = |a: &str| {
        sub.get_arguments().any(|o| {
            let long = o.get_long().is_some_and(|l| {
                a.strip_prefix("--").is_some_and(|r| {
                    r == l || r.strip_prefix(l).is_some_and(|v| v.starts_with('='))
                })
            });
            let short = o.get_short().is_some_and(|c| {
                a.strip_prefix('-')
                    .is_some_and(|r| !r.starts_with('-') && r.starts_with(c))
            });
            long || short
        })
    };
    args.iter().filter(|a| is_option(a)).cloned().collect()
}

/// Warn on standard error about each of `lupa COMMAND`'s options among a
/// program's arguments ([`stray_options`]): they go to the program.
pub(crate) fn warn_stray_options(command: &str, args: &[String]) {
    for o in stray_options(command, args) {
        eprintln!(
            "lupa: warning: `{o}` comes after the program's class: it is passed to the program, \
             not to `lupa {command}` (give the options before the class)"
        );
    }
}
