//! The speed-up of one configuration over another, with its 95% confidence
//! interval and Welch's t-test.
//!
//! Run times are compared on a log scale: the speed-up is the ratio of the
//! geometric means, `exp(mean(ln base) - mean(ln candidate))`, and Welch's
//! t-test (unequal variances, Welch-Satterthwaite degrees of freedom) on the
//! log times gives its interval, `exp(d ± t(0.975; df) · se)`, and the
//! two-sided p-value of "no difference": [`lupa_prof::stats::welch`], the
//! test Hip's time diffs use.

use lupa_prof::stats::welch;

/// How much faster a candidate is than a baseline (`> 1`: faster).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpeedUp {
    /// Ratio of the geometric means of the times (baseline / candidate).
    pub estimate: f64,
    /// Lower bound of the 95% confidence interval (`None`: fewer than 2 runs on a side).
    pub lower: Option<f64>,
    /// Upper bound of the 95% confidence interval.
    pub upper: Option<f64>,
    /// Two-sided p-value of Welch's t-test on the log times (`None` as for the bounds).
    pub p_value: Option<f64>,
}

impl SpeedUp {
    /// Does the 95% interval exclude 1 (a significant difference)?
    pub fn significant(&self) -> bool {
        matches!((self.lower, self.upper), (Some(l), Some(u)) if l > 1.0 || u < 1.0)
    }

    /// `1.12x (95% CI 1.05x-1.20x)`, or `1.12x` alone.
    pub fn label(&self) -> String {
        match (self.lower, self.upper) {
            (Some(l), Some(u)) => format!("{:.2}x (95% CI {:.2}x-{:.2}x)", self.estimate, l, u),
            _ => format!("{:.2}x", self.estimate),
        }
    }
}

/// The speed-up of `candidate` over `base` (run times in any unit, all
/// positive). `None` when a side has no positive time.
pub fn speed_up(base: &[f64], candidate: &[f64]) -> Option<SpeedUp> {
    let logs = |xs: &[f64]| -> Option<Vec<f64>> {
        let v: Vec<f64> = xs
            .iter()
            .filter(|&&x| x > 0.0 && x.is_finite())
            .map(|x| x.ln())
            .collect();
        (!v.is_empty()).then_some(v)
    };
    let (b, c) = (logs(base)?, logs(candidate)?);
    // The difference of the mean log times, baseline minus candidate.
    let w = welch(&c, &b)?;
    let bound = |x: Option<(f64, f64)>, hi: bool| x.map(|(l, u)| if hi { u } else { l }.exp());
    Some(SpeedUp {
        estimate: w.delta.exp(),
        lower: bound(w.interval, false),
        upper: bound(w.interval, true),
        p_value: w.p_value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_speed_up_is_significant() {
        let base = [2.0, 2.1, 1.9, 2.05, 1.95];
        let fast = [1.0, 1.05, 0.95, 1.02, 0.98];
        let s = speed_up(&base, &fast).expect("a speed-up");
        assert!((s.estimate - 2.0).abs() < 0.05, "{s:?}");
        let (l, u) = (s.lower.expect("lower"), s.upper.expect("upper"));
        assert!(
            l < s.estimate && s.estimate < u && l > 1.5 && u < 2.5,
            "{s:?}"
        );
        assert!(s.significant());
        assert!(s.p_value.expect("p") < 1e-4);
        assert!(s.label().starts_with("2."), "{}", s.label());
    }

    #[test]
    fn noise_is_not_significant() {
        let s = speed_up(&[1.0, 1.2, 0.9], &[1.1, 0.95, 1.15]).expect("a speed-up");
        assert!(!s.significant(), "{s:?}");
        assert!(s.p_value.expect("p") > 0.5);
        // The interval is symmetric on the log scale.
        let (l, u) = (s.lower.expect("l"), s.upper.expect("u"));
        assert!(((s.estimate / l) - (u / s.estimate)).abs() < 1e-9);
    }

    #[test]
    fn single_runs_and_degenerate_samples() {
        let s = speed_up(&[2.0], &[1.0]).expect("an estimate");
        assert_eq!(s.estimate, 2.0);
        assert_eq!((s.lower, s.upper, s.p_value), (None, None, None));
        assert!(!s.significant());
        let s = speed_up(&[2.0, 2.0], &[1.0, 1.0]).expect("an estimate");
        assert!(s.significant());
        assert!(speed_up(&[], &[1.0]).is_none());
        assert!(speed_up(&[0.0], &[1.0]).is_none());
    }
}
