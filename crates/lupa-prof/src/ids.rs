//! Typed indices into a [`Profile`](crate::Profile): [`NodeId`] into `nodes`,
//! [`MethodId`] into `methods`.
//!
//! They are plain indices (`.index()`), serialised as bare numbers (the JSON
//! layout of a profile is unchanged), so that a node index can no longer be
//! passed where a method index is expected. `profile.nodes[id]` and
//! `profile.methods[id]` (and `method_stats()[id]`) index with them directly. Contract: an id is only
//! meaningful for the profile (or builder) that answered it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Index, IndexMut};

use crate::profile::{MethodInfo, Node};

/// The index of a calling context in [`Profile::nodes`](crate::Profile::nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub usize);

/// The index of a method in [`Profile::methods`](crate::Profile::methods).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MethodId(pub usize);

impl NodeId {
    /// The plain index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0
    }
}

impl MethodId {
    /// The plain index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for MethodId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Index<NodeId> for [Node] {
    type Output = Node;
    #[inline]
    fn index(&self, id: NodeId) -> &Node {
        &self[id.0]
    }
}

impl IndexMut<NodeId> for [Node] {
    #[inline]
    fn index_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self[id.0]
    }
}

impl Index<NodeId> for Vec<Node> {
    type Output = Node;
    #[inline]
    fn index(&self, id: NodeId) -> &Node {
        &self[id.0]
    }
}

impl IndexMut<NodeId> for Vec<Node> {
    #[inline]
    fn index_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self[id.0]
    }
}

impl Index<MethodId> for [MethodInfo] {
    type Output = MethodInfo;
    #[inline]
    fn index(&self, id: MethodId) -> &MethodInfo {
        &self[id.0]
    }
}

impl IndexMut<MethodId> for [MethodInfo] {
    #[inline]
    fn index_mut(&mut self, id: MethodId) -> &mut MethodInfo {
        &mut self[id.0]
    }
}

impl Index<MethodId> for Vec<MethodInfo> {
    type Output = MethodInfo;
    #[inline]
    fn index(&self, id: MethodId) -> &MethodInfo {
        &self[id.0]
    }
}

impl IndexMut<MethodId> for Vec<MethodInfo> {
    #[inline]
    fn index_mut(&mut self, id: MethodId) -> &mut MethodInfo {
        &mut self[id.0]
    }
}

impl Index<MethodId> for [crate::profile::MethodStats] {
    type Output = crate::profile::MethodStats;
    #[inline]
    fn index(&self, id: MethodId) -> &crate::profile::MethodStats {
        &self[id.0]
    }
}

impl Index<MethodId> for Vec<crate::profile::MethodStats> {
    type Output = crate::profile::MethodStats;
    #[inline]
    fn index(&self, id: MethodId) -> &crate::profile::MethodStats {
        &self[id.0]
    }
}
