//! [`Children`]: the children of each node of a tree that grows, found by
//! key: what a [`Trie`](crate::Trie) finds a frame's node with, and
//! `lupa_prof`'s `ProfileBuilder` a callee's context.
//!
//! Contract. Nodes are numbered densely from 0 in the order they are added
//! ([`Children::add_node`]); [`Children::get`] answers the child of a node
//! with a key, [`Children::insert`] records a new one. A node's children
//! are kept in the order they came. Cost: most nodes have one child or a
//! few (a sampled profile of a deep recursion is mostly chains: Havlak's
//! 11,000 contexts, 85% with one child), so a node's first child is kept in
//! the node's own slot (no allocation: a chain costs none), its others side
//! by side in a list a lookup scans (one cache line or two, no hashing), and
//! past [`LINEAR`] children a node's are also indexed in a hash map keyed by
//! (node, key).

use rustc_hash::FxHashMap;
use std::hash::Hash;

/// Children per node up to which a lookup scans them.
const LINEAR: usize = 8;

/// The children of each node by key (see the module docs).
#[derive(Debug, Clone)]
pub struct Children<K, N> {
    /// Per node, its children and their keys.
    kids: Vec<Kids<K, N>>,
    /// (node, key) -> child, for nodes with many children.
    wide: FxHashMap<(usize, K), N>,
}

/// A node's children, in the order they came.
#[derive(Debug, Clone)]
enum Kids<K, N> {
    None,
    /// The first, in the node's slot.
    One(K, N),
    /// Two or more, side by side.
    Many(Vec<(K, N)>),
}

impl<K: Copy + Eq + Hash, N: Copy> Default for Children<K, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Copy + Eq + Hash, N: Copy> Children<K, N> {
    /// No node yet.
    pub fn new() -> Self {
        Children {
            kids: Vec::new(),
            wide: FxHashMap::default(),
        }
    }

    /// Make room for `additional` more nodes.
    pub fn reserve(&mut self, additional: usize) {
        self.kids.reserve(additional);
    }

    /// Add the next node (no child yet).
    pub fn add_node(&mut self) {
        self.kids.push(Kids::None);
    }

    /// The child of `node` with `key`, if there is one.
    #[inline]
    pub fn get(&self, node: usize, key: K) -> Option<N> {
        match self.kids.get(node)? {
            Kids::None => None,
            Kids::One(k, c) => (*k == key).then_some(*c),
            Kids::Many(kids) if kids.len() <= LINEAR => {
                kids.iter().find(|(k, _)| *k == key).map(|&(_, c)| c)
            }
            Kids::Many(_) => self.wide.get(&(node, key)).copied(),
        }
    }

    /// Record `child` as the child of `node` with `key` (which it has none
    /// with yet).
    pub fn insert(&mut self, node: usize, key: K, child: N) {
        let Some(slot) = self.kids.get_mut(node) else {
            return;
        };
        let kids = match slot {
            Kids::None => {
                *slot = Kids::One(key, child);
                return;
            }
            Kids::One(k, c) => {
                let mut two = Vec::with_capacity(4);
                two.extend([(*k, *c), (key, child)]);
                *slot = Kids::Many(two);
                return;
            }
            Kids::Many(kids) => kids,
        };
        kids.push((key, child));
        if kids.len() == LINEAR + 1 {
            for &(k, c) in kids.iter() {
                self.wide.insert((node, k), c);
            }
        } else if kids.len() > LINEAR + 1 {
            self.wide.insert((node, key), child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a map: every child inserted is found under its node and
        /// key, and nothing else is, whether a node has few children or many.
        #[test]
        fn finds_what_a_map_finds(ops in prop::collection::vec((0usize..4, 0u32..20), 0..200)) {
            let mut c: Children<u32, usize> = Children::new();
            let mut model = std::collections::HashMap::new();
            c.add_node();
            let mut nodes = 1;
            for (parent, key) in ops {
                let parent = parent % nodes;
                match c.get(parent, key) {
                    Some(child) => prop_assert_eq!(model.get(&(parent, key)), Some(&child)),
                    None => {
                        prop_assert!(!model.contains_key(&(parent, key)));
                        c.add_node();
                        c.insert(parent, key, nodes);
                        model.insert((parent, key), nodes);
                        nodes += 1;
                    }
                }
            }
            for (&(p, k), &child) in &model {
                prop_assert_eq!(c.get(p, k), Some(child));
            }
        }
    }
}
