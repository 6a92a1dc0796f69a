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

// ---------------------------------------------------------------------------
// Descriptive statistics

/// Arithmetic mean (`None` for no values).
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some(xs.iter().sum::<f64>() / xs.len() as f64)
    }
}

/// Sample standard deviation, with `n − 1` in the denominator (`None` for fewer
/// than 2 values). This is the paper's `s` (its §4.4 table confirms `n − 1`).
pub fn sample_sd(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|v| (v - m) * (v - m)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// Mean, sample standard deviation and coefficient of variation of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (`n − 1`).
    pub sd: f64,
    /// Coefficient of variation `sd / mean` as a fraction (multiply by 100 for
    /// the paper's `c` columns, which are percentages). `NaN` if the mean is 0.
    pub cv: f64,
}

impl Summary {
    /// Summarise at least 2 finite values.
    pub fn of(xs: &[f64]) -> Result<Summary, StatsError> {
        check_finite(xs)?;
        let sd = sample_sd(xs).ok_or(StatsError::TooFewPoints {
            needed: 2,
            got: xs.len(),
        })?;
        let mean = mean(xs).unwrap_or(f64::NAN);
        let cv = if mean == 0.0 { f64::NAN } else { sd / mean };
        Ok(Summary {
            n: xs.len(),
            mean,
            sd,
            cv,
        })
    }
}

/// Coefficient of variation `s / mean` (a fraction, not a percentage).
pub fn coefficient_of_variation(xs: &[f64]) -> Result<f64, StatsError> {
    let s = Summary::of(xs)?;
    if s.mean == 0.0 {
        return Err(StatsError::ZeroMean);
    }
    Ok(s.cv)
}

/// How many times more stable metric B is than metric A over a set of
/// applications: the mean of A's coefficients of variation divided by the mean
/// of B's. The paper (§3.2): mean `c_time` 13.95 over mean `c_messages` 0.61 —
/// "counting messages is 22.86 times more stable than measuring the execution
/// time". The CVs may be fractions or percentages, as long as both are alike.
pub fn cv_ratio(cvs_a: &[f64], cvs_b: &[f64]) -> Result<f64, StatsError> {
    check_finite(cvs_a)?;
    check_finite(cvs_b)?;
    let a = mean(cvs_a).ok_or(StatsError::TooFewPoints { needed: 1, got: 0 })?;
    let b = mean(cvs_b).ok_or(StatsError::TooFewPoints { needed: 1, got: 0 })?;
    if b == 0.0 {
        return Err(StatsError::ZeroMean);
    }
    Ok(a / b)
}

/// Pearson's (centred) correlation coefficient `r`. `None` for fewer than 2
/// points, different lengths or a constant variable.
pub fn pearson(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() != ys.len() || xs.len() < 2 {
        return None;
    }
    let mx = mean(xs)?;
    let my = mean(ys)?;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        None
    } else {
        Some(sxy / (sxx * syy).sqrt())
    }
}

// ---------------------------------------------------------------------------
// Regression

/// Which linear model a [`Regression`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegressionKind {
    /// `y = b·x` (the paper's constraint: no time, no sends); `n − 1` degrees of
    /// freedom.
    ThroughOrigin,
    /// `y = a + b·x`, the textbook formulas of the paper's Appendix A; `n − 2`
    /// degrees of freedom.
    WithIntercept,
}

/// A fitted least-squares line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    /// The model.
    pub kind: RegressionKind,
    /// Number of points.
    pub n: usize,
    /// Slope `b`.
    pub slope: f64,
    /// Intercept `a` (0 for [`RegressionKind::ThroughOrigin`]).
    pub intercept: f64,
    /// Residual standard error `s_e = sqrt(SSE / df)` (the paper's "standard
    /// deviation of error").
    pub residual_se: f64,
    /// Standard error of the slope `s_b = s_e / sqrt(Sxx)`.
    pub slope_se: f64,
    /// Degrees of freedom of the residuals (`n − 1` or `n − 2`).
    pub df: f64,
    /// `Sxx`: `Σx²` through the origin, `Σ(x − x̄)²` with an intercept.
    pub sxx: f64,
    /// Mean of x.
    pub x_mean: f64,
    /// Mean of y.
    pub y_mean: f64,
    /// Pearson's centred correlation `r` between x and y (what the paper reports
    /// as "correlation of 0.99"); `NaN` if y is constant.
    pub r: f64,
    /// Coefficient of determination of the *fitted model*: for
    /// [`RegressionKind::WithIntercept`] the usual `R² = r²`; for
    /// [`RegressionKind::ThroughOrigin`] the uncentred `R² = Σŷ² / Σy² =
    /// (Σxy)² / (Σx²·Σy²)`, the one statistics packages report for models without
    /// intercept (it is not comparable to `r²`, and is usually larger).
    pub r_squared: f64,
}

