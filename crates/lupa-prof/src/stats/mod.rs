//! Statistics of the Compteur paper (Bergel, "Counting Messages as a Proxy for
//! Average Execution Time in Pharo", ECOOP 2011): §3 and Appendix A (regression
//! of message sends on execution time, confidence and prediction intervals,
//! coefficients of variation) and §4.4 (instability of method rankings).
//!
//! Everything is plain `f64` arithmetic with no dependency; Student's t
//! distribution is computed from the regularized incomplete beta function
//! ([`student_t_cdf`], [`student_t_quantile`]), accurate to about 1e-10.
//!
//! # Which way the regression goes
//!
//! The paper regresses the number of sends (`y`) on the execution time (`x`):
//! `ŷ = b·x`, so the slope `b` is the *message rate* MR, in sends per time unit
//! (9 335.55 sends/ms for its 16 applications). [`MessageRate`] fits exactly
//! that and names both directions: [`MessageRate::sends_per_time_unit`] (MR) and
//! [`MessageRate::time_units_per_send`] (1/MR), and predicts sends from a time
//! ([`MessageRate::predict_sends`]) or a time from a number of sends
//! ([`MessageRate::predict_time`], by inverting the prediction band).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why a statistic could not be computed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// Not enough observations.
    #[error("need at least {needed} observations, got {got}")]
    TooFewPoints {
        /// Minimum number of observations.
        needed: usize,
        /// Number given.
        got: usize,
    },
    /// `x` and `y` have different lengths.
    #[error("x has {x} values but y has {y}")]
    LengthMismatch {
        /// Length of x.
        x: usize,
        /// Length of y.
        y: usize,
    },
    /// All `x` are zero (or equal, with an intercept): no slope.
    #[error("x has no spread: the slope is undefined")]
    DegenerateX,
    /// A value is NaN or infinite.
    #[error("a value is not finite")]
    NonFinite,
    /// A probability or confidence level outside (0, 1).
    #[error("probability {0} is not in (0, 1)")]
    BadProbability(f64),
    /// The mean is zero: the coefficient of variation is undefined.
    #[error("the mean is zero")]
    ZeroMean,
}

/// A point estimate with a two-sided interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The point estimate.
    pub estimate: f64,
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
}

impl Interval {
    /// Does the interval contain `v` (bounds included)?
    pub fn contains(&self, v: f64) -> bool {
        self.lower <= v && v <= self.upper
    }
}

/// An estimate of `x` for an observed `y` (inverse prediction, "calibration"),
/// with bounds that may be infinite when the slope is not significantly
/// different from zero at the requested confidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InverseEstimate {
    /// `x̂` solving `ŷ(x̂) = y`.
    pub estimate: f64,
    /// Lower bound, `None` if unbounded.
    pub lower: Option<f64>,
    /// Upper bound, `None` if unbounded.
    pub upper: Option<f64>,
}

fn check_finite(xs: &[f64]) -> Result<(), StatsError> {
    if xs.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(StatsError::NonFinite)
    }
}

fn check_probability(p: f64) -> Result<(), StatsError> {
    if p > 0.0 && p < 1.0 {
        Ok(())
    } else {
        Err(StatsError::BadProbability(p))
    }
}

mod descriptive;
mod ranking;
mod regression;
mod student_t;
#[cfg(test)]
mod tests;
mod welch;

pub use descriptive::*;
pub use ranking::*;
pub use regression::*;
pub use student_t::*;
pub use welch::*;
