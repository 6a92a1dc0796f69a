//! The byte views of byte objects ([`Heap::bytes`], [`Heap::bytes_mut`]): the only
//! `unsafe` code of the heap. A byte object's bytes are packed little-endian into
//! its body words; these functions view those words as a `&[u8]` / `&mut [u8]` in
//! place. Soundness is argued at each block (`// SAFETY:`), and `layout.rs`
//! restricts the crate to little-endian targets at compile time.
#![allow(unsafe_code)]

use crate::heap::Heap;
use crate::layout::HEADER_WORDS;
use crate::value::Value;

impl Heap {
    /// The bytes of a byte object.
    pub fn bytes(&self, v: Value) -> &[u8] {
        let i = v.index() + HEADER_WORDS;
        let len = self.size(v);
        let words = &self.mem[i..i + len.div_ceil(8)];
        // SAFETY: `words` is a valid, initialised slice of u64 of `len.div_ceil(8)`
        // words, so its first `len` bytes are in bounds; u8 has alignment 1 and no
        // invalid bit patterns; the returned slice borrows `self` immutably, so the
        // vector cannot be reallocated while it is alive. Bytes are stored
        // little-endian (see `alloc_bytes`), and this crate only supports
        // little-endian targets (checked by `const _` below).
        unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), len) }
    }

    /// The bytes of a byte object, mutable.
    pub fn bytes_mut(&mut self, v: Value) -> &mut [u8] {
        let i = v.index() + HEADER_WORDS;
        let len = self.size(v);
        let words = &mut self.mem[i..i + len.div_ceil(8)];
        // SAFETY: as in `bytes`; the slice borrows `self` mutably and exclusively.
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
    }
}