impl Regression {
    /// Fit `y = b·x` by least squares: `b = Σxy / Σx²`. Needs 2 points and some
    /// non-zero x.
    pub fn through_origin(xs: &[f64], ys: &[f64]) -> Result<Regression, StatsError> {
        Self::check(xs, ys, 2)?;
        let n = xs.len();
        let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| x * y).sum();
        let sxx: f64 = xs.iter().map(|x| x * x).sum();
        let syy: f64 = ys.iter().map(|y| y * y).sum();
        if sxx == 0.0 {
            return Err(StatsError::DegenerateX);
        }
        let b = sxy / sxx;
        let sse: f64 = xs
            .iter()
            .zip(ys)
            .map(|(x, y)| (y - b * x) * (y - b * x))
            .sum();
        let df = (n - 1) as f64;
        let se = (sse / df).sqrt();
        let r_squared = if syy == 0.0 {
            f64::NAN
        } else {
            sxy * sxy / (sxx * syy)
        };
        Ok(Regression {
            kind: RegressionKind::ThroughOrigin,
            n,
            slope: b,
            intercept: 0.0,
            residual_se: se,
            slope_se: se / sxx.sqrt(),
            df,
            sxx,
            x_mean: mean(xs).unwrap_or(f64::NAN),
            y_mean: mean(ys).unwrap_or(f64::NAN),
            r: pearson(xs, ys).unwrap_or(f64::NAN),
            r_squared,
        })
    }

    /// Fit `y = a + b·x` by least squares (the paper's Appendix A): `b = SSxy /
    /// SSxx`, `a = ȳ − b·x̄`, `s_e = sqrt((SSyy − b·SSxy) / (n − 2))`, `s_b = s_e /
    /// sqrt(SSxx)`. Needs 3 points and x not all equal.
    pub fn with_intercept(xs: &[f64], ys: &[f64]) -> Result<Regression, StatsError> {
        Self::check(xs, ys, 3)?;
        let n = xs.len();
        let mx = mean(xs).unwrap_or(f64::NAN);
        let my = mean(ys).unwrap_or(f64::NAN);
        let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
        for (x, y) in xs.iter().zip(ys) {
            sxy += (x - mx) * (y - my);
            sxx += (x - mx) * (x - mx);
            syy += (y - my) * (y - my);
        }
        if sxx == 0.0 {
            return Err(StatsError::DegenerateX);
        }
        let b = sxy / sxx;
        let a = my - b * mx;
        let df = (n - 2) as f64;
        // Residuals computed directly (SSyy − b·SSxy cancels badly for large y).
        let sse: f64 = xs
            .iter()
            .zip(ys)
            .map(|(x, y)| (y - a - b * x) * (y - a - b * x))
            .sum();
        let se = (sse / df).sqrt();
        let r = if syy == 0.0 {
            f64::NAN
        } else {
            sxy / (sxx * syy).sqrt()
        };
        Ok(Regression {
            kind: RegressionKind::WithIntercept,
            n,
            slope: b,
            intercept: a,
            residual_se: se,
            slope_se: se / sxx.sqrt(),
            df,
            sxx,
            x_mean: mx,
            y_mean: my,
            r,
            r_squared: r * r,
        })
    }

    fn check(xs: &[f64], ys: &[f64], needed: usize) -> Result<(), StatsError> {
        if xs.len() != ys.len() {
            return Err(StatsError::LengthMismatch {
                x: xs.len(),
                y: ys.len(),
            });
        }
        if xs.len() < needed {
            return Err(StatsError::TooFewPoints {
                needed,
                got: xs.len(),
            });
        }
        check_finite(xs)?;
        check_finite(ys)
    }

    /// `ŷ = a + b·x`.
    pub fn predict(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }

    /// The two-sided Student t quantile for this model's degrees of freedom:
    /// `t(1 − α/2; df)` for `confidence = 1 − α`.
    pub fn t_value(&self, confidence: f64) -> Result<f64, StatsError> {
        check_probability(confidence)?;
        student_t_quantile(0.5 + confidence / 2.0, self.df)
    }

    /// Confidence interval of the slope: `b ± t·s_b` (the paper's interval for
    /// MR, §3.1, at `confidence = 0.95`).
    pub fn slope_interval(&self, confidence: f64) -> Result<Interval, StatsError> {
        let h = self.t_value(confidence)? * self.slope_se;
        Ok(Interval {
            estimate: self.slope,
            lower: self.slope - h,
            upper: self.slope + h,
        })
    }

    /// `1 + 1/n` with an intercept, `1` through the origin (the variance factor of
    /// a new observation at the mean of x).
    fn obs_factor(&self) -> f64 {
        match self.kind {
            RegressionKind::ThroughOrigin => 1.0,
            RegressionKind::WithIntercept => 1.0 + 1.0 / self.n as f64,
        }
    }

    /// Distance of `x` from the model's pivot (0 or x̄).
    fn pivot(&self, x: f64) -> f64 {
        match self.kind {
            RegressionKind::ThroughOrigin => x,
            RegressionKind::WithIntercept => x - self.x_mean,
        }
    }

    /// Prediction interval for one new observation of y at x:
    /// `ŷ ± t·s_e·sqrt(1 + x²/Σx²)` through the origin,
    /// `ŷ ± t·s_e·sqrt(1 + 1/n + (x − x̄)²/SSxx)` with an intercept.
    pub fn prediction_interval(&self, x: f64, confidence: f64) -> Result<Interval, StatsError> {
        let t = self.t_value(confidence)?;
        let u = self.pivot(x);
        let h = t * self.residual_se * (self.obs_factor() + u * u / self.sxx).sqrt();
        let y = self.predict(x);
        Ok(Interval {
            estimate: y,
            lower: y - h,
            upper: y + h,
        })
    }

    /// Confidence interval of the mean response at x (the line itself):
    /// `ŷ ± t·s_e·|x|/sqrt(Σx²)` through the origin, `ŷ ± t·s_e·sqrt(1/n + (x −
    /// x̄)²/SSxx)` with an intercept.
    pub fn mean_interval(&self, x: f64, confidence: f64) -> Result<Interval, StatsError> {
        let t = self.t_value(confidence)?;
        let u = self.pivot(x);
        let base = self.obs_factor() - 1.0;
        let h = t * self.residual_se * (base + u * u / self.sxx).sqrt();
        let y = self.predict(x);
        Ok(Interval {
            estimate: y,
            lower: y - h,
            upper: y + h,
        })
    }

    /// Estimate x for an observed y: `x̂ = (y − a)/b`, with the interval of all x
    /// whose prediction interval contains y (the classical calibration interval,
    /// obtained by solving a quadratic). The bounds are `None` when the slope is
    /// not significantly different from 0 at this confidence (`b² ≤ t²s_b²`).
    pub fn inverse_predict(&self, y: f64, confidence: f64) -> Result<InverseEstimate, StatsError> {
        if self.slope == 0.0 {
            return Err(StatsError::DegenerateX);
        }
        let q = self.t_value(confidence)? * self.residual_se;
        let b = self.slope;
        let estimate = (y - self.intercept) / b;
        // With u = x − pivot and v = y − (value of the line at the pivot):
        // (v − b·u)² ≤ q²·(k + u²/Sxx), i.e. A·u² − 2·b·v·u + v² − q²·k ≤ 0 with
        // A = b² − q²/Sxx; the roots are (b·v ± q·sqrt(v²/Sxx + A·k)) / A.
        let (pivot, v) = match self.kind {
            RegressionKind::ThroughOrigin => (0.0, y),
            RegressionKind::WithIntercept => (self.x_mean, y - self.y_mean),
        };
        let k = self.obs_factor();
        let a = b * b - q * q / self.sxx;
        if a <= 0.0 {
            return Ok(InverseEstimate {
                estimate,
                lower: None,
                upper: None,
            });
        }
        let d = q * (v * v / self.sxx + a * k).sqrt();
        let r1 = (b * v - d) / a + pivot;
        let r2 = (b * v + d) / a + pivot;
        Ok(InverseEstimate {
            estimate,
            lower: Some(r1.min(r2)),
            upper: Some(r1.max(r2)),
        })
    }
}

