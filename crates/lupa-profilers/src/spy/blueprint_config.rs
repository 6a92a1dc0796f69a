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
    /// Deterministic timed run: a sample every this many sends, no sampler
    /// thread (the same samples on every run; the milliseconds still wall
    /// time, spread over the samples).
    pub every: Option<u64>,
}

impl BlueprintConfig {
    /// No package yet, 5 kHz.
    pub const DEFAULT: BlueprintConfig = BlueprintConfig {
        packages: Vec::new(),
        rate_hz: 5000,
        every: None,
    };
}

impl Default for BlueprintConfig {
    fn default() -> BlueprintConfig {
        BlueprintConfig::DEFAULT
    }
}
