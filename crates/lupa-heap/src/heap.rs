//! The object heap: the [`Heap`] struct (spaces, policy state, queues), its
//! construction and the placement of new space, and the requests and queues the
//! VM reads between collections.
//!
//! The design of the collector (spaces, barrier, scavenger, full collector,
//! weak arrays, ephemerons, where `unsafe` lives) is described in the crate's
//! `README.md`; `gc.rs` holds the two collectors and `verify.rs` the heap
//! verifier.
//!
//! The header layout is in `layout.rs`, configuration and Pharo's parameters in
//! `config.rs`, statistics in `stats.rs`, lifetime events in `lifetime.rs`,
//! allocation in `alloc.rs`, object access in `access.rs` (byte views, the only
//! `unsafe`, in `bytes.rs`). The collectors (`gc.rs`) depend on the heap; the heap
//! does not depend on them.

use crate::config::*;
use crate::layout::*;
use crate::lifetime::{Death, TrackedTable};
use crate::stats::{CollectionKind, HeapStats};
use crate::value::Value;

/// Old space is initialised (zeroed) this many words ahead of use.
pub(crate) const GROW_CHUNK_WORDS: usize = 128 << 10;
/// How far ahead of allocation a large eden's pages are mapped (8 MB).
pub(crate) const POPULATE_CHUNK_WORDS: usize = 1 << 20;
/// Entries of the write barrier's store buffer.
pub(crate) const STORE_BUFFER_ENTRIES: usize = 16 * 1024;
/// Why a full GC runs (the statistics count the last two by rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FullReason {
    /// `request_full_gc` (the program, the VM), stress mode, `--max-heap`.
    Requested,
    /// Old space grew by the GC ratio since the last full GC.
    Ratio,
    /// An allocation in old space found the free old space exhausted.
    Exhausted,
}

