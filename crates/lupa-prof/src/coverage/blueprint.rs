//! The test blueprint of Hapao (the Spy paper, section 3.4) as a standalone
//! SVG picture.
//!
//! Each class is a box; classes form their inheritance tree, a superclass
//! above its subclasses (linked by a line; classes whose superclass is not
//! covered are roots, side by side). Inside a class box its methods are
//! boxes, largest first, in rows: height = lines of code, width = log of
//! distinct receivers + 1, fill = a gray from white (never ran) to black (the
//! most executions), on log(executions + 1); a method that never ran has a
//! red border. Each method box is a `rect` of class `method` with a
//! `<title>` tooltip (`Class>>selector`, executions, receivers, lines,
//! tests) and `data-method` naming it; class boxes are `rect.class`.
//!
//! Contract: one `rect.method` per method of the coverage, one `rect.class`
//! per class; the picture's `width`/`height` hold every box.

use std::fmt::Write as _;

use crate::blueprint::layout;
use crate::render::{escape_xml, svg};

use super::{ClassCoverage, Coverage, MethodCoverage};

/// Space between boxes, and around a class's methods.
const GAP: f64 = 6.0;
/// The widest row of methods inside a class box.
const ROW: f64 = 160.0;
/// The height of a class's name.
const TITLE: f64 = 16.0;

/// A method box's size.
fn method_size(m: &MethodCoverage) -> (f64, f64) {
    let w = 4.0 + 6.0 * ((m.receivers as f64) + 1.0).ln();
    let h = 3.0 + 3.0 * f64::from(m.lines_of_code.clamp(1, 60));
    (w, h)
}

/// The gray of `executions` on a log scale up to `max`.
fn gray(executions: u64, max: u64) -> String {
    if executions == 0 || max == 0 {
        return "#ffffff".to_string();
    }
    let t = ((executions as f64) + 1.0).ln() / ((max as f64) + 1.0).ln();
    let v = (235.0 * (1.0 - t.clamp(0.0, 1.0))) as u8;
    format!("#{v:02x}{v:02x}{v:02x}")
}

/// A class box's layout: its size and its methods' places (x, y, w, h),
/// relative to the box, in the order drawn.
struct ClassLayout {
    w: f64,
    h: f64,
    methods: Vec<(usize, f64, f64, f64, f64)>,
}

fn layout_class(c: &ClassCoverage) -> ClassLayout {
    let mut order: Vec<usize> = (0..c.methods.len()).collect();
    order.sort_by(|&a, &b| {
        let (ma, mb) = (&c.methods[a], &c.methods[b]);
        mb.lines_of_code
            .cmp(&ma.lines_of_code)
            .then(ma.selector.cmp(&mb.selector))
    });
    let sizes: Vec<(f64, f64)> = order.iter().map(|&i| method_size(&c.methods[i])).collect();
    let placed = layout::rows(&sizes, ROW, GAP, TITLE);
    let methods = order
        .iter()
        .zip(&sizes)
        .zip(&placed.places)
        .map(|((&i, &(mw, mh)), &(x, y))| (i, x, y, mw, mh))
        .collect();
    let name_w = 7.0 * c.name.chars().count() as f64 + 2.0 * GAP;
    ClassLayout {
        w: placed.width.max(name_w).max(40.0),
        h: placed.height,
        methods,
    }
}

