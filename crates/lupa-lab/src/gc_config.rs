//! One set of GC parameters ([`GcConfig`]): what `lupa gc-bench` compares,
//! what `lupa gc-tune` proposes and searches, and how either becomes a heap
//! configuration or `lupa run` flags. The paper's configurations are here
//! too ([`paper_configs`]: the Illimani paper's table 2), and the lists of
//! them `lupa gc-bench --configs` takes ([`parse_configs`]).

use crate::cells::{parse_ratio, parse_size};
use lupa_vm::HeapConfig;

/// One megabyte.
pub const MB: usize = 1 << 20;

/// One set of GC parameters (Pharo's four, and the tenuring threshold).
#[derive(Debug, Clone, PartialEq)]
pub struct GcConfig {
    /// Display name (`default`, `c1`, `proposal`, `32MB/64MB/128MB/100%`...).
    pub name: String,
    /// Eden size (bytes).
    pub eden: usize,
    /// Growth headroom (bytes).
    pub headroom: usize,
    /// Shrink threshold (bytes).
    pub shrink: usize,
    /// Full-GC ratio (0.33 = 33%).
    pub ratio: f64,
    /// Tenuring threshold (scavenges survived before tenuring, 1..=15); `None`: the VM's default.
    pub tenuring: Option<u32>,
}

impl GcConfig {
    fn mb(name: &str, eden_mb: usize, headroom_mb: usize, shrink_mb: usize, ratio: f64) -> Self {
        GcConfig {
            name: name.to_string(),
            eden: eden_mb * MB,
            headroom: headroom_mb * MB,
            shrink: shrink_mb * MB,
            ratio,
            tenuring: None,
        }
    }

    /// The VM's defaults (Pharo's), named `default`.
    pub fn defaults() -> Self {
        let d = HeapConfig::default();
        GcConfig {
            name: "default".into(),
            eden: d.initial_bytes,
            headroom: d.growth_headroom,
            shrink: d.shrink_threshold,
            ratio: d.full_gc_ratio,
            tenuring: None,
        }
    }

    /// The same parameters under another name.
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// The heap configuration of a run: `base` (seed, bounds...) with these parameters.
    pub fn heap(&self, base: &HeapConfig) -> HeapConfig {
        let mut h = HeapConfig {
            initial_bytes: self.eden,
            growth_headroom: self.headroom,
            shrink_threshold: self.shrink,
            full_gc_ratio: self.ratio,
            ..base.clone()
        };
        if let Some(t) = self.tenuring {
            h.tenuring_threshold = t;
        }
        h
    }

    /// The tenuring threshold in effect (the VM's default when not set).
    pub fn tenuring_threshold(&self) -> u32 {
        self.tenuring
            .unwrap_or(HeapConfig::default().tenuring_threshold)
    }

    /// Do both name the same parameters (names aside)?
    pub fn same_parameters(&self, other: &GcConfig) -> bool {
        self.eden == other.eden
            && self.headroom == other.headroom
            && self.shrink == other.shrink
            && self.ratio == other.ratio
            && self.tenuring_threshold() == other.tenuring_threshold()
    }

    /// `eden 64MB, headroom 64MB, shrink 128MB, ratio 2.5, tenuring 3`.
    pub fn describe(&self) -> String {
        format!(
            "eden {}, headroom {}, shrink {}, ratio {}, tenuring {}",
            size_flag(self.eden),
            size_flag(self.headroom),
            size_flag(self.shrink),
            self.ratio,
            self.tenuring_threshold()
        )
    }

    /// The `lupa run` options that select these parameters, e.g. `--eden-size 64MB
    /// --growth-headroom 64MB --shrink-threshold 128MB --gc-ratio 2.5`; the tenuring
    /// threshold only when it is set. Sizes are exact (whole megabytes as `NMB`,
    /// other sizes in bytes), so the flags parse back to the same configuration.
    pub fn flags(&self) -> Vec<String> {
        let mut f = vec![
            "--eden-size".to_string(),
            size_flag(self.eden),
            "--growth-headroom".to_string(),
            size_flag(self.headroom),
            "--shrink-threshold".to_string(),
            size_flag(self.shrink),
            "--gc-ratio".to_string(),
            format!("{}", self.ratio),
        ];
        if let Some(t) = self.tenuring {
            f.push("--tenuring-threshold".to_string());
            f.push(t.to_string());
        }
        f
    }
}

/// A size as a `lupa run` flag value: `64MB` for whole megabytes, else bytes.
pub fn size_flag(bytes: usize) -> String {
    if bytes > 0 && bytes.is_multiple_of(MB) {
        format!("{}MB", bytes / MB)
    } else {
        bytes.to_string()
    }
}

