//! The paper's lifetime density charts as a standalone SVG document.
//!
//! For a clock, two bar charts side by side: the share of the estimated
//! objects (left) and of the estimated bytes (right) whose lifetime falls in
//! each bucket of the [`Density`] (doubling widths on the bytes and time
//! clocks, one bucket per count on the collections clock). A bar's x label is
//! its bucket's lower bound ([`Clock::format`]); its height is the bucket's
//! share of the estimated total, in percent. The part of a bar that stands
//! for censored objects (alive at the stop: their lifetime is a lower bound)
//! is drawn hatched at its top. The document's title names the program, the
//! mode and the clock; the caption is [`Analysis::summary_line`].
//! [`write_all`] stacks the three clocks ([`Clock::ALL`]), six charts.
//!
//! Contract:
//! - the output starts with `<svg` (no XML declaration, so it can be inlined
//!   in HTML), sets `xmlns`, `width`, `height` and `viewBox`, and every box is
//!   inside them;
//! - one `<rect class="bar">` per non-empty bucket per chart (two per clock),
//!   each with a `<title>` tooltip (bucket range, objects, bytes, censored);
//!   the hatched part is a `<rect class="censored">`;
//! - a profile without records gives charts that say "no records";
//! - every number written is finite (no `NaN`, no `inf`).

use std::fmt::Write as _;
use std::io;

use super::Lifetimes;
use super::analysis::{Analysis, Bucket, Clock, Density, density, format_bytes};
use crate::render::{escape_xml, svg};

/// Space around charts.
const GAP: f64 = 16.0;
/// One chart's size.
const CHART_W: f64 = 540.0;
const CHART_H: f64 = 330.0;
/// The plot area inside a chart: margins left, right, top, bottom.
const PLOT_LEFT: f64 = 62.0;
const PLOT_RIGHT: f64 = 14.0;
const PLOT_TOP: f64 = 30.0;
const PLOT_BOTTOM: f64 = 86.0;
/// The height of a clock's heading above its two charts.
const ROW_HEAD: f64 = 26.0;
/// The height of the document's header (title, caption, legend).
const HEAD: f64 = 100.0;
/// Most x labels on one axis (the others are left out, evenly).
const MAX_LABELS: usize = 24;

/// Bar colours: by objects, by memory.
const OBJECTS_FILL: &str = "#4682b4";
const MEMORY_FILL: &str = "#c8682a";

/// A number fit for an attribute: finite, one decimal.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "0.0".to_string()
    }
}

/// `part / whole`, 0 when it is not a finite share.
fn share(part: f64, whole: f64) -> f64 {
    let s = part / whole;
    if whole > 0.0 && s.is_finite() {
        s.max(0.0)
    } else {
        0.0
    }
}

/// The bucket range, e.g. `1.0 KB – 2.0 KB`, `3`, `11+`.
fn range(clock: Clock, b: &Bucket) -> String {
    if b.hi == u64::MAX {
        format!("{}+", clock.format(b.lo))
    } else if clock == Clock::Collections {
        clock.format(b.lo)
    } else {
        format!("{} – {}", clock.format(b.lo), clock.format(b.hi))
    }
}

/// The index in `buckets` of a lifetime (the last bucket takes the rest).
fn bucket_of(buckets: &[Bucket], v: u64) -> Option<usize> {
    let last = buckets.len().checked_sub(1)?;
    if v < buckets.first()?.lo {
        return None;
    }
    Some(
        buckets
            .iter()
            .position(|b| v >= b.lo && v < b.hi)
            .unwrap_or(last),
    )
}

/// The estimated censored bytes of each bucket of `d`.
fn censored_bytes(profile: &Lifetimes, d: &Density) -> Vec<f64> {
    let mut out = vec![0.0; d.buckets.len()];
    for r in profile.records.iter().filter(|r| r.censored) {
        if let Some(i) = bucket_of(&d.buckets, d.clock.lifetime(r)) {
            out[i] += r.weight() * r.size_bytes as f64;
        }
    }
    out
}

