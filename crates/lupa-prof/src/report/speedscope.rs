//! speedscope's JSON file format
//! (<https://www.speedscope.app/file-format-schema.json>), with one "evented"
//! profile per process.
//!
//! The calling-context tree is replayed as a depth-first walk: each context is
//! opened (`"O"`) at the current value, its children follow (by total descending,
//! then name), then the value advances by its self value and it is closed
//! (`"C"`). The "time" axis is thus the metric (sends, samples, ns...), and a
//! context spans exactly its total. A synthetic root is not a frame. The unit is
//! the metric's speedscope unit (`nanoseconds`, `bytes`, otherwise `none`).
//! Each Smalltalk process is a profile of its own ([`Profile::processes`]),
//! main first, so speedscope lists them apart; all share one frame table.
//!
//! A sampled profile with a [`Timeline`] is written as "sampled" profiles
//! instead ([`sampled_to_string`]): its samples in time order, each the
//! stack of its context (outermost first) with its weight, so speedscope's
//! time order view shows the run as it happened. A stack keeps its innermost
//! [`MAX_STACK`] frames under one [`TRUNCATED`] frame, as pprof's do, so the
//! file grows linearly with the samples, not with their depth squared.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::pprof::{MAX_STACK, TRUNCATED};
use super::sorted_children;
use crate::Timeline;
use crate::profile::{NodeId, Profile};

/// The schema URL speedscope expects in `$schema`.
pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

/// A speedscope file (the subset Lupa writes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct File {
    /// Always [`SCHEMA`].
    #[serde(rename = "$schema")]
    pub schema: String,
    /// Frames shared by the profiles.
    pub shared: Shared,
    /// The profiles (one per process).
    pub profiles: Vec<EventedProfile>,
    /// Name of the profile group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Which profile to show first.
    #[serde(
        rename = "activeProfileIndex",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub active_profile_index: Option<usize>,
    /// The program that wrote the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exporter: Option<String>,
}

/// The `shared` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shared {
    /// The frames, referenced by index from events.
    pub frames: Vec<Frame>,
}

/// A frame: a method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// `Class>>selector`.
    pub name: String,
    /// Source file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Line in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// An evented profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventedProfile {
    /// Always `"evented"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Profile name.
    pub name: String,
    /// `none`, `nanoseconds`, `bytes`...
    pub unit: String,
    /// First value (0).
    pub start_value: u64,
    /// Last value (the grand total).
    pub end_value: u64,
    /// Balanced open/close events with non-decreasing `at`.
    pub events: Vec<Event>,
}

/// An open or close event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// `"O"` or `"C"`.
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// Frame index.
    pub frame: usize,
    /// Value at which it happens.
    pub at: u64,
}

/// Open or close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    /// A frame opens.
    #[serde(rename = "O")]
    Open,
    /// A frame closes.
    #[serde(rename = "C")]
    Close,
}

/// The frames: used, non-synthetic methods, in method order; and each
/// method's frame index (`usize::MAX` for none).
fn frame_table(profile: &Profile) -> (Vec<usize>, Vec<Frame>) {
    let used = profile.used_methods();
    let mut frame_of = vec![usize::MAX; profile.methods.len()];
    let mut frames = Vec::new();
    for (m, info) in profile.methods.iter().enumerate() {
        if used[m] && !info.is_synthetic_root() {
            frame_of[m] = frames.len();
            frames.push(Frame {
                name: info.name.clone(),
                file: info.file.clone(),
                line: info.line,
            });
        }
    }
    (frame_of, frames)
}

/// Build the speedscope file for `profile`, naming the profile `name`.
pub fn to_file(profile: &Profile, name: &str) -> File {
    let totals = profile.node_totals();
    let (frame_of, frames) = frame_table(profile);
    let processes = profile.processes();
    let several = processes.len() > 1;
    let profiles = processes
        .iter()
        .map(|p| {
            let mut roots = p.roots.clone();
            super::sort_nodes(profile, &totals, &mut roots);
            let (events, end) = replay(profile, &totals, &roots, &frame_of, p.outside);
            EventedProfile {
                kind: "evented".to_string(),
                name: if several {
                    format!("{name} ({})", p.name)
                } else {
                    name.to_string()
                },
                unit: profile.metric.speedscope_unit().to_string(),
                start_value: 0,
                end_value: end,
                events,
            }
        })
        .collect();
    File {
        schema: SCHEMA.to_string(),
        shared: Shared { frames },
        profiles,
        name: Some(name.to_string()),
        active_profile_index: Some(0),
        exporter: Some(format!("lupa-prof {}", env!("CARGO_PKG_VERSION"))),
    }
}

