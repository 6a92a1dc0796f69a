//! A sampled profile's timeline: its samples in time order and the events
//! around them, beside the aggregated [`Profile`] they were built into.
//!
//! A sampling profiler builds both from one list of samples: the profile
//! (a calling-context tree whose self values are the samples' weights) and
//! this timeline, whose every sample points at the context it was charged to
//! and keeps what the tree loses: when it was taken, what the VM was doing
//! (its state), and the message sends charged to it (those executed since the
//! previous sample). Markers are what happened between samples: collections
//! (intervals) and process switches (instants).
//!
//! Exporters that show time or several values per sample use the timeline
//! when a report has one ([`ReportOptions::timeline`]): the Firefox Profiler
//! (samples at their times, categories = states, markers), pprof and
//! callgrind (a `sends` value beside the samples), speedscope (a sampled
//! profile in time order). The others read the profile only.
//!
//! Contract ([`Timeline::check`]): samples are in time order; every sample's
//! node is a node of the profile; for every node, the weights of its samples
//! sum to its self value; every sample's state indexes [`Timeline::states`].
//! Filtering the profile ([`Profile::filtered_mapped`]) and remapping the
//! timeline with the same map ([`Timeline::remap`]) keeps the contract.
//!
//! [`ReportOptions::timeline`]: crate::report::ReportOptions::timeline
//! [`Profile::filtered_mapped`]: crate::Profile::filtered_mapped

use serde::{Deserialize, Serialize};

use crate::profile::{NodeId, Profile};

/// Samples in time order, and markers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    /// What [`TimedSample::state`] indexes: e.g. `interpreting`, `primitive`,
    /// `scavenge`, `full GC`, `process switch`.
    pub states: Vec<String>,
    /// The samples, in time order.
    pub samples: Vec<TimedSample>,
    /// Collections and process switches, in time order.
    pub markers: Vec<Marker>,
    /// Markers not recorded (a long run keeps its first ones).
    pub dropped_markers: u64,
    /// Are the weights CPU nanoseconds (a CPU-time profile)?
    pub cpu_weights: bool,
}

/// One sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedSample {
    /// Wall nanoseconds since the session started (in a deterministic
    /// profile, taken every N sends, the sends since it started).
    pub time_ns: u64,
    /// The calling context it was charged to.
    pub node: NodeId,
    /// Index into [`Timeline::states`].
    pub state: u16,
    /// Its weight in the profile (the profile's metric).
    pub weight: u64,
    /// Message sends charged to it: those executed since the previous sample.
    pub sends: u64,
}

/// What a marker marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MarkerKind {
    /// A scavenge.
    Scavenge,
    /// A full collection.
    FullGc,
    /// A process switch.
    ProcessSwitch,
}

impl MarkerKind {
    /// The marker's name: `Scavenge`, `Full GC`, `Process switch`.
    pub fn name(self) -> &'static str {
        match self {
            MarkerKind::Scavenge => "Scavenge",
            MarkerKind::FullGc => "Full GC",
            MarkerKind::ProcessSwitch => "Process switch",
        }
    }
}

/// An event between samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// What it marks.
    pub kind: MarkerKind,
    /// Wall nanoseconds since the session started.
    pub start_ns: u64,
    /// Its duration (0: an instant).
    pub duration_ns: u64,
    /// The number of the Smalltalk process it happened in (0: main; for a
    /// switch, the process that runs next).
    pub process: usize,
    /// A one-line description: bytes tenured, processes switched...
    pub detail: String,
}

/// A broken [`Timeline`] contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimelineError {
    /// Sample `index` is earlier than the one before it.
    #[error("sample {index} is out of time order")]
    OutOfOrder {
        /// The sample's index.
        index: usize,
    },
    /// Sample `index` names a node the profile does not have.
    #[error("sample {index} names node {node}, the profile has {nodes}")]
    NoSuchNode {
        /// The sample's index.
        index: usize,
        /// Its node.
        node: usize,
        /// The profile's node count.
        nodes: usize,
    },
    /// Sample `index` has a state with no name.
    #[error("sample {index} has state {state}, there are {states} states")]
    NoSuchState {
        /// The sample's index.
        index: usize,
        /// Its state.
        state: u16,
        /// How many states are named.
        states: usize,
    },
    /// A node's samples do not weigh its self value.
    #[error("node {node}: its samples weigh {samples}, its self value is {self_value}")]
    Weight {
        /// The node.
        node: usize,
        /// The sum of its samples' weights.
        samples: u64,
        /// Its self value.
        self_value: u64,
    },
}

/// Per-node sums of a timeline ([`Timeline::per_node`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeSums {
    /// Samples charged to the node.
    pub samples: u64,
    /// Sends charged to the node.
    pub sends: u64,
}

