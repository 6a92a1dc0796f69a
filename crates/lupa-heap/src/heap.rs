#![allow(unsafe_code)]
//! The object heap: layout, spaces, allocation, parameters and statistics.
//!
//! The design of the collector (spaces, barrier, scavenger, full collector,
//! weak arrays, ephemerons, where `unsafe` lives) is described in the crate's
//! `README.md`; this module holds the mutator side (allocation, accessors,
//! write barrier) and the bookkeeping, `gc.rs` the two collectors and
//! `verify.rs` the heap verifier.
//!
//! # Object layout
//! A heap pointer is the word index of an object's header in one `Vec<u64>`.
//! Every object has a two-word header followed by its body:
//!
//! ```text
//! word 0: bits  0..22  class index        bits 22..26 format
//!         bits 26..30  age (scavenges survived, saturating at 15)
//!         bit  30      tracked (lifetime events)   bit 31 remembered
//!         bits 32..63  identity hash (0 = not yet assigned)
//!         bit  63      set only in a forwarded husk during a scavenge
//! word 1: bits  0..32  size: slots for pointer/word formats, bytes for bytes
//!         bit  32      mark bit, bit 33 pinned (full GC only)
//!         bits 34..64  forwarding index (full GC only)
//! body:   slots (Values), raw words, or bytes packed little-endian
//! ```
//!
//! Free gaps in old space ("holes" left in front of pinned objects by the
//! compactor) are one-word-header fillers: format 15, total words in bits 32..64.

use crate::value::Value;
use std::collections::HashMap;
use std::time::Duration;

/// Object formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Format {
    /// Pointer slots (named fields and/or indexable).
    Pointers = 0,
    /// Bytes (strings, symbols, byte arrays).
    Bytes = 1,
    /// Raw 64-bit words, not scanned (doubles, large integer digits).
    Words = 2,
    /// Pointer slots that do not keep their referents alive.
    Weak = 3,
    /// Slot 0 is the key, slot 1 the value, further slots ordinary fields; the
    /// slots other than the key are traced only once the key is reachable
    /// otherwise (Hayes' ephemerons).
    Ephemeron = 4,
}

impl Format {
    #[inline(always)]
    pub(crate) fn from_bits(b: u64) -> Format {
        match b {
            1 => Format::Bytes,
            2 => Format::Words,
            3 => Format::Weak,
            4 => Format::Ephemeron,
            _ => Format::Pointers,
        }
    }

    /// Does an object of this format have pointer slots (`slot`, `set_slot`)?
    /// True for `Pointers`, `Weak` and `Ephemeron`.
    #[inline(always)]
    pub fn has_slots(self) -> bool {
        matches!(self, Format::Pointers | Format::Weak | Format::Ephemeron)
    }
}

pub(crate) const CLASS_MASK: u64 = (1 << 22) - 1;
pub(crate) const FORMAT_SHIFT: u32 = 22;
pub(crate) const FORMAT_MASK: u64 = 0xF;
pub(crate) const AGE_SHIFT: u32 = 26;
pub(crate) const AGE_MASK: u64 = 0xF;
pub(crate) const TRACKED_BIT: u64 = 1 << 30;
pub(crate) const REMEMBERED_BIT: u64 = 1 << 31;
pub(crate) const HASH_SHIFT: u32 = 32;
pub(crate) const HASH_MASK: u64 = 0x7FFF_FFFF;
pub(crate) const FORWARDED: u64 = 1 << 63;
pub(crate) const SIZE_MASK: u64 = 0xFFFF_FFFF;
pub(crate) const MARK_BIT: u64 = 1 << 32;
pub(crate) const PIN_BIT: u64 = 1 << 33;
pub(crate) const FWD_SHIFT: u32 = 34;
/// Format value of a filler (free gap) in old space.
pub(crate) const FREE_FORMAT: u64 = 0xF;
pub(crate) const HEADER_WORDS: usize = 2;
/// Old space is initialised (zeroed) this many words ahead of use.
const GROW_CHUNK_WORDS: usize = 128 << 10;
/// Entries of the write barrier's store buffer.
const STORE_BUFFER_ENTRIES: usize = 16 * 1024;
/// The first word index ever handed out (index 0 is never a valid object).
pub(crate) const FIRST_INDEX: usize = 2;

/// Extra room past `--max-heap` in which the program can still handle an
/// out-of-memory error.
pub const RESERVE_BYTES: usize = 4 << 20;

/// The largest class index a header can hold.
pub const MAX_CLASS_INDEX: u32 = CLASS_MASK as u32;

/// The largest heap the header's 30-bit forwarding field can address (8 GB).
pub const MAX_HEAP_BYTES: usize = (1usize << 30) * 8 - RESERVE_BYTES;

const MB: usize = 1 << 20;

