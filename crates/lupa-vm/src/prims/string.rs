//! String and Symbol primitives. Strings are byte strings (UTF-8 text is kept
//! as bytes; `length` and indices count bytes, as in other SOM VMs).

use super::Primitive;
use super::outcome::Reply::Answer;
use super::outcome::{Expected, PrimFailure};
use super::{Args, PrimResult};
use crate::objects::cls;
use crate::vm::Vm;
use lupa_heap::Value;

fn is_text(vm: &Vm, v: Value) -> bool {
    v.is_ptr() && matches!(vm.heap.class_index(v), cls::STRING | cls::SYMBOL)
}

/// Argument `i`, checked to be a String or a Symbol.
#[inline]
fn text(vm: &Vm, args: Args, i: usize) -> Result<Value, PrimFailure> {
    let v = args.get(vm, i);
    if is_text(vm, v) {
        Ok(v)
    } else {
        Err(PrimFailure::wrong(i, Expected::String))
    }
}

fn concatenate(vm: &mut Vm, args: Args) -> PrimResult {
    let a = text(vm, args, 0)?;
    let b = text(vm, args, 1)?;
    let mut x = Vec::with_capacity(vm.heap.size(a) + vm.heap.size(b));
    x.extend_from_slice(vm.heap.bytes(a));
    x.extend_from_slice(vm.heap.bytes(b));
    Ok(Answer(vm.string_at_site(&x)?))
}

fn as_symbol(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.string(vm, 0)?;
    if let Some(id) = vm.image.symbols.lookup(&s) {
        return Ok(Answer(vm.image.symbol_object(&mut vm.heap, id)?));
    }
    let bytes = vm.image.symbols.side_bytes_with(s.len());
    vm.check_side_table("the symbol table", bytes, " (symbols are never freed)")?;
    Ok(Answer(vm.image.symbol(&mut vm.heap, &s)?))
}

fn as_string(vm: &mut Vm, args: Args) -> PrimResult {
    let a = text(vm, args, 0)?;
    let b = vm.heap.bytes(a).to_vec();
    Ok(Answer(vm.new_bytes(cls::STRING, &b)?))
}

fn hashcode(vm: &mut Vm, args: Args) -> PrimResult {
    let a = text(vm, args, 0)?;
    // FNV-1a, folded to 30 bits (stable across runs and seeds).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in vm.heap.bytes(a) {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    Ok(Answer(Value::small(((h ^ (h >> 30)) & 0x3FFF_FFFF) as i64)))
}

fn length(vm: &mut Vm, args: Args) -> PrimResult {
    let a = text(vm, args, 0)?;
    Ok(Answer(Value::small(vm.heap.size(a) as i64)))
}

/// Do all characters (decoded as UTF-8) satisfy `pred`? False for the empty string.
fn all_chars(vm: &mut Vm, args: Args, pred: fn(char) -> bool) -> PrimResult {
    let a = text(vm, args, 0)?;
    let s = String::from_utf8_lossy(vm.heap.bytes(a));
    Ok(Answer(Value::bool(!s.is_empty() && s.chars().all(pred))))
}

fn is_white_space(vm: &mut Vm, args: Args) -> PrimResult {
    all_chars(vm, args, char::is_whitespace)
}

fn is_letters(vm: &mut Vm, args: Args) -> PrimResult {
    all_chars(vm, args, char::is_alphabetic)
}

fn is_digits(vm: &mut Vm, args: Args) -> PrimResult {
    all_chars(vm, args, |c| c.is_ascii_digit())
}

fn equals(vm: &mut Vm, args: Args) -> PrimResult {
    let a = args.receiver(vm);
    let b = args.get(vm, 1);
    if a == b {
        return Ok(Answer(Value::TRUE));
    }
    if !is_text(vm, b) {
        return Ok(Answer(Value::FALSE));
    }
    // Two distinct symbols are never equal; a string equals a symbol with the same text.
    let both_symbols =
        vm.heap.class_index(a) == cls::SYMBOL && vm.heap.class_index(b) == cls::SYMBOL;
    if both_symbols {
        return Ok(Answer(Value::FALSE));
    }
    Ok(Answer(Value::bool(vm.heap.bytes(a) == vm.heap.bytes(b))))
}

