//! Time next to work (`lupa profile --compare-modes`): the self shares of a
//! time profile (the sampler thread) beside those of a deterministic profile of
//! the same program (`--every N`, the work done), method by method.
//!
//! [`work_profile`] takes the deterministic profile.
//!
//! Contract: [`compare`] answers lines without newlines: a title, a header, and
//! the `top` methods with the largest self share in either profile, ordered
//! by time share; a method absent from one profile has 0% there. Shares are
//! of each profile's own grand total, so the columns are comparable whatever
//! the metrics' units.

use lupa_prof::Profile;
use lupa_vm::{Vm, VmOptions};
use std::collections::BTreeMap;

use super::SamplerConfig;
use crate::error::ProfilerError;
use crate::mode::ProfileMode;
use crate::view::View;
use crate::workload::Workload;

/// The work profile of `--compare-modes`: the program `args` run again in a
/// fresh VM made from `options` (its output discarded), sampled every
/// `every` sends, seen through `view`.
pub fn work_profile(
    options: VmOptions,
    args: &[String],
    every: u64,
    view: &View,
) -> Result<Profile, ProfilerError> {
    let mut vm = Vm::new(options)?;
    crate::install(&mut vm);
    vm.io.capture_output();
    let class = args
        .first()
        .ok_or_else(|| ProfilerError::Workload("no class to run".to_string()))?;
    vm.load_class_by_name(class)?;
    let config = SamplerConfig {
        every: Some(every),
        ..SamplerConfig::DEFAULT
    };
    let run = ProfileMode::Sampling(config).run(&mut vm, Workload::Program(args))?;
    run.result?;
    Ok(view.apply(Profile::try_from(run.output)?))
}

fn self_shares(p: &Profile) -> BTreeMap<String, f64> {
    let total = p.grand_total().max(1) as f64;
    let mut out = BTreeMap::new();
    for (stats, info) in p.method_stats().iter().zip(&p.methods) {
        if stats.self_value > 0 {
            *out.entry(info.name.clone()).or_insert(0.0) += stats.self_value as f64 * 100.0 / total;
        }
    }
    out
}

/// The comparison of `time` (weighted samples) and `work` (deterministic
/// samples, one every `every` sends).
pub fn compare(time: &Profile, work: &Profile, every: u64, top: usize) -> Vec<String> {
    let (t, w) = (self_shares(time), self_shares(work));
    let mut names: Vec<&String> = t.keys().chain(w.keys()).collect();
    names.sort();
    names.dedup();
    let share = |m: &BTreeMap<String, f64>, n: &str| m.get(n).copied().unwrap_or(0.0);
    names.sort_by(|a, b| {
        let ka = share(&t, a).max(share(&w, a));
        let kb = share(&t, b).max(share(&w, b));
        kb.total_cmp(&ka).then_with(|| a.cmp(b))
    });
    names.truncate(top);
    names.sort_by(|a, b| share(&t, b).total_cmp(&share(&t, a)).then_with(|| a.cmp(b)));
    let mut lines = vec![
        format!(
            "Time and work: self shares of the time profile and of a deterministic one (a sample every {every} sends)"
        ),
        format!("  {:>7} {:>7} {:>8}  method", "time %", "work %", "diff"),
    ];
    for n in names {
        let (a, b) = (share(&t, n), share(&w, n));
        lines.push(format!("  {a:>6.1}% {b:>6.1}% {:>+7.1}  {n}", a - b));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_prof::{MethodInfo, Metric, ProfileBuilder};

    fn profile(metric: Metric, leaves: &[(&str, u64)]) -> Profile {
        let mut b = ProfileBuilder::new(metric);
        for &(name, v) in leaves {
            let m = b.intern_method(MethodInfo::named(name));
            b.enter(m);
            b.add_self(v);
            b.exit();
        }
        b.finish()
    }

    #[test]
    fn shares_side_by_side_ordered_by_time() {
        let time = profile(Metric::Nanoseconds, &[("A>>a", 600), ("B>>b", 400)]);
        let work = profile(Metric::Samples, &[("A>>a", 1), ("B>>b", 2), ("C>>c", 1)]);
        let lines = compare(&time, &work, 100, 10);
        assert!(lines[0].contains("every 100 sends"));
        assert_eq!(lines[2], "    60.0%   25.0%   +35.0  A>>a");
        assert_eq!(lines[3], "    40.0%   50.0%   -10.0  B>>b");
        assert_eq!(lines[4], "     0.0%   25.0%   -25.0  C>>c");
        assert_eq!(
            compare(&time, &work, 100, 1).len(),
            3,
            "top 1: the biggest share"
        );
    }
}
