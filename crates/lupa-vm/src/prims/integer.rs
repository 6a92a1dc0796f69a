//! Integer primitives: SmallIntegers with transparent overflow into large integers.
//!
//! A large integer is a `Words` object of class Integer: word 0 is the sign
//! (0 positive, 1 negative), the following words the magnitude, least
//! significant first. Results are always normalised: a value that fits a
//! SmallInteger is one.

use super::Primitive;
use super::outcome::Reply::Answer;
use super::outcome::{Expected, PrimFailure};
use super::{Args, PrimResult};
use crate::interp::floor_div;
use crate::objects::cls;
use crate::vm::{Vm, VmError};
use lupa_heap::{OutOfMemory, Value};
use num_bigint::BigInt;
use num_integer::Integer as _;
use num_traits::{FromPrimitive, Signed, ToPrimitive, Zero};

/// The BigInt value of an Integer (small or large).
pub(crate) fn big_of(vm: &Vm, v: Value) -> Option<BigInt> {
    crate::objects::numbers::big_of(&vm.heap, v)
}

/// `b` as a Value (a SmallInteger when it fits), published as an allocation.
pub(crate) fn big_to_value(vm: &mut Vm, b: &BigInt) -> Result<Value, OutOfMemory> {
    let bytes = usize::try_from(b.bits() / 8).unwrap_or(usize::MAX);
    vm.allocating(bytes, |h| crate::objects::numbers::int_value(h, b))
}

/// `a + b` for any two numbers (used by inlined loops).
pub(crate) fn add_values(vm: &mut Vm, a: Value, b: Value) -> Result<Value, VmError> {
    match (big_of(vm, a), big_of(vm, b)) {
        (Some(x), Some(y)) => Ok(big_to_value(vm, &(x + y))?),
        _ => Err(vm.fatal("cannot add non-numbers in a loop")),
    }
}

fn is_double(vm: &Vm, v: Value) -> Option<f64> {
    if v.is_float() {
        Some(v.float_unchecked())
    } else if v.is_ptr() && vm.heap.class_index(v) == cls::DOUBLE {
        Some(f64::from_bits(vm.heap.word(v, 0)))
    } else {
        None
    }
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Sar,
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
    Ne,
}

impl Op {
    /// `&`, `bitOr:` and `bitXor:`: defined on Integers only.
    fn bitwise(self) -> bool {
        matches!(self, Op::And | Op::Or | Op::Xor)
    }

    /// For a comparison, its result on `x` and `y`; `None` for arithmetic.
    #[inline(always)]
    fn compare<T: PartialOrd>(self, x: &T, y: &T) -> Option<bool> {
        Some(match self {
            Op::Eq => x == y,
            Op::Ne => x != y,
            Op::Lt => x < y,
            Op::Le => x <= y,
            Op::Gt => x > y,
            Op::Ge => x >= y,
            _ => return None,
        })
    }
}