fn substring(vm: &mut Vm, args: Args) -> PrimResult {
    let from = args.int(vm, 1)?;
    let to = args.int(vm, 2)?;
    let a = text(vm, args, 0)?;
    let len = vm.heap.size(a) as i64;
    if to < from {
        return Ok(Answer(vm.new_bytes(cls::STRING, b"")?));
    }
    if from < 1 || to > len {
        return Err(PrimFailure::Error(format!(
            "substring {from} to {to} out of bounds for a string of length {len}"
        )));
    }
    let piece = vm.heap.bytes(a)[(from - 1) as usize..to as usize].to_vec();
    Ok(Answer(vm.string_at_site(&piece)?))
}

#[cold]
fn out_of_bounds(i: i64, len: usize) -> PrimFailure {
    PrimFailure::Error(format!(
        "index {i} out of bounds for a string of length {len}"
    ))
}

fn char_at(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.int(vm, 1)?;
    let a = text(vm, args, 0)?;
    let len = vm.heap.size(a);
    if i < 1 || i as usize > len {
        return Err(out_of_bounds(i, len));
    }
    let c = [vm.heap.bytes(a)[i as usize - 1]];
    Ok(Answer(vm.new_bytes(cls::STRING, &c)?))
}

fn byte_at(vm: &mut Vm, args: Args) -> PrimResult {
    let i = args.int(vm, 1)?;
    let a = text(vm, args, 0)?;
    let b = vm.heap.bytes(a);
    if i < 1 || i as usize > b.len() {
        return Err(out_of_bounds(i, b.len()));
    }
    Ok(Answer(Value::small(b[i as usize - 1] as i64)))
}

fn new_string(vm: &mut Vm, args: Args) -> PrimResult {
    let n = args.int(vm, 1)?;
    let Ok(n) = usize::try_from(n) else {
        return Err(PrimFailure::Fail);
    };
    vm.heap.check_request(n)?;
    Ok(Answer(vm.new_bytes(cls::STRING, &vec![b' '; n])?))
}

fn as_number(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.string(vm, 0)?;
    let t = s.trim();
    if let Ok(b) = t.parse::<num_bigint::BigInt>() {
        return Ok(Answer(super::integer::big_to_value(vm, &b)?));
    }
    Ok(Answer(match t.parse::<f64>() {
        Ok(d) if t.chars().any(|c| c.is_ascii_digit()) => vm.new_double(d)?,
        _ => Value::NIL,
    }))
}

fn as_integer(vm: &mut Vm, args: Args) -> PrimResult {
    let s = args.string(vm, 0)?;
    Ok(Answer(match s.trim().parse::<num_bigint::BigInt>() {
        Ok(b) => super::integer::big_to_value(vm, &b)?,
        Err(_) => Value::NIL,
    }))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["String"], "concatenate:", concatenate)
        .allocating()
        .leaf(),
    Primitive::new(&["String"], "asSymbol", as_symbol).leaf(),
    Primitive::new(&["String"], "asString", as_string)
        .allocating()
        .leaf(),
    Primitive::new(&["String"], "hashcode", hashcode).leaf(),
    Primitive::new(&["String"], "length", length).leaf(),
    Primitive::new(&["String"], "isWhiteSpace", is_white_space).leaf(),
    Primitive::new(&["String"], "isLetters", is_letters).leaf(),
    Primitive::new(&["String"], "isDigits", is_digits).leaf(),
    Primitive::new(&["String"], "=", equals).leaf(),
    Primitive::new(&["String"], "primSubstringFrom:to:", substring)
        .allocating()
        .leaf(),
    Primitive::new(&["String"], "charAt:", char_at)
        .allocating()
        .leaf(),
    Primitive::new(&["String"], "byteAt:", byte_at).leaf(),
    Primitive::new(&["String"], "asNumber", as_number).leaf(),
    Primitive::new(&["String"], "asInteger", as_integer).leaf(),
    Primitive::new(&["Symbol"], "asString", as_string)
        .allocating()
        .leaf(),
    Primitive::new(&["Symbol"], "asSymbol", |vm, args| {
        Ok(Answer(args.receiver(vm)))
    })
    .leaf(),
    Primitive::new(&["String class"], "new:", new_string)
        .allocating()
        .leaf(),
];
