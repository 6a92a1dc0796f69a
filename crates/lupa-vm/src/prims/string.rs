//! String and Symbol primitives. Strings are byte strings (UTF-8 text is kept
//! as bytes; `length` and indices count bytes, as in other SOM VMs).

use super::{arg, tryalloc};
use crate::interp::Prim;
use crate::objects::cls;
use crate::vm::Vm;
use lupa_heap::Value;

fn bytes_of(vm: &Vm, v: Value) -> Option<Vec<u8>> {
    if v.is_ptr() && matches!(vm.heap.class_index(v), cls::STRING | cls::SYMBOL) {
        Some(vm.heap.bytes(v).to_vec())
    } else {
        None
    }
}

fn is_text(vm: &Vm, v: Value) -> bool {
    v.is_ptr() && matches!(vm.heap.class_index(v), cls::STRING | cls::SYMBOL)
}

fn concatenate(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let b = arg(vm, argc, 1);
    if !is_text(vm, a) || !is_text(vm, b) {
        return Prim::Fail;
    }
    let mut x = Vec::with_capacity(vm.heap.size(a) + vm.heap.size(b));
    x.extend_from_slice(vm.heap.bytes(a));
    x.extend_from_slice(vm.heap.bytes(b));
    Prim::Ok(tryalloc!(vm.heap.alloc_bytes(cls::STRING, &x)))
}

fn as_symbol(vm: &mut Vm, argc: usize) -> Prim {
    let Some(s) = vm.string_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    Prim::Ok(tryalloc!(vm.symbol(&s)))
}

fn as_string(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let Some(b) = bytes_of(vm, a) else {
        return Prim::Fail;
    };
    Prim::Ok(tryalloc!(vm.heap.alloc_bytes(cls::STRING, &b)))
}

fn hashcode(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    if !is_text(vm, a) {
        return Prim::Fail;
    }
    // FNV-1a, folded to 30 bits (stable across runs and seeds).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in vm.heap.bytes(a) {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    Prim::Ok(Value::small(((h ^ (h >> 30)) & 0x3FFF_FFFF) as i64))
}

fn length(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    if !is_text(vm, a) {
        return Prim::Fail;
    }
    Prim::Ok(Value::small(vm.heap.size(a) as i64))
}

/// Do all characters (decoded as UTF-8) satisfy `pred`? False for the empty string.
fn all_chars(vm: &mut Vm, argc: usize, pred: fn(char) -> bool) -> Prim {
    let a = arg(vm, argc, 0);
    if !is_text(vm, a) {
        return Prim::Fail;
    }
    let s = String::from_utf8_lossy(vm.heap.bytes(a));
    Prim::Ok(Value::bool(!s.is_empty() && s.chars().all(pred)))
}

fn is_white_space(vm: &mut Vm, argc: usize) -> Prim {
    all_chars(vm, argc, char::is_whitespace)
}

fn is_letters(vm: &mut Vm, argc: usize) -> Prim {
    all_chars(vm, argc, char::is_alphabetic)
}

fn is_digits(vm: &mut Vm, argc: usize) -> Prim {
    all_chars(vm, argc, |c| c.is_ascii_digit())
}

fn equals(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let b = arg(vm, argc, 1);
    if a == b {
        return Prim::Ok(Value::TRUE);
    }
    if !is_text(vm, b) {
        return Prim::Ok(Value::FALSE);
    }
    // Two distinct symbols are never equal; a string equals a symbol with the same text.
    let both_symbols =
        vm.heap.class_index(a) == cls::SYMBOL && vm.heap.class_index(b) == cls::SYMBOL;
    if both_symbols {
        return Prim::Ok(Value::FALSE);
    }
    Prim::Ok(Value::bool(vm.heap.bytes(a) == vm.heap.bytes(b)))
}

