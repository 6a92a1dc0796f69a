//! What allocation sampling decides with: the policy ([`SamplingPolicy`]),
//! the sampler's state (`AllocSampler`: the next sample's clock, the seeded
//! generator, the class filters) and what it queues for the VM
//! ([`AllocationSample`]). The heap holds them; `alloc_sampling.rs` is the
//! heap's behaviour around them.

/// Which allocations are sampled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SamplingPolicy {
    /// Every allocation.
    All,
    /// Every n-th allocation (n ≥ 1), counting from the start.
    EveryNth(u64),
    /// Each object independently with this probability (in (0, 1)), whatever
    /// its size: the gaps between sampled objects, counted in objects, are
    /// drawn from a geometric distribution by a generator seeded with `seed`.
    /// What a sampling rate means (the share of objects kept).
    PerObject {
        /// The probability that an allocation is sampled.
        probability: f64,
        /// Seed of the gap generator.
        seed: u64,
    },
    /// No allocation: the sampler is on only so that a lifetime recording
    /// logs the collections (faithful mode samples in Smalltalk).
    Nothing,
}

/// A sampled allocation, as the heap saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllocationSample {
    /// The tag its tracking and its [`Death`](crate::Death) carry (from 1).
    pub tag: u64,
    /// Its class index.
    pub class: u32,
    /// Its size in bytes, header included.
    pub bytes: u64,
    /// The allocation clock right after it was allocated.
    pub allocated_at: u64,
    /// The probability that an object of its size was sampled.
    pub probability: f64,
}

/// The sampler's state while on.
#[derive(Debug, Clone)]
pub(crate) struct AllocSampler {
    pub(crate) policy: SamplingPolicy,
    /// Objects allocated since the start (for `EveryNth`).
    pub(crate) seen: u64,
    /// The heap's object count (`HeapStats::allocated_objects`) at which the
    /// next object is sampled (for `PerObject`).
    pub(crate) next_object: u64,
    /// xorshift64* state (for `PerObject`).
    pub(crate) rng: u64,
    pub(crate) next_tag: u64,
    /// Class indices not sampled (by class index; empty: none).
    pub(crate) ignored: Vec<bool>,
    /// When non-empty, only these class indices are sampled.
    pub(crate) only: Vec<bool>,
}

impl AllocSampler {
    pub(crate) fn next_uniform(&mut self) -> f64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        // 53 random bits in (0, 1].
        ((r >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    pub(crate) fn wants_class(&self, class: u32) -> bool {
        let c = class as usize;
        if self.ignored.get(c).copied().unwrap_or(false) {
            return false;
        }
        self.only.is_empty() || self.only.get(c).copied().unwrap_or(false)
    }
}

/// The classes as a membership table by class index.
pub(crate) fn class_set(classes: &[u32]) -> Vec<bool> {
    let mut set = Vec::new();
    for &c in classes {
        let c = c as usize;
        if set.len() <= c {
            set.resize(c + 1, false);
        }
        set[c] = true;
    }
    set
}
