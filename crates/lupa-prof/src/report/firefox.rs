//! The Firefox Profiler's processed format (<https://profiler.firefox.com>),
//! built with the `fxprof-processed-profile` crate (samply's data model).
//!
//! Mapping: one Firefox process ("lupa"), one thread per Smalltalk process
//! (main first, the Firefox main thread; the others named "Smalltalk process
//! N"; [`Profile::processes`]); every method is a label frame whose
//! category is its package; every calling context with a self value is one
//! sample whose weight is that value (split in `i32`-sized pieces), so a
//! profile of a billion sends is as many samples as contexts, not one per
//! send. Samples are one millisecond apart in depth-first order (the time
//! axis of a counted profile is not time); the call tree, flame graph and
//! per-method totals are exact.
//!
//! A sampled profile with a [`Timeline`] is written as it happened
//! ([`timed_profile`]): each sample at its time, weighing one sample, with its
//! CPU time as the thread's CPU delta (a CPU-clock profile); categories are
//! the VM states (the leaf frame of a sample takes its state's category, the
//! frames above it `interpreting`), so the activity graph is coloured by what
//! the VM was doing (colours after the Firefox Profiler's own categories:
//! `idle` transparent as its "Idle", `waiting` grey as its "Other",
//! `allocation` light red beside the collector's orange and red); collections
//! are interval markers and process switches instant markers, on the thread of
//! the process they happened in.

use std::collections::HashMap;
use std::io::{self, Write};

use fxprof_processed_profile as fx;

use crate::profile::{NodeId, Profile};
use crate::{MarkerKind, Timeline};

const COLOURS: [fx::CategoryColor; 8] = [
    fx::CategoryColor::Blue,
    fx::CategoryColor::Green,
    fx::CategoryColor::Orange,
    fx::CategoryColor::Purple,
    fx::CategoryColor::Yellow,
    fx::CategoryColor::Red,
    fx::CategoryColor::Brown,
    fx::CategoryColor::Magenta,
];

/// Build the Firefox Profiler profile of `profile`, named `name`.
pub fn to_profile(profile: &Profile, name: &str) -> fx::Profile {
    let mut out = fx::Profile::new(
        name,
        fx::ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        fx::SamplingInterval::from_millis(1),
    );
    let start = fx::Timestamp::from_millis_since_reference(0.0);
    let process = out.add_process("lupa", 1, start);
    let mut categories: HashMap<String, fx::CategoryHandle> = HashMap::new();
    let mut clock = 0u64;
    for (i, p) in profile.processes().into_iter().enumerate() {
        let thread = out.add_thread(process, i as u32 + 1, start, i == 0);
        out.set_thread_name(thread, &format!("Smalltalk {}", p.name));
        let mut frames: HashMap<usize, fx::FrameHandle> = HashMap::new();
        let mut stack: Vec<(NodeId, Option<fx::StackHandle>)> =
            p.roots.iter().rev().map(|&r| (r, None)).collect();
        while let Some((n, parent)) = stack.pop() {
            let node = &profile.nodes[n];
            let method = node.method.index();
            let here = if profile.is_synthetic(n) {
                parent
            } else {
                let frame = match frames.get(&method) {
                    Some(&f) => f,
                    None => {
                        let info = &profile.methods[method];
                        let package = if info.category.is_empty() {
                            "(no package)".to_string()
                        } else {
                            info.category.clone()
                        };
                        let next = categories.len();
                        let category = *categories.entry(package.clone()).or_insert_with(|| {
                            out.add_category(&package, COLOURS[next % COLOURS.len()])
                        });
                        let label = out.intern_string(&info.name);
                        let f = out.intern_frame(
                            thread,
                            fx::FrameInfo {
                                frame: fx::Frame::Label(label),
                                category_pair: category.into(),
                                flags: fx::FrameFlags::empty(),
                            },
                        );
                        frames.insert(method, f);
                        f
                    }
                };
                Some(out.intern_stack(thread, parent, frame))
            };
            let mut left = node.self_value;
            while left > 0 {
                let weight = left.min(i32::MAX as u64);
                left -= weight;
                let at = fx::Timestamp::from_millis_since_reference(clock as f64);
                clock += 1;
                // One millisecond of CPU per sample, as the samples are spaced:
                // the activity graph shows the thread busy.
                out.add_sample(
                    thread,
                    at,
                    here,
                    fx::CpuDelta::from_micros(1000),
                    weight as i32,
                );
            }
            for &c in node.children.iter().rev() {
                stack.push((c, here));
            }
        }
    }
    out
}

