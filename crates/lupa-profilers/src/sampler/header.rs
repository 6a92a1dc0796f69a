//! The text report of a sampling profile, after the paper's report (its figure 7):
//! the run (binary, date, heap parameters, sampling clock and rates), the
//! samples in Smalltalk code, per method with its bytecode ranges and their
//! source lines, the samples in the VM runtime per VM state and primitive,
//! then memory, garbage collections and processes from the VM's own counters.
//!
//! Contract: [`header`] answers lines without newlines, in the order
//! `lupa profile` prints them before the ranking and the tree; percentages are
//! of the samples' total value (CPU or wall time, or samples); a method's
//! bytecode ranges are delimited by its sends and branch targets, so each range
//! is straight-line code ending at the send where its samples were taken.

use super::{ENTRY, SampleClock, SamplerStats};
use lupa_prof::Profile;
use lupa_prof::report::group_digits;
use lupa_vm::{InstructionInfo, Vm, VmState};
use std::collections::BTreeMap;
use std::time::Duration;

/// Methods listed in the Smalltalk section.
const TOP_METHODS: usize = 15;
/// Bytecode ranges listed per method.
const TOP_RANGES: usize = 6;

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

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / (1u64 << 20) as f64)
}

/// `YYYY-MM-DD HH:MM UTC` of a time since the Unix epoch (civil calendar from
/// days, Hinnant's algorithm).
fn utc(since_epoch: Duration) -> String {
    let secs = since_epoch.as_secs() as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rest / 3600,
        (rest % 3600) / 60
    )
}

/// The value of a sample total as the report shows it: milliseconds for a
/// time profile, else samples.
fn amount(value: u64, time: bool) -> String {
    if time {
        format!("{:.1} ms", value as f64 / 1e6)
    } else {
        format!("{value}")
    }
}

/// The header lines of a sampling profile of `vm` run as `command`.
pub fn header(vm: &Vm, profile: &Profile, stats: &SamplerStats, command: &str) -> Vec<String> {
    let mut lines = vec![command.to_string()];
    run_lines(vm, stats, &mut lines);
    let total = profile.grand_total().max(stats_total(stats));
    let time = stats.config.metric() == lupa_prof::Metric::Nanoseconds;
    lines.push(String::new());
    smalltalk_section(vm, stats, total, time, &mut lines);
    lines.push(String::new());
    runtime_section(vm, stats, total, time, &mut lines);
    lines.push(String::new());
    if stats.config.native {
        native_section(stats, time, &mut lines);
        lines.push(String::new());
    }
    memory_lines(stats, &mut lines);
    lines
}

fn stats_total(stats: &SamplerStats) -> u64 {
    stats.states.iter().map(|s| s.value).sum()
}

fn run_lines(vm: &Vm, stats: &SamplerStats, lines: &mut Vec<String>) {
    let binary = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "lupa".to_string());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    lines.push(format!(
        "{binary} (Lupa {}), {}",
        env!("CARGO_PKG_VERSION"),
        utc(now)
    ));
    let c = vm.heap.config();
    lines.push(format!(
        "heap: eden {}, max heap {}, growth headroom {}, shrink threshold {}, full-GC ratio {}, tenuring threshold {}",
        mb(c.eden_size as u64),
        mb(c.max_heap as u64),
        mb(c.growth_headroom as u64),
        mb(c.shrink_threshold as u64),
        c.gc_ratio,
        c.tenuring_threshold
    ));
    let cfg = &stats.config;
    match cfg.every {
        Some(n) => lines.push(format!(
            "{} samples, one every {} message sends (deterministic); {} sends",
            group_digits(stats.samples),
            group_digits(n),
            group_digits(stats.sends)
        )),
        None => {
            let clock = match (cfg.unweighted, cfg.clock) {
                (true, _) => "counted (each sample is 1)",
                (false, SampleClock::Cpu) => "weighted by CPU time of the VM thread",
                (false, SampleClock::Wall) => "weighted by wall-clock time",
            };
            lines.push(format!(
                "{} samples {clock}: {} Hz requested, {:.0} Hz achieved (jitter seed {}); {} lost, {} missed",
                group_digits(stats.samples),
                cfg.rate_hz,
                stats.achieved_hz.unwrap_or(0.0),
                cfg.seed,
                stats.lost,
                stats.missed
            ));
            let cpu = stats
                .cpu
                .map(|d| format!("CPU {}, ", ms(d)))
                .unwrap_or_default();
            lines.push(format!(
                "{cpu}elapsed {}, {} message sends",
                ms(stats.wall),
                group_digits(stats.sends)
            ));
            if let Some(own) = stats.sampler_cpu {
                let ticks = stats.samples + stats.lost;
                let per_tick = if ticks > 0 {
                    format!(
                        ", {:.1} µs per tick",
                        own.as_secs_f64() * 1e6 / ticks as f64
                    )
                } else {
                    String::new()
                };
                lines.push(format!("sampler thread: CPU {}{per_tick}", ms(own)));
            } else if stats.config.every.is_none() {
                lines.push(
                    "sampler: self-timed (no thread: the VM thread samples itself at its polls)"
                        .to_string(),
                );
            }
            if stats.samples == 0 {
                lines.push(
                    "no samples: the run was shorter than a sampling interval (raise --rate, or use --every N)"
                        .to_string(),
                );
            }
        }
    }
}

