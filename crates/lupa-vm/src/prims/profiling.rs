//! `System>>startProfiler:` and `System>>stopProfiler`: the primitives of the
//! profiler door (`crate::vm::profiler_door`).

use super::Primitive;
use super::outcome::PrimFailure;
use super::outcome::Reply::Answer;
use super::{Args, PrimResult};
use crate::objects::cls;
use crate::vm::Vm;

/// `System>>startProfiler: aSymbolOrString`: start the named profiler (`#compteur`,
/// `#timing`); an error names why it cannot start.
fn start_profiler(vm: &mut Vm, args: Args) -> PrimResult {
    let name = args.string(vm, 1)?;
    vm.start_profiler(&name).map_err(PrimFailure::Error)?;
    Ok(Answer(args.receiver(vm)))
}

/// `System>>stopProfiler`: stop it and answer its report (a String).
fn stop_profiler(vm: &mut Vm, _args: Args) -> PrimResult {
    let report = vm.stop_profiler().map_err(PrimFailure::Error)?;
    Ok(Answer(vm.new_bytes(cls::STRING, report.text.as_bytes())?))
}

/// `System>>stopProfilerData`: stop it and answer its report as data:
/// `{ text. tree. total. gc. methods. graph }`, methods `{ name. self. total }`
/// each, graph the method-level call graph (`CallGraph::to_smalltalk`).
fn stop_profiler_data(vm: &mut Vm, _args: Args) -> PrimResult {
    let report = vm.stop_profiler().map_err(PrimFailure::Error)?;
    Ok(Answer(report.to_smalltalk(vm)?))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["System"], "startProfiler:", start_profiler),
    Primitive::new(&["System"], "stopProfiler", stop_profiler),
    Primitive::new(&["System"], "stopProfilerData", stop_profiler_data),
];
