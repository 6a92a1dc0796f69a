//! What `lupa gc-tune` prints, as a document ([`document`]): the profile,
//! the proposal with its reasons, the search, the verification table, the
//! two recommended command lines with their speed-ups, and the verdict.

use super::{SpeedUp, TuneOptions, TuneReport};
use crate::cells::{mb, mean, pm};
use crate::gc_config::{GcConfig, TUNED, size_flag};
use crate::runs::RunSample;
use lupa_prof::table::{Column, Document, Table};

/// `1.23x [1.10, 1.37] (p = 0.004, significantly faster)`.
fn speed_up_line(s: Option<SpeedUp>) -> String {
    match s {
        None => "not measured".to_string(),
        Some(s) => {
            let verdict = match s.p_value {
                None => "one run: no interval".to_string(),
                Some(p) if s.significant() => format!(
                    "p = {p:.3}, significantly {}",
                    if s.estimate > 1.0 { "faster" } else { "slower" }
                ),
                Some(p) => format!("p = {p:.3}, not significant"),
            };
            format!("{} ({verdict})", s.label())
        }
    }
}

/// The verification: one row per configuration.
fn verification_table(r: &TuneReport) -> Table {
    let v = &r.verification;
    let mut columns = vec![Column::left("config")];
    columns.extend(TUNED.iter().map(|p| Column::right(p.info().label)));
    columns.extend(
        [
            "total s",
            "GC s",
            "GC %",
            "scavenges",
            "full GCs",
            "heap MB",
            "speed-up",
        ]
        .map(Column::right),
    );
    let mut t = Table::new(columns);
    for (i, (c, ss)) in v.configs.iter().zip(&v.samples).enumerate() {
        let col = |f: &dyn Fn(&RunSample) -> f64| ss.iter().map(f).collect::<Vec<f64>>();
        let total = col(&|s| s.stats.total_s());
        let gc = col(&|s| s.stats.gc_s());
        let gc_pct = if mean(&total) > 0.0 {
            100.0 * mean(&gc) / mean(&total)
        } else {
            0.0
        };
        // The search's best may have the parameters of the defaults or of the proposal.
        let mut name = c.name.clone();
        if c.name != "search" && r.search.best.same_parameters(c) {
            name.push_str(" = search");
        }
        let mut row = vec![name];
        row.extend(TUNED.iter().map(|&p| p.format(c.get(p))));
        if ss.is_empty() {
            row.extend(["every run failed".to_string()]);
            row.extend((0..6).map(|_| "-".to_string()));
            t.push(row);
            continue;
        }
        row.extend([
            pm(&total, 3),
            pm(&gc, 3),
            format!("{gc_pct:.1}"),
            format!("{:.0}", mean(&col(&|s| s.stats.scavenges as f64))),
            format!("{:.0}", mean(&col(&|s| s.stats.full_gcs as f64))),
            format!("{:.1}", mb(mean(&col(&|s| s.stats.heap_bytes as f64)))),
            match v.speed_ups.get(i).copied().flatten() {
                Some(s) => s.label(),
                None => "1.00x".to_string(),
            },
        ]);
        t.push(row);
    }
    t.note(format!(
        "Output: {}",
        if v.same_output {
            "the same in every run"
        } else {
            "NOT the same in every run (the program prints something that varies, or a collector bug)"
        }
    ));
    t
}

