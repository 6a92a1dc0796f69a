//! From a method's or block's bytecode to Cranelift IR, one native function
//! per code unit, keeping the contract of `lupa_vm`'s native boundary
//! (`NativeCtx`, resume points, operands stored before every runtime call).
//! The runtime's entry points and the shared entry stubs are called at the
//! addresses the context's table holds (`NativeCtx::runtime`, in the order of
//! [`Entries::table`]): no entry address is in the code. The context is
//! held as its address plus `NativeCtx::BIAS` (its fields read at their
//! offset less it: an 8-bit displacement for the first 256 bytes).
//!
//! Shape of a function `f(ctx, pc, sp) -> status`:
//! - the entry block sets the pinned register (r15) to the context for the
//!   whole activation, keeping its caller's in a stack slot (put back at
//!   each return: r15 is callee-saved for Rust), keeps the activation's
//!   `bp` and its environment in that slot (each block loads what it uses:
//!   no value is live across every call; each use of the context is a copy
//!   of r15, which `relax.rs` folds into the instruction using it), reads
//!   the value stack's and the heap's
//!   addresses once, and goes on to a *resume block* per resume point (pc 0,
//!   the pc after each send, backward-jump targets, the conditional jumps
//!   the interpreter re-executes after `mustBeBoolean`): pc 0 by one test,
//!   the others through the *dispatch*: a test for each when there are
//!   at most three (`FEW_RESUMES`), a table from pc to resume index and
//!   one `br_table` otherwise (none in code whose only resume point is
//!   pc 0); any other pc answers `DECLINE` (the interpreter runs it).
//!   Fewer resume points make less code to compile, and none is needed for
//!   correctness: a declined activation is interpreted up to its next send;
//! - before that, a *direct entry* ([`DIRECT`]: native code calling this
//!   code at a send) does the rest of the caller's send once here rather
//!   than at every call site: the checks of a native call (and of a poll
//!   due: the runtime's send then polls), the send counted, the caller's
//!   pc saved and this activation's frame pushed, then pc 0; all of it
//!   but the last step is made once per shape of callee, in a shared
//!   *entry stub* the direct entry calls (`stubs.rs`; code compiled under a
//!   method watch makes it itself);
//! - a resume block reads the operand stack of its pc from the value stack
//!   into SSA variables (one per operand depth), then jumps to the block of
//!   that instruction;
//! - each instruction has a block; operands live in the variables, locals and
//!   the receiver in the value stack (read and written in place);
//! - a runtime call first stores the operands not stored yet into their
//!   slots, passes the pc to resume at and the operand stack's top, and
//!   afterwards reloads the stack's and the heap's addresses and the
//!   operands;
//! - a send the runtime completes goes on, and so does one that activates
//!   a method with native code (the runtime's entry point, in `zone.rs`,
//!   calls that code itself: a slow path is one call and one test); a
//!   specialised send site's direct call and its slow path share that call
//!   and test, and go on inline; a send made only by the runtime (a site
//!   whose cache was empty, a super send, a special send's slow path with
//!   an empty cache) stores its operands and jumps to the function's one
//!   *send tail*, which calls the runtime and goes on at the resume point
//!   after the send through the dispatch (which reads the operands and the
//!   answer from their slots); anything else leaves with `BAIL`, leaving
//!   the frame to the interpreter, which resumes it at a resume point;
//! - an inline send counts itself and polls (`NativeCtx::sends`, every
//!   few thousand sends): an inline send that has answered (a trivial
//!   method's, a special send's) stores its operands when the poll is due
//!   and jumps to the function's one *poll tail*, which calls the runtime's
//!   poll and goes on at the resume point after the send through the
//!   dispatch;
//! - what is there once per function, not per instruction: the return
//!   (every `ReturnTop` and `ReturnSelf` jumps to one return block), the
//!   send and poll tails, the bail tail (each place that leaves to the
//!   interpreter stores its operands and jumps there with its pc), and the
//!   exit (every way out but
//!   the inline return ends in one block, so the function has two
//!   epilogues, which restore the registers it saved).
//!
//! Compile time is Cranelift's, about linear in the IR's size (most of it
//! register allocation, ~2.5 us per IR instruction): the code is shaped to
//! be small (see ARCHITECTURE.md, "The JIT", for what was measured). The
//! machine code Cranelift makes has every branch with a 32-bit
//! displacement; each function's (and stub's) is re-encoded with 8-bit
//! ones where they reach (`relax.rs`), its pc map moved with it, and each
//! copy of the pinned register folded into the address that uses it.
//!
//! Codegen reads a [`Unit`] (`unit.rs`), never the `MethodCode` or the
//! `Image`, so that it runs on a compiler thread as well as on the VM's.
//!
//! A send site is specialised on what its inline cache held when the unit
//! was copied: each method it named then runs inline (a trivial method), by one
//! runtime call that runs its primitive in place (a leaf primitive's method,
//! `leaf_primitive`: the runtime's `primitive` entry, which takes the rest of
//! the send when the primitive fails) or by a direct call of its native
//! code, after a probe that the cache still names it; a site with an empty
//! cache is only the runtime's send. The slow path of a special send (`at:`,
//! `=`, `<`... whose inline path did not apply) is specialised in the same
//! way on its site's cache, which the interpreter fills when its own fast
//! path does not apply (`Vector>>at:`, a user's `=`).
//!
//! Inline paths (each counts its send as the interpreter does): SmallInteger
//! `+ - * < > <= >= = ~= &` with overflow checks, immediate Double
//! `+ - * < > <= >= = ~=` (a SmallInteger argument converted; a result that
//! needs a box takes the send), `=`/`~=` on a String receiver (a String or
//! Symbol argument of at most 8 bytes compared in machine code, others by a
//! runtime call that only reads the heap), conditional jumps on
//! booleans and nil, `to:do:` loops on SmallIntegers, field and environment
//! reads with their bounds checks. Everything else goes through the runtime,
//! which runs the interpreter's own code for it. The Double paths are
//! compiled only into code whose special sends the interpreter saw meet a
//! Double, and the String paths only where one compared a String
//! (`MethodCode::saw_double`, `saw_string`: type feedback, as a baseline
//! tier reads it); elsewhere such a send goes through the runtime, whose
//! fast path is the interpreter's.
//!
//! Code compiled while line coverage is on (`CompileOptions::count_lines`)
//! also counts its arrivals, where the interpreter counts them (`lines.rs`):
//! at its direct entry, at the trivial methods it runs inline, and on every
//! jump and branch edge. Code compiled while a method watch is on
//! (`Unit::watching`) asks the watch cells at its direct entry, its trivial
//! methods' sites and its return (`watch.rs`).
//!
//! Every instruction's native code carries its bytecode pc as source
//! location, so the code zone can map any machine-code address back to a
//! bytecode pc (the VM profiler's bytecode ranges); the entry, the direct
//! entry and the exits map to none (the function's `entry`), the shared
//! return to the pc of the first return.

mod lines;
mod relax;
pub(crate) mod stubs;
mod watch;

use crate::unit::{LEAF_PRIMITIVE, Unit};
use cranelift_codegen::Context;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, Function, InstBuilder, InstructionData, JumpTableData, MemFlagsData,
    Opcode, Signature, SourceLoc, UserFuncName, Value, ValueDef, types,
};
use cranelift_codegen::isa::TargetIsa;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use lupa_compiler::{Op, SpecialOp};
use lupa_heap::native_layout::{CLASS_MASK, FLOAT_EXP_OFFSET, FLOAT_TAG, HEADER_BYTES, SIZE_MASK};
use lupa_vm::layout::{BLOCK_CODE, BLOCK_OUTER, BLOCK_RECEIVER, ENV_PARENT, ENV_VARS};
use lupa_vm::{
    BAIL, DECLINE, DONE, FastEntry, Frame, InlineCache, MAX_NATIVE_DEPTH, NativeCtx, RETURNED,
    RUNTIME_ENTRIES, SLOW_ALL, SLOW_CALLS, TRIVIAL_CONSTANT, TRIVIAL_GETTER, TRIVIAL_NONE,
    TRIVIAL_SELF, TRIVIAL_SETTER, cls,
};
use std::mem::offset_of;

/// The addresses of the runtime's entry points native code calls (the
/// `extern "C"` functions of `zone.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entries {
    /// `(ctx, pc, sp, _) -> status`: a send (called as native code is at
    /// its direct entry: the fourth argument is not read; the pc with
    /// [`DIRECT`] added or not).
    pub(crate) send: u64,
    /// `(ctx, pc, sp, method) -> status`: a send to a leaf primitive's
    /// method (`leaf_primitive`) at a site specialised on it (the pc with
    /// [`DIRECT`] added or not).
    pub(crate) primitive: u64,
    /// `(ctx, sp, value) -> status`: a return of `value` (`sp`: the
    /// activation's operand stack, emptied).
    pub(crate) ret: u64,
    /// `(ctx, pc, sp) -> BAIL`: leave to the interpreter.
    pub(crate) bail: u64,
    /// `(ctx, pc, sp, index) -> status`: a closure.
    pub(crate) push_block: u64,
    /// `(ctx, symbol) -> value or 0`: a global.
    pub(crate) global: u64,
    /// `(ctx, a, b) -> 1 (equal), 2 (not) or 0`: `=` on a String receiver.
    pub(crate) string_equal: u64,
    /// `(ctx, object, index, value)`: a store through the write barrier.
    pub(crate) store: u64,
    /// `(ctx, pc) -> status`: a request (a sampler's, a stop) at an inline
    /// send: `DONE`, or `BAIL` to leave.
    pub(crate) sample: u64,
    /// `(ctx, pc, sp, cell, method and fields) -> status`: a method's
    /// direct entry refused: the send (or, under a method watch, the call
    /// made by the runtime, recorded when watched), answered as `send`.
    pub(crate) watched_call: u64,
    /// The shared entry stubs, by shape (`stubs::shape`): `(ctx, pc, cell,
    /// word, bp, extent) -> status` (`stubs.rs`; 0 until they are made,
    /// before any function is compiled).
    pub(crate) stubs: [u64; stubs::SHAPES],
}

impl Entries {
    /// Indexes of [`table`](Self::table), which native code reads from
    /// `NativeCtx::runtime`.
    pub(crate) const SEND: usize = 0;
    pub(crate) const PRIMITIVE: usize = 1;
    pub(crate) const RET: usize = 2;
    pub(crate) const BAIL: usize = 3;
    pub(crate) const PUSH_BLOCK: usize = 4;
    pub(crate) const GLOBAL: usize = 5;
    pub(crate) const STRING_EQUAL: usize = 6;
    pub(crate) const STORE: usize = 7;
    pub(crate) const SAMPLE: usize = 8;
    pub(crate) const WATCHED_CALL: usize = 9;
    /// The first stub's; the others follow by shape.
    pub(crate) const STUBS: usize = 10;

    /// The addresses by index, as `NativeCtx::runtime` holds them.
    pub(crate) fn table(&self) -> [u64; RUNTIME_ENTRIES] {
        let mut t = [0; RUNTIME_ENTRIES];
        t[Self::SEND] = self.send;
        t[Self::PRIMITIVE] = self.primitive;
        t[Self::RET] = self.ret;
        t[Self::BAIL] = self.bail;
        t[Self::PUSH_BLOCK] = self.push_block;
        t[Self::GLOBAL] = self.global;
        t[Self::STRING_EQUAL] = self.string_equal;
        t[Self::STORE] = self.store;
        t[Self::SAMPLE] = self.sample;
        t[Self::WATCHED_CALL] = self.watched_call;
        t[Self::STUBS..Self::STUBS + stubs::SHAPES].copy_from_slice(&self.stubs);
        t
    }
}

/// One compiled function: its machine code and its map from code offsets to
/// bytecode pcs.
pub(crate) struct Compiled {
    /// The machine code (position independent: no relocations).
    pub(crate) code: Vec<u8>,
    /// `(start, end, pc)`: the code in `start..end` runs instruction `pc`.
    pub(crate) pcs: Vec<(u32, u32, u32)>,
    /// The resume table the code reads (kept as long as the code).
    pub(crate) resume_table: Box<[u32]>,
}

const NO: &[BlockArg] = &[];

const NIL: i64 = 0x02;
const TRUE: i64 = 0x0A;
const FALSE: i64 = 0x12;

/// The operand stack depth before each instruction (`None`: unreachable),
/// whether each pc is a resume point, and whether it is a jump target.
struct Analysis {
    depth: Vec<Option<usize>>,
    resume: Vec<bool>,
    /// Reached otherwise than by falling through from the instruction before
    /// (a jump target or a resume point).
    join: Vec<bool>,
}

fn analyse(ops: &[Op]) -> Result<Analysis, String> {
    let n = ops.len();
    let mut depth: Vec<Option<usize>> = vec![None; n + 1];
    let mut resume = vec![false; n + 1];
    let mut work = vec![(0usize, 0usize)];
    while let Some((pc, d)) = work.pop() {
        if pc >= n {
            return Err(format!("control reaches pc {pc} past the code"));
        }
        match depth[pc] {
            Some(e) if e == d => continue,
            Some(e) => return Err(format!("pc {pc} is reached with depths {e} and {d}")),
            None => depth[pc] = Some(d),
        }
        let (pop, push) = ops[pc].stack_effect();
        let (pop, push) = (pop as usize, push as usize);
        let after = d
            .checked_sub(pop)
            .ok_or_else(|| format!("pc {pc} pops more than the stack holds"))?
            + push;
        let (fall, jump) = ops[pc].successors(pc);
        for s in fall.into_iter().chain(jump) {
            work.push((s, after));
        }
    }
    resume[0] = true;
    for (pc, op) in ops.iter().enumerate() {
        match *op {
            Op::Send { .. } | Op::SuperSend { .. } | Op::Special { .. } => resume[pc + 1] = true,
            Op::JumpBack(t) | Op::ForIncr { target: t, .. } => resume[t as usize] = true,
            // The interpreter re-executes a conditional jump after sending
            // `mustBeBoolean` to what it found.
            Op::JumpIfTrue { .. } | Op::JumpIfFalse { .. } | Op::ForTest { .. } => {
                resume[pc] = true;
            }
            _ => {}
        }
    }
    for (pc, r) in resume.iter_mut().enumerate() {
        if depth.get(pc).copied().flatten().is_none() {
            *r = false;
        }
    }
    let mut join = resume.clone();
    for (pc, op) in ops.iter().enumerate() {
        // A jump's target is a join (falling through is not).
        if let (_, Some(t)) = op.successors(pc)
            && t != pc + 1
        {
            join[t] = true;
        }
        if matches!(
            op,
            Op::Jump(_) | Op::JumpBack(_) | Op::ReturnTop | Op::ReturnSelf | Op::ReturnNonLocal
        ) || matches!(op, Op::ForIncr { .. })
        {
            // pc + 1 is not reached by falling through from here.
            join[pc + 1] = true;
        }
    }
    Ok(Analysis {
        depth,
        resume,
        join,
    })
}

/// Does the loop body `ops[from..to]` poll by itself? Every send does:
/// inline ones test the sends counted towards the next poll, the
/// others go through the runtime, which makes the same test. A loop with no
/// send (only jumps, variables and `to:do:` counting) tests the request word
/// at its back jump instead, so that a stop or a sampler thread's request
/// reaches every compiled loop; loops with sends, nearly all of them, pay
/// nothing more.
fn polls_in(ops: &[Op], from: usize, to: usize) -> bool {
    ops.get(from..to).is_some_and(|body| {
        body.iter().any(|op| {
            matches!(
                op,
                Op::Send { .. } | Op::SuperSend { .. } | Op::Special { .. }
            )
        })
    })
}

/// The signatures of the calls native code makes.
struct Sigs {
    /// `(i64, i64) -> i64`: `global`, `sample`.
    two: cranelift_codegen::ir::SigRef,
    /// `(i64, i64, i64) -> i64`: `bail`, `ret`, `string_equal`.
    three: cranelift_codegen::ir::SigRef,
    /// `(i64, i64, i64, i64) -> i64`: native functions, `send`,
    /// `push_block`, `primitive`.
    four: cranelift_codegen::ir::SigRef,
    /// `(i64, i64, i64, i64)`: `store`.
    four_void: cranelift_codegen::ir::SigRef,
    /// `(i64, i64, i64, i64, i64, i64) -> i64`: the entry stubs.
    six: cranelift_codegen::ir::SigRef,
    /// `(i64, i64, i64, i64, i64) -> i64`: `watched_call`.
    five: cranelift_codegen::ir::SigRef,
}

fn signature(isa: &dyn TargetIsa, params: usize, ret: bool) -> Signature {
    let mut s = Signature::new(isa.default_call_conv());
    for _ in 0..params {
        s.params.push(AbiParam::new(types::I64));
    }
    if ret {
        s.returns.push(AbiParam::new(types::I64));
    }
    s
}

