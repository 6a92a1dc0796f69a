//! Heap configuration and Pharo's GC parameters: [`HeapConfig`] (sizes and
//! behaviour chosen at start), [`GcParam`] (the parameters settable at run time,
//! by name or Pharo index, validated by [`Heap::set_parameter`](crate::Heap::set_parameter) in `params.rs`), the heap's size
//! limits and the out-of-memory error.

/// Extra room past `--max-heap` in which the program can still handle an
/// out-of-memory error.
pub const RESERVE_BYTES: usize = 4 << 20;

/// The largest heap the header's 30-bit forwarding field can address (8 GB).
pub const MAX_HEAP_BYTES: usize = (1usize << 30) * 8 - RESERVE_BYTES;

const MB: usize = 1 << 20;

/// Heap sizing and behaviour. The sizes are Pharo's GC parameters, with Pharo's
/// meaning (see [`GcParam`]); they can be changed at run time with
/// [`Heap::set_parameter`](crate::Heap::set_parameter).
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

/// A rejected [`Heap::set_parameter`](crate::Heap::set_parameter).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError(pub String);

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParamError {}
