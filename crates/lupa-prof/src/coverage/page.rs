//! The coverage page: one self-contained HTML file with the blueprint
//! picture, its legend, the summary and a source view (clicking a method box
//! shows its source, covered lines marked when the VM measured them, and its
//! numbers). Sources are given by the caller (method name -> source text and
//! first line); the page needs no network and no other file.
//!
//! Contract: the page's script sets `data-page-ready="true"` on `<body>`
//! when it has wired every method box (tests open it in headless Chromium).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::flamegraph::escape_xml;

use super::{Coverage, blueprint, text};

/// A JSON string literal safe inside a `<script>` element.
fn js(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_else(|_| "\"\"".to_string())
        .replace("</", "<\\/")
}

/// The page; `sources` maps `Class>>selector` to the method's source and its
/// first line.
pub fn to_string(coverage: &Coverage, sources: &BTreeMap<String, (String, u32)>) -> String {
    let svg = blueprint::to_string(coverage);
    let svg = svg
        .split_once("?>")
        .map(|(_, s)| s.trim_start())
        .unwrap_or(&svg);
    // Per method: source, first line, covered and missed lines, numbers.
    let mut data = String::from("{");
    for (i, (c, m)) in coverage.methods().enumerate() {
        let name = m.name_in(&c.name);
        let (src, first) = sources.get(&name).cloned().unwrap_or_default();
        let hit: Vec<String> = m
            .lines
            .iter()
            .filter(|l| l.hits > 0)
            .map(|l| l.line.to_string())
            .collect();
        let missed: Vec<String> = m
            .lines
            .iter()
            .filter(|l| l.hits == 0)
            .map(|l| l.line.to_string())
            .collect();
        if i > 0 {
            data.push(',');
        }
        let _ = write!(
            data,
            "{}:{{\"src\":{},\"first\":{first},\"hit\":[{}],\"missed\":[{}],\"info\":{}}}",
            js(&name),
            js(&src),
            hit.join(","),
            missed.join(","),
            js(&format!(
                "{} executions, {}{} receivers, {} lines, tests: {}",
                m.executions,
                if m.receivers_estimated { "~" } else { "" },
                m.receivers,
                m.lines_of_code,
                if m.tests.is_empty() {
                    "none".to_string()
                } else {
                    m.tests.join(", ")
                }
            ))
        );
    }
    data.push('}');
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1em; }}
#legend span {{ display: inline-block; margin-right: 1.5em; }}
#legend i {{ display: inline-block; width: 14px; height: 14px; vertical-align: middle; margin-right: 4px; border: 1px solid #555; }}
#view {{ display: flex; gap: 1em; align-items: flex-start; }}
#picture {{ overflow: auto; border: 1px solid #ccc; }}
#source {{ min-width: 30em; }}
#source pre {{ background: #fafafa; padding: .5em; }}
.hit {{ background: #dff5df; }} .missed {{ background: #f8d8d8; }}
rect.method {{ cursor: pointer; }}
</style></head>
<body>
<h1>{title}</h1>
<pre id="summary">{summary}</pre>
<div id="legend"><span><i style="background:#fff"></i>never executed (red border)</span><span><i style="background:#bbb"></i>few executions</span><span><i style="background:#222"></i>many executions</span><span>height: lines of code</span><span>width: distinct receivers (log)</span><span>superclass above subclass</span></div>
<div id="view"><div id="picture">{svg}</div>
<div id="source"><h2 id="method">Click a method</h2><p id="info"></p><pre id="code"></pre></div></div>
<script>
var methods = {data};
function show(name) {{
  var m = methods[name];
  if (!m) return;
  document.getElementById('method').textContent = name;
  document.getElementById('info').textContent = m.info;
  var code = document.getElementById('code');
  code.textContent = '';
  m.src.split('\n').forEach(function (text, i) {{
    var line = m.first + i;
    var div = document.createElement('div');
    div.textContent = line + '  ' + text;
    if (m.hit.indexOf(line) >= 0) div.className = 'hit';
    if (m.missed.indexOf(line) >= 0) div.className = 'missed';
    code.appendChild(div);
  }});
}}
var boxes = document.querySelectorAll('rect.method');
for (var i = 0; i < boxes.length; i++) {{
  boxes[i].addEventListener('click', function (e) {{ show(e.target.getAttribute('data-method')); }});
}}
document.body.setAttribute('data-methods', String(boxes.length));
document.body.setAttribute('data-page-ready', 'true');
</script>
</body></html>
"#,
        title = escape_xml(&format!("Coverage: {}", coverage.command)),
        summary = escape_xml(
            &text::to_string(coverage)
                .lines()
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        ),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::tests::sample;

    #[test]
    fn the_page_embeds_the_picture_and_the_sources() {
        let c = sample();
        let mut sources = BTreeMap::new();
        sources.insert(
            "Square>>area".to_string(),
            ("area = ( ^side * side )\n</script>".to_string(), 4),
        );
        let page = to_string(&c, &sources);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert_eq!(page.matches("class=\"method\"").count(), 4);
        assert!(
            page.contains("\"Square>>area\":{\"src\":\"area = ( ^side * side )\\n<\\/script>\"")
        );
        // Only the page's own script element closes.
        assert_eq!(page.matches("</script>").count(), 1);
    }
}
