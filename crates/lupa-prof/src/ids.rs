//! Typed indices into a [`Profile`](crate::Profile): [`NodeId`] into `nodes`,
//! [`MethodId`] into `methods`.
//!
//! They are plain indices (`.index()`), serialised as bare numbers (the JSON
//! layout of a profile is unchanged), so that a node index can no longer be
//! passed where a method index is expected. `profile.nodes[id]` and
//! `profile.methods[id]` (and `method_stats()[id]`) index with them directly
//! (`profile.rs` declares which id indexes which table, with `index_by!`).
//! Contract: an id is only meaningful for the profile (or builder) that
//! answered it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The index of a calling context in [`Profile::nodes`](crate::Profile::nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub usize);

/// The index of a method in [`Profile::methods`](crate::Profile::methods).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MethodId(pub usize);

/// `.index()` and `Display` of a typed id.
macro_rules! typed_id {
    ($id:ident) => {
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
    };
}

typed_id!(NodeId);
typed_id!(MethodId);

/// Indexing of the listed element types (slices and vectors) by one typed id.
/// The module that owns the element types says which id indexes them
/// (`profile.rs`), so this module depends on no model.
macro_rules! index_by {
    ($id:ty: $($elem:ty),+) => {
        $(
            impl ::std::ops::Index<$id> for [$elem] {
                type Output = $elem;
                #[inline]
                fn index(&self, id: $id) -> &$elem {
                    &self[id.0]
                }
            }

            impl ::std::ops::IndexMut<$id> for [$elem] {
                #[inline]
                fn index_mut(&mut self, id: $id) -> &mut $elem {
                    &mut self[id.0]
                }
            }

            impl ::std::ops::Index<$id> for Vec<$elem> {
                type Output = $elem;
                #[inline]
                fn index(&self, id: $id) -> &$elem {
                    &self[id.0]
                }
            }

            impl ::std::ops::IndexMut<$id> for Vec<$elem> {
                #[inline]
                fn index_mut(&mut self, id: $id) -> &mut $elem {
                    &mut self[id.0]
                }
            }
        )+
    };
}

pub(crate) use index_by;
