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

use crate::profile::{MethodInfo, MethodStats, Node};

/// The index of a calling context in [`Profile::nodes`](crate::Profile::nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub usize);

/// The index of a method in [`Profile::methods`](crate::Profile::methods).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MethodId(pub usize);

/// `.index()`, `Display`, and indexing of the listed element types (slices and
/// vectors) by one typed id.
macro_rules! typed_id {
    ($id:ident: $($elem:ty),+) => {
        impl $id {
            /// The plain index.
            #[inline]
            pub const fn index(self) -> usize {
                self.0
            }
        }

        impl fmt::Display for $id {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        $(
            impl Index<$id> for [$elem] {
                type Output = $elem;
                #[inline]
                fn index(&self, id: $id) -> &$elem {
                    &self[id.0]
                }
            }

            impl IndexMut<$id> for [$elem] {
                #[inline]
                fn index_mut(&mut self, id: $id) -> &mut $elem {
                    &mut self[id.0]
                }
            }

            impl Index<$id> for Vec<$elem> {
                type Output = $elem;
                #[inline]
                fn index(&self, id: $id) -> &$elem {
                    &self[id.0]
                }
            }

            impl IndexMut<$id> for Vec<$elem> {
                #[inline]
                fn index_mut(&mut self, id: $id) -> &mut $elem {
                    &mut self[id.0]
                }
            }
        )+
    };
}

typed_id!(NodeId: Node);
typed_id!(MethodId: MethodInfo, MethodStats);
