//! The lifetime page: one self-contained HTML5 file in the render kit's
//! page shell ([`crate::render::html::page`]) with the run (program, mode, sampling, exact totals, the
//! paper's summary line), the density charts of [`svg::write_all`] inline,
//! the allocation sites ranked by estimated bytes (at most [`TOP`], with
//! their classes, survived-collections histogram and short / long /
//! immortal advice) and the classes, in sortable tables (click a header to
//! sort); the page reads fine without its script.
//!
//! Contract: every name (program, command, site, class) is escaped; the
//! charts are [`svg::write_all`]'s document as is (it has no XML
//! declaration); only the page's own `<script>` element closes.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::analysis::{
    Analysis, Group, IMMORTAL_SHARE, LONG_SHARE, SURVIVED_BUCKETS, format_bytes, format_us,
};
use super::{Lifetimes, svg};
use crate::render::escape_xml;
use crate::render::html::{Column, number_cell, page, table_end, table_start};

/// Sites and classes listed (the rest are summed up in one line).
pub const TOP: usize = 50;

const STYLE: &str = "dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:bold}dd{margin:0}\
p.summary{font-size:1.05em;background:#f4f4f4;padding:.5em;border-left:4px solid #4682b4}\
td.site,td.name{font-family:monospace}.short{color:#2a7a2a}.long{color:#b8860b}.immortal{color:#b22222;font-weight:bold}\
#charts{overflow:auto}svg{max-width:100%;height:auto}.more{color:#666;font-style:italic}";

