//! Short branches: Cranelift's x86-64 backend encodes every jump and
//! conditional branch with a 32-bit displacement (`e9 rel32`, `0f 8x
//! rel32`: five and six bytes), although most of a function's branches
//! reach a few dozen bytes away, where the two-byte forms (`eb rel8`, `7x
//! rel8`) do. This pass re-encodes a function's machine code with the short
//! form wherever it reaches, as an assembler's branch relaxation does: the
//! same instructions in the same order, so the code runs exactly the same
//! instructions.
//!
//! A few instructions take a shorter encoding of the same effect too
//! ([`Shrink`]: an immediate that fits in 8 bits, a `test` of low bits,
//! a register zeroed), where Cranelift picks the long one; and an overflow
//! test (`seto`, `test`, `jne`) is the branch on the flag (`jo`), two
//! instructions fewer.
//!
//! It decodes the instructions' lengths (the subset of x86-64 Cranelift
//! emits here: [`decode`]), and gives up, keeping the code as it is, on
//! anything it does not know. Code may hold data: constants after the last
//! instruction, read by RIP-relative operands (whose displacements are
//! rewritten: the constants move with the code's end, at the same
//! alignment), and the resume dispatch's jump table (`br_table`: Cranelift
//! emits it right after its indirect jump, as 32-bit offsets from the
//! table's start, rewritten too; its entries counted by codegen). The pc
//! map's ranges are moved with the instructions they cover.
//!
//! A copy of the pinned register (r15, which holds the context: codegen's
//! `Gen::ctx`) into a register that the next instruction uses only as its
//! address's base is folded into that instruction (`mov %r15,%rax; mov
//! 0x10(%rax),%rcx` is `mov 0x10(%r15),%rcx`): where that instruction
//! overwrites the register anyway, always ([`on_pinned`]); otherwise when
//! codegen says every copy has one use (`pinned_once`), which the next
//! instruction then is.
//!
//! Two more sequences of codegen's take one instruction: a counter of the
//! context that codegen only increments (`NativeCtx::sends`, `inlined`:
//! `mov d(%r15),%r; add $1,%r; mov %r,d(%r15)`) is `addq $1,d(%r15)`, and
//! the poll's sign test of the new count that follows (`test %r,%r;
//! jl/jge`) the branch on the flag the `add` set (`js/jns`); the caller's
//! r15 a function keeps in its stack slot is stored and put back without a
//! register copy (`mov %r15,d(%rsp)`, and `mov d(%rsp),%r15` in an
//! epilogue); and a send site's probe of an inline-cache entry codegen
//! names (`mov (%a),%b; cmp %b,%c`, the word's one use) compares the word
//! in memory (`cmp (%a),%c`: Cranelift folds no load into a comparison
//! fused with its branch).
//!
//! Shrinking a branch only brings others' targets closer, so the pass
//! starts with every branch long and shortens those that reach until none
//! more does (a fixed point, reached in a few rounds).

use std::borrow::Cow;

/// What relaxation needs of one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Neither a branch nor RIP-relative: copied as it is.
    Plain,
    /// `jmp rel32` (`e9`) or `jmp rel8` (`eb`).
    Jmp { short: bool },
    /// `jcc rel32` (`0f 80+cc`) or `jcc rel8` (`70+cc`).
    Jcc { cc: u8, short: bool },
    /// A RIP-relative memory operand whose 32-bit displacement is at this
    /// offset in the instruction.
    RipRel { disp_at: u8 },
    /// `jmp *reg` (`ff /4`, a register operand): the indirect jump of a
    /// `br_table`.
    JmpReg,
    /// An instruction with a shorter encoding of the same effect (result
    /// and flags), its opcode at `op_at` and its length then `len`
    /// ([`Shrink`]).
    Narrow { op_at: u8, how: Shrink, len: u8 },
}

/// The shorter encodings [`Kind::Narrow`] re-encodes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shrink {
    /// `81 /r imm32` to `83 /r imm8` (an arithmetic instruction's
    /// immediate that fits in 8 bits, which `83` sign-extends the same
    /// way): Cranelift encodes `iadd_imm` and comparisons so.
    Imm8,
    /// `test r/m, imm32` (`f7 /0`) to `test r/m8, imm8` (`f6 /0`) when the
    /// immediate is within 0..=0x7F: the same flags (the result's high
    /// bits are zero either way), the same low byte tested.
    Test,
    /// `test rax, imm32` (`a9`) to `test al, imm8` (`a8`), likewise.
    TestAl,
    /// `xor r64, r64` of a register with itself to the 32-bit `xor`
    /// (which zeroes the whole register, with the same flags).
    Xor,
}

/// One decoded instruction: its length and what relaxation needs of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Insn {
    len: usize,
    kind: Kind,
}

/// [`ONE_BYTE`]: a ModRM byte follows the opcode.
const MODRM: u8 = 1;
/// [`ONE_BYTE`]: an 8-bit immediate ends the instruction.
const IMM_8: u8 = 2;
/// [`ONE_BYTE`]: a 32-bit immediate (16-bit with `66`) ends it.
const IMM_Z: u8 = 6;
/// [`ONE_BYTE`]: not one of the plain forms ([`decode`] looks further).
const OTHER: u8 = 0xFF;

/// The form of each one-byte opcode of fixed form (ModRM, immediate): a
/// table, as most instructions are of these (the decoder runs over every
/// instruction compiled).
const ONE_BYTE: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut op = 0;
    while op < 256 {
        let o = op as u8;
        t[op] = match o {
            0x26 | 0x27 | 0x2E | 0x2F | 0x36 | 0x37 | 0x3E | 0x3F | 0x0F => OTHER,
            0x00..=0x3F => match o & 7 {
                0..=3 => MODRM,
                4 => IMM_8,
                5 => IMM_Z,
                _ => OTHER,
            },
            0x50..=0x5F | 0x90..=0x99 | 0xC3 | 0xC9 | 0xCC => 0,
            0x63 | 0x84..=0x8B | 0x8D | 0x8F | 0xD0..=0xD3 | 0xFE => MODRM,
            0x68 | 0xA9 => IMM_Z,
            0x6A | 0xA8 | 0xB0..=0xB7 => IMM_8,
            0x69 | 0x81 | 0xC7 => MODRM | IMM_Z,
            0x6B | 0x80 | 0x83 | 0xC0 | 0xC1 | 0xC6 => MODRM | IMM_8,
            _ => OTHER,
        };
        op += 1;
    }
    t
};

/// The instruction at the start of `code`, or `None` when it is not one
/// of those this pass knows.
fn decode(code: &[u8]) -> Option<Insn> {
    let insn = decode_plain(code)?;
    if insn.kind != Kind::Plain {
        return Some(insn);
    }
    // One REX prefix at most, no other: the forms [`Shrink`] takes.
    let rex = code[0] & 0xF0 == 0x40;
    let op_at = usize::from(rex);
    let op = code[op_at];
    let imm = |n: usize| read32(code, insn.len - n);
    let how = match op {
        0x81 if i8::try_from(imm(4)).is_ok() => Shrink::Imm8,
        0xF7 if (code[op_at + 1] >> 3) & 7 == 0 && (0..=0x7F).contains(&imm(4)) => Shrink::Test,
        0xA9 if (0..=0x7F).contains(&imm(4)) => Shrink::TestAl,
        0x31 | 0x33
            if rex && code[0] == 0x48 && {
                let m = code[op_at + 1];
                m >> 6 == 3 && (m >> 3) & 7 == m & 7
            } =>
        {
            Shrink::Xor
        }
        _ => return Some(insn),
    };
    let len = match how {
        Shrink::Imm8 => insn.len - 3,
        Shrink::Test => {
            insn.len - usize::from(rex) + usize::from(test_rex(code, op_at).is_some()) - 3
        }
        Shrink::TestAl => 2,
        Shrink::Xor => 2,
    };
    Some(Insn {
        len: insn.len,
        kind: Kind::Narrow {
            op_at: u8::try_from(op_at).ok()?,
            how,
            len: u8::try_from(len).ok()?,
        },
    })
}

/// The REX prefix of the 8-bit `test` a `test r/m, imm32` (`bytes`, its
/// opcode at `op_at`) becomes, if it needs one: the old one's register
/// extensions (W cleared) when it names r8..r15, and a bare one for a
/// register 4..7 (without it, `f6` names ah..bh). A REX that was only W
/// is dropped (a byte fewer: `test $1,%cl` rather than `rex test`).
fn test_rex(bytes: &[u8], op_at: usize) -> Option<u8> {
    let m = bytes[op_at + 1];
    let ext = if op_at == 1 { bytes[0] & 0x07 } else { 0 };
    (ext != 0 || (m >> 6 == 3 && m & 4 != 0)).then_some(0x40 | ext)
}

/// The re-encoding of `bytes`, an instruction [`decode`] found
/// [`Kind::Narrow`], appended to `out`.
fn narrow_into(out: &mut Vec<u8>, bytes: &[u8], op_at: usize, how: Shrink) {
    let n = bytes.len();
    match how {
        Shrink::Imm8 => {
            out.extend_from_slice(&bytes[..op_at]);
            out.push(0x83);
            out.extend_from_slice(&bytes[op_at + 1..n - 4]);
            out.push(bytes[n - 4]);
        }
        Shrink::Test => {
            out.extend(test_rex(bytes, op_at));
            out.push(0xF6);
            out.extend_from_slice(&bytes[op_at + 1..n - 4]);
            out.push(bytes[n - 4]);
        }
        Shrink::TestAl => out.extend_from_slice(&[0xA8, bytes[n - 4]]),
        Shrink::Xor => out.extend_from_slice(&bytes[op_at..]),
    }
}

