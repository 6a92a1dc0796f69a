//! The calibration data model of Compteur (Bergel, ECOOP 2011, section 3): a
//! basket of programs, their measured samples, and the fitted message rate that
//! turns a send count into a time estimate.
//!
//! `lupa calibrate` (the experiment is in `lupa-lab`) measures and saves a
//! [`Calibration`] (JSON); `lupa count` (Compteur, in `lupa-profilers`) loads
//! it to print an estimate. Contract: the JSON layout is the one existing
//! calibration files have (field names are stable); [`Calibration::estimate`]
//! is one line of text without a newline.

use crate::stats::{self, MessageRate};
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

    /// The time of a run that sent `sends` messages: `sends / MR`, with a
    /// prediction interval at `confidence` (e.g. 0.95) from the spread of the
    /// basket's own rates on a log scale.
    ///
    /// Each program of the basket has a rate (its mean sends over its mean
    /// time); the logarithms of those rates are close to normal where the rates
    /// themselves are skewed, so a new program's log-rate is predicted as their
    /// mean ± `t(n − 1) · s · √(1 + 1/n)`. The interval of the time is `sends`
    /// divided by the ends of that rate interval: always positive, in proportion
    /// to the sends, and as wide as the programs' rates differ (not as wide as
    /// the residuals of the regression in sends, which the largest programs
    /// dominate and which a small run would turn into a negative time). With
    /// fewer than two programs the interval is `None`.
    pub fn time_estimate(&self, sends: u64, confidence: f64) -> TimeInterval {
        let estimate = sends as f64 * self.rate.time_units_per_send();
        let bounds = self.log_rate_interval(confidence).map(|(lo, hi)| {
            let lower = (sends as f64 / hi).min(estimate);
            let upper = (sends as f64 / lo).max(estimate);
            (lower, upper)
        });
        TimeInterval { estimate, bounds }
    }

    /// The prediction interval of a new program's rate (sends per ms), from
    /// the basket's log-rates (see [`Calibration::time_estimate`]).
    fn log_rate_interval(&self, confidence: f64) -> Option<(f64, f64)> {
        let logs: Vec<f64> = self
            .programs
            .iter()
            .filter_map(|(_, samples)| {
                let n = samples.len() as f64;
                let ms = samples.iter().map(|s| s.ms).sum::<f64>() / n;
                let sends = samples.iter().map(|s| s.sends as f64).sum::<f64>() / n;
                (ms > 0.0 && sends > 0.0).then(|| (sends / ms).ln())
            })
            .collect();
        let n = logs.len();
        let mean = stats::mean(&logs)?;
        let sd = stats::sample_sd(&logs)?;
        let t = stats::student_t_quantile(1.0 - (1.0 - confidence) / 2.0, (n - 1) as f64).ok()?;
        let half = t * sd * (1.0 + 1.0 / n as f64).sqrt();
        Some(((mean - half).exp(), (mean + half).exp()))
    }

    /// What makes this calibration a poor basis for estimates, one sentence
    /// each (none for a good one): a weak correlation of sends with time
    /// (`r` below [`Calibration::MIN_R`]) or times that varied widely between
    /// runs of a program (a coefficient of variation above
    /// [`Calibration::MAX_TIME_CV`]: the machine was busy).
    pub fn quality_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let r = self.rate.regression.r;
        if r.is_nan() || r < Self::MIN_R {
            problems.push(format!(
                "the fit is poor: sends and time correlate with r = {r:.2} (below {:.2})",
                Self::MIN_R
            ));
        }
        let worst = self
            .programs
            .iter()
            .filter_map(|(p, samples)| {
                let ms: Vec<f64> = samples.iter().map(|s| s.ms).collect();
                let cv = stats::Summary::of(&ms).ok()?.cv;
                cv.is_finite().then_some((cv, p.name.as_str()))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((cv, name)) = worst
            && cv > Self::MAX_TIME_CV
        {
            problems.push(format!(
                "times varied between runs by up to {:.0}% (coefficient of variation, {name}; \
above {:.0}%): the machine was probably busy",
                cv * 100.0,
                Self::MAX_TIME_CV * 100.0
            ));
        }
        problems
    }

    /// The correlation below which [`Calibration::quality_problems`] calls the
    /// fit poor.
    pub const MIN_R: f64 = 0.95;
    /// The coefficient of variation of a program's times above which
    /// [`Calibration::quality_problems`] calls the measurements unstable.
    pub const MAX_TIME_CV: f64 = 0.20;

    /// "estimated time: 12.3 ms (95% interval 11.9 - 12.8 ms)".
    pub fn estimate(&self, sends: u64) -> String {
        let e = self.time_estimate(sends, 0.95);
        match e.bounds {
            Some((l, u)) => format!(
                "estimated time: {:.3} ms (95% prediction interval {:.3} - {:.3} ms)",
                e.estimate, l, u
            ),
            None => format!("estimated time: {:.3} ms", e.estimate),
        }
    }
}