/// The smallest "round" percentage at least `max_pct`, for the y axis.
fn axis_max(max_pct: f64) -> f64 {
    [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 25.0, 50.0]
        .into_iter()
        .find(|&m| max_pct <= m)
        .unwrap_or(100.0)
}

/// One non-empty bucket's bar.
struct Bar {
    /// Its share of the estimated total (0-1).
    share: f64,
    /// The censored part of that share (0-1).
    censored: f64,
    /// Its tooltip.
    tip: String,
}

/// What one chart draws.
struct Chart<'a> {
    /// `By number of objects` or `By memory`.
    title: &'a str,
    /// The y axis's label.
    y_label: &'a str,
    fill: &'a str,
    clock: Clock,
    /// Per bucket: its lower bound and its bar (`None`: an empty bucket).
    bars: Vec<(u64, Option<Bar>)>,
}

impl Chart<'_> {
    /// Draw the chart with its top-left corner at `(x0, y0)`.
    fn draw(&self, out: &mut String, x0: f64, y0: f64) {
        let (px, py) = (x0 + PLOT_LEFT, y0 + PLOT_TOP);
        let (pw, ph) = (
            CHART_W - PLOT_LEFT - PLOT_RIGHT,
            CHART_H - PLOT_TOP - PLOT_BOTTOM,
        );
        let _ = writeln!(
            out,
            r##"<g class="chart" data-clock="{}"><rect class="frame" x="{}" y="{}" width="{}" height="{}" fill="#ffffff" stroke="#dddddd"/>"##,
            self.clock.name(),
            num(x0),
            num(y0),
            num(CHART_W),
            num(CHART_H)
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="13" font-weight="bold">{}</text>"#,
            num(x0 + CHART_W / 2.0),
            num(y0 + 19.0),
            escape_xml(self.title)
        );
        if self.bars.iter().all(|(_, b)| b.is_none()) {
            let _ = writeln!(
                out,
                r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#f8f8f8" stroke="#cccccc"/><text class="empty" x="{}" y="{}" text-anchor="middle" font-size="14" fill="#777777">no records</text></g>"##,
                num(px),
                num(py),
                num(pw),
                num(ph),
                num(px + pw / 2.0),
                num(py + ph / 2.0)
            );
            return;
        }
        let max_pct = self
            .bars
            .iter()
            .filter_map(|(_, b)| b.as_ref().map(|b| b.share * 100.0))
            .fold(0.0f64, f64::max);
        let top = axis_max(max_pct);
        // Y axis: gridlines and ticks, five steps.
        for i in 0..=5 {
            let v = top * f64::from(i) / 5.0;
            let y = py + ph - ph * f64::from(i) / 5.0;
            let _ = writeln!(
                out,
                r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"/><text x="{}" y="{}" text-anchor="end" font-size="10">{}%</text>"##,
                num(px),
                num(y),
                num(px + pw),
                num(y),
                if i == 0 { "#444444" } else { "#eeeeee" },
                num(px - 4.0),
                num(y + 3.5),
                if top < 5.0 {
                    format!("{v:.1}")
                } else {
                    format!("{v:.0}")
                }
            );
        }
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#444444"/>"##,
            num(px),
            num(py),
            num(px),
            num(py + ph)
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="11" transform="rotate(-90 {} {})">{}</text>"#,
            num(x0 + 14.0),
            num(py + ph / 2.0),
            num(x0 + 14.0),
            num(py + ph / 2.0),
            escape_xml(self.y_label)
        );
        // Bars and x labels.
        let n = self.bars.len().max(1);
        let slot = pw / n as f64;
        let every = n.div_ceil(MAX_LABELS).max(1);
        for (i, (lo, bar)) in self.bars.iter().enumerate() {
            let x = px + slot * i as f64;
            if let Some(Bar {
                share: s,
                censored,
                tip,
            }) = bar
            {
                let h = (ph * s * 100.0 / top).clamp(0.0, ph);
                let ch = (h * share(*censored, *s)).clamp(0.0, h);
                let bw = (slot * 0.8).max(0.5);
                let bx = x + (slot - bw) / 2.0;
                let _ = writeln!(
                    out,
                    r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>"#,
                    num(bx),
                    num(py + ph - h),
                    num(bw),
                    num(h),
                    self.fill,
                    escape_xml(tip)
                );
                if ch > 0.0 {
                    let _ = writeln!(
                        out,
                        r##"<rect class="censored" x="{}" y="{}" width="{}" height="{}" fill="url(#censored-hatch)" stroke="{}" stroke-width="0.5"><title>{}</title></rect>"##,
                        num(bx),
                        num(py + ph - h),
                        num(bw),
                        num(ch),
                        self.fill,
                        escape_xml(&format!(
                            "{:.1}% of this bar: censored (alive at the end)\n{tip}",
                            share(*censored, *s) * 100.0
                        ))
                    );
                }
            }
            if i % every == 0 {
                let (lx, ly) = (x + slot / 2.0, py + ph + 12.0);
                let label = if i + 1 == self.bars.len() && self.clock == Clock::Collections {
                    // The last collections bucket holds the rest.
                    format!("{}+", self.clock.format(*lo))
                } else {
                    self.clock.format(*lo)
                };
                let _ = writeln!(
                    out,
                    r#"<text x="{}" y="{}" text-anchor="end" font-size="10" transform="rotate(-45 {} {})">{}</text>"#,
                    num(lx),
                    num(ly),
                    num(lx),
                    num(ly),
                    escape_xml(&label)
                );
            }
        }
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="11">{}</text></g>"#,
            num(px + pw / 2.0),
            num(y0 + CHART_H - 8.0),
            escape_xml(&format!(
                "lifetime ({}), bucket lower bound",
                self.clock.unit()
            ))
        );
    }
}

