//! [`ProfileOutput`]: what any profiler answers when it finishes, one variant
//! per kind of output, each a model of `lupa_prof` that writes itself as a
//! report ([`lupa_prof::Report`]); and [`ProfileOutput::merge`], which sums
//! the outputs of several runs of one profiler.
//!
//! Contract: an output converts into its model with `TryFrom` (a
//! [`Profile`] from Compteur's, the timing profiler's or the sampler's
//! output), and a conversion to another model is a
//! [`ProfilerError::Output`]; [`ProfileOutput::merge`] merges calling-context
//! profiles ([`Profile::merge`]: the sampler's measures, which describe one
//! run, are dropped) and refuses every other pair.

use lupa_prof::Profile;
use lupa_prof::blueprint::Blueprint;
use lupa_prof::coverage::Coverage;
use lupa_prof::lifetimes::Lifetimes;
use lupa_prof::types::Types;

use crate::error::ProfilerError;
use crate::sampler::Sampled;

/// What a profiler answers.
#[derive(Debug, Clone)]
pub enum ProfileOutput {
    /// A calling-context profile (Compteur, the timing profiler, or merged
    /// profiles).
    Profile(Profile),
    /// The sampler's profile and its measures.
    Sampled(Box<Sampled>),
    /// Object lifetimes.
    Lifetimes(Box<Lifetimes>),
    /// Test coverage.
    Coverage(Box<Coverage>),
    /// Type feedback.
    Types(Types),
    /// A time profiling blueprint.
    Blueprint(Box<Blueprint>),
}

impl ProfileOutput {
    /// What kind of output this is: `profile`, `sampled profile`,
    /// `lifetimes`, `coverage`, `types`, `blueprint`.
    pub fn kind(&self) -> &'static str {
        match self {
            ProfileOutput::Profile(_) => "profile",
            ProfileOutput::Sampled(_) => "sampled profile",
            ProfileOutput::Lifetimes(_) => "lifetimes",
            ProfileOutput::Coverage(_) => "coverage",
            ProfileOutput::Types(_) => "types",
            ProfileOutput::Blueprint(_) => "blueprint",
        }
    }

    /// The calling-context profile, when this output has one.
    pub fn profile(&self) -> Option<&Profile> {
        match self {
            ProfileOutput::Profile(p) => Some(p),
            ProfileOutput::Sampled(s) => Some(&s.profile),
            _ => None,
        }
    }

    /// Name the command that produced the output in the models that record
    /// it (lifetimes, coverage, types, blueprint; a profile's command goes in
    /// its report options).
    pub fn set_command(&mut self, command: &str) {
        let slot = match self {
            ProfileOutput::Profile(_) | ProfileOutput::Sampled(_) => return,
            ProfileOutput::Lifetimes(l) => &mut l.command,
            ProfileOutput::Coverage(c) => &mut c.command,
            ProfileOutput::Types(t) => &mut t.command,
            ProfileOutput::Blueprint(b) => &mut b.command,
        };
        *slot = command.to_string();
    }

    /// This output with `other`'s added (see the module documentation).
    pub fn merge(self, other: ProfileOutput) -> Result<ProfileOutput, ProfilerError> {
        let (left, right) = (self.kind(), other.kind());
        match (self.into_profile_for_merge(), other.profile()) {
            (Some(mut p), Some(q)) => {
                p.merge(q)
                    .map_err(|e| ProfilerError::Output(e.to_string()))?;
                Ok(ProfileOutput::Profile(p))
            }
            _ => Err(ProfilerError::Output(format!(
                "cannot merge a {left} output with a {right} output (only calling-context profiles merge)"
            ))),
        }
    }

    /// Every output merged into the first ([`ProfileOutput::merge`]); `None`
    /// when there is none.
    pub fn merge_all(
        outputs: impl IntoIterator<Item = ProfileOutput>,
    ) -> Result<Option<ProfileOutput>, ProfilerError> {
        let mut merged: Option<ProfileOutput> = None;
        for o in outputs {
            merged = Some(match merged {
                None => o,
                Some(m) => m.merge(o)?,
            });
        }
        Ok(merged)
    }

    fn into_profile_for_merge(self) -> Option<Profile> {
        match self {
            ProfileOutput::Profile(p) => Some(p),
            ProfileOutput::Sampled(s) => Some(s.profile),
            _ => None,
        }
    }

    /// The error of a conversion to `wanted`.
    fn not(&self, wanted: &str) -> ProfilerError {
        ProfilerError::Output(format!(
            "the profiler answered {} output, not {wanted}",
            article(self.kind())
        ))
    }
}

/// `a kind` or `an kind`.
fn article(kind: &str) -> String {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {kind}")
    } else {
        format!("a {kind}")
    }
}

impl TryFrom<ProfileOutput> for Profile {
    type Error = ProfilerError;

    fn try_from(o: ProfileOutput) -> Result<Profile, ProfilerError> {
        match o {
            ProfileOutput::Profile(p) => Ok(p),
            ProfileOutput::Sampled(s) => Ok(s.profile),
            other => Err(other.not("a profile")),
        }
    }
}

/// `TryFrom<ProfileOutput>` for a model held in one variant.
macro_rules! output_into {
    ($model:ty, $variant:ident, $wanted:literal, $unbox:expr) => {
        impl TryFrom<ProfileOutput> for $model {
            type Error = ProfilerError;

            fn try_from(o: ProfileOutput) -> Result<$model, ProfilerError> {
                match o {
                    ProfileOutput::$variant(m) => Ok($unbox(m)),
                    other => Err(other.not($wanted)),
                }
            }
        }
    };
}

output_into!(Sampled, Sampled, "a sampled profile", |m: Box<Sampled>| *m);
output_into!(Lifetimes, Lifetimes, "lifetimes", |m: Box<Lifetimes>| *m);
output_into!(Coverage, Coverage, "a coverage", |m: Box<Coverage>| *m);
output_into!(Types, Types, "types", |m: Types| m);
output_into!(Blueprint, Blueprint, "a blueprint", |m: Box<Blueprint>| *m);

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_prof::{MethodInfo, Metric, ProfileBuilder};

    fn counted(n: u64) -> ProfileOutput {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let m = b.add_method(MethodInfo::new("Main", "run"));
        b.enter(m);
        b.add_self(n);
        b.exit();
        ProfileOutput::Profile(b.finish())
    }

    #[test]
    fn profiles_merge_and_other_outputs_do_not() {
        let merged = ProfileOutput::merge_all([counted(2), counted(3)])
            .expect("profiles merge")
            .expect("one output");
        assert_eq!(merged.profile().map(Profile::grand_total), Some(5));
        let e = counted(1)
            .merge(ProfileOutput::Types(Types::default()))
            .expect_err("types do not merge");
        assert!(
            e.to_string()
                .contains("cannot merge a profile output with a types output")
        );
        assert!(ProfileOutput::merge_all([]).expect("nothing").is_none());
    }

    #[test]
    fn outputs_convert_to_their_model_only() {
        assert!(Profile::try_from(counted(1)).is_ok());
        let e = Coverage::try_from(counted(1)).expect_err("not a coverage");
        assert_eq!(
            e.to_string(),
            "the profiler answered a profile output, not a coverage"
        );
        let mut t = ProfileOutput::Types(Types::default());
        t.set_command("lupa types");
        assert_eq!(
            Types::try_from(t).map(|t| t.command).ok().as_deref(),
            Some("lupa types")
        );
    }
}
