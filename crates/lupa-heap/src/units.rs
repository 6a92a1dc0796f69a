//! How GC parameter values are written and read ([`Unit`]): sizes (`512MB`,
//! `2GB`, `64KB`, bytes), ratios (`0.33`, `33%`) and counts, on the command
//! line and in reports.
//!
//! Contract: [`Unit::format`] is exact, so that [`Unit::parse`] reads back
//! the same value (flags passed to worker processes mean what they say);
//! [`size_label`] is for people and rounds.

const KB: usize = 1 << 10;
const MB: usize = 1 << 20;
const GB: usize = 1 << 30;

/// What a GC parameter's values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes, written `512MB`, `2GB`, `64KB` or a number of bytes; positive.
    Bytes,
    /// A ratio, written `0.33` or as a percentage, `33%`; more than 0, at
    /// most 1000.
    Ratio,
    /// A whole number from `min` to `max`.
    Count {
        /// The least value.
        min: u32,
        /// The largest value.
        max: u32,
    },
}

impl Unit {
    /// The placeholder of a value in help texts (`SIZE`, `RATIO`, `N`).
    pub fn value_name(self) -> &'static str {
        match self {
            Unit::Bytes => "SIZE",
            Unit::Ratio => "RATIO",
            Unit::Count { .. } => "N",
        }
    }

    /// Read a value written on the command line; the error says why not.
    pub fn parse(self, text: &str) -> Result<f64, String> {
        match self {
            Unit::Bytes => parse_size(text).map(|b| b as f64),
            Unit::Ratio => parse_ratio(text),
            Unit::Count { min, max } => {
                let n: i64 = text
                    .parse()
                    .map_err(|e: std::num::ParseIntError| e.to_string())?;
                if n < i64::from(min) || n > i64::from(max) {
                    return Err(format!("{n} is not in {min}..={max}"));
                }
                Ok(n as f64)
            }
        }
    }

    /// A value as a flag takes it: sizes as [`size_flag`], ratios in full,
    /// counts as integers; [`Unit::parse`] reads it back exactly.
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Bytes => size_flag(value as usize),
            Unit::Ratio => format!("{value}"),
            Unit::Count { .. } => format!("{}", value as i64),
        }
    }
}

/// `512MB`, `2GB`, `64KB`, `1048576` (bytes); must be positive.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mul) = if let Some(n) = t.strip_suffix("GB").or_else(|| t.strip_suffix('G')) {
        (n, GB)
    } else if let Some(n) = t.strip_suffix("MB").or_else(|| t.strip_suffix('M')) {
        (n, MB)
    } else if let Some(n) = t.strip_suffix("KB").or_else(|| t.strip_suffix('K')) {
        (n, KB)
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

/// A size as a flag value: `64MB` for whole megabytes, else bytes (exact).
pub fn size_flag(bytes: usize) -> String {
    if bytes > 0 && bytes.is_multiple_of(MB) {
        format!("{}MB", bytes / MB)
    } else {
        bytes.to_string()
    }
}

/// A size for people: `2GB`, `15MB`, `0.50MB`.
pub fn size_label(bytes: usize) -> String {
    if bytes >= GB && bytes.is_multiple_of(GB) {
        format!("{}GB", bytes / GB)
    } else if bytes.is_multiple_of(MB) {
        format!("{}MB", bytes / MB)
    } else {
        format!("{:.2}MB", bytes as f64 / MB as f64)
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
        assert_eq!(size_flag(64 * MB), "64MB");
        assert_eq!(size_flag(1536 * 1024), "1572864");
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
    fn counts_say_their_range() {
        let u = Unit::Count { min: 1, max: 15 };
        assert_eq!(u.parse("15"), Ok(15.0));
        assert_eq!(u.parse("20"), Err("20 is not in 1..=15".to_string()));
        assert_eq!(u.parse("-1"), Err("-1 is not in 1..=15".to_string()));
        assert_eq!(
            u.parse("x"),
            Err("invalid digit found in string".to_string())
        );
    }

    #[test]
    fn formats_read_back_exactly() {
        for (u, v) in [
            (Unit::Bytes, 64.0 * MB as f64),
            (Unit::Bytes, 1_572_864.0),
            (Unit::Ratio, 0.33),
            (Unit::Ratio, 2.5),
            (Unit::Count { min: 1, max: 15 }, 7.0),
        ] {
            assert_eq!(u.parse(&u.format(v)), Ok(v), "{u:?} {v}");
        }
    }
}
