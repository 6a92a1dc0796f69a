//! Object lifetimes recorded by the VM itself (Illimani's VM mode): sampled
//! allocations with their allocation site, and their deaths as the collector
//! finds them. Nothing is allocated in the profiled heap per record.
//!
//! The mechanism, in three parts:
//! - **the heap** decides which allocations are sampled, on the allocation
//!   path (`lupa_heap`'s `alloc_sampling.rs`: every object, every n-th, or
//!   each object with the sampling rate as its probability, [`policy_for`]),
//!   tracks each sampled object under a tag, and
//!   records its death (the allocation clock, the collections it survived)
//!   when a collection finds it dead;
//! - **the interpreter** adds the allocation site at the first observation
//!   point after the allocation (`Vm::take_allocation_samples`): right after
//!   a primitive returns (exact: the caller's send), before the next send of
//!   the running frame, at the next safepoint, and before any collection.
//!   Allocations the interpreter makes itself (closures, boxed floats,
//!   contexts of activations) are thus charged to the running method at the
//!   next send or safepoint;
//! - **this module** keeps the records, stamps the time clock (µs since the
//!   start) and closes the records still alive at the stop as *censored*.
//!
//! The allocation site is the innermost frame that is not an allocator
//! wrapper ([`wrapper_kind`]): the user method and the index of the
//! send instruction that asked for the object, never `new` -> `basicNew`.
//! Recording turns per-send observation on (the observing interpreter loop);
//! off, it costs the allocation path one comparison.

use std::time::Instant;

use lupa_heap::{AllocationSample, Heap, SamplingPolicy};

use crate::image::Image;
use crate::objects::MethodCode;
use crate::sched::ProcessState;
use lupa_heap::Value;

/// What to record.
#[derive(Debug, Clone)]
pub struct LifetimeOptions {
    /// Which allocations are sampled.
    pub policy: SamplingPolicy,
    /// When not empty, only objects of these class indices.
    pub only: Vec<u32>,
    /// Objects of these class indices are never recorded.
    pub ignored: Vec<u32>,
    /// Frames kept per record (at least the site).
    pub stack_depth: usize,
}

impl Default for LifetimeOptions {
    fn default() -> Self {
        LifetimeOptions {
            policy: SamplingPolicy::All,
            only: Vec::new(),
            ignored: Vec::new(),
            stack_depth: 8,
        }
    }
}

/// One sampled allocation and its death.
#[derive(Debug, Clone, PartialEq)]
pub struct AllocationRecord {
    /// Class index of the object.
    pub class: u32,
    /// Its size in bytes, header included.
    pub bytes: u64,
    /// The probability that an object of its size was sampled (1 at rate 1).
    pub probability: f64,
    /// Its allocation stack: an index into [`LifetimeRecording::stacks`].
    pub stack: u32,
    /// Allocation clock (bytes allocated by the VM so far) at birth.
    pub birth_bytes: u64,
    /// Allocation clock at the collection that found it dead (or at the stop).
    pub death_bytes: u64,
    /// Microseconds since the start of the recording, at birth.
    pub birth_us: u64,
    /// Microseconds since the start at the start of the collection that found
    /// it dead (or at the stop).
    pub death_us: u64,
    /// Scavenges between birth and death that did not find it dead.
    pub survived_scavenges: u32,
    /// Full GCs between birth and death that did not find it dead.
    pub survived_full_gcs: u32,
    /// Still alive at the stop: the death clocks are the stop's.
    pub censored: bool,
}

/// A finished recording.
#[derive(Debug, Clone, Default)]
pub struct LifetimeRecording {
    /// The records, in allocation order.
    pub records: Vec<AllocationRecord>,
    /// The allocation stacks, once each: innermost first, (method or block
    /// id, index of the send instruction) from the allocation site, at most
    /// [`LifetimeOptions::stack_depth`] frames; empty when no Smalltalk frame
    /// was running.
    pub stacks: Vec<Vec<(u32, u32)>>,
    /// The sampling policy used.
    pub policy: Option<SamplingPolicy>,
    /// Wall-clock duration of the recording, µs.
    pub duration_us: u64,
    /// Bytes and objects allocated during the recording.
    pub allocated_bytes: u64,
    /// Objects allocated during the recording.
    pub allocated_objects: u64,
    /// Scavenges during the recording.
    pub scavenges: u64,
    /// Full GCs during the recording.
    pub full_gcs: u64,
    /// Time in collections during the recording, µs.
    pub gc_us: u64,
    /// The allocation clock at the start.
    pub start_bytes: u64,
    /// The collections during the recording, in order.
    pub collections: Vec<CollectionMark>,
    /// Records whose site was taken late (after a send or a safepoint rather
    /// than at the primitive's return).
    pub late_sites: u64,
    /// A full GC ran at the stop ([`crate::Vm::request_final_lifetimes_gc`]):
    /// the censored records are the objects really alive at the end. That
    /// collection is the stop's measurement, not part of the run: it is not
    /// in `collections`, `full_gcs`, `gc_us` nor the records' survival counts.
    pub final_gc: bool,
    /// The records reached their share of `--max-heap` (a VM-side table,
    /// `vm::side_tables`): sampling stopped there, the records of the
    /// objects sampled until then go on to their deaths.
    pub stopped_at_limit: bool,
}

