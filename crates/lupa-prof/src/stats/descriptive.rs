//! Descriptive statistics: mean, sample standard deviation, summaries,
//! coefficients of variation (the paper's §3.3) and Pearson's correlation.

use super::*;
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
