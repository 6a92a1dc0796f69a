//! Least-squares regression (through the origin, as the paper, and with an
//! intercept), its intervals, and the message rate fitted from it (§3, Appendix A).

use super::*;
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
