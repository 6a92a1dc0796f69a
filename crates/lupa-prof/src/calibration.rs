//! The calibration data model of Compteur (Bergel, ECOOP 2011, section 3): a
//! basket of programs, their measured samples, and the fitted message rate that
//! turns a send count into a time estimate.
//!
//! `lupa calibrate` (the experiment is in `lupa-lab`) measures and saves a
//! [`Calibration`] (JSON); `lupa count` (Compteur, in `lupa-profilers`) loads
//! it to print an estimate. Contract: the JSON layout is the one existing
//! calibration files have (field names are stable); [`Calibration::estimate`]
//! is one line of text without a newline.

use crate::stats::MessageRate;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One program of a basket: a class and its `run:` arguments.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Program {
    /// Display name.
    pub name: String,
    /// `CLASS ARG...` as for `lupa run`.
    pub args: Vec<String>,
}

impl Program {
    /// Parse `"Class arg arg"` (`None` when empty).
    pub fn parse(spec: &str) -> Option<Program> {
        let args: Vec<String> = spec.split_whitespace().map(str::to_string).collect();
        (!args.is_empty()).then(|| Program {
            name: spec.trim().to_string(),
            args,
        })
    }
}

/// Time and sends of one run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Sample {
    /// Wall time in milliseconds.
    pub ms: f64,
    /// Executed sends.
    pub sends: u64,
}

/// The saved calibration (`lupa calibrate --save`), used by `lupa count`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    /// Sends per millisecond, with the regression behind it.
    pub rate: MessageRate,
    /// Programs and their samples.
    pub programs: Vec<(Program, Vec<Sample>)>,
    /// The Lupa version that measured it.
    pub lupa_version: String,
}

/// Why a calibration file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a calibration.
    #[error("{path} is not a Lupa calibration: {source}")]
    Parse {
        /// The file.
        path: String,
        /// The JSON error.
        source: serde_json::Error,
    },
}

impl Calibration {
    /// Load a calibration file.
    pub fn load(path: &Path) -> Result<Calibration, CalibrationError> {
        let text = std::fs::read_to_string(path).map_err(|source| CalibrationError::Read {
            path: path.display().to_string(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| CalibrationError::Parse {
            path: path.display().to_string(),
            source,
        })
    }

    /// The calibration as pretty JSON (what `load` reads back).
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }

    /// "estimated time: 12.3 ms (95% interval 11.9 - 12.8 ms)".
    pub fn estimate(&self, sends: u64) -> String {
        match self.rate.predict_time(sends as f64, 0.95) {
            Ok(e) => match (e.lower, e.upper) {
                (Some(l), Some(u)) => format!(
                    "estimated time: {:.3} ms (95% interval {:.3} - {:.3} ms)",
                    e.estimate, l, u
                ),
                _ => format!("estimated time: {:.3} ms", e.estimate),
            },
            Err(err) => format!("no time estimate: {err}"),
        }
    }
}
