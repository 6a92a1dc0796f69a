//! The two collectors. See the crate's README for the design; the invariants
//! each step relies on are stated where they are used.
//!
//! * Scavenge: Cheney copying of the live objects of from-space (eden and the
//!   past survivor space) into the future survivor space, or into old space when
//!   they are old enough or the survivor space is full. Roots: the VM's, the
//!   remembered set and the mourn queue.
//! * Full GC: the same copying of new space, plus marking of old space (old
//!   objects are traced instead of being assumed alive), then a sliding
//!   compaction of old space around the objects the VM's roots refer to (they are
//!   pinned: `root` must answer the final address at once) and around new space.
//!   When the eden size changed, the full GC tenures every survivor and lays new
//!   space out again after the compacted objects.

use crate::config::RESERVE_BYTES;
use crate::heap::{FullReason, Heap};
use crate::layout::{
    AGE_MASK, AGE_SHIFT, CLASS_MASK, FIRST_INDEX, FORMAT_MASK, FORMAT_SHIFT, FORWARDED,
    FREE_FORMAT, FWD_SHIFT, Format, HASH_MASK, HASH_SHIFT, HEADER_WORDS, MARK_BIT, PIN_BIT,
    REMEMBERED_BIT, SIZE_MASK, body_words_of, filler,
};
use crate::lifetime::{Death, Track};
use crate::stats::CollectionKind;
use crate::value::Value;
use std::time::Instant;

/// A collection in progress. Obtained from [`Heap::start_collection`]; report
/// every root with [`Collection::root`], then call [`Collection::finish`].
pub struct Collection<'h> {
    heap: &'h mut Heap,
    kind: CollectionKind,
    /// Why a full GC runs (`None` for a scavenge).
    reason: Option<FullReason>,
    /// A full GC (old objects are marked, not assumed alive).
    full: bool,
    /// Tenure every survivor (a full GC that re-lays out new space).
    tenure_all: bool,
    start: Instant,
    /// The future survivor space: `[future_start, to_end)`, filled up to `to_top`,
    /// scanned up to `to_scan`.
    future_start: usize,
    to_top: usize,
    to_end: usize,
    to_scan: usize,
    /// Objects tenured by this collection and not scanned yet.
    tenured: Vec<usize>,
    young_start: usize,
    young_words: usize,
    survivor_words: usize,
    tenure_age: u64,
    /// Marked old objects not scanned yet (full GC).
    stack: Vec<usize>,
    /// Live weak objects, processed once the closure is complete.
    weak: Vec<usize>,
    /// Ephemerons whose key is not known to be alive yet.
    eph: Vec<usize>,
    tenured_objects: u64,
    tenured_words: usize,
    copied_words: usize,
}

