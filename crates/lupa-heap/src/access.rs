//! Object access: header fields (class, format, age, tracked bit, size), slots
//! with the write barrier and its store buffer, raw words, identity hashes, and
//! walking the objects of the heap. Every access is bounds-checked safe indexing;
//! the byte views are in `bytes.rs`.

use crate::heap::*;
use crate::layout::*;
use crate::lifetime::Track;
use crate::value::Value;

impl Heap {
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
    /// tracked object dies, the collector records a [`Death`](crate::Death) (see
    /// [`Heap::take_deaths`]); its allocation time is the allocation clock now,
    /// so flag objects right after allocating them.
    pub fn set_tracked(&mut self, v: Value, on: bool) {
        let i = v.index();
        let h = &mut self.mem[i];
        if on {
            if *h & TRACKED_BIT != 0 {
                return;
            }
            *h |= TRACKED_BIT;
            let now = self.stats.allocated_bytes;
            let young = self.is_young_index(i);
            self.tracked.insert(
                i,
                young,
                Track {
                    tag: 0,
                    allocated_at: now,
                    scavenges: 0,
                    full_gcs: 0,
                    base: 0,
                },
            );
        } else {
            if *h & TRACKED_BIT == 0 {
                return;
            }
            *h &= !TRACKED_BIT;
            self.tracked.remove(i);
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

    /// Number of pointer slots (`slot`/`set_slot` indices `0..n`): the size of a
    /// `Pointers`, `Weak` or `Ephemeron` object, 0 for bytes and raw words. The
    /// interpreter's field access checks against this, so a method run on a
    /// receiver of another shape can never read or write past an object or
    /// store a pointer into raw data.
    #[inline(always)]
    pub fn slot_count(&self, v: Value) -> usize {
        let i = v.index();
        let fmt = (self.mem[i] >> FORMAT_SHIFT) & FORMAT_MASK;
        let size = (self.mem[i + 1] & SIZE_MASK) as usize;
        // Bytes (1) and Words (2) in one comparison.
        const _: () = assert!(Format::Bytes as u64 == 1 && Format::Words as u64 == 2);
        if fmt.wrapping_sub(1) < 2 { 0 } else { size }
    }

    /// Size in bytes of the whole object, header included.
    pub fn object_bytes(&self, v: Value) -> usize {
        (HEADER_WORDS + self.body_words(v.index())) * 8
    }

    #[inline(always)]
    pub(crate) fn body_words(&self, index: usize) -> usize {
        body_words_of(self.mem[index], self.mem[index + 1])
    }

    /// Size of an object in the heap, in bytes, header included (what a
    /// [`Death`](crate::Death) and an allocation sample report).
    pub fn total_bytes(&self, v: Value) -> u64 {
        (self.total_words(v.index()) * 8) as u64
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

    /// The address of the heap's first word, for native code (a JIT's): the
    /// object a pointer `v` names starts at this address plus `v`'s bits. It
    /// changes when the heap grows (any allocation may grow it); nothing
    /// here reads or writes through it.
    pub fn words_ptr(&mut self) -> *mut u64 {
        self.mem.as_mut_ptr()
    }

    /// The identity hash stored in the header, without assigning one (0 when
    /// none was assigned yet). Objects the VM made with an explicit hash
    /// (classes, methods, symbols, processes) always have theirs.
    pub fn stored_hash(&self, v: Value) -> u32 {
        ((self.mem[v.index()] >> HASH_SHIFT) & HASH_MASK) as u32
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
}
