//! How the experiments read and write their numbers: sizes and ratios as the
//! command line writes them, and the cells of their tables (mean ± standard
//! deviation, counts, megabytes, percentages).

use lupa_prof::stats::Summary;

const MB: usize = 1 << 20;
const GB: usize = 1 << 30;

/// `512MB`, `2GB`, `64KB`, `1048576` (bytes); must be positive.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mul) = if let Some(n) = t.strip_suffix("GB").or_else(|| t.strip_suffix('G')) {
        (n, GB)
    } else if let Some(n) = t.strip_suffix("MB").or_else(|| t.strip_suffix('M')) {
        (n, MB)
    } else if let Some(n) = t.strip_suffix("KB").or_else(|| t.strip_suffix('K')) {
        (n, 1 << 10)
    } else if let Some(n) = t.strip_suffix('B') {
        (n, 1)
    } else {
        (t.as_str(), 1)
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("invalid size '{s}' (use e.g. 512MB, 2GB)"))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(format!("size must be positive: '{s}'"));
    }
    Ok((n * mul as f64) as usize)
}

/// A GC ratio: `0.33`, or a percentage, `33%`; more than 0, at most 1000.
pub fn parse_ratio(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let r = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("invalid ratio '{s}' (use e.g. 0.33, 33% or 2.5)"))?;
    if !r.is_finite() || r <= 0.0 || r > 1000.0 {
        return Err(format!("ratio must be between 0 and 1000: '{s}'"));
    }
    Ok(r)
}

/// `2GB`, `15MB`, `0.50MB`.
pub fn size_label(bytes: usize) -> String {
    if bytes >= GB && bytes.is_multiple_of(GB) {
        format!("{}GB", bytes / GB)
    } else if bytes.is_multiple_of(MB) {
        format!("{}MB", bytes / MB)
    } else {
        format!("{:.2}MB", bytes as f64 / MB as f64)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MB"), Ok(512 * MB));
        assert_eq!(parse_size("2g"), Ok(2 * GB));
        assert_eq!(parse_size("64KB"), Ok(64 << 10));
        assert_eq!(parse_size("1.5M"), Ok(3 * MB / 2));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1MB").is_err());
        assert_eq!(size_label(15 * MB), "15MB");
        assert_eq!(size_label(MB / 2), "0.50MB");
        assert_eq!(size_label(4 * GB), "4GB");
    }

    #[test]
    fn ratios() {
        assert_eq!(parse_ratio("0.33"), Ok(0.33));
        assert_eq!(parse_ratio("250%"), Ok(2.5));
        assert!(parse_ratio("abc").is_err());
        assert!(parse_ratio("-1").is_err());
        assert!(parse_ratio("0").is_err());
        assert!(parse_ratio("1001").is_err());
    }

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
    }
}
