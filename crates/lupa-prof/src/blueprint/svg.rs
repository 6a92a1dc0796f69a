//! The blueprints as standalone SVG pictures ([`to_string`]).
//!
//! A method is a box: height = its time (inclusive, linear up to the largest),
//! width = its executions (log scale); gray when every call answered the same
//! object and it sends messages (a caching candidate,
//! [`BlueprintMethod::caching_candidate`]), a blue border when no call changed its
//! receiver (likely free of side effects), a dashed light border when it never
//! ran. The **structural** blueprint draws classes as boxes in their
//! inheritance tree (superclass above, linked by a line) with their methods
//! inside, the most time first; the **behavioral** one draws the methods that
//! ran as a layered call graph, callers above callees, each call an arrow
//! (dashed when it closes a cycle), its method's name under each box. A
//! method some of whose blocks ran is drawn in a dashed frame holding its box
//! and one box per block beside it, sized the same way by the block's own
//! time and executions (a block's time is not its home method's).
//!
//! Contract: one `rect.method` per method drawn (every method of the
//! blueprint in the structural picture, those that ran in the behavioral
//! one), each with `data-method` (`Class>>selector`) and a `<title>` tooltip
//! giving its numbers; per method whose blocks ran, a `rect.home` frame and a
//! `rect.block` per block that ran (`data-method` its home, `data-block` its
//! name, a `<title>` tooltip); `rect.class` per class (structural), `path.call` per
//! call between drawn methods (behavioral), `line.inherits` per inheritance
//! link; the picture's `width`/`height` hold every box.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::render::{escape_xml, svg};

use super::layout;
use super::model::{Blueprint, BlueprintBlock, BlueprintMethod, Kind};

/// Space between boxes.
const GAP: f64 = 6.0;
/// The widest row of methods inside a class box.
const ROW: f64 = 220.0;
/// The height of a class's name.
const TITLE: f64 = 16.0;
/// Where the picture's content starts (below its title and legend).
const TOP: f64 = 54.0;
/// The fill of a method that always answered the same object.
pub const GRAY: &str = "#9a9a9a";
/// The border of a method that never changed its receiver.
pub const PURE: &str = "#1f5fd0";

/// The padding of a method's frame around it and its blocks.
const PAD: f64 = 2.0;
/// The fill of a block box.
pub const BLOCK: &str = "#fff3d6";

/// A box's size: width from executions (log), height from time.
fn box_size(executions: u64, time_ms: f64, max_time: f64) -> (f64, f64) {
    let w = 6.0 + 8.0 * ((executions as f64) + 1.0).ln();
    let h = if max_time > 0.0 {
        6.0 + 90.0 * (time_ms / max_time).clamp(0.0, 1.0)
    } else {
        6.0
    };
    (w, h)
}

/// A method box's size: width from executions (log), height from time.
pub fn method_size(m: &BlueprintMethod, max_time: f64) -> (f64, f64) {
    box_size(m.executions, m.time_ms, max_time)
}

/// The size of what a method takes: its box, or, when blocks of it ran, a
/// frame holding its box and theirs side by side.
pub fn unit_size(m: &BlueprintMethod, max_time: f64) -> (f64, f64) {
    let (mut w, mut h) = method_size(m, max_time);
    let mut framed = false;
    for b in m.blocks.iter().filter(|b| b.ran()) {
        let (bw, bh) = box_size(b.executions, b.time_ms, max_time);
        w += GAP / 2.0 + bw;
        h = h.max(bh);
        framed = true;
    }
    if framed {
        (w + 2.0 * PAD, h + 2.0 * PAD)
    } else {
        (w, h)
    }
}

/// The tooltip of a block of the method `home`.
pub fn block_tooltip(home: &str, b: &BlueprintBlock) -> String {
    format!(
        "{}\ntime: {:.2} ms ({:.2} ms self, {:.1}% of the run): its own, not {home}'s\nexecutions: {}\nsends: {}",
        b.name, b.time_ms, b.self_ms, b.percentage, b.executions, b.sends
    )
}

