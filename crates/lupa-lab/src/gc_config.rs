//! One set of GC parameters ([`GcConfig`]): what `lupa gc-bench` compares,
//! what `lupa gc-tune` proposes and searches, and how either becomes a heap
//! configuration or `lupa run` flags. The paper's configurations are here
//! too ([`paper_configs`]: the Illimani paper's table 2), and the lists of
//! them `lupa gc-bench --configs` takes ([`parse_configs`]).

use lupa_heap::units::{parse_ratio, parse_size};
use lupa_heap::{GcParam, GcSettings};
use lupa_vm::HeapConfig;

pub use lupa_heap::units::size_flag;

/// One megabyte.
pub const MB: usize = 1 << 20;

/// The parameters the experiments vary, in the order of their columns:
/// Pharo's four and the tenuring threshold.
pub const TUNED: [GcParam; 5] = [
    GcParam::EdenSize,
    GcParam::GrowthHeadroom,
    GcParam::ShrinkThreshold,
    GcParam::GcRatio,
    GcParam::TenuringThreshold,
];

/// One set of GC parameters, named: values for some of lupa-heap's
/// parameters ([`GcSettings`]); the others keep the VM's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct GcConfig {
    /// Display name (`default`, `c1`, `proposal`, `32MB/64MB/128MB/100%`...).
    pub name: String,
    /// The values it sets.
    pub settings: GcSettings,
}

impl GcConfig {
    /// `name` with eden, growth headroom and shrink threshold in MB, and a GC ratio.
    fn mb(name: &str, eden_mb: usize, headroom_mb: usize, shrink_mb: usize, ratio: f64) -> Self {
        let mb = |n: usize| (n * MB) as f64;
        GcConfig {
            name: name.to_string(),
            settings: GcSettings::default()
                .with(GcParam::EdenSize, mb(eden_mb))
                .with(GcParam::GrowthHeadroom, mb(headroom_mb))
                .with(GcParam::ShrinkThreshold, mb(shrink_mb))
                .with(GcParam::GcRatio, ratio),
        }
    }

    /// The VM's defaults (Pharo's), named `default`: Pharo's four parameters
    /// set to their defaults, the tenuring threshold left to the VM.
    pub fn defaults() -> Self {
        let mut settings = GcSettings::default();
        for p in &TUNED[..4] {
            settings.set(*p, p.default());
        }
        GcConfig {
            name: "default".into(),
            settings,
        }
    }

    /// The same parameters with their sizes (eden, growth headroom, shrink
    /// threshold) divided by `factor` and rounded to whole bytes; the GC
    /// ratio (a proportion) and the tenuring threshold (a count) are kept.
    /// Running the paper's configurations on data `factor` times smaller with
    /// their sizes divided by `factor` keeps the paper's proportions of data
    /// to eden, headroom and shrink threshold (`lupa gc-bench --param-scale`).
    pub fn scaled_down(mut self, factor: f64) -> Self {
        if factor.is_finite() && factor > 1.0 {
            for p in [
                GcParam::EdenSize,
                GcParam::GrowthHeadroom,
                GcParam::ShrinkThreshold,
            ] {
                let v = (self.get(p) / factor).round().max(1.0);
                self.set(p, v);
            }
        }
        self
    }

    /// The same parameters under another name.
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// The value of `p` in effect: the one set, else the VM's default.
    pub fn get(&self, p: GcParam) -> f64 {
        self.settings.value(p)
    }

    /// [`GcConfig::get`] of a size, in bytes.
    pub fn bytes(&self, p: GcParam) -> usize {
        self.get(p) as usize
    }

    /// Set `p` to `value`.
    pub fn set(&mut self, p: GcParam, value: f64) {
        self.settings.set(p, value);
    }

    /// The heap configuration of a run: `base` (seed, bounds...) with these parameters.
    pub fn heap(&self, base: &HeapConfig) -> HeapConfig {
        let mut h = base.clone();
        self.settings.apply(&mut h);
        h
    }