/// The native function's signature, `(ctx, pc, sp, cell) -> status`
/// (`sp`, `cell`: at a direct entry, the caller's operand stack top and
/// inline-cache entry: see [`DIRECT`]).
pub(crate) fn native_signature(isa: &dyn TargetIsa) -> Signature {
    signature(isa, 4, true)
}

/// The `pc` of a *direct entry*: native code calling the native code of a
/// method or block at a send site (`DIRECT` plus the caller's pc after the
/// send, `sp` the caller's operand stack top after the receiver and the
/// arguments, `cell` the address of the inline-cache entry the caller's
/// site was specialised on, or 0 when the caller probed it itself). The
/// callee's entry then does what the send's fast path does, once per
/// function instead of at every call site (as Cog's methods check the
/// receiver's class and build their frames in their own prologue): it
/// checks that a native call may be made (native depth, frame room, no
/// activation hooks), probes the entry (it must still name this method for
/// the receiver's class in the epoch now) — otherwise it makes the
/// caller's send through the runtime and answers for it — counts the send,
/// polls, saves the caller's pc and pushes its own frame (a block unpacks
/// its closure from the receiver slot), then runs from pc 0. Interpreter
/// entries and resume points are plain pcs, far below it.
pub(crate) const DIRECT: i64 = 1 << 30;

// A direct entry stores its frame's method id and flags (none) as one word.
const _: () = assert!(offset_of!(Frame, flags) == offset_of!(Frame, method) + 4);

/// What a direct entry knows of its callee ([`Gen::enter`]): constants in
/// code compiled under a method watch, parameters in an entry stub
/// (`stubs.rs`).
struct Callee {
    /// The frame's `bp`: its receiver's slot.
    bp: Value,
    /// The method id, the slots its receiver needs and its arguments, as
    /// one word ([`stubs::word`]).
    word: Value,
    /// The method id (the frame's method word, no flags).
    id: Value,
    /// The slots its receiver needs ([`Gen::if_fields`]), if it uses
    /// fields.
    need: Option<Value>,
    /// The caller's operand stack top, if known (else `bp` plus the
    /// receiver and the arguments).
    sp: Option<Value>,
    /// The frame's extent: the value stack slots its activation uses.
    extent: Value,
}

/// The code generator of one function.
struct Gen<'a, 'b> {
    b: FunctionBuilder<'b>,
    /// The method or block, as copied on the VM thread (`unit.rs`): with
    /// what its send sites' inline caches named then.
    code: &'a Unit,
    sigs: Sigs,
    flags: MemFlagsData,
    /// Operand variables, by depth.
    s: Vec<Variable>,
    /// The value stack address of the activation's receiver slot.
    fp: Variable,
    /// The heap's first word.
    heap: Variable,
    /// The block of each instruction.
    blocks: Vec<Block>,
    /// Slots before the operand stack: receiver, arguments, temporaries.
    base: i64,
    /// Blocks that leave to the interpreter, to fill: (block, pc, depth,
    /// the operands stored then on the path that branches there).
    bails: Vec<(Block, usize, usize, Vec<bool>)>,
    /// Per operand depth: its slot holds the variable's value (stored, or
    /// read back, since the variable was last defined on this path).
    clean: Vec<bool>,
    /// The block that returns its parameter, a status: `BAIL` after a
    /// callee or the runtime left, and every other exit but the inline
    /// return (one epilogue per function: each restores the registers the
    /// function saved).
    leave: Block,
    /// The block every bail path ends in: `(pc and sp offset from bp)`
    /// as one constant ([`Gen::at`]), the
    /// runtime's `bail` and `BAIL` (one per function; each site only
    /// stores its operands and jumps there).
    bail_tail: Block,
    /// The function's return, `(value)` (one per function: each return
    /// jumps there), made at the first return, and that return's pc.
    ret_block: Option<(Block, usize)>,
    /// The block answering `DECLINE`.
    decline: Block,
    /// The resume dispatch past pc 0, `(pc)`: the resume block of `pc`
    /// (which reads its operands from the value stack), or `DECLINE`.
    /// None when pc 0 is the only resume point.
    dispatch: Option<Block>,
    /// The function's runtime send, `(pc after the send and sp offset
    /// from bp)` as one constant ([`Gen::at`]), made at the first send that needs it: each such send stores
    /// its operands and jumps there; the send goes on at its resume point
    /// through the dispatch.
    send_tail: Option<Block>,
    /// The function's poll of its inline sends, `(pc after the send)`,
    /// made at the first: each inline send whose poll is due stores its
    /// operands and jumps there; it goes on at its resume point through
    /// the dispatch.
    poll_tail: Option<Block>,
    /// Blocks that take the poll tail, to fill: (block, the pc after the
    /// send, depth, the operands stored then on the path that branches
    /// there), as `bails`.
    polls: Vec<(Block, usize, usize, Vec<bool>)>,
    /// The stack slot that keeps `bp`, `env` and the caller's pinned
    /// register ([`SLOT_BP`], [`SLOT_ENV`], [`SLOT_CALLER_R15`]).
    slot: cranelift_codegen::ir::StackSlot,
    /// `bp` and `env` as loaded from `slot` in a block (index 0 unused:
    /// `ctx` is the pinned register's).
    cache: [Option<(Block, Value)>; 3],
    /// `ctx`, `bp` or `env` as a value of the whole function (an entry
    /// stub's parameters: a stub has no stack slot).
    held: [Option<Value>; 3],
    /// The highest field index the code reads or writes, if any.
    max_field: Option<u16>,
    /// Branch edges that count a line-coverage arrival, to make (`lines.rs`):
    /// (block, the instruction it goes to).
    edges: Vec<(Block, usize)>,
    /// The inline-cache entries the code probes at its send sites: it
    /// loads each one's first word only to compare it once (`relax.rs`
    /// folds the load into the comparison).
    probes: Vec<u64>,
}

impl Gen<'_, '_> {
    /// `ctx` (0), `bp` (1) or `env` (2). `ctx` is the pinned register's
    /// (r15, callee-saved for the runtime: it survives every call), read
    /// afresh at each use, so that each copy has one use and `relax.rs`
    /// folds it into the instruction using it (`mov %r15,%rax; mov
    /// 0x10(%rax),%rcx` is `mov 0x10(%r15),%rcx`). `bp` and `env` are read
    /// from their stack slot once per block. Kept in registers across the
    /// whole function they are live across every call, which costs spills
    /// and reloads at each; loaded where they are used, they are not (1%
    /// fewer instructions run in native code on Richards, compile time
    /// unchanged).
    fn base_value(&mut self, k: usize) -> Value {
        if let Some(v) = self.held[k] {
            return v;
        }
        if k == 0 {
            return self.b.ins().get_pinned_reg(types::I64);
        }
        let cur = self.b.current_block();
        if let (Some((b, v)), Some(c)) = (self.cache[k], cur)
            && b == c
        {
            return v;
        }
        let v = self
            .b
            .ins()
            .stack_load(types::I64, types::I64, self.slot, (k as i32 - 1) * 8);
        self.cache[k] = cur.map(|c| (c, v));
        v
    }

    fn ctx(&mut self) -> Value {
        self.base_value(0)
    }

    /// Put back the pinned register of this function's caller (a function
    /// called from Rust must keep r15, callee-saved there), before a return.
    /// An entry stub, called only from native code, never sets it.
    fn restore_caller_r15(&mut self) {
        if self.held[0].is_none() {
            let old = self
                .b
                .ins()
                .stack_load(types::I64, types::I64, self.slot, SLOT_CALLER_R15);
            self.b.ins().set_pinned_reg(old);
        }
    }

    fn bp(&mut self) -> Value {
        self.base_value(1)
    }

    fn env_v(&mut self) -> Value {
        self.base_value(2)
    }

    fn iconst(&mut self, v: i64) -> Value {
        self.b.ins().iconst(types::I64, v)
    }

    fn load(&mut self, addr: Value, offset: i32) -> Value {
        self.b.ins().load(types::I64, self.flags, addr, offset)
    }

    fn store(&mut self, v: Value, addr: Value, offset: i32) {
        self.b.ins().store(self.flags, v, addr, offset);
    }

    /// The displacement of the context's field at `offset` from the
    /// pointer native code holds (the context's address plus
    /// `NativeCtx::BIAS`: one byte of displacement for the first 256 bytes).
    fn ctx_disp(offset: usize) -> i32 {
        offset as i32 - NativeCtx::BIAS as i32
    }

    fn ctx_field(&mut self, offset: usize) -> Value {
        let ctx = self.ctx();
        self.load(ctx, Self::ctx_disp(offset))
    }

    fn set_ctx_field(&mut self, v: Value, offset: usize) {
        let ctx = self.ctx();
        self.store(v, ctx, Self::ctx_disp(offset));
    }

    /// Add `n` to a counter of the context.
    /// Add 1 to a counter of the context; answers its new value.
    fn bump(&mut self, offset: usize) -> Value {
        let c = self.ctx_field(offset);
        let c = self.b.ins().iadd_imm_s(c, 1);
        self.set_ctx_field(c, offset);
        c
    }

    /// Reload the value stack's and the heap's addresses (after a call).
    fn reload_bases(&mut self) {
        let stack = self.ctx_field(offset_of!(NativeCtx, stack));
        let bpv = self.bp();
        let bp8 = self.b.ins().ishl_imm_u(bpv, 3);
        let fp = self.b.ins().iadd(stack, bp8);
        self.b.def_var(self.fp, fp);
        let heap = self.ctx_field(offset_of!(NativeCtx, heap));
        self.b.def_var(self.heap, heap);
    }

    /// Slot `i` of the activation (0: receiver, then arguments, temporaries,
    /// operands), as a byte offset from `fp`.
    fn slot_offset(i: i64) -> i32 {
        (i * 8) as i32
    }

    fn read_slot(&mut self, i: i64) -> Value {
        let fp = self.b.use_var(self.fp);
        self.load(fp, Self::slot_offset(i))
    }

    fn write_slot(&mut self, i: i64, v: Value) {
        let fp = self.b.use_var(self.fp);
        self.store(v, fp, Self::slot_offset(i));
    }

    /// Store the operands `0..depth` whose slots do not hold them yet (on
    /// the straight-line path of the code).
    fn flush(&mut self, depth: usize) {
        for k in 0..depth {
            if !self.clean[k] {
                let v = self.b.use_var(self.s[k]);
                self.write_slot(self.base + k as i64, v);
                self.clean[k] = true;
            }
        }
    }

    /// Read the operands `0..depth` from their slots.
    fn reload(&mut self, depth: usize) {
        for k in 0..depth {
            let v = self.read_slot(self.base + k as i64);
            self.b.def_var(self.s[k], v);
        }
    }

    /// Read the top operand (at `depth - 1`, a call's answer) from its slot;
    /// the operands below it are unchanged (a call that returns to native
    /// code ran no collection and no process switch).
    fn reload_top(&mut self, depth: usize) {
        if depth > 0 {
            let v = self.read_slot(self.base + depth as i64 - 1);
            self.b.def_var(self.s[depth - 1], v);
        }
    }

    /// The operand at `depth` was (re)defined.
    fn dirty(&mut self, depth: usize) {
        self.clean[depth] = false;
    }

    /// The operand stack's top index in the value stack, at `depth`.
    fn sp(&mut self, depth: usize) -> Value {
        let bpv = self.bp();
        self.b.ins().iadd_imm_s(bpv, self.base + depth as i64)
    }

    /// Call the runtime's entry `entry` (an index of [`Entries::table`]).
    fn call(
        &mut self,
        sig: cranelift_codegen::ir::SigRef,
        entry: usize,
        args: &[Value],
    ) -> Option<Value> {
        let f = self.runtime(entry);
        self.call_value(sig, f, args)
    }

    /// Call the function at `f`.
    fn call_value(
        &mut self,
        sig: cranelift_codegen::ir::SigRef,
        f: Value,
        args: &[Value],
    ) -> Option<Value> {
        let inst = self.b.ins().call_indirect(sig, f, args);
        self.b.inst_results(inst).first().copied()
    }

    /// The address of the runtime's entry `entry` (an index of
    /// [`Entries::table`]), read from the context (seven bytes where the
    /// address as a constant takes ten).
    fn runtime(&mut self, entry: usize) -> Value {
        self.ctx_field(offset_of!(NativeCtx, runtime) + 8 * entry)
    }

    /// Leave to the interpreter at `pc` with `depth` operands: those not
    /// stored on the path here are stored, then the function's bail tail.
    fn bail_here(&mut self, pc: usize, depth: usize) {
        self.flush(depth);
        let at = self.at(pc, depth);
        let tail = self.bail_tail;
        self.b.ins().jump(tail, &[BlockArg::Value(at)]);
    }

    /// A resume pc and the operand stack's top at `depth` as one constant
    /// (`pc << AT_SHIFT | (base + depth)`), the parameter of a shared
    /// tail: one `mov` of a 32-bit immediate at each site that jumps there
    /// where the two took two (the tail, made once per function, takes
    /// them apart: [`at_parts`](Self::at_parts)). `compile` declines a
    /// frame whose slots do not fit in the low bits.
    fn at(&mut self, pc: usize, depth: usize) -> Value {
        let off = self.base + depth as i64;
        debug_assert!(off < 1 << AT_SHIFT);
        self.iconst((pc as i64) << AT_SHIFT | off)
    }

    /// The pc and the operand stack's top (`bp` plus the offset) of a
    /// shared tail's parameter made by [`at`](Self::at).
    fn at_parts(&mut self, at: Value) -> (Value, Value) {
        let pc = self.b.ins().ushr_imm_u(at, AT_SHIFT);
        // (The low 16 bits by `movzx`, shorter than an `and` of the mask.)
        const _: () = assert!(AT_SHIFT == 16);
        let low = self.b.ins().ireduce(types::I16, at);
        let off = self.b.ins().uextend(types::I64, low);
        let bpv = self.bp();
        let sp = self.b.ins().iadd(bpv, off);
        (pc, sp)
    }

    /// A block that leaves at `pc` with `depth` operands (filled at the
    /// end, with the operands' values where it is branched to: it stores
    /// those the path branching there had not stored).
    fn bail_block(&mut self, pc: usize, depth: usize) -> Block {
        let blk = self.b.create_block();
        self.bails.push((blk, pc, depth, self.clean.clone()));
        blk
    }

    /// The bail tail: `(pc and sp offset)` ([`at`](Self::at)), the
    /// operands stored; the runtime's `bail`, then `BAIL`.
    fn fill_bail_tail(&mut self) {
        let tail = self.bail_tail;
        self.b.switch_to_block(tail);
        let at = self.b.block_params(tail)[0];
        let (pc, sp) = self.at_parts(at);
        let ctx = self.ctx();
        let (sig, f) = (self.sigs.three, Entries::BAIL);
        self.call(sig, f, &[ctx, pc, sp]);
        let leave = self.leave;
        let bail = self.iconst(BAIL as i64);
        self.b.ins().jump(leave, &[BlockArg::Value(bail)]);
    }

    fn is_int(&mut self, v: Value) -> Value {
        self.b.ins().band_imm_s(v, 1)
    }

    /// Are `a` and `b` both SmallIntegers? A SmallInteger constant (a
    /// literal argument, `x + 1`) is not tested.
    fn both_int(&mut self, a: Value, b: Value) -> Value {
        let int = |c: Option<i64>| c.is_some_and(|c| c & 1 == 1);
        if int(self.constant(b)) {
            return self.is_int(a);
        }
        if int(self.constant(a)) {
            return self.is_int(b);
        }
        let x = self.b.ins().band(a, b);
        self.b.ins().band_imm_s(x, 1)
    }

    /// Is `v` a heap pointer (low three bits 0, not 0)?
    fn is_ptr(&mut self, v: Value) -> Value {
        let low = self.b.ins().band_imm_s(v, 7);
        let tag_ok = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
        let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
        self.b.ins().band(tag_ok, nonzero)
    }

    /// Go to `yes` when `v` is a heap pointer, else to `no` (with `args`):
    /// two tests and branches, no condition values (fewer instructions and
    /// registers than branching on [`is_ptr`](Self::is_ptr)).
    fn if_ptr(&mut self, v: Value, yes: Block, no: Block, args: &[BlockArg]) {
        let low = self.b.ins().band_imm_s(v, 7);
        let aligned = self.b.create_block();
        self.b.ins().brif(low, no, args, aligned, NO);
        self.b.switch_to_block(aligned);
        self.b.ins().brif(v, yes, NO, no, args);
    }

    /// The address of object `v` (a pointer).
    fn obj_addr(&mut self, v: Value) -> Value {
        let heap = self.b.use_var(self.heap);
        self.b.ins().iadd(heap, v)
    }

