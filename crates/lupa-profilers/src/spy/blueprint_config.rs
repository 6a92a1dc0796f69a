//! [`BlueprintConfig`]: what the blueprint profiler
//! ([`crate::ProfileMode::Blueprint`]) profiles, apart from its driver
//! ([`super::blueprint`]): the mode table names it, and the driver runs
//! Compteur and the sampler through that table, so the configuration sits
//! below both. Public as `spy::blueprint::BlueprintConfig`.

/// What to profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlueprintConfig {
    /// The packages whose methods are profiled.
    pub packages: Vec<String>,
    /// Samples per second of the timed run (1 to 20000).
    pub rate_hz: u32,
}

impl BlueprintConfig {
    /// No package yet, 5 kHz.
    pub const DEFAULT: BlueprintConfig = BlueprintConfig {
        packages: Vec::new(),
        rate_hz: 5000,
    };
}

impl Default for BlueprintConfig {
    fn default() -> BlueprintConfig {
        BlueprintConfig::DEFAULT
    }
}
