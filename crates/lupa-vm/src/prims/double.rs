//! Double primitives: arithmetic, comparisons and functions in IEEE double
//! precision (any number is accepted as argument and converted), rounding to
//! Integers, printing and parsing.

use super::Primitive;
use super::outcome::PrimFailure;
use super::outcome::Reply::Answer;
use super::{Args, PrimResult};
use crate::vm::Vm;
use lupa_heap::Value;

macro_rules! arith {
    ($($name:ident => |$x:ident, $y:ident| $e:expr),* $(,)?) => {
        $(fn $name(vm: &mut Vm, args: Args) -> PrimResult {
            let $x = args.number(vm, 0)?;
            let $y = args.number(vm, 1)?;
            Ok(Answer(vm.new_double($e)?))
        })*
    };
}

macro_rules! compare {
    ($($name:ident => |$x:ident, $y:ident| $e:expr),* $(,)?) => {
        $(fn $name(vm: &mut Vm, args: Args) -> PrimResult {
            let $x = args.number(vm, 0)?;
            let $y = args.number(vm, 1)?;
            Ok(Answer(Value::bool($e)))
        })*
    };
}
macro_rules! unary {
    ($($name:ident => |$x:ident| $e:expr),* $(,)?) => {
        $(fn $name(vm: &mut Vm, args: Args) -> PrimResult {
            let $x = args.number(vm, 0)?;
            Ok(Answer(vm.new_double($e)?))
        })*
    };
}

arith! {
    add => |x, y| x + y,
    sub => |x, y| x - y,
    mul => |x, y| x * y,
    raised => |x, y| x.powf(y),
    // IEEE semantics: dividing by zero answers an infinity or NaN (Are-We-Fast-Yet's
    // CD relies on it).
    div => |x, y| x / y,
    modulo => |x, y| x % y,
    rem => |x, y| x % y,
}
compare! {
    lt => |x, y| x < y,
    le => |x, y| x <= y,
    gt => |x, y| x > y,
    ge => |x, y| x >= y,
    ne => |x, y| x != y,
}
unary! {
    sqrt => |x| x.sqrt(),
    cos => |x| x.cos(),
    sin => |x| x.sin(),
    tan => |x| x.tan(),
    exp => |x| x.exp(),
    ln => |x| x.ln(),
    arctan => |x| x.atan(),
}

fn eq(vm: &mut Vm, args: Args) -> PrimResult {
    let equal = match (args.number(vm, 0), args.number(vm, 1)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    Ok(Answer(Value::bool(equal)))
}

/// The Integer nearest to the integral double `d` (fails for an infinity or NaN).
fn to_integer(vm: &mut Vm, d: f64) -> PrimResult {
    if !d.is_finite() {
        return Err(PrimFailure::Fail);
    }
    if let Some(v) = Value::from_i64(d as i64).filter(|_| d.abs() < 4.0e18) {
        return Ok(Answer(v));
    }
    let b = num_bigint::BigInt::from(d as i128);
    let b = if d.abs() < 1.0e38 {
        b
    } else {
        // Exact conversion of huge doubles through their decimal expansion.
        format!("{d:.0}").parse().unwrap_or(b)
    };
    Ok(Answer(super::integer::big_to_value(vm, &b)?))
}

fn truncated(vm: &mut Vm, args: Args) -> PrimResult {
    let x = args.number(vm, 0)?;
    to_integer(vm, x.trunc())
}

fn round(vm: &mut Vm, args: Args) -> PrimResult {
    let x = args.number(vm, 0)?;
    to_integer(vm, (x + 0.5).floor())
}

fn floor(vm: &mut Vm, args: Args) -> PrimResult {
    let x = args.number(vm, 0)?;
    to_integer(vm, x.floor())
}

fn ceiling(vm: &mut Vm, args: Args) -> PrimResult {
    let x = args.number(vm, 0)?;
    to_integer(vm, x.ceil())
}

/// Print a double the way SOM VMs do: shortest representation that reads back,
/// always with a decimal point or exponent.
pub(crate) fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let s = format!("{d:?}");
    if s.contains('e') {
        // Rust prints 1e16 as "1e16": make it "1.0e16" style like other SOMs.
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') {
            m.to_string()
        } else {
            format!("{m}.0")
        };
        return format!("{m}E{e}");
    }
    s
}

fn as_string(vm: &mut Vm, args: Args) -> PrimResult {
    let x = args.number(vm, 0)?;
    Ok(Answer(vm.new_string(&format_double(x))?))
}

fn positive_infinity(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(vm.new_double(f64::INFINITY)?))
}

fn nan(vm: &mut Vm, _args: Args) -> PrimResult {
    Ok(Answer(vm.new_double(f64::NAN)?))
}

fn from_string(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.string(vm, 1)?;
    match s.trim().parse::<f64>() {
        Ok(d) => Ok(Answer(vm.new_double(d)?)),
        Err(_) => Err(PrimFailure::Error(format!(
            "'{s}' cannot be converted to a Double."
        ))),
    }
}

fn hashcode(vm: &mut Vm, args: Args) -> PrimResult {
    let x = args.number(vm, 0)?;
    let b = x.to_bits();
    Ok(Answer(Value::small(((b ^ (b >> 31)) & 0x3FFF_FFFF) as i64)))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["Double"], "+", add).leaf(),
    Primitive::new(&["Double"], "-", sub).leaf(),
    Primitive::new(&["Double"], "*", mul).leaf(),
    Primitive::new(&["Double"], "//", div).leaf(),
    Primitive::new(&["Double"], "/", div).leaf(),
    Primitive::new(&["Double"], "%", modulo).leaf(),
    Primitive::new(&["Double"], "rem:", rem).leaf(),
    Primitive::new(&["Double"], "raisedTo:", raised).leaf(),
    Primitive::new(&["Double"], "<", lt).leaf(),
    Primitive::new(&["Double"], "<=", le).leaf(),
    Primitive::new(&["Double"], ">", gt).leaf(),
    Primitive::new(&["Double"], ">=", ge).leaf(),
    Primitive::new(&["Double"], "~=", ne).leaf(),
    Primitive::new(&["Double"], "<>", ne).leaf(),
    Primitive::new(&["Double"], "=", eq).leaf(),
    Primitive::new(&["Double"], "sqrt", sqrt).leaf(),
    Primitive::new(&["Double"], "cos", cos).leaf(),
    Primitive::new(&["Double"], "sin", sin).leaf(),
    Primitive::new(&["Double"], "tan", tan).leaf(),
    Primitive::new(&["Double"], "exp", exp).leaf(),
    Primitive::new(&["Double"], "ln", ln).leaf(),
    Primitive::new(&["Double"], "arcTan", arctan).leaf(),
    Primitive::new(&["Double"], "round", round).leaf(),
    Primitive::new(&["Double"], "rounded", round).leaf(),
    Primitive::new(&["Double"], "asInteger", truncated).leaf(),
    Primitive::new(&["Double"], "truncated", truncated).leaf(),
    Primitive::new(&["Double"], "floor", floor).leaf(),
    Primitive::new(&["Double"], "ceiling", ceiling).leaf(),
    Primitive::new(&["Double"], "asString", as_string)
        .allocating()
        .leaf(),
    Primitive::new(&["Double"], "printString", as_string)
        .allocating()
        .leaf(),
    Primitive::new(&["Double"], "hashcode", hashcode).leaf(),
    Primitive::new(&["Double class"], "PositiveInfinity", positive_infinity).leaf(),
    Primitive::new(&["Double class"], "NaN", nan).leaf(),
    Primitive::new(&["Double class"], "fromString:", from_string).leaf(),
];