/// Condition codes of `jcc` (`70+cc`, `0f 80+cc`).
const CC_O: u8 = 0;
const CC_NO: u8 = 1;
const CC_E: u8 = 4;
const CC_NE: u8 = 5;

const CC_S: u8 = 8;
const CC_NS: u8 = 9;
const CC_L: u8 = 0xC;
const CC_GE: u8 = 0xD;

/// The register a ModRM byte's `reg` field names, with its REX prefix's R bit.
fn reg_field(rex: u8, m: u8) -> u8 {
    ((rex & 4) << 1) | ((m >> 3) & 7)
}

/// The register a ModRM byte's `rm` field (or a SIB byte's base) names,
/// with its REX prefix's B bit.
fn rm_field(rex: u8, m: u8) -> u8 {
    ((rex & 1) << 3) | (m & 7)
}

/// `(r, d)` of the 64-bit move `op` (`0x8B`: `mov d(%r15),%r`; `0x89`: `mov
/// %r,d(%r15)`) with an 8-bit displacement.
fn moved_at_pinned(bytes: &[u8], op: u8) -> Option<(u8, u8)> {
    match *bytes {
        [rex, o, m, d] if o == op && rex & 0xFB == 0x49 && m & 0xC7 == 0x47 => {
            Some((reg_field(rex, m), d))
        }
        _ => None,
    }
}

/// `(r, d)` of `mov d(%r15),%r` (64-bit, an 8-bit displacement).
fn load_from_pinned(bytes: &[u8]) -> Option<(u8, u8)> {
    moved_at_pinned(bytes, 0x8B)
}

/// `(r, d)` of `mov %r,d(%r15)` (64-bit, an 8-bit displacement).
fn store_to_pinned(bytes: &[u8]) -> Option<(u8, u8)> {
    moved_at_pinned(bytes, 0x89)
}

/// The register `add $1,%r` (64-bit, `83 /0 ib`) adds to.
fn add_one(bytes: &[u8]) -> Option<u8> {
    match *bytes {
        [rex, 0x83, m, 1] if rex & 0xFE == 0x48 && m & 0xF8 == 0xC0 => Some(rm_field(rex, m)),
        _ => None,
    }
}

/// The bytes piece `k` has now: folded, shortened ([`Kind::Narrow`]) or as
/// it is (none for a branch or a table).
fn now_bytes<'a>(
    folded: &'a [Option<Vec<u8>>],
    pieces: &[Piece],
    code: &'a [u8],
    k: usize,
) -> Cow<'a, [u8]> {
    if let Some(b) = &folded[k] {
        return Cow::Borrowed(b);
    }
    match pieces[k] {
        Piece::Insn {
            at,
            insn:
                Insn {
                    len,
                    kind: Kind::Narrow { op_at, how, .. },
                },
        } => {
            let mut b = Vec::with_capacity(len);
            narrow_into(&mut b, &code[at..at + len], usize::from(op_at), how);
            Cow::Owned(b)
        }
        Piece::Insn { at, insn } if insn.kind == Kind::Plain => {
            Cow::Borrowed(&code[at..at + insn.len])
        }
        _ => Cow::Borrowed(&[]),
    }
}

/// The register `mov $1,%r` (32-bit, `b8+r id`) sets.
fn mov_one(bytes: &[u8]) -> Option<u8> {
    match *bytes {
        [op, 1, 0, 0, 0] if op & 0xF8 == 0xB8 => Some(op & 7),
        [0x41, op, 1, 0, 0, 0] if op & 0xF8 == 0xB8 => Some(8 | (op & 7)),
        _ => None,
    }
}

/// `(r, base, d)` of `add d(%base),%r` (64-bit, an 8-bit displacement, no
/// index).
fn add_from(bytes: &[u8]) -> Option<(u8, u8, u8)> {
    match *bytes {
        [rex, 0x03, m, d] if rex & 0xFA == 0x48 && m >> 6 == 1 && m & 7 != 4 => {
            Some((reg_field(rex, m), rm_field(rex, m), d))
        }
        _ => None,
    }
}

/// `(r, base)` of `mov (%base),%r` (64-bit, no displacement, no index).
fn load_via(bytes: &[u8]) -> Option<(u8, u8)> {
    match *bytes {
        [rex, 0x8B, m] if rex & 0xFA == 0x48 && m >> 6 == 0 && m & 7 != 4 && m & 7 != 5 => {
            Some((reg_field(rex, m), rm_field(rex, m)))
        }
        _ => None,
    }
}

/// The two registers `cmp` (64-bit, `39 /r` or `3b /r`, register
/// operands) compares.
fn compared(bytes: &[u8]) -> Option<(u8, u8)> {
    match *bytes {
        [rex, 0x39 | 0x3B, m] if rex & 0xFA == 0x48 && m >> 6 == 3 => {
            Some((reg_field(rex, m), rm_field(rex, m)))
        }
        _ => None,
    }
}

/// The register `test %r,%r` (64-bit) tests.
fn tested_self(bytes: &[u8]) -> Option<u8> {
    match *bytes {
        [rex, 0x85, m] if rex & 0xFA == 0x48 && m >> 6 == 3 => {
            let reg = reg_field(rex, m);
            let rm = rm_field(rex, m);
            (reg == rm).then_some(reg)
        }
        _ => None,
    }
}

/// Whether `seto` and `test` are `seto r8` and `test r8,r8` of the same
/// byte register (the same REX presence: without one, 4..7 name ah..bh).
fn seto_tested(seto: &[u8], test: &[u8]) -> bool {
    let rex = |b: &[u8]| -> (Option<u8>, usize) {
        match b.first() {
            Some(&r) if r & 0xF0 == 0x40 => (Some(r), 1),
            _ => (None, 0),
        }
    };
    let (ra, a) = rex(seto);
    let (rb, b) = rex(test);
    if ra.is_some() != rb.is_some() {
        return false;
    }
    let (ra, rb) = (ra.unwrap_or(0), rb.unwrap_or(0));
    match (&seto[a..], &test[b..]) {
        ([0x0F, 0x90, m], [0x84, t]) if m >> 3 == 0x18 && t >> 6 == 3 => {
            let reg = rm_field(ra, *m);
            reg_field(rb, *t) == reg && rm_field(rb, *t) == reg
        }
        _ => false,
    }
}

/// The register (0..15) `bytes` copies the pinned register (r15) to, if it
/// is `mov %r15, %r` (64-bit: `89 /r` with r15 as its source, or `8b /r`
/// with r15 as its operand), and not to r15 or rsp.
fn pinned_copy(bytes: &[u8]) -> Option<u8> {
    let r = match *bytes {
        [rex, 0x89, m] if rex & 0xFE == 0x4C && m >> 3 == 0x1F => rm_field(rex, m),
        [rex, 0x8B, m] if rex & 0xFB == 0x49 && m >> 6 == 3 && m & 7 == 7 => reg_field(rex, m),
        _ => return None,
    };
    (r != 15 && r != 4).then_some(r)
}

/// What the ModRM `reg` field of an opcode [`on_pinned`] takes names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RegField {
    /// A general register the instruction reads (or reads and writes).
    Read,
    /// A general register the instruction writes whole, without reading it
    /// (`mov`, `lea`, `movsxd`, `movzx`/`movsx` into 32 or 64 bits).
    Written,
    /// No register: an extension of the opcode.
    Opcode,
}