/// Heap sizing and behaviour. The sizes are Pharo's GC parameters, with Pharo's
/// meaning (see [`GcParam`]); they can be changed at run time with
/// [`Heap::set_parameter`].
#[derive(Debug, Clone)]
pub struct HeapConfig {
    /// Eden size in bytes (Pharo's "eden size"; `--eden-size`). New space is eden
    /// plus two survivor spaces of eden/5 each (eden is 5/7 of new space, as in
    /// Spur). At most a quarter of `max_bytes`.
    pub initial_bytes: usize,
    /// Hard bound on the heap (new space plus old space), in bytes; at most
    /// [`MAX_HEAP_BYTES`].
    pub max_bytes: usize,
    /// Deprecated: the semispace collector's growth factor. Unused.
    pub growth_factor: f64,
    /// Collect at every safepoint that follows an allocation (every 4th of those
    /// collections is a full GC).
    pub stress: bool,
    /// Seed of the identity-hash generator.
    pub hash_seed: u64,
    /// Minimum amount old space grows by when it is full (Pharo's "growth headroom").
    pub growth_headroom: usize,
    /// Free old space kept after a full GC before memory is given back to the
    /// operating system (Pharo's "shrink threshold").
    pub shrink_threshold: usize,
    /// Old-space growth since the last full GC, as a ratio of its size after that
    /// GC, that triggers the next full GC (Pharo's "GC ratio"; 0.33 = 33%).
    pub full_gc_ratio: f64,
    /// Number of scavenges an object survives in new space before it is tenured
    /// (1..=15). Objects are also tenured when a survivor space overflows.
    pub tenuring_threshold: u32,
    /// Objects at least this large (bytes, header included) are allocated directly
    /// in old space.
    pub large_object_bytes: usize,
}

impl Default for HeapConfig {
    fn default() -> Self {
        // Pharo's defaults (Illimani paper, table 2): eden 15 MB, growth headroom
        // 16 MB, shrink threshold 32 MB, GC ratio 33%.
        HeapConfig {
            initial_bytes: 15 * MB,
            max_bytes: 4 << 30,
            growth_factor: 3.0,
            stress: false,
            hash_seed: 0x9E37_79B9_7F4A_7C15,
            growth_headroom: 16 * MB,
            shrink_threshold: 32 * MB,
            full_gc_ratio: 0.33,
            tenuring_threshold: 3,
            large_object_bytes: 64 << 10,
        }
    }
}

/// The heap is exhausted (`--max-heap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory {
    /// Bytes that were requested.
    pub requested: usize,
}

impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "heap exhausted while allocating {} bytes",
            self.requested
        )
    }
}

impl std::error::Error for OutOfMemory {}

/// A tunable GC parameter (Pharo's meaning). Values are read and written as
/// `f64`: bytes for sizes, a ratio for [`GcParam::FullGcRatio`], a count for
/// [`GcParam::TenuringThreshold`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GcParam {
    /// Eden size in bytes (new space is 7/5 of it). A change takes effect at the
    /// next full GC, when new space is empty and can be re-laid out (Pharo applies
    /// it at the next start).
    EdenSize,
    /// Minimum number of bytes old space grows by.
    GrowthHeadroom,
    /// Free old-space bytes kept after a full GC before memory is returned.
    ShrinkThreshold,
    /// Old-space growth ratio since the last full GC that triggers the next one.
    FullGcRatio,
    /// Scavenges survived before an object is tenured (1..=15).
    TenuringThreshold,
    /// Upper bound of the heap in bytes (`--max-heap`).
    MaxHeap,
    /// Size in bytes from which objects are allocated directly in old space.
    LargeObjectSize,
}

impl GcParam {
    /// Every parameter.
    pub const ALL: [GcParam; 7] = [
        GcParam::EdenSize,
        GcParam::GrowthHeadroom,
        GcParam::ShrinkThreshold,
        GcParam::FullGcRatio,
        GcParam::TenuringThreshold,
        GcParam::MaxHeap,
        GcParam::LargeObjectSize,
    ];

    /// The parameter's name as a command-line option (without `--`).
    pub fn name(self) -> &'static str {
        match self {
            GcParam::EdenSize => "eden-size",
            GcParam::GrowthHeadroom => "growth-headroom",
            GcParam::ShrinkThreshold => "shrink-threshold",
            GcParam::FullGcRatio => "gc-ratio",
            GcParam::TenuringThreshold => "tenuring-threshold",
            GcParam::MaxHeap => "max-heap",
            GcParam::LargeObjectSize => "large-object-size",
        }
    }

    /// The parameter called `name` (see [`GcParam::name`]).
    pub fn from_name(name: &str) -> Option<GcParam> {
        GcParam::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The index of the corresponding `Smalltalk vm parameterAt:` in Pharo, if any
    /// (24 shrink threshold, 25 growth headroom, 45 desired eden size, 55 full-GC
    /// ratio, 6 tenuring threshold).
    pub fn pharo_index(self) -> Option<u32> {
        match self {
            GcParam::ShrinkThreshold => Some(24),
            GcParam::GrowthHeadroom => Some(25),
            GcParam::EdenSize => Some(45),
            GcParam::FullGcRatio => Some(55),
            GcParam::TenuringThreshold => Some(6),
            GcParam::MaxHeap | GcParam::LargeObjectSize => None,
        }
    }

    /// The parameter whose Pharo `vm parameterAt:` index is `i`.
    pub fn from_pharo_index(i: u32) -> Option<GcParam> {
        GcParam::ALL
            .into_iter()
            .find(|p| p.pharo_index() == Some(i))
    }
}

/// A rejected [`Heap::set_parameter`].
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError(pub String);

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParamError {}

/// What kind of collection a [`Collection`](crate::Collection) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollectionKind {
    /// Copies the live objects of new space (eden and the past survivor space)
    /// into the future survivor space or old space.
    Scavenge,
    /// Marks the whole heap and compacts it (new space included: every
    /// survivor is tenured).
    Full,
}

