//! The bound on VM-side tables: what the VM keeps outside the object heap on
//! behalf of a program (tracked objects and the death log of `track:`,
//! methods compiled at run time, lifetime records, line buffers...).
//!
//! Each such table may use at most [`SIDE_TABLE_SHARE`] of `--max-heap`; a
//! request that would take it past that is refused with a catchable
//! `out of memory:` error ([`PrimFailure::Limit`]), like an allocation in the
//! heap, never an allocation failure that aborts the VM. Tables whose
//! entries belong to heap objects are freed instead when those objects die
//! (the semaphore table, `sched::sem_table`); processes and their stacks
//! have a budget of their own (`interp::runtime_limits`).

use crate::prims::PrimFailure;
use crate::vm::Vm;

/// The share of `--max-heap` each VM-side table may use (1/8).
pub(crate) const SIDE_TABLE_SHARE: usize = 8;

impl Vm {
    /// Bytes each VM-side table may use.
    pub(crate) fn side_table_limit(&self) -> usize {
        self.heap.config().max_heap / SIDE_TABLE_SHARE
    }

    /// Refuse to take the VM-side table `what` to `bytes` bytes when that is
    /// past its share of `--max-heap`; `hint` says how to free it.
    pub(crate) fn check_side_table(
        &self,
        what: &str,
        bytes: usize,
        hint: &str,
    ) -> Result<(), PrimFailure> {
        let limit = self.side_table_limit();
        if bytes <= limit {
            return Ok(());
        }
        Err(PrimFailure::Limit(format!(
            "out of memory: {what} would take {} MB, past its share of --max-heap (1/{SIDE_TABLE_SHARE}, {} MB){hint}",
            bytes >> 20,
            limit >> 20
        )))
    }
}

impl Vm {
    /// Refuse to make `bytes` more of method code at run time (`compile:`,
    /// method copies) when the methods made so far and those would be past
    /// their share.
    pub(crate) fn check_runtime_code(&self, bytes: usize) -> Result<(), PrimFailure> {
        self.check_side_table(
            "the methods made at run time",
            self.image.runtime_code_bytes.saturating_add(bytes),
            "",
        )
    }
}
