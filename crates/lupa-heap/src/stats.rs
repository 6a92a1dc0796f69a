//! Collector statistics: [`HeapStats`] (always on, cheap counters and times, one
//! named list behind `System>>gcStatAt:` and one text report behind `--gc-stats`)
//! and [`CollectionKind`].

use std::time::Duration;

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
    /// Full GCs that ran because old space grew by the GC ratio since the
    /// last full GC (checked after each scavenge, as Spur does).
    pub ratio_full_gcs: u64,
    /// Full GCs that ran because a program's allocation in old space found
    /// the free old space exhausted (Spur's failing allocation: a full GC,
    /// then growth by a segment if it freed too little).
    pub exhaustion_full_gcs: u64,
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
    /// Bytes an observer allocated (`Heap::set_observer_allocations`: a
    /// profiler's own objects, in old space, not on the allocation clock).
    pub observer_bytes: u64,
    /// Objects an observer allocated.
    pub observer_objects: u64,
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
            ("ratioFullGCs", self.ratio_full_gcs),
            ("exhaustionFullGCs", self.exhaustion_full_gcs),
            ("fullGCTimeUs", us(self.full_gc_time)),
            ("meanFullGCUs", us(self.mean_full_gc())),
            ("maxFullGCUs", us(self.max_full_gc_pause)),
            ("collections", self.collections),
            ("gcTimeUs", us(self.gc_time)),
            ("maxPauseUs", us(self.max_pause)),
            ("allocatedBytes", self.allocated_bytes),
            ("allocatedObjects", self.allocated_objects),
            ("oldAllocatedBytes", self.old_allocated_bytes),
            ("observerBytes", self.observer_bytes),
            ("observerObjects", self.observer_objects),
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
            "full GCs:           {} ({:.3} ms total, {:.3} ms mean, {:.3} ms max; {} by the GC ratio, {} on exhausted old space)\n",
            self.full_gcs,
            ms(self.full_gc_time),
            ms(self.mean_full_gc()),
            ms(self.max_full_gc_pause),
            self.ratio_full_gcs,
            self.exhaustion_full_gcs
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