/// A VM event between samples, as a Firefox marker: its kind names it and
/// gives its category, `detail` says more.
struct VmMarker {
    name: fx::StringHandle,
    category: fx::CategoryHandle,
    detail: fx::StringHandle,
}

impl fx::StaticSchemaMarker for VmMarker {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "LupaVm";
    const DESCRIPTION: Option<&'static str> =
        Some("What the Lupa VM did between samples: collections and process switches");
    const CHART_LABEL: Option<&'static str> = Some("{marker.data.detail}");
    const TOOLTIP_LABEL: Option<&'static str> = Some("{marker.name}: {marker.data.detail}");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.data.detail}");
    const FIELDS: &'static [fx::StaticSchemaMarkerField] = &[fx::StaticSchemaMarkerField {
        key: "detail",
        label: "Detail",
        format: fx::MarkerFieldFormat::String,
        flags: fx::MarkerFieldFlags::SEARCHABLE,
    }];

    fn name(&self, _profile: &mut fx::Profile) -> fx::StringHandle {
        self.name
    }

    fn category(&self, _profile: &mut fx::Profile) -> fx::CategoryHandle {
        self.category
    }

    fn string_field_value(&self, _field_index: u32) -> fx::StringHandle {
        self.detail
    }

    fn number_field_value(&self, _field_index: u32) -> f64 {
        0.0
    }
}

/// The colour of a VM state's category.
fn state_colour(state: &str) -> fx::CategoryColor {
    match state {
        "interpreting" => fx::CategoryColor::Blue,
        "primitive" => fx::CategoryColor::Green,
        "scavenge" => fx::CategoryColor::Orange,
        "full GC" => fx::CategoryColor::Red,
        "process switch" => fx::CategoryColor::Purple,
        "method lookup" => fx::CategoryColor::Yellow,
        // Memory next to the collector's orange and red.
        "allocation" => fx::CategoryColor::LightRed,
        "finalization" => fx::CategoryColor::Magenta,
        // The Firefox Profiler's own conventions: "Other" is grey, "Idle"
        // transparent.
        "waiting" => fx::CategoryColor::Gray,
        "idle" => fx::CategoryColor::Transparent,
        _ => fx::CategoryColor::Gray,
    }
}

