//! The blueprint page: one self-contained HTML file with the picture
//! ([`super::svg`]), its legend, the summary and, for the method under the
//! pointer (or clicked), its numbers and calls. No network, no other file.
//!
//! Contract: the page's script sets `data-methods` (the number of method
//! boxes) and `data-page-ready="true"` on `<body>` when it has wired every
//! method box (tests open it in headless Chromium).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::flamegraph::escape_xml;

use super::model::{Blueprint, Kind, to_text};
use super::svg::{self, GRAY, PURE};

/// A JSON value safe inside a `<script>` element.
fn js<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v)
        .unwrap_or_else(|_| "null".to_string())
        .replace("</", "<\\/")
}

/// The page of the blueprint of the given kind.
pub fn to_string(bp: &Blueprint, kind: Kind) -> String {
    let picture = svg::to_string(bp, kind);
    let picture = picture
        .split_once("?>")
        .map(|(_, s)| s.trim_start())
        .unwrap_or(&picture);
    // Per method: its tooltip, callers and callees with counts.
    let mut data: BTreeMap<String, (String, Vec<String>, Vec<String>)> = bp
        .methods()
        .map(|(c, m)| {
            let name = m.name_in(&c.name);
            let info = svg::tooltip(&name, m);
            (name, (info, Vec::new(), Vec::new()))
        })
        .collect();
    for call in &bp.calls {
        if let Some(e) = data.get_mut(&call.caller) {
            e.2.push(format!("{} x {}", call.count, call.callee));
        }
        if let Some(e) = data.get_mut(&call.callee) {
            e.1.push(format!("{} x {}", call.count, call.caller));
        }
    }
    let title = match kind {
        Kind::Structural => "Structural profiling blueprint",
        Kind::Behavioral => "Behavioral profiling blueprint",
    };
    let text = to_text(bp);
    let summary: Vec<&str> = text.lines().take(3).collect();
    page(title, bp, &summary, picture, &js(&data))
}

fn page(title: &str, bp: &Blueprint, summary: &[&str], picture: &str, data: &str) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1em; }}
#legend span {{ display: inline-block; margin-right: 1.5em; }}
#legend i {{ display: inline-block; width: 14px; height: 14px; vertical-align: middle; margin-right: 4px; border: 1px solid #333; }}
#view {{ display: flex; gap: 1em; align-items: flex-start; }}
#picture {{ overflow: auto; border: 1px solid #ccc; max-width: 75vw; max-height: 85vh; }}
#details {{ min-width: 22em; }}
#details pre {{ background: #fafafa; padding: .5em; white-space: pre-wrap; }}
rect.method {{ cursor: pointer; }}
rect.method.selected {{ stroke: #d00000; stroke-width: 3; }}
</style></head>
<body>
<h1>{title}</h1>
<pre id="summary">{summary}</pre>
<div id="legend"><span>height: time (inclusive)</span><span>width: executions (log)</span><span><i style="background:{GRAY}"></i>every call answered the same object: cache it?</span><span><i style="background:#fff;border:2px solid {PURE}"></i>never changed its receiver</span><span><i style="background:#fff;border:1px dashed #bbb"></i>never ran</span></div>
<div id="view"><div id="picture">{picture}</div>
<div id="details"><h2 id="method">Point at a method</h2><pre id="info"></pre><h3>Called by</h3><pre id="callers"></pre><h3>Calls</h3><pre id="callees"></pre></div></div>
<script>
var methods = {data};
var selected = null;
function show(name) {{
  var m = methods[name];
  if (!m) return;
  document.getElementById('method').textContent = name;
  document.getElementById('info').textContent = m[0];
  document.getElementById('callers').textContent = m[1].length ? m[1].join('\n') : 'none seen';
  document.getElementById('callees').textContent = m[2].length ? m[2].join('\n') : 'none seen';
}}
var boxes = document.querySelectorAll('rect.method');
for (var i = 0; i < boxes.length; i++) {{
  boxes[i].addEventListener('mouseover', function (e) {{ show(e.target.getAttribute('data-method')); }});
  boxes[i].addEventListener('click', function (e) {{
    if (selected) selected.classList.remove('selected');
    selected = e.target;
    selected.classList.add('selected');
    show(e.target.getAttribute('data-method'));
  }});
}}
document.body.setAttribute('data-methods', String(boxes.length));
document.body.setAttribute('data-page-ready', 'true');
</script>
</body></html>
"#,
        title = escape_xml(&format!("{title}: {}", bp.command)),
        summary = escape_xml(&summary.join("\n")),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::model::tests::sample;

    #[test]
    fn the_page_embeds_the_picture_and_the_calls() {
        let mut bp = sample();
        bp.classes[0].name = "Sh</script>ape".into();
        for kind in [Kind::Structural, Kind::Behavioral] {
            let page = to_string(&bp, kind);
            assert!(page.starts_with("<!DOCTYPE html>"));
            assert_eq!(
                page.matches("class=\"method\"").count(),
                if kind == Kind::Structural { 5 } else { 4 }
            );
            assert!(page.contains("\"Square>>side\":["), "{page}");
            assert!(page.contains("\"4 x Square>>area\""), "{page}");
            // Only the page's own script element closes.
            assert_eq!(page.matches("</script>").count(), 1, "{page}");
        }
    }
}
