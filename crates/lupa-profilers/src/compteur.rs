//! Compteur's configuration and report: the header lines above the ranking
//! and tree (totals and the calibrated time estimate).
//!
//! The profile itself is built by [`ProfileMode::Compteur`](crate::ProfileMode);
//! this file holds only what is specific to counting sends. Contract:
//! [`header`] answers lines without newlines, in the order `lupa count` prints
//! them.

use lupa_prof::Profile;
use lupa_prof::calibration::Calibration;
use lupa_prof::report::{TimeEstimate, group_digits};

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

/// The header of a Compteur report: the command, the totals (digits
/// grouped by thousands, as in the tables) and the time estimate of
/// `calibration`, if any.
pub fn header(
    profile: &Profile,
    command: &str,
    inlined: u64,
    calibration: Option<&Calibration>,
) -> Vec<String> {
    let total = profile.grand_total();
    let activations: u64 = profile.nodes.iter().map(|n| n.activations).sum();
    let mut lines = vec![
        command.to_string(),
        format!(
            "{} message sends ({} inlined control-structure sends not included), \
{} activations of {} methods and blocks",
            group_digits(total),
            group_digits(inlined),
            group_digits(activations),
            group_digits(profile.methods.len().saturating_sub(1) as u64)
        ),
    ];
    if let Some(cal) = calibration {
        lines.push(cal.estimate(total));
    }
    lines
}

/// The time estimate of a run that sent `sends` messages, from
/// `calibration` ([`Calibration::time_estimate`]: a 95% prediction interval).
pub fn estimate(sends: u64, calibration: &Calibration) -> TimeEstimate {
    let e = calibration.time_estimate(sends, 0.95);
    TimeEstimate {
        milliseconds: e.estimate,
        lower: e.bounds.map(|b| b.0),
        upper: e.bounds.map(|b| b.1),
        confidence: 0.95,
    }
}
