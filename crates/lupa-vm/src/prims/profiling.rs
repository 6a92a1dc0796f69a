//! `System>>startProfiler:` and `System>>stopProfiler`: the primitives of the
//! profiler door (`crate::vm::profiler_door`).

use super::Primitive;
use super::outcome::PrimFailure;
use super::outcome::Reply::Answer;
use super::{Args, PrimResult};
use crate::objects::cls;
use crate::vm::Vm;
use lupa_heap::Value;

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

/// `System>>codeZoneConstituents`: what is in the JIT's machine-code zone,
/// as Cog's `primitiveCollectCogCodeConstituents` answers it (the VMProfiler
/// paper's figures 3 and 5): an Array with, for each native function in
/// address order, `{ name. startAddress. size. pcMap }`, pcMap an Array of
/// alternating machine-code addresses and bytecode pcs (the first address
/// running each instruction, instruction indices from 0). Empty without a
/// JIT. Allocation does not collect, so the values built stay valid.
fn code_zone_constituents(vm: &mut Vm, _args: Args) -> PrimResult {
    let mut functions: Vec<_> = vm
        .native_functions()
        .into_iter()
        .filter(|f| f.live())
        .collect();
    functions.sort_by_key(|f| f.start);
    let mut rows = Vec::with_capacity(functions.len());
    for f in &functions {
        let name = vm.new_string(&f.name)?;
        let map: Vec<Value> = f
            .pc_map()
            .into_iter()
            .flat_map(|(mcpc, bcpc)| [Value::small(mcpc as i64), Value::small(i64::from(bcpc))])
            .collect();
        let map = vm.new_array(&map)?;
        rows.push(vm.new_array(&[
            name,
            Value::small(f.start as i64),
            Value::small(f.len as i64),
            map,
        ])?);
    }
    Ok(Answer(vm.new_array(&rows)?))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["System"], "startProfiler:", start_profiler),
    Primitive::new(&["System"], "stopProfiler", stop_profiler),
    Primitive::new(&["System"], "stopProfilerData", stop_profiler_data),
    Primitive::new(&["System"], "codeZoneConstituents", code_zone_constituents),
];