    /// The address of field `index` (a value, 0-based) of `obj`, or a jump
    /// to `outside` with `args` when `obj` is not a pointer or has no such
    /// field.
    fn field_address(
        &mut self,
        obj: Value,
        index: Value,
        outside: Block,
        args: &[BlockArg],
    ) -> Value {
        let check = self.b.create_block();
        self.if_ptr(obj, check, outside, args);
        self.b.switch_to_block(check);
        let a = self.obj_addr(obj);
        let size = self.object_size(a);
        let inb = self.b.ins().icmp(IntCC::UnsignedLessThan, index, size);
        let inside = self.b.create_block();
        self.b.ins().brif(inb, inside, NO, outside, args);
        self.b.switch_to_block(inside);
        let off = self.b.ins().ishl_imm_u(index, 3);
        let fa = self.b.ins().iadd(a, off);
        self.b.ins().iadd_imm_s(fa, HEADER_BYTES as i64)
    }

    /// Is slot `slot` inside pointer object `v`? (`v` must be a pointer.)
    fn slot_in_bounds(&mut self, v: Value, slot: i64) -> Value {
        let addr = self.obj_addr(v);
        self.slot_in_object(addr, slot)
    }

    /// Is slot `slot` inside the object at address `addr`?
    fn slot_in_object(&mut self, addr: Value, slot: i64) -> Value {
        let size = self.object_size(addr);
        self.b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThan, size, slot)
    }

    /// The number of slots of the object at address `addr` (its header's
    /// size field: the low half of its second word, read as one 32-bit
    /// load rather than the word and a mask; x86-64 is little-endian).
    fn object_size(&mut self, addr: Value) -> Value {
        const _: () = assert!(SIZE_MASK == 0xFFFF_FFFF);
        self.load32(addr, 8)
    }

    /// Go to `yes` when receiver `r` has the fields the code reads and
    /// writes (a pointer with more slots than the highest field index),
    /// else to `no`: by branches, no condition values (less code at each
    /// entry). Tested at every entry (a receiver never changes during an
    /// activation), so that field reads and writes are plain loads and
    /// stores: code entered with a receiver without them (an instance made
    /// before its class gained fields, whose reads answer nil in the
    /// interpreter) is left to the interpreter. Answers the object's
    /// address, which `yes` may use.
    fn if_fields(&mut self, r: Value, need: Value, yes: Block, no: Block) -> Value {
        let check = self.b.create_block();
        self.if_ptr(r, check, no, NO);
        self.b.switch_to_block(check);
        let addr = self.obj_addr(r);
        let inb = self.has_slots(addr, need);
        self.b.ins().brif(inb, yes, NO, no, NO);
        addr
    }

    /// Has the object at address `addr` at least `need` slots?
    fn has_slots(&mut self, addr: Value, need: Value) -> Value {
        let size = self.object_size(addr);
        self.b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, size, need)
    }

    /// The slots this code's receiver needs ([`if_fields`](Self::if_fields)),
    /// if it uses fields.
    fn need(&mut self) -> Option<Value> {
        let top = self.max_field?;
        Some(self.iconst(i64::from(top) + 1))
    }

    /// A value as `true`/`false` from a condition.
    fn boolean(&mut self, c: Value) -> Value {
        let t = self.iconst(TRUE);
        let f = self.iconst(FALSE);
        self.b.ins().select(c, t, f)
    }

    /// Count a send made without the runtime, and poll (the interpreter's
    /// safepoints make the same test, `obs/self_timed.rs`): once the sends
    /// native code counted since its last runtime call reach those left to
    /// the poll (`NativeCtx::sends`, counted from minus them, is no longer
    /// negative), the runtime looks at
    /// requests from other threads (a stop, a sampler thread's stack request)
    /// and at a self-timed sampler's clock. On a stop the runtime answers
    /// `BAIL` with the run's error kept, and native code leaves without
    /// storing its operands (the run ends), so the cold path adds no block
    /// that keeps operands live.
    fn count_send_and_poll(&mut self, pc_after: usize) {
        let due = self.count_send();
        self.take_poll(due, pc_after);
    }

    /// Add 1 to the sends native code counted; answers whether a poll is
    /// due.
    fn count_send(&mut self) -> Value {
        let sends = self.bump(offset_of!(NativeCtx, sends));
        self.poll_due(sends)
    }

    /// Whether `sends` (`NativeCtx::sends` with a send counted) makes a
    /// poll due: it counts from minus the sends left to it
    /// (`NativeCtx::poll_at`), so its sign says it (one test).
    fn poll_due(&mut self, sends: Value) -> Value {
        self.b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, sends, 0)
    }

    /// [`count_send_and_poll`](Self::count_send_and_poll) at an inline
    /// send that has answered, with `depth_after` operands (its answer on
    /// top, defined since the operands were last stored): a poll due
    /// stores the operands and takes the function's poll tail, which goes
    /// on at the resume point after the send, `pc_after`, through the
    /// dispatch (less code at each send than a call of its own; polls are
    /// due every few thousand sends).
    fn count_answered_send_and_poll(&mut self, pc_after: usize, depth_after: usize) {
        if self.dispatch.is_none() {
            self.count_send_and_poll(pc_after);
            return;
        }
        if self.poll_tail.is_none() {
            let t = self.b.create_block();
            self.b.append_block_param(t, types::I64);
            self.poll_tail = Some(t);
        }
        let due = self.count_send();
        let take = self.b.create_block();
        let mut stored = self.clean.clone();
        stored[depth_after - 1] = false;
        self.polls.push((take, pc_after, depth_after, stored));
        let done = self.b.create_block();
        self.b.ins().brif(due, take, NO, done, NO);
        self.b.switch_to_block(done);
    }

    /// The poll tail (`poll_tail`), if any send took it: the runtime's
    /// poll at `pc`, then the dispatch to `pc` (or leave).
    fn fill_poll_tail(&mut self) {
        let (Some(tail), Some(dispatch)) = (self.poll_tail, self.dispatch) else {
            return;
        };
        for (blk, pc, depth, stored) in std::mem::take(&mut self.polls) {
            self.b.switch_to_block(blk);
            self.b.set_srcloc(SourceLoc::new(pc as u32 - 1));
            self.clean = stored;
            self.flush(depth);
            let pc = self.iconst(pc as i64);
            self.b.ins().jump(tail, &[BlockArg::Value(pc)]);
        }
        self.b.set_srcloc(SourceLoc::default());
        self.b.switch_to_block(tail);
        let pc = self.b.block_params(tail)[0];
        let ctx = self.ctx();
        let (sig, addr) = (self.sigs.two, Entries::SAMPLE);
        let stop = self.call(sig, addr, &[ctx, pc]).unwrap_or(pc);
        let go = self.b.create_block();
        let leave = self.leave;
        self.b
            .ins()
            .brif(stop, leave, &[BlockArg::Value(stop)], go, NO);
        self.b.switch_to_block(go);
        self.reload_bases();
        self.b.ins().jump(dispatch, &[BlockArg::Value(pc)]);
    }

    /// A poll at the back jump of a loop that sends nothing (so counts no
    /// sends): the request word `NativeCtx::request` (never null: the
    /// sampler thread's, or with none attached the one a stop sets,
    /// `sched/interrupt.rs`).
    fn poll_back_jump(&mut self, pc_after: usize) {
        let req = self.ctx_field(offset_of!(NativeCtx, request));
        let r = self.load(req, 0);
        self.take_poll(r, pc_after);
    }

    /// Call the runtime's poll when `due` is non-zero.
    fn take_poll(&mut self, due: Value, pc: usize) {
        let take = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(due, take, NO, done, NO);
        self.b.switch_to_block(take);
        let pc = self.iconst(pc as i64);
        let ctx = self.ctx();
        let (sig, addr) = (self.sigs.two, Entries::SAMPLE);
        let stop = self.call(sig, addr, &[ctx, pc]).unwrap_or(pc);
        let leave = self.leave;
        self.b
            .ins()
            .brif(stop, leave, &[BlockArg::Value(stop)], done, NO);
        self.b.switch_to_block(done);
    }

    /// A send the runtime runs (`Send`, `SuperSend`, or a special send whose
    /// inline path does not apply), with `depth` operands before it.
    fn runtime_send(&mut self, pc: usize, depth: usize) {
        self.flush(depth);
        self.runtime_send_flushed(pc, depth);
    }

    /// [`runtime_send`](Self::runtime_send) with the operands already in
    /// their slots: a jump to the function's send tail, which goes on at
    /// the resume point after the send (through the dispatch, which reads
    /// the operands and the answer from their slots). Continues in a block
    /// that nothing reaches.
    fn runtime_send_flushed(&mut self, pc: usize, depth: usize) {
        let tail = match self.send_tail {
            Some(t) => t,
            None => {
                let t = self.b.create_block();
                self.b.append_block_param(t, types::I64);
                self.send_tail = Some(t);
                t
            }
        };
        let at = self.at(pc + 1, depth);
        self.b.ins().jump(tail, &[BlockArg::Value(at)]);
        let unreached = self.b.create_block();
        self.b.switch_to_block(unreached);
    }

    /// The send tail (`send_tail`), if any send took it: the runtime's
    /// send (`DONE`: the runtime ran the callee, natively or not, to its
    /// return), then the dispatch to the pc after it; or leave (`BAIL`).
    fn fill_send_tail(&mut self) {
        let Some(tail) = self.send_tail else {
            return;
        };
        self.b.switch_to_block(tail);
        let at = self.b.block_params(tail)[0];
        let (pc, sp) = self.at_parts(at);
        let ctx = self.ctx();
        let none = self.iconst(0);
        let (sig, f) = (self.sigs.four, Entries::SEND);
        let r = self.call(sig, f, &[ctx, pc, sp, none]).unwrap_or(pc);
        let done = self.b.create_block();
        let leave = self.leave;
        self.b.ins().brif(r, leave, &[BlockArg::Value(r)], done, NO);
        self.b.switch_to_block(done);
        self.reload_bases();
        match self.dispatch {
            Some(dispatch) => self.b.ins().jump(dispatch, &[BlockArg::Value(pc)]),
            // (Not made: every send has a resume point after it.)
            None => self.b.ins().jump(self.decline, NO),
        };
    }

    /// The address of slot `slot` of environment `e`, checking that `e` is an
    /// environment holding it (otherwise leave at `pc`).
    fn env_slot(&mut self, e: Value, slot: i64, pc: usize, depth: usize) -> Value {
        let bail = self.bail_block(pc, depth);
        let checked = self.b.create_block();
        self.if_ptr(e, checked, bail, NO);
        self.b.switch_to_block(checked);
        let addr = self.obj_addr(e);
        let h0 = self.load(addr, 0);
        let class = self.b.ins().band_imm_s(h0, CLASS_MASK as i64);
        let is_env = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, class, cls::ENV as i64);
        let in_bounds = self.slot_in_bounds(e, slot);
        let ok = self.b.ins().band(is_env, in_bounds);
        let fine = self.b.create_block();
        self.b.ins().brif(ok, fine, NO, bail, NO);
        self.b.switch_to_block(fine);
        self.b
            .ins()
            .iadd_imm_s(addr, HEADER_BYTES as i64 + slot * 8)
    }

    /// The environment `depth` scopes out of the activation's.
    fn env_at(&mut self, hops: u8, pc: usize, depth: usize) -> Value {
        let mut e = self.env_v();
        for _ in 0..hops {
            let a = self.env_slot(e, ENV_PARENT as i64, pc, depth);
            e = self.load(a, 0);
        }
        e
    }

    /// The bits of `v` when it is a constant of this code (an `iconst`:
    /// nil, true, false, a SmallInteger).
    fn constant(&self, v: Value) -> Option<i64> {
        let dfg = &self.b.func.dfg;
        match dfg.value_def(dfg.resolve_aliases(v)) {
            ValueDef::Result(inst, _) => match dfg.insts[inst] {
                InstructionData::UnaryImm {
                    opcode: Opcode::Iconst,
                    imm,
                } => Some(imm.bits()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Store `v` at `addr` (slot `index` of `object`: `index` makes it),
    /// through the write barrier when `v` is a pointer (a constant, never
    /// one, is stored as it is).
    fn barrier_store(
        &mut self,
        object: Value,
        index: impl FnOnce(&mut Self) -> Value,
        addr: Value,
        v: Value,
    ) {
        if self.constant(v).is_some_and(|c| c & 7 != 0 || c == 0) {
            self.store(v, addr, 0);
            return;
        }
        let slow = self.b.create_block();
        let fast = self.b.create_block();
        let done = self.b.create_block();
        self.if_ptr(v, slow, fast, NO);
        self.b.switch_to_block(slow);
        let i = index(self);
        let ctx = self.ctx();
        let (sig, f) = (self.sigs.four_void, Entries::STORE);
        self.call(sig, f, &[ctx, object, i, v]);
        self.b.ins().jump(done, NO);
        self.b.switch_to_block(fast);
        self.store(v, addr, 0);
        self.b.ins().jump(done, NO);
        self.b.switch_to_block(done);
    }

    fn push(&mut self, depth: &mut usize, v: Value) {
        self.b.def_var(self.s[*depth], v);
        self.clean[*depth] = false;
        *depth += 1;
    }

    fn pop(&mut self, depth: &mut usize) -> Value {
        *depth -= 1;
        self.b.use_var(self.s[*depth])
    }

    fn top(&mut self, depth: usize) -> Value {
        self.b.use_var(self.s[depth - 1])
    }

    /// The inline paths of a binary special send: SmallInteger receiver and
    /// argument, or (for `+ - *` and the comparisons) an immediate Double
    /// receiver with an immediate Double or SmallInteger argument, as the
    /// interpreter's fast path (`interp/special.rs`) takes them. Answers
    /// whether it handled `op`; anything else goes to the runtime's send.
    fn inline_arith(&mut self, pc: usize, op: SpecialOp, depth: usize, site: u16) -> bool {
        let cmp = match op {
            SpecialOp::Lt => Some(IntCC::SignedLessThan),
            SpecialOp::Gt => Some(IntCC::SignedGreaterThan),
            SpecialOp::Le => Some(IntCC::SignedLessThanOrEqual),
            SpecialOp::Ge => Some(IntCC::SignedGreaterThanOrEqual),
            SpecialOp::Eq => Some(IntCC::Equal),
            SpecialOp::Ne => Some(IntCC::NotEqual),
            SpecialOp::Add | SpecialOp::Sub | SpecialOp::Mul | SpecialOp::BitAnd => None,
            _ => return false,
        };
        let a = self.b.use_var(self.s[depth - 2]);
        let bv = self.b.use_var(self.s[depth - 1]);
        let ints = self.both_int(a, bv);
        let fast = self.b.create_block();
        let not_ints = self.b.create_block();
        let slow = self.b.create_block();
        let join = self.b.create_block();
        // The inline paths' answers meet in one block that counts the send
        // and takes a request once.
        let answer = self.b.create_block();
        let answer_v = self.b.append_block_param(answer, types::I64);
        self.b.ins().brif(ints, fast, NO, not_ints, NO);
        self.b.switch_to_block(fast);
        let result = match (cmp, op) {
            (Some(cc), _) => {
                let c = self.b.ins().icmp(cc, a, bv);
                self.boolean(c)
            }
            (None, SpecialOp::Add) => {
                let b1 = self.untagged_1(bv);
                let (r, of) = self.b.ins().sadd_overflow(a, b1);
                self.unless(of, slow);
                r
            }
            (None, SpecialOp::Sub) => match self.constant(bv) {
                // a - (c - 1): the tag kept, no add after (it overflows
                // exactly where a - c does: a - c is even).
                Some(c) => {
                    let c1 = self.iconst(c - 1);
                    let (r, of) = self.b.ins().ssub_overflow(a, c1);
                    self.unless(of, slow);
                    r
                }
                None => {
                    let (r, of) = self.b.ins().ssub_overflow(a, bv);
                    self.unless(of, slow);
                    self.b.ins().iadd_imm_s(r, 1)
                }
            },
            (None, SpecialOp::Mul) => {
                let x = self.b.ins().sshr_imm_u(a, 1);
                let y = self.untagged_1(bv);
                let (r, of) = self.b.ins().smul_overflow(x, y);
                self.unless(of, slow);
                self.b.ins().iadd_imm_s(r, 1)
            }
            _ => self.b.ins().band(a, bv),
        };
        self.b.ins().jump(answer, &[BlockArg::Value(result)]);
        self.b.switch_to_block(not_ints);
        if op == SpecialOp::BitAnd || !self.code.doubles {
            self.b.ins().jump(slow, NO);
        } else {
            let (x, y) = self.double_operands(a, bv, slow);
            let result = match op {
                SpecialOp::Add => {
                    let r = self.b.ins().fadd(x, y);
                    self.encode_double(r, slow)
                }
                SpecialOp::Sub => {
                    let r = self.b.ins().fsub(x, y);
                    self.encode_double(r, slow)
                }
                SpecialOp::Mul => {
                    let r = self.b.ins().fmul(x, y);
                    self.encode_double(r, slow)
                }
                _ => {
                    let cc = match op {
                        SpecialOp::Lt => FloatCC::LessThan,
                        SpecialOp::Gt => FloatCC::GreaterThan,
                        SpecialOp::Le => FloatCC::LessThanOrEqual,
                        SpecialOp::Ge => FloatCC::GreaterThanOrEqual,
                        SpecialOp::Eq => FloatCC::Equal,
                        _ => FloatCC::NotEqual,
                    };
                    let c = self.b.ins().fcmp(cc, x, y);
                    self.boolean(c)
                }
            };
            self.b.ins().jump(answer, &[BlockArg::Value(result)]);
        }
        self.b.switch_to_block(slow);
        if matches!(op, SpecialOp::Eq | SpecialOp::Ne) && self.code.strings {
            // Short Strings compared here; other String receivers by the
            // interpreter's fast path, by a call that only reads the heap (no
            // operand stored).
            let call = self.b.create_block();
            self.short_string_equal(a, bv, op == SpecialOp::Eq, answer, call);
            self.b.switch_to_block(call);
            let ctx = self.ctx();
            let (sig, f) = (self.sigs.three, Entries::STRING_EQUAL);
            let r = self.call(sig, f, &[ctx, a, bv]).unwrap_or(a);
            let answered = self.b.create_block();
            let send = self.b.create_block();
            self.b.ins().brif(r, answered, NO, send, NO);
            self.b.switch_to_block(answered);
            let want = if op == SpecialOp::Eq { 1 } else { 2 };
            let c = self.b.ins().icmp_imm_u(IntCC::Equal, r, want);
            let result = self.boolean(c);
            self.b.ins().jump(answer, &[BlockArg::Value(result)]);
            self.b.switch_to_block(send);
        }
        self.special_send(pc, depth, 1, site);
        self.b.ins().jump(join, NO);
        self.b.switch_to_block(answer);
        self.inline_answer(answer_v, pc, depth, join);
        self.b.switch_to_block(join);
        self.dirty(depth - 2);
        true
    }

    /// SmallInteger `v` less its tag (`v - 1`: twice its value), folded
    /// when `v` is a constant.
    fn untagged_1(&mut self, v: Value) -> Value {
        match self.constant(v) {
            Some(c) => self.iconst(c - 1),
            None => self.b.ins().iadd_imm_s(v, -1),
        }
    }

    /// `a = b` (`eq`) or `a ~= b` between a String `a` and a String or
    /// Symbol `b` of at most 8 bytes, while `String>>=` is String's own
    /// primitive (`NativeCtx::string_eq` holds the epoch now): the
    /// interpreter's fast path (`string_equal`, a byte comparison) in
    /// machine code, the answer to `answer`; anything else to `other`.
    fn short_string_equal(&mut self, a: Value, b: Value, eq: bool, answer: Block, other: Block) {
        let pa = self.is_ptr(a);
        let pb = self.is_ptr(b);
        let ptrs = self.b.ins().band(pa, pb);
        let objects = self.b.create_block();
        self.b.ins().brif(ptrs, objects, NO, other, NO);
        self.b.switch_to_block(objects);
        let aa = self.obj_addr(a);
        let ba = self.obj_addr(b);
        let ha = self.load(aa, 0);
        let ca = self.b.ins().band_imm_s(ha, CLASS_MASK as i64);
        let hb = self.load(ba, 0);
        let cb = self.b.ins().band_imm_s(hb, CLASS_MASK as i64);
        let a_string = self
            .b
            .ins()
            .icmp_imm_u(IntCC::Equal, ca, cls::STRING as i64);
        let b_string = self
            .b
            .ins()
            .icmp_imm_u(IntCC::Equal, cb, cls::STRING as i64);
        let b_symbol = self
            .b
            .ins()
            .icmp_imm_u(IntCC::Equal, cb, cls::SYMBOL as i64);
        let b_ok = self.b.ins().bor(b_string, b_symbol);
        let word = self.ctx_field(offset_of!(NativeCtx, string_eq));
        let held = self.load32(word, 0);
        let epoch = self.ctx_field(offset_of!(NativeCtx, epoch));
        let valid = self.b.ins().icmp(IntCC::Equal, held, epoch);
        let ok = self.b.ins().band(a_string, b_ok);
        let ok = self.b.ins().band(ok, valid);
        let sizes = self.b.create_block();
        self.b.ins().brif(ok, sizes, NO, other, NO);
        self.b.switch_to_block(sizes);
        let na = self.object_size(aa);
        let nb = self.object_size(ba);
        let same = self.b.ins().icmp(IntCC::Equal, na, nb);
        let (yes, no) = if eq { (TRUE, FALSE) } else { (FALSE, TRUE) };
        let same_size = self.b.create_block();
        let differ = self.iconst(no);
        self.b
            .ins()
            .brif(same, same_size, NO, answer, &[BlockArg::Value(differ)]);
        self.b.switch_to_block(same_size);
        // 1 to 8 bytes: one word each (an object has whole words), compared
        // under a mask of the bytes it holds; none: equal.
        let empty = self.b.ins().icmp_imm_u(IntCC::Equal, na, 0);
        let equal = self.iconst(yes);
        let nonempty = self.b.create_block();
        self.b
            .ins()
            .brif(empty, answer, &[BlockArg::Value(equal)], nonempty, NO);
        self.b.switch_to_block(nonempty);
        let short = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, na, 8);
        let words = self.b.create_block();
        self.b.ins().brif(short, words, NO, other, NO);
        self.b.switch_to_block(words);
        let wa = self.load(aa, HEADER_BYTES);
        let wb = self.load(ba, HEADER_BYTES);
        let x = self.b.ins().bxor(wa, wb);
        let bits = self.b.ins().ishl_imm_u(na, 3);
        let sixty_four = self.iconst(64);
        let shift = self.b.ins().isub(sixty_four, bits);
        let ones = self.iconst(-1);
        let mask = self.b.ins().ushr(ones, shift);
        let diff = self.b.ins().band(x, mask);
        let c = self
            .b
            .ins()
            .icmp_imm_u(if eq { IntCC::Equal } else { IntCC::NotEqual }, diff, 0);
        let result = self.boolean(c);
        self.b.ins().jump(answer, &[BlockArg::Value(result)]);
    }

    /// Go on in a new block unless `c`, else to `slow`.
    fn unless(&mut self, c: Value, slow: Block) {
        let ok = self.b.create_block();
        self.b.ins().brif(c, slow, NO, ok, NO);
        self.b.switch_to_block(ok);
    }

    /// The end of an inline binary send's path: count the send, answer
    /// `result` in the receiver's operand, take a request, and join.
    fn inline_answer(&mut self, result: Value, pc: usize, depth: usize, join: Block) {
        self.b.def_var(self.s[depth - 2], result);
        self.count_answered_send_and_poll(pc + 1, depth - 1);
        self.b.ins().jump(join, NO);
    }

    /// The receiver `a` (an immediate Double) and the argument `b` (an
    /// immediate Double or a SmallInteger) as `f64`s; anything else goes to
    /// `slow`.
    fn double_operands(&mut self, a: Value, b: Value, slow: Block) -> (Value, Value) {
        let a4 = self.less_float_tag(a);
        let a_other = self.b.ins().band_imm_s(a4, 7);
        let check_b = self.b.create_block();
        self.b.ins().brif(a_other, slow, NO, check_b, NO);
        self.b.switch_to_block(check_b);
        let x = self.decode_double(a, a4);
        let b_float_blk = self.b.create_block();
        let b_not_float = self.b.create_block();
        let b_int_blk = self.b.create_block();
        let both = self.b.create_block();
        let y = self.b.append_block_param(both, types::F64);
        let b4 = self.less_float_tag(b);
        let b_other = self.b.ins().band_imm_s(b4, 7);
        self.b.ins().brif(b_other, b_not_float, NO, b_float_blk, NO);
        self.b.switch_to_block(b_float_blk);
        let yf = self.decode_double(b, b4);
        self.b.ins().jump(both, &[BlockArg::Value(yf)]);
        self.b.switch_to_block(b_not_float);
        let b_int = self.is_int(b);
        self.b.ins().brif(b_int, b_int_blk, NO, slow, NO);
        self.b.switch_to_block(b_int_blk);
        let i = self.b.ins().sshr_imm_u(b, 1);
        let yi = self.b.ins().fcvt_from_sint(types::F64, i);
        self.b.ins().jump(both, &[BlockArg::Value(yi)]);
        self.b.switch_to_block(both);
        (x, y)
    }

    /// `v` less the Double tag: its low three bits are zero (a `test`) when
    /// `v` is an immediate Double, and it is zero when `v` is +0.0 (one
    /// `lea` serves both tests: one instruction fewer than masking the tag
    /// and comparing it).
    fn less_float_tag(&mut self, v: Value) -> Value {
        self.b.ins().iadd_imm_s(v, -(FLOAT_TAG as i64))
    }

    /// The `f64` of an immediate Double `v` (`Value::float_unchecked`);
    /// `v4` is `v` less its tag ([`less_float_tag`](Self::less_float_tag)).
    ///
    /// `v` rotated right by 4 is a double with the same sign and mantissa
    /// whose exponent field is the rebased exponent plus 1024 (the tag's
    /// bit 2 lands in its top bit) where the Double's is it plus 896:
    /// 128 less in the exponent field, 2^59 less in the bits (no borrow:
    /// the field is at least 1024). One shift fewer than rebasing the
    /// payload; +0.0 (payload 0, `v4` zero) is tested and answers `v4`.
    /// The 2^59 is subtracted (`isub`), which Cranelift encodes with the
    /// constant read from the function's constants (`sub r, [rip+c]`, one
    /// 8-byte constant per function) where an addition of it takes a
    /// `movabs` of the constant at every use and an `add`.
    fn decode_double(&mut self, v: Value, v4: Value) -> Value {
        const _: () = assert!(FLOAT_TAG == 4 && FLOAT_EXP_OFFSET == 896 << 53);
        let rotated = self.b.ins().rotr_imm_u(v, 4);
        let k = self.iconst(1 << 59);
        let bits = self.b.ins().isub(rotated, k);
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, v4, 0);
        let bits = self.b.ins().select(is_zero, v4, bits);
        self.b.ins().bitcast(types::F64, MemFlagsData::new(), bits)
    }

    /// `d` as an immediate Double (`Value::from_f64`); one that needs a box
    /// goes to `slow`.
    ///
    /// The exponent rebased, `shifted`, fits when `0 < shifted < 2^61`:
    /// one unsigned test of `shifted - 1` (computed instead of `shifted`,
    /// by subtracting the window's offset plus one: a constant of the
    /// function's, as in [`decode_double`](Self::decode_double));
    /// +0.0 (all bits 0, never in the window) is tested on the other side.
    /// Branches, no condition values (less code, fewer instructions).
    fn encode_double(&mut self, d: Value, slow: Block) -> Value {
        let bits = self.b.ins().bitcast(types::I64, MemFlagsData::new(), d);
        let rot = self.b.ins().rotl_imm_u(bits, 1);
        let offset = self.iconst(FLOAT_EXP_OFFSET as i64 + 1);
        let less1 = self.b.ins().isub(rot, offset);
        let in_window = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, less1, (1 << 61) - 1);
        let join = self.b.create_block();
        let v = self.b.append_block_param(join, types::I64);
        let fits = self.b.create_block();
        let other = self.b.create_block();
        self.b.ins().brif(in_window, fits, NO, other, NO);
        self.b.switch_to_block(other);
        let zero = self.iconst(FLOAT_TAG as i64);
        self.b
            .ins()
            .brif(bits, slow, NO, join, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(fits);
        // (shifted << 3) | FLOAT_TAG, with shifted = less1 + 1.
        let tagged = self.b.ins().ishl_imm_u(less1, 3);
        let tagged = self.b.ins().iadd_imm_s(tagged, 8 + FLOAT_TAG as i64);
        self.b.ins().jump(join, &[BlockArg::Value(tagged)]);
        self.b.switch_to_block(join);
        v
    }

    fn load32(&mut self, addr: Value, offset: i32) -> Value {
        self.b.ins().uload32(self.flags, addr, offset)
    }

    /// The native code of method or block `mid` (a value) taking `argc`
    /// arguments, from the fast-call table, or a jump to `slow`.
    fn fast_entry(&mut self, mid: Value, argc: usize, slow: Block) -> Value {
        let len = self.ctx_field(offset_of!(NativeCtx, fast_len));
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, mid, len);
        let in_table = self.b.create_block();
        self.b.ins().brif(inside, in_table, NO, slow, NO);
        self.b.switch_to_block(in_table);
        let table = self.ctx_field(offset_of!(NativeCtx, fast));
        let off = self
            .b
            .ins()
            .imul_imm_s(mid, std::mem::size_of::<FastEntry>() as i64);
        let e = self.b.ins().iadd(table, off);
        let entry = self.load(e, offset_of!(FastEntry, entry) as i32);
        let nargs = self.load(e, offset_of!(FastEntry, num_args) as i32);
        let has = self.b.ins().icmp_imm_u(IntCC::NotEqual, entry, 0);
        let arity = self.b.ins().icmp_imm_u(IntCC::Equal, nargs, argc as i64);
        let ok = self.b.ins().band(has, arity);
        let go = self.b.create_block();
        self.b.ins().brif(ok, go, NO, slow, NO);
        self.b.switch_to_block(go);
        entry
    }

    /// The native code of method `mid`, known when compiling (so are its
    /// arguments, fixed per id: the send site's), from the fast-call table,
    /// or a jump to `slow`. The table has `mid`'s entry: it is rebuilt from
    /// every method after each installation (methods are never removed),
    /// so it covered `mid`, which the send site's cache named, by the time
    /// this code could run.
    fn fast_entry_of(&mut self, mid: u32, slow: Block) -> Value {
        let table = self.ctx_field(offset_of!(NativeCtx, fast));
        let off = i64::from(mid) * std::mem::size_of::<FastEntry>() as i64
            + offset_of!(FastEntry, entry) as i64;
        let entry = match i32::try_from(off) {
            Ok(off) => self.load(table, off),
            Err(_) => {
                let a = self.b.ins().iadd_imm_s(table, off);
                self.load(a, 0)
            }
        };
        let go = self.b.create_block();
        self.b.ins().brif(entry, go, NO, slow, NO);
        self.b.switch_to_block(go);
        entry
    }

    /// Run trivial method `mid` (of kind `kind`, not [`TRIVIAL_NONE`], with
    /// `operand`, as `FastEntry::trivial_of` answers them) on `rcv` without a
    /// frame, as the interpreter does when no activation hooks are
    /// installed; its answer replaces the receiver and the arguments, then
    /// the send is counted and a poll due takes the function's poll tail
    /// (as an inline binary send's: `count_answered_send_and_poll`). While
    /// `slow_returns` is not 0 (hooks, or a method watch: the method may be
    /// watched), the runtime's `primitive` entry instead, by the site's
    /// `call` block (`Vm::native_invoke`: `invoke` runs it and records a
    /// watched call and its answer); in code compiled under a method watch,
    /// after the callee's watch cell is asked (`watched_trivial`: inline
    /// still when the call records nothing new).
    #[allow(clippy::too_many_arguments)] // the call's parts, as the fast path uses them
    fn trivial(
        &mut self,
        pc: usize,
        (mid, kind, operand): (u32, u64, u64),
        rcv: Value,
        depth: usize,
        argc: usize,
        (call, cont): (Block, Block),
    ) {
        let hooks = self.ctx_field(offset_of!(NativeCtx, slow_returns));
        let run = self.b.create_block();
        let record = self.b.create_block();
        self.b.ins().brif(hooks, record, NO, run, NO);
        self.b.switch_to_block(record);
        if self.code.watching {
            let runtime = self.b.create_block();
            self.watched_trivial((mid, kind, operand), rcv, depth, argc, run, runtime);
            self.b.switch_to_block(runtime);
        }
        // The site's call, of the runtime's `primitive` entry with `mid`.
        let target = self.runtime(Entries::PRIMITIVE);
        let m = self.iconst(i64::from(mid));
        self.b
            .ins()
            .jump(call, &[BlockArg::Value(target), BlockArg::Value(m)]);
        self.b.switch_to_block(run);
        self.count_trivial_arrival(mid);
        let result = match kind {
            TRIVIAL_GETTER | TRIVIAL_SETTER => {
                // A receiver without the field (a class that changed shape)
                // answers nil, or itself for a setter, as the interpreter's
                // shortcut does.
                let join = self.b.create_block();
                let result = self.b.append_block_param(join, types::I64);
                let index = self.iconst(operand as i64);
                let missing = if kind == TRIVIAL_GETTER {
                    self.iconst(NIL)
                } else {
                    rcv
                };
                let fa = self.field_address(rcv, index, join, &[BlockArg::Value(missing)]);
                let v = if kind == TRIVIAL_GETTER {
                    self.load(fa, 0)
                } else {
                    let arg = self.b.use_var(self.s[depth - 1]);
                    self.barrier_store(rcv, |_| index, fa, arg);
                    rcv
                };
                self.b.ins().jump(join, &[BlockArg::Value(v)]);
                self.b.switch_to_block(join);
                result
            }
            TRIVIAL_SELF => rcv,
            TRIVIAL_CONSTANT => self.iconst(operand as i64),
            _ => {
                // TRIVIAL_LITERAL: the literal's cell, read now (reflection
                // may have replaced the literal).
                let cell = self.iconst(operand as i64);
                self.load(cell, 0)
            }
        };
        self.b.def_var(self.s[depth - argc - 1], result);
        self.count_answered_send_and_poll(pc + 1, depth - argc);
        self.b.ins().jump(cont, NO);
    }

    /// Run leaf primitive method `mid` on the receiver and arguments (stored
    /// in their slots) by the runtime's `primitive` entry: one call, which
    /// counts the send, runs the primitive and, when it fails, the rest of
    /// the send; continues at `back` (the answer reloaded), or leaves.
    fn leaf_primitive(&mut self, pc: usize, mid: u32, depth: usize, back: Block) {
        let pc_after = self.iconst(pc as i64 + 1);
        let sp = self.sp(depth);
        let m = self.iconst(i64::from(mid));
        let ctx = self.ctx();
        let (sig, addr) = (self.sigs.four, Entries::PRIMITIVE);
        let r = self.call(sig, addr, &[ctx, pc_after, sp, m]).unwrap_or(m);
        let leave = self.leave;
        self.b.ins().brif(r, leave, &[BlockArg::Value(r)], back, NO);
    }

    /// The end of a send site with a fast path (the operands stored):
    /// `call`, made with `(target, cell)`, calls `target(ctx,
    /// DIRECT + pc + 1, sp, cell)` — a callee's native code at its direct entry
    /// ([`DIRECT`]), or the runtime's send or `primitive` entry (which
    /// take the pc without `DIRECT`), to which `slow` goes — and both go
    /// on at `back`, which reloads the answer and continues at `cont`, or
    /// leave. The pc is the call's own constant, not one of each path to
    /// it.
    #[allow(clippy::too_many_arguments)] // the site's blocks, as the send made them
    fn finish_site(
        &mut self,
        pc: usize,
        depth: usize,
        argc: usize,
        slow: Block,
        call: Block,
        back: Block,
        cont: Block,
    ) {
        self.b.switch_to_block(slow);
        let send = self.runtime(Entries::SEND);
        let none = self.iconst(0);
        self.b
            .ins()
            .jump(call, &[BlockArg::Value(send), BlockArg::Value(none)]);
        self.b.switch_to_block(call);
        let params = self.b.block_params(call);
        let (target, cell) = (params[0], params[1]);
        let pc_arg = self.iconst(DIRECT + pc as i64 + 1);
        let ctx = self.ctx();
        let sp = self.sp(depth);
        let four = self.sigs.four;
        let inst = self
            .b
            .ins()
            .call_indirect(four, target, &[ctx, pc_arg, sp, cell]);
        let st = self.b.inst_results(inst)[0];
        let leave = self.leave;
        self.b
            .ins()
            .brif(st, leave, &[BlockArg::Value(st)], back, NO);
        self.b.switch_to_block(back);
        self.reload_bases();
        self.reload_top(depth - argc);
        self.b.ins().jump(cont, NO);
    }

    /// A site's `call` block (see [`finish_site`](Self::finish_site)):
    /// `(target, cell)`.
    fn call_block(&mut self) -> Block {
        let call = self.b.create_block();
        for _ in 0..2 {
            self.b.append_block_param(call, types::I64);
        }
        call
    }

    /// Jump to a site's `call` block for a direct call of `entry` (a
    /// callee's native code), whose callee probes inline-cache entry
    /// `cell` (0: probed here).
    fn direct_call(&mut self, entry: Value, cell: i64, call: Block) {
        let cell = self.iconst(cell);
        self.b
            .ins()
            .jump(call, &[BlockArg::Value(entry), BlockArg::Value(cell)]);
    }

    /// The class index of `v`, or a jump to `slow` (immediates other than
    /// SmallIntegers take the runtime's path, and SmallIntegers too unless
    /// `ints`: a site whose inline cache held no SmallInteger class).
    fn class_of(&mut self, v: Value, ints: bool, slow: Block) -> Value {
        if !ints {
            let ptr_blk = self.b.create_block();
            self.if_ptr(v, ptr_blk, slow, NO);
            self.b.switch_to_block(ptr_blk);
            let a = self.obj_addr(v);
            let h0 = self.load(a, 0);
            let cp = self.b.ins().band_imm_s(h0, CLASS_MASK as i64);
            return cp;
        }
        let int_blk = self.b.create_block();
        let not_int = self.b.create_block();
        let ptr_blk = self.b.create_block();
        let join = self.b.create_block();
        let c = self.b.append_block_param(join, types::I64);
        let i = self.is_int(v);
        self.b.ins().brif(i, int_blk, NO, not_int, NO);
        self.b.switch_to_block(int_blk);
        let ci = self.iconst(cls::INTEGER as i64);
        self.b.ins().jump(join, &[BlockArg::Value(ci)]);
        self.b.switch_to_block(not_int);
        self.if_ptr(v, ptr_blk, slow, NO);
        self.b.switch_to_block(ptr_blk);
        let a = self.obj_addr(v);
        let h0 = self.load(a, 0);
        let cp = self.b.ins().band_imm_s(h0, CLASS_MASK as i64);
        self.b.ins().jump(join, &[BlockArg::Value(cp)]);
        self.b.switch_to_block(join);
        c
    }

    /// A send, specialised on what its inline cache held when the function
    /// was compiled (the interpreter ran it some ten thousand times by then):
    /// each entry that was filled is probed (its class and epoch against the
    /// receiver's class and the epoch now, as one word) and, when it still
    /// names the same method, that method runs its own way: inline when it is
    /// trivial, by the runtime's `primitive` entry when it is a leaf
    /// primitive's, by a direct call of its native code otherwise (whose
    /// direct entry does the rest of the send: [`DIRECT`]). Everything
    /// else (an entry empty then, refilled since, a callee without native
    /// code) is the runtime's send. A site that had seen nothing is only the
    /// runtime's send: no code for a path never taken.
    fn send(&mut self, pc: usize, depth: usize, argc: usize, site: u16) {
        self.flush(depth);
        let cont = self.b.create_block();
        self.send_specialised(pc, depth, argc, site, false, cont);
        self.b.switch_to_block(cont);
        self.dirty(depth - argc - 1);
    }

    /// The slow path of a special send whose inline path did not apply: the
    /// send of [`send`](Self::send), specialised on what the site's inline
    /// cache held (the interpreter fills it when its own fast path does not
    /// apply: a `Vector>>at:`, a `=` of a user's class), from a side path
    /// (the operands not stored on the path there are stored first; what
    /// the main path stored is unchanged). Continues in a block after the
    /// send.
    fn special_send(&mut self, pc: usize, depth: usize, argc: usize, site: u16) {
        let stored = self.clean.clone();
        self.flush(depth);
        let cont = self.b.create_block();
        self.send_specialised(pc, depth, argc, site, true, cont);
        self.b.switch_to_block(cont);
        self.clean = stored;
    }

    /// The send of [`send`](Self::send) with its operands stored, ending in
    /// a jump to `cont`. At a special send (`special`) the methods of boxed
    /// Doubles are left to the runtime's send: their arithmetic and
    /// comparisons are a fast path of the interpreter (`interp/special.rs`),
    /// not of native code, so that running their method here would activate
    /// one (or publish the `Primitive` state) where the interpreter does
    /// not. For every other class the interpreter's fast path applies to
    /// exactly the receivers native code's inline path takes (the site's
    /// cache names a class only when it did not apply), so native code runs
    /// a method exactly where the interpreter sends one.
    fn send_specialised(
        &mut self,
        pc: usize,
        depth: usize,
        argc: usize,
        site: u16,
        special: bool,
        cont: Block,
    ) {
        let Some(pic) = self.code.caches.get(site as usize) else {
            self.runtime_send_flushed(pc, depth);
            self.b.ins().jump(cont, NO);
            return;
        };
        // (entry address, method, its trivial kind and operand)
        // (Filled entries only, traps never trivial, leaf primitives
        // `LEAF_PRIMITIVE`: `Unit::of`.)
        let seen: Vec<(i64, u32, u64, u64)> = pic
            .iter()
            .filter(|e| e.num_args == argc && !(special && e.class == cls::DOUBLE))
            .map(|e| (e.cell, e.method, e.kind, e.operand))
            .collect();
        // A SmallInteger receiver is probed only where the cache held
        // SmallInteger then; otherwise it takes the runtime's send (which
        // is always right: probes only shorten it).
        let ints = pic
            .iter()
            .any(|e| e.num_args == argc && e.class == cls::INTEGER);
        if seen.is_empty() {
            self.runtime_send_flushed(pc, depth);
            self.b.ins().jump(cont, NO);
            return;
        }
        let slow = self.b.create_block();
        let call = self.call_block();
        let back = self.b.create_block();
        if let [(cell, mid, TRIVIAL_NONE, _)] = seen[..] {
            // One method, not trivial nor a leaf primitive's, for one
            // class: its direct entry probes the cache entry (Cog's
            // monomorphic send: the callee checks the receiver's class).
            let entry = self.fast_entry_of(mid, slow);
            self.direct_call(entry, cell, call);
            self.finish_site(pc, depth, argc, slow, call, back, cont);
            return;
        }
        let rcv = self.b.use_var(self.s[depth - argc - 1]);
        let c = self.class_of(rcv, ints, slow);
        let epoch = self.ctx_field(offset_of!(NativeCtx, epoch));
        let hi = self.b.ins().ishl_imm_u(epoch, 32);
        let key = self.b.ins().bor(hi, c);
        // One block per method (several classes may share one).
        // (method, its block, kind, operand)
        let mut methods: Vec<(u32, Block, u64, u64)> = Vec::new();
        for (k, &(addr, mid, kind, operand)) in seen.iter().enumerate() {
            let a = self.iconst(addr);
            self.probes.push(addr as u64);
            const _: () = assert!(offset_of!(InlineCache, class) == 0);
            let word = self.load(a, offset_of!(InlineCache, class) as i32);
            let hit = self.b.ins().icmp(IntCC::Equal, word, key);
            let hit_blk = self.b.create_block();
            let next = if k + 1 == seen.len() {
                slow
            } else {
                self.b.create_block()
            };
            self.b.ins().brif(hit, hit_blk, NO, next, NO);
            self.b.switch_to_block(hit_blk);
            let held = self.load32(a, offset_of!(InlineCache, method) as i32);
            let same = self.b.ins().icmp_imm_u(IntCC::Equal, held, mid as i64);
            let block = match methods.iter().find(|m| m.0 == mid) {
                Some(m) => m.1,
                None => {
                    let b = self.b.create_block();
                    methods.push((mid, b, kind, operand));
                    b
                }
            };
            self.b.ins().brif(same, block, NO, slow, NO);
            if next != slow {
                self.b.switch_to_block(next);
            }
        }
        for &(mid, block, kind, operand) in &methods {
            self.b.switch_to_block(block);
            if kind == LEAF_PRIMITIVE {
                self.leaf_primitive(pc, mid, depth, back);
            } else if kind == TRIVIAL_NONE {
                let entry = self.fast_entry_of(mid, slow);
                self.direct_call(entry, 0, call);
            } else {
                self.trivial(pc, (mid, kind, operand), rcv, depth, argc, (call, cont));
            }
        }
        self.finish_site(pc, depth, argc, slow, call, back, cont);
    }

    /// `value`/`value:` with a fast path: a closure whose block the
    /// fast-call table has, with that many arguments, called directly (its
    /// direct entry unpacks the closure in the receiver slot).
    fn value(&mut self, pc: usize, depth: usize, argc: usize) {
        self.flush(depth);
        let slow = self.b.create_block();
        let cont = self.b.create_block();
        let call = self.call_block();
        let back = self.b.create_block();
        let clo = self.b.use_var(self.s[depth - argc - 1]);
        let ptr_blk = self.b.create_block();
        self.if_ptr(clo, ptr_blk, slow, NO);
        self.b.switch_to_block(ptr_blk);
        let a = self.obj_addr(clo);
        let h0 = self.load(a, 0);
        let c = self.b.ins().band_imm_s(h0, CLASS_MASK as i64);
        let from_block = self.b.ins().iadd_imm_s(c, -(cls::BLOCK as i64));
        let is_block = self.b.ins().icmp_imm_u(
            IntCC::UnsignedLessThanOrEqual,
            from_block,
            (cls::BLOCK4 - cls::BLOCK) as i64,
        );
        let fits = self.slot_in_bounds(clo, BLOCK_OUTER as i64);
        let ok = self.b.ins().band(is_block, fits);
        let blk = self.b.create_block();
        self.b.ins().brif(ok, blk, NO, slow, NO);
        self.b.switch_to_block(blk);
        let code_id = self.load(a, HEADER_BYTES + 8 * BLOCK_CODE as i32);
        let int = self.is_int(code_id);
        let id_blk = self.b.create_block();
        self.b.ins().brif(int, id_blk, NO, slow, NO);
        self.b.switch_to_block(id_blk);
        let mid = self.b.ins().sshr_imm_u(code_id, 1);
        let entry = self.fast_entry(mid, argc, slow);
        self.direct_call(entry, 0, call);
        self.finish_site(pc, depth, argc, slow, call, back, cont);
        self.b.switch_to_block(cont);
        self.dirty(depth - argc - 1);
    }

    /// A return: a jump to the function's return block with the value.
    fn ret(&mut self, pc: usize, depth: usize) {
        let v = self.b.use_var(self.s[depth - 1]);
        let blk = match self.ret_block {
            Some((b, _)) => b,
            None => {
                let b = self.b.create_block();
                self.b.append_block_param(b, types::I64);
                self.ret_block = Some((b, pc));
                b
            }
        };
        self.b.ins().jump(blk, &[BlockArg::Value(v)]);
    }

    /// The function's return (one for all its `ReturnTop`s and
    /// `ReturnSelf`s), if it has one: inline when the sender is a native
    /// activation waiting for the answer and nothing else must happen at
    /// the return (no hooks, no watch recording answers, no unwind to
    /// resume, no home environment, not at the meta level), which pops the
    /// frame and the native call depth; through the runtime otherwise (the
    /// operands are dead: only the value is passed). Code compiled under a
    /// method watch asks first whether a watched frame's answer is one
    /// already recorded (`watched_return`).
    fn fill_ret_block(&mut self) {
        let Some((blk, pc)) = self.ret_block else {
            return;
        };
        self.b.switch_to_block(blk);
        self.b.set_srcloc(SourceLoc::new(pc as u32));
        let v = self.b.block_params(blk)[0];
        let slow = self.b.create_block();
        let inline = !self.code.has_env() && !self.code.meta_level;
        if inline {
            let d = self.ctx_field(offset_of!(NativeCtx, depth));
            let sa = self.ctx_field(offset_of!(NativeCtx, slow_returns));
            let sr = self
                .b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThan, sa, SLOW_CALLS as i64);
            let fl = self.ctx_field(offset_of!(NativeCtx, frames_len));
            let after = self.b.ins().iadd_imm_s(fl, -1);
            let watch = self.ctx_field(offset_of!(NativeCtx, unwind_watch));
            let watched = self.b.ins().icmp(IntCC::Equal, after, watch);
            let fast = self.b.create_block();
            if self.code.watching {
                // Compiled under a watch: the return may stay inline under
                // the watch too (`watched_return`).
                let top = self.b.ins().icmp_imm_u(IntCC::Equal, d, 0);
                let no = self.b.ins().bor(top, watched);
                let no_sr = self.b.ins().bor(no, sr);
                let check = self.b.create_block();
                self.b.ins().brif(no_sr, check, NO, fast, NO);
                self.b.switch_to_block(check);
                self.watched_return(v, (sa, no, after), fast, slow);
            } else {
                // A branch per check, no condition values (less code).
                let native = self.b.create_block();
                let no_hooks = self.b.create_block();
                self.b.ins().brif(d, native, NO, slow, NO);
                self.b.switch_to_block(native);
                self.b.ins().brif(sr, slow, NO, no_hooks, NO);
                self.b.switch_to_block(no_hooks);
                self.b.ins().brif(watched, slow, NO, fast, NO);
            }
            self.b.switch_to_block(fast);
            self.write_slot(0, v);
            self.set_ctx_field(after, offset_of!(NativeCtx, frames_len));
            let d1 = self.b.ins().iadd_imm_s(d, -1);
            self.set_ctx_field(d1, offset_of!(NativeCtx, depth));
            let r = self.iconst(RETURNED as i64);
            self.restore_caller_r15();
            self.b.ins().return_(&[r]);
        } else {
            self.b.ins().jump(slow, NO);
        }
        self.b.switch_to_block(slow);
        let sp = self.sp(0);
        let ctx = self.ctx();
        let (sig, f) = (self.sigs.three, Entries::RET);
        let r = self.call(sig, f, &[ctx, sp, v]).unwrap_or(sp);
        let leave = self.leave;
        self.b.ins().jump(leave, &[BlockArg::Value(r)]);
    }

    /// A method's probe, at its direct entry, of the caller's inline-cache
    /// entry `cell` for the receiver's class `c`: `ok` when it holds `c` in
    /// the epoch now and names this method, else `refuse`.
    fn probe_entry(&mut self, cell: Value, c: Value, id: Value, ok: Block, refuse: Block) {
        let epoch = self.ctx_field(offset_of!(NativeCtx, epoch));
        let hi = self.b.ins().ishl_imm_u(epoch, 32);
        let key = self.b.ins().bor(hi, c);
        let word = self.load(cell, offset_of!(InlineCache, class) as i32);
        let hit = self.b.ins().icmp(IntCC::Equal, word, key);
        let same_class = self.b.create_block();
        self.b.ins().brif(hit, same_class, NO, refuse, NO);
        self.b.switch_to_block(same_class);
        let held = self.load32(cell, offset_of!(InlineCache, method) as i32);
        let same = self.b.ins().icmp(IntCC::Equal, held, id);
        self.b.ins().brif(same, ok, NO, refuse, NO);
    }

    /// The direct entry ([`DIRECT`]; `pc_arg`, `sp_arg`, `cell` the
    /// function's parameters), then `start` (pc 0). The frame's `bp`, the
    /// receiver's slot, is the caller's top less the receiver and
    /// arguments. Code compiled without a method watch calls its shape's
    /// shared entry stub (`stubs.rs`), which makes the checks, the probe
    /// and the frame push ([`enter`](Self::enter)) or the caller's send
    /// through the runtime: here there are the call and one test, and the
    /// frame's environment (a block's, which its stub leaves in the
    /// context) kept for pc 0. Code compiled under a method watch makes
    /// them itself, asking the watch cells.
    fn direct_entry(&mut self, pc_arg: Value, sp_arg: Value, cell: Value, start: Block) {
        let bpv = self
            .b
            .ins()
            .iadd_imm_s(sp_arg, -(1 + self.code.num_args as i64));
        self.b
            .ins()
            .stack_store(types::I64, bpv, self.slot, SLOT_BP);
        let cur = self.b.current_block();
        self.cache[1] = cur.map(|c| (c, bpv));
        let extent = self
            .b
            .ins()
            .iadd_imm_s(bpv, self.base + self.code.max_stack as i64);
        let need = self.max_field.map(|f| u32::from(f) + 1);
        let word = stubs::word(self.code.id, need, self.code.num_args);
        let inline = self.code.watching && !self.code.is_block();
        let word_v = self.iconst(word.unwrap_or(0));
        let env = if inline || word.is_none() {
            let id = self.iconst(i64::from(self.code.id));
            let need = self.need();
            let callee = Callee {
                bp: bpv,
                word: word_v,
                id,
                need,
                sp: Some(sp_arg),
                extent,
            };
            self.enter(pc_arg, cell, &callee)
        } else {
            let ctx = self.ctx();
            let shape = stubs::shape(self.code.is_block(), need.is_some());
            let stub = self.runtime(Entries::STUBS + shape);
            let six = self.sigs.six;
            let inst =
                self.b
                    .ins()
                    .call_indirect(six, stub, &[ctx, pc_arg, cell, word_v, bpv, extent]);
            let st = self.b.inst_results(inst)[0];
            let entered = self.b.ins().icmp_imm_u(IntCC::Equal, st, stubs::ENTERED);
            let go = self.b.create_block();
            let leave = self.leave;
            self.b
                .ins()
                .brif(entered, go, NO, leave, &[BlockArg::Value(st)]);
            self.b.switch_to_block(go);
            if self.code.is_block() {
                // The stub unpacked the closure and left its outer
                // environment in the context, as the runtime's send does.
                self.ctx_field(offset_of!(NativeCtx, env))
            } else {
                self.iconst(NIL)
            }
        };
        self.b
            .ins()
            .stack_store(types::I64, env, self.slot, SLOT_ENV);
        self.reload_bases();
        self.count_arrival(0);
        self.b.ins().jump(start, NO);
    }

    /// The checks of a native call of `callee` from the caller's pc
    /// `pc_arg` (plus [`DIRECT`]), a method's probe of the caller's
    /// inline-cache entry `cell` (otherwise, and when a poll is due, the
    /// caller's send is made through the runtime, answered as the
    /// caller's: [`refused_entry`](Self::refused_entry)), the send counted,
    /// the caller's pc saved and the callee's frame pushed; continues in a
    /// block after it, answering the frame's environment. A method's frame
    /// has no environment and no closure; a block's takes them from its
    /// closure, which the caller left in the receiver slot (and which is
    /// replaced by its receiver). Made in the entry stubs (`stubs.rs`) and
    /// in code compiled under a method watch.
    fn enter(&mut self, pc_arg: Value, cell: Value, callee: &Callee) -> Value {
        let refuse = self.b.create_block();
        // Each check branches at once (and what it read is read again for
        // the frame push): fewer values live at once, none kept in a
        // register the code must save.
        let depth = self.ctx_field(offset_of!(NativeCtx, depth));
        let deep = self.b.ins().icmp_imm_u(
            IntCC::UnsignedGreaterThanOrEqual,
            depth,
            MAX_NATIVE_DEPTH as i64,
        );
        self.refuse_if(deep, refuse);
        let fl = self.ctx_field(offset_of!(NativeCtx, frames_len));
        let cap = self.ctx_field(offset_of!(NativeCtx, frames_cap));
        let full = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, fl, cap);
        self.refuse_if(full, refuse);
        // Room for the frame's extent on the value stack (the runtime's
        // send makes it, when there is none).
        let room = self.ctx_field(offset_of!(NativeCtx, stack_cap));
        let short = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThan, callee.extent, room);
        self.refuse_if(short, refuse);
        // The send is counted, and a poll made, before this frame exists
        // (as the interpreter does): a poll due here is refused, and made
        // by the runtime's send (which counts the send itself), so that the
        // entry has no call of its own but the refusal's.
        let sends = self.ctx_field(offset_of!(NativeCtx, sends));
        let sends = self.b.ins().iadd_imm_s(sends, 1);
        let due = self.poll_due(sends);
        self.refuse_if(due, refuse);
        // Refused while every return is slow (activation hooks). A method's
        // entry is refused under a method watch too: the runtime pushes its
        // frame, recording the call when a watch names the method
        // (`refused_entry`); a block, never watched, goes on.
        // Code compiled under a method watch tests the watch after the
        // probe instead (`watched_entry`).
        let watching = self.code.watching && !self.code.is_block();
        if !watching {
            let hooks = self.ctx_field(offset_of!(NativeCtx, slow_returns));
            let hooks_on = if self.code.is_block() {
                self.b
                    .ins()
                    .icmp_imm_u(IntCC::Equal, hooks, SLOW_ALL as i64)
            } else {
                self.b.ins().icmp_imm_u(IntCC::NotEqual, hooks, 0)
            };
            self.refuse_if(hooks_on, refuse);
        }
        self.reload_bases();
        let ok = self.b.create_block();
        // A method probes the caller's inline-cache entry, if it has one, as
        // the caller's site would have; the receiver must have the fields
        // the code uses (`if_fields`), a block's being its closure's.
        let mut fields_checked = false;
        if self.code.is_block() {
            self.b.ins().jump(ok, NO);
        } else if let Some(need) = callee.need {
            // A receiver with fields is a pointer: checked once for the
            // fields and the probe.
            let may = self.b.create_block();
            let sized = self.b.create_block();
            let probe = self.b.create_block();
            self.b.ins().jump(may, NO);
            self.b.switch_to_block(may);
            let rcv = self.read_slot(0);
            let a = self.if_fields(rcv, need, sized, refuse);
            self.b.switch_to_block(sized);
            self.b.ins().brif(cell, probe, NO, ok, NO);
            self.b.switch_to_block(probe);
            let h0 = self.load(a, 0);
            let c = self.b.ins().band_imm_s(h0, CLASS_MASK as i64);
            self.probe_entry(cell, c, callee.id, ok, refuse);
            fields_checked = true;
        } else {
            let may = self.b.create_block();
            let probe = self.b.create_block();
            self.b.ins().jump(may, NO);
            self.b.switch_to_block(may);
            self.b.ins().brif(cell, probe, NO, ok, NO);
            self.b.switch_to_block(probe);
            let rcv = self.read_slot(0);
            let c = self.class_of(rcv, true, refuse);
            self.probe_entry(cell, c, callee.id, ok, refuse);
        }
        self.b.switch_to_block(ok);
        let unpacked = if self.code.is_block() {
            let clo = self.read_slot(0);
            let a = self.obj_addr(clo);
            let recv = self.load(a, HEADER_BYTES + 8 * BLOCK_RECEIVER as i32);
            let outer = self.load(a, HEADER_BYTES + 8 * BLOCK_OUTER as i32);
            Some((clo, recv, outer))
        } else {
            None
        };
        if let Some(need) = callee.need.filter(|_| !fields_checked) {
            let r = match unpacked {
                Some((_, recv, _)) => recv,
                None => self.read_slot(0),
            };
            let go = self.b.create_block();
            self.if_fields(r, need, go, refuse);
            self.b.switch_to_block(go);
        }
        // Under a watch (compiled under one), the frame's flags as the
        // high half of its method word (`watched_entry`).
        let flags = if watching {
            let go = self.b.create_block();
            let flags = self.b.append_block_param(go, types::I64);
            let watch = self.b.create_block();
            let zero = self.iconst(0);
            let hooks = self.ctx_field(offset_of!(NativeCtx, slow_returns));
            self.b
                .ins()
                .brif(hooks, watch, NO, go, &[BlockArg::Value(zero)]);
            self.b.switch_to_block(watch);
            self.watched_entry(go, refuse);
            self.b.switch_to_block(go);
            Some(flags)
        } else {
            None
        };
        self.bump(offset_of!(NativeCtx, sends));
        let fl = self.ctx_field(offset_of!(NativeCtx, frames_len));
        let depth = self.ctx_field(offset_of!(NativeCtx, depth));
        let pc_after = self.b.ins().iadd_imm_s(pc_arg, -DIRECT);
        let frames = self.ctx_field(offset_of!(NativeCtx, frames));
        let size = std::mem::size_of::<Frame>() as i64;
        let off = self.b.ins().imul_imm_s(fl, size);
        let f = self.b.ins().iadd(frames, off);
        self.store(pc_after, f, offset_of!(Frame, pc) as i32 - size as i32);
        let nil = self.iconst(NIL);
        let (env, closure) = match unpacked {
            Some((clo, recv, outer)) => {
                self.write_slot(0, recv);
                (outer, clo)
            }
            None => (nil, nil),
        };
        // The method id and no flags (or a watch's), as one word.
        let id = match flags {
            Some(flags) => self.b.ins().bor(callee.id, flags),
            None => callee.id,
        };
        self.store(id, f, offset_of!(Frame, method) as i32);
        let zero = self.iconst(0);
        self.store(zero, f, offset_of!(Frame, pc) as i32);
        self.store(callee.bp, f, offset_of!(Frame, bp) as i32);
        self.store(env, f, offset_of!(Frame, env) as i32);
        self.store(closure, f, offset_of!(Frame, closure) as i32);
        let fl1 = self.b.ins().iadd_imm_s(fl, 1);
        self.set_ctx_field(fl1, offset_of!(NativeCtx, frames_len));
        let d1 = self.b.ins().iadd_imm_s(depth, 1);
        self.set_ctx_field(d1, offset_of!(NativeCtx, depth));
        let go = self.b.create_block();
        self.b.ins().jump(go, NO);
        self.b.switch_to_block(refuse);
        self.refused_entry(pc_arg, cell, callee);
        self.b.switch_to_block(go);
        env
    }

    /// Go on in a new block, or to `refuse` when `c`.
    fn refuse_if(&mut self, c: Value, refuse: Block) {
        let go = self.b.create_block();
        self.b.ins().brif(c, refuse, NO, go, NO);
        self.b.switch_to_block(go);
    }

    /// A direct entry whose native call is not made as it is (`refuse`:
    /// under activation hooks, too deep, no frame room, a poll due (the
    /// runtime's send polls), the probe missed, a receiver without the
    /// fields; a method's under a method watch too): the caller's send
    /// through the runtime, answered as the caller's. A method's goes
    /// through the runtime's `watched call` entry (given its id and the
    /// fields its receiver needs), which makes the checks again and, when
    /// they pass under a method watch alone, pushes the frame as the direct
    /// entry would (recording the call when a watch names the method) and
    /// calls this code at pc 0 instead. (In code compiled under a method
    /// watch, a method's entry under a watch asks the method's watch cell
    /// before it refuses: `watched_entry`.)
    fn refused_entry(&mut self, pc_arg: Value, cell: Value, callee: &Callee) {
        let pc_after = self.b.ins().iadd_imm_s(pc_arg, -DIRECT);
        let sp = match callee.sp {
            Some(sp) => sp,
            None => {
                let argc = self.b.ins().ushr_imm_u(callee.word, stubs::ARGS_SHIFT);
                let top = self.b.ins().iadd(callee.bp, argc);
                self.b.ins().iadd_imm_s(top, 1)
            }
        };
        let ctx = self.ctx();
        let r = if self.code.is_block() {
            let (sig, f) = (self.sigs.four, Entries::SEND);
            self.call(sig, f, &[ctx, pc_after, sp, cell])
        } else {
            let word = self
                .b
                .ins()
                .band_imm_u(callee.word, (1 << stubs::ARGS_SHIFT) - 1);
            let (sig, f) = (self.sigs.five, Entries::WATCHED_CALL);
            self.call(sig, f, &[ctx, pc_after, sp, cell, word])
        };
        let r = r.unwrap_or(sp);
        let leave = self.leave;
        self.b.ins().jump(leave, &[BlockArg::Value(r)]);
    }

    /// The start of the code (pc 0): temporaries nil. The activation's
    /// extent has room on the value stack: the runtime makes it for every
    /// entry at pc 0 it makes (the interpreter's, a send's, a watched
    /// call's), and a direct entry refuses a call without it.
    fn prologue(&mut self) {
        let nil = self.iconst(NIL);
        for i in 0..self.code.num_temps {
            self.write_slot(1 + self.code.num_args as i64 + i as i64, nil);
        }
    }

    /// Is the fast path whose per-class table is at context fields
    /// (`table`, `len`) valid for class `c` in the epoch now? A condition.
    fn fast_path_holds(&mut self, c: Value, table: usize, len: usize) -> Value {
        let n = self.ctx_field(len);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, c, n);
        let in_table = self.b.create_block();
        let out = self.b.create_block();
        let join = self.b.create_block();
        let r = self.b.append_block_param(join, types::I8);
        self.b.ins().brif(inside, in_table, NO, out, NO);
        self.b.switch_to_block(out);
        let f = self.b.ins().iconst(types::I8, 0);
        self.b.ins().jump(join, &[BlockArg::Value(f)]);
        self.b.switch_to_block(in_table);
        let base = self.ctx_field(table);
        let off = self.b.ins().ishl_imm_u(c, 2);
        let a = self.b.ins().iadd(base, off);
        let e = self.load32(a, 0);
        let epoch = self.ctx_field(offset_of!(NativeCtx, epoch));
        let same = self.b.ins().icmp(IntCC::Equal, e, epoch);
        self.b.ins().jump(join, &[BlockArg::Value(same)]);
        self.b.switch_to_block(join);
        r
    }

    /// The class of `v` for the fast paths: SmallIntegers, heap objects and
    /// nil; `slow` for the other immediates.
    fn fast_class(&mut self, v: Value, slow: Block) -> Value {
        let is_nil = self.b.ins().icmp_imm_u(IntCC::Equal, v, NIL);
        let nil_blk = self.b.create_block();
        let other = self.b.create_block();
        let join = self.b.create_block();
        let c = self.b.append_block_param(join, types::I64);
        self.b.ins().brif(is_nil, nil_blk, NO, other, NO);
        self.b.switch_to_block(nil_blk);
        let cn = self.iconst(cls::NIL as i64);
        self.b.ins().jump(join, &[BlockArg::Value(cn)]);
        self.b.switch_to_block(other);
        let co = self.class_of(v, true, slow);
        self.b.ins().jump(join, &[BlockArg::Value(co)]);
        self.b.switch_to_block(join);
        c
    }

    /// Is `v` an object of class `class` with more than `index` (a value)
    /// slots or bytes? Answers the object's address, or jumps to `slow`.
    fn checked_object(&mut self, v: Value, class: u32, slow: Block) -> Value {
        let ptr_blk = self.b.create_block();
        self.if_ptr(v, ptr_blk, slow, NO);
        self.b.switch_to_block(ptr_blk);
        let a = self.obj_addr(v);
        let h0 = self.load(a, 0);
        let c = self.b.ins().band_imm_s(h0, CLASS_MASK as i64);
        let ok = self.b.ins().icmp_imm_u(IntCC::Equal, c, class as i64);
        let fine = self.b.create_block();
        self.b.ins().brif(ok, fine, NO, slow, NO);
        self.b.switch_to_block(fine);
        a
    }

    /// The 0-based slot of SmallInteger index `i` (1-based) in the object
    /// at `a`, or a jump to `slow` when it is not an index into it.
    fn checked_index(&mut self, a: Value, i: Value, slow: Block) -> Value {
        let int = self.is_int(i);
        let int_blk = self.b.create_block();
        self.b.ins().brif(int, int_blk, NO, slow, NO);
        self.b.switch_to_block(int_blk);
        let k = self.b.ins().sshr_imm_u(i, 1);
        let k0 = self.b.ins().iadd_imm_s(k, -1);
        let size = self.object_size(a);
        // 1 <= k <= size, as one unsigned comparison of k - 1 < size.
        let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, k0, size);
        let fine = self.b.create_block();
        self.b.ins().brif(ok, fine, NO, slow, NO);
        self.b.switch_to_block(fine);
        k0
    }

    /// A special send other than arithmetic: an inline path when its
    /// operands allow, the runtime's send otherwise. Answers false when `op`
    /// has no inline path here.
    fn inline_special(&mut self, pc: usize, op: SpecialOp, depth: usize, site: u16) -> bool {
        let argc = op.selector().1 as usize;
        if !matches!(
            op,
            SpecialOp::IsNil
                | SpecialOp::NotNil
                | SpecialOp::Not
                | SpecialOp::IdentityEq
                | SpecialOp::At
                | SpecialOp::AtPut
                | SpecialOp::Length
                | SpecialOp::Div
                | SpecialOp::Mod
        ) {
            return false;
        }
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let rd = depth - argc - 1;
        let r = self.b.use_var(self.s[rd]);
        let result = match op {
            SpecialOp::IsNil | SpecialOp::NotNil => {
                let c = self.fast_class(r, slow);
                let is_nil_class = self.b.ins().icmp_imm_u(IntCC::Equal, c, cls::NIL as i64);
                let holds = self.fast_path_holds(
                    c,
                    offset_of!(NativeCtx, nil_test),
                    offset_of!(NativeCtx, nil_test_len),
                );
                let ok = self.b.ins().bor(is_nil_class, holds);
                let fine = self.b.create_block();
                self.b.ins().brif(ok, fine, NO, slow, NO);
                self.b.switch_to_block(fine);
                let cc = if op == SpecialOp::IsNil {
                    IntCC::Equal
                } else {
                    IntCC::NotEqual
                };
                let b = self.b.ins().icmp_imm_u(cc, r, NIL);
                self.boolean(b)
            }
            SpecialOp::Not => {
                let t = self.b.ins().icmp_imm_u(IntCC::Equal, r, TRUE);
                let f = self.b.ins().icmp_imm_u(IntCC::Equal, r, FALSE);
                let ok = self.b.ins().bor(t, f);
                let fine = self.b.create_block();
                self.b.ins().brif(ok, fine, NO, slow, NO);
                self.b.switch_to_block(fine);
                let tv = self.iconst(TRUE);
                let fv = self.iconst(FALSE);
                self.b.ins().select(t, fv, tv)
            }
            SpecialOp::IdentityEq => {
                let other = self.b.use_var(self.s[depth - 1]);
                let c = self.fast_class(r, slow);
                let holds = self.fast_path_holds(
                    c,
                    offset_of!(NativeCtx, identity),
                    offset_of!(NativeCtx, identity_len),
                );
                let fine = self.b.create_block();
                self.b.ins().brif(holds, fine, NO, slow, NO);
                self.b.switch_to_block(fine);
                let same = self.b.ins().icmp(IntCC::Equal, r, other);
                self.boolean(same)
            }
            SpecialOp::At => {
                let i = self.b.use_var(self.s[depth - 1]);
                let a = self.checked_object(r, cls::ARRAY, slow);
                let k = self.checked_index(a, i, slow);
                let off = self.b.ins().ishl_imm_u(k, 3);
                let sa = self.b.ins().iadd(a, off);
                self.load(sa, HEADER_BYTES)
            }
            SpecialOp::AtPut => {
                let i = self.b.use_var(self.s[depth - 2]);
                let v = self.b.use_var(self.s[depth - 1]);
                let a = self.checked_object(r, cls::ARRAY, slow);
                let k = self.checked_index(a, i, slow);
                let off = self.b.ins().ishl_imm_u(k, 3);
                let sa = self.b.ins().iadd(a, off);
                let sa = self.b.ins().iadd_imm_s(sa, HEADER_BYTES as i64);
                self.barrier_store(r, |_| k, sa, v);
                // The receiver, as the interpreter's fast path and the
                // primitive answer (SOM's tests check it).
                r
            }
            SpecialOp::Length => {
                let ptr_blk = self.b.create_block();
                self.if_ptr(r, ptr_blk, slow, NO);
                self.b.switch_to_block(ptr_blk);
                let a = self.obj_addr(r);
                let h0 = self.load(a, 0);
                let c = self.b.ins().band_imm_s(h0, CLASS_MASK as i64);
                let is_a = self.b.ins().icmp_imm_u(IntCC::Equal, c, cls::ARRAY as i64);
                let is_s = self.b.ins().icmp_imm_u(IntCC::Equal, c, cls::STRING as i64);
                let is_y = self.b.ins().icmp_imm_u(IntCC::Equal, c, cls::SYMBOL as i64);
                let ok = self.b.ins().bor(is_a, is_s);
                let ok = self.b.ins().bor(ok, is_y);
                let fine = self.b.create_block();
                self.b.ins().brif(ok, fine, NO, slow, NO);
                self.b.switch_to_block(fine);
                let size = self.object_size(a);
                let t = self.b.ins().ishl_imm_u(size, 1);
                self.b.ins().bor_imm_s(t, 1)
            }
            SpecialOp::Div | SpecialOp::Mod => {
                let bv = self.b.use_var(self.s[depth - 1]);
                let ints = self.both_int(r, bv);
                let int_blk = self.b.create_block();
                self.b.ins().brif(ints, int_blk, NO, slow, NO);
                self.b.switch_to_block(int_blk);
                let x = self.b.ins().sshr_imm_u(r, 1);
                let y = self.b.ins().sshr_imm_u(bv, 1);
                let nz = self.b.create_block();
                self.b.ins().brif(y, nz, NO, slow, NO);
                self.b.switch_to_block(nz);
                // Floor division and modulo (the sign of the divisor), as
                // the interpreter computes them; 63-bit operands never hit
                // the one quotient a 64-bit division cannot represent.
                let q = self.b.ins().sdiv(x, y);
                let m = self.b.ins().srem(x, y);
                let m_nz = self.b.ins().icmp_imm_u(IntCC::NotEqual, m, 0);
                let xs = self.b.ins().bxor(m, y);
                let diff = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, xs, 0);
                let adjust = self.b.ins().band(m_nz, diff);
                let v = if op == SpecialOp::Div {
                    let q1 = self.b.ins().iadd_imm_s(q, -1);
                    self.b.ins().select(adjust, q1, q)
                } else {
                    let my = self.b.ins().iadd(m, y);
                    self.b.ins().select(adjust, my, m)
                };
                // Back to a SmallInteger, when it is one.
                let t = self.b.ins().ishl_imm_u(v, 1);
                let back = self.b.ins().sshr_imm_u(t, 1);
                let fits = self.b.ins().icmp(IntCC::Equal, back, v);
                let ok_blk = self.b.create_block();
                self.b.ins().brif(fits, ok_blk, NO, slow, NO);
                self.b.switch_to_block(ok_blk);
                self.b.ins().bor_imm_s(t, 1)
            }
            _ => return false,
        };
        self.b.def_var(self.s[rd], result);
        self.count_answered_send_and_poll(pc + 1, rd + 1);
        self.b.ins().jump(join, NO);
        self.b.switch_to_block(slow);
        self.special_send(pc, depth, argc, site);
        self.b.ins().jump(join, NO);
        self.b.switch_to_block(join);
        self.dirty(rd);
        true
    }

    /// One instruction, with `depth` operands before it; answers whether
    /// control falls through to the next one.
    fn op(&mut self, pc: usize, op: Op, depth: usize) -> bool {
        let mut d = depth;
        match op {
            Op::PushSelf => {
                let v = self.read_slot(0);
                self.push(&mut d, v);
            }
            Op::PushNil => {
                let v = self.iconst(NIL);
                self.push(&mut d, v);
            }
            Op::PushTrue => {
                let v = self.iconst(TRUE);
                self.push(&mut d, v);
            }
            Op::PushFalse => {
                let v = self.iconst(FALSE);
                self.push(&mut d, v);
            }
            Op::PushInt(i) => {
                let v = self.iconst(((i as i64) << 1) | 1);
                self.push(&mut d, v);
            }
            Op::PushLiteral(i) => {
                let cell = self.code.literals[i as usize];
                let addr = self.iconst(cell);
                let v = self.load(addr, 0);
                self.push(&mut d, v);
            }
            Op::PushLocal(i) => {
                let v = self.read_slot(1 + i as i64);
                self.push(&mut d, v);
            }
            Op::StoreLocal(i) => {
                let v = self.top(d);
                self.write_slot(1 + i as i64, v);
            }
            Op::PopLocal(i) => {
                let v = self.pop(&mut d);
                self.write_slot(1 + i as i64, v);
            }
            Op::PushEnv { depth: hops, index } => {
                let e = self.env_at(hops, pc, d);
                let a = self.env_slot(e, (ENV_VARS + index as usize) as i64, pc, d);
                let v = self.load(a, 0);
                self.push(&mut d, v);
            }
            Op::StoreEnv { depth: hops, index } | Op::PopEnv { depth: hops, index } => {
                let e = self.env_at(hops, pc, d);
                let slot = (ENV_VARS + index as usize) as i64;
                let a = self.env_slot(e, slot, pc, d);
                let v = if matches!(op, Op::PopEnv { .. }) {
                    self.pop(&mut d)
                } else {
                    self.top(d)
                };
                self.barrier_store(e, |g| g.iconst(slot), a, v);
            }
            Op::CopyArgToEnv { arg, index } => {
                let e = self.env_v();
                let slot = (ENV_VARS + index as usize) as i64;
                let a = self.env_slot(e, slot, pc, d);
                let v = self.read_slot(1 + arg as i64);
                self.barrier_store(e, |g| g.iconst(slot), a, v);
            }
            Op::PushField(i) => {
                // The receiver has the field: checked at every entry
                // (`if_fields`).
                let r = self.read_slot(0);
                let addr = self.obj_addr(r);
                let v = self.load(addr, HEADER_BYTES + 8 * i as i32);
                self.push(&mut d, v);
            }
            Op::StoreField(i) | Op::PopField(i) => {
                let v = if matches!(op, Op::PopField(_)) {
                    self.pop(&mut d)
                } else {
                    self.top(d)
                };
                // The receiver has the field (`if_fields`).
                let r = self.read_slot(0);
                let addr = self.obj_addr(r);
                let a = self
                    .b
                    .ins()
                    .iadd_imm_s(addr, HEADER_BYTES as i64 + 8 * i as i64);
                self.barrier_store(r, |g| g.iconst(i64::from(i)), a, v);
            }
            Op::PushGlobal(i) => {
                let ctx = self.ctx();
                // The global's symbol id, read from its literal's cell (which
                // literal patching changes).
                let Some(&cell) = self.code.sel_ids.get(i as usize) else {
                    let bail = self.bail_block(pc, d);
                    self.b.ins().jump(bail, NO);
                    return false;
                };
                let addr = self.iconst(cell);
                let sym = self.load32(addr, 0);
                let (sig, f) = (self.sigs.two, Entries::GLOBAL);
                let v = self.call(sig, f, &[ctx, sym]).unwrap_or(sym);
                let bail = self.bail_block(pc, d);
                let found = self.b.create_block();
                self.b.ins().brif(v, found, NO, bail, NO);
                self.b.switch_to_block(found);
                self.push(&mut d, v);
            }
            Op::PushBlock(i) => {
                self.flush(d);
                let ctx = self.ctx();
                let pc_after = self.iconst(pc as i64 + 1);
                let sp = self.sp(d);
                let idx = self.iconst(i as i64);
                let (sig, f) = (self.sigs.four, Entries::PUSH_BLOCK);
                let r = self.call(sig, f, &[ctx, pc_after, sp, idx]).unwrap_or(idx);
                d += 1;
                let ok = self.b.create_block();
                let leave = self.leave;
                let is_done = self.b.ins().icmp_imm_s(IntCC::Equal, r, DONE as i64);
                self.b
                    .ins()
                    .brif(is_done, ok, NO, leave, &[BlockArg::Value(r)]);
                self.b.switch_to_block(ok);
                self.reload_bases();
                self.reload_top(d);
                self.clean[d - 1] = true;
            }
            Op::Pop => {}
            Op::Dup => {
                let v = self.top(d);
                self.push(&mut d, v);
            }
            Op::Send { argc, site, .. } => {
                self.send(pc, d, argc as usize, site);
            }
            Op::SuperSend { .. } => {
                self.runtime_send(pc, d);
            }
            Op::Special { op: sop, site, .. } => {
                let argc = sop.selector().1 as usize;
                if matches!(sop, SpecialOp::Value | SpecialOp::ValueWith) {
                    self.value(pc, d, argc);
                } else if self.inline_special(pc, sop, d, site)
                    || (argc == 1 && self.inline_arith(pc, sop, d, site))
                {
                    // done inline, or by the specialised send on its slow path
                } else {
                    self.special_send(pc, d, argc, site);
                    self.dirty(d - argc - 1);
                }
            }
            Op::ReturnTop | Op::ReturnSelf => {
                if matches!(op, Op::ReturnSelf) {
                    let r = self.read_slot(0);
                    self.push(&mut d, r);
                }
                self.ret(pc, d);
                return false;
            }
            Op::ReturnNonLocal => {
                self.bail_here(pc, d);
                return false;
            }
            Op::Jump(t) | Op::JumpBack(t) => {
                self.count_arrival(t as usize);
                if matches!(op, Op::JumpBack(_)) && !polls_in(&self.code.ops, t as usize, pc) {
                    self.poll_back_jump(t as usize);
                }
                let target = self.blocks[t as usize];
                self.b.ins().jump(target, NO);
                return false;
            }
            Op::JumpIfTrue { target, inlined } | Op::JumpIfFalse { target, inlined } => {
                let v = self.top(d);
                let want = if matches!(op, Op::JumpIfTrue { .. }) {
                    TRUE
                } else {
                    FALSE
                };
                let other = if want == TRUE { FALSE } else { TRUE };
                let bail = self.bail_block(pc, d);
                if inlined {
                    self.bump(offset_of!(NativeCtx, inlined));
                }
                let jump = self.edge(target as usize);
                let next = self.edge(pc + 1);
                let is_want = self.b.ins().icmp_imm_s(IntCC::Equal, v, want);
                let not_want = self.b.create_block();
                self.b.ins().brif(is_want, jump, NO, not_want, NO);
                self.b.switch_to_block(not_want);
                let is_other = self.b.ins().icmp_imm_s(IntCC::Equal, v, other);
                self.b.ins().brif(is_other, next, NO, bail, NO);
                self.fill_edges();
                return false;
            }
            Op::JumpIfNil { target, inlined } | Op::JumpIfNotNil { target, inlined } => {
                let v = self.pop(&mut d);
                if inlined {
                    self.bump(offset_of!(NativeCtx, inlined));
                }
                let cc = if matches!(op, Op::JumpIfNil { .. }) {
                    IntCC::Equal
                } else {
                    IntCC::NotEqual
                };
                let c = self.b.ins().icmp_imm_s(cc, v, NIL);
                let (jump, next) = (self.edge(target as usize), self.edge(pc + 1));
                self.b.ins().brif(c, jump, NO, next, NO);
                self.fill_edges();
                return false;
            }
            Op::ForTest {
                counter,
                limit,
                step,
                exit,
            } => {
                self.bump(offset_of!(NativeCtx, inlined));
                let c = self.read_slot(1 + counter as i64);
                let l = self.read_slot(1 + limit as i64);
                let ints = self.both_int(c, l);
                let bail = self.bail_block(pc, d);
                let fast = self.b.create_block();
                self.b.ins().brif(ints, fast, NO, bail, NO);
                self.b.switch_to_block(fast);
                let cc = if step > 0 {
                    IntCC::SignedGreaterThan
                } else {
                    IntCC::SignedLessThan
                };
                let done = self.b.ins().icmp(cc, c, l);
                let (jump, next) = (self.edge(exit as usize), self.edge(pc + 1));
                self.b.ins().brif(done, jump, NO, next, NO);
                self.fill_edges();
                return false;
            }
            Op::ForIncr {
                counter,
                step,
                target,
            } => {
                if !polls_in(&self.code.ops, target as usize, pc) {
                    self.poll_back_jump(target as usize);
                }
                let c = self.read_slot(1 + counter as i64);
                let int = self.is_int(c);
                let bail = self.bail_block(pc, d);
                let fast = self.b.create_block();
                self.b.ins().brif(int, fast, NO, bail, NO);
                self.b.switch_to_block(fast);
                let inc = self.iconst((step as i64) << 1);
                let (r, of) = self.b.ins().sadd_overflow(c, inc);
                let ok = self.b.create_block();
                self.b.ins().brif(of, bail, NO, ok, NO);
                self.b.switch_to_block(ok);
                self.write_slot(1 + counter as i64, r);
                self.count_arrival(target as usize);
                let t = self.blocks[target as usize];
                self.b.ins().jump(t, NO);
                return false;
            }
        }
        true
    }
}

