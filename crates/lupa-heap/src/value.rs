//! Tagged values.
//!
//! A [`Value`] is one 64-bit word:
//!
//! | low bits | meaning |
//! |---|---|
//! | `...1`   | SmallInteger: the upper 63 bits, signed (range -2^62 .. 2^62-1) |
//! | `..000`  | pointer to a heap object: the word index of its header, shifted left by 3 (never 0) |
//! | `..010`  | special immediates: `nil` (0x02), `true` (0x0A), `false` (0x12) |
//! | `..100`, `..110` | reserved (immediate floats later) |

/// A tagged Smalltalk value. `Copy`, one machine word.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Value(pub(crate) u64);

/// Smallest SmallInteger.
pub const SMALL_INT_MIN: i64 = -(1 << 62);
/// Largest SmallInteger.
pub const SMALL_INT_MAX: i64 = (1 << 62) - 1;

impl Value {
    /// `nil`.
    pub const NIL: Value = Value(0x02);
    /// `true`.
    pub const TRUE: Value = Value(0x0A);
    /// `false`.
    pub const FALSE: Value = Value(0x12);

    /// The raw bits (for hashing, identity and the sampling register).
    #[inline(always)]
    pub fn raw(self) -> u64 {
        self.0
    }

    /// A SmallInteger, if `i` fits.
    #[inline(always)]
    pub fn from_i64(i: i64) -> Option<Value> {
        if (SMALL_INT_MIN..=SMALL_INT_MAX).contains(&i) {
            Some(Value(((i as u64) << 1) | 1))
        } else {
            None
        }
    }

    /// A SmallInteger from a value known to be in range (e.g. a small index).
    /// Out-of-range values wrap; callers use it for lengths and indices only.
    #[inline(always)]
    pub fn small(i: i64) -> Value {
        Value(((i as u64) << 1) | 1)
    }

    /// Is this a SmallInteger?
    #[inline(always)]
    pub fn is_int(self) -> bool {
        self.0 & 1 == 1
    }

    /// The SmallInteger's value (meaningless for other values).
    #[inline(always)]
    pub fn int_unchecked(self) -> i64 {
        (self.0 as i64) >> 1
    }

    /// The SmallInteger's value, if it is one.
    #[inline(always)]
    pub fn as_int(self) -> Option<i64> {
        if self.is_int() { Some(self.int_unchecked()) } else { None }
    }

    /// Is this a heap pointer?
    #[inline(always)]
    pub fn is_ptr(self) -> bool {
        self.0 & 7 == 0 && self.0 != 0
    }

    /// A boolean.
    #[inline(always)]
    pub fn bool(b: bool) -> Value {
        if b { Value::TRUE } else { Value::FALSE }
    }

    /// Is this `nil`?
    #[inline(always)]
    pub fn is_nil(self) -> bool {
        self.0 == Value::NIL.0
    }

    /// The word index of a heap object's header.
    #[inline(always)]
    pub(crate) fn index(self) -> usize {
        (self.0 >> 3) as usize
    }

    /// A pointer to the object whose header is at word `index`.
    #[inline(always)]
    pub(crate) fn from_index(index: usize) -> Value {
        Value((index as u64) << 3)
    }
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_int() {
            write!(f, "Int({})", self.int_unchecked())
        } else if *self == Value::NIL {
            write!(f, "nil")
        } else if *self == Value::TRUE {
            write!(f, "true")
        } else if *self == Value::FALSE {
            write!(f, "false")
        } else if self.is_ptr() {
            write!(f, "Obj@{}", self.index())
        } else {
            write!(f, "Value({:#x})", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_int_round_trip() {
        for i in [0, 1, -1, 42, SMALL_INT_MAX, SMALL_INT_MIN] {
            let v = Value::from_i64(i).expect("in range");
            assert!(v.is_int());
            assert_eq!(v.as_int(), Some(i));
            assert!(!v.is_ptr());
        }
        assert!(Value::from_i64(SMALL_INT_MAX + 1).is_none());
        assert!(Value::from_i64(SMALL_INT_MIN - 1).is_none());
    }

    #[test]
    fn specials_are_distinct() {
        assert!(!Value::NIL.is_int() && !Value::NIL.is_ptr());
        assert_ne!(Value::TRUE, Value::FALSE);
        assert!(Value::from_index(5).is_ptr());
    }
}
