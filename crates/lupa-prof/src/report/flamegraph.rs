//! A standalone flame graph SVG, written by hand: no external resources; opens
//! in any browser or SVG viewer. A small self-contained script (written here)
//! makes it interactive in a browser, like the flame graphs people know:
//! click a frame to zoom into it (its ancestors stay, dimmed; frames outside
//! it hide), "Reset zoom" or a click on "all" to go back, "Search" (or
//! Ctrl-F) highlights the frames whose name matches a regular expression
//! (saturated magenta, while every other frame turns grey, so that a match
//! never reads as a package colour: those are pastels) and shows the share of
//! the total they account for. Without script the image
//! is the same, static.
//!
//! The bottom frame ("all") is the grand total; each calling context is a
//! rectangle above its caller, as wide as its total value. Siblings are ordered
//! by total (descending), then name. Hovering a frame shows its `<title>`: name,
//! total, percentage, self value, calls and category; frames are coloured by
//! category (package; hues spread by the golden angle over the profile's sorted
//! categories), with a legend at the bottom. Frames narrower than
//! [`FlameGraphOptions::min_width`] pixels are left out with their subtrees.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{group_digits, percent};
use crate::profile::{NodeId, Profile};
use crate::render::{escape_xml, svg};

/// Options of [`write()`].
#[derive(Debug, Clone, PartialEq)]
pub struct FlameGraphOptions {
    /// Title at the top of the image.
    pub title: String,
    /// Image width in pixels.
    pub width: f64,
    /// Height of one frame in pixels.
    pub frame_height: f64,
    /// Font size of the labels in pixels.
    pub font_size: f64,
    /// Frames narrower than this (pixels) are not drawn.
    pub min_width: f64,
}

impl Default for FlameGraphOptions {
    fn default() -> Self {
        FlameGraphOptions {
            title: "Flame Graph".to_string(),
            width: 1200.0,
            frame_height: 16.0,
            font_size: 12.0,
            min_width: 0.1,
        }
    }
}

/// FNV-1a, for stable colours.
fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// HSL (h in degrees, s and l in 0..1) to 8-bit RGB.
fn hsl_to_rgb(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = (h.rem_euclid(360.0)) / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let to = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (to(r), to(g), to(b))
}

/// The colour of the category with index `cat` (in the profile's sorted list of
/// categories: golden-angle hues keep neighbours apart), varied slightly by
/// method name.
fn colour(cat: usize, name: &str) -> String {
    let hue = 20.0 + cat as f64 * 137.507_764;
    let jitter = (fnv1a(name) % 1000) as f64 / 1000.0;
    let (r, g, b) = hsl_to_rgb(hue, 0.55 + 0.2 * jitter, 0.62 + 0.1 * jitter);
    format!("rgb({r},{g},{b})")
}

fn category_label(category: &str) -> &str {
    if category.is_empty() {
        "(no category)"
    } else {
        category
    }
}

fn calls(n: u64) -> String {
    if n == 1 {
        "1 call".to_string()
    } else {
        format!("{} calls", group_digits(n))
    }
}

struct Frame {
    node: Option<NodeId>,
    x: f64,
    width: f64,
    depth: usize,
}

/// Write the SVG.
pub fn write<W: Write>(
    profile: &Profile,
    options: &FlameGraphOptions,
    w: &mut W,
) -> io::Result<()> {
    w.write_all(to_string(profile, options).as_bytes())
}

/// How a colouring hook ([`to_string_styled`]) draws one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameStyle {
    /// The frame's fill (an SVG colour).
    pub fill: String,
    /// Appended to the frame's hover title (after `; `).
    pub note: String,
}

/// The SVG as a string.
pub fn to_string(profile: &Profile, options: &FlameGraphOptions) -> String {
    to_string_styled(profile, options, None)
}