/// The stack (frame indices, outermost first) of every node a sample names,
/// from one shared walk ([`Profile::walk_paths`]): a stack deeper than
/// [`MAX_STACK`] keeps its innermost `MAX_STACK` frames under the frame
/// [`TRUNCATED`] (added to `frames` on first use), so the work is linear in
/// the profile and the samples however deep the recursion. Nodes no sample
/// names are `None`.
fn sampled_stacks(
    profile: &Profile,
    timeline: &Timeline,
    frame_of: &[usize],
    frames: &mut Vec<Frame>,
) -> Vec<Option<Vec<usize>>> {
    let count = profile.nodes.len();
    let mut wanted = vec![false; count];
    for s in &timeline.samples {
        if let Some(w) = wanted.get_mut(s.node.index()) {
            *w = true;
        }
    }
    let frame = |n: &NodeId| frame_of[profile.nodes[*n].method.index()];
    let mut stacks: Vec<Option<Vec<usize>>> = vec![None; count];
    profile.walk_paths(profile.roots(), |n, path| {
        if wanted[n.index()] {
            let from = path.len().saturating_sub(MAX_STACK + 1);
            stacks[n.index()] = Some(path[from..].iter().map(frame).collect());
        }
    });
    let mut truncated: Option<usize> = None;
    for (n, stack) in stacks.iter_mut().enumerate() {
        if !wanted[n] {
            continue;
        }
        // A node no root reaches (malformed input): its own path.
        let stack = stack.get_or_insert_with(|| {
            profile
                .path(NodeId(n))
                .into_iter()
                .map(|m| frame_of[m.index()])
                .collect()
        });
        stack.retain(|&f| f != usize::MAX);
        if stack.len() > MAX_STACK {
            let outer = *truncated.get_or_insert_with(|| {
                frames.push(Frame {
                    name: TRUNCATED.to_string(),
                    file: None,
                    line: None,
                });
                frames.len() - 1
            });
            stack.drain(..stack.len() - MAX_STACK);
            stack.insert(0, outer);
        }
    }
    stacks
}

/// The speedscope file of a sampled profile and its timeline: one "sampled"
/// profile per process, samples in time order (see the module docs).
pub fn sampled_to_string(profile: &Profile, timeline: &Timeline, name: &str) -> String {
    let (frame_of, mut frames) = frame_table(profile);
    let processes = profile.processes();
    let owner = profile.node_processes(&processes);
    let stacks = sampled_stacks(profile, timeline, &frame_of, &mut frames);
    let mut per_process: Vec<(Vec<serde_json::Value>, Vec<u64>)> =
        vec![(Vec::new(), Vec::new()); processes.len().max(1)];
    for s in &timeline.samples {
        let n = s.node;
        let stack = stacks[n.index()].as_deref().unwrap_or_default();
        let last = per_process.len() - 1;
        let p = &mut per_process[owner[n.index()].min(last)];
        p.0.push(serde_json::json!(stack));
        p.1.push(s.weight);
    }
    let several = processes.len() > 1;
    let profiles: Vec<serde_json::Value> = per_process
        .into_iter()
        .enumerate()
        .map(|(i, (samples, weights))| {
            let end: u64 = weights.iter().sum();
            let pname = match processes.get(i) {
                Some(p) if several => format!("{name} ({})", p.name),
                _ => name.to_string(),
            };
            serde_json::json!({
                "type": "sampled",
                "name": pname,
                "unit": profile.metric.speedscope_unit(),
                "startValue": 0,
                "endValue": end,
                "samples": samples,
                "weights": weights,
            })
        })
        .collect();
    let file = serde_json::json!({
        "$schema": SCHEMA,
        "shared": { "frames": frames },
        "profiles": profiles,
        "name": name,
        "activeProfileIndex": 0,
        "exporter": format!("lupa-prof {}", env!("CARGO_PKG_VERSION")),
    });
    let mut out = file.to_string();
    out.push('\n');
    out
}