/// `bytes`, an instruction that follows a copy of the pinned register
/// into register `r` ([`pinned_copy`]), with r15 as its address's base
/// instead of `r`, if `r` is that base and read nowhere else in it, and
/// either the instruction overwrites `r` or `once` (every copy has one
/// use: this one). Only general-purpose instructions of known form (no
/// VEX, no SSE), and a REX prefix added where there was none only where
/// it changes no operand (no 8-bit register operand).
fn on_pinned(bytes: &[u8], r: u8, once: bool) -> Option<Vec<u8>> {
    let mut i = 0;
    let mut opsize16 = false;
    while let Some(&p) = bytes.get(i) {
        match p {
            0x66 => opsize16 = true,
            0xF2 | 0xF3 => {}
            _ => break,
        }
        i += 1;
    }
    let pre = i;
    let rex = match bytes.get(i) {
        Some(&x) if x & 0xF0 == 0x40 => {
            i += 1;
            Some(x)
        }
        _ => None,
    };
    let op = *bytes.get(i)?;
    let field = match op {
        0x01 | 0x03 | 0x09 | 0x0B | 0x11 | 0x13 | 0x19 | 0x1B | 0x21 | 0x23 | 0x29 | 0x2B
        | 0x31 | 0x33 | 0x39 | 0x3B | 0x85 | 0x87 | 0x89 => RegField::Read,
        // 8-bit register operands: their meaning changes with a REX prefix.
        0x00 | 0x02 | 0x08 | 0x0A | 0x20 | 0x22 | 0x28 | 0x2A | 0x30 | 0x32 | 0x38 | 0x3A
        | 0x84 | 0x86 | 0x88 | 0x8A
            if rex.is_some() =>
        {
            RegField::Read
        }
        0x8B | 0x8D | 0x63 => RegField::Written,
        0x80 | 0x81 | 0x83 | 0xC0 | 0xC1 | 0xC6 | 0xC7 | 0xD0..=0xD3 | 0xF6 | 0xF7 | 0xFF => {
            RegField::Opcode
        }
        0x0F => match *bytes.get(i + 1)? {
            0xB6 | 0xB7 | 0xBE | 0xBF => RegField::Written,
            _ => return None,
        },
        _ => return None,
    };
    let op_len = if op == 0x0F { 2 } else { 1 };
    let at = i + op_len;
    let m = *bytes.get(at)?;
    let (md, rm) = (m >> 6, m & 7);
    if md == 3 {
        return None;
    }
    let x = rex.unwrap_or(0);
    let reg = reg_field(x, m);
    let overwritten = match field {
        RegField::Read if reg == r => return None,
        RegField::Written => reg == r && !opsize16,
        _ => false,
    };
    if !(overwritten || once) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() + 1);
    out.extend_from_slice(&bytes[..pre]);
    out.push(x | 0x41);
    out.extend_from_slice(&bytes[i..at]);
    if rm == 4 {
        let sib = *bytes.get(at + 1)?;
        let base = rm_field(x, sib);
        let index = ((x & 2) << 2) | ((sib >> 3) & 7);
        if (md == 0 && sib & 7 == 5) || base != r || index == r {
            return None;
        }
        out.push(m);
        out.push(sib | 7);
        out.extend_from_slice(&bytes[at + 2..]);
    } else {
        if (md == 0 && rm == 5) || rm_field(x, m) != r {
            return None;
        }
        out.push(m | 7);
        out.extend_from_slice(&bytes[at + 1..]);
    }
    Some(out)
}

/// `bytes`, a store of register `r` (`mov %r,d(%rsp)`, 64-bit, an 8-bit
/// displacement) that follows a copy of the pinned register into `r`, as
/// the store of r15 itself, when every copy has one use (`once`: this
/// one). A function's entry keeps its caller's r15 so.
fn pinned_stored(bytes: &[u8], r: u8, once: bool) -> Option<Vec<u8>> {
    match *bytes {
        [rex, 0x89, m, 0x24, d]
            if once && rex & 0xFB == 0x48 && m & 0xC7 == 0x44 && reg_field(rex, m) == r =>
        {
            Some(vec![0x4C, 0x89, 0x7C, 0x24, d])
        }
        _ => None,
    }
}

/// The register `r` of `mov %r,%r15` (64-bit), a write of the pinned
/// register (only codegen's `set_pinned_reg` writes it: Cranelift never
/// allocates it).
fn pinned_set(bytes: &[u8]) -> Option<u8> {
    match *bytes {
        [rex, 0x89, m] if rex & 0xFB == 0x49 && m >> 6 == 3 && m & 7 == 7 => {
            Some(reg_field(rex, m))
        }
        _ => None,
    }
}

/// `(r, d)` of `mov d(%rsp),%r` (64-bit, an 8-bit displacement).
fn load_from_stack(bytes: &[u8]) -> Option<(u8, u8)> {
    match *bytes {
        [rex, 0x8B, m, 0x24, d] if rex & 0xFB == 0x48 && m & 0xC7 == 0x44 => {
            Some((reg_field(rex, m), d))
        }
        _ => None,
    }
}

/// Whether `bytes` is an instruction of an epilogue that reads no general
/// register but `rsp` and `rbp`: a register restored from the stack (`mov
/// d(%rsp),%r`), `add $n,%rsp`, `mov %rbp,%rsp`, `pop %rbp`, `ret`.
fn epilogue(bytes: &[u8]) -> bool {
    load_from_stack(bytes).is_some()
        || matches!(
            *bytes,
            [0x48, 0x83, 0xC4, _]
                | [0x48, 0x81, 0xC4, _, _, _, _]
                | [0x48, 0x89, 0xEC]
                | [0x5D]
                | [0xC3]
        )
}

/// The constant of `movabs $c, %r` (`REX.W b8+r imm64`), if `bytes` is
/// one.
fn movabs(bytes: &[u8]) -> Option<u64> {
    match bytes {
        [rex, op, imm @ ..] if rex & 0xF8 == 0x48 && op & 0xF8 == 0xB8 && imm.len() == 8 => {
            let mut w = [0; 8];
            w.copy_from_slice(imm);
            Some(u64::from_le_bytes(w))
        }
        _ => None,
    }
}

/// The register `movabs` `bytes` sets (0..15).
fn movabs_reg(bytes: &[u8]) -> u8 {
    (bytes[0] & 1) << 3 | bytes[1] & 7
}

/// `mov %q, %r` (64-bit; `89 /r`), 3 bytes.
fn mov_reg(q: u8, r: u8) -> [u8; 3] {
    [
        0x48 | (q >> 3) << 2 | r >> 3,
        0x89,
        0xC0 | (q & 7) << 3 | (r & 7),
    ]
}

/// [`decode`] without [`Kind::Narrow`].
fn decode_plain(code: &[u8]) -> Option<Insn> {
    let mut i = 0;
    let mut opsize16 = false;
    loop {
        match *code.get(i)? {
            0x66 => opsize16 = true,
            0xF2 | 0xF3 | 0xF0 | 0x2E | 0x3E | 0x26 | 0x36 | 0x64 | 0x65 => {}
            _ => break,
        }
        i += 1;
    }
    let prefixed = i > 0;
    let mut rex_w = false;
    let b = *code.get(i)?;
    if (0x40..=0x4F).contains(&b) {
        rex_w = b & 8 != 0;
        i += 1;
    }
    let op = *code.get(i)?;
    i += 1;
    let imm_z = if opsize16 { 2 } else { 4 };
    let form = ONE_BYTE[usize::from(op)];
    if form != OTHER {
        let imm = match form & IMM_Z {
            IMM_Z => imm_z,
            IMM_8 => 1,
            _ => 0,
        };
        return finish(code, i, form & MODRM != 0, imm);
    }
    // (has a ModRM byte, immediate bytes after it)
    let (modrm, imm) = match op {
        0xC4 | 0xC5 => return decode_vex(code, i - 1, prefixed),
        0x0F => {
            let op2 = *code.get(i)?;
            i += 1;
            match op2 {
                0x80..=0x8F if !prefixed && i == 2 => {
                    code.get(i..i + 4)?;
                    return Some(Insn {
                        len: i + 4,
                        kind: Kind::Jcc {
                            cc: op2 & 0xF,
                            short: false,
                        },
                    });
                }
                0x0B => (false, 0),
                0x38 => {
                    i += 1;
                    (true, 0)
                }
                0x3A => {
                    i += 1;
                    (true, 1)
                }
                0x70..=0x73 | 0xBA | 0xC2 | 0xC4..=0xC6 | 0xA4 | 0xAC => (true, 1),
                0x10..=0x17
                | 0x1F
                | 0x28..=0x2F
                | 0x40..=0x4F
                | 0x50..=0x6F
                | 0x74..=0x76
                | 0x7E
                | 0x7F
                | 0x90..=0x9F
                | 0xA3
                | 0xA5
                | 0xAB
                | 0xAD
                | 0xAF
                | 0xB0
                | 0xB1
                | 0xB3
                | 0xB6..=0xB8
                | 0xBB..=0xBF
                | 0xC0
                | 0xC1
                | 0xD0..=0xFE => (true, 0),
                _ => return None,
            }
        }
        0xB8..=0xBF => (false, if rex_w { 8 } else { imm_z }),
        0xC2 => (false, 2),
        0x70..=0x7F if !prefixed && i == 1 => {
            code.get(i)?;
            return Some(Insn {
                len: 2,
                kind: Kind::Jcc {
                    cc: op & 0xF,
                    short: true,
                },
            });
        }
        0xE9 if !prefixed && i == 1 => {
            code.get(i..i + 4)?;
            return Some(Insn {
                len: 5,
                kind: Kind::Jmp { short: false },
            });
        }
        0xEB if !prefixed && i == 1 => {
            code.get(i)?;
            return Some(Insn {
                len: 2,
                kind: Kind::Jmp { short: true },
            });
        }
        0xF6 | 0xF7 => {
            let reg = (*code.get(i)? >> 3) & 7;
            let imm = match (op, reg) {
                (0xF6, 0 | 1) => 1,
                (0xF7, 0 | 1) => imm_z,
                _ => 0,
            };
            (true, imm)
        }
        0xFF => {
            let m = *code.get(i)?;
            if m >> 6 == 3 && (m >> 3) & 7 == 4 {
                // jmp *reg (a near indirect jump).
                return Some(Insn {
                    len: i + 1,
                    kind: Kind::JmpReg,
                });
            }
            (true, 0)
        }
        _ => return None,
    };
    finish(code, i, modrm, imm)
}