/// The SVG with frames coloured by `style` instead of by category (the
/// differential flame graph of `lupa history diff`): `style(node)` answers a
/// frame's fill and a note for its title (`None`: the category colour).
/// With a hook the category legend is left out.
pub fn to_string_styled(
    profile: &Profile,
    options: &FlameGraphOptions,
    style: Option<&dyn Fn(NodeId) -> Option<FrameStyle>>,
) -> String {
    let view = super::OrderedTree::of(profile);
    let (totals, grand) = (&view.totals, view.grand);
    let pad = 10.0;
    let width = options.width.max(100.0);
    let fh = options.frame_height.max(4.0);
    let fs = options.font_size.max(4.0);
    let scale = if grand == 0 {
        0.0
    } else {
        (width - 2.0 * pad) / grand as f64
    };

    // Lay out the frames: "all" at depth 0, then the tree.
    let mut frames = vec![Frame {
        node: None,
        x: pad,
        width: width - 2.0 * pad,
        depth: 0,
    }];
    let mut stack: Vec<(NodeId, f64, usize)> = Vec::new();
    let mut x = pad;
    for &n in &view.top {
        stack.push((n, x, 1));
        x += totals[n.index()] as f64 * scale;
    }
    stack.reverse();
    let mut max_depth = 0;
    let mut categories: Vec<&str> = Vec::new();
    while let Some((n, x, depth)) = stack.pop() {
        let wd = totals[n.index()] as f64 * scale;
        if wd < options.min_width || totals[n.index()] == 0 {
            continue;
        }
        frames.push(Frame {
            node: Some(n),
            x,
            width: wd,
            depth,
        });
        max_depth = max_depth.max(depth);
        categories.push(profile.method_of(n).category.as_str());
        let mut cx = x;
        let mut next = Vec::new();
        for c in view.children(n) {
            next.push((c, cx, depth + 1));
            cx += totals[c.index()] as f64 * scale;
        }
        stack.extend(next.into_iter().rev());
    }
    categories.sort_unstable();
    categories.dedup();
    let cat_index = |c: &str| categories.binary_search(&c).unwrap_or(0);

    // Legend rows.
    let char_w = fs * 0.6;
    let mut legend: Vec<(f64, usize, &str)> = Vec::new(); // (x, row, category)
    let (mut lx, mut row) = (pad, 0usize);
    for &c in &categories {
        let label = category_label(c);
        let item_w = 18.0 + label.chars().count() as f64 * char_w + 16.0;
        if lx + item_w > width - pad && lx > pad {
            lx = pad;
            row += 1;
        }
        legend.push((lx, row, c));
        lx += item_w;
    }
    if style.is_some() {
        legend.clear();
    }
    let legend_rows = if legend.is_empty() { 0 } else { row + 1 };

    let header = 52.0;
    let graph_h = (max_depth + 1) as f64 * fh;
    let legend_top = header + graph_h + 12.0;
    let height = legend_top + legend_rows as f64 * (fh + 4.0) + pad;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<?xml version="1.0" encoding="UTF-8" standalone="no"?>"#
    );
    svg::open(&mut s, " version=\"1.1\"", &fmt(width), &fmt(height), "");
    let _ = writeln!(
        s,
        "<style>text {{ font-family: Verdana, Helvetica, sans-serif; font-size: {}px; fill: #000; }} \
         .title {{ font-size: {}px; }} .f:hover rect {{ stroke: #000; stroke-width: 1; }}</style>",
        fmt(fs),
        fmt(fs + 5.0)
    );
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{}" height="{}" fill="#f8f8f8"/>"##,
        fmt(width),
        fmt(height)
    );
    let _ = writeln!(
        s,
        r#"<text class="title" x="{}" y="24" text-anchor="middle">{}</text>"#,
        fmt(width / 2.0),
        escape_xml(&options.title)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="44">{}: {} {} in total; hover a frame for details</text>"#,
        fmt(pad),
        escape_xml(profile.metric.name()),
        group_digits(grand),
        escape_xml(profile.metric.unit())
    );
    let unit = escape_xml(profile.metric.unit());
    for f in &frames {
        let y = header + (max_depth - f.depth) as f64 * fh;
        let (label, title, fill) = match f.node {
            None => (
                "all".to_string(),
                format!("all - {} {unit} (100.00%)", group_digits(grand)),
                "rgb(200,200,200)".to_string(),
            ),
            Some(n) => {
                let m = profile.method_of(n);
                let node = &profile.nodes[n];
                // The name ends with a colon for keyword selectors
                // (`System>>initialize:`): a dash, not a colon, follows it.
                let mut title = format!(
                    "{} - {} {unit} ({:.2}%), self {}, {}, category {}",
                    escape_xml(&m.name),
                    group_digits(totals[n.index()]),
                    percent(totals[n.index()], grand),
                    group_digits(node.self_value),
                    calls(node.activations),
                    escape_xml(category_label(&m.category)),
                );
                let fill = match style.and_then(|f| f(n)) {
                    Some(st) => {
                        title.push_str("; ");
                        title.push_str(&escape_xml(&st.note));
                        st.fill
                    }
                    None => colour(cat_index(&m.category), &m.name),
                };
                (m.name.clone(), title, fill)
            }
        };
        let total = f.node.map(|n| totals[n.index()]).unwrap_or(grand);
        let _ = write!(
            s,
            r#"<g class="f" data-n="{}" data-d="{}" data-v="{}"><title>{title}</title><rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" rx="2" ry="2"/>"#,
            escape_xml(&label),
            f.depth,
            total,
            fmt(f.x),
            fmt(y),
            fmt(f.width),
            fmt(fh - 1.0),
        );
        let fit = ((f.width - 6.0) / char_w).floor();
        if fit >= 3.0 {
            let fit = fit as usize;
            let text = if label.chars().count() <= fit {
                label
            } else {
                let mut t: String = label.chars().take(fit - 2).collect();
                t.push_str("..");
                t
            };
            let _ = write!(
                s,
                r#"<text x="{}" y="{}">{}</text>"#,
                fmt(f.x + 3.0),
                fmt(y + fh - 4.5),
                escape_xml(&text)
            );
        }
        s.push_str("</g>\n");
    }
    for (lx, row, c) in legend {
        let y = legend_top + row as f64 * (fh + 4.0);
        let _ = writeln!(
            s,
            r#"<g><rect x="{}" y="{}" width="14" height="{}" fill="{}"/><text x="{}" y="{}">{}</text></g>"#,
            fmt(lx),
            fmt(y),
            fmt(fh - 2.0),
            colour(cat_index(c), ""),
            fmt(lx + 18.0),
            fmt(y + fh - 5.0),
            escape_xml(category_label(c))
        );
    }
    let _ = writeln!(
        s,
        r#"<text id="reset" x="{}" y="24" style="cursor:pointer;opacity:0">Reset zoom</text><text id="search" x="{}" y="24" text-anchor="end" style="cursor:pointer">Search</text><text id="matched" x="{}" y="44" text-anchor="end"></text>"#,
        fmt(pad),
        fmt(width - pad),
        fmt(width - pad)
    );
    let _ = writeln!(
        s,
        "<script type=\"text/ecmascript\"><![CDATA[\nvar PAD = {}, WIDTH = {}, CHAR_W = {}, GRAND = {};\n{}]]></script>",
        fmt(pad),
        fmt(width),
        fmt(char_w),
        grand,
        SCRIPT
    );
    s.push_str("</svg>\n");
    s
}