fn binop(vm: &mut Vm, args: Args, op: Op) -> PrimResult {
    let a = args.receiver(vm);
    let b = args.get(vm, 1);
    if let Op::FloorDiv = op {
        // SOM: Integer>>// is floating-point division. An Integer divided by
        // zero is an error, as with `/` (a Double receiver keeps IEEE
        // semantics: Double>>//).
        let x = args.number(vm, 0)?;
        let y = args.number(vm, 1)?;
        if y == 0.0 {
            return Err(div_zero());
        }
        return Ok(Answer(vm.new_double(x / y)?));
    }
    // Fast path: both small.
    if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
        if let Some(b) = op.compare(&x, &y) {
            return Ok(Answer(Value::bool(b)));
        }
        let r: Option<i64> = match op {
            Op::Add => x.checked_add(y),
            Op::Sub => x.checked_sub(y),
            Op::Mul => x.checked_mul(y),
            Op::Div | Op::FloorDiv => {
                if y == 0 {
                    return Err(div_zero());
                }
                Some(floor_div(x, y))
            }
            Op::Mod => {
                if y == 0 {
                    return Err(div_zero());
                }
                Some(x.mod_floor(&y))
            }
            Op::Rem => {
                if y == 0 {
                    return Err(div_zero());
                }
                Some(x % y)
            }
            Op::And => Some(x & y),
            Op::Or => Some(x | y),
            Op::Xor => Some(x ^ y),
            Op::Shl => {
                if (0..62).contains(&y) && (x.unsigned_abs().leading_zeros() as i64) > y + 2 {
                    Some(x << y)
                } else {
                    None
                }
            }
            Op::Shr => {
                if y == 0 {
                    return Ok(Answer(a));
                }
                if !(0..64).contains(&y) {
                    return if y >= 64 {
                        Ok(Answer(Value::small(0)))
                    } else {
                        Err(PrimFailure::Fail)
                    };
                }
                // SOM's >>> is a logical shift of the 64-bit two's complement value.
                let r = (x as u64) >> y;
                return Ok(Answer(big_to_value(vm, &BigInt::from(r))?));
            }
            Op::Sar => {
                if y < 0 {
                    return Err(PrimFailure::Fail);
                }
                Some(if y >= 63 {
                    if x < 0 { -1 } else { 0 }
                } else {
                    x >> y
                })
            }
            // Compared above.
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => None,
        };
        if let Some(v) = r.and_then(Value::from_i64) {
            return Ok(Answer(v));
        }
    }
    // Double argument: compute in floating point (but the bitwise operations
    // take Integers only).
    if let Some(y) = is_double(vm, b) {
        if op.bitwise() {
            return Err(PrimFailure::wrong(1, Expected::Integer));
        }
        if let (Op::Div, 0.0) = (op, y) {
            return Err(div_zero());
        }
        let x = args.number(vm, 0)?;
        if let Op::Div = op {
            // SOM: Integer>>/ is integer division, also with a Double argument.
            return match num_bigint::BigInt::from_f64((x / y).trunc()) {
                Some(q) => Ok(Answer(big_to_value(vm, &q)?)),
                None => Err(PrimFailure::Error(format!(
                    "{x} / {y} has no integer value"
                ))),
            };
        }
        return double_result(vm, x, y, op);
    }
    let (x, y) = match (big_of(vm, a), big_of(vm, b)) {
        (Some(x), Some(y)) => (x, y),
        (x, _) => {
            return match op {
                Op::Eq => Ok(Answer(Value::FALSE)),
                Op::Ne => Ok(Answer(Value::TRUE)),
                _ if x.is_none() => Err(PrimFailure::wrong(0, Expected::Integer)),
                _ if op.bitwise() => Err(PrimFailure::wrong(1, Expected::Integer)),
                _ => Err(PrimFailure::wrong(1, Expected::Number)),
            };
        }
    };
    if let Some(b) = op.compare(&x, &y) {
        return Ok(Answer(Value::bool(b)));
    }
    // Results that can grow past what the heap may hold fail before the
    // arithmetic runs (it would allocate outside the heap, and take minutes).
    match op {
        Op::Mul => check_result_bits(vm, x.bits() + y.bits())?,
        Op::Shl | Op::Shr | Op::Sar if y.is_negative() && !matches!(op, Op::Sar) => {
            return Err(PrimFailure::error("Negative shift."));
        }
        Op::Shl | Op::Shr | Op::Sar if y.to_u64().is_none() => {
            if matches!(op, Op::Shl) || y.is_negative() {
                return Err(PrimFailure::error("Shift too big."));
            }
            // Shifting right by more than the bits there are.
            let r = if x.is_negative() && matches!(op, Op::Sar) {
                -1
            } else {
                0
            };
            return Ok(Answer(Value::small(r)));
        }
        Op::Shl => check_result_bits(vm, x.bits().saturating_add(y.to_u64().unwrap_or(u64::MAX)))?,
        _ => {}
    }
    let r = match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div | Op::FloorDiv => {
            if y.is_zero() {
                return Err(div_zero());
            }
            x.div_floor(&y)
        }
        Op::Mod => {
            if y.is_zero() {
                return Err(div_zero());
            }
            x.mod_floor(&y)
        }
        Op::Rem => {
            if y.is_zero() {
                return Err(div_zero());
            }
            x % y
        }
        Op::And => x & y,
        Op::Or => x | y,
        Op::Xor => x ^ y,
        Op::Shl => match y.to_usize() {
            Some(s) => x << s,
            None => return Err(PrimFailure::Fail),
        },
        Op::Shr | Op::Sar => match y.to_usize() {
            Some(s) => x >> s,
            None => return Err(PrimFailure::Fail),
        },
        // Compared above.
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => return Err(PrimFailure::Fail),
    };
    Ok(Answer(big_to_value(vm, &r)?))
}

