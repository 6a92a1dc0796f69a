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

use crate::report::flamegraph::escape_xml;

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
    let (mut x, mut y, mut row_h, mut w) = (GAP, TITLE + GAP, 0.0f64, 0.0f64);
    let mut methods = Vec::new();
    for i in order {
        let (mw, mh) = method_size(&c.methods[i]);
        if x > GAP && x + mw > ROW {
            x = GAP;
            y += row_h + GAP;
            row_h = 0.0;
        }
        methods.push((i, x, y, mw, mh));
        x += mw + GAP;
        w = w.max(x);
        row_h = row_h.max(mh);
    }
    let name_w = 7.0 * c.name.chars().count() as f64 + 2.0 * GAP;
    ClassLayout {
        w: w.max(name_w).max(40.0),
        h: y + row_h + GAP,
        methods,
    }
}

/// The picture as an SVG document.
pub fn to_string(coverage: &Coverage) -> String {
    let layouts: Vec<ClassLayout> = coverage.classes.iter().map(layout_class).collect();
    let index_of = |name: &str| coverage.classes.iter().position(|c| c.name == name);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); coverage.classes.len()];
    let mut roots = Vec::new();
    for (i, c) in coverage.classes.iter().enumerate() {
        match c.superclass.as_deref().and_then(index_of) {
            Some(p) if p != i => children[p].push(i),
            _ => roots.push(i),
        }
    }
    // Subtree widths, then places: a parent centred above its children.
    let n = coverage.classes.len();
    let mut width = vec![0.0f64; n];
    let mut order = Vec::new();
    let mut stack: Vec<(usize, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
    let mut seen = vec![false; n];
    while let Some((i, done)) = stack.pop() {
        if done {
            let kids: f64 = children[i].iter().map(|&k| width[k]).sum::<f64>()
                + GAP * 2.0 * children[i].len().saturating_sub(1) as f64;
            width[i] = layouts[i].w.max(kids);
            order.push(i);
            continue;
        }
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        stack.push((i, true));
        for &k in children[i].iter().rev() {
            stack.push((k, false));
        }
    }
    let mut place = vec![(0.0f64, 0.0f64); n];
    let mut level_h: Vec<f64> = Vec::new();
    let mut depth = vec![0usize; n];
    let mut x0 = GAP;
    let mut queue: Vec<(usize, f64, usize)> = Vec::new();
    for &r in &roots {
        queue.push((r, x0, 0));
        x0 += width[r] + 3.0 * GAP;
    }
    let mut qi = 0;
    while qi < queue.len() {
        let (i, left, d) = queue[qi];
        qi += 1;
        depth[i] = d;
        if level_h.len() <= d {
            level_h.push(0.0);
        }
        level_h[d] = level_h[d].max(layouts[i].h);
        place[i].0 = left + (width[i] - layouts[i].w) / 2.0;
        let kids: f64 = children[i].iter().map(|&k| width[k]).sum::<f64>()
            + GAP * 2.0 * children[i].len().saturating_sub(1) as f64;
        let mut cx = left + (width[i] - kids) / 2.0;
        for &k in &children[i] {
            queue.push((k, cx, d + 1));
            cx += width[k] + 2.0 * GAP;
        }
    }
    let mut level_y = vec![GAP + 24.0; level_h.len()];
    for d in 1..level_h.len() {
        level_y[d] = level_y[d - 1] + level_h[d - 1] + 5.0 * GAP;
    }
    for i in 0..n {
        place[i].1 = level_y[depth[i]];
    }
    let total_w = (x0 + GAP).max(320.0);
    let total_h = level_y
        .iter()
        .zip(&level_h)
        .map(|(y, h)| y + h)
        .fold(60.0f64, f64::max)
        + 2.0 * GAP;
    let max_exec = coverage
        .methods()
        .map(|(_, m)| m.executions)
        .max()
        .unwrap_or(0);

    let mut out = String::new();
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0}" height="{total_h:.0}" viewBox="0 0 {total_w:.0} {total_h:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        out,
        r##"<title>{}</title><rect x="0" y="0" width="{total_w:.0}" height="{total_h:.0}" fill="#ffffff"/>"##,
        escape_xml(&format!("Test blueprint: {}", coverage.command))
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
    for (p, kids) in children.iter().enumerate() {
        for &k in kids {
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
            let _ = writeln!(
                out,
                r#"<rect class="method" data-method="{}" x="{:.1}" y="{:.1}" width="{mw:.1}" height="{mh:.1}" fill="{}" {stroke}><title>{}</title></rect>"#,
                escape_xml(&name),
                x + mx,
                y + my,
                gray(m.executions, max_exec),
                escape_xml(&format!(
                    "{name}\nexecutions: {}\nreceivers: {receivers}\nlines: {}\ntests: {tests}",
                    m.executions, m.lines_of_code
                ))
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
