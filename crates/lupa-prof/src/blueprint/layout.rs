//! Placing boxes for the blueprint pictures: in rows ([`rows`], methods inside
//! a class), as a tree ([`tree`], classes under their superclass; the coverage
//! blueprint uses it too) and as a layered graph ([`layered`], the call graph
//! top-down).
//!
//! Every function takes the boxes' sizes `(width, height)` and answers their
//! top-left corners in a [`Placed`], whose `width` and `height` hold every box
//! (plus a margin of `gap`). Boxes never overlap. Nothing here recurses, so
//! deep trees and long call chains are fine.

/// Boxes' places and the size of the area that holds them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placed {
    /// Top-left corner of each box, indexed like the sizes given.
    pub places: Vec<(f64, f64)>,
    /// Width of the area (from x = 0).
    pub width: f64,
    /// Height of the area (from y = 0).
    pub height: f64,
}

/// Boxes in the order given, left to right in rows no wider than `max_width`
/// (a box wider than that gets a row of its own), `gap` between boxes and
/// around them; the first row starts at y = `top`.
pub fn rows(sizes: &[(f64, f64)], max_width: f64, gap: f64, top: f64) -> Placed {
    let (mut x, mut y, mut row_h, mut w) = (gap, top + gap, 0.0f64, 0.0f64);
    let mut places = Vec::with_capacity(sizes.len());
    for &(bw, bh) in sizes {
        if x > gap && x + bw > max_width {
            x = gap;
            y += row_h + gap;
            row_h = 0.0;
        }
        places.push((x, y));
        x += bw + gap;
        w = w.max(x);
        row_h = row_h.max(bh);
    }
    Placed {
        places,
        width: w.max(gap),
        height: y + row_h + gap,
    }
}

