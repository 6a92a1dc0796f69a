//! Hip's semaphore picture of a diff as a standalone SVG, and an HTML page
//! embedding it with the diff's tables.
//!
//! Packages are rows headed by their name; each class is a box whose header
//! band has the class's state colour, holding one square per method filled
//! with the method's state colour (red higher, green lower, white unchanged,
//! black removed, yellow new). Each square is a `rect` of class `method` with
//! `data-method`, `data-state` and a `<title>` tooltip (values and delta);
//! each class box is a `rect` of class `class`.
//!
//! Contract: exactly one `rect.method` per method of the diff and one
//! `rect.class` per class holding a method; the SVG's `width`/`height` hold
//! every box; the output is deterministic.

use super::{Change, Diff, State};
use crate::render::html::{Column, number_cell, page, table_end, table_start};
use crate::render::{escape_xml, svg as svg_kit};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A method square's side.
const SQUARE: f64 = 12.0;
/// Space between squares and boxes.
const GAP: f64 = 4.0;
/// Height of a class box's header band.
const HEAD: f64 = 16.0;
/// Height of a package's heading.
const PACKAGE: f64 = 20.0;
/// The widest the picture gets before boxes wrap.
const WIDTH: f64 = 1000.0;
/// Left and right margin.
const MARGIN: f64 = 10.0;
/// Width of one legend entry.
const LEGEND: f64 = 110.0;
/// Most squares in one row of a class box.
const MAX_COLUMNS: usize = 16;

/// The tooltip of a change.
fn tooltip(c: &Change) -> String {
    format!("{}: {}", c.name, summary(c))
}

/// `before -> after (delta, percent) state`.
fn summary(c: &Change) -> String {
    let v = |x: Option<u64>| x.map_or_else(|| "-".to_string(), |x| x.to_string());
    let pct = match super::text::percent(c) {
        p if p.is_empty() => String::new(),
        p => format!(", {p}"),
    };
    format!(
        "{} -> {} ({}{}) {}",
        v(c.before),
        v(c.after),
        super::text::delta(c),
        pct,
        c.state.name()
    )
}

/// A class box: its methods in a grid.
struct ClassBox<'a> {
    class: Option<&'a Change>,
    name: &'a str,
    methods: Vec<&'a Change>,
    columns: usize,
    w: f64,
    h: f64,
}