/// A method at (x, y): its box, and when blocks of it ran, a `rect.home`
/// frame holding its box and a `rect.block` per block beside it.
fn method_unit(
    out: &mut String,
    name: &str,
    m: &BlueprintMethod,
    (x, y): (f64, f64),
    max_time: f64,
) {
    let size = method_size(m, max_time);
    let blocks: Vec<&BlueprintBlock> = m.blocks.iter().filter(|b| b.ran()).collect();
    if blocks.is_empty() {
        method_rect(out, name, m, (x, y), size);
        return;
    }
    let (w, h) = unit_size(m, max_time);
    let _ = writeln!(
        out,
        r##"<rect class="home" data-method="{}" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="none" stroke="#c08a20" stroke-dasharray="3,2"/>"##,
        escape_xml(name)
    );
    method_rect(out, name, m, (x + PAD, y + PAD), size);
    let mut bx = x + PAD + size.0;
    for b in blocks {
        bx += GAP / 2.0;
        let (bw, bh) = box_size(b.executions, b.time_ms, max_time);
        let _ = writeln!(
            out,
            r##"<rect class="block" data-method="{}" data-block="{}" x="{bx:.1}" y="{:.1}" width="{bw:.1}" height="{bh:.1}" fill="{BLOCK}" stroke="#a06a00"><title>{}</title></rect>"##,
            escape_xml(name),
            escape_xml(&b.name),
            y + PAD,
            escape_xml(&block_tooltip(name, b))
        );
        bx += bw;
    }
}

/// The tooltip of a method.
pub fn tooltip(name: &str, m: &BlueprintMethod) -> String {
    let mut t = format!(
        "{name}\ntime: {:.2} ms ({:.2} ms self, {:.1}% of the run)\nexecutions: {}\nsends: {}",
        m.time_ms, m.self_ms, m.percentage, m.executions, m.sends
    );
    if m.caching_candidate() {
        t.push_str("\nevery call answered the same object (gray: cache it?)");
    } else if m.same_answer {
        t.push_str("\nevery call answered the same object (no sends of its own: nothing to cache)");
    }
    if m.side_effect_free {
        t.push_str("\nno call changed its receiver");
    }
    for b in m.blocks.iter().filter(|b| b.ran()) {
        let _ = write!(
            t,
            "\nblock {}: {:.2} ms ({:.2} ms self), {} executions (its own time, not in this method's self time)",
            b.name, b.time_ms, b.self_ms, b.executions
        );
    }
    if !m.ran() {
        t.push_str("\nnever ran");
    }
    t
}

