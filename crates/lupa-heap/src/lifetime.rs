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
    /// For an old entry: the table's scavenge counter when `scavenges` was
    /// last brought up to date ([`TrackedTable`]).
    pub(crate) base: u32,
}

/// The tracked objects, by object index, split by generation so that a
/// scavenge touches only the young ones.
///
/// Young entries live in a vector (a scavenge walks it once, in allocation
/// order, and every survivor moves anyway); old entries in a hash map that a
/// scavenge leaves alone. An old entry counts the scavenges it survived
/// lazily: `scavenges` is its count when it entered the map and `base` the
/// table's scavenge counter then, so its count at any later time is
/// `scavenges + (self.scavenges - base)` ([`TrackedTable::survived`]).
#[derive(Debug, Default)]
pub(crate) struct TrackedTable {
    pub(crate) young: Vec<(usize, Track)>,
    pub(crate) old: rustc_hash::FxHashMap<usize, Track>,
    /// Scavenges done since the heap was made.
    pub(crate) scavenges: u32,
}

impl TrackedTable {
    /// Number of tracked objects.
    pub(crate) fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.young.is_empty() && self.old.is_empty()
    }

    /// Track the object at `i` (young or not); its scavenge count starts at
    /// `t.scavenges`.
    pub(crate) fn insert(&mut self, i: usize, young: bool, mut t: Track) {
        if young {
            self.young.push((i, t));
        } else {
            t.base = self.scavenges;
            self.old.insert(i, t);
        }
    }

    /// Stop tracking the object at `i`.
    pub(crate) fn remove(&mut self, i: usize) {
        if self.old.remove(&i).is_none()
            && let Some(k) = self.young.iter().position(|&(j, _)| j == i)
        {
            self.young.swap_remove(k);
        }
    }

    /// `t` with its scavenge count brought up to date (for an entry taken out
    /// of the old map).
    pub(crate) fn survived(&self, mut t: Track) -> Track {
        t.scavenges += self.scavenges.wrapping_sub(t.base);
        t.base = self.scavenges;
        t
    }

    /// Every entry, old ones with their counts up to date.
    pub(crate) fn drain_all(&mut self) -> Vec<(usize, Track)> {
        let mut all = std::mem::take(&mut self.young);
        let old = std::mem::take(&mut self.old);
        all.extend(old.into_iter().map(|(i, t)| (i, self.survived(t))));
        all
    }
}
