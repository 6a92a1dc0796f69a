//! The HTML report: one self-contained page per profile (no external
//! resource, no network), in the render kit's page shell
//! ([`crate::render::html::page`]): the header, then three tabs under it, so
//! that each view starts at the top of the window: the interactive flame
//! graph (shown first), the ranking table (a sortable table: click a column
//! to sort) and the calling-context tree (click to expand; the first levels
//! are open). Without script the three are shown one after the other.
//!
//! Contract: the page is valid HTML5 (escaped text everywhere); the tree
//! obeys the same cutoff and depth limit as the text tree; the flame graph is
//! [`flamegraph::to_string`] without its XML declaration.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::flamegraph::{self, FlameGraphOptions};
use super::{OrderedTree, Ranking, group_digits, percent};
use crate::profile::{NodeId, Profile};
use crate::render::html::{Column, number_cell, page, table_end, table_start};
use crate::render::{escape_xml, svg};

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

const STYLE: &str = "details{margin-left:1.2em}summary{cursor:pointer;white-space:nowrap}\
.leaf{margin-left:2.3em;white-space:nowrap}.v{color:#555}svg{max-width:100%;height:auto}\
nav.tabs{position:sticky;top:0;background:#fff;padding:.4em 0;border-bottom:1px solid #ccc;z-index:1}\
nav.tabs button{font:inherit;padding:.3em 1em;margin-right:.3em;border:1px solid #ccc;\
border-radius:4px 4px 0 0;background:#f4f4f4;cursor:pointer}\
nav.tabs button[aria-selected=true]{background:#fff;border-bottom-color:#fff;font-weight:bold}\
body.tabbed section.tab{display:none}body.tabbed section.tab.shown{display:block}";

/// The tabs: the views in the order of the tab bar, the first shown first.
const TABS: [(&str, &str); 3] = [
    ("flame", "Flame graph"),
    ("ranking", "Methods"),
    ("tree", "Call tree"),
];

/// Shows one tab at a time (the one named by the URL's `#fragment`, else the
/// first); without it every section shows.
const TAB_SCRIPT: &str = r#"(function () {
  var buttons = [].slice.call(document.querySelectorAll('nav.tabs button'));
  function show(name) {
    buttons.forEach(function (b) {
      var on = b.getAttribute('data-tab') === name;
      b.setAttribute('aria-selected', on ? 'true' : 'false');
      document.getElementById('tab-' + b.getAttribute('data-tab')).classList.toggle('shown', on);
    });
  }
  buttons.forEach(function (b) {
    b.addEventListener('click', function () { show(b.getAttribute('data-tab')); });
  });
  document.body.classList.add('tabbed');
  var wanted = location.hash.slice(1);
  show(buttons.some(function (b) { return b.getAttribute('data-tab') === wanted; })
    ? wanted : buttons[0].getAttribute('data-tab'));
})();"#;

/// The page as a string.
pub fn to_string(profile: &Profile, options: &HtmlOptions) -> String {
    let mut s = String::new();
    for line in &options.header {
        let _ = writeln!(s, "<p>{}</p>", escape_xml(line));
    }
    s.push_str("<nav class=\"tabs\">");
    for (id, label) in TABS {
        let _ = write!(
            s,
            "<button type=\"button\" data-tab=\"{id}\">{label}</button>"
        );
    }
    s.push_str("</nav>\n");
    s.push_str("<section class=\"tab\" id=\"tab-flame\">\n<h2>Flame graph</h2>\n");
    let graph = flamegraph::to_string(profile, &options.flame);
    s.push_str(svg::inline(&graph));
    s.push_str("</section>\n");
    // Ranking.
    let unit = profile.metric.unit();
    let (total, own) = (format!("Total ({unit})"), format!("Self ({unit})"));
    s.push_str("<section class=\"tab\" id=\"tab-ranking\">\n<h2>Methods</h2>\n");
    table_start(
        &mut s,
        "ranking",
        &[
            Column::number("#"),
            Column::text("Method"),
            Column::text("Package"),
            Column::number(&total),
            Column::number("Total %"),
            Column::number(&own),
            Column::number("Self %"),
            Column::number("Activations"),
        ],
    );
    let known = profile.knows_activations();
    // A sampled profile does not know the activations: shown as unknown.
    let activations = |n: u64| {
        if known {
            number_cell(n, &group_digits(n))
        } else {
            "<td class=\"n\">\u{2014}</td>".to_string()
        }
    };
    for e in &Ranking::of(profile).entries {
        let _ = writeln!(
            s,
            "<tr>{}<td>{}</td><td>{}</td>{}<td class=\"n\">{:.2}</td>{}<td class=\"n\">{:.2}</td>{}</tr>",
            number_cell(e.rank, &e.rank.to_string()),
            escape_xml(&e.name),
            escape_xml(&e.category),
            number_cell(e.total, &group_digits(e.total)),
            e.total_percent,
            number_cell(e.self_value, &group_digits(e.self_value)),
            e.self_percent,
            activations(e.activations),
        );
    }
    table_end(&mut s);
    s.push_str("</section>\n<section class=\"tab\" id=\"tab-tree\">\n<h2>Call tree</h2>\n<div id=\"tree\">\n");
    tree(profile, options, &mut s);
    s.push_str("</div>\n</section>\n");
    page(&options.title, STYLE, &s, TAB_SCRIPT)
}

/// The calling-context tree as nested `<details>`.
fn tree(profile: &Profile, options: &HtmlOptions, s: &mut String) {
    let view = OrderedTree::of(profile);
    let known = profile.knows_activations();
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
        let calls = if known {
            format!(
                " <span class=\"v\">({} calls)</span>",
                group_digits(profile.nodes[n].activations)
            )
        } else {
            String::new()
        };
        let line = format!(
            "{:.1}% <span class=\"v\">{{{}}}</span> {}{calls}",
            percent(total, view.grand),
            group_digits(total),
            escape_xml(&profile.method_of(n).name),
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
        assert_eq!(page.matches("<tr><td class=\"n\"").count(), 4);
        assert_eq!(
            page.matches("<details").count(),
            page.matches("</details>").count()
        );
        assert!(page.contains("<svg"));
        assert!(!page.contains("<?xml"));
        assert!(page.trim_end().ends_with("</html>"));
    }
}