/// The interactive part (zoom, reset, search), self-contained. Frames are
/// `<g class="f">` with the name (`data-n`), depth (`data-d`) and total
/// (`data-v`); their rectangle's original geometry is kept in `data-x`/`data-w`
/// on first use.
const SCRIPT: &str = r#"(function () {
  var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
  var reset = document.getElementById('reset');
  var search = document.getElementById('search');
  var SEARCH_HIT = 'rgb(230,0,230)', SEARCH_MISS = 'rgb(225,225,225)';
  var matched = document.getElementById('matched');
  function rect(g) { return g.querySelector('rect'); }
  function orig(g) {
    var r = rect(g);
    if (!r.hasAttribute('data-x')) {
      r.setAttribute('data-x', r.getAttribute('x'));
      r.setAttribute('data-w', r.getAttribute('width'));
    }
    return { x: parseFloat(r.getAttribute('data-x')), w: parseFloat(r.getAttribute('data-w')) };
  }
  function label(g, w) {
    var t = g.querySelector('text');
    var name = g.getAttribute('data-n');
    var fit = Math.floor((w - 6) / CHAR_W);
    if (!t) {
      if (fit < 3) return;
      t = document.createElementNS('http://www.w3.org/2000/svg', 'text');
      var r = rect(g);
      t.setAttribute('y', parseFloat(r.getAttribute('y')) + parseFloat(r.getAttribute('height')) - 3.5);
      g.appendChild(t);
    }
    t.setAttribute('x', parseFloat(rect(g).getAttribute('x')) + 3);
    t.textContent = fit < 3 ? '' : (name.length <= fit ? name : name.substring(0, fit - 2) + '..');
  }
  function place(g, x, w, visible, dim) {
    var r = rect(g);
    r.setAttribute('x', x);
    r.setAttribute('width', Math.max(w, 0));
    g.style.display = visible ? '' : 'none';
    g.style.opacity = dim ? '0.5' : '';
    if (visible) label(g, w);
  }
  function zoom(target) {
    var t = orig(target), d = +target.getAttribute('data-d');
    var scale = (WIDTH - 2 * PAD) / t.w;
    frames.forEach(function (g) {
      var o = orig(g), gd = +g.getAttribute('data-d');
      var inside = o.x >= t.x - 1e-6 && o.x + o.w <= t.x + t.w + 1e-6;
      var below = o.x <= t.x + 1e-6 && o.x + o.w >= t.x + t.w - 1e-6 && gd < d;
      if (gd >= d && inside) place(g, PAD + (o.x - t.x) * scale, o.w * scale, true, false);
      else if (below) place(g, PAD, WIDTH - 2 * PAD, true, true);
      else place(g, o.x, o.w, false, false);
    });
    reset.style.opacity = d > 0 ? '1' : '0';
  }
  function unzoom() {
    frames.forEach(function (g) { var o = orig(g); place(g, o.x, o.w, true, false); });
    reset.style.opacity = '0';
  }
  function find(re) {
    var sum = 0, spans = [];
    frames.forEach(function (g) {
      var r = rect(g);
      if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));
      var hit = re !== null && +g.getAttribute('data-d') > 0 && re.test(g.getAttribute('data-n'));
      r.setAttribute('fill', hit ? SEARCH_HIT : re === null ? r.getAttribute('data-fill') : SEARCH_MISS);
      if (hit) {
        var o = orig(g);
        var covered = spans.some(function (s) { return o.x >= s[0] - 1e-6 && o.x + o.w <= s[1] + 1e-6; });
        if (!covered) { spans.push([o.x, o.x + o.w]); sum += +g.getAttribute('data-v'); }
      }
    });
    matched.textContent = re === null ? '' : 'Matched: ' + (GRAND ? (100 * sum / GRAND).toFixed(2) : '0.00') + '%';
    search.textContent = re === null ? 'Search' : 'Reset search';
  }
  frames.forEach(function (g) {
    g.style.cursor = 'pointer';
    g.addEventListener('click', function () {
      if (+g.getAttribute('data-d') === 0) unzoom(); else zoom(g);
    });
  });
  reset.addEventListener('click', unzoom);
  function ask() {
    if (search.textContent !== 'Search') { find(null); return; }
    var term = window.prompt('Search for (regular expression):', '');
    if (term) {
      try { find(new RegExp(term)); } catch (e) { matched.textContent = 'Bad expression'; }
    }
  }
  search.addEventListener('click', ask);
  window.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); ask(); }
  });
  document.documentElement.setAttribute('data-ready', 'true');
})();
"#;

