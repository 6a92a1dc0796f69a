//! `lupa-trie`: paths of frames interned in a tree, and the child lookup of
//! a tree that grows.
//!
//! A sampled program's stacks repeat: consecutive samples share most of
//! their outer frames, and a run's thousands of samples make about as many
//! distinct paths. A [`Trie`] keeps each distinct path once, as a node whose
//! parent is the path without its last frame, so that a stack is one number
//! and a path seen before costs a lookup a frame, and no memory.
//! What uses it: the VM's stack log (`lupa_vm::StackLog`: the stacks the
//! interpreter copies for a sampler, a node each) and the sampler's tree of
//! profile paths (`lupa_prof::SampleTree`); the profile builder finds a
//! callee's context with the same [`Children`] lookup.
//!
//! Contract. Nodes are numbered densely from [`Trie::ROOT`] (the empty path,
//! 0) in the order they are made; a node is made after its parent.
//! [`Trie::child`] answers the node of a frame below a node, made the first
//! time: the same (parent, frame) always answers the same node, and two
//! nodes are the same exactly when their paths are. [`Trie::path`] gives a
//! node's frames back, outermost first. Node ids are `u32`, and no node is
//! `u32::MAX` (a caller may use it as "none"). A full trie (2^32 - 1 nodes,
//! or the limit it was made with: [`Trie::with_limit`]) makes no more: [`Trie::child`] then answers the parent itself for a
//! new frame, and a caller interning a path stops there, its path cut short
//! ([`Trie::is_full`]; the stack log and the sampler make far fewer).
//!
//! ```
//! use lupa_trie::Trie;
//!
//! let mut t = Trie::new();
//! let main = t.child(Trie::<&str>::ROOT, "main");
//! let a = t.child(main, "fib");
//! let b = t.child(main, "fib");
//! assert_eq!(a, b);
//! let mut path = Vec::new();
//! t.path(a, &mut path);
//! assert_eq!(path, ["main", "fib"]);
//! assert_eq!(t.parent(a), Some(main));
//! ```

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod children;

pub use children::Children;
use std::hash::Hash;

/// A node of a [`Trie`]: an index, [`Trie::ROOT`] for the empty path.
pub type TrieNode = u32;

/// Paths of frames `F`, each interned once (see the crate docs).
#[derive(Debug, Clone)]
pub struct Trie<F> {
    /// Each node's parent and last frame, the root's excepted: node n is at
    /// n - 1.
    nodes: Vec<(TrieNode, F)>,
    children: Children<F, TrieNode>,
    /// The most nodes it makes, the root included.
    limit: usize,
}

impl<F: Copy + Eq + Hash> Default for Trie<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Copy + Eq + Hash> Trie<F> {
    /// The node of the empty path.
    pub const ROOT: TrieNode = 0;

    /// A trie of the empty path only.
    pub fn new() -> Self {
        Self::with_limit(Self::CAPACITY)
    }

    /// A trie of the empty path only that makes at most `nodes` nodes, the
    /// root included (at least the root, at most 2^32 - 1).
    pub fn with_limit(nodes: usize) -> Self {
        let mut children = Children::new();
        children.add_node();
        Trie {
            nodes: Vec::new(),
            children,
            limit: nodes.clamp(1, Self::CAPACITY),
        }
    }

    /// Make room for `additional` more nodes: the tables are not copied as
    /// they grow to that.
    pub fn reserve(&mut self, additional: usize) {
        self.nodes.reserve(additional);
        self.children.reserve(additional);
    }

    /// The node of `frame` below `parent` (a node of this trie), made the
    /// first time; `parent` itself when the trie is full (or `parent` is not
    /// a node of it).
    #[inline]
    pub fn child(&mut self, parent: TrieNode, frame: F) -> TrieNode {
        if let Some(c) = self.children.get(parent as usize, frame) {
            return c;
        }
        if parent as usize > self.nodes.len() || self.is_full() {
            return parent;
        }
        let id = (self.nodes.len() + 1) as TrieNode;
        self.nodes.push((parent, frame));
        self.children.add_node();
        self.children.insert(parent as usize, frame, id);
        id
    }

