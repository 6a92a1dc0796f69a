//! The heap verifier: checks the layout, every header, every pointer, the
//! remembered set (every old object referring to a young one must be in it),
//! the mourn queue and the tracked-object table.

use crate::heap::Heap;
use crate::layout::*;
use crate::value::Value;

impl Heap {
    /// Check every object's header and every pointer slot, the remembered set
    /// and the heap's own tables. `class_count` bounds the valid class indices
    /// (1..class_count). Answers a description of the first problem found.
    pub fn verify(&self, class_count: u32) -> Result<(), String> {
        self.verify_layout()?;
        // Object starts, for checking that pointers point at objects: one bitmap
        // per space holding objects.
        let regions = self.regions();
        let mut starts: Vec<Vec<u64>> = regions
            .iter()
            .map(|&(start, end)| vec![0u64; (end - start).div_ceil(64)])
            .collect();
        let is_start = |starts: &[Vec<u64>], i: usize| -> bool {
            regions.iter().zip(starts).any(|(&(start, end), bits)| {
                i >= start && i < end && bits[(i - start) / 64] & (1 << ((i - start) % 64)) != 0
            })
        };
        let mut remembered_bits = 0usize;
        let mut tracked_bits = 0usize;
        let young_tracked: rustc_hash::FxHashSet<usize> =
            self.tracked.young.iter().map(|&(i, _)| i).collect();
        for (r, &(start, end)) in regions.iter().enumerate() {
            let old = r == 0 || r == 3;
            let mut i = start;
            while i < end {
                let h = self.mem[i];
                if h & FORWARDED != 0 {
                    return Err(format!(
                        "object at {i} is a forwarding husk outside a collection"
                    ));
                }
                let fmt = (h >> FORMAT_SHIFT) & FORMAT_MASK;
                if fmt == FREE_FORMAT {
                    if !old {
                        return Err(format!("filler at {i} in new space"));
                    }
                    let n = (h >> 32) as usize;
                    if n == 0 || i + n > end {
                        return Err(format!("filler at {i} has a bad size {n}"));
                    }
                    i += n;
                    continue;
                }
                if i + HEADER_WORDS > end {
                    return Err(format!("object at {i} has its header past its space"));
                }
                if fmt > Format::Ephemeron as u64 {
                    return Err(format!("object at {i} has invalid format {fmt}"));
                }
                let class = (h & CLASS_MASK) as u32;
                if class == 0 || class >= class_count {
                    return Err(format!("object at {i} has invalid class index {class}"));
                }
                let h1 = self.mem[i + 1];
                if h1 & !SIZE_MASK != 0 {
                    return Err(format!(
                        "object at {i} has mark/forwarding bits set outside a collection"
                    ));
                }
                let n = HEADER_WORDS + self.body_words(i);
                if i + n > end {
                    return Err(format!("object at {i} extends past the end of its space"));
                }
                if h & REMEMBERED_BIT != 0 {
                    if !old {
                        return Err(format!("young object at {i} has the remembered bit"));
                    }
                    remembered_bits += 1;
                }
                if h & TRACKED_BIT != 0 {
                    tracked_bits += 1;
                    if !self.tracked.old.contains_key(&i) && !young_tracked.contains(&i) {
                        return Err(format!("tracked object at {i} is not in the tracked table"));
                    }
                }
                starts[r][(i - start) / 64] |= 1 << ((i - start) % 64);
                i += n;
            }
        }
        for (r, &(start, end)) in regions.iter().enumerate() {
            let old = r == 0 || r == 3;
            let mut i = start;
            while i < end {
                let n = self.total_words(i);
                let h = self.mem[i];
                let fmt = (h >> FORMAT_SHIFT) & FORMAT_MASK;
                if fmt != FREE_FORMAT && Format::from_bits(fmt).has_slots() {
                    for k in 0..n - HEADER_WORDS {
                        let v = Value(self.mem[i + HEADER_WORDS + k]);
                        if v.is_ptr() {
                            if !is_start(&starts, v.index()) {
                                return Err(format!(
                                    "slot {k} of object at {i} holds a dangling pointer {v:?}"
                                ));
                            }
                            if old && self.is_young_index(v.index()) && h & REMEMBERED_BIT == 0 {
                                return Err(format!(
                                    "old object at {i} refers to young {v:?} (slot {k}) but is not remembered"
                                ));
                            }
                        } else if !v.is_int()
                            && !v.is_float()
                            && ![Value::NIL, Value::TRUE, Value::FALSE].contains(&v)
                        {
                            return Err(format!(
                                "slot {k} of object at {i} holds an invalid value {v:?}"
                            ));
                        }
                    }
                }
                i += n;
            }
        }
        // Remembered set: old objects with the bit, each once.
        let logged = &self.store_buf[..self.store_len];
        if !self.store_overflow && self.remembered.len() + logged.len() != remembered_bits {
            return Err(format!(
                "remembered set has {} entries but {remembered_bits} objects have the remembered bit",
                self.remembered.len() + logged.len()
            ));
        }
        for &o in self.remembered.iter().chain(logged) {
            if !is_start(&starts, o) || self.is_young_index(o) {
                return Err(format!("remembered set entry {o} is not an old object"));
            }
            if self.mem[o] & REMEMBERED_BIT == 0 {
                return Err(format!("remembered set entry {o} lacks the remembered bit"));
            }
        }
        if self.tracked.len() != tracked_bits {
            return Err(format!(
                "tracked table has {} entries but {tracked_bits} objects are tracked",
                self.tracked.len()
            ));
        }
        for (k, v) in self.mourn.iter().enumerate() {
            if !v.is_ptr() || !is_start(&starts, v.index()) {
                return Err(format!("mourn queue entry {k} is not an object: {v:?}"));
            }
        }
        Ok(())
    }

    fn verify_layout(&self) -> Result<(), String> {
        let ys = self.young_start;
        let ye = self.young_end();
        let sw = self.survivor_words;
        let ok = FIRST_INDEX <= ys
            && ys <= self.top
            && self.top <= self.eden_end
            && self.eden_end + 2 * sw == ye
            && (self.past_start == self.eden_end || self.past_start == self.eden_end + sw)
            && self.future_start + sw <= ye
            && self.future_start >= self.eden_end
            && self.past_start != self.future_start
            && self.past_start <= self.past_top
            && self.past_top <= self.past_start + sw
            && ye <= self.old_top
            && self.old_top <= self.mem.len();
        if ok {
            Ok(())
        } else {
            Err(format!(
                "bad layout: young {ys}..{ye} eden end {} top {} past {}..{} future {} survivor words {sw} old top {} len {}",
                self.eden_end,
                self.top,
                self.past_start,
                self.past_top,
                self.future_start,
                self.old_top,
                self.mem.len()
            ))
        }
    }
}
