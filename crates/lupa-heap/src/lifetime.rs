//! Lifetime events of tracked objects: what the heap remembers about an object
//! flagged with [`Heap::set_tracked`](crate::Heap::set_tracked) and the
//! [`Death`] record a collection produces when it finds one dead.

/// A tracked object died (see [`Heap::set_tracked`](crate::Heap::set_tracked)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Death {
    /// Its class index.
    pub class: u32,
    /// Its size in bytes, header included.
    pub bytes: u64,
    /// Its identity hash (0 if none was ever assigned).
    pub hash: u32,
    /// Scavenges it lived through.
    pub scavenges_survived: u32,
    /// Full GCs it lived through.
    pub full_gcs_survived: u32,
    /// The allocation clock ([`HeapStats::allocated_bytes`](crate::HeapStats::allocated_bytes)) when it was tracked.
    pub allocated_at: u64,
    /// The allocation clock at the collection that found it dead.
    pub died_at: u64,
    /// The number of that collection ([`HeapStats::collections`](crate::HeapStats::collections), counting from 1).
    pub died_at_gc: u64,
    /// Whether that collection was a full GC.
    pub died_in_full_gc: bool,
    /// The tag it was tracked with: 0 for [`Heap::set_tracked`](crate::Heap::set_tracked), the
    /// sample's tag for an allocation sample ([`Heap::start_allocation_sampling`](crate::Heap::start_allocation_sampling)).
    pub tag: u64,
}

/// What the heap remembers about a tracked object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Track {
    pub(crate) tag: u64,
    pub(crate) allocated_at: u64,
    pub(crate) scavenges: u32,
    pub(crate) full_gcs: u32,
}
