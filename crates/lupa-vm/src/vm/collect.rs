//! Collection glue: [`Vm::collect_garbage`] hands the collector every root the
//! VM holds (the scheduler's process states and semaphore, the image's globals,
//! symbols, class objects, method dictionaries, literals and method objects, and
//! `handles`),
//! then reports the collection to the GC hooks, schedules finalization and, with
//! `--verify-heap`, verifies the heap (a failure is a fatal [`VmError`], exit 70).

use super::{Vm, VmError};
use lupa_heap::Value;

impl Vm {
    /// Collect now, updating every root. Fails only when `--verify-heap` finds the
    /// heap corrupted after the collection (a VM bug: the run must stop).
    #[cold]
    #[inline(never)]
    pub fn collect_garbage(&mut self) -> Result<(), VmError> {
        // Sites first: they read the frames, which the program may change
        // before the next look.
        self.take_allocation_samples(None, true);
        let t0 = std::time::Instant::now();
        let tenured_before = self.heap.stats().tenured_bytes;
        let gc_state = match self.heap.next_collection_kind() {
            lupa_heap::CollectionKind::Full => crate::obs::sampling::VmState::FullGc,
            lupa_heap::CollectionKind::Scavenge => crate::obs::sampling::VmState::Scavenge,
        };
        // The state it interrupts (interpreting, a primitive, an allocation)
        // is published again when it ends.
        let saved_state = self.obs.push_state(gc_state, 0, self.sched.current);
        let mut c = self.heap.start_collection();
        let mut root = |v: &mut Value| c.root(v);
        self.sched.visit_roots(&mut root);
        self.image.visit_roots(&mut root);
        for v in self.handles.iter_mut() {
            root(v);
        }
        self.obs.watches.visit_roots(&mut root);
        c.finish();
        let elapsed = t0.elapsed();
        self.obs.pop_state(saved_state);
        self.obs.gc_time_ns += elapsed.as_nanos() as u64;
        if self.obs.recording_events() {
            let stats = self.heap.stats();
            let kind = match gc_state {
                crate::obs::sampling::VmState::FullGc => {
                    crate::obs::sampling::VmEventKind::FullGc {
                        live_bytes: stats.live_bytes_after_last_gc,
                    }
                }
                _ => crate::obs::sampling::VmEventKind::Scavenge {
                    tenured_bytes: stats.tenured_bytes - tenured_before,
                },
            };
            self.obs.record_event(crate::obs::sampling::VmEvent {
                kind,
                start: t0,
                duration: elapsed,
                process: self.sched.current as u32,
            });
        }
        if let Some(rec) = self.obs.lifetimes.as_mut() {
            let full = gc_state == crate::obs::sampling::VmState::FullGc;
            rec.note_collection(&mut self.heap, t0, elapsed, full);
        }
        if self.obs.gc_hooks_on() {
            let kind = self
                .heap
                .last_collection()
                .unwrap_or(lupa_heap::CollectionKind::Scavenge);
            let deaths = self.heap.take_deaths();
            let ev = crate::obs::GcEvent {
                kind,
                duration: elapsed,
                number: self.heap.stats().collections,
                deaths: &deaths,
            };
            self.obs.collection(&ev);
        }
        if self.heap.mourn_queue_len() > 0 && !self.sched.finalization_semaphore.is_nil() {
            self.sched.finalization_due = true;
        }
        for line in self.heap.take_trace() {
            self.io.print_err(&format!("{line}\n"));
        }
        if self.options.verify_heap
            && let Err(e) = self.heap.verify(self.image.classes.len() as u32)
        {
            return Err(VmError::Fatal(format!(
                "heap verification failed after GC: {e}"
            )));
        }
        Ok(())
    }
}
