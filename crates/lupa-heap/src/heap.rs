//! The object heap: layout, allocation and a copying collector.
//!
//! # Layout
//! Memory is one `Vec<u64>`; a heap pointer is the word index of an object's
//! header. Addressing by index instead of by machine address means the space can
//! be reallocated (grown) at any time without invalidating a single [`Value`].
//!
//! Every object has a two-word header followed by its body:
//!
//! ```text
//! word 0: bits  0..22  class index        bits 22..26 format
//!         bits 26..30  age (GCs survived, saturating)   bit 30 tracked
//!         bits 32..63  identity hash (0 = not yet assigned)
//!         bit  63      set only in a forwarded husk during a collection
//! word 1: bits  0..32  size: slots for pointer/word formats, bytes for bytes
//! body:   slots (Values), raw words, or bytes packed little-endian
//! ```
//!
//! # Collection
//! Allocation never collects by itself: when the current space is full it keeps
//! bump-allocating past its soft limit (growing the vector) and raises
//! [`Heap::needs_gc`]. The interpreter collects at its next safepoint, where
//! every live reference is in a root it knows. So Rust code between safepoints
//! (primitives) may hold `Value`s across allocations. The collector is Cheney's
//! copying algorithm: live objects are copied into a fresh space, roots are
//! updated through [`Collection::root`], weak slots whose referents died become
//! nil. `--max-heap` bounds the live data plus the soft limit.

use crate::value::Value;

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
}

impl Format {
    fn from_bits(b: u64) -> Format {
        match b {
            1 => Format::Bytes,
            2 => Format::Words,
            3 => Format::Weak,
            _ => Format::Pointers,
        }
    }
}

const CLASS_MASK: u64 = (1 << 22) - 1;
const FORMAT_SHIFT: u32 = 22;
const FORMAT_MASK: u64 = 0xF;
const AGE_SHIFT: u32 = 26;
const AGE_MASK: u64 = 0xF;
const TRACKED_BIT: u64 = 1 << 30;
const HASH_SHIFT: u32 = 32;
const HASH_MASK: u64 = 0x7FFF_FFFF;
const FORWARDED: u64 = 1 << 63;
const HEADER_WORDS: usize = 2;
/// The first word index ever handed out (index 0 is never a valid object).
const FIRST_INDEX: usize = 2;

/// Extra room past `--max-heap` in which the program can still handle an
/// out-of-memory error.
pub const RESERVE_BYTES: usize = 4 << 20;

/// The largest class index a header can hold.
pub const MAX_CLASS_INDEX: u32 = CLASS_MASK as u32;

/// Heap sizing and behaviour.
#[derive(Debug, Clone)]
pub struct HeapConfig {
    /// Initial and minimum soft limit of the allocation space, in bytes.
    pub initial_bytes: usize,
    /// Hard bound on the heap (live data plus allocation space), in bytes.
    pub max_bytes: usize,
    /// After a collection the soft limit is `max(initial, live * growth_factor)`.
    pub growth_factor: f64,
    /// Collect at every safepoint that follows an allocation.
    pub stress: bool,
    /// Seed of the identity-hash generator.
    pub hash_seed: u64,
}