impl LifetimeRecording {
    /// The allocation stack of a record.
    pub fn stack_of(&self, r: &AllocationRecord) -> &[(u32, u32)] {
        self.stacks.get(r.stack as usize).map_or(&[], Vec::as_slice)
    }
}

/// Stacks, once each.
#[derive(Debug, Default)]
pub(crate) struct StackTable {
    pub(crate) stacks: Vec<Vec<(u32, u32)>>,
    ids: rustc_hash::FxHashMap<Vec<(u32, u32)>, u32>,
}

impl StackTable {
    pub(crate) fn intern(&mut self, stack: &[(u32, u32)]) -> u32 {
        if let Some(&id) = self.ids.get(stack) {
            return id;
        }
        let id = self.stacks.len() as u32;
        self.stacks.push(stack.to_vec());
        self.ids.insert(stack.to_vec(), id);
        id
    }
}

/// One collection during a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectionMark {
    /// Microseconds since the start of the recording, at its start.
    pub start_us: u64,
    /// Its duration, µs.
    pub duration_us: u64,
    /// A full GC (else a scavenge).
    pub full: bool,
    /// The allocation clock at the collection.
    pub allocated_bytes: u64,
}

/// The recorder while on (owned by the VM's observation).
#[derive(Debug)]
pub(crate) struct LifetimeRecorder {
    options: LifetimeOptions,
    start: Instant,
    start_stats: lupa_heap::HeapStats,
    records: Vec<AllocationRecord>,
    stacks: StackTable,
    collections: Vec<CollectionMark>,
    late_sites: u64,
    /// The next full GC is the final one (asked for at the stop).
    final_pending: bool,
    /// The final full GC ran and took this many µs.
    final_gc_us: Option<u64>,
    /// The samples being looked at (kept to reuse its buffer).
    scratch: Vec<AllocationSample>,
    /// The most records kept (their share of `--max-heap`).
    max_records: usize,
    /// Sampling stopped at `max_records`.
    stopped_at_limit: bool,
}

impl LifetimeRecorder {
    fn micros(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_micros() as u64
    }

    fn record(&mut self, s: &AllocationSample, stack: u32, now_us: u64) {
        // Tags are consecutive from 1 in allocation order; a gap never occurs,
        // but a record is looked up by tag, so keep the invariant checked.
        debug_assert_eq!(s.tag as usize, self.records.len() + 1);
        self.records.push(AllocationRecord {
            class: s.class,
            bytes: s.bytes,
            probability: s.probability,
            stack,
            birth_bytes: s.allocated_at,
            death_bytes: 0,
            birth_us: now_us,
            death_us: 0,
            survived_scavenges: 0,
            survived_full_gcs: 0,
            censored: true,
        });
    }

    fn by_tag(&mut self, tag: u64) -> Option<&mut AllocationRecord> {
        let i = (tag as usize).checked_sub(1)?;
        self.records.get_mut(i)
    }
}

/// How a frame wraps an allocation, if it does (see [`wrapper_kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapper {
    /// An allocator by name: a class-side method whose selector starts with
    /// `new` or `basicNew`, `copy` (`^self shallowCopy postCopy`), or a
    /// method with the `<allocator>` pragma.
    Allocator,
    /// A constructor: any other class-side method (not a block) run on the
    /// class of the object (`Pair class>>withKey:andValue:` making a Pair).
    Constructor,
}

/// Does a frame running `code` on `receiver` wrap the allocation of an
/// object of class `class`? The allocation site is the first frame, from
/// the top, that does not: allocators are skipped, and one constructor (a
/// factory method that loops over a constructor is the site, not a wrapper).
pub fn wrapper_kind(
    image: &Image,
    code: &MethodCode,
    receiver: Value,
    class: u32,
) -> Option<Wrapper> {
    let name: &str = &code.selector_name;
    let meta = image
        .classes
        .get(code.holder.get() as usize)
        .is_some_and(|c| c.is_meta);
    let method = code.kind != lupa_compiler::CodeKind::Block;
    if (meta && method && (name.starts_with("new") || name.starts_with("basicNew")))
        || name == "copy"
        || code.has_pragma("allocator")
    {
        Some(Wrapper::Allocator)
    } else if meta && method && receiver == image.class_object(class) {
        Some(Wrapper::Constructor)
    } else {
        None
    }
}