impl Timeline {
    /// Check the contract against the profile the timeline goes with.
    pub fn check(&self, profile: &Profile) -> Result<(), TimelineError> {
        let nodes = profile.nodes.len();
        let mut weights = vec![0u64; nodes];
        let mut last = 0;
        for (index, s) in self.samples.iter().enumerate() {
            if s.time_ns < last {
                return Err(TimelineError::OutOfOrder { index });
            }
            last = s.time_ns;
            let node = s.node.index();
            if node >= nodes {
                return Err(TimelineError::NoSuchNode { index, node, nodes });
            }
            if usize::from(s.state) >= self.states.len() {
                return Err(TimelineError::NoSuchState {
                    index,
                    state: s.state,
                    states: self.states.len(),
                });
            }
            weights[node] = weights[node].saturating_add(s.weight);
        }
        for (node, (&samples, n)) in weights.iter().zip(&profile.nodes).enumerate() {
            if samples != n.self_value {
                return Err(TimelineError::Weight {
                    node,
                    samples,
                    self_value: n.self_value,
                });
            }
        }
        Ok(())
    }

    /// Follow a filtering of the profile: `map[old node]` is the node that
    /// holds the old node's self value now (`None`: dropped with it).
    pub fn remap(&mut self, map: &[Option<NodeId>]) {
        self.samples
            .retain_mut(|s| match map.get(s.node.index()).copied().flatten() {
                Some(n) => {
                    s.node = n;
                    true
                }
                None => false,
            });
    }

    /// Samples and sends charged to each of `nodes` nodes.
    pub fn per_node(&self, nodes: usize) -> Vec<NodeSums> {
        let mut out = vec![NodeSums::default(); nodes];
        for s in &self.samples {
            if let Some(n) = out.get_mut(s.node.index()) {
                n.samples += 1;
                n.sends = n.sends.saturating_add(s.sends);
            }
        }
        out
    }

    /// The sends charged to all samples.
    pub fn total_sends(&self) -> u64 {
        self.samples
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.sends))
    }

    /// The name of a sample's state (`?` when it has none).
    pub fn state_name(&self, s: &TimedSample) -> &str {
        self.states
            .get(usize::from(s.state))
            .map(String::as_str)
            .unwrap_or("?")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;

    /// A timeline of `sample_profile()`: one sample per unit of each node's
    /// self value, 1 ms apart, every third one in state 1, each charged 10 sends.
    pub(crate) fn sample_timeline(p: &Profile) -> Timeline {
        let mut samples = Vec::new();
        for (i, n) in p.nodes.iter().enumerate() {
            for _ in 0..n.self_value {
                let k = samples.len() as u64;
                samples.push(TimedSample {
                    time_ns: k * 1_000_000,
                    node: NodeId(i),
                    state: u16::from(k % 3 == 2),
                    weight: 1,
                    sends: 10,
                });
            }
        }
        Timeline {
            states: vec!["interpreting".into(), "primitive".into()],
            markers: vec![Marker {
                kind: MarkerKind::Scavenge,
                start_ns: 2_500_000,
                duration_ns: 300_000,
                process: 0,
                detail: "1024 bytes tenured".into(),
            }],
            samples,
            dropped_markers: 0,
            cpu_weights: false,
        }
    }

    #[test]
    fn the_contract_holds_and_is_checked() {
        let p = sample_profile();
        let t = sample_timeline(&p);
        assert_eq!(t.check(&p), Ok(()));
        assert_eq!(t.total_sends(), 10 * p.grand_total());
        let sums = t.per_node(p.nodes.len());
        for (s, n) in sums.iter().zip(&p.nodes) {
            assert_eq!(s.samples, n.self_value);
        }
        let mut bad = t.clone();
        bad.samples[1].time_ns = 0;
        bad.samples[0].time_ns = 5;
        assert_eq!(bad.check(&p), Err(TimelineError::OutOfOrder { index: 1 }));
        let mut bad = t.clone();
        bad.samples.pop();
        assert!(matches!(bad.check(&p), Err(TimelineError::Weight { .. })));
        let mut bad = t;
        bad.samples[0].state = 7;
        assert!(matches!(
            bad.check(&p),
            Err(TimelineError::NoSuchState { .. })
        ));
    }

    #[test]
    fn filtering_the_profile_and_remapping_keeps_the_contract() {
        let p = sample_profile();
        let t = sample_timeline(&p);
        for keep in ["Main>>c", "Main>>b", "nothing"] {
            let (q, map) = p.filtered_mapped(|m| m.name == keep);
            let mut u = t.clone();
            u.remap(&map);
            assert_eq!(u.check(&q), Ok(()), "keeping {keep}");
            assert_eq!(
                u.samples.iter().map(|s| s.weight).sum::<u64>(),
                q.grand_total()
            );
        }
    }
}
