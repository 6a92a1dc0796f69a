//! Tagged values.
//!
//! A [`Value`] is one 64-bit word:
//!
//! | low bits | meaning |
//! |---|---|
//! | `...1`   | SmallInteger: the upper 63 bits, signed (range -2^62 .. 2^62-1) |
//! | `..000`  | pointer to a heap object: the word index of its header, shifted left by 3 (never 0) |
//! | `..010`  | special immediates: `nil` (0x02), `true` (0x0A), `false` (0x12) |
//! | `..100`  | immediate double ("SmallFloat", as in Spur): doubles whose binary exponent is
//! |          | within 2^-126..2^128, and +0.0; other doubles (tiny, huge, -0.0, NaN, infinities) are boxed |
//! | `..110`  | reserved |

/// A tagged Smalltalk value. `Copy`, one machine word.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Value(pub(crate) u64);

pub(crate) const FLOAT_TAG: u64 = 4;
/// Exponent 896 (2^-127) moved to the top of a left-rotated double: the low end of the window.
pub(crate) const FLOAT_EXP_OFFSET: u64 = 896 << 53;

/// Smallest SmallInteger.
pub const SMALL_INT_MIN: i64 = -(1 << 62);
/// Largest SmallInteger.
pub const SMALL_INT_MAX: i64 = (1 << 62) - 1;

/// The default value is `nil`, as for every Smalltalk variable.
impl Default for Value {
    fn default() -> Self {
        Value::NIL
    }
}

impl Value {
    /// `nil`.
    pub const NIL: Value = Value(0x02);
    /// `true`.
    pub const TRUE: Value = Value(0x0A);
    /// `false`.
    pub const FALSE: Value = Value(0x12);

    /// An immediate double, if `d` is representable as one.
    #[inline(always)]
    pub fn from_f64(d: f64) -> Option<Value> {
        let bits = d.to_bits();
        if bits == 0 {
            return Some(Value(FLOAT_TAG));
        }
        let rot = bits.rotate_left(1);
        let shifted = rot.wrapping_sub(FLOAT_EXP_OFFSET);
        // The exponent must be within the 8-bit window, and the payload 0 is +0.0 only.
        if shifted < (1 << 61) && shifted != 0 {
            Some(Value((shifted << 3) | FLOAT_TAG))
        } else {
            None
        }
    }

    /// Is this an immediate double?
    #[inline(always)]
    pub fn is_float(self) -> bool {
        self.0 & 7 == FLOAT_TAG
    }

    /// The value of an immediate double (meaningless for other values).
    #[inline(always)]
    pub fn float_unchecked(self) -> f64 {
        let payload = self.0 >> 3;
        if payload == 0 {
            return 0.0;
        }
        f64::from_bits(payload.wrapping_add(FLOAT_EXP_OFFSET).rotate_right(1))
    }

    /// The value whose bits are `bits` (as native code holds values). Every
    /// heap access checks its bounds, so wrong bits make a wrong value, never
    /// an access outside the heap.
    #[inline(always)]
    pub fn from_raw(bits: u64) -> Value {
        Value(bits)
    }

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
        if self.is_int() {
            Some(self.int_unchecked())
        } else {
            None
        }
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
        } else if self.is_float() {
            write!(f, "Float({})", self.float_unchecked())
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
    fn immediate_floats_round_trip() {
        for d in [
            0.0,
            1.0,
            -1.0,
            0.5,
            7.25,
            -2.5e30,
            1e-30,
            123456789.125,
            f64::MAX / 1e300,
        ] {
            let v = Value::from_f64(d).expect("representable");
            assert!(v.is_float() && !v.is_int() && !v.is_ptr());
            assert_eq!(v.float_unchecked().to_bits(), d.to_bits(), "{d}");
        }
        for d in [
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            1e-300,
            f64::MIN_POSITIVE,
        ] {
            assert!(Value::from_f64(d).is_none(), "{d} must be boxed");
        }
    }

    proptest::proptest! {
        #[test]
        fn float_encoding_is_exact(bits in proptest::num::u64::ANY) {
            let d = f64::from_bits(bits);
            if let Some(v) = Value::from_f64(d) {
                proptest::prop_assert_eq!(v.float_unchecked().to_bits(), bits);
            }
        }
    }

    #[test]
    fn specials_are_distinct() {
        assert!(!Value::NIL.is_int() && !Value::NIL.is_ptr());
        assert_ne!(Value::TRUE, Value::FALSE);
        assert!(Value::from_index(5).is_ptr());
    }
}
