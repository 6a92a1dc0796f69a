//! The HTML page shell every report page is built in, and what pages share:
//! the base style, tables that sort when a header is clicked, and the
//! picture page of the blueprints (a picture of method boxes beside a panel
//! that shows the method clicked).
//!
//! Contract: a page is one self-contained HTML5 file (no external resource,
//! no network): `<!DOCTYPE html>`, the escaped title in `<title>` and `<h1>`,
//! the [`BASE_STYLE`] then the page's own, the body, then one `<script>`: the
//! sortable tables' wiring ([`SORTABLE_SCRIPT`], for every `table.sortable`),
//! the page's own script, and last `data-page-ready="true"` set on `<html>`
//! (so a page whose script failed is never marked ready; tests open pages in
//! headless Chromium and look for it). Only that `<script>` element closes
//! (page data goes through [`super::script_json`]).

use std::fmt::Display;
use std::fmt::Write as _;

use super::{escape_xml, svg};

/// The style every page starts with: fonts, headings, tables, numbers.
pub const BASE_STYLE: &str = "body{font-family:Verdana,Helvetica,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
table{border-collapse:collapse;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em}\
th{background:#eee}table.sortable th{cursor:pointer;user-select:none}\
td.n{text-align:right;font-variant-numeric:tabular-nums}";

/// Every `table.sortable` sorts by a column when its header is clicked (again:
/// the other way); a cell sorts by its `data-v` when it has one (numbers),
/// else by its text; `th[data-numeric="true"]` compares numbers.
pub const SORTABLE_SCRIPT: &str = r#"(function () {
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    var body = table.tBodies[0];
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var numeric = th.getAttribute('data-numeric') === 'true';
        var down = th.getAttribute('data-sorted') !== 'down';
        Array.prototype.forEach.call(heads, function (c) { c.removeAttribute('data-sorted'); });
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
  });
})();"#;

/// A page titled `title` (escaped here) with the extra `style`, the `body`
/// (HTML, written as it is, after the `<h1>`) and the page's own `script`
/// (may be empty).
pub fn page(title: &str, style: &str, body: &str, script: &str) -> String {
    let title = escape_xml(title);
    let mut s = String::with_capacity(body.len() + script.len() + 4096);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
<style>{BASE_STYLE}{style}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    s.push_str(body);
    let _ = write!(
        s,
        "<script>{SORTABLE_SCRIPT}\n{script}\ndocument.documentElement.setAttribute('data-page-ready', 'true');</script>\n</body>\n</html>\n"
    );
    s
}

/// One column of a sortable table: its label (escaped here) and whether it
/// holds numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column<'a> {
    /// The header's text.
    pub label: &'a str,
    /// Compare as numbers.
    pub numeric: bool,
}

