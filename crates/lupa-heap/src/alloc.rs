//! Allocation: bump allocation in eden, large objects and eden overflow in old
//! space (reusing the holes the compactor left), growth of old space, and the
//! out-of-memory protocol (`needs_gc`, the emergency reserve). Allocation never
//! collects: it only raises `needs_gc` for the VM's next safepoint.

use crate::config::*;
use crate::heap::*;
use crate::layout::*;
use crate::value::Value;

impl Heap {
    /// Fail now if an object of `bytes` bytes could never fit in this heap (its
    /// `--max-heap` and reserve): for primitives that would otherwise build a Rust
    /// buffer of that size before allocating.
    pub fn check_request(&self, bytes: usize) -> Result<(), OutOfMemory> {
        if bytes / 8 > self.limit_words() {
            Err(OutOfMemory { requested: bytes })
        } else {
            Ok(())
        }
    }

    // ------------------------------------------------------------------
    // Allocation
    // ------------------------------------------------------------------

    /// Allocate `body_words` words plus a header. Eden first; old space when the
    /// object is large or eden is full. The caller writes every body word.
    #[inline(always)]
    pub(crate) fn alloc_raw(
        &mut self,
        header0: u64,
        size_field: u64,
        body_words: usize,
    ) -> Result<usize, OutOfMemory> {
        let total = HEADER_WORDS + body_words;
        let index = self.top;
        let new_top = index + total;
        let index = if new_top > self.eden_threshold || total > self.large_words {
            if self.observer {
                return self.alloc_observer(header0, size_field, total);
            }
            self.alloc_slow(total)?
        } else {
            self.top = new_top;
            index
        };
        self.mem[index] = header0;
        self.mem[index + 1] = size_field;
        self.stats.allocated_bytes += (total * 8) as u64;
        self.stats.allocated_objects += 1;
        if self.stats.allocated_bytes >= self.sample_at {
            self.sample_allocation(index, header0, total);
        }
        Ok(index)
    }

    /// Allocate the next object directly in old space (pretenuring: its
    /// allocation site is known to make long-lived objects). The fast path is
    /// untouched: the next allocation takes the slow path because the
    /// large-object bound is 0 until it is made. The caller allocates right
    /// away, with no collection in between, and the object must be initialised
    /// like any old object (the write barrier applies to later stores).
    pub fn tenure_next_allocation(&mut self) {
        if !self.tenure_next && !self.observer {
            self.tenure_next = true;
            self.saved_large_words = self.large_words;
            self.large_words = 0;
        }
    }

    /// Observer allocations on or off: while on, every allocation is a
    /// profiler's own (Illimani's faithful mode, at the meta level): it goes to
    /// old space, so it never fills eden nor brings a scavenge forward; it is
    /// not on the allocation clock (`HeapStats::allocated_bytes` and
    /// `allocated_objects` count the program's objects) but on
    /// `observer_bytes`/`observer_objects`; and the GC ratio leaves the
    /// observer's words since `reset_observer_words` out of the old space it
    /// measures, taking them as the observer's live data (its garbage, once a
    /// full GC frees it, makes the program's share look smaller by as much).
    /// The fast path is unchanged: the large-object bound is 0 while on, so
    /// every allocation takes the slow path, which tests the flag.
    pub fn set_observer_allocations(&mut self, on: bool) {
        if on == self.observer {
            return;
        }
        if on {
            if !self.tenure_next {
                self.saved_large_words = self.large_words;
            }
            self.tenure_next = false;
            self.large_words = 0;
        } else {
            self.large_words = self.saved_large_words;
        }
        self.observer = on;
    }

    /// Forget the observer's words so far (`set_observer_allocations`): a new
    /// observer starts, or the last one's data is the program's from now on.
    pub fn reset_observer_words(&mut self) {
        self.observer_words = 0;
    }

    /// Are allocations the observer's now?
    pub fn observer_allocations(&self) -> bool {
        self.observer
    }