impl<'a, 'b> Gen<'a, 'b> {
    /// A generator of `code`'s function, of signature `sig`, in `ctx`'s
    /// function: its entry block made (and current) with the function's
    /// parameters, which it answers, the stack slot that keeps `ctx`, `bp`
    /// and `env` (of `slot_bytes`: 0 in a stub) and the shared exit blocks
    /// made (`leave`, the bail tail, `decline`).
    fn begin(
        isa: &dyn TargetIsa,
        ctx: &'b mut Context,
        fctx: &'b mut FunctionBuilderContext,
        code: &'a Unit,
        sig: Signature,
        slot_bytes: u32,
    ) -> (Gen<'a, 'b>, Vec<Value>) {
        ctx.clear();
        ctx.func = Function::with_name_signature(UserFuncName::user(0, code.id), sig);
        let flags = MemFlagsData::trusted();
        let sigs = Sigs {
            two: ctx.func.import_signature(signature(isa, 2, true)),
            three: ctx.func.import_signature(signature(isa, 3, true)),
            four: ctx.func.import_signature(signature(isa, 4, true)),
            four_void: ctx.func.import_signature(signature(isa, 4, false)),
            six: ctx.func.import_signature(signature(isa, 6, true)),
            five: ctx.func.import_signature(signature(isa, 5, true)),
        };
        let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let ops = &code.ops;
        let max = code.max_stack + 2;
        let s: Vec<Variable> = (0..max).map(|_| b.declare_var(types::I64)).collect();
        let fp = b.declare_var(types::I64);
        let heap = b.declare_var(types::I64);
        let slot = b.create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
            cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
            slot_bytes,
            3,
        ));
        let blocks: Vec<Block> = (0..=ops.len()).map(|_| b.create_block()).collect();
        let placeholder = blocks[ops.len()];
        let mut g = Gen {
            b,
            code,
            sigs,
            flags,
            s,
            fp,
            heap,
            blocks,
            base: 1 + code.num_args as i64 + code.num_temps as i64,
            bails: Vec::new(),
            clean: vec![false; max],
            leave: placeholder,
            bail_tail: placeholder,
            ret_block: None,
            decline: placeholder,
            dispatch: None,
            send_tail: None,
            poll_tail: None,
            polls: Vec::new(),
            slot,
            cache: [None; 3],
            held: [None; 3],
            max_field: ops
                .iter()
                .filter_map(|op| match *op {
                    Op::PushField(i) | Op::StoreField(i) | Op::PopField(i) => Some(i),
                    _ => None,
                })
                .max(),
            edges: Vec::new(),
            probes: Vec::new(),
        };
        // Only the function's exits and bail tail are cold (Cranelift puts
        // cold blocks at the function's end). A site's slow paths, bail
        // blocks and polls are laid out where they are made, after the
        // site's inline path: a branch to them reaches with an 8-bit
        // displacement (`relax.rs`) where one to the end takes a 32-bit
        // one, and the inline path mostly ends in a jump anyway (measured:
        // 4-6% less code, 0.3-0.5% fewer instructions run, both on the four
        // benchmarks of ARCHITECTURE.md's "Code size").
        g.leave = g.b.create_block();
        g.b.set_cold_block(g.leave);
        g.b.append_block_param(g.leave, types::I64);
        g.bail_tail = g.b.create_block();
        g.b.set_cold_block(g.bail_tail);
        g.b.append_block_param(g.bail_tail, types::I64);
        g.decline = g.b.create_block();
        g.b.set_cold_block(g.decline);
        (g, params)
    }

    /// The `leave` block (every exit but the inline return: one epilogue
    /// for them all) filled, the function finished.
    fn end(mut self, isa: &dyn TargetIsa) {
        let leave = self.leave;
        self.b.switch_to_block(leave);
        let status = self.b.block_params(leave)[0];
        self.restore_caller_r15();
        self.b.ins().return_(&[status]);
        self.b.seal_all_blocks();
        self.b.finalize(isa.frontend_config());
    }
}