/// The rest of an instruction from `i` (its ModRM byte, if `modrm`, then
/// `imm` immediate bytes).
fn finish(code: &[u8], mut i: usize, modrm: bool, imm: usize) -> Option<Insn> {
    let mut kind = Kind::Plain;
    if modrm {
        let m = *code.get(i)?;
        let (md, rm) = (m >> 6, m & 7);
        i += 1;
        if md != 3 {
            let mut disp = match md {
                1 => 1,
                2 => 4,
                _ => 0,
            };
            if rm == 4 {
                let sib = *code.get(i)?;
                i += 1;
                if md == 0 && sib & 7 == 5 {
                    disp = 4;
                }
            } else if md == 0 && rm == 5 {
                kind = Kind::RipRel {
                    disp_at: u8::try_from(i).ok()?,
                };
                disp = 4;
            }
            i += disp;
        }
    }
    i += imm;
    code.get(..i)?;
    Some(Insn { len: i, kind })
}

/// A VEX-encoded instruction at `at` (`c4`/`c5`).
fn decode_vex(code: &[u8], at: usize, prefixed: bool) -> Option<Insn> {
    if prefixed {
        return None;
    }
    let (map, op_at) = if code[at] == 0xC5 {
        (1, at + 2)
    } else {
        (*code.get(at + 1)? & 0x1F, at + 3)
    };
    let op = *code.get(op_at)?;
    let imm = match map {
        1 => usize::from(matches!(op, 0x70..=0x73 | 0xC2 | 0xC4..=0xC6)),
        2 => 0,
        3 => 1,
        _ => return None,
    };
    finish(code, op_at + 1, true, imm)
}

/// A piece of the code, in order.
#[derive(Debug, Clone, Copy)]
enum Piece {
    /// An instruction at `at` (old offset).
    Insn { at: usize, insn: Insn },
    /// A jump table of `entries` 32-bit offsets at `at`, from its start.
    Table { at: usize, entries: usize },
}

