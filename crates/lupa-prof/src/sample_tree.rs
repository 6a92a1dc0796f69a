//! [`SampleTree`]: a sampling profiler's stacks interned as they are read, in
//! a tree of the profiler's own raw frames, and turned into a [`Profile`]
//! once, at the end.
//!
//! Contract. A sample is a path of raw frames `F` from the root (outermost
//! first): [`SampleTree::child`] answers the node of a frame below a node
//! (made the first time), [`SampleTree::add`] charges a sample's value to its
//! last node. [`SampleTree::into_profile`] then gives each node to the
//! [`ProfileBuilder`] once, in the order the nodes were made (parents
//! first), with the [`SampleFrame`] its caller's resolver makes of it (from
//! its raw frame and its parent's: a call line is a fact of the caller's
//! frame), its own value, and the samples and value of its subtree
//! ([`ProfileBuilder::add_context`]). The profile is the one entering,
//! charging and leaving each sample's frames would build, in the order the
//! samples came: the same nodes in the same order, the same values, call
//! lines and call sites, and activations counting the samples a context was
//! in (the test below checks it against the builder's events).
//!
//! Why. A sampler's consecutive samples of a deep stack share most of their
//! frames, and a raw frame (a method and a pc, one word) is cheap to
//! compare where a profile frame (a method and a call line, the line looked
//! up in the method's line table) is not: interning the frames that changed
//! is a short scan of a node's children each (a [`Trie`]), and the names,
//! lines, contexts and call sites of the profile are paid per distinct path,
//! not per frame of every sample (Havlak sampled at 10 kHz: 63 of a sample's
//! 108 frames change between samples, and its 13,000 samples make about as
//! many paths). A sampler whose stacks are already interned (Lupa's: the
//! VM's stack log is a trie too) gives each distinct stack once, below the
//! nearest of its outer paths it gave before, and charges each sample to its
//! stack's node.
//!
//! Bounds: node ids are `u32`; a sampler stores at most `MAX_TICKS` samples
//! of at most `MAX_STACK` frames (2^30 in all), far below it. Were the tree
//! full, a new frame would be charged to its parent.

use crate::builder::{ProfileBuilder, SampleFrame};
use crate::ids::NodeId;
use crate::profile::ROOT_NODE;
use lupa_trie::{Trie, TrieNode};
use std::hash::Hash;

/// A node of a [`SampleTree`]: an index, [`SampleTree::ROOT`] for the root.
pub type SampleNode = TrieNode;

/// Sampled stacks as a tree of raw frames `F` (see the module docs).
#[derive(Debug, Clone)]
pub struct SampleTree<F> {
    paths: Trie<F>,
    /// Per node (the root first), what the samples that end at it charged:
    /// their value and their number.
    charged: Vec<(u64, u64)>,
}

impl<F: Copy + Eq + Hash> Default for SampleTree<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Copy + Eq + Hash> SampleTree<F> {
    /// The root: the node of the empty path.
    pub const ROOT: SampleNode = Trie::<F>::ROOT;

    /// An empty tree (its root only).
    pub fn new() -> Self {
        SampleTree {
            paths: Trie::new(),
            charged: vec![(0, 0)],
        }
    }

    /// Make room for about `additional` more nodes (as many as the stacks
    /// sampled have distinct paths: a deep profile about one a sample): the
    /// tables are not copied as they grow.
    pub fn reserve(&mut self, additional: usize) {
        self.paths.reserve(additional);
        self.charged.reserve(additional);
    }

    /// The node of `frame` below `parent`, made the first time.
    #[inline]
    pub fn child(&mut self, parent: SampleNode, frame: F) -> SampleNode {
        let node = self.paths.child(parent, frame);
        if node as usize == self.charged.len() {
            self.charged.push((0, 0));
        }
        node
    }

    /// Charge one sample of `value` to `node`.
    #[inline]
    pub fn add(&mut self, node: SampleNode, value: u64) {
        if let Some(e) = self.charged.get_mut(node as usize) {
            e.0 = e.0.wrapping_add(value);
            e.1 += 1;
        }
    }

