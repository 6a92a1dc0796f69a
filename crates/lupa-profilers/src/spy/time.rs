//! Spy's time and call graph (the Spy paper, section 3.5): the method-level
//! call graph of a profile, as `System>>stopProfilerData` hands it to
//! Smalltalk ([`lupa_vm::CallGraph`]).
//!
//! A profile's methods include blocks (`[]#2 in Foo>>bar`); Spy's spies are
//! methods. A block's values are its own, kept inside its home method
//! ([`lupa_vm::CallGraph::blocks`]), not charged to the method that created
//! it: a method that only makes a block that runs later elsewhere (Richards'
//! `createHandler:`) costs what its own code cost. A method a block activates
//! is called by the block's home method, and an activation of a block is not
//! a call. Pseudo-frames (the synthetic root, `<process N>`, the sampler's VM
//! states) are left out, and so are calls from them.
//!
//! Contract: `calls` of a method is the sum of the activations of its own
//! contexts, of a block the sum of its contexts'; an edge's count is the
//! activations of the callee whose parent context is code of the caller (the
//! caller itself or one of its blocks); `own` of a method sums the self values
//! of its own contexts (its blocks left out), of a block its contexts'. The
//! values of a method and of its blocks add up to what the method's code cost
//! in all. `total` is the inclusive value of the outermost contexts of the
//! method (of the block), recursion counted once: the value while it was on
//! the stack, so a method's total includes the blocks that ran inside it (a
//! `do:` it sent) and not those that ran after it returned. Methods are
//! sorted by name, edges by caller then callee, blocks by home then name.

use std::collections::BTreeMap;

use lupa_prof::{MethodInfo, Profile};
use lupa_vm::{CallGraph, GraphBlock, GraphMethod};

/// The method a profile method belongs to (`Class>>selector`), and its name
/// when it is a block of it; `None` for a pseudo-frame.
fn home_of(m: &MethodInfo) -> Option<(String, Option<&str>)> {
    if m.class.is_empty() || m.is_synthetic_root() {
        return None;
    }
    let home = format!("{}>>{}", m.class, m.selector);
    let block = (m.name != home && m.name.starts_with("[]")).then_some(m.name.as_str());
    Some((home, block))
}

/// What a profile method is in the graph.
#[derive(Clone, Copy)]
struct Code {
    /// Its (home) method, an index into the graph's methods.
    method: usize,
    /// The block, an index into the graph's blocks.
    block: Option<usize>,
}