/// The object heap.
///
/// Memory is one vector of words laid out as
/// `[old (compacted)][eden | survivor 0 | survivor 1][old (since the last full GC) | free]`.
/// New space (`young_start .. young_start + young_words`) is re-placed right
/// after the compacted old objects at every full GC.
pub struct Heap {
    pub(crate) mem: Vec<u64>,
    // ---- new space ----
    pub(crate) young_start: usize,
    pub(crate) young_words: usize,
    pub(crate) eden_end: usize,
    /// Allocation past this takes the slow path (0 in stress mode: always):
    /// the lower of `scavenge_threshold` and `populated_end`.
    pub(crate) eden_threshold: usize,
    /// Allocation past this sets `needs_gc`: a little before eden's end.
    pub(crate) scavenge_threshold: usize,
    /// New space's pages are mapped up to here (`pages.rs`): a large eden is
    /// mapped a chunk at a time as allocation reaches it, never ahead of use
    /// by more than [`POPULATE_CHUNK_WORDS`] (`usize::MAX`: not populated,
    /// small new spaces fault their pages in one by one).
    pub(crate) populated_end: usize,
    /// Eden's bump pointer.
    pub(crate) top: usize,
    pub(crate) survivor_words: usize,
    /// The survivor space holding the survivors of the last scavenge.
    pub(crate) past_start: usize,
    pub(crate) past_top: usize,
    /// The empty survivor space, target of the next scavenge.
    pub(crate) future_start: usize,
    // ---- old space ----
    /// Bump pointer of old space above new space (`young_end ..`).
    pub(crate) old_top: usize,
    /// Free words in old space below `old_top` (fillers).
    pub(crate) hole_words: usize,
    /// The holes left by the last compaction, in address order (start, end), and
    /// where old-space allocation continues in them: hole `hole_next`, from
    /// `hole_cursor` (the rest of that hole is a filler).
    pub(crate) holes: Vec<(usize, usize)>,
    pub(crate) hole_next: usize,
    pub(crate) hole_cursor: usize,
    /// Old objects that may refer to young ones (each has `REMEMBERED_BIT`):
    /// those remembered by the collector, plus those the write barrier logged in
    /// `store_buf[..store_len]` since the last collection. When the buffer is full
    /// the barrier only sets the bit and `store_overflow`, and the next collection
    /// finds the remembered objects by walking old space.
    pub(crate) remembered: Vec<usize>,
    pub(crate) store_buf: Box<[usize]>,
    pub(crate) store_len: usize,
    pub(crate) store_overflow: bool,
    pub(crate) large_words: usize,
    /// The next allocation goes to old space (`tenure_next_allocation`);
    /// `large_words` is 0 meanwhile, so that it takes the slow path.
    pub(crate) tenure_next: bool,
    /// `large_words` while `tenure_next` or `observer` holds it at 0.
    pub(crate) saved_large_words: usize,
    /// Observer allocations (`set_observer_allocations`): every allocation goes
    /// to old space, off the allocation clock; `large_words` is 0 meanwhile.
    pub(crate) observer: bool,
    /// Old-space words the observer allocated since `reset_observer_words`,
    /// taken as its live data: left out of the old space the GC ratio
    /// measures (the growth since the last full GC, and the live size the
    /// threshold is computed from).
    pub(crate) observer_words: usize,
    // ---- policy ----
    pub(crate) config: HeapConfig,
    pub(crate) gc_requested: bool,
    pub(crate) full_requested: bool,
    /// Why the requested full GC runs (counted by rule in the statistics).
    pub(crate) full_reason: FullReason,
    /// The next full GC tenures every survivor.
    pub(crate) tenure_all_requested: bool,
    /// Old-space words (used) beyond which the next collection is a full GC.
    pub(crate) full_gc_threshold: usize,
    /// Old-space words used right after the last full GC.
    pub(crate) last_full_used: Option<usize>,
    pub(crate) stress_count: u64,
    /// The heap went past `max_heap`; the VM should signal an out-of-memory
    /// error at its next safepoint.
    pub(crate) oom_pending: bool,
    /// Allocation may use the emergency reserve (after an out-of-memory signal).
    pub(crate) in_reserve: bool,
    pub(crate) hash_state: u64,
    pub(crate) stats: HeapStats,
    pub(crate) last_kind: Option<CollectionKind>,
    // ---- finalization and lifetime events ----
    pub(crate) mourn: Vec<Value>,
    /// For each ephemeron of `mourn`: the scavenges and full GCs done before
    /// the collection that queued it.
    pub(crate) mourn_fired: Vec<[u64; 2]>,
    /// The same, for the ephemerons the last `take_mourn_queue` answered.
    pub(crate) taken_fired: Vec<[u64; 2]>,
    pub(crate) tracked: TrackedTable,
    pub(crate) deaths: Vec<Death>,
    /// The allocation clock at which the next allocation is looked at by the
    /// allocation sampler (`u64::MAX`: sampling off; see `alloc_sampling.rs`).
    pub(crate) sample_at: u64,
    pub(crate) sampler: Option<crate::sample_policy::AllocSampler>,
    pub(crate) samples: Vec<crate::sample_policy::AllocationSample>,
    /// `LUPA_GC_TRACE` was set: log one line per collection (the VM prints them).
    pub(crate) trace: bool,
    /// Trace lines not yet taken ([`Heap::take_trace`]).
    pub(crate) trace_log: Vec<String>,
}

impl Heap {
    /// A new, empty heap.
    pub fn new(config: HeapConfig) -> Heap {
        let mut config = config;
        Self::sanitize(&mut config);
        let mut heap = Heap {
            mem: Vec::new(),
            young_start: FIRST_INDEX,
            young_words: 0,
            eden_end: FIRST_INDEX,
            eden_threshold: FIRST_INDEX,
            scavenge_threshold: FIRST_INDEX,
            populated_end: usize::MAX,
            top: FIRST_INDEX,
            survivor_words: 0,
            past_start: FIRST_INDEX,
            past_top: FIRST_INDEX,
            future_start: FIRST_INDEX,
            old_top: FIRST_INDEX,
            hole_words: 0,
            holes: Vec::new(),
            hole_next: 0,
            hole_cursor: 0,
            remembered: Vec::new(),
            store_buf: vec![0; STORE_BUFFER_ENTRIES].into_boxed_slice(),
            store_len: 0,
            store_overflow: false,
            large_words: 0,
            tenure_next: false,
            saved_large_words: 0,
            observer: false,
            observer_words: 0,
            hash_state: config.hash_seed | 1,
            config,
            gc_requested: false,
            full_requested: false,
            full_reason: FullReason::Requested,
            tenure_all_requested: false,
            full_gc_threshold: 0,
            last_full_used: None,
            stress_count: 0,
            oom_pending: false,
            in_reserve: false,
            stats: HeapStats::default(),
            last_kind: None,
            mourn: Vec::new(),
            mourn_fired: Vec::new(),
            taken_fired: Vec::new(),
            tracked: TrackedTable::default(),
            deaths: Vec::new(),
            sample_at: u64::MAX,
            sampler: None,
            samples: Vec::new(),
            trace: std::env::var_os("LUPA_GC_TRACE").is_some(),
            trace_log: Vec::new(),
        };
        heap.place_new_space(FIRST_INDEX);
        // Old space starts with one headroom's worth of (lazily zeroed) room.
        let len = heap.young_end() + heap.config.growth_headroom / 8;
        let len = len.min(heap.limit_words().max(heap.young_end() + 1024));
        heap.mem = vec![0; len];
        heap.old_top = heap.young_end();
        // Before the first full GC, old space may grow to one headroom's worth.
        heap.full_gc_threshold = (heap.config.growth_headroom / 8).max(1024);
        heap.refresh_sizes();
        heap
    }

