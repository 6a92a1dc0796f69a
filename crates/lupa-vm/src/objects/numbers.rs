//! Numbers that are heap objects: large Integers (a sign word, then the
//! magnitude in little-endian 64-bit digits) and boxed Doubles, made and read
//! with the heap alone.

use crate::objects::cls;
use lupa_heap::{Heap, OutOfMemory, Value};
use num_bigint::{BigInt, Sign};
use num_traits::ToPrimitive;

/// `b` as a Value: a SmallInteger when it fits, else a new large Integer.
pub(crate) fn int_value(heap: &mut Heap, b: &BigInt) -> Result<Value, OutOfMemory> {
    if let Some(v) = b.to_i64().and_then(Value::from_i64) {
        return Ok(v);
    }
    let (sign, digits) = b.to_u64_digits();
    let mut words = Vec::with_capacity(digits.len() + 1);
    words.push(if sign == Sign::Minus { 1 } else { 0 });
    words.extend_from_slice(&digits);
    heap.alloc_words(cls::INTEGER, &words)
}

/// The integer `v` stands for (a SmallInteger or a large Integer), if it is one.
pub(crate) fn big_of(heap: &Heap, v: Value) -> Option<BigInt> {
    if let Some(i) = v.as_int() {
        return Some(BigInt::from(i));
    }
    if v.is_ptr() && heap.class_index(v) == cls::INTEGER {
        let words = heap.words(v);
        let (sign, mag) = words.split_first()?;
        let mut digits = Vec::with_capacity(mag.len() * 2);
        for w in mag {
            digits.push(*w as u32);
            digits.push((*w >> 32) as u32);
        }
        let b = BigInt::from_slice(if *sign == 0 { Sign::Plus } else { Sign::Minus }, &digits);
        return Some(b);
    }
    None
}

/// `d` as a Value: an immediate double when it fits, else a boxed Double.
#[inline]
pub(crate) fn double_value(heap: &mut Heap, d: f64) -> Result<Value, OutOfMemory> {
    match Value::from_f64(d) {
        Some(v) => Ok(v),
        None => heap.alloc_words(cls::DOUBLE, &[d.to_bits()]),
    }
}