/// The configurations of the Illimani paper's table 2, Pharo's defaults first.
pub fn paper_configs() -> Vec<GcConfig> {
    vec![
        GcConfig::defaults(),
        GcConfig::mb("c1", 64, 64, 128, 2.5),
        GcConfig::mb("c2", 150, 128, 128, 2.5),
        GcConfig::mb("c3", 300, 128, 128, 5.0),
        GcConfig::mb("c4", 300, 256, 256, 10.0),
        GcConfig::mb("c5", 300, 512, 512, 10.0),
    ]
}

/// A size in a configuration: at most 1 GB (eden is at most a quarter of the 4 GB heap bound).
fn config_size(s: &str) -> Option<usize> {
    parse_size(s).ok().filter(|&b| b <= 1 << 30)
}

/// `EDEN/HEADROOM/SHRINK/RATIO`, e.g. `32MB/64MB/128MB/100%`, named as written.
fn parse_custom(spec: &str) -> Option<GcConfig> {
    let parts: Vec<&str> = spec.split('/').collect();
    let [eden, headroom, shrink, ratio] = parts.as_slice() else {
        return None;
    };
    Some(GcConfig {
        name: spec.to_string(),
        eden: config_size(eden)?,
        headroom: config_size(headroom)?,
        shrink: config_size(shrink)?,
        ratio: parse_ratio(ratio).ok()?,
        tenuring: None,
    })
}

/// A comma-separated list of configurations: `default` (Pharo's defaults),
/// `c1`..`c5` (the Illimani paper's table 2), `all` (those six), or
/// `EDEN/HEADROOM/SHRINK/RATIO`; each once, in the order given.
pub fn parse_configs(s: &str) -> Result<Vec<GcConfig>, String> {
    let known = paper_configs();
    let mut out: Vec<GcConfig> = Vec::new();
    for item in s.split(',').map(str::trim) {
        if item.is_empty() {
            continue;
        }
        let found: Vec<GcConfig> = if item.eq_ignore_ascii_case("all") {
            known.clone()
        } else if let Some(c) = known.iter().find(|c| c.name.eq_ignore_ascii_case(item)) {
            vec![c.clone()]
        } else if item.contains('/') {
            match parse_custom(item) {
                Some(c) => vec![c],
                None => {
                    return Err(format!(
                        "bad configuration '{item}': expected EDEN/HEADROOM/SHRINK/RATIO with \
sizes up to 1GB, e.g. 32MB/64MB/128MB/100%"
                    ));
                }
            }
        } else {
            return Err(format!(
                "unknown configuration '{item}' (use default, c1, c2, c3, c4, c5, all, or \
EDEN/HEADROOM/SHRINK/RATIO such as 32MB/64MB/128MB/100%)"
            ));
        };
        for c in found {
            if !out.iter().any(|o| o.name == c.name) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err("no configuration given".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_exact() {
        let c = GcConfig {
            tenuring: Some(2),
            ..GcConfig::mb("x", 64, 3, 128, 2.5)
        };
        assert_eq!(
            c.flags().join(" "),
            "--eden-size 64MB --growth-headroom 3MB --shrink-threshold 128MB --gc-ratio 2.5 \
--tenuring-threshold 2"
        );
        assert_eq!(size_flag(1536 * 1024), "1572864");
        assert_eq!(GcConfig::defaults().flags()[7], "0.33");
    }

    #[test]
    fn heap_keeps_the_base() {
        let base = HeapConfig {
            hash_seed: 7,
            ..HeapConfig::default()
        };
        let h = paper_configs()[1].heap(&base);
        assert_eq!(h.hash_seed, 7);
        assert_eq!(h.initial_bytes, 64 * MB);
        assert_eq!(h.full_gc_ratio, 2.5);
        assert_eq!(h.tenuring_threshold, 3);
        assert!(paper_configs()[0].same_parameters(&GcConfig::defaults().named("d")));
    }

    #[test]
    fn configurations_parse() {
        let l = parse_configs("default, C1,32MB/64MB/128MB/100%,all").expect("a valid list");
        let names: Vec<&str> = l.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "default",
                "c1",
                "32MB/64MB/128MB/100%",
                "c2",
                "c3",
                "c4",
                "c5"
            ]
        );
        assert_eq!(l[2].eden, 32 * MB);
        assert_eq!(l[2].headroom, 64 * MB);
        assert_eq!(l[2].shrink, 128 * MB);
        assert_eq!(l[2].ratio, 1.0);
        assert_eq!(l[0].eden, 15 * MB);
        assert_eq!(l[0].ratio, 0.33);
        assert!(parse_configs("c9").is_err());
        assert!(parse_configs("1MB/2MB/3MB").is_err());
        assert!(parse_configs("1MB/2MB/3MB/x").is_err());
        assert!(parse_configs("0MB/2MB/3MB/1").is_err());
        assert!(parse_configs("8GB/2MB/3MB/1").is_err());
        assert!(parse_configs(",").is_err());
    }
}
