//! Allocation sampling: which newly allocated objects a lifetime profiler
//! follows, decided on the allocation path itself.
//!
//! The contract:
//! - While sampling is off, the allocation fast path pays one comparison of
//!   the allocation clock ([`HeapStats::allocated_bytes`](crate::HeapStats::allocated_bytes))
//!   with `sample_at`, which is then `u64::MAX`.
//! - While on, the clock crossing `sample_at` calls [`Heap::sample_allocation`]
//!   (cold). The object just allocated is *sampled*: it is tracked at once
//!   (its allocation clock, the collections it survives, its death; see
//!   `lifetime.rs`) under a fresh non-zero tag, and an [`AllocationSample`] is
//!   queued for the VM, which adds what only it knows (the allocation site) at
//!   its next safepoint ([`Heap::take_allocation_samples`]). A sample holds no
//!   heap index, so a collection between the allocation and the VM's look
//!   loses nothing.
//! - Nothing is allocated in the heap for a sample.
//!
//! Policies ([`SamplingPolicy`]): every object; every n-th object
//! (deterministic, for tests); each object independently with a probability
//! `p`, whatever its size (what a profiler's sampling rate means).
//! [`AllocationSample::probability`] says with which probability, so totals
//! can be estimated without bias (each sample stands for `1 / probability`
//! objects).
//!
//! Per object, the fast path still compares bytes only: the gap to the next
//! sampled object, `k` objects, is drawn from the geometric distribution
//! (independent trials of probability `p`), and `sample_at` is set `k`
//! minimum-size objects ahead, a point the `k`-th object cannot pass. When
//! the clock crosses it earlier (the objects were larger), the cold path
//! looks at the object count and moves `sample_at` ahead by the objects still
//! to come: about `log2(k)` cold calls per sample.

use crate::heap::Heap;
use crate::lifetime::Track;
use crate::sample_policy::{AllocSampler, AllocationSample, SamplingPolicy, class_set};

impl Heap {
    /// Start sampling allocations with `policy` (restarting it when on):
    /// objects of the `ignored` classes are never sampled and, when `only` is
    /// not empty, only objects of those classes are. Samples not yet taken are
    /// dropped (their objects stay tracked until they die).
    pub fn start_allocation_sampling(
        &mut self,
        policy: SamplingPolicy,
        only: &[u32],
        ignored: &[u32],
    ) {
        let seed = match policy {
            SamplingPolicy::PerObject { seed, .. } => seed,
            _ => 0,
        };
        let sampler = AllocSampler {
            policy,
            seen: 0,
            next_object: 0,
            // Every seed its own stream (a zero state would stay zero).
            rng: mix_seed(seed),
            next_tag: 1,
            ignored: class_set(ignored),
            only: class_set(only),
        };
        self.samples.clear();
        self.sampler = Some(sampler);
        self.sample_at = self.stats.allocated_bytes;
        self.draw_next_sample(self.stats.allocated_bytes);
    }

    /// Stop sampling allocations; answers the samples not yet taken. Sampled
    /// objects still alive stay tracked: their deaths keep being recorded
    /// until [`Heap::untrack_samples`].
    pub fn stop_allocation_sampling(&mut self) -> Vec<AllocationSample> {
        self.sampler = None;
        self.sample_at = u64::MAX;
        std::mem::take(&mut self.samples)
    }

    /// Stop following the sampled objects still alive (those tracked with a
    /// non-zero tag); answers them, by tag: `(tag, scavenges survived, full
    /// GCs survived)`.
    pub fn untrack_samples(&mut self) -> Vec<(u64, u32, u32)> {
        let mut alive = Vec::new();
        let young = self.tracked.young.len();
        for (k, (i, t)) in self.tracked.drain_all().into_iter().enumerate() {
            if t.tag != 0 {
                alive.push((t.tag, t.scavenges, t.full_gcs));
                self.mem[i] &= !crate::layout::TRACKED_BIT;
            } else {
                self.tracked.insert(i, k < young, t);
            }
        }
        alive.sort_unstable();
        alive
    }