/// The largest Integer a program may build: 1/[`LARGE_INTEGER_SHARE`] of
/// `--max-heap` (256 MB, about 646 million decimal digits, by default).
pub(crate) const LARGE_INTEGER_SHARE: usize = 16;

/// Fail with an out-of-memory error when an Integer of `bits` bits would be
/// larger than [`LARGE_INTEGER_SHARE`] allows.
fn check_result_bits(vm: &Vm, bits: u64) -> Result<(), PrimFailure> {
    let max_bytes = vm.heap.config().max_heap / LARGE_INTEGER_SHARE;
    if bits / 8 > max_bytes as u64 {
        return Err(PrimFailure::Limit(format!(
            "out of memory: the result would have {bits} bits; an Integer may take at most 1/{LARGE_INTEGER_SHARE} of --max-heap ({} MB)",
            max_bytes >> 20
        )));
    }
    Ok(())
}

/// The most decimal digits `printString` writes (one million): converting
/// an Integer to text takes time quadratic in its length, so a larger one is
/// an error instead of minutes of work.
pub(crate) const MAX_PRINTED_DIGITS: u64 = 1_000_000;

fn check_printable(b: &BigInt) -> Result<(), PrimFailure> {
    // log10(2) < 0.30103: an upper bound of the number of digits.
    let digits = b.bits() * 30103 / 100_000 + 1;
    if digits > MAX_PRINTED_DIGITS {
        return Err(PrimFailure::Limit(format!(
            "printString: the Integer has about {digits} digits; Lupa prints at most {MAX_PRINTED_DIGITS}"
        )));
    }
    Ok(())
}

const DIV_ZERO: &str = "Division by zero.";

#[cold]
fn div_zero() -> PrimFailure {
    PrimFailure::error(DIV_ZERO)
}

fn double_result(vm: &mut Vm, x: f64, y: f64, op: Op) -> PrimResult {
    if let Some(b) = op.compare(&x, &y) {
        return Ok(Answer(Value::bool(b)));
    }
    let r = match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div | Op::FloorDiv => x / y,
        Op::Mod => x % y,
        Op::Rem => x % y,
        _ => return Err(PrimFailure::Fail),
    };
    Ok(Answer(vm.new_double(r)?))
}

macro_rules! ops {
    ($($name:ident => $op:expr),* $(,)?) => {
        $(fn $name(vm: &mut Vm, args: Args) -> PrimResult { binop(vm, args, $op) })*
    };
}

ops! {
    add => Op::Add, sub => Op::Sub, mul => Op::Mul, div => Op::Div, fdiv => Op::FloorDiv,
    modulo => Op::Mod, rem => Op::Rem, band => Op::And, bor => Op::Or, bxor => Op::Xor,
    shl => Op::Shl, shr => Op::Shr, sar => Op::Sar, eq => Op::Eq, ne => Op::Ne, lt => Op::Lt, le => Op::Le,
    gt => Op::Gt, ge => Op::Ge,
}

fn as_string(vm: &mut Vm, args: Args) -> PrimResult {
    let b = args.integer(vm, 0)?;
    check_printable(&b)?;
    Ok(Answer(vm.new_string(&b.to_string())?))
}