    /// Can it make no more nodes (its limit reached; by default when its
    /// ids would reach `u32::MAX`)?
    #[inline]
    pub fn is_full(&self) -> bool {
        self.nodes.len() + 1 >= self.limit
    }

    /// The most nodes a trie makes, the root included: ids stay below
    /// `u32::MAX`.
    const CAPACITY: usize = TrieNode::MAX as usize;

    /// The parent and last frame of `node` (none for the root, or a node
    /// not made).
    #[inline]
    fn slot(&self, node: TrieNode) -> Option<&(TrieNode, F)> {
        self.nodes.get((node as usize).checked_sub(1)?)
    }

    /// The parent of `node` (none for the root, or a node not made).
    #[inline]
    pub fn parent(&self, node: TrieNode) -> Option<TrieNode> {
        self.slot(node).map(|&(p, _)| p)
    }

    /// The last frame of `node`'s path (none for the root, or a node not
    /// made).
    #[inline]
    pub fn frame(&self, node: TrieNode) -> Option<&F> {
        self.slot(node).map(|(_, f)| f)
    }

    /// The frames of `node`'s path, outermost first, in `out` (cleared
    /// first; empty for the root or a node not made).
    pub fn path(&self, node: TrieNode, out: &mut Vec<F>) {
        out.clear();
        let mut at = node;
        while let Some(&(p, f)) = self.slot(at) {
            out.push(f);
            at = p;
        }
        out.reverse();
    }

    /// Nodes, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len() + 1
    }

    /// Has it no node but the root?
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Against a map of whole paths: a path's node is the same every
        /// time, different paths have different nodes, each node gives its
        /// path back, and a parent is made before its children.
        #[test]
        fn a_path_is_one_node(paths in prop::collection::vec(prop::collection::vec(0u8..4, 0..6), 0..60)) {
            let mut t: Trie<u8> = Trie::new();
            let mut model: HashMap<Vec<u8>, TrieNode> = HashMap::new();
            model.insert(Vec::new(), Trie::<u8>::ROOT);
            for p in &paths {
                let mut node = Trie::<u8>::ROOT;
                for (i, &f) in p.iter().enumerate() {
                    let before = t.len();
                    let next = t.child(node, f);
                    prop_assert!(next > node, "a child is made after its parent");
                    prop_assert_eq!(t.parent(next), Some(node));
                    prop_assert_eq!(t.frame(next), Some(&f));
                    match model.get(&p[..=i]).copied() {
                        // A path seen before: its node, and nothing made.
                        Some(k) => {
                            prop_assert_eq!(k, next);
                            prop_assert_eq!(t.len(), before);
                        }
                        None => prop_assert_eq!(t.len(), before + 1),
                    }
                    model.insert(p[..=i].to_vec(), next);
                    node = next;
                }
            }
            prop_assert_eq!(t.len(), model.len());
            let mut back = Vec::new();
            for (path, &node) in &model {
                t.path(node, &mut back);
                prop_assert_eq!(&back, path);
            }
        }
    }

    #[test]
    fn a_full_trie_answers_the_parent_and_still_finds_what_it_made() {
        let mut t: Trie<u8> = Trie::with_limit(3);
        let a = t.child(Trie::<u8>::ROOT, 1);
        let b = t.child(a, 2);
        assert!(t.is_full());
        assert_eq!(t.child(b, 3), b, "no room: the parent");
        assert_eq!(t.child(Trie::<u8>::ROOT, 9), Trie::<u8>::ROOT);
        assert_eq!(t.child(a, 2), b, "made before: found");
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn the_root_has_no_parent_frame_or_path() {
        let t: Trie<u8> = Trie::new();
        assert!(t.is_empty());
        assert_eq!(t.len(), 1);
        assert_eq!(t.parent(Trie::<u8>::ROOT), None);
        assert_eq!(t.frame(Trie::<u8>::ROOT), None);
        assert_eq!(t.parent(7), None, "a node not made");
        let mut out = vec![1];
        t.path(7, &mut out);
        assert!(out.is_empty());
    }
}