    /// An observer's allocation (`set_observer_allocations`): in old space,
    /// never requesting a collection (old space grows if it must), off the
    /// allocation clock and the sampler.
    #[cold]
    #[inline(never)]
    fn alloc_observer(
        &mut self,
        header0: u64,
        size_field: u64,
        total: usize,
    ) -> Result<usize, OutOfMemory> {
        let limit = self.limit_words();
        if total > limit {
            return Err(OutOfMemory {
                requested: total.saturating_mul(8),
            });
        }
        let index = match self.alloc_in_holes(total) {
            Some(index) => index,
            None => {
                let index = self.old_top;
                let end = index + total;
                if end > self.mem.len() {
                    if end > limit {
                        self.request_full_gc();
                        return Err(OutOfMemory {
                            requested: total.saturating_mul(8),
                        });
                    }
                    self.grow_to(end, limit);
                }
                self.old_top = end;
                index
            }
        };
        let bytes = (total * 8) as u64;
        self.stats.old_used_bytes += bytes;
        self.stats.old_free_bytes = self.stats.old_free_bytes.saturating_sub(bytes);
        self.stats.observer_bytes += bytes;
        self.stats.observer_objects += 1;
        self.observer_words += total;
        self.mem[index] = header0;
        self.mem[index + 1] = size_field;
        Ok(index)
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn alloc_slow(&mut self, total: usize) -> Result<usize, OutOfMemory> {
        // A request larger than the whole heap may hold fails at once (and its byte
        // count must not overflow).
        if total > self.limit_words() {
            return Err(OutOfMemory {
                requested: total.saturating_mul(8),
            });
        }
        if self.config.stress {
            self.gc_requested = true;
        }
        if self.tenure_next {
            self.tenure_next = false;
            self.large_words = self.saved_large_words;
            return self.alloc_old(total);
        }
        if total <= self.large_words {
            let new_top = self.top + total;
            if new_top > self.populated_end {
                self.populate_eden(new_top);
            }
            if new_top > self.scavenge_threshold {
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
    ///
    /// Spur's rule for an allocation that finds the free old space exhausted
    /// (its primitive fails, and the image's `handleFailingBasicNew:` runs a
    /// full GC, then grows memory by at least the request if the GC freed too
    /// little: `growMemoryByAtLeast:`, i.e. `growOldSpaceByAtLeast:` of the
    /// whole request): the heap grows at once by a segment for the whole
    /// request, rounded up to a power of two and at least the growth headroom
    /// (allocation never collects), and the full GC runs at the next safepoint.
    pub(crate) fn alloc_old(&mut self, total: usize) -> Result<usize, OutOfMemory> {
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
                    requested: total.saturating_mul(8),
                });
            }
            if end > self.mem.capacity() {
                self.request_full_gc_for(FullReason::Exhausted);
            }
            self.grow_with(end, limit, total);
        }
        self.old_top = end;
        self.note_old_alloc(total);
        Ok(index)
    }

    /// Account for `total` words allocated by the program in old space. (The
    /// GC ratio is not checked here: as in Spur, it is checked after each
    /// scavenge.)
    pub(crate) fn note_old_alloc(&mut self, total: usize) {
        self.stats.old_allocated_bytes += (total * 8) as u64;
        self.stats.old_used_bytes += (total * 8) as u64;
        self.stats.old_free_bytes = self.stats.old_free_bytes.saturating_sub((total * 8) as u64);
    }

    /// Make words up to `end` usable. Past the capacity (memory requested
    /// from the system, untouched until used), old space grows by one segment
    /// ([`Heap::segment_words`]), not past `limit` words unless `end` itself
    /// is; the words are initialised a little ahead of use, so that a large
    /// headroom costs nothing until it is used.
    pub(crate) fn grow_to(&mut self, end: usize, limit: usize) {
        let need = end.saturating_sub(self.mem.capacity());
        self.grow_with(end, limit, need);
    }

    /// [`Heap::grow_to`] with a segment for `need` words: the shortfall when
    /// the collector tenures (Spur's `growOldSpaceByAtLeast: 0`, one
    /// headroom), the whole request when the program allocates (Spur's
    /// `growMemoryByAtLeast:` of the bytes requested).
    pub(crate) fn grow_with(&mut self, end: usize, limit: usize, need: usize) {
        let cap = self.mem.capacity();
        if end > cap {
            let want = (cap + self.segment_words(need)).min(limit).max(end);
            self.mem.reserve_exact(want - self.mem.len());
            self.stats.growths += 1;
            self.stats.heap_bytes = (self.mem.capacity() * 8) as u64;
        }
        let len = (end + GROW_CHUNK_WORDS).min(self.mem.capacity()).max(end);
        self.mem.resize(len, 0);
    }

    /// The size of a new segment of old space for a need of `need` words:
    /// Spur's `growOldSpaceByAtLeast:`, the need rounded up to a power of two,
    /// and at least the growth headroom.
    pub(crate) fn segment_words(&self, need: usize) -> usize {
        need.next_power_of_two()
            .max(self.config.growth_headroom / 8)
    }

    /// After a scavenge that did not call for a full GC: make sure the free
    /// room at the end of old space is at least the growth headroom, growing
    /// by a segment if not (Spur's `sufficientSpaceAfterGC:`), so that the
    /// program's next allocations in old space find room.
    pub(crate) fn ensure_headroom(&mut self) {
        let headroom = self.config.growth_headroom / 8;
        let room = self.mem.capacity().saturating_sub(self.old_top);
        if room < headroom {
            let limit = self.limit_words();
            let want = (self.mem.capacity() + self.segment_words(0)).min(limit);
            if want > self.mem.capacity() {
                self.mem.reserve_exact(want - self.mem.len());
                self.stats.growths += 1;
            }
        }
    }

    pub(crate) fn header(class: u32, format: Format) -> u64 {
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
    pub(crate) fn alloc_slots(
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
}