/// The method-level call graph of `profile`.
pub fn call_graph(profile: &Profile) -> CallGraph {
    let homes: Vec<Option<(String, Option<&str>)>> = profile.methods.iter().map(home_of).collect();
    let mut names: Vec<&str> = homes.iter().flatten().map(|(h, _)| h.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut block_names: Vec<(usize, &str)> = homes
        .iter()
        .flatten()
        .filter_map(|(h, b)| b.map(|b| (index[h.as_str()], b)))
        .collect();
    block_names.sort_unstable();
    block_names.dedup();
    let block_index: BTreeMap<(usize, &str), usize> = block_names
        .iter()
        .enumerate()
        .map(|(i, k)| (*k, i))
        .collect();
    let codes: Vec<Option<Code>> = homes
        .iter()
        .map(|h| {
            h.as_ref().map(|(name, block)| {
                let method = index[name.as_str()];
                Code {
                    method,
                    block: block.map(|b| block_index[&(method, b)]),
                }
            })
        })
        .collect();
    let mut methods: Vec<GraphMethod> = names
        .iter()
        .map(|n| GraphMethod {
            name: (*n).to_string(),
            ..GraphMethod::default()
        })
        .collect();
    let mut blocks: Vec<GraphBlock> = block_names
        .iter()
        .map(|&(home, name)| GraphBlock {
            name: name.to_string(),
            home,
            ..GraphBlock::default()
        })
        .collect();
    let mut edges: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let code_of = |i: usize| codes[profile.nodes[i].method.index()];
    for (i, node) in profile.nodes.iter().enumerate() {
        let Some(code) = code_of(i) else {
            continue;
        };
        if let Some(b) = code.block {
            let b = &mut blocks[b];
            b.own = b.own.saturating_add(node.self_value);
            b.calls = b.calls.saturating_add(node.activations);
            continue;
        }
        let m = &mut methods[code.method];
        m.own = m.own.saturating_add(node.self_value);
        m.calls = m.calls.saturating_add(node.activations);
        if let Some(caller) = node.parent.and_then(|p| code_of(p.index())) {
            let e = edges.entry((caller.method, code.method)).or_insert(0);
            *e = e.saturating_add(node.activations);
        }
    }
    // Totals: contexts with no ancestor of the same method (of the same
    // block); a unit is a method (index) or a block (after the methods).
    let unit = |i: usize| {
        code_of(i).map(|c| match c.block {
            Some(b) => methods.len() + b,
            None => c.method,
        })
    };
    let units: Vec<Option<usize>> = (0..profile.nodes.len()).map(unit).collect();
    let totals = profile.node_totals();
    let mut unit_totals = vec![0u64; methods.len() + blocks.len()];
    let mut on_path = vec![0u32; unit_totals.len()];
    let mut seen = vec![false; profile.nodes.len()];
    let mut stack: Vec<(usize, bool)> = profile.roots().map(|r| (r.index(), false)).collect();
    stack.reverse();
    while let Some((i, exiting)) = stack.pop() {
        let u = units[i];
        if exiting {
            if let Some(u) = u {
                on_path[u] -= 1;
            }
            continue;
        }
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if let Some(u) = u {
            if on_path[u] == 0 {
                unit_totals[u] = unit_totals[u].saturating_add(totals[i]);
            }
            on_path[u] += 1;
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
    let (method_totals, block_totals) = unit_totals.split_at(methods.len());
    for (m, t) in methods.iter_mut().zip(method_totals) {
        m.total = *t;
    }
    for (b, t) in blocks.iter_mut().zip(block_totals) {
        b.total = *t;
    }
    CallGraph {
        methods,
        edges: edges.into_iter().map(|((a, b), n)| (a, b, n)).collect(),
        blocks,
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
    fn blocks_are_their_own_inside_their_home_method() {
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
        // run's own value leaves its block out; its total holds the block,
        // which ran while run was on the stack.
        assert_eq!((run.calls, run.own, run.total), (1, 1, 1 + 2 + 6 + 18));
        assert_eq!((a.calls, a.own, a.total), (4, 18, 18));
        assert_eq!((do_.calls, do_.own, do_.total), (1, 2, 2 + 6 + 18));
        // The block's calls are its home's.
        assert_eq!(g.edges, [(1, 1, 2), (2, 0, 1), (2, 1, 2)]);
        assert_eq!(
            g.blocks,
            [GraphBlock {
                name: "[] in Foo>>run".into(),
                home: 2,
                calls: 2,
                own: 6,
                total: 6 + 18,
            }]
        );
    }

    /// `Foo>>make` only creates a block; `Foo>>loop` later runs it three
    /// times through `Bar>>each`, each run calling `Foo>>a`; the block calls
    /// itself once (recursion counted once in its total).
    #[test]
    fn a_block_run_later_is_not_charged_to_the_method_that_created_it() {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let make = b.intern_method(method("Foo", "make", "Foo>>make"));
        let lp = b.intern_method(method("Foo", "loop", "Foo>>loop"));
        let each = b.intern_method(method("Bar", "each", "Bar>>each"));
        let block = b.intern_method(method("Foo", "make", "[]#1 in Foo>>make"));
        let a = b.intern_method(method("Foo", "a", "Foo>>a"));
        b.enter(make);
        b.add_self(1);
        b.exit();
        b.enter(lp);
        b.add_self(1);
        b.enter(each);
        b.add_self(1);
        for _ in 0..3 {
            b.enter(block);
            b.add_self(10);
            b.enter(a);
            b.add_self(2);
            b.exit();
            b.exit();
        }
        b.enter(block);
        b.add_self(1);
        b.enter(block);
        b.add_self(1);
        b.exit();
        b.exit();
        b.exit();
        b.exit();
        let g = call_graph(&b.finish());
        let names: Vec<&str> = g.methods.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["Bar>>each", "Foo>>a", "Foo>>loop", "Foo>>make"]);
        let make = &g.methods[3];
        assert_eq!((make.calls, make.own, make.total), (1, 1, 1));
        let lp = &g.methods[2];
        assert_eq!((lp.calls, lp.own, lp.total), (1, 1, 1 + 1 + 36 + 2));
        assert_eq!(g.blocks.len(), 1);
        let blk = &g.blocks[0];
        assert_eq!((blk.name.as_str(), blk.home), ("[]#1 in Foo>>make", 3));
        assert_eq!((blk.calls, blk.own, blk.total), (5, 32, 36 + 2));
        // The values of all methods and blocks add up to the profile's.
        let sum: u64 = g.methods.iter().map(|m| m.own).sum::<u64>()
            + g.blocks.iter().map(|b| b.own).sum::<u64>();
        assert_eq!(sum, 1 + 1 + 1 + 36 + 2);
        // A block activation is not a call; its calls are its home's.
        assert_eq!(g.edges, [(2, 0, 1), (3, 1, 3)]);
    }
}
