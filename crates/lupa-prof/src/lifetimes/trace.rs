//! A Chrome trace-event timeline of a lifetime profile, which Perfetto
//! (ui.perfetto.dev) and `chrome://tracing` open: the JSON object format,
//! `{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}`.
//!
//! Events, all with `pid` 1 and `tid` 1 and `ts` in µs since the start:
//! - metadata (`ph` "M"): `process_name` (the program) and `thread_name`
//!   (the mode);
//! - one complete event (`ph` "X", `cat` "gc") per collection, named
//!   `Scavenge` or `Full GC`, `dur` its duration, `args.allocated_bytes` the
//!   allocation clock at the collection;
//! - counters (`ph` "C") sampled in [`WINDOWS`] equal windows of the run
//!   (each at least 1 µs): `allocation rate` (`args["MB/s"]`, MB = 2^20
//!   bytes), the estimated bytes allocated in the window (records weighted
//!   by `1 / probability`; without records, the allocation clock of the
//!   collections spread evenly between them) over its length, at the
//!   window's start, and 0 at the end of the run; `live sampled bytes`
//!   (`args.bytes`), the estimated bytes of the records born and not yet
//!   dead (censored records never die), at the start and at each window's
//!   end.
//!
//! `otherData` names the command, program, mode and sampling. Every number
//! is finite; events are in time order after the metadata.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::Lifetimes;

/// The number of counter windows (fewer when the run lasted fewer µs).
pub const WINDOWS: u64 = 50;

/// Bytes in the MB of `MB/s`.
const MB: f64 = 1024.0 * 1024.0;

/// `v`, or 0 when it is not finite.
fn finite(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

/// The run's length, µs: the totals' duration, or the last event seen when
/// it is 0; at least 1.
fn duration(profile: &Lifetimes) -> u64 {
    let last_record = profile
        .records
        .iter()
        .map(|r| r.death_us.max(r.birth_us))
        .max()
        .unwrap_or(0);
    let last_gc = profile
        .collections
        .iter()
        .map(|c| c.start_us.saturating_add(c.duration_us))
        .max()
        .unwrap_or(0);
    let d = if profile.totals.duration_us > 0 {
        profile.totals.duration_us
    } else {
        last_record.max(last_gc)
    };
    d.max(1)
}

/// Equal windows over `[0, duration)`: `(width, count)`, the last one
/// possibly shorter.
fn windows(duration: u64) -> (u64, u64) {
    let width = duration.div_ceil(WINDOWS).max(1);
    (width, duration.div_ceil(width).max(1))
}

/// Estimated bytes allocated in each window.
fn allocated(profile: &Lifetimes, duration: u64, width: u64, n: u64) -> Vec<f64> {
    let mut out = vec![0.0; n as usize];
    let index = |t: u64| ((t / width).min(n - 1)) as usize;
    if !profile.records.is_empty() {
        for r in &profile.records {
            out[index(r.birth_us)] += finite(r.weight() * r.size_bytes as f64);
        }
        return out;
    }
    // No records: the collections' allocation clock, each step spread evenly
    // over the time since the previous collection.
    for pair in profile.collections.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let bytes = b.allocated_bytes.saturating_sub(a.allocated_bytes) as f64;
        let (from, to) = (a.start_us.min(duration), b.start_us.min(duration));
        if to <= from {
            out[index(from)] += bytes;
            continue;
        }
        let per_us = bytes / (to - from) as f64;
        let mut t = from;
        while t < to {
            let end = (t / width + 1).saturating_mul(width).min(to);
            out[index(t)] += per_us * (end - t) as f64;
            t = end;
        }
    }
    out
}

/// The estimated live bytes at each of `points` (ascending, µs).
fn live(profile: &Lifetimes, points: &[u64]) -> Vec<f64> {
    let mut delta = vec![0.0; points.len() + 1];
    for r in &profile.records {
        let bytes = finite(r.weight() * r.size_bytes as f64);
        let born = points.partition_point(|&p| p < r.birth_us);
        let dead = if r.censored {
            points.len()
        } else {
            points.partition_point(|&p| p < r.death_us)
        };
        if born < dead {
            delta[born] += bytes;
            delta[dead] -= bytes;
        }
    }
    let mut sum = 0.0;
    delta
        .iter()
        .take(points.len())
        .map(|d| {
            sum += d;
            // Rounding can leave a tiny negative after the last death.
            finite(sum).max(0.0)
        })
        .collect()
}

fn counter(name: &str, ts: u64, args: Value) -> Value {
    json!({ "name": name, "cat": "allocation", "ph": "C", "ts": ts, "pid": 1, "tid": 1, "args": args })
}

