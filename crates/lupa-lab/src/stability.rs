//! `lupa stability`: the ranking stability of the Compteur paper (Bergel,
//! ECOOP 2011, section 4.4). A program is profiled several times by counting
//! sends (Compteur) and by timing (the exact timing profiler), each run in a
//! fresh VM; the methods of each profile are ranked by self value and the
//! instability ψ of the first positions of the counted rankings is compared
//! with that of the timed ones and of random rankings ([`stability`]).

use crate::LabError;
use crate::calibrate::{seed_of, stat_err};
use lupa_prof::calibration::Program;
use lupa_prof::report::Ranking;
use lupa_prof::stats::{self, ReferenceOrder};
use lupa_prof::table::{Column, Document, Layout, Table};
use lupa_profilers::{ProfileMode, Workload};
use lupa_vm::{Vm, VmError, VmOptions};

/// The methods of one profile of `p` under `mode`, ranked by self value.
fn ranking_of(
    base: &VmOptions,
    p: &Program,
    mode: ProfileMode,
    seed: u64,
) -> Result<Vec<String>, LabError> {
    let mut o = base.clone();
    o.quiet = true;
    o.heap.hash_seed = seed;
    let mut vm = Vm::new(o)?;
    lupa_profilers::install(&mut vm);
    let class = p
        .args
        .first()
        .ok_or_else(|| VmError::Fatal("no class to run".to_string()))?;
    vm.load_class_by_name(class)?;
    let run = mode
        .run(&mut vm, Workload::Program(&p.args))
        .map_err(|e| VmError::Fatal(e.to_string()))?;
    let code = run.result?;
    if code != 0 {
        return Err(LabError::Vm(VmError::Fatal(format!(
            "`{}` failed (exit status {code}): its profiles would not describe a complete run",
            p.args.join(" ")
        ))));
    }
    // Ranked by self value (where the sends / the time are spent), as MessageTally's
    // leaves; the total ranking is dominated by the call chain, which never moves.
    let profile = lupa_prof::Profile::try_from(run.output).map_err(VmError::from)?;
    let mut entries = Ranking::of(&profile).entries;
    entries.sort_by(|a, b| {
        b.self_value
            .cmp(&a.self_value)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(entries.into_iter().map(|e| e.name).collect())
}

/// Rank the methods of `p` over `runs` counted and `runs` timed profiles
/// (the hash seed varying between runs with `vary_seed`) and compare the
/// instability of their first `n` positions. `progress` is told of each run,
/// then given an empty line.
pub fn stability(
    base: &VmOptions,
    p: &Program,
    runs: usize,
    n: usize,
    vary_seed: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Document, LabError> {
    let mut counted = Vec::new();
    let mut timed = Vec::new();
    for r in 0..runs {
        progress(&format!("stability: run {}/{}", r + 1, runs));
        let seed = seed_of(base, vary_seed, r);
        counted.push(ranking_of(base, p, ProfileMode::COMPTEUR, seed)?);
        timed.push(ranking_of(base, p, ProfileMode::Timing, seed)?);
    }
    progress("");
    let methods = counted
        .iter()
        .chain(timed.iter())
        .map(Vec::len)
        .max()
        .unwrap_or(0);
    let psi_c =
        stats::ranking_instability(&counted, n, ReferenceOrder::MeanRank).map_err(stat_err)?;
    let psi_t =
        stats::ranking_instability(&timed, n, ReferenceOrder::MeanRank).map_err(stat_err)?;
    let random =
        stats::random_ranking_instability(n, runs, methods, 200, 42, ReferenceOrder::MeanRank)
            .map_err(stat_err)?;
    let mut d = Document::default();
    d.line(format!(
        "{} : {} runs, first {} methods of {} ranked by self value",
        p.name, runs, n, methods
    ));
    d.line(format!(
        "  instability psi_{n} (lower is more stable; 0: the same ranking at every run):"
    ));
    d.line(format!("  psi_{n} counted (sends):      {:.3}", psi_c.psi));
    d.line(format!("  psi_{n} timed (wall clock):   {:.3}", psi_t.psi));
    d.line(format!(
        "  psi_{n} random rankings:      {random:.3} (reference)"
    ));
    d.line("  first methods by counted rank (rank in each counted run / timed run):");
    let mut ranks = Table::new(vec![
        Column::left("method").width(50),
        Column::left("counted ranks / timed ranks"),
    ])
    .layout(Layout::Fixed {
        indent: 4,
        header: false,
    });
    for m in psi_c.methods.iter().take(n) {
        let timed_ranks = psi_t
            .methods
            .iter()
            .find(|t| t.name == m.name)
            .map(|t| format!("{:?}", t.ranks))
            .unwrap_or_default();
        ranks.push([m.name.clone(), format!("{:?} / {timed_ranks}", m.ranks)]);
    }
    d.table(ranks);
    Ok(d)
}