/// Counters kept by the heap; cheap, always on.
#[derive(Debug, Clone, Default)]
pub struct HeapStats {
    /// Number of collections (scavenges plus full GCs).
    pub collections: u64,
    /// Total time spent collecting.
    pub gc_time: Duration,
    /// Longest single collection.
    pub max_pause: Duration,
    /// Bytes allocated since start (the allocation clock).
    pub allocated_bytes: u64,
    /// Objects allocated since start.
    pub allocated_objects: u64,
    /// Bytes in use right after the last collection (old space plus survivors).
    pub live_bytes_after_last_gc: u64,
    /// Total bytes copied by scavenges and moved by the compactor.
    pub copied_bytes: u64,
    /// Number of scavenges.
    pub scavenges: u64,
    /// Total time in scavenges.
    pub scavenge_time: Duration,
    /// Longest scavenge.
    pub max_scavenge_pause: Duration,
    /// Number of full GCs.
    pub full_gcs: u64,
    /// Total time in full GCs.
    pub full_gc_time: Duration,
    /// Longest full GC.
    pub max_full_gc_pause: Duration,
    /// Objects tenured (copied from new space to old space) so far.
    pub tenured_objects: u64,
    /// Bytes tenured so far.
    pub tenured_bytes: u64,
    /// Bytes allocated directly in old space (large objects, and objects allocated
    /// while eden was full).
    pub old_allocated_bytes: u64,
    /// Eden size (bytes).
    pub eden_bytes: u64,
    /// Size of one survivor space (bytes).
    pub survivor_bytes: u64,
    /// Bytes in the survivor space after the last collection.
    pub survivor_used_bytes: u64,
    /// Bytes occupied by old objects.
    pub old_used_bytes: u64,
    /// Free old-space bytes: holes left by the compactor plus room not yet used.
    pub old_free_bytes: u64,
    /// Total bytes the heap holds from the operating system.
    pub heap_bytes: u64,
    /// Current number of remembered (old, pointing to young) objects.
    pub remembered_set_size: u64,
    /// Largest remembered set seen.
    pub max_remembered_set_size: u64,
    /// Times old space grew.
    pub growths: u64,
    /// Times memory was given back.
    pub shrinks: u64,
    /// Ephemerons queued for mourning.
    pub ephemerons_mourned: u64,
    /// Weak slots set to nil because their referent died.
    pub weak_slots_cleared: u64,
}

impl HeapStats {
    /// Every statistic as `(name, value)`, in a fixed order; times are in
    /// microseconds. These names are what `System>>gcStatAt:` accepts.
    pub fn named(&self) -> Vec<(&'static str, u64)> {
        let us = |d: Duration| d.as_micros() as u64;
        vec![
            ("scavenges", self.scavenges),
            ("scavengeTimeUs", us(self.scavenge_time)),
            ("meanScavengeUs", us(self.mean_scavenge())),
            ("maxScavengeUs", us(self.max_scavenge_pause)),
            ("fullGCs", self.full_gcs),
            ("fullGCTimeUs", us(self.full_gc_time)),
            ("meanFullGCUs", us(self.mean_full_gc())),
            ("maxFullGCUs", us(self.max_full_gc_pause)),
            ("collections", self.collections),
            ("gcTimeUs", us(self.gc_time)),
            ("maxPauseUs", us(self.max_pause)),
            ("allocatedBytes", self.allocated_bytes),
            ("allocatedObjects", self.allocated_objects),
            ("oldAllocatedBytes", self.old_allocated_bytes),
            ("tenuredObjects", self.tenured_objects),
            ("tenuredBytes", self.tenured_bytes),
            ("copiedBytes", self.copied_bytes),
            ("liveBytesAfterLastGC", self.live_bytes_after_last_gc),
            ("edenBytes", self.eden_bytes),
            ("survivorBytes", self.survivor_bytes),
            ("survivorUsedBytes", self.survivor_used_bytes),
            ("oldUsedBytes", self.old_used_bytes),
            ("oldFreeBytes", self.old_free_bytes),
            ("heapBytes", self.heap_bytes),
            ("rememberedSetSize", self.remembered_set_size),
            ("maxRememberedSetSize", self.max_remembered_set_size),
            ("growths", self.growths),
            ("shrinks", self.shrinks),
            ("ephemeronsMourned", self.ephemerons_mourned),
            ("weakSlotsCleared", self.weak_slots_cleared),
        ]
    }

    /// A human-readable report (what `lupa run --gc-stats` prints).
    pub fn report(&self) -> String {
        const MB: f64 = (1 << 20) as f64;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mb = |b: u64| b as f64 / MB;
        let mut s = String::new();
        s.push_str(&format!(
            "scavenges:          {} ({:.3} ms total, {:.3} ms mean, {:.3} ms max)\n",
            self.scavenges,
            ms(self.scavenge_time),
            ms(self.mean_scavenge()),
            ms(self.max_scavenge_pause)
        ));
        s.push_str(&format!(
            "full GCs:           {} ({:.3} ms total, {:.3} ms mean, {:.3} ms max)\n",
            self.full_gcs,
            ms(self.full_gc_time),
            ms(self.mean_full_gc()),
            ms(self.max_full_gc_pause)
        ));
        s.push_str(&format!(
            "gc time:            {:.3} ms total, {:.3} ms max pause\n",
            ms(self.gc_time),
            ms(self.max_pause)
        ));
        s.push_str(&format!(
            "allocated:          {:.1} MB in {} objects ({:.1} MB directly in old space)\n",
            mb(self.allocated_bytes),
            self.allocated_objects,
            mb(self.old_allocated_bytes)
        ));
        s.push_str(&format!(
            "tenured:            {} objects, {:.1} MB\n",
            self.tenured_objects,
            mb(self.tenured_bytes)
        ));
        s.push_str(&format!(
            "heap:               {:.1} MB (eden {:.1} MB, survivor 2 x {:.1} MB, {:.1} MB used), old {:.1} MB used, {:.1} MB free\n",
            mb(self.heap_bytes),
            mb(self.eden_bytes),
            mb(self.survivor_bytes),
            mb(self.survivor_used_bytes),
            mb(self.old_used_bytes),
            mb(self.old_free_bytes)
        ));
        s.push_str(&format!(
            "live after last gc: {:.1} MB\n",
            mb(self.live_bytes_after_last_gc)
        ));
        s.push_str(&format!(
            "remembered set:     {} objects ({} max)\n",
            self.remembered_set_size, self.max_remembered_set_size
        ));
        s.push_str(&format!(
            "old space:          {} growths, {} shrinks\n",
            self.growths, self.shrinks
        ));
        s.push_str(&format!(
            "weak slots cleared: {}, ephemerons mourned: {}\n",
            self.weak_slots_cleared, self.ephemerons_mourned
        ));
        s
    }

