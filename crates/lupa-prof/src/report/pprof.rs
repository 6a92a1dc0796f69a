//! pprof's profile format: a gzipped `profile.proto` message
//! (<https://github.com/google/pprof/blob/main/proto/profile.proto>), read by
//! `go tool pprof`, pprof's web UI, Speedscope, Pyroscope and many others.
//!
//! The messages are declared here with `prost` (field numbers as in
//! profile.proto; no code generation, no `protoc`). Mapping: every method is
//! a `Function` (name `Class>>selector`, its file and first line); a
//! `Location` is a method at a line (a caller frame at the line of its call
//! into the next frame when the profiler recorded it, a leaf at its method's
//! first line); every calling context with a value or activations is a
//! `Sample` whose stack is its path from the root, leaf first, with two
//! values: the profile's metric (`sends`/`count`, `time`/`nanoseconds`...) and
//! `activations`/`count` (left out when no context has activations, as in a
//! sampled profile); a string label `process` names the Smalltalk
//! process (`main`, `process N`). Synthetic nodes are not locations.
//! A sampled profile with a [`Timeline`] has three sample types instead:
//! `samples`/`count` (samples taken), its metric (`cpu` or `wall` time in
//! nanoseconds; left out when the metric is samples) and `sends`/`count`
//! (the sends charged to the samples: those executed since the previous one).
//! The default sample type (what `go tool pprof` shows without
//! `-sample_index`) is the profile's metric (`samples` when it is samples).
//! Functions have no system name: pprof would "demangle" one equal to the
//! name and blank VM-state leaves such as `<scavenge>`.
//! Contract: the sum of each sample type over all samples is the profile's
//! grand total (total activations; the timeline's samples and sends).
//!
//! A sample's stack holds at most [`MAX_STACK`] frames: those of a deeper
//! context are its innermost ones, then one location of the function
//! [`TRUNCATED`] (as Go's profiler truncates deep stacks), so the message
//! grows linearly with the profile (a 20,000-deep recursion would otherwise
//! write 200 million locations).

use std::io::{self, Write};

use flate2::Compression;
use flate2::write::GzEncoder;
use prost::Message;

use crate::Timeline;
use crate::profile::Profile;

/// The most frames a sample's stack holds (see the module documentation).
pub const MAX_STACK: usize = 256;

/// The name of the function that stands for the outer frames of a
/// truncated stack.
pub const TRUNCATED: &str = "[outer frames truncated]";