/// Where a function's stack slot keeps its frame's `bp`, its environment and
/// its caller's pinned register (the context is in the pinned register:
/// [`Gen::ctx`]).
const SLOT_BP: i32 = 0;
const SLOT_ENV: i32 = 8;
const SLOT_CALLER_R15: i32 = 16;

/// The bits of a shared tail's parameter below its pc: the operand stack's
/// top as an offset from `bp` ([`Gen::at`]).
const AT_SHIFT: i64 = 16;

/// Up to this many resume points past pc 0, the dispatch tests the pc
/// against each rather than reading the resume table (`compile`).
const FEW_RESUMES: usize = 3;

/// `(start, end, pc)`: the code in `start..end` runs instruction `pc`.
type PcMap = Vec<(u32, u32, u32)>;

/// Compile the function made in `ctx`: its machine code and its map from
/// code ranges to the source locations set (the bytecode pcs), its
/// branches short where they reach (`relax.rs`; `table`: the entries of
/// its jump table, if it has one; `probes`: [`Gen`]'s).
fn machine_code(
    isa: &dyn TargetIsa,
    ctx: &mut Context,
    table: Option<usize>,
    probes: &[u64],
) -> Result<(Vec<u8>, PcMap), String> {
    let once = pinned_once(&ctx.func);
    let mut ctrl = cranelift_codegen::control::ControlPlane::default();
    let compiled = ctx
        .compile(isa, &mut ctrl)
        .map_err(|e| format!("cranelift: {:?}", e.inner))?;
    if !compiled.buffer.relocs().is_empty() {
        return Err("the code has relocations".to_string());
    }
    let mut pcs = compiled
        .buffer
        .get_srclocs_sorted()
        .iter()
        .filter(|s| !s.loc.is_default())
        .map(|s| (s.start, s.end, s.loc.bits()))
        .collect::<PcMap>();
    let code = compiled.code_buffer();
    // (`pcs` moved only when the code is.)
    // The counters native code only increments (`bump`; the sends' new
    // count tested for its sign alone: `count_send`).
    let counters: Vec<u8> = [offset_of!(NativeCtx, sends), offset_of!(NativeCtx, inlined)]
        .into_iter()
        .filter_map(|f| i8::try_from(Gen::ctx_disp(f)).ok())
        .map(|d| d as u8)
        .collect();
    let code = relax::relax(code, table, &mut pcs, once, &counters, probes)
        .unwrap_or_else(|| code.to_vec());
    Ok((code, pcs))
}

