//! Welch's t-test: two samples with unequal variances compared at 95%
//! (Hip's time diffs, gc-tune's speed-ups).

use super::{mean, sample_sd, student_t_cdf, student_t_quantile};
use serde::{Deserialize, Serialize};

/// Welch's t-test of two samples at 95%: the difference of the means with
/// its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// Mean of the earlier sample.
    pub mean_before: f64,
    /// Its standard deviation (0 for one value).
    pub sd_before: f64,
    /// Mean of the later sample.
    pub mean_after: f64,
    /// Its standard deviation.
    pub sd_after: f64,
    /// `mean_after - mean_before`.
    pub delta: f64,
    /// The 95% confidence interval of the delta (`None` with fewer than two
    /// values on a side: no test).
    pub interval: Option<(f64, f64)>,
    /// Two-sided p-value (`None` as for the interval).
    pub p_value: Option<f64>,
    /// Is the delta significant at 95% (the interval excludes 0)?
    pub significant: bool,
}

/// The confidence level of the test.
pub const CONFIDENCE: f64 = 0.95;

/// Welch's t-test of `before` against `after` (unequal variances,
/// Welch-Satterthwaite degrees of freedom) at [`CONFIDENCE`]. With fewer than
/// two values on a side there is no test and no change is significant; with
/// no spread on either side a change is significant when the means differ.
/// `None` for an empty sample.
pub fn welch(before: &[f64], after: &[f64]) -> Option<Welch> {
    let (ma, mb) = (mean(before)?, mean(after)?);
    let delta = mb - ma;
    let (sa, sb) = (sample_sd(before), sample_sd(after));
    let untested = Welch {
        mean_before: ma,
        sd_before: sa.unwrap_or(0.0),
        mean_after: mb,
        sd_after: sb.unwrap_or(0.0),
        delta,
        interval: None,
        p_value: None,
        significant: false,
    };
    let (Some(sa), Some(sb)) = (sa, sb) else {
        return Some(untested);
    };
    let (va, vb) = (sa * sa / before.len() as f64, sb * sb / after.len() as f64);
    let se = (va + vb).sqrt();
    if se == 0.0 || !se.is_finite() {
        return Some(Welch {
            interval: Some((delta, delta)),
            p_value: Some(if delta == 0.0 { 1.0 } else { 0.0 }),
            significant: delta != 0.0,
            ..untested
        });
    }
    let df = (va + vb).powi(2)
        / (va * va / (before.len() - 1) as f64 + vb * vb / (after.len() - 1) as f64);
    let Ok(t) = student_t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, df) else {
        return Some(untested);
    };
    let (lo, hi) = (delta - t * se, delta + t * se);
    let p = (2.0 * (1.0 - student_t_cdf((delta / se).abs(), df))).clamp(0.0, 1.0);
    Some(Welch {
        interval: Some((lo, hi)),
        p_value: Some(p),
        significant: lo > 0.0 || hi < 0.0,
        ..untested
    })
}