fn print_string_radix(vm: &mut Vm, args: Args) -> PrimResult {
    let b = args.integer(vm, 0)?;
    let r = args.int(vm, 1)?;
    if !(2..=36).contains(&r) {
        return Err(PrimFailure::Fail);
    }
    check_printable(&b)?;
    Ok(Answer(
        vm.new_string(&b.to_str_radix(r as u32).to_uppercase())?,
    ))
}

/// SOM's `Integer>>sqrt`: an Integer for a perfect square; a Double
/// otherwise, except beyond 2^53, where a Double cannot hold the Integer
/// exactly, so the answer is the Integer square root (rounded down) rather
/// than an approximation of an approximation; a negative receiver is an error
/// ("Domain error.").
fn sqrt(vm: &mut Vm, args: Args) -> PrimResult {
    let b = args.integer(vm, 0)?;
    if b.is_negative() {
        return Err(PrimFailure::error("Domain error."));
    }
    let r = b.sqrt();
    if &r * &r == b || b.bits() > 53 {
        return Ok(Answer(big_to_value(vm, &r)?));
    }
    let d = b.to_f64().unwrap_or(f64::INFINITY).sqrt();
    Ok(Answer(vm.new_double(d)?))
}

/// `Integer>>raisedTo:` with an Integer exponent: the result's size is
/// estimated (`n * log2 |base|` bits) and checked against the Integer limit
/// before any multiplication, so `2 raisedTo: 10000000000` is an
/// out-of-memory error at once, not after squaring up to a 256 MB Integer.
/// A negative exponent answers 1, as the Smalltalk fallback (and SOM) does;
/// the fallback also handles exponents that are not Integers.
fn raised_to(vm: &mut Vm, args: Args) -> PrimResult {
    let base = args.integer(vm, 0)?;
    let Some(n) = big_of(vm, args.get(vm, 1)) else {
        return Err(PrimFailure::Fail);
    };
    if !n.is_positive() {
        return Ok(Answer(Value::small(1)));
    }
    let one = BigInt::from(1);
    if base.is_zero() || base == one {
        return Ok(Answer(big_to_value(vm, &base)?));
    }
    if base == -one {
        return Ok(Answer(Value::small(if n.is_even() { 1 } else { -1 })));
    }
    // log2 |base|, from its top 53 bits: exact enough for a size check.
    let bits = base.bits();
    let shift = bits.saturating_sub(53);
    let top = (base.abs() >> shift).to_f64().unwrap_or(f64::MAX);
    let log2 = top.log2() + shift as f64;
    let estimate = n.to_f64().unwrap_or(f64::INFINITY) * log2;
    let result_bits = if estimate.is_finite() && estimate < u64::MAX as f64 {
        estimate.ceil() as u64
    } else {
        u64::MAX
    };
    check_result_bits(vm, result_bits)?;
    let Some(exponent) = n.to_u64() else {
        return Err(PrimFailure::Fail);
    };
    let r = num_traits::Pow::pow(&base, exponent);
    Ok(Answer(big_to_value(vm, &r)?))
}

fn at_random(vm: &mut Vm, args: Args) -> PrimResult {
    let n = args.int(vm, 0)?;
    if n <= 0 {
        return Err(PrimFailure::Fail);
    }
    let r = (vm.next_random() % n as u64) as i64;
    Ok(Answer(Value::small(r + 1)))
}

fn as_double(vm: &mut Vm, args: Args) -> PrimResult {
    let d = args.number(vm, 0)?;
    Ok(Answer(vm.new_double(d)?))
}

/// The low 32 bits of an Integer (two's complement).
fn low_32_bits(b: &BigInt) -> u32 {
    (b & BigInt::from(0xFFFF_FFFFu64)).to_u64().unwrap_or(0) as u32
}

fn as_32_signed(vm: &mut Vm, args: Args) -> PrimResult {
    let b = args.integer(vm, 0)?;
    Ok(Answer(Value::small(low_32_bits(&b) as i32 as i64)))
}

