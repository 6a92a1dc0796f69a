//! Double primitives.

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::vm::Vm;
use lupa_heap::Value;

fn recv(vm: &Vm, argc: usize) -> Option<f64> {
    vm.number_as_f64(arg(vm, argc, 0))
}

fn both(vm: &Vm, argc: usize) -> Option<(f64, f64)> {
    Some((
        vm.number_as_f64(arg(vm, argc, 0))?,
        vm.number_as_f64(arg(vm, argc, 1))?,
    ))
}

macro_rules! arith {
    ($($name:ident => |$x:ident, $y:ident| $e:expr),* $(,)?) => {
        $(fn $name(vm: &mut Vm, argc: usize) -> Prim {
            let Some(($x, $y)) = both(vm, argc) else { return Prim::Fail };
            Prim::Ok(tryalloc!(vm.new_double($e)))
        })*
    };
}

macro_rules! compare {
    ($($name:ident => |$x:ident, $y:ident| $e:expr),* $(,)?) => {
        $(fn $name(vm: &mut Vm, argc: usize) -> Prim {
            match both(vm, argc) {
                Some(($x, $y)) => Prim::Ok(Value::bool($e)),
                None => Prim::Fail,
            }
        })*
    };
}
macro_rules! unary {
    ($($name:ident => |$x:ident| $e:expr),* $(,)?) => {
        $(fn $name(vm: &mut Vm, argc: usize) -> Prim {
            let Some($x) = recv(vm, argc) else { return Prim::Fail };
            Prim::Ok(tryalloc!(vm.new_double($e)))
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

fn eq(vm: &mut Vm, argc: usize) -> Prim {
    Prim::Ok(Value::bool(
        matches!(both(vm, argc), Some((x, y)) if x == y),
    ))
}

fn to_integer(vm: &mut Vm, d: f64) -> Prim {
    if !d.is_finite() {
        return Prim::Fail;
    }
    if let Some(v) = Value::from_i64(d as i64).filter(|_| d.abs() < 4.0e18) {
        return Prim::Ok(v);
    }
    let b = num_bigint::BigInt::from(d as i128);
    let b = if d.abs() < 1.0e38 {
        b
    } else {
        // Exact conversion of huge doubles through their decimal expansion.
        format!("{d:.0}").parse().unwrap_or(b)
    };
    Prim::Ok(tryalloc!(super::integer::big_to_value(vm, &b)))
}

fn truncated(vm: &mut Vm, argc: usize) -> Prim {
    let Some(x) = recv(vm, argc) else {
        return Prim::Fail;
    };
    to_integer(vm, x.trunc())
}

fn round(vm: &mut Vm, argc: usize) -> Prim {
    let Some(x) = recv(vm, argc) else {
        return Prim::Fail;
    };
    to_integer(vm, (x + 0.5).floor())
}

fn floor(vm: &mut Vm, argc: usize) -> Prim {
    let Some(x) = recv(vm, argc) else {
        return Prim::Fail;
    };
    to_integer(vm, x.floor())
}

fn ceiling(vm: &mut Vm, argc: usize) -> Prim {
    let Some(x) = recv(vm, argc) else {
        return Prim::Fail;
    };
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

fn as_string(vm: &mut Vm, argc: usize) -> Prim {
    let Some(x) = recv(vm, argc) else {
        return Prim::Fail;
    };
    Prim::Ok(tryalloc!(vm.new_string(&format_double(x))))
}

fn positive_infinity(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(tryalloc!(vm.new_double(f64::INFINITY)))
}

fn nan(vm: &mut Vm, _argc: usize) -> Prim {
    Prim::Ok(tryalloc!(vm.new_double(f64::NAN)))
}

fn from_string(vm: &mut Vm, argc: usize) -> Prim {
    let Some(s) = vm.string_of(arg(vm, argc, 1)) else {
        return Prim::Fail;
    };
    match s.trim().parse::<f64>() {
        Ok(d) => Prim::Ok(tryalloc!(vm.new_double(d))),
        Err(_) => Prim::Ok(Value::NIL),
    }
}

fn hashcode(vm: &mut Vm, argc: usize) -> Prim {
    let Some(x) = recv(vm, argc) else {
        return Prim::Fail;
    };
    let b = x.to_bits();
    Prim::Ok(Value::small(((b ^ (b >> 31)) & 0x3FFF_FFFF) as i64))
}

pub(crate) fn register(vm: &mut Vm) {
    let table: &[(&'static str, crate::objects::PrimFn)] = &[
        ("+", add),
        ("-", sub),
        ("*", mul),
        ("//", div),
        ("/", div),
        ("%", modulo),
        ("rem:", rem),
        ("raisedTo:", raised),
        ("<", lt),
        ("<=", le),
        (">", gt),
        (">=", ge),
        ("~=", ne),
        ("<>", ne),
        ("=", eq),
        ("sqrt", sqrt),
        ("cos", cos),
        ("sin", sin),
        ("tan", tan),
        ("exp", exp),
        ("ln", ln),
        ("arcTan", arctan),
        ("round", round),
        ("rounded", round),
        ("asInteger", truncated),
        ("truncated", truncated),
        ("floor", floor),
        ("ceiling", ceiling),
        ("asString", as_string),
        ("printString", as_string),
        ("hashcode", hashcode),
    ];
    for (sel, f) in table {
        vm.register("Double", sel, *f);
    }
    vm.register("Double class", "PositiveInfinity", positive_infinity);
    vm.register("Double class", "NaN", nan);
    vm.register("Double class", "fromString:", from_string);
}