impl<'h> Collection<'h> {
    pub(crate) fn new(heap: &'h mut Heap, reason: Option<FullReason>) -> Collection<'h> {
        let kind = match reason {
            Some(_) => CollectionKind::Full,
            None => CollectionKind::Scavenge,
        };
        let full = kind == CollectionKind::Full;
        let tenure_all = full
            && (heap.tenure_all_requested
                || heap.desired_eden_words() != heap.eden_end - heap.young_start);
        let future_start = heap.future_start;
        Collection {
            kind,
            reason,
            full,
            tenure_all,
            start: Instant::now(),
            future_start,
            to_top: future_start,
            to_end: future_start + heap.survivor_words,
            to_scan: future_start,
            tenured: Vec::new(),
            young_start: heap.young_start,
            young_words: heap.young_words,
            survivor_words: heap.survivor_words,
            tenure_age: heap.config.tenuring_threshold as u64,
            stack: Vec::new(),
            weak: Vec::new(),
            eph: Vec::new(),
            tenured_objects: 0,
            tenured_words: 0,
            copied_words: 0,
            heap,
        }
    }

    /// Is this collection a scavenge or a full GC?
    pub fn kind(&self) -> CollectionKind {
        self.kind
    }

    /// Report a root: the object it refers to (if it is a heap pointer) and
    /// everything reachable from it survive; the root is updated if the object moves.
    #[inline]
    pub fn root(&mut self, v: &mut Value) {
        if v.0 & 7 != 0 || v.0 == 0 {
            return;
        }
        let i = v.index();
        if self.is_young(i) {
            if self.in_from(i) {
                let h0 = self.heap.mem[i];
                *v = if h0 & FORWARDED != 0 {
                    Value::from_index((h0 & !FORWARDED) as usize)
                } else {
                    self.copy(i, h0, true)
                };
            }
        } else if self.full {
            // The root cannot be updated later, so its object stays where it is.
            self.mark(i);
            self.heap.mem[i + 1] |= PIN_BIT;
        }
    }

    /// Collect: trace everything reachable from the roots reported so far (and
    /// from the heap's own: the mourn queue; in a scavenge also the remembered
    /// set), process ephemerons and weak slots, reclaim the rest.
    pub fn finish(mut self) {
        // The heap's own roots: ephemerons waiting to be mourned (not pinned: the
        // queue is updated after compaction).
        for k in 0..self.heap.mourn.len() {
            let v = self.heap.mourn[k];
            self.heap.mourn[k] = self.trace_value(v);
        }
        // The remembered set: roots of a scavenge; rebuilt by a full GC.
        self.heap.flush_store_buffer();
        let remembered = std::mem::take(&mut self.heap.remembered);
        for &o in &remembered {
            self.heap.mem[o] &= !REMEMBERED_BIT;
        }
        if !self.full {
            for &o in &remembered {
                if self.scan_object(o) == Some(true) {
                    self.heap.remember(o);
                }
            }
        }
        self.closure();
        self.process_weak();
        let gc = self.heap.stats.collections + 1;
        if self.full {
            self.compact(gc);
        } else {
            self.follow_tracked_scavenge(gc);
            self.flip();
            // Spur's check after a scavenge: tenuring went past --max-heap, or
            // old space grew by the GC ratio since the last full GC: a full GC
            // at once (at the safepoint right after this one). Otherwise the
            // free room is topped up to the growth headroom.
            let heap = &mut *self.heap;
            if heap.old_top * 8 > heap.config.max_heap {
                heap.request_full_gc();
            } else if heap.program_old_words() > heap.full_gc_threshold {
                heap.request_full_gc_for(FullReason::Ratio);
            } else {
                heap.ensure_headroom();
            }
        }
        self.heap.gc_requested = self.heap.full_requested;
        self.account();
    }

    fn account(&mut self) {
        let pause = self.start.elapsed();
        let heap = &mut *self.heap;
        let s = &mut heap.stats;
        s.collections += 1;
        s.gc_time += pause;
        s.max_pause = s.max_pause.max(pause);
        s.tenured_objects += self.tenured_objects;
        s.tenured_bytes += (self.tenured_words * 8) as u64;
        s.copied_bytes += (self.copied_words * 8) as u64;
        if self.full {
            s.full_gcs += 1;
            match self.reason {
                Some(FullReason::Ratio) => s.ratio_full_gcs += 1,
                Some(FullReason::Exhausted) => s.exhaustion_full_gcs += 1,
                _ => {}
            }
            s.full_gc_time += pause;
            s.max_full_gc_pause = s.max_full_gc_pause.max(pause);
        } else {
            s.scavenges += 1;
            s.scavenge_time += pause;
            s.max_scavenge_pause = s.max_scavenge_pause.max(pause);
        }
        heap.last_kind = Some(self.kind);
        heap.refresh_sizes();
        heap.stats.live_bytes_after_last_gc =
            heap.stats.old_used_bytes + heap.stats.survivor_used_bytes;
        if heap.trace {
            let reason = match self.reason {
                Some(FullReason::Ratio) => " (ratio)",
                Some(FullReason::Exhausted) => " (exhausted)",
                Some(FullReason::Requested) => " (requested)",
                None => "",
            };
            let line = format!(
                "{:?}{reason} {:?} young {}..{} old_top {} len {} cap {} used {} holes {} threshold {} tenured {} surv {}",
                self.kind,
                pause,
                heap.young_start,
                heap.young_end(),
                heap.old_top,
                heap.mem.len(),
                heap.mem.capacity(),
                heap.old_used_words(),
                heap.hole_words,
                heap.full_gc_threshold,
                self.tenured_words,
                heap.past_top - heap.past_start
            );
            heap.trace_log.push(line);
        }
    }

    // ------------------------------------------------------------------
    // Copying new space
    // ------------------------------------------------------------------

    /// Is word index `i` in from-space (eden or the past survivor space)?
    #[inline(always)]
    fn in_from(&self, i: usize) -> bool {
        i.wrapping_sub(self.young_start) < self.young_words
            && i.wrapping_sub(self.future_start) >= self.survivor_words
    }

    #[inline(always)]
    fn is_young(&self, i: usize) -> bool {
        i.wrapping_sub(self.young_start) < self.young_words
    }

    /// The new value of a reference held by a live object (or the heap): a
    /// from-space object is copied (once), an old object is marked in a full GC.
    #[inline(always)]
    fn trace_value(&mut self, v: Value) -> Value {
        if v.0 & 7 != 0 || v.0 == 0 {
            return v;
        }
        let i = v.index();
        if self.is_young(i) {
            if !self.in_from(i) {
                return v;
            }
            let h0 = self.heap.mem[i];
            if h0 & FORWARDED != 0 {
                return Value::from_index((h0 & !FORWARDED) as usize);
            }
            self.copy(i, h0, false)
        } else {
            if self.full {
                self.mark(i);
            }
            v
        }
    }

    /// Copy the from-space object at `i` to the future survivor space, or to old
    /// space when it is old enough or the survivor space is full; leave a
    /// forwarding husk. A root's object goes to the survivor space whatever its
    /// age, because in a full GC a tenured root target must be pinned.
    #[inline(never)]
    fn copy(&mut self, i: usize, h0: u64, root: bool) -> Value {
        let total = HEADER_WORDS + body_words_of(h0, self.heap.mem[i + 1]);
        let age = (((h0 >> AGE_SHIFT) & AGE_MASK) + 1).min(AGE_MASK);
        let to_survivor = !self.tenure_all
            && self.to_top + total <= self.to_end
            && (age < self.tenure_age || (root && self.full));
        let dest = if to_survivor {
            let d = self.to_top;
            self.to_top += total;
            d
        } else {
            self.tenure(total)
        };
        let mem = &mut self.heap.mem;
        copy_words(mem, i, dest, total);
        mem[dest] = (h0 & !(AGE_MASK << AGE_SHIFT)) | (age << AGE_SHIFT);
        mem[i] = FORWARDED | dest as u64;
        if !to_survivor && self.full {
            // Tenured during a full GC: alive (marked), scanned by `closure`.
            mem[dest + 1] |= MARK_BIT;
            if root {
                mem[dest + 1] |= PIN_BIT;
            }
        }
        self.copied_words += total;
        Value::from_index(dest)
    }

    /// Room for `total` words in old space, for a tenured object. Cannot fail:
    /// past `--max-heap` the heap grows anyway and a full GC is requested.
    fn tenure(&mut self, total: usize) -> usize {
        let heap = &mut *self.heap;
        let dest = match heap.alloc_in_holes(total) {
            Some(d) => d,
            None => {
                let dest = heap.old_top;
                let end = dest + total;
                if end > heap.mem.len() {
                    let limit = heap.limit_words() + RESERVE_BYTES / 8;
                    heap.grow_to(end, limit);
                }
                heap.old_top = end;
                dest
            }
        };
        self.tenured.push(dest);
        self.tenured_objects += 1;
        self.tenured_words += total;
        dest
    }

    /// Trace every slot of `o`; answer whether one of them refers to new space
    /// afterwards.
    fn scan_strong(&mut self, o: usize) -> bool {
        let n = (self.heap.mem[o + 1] & SIZE_MASK) as usize;
        let mut young = false;
        for a in o + HEADER_WORDS..o + HEADER_WORDS + n {
            let v = Value(self.heap.mem[a]);
            if v.0 & 7 == 0 && v.0 != 0 {
                let i = v.index();
                if self.is_young(i) {
                    let nv = self.trace_value(v);
                    self.heap.mem[a] = nv.0;
                    young |= self.is_young(nv.index());
                } else if self.full {
                    self.mark(i);
                }
            }
        }
        young
    }

    /// Scan a live object. Answers whether it refers to new space, or `None` when
    /// that is decided later (weak objects, and ephemerons whose key is not known
    /// to be alive yet).
    fn scan_object(&mut self, o: usize) -> Option<bool> {
        let h0 = self.heap.mem[o];
        match Format::from_bits((h0 >> FORMAT_SHIFT) & FORMAT_MASK) {
            Format::Pointers => Some(self.scan_strong(o)),
            Format::Weak => {
                self.weak.push(o);
                None
            }
            Format::Ephemeron => {
                if self.key_alive(o) {
                    Some(self.scan_strong(o))
                } else {
                    self.eph.push(o);
                    None
                }
            }
            Format::Bytes | Format::Words => Some(false),
        }
    }

    /// Is the key of ephemeron `e` known to be alive? A young key once it has
    /// been copied; an old key in a scavenge always, in a full GC once marked.
    fn key_alive(&self, e: usize) -> bool {
        if self.heap.mem[e + 1] & SIZE_MASK == 0 {
            return true;
        }
        let key = Value(self.heap.mem[e + HEADER_WORDS]);
        if key.0 & 7 != 0 || key.0 == 0 {
            return true;
        }
        let i = key.index();
        if self.is_young(i) {
            !self.in_from(i) || self.heap.mem[i] & FORWARDED != 0
        } else {
            !self.full || self.marked(i)
        }
    }

    /// Trace an ephemeron strongly (its key is alive, or it was fired).
    fn resolve(&mut self, e: usize) {
        if self.scan_strong(e) && !self.full && !self.is_young(e) {
            self.heap.remember(e);
        }
    }

    /// Queue ephemeron `e` for mourning and make it an ordinary object, so that
    /// it is queued once and keeps its key and value alive from now on.
    fn fire(&mut self, e: usize) {
        let mem = &mut self.heap.mem;
        mem[e] =
            (mem[e] & !(FORMAT_MASK << FORMAT_SHIFT)) | ((Format::Pointers as u64) << FORMAT_SHIFT);
        self.heap.mourn.push(Value::from_index(e));
        let s = &self.heap.stats;
        let fired = [s.scavenges, s.full_gcs];
        self.heap.mourn_fired.push(fired);
        self.heap.stats.ephemerons_mourned += 1;
    }

    /// Scan until nothing is left: to-space, tenured objects, marked old objects.
    fn drain(&mut self) {
        loop {
            let mut progress = false;
            while self.to_scan < self.to_top {
                let o = self.to_scan;
                self.to_scan += self.heap.total_words(o);
                self.scan_object(o);
                progress = true;
            }
            while let Some(o) = self.tenured.pop() {
                if self.scan_object(o) == Some(true) && !self.full {
                    self.heap.remember(o);
                }
                progress = true;
            }
            while let Some(o) = self.stack.pop() {
                self.scan_object(o);
                progress = true;
            }
            if !progress {
                break;
            }
        }
    }

    /// The transitive closure, with ephemerons processed to a fixed point: an
    /// ephemeron is traced once its key is reached otherwise; when no waiting key
    /// is reached any more, all waiting ephemerons are fired (queued for
    /// mourning, then traced), and the process repeats for ephemerons found
    /// through them.
    fn closure(&mut self) {
        loop {
            self.drain();
            let mut progress = false;
            for e in std::mem::take(&mut self.eph) {
                if self.key_alive(e) {
                    self.resolve(e);
                    progress = true;
                } else {
                    self.eph.push(e);
                }
            }
            if progress {
                continue;
            }
            if self.eph.is_empty() {
                break;
            }
            for e in std::mem::take(&mut self.eph) {
                self.fire(e);
                self.resolve(e);
            }
        }
    }

    /// Weak slots: follow survivors, set the dead to nil.
    fn process_weak(&mut self) {
        for w in std::mem::take(&mut self.weak) {
            let n = (self.heap.mem[w + 1] & SIZE_MASK) as usize;
            let mut young = false;
            for a in w + HEADER_WORDS..w + HEADER_WORDS + n {
                let v = Value(self.heap.mem[a]);
                if v.0 & 7 != 0 || v.0 == 0 {
                    continue;
                }
                let i = v.index();
                let alive = if self.is_young(i) {
                    if self.in_from(i) {
                        let h = self.heap.mem[i];
                        if h & FORWARDED != 0 {
                            let ni = (h & !FORWARDED) as usize;
                            self.heap.mem[a] = Value::from_index(ni).0;
                            young |= self.is_young(ni);
                            true
                        } else {
                            false
                        }
                    } else {
                        young = true;
                        true
                    }
                } else {
                    !self.full || self.marked(i)
                };
                if !alive {
                    self.heap.mem[a] = Value::NIL.0;
                    self.heap.stats.weak_slots_cleared += 1;
                }
            }
            if young && !self.full && !self.is_young(w) {
                self.heap.remember(w);
            }
        }
    }

    fn death(&self, i: usize, t: Track, gc: u64) -> Death {
        let h0 = self.heap.mem[i];
        Death {
            class: (h0 & CLASS_MASK) as u32,
            bytes: (self.heap.total_words(i) * 8) as u64,
            hash: ((h0 >> HASH_SHIFT) & HASH_MASK) as u32,
            scavenges_survived: t.scavenges,
            full_gcs_survived: t.full_gcs,
            allocated_at: t.allocated_at,
            died_at: self.heap.stats.allocated_bytes,
            died_at_gc: gc,
            died_in_full_gc: self.full,
            tag: t.tag,
        }
    }

    /// Where a from-space object went, if it survived.
    fn forwarded(&self, i: usize) -> Option<usize> {
        let h = self.heap.mem[i];
        (h & FORWARDED != 0).then_some((h & !FORWARDED) as usize)
    }

    /// A scavenge: young tracked objects that survived move (to a survivor
    /// space or old space), the others died; old ones are not touched (their
    /// scavenge count follows the table's counter).
    fn follow_tracked_scavenge(&mut self, gc: u64) {
        self.heap.tracked.scavenges = self.heap.tracked.scavenges.wrapping_add(1);
        if self.heap.tracked.young.is_empty() {
            return;
        }
        let young = std::mem::take(&mut self.heap.tracked.young);
        let mut kept = Vec::with_capacity(young.len() / 2);
        for (i, mut t) in young {
            let now = if self.in_from(i) {
                self.forwarded(i)
            } else {
                Some(i)
            };
            match now {
                Some(ni) => {
                    t.scavenges += 1;
                    if self.is_young(ni) {
                        kept.push((ni, t));
                    } else {
                        self.heap.tracked.insert(ni, false, t);
                    }
                }
                None => {
                    let d = self.death(i, t, gc);
                    self.heap.deaths.push(d);
                }
            }
        }
        self.heap.tracked.young = kept;
    }

    /// The future survivor space becomes the past one; eden is empty.
    fn flip(&mut self) {
        let heap = &mut *self.heap;
        heap.future_start = heap.past_start;
        heap.past_start = self.future_start;
        heap.past_top = self.to_top;
        heap.top = heap.young_start;
    }

    // ------------------------------------------------------------------
    // Full GC: marking and compaction of old space
    // ------------------------------------------------------------------

    #[inline(always)]
    fn marked(&self, i: usize) -> bool {
        self.heap.mem[i + 1] & MARK_BIT != 0
    }

    #[inline]
    fn mark(&mut self, i: usize) {
        let w = &mut self.heap.mem[i + 1];
        if *w & MARK_BIT == 0 {
            *w |= MARK_BIT;
            self.stack.push(i);
        }
    }

    #[inline(always)]
    fn fwd(&self, i: usize) -> usize {
        (self.heap.mem[i + 1] >> FWD_SHIFT) as usize
    }

    fn set_fwd(&mut self, i: usize, to: usize) {
        let w = &mut self.heap.mem[i + 1];
        *w = (*w & (SIZE_MASK | MARK_BIT | PIN_BIT)) | ((to as u64) << FWD_SHIFT);
    }

    /// Is the object or filler at `o` a live (marked) object?
    #[inline(always)]
    fn live_at(&self, o: usize) -> bool {
        (self.heap.mem[o] >> FORMAT_SHIFT) & FORMAT_MASK != FREE_FORMAT && self.marked(o)
    }

    /// Compact old space (Lisp 2 style: compute new addresses, update
    /// references, move), around pinned objects and new space.
    fn compact(&mut self, gc: u64) {
        let old_regions = [
            (FIRST_INDEX, self.young_start),
            (self.young_start + self.young_words, self.heap.old_top),
        ];
        // 1. New addresses. Live objects slide down in address order, skipping over
        // obstacles: pinned objects and (unless it is being re-laid out) new space.
        // An object may land below a pinned object that lies below it. For every
        // object `o`, `dst <= o`: it always fits below the next obstacle at or
        // above `dst`, because it lies itself below that obstacle if the obstacle
        // was not walked yet. So only the obstacles walked past matter (a queue in
        // address order), and moving in address order never overwrites what is
        // not moved yet.
        let mut holes: Vec<(usize, usize)> = Vec::new();
        let mut obstacles: std::collections::VecDeque<(usize, usize)> = Default::default();
        let mut dst = FIRST_INDEX;
        for (r, &(start, end)) in old_regions.iter().enumerate() {
            if r == 1 && !self.tenure_all {
                obstacles.push_back((self.young_start, self.young_start + self.young_words));
            }
            let mut o = start;
            while o < end {
                let n = self.heap.total_words(o);
                if self.live_at(o) {
                    if self.heap.mem[o + 1] & PIN_BIT != 0 {
                        self.set_fwd(o, o);
                        obstacles.push_back((o, o + n));
                    } else {
                        while let Some(&(ob_start, ob_end)) = obstacles.front() {
                            if dst + n <= ob_start {
                                break;
                            }
                            if ob_start > dst {
                                holes.push((dst, ob_start - dst));
                            }
                            dst = ob_end;
                            obstacles.pop_front();
                        }
                        self.set_fwd(o, dst);
                        dst += n;
                    }
                }
                o += n;
            }
        }
        for &(ob_start, ob_end) in &obstacles {
            if ob_start > dst {
                holes.push((dst, ob_start - dst));
            }
            dst = ob_end;
        }
        // 2. Tracked objects: follow survivors, record the dead (headers are intact).
        if !self.heap.tracked.is_empty() {
            let tracked = self.heap.tracked.drain_all();
            for (i, mut t) in tracked {
                let now = if self.is_young(i) {
                    if self.in_from(i) {
                        self.forwarded(i)
                    } else {
                        Some(i)
                    }
                } else {
                    Some(i)
                };
                let now = match now {
                    Some(ni) if self.is_young(ni) => Some(ni),
                    Some(ni) if self.marked(ni) => Some(self.fwd(ni)),
                    _ => None,
                };
                match now {
                    Some(ni) => {
                        t.full_gcs += 1;
                        let young = self.is_young(ni);
                        self.heap.tracked.insert(ni, young, t);
                    }
                    None => {
                        let d = self.death(i, t, gc);
                        self.heap.deaths.push(d);
                    }
                }
            }
        }
        // 3. Update references to old objects: in live old objects (which are
        // remembered again if they refer to new space), in survivors, in the
        // mourn queue.
        let mut remembered = Vec::new();
        for &(start, end) in &old_regions {
            let mut o = start;
            while o < end {
                let n = self.heap.total_words(o);
                if self.live_at(o) {
                    let fmt = Format::from_bits((self.heap.mem[o] >> FORMAT_SHIFT) & FORMAT_MASK);
                    if fmt.has_slots() && self.update_slots(o, n) {
                        self.heap.mem[o] |= REMEMBERED_BIT;
                        remembered.push(self.fwd(o));
                    }
                }
                o += n;
            }
        }
        let mut o = self.future_start;
        while o < self.to_top {
            let n = self.heap.total_words(o);
            let fmt = Format::from_bits((self.heap.mem[o] >> FORMAT_SHIFT) & FORMAT_MASK);
            if fmt.has_slots() {
                self.update_slots(o, n);
            }
            o += n;
        }
        for k in 0..self.heap.mourn.len() {
            let v = self.heap.mourn[k];
            if v.is_ptr() && !self.is_young(v.index()) {
                self.heap.mourn[k] = Value::from_index(self.fwd(v.index()));
            }
        }
        // 4. Move.
        for &(start, end) in &old_regions {
            let mut o = start;
            while o < end {
                let n = self.heap.total_words(o);
                if self.live_at(o) {
                    let to = self.fwd(o);
                    if to != o {
                        self.heap.mem.copy_within(o..o + n, to);
                        self.copied_words += n;
                    }
                    self.heap.mem[to + 1] &= SIZE_MASK;
                }
                o += n;
            }
        }
        let mut hole_words = 0;
        for &(at, n) in &holes {
            self.heap.mem[at] = filler(n);
            hole_words += n;
        }
        // 5. The new layout.
        let heap = &mut *self.heap;
        heap.hole_words = hole_words;
        heap.holes = holes.iter().map(|&(at, n)| (at, at + n)).collect();
        heap.hole_next = 0;
        heap.hole_cursor = heap.holes.first().map_or(0, |h| h.0);
        heap.remembered = remembered;
        if self.tenure_all {
            // New space (now empty) goes right after the compacted objects, with the
            // eden size in force now.
            heap.place_new_space(dst);
            heap.old_top = heap.young_end();
            if heap.mem.len() < heap.old_top {
                let end = heap.old_top;
                heap.grow_to(end, end);
            }
        } else {
            heap.old_top = dst;
            heap.future_start = heap.past_start;
            heap.past_start = self.future_start;
            heap.past_top = self.to_top;
            heap.top = heap.young_start;
        }
        let used = heap.old_used_words();
        heap.last_full_used = Some(used);
        heap.full_gc_threshold = heap.threshold_after(heap.program_old_words());
        heap.full_requested = false;
        heap.tenure_all_requested = false;
        // --max-heap: signal once when the live data does not fit; leave the
        // emergency reserve once it fits again.
        let limit = heap.config.max_heap / 8;
        if heap.old_top > limit {
            heap.oom_pending = true;
            heap.in_reserve = true;
        } else if heap.in_reserve && heap.old_top + RESERVE_BYTES / 8 <= limit {
            heap.in_reserve = false;
        }
        // Give memory back when more than the shrink threshold is free: keep one
        // growth headroom (at most the shrink threshold).
        let free = heap.mem.capacity() - heap.old_top;
        let keep = heap
            .config
            .growth_headroom
            .min(heap.config.shrink_threshold)
            / 8;
        let limit = heap.limit_words().max(heap.old_top);
        if free > heap.config.shrink_threshold / 8 || heap.mem.capacity() > limit {
            let cap = (heap.old_top + keep).min(limit);
            if cap < heap.mem.capacity() {
                heap.mem.truncate(cap.max(heap.old_top));
                heap.mem.shrink_to(cap);
                heap.stats.shrinks += 1;
            }
        }
    }

    /// Replace the references to old objects in the `n` words of `o` by their
    /// new addresses; answer whether `o` refers to new space.
    fn update_slots(&mut self, o: usize, n: usize) -> bool {
        let mut young = false;
        for a in o + HEADER_WORDS..o + n {
            let v = Value(self.heap.mem[a]);
            if v.0 & 7 == 0 && v.0 != 0 {
                let i = v.index();
                if self.is_young(i) {
                    young = true;
                } else {
                    self.heap.mem[a] = Value::from_index(self.fwd(i)).0;
                }
            }
        }
        young
    }
}

/// Copy `n` words from `from` to `to` (non-overlapping). Most objects are a few
/// words; fixed-size copies compile to a few moves, where `copy_within` is a
/// call to `memmove` (measured: the scavenger spent a third of its time there).
#[inline(always)]
fn copy_words(mem: &mut [u64], from: usize, to: usize, n: usize) {
    #[inline(always)]
    fn fixed<const N: usize>(mem: &mut [u64], from: usize, to: usize) {
        let mut buf = [0u64; N];
        buf.copy_from_slice(&mem[from..from + N]);
        mem[to..to + N].copy_from_slice(&buf);
    }
    match n {
        2 => fixed::<2>(mem, from, to),
        3 => fixed::<3>(mem, from, to),
        4 => fixed::<4>(mem, from, to),
        5 => fixed::<5>(mem, from, to),
        6 => fixed::<6>(mem, from, to),
        7 => fixed::<7>(mem, from, to),
        8 => fixed::<8>(mem, from, to),
        _ => mem.copy_within(from..from + n, to),
    }
}

impl Heap {
    /// Start a collection. Report every root with [`Collection::root`](crate::Collection::root),
    /// then call [`Collection::finish`](crate::Collection::finish). The heap
    /// decides whether it is a scavenge or a full GC (see [`Collection::kind`](crate::Collection::kind)).
    pub fn start_collection(&mut self) -> Collection<'_> {
        let reason = self.full_gc_reason();
        if self.config.stress {
            self.stress_count += 1;
        }
        Collection::new(self, reason)
    }
}