/// The `rect` of a method box at (x, y).
fn method_rect(
    out: &mut String,
    name: &str,
    m: &BlueprintMethod,
    (x, y): (f64, f64),
    (w, h): (f64, f64),
) {
    let fill = if m.caching_candidate() {
        GRAY
    } else {
        "#ffffff"
    };
    let stroke = if !m.ran() {
        r##"stroke="#bbbbbb" stroke-dasharray="2,2""##.to_string()
    } else if m.side_effect_free {
        format!(r#"stroke="{PURE}" stroke-width="2""#)
    } else {
        r##"stroke="#333333""##.to_string()
    };
    svg::method_box(
        out,
        name,
        (x, y, w, h),
        &format!("fill=\"{fill}\" {stroke}"),
        &tooltip(name, m),
    );
}

/// The start of a standalone blueprint SVG (`w` x `h`, white background)
/// titled `title`: shared by the time blueprints and the coverage blueprint.
pub(crate) fn open_document(out: &mut String, w: f64, h: f64, title: &str) {
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    svg::open(
        out,
        "",
        &format!("{w:.0}"),
        &format!("{h:.0}"),
        r#" font-family="sans-serif" font-size="11""#,
    );
    let _ = writeln!(
        out,
        r##"<title>{}</title><rect x="0" y="0" width="{w:.0}" height="{h:.0}" fill="#ffffff"/>"##,
        escape_xml(title)
    );
}

/// The document's head: size, title, background, heading and legend.
fn head(out: &mut String, bp: &Blueprint, kind: Kind, w: f64, h: f64) {
    let what = match kind {
        Kind::Structural => "Structural profiling blueprint",
        Kind::Behavioral => "Behavioral profiling blueprint",
    };
    open_document(out, w, h, &format!("{what}: {}", bp.command));
    let _ = writeln!(
        out,
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555555"/></marker></defs>"##
    );
    let _ = writeln!(
        out,
        r#"<text x="{GAP}" y="16" font-size="13">{}</text>"#,
        escape_xml(&format!(
            "{what}: {:.1} ms sampled, {} methods ran",
            bp.total_ms,
            bp.methods().filter(|(_, m)| m.ran()).count()
        ))
    );
    let _ = writeln!(
        out,
        r##"<text x="{GAP}" y="32" fill="#444444">height: time; width: executions (log); gray: every call answered the same object and it sends messages (cache it?); blue border: never changed its receiver</text>"##
    );
    if bp.methods().any(|(_, m)| m.blocks.iter().any(|b| b.ran())) {
        let _ = writeln!(
            out,
            r##"<text x="{GAP}" y="44" fill="#444444">dashed frame: a method and its blocks (pale boxes beside it), each block's time its own, not its home method's</text>"##
        );
    }
}

/// The picture of the given kind, as an SVG document.
pub fn to_string(bp: &Blueprint, kind: Kind) -> String {
    match kind {
        Kind::Structural => structural(bp),
        Kind::Behavioral => behavioral(bp),
    }
}

/// The structural blueprint.
pub fn structural(bp: &Blueprint) -> String {
    let (max_time, _) = bp.maxima();
    // Each class box: its methods in rows, the most time first.
    let mut inner = Vec::with_capacity(bp.classes.len());
    for c in &bp.classes {
        let mut order: Vec<usize> = (0..c.methods.len()).collect();
        order.sort_by(|&a, &b| {
            let (ma, mb) = (&c.methods[a], &c.methods[b]);
            mb.time_ms
                .total_cmp(&ma.time_ms)
                .then(mb.executions.cmp(&ma.executions))
                .then(ma.selector.cmp(&mb.selector))
        });
        let sizes: Vec<(f64, f64)> = order
            .iter()
            .map(|&i| unit_size(&c.methods[i], max_time))
            .collect();
        let placed = layout::rows(&sizes, ROW, GAP, TITLE);
        let name_w = 7.0 * c.name.chars().count() as f64 + 2.0 * GAP;
        let size = (placed.width.max(name_w).max(40.0), placed.height);
        inner.push((order, sizes, placed, size));
    }
    let index: HashMap<&str, usize> = bp
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let parents: Vec<Option<usize>> = bp
        .classes
        .iter()
        .map(|c| c.superclass.as_deref().and_then(|s| index.get(s).copied()))
        .collect();
    let class_sizes: Vec<(f64, f64)> = inner.iter().map(|i| i.3).collect();
    let tree = layout::tree(&class_sizes, &parents, GAP, 5.0 * GAP, TOP);
    let (w, h) = (tree.width.max(480.0), tree.height.max(TOP + 2.0 * GAP));
    let mut out = String::new();
    head(&mut out, bp, Kind::Structural, w, h);
    for (i, p) in parents.iter().enumerate() {
        if let Some(p) = *p
            && p != i
        {
            let (px, py) = tree.places[p];
            let (kx, ky) = tree.places[i];
            let _ = writeln!(
                out,
                r##"<line class="inherits" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{ky:.1}" stroke="#888888"/>"##,
                px + class_sizes[p].0 / 2.0,
                py + class_sizes[p].1,
                kx + class_sizes[i].0 / 2.0,
            );
        }
    }
    for (i, c) in bp.classes.iter().enumerate() {
        let (x, y) = tree.places[i];
        let (order, _, placed, (cw, ch)) = &inner[i];
        let _ = writeln!(
            out,
            r##"<g class="class-box" data-class="{}"><rect class="class" x="{x:.1}" y="{y:.1}" width="{cw:.1}" height="{ch:.1}" fill="#f4f4f4" stroke="#444444"/><text x="{:.1}" y="{:.1}">{}</text>"##,
            escape_xml(&c.name),
            x + GAP,
            y + 12.0,
            escape_xml(&c.name)
        );
        for (k, &mi) in order.iter().enumerate() {
            let m = &c.methods[mi];
            let (mx, my) = placed.places[k];
            method_unit(&mut out, &m.name_in(&c.name), m, (x + mx, y + my), max_time);
        }
        let _ = writeln!(out, "</g>");
    }
    let _ = writeln!(out, "</svg>");
    out
}

/// The behavioral blueprint.
pub fn behavioral(bp: &Blueprint) -> String {
    let (max_time, _) = bp.maxima();
    let nodes: Vec<(String, &BlueprintMethod)> = bp
        .methods()
        .filter(|(_, m)| m.ran())
        .map(|(c, m)| (m.name_in(&c.name), m))
        .collect();
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.as_str(), i))
        .collect();
    let calls: Vec<(usize, usize, u64)> = bp
        .calls
        .iter()
        .filter_map(|c| {
            Some((
                *index.get(c.caller.as_str())?,
                *index.get(c.callee.as_str())?,
                c.count,
            ))
        })
        .collect();
    // A node: its box above its name.
    let boxes: Vec<(f64, f64)> = nodes.iter().map(|(_, m)| unit_size(m, max_time)).collect();
    let sizes: Vec<(f64, f64)> = nodes
        .iter()
        .zip(&boxes)
        .map(|((name, _), &(bw, bh))| (bw.max(6.2 * name.chars().count() as f64), bh + 14.0))
        .collect();
    let edges: Vec<(usize, usize)> = calls.iter().map(|&(a, b, _)| (a, b)).collect();
    let layers = layout::layered(&sizes, &edges, 2.0 * GAP, 8.0 * GAP, TOP);
    let placed = &layers.placed;
    let (w, h) = (placed.width.max(480.0), placed.height.max(TOP + 2.0 * GAP));
    let box_at = |i: usize| {
        let (x, y) = placed.places[i];
        (x + (sizes[i].0 - boxes[i].0) / 2.0, y)
    };
    let mut out = String::new();
    head(&mut out, bp, Kind::Behavioral, w, h);
    for (e, &(a, b, count)) in calls.iter().enumerate() {
        let ((ax, ay), (bx, by)) = (box_at(a), box_at(b));
        let back = layers.back_edges.contains(&e);
        let style = if back {
            r##"stroke="#c05000" stroke-dasharray="4,3""##
        } else {
            r##"stroke="#666666" stroke-opacity="0.8""##
        };
        let d = if a == b {
            // A recursive call: a loop on the box's right side.
            let (x, y1, y2) = (ax + boxes[a].0, ay + 2.0, ay + boxes[a].1 - 2.0);
            format!(
                "M {x:.1} {y1:.1} C {:.1} {y1:.1} {:.1} {y2:.1} {x:.1} {y2:.1}",
                x + 18.0,
                x + 18.0
            )
        } else if back {
            // Up to a caller: leave from the top, arrive at the bottom.
            let (x1, y1) = (ax + boxes[a].0 / 2.0, ay);
            let (x2, y2) = (bx + boxes[b].0 / 2.0, by + boxes[b].1);
            format!(
                "M {x1:.1} {y1:.1} C {:.1} {:.1} {:.1} {:.1} {x2:.1} {y2:.1}",
                x1 + 30.0,
                y1 - 30.0,
                x2 + 30.0,
                y2 + 30.0
            )
        } else {
            let (x1, y1) = (ax + boxes[a].0 / 2.0, ay + boxes[a].1);
            let (x2, y2) = (bx + boxes[b].0 / 2.0, by);
            format!("M {x1:.1} {y1:.1} L {x2:.1} {y2:.1}")
        };
        let width = 0.8 + ((count as f64) + 1.0).log10().min(5.0) * 0.3;
        let _ = writeln!(
            out,
            r#"<path class="call" d="{d}" fill="none" {style} stroke-width="{width:.1}" marker-end="url(#arrow)"><title>{}</title></path>"#,
            escape_xml(&format!("{} -> {}: {count} calls", nodes[a].0, nodes[b].0))
        );
    }
    for (i, (name, m)) in nodes.iter().enumerate() {
        let (x, y) = box_at(i);
        method_unit(&mut out, name, m, (x, y), max_time);
        let (nx, ny) = placed.places[i];
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
            nx + sizes[i].0 / 2.0,
            ny + boxes[i].1 + 11.0,
            escape_xml(name)
        );
    }
    let _ = writeln!(out, "</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::model::tests::sample;
    use quick_xml::events::Event;

    /// (rect.method count, rect.class count, path.call count, gray count),
    /// checking every rect is inside the picture.
    fn census(svg: &str) -> (usize, usize, usize, usize) {
        let mut reader = quick_xml::Reader::from_str(svg);
        let (mut methods, mut classes, mut calls, mut gray) = (0, 0, 0, 0);
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
                    let num = |k: &str| get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(-1.0);
                    match e.name().as_ref() {
                        b"svg" => (w, h) = (num("width"), num("height")),
                        b"rect" => {
                            let (x, y, rw, rh) = (num("x"), num("y"), num("width"), num("height"));
                            assert!(x >= 0.0 && y >= 0.0 && x + rw <= w + 0.5 && y + rh <= h + 0.5);
                            match get("class").as_deref() {
                                Some("method") => {
                                    methods += 1;
                                    gray += usize::from(get("fill").as_deref() == Some(GRAY));
                                }
                                Some("class") => classes += 1,
                                _ => {}
                            }
                        }
                        b"path" if get("class").as_deref() == Some("call") => calls += 1,
                        _ => {}
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        (methods, classes, calls, gray)
    }

    #[test]
    fn structural_has_every_method_in_its_class_in_the_tree() {
        let svg = structural(&sample());
        assert_eq!(census(&svg), (5, 2, 0, 1));
        assert_eq!(svg.matches("class=\"inherits\"").count(), 1);
        assert!(
            svg.contains("data-method=\"Square class&gt;&gt;new\""),
            "{svg}"
        );
    }

    #[test]
    fn behavioral_has_the_methods_that_ran_and_their_calls() {
        let svg = behavioral(&sample());
        assert_eq!(census(&svg), (4, 0, 2, 1));
        assert!(
            svg.contains("Square&gt;&gt;area -&gt; Square&gt;&gt;side: 4 calls"),
            "{svg}"
        );
        assert!(!svg.contains("unused"));
    }

    #[test]
    fn a_method_s_blocks_are_boxes_of_their_own_in_its_frame() {
        use crate::blueprint::model::tests::with_block;
        for svg in [structural(&with_block()), behavioral(&with_block())] {
            assert_eq!(svg.matches("class=\"home\"").count(), 1, "{svg}");
            assert_eq!(svg.matches("class=\"block\"").count(), 1, "{svg}");
            assert!(
                svg.contains("data-block=\"[] in Shape&gt;&gt;handler\""),
                "{svg}"
            );
            assert!(
                svg.contains("its own, not Shape&gt;&gt;handler&apos;s"),
                "{svg}"
            );
        }
        // The block, the longest, is as tall as boxes get; its home's box is not.
        let bp = with_block();
        let m = &bp.classes[0].methods[2];
        assert_eq!(unit_size(m, 8.0).1, 96.0 + 2.0 * PAD);
        assert!(method_size(m, 8.0).1 < 10.0);
        // Without blocks no frame.
        assert!(!structural(&sample()).contains("class=\"home\""));
    }

    #[test]
    fn boxes_grow_with_time_and_executions() {
        let m = |executions, time_ms| BlueprintMethod {
            executions,
            time_ms,
            ..BlueprintMethod::default()
        };
        let (w1, h1) = method_size(&m(1, 1.0), 10.0);
        let (w2, h2) = method_size(&m(1000, 10.0), 10.0);
        assert!(w2 > w1 && h2 > h1);
        assert_eq!(method_size(&m(0, 0.0), 0.0), (6.0, 6.0));
        assert_eq!(method_size(&m(0, 20.0), 10.0).1, 96.0, "clamped");
    }
}