/// The open/close events of the contexts under `roots` (one process), as a
/// depth-first walk from `outside` (the value spent outside any context,
/// shown first), and the last value.
fn replay(
    profile: &Profile,
    totals: &[u64],
    roots: &[NodeId],
    frame_of: &[usize],
    outside: u64,
) -> (Vec<Event>, u64) {
    let mut events = Vec::new();
    let mut at: u64 = outside;
    // (node, closing?)
    let mut stack: Vec<(NodeId, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
    while let Some((n, closing)) = stack.pop() {
        let synthetic = profile.is_synthetic(n);
        let frame = frame_of[profile.nodes[n].method.index()];
        if closing {
            at = at.saturating_add(profile.nodes[n].self_value);
            if !synthetic {
                events.push(Event {
                    kind: EventKind::Close,
                    frame,
                    at,
                });
            }
            continue;
        }
        if !synthetic {
            events.push(Event {
                kind: EventKind::Open,
                frame,
                at,
            });
        }
        stack.push((n, true));
        for c in sorted_children(profile, totals, n).into_iter().rev() {
            stack.push((c, false));
        }
    }
    (events, at)
}

/// Write the speedscope JSON (compact).
pub fn write<W: Write>(profile: &Profile, name: &str, w: &mut W) -> io::Result<()> {
    serde_json::to_writer(&mut *w, &to_file(profile, name))?;
    writeln!(w)
}

/// The speedscope JSON as a string (pretty when `pretty`).
pub fn to_string(profile: &Profile, name: &str, pretty: bool) -> String {
    let file = to_file(profile, name);
    let s = if pretty {
        serde_json::to_string_pretty(&file)
    } else {
        serde_json::to_string(&file)
    };
    // Serialising these plain structs cannot fail.
    s.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;
    use serde_json::Value;

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(to_string(&sample_profile(), "sample", true));
    }

    #[test]
    fn parses_back_and_has_the_schema_fields() {
        let s = to_string(&sample_profile(), "sample", false);
        let back: File = serde_json::from_str(&s).expect("typed parse");
        assert_eq!(back, to_file(&sample_profile(), "sample"));
        // Required fields of file-format-schema.json, checked on the raw JSON.
        let v: Value = serde_json::from_str(&s).expect("json");
        assert_eq!(v["$schema"], SCHEMA);
        let frames = v["shared"]["frames"].as_array().expect("frames");
        assert!(frames.iter().all(|f| f["name"].is_string()));
        let profiles = v["profiles"].as_array().expect("profiles");
        assert_eq!(profiles.len(), 1);
        let p = &profiles[0];
        for key in ["type", "name", "unit", "startValue", "endValue", "events"] {
            assert!(p.get(key).is_some(), "missing {key}");
        }
        assert_eq!(p["type"], "evented");
        assert!(
            [
                "none",
                "nanoseconds",
                "microseconds",
                "milliseconds",
                "seconds",
                "bytes"
            ]
            .contains(&p["unit"].as_str().expect("unit"))
        );
        assert_eq!(p["endValue"], 72);
        // Events: balanced, properly nested, `at` non-decreasing, frames valid.
        let mut open: Vec<u64> = Vec::new();
        let mut last = 0;
        for e in p["events"].as_array().expect("events") {
            let at = e["at"].as_u64().expect("at");
            let frame = e["frame"].as_u64().expect("frame");
            assert!((frame as usize) < frames.len());
            assert!(at >= last);
            last = at;
            match e["type"].as_str().expect("type") {
                "O" => open.push(frame),
                "C" => assert_eq!(open.pop(), Some(frame)),
                other => panic!("bad event type {other}"),
            }
        }
        assert!(open.is_empty());
    }

    #[test]
    fn one_profile_per_process() {
        let mut p = sample_profile();
        p.graft(&sample_profile(), &crate::process_label(3));
        let f = to_file(&p, "lupa count Main");
        let names: Vec<&str> = f.profiles.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            ["lupa count Main (main)", "lupa count Main (process 3)"]
        );
        for prof in &f.profiles {
            assert_eq!(prof.end_value, 72);
            assert_eq!(prof.unit, "none");
            let opens = prof
                .events
                .iter()
                .filter(|e| e.kind == EventKind::Open)
                .count();
            assert_eq!(opens * 2, prof.events.len());
        }
    }

    #[test]
    fn a_deep_recursion_writes_stacks_linear_in_its_depth() {
        // Linear-time expectation without timing: each sample lists at most
        // MAX_STACK + 1 frames, where full stacks would list depth * (depth
        // + 1) / 2 in all (200 million for this recursion).
        let depth = 20_000;
        let mut b = crate::ProfileBuilder::new(crate::Metric::Samples);
        let m = b.add_method(crate::MethodInfo::new("Deep", "rec:"));
        let mut nodes = Vec::with_capacity(depth);
        for _ in 0..depth {
            b.enter(m);
            b.add_self(1);
            nodes.push(b.current_node());
        }
        let p = b.finish();
        let t = Timeline {
            samples: nodes
                .iter()
                .enumerate()
                .map(|(i, &node)| crate::TimedSample {
                    time_ns: i as u64,
                    node,
                    state: 0,
                    weight: 1,
                    sends: 0,
                })
                .collect(),
            ..Timeline::default()
        };
        let v: serde_json::Value =
            serde_json::from_str(&sampled_to_string(&p, &t, "deep")).expect("JSON");
        let frames = v["shared"]["frames"].as_array().expect("frames");
        let samples = v["profiles"][0]["samples"].as_array().expect("samples");
        assert_eq!(samples.len(), depth);
        let lens: Vec<usize> = samples
            .iter()
            .map(|s| s.as_array().map_or(0, Vec::len))
            .collect();
        assert!(lens.iter().sum::<usize>() <= depth * (MAX_STACK + 1));
        assert_eq!(lens.iter().max(), Some(&(MAX_STACK + 1)));
        let deepest = samples[depth - 1].as_array().expect("a stack");
        let outer = deepest[0].as_u64().expect("a frame") as usize;
        assert_eq!(frames[outer]["name"], TRUNCATED);
        assert_eq!(lens[MAX_STACK - 1], MAX_STACK, "shallow stacks are whole");
    }

    #[test]
    fn a_timeline_is_written_as_sampled_profiles_in_time_order() {
        let p = sample_profile();
        let t = crate::timeline::tests::sample_timeline(&p);
        let v: serde_json::Value =
            serde_json::from_str(&sampled_to_string(&p, &t, "lupa profile Main")).expect("JSON");
        let frames = v["shared"]["frames"].as_array().expect("frames");
        let prof = &v["profiles"][0];
        assert_eq!(prof["type"], "sampled");
        let samples = prof["samples"].as_array().expect("samples");
        let weights = prof["weights"].as_array().expect("weights");
        assert_eq!(samples.len(), t.samples.len());
        assert_eq!(weights.len(), samples.len());
        let sum: u64 = weights.iter().filter_map(|w| w.as_u64()).sum();
        assert_eq!(sum, p.grand_total());
        assert_eq!(prof["endValue"].as_u64(), Some(sum));
        for (s, ts) in samples.iter().zip(&t.samples) {
            let stack: Vec<usize> = s
                .as_array()
                .expect("stack")
                .iter()
                .filter_map(|f| f.as_u64())
                .map(|f| f as usize)
                .collect();
            assert!(stack.iter().all(|&f| f < frames.len()));
            // The innermost frame is the sample's method.
            let names: Vec<&str> = stack
                .iter()
                .filter_map(|&f| frames[f]["name"].as_str())
                .collect();
            let leaf = &p.methods[p.nodes[ts.node].method.index()];
            if !leaf.is_synthetic_root() {
                assert_eq!(names.last().copied(), Some(leaf.name.as_str()));
            }
        }
    }
}