impl LifetimeRecorder {
    /// A recording that starts now: the heap samples allocations as `options`
    /// say from now on.
    pub(crate) fn start(heap: &mut Heap, options: LifetimeOptions) -> LifetimeRecorder {
        heap.start_allocation_sampling(options.policy, &options.only, &options.ignored);
        let share = heap.config().max_heap / crate::vm::SIDE_TABLE_SHARE;
        LifetimeRecorder {
            max_records: (share / std::mem::size_of::<AllocationRecord>()).max(1),
            stopped_at_limit: false,
            options,
            start: Instant::now(),
            start_stats: heap.stats().clone(),
            records: Vec::new(),
            stacks: StackTable::default(),
            collections: Vec::new(),
            late_sites: 0,
            final_pending: false,
            final_gc_us: None,
            scratch: Vec::new(),
        }
    }

    /// Stop: the heap samples no more, and the records come out; objects
    /// still alive are censored at the stop's clocks (and no longer followed).
    pub(crate) fn finish(mut self, heap: &mut Heap) -> LifetimeRecording {
        let pending = heap.stop_allocation_sampling();
        let now = Instant::now();
        let now_us = self.micros(now);
        // Samples taken after the last look (none in practice): no site.
        let none = self.stacks.intern(&[]);
        for s in &pending {
            self.record(s, none, now_us);
        }
        self.note_deaths(heap, now);
        let stats = heap.stats().clone();
        // The final full GC is not one the object survived in the run.
        let final_gcs = u32::from(self.final_gc_us.is_some());
        for (tag, scavenges, full_gcs) in heap.untrack_samples() {
            if let Some(r) = self.by_tag(tag) {
                r.death_bytes = stats.allocated_bytes;
                r.death_us = now_us;
                r.survived_scavenges = scavenges;
                r.survived_full_gcs = full_gcs.saturating_sub(final_gcs);
                r.censored = true;
            }
        }
        let final_us = self.final_gc_us.unwrap_or(0);
        let st0 = &self.start_stats;
        LifetimeRecording {
            policy: Some(self.options.policy),
            duration_us: now_us,
            allocated_bytes: stats.allocated_bytes - st0.allocated_bytes,
            allocated_objects: stats.allocated_objects - st0.allocated_objects,
            scavenges: stats.scavenges - st0.scavenges,
            full_gcs: (stats.full_gcs - st0.full_gcs).saturating_sub(u64::from(final_gcs)),
            gc_us: (stats.gc_time.saturating_sub(st0.gc_time).as_micros() as u64)
                .saturating_sub(final_us),
            start_bytes: st0.allocated_bytes,
            late_sites: self.late_sites,
            final_gc: self.final_gc_us.is_some(),
            stopped_at_limit: self.stopped_at_limit,
            collections: self.collections,
            stacks: self.stacks.stacks,
            records: self.records,
        }
    }

    /// Add the allocation site to the samples the heap took since the last
    /// look, reading the sites from the running process's frames. `top_pc`:
    /// the running frame's current position when its saved pc is stale
    /// (before a send), `None` otherwise; `late`: not right after the
    /// primitive that allocated (the site is then the running method's next
    /// send or safepoint).
    pub(crate) fn take_samples(
        &mut self,
        heap: &mut Heap,
        image: &Image,
        running: &ProcessState,
        top_pc: Option<usize>,
        late: bool,
    ) {
        let mut samples = std::mem::take(&mut self.scratch);
        heap.drain_allocation_samples(&mut samples);
        let depth = self.options.stack_depth.max(1);
        // One walk per class in this batch (usually one object).
        let mut stacks: Vec<(u32, Vec<(u32, u32)>)> = Vec::with_capacity(1);
        let n = running.frames.len();
        for s in &samples {
            if !stacks.iter().any(|(c, _)| *c == s.class) {
                let st = match n {
                    0 => Vec::new(),
                    _ => allocation_stack_from(image, running, n - 1, top_pc, depth, s.class),
                };
                stacks.push((s.class, st));
            }
        }
        if late {
            self.late_sites += samples.len() as u64;
        }
        let now_us = self.micros(Instant::now());
        let ids: Vec<(u32, u32)> = stacks
            .iter()
            .map(|(c, st)| (*c, self.stacks.intern(st)))
            .collect();
        for s in &samples {
            let id = ids
                .iter()
                .find(|(c, _)| *c == s.class)
                .map_or(0, |&(_, id)| id);
            if self.records.len() >= self.max_records {
                self.stop_at_limit(heap);
                break;
            }
            self.record(s, id, now_us);
        }
        samples.clear();
        self.scratch = samples;
    }