    /// Lay out new space at `start` from the configured eden size (new space
    /// must be empty).
    pub(crate) fn place_new_space(&mut self, start: usize) {
        let eden = self.desired_eden_words();
        let survivor = (eden / 5).max(256);
        self.young_start = start;
        self.young_words = eden + 2 * survivor;
        self.eden_end = start + eden;
        self.top = start;
        self.survivor_words = survivor;
        self.past_start = self.eden_end;
        self.past_top = self.eden_end;
        self.future_start = self.eden_end + survivor;
        // Leave some slack between the scavenge threshold and the end of eden, so
        // that what is allocated before the next safepoint still fits (as in Spur).
        let slack = (eden / 32).min(32 << 10);
        self.scavenge_threshold = self.eden_end - slack;
        // A large new space gets its pages mapped a chunk at a time, as
        // allocation reaches them (`pages.rs`, `populate_eden`).
        self.populated_end = if self.young_words * 8 >= crate::pages::PREFAULT_MIN_BYTES {
            start
        } else {
            usize::MAX
        };
        self.refresh_eden_threshold();
        // Large objects go to old space; never more than a quarter of eden.
        self.tenure_next = false;
        self.set_large_bound((self.config.large_object_size / 8).min(eden / 4).max(64));
    }

    /// The slow-path bound of eden allocation from the scavenge threshold,
    /// the mapped pages and stress mode.
    pub(crate) fn refresh_eden_threshold(&mut self) {
        self.eden_threshold = if self.config.stress {
            0
        } else {
            self.scavenge_threshold.min(self.populated_end)
        };
    }

    /// Allocation in eden reached `new_top`, past the pages mapped so far:
    /// map the next chunk (one system call instead of a page fault per page),
    /// so that the pages of an eden are mapped only once allocation gets to
    /// them: a large eden a run never fills costs nothing.
    pub(crate) fn populate_eden(&mut self, new_top: usize) {
        let from = self.populated_end.max(self.young_start);
        let to = (new_top.max(from) + POPULATE_CHUNK_WORDS)
            .min(self.eden_end)
            .min(self.mem.len());
        if to > from {
            crate::pages::populate(&mut self.mem[from..to]);
        }
        self.populated_end = if to >= self.eden_end {
            usize::MAX
        } else {
            to.max(new_top)
        };
        self.refresh_eden_threshold();
    }

    /// Eden size in words from the configuration.
    pub(crate) fn desired_eden_words(&self) -> usize {
        (self.config.eden_size / 8).max(1024)
    }

    #[inline(always)]
    pub(crate) fn young_end(&self) -> usize {
        self.young_start + self.young_words
    }

    /// Is word index `i` in new space?
    #[inline(always)]
    pub(crate) fn is_young_index(&self, i: usize) -> bool {
        i.wrapping_sub(self.young_start) < self.young_words
    }

    /// Is this value a pointer to an object in new space? (False for immediates.)
    #[inline(always)]
    pub fn is_young(&self, v: Value) -> bool {
        v.0 & 7 == 0 && self.is_young_index(v.index())
    }

    /// The heap limit in words (with the emergency reserve once it is in use).
    pub(crate) fn limit_words(&self) -> usize {
        let reserve = if self.in_reserve { RESERVE_BYTES } else { 0 };
        (self.config.max_heap + reserve) / 8
    }

