//! Compteur's report: which methods to keep (the application's) and the header
//! lines above the ranking and tree (totals and the calibrated time estimate).
//!
//! The profile itself is built by [`ProfileMode::Compteur`](crate::ProfileMode);
//! this file holds only what is specific to reporting a send count. Contract:
//! [`header`] answers lines without newlines, in the order `lupa count` prints
//! them; [`keep_only`] with no package and no class answers the profile
//! unchanged.

use lupa_prof::Profile;
use lupa_prof::calibration::Calibration;
use lupa_prof::report::TimeEstimate;
use std::path::Path;

/// Report only methods of these packages (class directories, e.g.
/// `Benchmarks/Richards`, and their subdirectories) or classes; the counts of the
/// kept methods still include what they cause in the others
/// ([`Profile::filtered`]).
pub fn keep_only(profile: Profile, packages: &[String], classes: &[String]) -> Profile {
    if packages.is_empty() && classes.is_empty() {
        return profile;
    }
    profile.filtered(|m| kept(m, packages, classes))
}

/// [`keep_only`] for a sampled profile and its timeline, which follows.
pub fn keep_only_sampled(
    profile: Profile,
    timeline: &mut lupa_prof::Timeline,
    packages: &[String],
    classes: &[String],
) -> Profile {
    if packages.is_empty() && classes.is_empty() {
        return profile;
    }
    let (out, map) = profile.filtered_mapped(|m| kept(m, packages, classes));
    timeline.remap(&map);
    out
}

/// Is the method in one of `classes` or `packages` (or a sub-package)?
fn kept(m: &lupa_prof::MethodInfo, packages: &[String], classes: &[String]) -> bool {
    classes.contains(&m.class)
        || packages
            .iter()
            .any(|p| m.category == *p || m.category.starts_with(&format!("{p}/")))
}

/// The header of a Compteur report: the command, the totals, and the time
/// estimate of the calibration at `calibration` (a line `(why)` when the file
/// exists but cannot be used, nothing when it does not exist).
pub fn header(profile: &Profile, command: &str, inlined: u64, calibration: &Path) -> Vec<String> {
    let total = profile.grand_total();
    let activations: u64 = profile.nodes.iter().map(|n| n.activations).sum();
    let mut lines = vec![
        command.to_string(),
        format!(
            "{total} message sends ({inlined} inlined control-structure sends not included), \
{activations} activations of {} methods and blocks",
            profile.methods.len().saturating_sub(1)
        ),
    ];
    match Calibration::load(calibration) {
        Ok(cal) => lines.push(cal.estimate(total)),
        Err(e) if calibration.exists() => lines.push(format!("({e})")),
        Err(_) => {}
    }
    lines
}

/// The time estimate of a run that sent `sends` messages, from the
/// calibration at `calibration` (none when it is missing or unusable).
pub fn estimate(sends: u64, calibration: &Path) -> Option<TimeEstimate> {
    let cal = Calibration::load(calibration).ok()?;
    let e = cal.rate.predict_time(sends as f64, 0.95).ok()?;
    Some(TimeEstimate {
        milliseconds: e.estimate,
        lower: e.lower,
        upper: e.upper,
        confidence: 0.95,
    })
}