impl<'a> Column<'a> {
    /// A text column.
    pub fn text(label: &'a str) -> Column<'a> {
        Column {
            label,
            numeric: false,
        }
    }

    /// A numeric column.
    pub fn number(label: &'a str) -> Column<'a> {
        Column {
            label,
            numeric: true,
        }
    }
}

/// Start a sortable table with the id `id` and these columns: the start tag,
/// the header row and `<tbody>` (then a newline). Rows follow; close it with
/// [`table_end`].
pub fn table_start(out: &mut String, id: &str, columns: &[Column<'_>]) {
    let _ = write!(
        out,
        "<table id=\"{}\" class=\"sortable\"><thead><tr>",
        escape_xml(id)
    );
    for c in columns {
        if c.numeric {
            out.push_str("<th data-numeric=\"true\">");
        } else {
            out.push_str("<th>");
        }
        out.push_str(&escape_xml(c.label));
        out.push_str("</th>");
    }
    out.push_str("</tr></thead><tbody>\n");
}

/// Close a table begun with [`table_start`] (and a newline).
pub fn table_end(out: &mut String) {
    out.push_str("</tbody></table>\n");
}

/// A numeric cell showing `text` (escaped) and sorting by `value`.
pub fn number_cell(value: impl Display, text: &str) -> String {
    format!(
        "<td class=\"n\" data-v=\"{value}\">{}</td>",
        escape_xml(text)
    )
}

/// The style of a picture page ([`picture_page`]).
const PICTURE_STYLE: &str = "#legend span{display:inline-block;margin-right:1.5em}\
#legend i{display:inline-block;width:14px;height:14px;vertical-align:middle;margin-right:4px;border:1px solid #555}\
#view{display:flex;gap:1em;align-items:flex-start}\
#picture{overflow:auto;border:1px solid #ccc;max-width:75vw;max-height:85vh}\
#picture.fit svg{max-width:100%;height:auto}#fit{margin:.4em 0;font:inherit}\
#details{min-width:24em}#details pre{background:#fafafa;padding:.5em;white-space:pre-wrap}\
rect.method{cursor:pointer}rect.method.selected{stroke:#ff8c00;stroke-width:3}";

/// A page around a picture of method boxes (`rect.method` with
/// `data-method`, [`svg::method_box`]): a summary, a legend, the picture and
/// a details panel that shows the method clicked (or pointed at).
#[derive(Debug, Clone, Copy)]
pub struct PicturePage<'a> {
    /// The page's title.
    pub title: &'a str,
    /// A few lines of text above the picture.
    pub summary: &'a str,
    /// The legend's entries (HTML, written as they are).
    pub legend: &'a str,
    /// The picture, an SVG document (its XML declaration is dropped).
    pub picture: &'a str,
    /// The details panel (HTML, written as it is); it holds an element with
    /// the id `method`, which shows the method's name.
    pub panel: &'a str,
    /// The page's own style (after the picture page's).
    pub style: &'a str,
    /// Per method name, its data: a JSON object ([`super::script_json`]).
    pub methods: &'a str,
    /// JavaScript run to show a method: `name` is its name, `m` its data.
    pub show: &'a str,
    /// Show a method when the pointer is over it, not only when clicked.
    pub hover: bool,
}

/// The picture page; its script also sets `data-methods` (the number of
/// method boxes) on `<body>`. The picture opens scaled to the width of its
/// frame, so that the whole of it shows (a wide call graph's root is not cut
/// off at the right edge); a button switches to its actual size (scrolled).
pub fn picture_page(p: &PicturePage<'_>) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "<pre id=\"summary\">{}</pre>\n<div id=\"legend\">{}</div>\n<button id=\"fit\" type=\"button\">Actual size</button>\n<div id=\"view\"><div id=\"picture\" class=\"fit\">{}</div>\n<div id=\"details\">{}</div></div>\n",
        escape_xml(p.summary),
        p.legend,
        svg::inline(p.picture),
        p.panel
    );
    let hover = if p.hover {
        "  boxes[i].addEventListener('mouseover', function (e) { show(e.target.getAttribute('data-method')); });\n"
    } else {
        ""
    };
    let script = format!(
        "var methods = {};\nvar selected = null;\nfunction show(name) {{\n  var m = methods[name];\n  if (!m) return;\n  document.getElementById('method').textContent = name;\n{}\n}}\n\
var boxes = document.querySelectorAll('rect.method');\nfor (var i = 0; i < boxes.length; i++) {{\n{hover}\
  boxes[i].addEventListener('click', function (e) {{\n    if (selected) selected.classList.remove('selected');\n    selected = e.target;\n    selected.classList.add('selected');\n    show(e.target.getAttribute('data-method'));\n  }});\n}}\n\
var fit = document.getElementById('fit');\nfit.addEventListener('click', function () {{\n  var on = document.getElementById('picture').classList.toggle('fit');\n  fit.textContent = on ? 'Actual size' : 'Fit to width';\n}});\n\
document.body.setAttribute('data-methods', String(boxes.length));",
        p.methods, p.show
    );
    page(
        p.title,
        &format!("{PICTURE_STYLE}{}", p.style),
        &body,
        &script,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_has_the_shell_the_body_and_one_script() {
        let p = page("A <b>", "p{}", "<p>x</p>\n", "var x = 1;");
        assert!(p.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(p.contains("<title>A &lt;b&gt;</title>"));
        assert!(p.contains("<h1>A &lt;b&gt;</h1>\n<p>x</p>\n<script>"));
        assert!(p.contains(&format!("<style>{BASE_STYLE}p{{}}</style>")));
        assert_eq!(p.matches("</script>").count(), 1);
        assert!(p.contains("var x = 1;\ndocument.documentElement.setAttribute('data-page-ready'"));
        assert!(p.ends_with("</html>\n"));
    }

    #[test]
    fn sortable_tables() {
        let mut s = String::new();
        table_start(&mut s, "t", &[Column::number("#"), Column::text("A&B")]);
        s.push_str(&format!(
            "<tr>{}<td>x</td></tr>\n",
            number_cell(1.5, "1.5 <s>")
        ));
        table_end(&mut s);
        assert_eq!(
            s,
            "<table id=\"t\" class=\"sortable\"><thead><tr><th data-numeric=\"true\">#</th><th>A&amp;B</th></tr></thead><tbody>\n\
<tr><td class=\"n\" data-v=\"1.5\">1.5 &lt;s&gt;</td><td>x</td></tr>\n</tbody></table>\n"
        );
    }

    #[test]
    fn a_picture_page_wires_the_method_boxes() {
        let mut picture = String::from("<?xml version=\"1.0\"?>\n<svg>");
        svg::method_box(&mut picture, "A>>b", (0.0, 0.0, 1.0, 1.0), "", "tip");
        picture.push_str("</svg>");
        let p = picture_page(&PicturePage {
            title: "T",
            summary: "sum <1>",
            legend: "<span>l</span>",
            picture: &picture,
            panel: "<h2 id=\"method\"></h2>",
            style: "",
            methods: &super::super::script_json(&[("A>>b", 1)]),
            show: "  m;",
            hover: true,
        });
        assert!(p.contains("<pre id=\"summary\">sum &lt;1&gt;</pre>"));
        assert!(!p.contains("<?xml"));
        assert!(p.contains("data-method=\"A&gt;&gt;b\""));
        assert!(p.contains("'mouseover'"));
        assert!(p.contains("data-methods"));
        assert_eq!(p.matches("</script>").count(), 1);
    }
}
