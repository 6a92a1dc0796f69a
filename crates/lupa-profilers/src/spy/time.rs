//! Spy's time and call graph (the Spy paper, section 3.5): the method-level
//! call graph of a profile, as `System>>stopProfilerData` hands it to
//! Smalltalk ([`lupa_vm::CallGraph`]).
//!
//! A profile's methods include blocks (`[]#2 in Foo>>bar`); Spy's spies are
//! methods. So a block is folded into its home method: its own value is the
//! home's, a method it activates is called by the home, and an activation of
//! the block is not a call. Pseudo-frames (the synthetic root, `<process N>`,
//! the sampler's VM states) are left out, and so are calls from them.
//!
//! Contract: `calls` of a method is the sum of the activations of its
//! contexts; an edge's count is the activations of the callee whose parent
//! context is code of the caller (the caller itself or one of its blocks);
//! `own` sums the self values of the method and its blocks; `total` is the
//! inclusive value of the method's outermost contexts, its blocks' included
//! (recursion, through blocks too, counted once). Methods are sorted by name,
//! edges by caller then callee.

use std::collections::BTreeMap;

use lupa_prof::{MethodInfo, Profile};
use lupa_vm::{CallGraph, GraphMethod};

/// The method a profile method belongs to (`Class>>selector`), and whether it
/// is a block of it; `None` for a pseudo-frame.
fn home_of(m: &MethodInfo) -> Option<(String, bool)> {
    if m.class.is_empty() || m.is_synthetic_root() {
        return None;
    }
    let home = format!("{}>>{}", m.class, m.selector);
    let block = m.name != home && m.name.starts_with("[]");
    Some((home, block))
}

/// The method-level call graph of `profile`.
pub fn call_graph(profile: &Profile) -> CallGraph {
    // Profile method -> (graph method, is a block).
    let homes: Vec<Option<(String, bool)>> = profile.methods.iter().map(home_of).collect();
    let mut names: Vec<&str> = homes.iter().flatten().map(|(h, _)| h.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let folded: Vec<Option<(usize, bool)>> = homes
        .iter()
        .map(|h| {
            h.as_ref()
                .map(|(name, block)| (index[name.as_str()], *block))
        })
        .collect();
    let mut methods: Vec<GraphMethod> = names
        .iter()
        .map(|n| GraphMethod {
            name: (*n).to_string(),
            ..GraphMethod::default()
        })
        .collect();
    let mut edges: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let node_of = |i: usize| folded[profile.nodes[i].method.index()];
    for (i, node) in profile.nodes.iter().enumerate() {
        let Some((g, block)) = node_of(i) else {
            continue;
        };
        let m = &mut methods[g];
        m.own = m.own.saturating_add(node.self_value);
        if block {
            continue;
        }
        m.calls = m.calls.saturating_add(node.activations);
        if let Some((caller, _)) = node.parent.and_then(|p| node_of(p.index())) {
            let e = edges.entry((caller, g)).or_insert(0);
            *e = e.saturating_add(node.activations);
        }
    }
    // Totals: contexts with no ancestor of the same graph method.
    let totals = profile.node_totals();
    let mut on_path = vec![0u32; methods.len()];
    let mut seen = vec![false; profile.nodes.len()];
    let mut stack: Vec<(usize, bool)> = profile.roots().map(|r| (r.index(), false)).collect();
    stack.reverse();
    while let Some((i, exiting)) = stack.pop() {
        let g = node_of(i).map(|(g, _)| g);
        if exiting {
            if let Some(g) = g {
                on_path[g] -= 1;
            }
            continue;
        }
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if let Some(g) = g {
            if on_path[g] == 0 {
                methods[g].total = methods[g].total.saturating_add(totals[i]);
            }
            on_path[g] += 1;
        }
        stack.push((i, true));
        stack.extend(
            profile.nodes[i]
                .children
                .iter()
                .rev()
                .map(|c| (c.index(), false)),
        );
    }
    CallGraph {
        methods,
        edges: edges.into_iter().map(|((a, b), n)| (a, b, n)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_prof::{Metric, ProfileBuilder};

    fn method(class: &str, selector: &str, name: &str) -> MethodInfo {
        let mut m = MethodInfo::new(class, selector);
        m.name = name.to_string();
        m
    }

    /// `Foo>>run` calls `Array>>do:` whose block (of `run`) calls `Foo>>a`
    /// twice; `Foo>>a` recurses into itself once.
    #[test]
    fn blocks_fold_into_their_home_method() {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let run = b.intern_method(method("Foo", "run", "Foo>>run"));
        let each = b.intern_method(method("Array", "do:", "Array>>do:"));
        let block = b.intern_method(method("Foo", "run", "[] in Foo>>run"));
        let a = b.intern_method(method("Foo", "a", "Foo>>a"));
        b.enter(run);
        b.add_self(1);
        b.enter(each);
        b.add_self(2);
        for _ in 0..2 {
            b.enter(block);
            b.add_self(3);
            b.enter(a);
            b.add_self(4);
            b.enter(a);
            b.add_self(5);
            b.exit();
            b.exit();
            b.exit();
        }
        b.exit();
        b.exit();
        let g = call_graph(&b.finish());
        let names: Vec<&str> = g.methods.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["Array>>do:", "Foo>>a", "Foo>>run"]);
        let (do_, a, run) = (&g.methods[0], &g.methods[1], &g.methods[2]);
        assert_eq!((run.calls, run.own, run.total), (1, 1 + 6, 1 + 2 + 6 + 18));
        assert_eq!((a.calls, a.own, a.total), (4, 18, 18));
        assert_eq!((do_.calls, do_.own, do_.total), (1, 2, 2 + 6 + 18));
        assert_eq!(g.edges, [(1, 1, 2), (2, 0, 1), (2, 1, 2)]);
    }
}
