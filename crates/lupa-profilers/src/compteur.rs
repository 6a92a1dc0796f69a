//! Compteur's configuration and report: the header lines above the ranking
//! and tree (totals and the calibrated time estimate).
//!
//! The profile itself is built by [`ProfileMode::Compteur`](crate::ProfileMode);
//! this file holds only what is specific to counting sends. Contract:
//! [`header`] answers lines without newlines, in the order `lupa count` prints
//! them.

use lupa_prof::Profile;
use lupa_prof::calibration::Calibration;
use lupa_prof::report::TimeEstimate;
use std::path::Path;

/// How Compteur counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompteurConfig {
    /// Also count sends by site, for the profile's per-line costs (without
    /// them the VM runs its loop without per-send observation, the
    /// activation hooks alone: cheaper, for callers that keep method totals
    /// and stacks only, as Hip's records).
    pub lines: bool,
}

impl CompteurConfig {
    /// Per-line costs included.
    pub const DEFAULT: CompteurConfig = CompteurConfig { lines: true };
    /// Methods and stacks only.
    pub const BY_METHOD: CompteurConfig = CompteurConfig { lines: false };
}

impl Default for CompteurConfig {
    fn default() -> CompteurConfig {
        CompteurConfig::DEFAULT
    }
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
