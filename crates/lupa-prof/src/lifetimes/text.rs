//! The text report: the run, the paper's summary line, the three lifetime
//! densities (by objects and by memory, as bars), the allocation sites
//! ranked by bytes with their survived-collection histogram and their
//! short / long / immortal advice, and the classes.

use std::io::{self, Write};

use super::Lifetimes;
use super::analysis::{Analysis, Clock, format_bytes, format_us};

/// Options of the text report.
#[derive(Debug, Clone)]
pub struct TextOptions {
    /// Sites and classes listed (the rest are summed up in one line).
    pub top: usize,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions { top: 20 }
    }
}

fn bar(share: f64, width: usize) -> String {
    let n = (share * width as f64).round() as usize;
    "#".repeat(n.min(width))
}

fn pct(x: f64) -> String {
    format!("{:5.1}%", x * 100.0)
}

/// Write the report.
pub fn write<W: Write + ?Sized>(
    profile: &Lifetimes,
    options: &TextOptions,
    w: &mut W,
) -> io::Result<()> {
    let a = Analysis::of(profile);
    let t = &profile.totals;
    let s = &profile.sampling;
    writeln!(
        w,
        "Object lifetimes: {} ({} mode)",
        profile.program, profile.mode
    )?;
    let how = s.description();
    writeln!(w, "Sampling: {how}")?;
    writeln!(
        w,
        "Run: {} objects, {} allocated in {}; {} scavenges, {} full GCs, {} in GC",
        t.allocated_objects,
        format_bytes(t.allocated_bytes as f64),
        format_us(t.duration_us),
        t.scavenges,
        t.full_gcs,
        format_us(t.gc_us)
    )?;
    writeln!(
        w,
        "Records: {} ({} censored: {}); estimated {:.0} objects, {}",
        profile.records.len(),
        a.censored,
        profile.censored_meaning(),
        a.estimated_objects,
        format_bytes(a.estimated_bytes)
    )?;
    if let Some(note) = profile.limit_note() {
        writeln!(w, "Warning: {note}")?;
    }
    writeln!(w)?;
    writeln!(w, "{}.", a.summary_line())?;
    for d in &a.densities {
        writeln!(w)?;
        writeln!(
            w,
            "Lifetime density, {} clock ({}):",
            d.clock.name(),
            d.unit
        )?;
        writeln!(
            w,
            "  {:>21}  {:>6} {:<20}  {:>6} {:<20}",
            "lifetime", "objects", "", "memory", ""
        )?;
        for b in &d.buckets {
            let range = if d.clock == Clock::Collections {
                if b.hi == u64::MAX {
                    format!("{}+", b.lo)
                } else {
                    b.lo.to_string()
                }
            } else {
                format!("{} - {}", d.clock.format(b.lo), d.clock.format(b.hi))
            };
            let so = if a.estimated_objects > 0.0 {
                b.objects / a.estimated_objects
            } else {
                0.0
            };
            let sb = if a.estimated_bytes > 0.0 {
                b.bytes / a.estimated_bytes
            } else {
                0.0
            };
            writeln!(
                w,
                "  {:>21}  {} {:<20}  {} {:<20}",
                range,
                pct(so),
                bar(so, 20),
                pct(sb),
                bar(sb, 20)
            )?;
        }
    }
    writeln!(w)?;
    writeln!(
        w,
        "Allocation sites (by estimated bytes; survived: objects by collections survived 0/1/2/3/4/5+):"
    )?;
    writeln!(
        w,
        "  {:>10} {:>10} {:>12}  {:<8}  {:<28}  site",
        "objects", "bytes", "mean life", "advice", "survived"
    )?;
    for g in a.sites.iter().take(options.top) {
        let survived: Vec<String> = g.survived.iter().map(|v| format!("{v:.0}")).collect();
        writeln!(
            w,
            "  {:>10.0} {:>10} {:>12}  {:<8}  {:<28}  {} ({})",
            g.objects,
            format_bytes(g.bytes),
            format_bytes(g.mean_lifetime_bytes),
            g.demography.name(),
            survived.join("/"),
            g.name,
            g.classes.join(", ")
        )?;
    }
    if a.sites.len() > options.top {
        writeln!(w, "  ... {} more sites", a.sites.len() - options.top)?;
    }
    writeln!(w)?;
    writeln!(w, "Classes (by estimated bytes):")?;
    writeln!(
        w,
        "  {:>10} {:>8} {:>10} {:>12}  {:<8}  class",
        "objects", "± s.e.", "bytes", "mean life", "advice"
    )?;
    for g in a.classes.iter().take(options.top) {
        writeln!(
            w,
            "  {:>10.0} {:>8.0} {:>10} {:>12}  {:<8}  {}",
            g.objects,
            g.objects_error,
            format_bytes(g.bytes),
            format_bytes(g.mean_lifetime_bytes),
            g.demography.name(),
            g.name
        )?;
    }
    if a.classes.len() > options.top {
        writeln!(w, "  ... {} more classes", a.classes.len() - options.top)?;
    }
    Ok(())
}