/// One method's interpreted samples: its VM ids' sites, by instruction.
#[derive(Default)]
struct MethodSamples {
    value: u64,
    /// (VM method id, instruction index) -> value.
    sites: BTreeMap<(u32, u32), u64>,
}

fn smalltalk_section(
    vm: &Vm,
    stats: &SamplerStats,
    total: u64,
    time: bool,
    lines: &mut Vec<String>,
) {
    let value = |sites: &[(u32, u32, u64)]| sites.iter().map(|s| s.2).sum::<u64>();
    let (native, interpreted) = (value(&stats.native_sites), value(&stats.sites));
    if native == 0 && stats.code_zone.is_empty() {
        // No JIT (or nothing compiled): all Smalltalk code was interpreted.
        code_section(vm, "Smalltalk code", &stats.sites, total, time, lines);
        return;
    }
    // The paper's figure 7: native code by compiled method and bytecode
    // range, then interpreted code, then the VM runtime.
    lines.push(format!(
        "Smalltalk code: {} ({:.1}% of the total): native {} ({:.1}%), interpreted {} ({:.1}%); {} native functions made",
        amount(native + interpreted, time),
        pct(native + interpreted, total),
        amount(native, time),
        pct(native, total),
        amount(interpreted, time),
        pct(interpreted, total),
        stats
            .code_zone
            .iter()
            .filter(|f| f.live() && f.method != lupa_vm::NativeFunctionInfo::NO_METHOD)
            .count()
    ));
    lines.push(String::new());
    code_section(
        vm,
        "Native code (JIT-compiled)",
        &stats.native_sites,
        total,
        time,
        lines,
    );
    lines.push(String::new());
    code_section(vm, "Interpreted code", &stats.sites, total, time, lines);
}