/// Coordinates with at most two decimals, trailing zeros trimmed.
fn fmt(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;
    use crate::profile::{MethodInfo, Metric, ProfileBuilder};
    use quick_xml::Reader;
    use quick_xml::events::Event;

    /// Parse the SVG with quick-xml; answer (rect count, titles, texts).
    fn parse(svg: &str) -> (usize, Vec<String>, Vec<String>) {
        let mut reader = Reader::from_str(svg);
        let mut rects = 0;
        let mut titles = Vec::new();
        let mut texts = Vec::new();
        let mut depth: i64 = 0;
        let mut in_title = false;
        let mut in_text = false;
        loop {
            match reader.read_event().expect("well-formed XML") {
                Event::Start(e) => {
                    depth += 1;
                    match e.name().as_ref() {
                        b"title" => in_title = true,
                        b"text" => in_text = true,
                        _ => {}
                    }
                }
                Event::End(e) => {
                    depth -= 1;
                    match e.name().as_ref() {
                        b"title" => in_title = false,
                        b"text" => in_text = false,
                        _ => {}
                    }
                }
                Event::Empty(e) if e.name().as_ref() == b"rect" => rects += 1,
                Event::Text(t) => {
                    let s = t.unescape().expect("entities").into_owned();
                    if in_title {
                        titles.push(s);
                    } else if in_text {
                        texts.push(s);
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        assert_eq!(depth, 0, "balanced tags");
        (rects, titles, texts)
    }

    #[test]
    fn well_formed_and_complete() {
        let svg = to_string(&sample_profile(), &FlameGraphOptions::default());
        let (rects, titles, texts) = parse(&svg);
        // background + all + main, a, b(a), b(main), c, c, c + 2 legend boxes
        assert_eq!(rects, 1 + 8 + 2);
        assert_eq!(titles.len(), 8);
        assert!(
            titles
                .iter()
                .any(|t| t.starts_with("Main>>a - 50 sends (69.44%)"))
        );
        assert!(texts.iter().any(|t| t == "Kernel"));
        assert!(texts.iter().any(|t| t == "Main>>main"));
    }

    #[test]
    fn snapshot() {
        let svg = to_string(
            &sample_profile(),
            &FlameGraphOptions {
                title: "Sample <profile> & co".to_string(),
                width: 600.0,
                ..FlameGraphOptions::default()
            },
        );
        insta::assert_snapshot!(svg);
    }

    #[test]
    fn escapes_smalltalk_selectors() {
        let mut b = ProfileBuilder::new(Metric::Sends);
        for sel in ["<", ">=", "&", "'quoted'", "\"dq\""] {
            let m = b.add_method(MethodInfo::new("Integer", sel).with_category("K&<>"));
            b.enter(m);
            b.add_self(5);
            b.exit();
        }
        let svg = to_string(&b.finish(), &FlameGraphOptions::default());
        let (_, titles, _) = parse(&svg);
        assert!(titles.iter().any(|t| t.starts_with("Integer>>< - 5 sends")));
        assert!(titles.iter().any(|t| t.contains("category K&<>")));
    }

    #[test]
    fn empty_profile_is_valid() {
        let p = ProfileBuilder::new(Metric::Nanoseconds).finish();
        let (rects, titles, _) = parse(&to_string(&p, &FlameGraphOptions::default()));
        assert_eq!((rects, titles.len()), (2, 1));
    }

    #[test]
    fn colours() {
        assert_eq!(hsl_to_rgb(0.0, 1.0, 0.5), (255, 0, 0));
        assert_eq!(hsl_to_rgb(120.0, 1.0, 0.5), (0, 255, 0));
        assert_eq!(hsl_to_rgb(240.0, 1.0, 0.25), (0, 0, 128));
        assert_eq!(colour(1, "x"), colour(1, "x"));
        assert_ne!(colour(0, ""), colour(1, ""));
        assert_eq!(fmt(12.0), "12");
        assert_eq!(fmt(12.345), "12.35");
        assert_eq!(fmt(-0.001), "0");
    }
}