/// The paper's message rate MR (§3.1): sends regressed on time through the
/// origin, `sends = MR · time`.
///
/// The time unit is whatever the times are given in (the paper uses ms, so its
/// MR = 9 335.55 means 9.3 million sends per second).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MessageRate {
    /// The underlying regression, x = time, y = sends.
    pub regression: Regression,
}

impl MessageRate {
    /// Fit from paired measurements (mean time, mean sends) of several programs.
    pub fn fit(times: &[f64], sends: &[f64]) -> Result<MessageRate, StatsError> {
        Ok(MessageRate {
            regression: Regression::through_origin(times, sends)?,
        })
    }

    /// MR: sends per time unit (the slope).
    pub fn sends_per_time_unit(&self) -> f64 {
        self.regression.slope
    }

    /// 1/MR: time units per send.
    pub fn time_units_per_send(&self) -> f64 {
        1.0 / self.regression.slope
    }

    /// Confidence interval of MR (`MR ± t·s_b`, `n − 1` degrees of freedom).
    pub fn rate_interval(&self, confidence: f64) -> Result<Interval, StatsError> {
        self.regression.slope_interval(confidence)
    }

    /// Predicted sends for a run of this duration, with a prediction interval.
    pub fn predict_sends(&self, time: f64, confidence: f64) -> Result<Interval, StatsError> {
        self.regression.prediction_interval(time, confidence)
    }

    /// Predicted duration of a run that sent `sends` messages (`sends / MR`), with
    /// the calibration interval (see [`Regression::inverse_predict`]).
    pub fn predict_time(&self, sends: f64, confidence: f64) -> Result<InverseEstimate, StatsError> {
        self.regression.inverse_predict(sends, confidence)
    }
}

// ---------------------------------------------------------------------------
// Student's t distribution

/// `ln Γ(x)` for `x > 0` (Lanczos approximation, g = 7, 9 terms; relative error
/// about 1e-15).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function `I_x(a, b)` for `a, b > 0`,
/// `0 ≤ x ≤ 1`.
pub fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Cumulative distribution function of Student's t with `df > 0` degrees of
/// freedom: `P(T ≤ t)`.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    // P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2).
    let tail = 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 { 1.0 - tail } else { tail }
}

/// The quantile (inverse CDF) of Student's t with `df > 0` degrees of freedom:
/// the `t` with `P(T ≤ t) = p`. For a two-sided 95% interval use `p = 0.975`:
/// `t(0.975; 1) = 12.706`, `t(0.975; 14) = 2.145` (the paper's value for 16
/// points), `t(0.975; 100) = 1.984`.
///
/// Computed by bisection on [`student_t_cdf`] (closed forms for df 1 and 2),
/// to full double precision in the bracket; error about 1e-10 or better.
pub fn student_t_quantile(p: f64, df: f64) -> Result<f64, StatsError> {
    check_probability(p)?;
    if df.is_nan() || df <= 0.0 || df.is_infinite() {
        return Err(StatsError::NonFinite);
    }
    if p == 0.5 {
        return Ok(0.0);
    }
    if df == 1.0 {
        return Ok((std::f64::consts::PI * (p - 0.5)).tan());
    }
    if df == 2.0 {
        return Ok((2.0 * p - 1.0) * (2.0 / (4.0 * p * (1.0 - p))).sqrt());
    }
    // Work on the upper half and use symmetry. The upper-tail probability is
    // compared directly, to keep precision for p close to 1.
    let upper = p > 0.5;
    let tail = if upper { 1.0 - p } else { p };
    let tail_of = |t: f64| 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    let mut lo = 0.0;
    let mut hi = 1.0;
    while tail_of(hi) > tail {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            break;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if tail_of(mid) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    Ok(if upper { t } else { -t })
}

// ---------------------------------------------------------------------------
// Ranking instability (§4.4)

/// The discounted-cumulated-gain weight of rank `i` (1-based), `w(i) = 1/ln(i + 1)`
/// (Järvelin & Kekäläinen, used by the paper §4.4). `w(1) = 1.4427`, `w(9) = 0.4551`.
pub fn dcg_weight(i: usize) -> f64 {
    1.0 / ((i as f64) + 1.0).ln()
}

/// `Σ_{i=1..n} s(i)·w(i)` for rank standard deviations given in reference order
/// (`sds[0]` is the method ranked first). This is ψ once the `s(i)` are known.
pub fn weighted_instability(sds: &[f64]) -> f64 {
    sds.iter()
        .enumerate()
        .map(|(i, s)| s * dcg_weight(i + 1))
        .sum()
}

/// Which method is "the method ranked i" in ψ's sum (see [`ranking_instability`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceOrder {
    /// Methods ordered by their mean rank over all rankings (ties: the better
    /// best rank, then the name). Symmetric in the rankings.
    MeanRank,
    /// Methods in the order of the first ranking (the reference profile).
    FirstRanking,
}

