//! The blueprint page: the render kit's picture page
//! ([`crate::render::html::picture_page`]) around the picture
//! ([`super::svg`]), with its legend, the summary and, for the method under
//! the pointer (or clicked), its numbers and calls. No network, no other file.
//!
//! Contract: the page counts its method boxes (`data-methods` on `<body>`)
//! and is marked ready (`data-page-ready="true"`) once its script has wired
//! every method box (tests open it in headless Chromium).

use std::collections::BTreeMap;

use crate::render::html::{PicturePage, picture_page};
use crate::render::script_json;

use super::model::{Blueprint, Kind, to_text};
use super::svg::{self, GRAY, PURE};

/// The details panel: the method, its numbers, its callers and callees.
const PANEL: &str = "<h2 id=\"method\">Point at a method</h2><pre id=\"info\"></pre>\
<h3>Called by</h3><pre id=\"callers\"></pre><h3>Calls</h3><pre id=\"callees\"></pre>";

/// Showing a method: `m` is `[tooltip, callers, callees]`.
const SHOW: &str = "  document.getElementById('info').textContent = m[0];
  document.getElementById('callers').textContent = m[1].length ? m[1].join('\\n') : 'none seen';
  document.getElementById('callees').textContent = m[2].length ? m[2].join('\\n') : 'none seen';";

/// The page of the blueprint of the given kind.
pub fn to_string(bp: &Blueprint, kind: Kind) -> String {
    let picture = svg::to_string(bp, kind);
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
    let legend = format!(
        "<span>height: time (inclusive)</span><span>width: executions (log)</span>\
<span><i style=\"background:{GRAY}\"></i>every call answered the same object, and it sends messages: cache it?</span>\
<span><i style=\"background:#fff;border:2px solid {PURE}\"></i>never changed its receiver</span>\
<span><i style=\"background:#fff;border:1px dashed #bbb\"></i>never ran</span>"
    );
    picture_page(&PicturePage {
        title: &format!("{title}: {}", bp.command),
        summary: &summary.join("\n"),
        legend: &legend,
        picture: &picture,
        panel: PANEL,
        style: "",
        methods: &script_json(&data),
        show: SHOW,
        hover: true,
    })
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