/// The two charts of one density.
fn charts(profile: &Lifetimes, a: &Analysis, d: &Density) -> [Chart<'static>; 2] {
    let cb = censored_bytes(profile, d);
    let mut objects = Vec::with_capacity(d.buckets.len());
    let mut memory = Vec::with_capacity(d.buckets.len());
    for (b, &cbytes) in d.buckets.iter().zip(&cb) {
        if b.objects > 0.0 {
            let so = share(b.objects, a.estimated_objects);
            let sb = share(b.bytes, a.estimated_bytes);
            let tip = format!(
                "lifetime {} ({})\nobjects: {:.0} ({:.1}%)\nbytes: {} ({:.1}%)\ncensored: {:.0} objects, {}",
                range(d.clock, b),
                d.clock.unit(),
                finite(b.objects),
                so * 100.0,
                format_bytes(finite(b.bytes)),
                sb * 100.0,
                finite(b.censored_objects),
                format_bytes(finite(cbytes))
            );
            objects.push((
                b.lo,
                Some(Bar {
                    share: so,
                    censored: share(b.censored_objects, a.estimated_objects),
                    tip: tip.clone(),
                }),
            ));
            memory.push((
                b.lo,
                Some(Bar {
                    share: sb,
                    censored: share(cbytes, a.estimated_bytes),
                    tip,
                }),
            ));
        } else {
            objects.push((b.lo, None));
            memory.push((b.lo, None));
        }
    }
    [
        Chart {
            title: "By number of objects",
            y_label: "% of estimated objects",
            fill: OBJECTS_FILL,
            clock: d.clock,
            bars: objects,
        },
        Chart {
            title: "By memory",
            y_label: "% of estimated bytes",
            fill: MEMORY_FILL,
            clock: d.clock,
            bars: memory,
        },
    ]
}