/// `v`, or 0 when it is not finite.
fn finite(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

/// How allocations were sampled, in words.
fn sampling(profile: &Lifetimes) -> String {
    profile.sampling.description()
}

/// A numeric cell, sortable on `v`.
fn cell(v: f64, text: &str) -> String {
    number_cell(finite(v), text)
}

/// A group's row: name (and classes for sites), objects, ± s.e., bytes,
/// mean lifetime, survived histogram, advice.
fn row(s: &mut String, rank: usize, g: &Group, with_classes: bool) {
    let survived: Vec<String> = g
        .survived
        .iter()
        .map(|v| format!("{:.0}", finite(*v)))
        .collect();
    let advice = g.demography.name();
    let _ = write!(
        s,
        "<tr>{}<td class=\"{}\">{}</td>",
        cell(rank as f64, &rank.to_string()),
        if with_classes { "site" } else { "name" },
        escape_xml(&g.name)
    );
    if with_classes {
        let _ = write!(s, "<td>{}</td>", escape_xml(&g.classes.join(", ")));
    }
    let _ = writeln!(
        s,
        "{}{}{}{}<td data-v=\"{}\">{}</td><td class=\"{advice}\" title=\"{}\">{advice}</td></tr>",
        cell(g.objects, &format!("{:.0}", finite(g.objects))),
        cell(g.objects_error, &format!("{:.0}", finite(g.objects_error))),
        cell(g.bytes, &format_bytes(finite(g.bytes))),
        cell(
            g.mean_lifetime_bytes,
            &format_bytes(finite(g.mean_lifetime_bytes))
        ),
        finite(g.survived.first().copied().unwrap_or(0.0)),
        escape_xml(&survived.join(" / ")),
        escape_xml(&format!(
            "{:.0}% of the bytes outlived the nursery, {:.0}% also the run",
            finite(g.long_share) * 100.0,
            finite(g.immortal_share) * 100.0
        )),
    );
}

/// A table of groups (sites when `sites`, else classes).
fn table(s: &mut String, id: &str, groups: &[Group], sites: bool) {
    let survived_head = (0..SURVIVED_BUCKETS)
        .map(|i| {
            if i + 1 == SURVIVED_BUCKETS {
                format!("{i}+")
            } else {
                i.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" / ");
    let survived_head = format!("Survived collections ({survived_head})");
    let mut columns = vec![
        Column::number("#"),
        Column::text(if sites { "Site" } else { "Class" }),
    ];
    if sites {
        columns.push(Column::text("Classes"));
    }
    columns.extend([
        Column::number("Objects"),
        Column::number("± s.e."),
        Column::number("Bytes"),
        Column::number("Mean lifetime (bytes allocated)"),
        Column::number(&survived_head),
        Column::text("Advice"),
    ]);
    table_start(s, id, &columns);
    for (i, g) in groups.iter().take(TOP).enumerate() {
        row(s, i + 1, g, sites);
    }
    table_end(s);
    if groups.len() > TOP {
        let rest = &groups[TOP..];
        let _ = writeln!(
            s,
            "<p class=\"more\">… {} more {}: {:.0} objects, {}</p>",
            rest.len(),
            if sites { "sites" } else { "classes" },
            finite(rest.iter().map(|g| g.objects).sum()),
            format_bytes(finite(rest.iter().map(|g| g.bytes).sum()))
        );
    }
}

/// Write the page of `profile`.
pub fn write<W: Write + ?Sized>(profile: &Lifetimes, w: &mut W) -> io::Result<()> {
    let a = Analysis::of(profile);
    let t = &profile.totals;
    let mut charts = Vec::new();
    svg::write_all(profile, &mut charts)?;
    let charts = String::from_utf8_lossy(&charts);
    let mut s = String::new();
    s.push_str("<dl id=\"run\">\n");
    let mut dl = |k: &str, v: String| {
        let _ = writeln!(s, "<dt>{}</dt><dd>{}</dd>", escape_xml(k), escape_xml(&v));
    };
    dl("Command", profile.command.clone());
    dl("Program", profile.program.clone());
    dl("Mode", profile.mode.clone());
    dl("Sampling", sampling(profile));
    dl(
        "Run",
        format!(
            "{} objects, {} allocated in {}",
            t.allocated_objects,
            format_bytes(t.allocated_bytes as f64),
            format_us(t.duration_us)
        ),
    );
    dl(
        "Collections",
        format!(
            "{} scavenges, {} full GCs, {} in GC; eden {}",
            t.scavenges,
            t.full_gcs,
            format_us(t.gc_us),
            format_bytes(t.eden_bytes as f64)
        ),
    );
    dl(
        "Records",
        format!(
            "{} ({} censored: {}); estimated {:.0} objects, {}",
            profile.records.len(),
            a.censored,
            profile.censored_meaning(),
            finite(a.estimated_objects),
            format_bytes(finite(a.estimated_bytes))
        ),
    );
    if let Some(note) = profile.limit_note() {
        dl("Warning", note.to_string());
    }
    s.push_str("</dl>\n");
    let _ = writeln!(
        s,
        "<p class=\"summary\">{}.</p>",
        escape_xml(&svg::summary_line(&a))
    );
    let _ = writeln!(
        s,
        "<h2>Lifetime densities</h2>\n<p>Share of the estimated objects (left) and bytes (right) by lifetime, on each clock; the hatched top of a bar is its censored part (objects alive at the end, whose lifetime is a lower bound). Hover a bar for its numbers.</p>\n<div id=\"charts\">{}</div>",
        charts.trim_end()
    );
    let _ = writeln!(
        s,
        "<h2>Allocation sites</h2>\n<p>By estimated bytes{}. Advice: <span class=\"short\">short</span> (dies in the nursery: leave in eden), <span class=\"long\">long</span> (at least {:.0}% of its bytes outlive one eden of allocation, {}, or a collection: a pretenuring candidate), <span class=\"immortal\">immortal</span> (at least {:.0}% of its bytes outlive the nursery and the run: pretenure).</p>",
        if a.sites.len() > TOP {
            format!(", the top {TOP} of {}", a.sites.len())
        } else {
            String::new()
        },
        LONG_SHARE * 100.0,
        escape_xml(&format_bytes(a.threshold_bytes as f64)),
        IMMORTAL_SHARE * 100.0
    );
    table(&mut s, "sites", &a.sites, true);
    s.push_str("<h2>Classes</h2>\n");
    table(&mut s, "classes", &a.classes, false);
    let title = format!("Object lifetimes: {}", profile.program);
    w.write_all(page(&title, STYLE, &s, "").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifetimes::svg::tests::sample;

    fn render(p: &Lifetimes) -> String {
        let mut out = Vec::new();
        write(p, &mut out).expect("write");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn the_page_has_the_run_the_charts_and_the_sites_escaped() {
        let p = sample();
        let page = render(&p);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<title>Object lifetimes: GcLoad &lt;big&gt; &amp; small</title>"));
        assert!(page.contains("Foo&gt;&gt;bar&lt;baz &amp; qux&gt;:12"));
        assert!(!page.contains("bar<baz"));
        assert!(page.contains("<svg xmlns="));
        assert!(!page.contains("<?xml"));
        assert!(!page.contains("NaN"));
        assert_eq!(page.matches("</script>").count(), 1);
        assert!(page.contains(&escape_xml(&Analysis::of(&p).summary_line())));
        // One row per site and per class, plus the headers.
        let a = Analysis::of(&p);
        assert_eq!(
            page.matches("<tr>").count(),
            a.sites.len() + a.classes.len() + 2
        );
        assert!(page.contains("<td class=\"name\">Array</td>"));
        assert!(page.contains("class=\"immortal\"") || page.contains("class=\"long\""));
        // Balanced tables.
        assert_eq!(
            page.matches("<table").count(),
            page.matches("</table>").count()
        );
    }

    #[test]
    fn long_tables_stop_at_the_top() {
        let mut p = sample();
        let base = p.records[0].clone();
        for i in 0..(TOP as u32 + 5) {
            p.sites.push(crate::lifetimes::Site {
                method: format!("Gen>>m{i}"),
                pc: i,
                line: i,
            });
            let mut r = base.clone();
            let site = p.sites.len() as u32 - 1;
            r.stack = p.intern_stack(vec![site]);
            p.records.push(r);
        }
        let page = render(&p);
        assert!(page.contains("more sites"));
        let sites = page
            .split("<table id=\"sites\"")
            .nth(1)
            .and_then(|t| t.split("</table>").next())
            .expect("sites table");
        assert_eq!(sites.matches("<tr>").count(), TOP + 1);
    }

    #[test]
    fn an_empty_profile_works() {
        let page = render(&Lifetimes::default());
        assert!(page.contains("<svg"));
        assert!(page.contains("no records"));
        assert!(!page.contains("NaN"));
        assert!(page.ends_with("</html>\n"));
    }
}