/// How one method's rank varies across rankings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankVariability {
    /// The method.
    pub name: String,
    /// Its rank (1-based) in each ranking; a method missing from a ranking of
    /// length L gets rank L + 1.
    pub ranks: Vec<usize>,
    /// Mean rank.
    pub mean: f64,
    /// Sample standard deviation of the rank (the paper's `s_es`).
    pub sd: f64,
    /// Weight `w(i)` of its position `i` in the reference order.
    pub weight: f64,
}

/// The result of [`ranking_instability`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingInstability {
    /// ψ_n.
    pub psi: f64,
    /// The first n methods in reference order, with their rank statistics.
    pub methods: Vec<RankVariability>,
}

/// ψ_n, the instability of the first `n` positions of `k ≥ 2` rankings (Bergel
/// 2011, §4.4).
///
/// Each ranking lists method names, the most costly first. For each method its
/// rank varies across the rankings; let `s(m)` be the sample standard deviation
/// (`n − 1` denominator) of its ranks. The paper defines
///
/// ```text
///     ψ_n(P) = Σ_{i=1..n} s(m_i) · w(i),    w(i) = 1 / ln(i + 1)
/// ```
///
/// where `m_i` is "the method ranked i" — so the variability of methods near the
/// top, which users look at, weighs more. ψ = 0 iff the first n methods always
/// get the same rank. (The printed formula reads `w(n)`, but its worked example
/// uses `w(i)`: `0/ln 2 + … + 0.316/ln 5 + 0.516/ln 6 + … + 1.989/ln 10 = 3.177`.)
///
/// The paper does not say which ranking defines "the method ranked i" (its Table 1
/// example matches both the first profile's order and a sort by `s`); `order`
/// makes the choice explicit. Details fixed here:
///
/// * the universe is the union of the names in all rankings;
/// * a method missing from a ranking of length L has rank L + 1 there (rankings
///   truncated to a top-L list are thus treated conservatively);
/// * a name repeated in one ranking counts at its first position;
/// * if fewer than `n` methods exist, the sum stops at the last one.
pub fn ranking_instability<S: AsRef<str>>(
    rankings: &[Vec<S>],
    n: usize,
    order: ReferenceOrder,
) -> Result<RankingInstability, StatsError> {
    if rankings.len() < 2 {
        return Err(StatsError::TooFewPoints {
            needed: 2,
            got: rankings.len(),
        });
    }
    // Universe: first appearance order across rankings.
    let mut names: Vec<&str> = Vec::new();
    let mut index: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
    for r in rankings {
        for s in r {
            let s = s.as_ref();
            if !index.contains_key(s) {
                index.insert(s, names.len());
                names.push(s);
            }
        }
    }
    let ranks: Vec<Vec<usize>> = rankings
        .iter()
        .map(|r| {
            let mut rk = vec![r.len() + 1; names.len()];
            let mut set = vec![false; names.len()];
            for (pos, s) in r.iter().enumerate() {
                if let Some(&m) = index.get(s.as_ref())
                    && !std::mem::replace(&mut set[m], true)
                {
                    rk[m] = pos + 1;
                }
            }
            rk
        })
        .collect();
    let first: Vec<usize> = {
        let mut seen = vec![false; names.len()];
        let mut v = Vec::new();
        for s in &rankings[0] {
            if let Some(&m) = index.get(s.as_ref())
                && !std::mem::replace(&mut seen[m], true)
            {
                v.push(m);
            }
        }
        // Methods absent from the first ranking follow, in universe order.
        v.extend((0..names.len()).filter(|&m| !seen[m]));
        v
    };
    let (psi, picked) =
        instability_of_ranks(&ranks, n, order, &first, &|a, b| names[a].cmp(names[b]));
    let methods = picked
        .into_iter()
        .enumerate()
        .map(|(i, (m, mean, sd))| RankVariability {
            name: names[m].to_string(),
            ranks: ranks.iter().map(|r| r[m]).collect(),
            mean,
            sd,
            weight: dcg_weight(i + 1),
        })
        .collect();
    Ok(RankingInstability { psi, methods })
}

/// The core of ψ on rank tables: `ranks[j][m]` is method m's rank in ranking j.
/// `first` is the first ranking's order of methods (all methods), `tie` breaks ties
/// in [`ReferenceOrder::MeanRank`]. Answers ψ and the picked (method, mean, sd).
fn instability_of_ranks(
    ranks: &[Vec<usize>],
    n: usize,
    order: ReferenceOrder,
    first: &[usize],
    tie: &dyn Fn(usize, usize) -> std::cmp::Ordering,
) -> (f64, Vec<(usize, f64, f64)>) {
    let methods = first.len();
    let stat = |m: usize| {
        let v: Vec<f64> = ranks.iter().map(|r| r[m] as f64).collect();
        (
            mean(&v).unwrap_or(f64::NAN),
            sample_sd(&v).unwrap_or(f64::NAN),
        )
    };
    let chosen: Vec<usize> = match order {
        ReferenceOrder::FirstRanking => first.iter().copied().take(n).collect(),
        ReferenceOrder::MeanRank => {
            let means: Vec<f64> = (0..methods).map(|m| stat(m).0).collect();
            let best: Vec<usize> = (0..methods)
                .map(|m| ranks.iter().map(|r| r[m]).min().unwrap_or(usize::MAX))
                .collect();
            let mut all: Vec<usize> = (0..methods).collect();
            all.sort_by(|&a, &b| {
                means[a]
                    .total_cmp(&means[b])
                    .then(best[a].cmp(&best[b]))
                    .then_with(|| tie(a, b))
            });
            all.truncate(n);
            all
        }
    };
    let mut psi = 0.0;
    let mut picked = Vec::with_capacity(chosen.len());
    for (i, &m) in chosen.iter().enumerate() {
        let (mu, sd) = stat(m);
        psi += sd * dcg_weight(i + 1);
        picked.push((m, mu, sd));
    }
    (psi, picked)
}