/// `v`, or 0 when it is not finite.
fn finite(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

/// [`Analysis::summary_line`], its shares made finite (absurd weights can
/// make them `NaN`).
pub(crate) fn summary_line(a: &Analysis) -> String {
    if a.long_objects_share.is_finite() && a.long_bytes_share.is_finite() {
        a.summary_line()
    } else {
        let mut b = a.clone();
        b.long_objects_share = finite(b.long_objects_share);
        b.long_bytes_share = finite(b.long_bytes_share);
        b.summary_line()
    }
}

/// The document for `clocks`, one row of two charts per clock.
fn document(profile: &Lifetimes, clocks: &[Clock]) -> String {
    let a = Analysis::of(profile);
    let width = 2.0 * CHART_W + 3.0 * GAP;
    let height = HEAD + clocks.len() as f64 * (ROW_HEAD + CHART_H + GAP) + GAP;
    let title = match clocks {
        [c] => format!(
            "Object lifetimes: {} ({} mode), {} clock",
            profile.program,
            profile.mode,
            c.name()
        ),
        _ => format!(
            "Object lifetimes: {} ({} mode), {} clocks",
            profile.program,
            profile.mode,
            clocks
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut out = String::new();
    svg::open(
        &mut out,
        r#" class="lifetimes""#,
        &num(width),
        &num(height),
        r#" font-family="Verdana,Helvetica,sans-serif" font-size="11""#,
    );
    let _ = writeln!(
        out,
        r##"<title>{}</title>
<defs><pattern id="censored-hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect x="0" y="0" width="6" height="6" fill="#ffffff" fill-opacity="0.55"/><line x1="0" y1="0" x2="0" y2="6" stroke="#333333" stroke-width="1.5" stroke-opacity="0.6"/></pattern></defs>
<rect x="0" y="0" width="{}" height="{}" fill="#fafafa"/>"##,
        escape_xml(&title),
        num(width),
        num(height)
    );
    let _ = writeln!(
        out,
        r#"<text class="title" x="{}" y="26" font-size="16" font-weight="bold">{}</text>"#,
        num(GAP),
        escape_xml(&title)
    );
    let (caption, records) = if profile.records.is_empty() {
        (
            "No records: nothing was sampled.".to_string(),
            String::new(),
        )
    } else {
        (
            format!("{}.", summary_line(&a)),
            format!(
                "{} records ({} censored), estimated {:.0} objects, {}.",
                profile.records.len(),
                a.censored,
                finite(a.estimated_objects),
                format_bytes(finite(a.estimated_bytes))
            ),
        )
    };
    let _ = writeln!(
        out,
        r#"<text class="caption" x="{}" y="46" font-size="11">{}</text><text x="{}" y="62" font-size="11">{}</text>"#,
        num(GAP),
        escape_xml(&caption),
        num(GAP),
        escape_xml(&records)
    );
    // Legend.
    let ly = 72.0;
    let _ = writeln!(
        out,
        r##"<g class="legend"><rect x="{x}" y="{ly}" width="12" height="12" fill="{OBJECTS_FILL}"/><rect x="{x2}" y="{ly}" width="12" height="12" fill="{MEMORY_FILL}"/><text x="{x3}" y="{ty}">share of the estimated objects / bytes whose lifetime is in the bucket</text><rect x="{x4}" y="{ly}" width="12" height="12" fill="{OBJECTS_FILL}"/><rect x="{x4}" y="{ly}" width="12" height="12" fill="url(#censored-hatch)"/><text x="{x5}" y="{ty}">censored: alive at the end (lifetime is a lower bound)</text></g>"##,
        x = num(GAP),
        x2 = num(GAP + 14.0),
        x3 = num(GAP + 32.0),
        x4 = num(GAP + 520.0),
        x5 = num(GAP + 538.0),
        ty = num(ly + 10.0),
    );
    for (row, &clock) in clocks.iter().enumerate() {
        let d = a
            .densities
            .iter()
            .find(|d| d.clock == clock)
            .cloned()
            .unwrap_or_else(|| density(profile, clock));
        let y = HEAD + row as f64 * (ROW_HEAD + CHART_H + GAP);
        let _ = writeln!(
            out,
            r#"<text class="clock" x="{}" y="{}" font-size="14" font-weight="bold">{}</text>"#,
            num(GAP),
            num(y + 18.0),
            escape_xml(&format!(
                "Lifetime density, {} clock ({})",
                clock.name(),
                clock.unit()
            ))
        );
        let [objects, memory] = charts(profile, &a, &d);
        objects.draw(&mut out, GAP, y + ROW_HEAD);
        memory.draw(&mut out, 2.0 * GAP + CHART_W, y + ROW_HEAD);
    }
    let _ = writeln!(out, "</svg>");
    out
}

/// Write the two density charts (by objects, by memory) of `profile` on
/// `clock` as one SVG document.
pub fn write<W: io::Write + ?Sized>(
    profile: &Lifetimes,
    clock: Clock,
    w: &mut W,
) -> io::Result<()> {
    w.write_all(document(profile, &[clock]).as_bytes())
}

/// Write the density charts of `profile` on every clock ([`Clock::ALL`]),
/// stacked, as one SVG document (six charts).
pub fn write_all<W: io::Write + ?Sized>(profile: &Lifetimes, w: &mut W) -> io::Result<()> {
    w.write_all(document(profile, &Clock::ALL).as_bytes())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::lifetimes::{Collection, Record, Sampling, Site, Totals};
    use quick_xml::events::Event;

    /// A small profile: four records with different lifetimes (one
    /// censored, one sampled at 1/2), two sites (one with `<` and `&` in its
    /// name) and two collections.
    pub(crate) fn sample() -> Lifetimes {
        // Classes Array, Point, String; stacks [site 0], [site 1].
        let rec = |class: u32, size, site, birth: u64, death: u64, survived, censored, p| Record {
            class,
            size_bytes: size,
            stack: site,
            birth_bytes: birth * 100,
            death_bytes: death * 100,
            birth_us: birth,
            death_us: death,
            survived_scavenges: survived,
            survived_full_gcs: 0,
            censored,
            probability: p,
        };
        Lifetimes {
            command: "lupa lifetimes GcLoad".into(),
            program: "GcLoad <big> & small".into(),
            mode: "vm".into(),
            sampling: Sampling {
                rate: 0.5,
                every_nth: 0,
                seed: 7,
            },
            final_gc: true,
            stopped_at_limit: false,
            totals: Totals {
                duration_us: 1000,
                allocated_bytes: 100_000,
                allocated_objects: 1000,
                scavenges: 1,
                full_gcs: 1,
                gc_us: 30,
                eden_bytes: 4096,
            },
            classes: vec!["Array".into(), "Point".into(), "String".into()],
            stacks: vec![vec![0], vec![1]],
            sites: vec![
                Site {
                    method: "Foo>>bar<baz & qux>".into(),
                    pc: 3,
                    line: 12,
                },
                Site {
                    method: "Main>>run".into(),
                    pc: 9,
                    line: 4,
                },
            ],
            records: vec![
                rec(0, 40, 0, 0, 0, 0, false, 1.0),
                rec(0, 40, 0, 10, 12, 0, false, 1.0),
                rec(1, 24, 1, 20, 500, 1, false, 0.5),
                rec(2, 400, 1, 100, 1000, 2, true, 1.0),
            ],
            collections: vec![
                Collection {
                    start_us: 200,
                    duration_us: 10,
                    full: false,
                    allocated_bytes: 20_000,
                },
                Collection {
                    start_us: 600,
                    duration_us: 20,
                    full: true,
                    allocated_bytes: 60_000,
                },
            ],
        }
    }

    fn render(profile: &Lifetimes, clock: Option<Clock>) -> String {
        let mut out = Vec::new();
        match clock {
            Some(c) => write(profile, c, &mut out).expect("write"),
            None => write_all(profile, &mut out).expect("write"),
        }
        String::from_utf8(out).expect("UTF-8")
    }

    /// Parse with quick-xml and check every box is inside the picture;
    /// answers the number of `rect.bar` and `rect.censored`.
    fn check_xml(svg: &str) -> (usize, usize) {
        let mut reader = quick_xml::Reader::from_str(svg);
        let (mut bars, mut censored, mut depth) = (0, 0, 0i32);
        let (mut w, mut h) = (0.0f64, 0.0f64);
        loop {
            let event = reader.read_event().expect("well-formed SVG");
            if let Event::End(_) = event {
                depth -= 1;
            }
            if let Event::Start(e) | Event::Empty(e) = &event {
                let get = |k: &str| -> Option<f64> {
                    e.try_get_attribute(k)
                        .ok()
                        .flatten()
                        .and_then(|a| a.unescape_value().ok())
                        .and_then(|v| v.parse().ok())
                };
                match e.name().as_ref() {
                    b"svg" => {
                        assert!(e.try_get_attribute("xmlns").ok().flatten().is_some());
                        assert!(e.try_get_attribute("viewBox").ok().flatten().is_some());
                        w = get("width").expect("width");
                        h = get("height").expect("height");
                    }
                    b"rect" => {
                        let (x, y) = (get("x").unwrap_or(0.0), get("y").unwrap_or(0.0));
                        let (rw, rh) = (get("width").unwrap_or(0.0), get("height").unwrap_or(0.0));
                        assert!(x >= 0.0 && y >= 0.0 && rw >= 0.0 && rh >= 0.0);
                        assert!(x + rw <= w + 0.5 && y + rh <= h + 0.5, "rect outside");
                        let class = e
                            .try_get_attribute("class")
                            .ok()
                            .flatten()
                            .map(|a| String::from_utf8_lossy(&a.value).into_owned());
                        match class.as_deref() {
                            Some("bar") => bars += 1,
                            Some("censored") => censored += 1,
                            _ => {}
                        }
                    }
                    _ => {}
                }
                if let Event::Start(_) = &event {
                    depth += 1;
                }
            }
            if let Event::Eof = event {
                break;
            }
        }
        assert_eq!(depth, 0, "balanced");
        (bars, censored)
    }

    fn non_empty(profile: &Lifetimes, clock: Clock) -> usize {
        density(profile, clock)
            .buckets
            .iter()
            .filter(|b| b.objects > 0.0)
            .count()
    }

    #[test]
    fn one_bar_per_non_empty_bucket_and_chart() {
        let p = sample();
        for clock in Clock::ALL {
            let svg = render(&p, Some(clock));
            assert!(svg.starts_with("<svg"));
            assert!(!svg.contains("NaN") && !svg.contains("inf"));
            let (bars, censored) = check_xml(&svg);
            assert_eq!(svg.matches("<rect class=\"bar\"").count(), bars);
            assert_eq!(bars, 2 * non_empty(&p, clock), "{clock:?}");
            // The censored record's bucket, once per chart.
            assert_eq!(censored, 2);
            assert!(svg.contains(&format!("{} clock", clock.name())));
            assert!(svg.contains("GcLoad &lt;big&gt; &amp; small"));
            assert!(svg.contains(&escape_xml(&Analysis::of(&p).summary_line())));
        }
    }

    #[test]
    fn all_clocks_stacked() {
        let p = sample();
        let svg = render(&p, None);
        assert!(svg.starts_with("<svg"));
        assert!(!svg.contains("NaN"));
        let (bars, _) = check_xml(&svg);
        let want: usize = Clock::ALL.iter().map(|&c| 2 * non_empty(&p, c)).sum();
        assert_eq!(bars, want);
        assert_eq!(svg.matches("<g class=\"chart\"").count(), 6);
        // Every bar has its tooltip.
        assert_eq!(svg.matches("<title>lifetime ").count(), bars);
    }

    #[test]
    fn an_empty_profile_says_so() {
        let p = Lifetimes::default();
        for clock in [Some(Clock::Bytes), None] {
            let svg = render(&p, clock);
            assert!(svg.starts_with("<svg"));
            assert!(!svg.contains("NaN"));
            let (bars, censored) = check_xml(&svg);
            assert_eq!((bars, censored), (0, 0));
            assert!(svg.contains("no records"));
        }
    }

    #[test]
    fn absurd_weights_write_no_nan() {
        let mut p = sample();
        for r in &mut p.records {
            r.probability = 1e-308;
            r.size_bytes = u64::MAX;
        }
        let svg = render(&p, None);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        check_xml(&svg);
    }
}