/// A section of Smalltalk code: its `sites` (`(method id, instruction index
/// or [`ENTRY`], value)`) by method, each with its bytecode ranges.
fn code_section(
    vm: &Vm,
    title: &str,
    sites: &[(u32, u32, u64)],
    total: u64,
    time: bool,
    lines: &mut Vec<String>,
) {
    let mut by_name: BTreeMap<String, MethodSamples> = BTreeMap::new();
    for &(id, index, value) in sites {
        let name = vm
            .image
            .describe_method(id)
            .map_or_else(|| format!("#{id}"), |d| d.display_name());
        let m = by_name.entry(name).or_default();
        m.value += value;
        *m.sites.entry((id, index)).or_insert(0) += value;
    }
    let section: u64 = by_name.values().map(|m| m.value).sum();
    lines.push(format!(
        "{title}: {} ({:.1}% of the total)",
        amount(section, time),
        pct(section, total)
    ));
    if section == 0 {
        return;
    }
    lines.push(format!(
        "  {:>7} {:>9} {:>12} {:>10}  method, then its bytecode ranges (pc, line, ending send)",
        "% sect.",
        "(% total)",
        if time { "time" } else { "samples" },
        "cumulative"
    ));
    let mut methods: Vec<(String, MethodSamples)> = by_name.into_iter().collect();
    methods.sort_by(|a, b| b.1.value.cmp(&a.1.value).then_with(|| a.0.cmp(&b.0)));
    let mut cumulative = 0;
    for (name, m) in methods.iter().take(TOP_METHODS) {
        cumulative += m.value;
        lines.push(format!(
            "  {:>6.1}% {:>8.1}% {:>12} {:>9.1}%  {name}",
            pct(m.value, section),
            pct(m.value, total),
            amount(m.value, time),
            pct(cumulative, section)
        ));
        // (value, order, text): the entry before pc 0, ranges by start.
        let mut ranges: Vec<(u64, usize, String)> = Vec::new();
        let mut entry = 0;
        let mut code: BTreeMap<u32, Option<Vec<InstructionInfo>>> = BTreeMap::new();
        let mut by_range: BTreeMap<(u32, usize), (u64, usize, usize, String)> = BTreeMap::new();
        for (&(id, index), &value) in &m.sites {
            if index == ENTRY {
                entry += value;
                continue;
            }
            let instrs = code.entry(id).or_insert_with(|| vm.image.instructions(id));
            let Some(instrs) = instrs.as_ref() else {
                continue;
            };
            let (start, end) = range_of(instrs, index as usize);
            let line = instrs.get(end).map_or(0, |i| i.line);
            let send = instrs.get(end).and_then(|i| i.send.clone());
            let send = send.as_ref().map_or(String::new(), |s| format!(", #{s}"));
            let r = by_range.entry((id, start)).or_insert((
                0,
                start,
                end,
                format!("line {line}{send}"),
            ));
            r.0 += value;
        }
        if entry > 0 {
            ranges.push((entry, 0, "entry (prologue, resume dispatch)".to_string()));
        }
        ranges.extend(
            by_range
                .into_values()
                .map(|(v, start, end, what)| (v, start + 1, format!("pc {start}-{end}, {what}"))),
        );
        ranges.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (value, _, what) in ranges.iter().take(TOP_RANGES) {
            lines.push(format!("      {:>5.1}%  {what}", pct(*value, m.value)));
        }
        if ranges.len() > TOP_RANGES {
            lines.push(format!(
                "      ... {} more ranges",
                ranges.len() - TOP_RANGES
            ));
        }
    }
    if methods.len() > TOP_METHODS {
        lines.push(format!(
            "  ... {} more methods",
            methods.len() - TOP_METHODS
        ));
    }
}

/// The straight-line range holding instruction `at`: it starts after the
/// previous send or at the previous branch target (or at 0), and ends at the
/// next send at or after `at` (or at the last instruction).
fn range_of(instrs: &[InstructionInfo], at: usize) -> (usize, usize) {
    let at = at.min(instrs.len().saturating_sub(1));
    let targets: std::collections::BTreeSet<usize> = instrs
        .iter()
        .filter_map(|i| i.target.map(|t| t as usize))
        .collect();
    let mut start = at;
    while start > 0 && instrs[start - 1].send.is_none() && !targets.contains(&start) {
        start -= 1;
    }
    let mut end = at;
    while end + 1 < instrs.len() && instrs[end].send.is_none() && !targets.contains(&(end + 1)) {
        end += 1;
    }
    (start, end)
}

fn runtime_section(vm: &Vm, stats: &SamplerStats, total: u64, time: bool, lines: &mut Vec<String>) {
    let runtime: u64 = stats
        .states
        .iter()
        .filter(|s| !matches!(s.state, VmState::Interpreting | VmState::Native))
        .map(|s| s.value)
        .sum();
    lines.push(format!(
        "VM runtime: {} ({:.1}% of the total)",
        amount(runtime, time),
        pct(runtime, total)
    ));
    for s in stats
        .states
        .iter()
        .filter(|s| !matches!(s.state, VmState::Interpreting | VmState::Native))
    {
        lines.push(format!(
            "  {:<18} {:>6.1}% {:>12} {:>7} samples",
            s.state.name(),
            pct(s.value, total),
            amount(s.value, time),
            s.samples
        ));
        if s.state == VmState::Primitive {
            let mut prims = stats.primitives.clone();
            prims.sort_by_key(|p| std::cmp::Reverse(p.2));
            for &(id, samples, value) in prims.iter().take(TOP_METHODS) {
                let name = vm
                    .image
                    .describe_method(id)
                    .map_or_else(|| format!("#{id}"), |d| d.display_name());
                lines.push(format!(
                    "    {:>6.1}% {:>12} {:>7} samples  {name}",
                    pct(value, total),
                    amount(value, time),
                    samples
                ));
            }
        }
    }
}

