//! [`ProfileMode`]: the one switch that names every profiler, with its
//! configuration. The command line, Rust tests and `System>>startProfiler:`
//! all choose a profiler through it, and [`ProfileMode::start`] starts any of
//! them the same way ([`crate::profiler`]).
//!
//! Contract: [`ProfileMode::name`] and `FromStr` round-trip for every mode of
//! [`ProfileMode::ALL`] (each with its default configuration); `sampling:HZ`
//! names the sampler at HZ; an unknown name is [`ProfilerError::Unknown`].

use std::fmt;
use std::str::FromStr;

use crate::compteur::CompteurConfig;
use crate::error::ProfilerError;
use crate::lifetimes::{LifetimeConfig, LifetimeMode};
use crate::sampler::SamplerConfig;
use crate::spy::blueprint_config::BlueprintConfig;
use crate::spy::coverage::CoverageConfig;
use crate::spy::types::TypesConfig;

/// Every profiler, with its configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileMode {
    /// Compteur (Bergel, ECOOP 2011): every executed message send is charged to
    /// the activation that executed it, and (unless configured otherwise)
    /// counted at its source line (the profile's per-line self costs).
    /// Deterministic for a given hash seed.
    Compteur(CompteurConfig),
    /// Exact wall-clock timing: elapsed nanoseconds measured at every enter and
    /// exit (MessageTally-like, without sampling); the time-based reference of
    /// `lupa stability`.
    Timing,
    /// The sampling profiler of the whole VM ([`crate::sampler`]); from
    /// Smalltalk (`sampling` or `sampling:HZ`) every sample weighs its CPU
    /// time, as from the command line.
    Sampling(SamplerConfig),
    /// Illimani's object lifetimes ([`crate::lifetimes`]).
    Lifetimes(LifetimeConfig),
    /// Spy's test coverage with the VM's line counts ([`crate::spy::coverage`]).
    Coverage(CoverageConfig),
    /// Spy's type feedback ([`crate::spy::types`]).
    Types(TypesConfig),
    /// Spy's time profiling blueprints ([`crate::spy::blueprint`]).
    Blueprint(BlueprintConfig),
}

impl ProfileMode {
    /// Compteur with its default configuration.
    pub const COMPTEUR: ProfileMode = ProfileMode::Compteur(CompteurConfig::DEFAULT);

    /// Every mode with its default configuration (the sampler as Smalltalk
    /// starts it), in the order of [`ProfileMode::name`]s listed by the CLI.
    pub const ALL: [ProfileMode; 7] = [
        ProfileMode::COMPTEUR,
        ProfileMode::Timing,
        ProfileMode::Sampling(SamplerConfig::SMALLTALK),
        ProfileMode::Lifetimes(LifetimeConfig::DEFAULT),
        ProfileMode::Coverage(CoverageConfig::DEFAULT),
        ProfileMode::Types(TypesConfig::DEFAULT),
        ProfileMode::Blueprint(BlueprintConfig::DEFAULT),
    ];

    /// The name used by the CLI and the Smalltalk side: `compteur`, `timing`,
    /// `sampling`, `lifetimes`, `coverage`, `types`, `blueprint`.
    pub fn name(&self) -> &'static str {
        match self {
            ProfileMode::Compteur(_) => "compteur",
            ProfileMode::Timing => "timing",
            ProfileMode::Sampling(_) => "sampling",
            ProfileMode::Lifetimes(_) => "lifetimes",
            ProfileMode::Coverage(_) => "coverage",
            ProfileMode::Types(_) => "types",
            ProfileMode::Blueprint(_) => "blueprint",
        }
    }

    /// Can a running program start this profiler on itself
    /// (`System>>startProfiler:`)? Spy's profilers and Illimani's faithful
    /// mode are Smalltalk objects a program uses directly; the error says
    /// which.
    pub fn check_startable_from_smalltalk(&self) -> Result<(), ProfilerError> {
        let why = match self {
            ProfileMode::Coverage(_) => {
                "it is Spy's TestCoverage, written in Smalltalk: use it directly (TestCoverage new runTestClasses: tests inPackagesNamed: packages)"
            }
            ProfileMode::Types(_) => {
                "it is Spy's TypeProfiler, written in Smalltalk: use it directly (TypeProfiler profile: aBlock inPackagesNamed: packages)"
            }
            ProfileMode::Blueprint(_) => {
                "it is Spy's BlueprintProfiler, written in Smalltalk: use it directly (BlueprintProfiler profile: aBlock inPackagesNamed: packages)"
            }
            ProfileMode::Lifetimes(c) if c.mode == LifetimeMode::Faithful => {
                "the faithful mode is IllLifetimeProfiler, written in Smalltalk: use it directly (IllLifetimeProfiler new beFaithful)"
            }
            _ => return Ok(()),
        };
        Err(ProfilerError::NotFromSmalltalk {
            profiler: self.name(),
            why,
        })
    }
}

impl fmt::Display for ProfileMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProfileMode {
    type Err = ProfilerError;

    fn from_str(s: &str) -> Result<ProfileMode, ProfilerError> {
        if let Some(hz) = s.strip_prefix("sampling:") {
            let config = SamplerConfig {
                rate_hz: hz
                    .parse()
                    .map_err(|_| ProfilerError::Unknown(s.to_string()))?,
                ..SamplerConfig::SMALLTALK
            };
            return Ok(ProfileMode::Sampling(config));
        }
        ProfileMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| ProfilerError::Unknown(s.to_string()))
    }
}