    /// Nodes, the root included.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Has it no node but the root?
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Give every node to `b` (positioned at its root: no open activation),
    /// parents first, as the frame `resolve` makes of it (given the builder,
    /// the parent's raw frame, none for a child of the root, and its own);
    /// answer the profile node of each node (the root's is the profile's
    /// root, charged the samples of the empty path).
    pub fn into_profile(
        self,
        b: &mut ProfileBuilder,
        mut resolve: impl FnMut(&mut ProfileBuilder, Option<&F>, &F) -> SampleFrame,
    ) -> Vec<NodeId> {
        let n = self.paths.len();
        // The subtree sums: a node is made after its parent, so a pass from
        // the last node back adds each one's sums to its parent's.
        let mut samples: Vec<u64> = self.charged.iter().map(|e| e.1).collect();
        let mut totals: Vec<u64> = self.charged.iter().map(|e| e.0).collect();
        for i in (1..n).rev() {
            let Some(p) = self.paths.parent(i as SampleNode) else {
                continue;
            };
            let p = p as usize;
            samples[p] += samples[i];
            totals[p] = totals[p].wrapping_add(totals[i]);
        }
        let mut at = vec![ROOT_NODE; n];
        if self.charged[0].0 != 0 {
            b.add_self(self.charged[0].0);
        }
        for i in 1..n {
            let node = i as SampleNode;
            let (Some(p), Some(frame)) = (self.paths.parent(node), self.paths.frame(node)) else {
                continue;
            };
            let resolved = resolve(b, self.paths.frame(p), frame);
            at[i] = b.add_context(
                at[p as usize],
                resolved,
                self.charged[i].0,
                samples[i],
                totals[i],
            );
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::MethodId;
    use crate::profile::{CallSite, MethodInfo, Metric, Profile};
    use proptest::prelude::*;

    /// Frames over a few methods and lines, so that paths share prefixes.
    fn frame() -> impl Strategy<Value = (usize, Option<u32>)> {
        (0..4usize, prop_oneof![Just(None), (0..3u32).prop_map(Some)])
    }

    /// A sample: its frames (method index, line) and its value.
    type Drawn = (Vec<(usize, Option<u32>)>, u64);

    fn samples() -> impl Strategy<Value = Vec<Drawn>> {
        prop::collection::vec((prop::collection::vec(frame(), 0..7), 1..100u64), 0..40)
    }

    fn builder() -> (ProfileBuilder, Vec<MethodId>) {
        let mut b = ProfileBuilder::new(Metric::Samples);
        let ms = (0..4)
            .map(|i| b.add_method(MethodInfo::named(format!("C>>m{i}"))))
            .collect();
        (b, ms)
    }

    /// A profile of paths whose frames are already profile frames, through
    /// a tree, and each path's node.
    fn profile_of_paths<'a>(
        mut b: ProfileBuilder,
        paths: impl IntoIterator<Item = (&'a [SampleFrame], u64)>,
    ) -> (Profile, Vec<NodeId>) {
        let mut tree: SampleTree<SampleFrame> = SampleTree::new();
        let mut leaves = Vec::new();
        for (path, value) in paths {
            let leaf = path
                .iter()
                .fold(SampleTree::<SampleFrame>::ROOT, |n, &f| tree.child(n, f));
            tree.add(leaf, value);
            leaves.push(leaf);
        }
        let at = tree.into_profile(&mut b, |_, _, &f| f);
        let nodes = leaves.into_iter().map(|l| at[l as usize]).collect();
        (b.finish(), nodes)
    }

    proptest! {
        /// The tree's profile is the one entering, charging and exiting each
        /// sample's frames builds, in order; each sample lands on the node
        /// the events reach.
        #[test]
        fn the_tree_builds_what_the_events_build(samples in samples()) {
            let (mut events, ms) = builder();
            let paths: Vec<Vec<SampleFrame>> = samples
                .iter()
                .map(|(fs, _)| fs.iter().map(|&(m, l)| (ms[m], l)).collect())
                .collect();
            let mut leaves = Vec::new();
            for (path, (_, value)) in paths.iter().zip(&samples) {
                for &(m, line) in path {
                    events.enter_from(m, line);
                }
                events.add_self(*value);
                leaves.push(events.current_node());
                for _ in path {
                    events.exit();
                }
            }
            let (b, _) = builder();
            let (profile, nodes) =
                profile_of_paths(b, paths.iter().zip(&samples).map(|(p, (_, v))| (&p[..], *v)));
            prop_assert_eq!(&events.finish(), &profile);
            prop_assert_eq!(leaves, nodes);
        }
    }

    #[test]
    fn a_call_line_comes_from_the_parents_raw_frame() {
        // Raw frames (method, pc); the line of a frame is its caller's pc.
        let mut tree: SampleTree<(usize, u32)> = SampleTree::new();
        let a = tree.child(SampleTree::<(usize, u32)>::ROOT, (0, 7));
        let b1 = tree.child(a, (1, 1));
        tree.add(b1, 5);
        let a2 = tree.child(SampleTree::<(usize, u32)>::ROOT, (0, 9));
        let b2 = tree.child(a2, (1, 1));
        tree.add(b2, 3);
        assert_eq!(tree.child(a, (1, 1)), b1, "interned once");
        let (mut builder, ms) = builder();
        let at = tree.into_profile(&mut builder, |_, parent, &(m, _)| {
            (ms[m], parent.map(|&(_, pc)| pc))
        });
        let p = builder.finish();
        assert_eq!(at[b1 as usize], at[b2 as usize], "one context for both pcs");
        let callee = &p.nodes[at[b1 as usize]];
        assert_eq!(callee.self_value, 8);
        assert_eq!(callee.call_line, Some(7));
        assert_eq!(
            callee.sites,
            vec![
                CallSite {
                    line: 7,
                    calls: 1,
                    total: 5
                },
                CallSite {
                    line: 9,
                    calls: 1,
                    total: 3
                }
            ]
        );
        assert_eq!(p.nodes[at[a as usize]].activations, 2);
    }
}
