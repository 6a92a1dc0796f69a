//! How the experiments write their numbers in tables: mean ± standard
//! deviation, counts, megabytes, percentages, GC parameter values. (Sizes and
//! ratios as the command line writes them are lupa-heap's `units`.)

use lupa_heap::units::size_label;
use lupa_heap::{GcParam, Unit};
use lupa_prof::stats::Summary;

const MB: usize = 1 << 20;

/// Mean and sample standard deviation; the sd is 0 for a single value (or none).
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    match Summary::of(xs) {
        Ok(s) => (s.mean, if s.sd.is_finite() { s.sd } else { 0.0 }),
        Err(_) => (xs.iter().sum::<f64>() / xs.len().max(1) as f64, 0.0),
    }
}

/// The mean of `xs` (0 for none).
pub fn mean(xs: &[f64]) -> f64 {
    mean_sd(xs).0
}

/// `1.234 ± 0.012` (the mean alone for one run).
pub fn pm(xs: &[f64], decimals: usize) -> String {
    let (m, sd) = mean_sd(xs);
    if xs.len() < 2 {
        format!("{m:.decimals$}")
    } else {
        format!("{m:.decimals$} ± {sd:.decimals$}")
    }
}

/// A count: an integer when every run had the same, else mean ± sd.
pub fn count(xs: &[u64]) -> String {
    if xs.windows(2).all(|w| w[0] == w[1]) {
        xs.first().map(u64::to_string).unwrap_or_default()
    } else {
        let f: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
        pm(&f, 1)
    }
}

/// Bytes in MB.
pub fn mb(bytes: f64) -> f64 {
    bytes / MB as f64
}

/// A ratio as a percentage: `33%`, `250%`, `12.5%`.
pub fn ratio_label(r: f64) -> String {
    let p = r * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// A GC parameter's value for people: sizes as [`size_label`] (`15MB`,
/// `0.50MB`), ratios as [`ratio_label`] (`33%`), counts as integers.
pub fn value_label(p: GcParam, v: f64) -> String {
    match p.unit() {
        Unit::Bytes => size_label(v as usize),
        Unit::Ratio => ratio_label(v),
        Unit::Count { .. } => format!("{}", v as i64),
    }
}

/// Seconds as a user wrote them: `0.5`, `2.5`, `60` (a tenth below 10 s).
pub fn secs(s: f64) -> String {
    if s < 10.0 {
        let t = format!("{s:.1}");
        t.strip_suffix(".0").map_or(t.clone(), str::to_string)
    } else {
        format!("{s:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        assert_eq!(mean_sd(&[2.0]), (2.0, 0.0));
        let (m, sd) = mean_sd(&[1.0, 3.0]);
        assert_eq!(m, 2.0);
        assert!((sd - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(ratio_label(0.33), "33%");
        assert_eq!(ratio_label(2.5), "250%");
        assert_eq!(pm(&[1.0], 3), "1.000");
        assert_eq!(pm(&[1.0, 3.0], 1), "2.0 ± 1.4");
        assert_eq!(count(&[3, 3]), "3");
        assert_eq!(count(&[2, 4]), "3.0 ± 1.4");
        assert_eq!(value_label(GcParam::EdenSize, (15 << 20) as f64), "15MB");
        assert_eq!(value_label(GcParam::GcRatio, 2.5), "250%");
    }
}