/// `code` with its branches short where they reach, and `pcs` (code
/// ranges) moved with it; `None` (both unchanged) when the code holds
/// anything this pass does not know. `table`: the entries of the
/// function's jump table, if it has one (a `br_table`'s targets and
/// default). `pinned_once`: every copy of the pinned register the code
/// makes has one use ([`on_pinned`]). `counters`: the 8-bit displacements
/// from r15 of the context's counters that codegen only increments (and
/// whose new value it at most tests for its sign), which become one `add`
/// to memory. `probes`: the inline-cache entries whose first word codegen
/// loads only to compare it once (a send site's probes), a load folded
/// into that comparison.
pub(crate) fn relax(
    code: &[u8],
    table: Option<usize>,
    pcs: &mut [(u32, u32, u32)],
    pinned_once: bool,
    counters: &[u8],
    probes: &[u64],
) -> Option<Vec<u8>> {
    let (pieces, end, data_at) = scan(code, table)?;
    let n = pieces.len();
    let old_at = |p: &Piece| match *p {
        Piece::Insn { at, .. } | Piece::Table { at, .. } => at,
    };
    // The piece starting at each old offset of an instruction.
    let index_of = |off: usize| -> Option<usize> { pieces.binary_search_by_key(&off, old_at).ok() };
    // Each branch's target piece (or `n`: the code's end, the data's
    // start); RIP-relative targets are data, moved with it.
    let mut target: Vec<usize> = vec![usize::MAX; n];
    for (k, p) in pieces.iter().enumerate() {
        match *p {
            Piece::Insn {
                at,
                insn:
                    Insn {
                        len,
                        kind: Kind::Jmp { short } | Kind::Jcc { short, .. },
                    },
            } => {
                let next = at + len;
                let d = if short {
                    i64::from(code[next - 1] as i8)
                } else {
                    i64::from(read32(code, next - 4))
                };
                let t = usize::try_from(next as i64 + d).ok()?;
                target[k] = if t == end { n } else { index_of(t)? };
            }
            Piece::Table { at, entries } => {
                for e in 0..entries {
                    let t =
                        usize::try_from(at as i64 + i64::from(read32(code, at + 4 * e))).ok()?;
                    index_of(t)?;
                }
            }
            _ => {}
        }
    }
    // A constant materialised again right after it was (Cranelift
    // materialises one at each use), where no branch lands between them:
    // `mov` from the register the first set (`copy[k]`, 3 bytes, flags
    // untouched as by `movabs`).
    let mut landing = vec![false; n + 1];
    for &t in &target {
        if t != usize::MAX {
            landing[t] = true;
        }
    }
    for p in &pieces {
        if let Piece::Table { at, entries } = *p {
            for e in 0..entries {
                let t = (at as i64 + i64::from(read32(code, at + 4 * e))) as usize;
                landing[index_of(t)?] = true;
            }
        }
    }
    let bytes_of = |p: &Piece| match *p {
        Piece::Insn { at, insn } if insn.kind == Kind::Plain => &code[at..at + insn.len],
        _ => &[],
    };
    let mut copy: Vec<Option<u8>> = vec![None; n];
    for k in 1..n {
        let (prev, this) = (bytes_of(&pieces[k - 1]), bytes_of(&pieces[k]));
        if !landing[k] && movabs(this).is_some() && movabs(prev) == movabs(this) {
            copy[k] = Some(movabs_reg(prev));
        }
    }
    // An overflow test as Cranelift makes it, `seto r8; test r8,r8;
    // jne/je`, where no branch lands on its second or third instruction:
    // the branch on the flag itself (`jo`/`jno`: two instructions fewer,
    // five or six bytes). Codegen uses an overflow flag only in the branch
    // right after its operation (`sadd_overflow` and the like, then
    // `brif`), so the register `seto` set is read by the `test` alone; no
    // flags are read past a branch.
    let mut gone = vec![false; n];
    let mut on_overflow: Vec<Option<u8>> = vec![None; n];
    for k in 0..n.saturating_sub(2) {
        if let Piece::Insn {
            insn:
                Insn {
                    kind:
                        Kind::Jcc {
                            cc: cc @ (CC_E | CC_NE),
                            ..
                        },
                    ..
                },
            ..
        } = pieces[k + 2]
            && !landing[k + 1]
            && !landing[k + 2]
            && seto_tested(bytes_of(&pieces[k]), bytes_of(&pieces[k + 1]))
        {
            gone[k] = true;
            gone[k + 1] = true;
            on_overflow[k + 2] = Some(if cc == CC_NE { CC_O } else { CC_NO });
        }
    }
    // A copy of the pinned register used as the next instruction's base,
    // where no branch lands on that instruction: that instruction with r15
    // as its base (`folded`), the copy gone.
    let mut folded: Vec<Option<Vec<u8>>> = vec![None; n];
    for k in 0..n.saturating_sub(1) {
        if landing[k + 1] || gone[k] || gone[k + 1] || copy[k].is_some() || copy[k + 1].is_some() {
            continue;
        }
        let (copying, next) = (bytes_of(&pieces[k]), bytes_of(&pieces[k + 1]));
        if let Some(r) = pinned_copy(copying)
            && let Some(b) =
                on_pinned(next, r, pinned_once).or_else(|| pinned_stored(next, r, pinned_once))
        {
            gone[k] = true;
            folded[k + 1] = Some(b);
        }
    }
    // The pinned register put back from the stack through a register, `mov
    // d(%rsp),%r; mov %r,%r15`, in an epilogue (nothing after it up to
    // its `ret` reads `r`), where no branch lands on the second: `mov
    // d(%rsp),%r15`.
    for k in 0..n.saturating_sub(1) {
        if landing[k + 1]
            || gone[k]
            || gone[k + 1]
            || folded[k].is_some()
            || folded[k + 1].is_some()
        {
            continue;
        }
        let (loading, setting) = (bytes_of(&pieces[k]), bytes_of(&pieces[k + 1]));
        let Some((r, d)) = load_from_stack(loading) else {
            continue;
        };
        // (Not `rax`, which `ret` reads: the answer.)
        if r == 0 || pinned_set(setting) != Some(r) {
            continue;
        }
        let ret = (k + 2..n).find(|&j| bytes_of(&pieces[j]) == [0xC3]);
        if ret.is_some_and(|ret| (k + 2..=ret).all(|j| epilogue(bytes_of(&pieces[j])))) {
            folded[k] = Some(vec![0x4C, 0x8B, 0x7C, 0x24, d]);
            gone[k + 1] = true;
        }
    }
    // A counter of the context incremented, `mov d(%r15),%r; add $1,%r;
    // mov %r,d(%r15)` or `mov $1,%r; add d(%r15),%r; mov %r,d(%r15)` (the
    // copies of r15 folded above, or a copy with one use, the `add`'s,
    // before the `mov $1`), where `d` is one of
    // `counters` and no branch lands after its first instruction: `addq
    // $1,d(%r15)` (two instructions and seven bytes fewer). Codegen reads
    // such a counter only to add one to it, store it back and, when a sign
    // test follows (`test %r,%r; jl/jge`: the poll's, `NativeCtx::sends`),
    // test the new count's sign, which the `add` sets as well: the branch
    // on the sign (`js/jns`), the test gone too. The register is read
    // nowhere else, so it is dead after.
    let live: Vec<usize> = (0..n).filter(|&k| !gone[k]).collect();
    // The increment at `live[i..]`: its register, the counter's
    // displacement and its instructions, 3 or 4.
    let increment = |folded: &[Option<Vec<u8>>], i: usize| -> Option<(u8, u8, usize)> {
        let at = |j: usize| {
            live.get(i + j)
                .map(|&k| now_bytes(folded, &pieces, code, k))
        };
        let (r, d, m) = if let Some((r, d)) = load_from_pinned(&at(0)?) {
            // mov d(%r15),%r; add $1,%r
            (add_one(&at(1)?) == Some(r)).then_some((r, d, 3))?
        } else if let Some(r) = mov_one(&at(0)?) {
            // mov $1,%r; add d(%r15),%r
            match add_from(&at(1)?)? {
                (q, 15, d) if q == r => (r, d, 3),
                _ => return None,
            }
        } else {
            // mov %r15,%a; mov $1,%r; add d(%a),%r (the copy's one use)
            let a = pinned_copy(&at(0)?).filter(|_| pinned_once)?;
            let r = mov_one(&at(1)?)?;
            match add_from(&at(2)?)? {
                (q, base, d) if q == r && base == a && a != r => (r, d, 4),
                _ => return None,
            }
        };
        let (first, last) = (live[i], live[i + m - 1]);
        (counters.contains(&d)
            && store_to_pinned(&at(m - 1)?) == Some((r, d))
            && (first + 1..=last).all(|k| !landing[k])
            && copy[first..=last].iter().all(Option::is_none))
        .then_some((r, d, m))
    };
    let mut i = 0;
    while i + 2 < live.len() {
        let Some((r, d, m)) = increment(&folded, i) else {
            i += 1;
            continue;
        };
        let (a, c) = (live[i], live[i + m - 1]);
        // The sign test and its branch, if they follow.
        let signed = live.get(i + m..i + m + 2).and_then(|tj| {
            let (t, j) = (tj[0], tj[1]);
            let Piece::Insn {
                insn:
                    Insn {
                        kind: Kind::Jcc { cc, .. },
                        ..
                    },
                ..
            } = pieces[j]
            else {
                return None;
            };
            let sign = match cc {
                CC_L => CC_S,
                CC_GE => CC_NS,
                _ => return None,
            };
            (tested_self(&now_bytes(&folded, &pieces, code, t)) == Some(r)
                && (c + 1..=j).all(|k| !landing[k])
                && copy[c + 1..j].iter().all(Option::is_none)
                && on_overflow[j].is_none())
            .then_some((t, j, sign))
        });
        folded[a] = Some(vec![0x49, 0x83, 0x47, d, 0x01]);
        for &k in &live[i + 1..i + m] {
            gone[k] = true;
            folded[k] = None;
        }
        i += m;
        if let Some((t, j, sign)) = signed {
            gone[t] = true;
            folded[t] = None;
            on_overflow[j] = Some(sign);
            i += 2;
        }
    }
    // A probe of an inline-cache entry, `movabs $cell,%a; mov (%a),%b; cmp
    // %b,%c; je/jne` where `cell` is one of `probes` and no branch lands
    // after the `movabs`: `cmp (%a),%c` (the loaded word's one use; an
    // instruction and three bytes fewer; equality reads the same flag
    // either way round).
    for k in 0..n.saturating_sub(3) {
        if probes.is_empty() {
            break;
        }
        if (k + 1..=k + 3)
            .any(|j| landing[j] || gone[j] || folded[j].is_some() || copy[j].is_some())
            || copy[k].is_some()
        {
            continue;
        }
        if !movabs(bytes_of(&pieces[k])).is_some_and(|c| probes.contains(&c)) {
            continue;
        }
        let a = movabs_reg(bytes_of(&pieces[k]));
        let Piece::Insn {
            insn:
                Insn {
                    kind:
                        Kind::Jcc {
                            cc: CC_E | CC_NE, ..
                        },
                    ..
                },
            ..
        } = pieces[k + 3]
        else {
            continue;
        };
        if let (Some((b, base)), Some((x, y))) = (
            load_via(bytes_of(&pieces[k + 1])),
            compared(bytes_of(&pieces[k + 2])),
        ) && base == a
            && a & 7 != 4
            && a & 7 != 5
            && b != a
        {
            let other = if x == b && y != b {
                y
            } else if y == b && x != b {
                x
            } else {
                continue;
            };
            gone[k + 1] = true;
            folded[k + 2] = Some(vec![
                0x48 | ((other >> 3) << 2) | (a >> 3),
                0x3B,
                ((other & 7) << 3) | (a & 7),
            ]);
        }
    }
    // Sizes: every branch short, then long again where it does not reach,
    // until none changes (a branch made long only takes others' targets
    // further away: few rounds, as most reach).
    let size = |k: usize, short: bool| -> usize {
        if gone[k] {
            return 0;
        }
        if copy[k].is_some() {
            return 3;
        }
        if let Some(b) = &folded[k] {
            return b.len();
        }
        match pieces[k] {
            Piece::Insn { insn, .. } => match insn.kind {
                Kind::Jmp { .. } | Kind::Jcc { .. } if short => 2,
                Kind::Jmp { .. } => 5,
                Kind::Jcc { .. } => 6,
                Kind::Narrow { len, .. } => usize::from(len),
                _ => insn.len,
            },
            Piece::Table { entries, .. } => 4 * entries,
        }
    };
    let branches: Vec<usize> = (0..n).filter(|&k| target[k] != usize::MAX).collect();
    let mut short = vec![false; n];
    for &k in &branches {
        short[k] = true;
    }
    let mut at: Vec<usize> = vec![0; n + 1];
    loop {
        let mut pos = 0;
        for k in 0..n {
            at[k] = pos;
            pos += size(k, short[k]);
        }
        at[n] = pos;
        let mut changed = false;
        for &k in &branches {
            if short[k] && i8::try_from(at[target[k]] as i64 - (at[k] as i64 + 2)).is_err() {
                short[k] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // The data keeps its alignment (up to 16 bytes).
    let align = if data_at == code.len() {
        1
    } else {
        1 << data_at.trailing_zeros().min(4)
    };
    let code_end = at[n];
    let new_data = code_end.div_ceil(align) * align;
    let moved = |old: usize| -> Option<usize> {
        if old >= data_at {
            Some(old - data_at + new_data)
        } else if old == end {
            Some(code_end)
        } else {
            index_of(old).map(|k| at[k])
        }
    };
    let mut out = Vec::with_capacity(new_data + code.len() - data_at);
    // Instructions neither branches nor RIP-relative are copied as they
    // are, a run at a time.
    let mut copied = 0;
    for (k, p) in pieces.iter().enumerate() {
        let (old, len) = match *p {
            Piece::Insn {
                at,
                insn:
                    Insn {
                        kind: Kind::Plain | Kind::JmpReg,
                        len,
                    },
            } => {
                // Copied with the run it is in, unless it goes (an overflow
                // test's `seto` and `test`), becomes a register copy or is
                // the use a copy of the pinned register was folded into.
                if gone[k] || copy[k].is_some() || folded[k].is_some() {
                    out.extend_from_slice(&code[copied..at]);
                    copied = at + len;
                }
                match (gone[k], copy[k], &folded[k]) {
                    (true, ..) => {}
                    (false, Some(q), _) => {
                        out.extend_from_slice(&mov_reg(q, movabs_reg(&code[at..at + len])));
                    }
                    (false, None, Some(b)) => out.extend_from_slice(b),
                    (false, None, None) => {}
                }
                continue;
            }
            Piece::Insn { at, insn } => (at, insn.len),
            Piece::Table { at, entries } => (at, 4 * entries),
        };
        out.extend_from_slice(&code[copied..old]);
        copied = old + len;
        debug_assert_eq!(out.len(), at[k]);
        if gone[k] {
            // (An increment's `add` of an immediate Cranelift made long.)
            continue;
        }
        match *p {
            Piece::Insn { insn, .. } => match insn.kind {
                Kind::Narrow { op_at, how, .. } => {
                    narrow_into(&mut out, &code[old..old + len], usize::from(op_at), how);
                }
                Kind::RipRel { disp_at } => {
                    let bytes = &code[old..old + len];
                    let d = usize::from(disp_at);
                    let t =
                        usize::try_from((old + len) as i64 + i64::from(read32(bytes, d))).ok()?;
                    let nt = moved(t)? as i64;
                    let disp = i32::try_from(nt - (at[k] + len) as i64).ok()?;
                    out.extend_from_slice(&bytes[..d]);
                    out.extend_from_slice(&disp.to_le_bytes());
                    out.extend_from_slice(&bytes[d + 4..]);
                }
                _ => {
                    let t = at[target[k]] as i64;
                    let cc = match insn.kind {
                        Kind::Jcc { cc, .. } => Some(on_overflow[k].unwrap_or(cc)),
                        _ => None,
                    };
                    if short[k] {
                        out.push(cc.map_or(0xEB, |cc| 0x70 | cc));
                        out.push(i8::try_from(t - (at[k] as i64 + 2)).ok()? as u8);
                    } else {
                        match cc {
                            Some(cc) => out.extend_from_slice(&[0x0F, 0x80 | cc]),
                            None => out.push(0xE9),
                        }
                        let next = (at[k] + size(k, false)) as i64;
                        out.extend_from_slice(&i32::try_from(t - next).ok()?.to_le_bytes());
                    }
                }
            },
            Piece::Table { .. } => {
                for e in 0..len / 4 {
                    let t = (old as i64 + i64::from(read32(code, old + 4 * e))) as usize;
                    let nt = moved(t)? as i64;
                    out.extend_from_slice(&i32::try_from(nt - at[k] as i64).ok()?.to_le_bytes());
                }
            }
        }
    }
    out.extend_from_slice(&code[copied..end]);
    debug_assert_eq!(out.len(), code_end);
    // Padding to the data (never run), then the data.
    out.resize(new_data, 0);
    out.extend_from_slice(&code[data_at..]);
    // A range's bounds are instructions' starts, or the code's end.
    let bound = |old: u32| -> Option<u32> {
        let old = old as usize;
        let new = if old == end {
            code_end
        } else if old == code.len() {
            out.len()
        } else {
            at[index_of(old)?]
        };
        u32::try_from(new).ok()
    };
    let mut mapped = Vec::with_capacity(pcs.len());
    for &(s, e, pc) in pcs.iter() {
        mapped.push((bound(s)?, bound(e)?, pc));
    }
    pcs.copy_from_slice(&mapped);
    Some(out)
}

fn read32(code: &[u8], at: usize) -> i32 {
    let mut w = [0; 4];
    w.copy_from_slice(&code[at..at + 4]);
    i32::from_le_bytes(w)
}

/// The code's pieces (instructions and its jump table), where they end
/// (zeros may pad the code to its data) and where the data starts (the
/// lowest constant a RIP-relative operand reads, or the code's end):
/// `None` when an instruction is not one [`decode`] knows, or the code's
/// shape is not the one expected.
fn scan(code: &[u8], table: Option<usize>) -> Option<(Vec<Piece>, usize, usize)> {
    let mut pieces = Vec::with_capacity(code.len() / 4);
    let mut data_at = code.len();
    let mut table_at = None;
    let mut pos = 0;
    // Did the last instruction end a path (`jmp`, `ret`, `ud2`)? Only then
    // may what follows be padding.
    let mut ended = false;
    while pos < data_at {
        if ended && code[pos..data_at].iter().all(|&b| b == 0) {
            // Zeros to the data or the end: padding.
            return Some((pieces, pos, data_at));
        }
        if table_at == Some(pos) {
            let entries = table?;
            if pos + 4 * entries > data_at {
                return None;
            }
            pieces.push(Piece::Table { at: pos, entries });
            pos += 4 * entries;
            table_at = None;
            continue;
        }
        let insn = decode(&code[pos..])?;
        let end = pos + insn.len;
        ended = matches!(insn.kind, Kind::Jmp { .. } | Kind::JmpReg)
            || matches!(code[pos..end], [0xC3] | [0x0F, 0x0B]);
        match insn.kind {
            Kind::RipRel { disp_at } => {
                let t = end as i64 + i64::from(read32(code, pos + usize::from(disp_at)));
                let t = usize::try_from(t).ok()?;
                if code[pos..]
                    .iter()
                    .position(|&b| !(0x40..=0x4F).contains(&b))
                    == Some(1)
                    && code.get(pos + 1) == Some(&0x8D)
                {
                    // `lea` of the jump table (the only RIP-relative
                    // `lea` Cranelift emits): it follows the indirect jump.
                    if table.is_none() || table_at.is_some() {
                        return None;
                    }
                    table_at = Some(t);
                } else {
                    if t > code.len() {
                        return None;
                    }
                    data_at = data_at.min(t);
                }
            }
            // The jump table right after its indirect jump.
            Kind::JmpReg if table_at.is_some_and(|t| t != end) => return None,
            _ => {}
        }
        pieces.push(Piece::Insn { at: pos, insn });
        pos = end;
    }
    (pos == data_at && table_at.is_none()).then_some((pieces, pos, data_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_of_what_cranelift_emits() {
        let cases: &[(&[u8], usize)] = &[
            (&[0x48, 0x89, 0xE5], 3),                         // mov %rsp,%rbp
            (&[0x48, 0x83, 0x47, 0x28, 0x01], 5),             // addq $1,0x28(%rdi)
            (&[0x4A, 0xC7, 0x44, 0x0E, 0x08, 0, 0, 0, 0], 9), // movq $0,8(%rsi,%r9)
            (&[0x48, 0xB8, 1, 2, 3, 4, 5, 6, 7, 8], 10),      // movabs
            (&[0xB8, 3, 0, 0, 0], 5),                         // mov $3,%eax
            (&[0x49, 0xF7, 0xC2, 1, 0, 0, 0], 7),             // test $1,%r10
            (&[0x48, 0x0F, 0x44, 0x15, 0xAE, 1, 0, 0], 8),    // cmove rip
            (&[0xC4, 0xE3, 0xFB, 0xF0, 0xFF, 0x01], 6),       // rorx
            (&[0xC4, 0xE1, 0xF9, 0x6E, 0xC7], 5),             // vmovq
            (&[0xC5, 0xF1, 0x57, 0xC9], 4),                   // vxorpd
            (&[0x48, 0x63, 0x04, 0x8A], 4),                   // movslq (%rdx,%rcx,4)
            (&[0x4C, 0x8B, 0x04, 0x24], 4),                   // mov (%rsp),%r8
            (&[0x49, 0x8B, 0x80, 0x88, 0, 0, 0], 7),          // mov 0x88(%r8)
            (&[0x41, 0xFF, 0xD1], 3),                         // call *%r9
            (&[0x0F, 0x85, 0xF3, 0, 0, 0], 6),                // jne rel32
            (&[0xE9, 6, 0, 0, 0], 5),                         // jmp rel32
        ];
        for &(bytes, len) in cases {
            assert_eq!(decode(bytes).map(|i| i.len), Some(len), "{bytes:02x?}");
        }
        assert_eq!(decode(&[0xE8, 0, 0, 0, 0]), None, "a relative call");
        assert_eq!(decode(&[0x48, 0x8B]), None, "cut short");
    }

    #[test]
    fn branches_become_short_and_data_moves_with_them() {
        let mut code = vec![0xE9, 6, 0, 0, 0]; // 0..5: jmp -> 11
        code.extend_from_slice(&[0x0F, 0x85, 0xF5, 0xFF, 0xFF, 0xFF]); // 5..11: jne -> 0
        code.extend_from_slice(&[0x48, 0x0F, 0x44, 0x05, 1, 0, 0, 0]); // 11..19: cmove 20(%rip)
        code.push(0xC3); // 19: ret
        code.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]); // 20..28: data (aligned to 4)
        let mut pcs = vec![(0, 5, 1), (5, 11, 2), (11, 20, 3)];
        let out = relax(&code, None, &mut pcs, false, &[], &[]).expect("relaxed");
        let mut want = vec![0xEB, 2]; // 0: jmp -> 4
        want.extend_from_slice(&[0x75, 0xFC]); // 2: jne -> 0
        want.extend_from_slice(&[0x48, 0x0F, 0x44, 0x05, 4, 0, 0, 0]); // 4..12: -> 16
        want.push(0xC3); // 12
        want.extend_from_slice(&[0; 3]); // 13..16
        want.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(out, want);
        assert_eq!(pcs, vec![(0, 2, 1), (2, 4, 2), (4, 13, 3)]);
    }

    #[test]
    fn a_copy_of_the_pinned_register_folds_into_the_base_it_is() {
        // mov %r15,%rax; mov 0x10(%rax),%rax: overwritten, always folded.
        let code = [0x4C, 0x89, 0xF8, 0x48, 0x8B, 0x40, 0x10, 0xC3];
        let out = relax(&code, None, &mut [], false, &[], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x8B, 0x47, 0x10, 0xC3]); // mov 0x10(%r15),%rax
        // The other encoding of the copy (mov %r15,%rcx as `8b`).
        let code = [0x49, 0x8B, 0xCF, 0x48, 0x8B, 0x49, 0x10, 0xC3];
        let out = relax(&code, None, &mut [], false, &[], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x8B, 0x4F, 0x10, 0xC3]);
        // mov %r15,%rax; mov -0x18(%rax),%rcx: only when every copy has
        // one use (%rax might be read later).
        let code = [0x4C, 0x89, 0xF8, 0x48, 0x8B, 0x48, 0xE8, 0xC3];
        assert_eq!(
            relax(&code, None, &mut [], false, &[], &[]).expect("relaxed"),
            code
        );
        let out = relax(&code, None, &mut [], true, &[], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x8B, 0x4F, 0xE8, 0xC3]);
        // A 32-bit load without REX takes one: mov 0x8(%rax),%ecx.
        let code = [0x4C, 0x89, 0xF8, 0x8B, 0x48, 0x08, 0xC3];
        let out = relax(&code, None, &mut [], true, &[], &[]).expect("relaxed");
        assert_eq!(out, [0x41, 0x8B, 0x4F, 0x08, 0xC3]);
        // An SIB base: mov (%rax,%rcx,8),%rdx.
        let code = [0x4C, 0x89, 0xF8, 0x48, 0x8B, 0x14, 0xC8, 0xC3];
        let out = relax(&code, None, &mut [], true, &[], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x8B, 0x14, 0xCF, 0xC3]);
        // Kept: the register read otherwise (a store of it, an index), a
        // branch landing on the user, an 8-bit register without REX.
        for code in [
            &[0x4C, 0x89, 0xF8, 0x48, 0x89, 0x40, 0x08, 0xC3][..], // mov %rax,8(%rax)
            &[0x4C, 0x89, 0xF8, 0x48, 0x8B, 0x14, 0xC1, 0xC3],     // mov (%rcx,%rax,8),%rdx
            &[0x4C, 0x89, 0xF8, 0x88, 0x60, 0x08, 0xC3],           // mov %ah,8(%rax)
            &[0xEB, 0x03, 0x4C, 0x89, 0xF8, 0x48, 0x8B, 0x40, 0x10, 0xC3],
        ] {
            let out = relax(code, None, &mut [], true, &[], &[]).expect("relaxed");
            assert_eq!(out.len(), code.len(), "{code:02x?} -> {out:02x?}");
        }
    }

    #[test]
    fn a_branch_out_of_reach_stays_long() {
        let mut code = vec![0xE9, 200, 0, 0, 0]; // 0..5: jmp -> 205
        code.extend_from_slice(&[0x90; 200]);
        code.push(0xC3);
        let out = relax(&code, None, &mut [], false, &[], &[]).expect("relaxed");
        assert_eq!(out, code);
        code[1] = 100; // jmp -> 105: short
        let out = relax(&code, None, &mut [], false, &[], &[]).expect("relaxed");
        assert_eq!(&out[..2], &[0xEB, 100]);
        assert_eq!(out.len(), code.len() - 3);
    }

    #[test]
    fn an_immediate_that_fits_in_8_bits_takes_its_short_form() {
        let mut code = vec![0xE9, 14, 0, 0, 0]; // 0..5: jmp -> 19
        code.extend_from_slice(&[0x48, 0x81, 0xC1, 0xFF, 0xFF, 0xFF, 0xFF]); // add $-1,%rcx
        code.extend_from_slice(&[0x49, 0x81, 0xFA, 0x90, 0x01, 0, 0]); // cmp $0x190,%r10
        code.push(0xC3); // 19
        let out = relax(&code, None, &mut [], false, &[], &[]).expect("relaxed");
        let mut want = vec![0xEB, 11, 0x48, 0x83, 0xC1, 0xFF];
        want.extend_from_slice(&[0x49, 0x81, 0xFA, 0x90, 0x01, 0, 0, 0xC3]);
        assert_eq!(out, want);
        assert_eq!(
            decode(&[0x66, 0x81, 0xC1, 0x01, 0x00]).map(|i| i.kind),
            Some(Kind::Plain),
            "a 16-bit immediate"
        );
    }

    #[test]
    fn an_overflow_test_becomes_a_branch_on_the_flag() {
        let relaxed = |bytes: &[u8]| relax(bytes, None, &mut [], false, &[], &[]).expect("relaxed");
        // add %rsi,%rax; seto %cl; test %cl,%cl; jne +1; ret; ret
        let code = [
            0x48, 0x03, 0xC6, 0x0F, 0x90, 0xC1, 0x84, 0xC9, 0x0F, 0x85, 1, 0, 0, 0, 0xC3, 0xC3,
        ];
        assert_eq!(relaxed(&code), [0x48, 0x03, 0xC6, 0x70, 1, 0xC3, 0xC3]);
        // seto %sil; test %sil,%sil; je +1 (REX for sil): jno
        let code = [
            0x40, 0x0F, 0x90, 0xC6, 0x40, 0x84, 0xF6, 0x0F, 0x84, 1, 0, 0, 0, 0xC3, 0xC3,
        ];
        assert_eq!(relaxed(&code), [0x71, 1, 0xC3, 0xC3]);
        // seto %r9b; test %r9b,%r9b; jne
        let code = [
            0x41, 0x0F, 0x90, 0xC1, 0x45, 0x84, 0xC9, 0x0F, 0x85, 1, 0, 0, 0, 0xC3, 0xC3,
        ];
        assert_eq!(relaxed(&code), [0x70, 1, 0xC3, 0xC3]);
        // Kept: another register tested, another condition, a branch
        // landing on the test.
        let code = [
            0x0F, 0x90, 0xC1, 0x84, 0xD2, 0x0F, 0x85, 1, 0, 0, 0, 0xC3, 0xC3,
        ];
        assert_eq!(
            relaxed(&code),
            [0x0F, 0x90, 0xC1, 0x84, 0xD2, 0x75, 1, 0xC3, 0xC3]
        );
        let code = [
            0x0F, 0x90, 0xC1, 0x84, 0xC9, 0x0F, 0x8C, 1, 0, 0, 0, 0xC3, 0xC3,
        ];
        assert_eq!(
            relaxed(&code),
            [0x0F, 0x90, 0xC1, 0x84, 0xC9, 0x7C, 1, 0xC3, 0xC3]
        );
        let code = [
            0xEB, 0x03, 0x0F, 0x90, 0xC1, 0x84, 0xC9, 0x0F, 0x85, 1, 0, 0, 0, 0xC3, 0xC3,
        ];
        assert_eq!(
            relaxed(&code),
            [
                0xEB, 0x03, 0x0F, 0x90, 0xC1, 0x84, 0xC9, 0x75, 1, 0xC3, 0xC3
            ]
        );
    }

    #[test]
    fn tests_of_low_bits_and_zeroing_take_their_short_forms() {
        let short = |bytes: &[u8]| {
            let mut code = bytes.to_vec();
            code.push(0xC3);
            let out = relax(&code, None, &mut [], false, &[], &[]).expect("relaxed");
            out[..out.len() - 1].to_vec()
        };
        // test $7,%rdx; test $1,%r10; test $1,%edi (dil, not bh);
        // test $1,%ecx; test $7,0x8(%rax)
        assert_eq!(short(&[0x48, 0xF7, 0xC2, 7, 0, 0, 0]), [0xF6, 0xC2, 7]);
        assert_eq!(
            short(&[0x49, 0xF7, 0xC2, 1, 0, 0, 0]),
            [0x41, 0xF6, 0xC2, 1]
        );
        assert_eq!(short(&[0xF7, 0xC7, 1, 0, 0, 0]), [0x40, 0xF6, 0xC7, 1]);
        assert_eq!(short(&[0xF7, 0xC1, 1, 0, 0, 0]), [0xF6, 0xC1, 1]);
        assert_eq!(
            short(&[0x48, 0xF7, 0x40, 0x08, 7, 0, 0, 0]),
            [0xF6, 0x40, 0x08, 7]
        );
        // test $1,%rsi (sil: REX kept, W cleared); test $1,0x8(%r9)
        assert_eq!(
            short(&[0x48, 0xF7, 0xC6, 1, 0, 0, 0]),
            [0x40, 0xF6, 0xC6, 1]
        );
        assert_eq!(
            short(&[0x49, 0xF7, 0x41, 0x08, 1, 0, 0, 0]),
            [0x41, 0xF6, 0x41, 0x08, 1]
        );
        // test $1,%rax; xor %rax,%rax; xor %r8,%r8 (kept: it needs REX)
        assert_eq!(short(&[0x48, 0xA9, 1, 0, 0, 0]), [0xA8, 1]);
        assert_eq!(short(&[0x48, 0x33, 0xC0]), [0x33, 0xC0]);
        assert_eq!(short(&[0x4D, 0x33, 0xC0]), [0x4D, 0x33, 0xC0]);
        // Kept: a high bit tested, a test of another register than itself.
        assert_eq!(
            short(&[0x48, 0xF7, 0xC2, 0x80, 0, 0, 0]),
            [0x48, 0xF7, 0xC2, 0x80, 0, 0, 0]
        );
        assert_eq!(short(&[0x48, 0x33, 0xC1]), [0x48, 0x33, 0xC1]);
    }

    #[test]
    fn a_counter_incremented_is_one_add_to_memory() {
        let d = 0x90; // -0x70
        // mov %r15,%rax; mov -0x70(%rax),%rcx; add $1,%rcx; mov %r15,%rdx;
        // mov %rcx,-0x70(%rdx); test %rcx,%rcx; jl +1; ret; ret
        let code = [
            0x4C, 0x89, 0xF8, 0x48, 0x8B, 0x48, d, 0x48, 0x83, 0xC1, 1, 0x4C, 0x89, 0xFA, 0x48,
            0x89, 0x4A, d, 0x48, 0x85, 0xC9, 0x0F, 0x8C, 1, 0, 0, 0, 0xC3, 0xC3,
        ];
        // addq $1,-0x70(%r15); js +1
        let out = relax(&code, None, &mut [], true, &[d], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x83, 0x47, d, 1, 0x78, 1, 0xC3, 0xC3]);
        // jge: jns; no sign test (r9): the add alone.
        let mut ge = code;
        ge[22] = 0x8D;
        let out = relax(&ge, None, &mut [], true, &[d], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x83, 0x47, d, 1, 0x79, 1, 0xC3, 0xC3]);
        let code = [
            0x4D, 0x8B, 0x4F, d, 0x49, 0x83, 0xC1, 1, 0x4D, 0x89, 0x4F, d, 0xC3,
        ];
        let out = relax(&code, None, &mut [], true, &[d], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x83, 0x47, d, 1, 0xC3]);
        // Kept: another field, another register stored, a branch landing
        // on the add.
        assert_eq!(
            relax(&code, None, &mut [], true, &[0x88], &[]).expect("relaxed"),
            code
        );
        let mut other = code;
        other[10] = 0x57;
        assert_eq!(
            relax(&other, None, &mut [], true, &[d], &[]).expect("relaxed"),
            other
        );
        let mut landed = vec![0xEB, 0x04];
        landed.extend_from_slice(&code);
        assert_eq!(
            relax(&landed, None, &mut [], true, &[d], &[]).expect("relaxed"),
            landed
        );
    }

    #[test]
    fn an_increment_cranelift_made_long_is_folded_too() {
        let d = 0x98; // -0x68
        // mov -0x68(%r15),%rdx; add $1,%rdx (81 /0 imm32); mov %rdx,-0x68(%r15)
        let code = [
            0x49, 0x8B, 0x57, d, 0x48, 0x81, 0xC2, 1, 0, 0, 0, 0x49, 0x89, 0x57, d, 0xC3,
        ];
        let out = relax(&code, None, &mut [], true, &[d], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x83, 0x47, d, 1, 0xC3]);
    }

    #[test]
    fn an_increment_of_a_constant_one_is_folded_too() {
        let d = 0x98; // -0x68
        // mov %r15,%rax; mov $1,%r11d; add -0x68(%rax),%r11; mov
        // %r11,-0x68(%r15); ret
        let code = [
            0x4C, 0x89, 0xF8, 0x41, 0xBB, 1, 0, 0, 0, 0x4C, 0x03, 0x58, d, 0x4D, 0x89, 0x5F, d,
            0xC3,
        ];
        let out = relax(&code, None, &mut [], true, &[d], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x83, 0x47, d, 1, 0xC3]);
        // Kept when the copy may have another use.
        let out = relax(&code, None, &mut [], false, &[d], &[]).expect("relaxed");
        assert_eq!(out, code);
        // mov $1,%esi; mov %r15,%rdx; add -0x68(%rdx),%rsi; mov %rsi,-0x68(%r15)
        let code = [
            0xBE, 1, 0, 0, 0, 0x4C, 0x89, 0xFA, 0x48, 0x03, 0x72, d, 0x49, 0x89, 0x77, d, 0xC3,
        ];
        let out = relax(&code, None, &mut [], true, &[d], &[]).expect("relaxed");
        assert_eq!(out, [0x49, 0x83, 0x47, d, 1, 0xC3]);
    }

    #[test]
    fn a_probe_compares_the_cache_word_in_memory() {
        let cell: u64 = 0x5555_5629_ac30;
        // movabs $cell,%rax; mov (%rax),%rdx; cmp %rdx,%rcx; jne +1; ret; ret
        let mut code = vec![0x48, 0xB8];
        code.extend_from_slice(&cell.to_le_bytes());
        code.extend_from_slice(&[0x48, 0x8B, 0x10, 0x48, 0x39, 0xD1, 0x0F, 0x85, 1, 0, 0, 0]);
        code.extend_from_slice(&[0xC3, 0xC3]);
        let out = relax(&code, None, &mut [], false, &[], &[cell]).expect("relaxed");
        // cmp (%rax),%rcx; jne +1
        assert_eq!(out[10..], [0x48, 0x3B, 0x08, 0x75, 1, 0xC3, 0xC3]);
        // Kept: a cell not probed, another condition.
        let out = relax(&code, None, &mut [], false, &[], &[cell + 8]).expect("relaxed");
        assert_eq!(
            out[10..],
            [0x48, 0x8B, 0x10, 0x48, 0x39, 0xD1, 0x75, 1, 0xC3, 0xC3]
        );
        let mut below = code.clone();
        below[17] = 0x82;
        let out = relax(&below, None, &mut [], false, &[], &[cell]).expect("relaxed");
        assert_eq!(
            out[10..],
            [0x48, 0x8B, 0x10, 0x48, 0x39, 0xD1, 0x72, 1, 0xC3, 0xC3]
        );
    }

    #[test]
    fn the_callers_pinned_register_is_kept_and_put_back_without_a_copy() {
        // mov %r15,%rax; mov %rax,0x10(%rsp); ret: mov %r15,0x10(%rsp)
        let code = [0x4C, 0x89, 0xF8, 0x48, 0x89, 0x44, 0x24, 0x10, 0xC3];
        let out = relax(&code, None, &mut [], true, &[], &[]).expect("relaxed");
        assert_eq!(out, [0x4C, 0x89, 0x7C, 0x24, 0x10, 0xC3]);
        // Kept when a copy may have another use.
        assert_eq!(
            relax(&code, None, &mut [], false, &[], &[]).expect("relaxed"),
            code
        );
        // mov 0x10(%rsp),%rcx; mov %rcx,%r15; mov 0x20(%rsp),%rbx; add
        // $0x30,%rsp; mov %rbp,%rsp; pop %rbp; ret: mov 0x10(%rsp),%r15
        let tail = [
            0x48, 0x8B, 0x5C, 0x24, 0x20, 0x48, 0x83, 0xC4, 0x30, 0x48, 0x89, 0xEC, 0x5D, 0xC3,
        ];
        let mut code = vec![0x48, 0x8B, 0x4C, 0x24, 0x10, 0x49, 0x89, 0xCF];
        code.extend_from_slice(&tail);
        let out = relax(&code, None, &mut [], false, &[], &[]).expect("relaxed");
        let mut want = vec![0x4C, 0x8B, 0x7C, 0x24, 0x10];
        want.extend_from_slice(&tail);
        assert_eq!(out, want);
        // Kept: rcx read before the return (mov %rcx,%rax), or the answer's
        // register.
        let mut read = code[..8].to_vec();
        read.extend_from_slice(&[0x48, 0x89, 0xC8, 0xC3]);
        assert_eq!(
            relax(&read, None, &mut [], false, &[], &[]).expect("relaxed"),
            read
        );
        let mut rax = vec![0x48, 0x8B, 0x44, 0x24, 0x10, 0x49, 0x89, 0xC7];
        rax.extend_from_slice(&tail);
        assert_eq!(
            relax(&rax, None, &mut [], false, &[], &[]).expect("relaxed"),
            rax
        );
    }

    #[test]
    fn a_constant_materialised_twice_is_copied() {
        let c = [0x90, 0xF0, 0x1F, 0xF3, 0xFF, 0x7F, 0, 0];
        let mut code = vec![0x49, 0xBA]; // movabs $c,%r10
        code.extend_from_slice(&c);
        code.push(0x49); // movabs $c,%r11
        code.push(0xBB);
        code.extend_from_slice(&c);
        code.extend_from_slice(&[0x49, 0x83, 0x02, 0x01]); // addq $1,(%r10)
        code.push(0xC3);
        let out = relax(&code, None, &mut [], false, &[], &[]).expect("relaxed");
        let mut want = code[..10].to_vec();
        want.extend_from_slice(&[0x4D, 0x89, 0xD3]); // mov %r10,%r11
        want.extend_from_slice(&[0x49, 0x83, 0x02, 0x01, 0xC3]);
        assert_eq!(out, want);
        // Not where a branch lands on the second: the first may not have run.
        let mut landed = vec![0xEB, 10]; // jmp -> the second movabs
        landed.extend_from_slice(&code);
        let out = relax(&landed, None, &mut [], false, &[], &[]).expect("relaxed");
        assert_eq!(out, landed);
        assert_eq!(mov_reg(0, 3), [0x48, 0x89, 0xC3], "mov %rax,%rbx");
    }

    #[test]
    fn a_jump_table_is_rewritten() {
        // lea table(%rip),%rax; movslq (%rax,%rcx,4),%rdx; add %rdx,%rax;
        // jmp *%rax; table (2 entries); targets: jmp -> end; ret.
        let mut code = vec![0x48, 0x8D, 0x05, 10, 0, 0, 0]; // 0..7 lea -> 17
        code.extend_from_slice(&[0x48, 0x63, 0x14, 0x88]); // 7..11
        code.extend_from_slice(&[0x48, 0x01, 0xD0]); // 11..14
        code.extend_from_slice(&[0xFF, 0xE0]); // 14..16 jmp *%rax
        code.push(0x90); // 16: nop (so the table is not at the jump's end)
        let bad = relax(&code, Some(2), &mut [], false, &[], &[]);
        assert!(bad.is_none(), "a table away from its jump");
        code.pop();
        code[3] = 9; // lea -> 16
        code.extend_from_slice(&8i32.to_le_bytes()); // 16: -> 24
        code.extend_from_slice(&13i32.to_le_bytes()); // 20: -> 29
        code.extend_from_slice(&[0xE9, 0, 0, 0, 0]); // 24..29 jmp -> 29
        code.push(0xC3); // 29
        let out = relax(&code, Some(2), &mut [], false, &[], &[]).expect("relaxed");
        let mut want = code[..16].to_vec();
        want.extend_from_slice(&8i32.to_le_bytes()); // -> 24
        want.extend_from_slice(&10i32.to_le_bytes()); // -> 26
        want.extend_from_slice(&[0xEB, 0x00, 0xC3]);
        assert_eq!(out, want);
    }
}