    /// Words used by old objects (holes excluded).
    pub(crate) fn old_used_words(&self) -> usize {
        (self.young_start - FIRST_INDEX) + (self.old_top - self.young_end()) - self.hole_words
    }

    /// Set the large-object bound (words), or keep it aside while the
    /// observer's allocations hold it at 0.
    pub(crate) fn set_large_bound(&mut self, words: usize) {
        if self.observer || self.tenure_next {
            self.saved_large_words = words;
        } else {
            self.large_words = words;
        }
    }

    /// Old-space words in use less the observer's (`observer_words`): what the
    /// GC ratio compares with its threshold, and computes the next one from.
    pub(crate) fn program_old_words(&self) -> usize {
        self.old_used_words().saturating_sub(self.observer_words)
    }

    /// Room for `total` words in a hole of old space, if the current hole has it.
    /// Holes are used in address order; what is left of a hole too small to be
    /// worth keeping is abandoned (until the next compaction).
    pub(crate) fn alloc_in_holes(&mut self, total: usize) -> Option<usize> {
        while let Some(&(_, end)) = self.holes.get(self.hole_next) {
            let at = self.hole_cursor;
            if at + total <= end {
                self.hole_cursor = at + total;
                self.hole_words -= total;
                if self.hole_cursor < end {
                    self.mem[self.hole_cursor] = filler(end - self.hole_cursor);
                }
                return Some(at);
            }
            if end - at >= 64 {
                return None;
            }
            self.hole_next += 1;
            if let Some(&(start, _)) = self.holes.get(self.hole_next) {
                self.hole_cursor = start;
            }
        }
        None
    }

    /// Bring the size statistics (eden, survivor, old space, remembered set) up
    /// to date; the collector does it after every collection.
    pub fn refresh_stats(&mut self) {
        self.refresh_sizes();
    }

    pub(crate) fn refresh_sizes(&mut self) {
        let old_used = self.old_used_words();
        let s = &mut self.stats;
        s.eden_bytes = ((self.eden_end - self.young_start) * 8) as u64;
        s.survivor_bytes = (self.survivor_words * 8) as u64;
        s.survivor_used_bytes = ((self.past_top - self.past_start) * 8) as u64;
        s.old_used_bytes = (old_used * 8) as u64;
        s.old_free_bytes = ((self.hole_words + self.mem.capacity() - self.old_top) * 8) as u64;
        s.heap_bytes = (self.mem.capacity() * 8) as u64;
        s.remembered_set_size = (self.remembered.len() + self.store_len) as u64;
        s.max_remembered_set_size = s.max_remembered_set_size.max(s.remembered_set_size);
    }

    /// The configuration in force (including parameters changed at run time).
    pub fn config(&self) -> &HeapConfig {
        &self.config
    }

    /// Turn stress mode on or off.
    pub fn set_stress(&mut self, on: bool) {
        self.config.stress = on;
        self.refresh_eden_threshold();
    }

    /// Statistics so far.
    pub fn stats(&self) -> &HeapStats {
        &self.stats
    }

    /// Bytes currently in use (old objects, survivors and eden).
    pub fn used_bytes(&self) -> usize {
        (self.old_used_words() + (self.past_top - self.past_start) + (self.top - self.young_start))
            * 8
    }

    /// Should the interpreter collect at its next safepoint?
    #[inline(always)]
    pub fn needs_gc(&self) -> bool {
        self.gc_requested
    }

    /// Did the heap go past `--max-heap` since the last call? (Answers once.)
    pub fn take_oom_signal(&mut self) -> bool {
        std::mem::take(&mut self.oom_pending)
    }

    /// Ask for a collection at the next safepoint: a full GC (this is what
    /// `system fullGC` means). Same as [`Heap::request_full_gc`].
    pub fn request_gc(&mut self) {
        self.request_full_gc();
    }

    /// Ask for a full GC at the next safepoint.
    pub fn request_full_gc(&mut self) {
        self.request_full_gc_for(FullReason::Requested);
    }

    /// Ask for a full GC at the next safepoint, for `reason` (the first
    /// reason given is the one counted).
    pub(crate) fn request_full_gc_for(&mut self, reason: FullReason) {
        if !self.full_requested {
            self.full_reason = reason;
        }
        self.gc_requested = true;
        self.full_requested = true;
    }

