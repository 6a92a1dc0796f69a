//! The object layout: what every word of an object header means, the object
//! formats, and the few layout facts every other part of the heap relies on.
//!
//! A heap pointer is the word index of an object's header in one `Vec<u64>`.
//! Every object has a two-word header followed by its body:
//!
//! ```text
//! word 0: bits  0..22  class index        bits 22..26 format
//!         bits 26..30  age (scavenges survived, saturating at 15)
//!         bit  30      tracked (lifetime events)   bit 31 remembered
//!         bits 32..63  identity hash (0 = not yet assigned)
//!         bit  63      set only in a forwarded husk during a scavenge
//! word 1: bits  0..32  size: slots for pointer/word formats, bytes for bytes
//!         bit  32      mark bit, bit 33 pinned (full GC only)
//!         bits 34..64  forwarding index (full GC only)
//! body:   slots (Values), raw words, or bytes packed little-endian
//! ```
//!
//! Free gaps in old space ("holes" left in front of pinned objects by the
//! compactor) are one-word-header fillers: format 15, total words in bits 32..64.
//! This module depends on nothing else in the crate.

/// Object formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Format {
    /// Pointer slots (named fields and/or indexable).
    Pointers = 0,
    /// Bytes (strings, symbols, byte arrays).
    Bytes = 1,
    /// Raw 64-bit words, not scanned (doubles, large integer digits).
    Words = 2,
    /// Pointer slots that do not keep their referents alive.
    Weak = 3,
    /// Slot 0 is the key, slot 1 the value, further slots ordinary fields; the
    /// slots other than the key are traced only once the key is reachable
    /// otherwise (Hayes' ephemerons).
    Ephemeron = 4,
}

impl Format {
    #[inline(always)]
    pub(crate) fn from_bits(b: u64) -> Format {
        match b {
            1 => Format::Bytes,
            2 => Format::Words,
            3 => Format::Weak,
            4 => Format::Ephemeron,
            _ => Format::Pointers,
        }
    }

    /// Does an object of this format have pointer slots (`slot`, `set_slot`)?
    /// True for `Pointers`, `Weak` and `Ephemeron`.
    #[inline(always)]
    pub fn has_slots(self) -> bool {
        matches!(self, Format::Pointers | Format::Weak | Format::Ephemeron)
    }
}

pub(crate) const CLASS_MASK: u64 = (1 << 22) - 1;
pub(crate) const FORMAT_SHIFT: u32 = 22;
pub(crate) const FORMAT_MASK: u64 = 0xF;
pub(crate) const AGE_SHIFT: u32 = 26;
pub(crate) const AGE_MASK: u64 = 0xF;
pub(crate) const TRACKED_BIT: u64 = 1 << 30;
pub(crate) const REMEMBERED_BIT: u64 = 1 << 31;
pub(crate) const HASH_SHIFT: u32 = 32;
pub(crate) const HASH_MASK: u64 = 0x7FFF_FFFF;
pub(crate) const FORWARDED: u64 = 1 << 63;
pub(crate) const SIZE_MASK: u64 = 0xFFFF_FFFF;
pub(crate) const MARK_BIT: u64 = 1 << 32;
pub(crate) const PIN_BIT: u64 = 1 << 33;
pub(crate) const FWD_SHIFT: u32 = 34;
/// Format value of a filler (free gap) in old space.
pub(crate) const FREE_FORMAT: u64 = 0xF;
pub(crate) const HEADER_WORDS: usize = 2;
/// The first word index ever handed out (index 0 is never a valid object).
pub(crate) const FIRST_INDEX: usize = 2;

/// What native code (a JIT's) may rely on to read an object in place, given
/// the heap's base address ([`Heap::words_ptr`](crate::Heap::words_ptr)): the
/// object named by pointer `v` starts at `base + v`'s bits; its first header
/// word's low [`native::CLASS_BITS`] bits are its class index, its second
/// header word's low 32 bits its size (slots, words or bytes); slot `i` is at
/// byte offset [`native::HEADER_BYTES`]` + 8 * i`.
pub mod native {
    /// Bytes of an object header (slots start after it).
    pub const HEADER_BYTES: i32 = (super::HEADER_WORDS * 8) as i32;
    /// Bits of the class index at the bottom of header word 0.
    pub const CLASS_BITS: u32 = 22;
    /// Mask of the class index in header word 0.
    pub const CLASS_MASK: u64 = super::CLASS_MASK;
    /// Mask of the size in header word 1.
    pub const SIZE_MASK: u64 = super::SIZE_MASK;
    /// The low three bits of an immediate double.
    pub const FLOAT_TAG: u64 = crate::value::FLOAT_TAG;
    /// What an immediate double's payload (the value shifted right by 3)
    /// lacks of its left-rotated IEEE bits (`Value::float_unchecked`).
    pub const FLOAT_EXP_OFFSET: u64 = crate::value::FLOAT_EXP_OFFSET;
}

/// The largest class index a header can hold.
pub const MAX_CLASS_INDEX: u32 = CLASS_MASK as u32;

/// The header of a filler of `n` words (a free gap in old space).
#[inline(always)]
pub(crate) fn filler(n: usize) -> u64 {
    (FREE_FORMAT << FORMAT_SHIFT) | ((n as u64) << 32)
}

/// Body words of an object from its two header words.
#[inline(always)]
pub(crate) fn body_words_of(h0: u64, h1: u64) -> usize {
    let size = (h1 & SIZE_MASK) as usize;
    if (h0 >> FORMAT_SHIFT) & FORMAT_MASK == Format::Bytes as u64 {
        size.div_ceil(8)
    } else {
        size
    }
}

// Bytes are packed little-endian into words and viewed in place by `Heap::bytes`.
const _: () = assert!(
    cfg!(target_endian = "little"),
    "lupa-heap supports little-endian targets only"
);