/// The trace document.
pub fn to_value(profile: &Lifetimes) -> Value {
    let mut events = vec![
        json!({
            "name": "process_name", "ph": "M", "ts": 0, "pid": 1, "tid": 1,
            "args": { "name": format!("lupa lifetimes: {}", profile.program) },
        }),
        json!({
            "name": "thread_name", "ph": "M", "ts": 0, "pid": 1, "tid": 1,
            "args": { "name": format!("{} mode", profile.mode) },
        }),
    ];
    let mut timed: Vec<(u64, Value)> = Vec::new();
    for c in &profile.collections {
        timed.push((
            c.start_us,
            json!({
                "name": if c.full { "Full GC" } else { "Scavenge" },
                "cat": "gc",
                "ph": "X",
                "ts": c.start_us,
                "dur": c.duration_us,
                "pid": 1,
                "tid": 1,
                "args": { "allocated_bytes": c.allocated_bytes },
            }),
        ));
    }
    let d = duration(profile);
    let (width, n) = windows(d);
    for (k, bytes) in allocated(profile, d, width, n).into_iter().enumerate() {
        let start = k as u64 * width;
        let len = start
            .saturating_add(width)
            .min(d)
            .saturating_sub(start)
            .max(1);
        let rate = finite(bytes / MB / (len as f64 / 1e6));
        timed.push((
            start,
            counter("allocation rate", start, json!({ "MB/s": rate })),
        ));
    }
    timed.push((d, counter("allocation rate", d, json!({ "MB/s": 0.0 }))));
    let points: Vec<u64> = std::iter::once(0)
        .chain((1..=n).map(|k| k.saturating_mul(width).min(d)))
        .collect();
    for (&t, bytes) in points.iter().zip(live(profile, &points)) {
        timed.push((
            t,
            counter("live sampled bytes", t, json!({ "bytes": bytes })),
        ));
    }
    timed.sort_by_key(|(t, _)| *t);
    events.extend(timed.into_iter().map(|(_, e)| e));
    let s = &profile.sampling;
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "tool": "lupa lifetimes",
            "command": profile.command,
            "program": profile.program,
            "mode": profile.mode,
            "sampling rate": finite(s.rate),
            "sampling every nth": s.every_nth,
            "sampling seed": s.seed,
            "records": profile.records.len(),
            "duration_us": d,
            "units": "ts and dur in µs; allocation rate in MB/s (MB = 2^20 bytes); live sampled bytes estimated from the sample (weight 1/probability)",
        },
    })
}

/// Write the trace of `profile` as JSON.
pub fn write<W: Write + ?Sized>(profile: &Lifetimes, w: &mut W) -> io::Result<()> {
    let text = serde_json::to_vec(&to_value(profile)).map_err(io::Error::from)?;
    w.write_all(&text)?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifetimes::svg::tests::sample;

    fn render(p: &Lifetimes) -> Value {
        let mut out = Vec::new();
        write(p, &mut out).expect("write");
        let text = String::from_utf8(out).expect("UTF-8");
        assert!(!text.contains("NaN") && !text.contains("null"));
        serde_json::from_str(&text).expect("JSON")
    }

    fn events(v: &Value) -> &Vec<Value> {
        v["traceEvents"].as_array().expect("traceEvents")
    }

    fn every_event_is_complete(v: &Value) {
        assert_eq!(v["displayTimeUnit"], "ms");
        for e in events(v) {
            assert!(e["ph"].is_string(), "{e}");
            assert!(e["ts"].is_u64(), "{e}");
            assert_eq!(e["pid"], 1);
            assert_eq!(e["tid"], 1);
            assert!(e["name"].is_string());
        }
    }

    #[test]
    fn collections_counters_and_metadata() {
        let p = sample();
        let v = render(&p);
        every_event_is_complete(&v);
        let ev = events(&v);
        let x: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(x.len(), 2);
        assert_eq!(x[0]["name"], "Scavenge");
        assert_eq!(x[1]["name"], "Full GC");
        assert_eq!(x[1]["dur"], 20);
        assert_eq!(x[1]["args"]["allocated_bytes"], 60_000);
        assert_eq!(ev.iter().filter(|e| e["ph"] == "M").count(), 2);
        assert_eq!(v["otherData"]["program"], "GcLoad <big> & small");
        assert_eq!(v["otherData"]["sampling rate"], 0.5);
        // 1000 µs in 50 windows of 20 µs, and the closing 0.
        let rate: Vec<&Value> = ev
            .iter()
            .filter(|e| e["name"] == "allocation rate")
            .collect();
        assert_eq!(rate.len(), 51);
        // The first window (0-20 µs) holds the two Arrays, 80 bytes; the
        // second the Point sampled at 1/2, 2 × 24 bytes.
        let mbs = |i: usize| rate[i]["args"]["MB/s"].as_f64().expect("rate");
        assert!((mbs(0) - 80.0 / MB / 20e-6).abs() < 1e-9, "{}", mbs(0));
        assert!((mbs(1) - 48.0 / MB / 20e-6).abs() < 1e-9, "{}", mbs(1));
        assert_eq!(rate[50]["args"]["MB/s"], 0.0);
        // Live bytes: the censored String (400 B) is alive at the end.
        let live: Vec<f64> = ev
            .iter()
            .filter(|e| e["name"] == "live sampled bytes")
            .map(|e| e["args"]["bytes"].as_f64().expect("bytes"))
            .collect();
        assert_eq!(live.len(), 51);
        assert_eq!(live.last().copied(), Some(400.0));
        // At 200 µs: the Point (2 × 24 B, 20-500 µs) and the String.
        assert_eq!(live[10], 448.0);
        // Time order after the metadata.
        let ts: Vec<u64> = ev[2..].iter().filter_map(|e| e["ts"].as_u64()).collect();
        assert!(ts.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn without_records_the_rate_comes_from_the_collections() {
        let mut p = sample();
        p.records.clear();
        let v = render(&p);
        every_event_is_complete(&v);
        let total: f64 = events(&v)
            .iter()
            .filter(|e| e["name"] == "allocation rate")
            .map(|e| e["args"]["MB/s"].as_f64().expect("rate") * MB * 20e-6)
            .sum();
        assert!((total - 40_000.0).abs() < 1e-6, "{total}");
    }

    #[test]
    fn an_empty_profile_works() {
        let v = render(&Lifetimes::default());
        every_event_is_complete(&v);
        assert_eq!(events(&v).iter().filter(|e| e["ph"] == "X").count(), 0);
        assert!(events(&v).iter().any(|e| e["ph"] == "C"));
    }
}