/// The Firefox Profiler profile of a sampled profile and its timeline (see
/// the module docs).
pub fn timed_profile(profile: &Profile, timeline: &Timeline, name: &str) -> fx::Profile {
    let mut out = fx::Profile::new(
        name,
        fx::ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        fx::SamplingInterval::from_millis(1),
    );
    let start = fx::Timestamp::from_nanos_since_reference(0);
    let process = out.add_process("lupa", 1, start);
    let categories: Vec<fx::CategoryHandle> = timeline
        .states
        .iter()
        .map(|s| out.add_category(s, state_colour(s)))
        .collect();
    let interpreting = match categories.first() {
        Some(&c) => c,
        None => out.add_category("interpreting", fx::CategoryColor::Blue),
    };
    let category_named = |name: &str| {
        timeline
            .states
            .iter()
            .position(|s| s == name)
            .map(|i| categories[i])
            .unwrap_or(interpreting)
    };
    let processes = profile.processes();
    let owner = profile.node_processes(&processes);
    let threads: Vec<fx::ThreadHandle> = processes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let t = out.add_thread(process, i as u32 + 1, start, i == 0);
            out.set_thread_name(t, &format!("Smalltalk {}", p.name));
            t
        })
        .collect();
    let Some(&main) = threads.first() else {
        return out;
    };
    let thread_of = |n: NodeId| threads.get(owner[n.index()]).copied().unwrap_or(main);
    // Frames by (thread, method, category); stacks by (thread, node, category
    // of its frame).
    let mut frames: HashMap<(fx::ThreadHandle, usize, fx::CategoryHandle), fx::FrameHandle> =
        HashMap::new();
    #[allow(clippy::type_complexity)]
    let mut stacks: HashMap<
        (fx::ThreadHandle, usize, fx::CategoryHandle),
        Option<fx::StackHandle>,
    > = HashMap::new();
    let mut last_time: HashMap<fx::ThreadHandle, u64> = HashMap::new();
    for s in &timeline.samples {
        let category = categories
            .get(usize::from(s.state))
            .copied()
            .unwrap_or(interpreting);
        let thread = thread_of(s.node);
        // The stack of a context is its parent's (on the "interpreting"
        // category) plus its frame: each context is interned once, so the
        // work grows with the profile, not with samples times depth.
        let key = (thread, s.node.index(), category);
        let stack = match stacks.get(&key) {
            Some(&st) => st,
            None => {
                // The contexts from the sample's up to the first one known.
                let mut chain = vec![(s.node, category)];
                let mut up = profile.nodes[s.node].parent;
                let mut parent = None;
                while let Some(p) = up {
                    if let Some(&st) = stacks.get(&(thread, p.index(), interpreting)) {
                        parent = st;
                        break;
                    }
                    if chain.len() > profile.nodes.len() {
                        break; // malformed (cyclic) input
                    }
                    chain.push((p, interpreting));
                    up = profile.nodes[p].parent;
                }
                for &(n, cat) in chain.iter().rev() {
                    if !profile.is_synthetic(n) {
                        let m = profile.nodes[n].method;
                        let fkey = (thread, m.index(), cat);
                        let frame = match frames.get(&fkey) {
                            Some(&f) => f,
                            None => {
                                let label = out.intern_string(&profile.methods[m.index()].name);
                                let f = out.intern_frame(
                                    thread,
                                    fx::FrameInfo {
                                        frame: fx::Frame::Label(label),
                                        category_pair: cat.into(),
                                        flags: fx::FrameFlags::empty(),
                                    },
                                );
                                frames.insert(fkey, f);
                                f
                            }
                        };
                        parent = Some(out.intern_stack(thread, parent, frame));
                    }
                    stacks.insert((thread, n.index(), cat), parent);
                }
                parent
            }
        };
        // The thread's CPU time since its previous sample, in µs: the sample's
        // weight on the CPU clock; on the wall clock, the time since the
        // previous sample (the thread counts as running).
        let cpu = if timeline.cpu_weights {
            fx::CpuDelta::from_nanos(s.weight)
        } else {
            let previous = last_time.insert(thread, s.time_ns).unwrap_or(0);
            fx::CpuDelta::from_nanos(s.time_ns.saturating_sub(previous))
        };
        let at = fx::Timestamp::from_nanos_since_reference(s.time_ns);
        out.add_sample(thread, at, stack, cpu, 1);
    }
    for m in &timeline.markers {
        let thread = processes
            .iter()
            .position(|p| p.number == m.process)
            .and_then(|i| threads.get(i).copied())
            .unwrap_or(main);
        let category = match m.kind {
            MarkerKind::Scavenge => category_named("scavenge"),
            MarkerKind::FullGc => category_named("full GC"),
            MarkerKind::ProcessSwitch => category_named("process switch"),
        };
        let at = fx::Timestamp::from_nanos_since_reference(m.start_ns);
        let timing = if m.duration_ns == 0 {
            fx::MarkerTiming::Instant(at)
        } else {
            let end = fx::Timestamp::from_nanos_since_reference(m.start_ns + m.duration_ns);
            fx::MarkerTiming::Interval(at, end)
        };
        let marker = VmMarker {
            name: out.intern_string(m.kind.name()),
            category,
            detail: out.intern_string(&m.detail),
        };
        out.add_marker(thread, timing, marker);
    }
    out
}

/// Write the profile as JSON (the format <https://profiler.firefox.com> loads),
/// in time when it has a timeline.
pub fn write<W: Write + ?Sized>(
    profile: &Profile,
    name: &str,
    timeline: Option<&Timeline>,
    w: &mut W,
) -> io::Result<()> {
    let fx = match timeline {
        Some(t) => timed_profile(profile, t, name),
        None => to_profile(profile, name),
    };
    let mut json = serde_json::to_value(&fx)?;
    add_source_locations(profile, &mut json);
    serde_json::to_writer(&mut *w, &json)?;
    writeln!(w)
}