    /// Hold allocation sampling while the VM allocates for itself (a class
    /// loaded on demand: its methods, class, metaclass and literals are the
    /// VM's objects, not the program's): no object allocated until
    /// [`Heap::release_allocation_sampling`] is sampled, and the distance to
    /// the next sample point is kept, so the program's own allocations are
    /// sampled as if the VM's had not happened. Answers what the release
    /// needs (`None` when sampling is off or already held): the distance to
    /// the next sample point, in objects for [`SamplingPolicy::PerObject`],
    /// in bytes otherwise.
    pub fn hold_allocation_sampling(&mut self) -> Option<u64> {
        let s = self.sampler.as_ref()?;
        if self.sample_at == u64::MAX {
            return None;
        }
        let left = match s.policy {
            SamplingPolicy::PerObject { .. } => {
                s.next_object.saturating_sub(self.stats.allocated_objects)
            }
            _ => self.sample_at.saturating_sub(self.stats.allocated_bytes),
        };
        self.sample_at = u64::MAX;
        Some(left)
    }

    /// End a [`Heap::hold_allocation_sampling`]: the next sample point is as
    /// far ahead as it was when sampling was held.
    pub fn release_allocation_sampling(&mut self, held: Option<u64>) {
        let Some(left) = held else {
            return;
        };
        let bytes = self.stats.allocated_bytes;
        let objects = self.stats.allocated_objects;
        let Some(s) = self.sampler.as_mut() else {
            return;
        };
        self.sample_at = match s.policy {
            SamplingPolicy::PerObject { .. } => {
                let left = left.max(1);
                s.next_object = objects.saturating_add(left);
                bytes.saturating_add(left.saturating_mul(MIN_OBJECT_BYTES))
            }
            _ => bytes.saturating_add(left.max(1)),
        };
    }

    /// Is allocation sampling on?
    pub fn sampling_allocations(&self) -> bool {
        self.sampler.is_some()
    }

    /// Are samples waiting to be taken?
    #[inline(always)]
    pub fn has_allocation_samples(&self) -> bool {
        !self.samples.is_empty()
    }

    /// The samples taken since the last call, oldest first.
    pub fn take_allocation_samples(&mut self) -> Vec<AllocationSample> {
        std::mem::take(&mut self.samples)
    }

    /// Move the samples taken since the last call to the end of `out`,
    /// oldest first (keeping this heap's buffer).
    pub fn drain_allocation_samples(&mut self, out: &mut Vec<AllocationSample>) {
        out.append(&mut self.samples);
    }

    /// Deaths of sampled objects (non-zero tags) recorded since the last call;
    /// the deaths of objects tracked otherwise stay queued.
    pub fn take_sample_deaths(&mut self) -> Vec<crate::Death> {
        if self.deaths.iter().all(|d| d.tag == 0) {
            return Vec::new();
        }
        let (sampled, others): (Vec<_>, Vec<_>) = std::mem::take(&mut self.deaths)
            .into_iter()
            .partition(|d| d.tag != 0);
        self.deaths = others;
        sampled
    }

    /// The allocation clock passed `sample_at`: the object at `index` (of
    /// `total` words, header `header0`) may be sampled.
    #[cold]
    #[inline(never)]
    pub(crate) fn sample_allocation(&mut self, index: usize, header0: u64, total: usize) {
        let now = self.stats.allocated_bytes;
        let bytes = (total * 8) as u64;
        let Some(s) = self.sampler.as_mut() else {
            self.sample_at = u64::MAX;
            return;
        };
        if let SamplingPolicy::PerObject { .. } = s.policy {
            let objects = self.stats.allocated_objects;
            if objects < s.next_object {
                // Larger objects than the smallest: not there yet.
                let left = s.next_object - objects;
                self.sample_at = now.saturating_add(left.saturating_mul(MIN_OBJECT_BYTES));
                return;
            }
        }
        s.seen += 1;
        let (chosen, probability) = match s.policy {
            SamplingPolicy::All => (true, 1.0),
            SamplingPolicy::EveryNth(n) => {
                let n = n.max(1);
                (s.seen % n == 0, 1.0 / n as f64)
            }
            SamplingPolicy::PerObject { probability, .. } => (true, probability),
            SamplingPolicy::Nothing => (false, 0.0),
        };
        let class = (header0 & crate::layout::CLASS_MASK) as u32;
        if chosen && s.wants_class(class) {
            let tag = s.next_tag;
            s.next_tag += 1;
            self.mem[index] |= crate::layout::TRACKED_BIT;
            let young = self.is_young_index(index);
            self.tracked.insert(
                index,
                young,
                Track {
                    tag,
                    allocated_at: now,
                    scavenges: 0,
                    full_gcs: 0,
                    base: 0,
                },
            );
            self.samples.push(AllocationSample {
                tag,
                class,
                bytes,
                allocated_at: now,
                probability,
            });
        }
        self.draw_next_sample(now);
    }

