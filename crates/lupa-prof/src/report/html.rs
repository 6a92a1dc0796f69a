//! The HTML report: one self-contained page per profile (no external
//! resource, no network): the header, the ranking table (click a column to
//! sort), the calling-context tree (click to expand; the first levels are
//! open) and the interactive flame graph inline. The page's script is written
//! here; it marks `<html data-page-ready="true">` once it has run, which the
//! headless-browser test checks along with the console.
//!
//! Contract: the page is valid HTML5 (escaped text everywhere); the tree
//! obeys the same cutoff and depth limit as the text tree; the flame graph is
//! [`flamegraph::to_string`] without its XML
//! declaration.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::flamegraph::{self, FlameGraphOptions, escape_xml};
use super::{OrderedTree, Ranking, group_digits, percent};
use crate::profile::{NodeId, Profile};

/// What the page shows besides the profile.
#[derive(Debug, Clone, PartialEq)]
pub struct HtmlOptions {
    /// Page title and heading (the command).
    pub title: String,
    /// Lines under the heading (totals, estimate).
    pub header: Vec<String>,
    /// Leave out tree contexts below this fraction of the total.
    pub cutoff: f64,
    /// Deepest tree level shown.
    pub max_depth: Option<usize>,
    /// The flame graph.
    pub flame: FlameGraphOptions,
}

const STYLE: &str = "body{font-family:Verdana,Helvetica,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
table{border-collapse:collapse;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em}\
th{background:#eee;cursor:pointer;user-select:none}td.n{text-align:right;font-variant-numeric:tabular-nums}\
details{margin-left:1.2em}summary{cursor:pointer;white-space:nowrap}.leaf{margin-left:2.3em;white-space:nowrap}\
.v{color:#555}svg{max-width:100%;height:auto}";

const SCRIPT: &str = r#"(function () {
  var table = document.getElementById('ranking');
  var body = table.tBodies[0];
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    th.addEventListener('click', function () {
      var numeric = th.getAttribute('data-numeric') === 'true';
      var down = th.getAttribute('data-sorted') !== 'down';
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute('data-sorted'); });
      th.setAttribute('data-sorted', down ? 'down' : 'up');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute('data-v') || a.cells[col].textContent;
        var y = b.cells[col].getAttribute('data-v') || b.cells[col].textContent;
        var r = numeric ? (parseFloat(x) - parseFloat(y)) : x.localeCompare(y);
        return down ? -r : r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  document.documentElement.setAttribute('data-page-ready', 'true');
})();"#;

/// The page as a string.
pub fn to_string(profile: &Profile, options: &HtmlOptions) -> String {
    let mut s = String::new();
    let title = escape_xml(&options.title);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    for line in &options.header {
        let _ = writeln!(s, "<p>{}</p>", escape_xml(line));
    }
    // Ranking.
    let unit = escape_xml(profile.metric.unit());
    let _ = writeln!(
        s,
        "<h2>Methods</h2>\n<table id=\"ranking\"><thead><tr><th data-numeric=\"true\">#</th><th>Method</th><th>Package</th><th data-numeric=\"true\">Total ({unit})</th><th data-numeric=\"true\">Total %</th><th data-numeric=\"true\">Self ({unit})</th><th data-numeric=\"true\">Self %</th><th data-numeric=\"true\">Activations</th></tr></thead><tbody>"
    );
    for e in &Ranking::of(profile).entries {
        let _ = writeln!(
            s,
            "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\" data-v=\"{}\">{}</td></tr>",
            e.rank,
            escape_xml(&e.name),
            escape_xml(&e.category),
            e.total,
            group_digits(e.total),
            e.total_percent,
            e.self_value,
            group_digits(e.self_value),
            e.self_percent,
            e.activations,
            group_digits(e.activations),
        );
    }
    s.push_str("</tbody></table>\n<h2>Call tree</h2>\n<div id=\"tree\">\n");
    tree(profile, options, &mut s);
    s.push_str("</div>\n<h2>Flame graph</h2>\n");
    let svg = flamegraph::to_string(profile, &options.flame);
    let svg = svg.split_once("?>\n").map(|(_, rest)| rest).unwrap_or(&svg);
    s.push_str(svg);
    let _ = write!(s, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    s
}

/// The calling-context tree as nested `<details>`.
fn tree(profile: &Profile, options: &HtmlOptions, s: &mut String) {
    let view = OrderedTree::of(profile);
    let threshold = options.cutoff.max(0.0) * view.grand as f64;
    enum Item {
        Open(NodeId, usize),
        Close,
    }
    let mut stack: Vec<Item> = view.top.iter().rev().map(|&n| Item::Open(n, 0)).collect();
    while let Some(item) = stack.pop() {
        let (n, depth) = match item {
            Item::Close => {
                s.push_str("</details>\n");
                continue;
            }
            Item::Open(n, depth) => (n, depth),
        };
        let total = view.totals[n.index()];
        if (total as f64) < threshold {
            continue;
        }
        let line = format!(
            "{:.1}% <span class=\"v\">{{{}}}</span> {} <span class=\"v\">({} calls)</span>",
            percent(total, view.grand),
            group_digits(total),
            escape_xml(&profile.method_of(n).name),
            group_digits(profile.nodes[n].activations)
        );
        let children: Vec<NodeId> = if options.max_depth.is_some_and(|m| depth >= m) {
            Vec::new()
        } else {
            view.children(n)
                .into_iter()
                .filter(|c| view.totals[c.index()] as f64 >= threshold)
                .collect()
        };
        if children.is_empty() {
            let _ = writeln!(s, "<div class=\"leaf\">{line}</div>");
            continue;
        }
        let open = if depth < 3 { " open" } else { "" };
        let _ = writeln!(s, "<details{open}><summary>{line}</summary>");
        stack.push(Item::Close);
        stack.extend(children.into_iter().rev().map(|c| Item::Open(c, depth + 1)));
    }
}

/// Write the page.
pub fn write<W: Write + ?Sized>(
    profile: &Profile,
    options: &HtmlOptions,
    w: &mut W,
) -> io::Result<()> {
    w.write_all(to_string(profile, options).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;

    #[test]
    fn a_complete_page() {
        let p = sample_profile();
        let page = to_string(
            &p,
            &HtmlOptions {
                title: "lupa count <Main>".into(),
                header: vec!["72 sends".into()],
                cutoff: 0.0,
                max_depth: None,
                flame: FlameGraphOptions::default(),
            },
        );
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<title>lupa count &lt;Main&gt;</title>"));
        assert_eq!(page.matches("<tr><td class=\"n\">").count(), 4);
        assert_eq!(
            page.matches("<details").count(),
            page.matches("</details>").count()
        );
        assert!(page.contains("<svg"));
        assert!(!page.contains("<?xml"));
        assert!(page.trim_end().ends_with("</html>"));
    }
}