impl<'a> ClassBox<'a> {
    fn new(name: &'a str, class: Option<&'a Change>, methods: Vec<&'a Change>) -> ClassBox<'a> {
        let n = methods.len().max(1);
        let columns = ((n as f64).sqrt().ceil() as usize).clamp(1, MAX_COLUMNS);
        let rows = n.div_ceil(columns);
        let grid_w = columns as f64 * (SQUARE + GAP) + GAP;
        let text_w = name.chars().count() as f64 * 6.5 + 8.0;
        let w = grid_w.max(text_w).min(WIDTH - 2.0 * MARGIN);
        let h = HEAD + rows as f64 * (SQUARE + GAP) + GAP;
        ClassBox {
            class,
            name,
            methods,
            columns,
            w,
            h,
        }
    }
}

/// The semaphore picture of `diff` as a standalone SVG document.
pub fn svg(diff: &Diff) -> String {
    // package -> class -> methods
    let mut tree: BTreeMap<&str, BTreeMap<&str, Vec<&Change>>> = BTreeMap::new();
    for m in &diff.methods {
        tree.entry(m.package.as_str())
            .or_default()
            .entry(m.class.as_str())
            .or_default()
            .push(m);
    }
    let classes: BTreeMap<(&str, &str), &Change> = diff
        .classes
        .iter()
        .map(|c| ((c.package.as_str(), c.name.as_str()), c))
        .collect();
    let packages: BTreeMap<&str, &Change> =
        diff.packages.iter().map(|p| (p.name.as_str(), p)).collect();

    let mut body = String::new();
    let legend_h = 28.0;
    let title_h = 20.0;
    let mut y = MARGIN + title_h + legend_h;
    let mut max_x: f64 = MARGIN + State::ALL.len() as f64 * LEGEND;
    for (package, by_class) in &tree {
        let pstate = packages.get(package).map(|p| p.state);
        let name = if package.is_empty() {
            "(no package)"
        } else {
            package
        };
        let label = match packages.get(package) {
            Some(p) => format!("{name} ({})", summary(p)),
            None => name.to_string(),
        };
        let _ = writeln!(
            body,
            "<text class=\"package\" x=\"{MARGIN}\" y=\"{:.1}\" data-state=\"{}\">{}</text>",
            y + 14.0,
            pstate.map(State::name).unwrap_or(""),
            escape_xml(&label)
        );
        y += PACKAGE;
        let mut x = MARGIN;
        let mut row_h: f64 = 0.0;
        for (class, methods) in by_class {
            let mut methods = methods.clone();
            methods.sort_by(|a, b| a.name.cmp(&b.name));
            let b = ClassBox::new(class, classes.get(&(*package, *class)).copied(), methods);
            if x > MARGIN && x + b.w > WIDTH - MARGIN {
                x = MARGIN;
                y += row_h + GAP;
                row_h = 0.0;
            }
            draw_class(&mut body, &b, x, y, diff.higher_is_better());
            x += b.w + GAP;
            max_x = max_x.max(x);
            row_h = row_h.max(b.h);
        }
        y += row_h + 2.0 * GAP;
    }
    let width = (max_x + MARGIN).ceil();
    let height = (y + MARGIN).ceil();

    let mut out = String::new();
    svg_kit::open(
        &mut out,
        "",
        &width.to_string(),
        &height.to_string(),
        r#" font-family="Verdana, sans-serif" font-size="11""#,
    );
    let _ = writeln!(
        out,
        "<title>{}</title>",
        escape_xml(&format!(
            "lupa history diff: {} -> {}",
            diff.from.label, diff.to.label
        ))
    );
    let _ = writeln!(
        out,
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#f4f4f4\"/>"
    );
    let _ = writeln!(
        out,
        "<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"13\" font-weight=\"bold\">{}</text>",
        MARGIN + 12.0,
        escape_xml(&format!(
            "#{} {} -> #{} {} ({})",
            diff.from.id,
            diff.from.label,
            diff.to.id,
            diff.to.label,
            if diff.higher_is_better() {
                "executions"
            } else {
                diff.measure.name()
            }
        ))
    );
    let mut lx = MARGIN;
    let ly = MARGIN + title_h + 4.0;
    for s in State::ALL {
        let paint = s.painted(diff.higher_is_better());
        let _ = writeln!(
            out,
            "<rect class=\"legend\" x=\"{lx:.1}\" y=\"{ly:.1}\" width=\"{SQUARE}\" height=\"{SQUARE}\" \
fill=\"{}\" stroke=\"#666\"/><text x=\"{:.1}\" y=\"{:.1}\">{} ({})</text>",
            paint.fill(),
            lx + SQUARE + 4.0,
            ly + 10.0,
            s.name(),
            paint.colour()
        );
        lx += LEGEND;
    }
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}

/// Draw one class box at (x, y).
fn draw_class(out: &mut String, b: &ClassBox<'_>, x: f64, y: f64, higher_is_better: bool) {
    let state = b.class.map_or(State::Unchanged, |c| c.state);
    let paint = state.painted(higher_is_better);
    let title = b.class.map_or_else(|| b.name.to_string(), tooltip);
    let _ = writeln!(
        out,
        "<g data-class=\"{}\">\n<rect class=\"class\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" \
height=\"{:.1}\" fill=\"#ffffff\" stroke=\"#888\" data-state=\"{}\"><title>{}</title></rect>",
        escape_xml(b.name),
        b.w,
        b.h,
        state.name(),
        escape_xml(&title)
    );
    let _ = writeln!(
        out,
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{HEAD}\" fill=\"{}\" stroke=\"#888\"/>\
<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\">{}</text>",
        b.w,
        paint.fill(),
        x + 4.0,
        y + 12.0,
        paint.ink(),
        escape_xml(b.name)
    );
    for (i, m) in b.methods.iter().enumerate() {
        let col = (i % b.columns) as f64;
        let row = (i / b.columns) as f64;
        let mx = x + GAP + col * (SQUARE + GAP);
        let my = y + HEAD + GAP + row * (SQUARE + GAP);
        let _ = writeln!(
            out,
            "<rect class=\"method\" x=\"{mx:.1}\" y=\"{my:.1}\" width=\"{SQUARE}\" height=\"{SQUARE}\" \
fill=\"{}\" stroke=\"#666\" data-method=\"{}\" data-state=\"{}\"><title>{}</title></rect>",
            m.state.painted(higher_is_better).fill(),
            escape_xml(&m.name),
            m.state.name(),
            escape_xml(&tooltip(m))
        );
    }
    out.push_str("</g>\n");
}

/// One sortable table of changes (with a package column unless they are
/// packages).
fn html_table(out: &mut String, title: &str, first: &str, rows: &[Change], higher_is_better: bool) {
    let packages = first == "Package";
    let _ = writeln!(out, "<h2>{}</h2>", escape_xml(title));
    let mut columns = vec![
        Column::text("State"),
        Column::text(first),
        Column::number("Before"),
        Column::number("After"),
        Column::number("Delta"),
        Column::number("Delta %"),
    ];
    if !packages {
        columns.push(Column::text("Package"));
    }
    table_start(out, &title.to_lowercase(), &columns);
    for c in rows {
        let v = |x: Option<u64>| x.map_or_else(|| "-".to_string(), |x| x.to_string());
        let sort = |x: Option<u64>| x.map_or(-1, i128::from);
        let _ = write!(
            out,
            "<tr class=\"{}\"><td style=\"background:{};color:{}\">{} ({})</td><td>{}</td>{}{}{}{}",
            c.state.name(),
            c.state.painted(higher_is_better).fill(),
            c.state.painted(higher_is_better).ink(),
            c.state.name(),
            c.state.painted(higher_is_better).colour(),
            escape_xml(&c.name),
            number_cell(sort(c.before), &v(c.before)),
            number_cell(sort(c.after), &v(c.after)),
            number_cell(c.delta(), &super::text::delta(c)),
            number_cell(c.percent().unwrap_or(0.0), &super::text::percent(c)),
        );
        if !packages {
            let _ = write!(out, "<td>{}</td>", escape_xml(&c.package));
        }
        out.push_str("</tr>\n");
    }
    table_end(out);
}

/// A self-contained HTML page (the render kit's page shell): the semaphore
/// picture and the diff's packages, classes and methods tables.
pub fn html(diff: &Diff) -> String {
    let mut out = String::new();
    let title = format!(
        "lupa history diff: {} -> {}",
        diff.from.label, diff.to.label
    );
    let _ = writeln!(
        out,
        "<p>From #{} <b>{}</b> ({}) to #{} <b>{}</b> ({}); methods by {}.</p>",
        diff.from.id,
        escape_xml(&diff.from.label),
        escape_xml(&diff.from.date),
        diff.to.id,
        escape_xml(&diff.to.label),
        escape_xml(&diff.to.date),
        escape_xml(diff.measure_description())
    );
    out.push_str("<div class=\"picture\">\n");
    out.push_str(&svg(diff));
    out.push_str("</div>\n");
    html_table(
        &mut out,
        "Packages",
        "Package",
        &diff.packages,
        diff.higher_is_better(),
    );
    html_table(
        &mut out,
        "Classes",
        "Class",
        &diff.classes,
        diff.higher_is_better(),
    );
    html_table(
        &mut out,
        "Methods",
        "Method",
        &diff.methods,
        diff.higher_is_better(),
    );
    page(&title, "", &out, "")
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::sample_diff;
    use super::*;

    #[test]
    fn one_square_per_method_coloured_by_state() {
        let d = sample_diff();
        let s = svg(&d);
        assert_eq!(s.matches("class=\"method\"").count(), d.methods.len());
        assert_eq!(s.matches("class=\"class\"").count(), d.classes.len());
        assert!(s.contains("data-method=\"A&gt;&gt;slower\""), "{s}");
        assert!(s.contains("data-state=\"higher\""));
        assert!(s.starts_with("<svg"));
        let h = html(&d);
        assert!(h.contains("<svg"));
        assert!(h.contains("<h2>Methods</h2>"));
        assert_eq!(h.matches("class=\"method\"").count(), d.methods.len());
    }

    #[test]
    fn the_svg_parses_and_holds_its_squares() {
        use quick_xml::Reader;
        use quick_xml::events::Event;
        let d = sample_diff();
        let s = svg(&d);
        let mut reader = Reader::from_str(&s);
        let (mut squares, mut states) = (0, Vec::new());
        let (mut width, mut height) = (0.0, 0.0);
        let mut max_right: f64 = 0.0;
        let mut max_bottom: f64 = 0.0;
        loop {
            match reader.read_event().expect("well-formed XML") {
                Event::Eof => break,
                Event::Start(e) | Event::Empty(e) => {
                    let attr = |name: &str| {
                        e.try_get_attribute(name)
                            .expect("attribute")
                            .map(|a| a.unescape_value().expect("value").into_owned())
                    };
                    let num = |name: &str| attr(name).and_then(|v| v.parse::<f64>().ok());
                    match e.name().as_ref() {
                        b"svg" => {
                            width = num("width").expect("width");
                            height = num("height").expect("height");
                        }
                        b"rect" => {
                            if let (Some(x), Some(y), Some(w), Some(h)) =
                                (num("x"), num("y"), num("width"), num("height"))
                            {
                                max_right = max_right.max(x + w);
                                max_bottom = max_bottom.max(y + h);
                            }
                            if attr("class").as_deref() == Some("method") {
                                squares += 1;
                                states.push(attr("data-state").expect("state"));
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        assert_eq!(squares, d.methods.len());
        for s in State::ALL {
            assert!(states.iter().any(|x| x == s.name()), "{s} drawn");
        }
        assert!(max_right <= width && max_bottom <= height);
    }
}
