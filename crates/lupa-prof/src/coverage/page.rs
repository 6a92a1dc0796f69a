//! The coverage page: the render kit's picture page
//! ([`crate::render::html::picture_page`]) around the blueprint picture, with
//! its legend, the summary and a source view (clicking a method box shows its
//! source, covered lines marked when the VM measured them, and its numbers).
//! Sources come with the model ([`Coverage::sources`]); the page needs no
//! network and no other file.
//!
//! Contract: the page is marked ready (`data-page-ready="true"`) and counts
//! its method boxes (`data-methods` on `<body>`) once its script has wired
//! every method box (tests open it in headless Chromium).

use std::fmt::Write as _;

use crate::render::html::{PicturePage, picture_page};
use crate::render::script_json;

use super::{Coverage, blueprint, text};

/// The legend of the picture.
const LEGEND: &str = "<span><i style=\"background:#fff\"></i>never executed (red border)</span>\
<span><i style=\"background:#bbb\"></i>few executions</span><span><i style=\"background:#222\"></i>many executions</span>\
<span>height: lines of code</span><span>width: distinct receivers (log)</span><span>superclass above subclass</span>";

/// The details panel: the method, its numbers, its source.
const PANEL: &str =
    "<h2 id=\"method\">Click a method</h2><p id=\"info\"></p><pre id=\"code\"></pre>";

/// Showing a method: its numbers, and its source line by line, covered
/// lines green and missed ones red.
const SHOW: &str = "  document.getElementById('info').textContent = m.info;
  var code = document.getElementById('code');
  code.textContent = '';
  m.src.split('\\n').forEach(function (text, i) {
    var line = m.first + i;
    var div = document.createElement('div');
    div.textContent = line + '  ' + text;
    if (m.hit.indexOf(line) >= 0) div.className = 'hit';
    if (m.missed.indexOf(line) >= 0) div.className = 'missed';
    code.appendChild(div);
  });";

/// The page.
pub fn to_string(coverage: &Coverage) -> String {
    let svg = blueprint::to_string(coverage);
    // Per method: source, first line, covered and missed lines, numbers.
    let mut data = String::from("{");
    for (i, (c, m)) in coverage.methods().enumerate() {
        let name = m.name_in(&c.name);
        let (src, first) = coverage
            .sources
            .get(&name)
            .map(|s| (s.text.as_str(), s.first_line))
            .unwrap_or_default();
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
            script_json(&name),
            script_json(src),
            hit.join(","),
            missed.join(","),
            script_json(&format!(
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
    let summary = text::to_string(coverage)
        .lines()
        .take(5)
        .collect::<Vec<_>>()
        .join("\n");
    picture_page(&PicturePage {
        title: &format!("Coverage: {}", coverage.command),
        summary: &summary,
        legend: LEGEND,
        picture: &svg,
        panel: PANEL,
        style: ".hit{background:#dff5df}.missed{background:#f8d8d8}",
        methods: &data,
        show: SHOW,
        hover: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::MethodSource;
    use crate::coverage::tests::sample;

    #[test]
    fn the_page_embeds_the_picture_and_the_sources() {
        let mut c = sample();
        c.sources.insert(
            "Square>>area".to_string(),
            MethodSource {
                text: "area = ( ^side * side )\n</script>".to_string(),
                first_line: 4,
            },
        );
        let page = to_string(&c);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert_eq!(page.matches("class=\"method\"").count(), 4);
        assert!(
            page.contains("\"Square>>area\":{\"src\":\"area = ( ^side * side )\\n<\\/script>\"")
        );
        // Only the page's own script element closes.
        assert_eq!(page.matches("</script>").count(), 1);
    }
}