/// Fill what the crate leaves null: each function's file (`funcTable.fileName`,
/// an index into its thread's `stringArray`) and definition line
/// (`funcTable.lineNumber`), and each frame's line (`frameTable.line`: the
/// function's line; a frame stands for a whole method here), from the
/// profile's methods, found by their names (the functions' names).
fn add_source_locations(profile: &Profile, json: &mut serde_json::Value) {
    use serde_json::Value;
    let by_name: HashMap<&str, (Option<&str>, Option<u32>)> = profile
        .methods
        .iter()
        .map(|m| (m.name.as_str(), (m.file.as_deref(), m.line)))
        .collect();
    let Some(threads) = json.get_mut("threads").and_then(Value::as_array_mut) else {
        return;
    };
    for thread in threads {
        let Some(thread) = thread.as_object_mut() else {
            continue;
        };
        let mut strings: Vec<Value> = thread
            .get("stringArray")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let names: Vec<Option<u64>> = thread
            .get("funcTable")
            .and_then(|f| f.get("name"))
            .and_then(Value::as_array)
            .map(|a| a.iter().map(Value::as_u64).collect())
            .unwrap_or_default();
        let mut file_index: HashMap<String, usize> = HashMap::new();
        let mut files = Vec::with_capacity(names.len());
        let mut lines = Vec::with_capacity(names.len());
        for name in &names {
            let location = name
                .and_then(|i| strings.get(i as usize))
                .and_then(Value::as_str)
                .and_then(|n| by_name.get(n).copied());
            let (file, line) = location.unwrap_or((None, None));
            files.push(match file {
                Some(f) => {
                    let next = strings.len();
                    let i = *file_index.entry(f.to_string()).or_insert(next);
                    if i == next {
                        strings.push(Value::from(f));
                    }
                    Value::from(i)
                }
                None => Value::Null,
            });
            lines.push(line.map_or(Value::Null, Value::from));
        }
        if let Some(funcs) = thread.get_mut("funcTable").and_then(Value::as_object_mut) {
            funcs.insert("fileName".to_string(), Value::Array(files));
            funcs.insert("lineNumber".to_string(), Value::Array(lines.clone()));
        }
        if let Some(frames) = thread.get_mut("frameTable").and_then(Value::as_object_mut) {
            let frame_lines: Vec<Value> = frames
                .get("func")
                .and_then(Value::as_array)
                .map(|fs| {
                    fs.iter()
                        .map(|f| {
                            f.as_u64()
                                .and_then(|i| lines.get(i as usize).cloned())
                                .unwrap_or(Value::Null)
                        })
                        .collect()
                })
                .unwrap_or_default();
            frames.insert("line".to_string(), Value::Array(frame_lines));
        }
        thread.insert("stringArray".to_string(), Value::Array(strings));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;

    #[test]
    fn one_thread_per_process_and_exact_weights() {
        let mut p = sample_profile();
        p.graft(&sample_profile(), &crate::process_label(1));
        let mut buf = Vec::new();
        write(&p, "lupa count Main", None, &mut buf).expect("write");
        let v: serde_json::Value = serde_json::from_slice(&buf).expect("JSON");
        assert!(v["meta"]["version"].is_number(), "{v}");
        let threads = v["threads"].as_array().expect("threads");
        assert_eq!(threads.len(), 2);
        // The main thread carries the Firefox process's name.
        assert_eq!(threads[0]["isMainThread"], true);
        assert_eq!(threads[1]["name"], "Smalltalk process 1");
        for t in threads {
            let samples = &t["samples"];
            let n = samples["length"].as_u64().expect("length");
            let weights = samples["weight"].as_array().expect("weights");
            assert_eq!(weights.len() as u64, n);
            let sum: u64 = weights.iter().filter_map(|w| w.as_u64()).sum();
            assert_eq!(sum, 72, "{samples}");
            // Every sample has a stack, and every stack's frame is a named function.
            let stacks = samples["stack"].as_array().expect("stacks");
            assert!(stacks.iter().all(|s| s.is_number()));
            // Frames name their methods: frame -> func -> string.
            let strings = t["stringArray"].as_array().expect("strings");
            let names = t["funcTable"]["name"].as_array().expect("func names");
            let named: Vec<&str> = names
                .iter()
                .filter_map(|i| i.as_u64())
                .filter_map(|i| strings.get(i as usize)?.as_str())
                .collect();
            assert!(named.contains(&"Main>>c"), "{named:?}");
            // Every function has its file and definition line, every frame its
            // line (the processed format's columns, indices into stringArray).
            let funcs = &t["funcTable"];
            let files = funcs["fileName"].as_array().expect("fileName");
            let lines = funcs["lineNumber"].as_array().expect("lineNumber");
            for (i, name) in names.iter().enumerate() {
                let name = strings[name.as_u64().expect("index") as usize].as_str();
                let file = strings[files[i].as_u64().expect("a file") as usize].as_str();
                let (want_file, want_line) = match name {
                    Some("Main>>main") => ("Main.som", 3),
                    Some("Main>>a") => ("Main.som", 10),
                    Some("Lib>>b") => ("Lib.som", 7),
                    Some("Main>>c") => ("Main.som", 20),
                    other => panic!("unexpected function {other:?}"),
                };
                assert_eq!(file, Some(want_file));
                assert_eq!(lines[i].as_u64(), Some(want_line));
            }
            let frames = &t["frameTable"];
            for (f, line) in frames["func"]
                .as_array()
                .expect("frame funcs")
                .iter()
                .zip(frames["line"].as_array().expect("frame lines"))
            {
                assert_eq!(lines[f.as_u64().expect("func") as usize], *line);
            }
            // Each sample (1 ms apart) carries 1 ms of CPU, in the unit the
            // profile declares.
            let deltas = samples["threadCPUDelta"].as_array().expect("CPU deltas");
            assert!(
                deltas.iter().all(|d| d.as_u64() == Some(1000)),
                "{deltas:?}"
            );
        }
        assert_eq!(v["meta"]["sampleUnits"]["threadCPUDelta"], "µs");
    }

    #[test]
    fn a_timeline_gives_timed_samples_state_categories_and_markers() {
        let p = sample_profile();
        let t = crate::timeline::tests::sample_timeline(&p);
        let mut buf = Vec::new();
        write(&p, "lupa profile Main", Some(&t), &mut buf).expect("write");
        let v: serde_json::Value = serde_json::from_slice(&buf).expect("JSON");
        let cats: Vec<&str> = v["meta"]["categories"]
            .as_array()
            .expect("categories")
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert!(
            cats.contains(&"interpreting") && cats.contains(&"primitive"),
            "{cats:?}"
        );
        let thread = &v["threads"][0];
        let samples = &thread["samples"];
        assert_eq!(samples["length"].as_u64(), Some(t.samples.len() as u64));
        // Times are the samples' (1 ms apart), in order.
        let times: Vec<f64> = match samples["time"].as_array() {
            Some(a) => a.iter().filter_map(|x| x.as_f64()).collect(),
            None => {
                let deltas = samples["timeDeltas"]
                    .as_array()
                    .expect("time or timeDeltas");
                let mut at = 0.0;
                deltas
                    .iter()
                    .filter_map(|x| x.as_f64())
                    .map(|d| {
                        at += d;
                        at
                    })
                    .collect()
            }
        };
        assert_eq!(times.len(), t.samples.len());
        assert!((times[3] - 3.0).abs() < 1e-6, "{times:?}");
        // The scavenge is an interval marker with its detail.
        let markers = &thread["markers"];
        assert_eq!(markers["length"], 1, "{markers}");
        let data = &markers["data"][0];
        let strings = thread["stringArray"].as_array().expect("strings");
        // String fields are indices into the thread's strings.
        let detail = data["detail"].as_u64().expect("detail index") as usize;
        assert_eq!(strings[detail], "1024 bytes tenured", "{data}");
        let name = markers["name"][0].as_u64().expect("name index") as usize;
        assert_eq!(strings[name], "Scavenge");
    }
}
