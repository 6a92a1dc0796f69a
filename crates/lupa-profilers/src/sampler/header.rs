//! The header of a sampling profile's text report, after the paper's report
//! (its figure 7): the run, the sampling itself (requested and achieved rate,
//! jitter seed, lost ticks), where the VM thread's time went by VM state, and
//! the collector's work.
//!
//! Contract: lines without newlines, in the order `lupa profile` prints them;
//! every percentage is of the profile's grand total.

use super::{SampleClock, SamplerStats};
use lupa_prof::Profile;
use std::time::Duration;

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The header lines of a sampling profile run as `command`.
pub fn header(profile: &Profile, stats: &SamplerStats, command: &str) -> Vec<String> {
    let c = &stats.config;
    let mut lines = vec![command.to_string()];
    match c.every {
        Some(n) => lines.push(format!(
            "{} samples, one every {n} message sends (deterministic); {} sends",
            stats.samples, stats.sends
        )),
        None => {
            let clock = match c.clock {
                SampleClock::Cpu => "CPU time of the VM thread",
                SampleClock::Wall => "wall-clock time",
            };
            lines.push(format!(
                "{} samples weighted by {clock}: {} Hz requested, {:.0} Hz achieved (jitter seed {}); \
{} lost, {} missed",
                stats.samples,
                c.rate_hz,
                stats.achieved_hz.unwrap_or(0.0),
                c.seed,
                stats.lost,
                stats.missed
            ));
            let cpu = stats
                .cpu
                .map(|d| format!("CPU {}, ", ms(d)))
                .unwrap_or_default();
            lines.push(format!(
                "{cpu}wall {}, {} message sends, {} process{}",
                ms(stats.wall),
                stats.sends,
                stats.processes,
                if stats.processes == 1 { "" } else { "es" }
            ));
        }
    }
    let total = profile.grand_total();
    lines.push("VM state           samples        share".to_string());
    for s in &stats.states {
        lines.push(format!(
            "  {:<15}{:>9}  {:>10.1}%",
            s.state.name(),
            s.samples,
            pct(s.value, total)
        ));
    }
    let gc = &stats.gc;
    lines.push(format!(
        "GC: {} scavenges ({}), {} full GCs ({}); {} bytes allocated, {} tenured",
        gc.scavenges,
        ms(gc.scavenge_time),
        gc.full_gcs,
        ms(gc.full_gc_time),
        gc.allocated_bytes,
        gc.tenured_bytes,
    ));
    lines
}