    /// Mean scavenge time.
    pub fn mean_scavenge(&self) -> Duration {
        if self.scavenges == 0 {
            Duration::ZERO
        } else {
            self.scavenge_time / self.scavenges as u32
        }
    }

    /// Mean full-GC time.
    pub fn mean_full_gc(&self) -> Duration {
        if self.full_gcs == 0 {
            Duration::ZERO
        } else {
            self.full_gc_time / self.full_gcs as u32
        }
    }
}

/// A tracked object died (see [`Heap::set_tracked`]).
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
    /// The allocation clock ([`HeapStats::allocated_bytes`]) when it was tracked.
    pub allocated_at: u64,
    /// The allocation clock at the collection that found it dead.
    pub died_at: u64,
    /// The number of that collection ([`HeapStats::collections`], counting from 1).
    pub died_at_gc: u64,
    /// Whether that collection was a full GC.
    pub died_in_full_gc: bool,
}

/// What the heap remembers about a tracked object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Track {
    pub(crate) allocated_at: u64,
    pub(crate) scavenges: u32,
    pub(crate) full_gcs: u32,
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
    /// Allocation past this sets `needs_gc` (0 in stress mode: always).
    pub(crate) eden_threshold: usize,
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
    // ---- policy ----
    pub(crate) config: HeapConfig,
    pub(crate) gc_requested: bool,
    pub(crate) full_requested: bool,
    /// The next full GC tenures every survivor.
    pub(crate) tenure_all_requested: bool,
    /// Old-space words (used) beyond which the next collection is a full GC.
    pub(crate) full_gc_threshold: usize,
    /// Old-space words used right after the last full GC.
    pub(crate) last_full_used: Option<usize>,
    pub(crate) stress_count: u64,
    /// The heap went past `max_bytes`; the VM should signal an out-of-memory
    /// error at its next safepoint.
    pub(crate) oom_pending: bool,
    /// Allocation may use the emergency reserve (after an out-of-memory signal).
    pub(crate) in_reserve: bool,
    pub(crate) hash_state: u64,
    pub(crate) stats: HeapStats,
    pub(crate) last_kind: Option<CollectionKind>,
    // ---- finalization and lifetime events ----
    pub(crate) mourn: Vec<Value>,
    pub(crate) tracked: HashMap<usize, Track>,
    pub(crate) deaths: Vec<Death>,
    /// `LUPA_GC_TRACE` was set: print one line per collection to stderr.
    pub(crate) trace: bool,
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
            hash_state: config.hash_seed | 1,
            config,
            gc_requested: false,
            full_requested: false,
            tenure_all_requested: false,
            full_gc_threshold: 0,
            last_full_used: None,
            stress_count: 0,
            oom_pending: false,
            in_reserve: false,
            stats: HeapStats::default(),
            last_kind: None,
            mourn: Vec::new(),
            tracked: HashMap::new(),
            deaths: Vec::new(),
            trace: std::env::var_os("LUPA_GC_TRACE").is_some(),
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

    fn sanitize(c: &mut HeapConfig) {
        c.max_bytes = c.max_bytes.clamp(64 << 10, MAX_HEAP_BYTES);
        c.initial_bytes = c
            .initial_bytes
            .clamp(8 << 10, (c.max_bytes / 4).max(8 << 10));
        c.tenuring_threshold = c.tenuring_threshold.clamp(1, AGE_MASK as u32);
        if !(c.full_gc_ratio.is_finite() && c.full_gc_ratio >= 0.0) {
            c.full_gc_ratio = HeapConfig::default().full_gc_ratio;
        }
        c.growth_headroom = c.growth_headroom.max(64 << 10);
        c.large_object_bytes = c.large_object_bytes.max(1024);
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
        self.eden_threshold = self.eden_end - slack;
        // Large objects go to old space; never more than a quarter of eden.
        self.large_words = (self.config.large_object_bytes / 8).min(eden / 4).max(64);
        if self.config.stress {
            self.eden_threshold = 0;
        }
    }

    /// Eden size in words from the configuration.
    pub(crate) fn desired_eden_words(&self) -> usize {
        (self.config.initial_bytes / 8).max(1024)
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
        (self.config.max_bytes + reserve) / 8
    }

    /// Words used by old objects (holes excluded).
    pub(crate) fn old_used_words(&self) -> usize {
        (self.young_start - FIRST_INDEX) + (self.old_top - self.young_end()) - self.hole_words
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
        let slack = ((self.eden_end - self.young_start) / 32).min(32 << 10);
        self.eden_threshold = if on { 0 } else { self.eden_end - slack };
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
        let stress_full = self.config.stress && self.stress_count % 4 == 3;
        if self.full_requested
            || stress_full
            || self.old_used_words() > self.full_gc_threshold
            || self.old_top > self.config.max_bytes / 8
        {
            CollectionKind::Full
        } else {
            CollectionKind::Scavenge
        }
    }

    /// Ephemerons found with an otherwise unreachable key since the last call, to
    /// be sent `mourn`. The VM must keep them as roots until it has done so (the
    /// heap keeps them alive until they are taken).
    pub fn take_mourn_queue(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.mourn)
    }

    /// Number of ephemerons waiting to be taken by [`Heap::take_mourn_queue`].
    pub fn mourn_queue_len(&self) -> usize {
        self.mourn.len()
    }

    /// Deaths of tracked objects recorded since the last call.
    pub fn take_deaths(&mut self) -> Vec<Death> {
        std::mem::take(&mut self.deaths)
    }

    /// Number of tracked objects alive.
    pub fn tracked_count(&self) -> usize {
        self.tracked.len()
    }

    // ------------------------------------------------------------------
    // Parameters
    // ------------------------------------------------------------------

    /// The current value of a GC parameter.
    pub fn parameter(&self, p: GcParam) -> f64 {
        let c = &self.config;
        match p {
            GcParam::EdenSize => c.initial_bytes as f64,
            GcParam::GrowthHeadroom => c.growth_headroom as f64,
            GcParam::ShrinkThreshold => c.shrink_threshold as f64,
            GcParam::FullGcRatio => c.full_gc_ratio,
            GcParam::TenuringThreshold => c.tenuring_threshold as f64,
            GcParam::MaxHeap => c.max_bytes as f64,
            GcParam::LargeObjectSize => c.large_object_bytes as f64,
        }
    }

    /// Set a GC parameter; answers its previous value. Sizes are in bytes. An eden
    /// size change takes effect at the next full GC; the others at once.
    pub fn set_parameter(&mut self, p: GcParam, value: f64) -> Result<f64, ParamError> {
        if !value.is_finite() || value < 0.0 {
            return Err(ParamError(format!(
                "{}: {value} is not a non-negative number",
                p.name()
            )));
        }
        let old = self.parameter(p);
        let bytes = value as usize;
        match p {
            GcParam::EdenSize => {
                if bytes < 8 << 10 {
                    return Err(ParamError("eden-size: at least 8 KB".into()));
                }
                self.config.initial_bytes = bytes;
            }
            GcParam::GrowthHeadroom => self.config.growth_headroom = bytes,
            GcParam::ShrinkThreshold => self.config.shrink_threshold = bytes,
            GcParam::FullGcRatio => {
                self.config.full_gc_ratio = value;
                if let Some(used) = self.last_full_used {
                    self.full_gc_threshold = self.threshold_after(used);
                }
            }
            GcParam::TenuringThreshold => {
                if !(1.0..=AGE_MASK as f64).contains(&value) {
                    return Err(ParamError("tenuring-threshold: between 1 and 15".into()));
                }
                self.config.tenuring_threshold = value as u32;
            }
            GcParam::MaxHeap => {
                if bytes < 64 << 10 {
                    return Err(ParamError("max-heap: at least 64 KB".into()));
                }
                self.config.max_bytes = bytes.min(MAX_HEAP_BYTES);
            }
            GcParam::LargeObjectSize => {
                self.config.large_object_bytes = bytes.max(1024);
                let eden = self.eden_end - self.young_start;
                self.large_words = (self.config.large_object_bytes / 8).min(eden / 4).max(64);
            }
        }
        let mut c = self.config.clone();
        Self::sanitize(&mut c);
        self.config = c;
        Ok(old)
    }

    /// The full-GC threshold after a full GC that left `used` old words.
    pub(crate) fn threshold_after(&self, used: usize) -> usize {
        let grown = (used as f64 * (1.0 + self.config.full_gc_ratio)) as usize;
        // Tiny old spaces would collect all the time: allow at least 1/4 eden of growth.
        let min_growth = (self.eden_end - self.young_start) / 4;
        grown.max(used + min_growth)
    }

    // ------------------------------------------------------------------
    // Allocation
    // ------------------------------------------------------------------

    /// Allocate `body_words` words plus a header. Eden first; old space when the
    /// object is large or eden is full. The caller writes every body word.
    #[inline(always)]
    fn alloc_raw(
        &mut self,
        header0: u64,
        size_field: u64,
        body_words: usize,
    ) -> Result<usize, OutOfMemory> {
        let total = HEADER_WORDS + body_words;
        let index = self.top;
        let new_top = index + total;
        let index = if new_top > self.eden_threshold || total > self.large_words {
            self.alloc_slow(total)?
        } else {
            self.top = new_top;
            index
        };
        self.mem[index] = header0;
        self.mem[index + 1] = size_field;
        self.stats.allocated_bytes += (total * 8) as u64;
        self.stats.allocated_objects += 1;
        Ok(index)
    }

    #[cold]
    #[inline(never)]
    fn alloc_slow(&mut self, total: usize) -> Result<usize, OutOfMemory> {
        if self.config.stress {
            self.gc_requested = true;
        }
        if total <= self.large_words {
            let new_top = self.top + total;
            if new_top > self.eden_threshold {
                self.gc_requested = true;
            }
            if new_top <= self.eden_end {
                let index = self.top;
                self.top = new_top;
                return Ok(index);
            }
        }
        self.alloc_old(total)
    }

    /// Allocate `total` words in old space (the mutator's path: may fail).
    fn alloc_old(&mut self, total: usize) -> Result<usize, OutOfMemory> {
        if let Some(index) = self.alloc_in_holes(total) {
            self.note_old_alloc(total);
            return Ok(index);
        }
        let index = self.old_top;
        let end = index + total;
        if end > self.mem.len() {
            let limit = self.limit_words();
            if end > limit {
                // A full GC may make room; the program gets an error now.
                self.request_full_gc();
                return Err(OutOfMemory {
                    requested: total * 8,
                });
            }
            self.grow_to(end, limit);
        }
        self.old_top = end;
        self.note_old_alloc(total);
        Ok(index)
    }

    fn note_old_alloc(&mut self, total: usize) {
        self.stats.old_allocated_bytes += (total * 8) as u64;
        self.stats.old_used_bytes += (total * 8) as u64;
        self.stats.old_free_bytes = self.stats.old_free_bytes.saturating_sub((total * 8) as u64);
        if self.old_used_words() > self.full_gc_threshold {
            self.request_full_gc();
        }
    }

    /// Make words up to `end` usable. Old space grows (its capacity: memory
    /// requested from the system, untouched until used) by the growth headroom
    /// at least, not past `limit` words unless `end` itself is; the words are
    /// initialised a little ahead of use, so that a large headroom costs nothing
    /// until it is used.
    pub(crate) fn grow_to(&mut self, end: usize, limit: usize) {
        let cap = self.mem.capacity();
        if end > cap {
            let want = (cap + self.config.growth_headroom / 8).min(limit).max(end);
            self.mem.reserve_exact(want - self.mem.len());
            self.stats.growths += 1;
            self.stats.heap_bytes = (self.mem.capacity() * 8) as u64;
        }
        let len = (end + GROW_CHUNK_WORDS).min(self.mem.capacity()).max(end);
        self.mem.resize(len, 0);
    }

    fn header(class: u32, format: Format) -> u64 {
        (class as u64 & CLASS_MASK) | ((format as u64) << FORMAT_SHIFT)
    }

    /// Allocate a pointer object with `slots` slots, all nil.
    pub fn alloc_pointers(&mut self, class: u32, slots: usize) -> Result<Value, OutOfMemory> {
        self.alloc_slots(class, Format::Pointers, slots)
    }

    /// Allocate a weak pointer object with `slots` slots, all nil.
    pub fn alloc_weak(&mut self, class: u32, slots: usize) -> Result<Value, OutOfMemory> {
        self.alloc_slots(class, Format::Weak, slots)
    }

    /// Allocate an ephemeron with `slots` slots (at least 2), all nil: slot 0 is
    /// the key, slot 1 the value, further slots are ordinary strong fields.
    pub fn alloc_ephemeron(&mut self, class: u32, slots: usize) -> Result<Value, OutOfMemory> {
        self.alloc_slots(class, Format::Ephemeron, slots.max(2))
    }

    #[inline(always)]
    fn alloc_slots(
        &mut self,
        class: u32,
        format: Format,
        slots: usize,
    ) -> Result<Value, OutOfMemory> {
        if slots > u32::MAX as usize {
            return Err(OutOfMemory {
                requested: slots.saturating_mul(8),
            });
        }
        let i = self.alloc_raw(Self::header(class, format), slots as u64, slots)?;
        self.mem[i + HEADER_WORDS..i + HEADER_WORDS + slots].fill(Value::NIL.0);
        Ok(Value::from_index(i))
    }

    /// Allocate a pointer object initialised from `values`.
    pub fn alloc_with(&mut self, class: u32, values: &[Value]) -> Result<Value, OutOfMemory> {
        if values.len() > u32::MAX as usize {
            return Err(OutOfMemory {
                requested: values.len().saturating_mul(8),
            });
        }
        let i = self.alloc_raw(
            Self::header(class, Format::Pointers),
            values.len() as u64,
            values.len(),
        )?;
        for (slot, v) in self.mem[i + HEADER_WORDS..i + HEADER_WORDS + values.len()]
            .iter_mut()
            .zip(values)
        {
            *slot = v.0;
        }
        if !self.is_young_index(i) && values.iter().any(|&v| self.is_young(v)) {
            self.remember(i);
        }
        Ok(Value::from_index(i))
    }

    /// Allocate a byte object holding a copy of `bytes`.
    pub fn alloc_bytes(&mut self, class: u32, bytes: &[u8]) -> Result<Value, OutOfMemory> {
        if bytes.len() > u32::MAX as usize {
            return Err(OutOfMemory {
                requested: bytes.len(),
            });
        }
        let words = bytes.len().div_ceil(8);
        let i = self.alloc_raw(
            Self::header(class, Format::Bytes),
            bytes.len() as u64,
            words,
        )?;
        let body = &mut self.mem[i + HEADER_WORDS..i + HEADER_WORDS + words];
        for (w, chunk) in body.iter_mut().zip(bytes.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_le_bytes(b);
        }
        Ok(Value::from_index(i))
    }

    /// Allocate a raw-word object holding a copy of `words`.
    pub fn alloc_words(&mut self, class: u32, words: &[u64]) -> Result<Value, OutOfMemory> {
        if words.len() > u32::MAX as usize {
            return Err(OutOfMemory {
                requested: words.len().saturating_mul(8),
            });
        }
        let i = self.alloc_raw(
            Self::header(class, Format::Words),
            words.len() as u64,
            words.len(),
        )?;
        self.mem[i + HEADER_WORDS..i + HEADER_WORDS + words.len()].copy_from_slice(words);
        Ok(Value::from_index(i))
    }

    // ------------------------------------------------------------------
    // Accessors
    // ------------------------------------------------------------------

    /// Class index of a heap object.
    #[inline(always)]
    pub fn class_index(&self, v: Value) -> u32 {
        (self.mem[v.index()] & CLASS_MASK) as u32
    }

    /// Change the class of an object (same format), e.g. for `become`-free class migration.
    pub fn set_class_index(&mut self, v: Value, class: u32) {
        let h = &mut self.mem[v.index()];
        *h = (*h & !CLASS_MASK) | (class as u64 & CLASS_MASK);
    }

    /// Format of a heap object.
    #[inline(always)]
    pub fn format(&self, v: Value) -> Format {
        Format::from_bits((self.mem[v.index()] >> FORMAT_SHIFT) & FORMAT_MASK)
    }

    /// Number of scavenges this object survived in new space (saturates at 15).
    pub fn age(&self, v: Value) -> u32 {
        ((self.mem[v.index()] >> AGE_SHIFT) & AGE_MASK) as u32
    }

    /// Mark or unmark an object as tracked (for lifetime profiling). When a
    /// tracked object dies, the collector records a [`Death`] (see
    /// [`Heap::take_deaths`]); its allocation time is the allocation clock now,
    /// so flag objects right after allocating them.
    pub fn set_tracked(&mut self, v: Value, on: bool) {
        let i = v.index();
        let h = &mut self.mem[i];
        if on {
            *h |= TRACKED_BIT;
            let now = self.stats.allocated_bytes;
            self.tracked.entry(i).or_insert(Track {
                allocated_at: now,
                scavenges: 0,
                full_gcs: 0,
            });
        } else {
            *h &= !TRACKED_BIT;
            self.tracked.remove(&i);
        }
    }

    /// Is the object tracked?
    pub fn is_tracked(&self, v: Value) -> bool {
        self.mem[v.index()] & TRACKED_BIT != 0
    }

    /// The size field: number of slots/words, or number of bytes for byte objects.
    #[inline(always)]
    pub fn size(&self, v: Value) -> usize {
        (self.mem[v.index() + 1] & SIZE_MASK) as usize
    }

    /// Size in bytes of the whole object, header included.
    pub fn object_bytes(&self, v: Value) -> usize {
        (HEADER_WORDS + self.body_words(v.index())) * 8
    }

    #[inline(always)]
    pub(crate) fn body_words(&self, index: usize) -> usize {
        body_words_of(self.mem[index], self.mem[index + 1])
    }

    /// Words taken by the object or filler at `index`.
    #[inline(always)]
    pub(crate) fn total_words(&self, index: usize) -> usize {
        let h = self.mem[index];
        if (h >> FORMAT_SHIFT) & FORMAT_MASK == FREE_FORMAT {
            (h >> 32) as usize
        } else {
            HEADER_WORDS + body_words_of(h, self.mem[index + 1])
        }
    }

    /// Slot `i` (0-based) of a pointer object. Panics if out of range: callers check `size`.
    #[inline(always)]
    pub fn slot(&self, v: Value, i: usize) -> Value {
        Value(self.mem[v.index() + HEADER_WORDS + i])
    }

    /// Store into slot `i` of a pointer object. This is the write barrier: an old
    /// object that is given a reference to a young one is remembered.
    #[inline(always)]
    pub fn set_slot(&mut self, v: Value, i: usize, value: Value) {
        let target = v.index();
        self.mem[target + HEADER_WORDS + i] = value.0;
        // Old target (rarely: most stores go into young objects) and young value.
        // No call here: a call in this inlined path costs the interpreter more
        // than the few instructions below.
        if target.wrapping_sub(self.young_start) >= self.young_words
            && value.0 & 7 == 0
            && value.index().wrapping_sub(self.young_start) < self.young_words
        {
            let h = self.mem[target];
            if h & REMEMBERED_BIT == 0 {
                self.mem[target] = h | REMEMBERED_BIT;
                let n = self.store_len;
                if n < self.store_buf.len() {
                    self.store_buf[n] = target;
                    self.store_len = n + 1;
                } else {
                    self.store_overflow = true;
                }
            }
        }
    }

    /// Move the store buffer into the remembered set (at the start of a
    /// collection). After an overflow, rebuild the set from the header bits.
    pub(crate) fn flush_store_buffer(&mut self) {
        if self.store_overflow {
            self.remembered.clear();
            let [lower, _, _, upper] = self.regions();
            for (start, end) in [lower, upper] {
                let mut i = start;
                while i < end {
                    let h = self.mem[i];
                    if (h >> FORMAT_SHIFT) & FORMAT_MASK != FREE_FORMAT && h & REMEMBERED_BIT != 0 {
                        self.remembered.push(i);
                    }
                    i += self.total_words(i);
                }
            }
            self.store_overflow = false;
        } else {
            self.remembered
                .extend_from_slice(&self.store_buf[..self.store_len]);
        }
        self.store_len = 0;
    }

    /// Add an old object to the remembered set (once).
    #[cold]
    #[inline(never)]
    pub(crate) fn remember(&mut self, index: usize) {
        let h = &mut self.mem[index];
        if *h & REMEMBERED_BIT == 0 {
            *h |= REMEMBERED_BIT;
            self.remembered.push(index);
            let n = self.remembered.len() as u64;
            self.stats.remembered_set_size = n;
            if n > self.stats.max_remembered_set_size {
                self.stats.max_remembered_set_size = n;
            }
        }
    }

    /// Is this object in the remembered set?
    pub fn is_remembered(&self, v: Value) -> bool {
        self.mem[v.index()] & REMEMBERED_BIT != 0
    }

    /// Raw word `i` of a word object.
    #[inline(always)]
    pub fn word(&self, v: Value, i: usize) -> u64 {
        self.mem[v.index() + HEADER_WORDS + i]
    }

    /// Set raw word `i` of a word object.
    pub fn set_word(&mut self, v: Value, i: usize, w: u64) {
        self.mem[v.index() + HEADER_WORDS + i] = w;
    }

    /// All raw words of a word object.
    pub fn words(&self, v: Value) -> &[u64] {
        let i = v.index() + HEADER_WORDS;
        &self.mem[i..i + self.size(v)]
    }

    /// The bytes of a byte object.
    pub fn bytes(&self, v: Value) -> &[u8] {
        let i = v.index() + HEADER_WORDS;
        let len = self.size(v);
        let words = &self.mem[i..i + len.div_ceil(8)];
        // SAFETY: `words` is a valid, initialised slice of u64 of `len.div_ceil(8)`
        // words, so its first `len` bytes are in bounds; u8 has alignment 1 and no
        // invalid bit patterns; the returned slice borrows `self` immutably, so the
        // vector cannot be reallocated while it is alive. Bytes are stored
        // little-endian (see `alloc_bytes`), and this crate only supports
        // little-endian targets (checked by `const _` below).
        unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), len) }
    }

    /// The bytes of a byte object, mutable.
    pub fn bytes_mut(&mut self, v: Value) -> &mut [u8] {
        let i = v.index() + HEADER_WORDS;
        let len = self.size(v);
        let words = &mut self.mem[i..i + len.div_ceil(8)];
        // SAFETY: as in `bytes`; the slice borrows `self` mutably and exclusively.
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
    }

    /// The identity hash of an object, assigned on first request from the seeded
    /// generator (deterministic for a given seed and request order). Never 0.
    pub fn identity_hash(&mut self, v: Value) -> u32 {
        let idx = v.index();
        let h = (self.mem[idx] >> HASH_SHIFT) & HASH_MASK;
        if h != 0 {
            return h as u32;
        }
        let h = loop {
            // xorshift64*
            let mut x = self.hash_state;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.hash_state = x;
            let h = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) & HASH_MASK;
            if h != 0 {
                break h;
            }
        };
        self.mem[idx] |= h << HASH_SHIFT;
        h as u32
    }

    /// Set an explicit identity hash (used for symbols, whose hash is their id).
    pub fn set_identity_hash(&mut self, v: Value, h: u32) {
        let idx = v.index();
        self.mem[idx] =
            (self.mem[idx] & !(HASH_MASK << HASH_SHIFT)) | ((h as u64 & HASH_MASK) << HASH_SHIFT);
    }

    /// The address ranges holding objects, in address order: compacted old
    /// space, eden, the past survivor space, old space above new space.
    pub(crate) fn regions(&self) -> [(usize, usize); 4] {
        [
            (FIRST_INDEX, self.young_start),
            (self.young_start, self.top),
            (self.past_start, self.past_top),
            (self.young_end(), self.old_top),
        ]
    }

    /// Is `v` a pointer to a well-formed object of this heap? (For the verifier and
    /// for values coming from untrusted places: checks that it lies in a space
    /// holding objects and fits there, not that it is an object boundary.)
    pub fn is_valid_object(&self, v: Value) -> bool {
        if !v.is_ptr() {
            return false;
        }
        let i = v.index();
        for (start, end) in self.regions() {
            if i >= start && i + HEADER_WORDS <= end {
                let h = self.mem[i];
                if h & FORWARDED != 0 || (h >> FORMAT_SHIFT) & FORMAT_MASK > 4 {
                    return false;
                }
                return i + HEADER_WORDS + self.body_words(i) <= end;
            }
        }
        false
    }

    /// Walk every object (for the verifier and heap statistics): calls `f(value)` for each.
    pub fn for_each_object(&self, mut f: impl FnMut(Value)) {
        for (start, end) in self.regions() {
            let mut i = start;
            while i < end {
                let n = self.total_words(i);
                if (self.mem[i] >> FORMAT_SHIFT) & FORMAT_MASK != FREE_FORMAT {
                    f(Value::from_index(i));
                }
                i += n;
            }
        }
    }

    /// Start a collection. Report every root with [`Collection::root`](crate::Collection::root),
    /// then call [`Collection::finish`](crate::Collection::finish). The heap
    /// decides whether it is a scavenge or a full GC (see [`Collection::kind`](crate::Collection::kind)).
    pub fn start_collection(&mut self) -> crate::gc::Collection<'_> {
        let kind = self.next_collection_kind();
        if self.config.stress {
            self.stress_count += 1;
        }
        crate::gc::Collection::new(self, kind)
    }
}

/// The header of a filler of `n` words (a free gap in old space).
#[inline(always)]
pub(crate) fn filler(n: usize) -> u64 {
    (FREE_FORMAT << FORMAT_SHIFT) | ((n as u64) << 32)
}

/// Body words of an object from its two header words.
#[inline(always)]
pub(crate) fn body_words_of(h0: u64, h1: u64) -> usize {
    let size = (h1 & SIZE_MASK) as usize;
    if (h0 >> FORMAT_SHIFT) & FORMAT_MASK == Format::Bytes as u64 {
        size.div_ceil(8)
    } else {
        size
    }
}

// Bytes are packed little-endian into words and viewed in place by `Heap::bytes`.
const _: () = assert!(
    cfg!(target_endian = "little"),
    "lupa-heap supports little-endian targets only"
);