    /// Ask for a full GC at the next safepoint that tenures every survivor, for
    /// data known to live long: e.g. after loading the class library, whose
    /// objects would otherwise be copied between survivor spaces a few times.
    pub fn request_tenuring_full_gc(&mut self) {
        self.request_full_gc();
        self.tenure_all_requested = true;
    }

    /// Ask for a collection at the next safepoint; the heap makes it a scavenge
    /// unless its policy calls for a full GC.
    pub fn request_scavenge(&mut self) {
        self.gc_requested = true;
    }

    /// The kind of the last collection, if any.
    pub fn last_collection(&self) -> Option<CollectionKind> {
        self.last_kind
    }

    /// The kind the next collection will be (what [`Heap::start_collection`]
    /// decides now).
    pub fn next_collection_kind(&self) -> CollectionKind {
        match self.full_gc_reason() {
            Some(_) => CollectionKind::Full,
            None => CollectionKind::Scavenge,
        }
    }

    /// Why the next collection is a full GC, if it is one: requested (by the
    /// program, the VM, stress mode or `--max-heap`), old space grown by the
    /// GC ratio, or exhausted by an allocation.
    pub(crate) fn full_gc_reason(&self) -> Option<FullReason> {
        let stress_full = self.config.stress && self.stress_count % 4 == 3;
        if self.full_requested {
            Some(self.full_reason)
        } else if stress_full || self.old_top > self.config.max_heap / 8 {
            Some(FullReason::Requested)
        } else if self.program_old_words() > self.full_gc_threshold {
            // Past the ratio before the scavenge that would have found it: the
            // full GC takes that scavenge's place (it evacuates new space too).
            Some(FullReason::Ratio)
        } else {
            None
        }
    }

    /// Ephemerons found with an otherwise unreachable key since the last call, to
    /// be sent `mourn`. The VM must keep them as roots until it has done so (the
    /// heap keeps them alive until they are taken).
    pub fn take_mourn_queue(&mut self) -> Vec<Value> {
        self.taken_fired = std::mem::take(&mut self.mourn_fired);
        std::mem::take(&mut self.mourn)
    }

    /// For each ephemeron the last [`Heap::take_mourn_queue`] answered, in
    /// order: the scavenges and full GCs done before the collection that found
    /// its key dead (what the key survived since a count taken at its birth).
    pub fn mourn_queue_collections(&self) -> &[[u64; 2]] {
        &self.taken_fired
    }

    /// Number of ephemerons waiting to be taken by [`Heap::take_mourn_queue`].
    pub fn mourn_queue_len(&self) -> usize {
        self.mourn.len()
    }

    /// The `LUPA_GC_TRACE` lines (one per collection) logged since the last call;
    /// empty unless that variable is set.
    pub fn take_trace(&mut self) -> Vec<String> {
        std::mem::take(&mut self.trace_log)
    }

    /// Deaths of tracked objects recorded since the last call.
    pub fn take_deaths(&mut self) -> Vec<Death> {
        std::mem::take(&mut self.deaths)
    }

    /// Number of deaths recorded and not taken yet.
    pub fn deaths_len(&self) -> usize {
        self.deaths.len()
    }

    /// Number of tracked objects alive.
    pub fn tracked_count(&self) -> usize {
        self.tracked.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large eden's pages are mapped as allocation reaches them, never more
    /// than a chunk ahead: an eden a run never fills costs nothing.
    #[test]
    fn a_large_eden_is_mapped_a_chunk_at_a_time() {
        let mut h = Heap::new(HeapConfig {
            eden_size: 64 << 20,
            ..HeapConfig::default()
        });
        assert_eq!(h.populated_end, h.young_start, "nothing mapped before use");
        let mut mapped = Vec::new();
        while h.top < h.young_start + 3 * POPULATE_CHUNK_WORDS {
            h.alloc_pointers(1, 100).expect("room");
            assert!(h.populated_end >= h.top, "allocated words are mapped");
            assert!(h.populated_end <= h.top + POPULATE_CHUNK_WORDS + 102);
            if mapped.last() != Some(&h.populated_end) {
                mapped.push(h.populated_end);
            }
        }
        assert_eq!(mapped.len(), 3, "one call per chunk: {mapped:?}");
        // A small eden is not populated at all (its pages fault in one by one).
        let small = Heap::new(HeapConfig::default());
        assert_eq!(small.populated_end, usize::MAX);
        assert_eq!(small.eden_threshold, small.scavenge_threshold);
    }
}