/// The report `lupa gc-tune` prints.
pub fn document(r: &TuneReport, o: &TuneOptions) -> Document {
    let mut d = Document::default();
    let command = o.workload.command();
    let l = &r.profile.lifetimes;
    let p = &r.proposal.demographics;
    d.line(format!("lupa gc-tune {command}"));
    d.line("");
    d.line(format!(
        "Profile: {:.1} MB allocated in {} objects, {:.2} s; sampled at rate {} ({} records), \
eden {} so that deaths are seen within {}",
        mb(l.totals.allocated_bytes as f64),
        l.totals.allocated_objects,
        r.profile.elapsed.as_secs_f64(),
        o.rate,
        p.records,
        size_flag(p.resolution_bytes as usize),
        size_flag(p.resolution_bytes as usize)
    ));
    d.line(format!(
        "Sites (against the default {} nursery): {} short ({:.0}% of the bytes), {} long ({:.0}%), \
{} immortal ({:.0}%); large objects {:.0}%; with the proposal, {:.2} bytes reach old space per \
byte allocated, {:.0}% of them alive at the end",
        size_flag(p.threshold_bytes as usize),
        p.sites[0],
        100.0 * p.short_share,
        p.sites[1],
        100.0 * p.long_share,
        p.sites[2],
        100.0 * p.immortal_share,
        100.0 * p.large_share,
        p.growth_rate,
        100.0 * p.survival
    ));
    d.line("");
    d.line("Proposal (from the lifetimes):");
    let width = r
        .proposal
        .choices
        .iter()
        .map(|c| c.flag().chars().count())
        .max()
        .unwrap_or(0);
    for c in &r.proposal.choices {
        d.line(format!("  {:<width$}  {}", c.flag(), c.why));
    }
    d.line("");
    let s = &r.search;
    d.line(format!(
        "Search (iterated local search from the defaults, seed {}): {} configurations, {} runs \
({} stopped early) in {:.1} s of a {} s budget",
        o.seed,
        s.configs,
        s.runs,
        s.capped,
        s.elapsed.as_secs_f64(),
        crate::cells::secs(o.budget.as_secs_f64())
    ));
    if let Some(note) = &s.note {
        d.line(format!("  {note}"));
    }
    if s.improvements.is_empty() {
        d.line(format!(
            "  nothing it tried beat the defaults ({} candidate{})",
            s.configs - 1,
            if s.configs == 2 { "" } else { "s" }
        ));
    } else {
        d.line(format!("  best: {}", s.best.describe()));
    }
    d.line("");
    let runs = o.runs;
    d.line(format!(
        "Verification: {runs} run{} of each configuration, interleaved, each in a fresh VM in its own \
process ({} at a time{}); times are the mean{} of run_main",
        if runs == 1 { "" } else { "s" },
        o.runner.parallelism(),
        o.runner
            .memory()
            .map_or(String::new(), |m| format!(", {}", crate::pressure::describe_limit(m))),
        if runs == 1 { "" } else { " ± sd" }
    ));
    d.table(verification_table(r));
    if !r.verification.failures.is_empty() {
        d.line("");
        d.line(format!(
            "Failed runs ({}, left out of the times and speed-ups):",
            r.verification.failures.len()
        ));
        for f in &r.verification.failures {
            for (k, line) in f.lines().enumerate() {
                d.line(format!("  {}{line}", if k == 0 { "" } else { "  " }));
            }
        }
    }
    d.line("");
    d.line(format!(
        "Time: {:.1} s in all: profile {:.1} s, search {:.1} s (its budget: {} s), verification \
{:.1} s ({} runs, outside the budget)",
        r.elapsed.as_secs_f64(),
        r.profile.elapsed.as_secs_f64(),
        s.elapsed.as_secs_f64(),
        crate::cells::secs(o.budget.as_secs_f64()),
        r.verification_elapsed.as_secs_f64(),
        r.verification.samples.iter().map(Vec::len).sum::<usize>() + r.verification.failures.len()
    ));
    d.line("");
    let defaults = o.baseline.clone();
    let measured = |c: &GcConfig, s: Option<SpeedUp>| {
        if c.same_parameters(&defaults) {
            "1.00x (these are the defaults)".to_string()
        } else {
            speed_up_line(s)
        }
    };
    let proposal = r.proposal_speed_up();
    let search = r.search_speed_up();
    for (label, config, speed_up) in [
        ("proposal:", &r.proposal.config, proposal),
        ("search:  ", &r.search.best, search),
    ] {
        d.line(format!(
            "{label} lupa run {} {command}",
            config.flags().join(" ")
        ));
        d.line(format!(
            "  speed-up over the defaults: {}",
            measured(config, speed_up)
        ));
    }
    let faster = |c: &GcConfig, s: Option<SpeedUp>| {
        s.filter(|s| !c.same_parameters(&defaults) && s.significant() && s.estimate > 1.0)
    };
    let verdict = match (
        faster(&r.proposal.config, proposal),
        faster(&r.search.best, search),
    ) {
        (None, None) => "neither is significantly faster than the defaults".to_string(),
        (Some(p), None) => format!("use the proposal ({:.2}x)", p.estimate),
        (None, Some(s)) => format!("use the search's best ({:.2}x)", s.estimate),
        (Some(p), Some(s)) if p.estimate >= s.estimate => format!(
            "both are faster; the proposal more ({:.2}x against {:.2}x)",
            p.estimate, s.estimate
        ),
        (Some(p), Some(s)) => format!(
            "both are faster; the search's best more ({:.2}x against {:.2}x)",
            s.estimate, p.estimate
        ),
    };
    d.line(format!("Verdict: {verdict}"));
    d
}