/// `Profile` of profile.proto (the fields Lupa writes).
#[derive(Clone, PartialEq, Message)]
pub struct PprofProfile {
    /// What each sample value is.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// Locations referenced by samples.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// Functions referenced by locations.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// Strings, referenced by index; entry 0 is "".
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// What one unit of the period is.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// The sampling period (1: every event is counted).
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments (string indices).
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// The sample type pprof shows by default (string index of its type;
    /// without it pprof shows the last one).
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

/// A (type, unit) pair of string indices.
#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    /// e.g. "sends".
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// e.g. "count".
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// One stack with its values.
#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    /// Leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One per sample type.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Labels (the process).
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// A label of a sample.
#[derive(Clone, PartialEq, Message)]
pub struct Label {
    /// Key (string index).
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// String value (string index).
    #[prost(int64, tag = "2")]
    pub str: i64,
}

/// A location: here, one per method.
#[derive(Clone, PartialEq, Message)]
pub struct Location {
    /// Nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Where in the source.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

/// A function and line of a location.
#[derive(Clone, PartialEq, Message)]
pub struct Line {
    /// The function's id.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// Source line (0: unknown).
    #[prost(int64, tag = "2")]
    pub line: i64,
}

/// A method.
#[derive(Clone, PartialEq, Message)]
pub struct Function {
    /// Nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Display name (string index).
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// System name (string index).
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Source file (string index).
    #[prost(int64, tag = "4")]
    pub filename: i64,
    /// First line.
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

/// Interned strings of a profile being built.
struct Strings {
    table: Vec<String>,
    index: std::collections::HashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        let mut s = Strings {
            table: Vec::new(),
            index: Default::default(),
        };
        s.get("");
        s
    }
    fn get(&mut self, text: &str) -> i64 {
        if let Some(&i) = self.index.get(text) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(text.to_string());
        self.index.insert(text.to_string(), i);
        i
    }
}

/// The metric's pprof (type, unit).
fn metric_type(profile: &Profile) -> (String, String) {
    let unit = profile.metric.unit();
    match unit {
        "ns" | "nanoseconds" => ("time".to_string(), "nanoseconds".to_string()),
        "bytes" => ("space".to_string(), "bytes".to_string()),
        _ => (profile.metric.name().to_lowercase(), "count".to_string()),
    }
}

/// Build the message for `profile` (and its timeline, when sampled);
/// `command` becomes a comment.
pub fn to_message(profile: &Profile, command: &str, timeline: Option<&Timeline>) -> PprofProfile {
    let mut strings = Strings::new();
    let (ty, unit) = metric_type(profile);
    // A sampling profiler sees no calls: then there is no activations type.
    let calls = profile.nodes.iter().any(|n| n.activations > 0);
    let sums = timeline.map(|t| t.per_node(profile.nodes.len()));
    let metric_is_samples = profile.metric == crate::Metric::Samples;
    let mut sample_type = Vec::new();
    if sums.is_some() {
        sample_type.push(ValueType {
            r#type: strings.get("samples"),
            unit: strings.get("count"),
        });
    }
    if sums.is_none() || !metric_is_samples {
        sample_type.push(ValueType {
            r#type: strings.get(&ty),
            unit: strings.get(&unit),
        });
    }
    if calls {
        sample_type.push(ValueType {
            r#type: strings.get("activations"),
            unit: strings.get("count"),
        });
    }
    if sums.is_some() {
        sample_type.push(ValueType {
            r#type: strings.get("sends"),
            unit: strings.get("count"),
        });
    }
    let mut function = Vec::new();
    let mut location = Vec::new();
    for (m, info) in profile.methods.iter().enumerate() {
        let id = m as u64 + 1;
        let name = strings.get(&info.name);
        let file = strings.get(info.file.as_deref().unwrap_or(""));
        let line = i64::from(info.line.unwrap_or(0));
        // No system name: pprof "demangles" a system name equal to the
        // name, and blanks `<scavenge>` and the like as C++ templates.
        function.push(Function {
            id,
            name,
            system_name: 0,
            filename: file,
            start_line: line,
        });
    }
    // Locations by (method, line): a caller frame is at the line of its call
    // into the next frame (when the profiler recorded it), a leaf at its
    // method's first line.
    let mut locations: std::collections::HashMap<(usize, i64), u64> = Default::default();
    let location_of = |location: &mut Vec<Location>,
                       locations: &mut std::collections::HashMap<(usize, i64), u64>,
                       m: usize,
                       line: i64|
     -> u64 {
        *locations.entry((m, line)).or_insert_with(|| {
            let id = location.len() as u64 + 1;
            location.push(Location {
                id,
                line: vec![Line {
                    function_id: m as u64 + 1,
                    line,
                }],
            });
            id
        })
    };
    // The function and location of the truncated outer frames, made on first use.
    let mut truncated: Option<u64> = None;
    let process_key = strings.get("process");
    let mut sample = Vec::new();
    for p in profile.processes() {
        let process = strings.get(&p.name);
        profile.walk_paths(p.roots.iter().copied(), |n, path| {
            let node = &profile.nodes[n];
            if (node.self_value > 0 || node.activations > 0) && !path.is_empty() {
                let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
                let mut value = Vec::with_capacity(sample_type.len());
                let here = sums.as_ref().map(|s| s[n.index()]);
                if let Some(h) = here {
                    value.push(int(h.samples));
                }
                if here.is_none() || !metric_is_samples {
                    value.push(int(node.self_value));
                }
                if calls {
                    value.push(int(node.activations));
                }
                if let Some(h) = here {
                    value.push(int(h.sends));
                }
                let outer = path.len().saturating_sub(MAX_STACK);
                let mut ids: Vec<u64> = (outer..path.len())
                    .rev()
                    .map(|k| {
                        let m = profile.nodes[path[k]].method.index();
                        let call = path.get(k + 1).and_then(|&c| profile.nodes[c].call_line);
                        let line = call.or(profile.methods[m].line).unwrap_or(0);
                        location_of(&mut location, &mut locations, m, i64::from(line))
                    })
                    .collect();
                if outer > 0 {
                    let id = *truncated.get_or_insert_with(|| {
                        let f = function.len() as u64 + 1;
                        let name = strings.get(TRUNCATED);
                        function.push(Function {
                            id: f,
                            name,
                            system_name: 0,
                            filename: 0,
                            start_line: 0,
                        });
                        let id = location.len() as u64 + 1;
                        location.push(Location {
                            id,
                            line: vec![Line {
                                function_id: f,
                                line: 0,
                            }],
                        });
                        id
                    });
                    ids.push(id);
                }
                sample.push(Sample {
                    location_id: ids,
                    value,
                    label: vec![Label {
                        key: process_key,
                        str: process,
                    }],
                });
            }
        });
    }
    let comment = vec![strings.get(command)];
    let period_type = Some(sample_type[0].clone());
    // The default view is the profile's metric: time for a profile
    // weighted by a clock, samples for one sampled every N sends, sends for
    // Compteur's counts (whose activations are a second view).
    let default_sample_type = if sums.is_some() && metric_is_samples {
        strings.get("samples")
    } else {
        strings.get(&ty)
    };
    PprofProfile {
        sample_type,
        sample,
        location,
        function,
        string_table: strings.table,
        period_type,
        period: 1,
        comment,
        default_sample_type,
    }
}

/// Write the gzipped profile.
pub fn write<W: Write + ?Sized>(
    profile: &Profile,
    command: &str,
    timeline: Option<&Timeline>,
    w: &mut W,
) -> io::Result<()> {
    let bytes = to_message(profile, command, timeline).encode_to_vec();
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&bytes)?;
    w.write_all(&gz.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;
    use std::io::Read;

    /// A chain of `depth` contexts (a deep recursion), each with a value.
    fn recursion(depth: usize) -> Profile {
        let mut b = crate::ProfileBuilder::new(crate::Metric::Sends);
        let m = b.add_method(crate::MethodInfo::new("Deep", "rec:"));
        for _ in 0..depth {
            b.enter(m);
            b.add_self(1);
        }
        b.finish()
    }

    #[test]
    fn a_deep_recursion_writes_a_message_linear_in_its_depth() {
        // Linear-time expectation without timing: the locations the
        // samples list (the message's size) are at most MAX_STACK + 1 per
        // sample, where full stacks would be depth * (depth + 1) / 2
        // (200 million for this recursion).
        let depth = 20_000;
        let msg = to_message(&recursion(depth), "lupa count", None);
        assert_eq!(msg.sample.len(), depth);
        let listed: usize = msg.sample.iter().map(|s| s.location_id.len()).sum();
        assert!(
            listed <= depth * (MAX_STACK + 1),
            "{listed} locations listed"
        );
        // The values still add up, and deep stacks end in the truncation mark.
        let total: i64 = msg.sample.iter().map(|s| s.value[0]).sum();
        assert_eq!(total, depth as i64);
        let deepest = msg.sample.iter().map(|s| s.location_id.len()).max();
        assert_eq!(deepest, Some(MAX_STACK + 1));
        let mark = msg
            .string_table
            .iter()
            .position(|t| t == TRUNCATED)
            .expect("the truncation function is named");
        assert!(msg.function.iter().any(|f| f.name == mark as i64));
        // A shallow context keeps its whole stack.
        assert_eq!(msg.sample[9].location_id.len(), 10);
    }

    fn decode(bytes: &[u8]) -> PprofProfile {
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut raw)
            .expect("gzip");
        PprofProfile::decode(raw.as_slice()).expect("profile.proto")
    }