/// Has every copy of the pinned register (`get_pinned_reg`) in `func` one
/// use, the address of a load, or a store's or a call's operand? Then each
/// copy's machine register is read by one instruction, and `relax.rs` may
/// fold the copy into it.
fn pinned_once(func: &Function) -> bool {
    let mut uses = std::collections::HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let op = func.dfg.insts[inst].opcode();
            for (i, v) in func.dfg.inst_values(inst).enumerate() {
                let ValueDef::Result(def, _) = func.dfg.value_def(v) else {
                    continue;
                };
                if func.dfg.insts[def].opcode() != Opcode::GetPinnedReg {
                    continue;
                }
                let fine = match op {
                    Opcode::Load | Opcode::Uload32 | Opcode::Sload32 => i == 0,
                    Opcode::Store | Opcode::Istore32 | Opcode::Call | Opcode::CallIndirect => true,
                    _ => false,
                };
                let n = uses.entry(v).or_insert(0u32);
                *n += 1;
                if !fine || *n > 1 {
                    return false;
                }
            }
        }
    }
    true
}

/// Compile `code` for `isa`: its machine code and pc map, or why not.
pub(crate) fn compile(
    isa: &dyn TargetIsa,
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    code: &Unit,
    counter: u64,
) -> Result<Compiled, String> {
    let ops = &code.ops;
    let an = analyse(ops)?;
    // Every operand offset from `bp` fits below a tail parameter's pc.
    let slots = 1 + code.num_args + code.num_temps + code.max_stack + 2;
    if slots >= 1 << AT_SHIFT {
        return Err(format!("{slots} frame slots: more than native code passes"));
    }
    let sig = native_signature(isa);
    let (mut g, params) = Gen::begin(isa, ctx, fctx, code, sig, 24);
    let (cctx, pc, sp, cell) = (params[0], params[1], params[2], params[3]);
    let (flags, slot) = (g.flags, g.slot);
    // The context in the pinned register for the whole activation, the
    // caller's kept (a native caller's is the same context; Rust's is its
    // own, callee-saved) and put back at each return.
    let caller_r15 = g.b.ins().get_pinned_reg(types::I64);
    g.b.ins()
        .stack_store(types::I64, caller_r15, slot, SLOT_CALLER_R15);
    g.b.ins().set_pinned_reg(cctx);
    let mut resumes = Vec::new();
    for p in 0..ops.len() {
        if an.resume[p] {
            resumes.push((p, g.b.create_block()));
        }
    }
    let start = resumes[0].1;
    let resumes_len = resumes.len();
    // A direct entry (a call from native code: `DIRECT`) first, then the
    // resume pc: pc 0 (every call from the interpreter or the runtime) by
    // one test, the others by a table from pc to resume index and one
    // `br_table` (a `Switch` on the sparse pcs is a tree of two blocks per
    // resume point, whose edges to the declining block Cranelift must split
    // too).
    let direct = g.b.create_block();
    let resume = g.b.create_block();
    let is_direct =
        g.b.ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, pc, DIRECT);
    g.b.ins().brif(is_direct, direct, NO, resume, NO);
    g.b.switch_to_block(direct);
    g.direct_entry(pc, sp, cell, start);
    g.b.set_srcloc(SourceLoc::default());
    g.b.switch_to_block(resume);
    let bp = g.load(cctx, Gen::ctx_disp(offset_of!(NativeCtx, bp)));
    let env = g.load(cctx, Gen::ctx_disp(offset_of!(NativeCtx, env)));
    g.b.ins().stack_store(types::I64, bp, slot, SLOT_BP);
    g.b.ins().stack_store(types::I64, env, slot, SLOT_ENV);
    g.cache = [None, Some((resume, bp)), Some((resume, env))];
    g.reload_bases();
    if let Some(need) = g.need() {
        let r = g.read_slot(0);
        let fine = g.b.create_block();
        let decline = g.decline;
        g.if_fields(r, need, fine, decline);
        g.b.switch_to_block(fine);
    }
    let k = resumes.len() as u32;
    let mut table = vec![k; ops.len() + 1];
    for (i, &(p, _)) in resumes.iter().enumerate() {
        table[p] = i as u32;
    }
    let resume_table = table.into_boxed_slice();
    if resumes.len() == 1 {
        // No resume point but pc 0: any other pc is declined.
        let decline = g.decline;
        g.b.ins().brif(pc, decline, NO, start, NO);
    } else {
        // The dispatch past pc 0, `(pc)`: from here, and from the
        // function's send and poll tails.
        let others = g.b.create_block();
        let p = g.b.append_block_param(others, types::I64);
        g.dispatch = Some(others);
        g.b.ins()
            .brif(pc, others, &[BlockArg::Value(pc)], start, NO);
        g.b.switch_to_block(others);
        if resumes.len() <= 1 + FEW_RESUMES {
            // Few resume points past pc 0: a test for each (less code than
            // the table's bounds, load and indirect jump; as few tests run).
            let last = resumes.len() - 1;
            for (i, &(rp, r)) in resumes[1..].iter().enumerate() {
                let is = g.b.ins().icmp_imm_u(IntCC::Equal, p, rp as i64);
                let next = if i + 1 == last {
                    g.decline
                } else {
                    g.b.create_block()
                };
                g.b.ins().brif(is, r, NO, next, NO);
                if i + 1 != last {
                    g.b.switch_to_block(next);
                }
            }
        } else {
            let last = g.iconst(ops.len() as i64);
            let p = g.b.ins().umin(p, last);
            let off = g.b.ins().ishl_imm_u(p, 2);
            let base = g.iconst(resume_table.as_ptr() as i64);
            let a = g.b.ins().iadd(base, off);
            let idx = g.b.ins().load(types::I32, flags, a, 0);
            // Index 0 (pc 0) is taken above: the jump table starts at index 1
            // (0 and k wrap or run past it, to `decline`).
            let idx = g.b.ins().iadd_imm_s(idx, -1);
            let def = g.b.func.dfg.block_call(g.decline, &[]);
            let calls: Vec<_> = resumes[1..]
                .iter()
                .map(|&(_, r)| g.b.func.dfg.block_call(r, &[]))
                .collect();
            let jt = g.b.create_jump_table(JumpTableData::new(def, &calls));
            g.b.ins().br_table(idx, jt);
        }
    }
    // Each resume block reads its operands (the bases were read above).
    for (p, r) in resumes {
        g.b.switch_to_block(r);
        if p == 0 {
            // Count the activation (the code zone evicts the functions
            // entered least): a direct entry the callee refused is not one.
            let counter = g.iconst(counter as i64);
            let n = g.load(counter, 0);
            let n = g.b.ins().iadd_imm_s(n, 1);
            g.store(n, counter, 0);
            g.prologue();
        }
        let depth = an.depth[p].unwrap_or(0);
        g.reload(depth);
        let target = g.blocks[p];
        g.b.ins().jump(target, NO);
    }
    // Straight-line code shares its block: a new block starts only where
    // control joins (a jump target, a resume point) or after a branch.
    let mut fell = false;
    for (pc, &op) in ops.iter().enumerate() {
        if an.join[pc] || !fell {
            let blk = g.blocks[pc];
            if fell {
                g.b.ins().jump(blk, NO);
            }
            g.b.switch_to_block(blk);
        }
        g.b.set_srcloc(SourceLoc::new(pc as u32));
        if an.join[pc] {
            g.clean.iter_mut().for_each(|c| *c = false);
        }
        let Some(depth) = an.depth[pc] else {
            // Unreachable code: never entered.
            let decline = g.decline;
            g.b.ins().jump(decline, NO);
            fell = false;
            continue;
        };
        fell = g.op(pc, op, depth);
    }
    if fell {
        let end = g.blocks[ops.len()];
        g.b.ins().jump(end, NO);
    }
    for (blk, pc, depth, stored) in std::mem::take(&mut g.bails) {
        g.b.switch_to_block(blk);
        g.b.set_srcloc(SourceLoc::new(pc as u32));
        g.clean = stored;
        g.bail_here(pc, depth);
    }
    g.fill_ret_block();
    g.fill_poll_tail();
    // The exits: code of no instruction.
    g.b.set_srcloc(SourceLoc::default());
    g.fill_send_tail();
    g.fill_bail_tail();
    // The block past the end is never reached (every path returns).
    let end = g.blocks[ops.len()];
    g.b.switch_to_block(end);
    let decline = g.decline;
    g.b.ins().jump(decline, NO);
    g.b.switch_to_block(decline);
    let dv = g.iconst(DECLINE as i64);
    let leave = g.leave;
    g.b.ins().jump(leave, &[BlockArg::Value(dv)]);
    let probes = std::mem::take(&mut g.probes);
    g.end(isa);
    // The dispatch's jump table: its targets and its default.
    let table = (resumes_len > 1 + FEW_RESUMES).then_some(resumes_len);
    let (code, pcs) = machine_code(isa, ctx, table, &probes)?;
    Ok(Compiled {
        code,
        pcs,
        resume_table,
    })
}