    /// Do both set the same [`TUNED`] parameters in effect (names aside)?
    pub fn same_parameters(&self, other: &GcConfig) -> bool {
        TUNED.iter().all(|&p| self.get(p) == other.get(p))
    }

    /// `eden 64MB, headroom 64MB, shrink 128MB, ratio 2.5, tenuring 3`: the
    /// [`TUNED`] parameters in effect, by their labels.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = TUNED
            .iter()
            .map(|&p| format!("{} {}", p.info().label, p.format(self.get(p))))
            .collect();
        parts.join(", ")
    }

    /// The `lupa run` flags that select these parameters, e.g. `--eden-size 64MB
    /// --growth-headroom 64MB --shrink-threshold 128MB --gc-ratio 2.5`: the
    /// values set, in the table's order ([`GcSettings::flags`]: exact, they
    /// parse back to the same configuration).
    pub fn flags(&self) -> Vec<String> {
        self.settings.flags()
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
    let size = |s: &str| config_size(s).map(|b| b as f64);
    Some(GcConfig {
        name: spec.to_string(),
        settings: GcSettings::default()
            .with(GcParam::EdenSize, size(eden)?)
            .with(GcParam::GrowthHeadroom, size(headroom)?)
            .with(GcParam::ShrinkThreshold, size(shrink)?)
            .with(GcParam::GcRatio, parse_ratio(ratio).ok()?),
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
    fn scaling_down_divides_the_sizes_only() {
        let c5 = paper_configs()[5].clone().scaled_down(100.0);
        assert_eq!(c5.name, "c5");
        assert_eq!(c5.bytes(GcParam::EdenSize), 3_145_728);
        assert_eq!(c5.bytes(GcParam::GrowthHeadroom), 5_368_709);
        assert_eq!(c5.bytes(GcParam::ShrinkThreshold), 5_368_709);
        assert_eq!(c5.get(GcParam::GcRatio), 10.0);
        let d = GcConfig::defaults().scaled_down(100.0);
        assert_eq!(d.bytes(GcParam::EdenSize), 157_286);
        // The flags still parse back to the same values.
        let h = d.heap(&HeapConfig::default());
        assert_eq!(h.eden_size, 157_286);
        assert_eq!(h.growth_headroom, 167_772);
        assert_eq!(GcConfig::defaults().scaled_down(1.0), GcConfig::defaults());
    }

    #[test]
    fn flags_are_exact() {
        let mut c = GcConfig::mb("x", 64, 3, 128, 2.5);
        c.set(GcParam::TenuringThreshold, 2.0);
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
        assert_eq!(h.eden_size, 64 * MB);
        assert_eq!(h.gc_ratio, 2.5);
        assert_eq!(h.tenuring_threshold, 3);
        assert!(paper_configs()[0].same_parameters(&GcConfig::defaults().named("d")));
        assert_eq!(
            paper_configs()[1].describe(),
            "eden 64MB, headroom 64MB, shrink 128MB, ratio 2.5, tenuring 3"
        );
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
        assert_eq!(l[2].bytes(GcParam::EdenSize), 32 * MB);
        assert_eq!(l[2].bytes(GcParam::GrowthHeadroom), 64 * MB);
        assert_eq!(l[2].bytes(GcParam::ShrinkThreshold), 128 * MB);
        assert_eq!(l[2].get(GcParam::GcRatio), 1.0);
        assert_eq!(l[0].bytes(GcParam::EdenSize), 15 * MB);
        assert_eq!(l[0].get(GcParam::GcRatio), 0.33);
        assert!(parse_configs("c9").is_err());
        assert!(parse_configs("1MB/2MB/3MB").is_err());
        assert!(parse_configs("1MB/2MB/3MB/x").is_err());
        assert!(parse_configs("0MB/2MB/3MB/1").is_err());
        assert!(parse_configs("8GB/2MB/3MB/1").is_err());
        assert!(parse_configs(",").is_err());
    }
}