    /// The records reached their share of `--max-heap`: sample no more (the
    /// samples not recorded are dropped; their objects, tracked under tags
    /// past the last record, are untracked at the stop).
    fn stop_at_limit(&mut self, heap: &mut Heap) {
        heap.stop_allocation_sampling();
        self.stopped_at_limit = true;
    }

    /// After a collection that started at `gc_start` and took `duration`:
    /// note it and close the records of the sampled objects it found dead.
    pub(crate) fn note_collection(
        &mut self,
        heap: &mut Heap,
        gc_start: Instant,
        duration: std::time::Duration,
        full: bool,
    ) {
        if self.final_pending && full {
            // The final full GC: its deaths are recorded, the collection is
            // not part of the run.
            self.final_pending = false;
            self.final_gc_us = Some(duration.as_micros() as u64);
            self.note_deaths(heap, gc_start);
            return;
        }
        self.collections.push(CollectionMark {
            start_us: self.micros(gc_start),
            duration_us: duration.as_micros() as u64,
            full,
            allocated_bytes: heap.stats().allocated_bytes,
        });
        self.note_deaths(heap, gc_start);
    }

    /// The next full GC is the final one, which finds who is really alive
    /// at the stop ([`LifetimeRecording::final_gc`]).
    pub(crate) fn expect_final_gc(&mut self) {
        self.final_pending = true;
    }

    fn note_deaths(&mut self, heap: &mut Heap, at: Instant) {
        let deaths = heap.take_sample_deaths();
        let us = self.micros(at);
        for d in deaths {
            if let Some(r) = self.by_tag(d.tag) {
                r.death_bytes = d.died_at;
                r.death_us = us;
                r.survived_scavenges = d.scavenges_survived;
                r.survived_full_gcs = d.full_gcs_survived;
                r.censored = false;
            }
        }
    }
}

/// The allocation stack seen from frame `from` of the `running` process
/// (the frame that asked for an object, or an allocator wrapper above the
/// site): allocator wrappers ([`wrapper_kind`]) are skipped, then up to
/// `depth` frames, innermost first, as (method or block id, index of the send
/// instruction they are in), for an object of class `class`. `top_pc`
/// replaces the saved pc of frame `from`. Illimani's two modes both name
/// sites with it.
pub fn allocation_stack_from(
    image: &Image,
    running: &ProcessState,
    from: usize,
    top_pc: Option<usize>,
    depth: usize,
    class: u32,
) -> Vec<(u32, u32)> {
    let frames = &running.frames[..=from.min(running.frames.len().saturating_sub(1))];
    let mut out = Vec::with_capacity(depth.min(frames.len()));
    let mut skipping = true;
    let mut constructor_skipped = false;
    for (k, f) in frames.iter().enumerate().rev() {
        if skipping && k > 0 {
            let receiver = running.stack.get(f.bp).copied().unwrap_or(Value::NIL);
            match wrapper_kind(image, image.code(f.method), receiver, class) {
                Some(Wrapper::Allocator) => continue,
                Some(Wrapper::Constructor) if !constructor_skipped => {
                    constructor_skipped = true;
                    continue;
                }
                _ => {}
            }
        }
        skipping = false;
        let pc = match top_pc {
            Some(pc) if k == from => pc,
            _ => f.pc,
        };
        out.push((f.method, pc.saturating_sub(1) as u32));
        if out.len() >= depth {
            break;
        }
    }
    out
}

/// The sampling policy for a sampling rate in (0, 1]: the one rule of both
/// modes (faithful mode's `IllLifetimeProfiler>>noteAllocation:by:` applies
/// it in Smalltalk). Every object at 1; below 1, each object independently
/// with probability `rate`, whatever its size and whatever ran before the
/// start ([`SamplingPolicy::PerObject`]), so that on average a share `rate` of
/// the objects of any class and size is sampled and each record has
/// probability `rate`; every n-th object when `every_nth` > 0
/// (deterministic).
pub fn policy_for(rate: f64, every_nth: u64, seed: u64) -> SamplingPolicy {
    if every_nth > 0 {
        SamplingPolicy::EveryNth(every_nth)
    } else if rate >= 1.0 {
        SamplingPolicy::All
    } else {
        SamplingPolicy::PerObject {
            probability: rate.max(1e-9),
            seed,
        }
    }
}