/// The picture as an SVG document.
pub fn to_string(coverage: &Coverage) -> String {
    let layouts: Vec<ClassLayout> = coverage.classes.iter().map(layout_class).collect();
    let index_of = |name: &str| coverage.classes.iter().position(|c| c.name == name);
    let parents: Vec<Option<usize>> = coverage
        .classes
        .iter()
        .map(|c| c.superclass.as_deref().and_then(index_of))
        .collect();
    // Superclasses above their subclasses, centred over them.
    let sizes: Vec<(f64, f64)> = layouts.iter().map(|l| (l.w, l.h)).collect();
    let tree = layout::tree(&sizes, &parents, GAP, 5.0 * GAP, GAP + 24.0);
    let place = &tree.places;
    let total_w = tree.width.max(320.0);
    let total_h = (tree.height - GAP).max(60.0) + 2.0 * GAP;
    let max_exec = coverage
        .methods()
        .map(|(_, m)| m.executions)
        .max()
        .unwrap_or(0);

    let mut out = String::new();
    crate::blueprint::svg::open_document(
        &mut out,
        total_w,
        total_h,
        &format!("Test blueprint: {}", coverage.command),
    );
    let _ = writeln!(
        out,
        r#"<text x="{GAP}" y="16" font-size="13">{}</text>"#,
        escape_xml(&format!(
            "Test blueprint: {:.1}% of methods executed, {:.1}% of classes covered",
            coverage.ratio_executed_methods() * 100.0,
            coverage.ratio_covered_classes() * 100.0
        ))
    );
    // Inheritance links.
    for (k, parent) in parents.iter().enumerate() {
        if let Some(p) = *parent
            && p != k
        {
            let (px, py) = (place[p].0 + layouts[p].w / 2.0, place[p].1 + layouts[p].h);
            let (kx, ky) = (place[k].0 + layouts[k].w / 2.0, place[k].1);
            let _ = writeln!(
                out,
                r##"<line class="inherits" x1="{px:.1}" y1="{py:.1}" x2="{kx:.1}" y2="{ky:.1}" stroke="#888888"/>"##
            );
        }
    }
    for (i, c) in coverage.classes.iter().enumerate() {
        let (x, y) = place[i];
        let l = &layouts[i];
        let _ = writeln!(
            out,
            r##"<g class="class-box" data-class="{}"><rect class="class" x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="#f4f4f4" stroke="#444444"/><text x="{:.1}" y="{:.1}">{}</text>"##,
            escape_xml(&c.name),
            l.w,
            l.h,
            x + GAP,
            y + 12.0,
            escape_xml(&c.name)
        );
        for &(mi, mx, my, mw, mh) in &l.methods {
            let m = &c.methods[mi];
            let name = m.name_in(&c.name);
            let stroke = if m.is_covered() {
                r##"stroke="#555555""##
            } else {
                r##"stroke="#d00000" stroke-width="2""##
            };
            let receivers = if m.receivers_estimated {
                format!("~{}", m.receivers)
            } else {
                m.receivers.to_string()
            };
            let tests = if m.tests.is_empty() {
                "no test".to_string()
            } else {
                m.tests.join(", ")
            };
            svg::method_box(
                &mut out,
                &name,
                (x + mx, y + my, mw, mh),
                &format!("fill=\"{}\" {stroke}", gray(m.executions, max_exec)),
                &format!(
                    "{name}\nexecutions: {}\nreceivers: {receivers}\nlines: {}\ntests: {tests}",
                    m.executions, m.lines_of_code
                ),
            );
        }
        let _ = writeln!(out, "</g>");
    }
    let _ = writeln!(out, "</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::tests::sample;
    use quick_xml::events::Event;

    #[test]
    fn one_box_per_method_and_class_inside_the_picture() {
        let c = sample();
        let svg = to_string(&c);
        let mut reader = quick_xml::Reader::from_str(&svg);
        let (mut methods, mut classes, mut red) = (0, 0, 0);
        let (mut w, mut h) = (0.0, 0.0);
        loop {
            match reader.read_event().expect("well-formed SVG") {
                Event::Start(e) | Event::Empty(e) => {
                    let get = |k: &str| {
                        e.try_get_attribute(k).ok().flatten().map(|a| {
                            a.unescape_value()
                                .map(|v| v.into_owned())
                                .unwrap_or_default()
                        })
                    };
                    match e.name().as_ref() {
                        b"svg" => {
                            w = get("width").and_then(|v| v.parse().ok()).unwrap_or(0.0);
                            h = get("height").and_then(|v| v.parse().ok()).unwrap_or(0.0);
                        }
                        b"rect" => {
                            let x: f64 = get("x").and_then(|v| v.parse().ok()).unwrap_or(-1.0);
                            let y: f64 = get("y").and_then(|v| v.parse().ok()).unwrap_or(-1.0);
                            let rw: f64 = get("width").and_then(|v| v.parse().ok()).unwrap_or(0.0);
                            let rh: f64 = get("height").and_then(|v| v.parse().ok()).unwrap_or(0.0);
                            assert!(x >= 0.0 && y >= 0.0 && x + rw <= w + 0.5 && y + rh <= h + 0.5);
                            match get("class").as_deref() {
                                Some("method") => {
                                    methods += 1;
                                    if get("stroke").as_deref() == Some("#d00000") {
                                        red += 1;
                                    }
                                }
                                Some("class") => classes += 1,
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        assert_eq!(methods, 4);
        assert_eq!(classes, 2);
        assert_eq!(red, 1, "printOn: never ran");
        // The subclass is below its superclass.
        let y_of = |name: &str| {
            let at = svg.find(&format!("data-class=\"{name}\"")).expect("class");
            let rest = &svg[at..];
            let y = rest
                .split("y=\"")
                .nth(1)
                .expect("y")
                .split('"')
                .next()
                .expect("value");
            y.parse::<f64>().expect("number")
        };
        assert!(y_of("Square") > y_of("Shape"));
    }
}