fn substring(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let (Some(from), Some(to)) = (arg(vm, argc, 1).as_int(), arg(vm, argc, 2).as_int()) else {
        return Prim::Fail;
    };
    if !is_text(vm, a) {
        return Prim::Fail;
    }
    let len = vm.heap.size(a) as i64;
    if to < from {
        return Prim::Ok(tryalloc!(vm.heap.alloc_bytes(cls::STRING, b"")));
    }
    if from < 1 || to > len {
        return Prim::Error(format!(
            "substring {from} to {to} out of bounds for a string of length {len}"
        ));
    }
    let piece = vm.heap.bytes(a)[(from - 1) as usize..to as usize].to_vec();
    Prim::Ok(tryalloc!(vm.heap.alloc_bytes(cls::STRING, &piece)))
}

fn char_at(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let Some(i) = arg(vm, argc, 1).as_int() else {
        return Prim::Fail;
    };
    if !is_text(vm, a) {
        return Prim::Fail;
    }
    let len = vm.heap.size(a);
    if i < 1 || i as usize > len {
        return Prim::Error(format!(
            "index {i} out of bounds for a string of length {len}"
        ));
    }
    let c = [vm.heap.bytes(a)[i as usize - 1]];
    Prim::Ok(tryalloc!(vm.heap.alloc_bytes(cls::STRING, &c)))
}

fn byte_at(vm: &mut Vm, argc: usize) -> Prim {
    let a = arg(vm, argc, 0);
    let Some(i) = arg(vm, argc, 1).as_int() else {
        return Prim::Fail;
    };
    if !is_text(vm, a) {
        return Prim::Fail;
    }
    let b = vm.heap.bytes(a);
    if i < 1 || i as usize > b.len() {
        return Prim::Error(format!(
            "index {i} out of bounds for a string of length {}",
            b.len()
        ));
    }
    Prim::Ok(Value::small(b[i as usize - 1] as i64))
}

fn new_string(vm: &mut Vm, argc: usize) -> Prim {
    let Some(n) = arg(vm, argc, 1).as_int().filter(|n| *n >= 0) else {
        return Prim::Fail;
    };
    let Ok(n) = usize::try_from(n) else {
        return Prim::Fail;
    };
    Prim::Ok(tryalloc!(vm.heap.alloc_bytes(cls::STRING, &vec![b' '; n])))
}

fn as_number(vm: &mut Vm, argc: usize) -> Prim {
    let Some(s) = vm.string_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    let t = s.trim();
    if let Ok(b) = t.parse::<num_bigint::BigInt>() {
        return Prim::Ok(tryalloc!(super::integer::big_to_value(vm, &b)));
    }
    match t.parse::<f64>() {
        Ok(d) if t.chars().any(|c| c.is_ascii_digit()) => Prim::Ok(tryalloc!(vm.new_double(d))),
        _ => Prim::Ok(Value::NIL),
    }
}

fn as_integer(vm: &mut Vm, argc: usize) -> Prim {
    let Some(s) = vm.string_of(arg(vm, argc, 0)) else {
        return Prim::Fail;
    };
    match s.trim().parse::<num_bigint::BigInt>() {
        Ok(b) => Prim::Ok(tryalloc!(super::integer::big_to_value(vm, &b))),
        Err(_) => Prim::Ok(Value::NIL),
    }
}

pub(crate) fn register(vm: &mut Vm) {
    let table: &[(&'static str, crate::objects::PrimFn)] = &[
        ("concatenate:", concatenate),
        ("asSymbol", as_symbol),
        ("asString", as_string),
        ("hashcode", hashcode),
        ("length", length),
        ("isWhiteSpace", is_white_space),
        ("isLetters", is_letters),
        ("isDigits", is_digits),
        ("=", equals),
        ("primSubstringFrom:to:", substring),
        ("charAt:", char_at),
        ("byteAt:", byte_at),
        ("asNumber", as_number),
        ("asInteger", as_integer),
    ];
    for (sel, f) in table {
        vm.register("String", sel, *f);
    }
    vm.register("Symbol", "asString", as_string);
    vm.register("Symbol", "asSymbol", |vm, argc| Prim::Ok(arg(vm, argc, 0)));
    vm.register("String class", "new:", new_string);
}