/// A small deterministic PRNG (SplitMix64) for the Monte Carlo estimate.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`), without modulo bias.
    fn below(&mut self, bound: u64) -> u64 {
        let zone = u64::MAX - (u64::MAX % bound);
        loop {
            let v = self.next();
            if v < zone {
                return v % bound;
            }
        }
    }
}

/// The expected ψ_n of `k` independent uniformly random rankings of `methods`
/// methods, estimated by Monte Carlo over `trials` draws with a fixed `seed`
/// (deterministic), using the same definition and `order` as
/// [`ranking_instability`]. The paper's reference point "ψ10(R) = 173" for 10
/// random rankings corresponds to about 90 methods (see
/// [`random_instability_bound`]).
pub fn random_ranking_instability(
    n: usize,
    k: usize,
    methods: usize,
    trials: usize,
    seed: u64,
    order: ReferenceOrder,
) -> Result<f64, StatsError> {
    if k < 2 {
        return Err(StatsError::TooFewPoints { needed: 2, got: k });
    }
    if trials == 0 || methods == 0 {
        return Err(StatsError::TooFewPoints {
            needed: 1,
            got: trials.min(methods),
        });
    }
    let mut rng = SplitMix64(seed);
    let mut total = 0.0;
    let mut perm: Vec<usize> = (0..methods).collect();
    let mut ranks = vec![vec![0usize; methods]; k];
    let mut first = vec![0usize; methods];
    for _ in 0..trials {
        for (j, rk) in ranks.iter_mut().enumerate() {
            // Fisher–Yates shuffle: perm[pos] is the method at rank pos + 1.
            for i in (1..methods).rev() {
                let r = rng.below(i as u64 + 1) as usize;
                perm.swap(i, r);
            }
            for (pos, &m) in perm.iter().enumerate() {
                rk[m] = pos + 1;
            }
            if j == 0 {
                first.copy_from_slice(&perm);
            }
        }
        let (psi, _) = instability_of_ranks(&ranks, n, order, &first, &|a, b| a.cmp(&b));
        total += psi;
    }
    Ok(total / trials as f64)
}

