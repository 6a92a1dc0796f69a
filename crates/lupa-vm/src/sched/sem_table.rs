//! The semaphore table: the VM-side record ([`Sem`]) of every live Semaphore,
//! and how records are freed when their Semaphore dies.
//!
//! A Semaphore object names its record by its identity hash (index + 1). The
//! table also holds the Semaphores themselves in a weak array in the heap
//! ([`Scheduler::sem_objects`], a root of the collector): a record belongs to
//! the object in its slot, so a copy or a forged Semaphore names no record,
//! and once a collection has cleared a slot (its Semaphore died) the record
//! is free. Free records are found when the table is full, before it grows
//! (a scan of the weak array, amortised over the records added since), so
//! the table holds the live Semaphores plus those that died since the last
//! collection, and its weak array counts against `--max-heap`. A record
//! with waiting processes is never reused (they stay waiting, as on a
//! Semaphore that is never signalled).

use super::{Scheduler, Sem};
use lupa_heap::{Heap, OutOfMemory, Value};

/// Slots of the first weak array.
const FIRST_CAPACITY: usize = 16;

impl Scheduler {
    /// The record of Semaphore `v` (a Semaphore the table registered), if any.
    pub(crate) fn sem_record(&self, heap: &mut Heap, v: Value) -> Option<usize> {
        if !v.is_ptr() || !self.sem_objects.is_ptr() {
            return None;
        }
        let i = (heap.identity_hash(v) as usize).checked_sub(1)?;
        (i < self.sems.len() && heap.slot(self.sem_objects, i) == v).then_some(i)
    }

    /// Give the new Semaphore `s` a record (a free one, or a new one),
    /// setting its identity hash; `weak_class` is the class of the table's
    /// weak array. Out of memory when the weak array cannot grow.
    pub(crate) fn register_semaphore(
        &mut self,
        heap: &mut Heap,
        weak_class: u32,
        s: Value,
    ) -> Result<usize, OutOfMemory> {
        let capacity = if self.sem_objects.is_ptr() {
            heap.slot_count(self.sem_objects)
        } else {
            0
        };
        if self.free_sems.is_empty() && self.sems.len() == capacity {
            self.reclaim_semaphores(heap);
            if self.free_sems.is_empty() {
                let bigger = heap.alloc_weak(weak_class, (capacity * 2).max(FIRST_CAPACITY))?;
                for k in 0..capacity {
                    let o = heap.slot(self.sem_objects, k);
                    heap.set_slot(bigger, k, o);
                }
                self.sem_objects = bigger;
            }
        }
        let i = match self.free_sems.pop() {
            Some(i) => i,
            None => {
                self.sems.push(Sem::default());
                self.sems.len() - 1
            }
        };
        heap.set_slot(self.sem_objects, i, s);
        heap.set_identity_hash(s, i as u32 + 1);
        Ok(i)
    }

    /// Free the records whose Semaphore died (its weak slot is nil) and that
    /// no process waits on.
    fn reclaim_semaphores(&mut self, heap: &Heap) {
        if !self.sem_objects.is_ptr() {
            return;
        }
        for (i, sem) in self.sems.iter_mut().enumerate() {
            if heap.slot(self.sem_objects, i) == Value::NIL && sem.waiting.is_empty() {
                *sem = Sem::default();
                self.free_sems.push(i);
            }
        }
        // Lowest indices first.
        self.free_sems.reverse();
    }

    /// Records in use (live Semaphores, and dead ones not reclaimed yet).
    pub fn semaphore_records(&self) -> usize {
        self.sems.len() - self.free_sems.len()
    }
}
