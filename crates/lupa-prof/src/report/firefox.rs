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

use std::collections::HashMap;
use std::io::{self, Write};

use fxprof_processed_profile as fx;

use crate::profile::{NodeId, Profile};

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
                out.add_sample(thread, at, here, fx::CpuDelta::ZERO, weight as i32);
            }
            for &c in node.children.iter().rev() {
                stack.push((c, here));
            }
        }
    }
    out
}

/// Write the profile as JSON (the format <https://profiler.firefox.com> loads).
pub fn write<W: Write + ?Sized>(profile: &Profile, name: &str, w: &mut W) -> io::Result<()> {
    serde_json::to_writer(&mut *w, &to_profile(profile, name))?;
    writeln!(w)
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
        write(&p, "lupa count Main", &mut buf).expect("write");
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
        }
    }
}