/// A closed-form reference for random rankings: `σ·Σ_{i=1..n} w(i)` with
/// `σ = sqrt((N² − 1)/12)`, the standard deviation of a rank drawn uniformly from
/// 1..N (N = `methods`). It is the limit of ψ_n for a *fixed* set of n methods as
/// the number of rankings grows, and an upper bound of its expectation for any
/// number of rankings (E(s) ≤ σ). With N = 91, n = 10: 26.27 × 6.555 = 172.2,
/// the paper's "ψ10(R) = 173". Choosing the methods from the rankings themselves
/// shifts it: [`ReferenceOrder::MeanRank`] picks the least scattered ones (lower
/// ψ), [`ReferenceOrder::FirstRanking`] pins them to ranks 1..n in one ranking
/// (higher ψ); use [`random_ranking_instability`] for a like-for-like reference.
pub fn random_instability_bound(n: usize, methods: usize) -> f64 {
    let big_n = methods as f64;
    let sigma = ((big_n * big_n - 1.0) / 12.0).max(0.0).sqrt();
    sigma * (1..=n.min(methods)).map(dcg_weight).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    macro_rules! assert_close {
        ($a:expr, $b:expr, $tol:expr) => {{
            let (a, b) = ($a, $b);
            assert!(close(a, b, $tol), "{a} != {b} (tol {})", $tol);
        }};
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Two-sided 95% values from any t table (3 decimals), and more precise
        // reference values (R: qt(0.975, df)).
        let table = [
            (1.0, 12.706, 12.706_204_736),
            (2.0, 4.303, 4.302_652_730),
            (5.0, 2.571, 2.570_581_836),
            (10.0, 2.228, 2.228_138_852),
            (14.0, 2.145, 2.144_786_688),
            (30.0, 2.042, 2.042_272_456),
            (100.0, 1.984, 1.983_971_519),
        ];
        for (df, rounded, precise) in table {
            let t = student_t_quantile(0.975, df).expect("t");
            assert_close!(t, precise, 1e-6);
            assert_close!((t * 1000.0).round() / 1000.0, rounded, 1e-9);
            assert_close!(student_t_quantile(0.025, df).expect("t"), -precise, 1e-6);
        }
        // Other levels: qt(0.95, 1) = 6.313752, qt(0.995, 1) = 63.656741,
        // qt(0.99, 3) = 4.540703, qt(0.9, 20) = 1.325341, qt(0.995, 7) = 3.499483.
        assert_close!(student_t_quantile(0.95, 1.0).expect("t"), 6.313_752, 1e-5);
        assert_close!(student_t_quantile(0.995, 1.0).expect("t"), 63.656_741, 1e-4);
        assert_close!(student_t_quantile(0.99, 3.0).expect("t"), 4.540_703, 1e-5);
        assert_close!(student_t_quantile(0.9, 20.0).expect("t"), 1.325_341, 1e-5);
        assert_close!(student_t_quantile(0.995, 7.0).expect("t"), 3.499_483, 1e-5);
        // Non-integer degrees of freedom work too, and all df 1..=100 are
        // consistent with the CDF.
        for df in 1..=100 {
            let df = df as f64;
            let t = student_t_quantile(0.975, df).expect("t");
            assert_close!(student_t_cdf(t, df), 0.975, 1e-10);
        }
        assert!(student_t_quantile(1.0, 3.0).is_err());
        assert!(student_t_quantile(0.5, 0.0).is_err());
    }

    #[test]
    fn t_cdf_values() {
        // df = 1 is Cauchy: P(T ≤ 1) = 3/4.
        assert_close!(student_t_cdf(1.0, 1.0), 0.75, 1e-12);
        assert_close!(student_t_cdf(0.0, 7.0), 0.5, 1e-15);
        // df = 2: F(t) = 1/2 + t / (2·sqrt(2 + t²)); F(1) = 0.5 + 1/(2√3) = 0.788675.
        assert_close!(student_t_cdf(1.0, 2.0), 0.788_675_134_6, 1e-9);
        assert_close!(ln_gamma(5.0), (24.0f64).ln(), 1e-12);
        assert_close!(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12);
    }

    #[test]
    fn descriptive() {
        // 2 4 4 4 5 5 7 9: mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32;
        // s² = 32/7 = 4.571429, s = 2.138090, CV = 2.138090/5 = 0.427618.
        let d = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let s = Summary::of(&d).expect("summary");
        assert_eq!(s.n, 8);
        assert_close!(s.mean, 5.0, 1e-12);
        assert_close!(s.sd, 2.138_089_935, 1e-9);
        assert_close!(s.cv, 0.427_617_987, 1e-9);
        assert_close!(coefficient_of_variation(&d).expect("cv"), s.cv, 1e-15);
        assert!(Summary::of(&[1.0]).is_err());
        assert!(coefficient_of_variation(&[-1.0, 1.0]).is_err());
    }

    #[test]
    fn cv_ratio_of_the_paper() {
        // Table 2 of the paper: c_time and c_messages (percent) of 16 applications.
        // Means: 223.24/16 = 13.9525 and 9.83/16 = 0.614375; ratio 22.7101. The
        // paper divides the rounded means, 13.95 / 0.61 = 22.86.
        let c_time = [
            16.67, 5.54, 7.24, 24.56, 23.93, 3.77, 2.08, 46.99, 18.30, 25.71, 0.77, 6.06, 1.26,
            32.94, 1.44, 5.98,
        ];
        let c_messages = [
            1.05, 1.44, 0.22, 2.47, 0.99, 0.14, 0.85, 0.52, 0.06, 0.17, 0.10, 0.44, 0.46, 0.46,
            0.35, 0.11,
        ];
        assert_close!(mean(&c_time).expect("m"), 13.9525, 1e-9);
        assert_close!(mean(&c_messages).expect("m"), 0.614_375, 1e-9);
        assert_close!(cv_ratio(&c_time, &c_messages).expect("r"), 22.710_071, 1e-5);
        assert_close!(cv_ratio(&[13.95], &[0.61]).expect("r"), 22.868_852, 1e-5);
    }

    #[test]
    fn regression_through_origin_by_hand() {
        // x = 1 2 3, y = 2 4 7.
        // Σxy = 2 + 8 + 21 = 31, Σx² = 14, Σy² = 69  →  b = 31/14 = 2.2142857.
        // SSE = Σy² − b·Σxy = 69 − 961/14 = 5/14 = 0.3571429; df = n − 1 = 2;
        // s_e = sqrt(5/28) = 0.4225771; s_b = s_e / sqrt(14) = 0.1129385.
        // t(0.975; 2) = 4.3026527 → slope CI 2.2142857 ± 0.4859351
        //   = [1.7283506, 2.7002208].
        // Uncentred R² = 31² / (14·69) = 961/966 = 0.9948240.
        // Pearson r: Sxy = 31 − 3·2·13/3 = 5, Sxx = 2, Syy = 69 − 169/3 = 38/3,
        //   r = 5 / sqrt(2·38/3) = 0.9933993.
        // Prediction at x = 4: ŷ = 8.8571429, s_e·sqrt(1 + 16/14) = 0.6185896,
        //   interval ± 4.3026527·0.6185896 = [6.1955667, 11.5187190];
        //   mean response: ± t·s_e·4/sqrt(14) = [6.9134025, 10.8008832].
        // Inverse at y = 9: x̂ = 9/b = 4.0645161; q = t·s_e = 1.8182027,
        //   A = b² − q²/14 = 4.6666667, roots (b·9 ± q·sqrt(81/14 + A)) / A
        //   = [3.0105933, 5.5297442].
        let x = [1.0, 2.0, 3.0];
        let y = [2.0, 4.0, 7.0];
        let r = Regression::through_origin(&x, &y).expect("fit");
        assert_close!(r.slope, 2.214_285_714, 1e-9);
        assert_eq!(r.intercept, 0.0);
        assert_eq!(r.df, 2.0);
        assert_close!(r.residual_se, 0.422_577_127, 1e-9);
        assert_close!(r.slope_se, 0.112_938_488, 1e-9);
        assert_close!(r.r_squared, 0.994_824_017, 1e-9);
        assert_close!(r.r, 0.993_399_268, 1e-9);
        let ci = r.slope_interval(0.95).expect("ci");
        assert_close!(ci.lower, 1.728_350_621, 1e-7);
        assert_close!(ci.upper, 2.700_220_807, 1e-7);
        let p = r.prediction_interval(4.0, 0.95).expect("pi");
        assert_close!(p.estimate, 8.857_142_857, 1e-9);
        assert_close!(p.lower, 6.195_566_737, 1e-7);
        assert_close!(p.upper, 11.518_718_977, 1e-7);
        let m = r.mean_interval(4.0, 0.95).expect("mi");
        assert_close!(m.lower, 6.913_402_485, 1e-7);
        assert_close!(m.upper, 10.800_883_230, 1e-7);
        let inv = r.inverse_predict(9.0, 0.95).expect("inv");
        assert_close!(inv.estimate, 4.064_516_129, 1e-9);
        assert_close!(inv.lower.expect("lo"), 3.010_593_256, 1e-7);
        assert_close!(inv.upper.expect("hi"), 5.529_744_245, 1e-7);
        // The inverse interval's ends are exactly where the prediction band hits 9.
        let at_lo = r
            .prediction_interval(inv.lower.expect("lo"), 0.95)
            .expect("pi");
        assert_close!(at_lo.upper, 9.0, 1e-7);
    }

    #[test]
    fn regression_with_intercept_by_hand() {
        // Same data, Appendix A formulas: SSxy = 5, SSxx = 2, SSyy = 38/3.
        // b = 5/2 = 2.5, a = 13/3 − 2.5·2 = −0.6666667.
        // s_e = sqrt((SSyy − b·SSxy)/(n − 2)) = sqrt(38/3 − 12.5) = sqrt(1/6) = 0.4082483
        // s_b = s_e / sqrt(2) = 0.2886751; t(0.975; 1) = 12.7062047
        // CI = 2.5 ± 3.6679654 = [−1.1679654, 6.1679654]; R² = r² = 0.9868421.
        // Prediction at 4: ŷ = 9.3333333, s_e·sqrt(1 + 1/3 + 4/2) = 0.7453560,
        //   interval ± 9.4706666 = [−0.1373125, 18.8039792].
        let x = [1.0, 2.0, 3.0];
        let y = [2.0, 4.0, 7.0];
        let r = Regression::with_intercept(&x, &y).expect("fit");
        assert_close!(r.slope, 2.5, 1e-12);
        assert_close!(r.intercept, -0.666_666_667, 1e-9);
        assert_close!(r.residual_se, 0.408_248_290, 1e-9);
        assert_close!(r.slope_se, 0.288_675_135, 1e-9);
        assert_close!(r.r_squared, 0.986_842_105, 1e-9);
        let ci = r.slope_interval(0.95).expect("ci");
        assert_close!(ci.lower, -1.167_965_364, 1e-6);
        assert_close!(ci.upper, 6.167_965_364, 1e-6);
        let p = r.prediction_interval(4.0, 0.95).expect("pi");
        assert_close!(p.lower, -0.137_312_512, 1e-6);
        assert_close!(p.upper, 18.803_979_178, 1e-6);
        // Slope not significant at 95% with 1 df: the inverse interval is unbounded.
        let inv = r.inverse_predict(9.0, 0.95).expect("inv");
        assert_close!(inv.estimate, 3.866_666_667, 1e-9);
        assert_eq!((inv.lower, inv.upper), (None, None));
        // At 50% it is bounded and contains the estimate.
        let inv = r.inverse_predict(9.0, 0.5).expect("inv");
        assert!(inv.lower.expect("lo") < inv.estimate && inv.estimate < inv.upper.expect("hi"));
        assert!(Regression::with_intercept(&[1.0, 1.0, 1.0], &y).is_err());
        assert!(Regression::through_origin(&x, &y[..2]).is_err());
    }

    #[test]
    fn message_rate_on_the_papers_table_2() {
        // Table 2: mean test time (ms) and mean sends of 16 applications.
        // Through the origin this gives MR = Σxy/Σx² = 9 048.31 sends/ms (the paper
        // prints 9 335.55, s_e = 16 448 897, s_b = 350.84, which these rounded
        // table values do not reproduce; its interval uses t = 2.145, i.e. 14 df).
        let time = [
            32317.0, 33719.0, 29264.0, 25021.0, 13942.0, 10216.0, 2485.0, 1642.0, 1014.0, 4012.0,
            247.0, 128.0, 37.0, 36.0, 30.0, 19.0,
        ];
        let sends = [
            334_359_691.0,
            292_140_717.0,
            236_817_521.0,
            210_384_157.0,
            150_301_007.0,
            94_604_363.0,
            37_979_149.0,
            31_574_383.0,
            6_385_091.0,
            5_954_759.0,
            3_381_429.0,
            2_340_805.0,
            677_439.0,
            675_205.0,
            609_633.0,
            282_313.0,
        ];
        let mr = MessageRate::fit(&time, &sends).expect("fit");
        assert_close!(mr.sends_per_time_unit(), 9_048.308_496, 1e-3);
        assert_close!(mr.time_units_per_send(), 1.0 / 9_048.308_496, 1e-12);
        assert_close!(mr.regression.residual_se, 18_267_403.0, 1.0);
        assert_close!(mr.regression.slope_se, 289.244_940, 1e-3);
        assert_close!(mr.regression.r, 0.987_916, 1e-6);
        let ci = mr.rate_interval(0.95).expect("ci");
        assert!(ci.contains(9_048.0) && ci.lower > 8_400.0 && ci.upper < 9_700.0);
        // GitFS (§3.1): 28 096 569 sends, actually 2 928 ms.
        let t = mr.predict_time(28_096_569.0, 0.95).expect("time");
        assert_close!(t.estimate, 28_096_569.0 / 9_048.308_496, 1e-3);
        let (lo, hi) = (t.lower.expect("lo"), t.upper.expect("hi"));
        assert!(lo < t.estimate && t.estimate < hi);
        let s = mr.predict_sends(2_928.0, 0.95).expect("sends");
        assert!(s.contains(28_096_569.0));
        // With an intercept (Appendix A formulas): b = 8 994.98, a = 1 380 005.
        let ols = Regression::with_intercept(&time, &sends).expect("ols");
        assert_close!(ols.slope, 8_994.982_015, 1e-3);
        assert_close!(ols.intercept, 1_380_004.935, 1e-2);
        assert_close!(ols.residual_se, 18_872_394.9, 1.0);
        assert_close!(ols.slope_se, 377.155_311, 1e-3);
    }

    #[test]
    fn instability_of_the_papers_table_1() {
        // §4.4, Table 1: ses = 0 0 0 0.316 0.516 0.707 1.197 1.955 1.989;
        // ψ9 = 0.316/ln 5 + 0.516/ln 6 + 0.707/ln 7 + 1.197/ln 8 + 1.955/ln 9
        //      + 1.989/ln 10
        //    = 0.19634 + 0.28798 + 0.36333 + 0.57564 + 0.88976 + 0.86381 = 3.17686.
        let ses = [0.0, 0.0, 0.0, 0.316, 0.516, 0.707, 1.197, 1.955, 1.989];
        assert_close!(weighted_instability(&ses), 3.177, 5e-4);
        // w(1) = 1/ln 2 = log2(e) = 1.442695
        assert_close!(dcg_weight(1), std::f64::consts::LOG2_E, 1e-15);
    }

    #[test]
    fn instability_by_hand() {
        // R1 = b a c, R2 = a b c, R3 = a c b.
        // b: ranks 1 2 3, mean 2,   s = 1
        // a: ranks 2 1 1, mean 4/3, s = sqrt((1/9+1/9+4/9)/2) = sqrt(1/3) = 0.5773503
        // c: ranks 3 3 2, mean 8/3, s = 0.5773503
        // FirstRanking (b, a, c): 1/ln 2 + 0.57735/ln 3 + 0.57735/ln 4
        //   = 1.4426950 + 0.5255266 + 0.4164705 = 2.3846921
        // MeanRank (a, b, c):     0.57735/ln 2 + 1/ln 3 + 0.57735/ln 4
        //   = 0.8329398 + 0.9102392 + 0.4164705 = 2.1596498
        let rankings = vec![
            vec!["b", "a", "c"],
            vec!["a", "b", "c"],
            vec!["a", "c", "b"],
        ];
        let f = ranking_instability(&rankings, 3, ReferenceOrder::FirstRanking).expect("psi");
        assert_close!(f.psi, 2.384_692_089, 1e-9);
        let names: Vec<&str> = f.methods.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["b", "a", "c"]);
        assert_eq!(f.methods[0].ranks, vec![1, 2, 3]);
        let m = ranking_instability(&rankings, 3, ReferenceOrder::MeanRank).expect("psi");
        assert_close!(m.psi, 2.159_649_782, 1e-9);
        assert_close!(m.methods[0].mean, 4.0 / 3.0, 1e-12);
        // Only the first two positions: 0.8329398 + 0.9102392 = 1.7431790.
        let m2 = ranking_instability(&rankings, 2, ReferenceOrder::MeanRank).expect("psi");
        assert_close!(m2.psi, 1.743_179_1, 1e-6);
        // Identical rankings are perfectly stable.
        let same = vec![vec!["x", "y", "z"]; 10];
        let s = ranking_instability(&same, 10, ReferenceOrder::MeanRank).expect("psi");
        assert_eq!(s.psi, 0.0);
        assert_eq!(s.methods.len(), 3);
        // A method missing from a ranking of length 2 gets rank 3:
        // b: 2, 3 → s = 0.7071068; c: 3, 2 → s = 0.7071068; a: 1, 1 → 0.
        // MeanRank order a, b, c (b before c by name): 0.7071/ln 3 + 0.7071/ln 4.
        let partial = vec![vec!["a", "b"], vec!["a", "c"]];
        let p = ranking_instability(&partial, 3, ReferenceOrder::MeanRank).expect("psi");
        let expected = 0.5f64.sqrt() * (dcg_weight(2) + dcg_weight(3));
        assert_close!(p.psi, expected, 1e-12);
        assert_eq!(p.methods[2].ranks, vec![3, 2]);
        assert!(ranking_instability(&partial[..1], 3, ReferenceOrder::MeanRank).is_err());
    }

    #[test]
    fn random_rankings_reference() {
        // Bound for N = 91 methods, n = 10: sqrt((91² − 1)/12) · Σ_{i≤10} 1/ln(i+1)
        //   = 26.2679 · 6.5549705 = 172.185 (the paper's ψ10(R) = 173).
        assert_close!(random_instability_bound(10, 91), 172.184_990, 1e-4);
        let a = random_ranking_instability(10, 10, 91, 200, 42, ReferenceOrder::FirstRanking)
            .expect("mc");
        let b = random_ranking_instability(10, 10, 91, 200, 42, ReferenceOrder::FirstRanking)
            .expect("mc");
        assert_eq!(a, b, "deterministic for a fixed seed");
        // The first ranking puts the chosen methods at ranks 1..10 while the others
        // scatter them uniformly, which adds spread: a little above the bound.
        let bound = random_instability_bound(10, 91);
        assert!(a > bound && a < 1.2 * bound, "{a}");
        // Choosing the methods with the best mean ranks favours the less
        // scattered ones: below the bound.
        let m =
            random_ranking_instability(10, 10, 91, 200, 42, ReferenceOrder::MeanRank).expect("mc");
        assert!(m > 0.5 * bound && m < bound, "{m} vs {bound}");
        // Many rankings of 2 methods: ranks are 1 or 2 with probability 1/2, σ = 1/2;
        // the bound is 0.5·(1/ln 2 + 1/ln 3) = 1.1764671.
        assert_close!(random_instability_bound(2, 2), 1.176_467_1, 1e-6);
    }
}