/// A forest top-down: each box centred above its children (in the order
/// given), the trees side by side, the boxes of one depth on one level.
/// `parents[i]` is the parent of box `i` (`None`, itself or out of range: a
/// root). Siblings are `2 * gap` apart, trees `3 * gap`, levels `vgap`; the
/// first level is at y = `top`. Boxes on a parent cycle are not placed (they
/// stay at the origin).
pub fn tree(
    sizes: &[(f64, f64)],
    parents: &[Option<usize>],
    gap: f64,
    vgap: f64,
    top: f64,
) -> Placed {
    let n = sizes.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for i in 0..n {
        match parents.get(i).copied().flatten() {
            Some(p) if p != i && p < n => children[p].push(i),
            _ => roots.push(i),
        }
    }
    let spread = |kids: &[usize], width: &[f64]| {
        kids.iter().map(|&k| width[k]).sum::<f64>()
            + gap * 2.0 * kids.len().saturating_sub(1) as f64
    };
    // Subtree widths, children before parents.
    let mut width = vec![0.0f64; n];
    let mut stack: Vec<(usize, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
    let mut seen = vec![false; n];
    while let Some((i, done)) = stack.pop() {
        if done {
            width[i] = sizes[i].0.max(spread(&children[i], &width));
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
    // Places, breadth first: a parent centred over its children's span.
    let mut places = vec![(0.0f64, 0.0f64); n];
    let mut depth = vec![0usize; n];
    let mut level_h: Vec<f64> = Vec::new();
    let mut x0 = gap;
    let mut queue: Vec<(usize, f64, usize)> = Vec::new();
    for &r in &roots {
        queue.push((r, x0, 0));
        x0 += width[r] + 3.0 * gap;
    }
    let mut qi = 0;
    while qi < queue.len() {
        let (i, left, d) = queue[qi];
        qi += 1;
        depth[i] = d;
        if level_h.len() <= d {
            level_h.push(0.0);
        }
        level_h[d] = level_h[d].max(sizes[i].1);
        places[i].0 = left + (width[i] - sizes[i].0) / 2.0;
        let mut cx = left + (width[i] - spread(&children[i], &width)) / 2.0;
        for &k in &children[i] {
            queue.push((k, cx, d + 1));
            cx += width[k] + 2.0 * gap;
        }
    }
    let mut level_y = vec![top; level_h.len()];
    for d in 1..level_h.len() {
        level_y[d] = level_y[d - 1] + level_h[d - 1] + vgap;
    }
    for (i, p) in places.iter_mut().enumerate() {
        if seen[i] {
            p.1 = level_y[depth[i]];
        }
    }
    let height = level_y
        .iter()
        .zip(&level_h)
        .map(|(y, h)| y + h)
        .fold(top, f64::max)
        + gap;
    Placed {
        places,
        width: x0 + gap,
        height,
    }
}

/// A layered drawing of a directed graph ([`layered`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layers {
    /// The boxes' places.
    pub placed: Placed,
    /// The layer of each box (0 at the top).
    pub layer: Vec<usize>,
    /// The edges that go against the layering (closing a cycle), by index
    /// into the edges given; every other edge goes from a layer to a lower one.
    pub back_edges: Vec<usize>,
}

/// A directed graph top-down (Sugiyama's scheme, simply): cycles broken by a
/// depth-first search from the boxes nothing points to, each box on the
/// layer after the lowest of its predecessors (longest path), boxes in a
/// layer ordered by the mean position of their predecessors, each layer
/// centred. `edges` are (from, to) indices into `sizes`; self loops and
/// out-of-range ends are ignored. Boxes in a layer are `gap` apart, layers
/// `vgap`; the first layer is at y = `top`.
pub fn layered(
    sizes: &[(f64, f64)],
    edges: &[(usize, usize)],
    gap: f64,
    vgap: f64,
    top: f64,
) -> Layers {
    let n = sizes.len();
    let valid = |&(a, b): &(usize, usize)| a < n && b < n && a != b;
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for (e, &(a, b)) in edges.iter().enumerate() {
        if valid(&(a, b)) {
            out[a].push((b, e));
            indegree[b] += 1;
        }
    }
    // Depth-first from the sources, then from whatever is left: an edge to a
    // box on the current path is a back edge. Post-order reversed is a
    // topological order of the rest.
    let mut state = vec![0u8; n]; // 0 new, 1 on the path, 2 done
    let mut back = vec![false; edges.len()];
    let mut post = Vec::with_capacity(n);
    let starts: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).chain(0..n).collect();
    for s in starts {
        if state[s] != 0 {
            continue;
        }
        state[s] = 1;
        let mut stack: Vec<(usize, usize)> = vec![(s, 0)];
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&(w, e)) = out[v].get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => back[e] = true,
                    _ => {}
                }
            } else {
                state[v] = 2;
                post.push(v);
                stack.pop();
            }
        }
    }
    let mut layer = vec![0usize; n];
    for &v in post.iter().rev() {
        for &(w, e) in &out[v] {
            if !back[e] {
                layer[w] = layer[w].max(layer[v] + 1);
            }
        }
    }
    let layers = layer.iter().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (i, &l) in layer.iter().enumerate() {
        members[l].push(i);
    }
    // Order: by the mean position of the predecessors in the layers above.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (e, &(a, b)) in edges.iter().enumerate() {
        if valid(&(a, b)) && !back[e] {
            preds[b].push(a);
        }
    }
    let mut position = vec![0.0f64; n];
    for row in members.iter_mut() {
        let keys: Vec<(f64, usize)> = row
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let key = if preds[i].is_empty() {
                    k as f64
                } else {
                    preds[i].iter().map(|&p| position[p]).sum::<f64>() / preds[i].len() as f64
                };
                (key, i)
            })
            .collect();
        let mut keyed = keys;
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        *row = keyed.into_iter().map(|(_, i)| i).collect();
        for (k, &i) in row.iter().enumerate() {
            position[i] = k as f64;
        }
    }
    // Coordinates: each layer a row, centred on the widest.
    let row_w: Vec<f64> = members
        .iter()
        .map(|row| {
            row.iter().map(|&i| sizes[i].0).sum::<f64>() + gap * row.len().saturating_sub(1) as f64
        })
        .collect();
    let widest = row_w.iter().copied().fold(0.0f64, f64::max);
    let mut places = vec![(0.0f64, 0.0f64); n];
    let mut y = top;
    for (row, w) in members.iter().zip(&row_w) {
        let mut x = gap + (widest - w) / 2.0;
        let mut h = 0.0f64;
        for &i in row {
            places[i] = (x, y);
            x += sizes[i].0 + gap;
            h = h.max(sizes[i].1);
        }
        y += h + vgap;
    }
    let height = if members.is_empty() {
        top + gap
    } else {
        y - vgap + gap
    };
    Layers {
        placed: Placed {
            places,
            width: widest + 2.0 * gap,
            height,
        },
        layer,
        back_edges: (0..edges.len()).filter(|&e| back[e]).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlap(a: (f64, f64), sa: (f64, f64), b: (f64, f64), sb: (f64, f64)) -> bool {
        a.0 < b.0 + sb.0 && b.0 < a.0 + sa.0 && a.1 < b.1 + sb.1 && b.1 < a.1 + sa.1
    }

    fn assert_disjoint_and_inside(sizes: &[(f64, f64)], p: &Placed) {
        for i in 0..sizes.len() {
            let (x, y) = p.places[i];
            assert!(x >= 0.0 && y >= 0.0, "box {i} at {x},{y}");
            assert!(
                x + sizes[i].0 <= p.width + 1e-9,
                "box {i} past the width {p:?}"
            );
            assert!(
                y + sizes[i].1 <= p.height + 1e-9,
                "box {i} past the height {p:?}"
            );
            for j in 0..i {
                assert!(
                    !overlap(p.places[i], sizes[i], p.places[j], sizes[j]),
                    "boxes {i} and {j} overlap: {p:?}"
                );
            }
        }
    }

    #[test]
    fn rows_wrap_at_the_width() {
        let sizes = [(50.0, 10.0), (50.0, 20.0), (50.0, 5.0), (200.0, 5.0)];
        let p = rows(&sizes, 130.0, 5.0, 10.0);
        assert_eq!(p.places[0], (5.0, 15.0));
        assert_eq!(p.places[1], (60.0, 15.0));
        assert_eq!(
            p.places[2],
            (5.0, 40.0),
            "wrapped below the tallest of row 1"
        );
        assert_eq!(p.places[3].0, 5.0, "too wide: a row of its own");
        assert_disjoint_and_inside(&sizes, &p);
    }

    #[test]
    fn a_tree_puts_parents_above_and_centred_over_their_children() {
        // 0 is the root of 1 and 2; 3 is another root; 4 is under 2.
        let sizes = [
            (40.0, 10.0),
            (30.0, 30.0),
            (30.0, 10.0),
            (20.0, 20.0),
            (60.0, 10.0),
        ];
        let parents = [None, Some(0), Some(0), None, Some(2)];
        let p = tree(&sizes, &parents, 6.0, 30.0, 20.0);
        assert_disjoint_and_inside(&sizes, &p);
        assert_eq!(p.places[0].1, 20.0);
        assert_eq!(p.places[3].1, 20.0);
        // Level 0 is as tall as its tallest box (3), level 1 as 1.
        assert_eq!(p.places[1].1, 20.0 + 20.0 + 30.0);
        assert_eq!(
            p.places[4].1,
            70.0 + 30.0 + 30.0,
            "below the tallest of its parent's level"
        );
        let centre = |i: usize| p.places[i].0 + sizes[i].0 / 2.0;
        let span = (p.places[1].0, p.places[2].0 + 60f64.max(30.0));
        assert!(centre(0) > span.0 && centre(0) < span.1);
        assert!(
            p.places[3].0 > p.places[4].0 + 60.0 - 1e-9,
            "trees side by side"
        );
    }

    #[test]
    fn a_parent_cycle_leaves_its_boxes_unplaced_and_the_rest_fine() {
        let sizes = [(10.0, 10.0); 3];
        let p = tree(&sizes, &[Some(1), Some(0), Some(7)], 2.0, 5.0, 0.0);
        assert_eq!(p.places[0], (0.0, 0.0));
        assert_eq!(p.places[2], (2.0, 0.0));
    }

    #[test]
    fn a_call_graph_is_layered_top_down_with_cycles_broken() {
        // 0 calls 1 and 2, 1 calls 3, 2 calls 3, 3 calls 1 (a cycle), 4 calls itself.
        let sizes = [
            (20.0, 10.0),
            (30.0, 20.0),
            (10.0, 10.0),
            (40.0, 5.0),
            (15.0, 15.0),
        ];
        let edges = [(0, 1), (0, 2), (1, 3), (2, 3), (3, 1), (4, 4), (9, 0)];
        let l = layered(&sizes, &edges, 8.0, 40.0, 30.0);
        assert_disjoint_and_inside(&sizes, &l.placed);
        assert_eq!(l.layer, [0, 1, 1, 2, 0]);
        assert_eq!(l.back_edges, [4]);
        for (e, &(a, b)) in edges.iter().enumerate() {
            if a < 5 && b < 5 && a != b && !l.back_edges.contains(&e) {
                assert!(
                    l.placed.places[a].1 + sizes[a].1 < l.placed.places[b].1,
                    "edge {e} goes down"
                );
            }
        }
        assert_eq!(l.placed.places[0].1, 30.0);
    }

    #[test]
    fn empty_inputs_make_empty_pictures() {
        assert!(rows(&[], 100.0, 4.0, 0.0).places.is_empty());
        assert!(tree(&[], &[], 4.0, 4.0, 0.0).places.is_empty());
        let l = layered(&[], &[], 4.0, 4.0, 10.0);
        assert!(l.placed.places.is_empty() && l.layer.is_empty());
        assert_eq!(l.placed.height, 14.0);
    }
}