impl Default for HeapConfig {
    fn default() -> Self {
        HeapConfig {
            initial_bytes: 16 << 20,
            max_bytes: 4 << 30,
            growth_factor: 3.0,
            stress: false,
            hash_seed: 0x9E37_79B9_7F4A_7C15,
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

/// Counters kept by the heap; cheap, always on.
#[derive(Debug, Clone, Default)]
pub struct HeapStats {
    /// Number of collections.
    pub collections: u64,
    /// Total time spent collecting.
    pub gc_time: std::time::Duration,
    /// Longest single collection.
    pub max_pause: std::time::Duration,
    /// Bytes allocated since start.
    pub allocated_bytes: u64,
    /// Objects allocated since start.
    pub allocated_objects: u64,
    /// Bytes surviving the last collection.
    pub live_bytes_after_last_gc: u64,
    /// Total bytes copied by all collections.
    pub copied_bytes: u64,
}

/// The object heap.
pub struct Heap {
    mem: Vec<u64>,
    /// The other semispace, kept between collections so that it is not
    /// reallocated (and page-faulted in) at every collection.
    spare: Vec<u64>,
    top: usize,
    soft_limit: usize,
    config: HeapConfig,
    gc_requested: bool,
    /// The heap went past `max_bytes` into its emergency reserve; the VM should
    /// signal an out-of-memory error at its next safepoint.
    oom_pending: bool,
    in_reserve: bool,
    hash_state: u64,
    stats: HeapStats,
}

impl Heap {
    /// A new, empty heap.
    pub fn new(config: HeapConfig) -> Heap {
        let words = (config.initial_bytes / 8).max(1024);
        Heap {
            mem: vec![0; words],
            spare: Vec::new(),
            top: FIRST_INDEX,
            soft_limit: words,
            hash_state: config.hash_seed | 1,
            config,
            gc_requested: false,
            oom_pending: false,
            in_reserve: false,
            stats: HeapStats::default(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &HeapConfig {
        &self.config
    }

    /// Turn stress mode on or off.
    pub fn set_stress(&mut self, on: bool) {
        self.config.stress = on;
    }

    /// Statistics so far.
    pub fn stats(&self) -> &HeapStats {
        &self.stats
    }

    /// Bytes currently in use (live data since the last GC plus what was allocated since).
    pub fn used_bytes(&self) -> usize {
        self.top * 8
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

    /// Ask for a collection at the next safepoint.
    pub fn request_gc(&mut self) {
        self.gc_requested = true;
    }

    fn alloc_raw(
        &mut self,
        header0: u64,
        size_field: u64,
        body_words: usize,
    ) -> Result<usize, OutOfMemory> {
        let total = HEADER_WORDS + body_words;
        let index = self.top;
        let new_top = index + total;
        if new_top > self.soft_limit || self.config.stress {
            self.gc_requested = true;
            if new_top * 8 > self.config.max_bytes {
                return Err(OutOfMemory {
                    requested: total * 8,
                });
            }
            if new_top > self.mem.len() {
                let want = (new_top + new_top / 2).max(self.mem.len() + 1024);
                let want = want.min(self.config.max_bytes / 8 + 1).max(new_top);
                self.mem.resize(want, 0);
            }
        }
        self.mem[index] = header0;
        self.mem[index + 1] = size_field;
        self.mem[index + HEADER_WORDS..new_top].fill(0);
        self.top = new_top;
        self.stats.allocated_bytes += (total * 8) as u64;
        self.stats.allocated_objects += 1;
        Ok(index)
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
        let i = self.alloc_raw(
            Self::header(class, Format::Pointers),
            values.len() as u64,
            values.len(),
        )?;
        for (k, v) in values.iter().enumerate() {
            self.mem[i + HEADER_WORDS + k] = v.0;
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
        for (k, chunk) in bytes.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.mem[i + HEADER_WORDS + k] = u64::from_le_bytes(w);
        }
        Ok(Value::from_index(i))
    }

    /// Allocate a raw-word object holding a copy of `words`.
    pub fn alloc_words(&mut self, class: u32, words: &[u64]) -> Result<Value, OutOfMemory> {
        let i = self.alloc_raw(
            Self::header(class, Format::Words),
            words.len() as u64,
            words.len(),
        )?;
        self.mem[i + HEADER_WORDS..i + HEADER_WORDS + words.len()].copy_from_slice(words);
        Ok(Value::from_index(i))
    }

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

    /// Number of collections this object survived (saturates at 15).
    pub fn age(&self, v: Value) -> u32 {
        ((self.mem[v.index()] >> AGE_SHIFT) & AGE_MASK) as u32
    }

    /// Mark or unmark an object as tracked (for lifetime profiling).
    pub fn set_tracked(&mut self, v: Value, on: bool) {
        let h = &mut self.mem[v.index()];
        if on {
            *h |= TRACKED_BIT
        } else {
            *h &= !TRACKED_BIT
        }
    }

    /// Is the object tracked?
    pub fn is_tracked(&self, v: Value) -> bool {
        self.mem[v.index()] & TRACKED_BIT != 0
    }

    /// The size field: number of slots/words, or number of bytes for byte objects.
    #[inline(always)]
    pub fn size(&self, v: Value) -> usize {
        (self.mem[v.index() + 1] & 0xFFFF_FFFF) as usize
    }

    /// Size in bytes of the whole object, header included.
    pub fn object_bytes(&self, v: Value) -> usize {
        (HEADER_WORDS + self.body_words(v.index())) * 8
    }

    fn body_words(&self, index: usize) -> usize {
        let size = (self.mem[index + 1] & 0xFFFF_FFFF) as usize;
        match Format::from_bits((self.mem[index] >> FORMAT_SHIFT) & FORMAT_MASK) {
            Format::Bytes => size.div_ceil(8),
            _ => size,
        }
    }

    /// Slot `i` (0-based) of a pointer object. Panics if out of range: callers check `size`.
    #[inline(always)]
    pub fn slot(&self, v: Value, i: usize) -> Value {
        Value(self.mem[v.index() + HEADER_WORDS + i])
    }

    /// Store into slot `i` of a pointer object.
    #[inline(always)]
    pub fn set_slot(&mut self, v: Value, i: usize, value: Value) {
        self.mem[v.index() + HEADER_WORDS + i] = value.0;
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

    /// Is `v` a pointer to a well-formed object of this heap? (For the verifier and
    /// for values coming from untrusted places.)
    pub fn is_valid_object(&self, v: Value) -> bool {
        if !v.is_ptr() {
            return false;
        }
        let i = v.index();
        if i < FIRST_INDEX || i + HEADER_WORDS > self.top {
            return false;
        }
        i + HEADER_WORDS + self.body_words(i) <= self.top
    }

    /// Start a collection. Report every root with [`Collection::root`], then call
    /// [`Collection::finish`].
    pub fn start_collection(&mut self) -> Collection<'_> {
        let mut to = std::mem::take(&mut self.spare);
        let need = self.top.max(FIRST_INDEX + 1);
        if to.len() < need {
            to.resize(need, 0);
        }
        Collection {
            heap: self,
            to,
            to_top: FIRST_INDEX,
            weak: Vec::new(),
            start: std::time::Instant::now(),
        }
    }

    /// Walk every object (for the verifier and heap statistics): calls `f(value)` for each.
    pub fn for_each_object(&self, mut f: impl FnMut(Value)) {
        let mut i = FIRST_INDEX;
        while i < self.top {
            f(Value::from_index(i));
            i += HEADER_WORDS + self.body_words(i);
        }
    }

    /// Check every object's header and every pointer slot. Answers a description of
    /// the first problem found.
    pub fn verify(&self, class_count: u32) -> Result<(), String> {
        let mut i = FIRST_INDEX;
        while i < self.top {
            let h = self.mem[i];
            if h & FORWARDED != 0 {
                return Err(format!(
                    "object at {i} is a forwarding husk outside a collection"
                ));
            }
            let class = (h & CLASS_MASK) as u32;
            if class == 0 || class >= class_count {
                return Err(format!("object at {i} has invalid class index {class}"));
            }
            let body = self.body_words(i);
            if i + HEADER_WORDS + body > self.top {
                return Err(format!("object at {i} extends past the end of the heap"));
            }
            let fmt = Format::from_bits((h >> FORMAT_SHIFT) & FORMAT_MASK);
            if matches!(fmt, Format::Pointers | Format::Weak) {
                for k in 0..body {
                    let v = Value(self.mem[i + HEADER_WORDS + k]);
                    if v.is_ptr() && !self.is_valid_object(v) {
                        return Err(format!(
                            "slot {k} of object at {i} holds a dangling pointer {v:?}"
                        ));
                    }
                    if !v.is_ptr()
                        && !v.is_int()
                        && !v.is_float()
                        && ![Value::NIL, Value::TRUE, Value::FALSE].contains(&v)
                    {
                        return Err(format!(
                            "slot {k} of object at {i} holds an invalid value {v:?}"
                        ));
                    }
                }
            }
            i += HEADER_WORDS + body;
        }
        Ok(())
    }
}

// Bytes are packed little-endian into words and viewed in place by `Heap::bytes`.
const _: () = assert!(
    cfg!(target_endian = "little"),
    "lupa-heap supports little-endian targets only"
);

/// A collection in progress (Cheney's algorithm).
pub struct Collection<'h> {
    heap: &'h mut Heap,
    to: Vec<u64>,
    to_top: usize,
    weak: Vec<usize>,
    start: std::time::Instant,
}

impl Collection<'_> {
    /// Copy the object a root refers to (if it is a heap pointer) and update the root.
    pub fn root(&mut self, v: &mut Value) {
        if v.is_ptr() {
            *v = self.forward(*v);
        }
    }

    fn forward(&mut self, v: Value) -> Value {
        let from = v.index();
        let h = self.heap.mem[from];
        if h & FORWARDED != 0 {
            return Value::from_index((h & !FORWARDED) as usize);
        }
        let total = HEADER_WORDS + self.heap.body_words(from);
        let to = self.to_top;
        if to + total > self.to.len() {
            // Cannot happen (to-space is as large as from-space) but stay safe.
            self.to.resize(to + total, 0);
        }
        self.to[to..to + total].copy_from_slice(&self.heap.mem[from..from + total]);
        let age = ((h >> AGE_SHIFT) & AGE_MASK)
            .saturating_add(1)
            .min(AGE_MASK);
        self.to[to] = (h & !(AGE_MASK << AGE_SHIFT)) | (age << AGE_SHIFT);
        self.to_top = to + total;
        self.heap.mem[from] = FORWARDED | to as u64;
        Value::from_index(to)
    }

    /// Copy everything reachable from the roots reported so far, clear dead weak
    /// references, and install the new space.
    pub fn finish(mut self) {
        let mut scan = FIRST_INDEX;
        while scan < self.to_top {
            let h = self.to[scan];
            let fmt = Format::from_bits((h >> FORMAT_SHIFT) & FORMAT_MASK);
            let size = (self.to[scan + 1] & 0xFFFF_FFFF) as usize;
            let body = if fmt == Format::Bytes {
                size.div_ceil(8)
            } else {
                size
            };
            match fmt {
                Format::Pointers => {
                    for k in 0..body {
                        let slot = scan + HEADER_WORDS + k;
                        let v = Value(self.to[slot]);
                        if v.is_ptr() {
                            let nv = self.forward(v);
                            self.to[slot] = nv.0;
                        }
                    }
                }
                Format::Weak => self.weak.push(scan),
                Format::Bytes | Format::Words => {}
            }
            scan += HEADER_WORDS + body;
        }
        // Weak slots: keep survivors (updated), clear the dead.
        for &obj in &self.weak {
            let size = (self.to[obj + 1] & 0xFFFF_FFFF) as usize;
            for k in 0..size {
                let slot = obj + HEADER_WORDS + k;
                let v = Value(self.to[slot]);
                if v.is_ptr() {
                    let h = self.heap.mem[v.index()];
                    self.to[slot] = if h & FORWARDED != 0 {
                        Value::from_index((h & !FORWARDED) as usize).0
                    } else {
                        Value::NIL.0
                    };
                }
            }
        }
        let heap = &mut *self.heap;
        let live = self.to_top;
        let min_words = (heap.config.initial_bytes / 8).max(1024);
        let wanted = ((live as f64 * heap.config.growth_factor) as usize)
            .max(min_words)
            .max(live + 1024);
        let max_words = (heap.config.max_bytes + RESERVE_BYTES) / 8;
        let limit = wanted.min(max_words.max(live + 1));
        let mut to = std::mem::take(&mut self.to);
        if to.len() < limit {
            to.resize(limit, 0);
        }
        let old = std::mem::replace(&mut heap.mem, to);
        heap.spare = old;
        heap.top = live;
        heap.soft_limit = limit;
        heap.gc_requested = false;
        if heap.in_reserve && live * 8 + RESERVE_BYTES <= heap.config.max_bytes {
            heap.in_reserve = false;
        }
        let pause = self.start.elapsed();
        heap.stats.collections += 1;
        heap.stats.gc_time += pause;
        heap.stats.max_pause = heap.stats.max_pause.max(pause);
        heap.stats.live_bytes_after_last_gc = (live * 8) as u64;
        heap.stats.copied_bytes += ((live - FIRST_INDEX) * 8) as u64;
    }
}