fn as_32_unsigned(vm: &mut Vm, args: Args) -> PrimResult {
    let b = args.integer(vm, 0)?;
    Ok(Answer(Value::small(low_32_bits(&b) as i64)))
}

fn from_string(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.string(vm, 1)?;
    match s.trim().parse::<BigInt>() {
        Ok(b) => Ok(Answer(big_to_value(vm, &b)?)),
        Err(_) => Err(PrimFailure::Error(format!(
            "'{s}' cannot be converted to an Integer."
        ))),
    }
}

fn as_character_string(vm: &mut Vm, args: Args) -> PrimResult {
    let Some(c) = u32::try_from(args.int(vm, 0)?)
        .ok()
        .and_then(char::from_u32)
    else {
        return Err(PrimFailure::Fail);
    };
    Ok(Answer(vm.new_string(&c.to_string())?))
}

fn hashcode(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    if a.is_int() {
        return Ok(Answer(a));
    }
    let b = args.integer(vm, 0)?;
    let h = b.iter_u64_digits().fold(0u64, |h, d| h.rotate_left(7) ^ d) & 0x3FFF_FFFF;
    Ok(Answer(Value::small(h as i64)))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Integer"], "+", add).leaf(),
    Primitive::new(&["Integer"], "-", sub).leaf(),
    Primitive::new(&["Integer"], "*", mul).leaf(),
    Primitive::new(&["Integer"], "/", div).leaf(),
    Primitive::new(&["Integer"], "//", fdiv).leaf(),
    Primitive::new(&["Integer"], "%", modulo).leaf(),
    Primitive::new(&["Integer"], "\\\\", modulo).leaf(),
    Primitive::new(&["Integer"], "rem:", rem).leaf(),
    Primitive::new(&["Integer"], "&", band).leaf(),
    Primitive::new(&["Integer"], "bitAnd:", band).leaf(),
    Primitive::new(&["Integer"], "bitOr:", bor).leaf(),
    Primitive::new(&["Integer"], "|", bor).leaf(),
    Primitive::new(&["Integer"], "bitXor:", bxor).leaf(),
    Primitive::new(&["Integer"], "<<", shl).leaf(),
    Primitive::new(&["Integer"], ">>>", shr).leaf(),
    Primitive::new(&["Integer"], ">>", sar).leaf(),
    Primitive::new(&["Integer"], "=", eq).leaf(),
    Primitive::new(&["Integer"], "~=", ne).leaf(),
    Primitive::new(&["Integer"], "<>", ne).leaf(),
    Primitive::new(&["Integer"], "<", lt).leaf(),
    Primitive::new(&["Integer"], "<=", le).leaf(),
    Primitive::new(&["Integer"], ">", gt).leaf(),
    Primitive::new(&["Integer"], ">=", ge).leaf(),
    Primitive::new(&["Integer"], "asString", as_string)
        .allocating()
        .leaf(),
    Primitive::new(&["Integer"], "printString", as_string)
        .allocating()
        .leaf(),
    Primitive::new(&["Integer"], "printString:", print_string_radix)
        .allocating()
        .leaf(),
    Primitive::new(&["Integer"], "sqrt", sqrt).leaf(),
    Primitive::new(&["Integer"], "raisedTo:", raised_to).leaf(),
    Primitive::new(&["Integer"], "atRandom", at_random).leaf(),
    Primitive::new(&["Integer"], "asDouble", as_double).leaf(),
    Primitive::new(&["Integer"], "as32BitSignedValue", as_32_signed).leaf(),
    Primitive::new(&["Integer"], "as32BitUnsignedValue", as_32_unsigned).leaf(),
    Primitive::new(&["Integer"], "asCharacterString", as_character_string)
        .allocating()
        .leaf(),
    Primitive::new(&["Integer"], "hashcode", hashcode).leaf(),
    Primitive::new(&["Integer class"], "fromString:", from_string).leaf(),
];
