//! What a profile report says besides the profile itself: [`ReportOptions`]
//! (the command, header lines, ranking length, tree cutoff and depth, flame
//! graph size, the timeline of a sampled profile) and the facts about the run
//! that the JSON document carries ([`TimeEstimate`], [`SamplingInfo`]).
//!
//! Every profile writer reads its options from here; [`format`](super::format)
//! chooses the writer.

/// What a report says besides the profile itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// The profiled command (`lupa count Foo 10`): callgrind's `cmd:`, the
    /// speedscope profile name and the start of the SVG title.
    pub command: String,
    /// Lines printed before the terminal formats (text, ranking, tree), each
    /// followed by a newline: the command, totals, a calibrated time estimate...
    pub header: Vec<String>,
    /// Methods in the ranking table (`None`: all).
    pub top: Option<usize>,
    /// Tree: leave out subtrees below this fraction of the grand total
    /// (`0.01` = 1%).
    pub cutoff: f64,
    /// Tree: contexts deeper than this are summarised in one line (`None`:
    /// all). A tree prints each context on a line indented by its depth, so
    /// its size grows with the square of the depth: a 50,000-deep recursion
    /// would take gigabytes.
    pub max_depth: Option<usize>,
    /// The calibrated time estimate of the run, if any (JSON's `estimate`).
    pub estimate: Option<TimeEstimate>,
    /// How a sampled profile was sampled (in the JSON document), when it was.
    pub sampling: Option<SamplingInfo>,
    /// A sampled profile's samples in time order (used by the exporters that
    /// show time or several values per sample; [`crate::timeline`]).
    pub timeline: Option<std::sync::Arc<crate::Timeline>>,
    /// Flame graph: the title (default: the command and the metric).
    pub title: Option<String>,
    /// Flame graph: the width in pixels (default 1200).
    pub width: Option<f64>,
    /// Flame graph: frames narrower than this many pixels are left out (default 0.1).
    pub min_width: Option<f64>,
}

/// A time estimate of a run from its metric (Compteur's calibration).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimeEstimate {
    /// The estimate.
    pub milliseconds: f64,
    /// Lower bound of the interval, if known.
    pub lower: Option<f64>,
    /// Upper bound of the interval, if known.
    pub upper: Option<f64>,
    /// Confidence level of the interval (0.95).
    pub confidence: f64,
}

/// The tree depth the terminal reports show by default.
pub const DEFAULT_TREE_DEPTH: usize = 100;

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            command: String::new(),
            header: Vec::new(),
            top: Some(25),
            cutoff: 0.01,
            max_depth: Some(DEFAULT_TREE_DEPTH),
            estimate: None,
            sampling: None,
            timeline: None,
            title: None,
            width: None,
            min_width: None,
        }
    }
}

/// How a sampled profile was taken: what every sampling profile reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SamplingInfo {
    /// What weighs a sample: `cpu` or `wall` (nanoseconds of that clock), or
    /// `sends` (deterministic: a sample every `every` sends, each weighing 1).
    pub clock: String,
    /// The requested rate in Hz (`None` in deterministic mode).
    pub requested_hz: Option<u32>,
    /// The achieved rate in Hz (`None` in deterministic mode).
    pub achieved_hz: Option<f64>,
    /// The seed of the interval jitter (`None` in deterministic mode).
    pub seed: Option<u64>,
    /// Deterministic mode: a sample every this many sends.
    pub every: Option<u64>,
    /// Samples in the profile.
    pub samples: u64,
    /// Ticks taken but not in the profile.
    pub lost: u64,
    /// Ticks skipped because the sampler was not scheduled in time.
    pub missed: u64,
    /// The value of the samples in native code the JIT compiled (the
    /// paper's figure 7 splits Smalltalk time into native and interpreted).
    #[serde(default)]
    pub native_value: u64,
    /// The value of the samples in interpreted Smalltalk code.
    #[serde(default)]
    pub interpreted_value: u64,
    /// The JIT's code zone (Cog's code-zone constituents): the functions in
    /// it at the end of the run, and those evicted or moved during it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code_zone: Vec<NativeFunctionDoc>,
}

/// One native function of the JIT's code zone.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NativeFunctionDoc {
    /// `Class>>selector`, or a block's name.
    pub name: String,
    /// Its first address.
    pub start: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Still at `start` at the end of the run (false: evicted or moved).
    pub live: bool,
    /// `[machine-code address, bytecode pc]` pairs: the first address
    /// running each instruction (indices from 0), in address order.
    pub pc_map: Vec<[u64; 2]>,
}