/// The paper's "vanilla VM code": the VM thread's native pcs by Rust function.
fn native_section(stats: &SamplerStats, time: bool, lines: &mut Vec<String>) {
    match &stats.native {
        Err(e) => lines.push(format!("VM native code: not symbolised ({e})")),
        Ok(functions) => {
            let taken: u64 = functions.iter().map(|f| f.1).sum();
            let value: u64 = functions.iter().map(|f| f.2).sum();
            lines.push(format!(
                "VM native code (SIGPROF): {taken} pcs by Rust function ({} ticks without one)",
                stats.native_missed
            ));
            let mut cumulative = 0;
            for (name, samples, v) in functions.iter().take(TOP_METHODS) {
                cumulative += v;
                let mut name = name.clone();
                if name.len() > 110 {
                    let cut = (0..=107)
                        .rev()
                        .find(|&i| name.is_char_boundary(i))
                        .unwrap_or(0);
                    name.truncate(cut);
                    name.push_str("...");
                }
                lines.push(format!(
                    "  {:>6.1}% {:>12} {:>7} samples {:>6.1}%  {name}",
                    pct(*v, value),
                    amount(*v, time),
                    samples,
                    pct(cumulative, value)
                ));
            }
            if functions.len() > TOP_METHODS {
                lines.push(format!(
                    "  ... {} more functions",
                    functions.len() - TOP_METHODS
                ));
            }
        }
    }
}

fn memory_lines(stats: &SamplerStats, lines: &mut Vec<String>) {
    let h = &stats.heap_after;
    let gc = &stats.gc;
    lines.push(format!(
        "Memory: eden {}, survivors 2 x {}, old space {} used and {} free, {} from the system; {} growths, {} shrinks in all",
        mb(h.eden_bytes),
        mb(h.survivor_bytes),
        mb(h.old_used_bytes),
        mb(h.old_free_bytes),
        mb(h.heap_bytes),
        h.growths,
        h.shrinks
    ));
    let elapsed = stats.wall.as_nanos().max(1) as u64;
    let mean = |t: Duration, n: u64| {
        if n == 0 {
            0.0
        } else {
            t.as_secs_f64() * 1e3 / n as f64
        }
    };
    let gc_total = stats
        .states
        .iter()
        .filter(|s| s.state.is_gc())
        .map(|s| s.value)
        .sum::<u64>();
    lines.push(format!(
        "GCs: {} scavenges ({}, mean {:.3} ms, {:.1}% of elapsed), {} full GCs ({}, mean {:.3} ms, {:.1}% of elapsed); \
{} allocated, {} tenured; sampled in the collector: {:.1}%",
        gc.scavenges,
        ms(gc.scavenge_time),
        mean(gc.scavenge_time, gc.scavenges),
        pct(gc.scavenge_time.as_nanos() as u64, elapsed),
        gc.full_gcs,
        ms(gc.full_gc_time),
        mean(gc.full_gc_time, gc.full_gcs),
        pct(gc.full_gc_time.as_nanos() as u64, elapsed),
        mb(gc.allocated_bytes),
        mb(gc.tenured_bytes),
        pct(gc_total, stats_total(stats))
    ));
    let secs = stats.wall.as_secs_f64();
    lines.push(format!(
        "Processes: {} sampled, {} switches ({:.0} per second)",
        stats.processes,
        stats.process_switches,
        if secs > 0.0 {
            stats.process_switches as f64 / secs
        } else {
            0.0
        }
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instr(index: u32, send: Option<&str>, target: Option<u32>) -> InstructionInfo {
        InstructionInfo {
            index,
            line: 1,
            send: send.map(str::to_string),
            target,
        }
    }

    #[test]
    fn ranges_end_at_sends_and_start_at_targets() {
        // 0 push, 1 send, 2 push, 3 push, 4 send, 5 jump back to 2, 6 return
        let code = vec![
            instr(0, None, None),
            instr(1, Some("a"), None),
            instr(2, None, None),
            instr(3, None, None),
            instr(4, Some("b"), None),
            instr(5, None, Some(2)),
            instr(6, None, None),
        ];
        assert_eq!(range_of(&code, 1), (0, 1));
        assert_eq!(range_of(&code, 4), (2, 4));
        assert_eq!(range_of(&code, 5), (5, 6));
    }

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(utc(Duration::from_secs(0)), "1970-01-01 00:00 UTC");
        assert_eq!(
            utc(Duration::from_secs(1_795_564_800 + 3_660)),
            "2026-11-25 01:01 UTC"
        );
        assert_eq!(
            utc(Duration::from_secs(1_709_251_140)),
            "2024-02-29 23:59 UTC"
        );
    }
}