    /// Set `sample_at` for the allocation after the one that ended at `now`.
    fn draw_next_sample(&mut self, now: u64) {
        let objects = self.stats.allocated_objects;
        let Some(s) = self.sampler.as_mut() else {
            return;
        };
        self.sample_at = match s.policy {
            SamplingPolicy::PerObject { probability, .. } => {
                let gap = geometric_gap(s.next_uniform(), probability);
                s.next_object = objects.saturating_add(gap);
                // The gap-th object from here ends at least this far ahead.
                now.saturating_add(gap.saturating_mul(MIN_OBJECT_BYTES))
            }
            // Every allocation goes through `sample_allocation`.
            SamplingPolicy::All | SamplingPolicy::EveryNth(_) => now + 1,
            SamplingPolicy::Nothing => u64::MAX,
        };
    }
}

/// The smallest object, in bytes (a header and no body): `k` objects take
/// at least `k` times this.
const MIN_OBJECT_BYTES: u64 = (crate::layout::HEADER_WORDS * 8) as u64;

/// The number of objects up to and including the next sampled one when each
/// is sampled independently with probability `p`, from a uniform `u` in
/// (0, 1]: `floor(ln u / ln(1 - p)) + 1`, geometric on 1, 2, ... (`P(gap > j)
/// = (1 - p)^j`). At least 1; 1 when `p` ≥ 1.
pub(crate) fn geometric_gap(u: f64, p: f64) -> u64 {
    if p >= 1.0 || p.is_nan() {
        return 1;
    }
    let q = (-p.max(1e-12)).ln_1p();
    let j = (u.ln() / q).floor();
    if j.is_finite() && j >= 0.0 {
        // `as` saturates at u64::MAX for huge gaps.
        (j as u64).saturating_add(1)
    } else {
        1
    }
}

/// A generator state from a seed: SplitMix64's finaliser, so that seeds that
/// differ in one bit start far apart; never zero.
fn mix_seed(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    if z == 0 { 1 } else { z }
}

#[cfg(test)]
mod tests {
    #[test]
    fn geometric_gaps_have_the_right_tail() {
        // P(gap > j) = (1 - p)^j: u = (1 - p)^j lies on the boundary.
        assert_eq!(super::geometric_gap(1.0, 0.25), 1);
        assert_eq!(super::geometric_gap(0.76, 0.25), 1);
        assert_eq!(super::geometric_gap(0.74, 0.25), 2);
        assert_eq!(super::geometric_gap(0.5, 1.0), 1);
        assert!(super::geometric_gap(f64::MIN_POSITIVE, 1e-9) > 100_000_000_000);
        // The mean of the gap is 1 / p.
        let n = 100_000;
        let mean = (1..=n)
            .map(|i| super::geometric_gap((i as f64 - 0.5) / n as f64, 0.01) as f64)
            .sum::<f64>()
            / n as f64;
        assert!((mean - 100.0).abs() < 1.0, "{mean}");
    }

    #[test]
    fn neighbouring_seeds_give_different_streams() {
        let states: Vec<u64> = (0..64).map(super::mix_seed).collect();
        for (i, a) in states.iter().enumerate() {
            assert_ne!(*a, 0);
            for b in &states[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