    #[test]
    fn a_profile_without_calls_has_one_sample_type() {
        let mut p = sample_profile();
        for n in &mut p.nodes {
            n.activations = 0;
        }
        let mut buf = Vec::new();
        write(&p, "lupa profile Main", None, &mut buf).expect("write");
        let m = decode(&buf);
        assert_eq!(m.sample_type.len(), 1);
        assert!(m.sample.iter().all(|x| x.value.len() == 1));
        let total: i64 = m.sample.iter().map(|x| x.value[0]).sum();
        assert_eq!(total as u64, p.grand_total());
    }

    #[test]
    fn reads_back_with_the_totals() {
        let mut p = sample_profile();
        p.graft(&sample_profile(), &crate::process_label(2));
        let mut buf = Vec::new();
        write(&p, "lupa count Main", None, &mut buf).expect("write");
        let m = decode(&buf);
        let s = |i: i64| m.string_table[i as usize].as_str();
        assert_eq!(m.string_table[0], "");
        assert_eq!(s(m.sample_type[0].r#type), "sends");
        assert_eq!(s(m.sample_type[1].r#type), "activations");
        let total: i64 = m.sample.iter().map(|x| x.value[0]).sum();
        assert_eq!(total as u64, p.grand_total());
        let acts: i64 = m.sample.iter().map(|x| x.value[1]).sum();
        assert_eq!(
            acts as u64,
            p.nodes.iter().map(|n| n.activations).sum::<u64>()
        );
        // Every location and function referenced exists; leaf first.
        for x in &m.sample {
            for id in &x.location_id {
                assert!(m.location.iter().any(|l| l.id == *id));
            }
            assert_eq!(s(x.label[0].key), "process");
        }
        let names: std::collections::BTreeSet<&str> =
            m.sample.iter().map(|x| s(x.label[0].str)).collect();
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["main", "process 2"]);
        let deepest = m
            .sample
            .iter()
            .max_by_key(|x| x.location_id.len())
            .expect("samples");
        let function_at = |loc: u64| {
            let l = m.location.iter().find(|l| l.id == loc).expect("location");
            let f = m
                .function
                .iter()
                .find(|f| f.id == l.line[0].function_id)
                .expect("function");
            (s(f.name), l.line[0].line)
        };
        assert_eq!(function_at(deepest.location_id[0]).0, "Main>>c");
        // A caller is located at the line of its call into the next frame.
        let mut q = sample_profile();
        let child = (0..q.nodes.len())
            .find(|&i| q.nodes[i].parent.is_some_and(|p| !q.is_synthetic(p)))
            .expect("a call");
        q.nodes[child].call_line = Some(42);
        let mut buf = Vec::new();
        write(&q, "lupa count Main", None, &mut buf).expect("write");
        let m2 = decode(&buf);
        let caller_lines: Vec<i64> = m2
            .sample
            .iter()
            .filter(|x| x.location_id.len() >= 2)
            .filter_map(|x| {
                let loc = x.location_id[x.location_id.len() - 2];
                m2.location
                    .iter()
                    .find(|l| l.id == loc)
                    .map(|l| l.line[0].line)
            })
            .collect();
        let root_loc = |x: &Sample| *x.location_id.last().expect("frames");
        let lines: Vec<i64> = m2
            .sample
            .iter()
            .filter(|x| x.location_id.len() >= 2)
            .map(|x| {
                m2.location
                    .iter()
                    .find(|l| l.id == root_loc(x))
                    .map(|l| l.line[0].line)
                    .unwrap_or(-1)
            })
            .collect();
        assert!(
            lines.contains(&42) || caller_lines.contains(&42),
            "{lines:?} {caller_lines:?}"
        );
        assert_eq!(s(m.comment[0]), "lupa count Main");
    }

    #[test]
    fn a_timeline_adds_samples_and_sends() {
        let mut p = sample_profile();
        for n in &mut p.nodes {
            n.activations = 0;
        }
        p.metric = crate::Metric::Nanoseconds;
        let t = crate::timeline::tests::sample_timeline(&p);
        let mut buf = Vec::new();
        write(&p, "lupa profile Main", Some(&t), &mut buf).expect("write");
        let m = decode(&buf);
        let s = |i: i64| m.string_table[i as usize].as_str();
        let types: Vec<(&str, &str)> = m
            .sample_type
            .iter()
            .map(|v| (s(v.r#type), s(v.unit)))
            .collect();
        assert_eq!(
            types,
            [
                ("samples", "count"),
                ("time", "nanoseconds"),
                ("sends", "count")
            ]
        );
        let sum = |k: usize| m.sample.iter().map(|x| x.value[k]).sum::<i64>() as u64;
        assert_eq!(sum(0), t.samples.len() as u64);
        assert_eq!(sum(1), p.grand_total());
        assert_eq!(sum(2), t.total_sends());
    }
}