/// A time estimate and its interval ([`Calibration::time_estimate`]), in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeInterval {
    /// `sends / MR`.
    pub estimate: f64,
    /// The prediction interval's lower and upper bounds (both positive), when
    /// the basket has at least two programs.
    pub bounds: Option<(f64, f64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(points: &[(f64, u64)], cv: f64) -> Calibration {
        let programs: Vec<(Program, Vec<Sample>)> = points
            .iter()
            .enumerate()
            .map(|(i, &(ms, sends))| {
                let p = Program::parse(&format!("P{i}")).expect("name");
                let samples = vec![
                    Sample {
                        ms: ms * (1.0 - cv),
                        sends,
                    },
                    Sample {
                        ms: ms * (1.0 + cv),
                        sends,
                    },
                ];
                (p, samples)
            })
            .collect();
        let times: Vec<f64> = points.iter().map(|p| p.0).collect();
        let sends: Vec<f64> = points.iter().map(|p| p.1 as f64).collect();
        Calibration {
            rate: MessageRate::fit(&times, &sends).expect("fit"),
            programs,
            lupa_version: "test".to_string(),
        }
    }

    /// A tiny run on a scattered basket: the regression's inverse prediction
    /// gives a negative lower bound; the log-scale interval stays positive,
    /// around the estimate and in proportion to the sends.
    #[test]
    fn the_interval_of_a_small_run_is_positive_and_proportional() {
        let c = calibration(
            &[
                (100.0, 900_000),
                (200.0, 2_400_000),
                (50.0, 300_000),
                (400.0, 4_200_000),
            ],
            0.01,
        );
        let inverse = c.rate.predict_time(1000.0, 0.95).expect("inverse");
        assert!(inverse.lower.is_none_or(|l| l < 0.0), "{inverse:?}");
        let e = c.time_estimate(1000, 0.95);
        let (lo, hi) = e.bounds.expect("bounds");
        assert!(0.0 < lo && lo <= e.estimate && e.estimate <= hi, "{e:?}");
        // Rates from 6,000 to 12,000 sends per ms: an interval of about one
        // order of magnitude, not four.
        assert!(hi / lo < 10.0, "{e:?}");
        let big = c.time_estimate(1_000_000, 0.95);
        let (blo, bhi) = big.bounds.expect("bounds");
        assert!((blo / lo - 1000.0).abs() < 1e-6 && (bhi / hi - 1000.0).abs() < 1e-6);
        assert!(c.estimate(1000).contains("95% prediction interval"));
        assert!(
            c.quality_problems().is_empty(),
            "{:?}",
            c.quality_problems()
        );
    }

    #[test]
    fn a_poor_fit_and_unstable_times_are_said() {
        let c = calibration(
            &[(100.0, 100_000), (110.0, 2_000_000), (300.0, 150_000)],
            0.5,
        );
        let problems = c.quality_problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("the fit is poor"), "{problems:?}");
        // Two samples at ±50%: a sample standard deviation of 50% · √2.
        assert!(problems[1].contains("up to 71%"), "{problems:?}");
        // A basket of one program has no spread of rates: no interval.
        let mut one = calibration(&[(100.0, 100_000), (200.0, 200_000)], 0.0);
        one.programs.truncate(1);
        assert_eq!(one.time_estimate(10, 0.95).bounds, None);
    }
}
