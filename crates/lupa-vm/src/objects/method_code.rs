//! Runtime method code: [`MethodCode`] (a compiled method or block ready to
//! run, as `Vm::make_code` builds it from `lupa_compiler::CompiledCode`), the
//! per-send-site [`InlineCache`] and the id of a native primitive [`PrimId`].
//!
//! Contract: a `MethodCode` is shared (`Rc`) and immutable except through its
//! `Cell`s: the collector patches `literals` and `object` (both are GC roots),
//! reflection patches `literals` and `sel_ids` together (`Vm::patch_literal`),
//! the send path fills `caches`, and installation sets `object`,
//! `source_range` and (for blocks) `home`. An inline cache is valid only while
//! its `epoch` equals the class table's epoch.

use crate::objects::Trivial;
use lupa_compiler::{CodeKind, Const, Op};
use lupa_heap::Value;
use std::cell::Cell;
use std::rc::Rc;

/// A native primitive, by its place in the primitive tables (`prims/mod.rs`:
/// the module's position in `MODULES`, the entry's in the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PrimId {
    /// The module's position in the list of tables.
    pub module: u16,
    /// The entry's position in its module's table.
    pub index: u16,
}

/// Entries of a send site's polymorphic inline cache: a site that sees more
/// receiver classes (megamorphic) replaces entries and looks up through the
/// class table's global cache.
pub const PIC_SIZE: usize = 4;

/// One entry of a send site's inline cache: class index, method-dictionary
/// epoch, method id. `#[repr(C)]`, class then epoch: native code compares the
/// two as one word.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct InlineCache {
    /// Receiver class index (0 = empty).
    pub class: u32,
    /// Epoch when filled.
    pub epoch: u32,
    /// Target method id.
    pub method: u32,
}

/// A send site's polymorphic inline cache: [`PIC_SIZE`] entries.
pub(crate) type Pic = [Cell<InlineCache>; PIC_SIZE];

/// The method `pic` holds for receivers of `class` in `epoch`, if any.
#[inline(always)]
pub(crate) fn pic_lookup(pic: &Pic, class: u32, epoch: u32) -> Option<u32> {
    pic.iter()
        .map(Cell::get)
        .find(|ic| ic.class == class && ic.epoch == epoch)
        .map(|ic| ic.method)
}

/// Remember in `pic` that receivers of `class` run `method` in `epoch`: in
/// the first entry of another epoch, or else in one chosen by class (a
/// megamorphic site keeps replacing its entries).
pub(crate) fn pic_fill(pic: &Pic, class: u32, epoch: u32, method: u32) {
    let slot = pic
        .iter()
        .position(|e| e.get().epoch != epoch)
        .unwrap_or(class as usize % PIC_SIZE);
    pic[slot].set(InlineCache {
        class,
        epoch,
        method,
    });
}

/// A method or block ready to run.
#[derive(Debug)]
pub struct MethodCode {
    /// Index in the VM's method table.
    pub id: u32,
    /// Method or block.
    pub kind: CodeKind,
    /// Selector symbol id (blocks: their home method's).
    pub selector: u32,
    /// The selector as text.
    pub selector_name: Rc<str>,
    /// Class index of the class whose dictionary holds the (home) method.
    pub holder: Cell<u32>,
    /// Number of arguments.
    pub num_args: usize,
    /// Stack-resident temporaries.
    pub num_temps: usize,
    /// Size of its own env (0 and `!needs_env`: none).
    pub env_size: usize,
    /// Allocate an env even if `env_size == 0`.
    pub needs_env: bool,
    /// A method with its own env: that env marks the home of non-local returns
    /// and is flagged dead when the method returns.
    pub home_env: bool,
    /// Operand stack bound.
    pub max_stack: usize,
    /// Instructions.
    pub ops: Box<[Op]>,
    /// Literal frame (patched by the collector and by reflection).
    pub literals: Box<[Cell<Value>]>,
    /// Per literal: its symbol id if it is a Symbol (selectors, global names), else `u32::MAX`.
    /// Kept in step with `literals` by whoever patches them.
    pub sel_ids: Box<[Cell<u32>]>,
    /// One polymorphic inline cache per send site.
    pub caches: Box<[Pic]>,
    /// Nested blocks.
    pub blocks: Box<[Rc<MethodCode>]>,
    /// Runs without a frame (see [`Trivial`]); never set for primitives and blocks.
    pub trivial: Option<Trivial>,
    /// Native code made by a JIT, once this code was compiled (see
    /// `objects/native.rs`); cleared when the JIT evicts it.
    pub native: Cell<Option<super::native::NativeFn>>,
    /// Activations and backward jumps left before this code is hot enough to
    /// compile (counted down by the interpreter; see `interp/native.rs`).
    pub hotness: Cell<u32>,
    /// The interpreter's arithmetic or comparison fast path met a Double
    /// at one of this code's special sends (`interp/special.rs`): a JIT
    /// compiles its inline Double paths only then (type feedback: a send
    /// site compiled without them makes such sends through the runtime,
    /// whose fast path is the same).
    pub saw_double: Cell<bool>,
    /// Its `=`/`~=` fast path compared a String receiver likewise (the
    /// JIT's inline String comparison).
    pub saw_string: Cell<bool>,
    /// Native primitive, if any.
    pub primitive: Cell<Option<PrimId>>,
    /// Declared `= primitive` (no Smalltalk fallback).
    pub primitive_only: bool,
    /// `<unwindProtect>`
    pub unwind_protect: bool,
    /// `<exceptionHandler>`
    pub exception_handler: bool,
    /// `<metaLevel>`: the running process is at the meta level while this method is
    /// active (the VM maintains the count across returns and unwinds). Also
    /// set for `<baseLevel>` and `<trapShortcut>` methods: activation and
    /// frame pop take one slow path (`Vm::enter_level`) for all three, which
    /// tells them apart by the other two flags.
    pub meta_level: bool,
    /// `<baseLevel>`: the running process is back at the base level while this
    /// method is active.
    pub base_level: bool,
    /// The flags of a frame running this code ([`Frame::flags_of`] of
    /// `home_env`, `meta_level` and `base_level`), computed once: activation
    /// copies them into the frame.
    ///
    /// [`Frame::flags_of`]: crate::sched::Frame::flags_of
    pub frame_flags: u32,
    /// `<trapShortcut>` (MethodProxies trap methods): literal 1 is the proxy's
    /// "instrumentation enabled" flag and literal 2 the hidden selector of the
    /// original. When instrumentation is disabled or the process is at the meta
    /// level, the VM sends the hidden selector directly instead of activating the
    /// trap (no hook, no trap frame).
    pub trap_shortcut: bool,
    /// Pragmas with their literal arguments.
    pub pragmas: Vec<(String, Vec<Const>)>,
    /// Line table, as in `CompiledCode::lines`.
    pub lines: Vec<(u32, u32)>,
    /// The source line of each instruction ([`MethodCode::lines_by_pc`] of
    /// `lines`): activation hooks ask the caller's line at every activation,
    /// and a search of `lines` there was a seventh of a counted run.
    pub line_by_pc: Box<[u32]>,
    /// First source line.
    pub first_line: u32,
    /// Source file name for backtraces.
    pub file: Rc<str>,
    /// Byte range of the method's definition in `file` (0..0 when unknown).
    pub source_range: Cell<(u32, u32)>,
    /// The method object (Method/Primitive instance; nil for blocks).
    pub object: Cell<Value>,
    /// For blocks: the home method id.
    pub home: Cell<u32>,
    /// Names of arguments and temps.
    pub local_names: Vec<String>,
    /// Line coverage's arrivals counters, one per instruction, made at the
    /// first count (`obs/coverage.rs`): at a stable address for as long as
    /// the method lives (the whole run), where native code compiled to count
    /// lines adds to them.
    pub arrivals: crate::obs::coverage::Arrivals,
}

impl MethodCode {
    /// The states of this code's inline caches in class-table `epoch`: how
    /// many send sites hold 0, 1, ..., [`PIC_SIZE`] receiver classes (a full
    /// cache is megamorphic, or polymorphic at capacity).
    pub fn cache_states(&self, epoch: u32) -> [u64; PIC_SIZE + 1] {
        let mut states = [0u64; PIC_SIZE + 1];
        for pic in self.caches.iter() {
            let live = pic
                .iter()
                .filter(|e| {
                    let e = e.get();
                    e.class != 0 && e.epoch == epoch
                })
                .count();
            states[live] += 1;
        }
        states
    }

    /// Bytes this code and its blocks take outside the heap (their records,
    /// instructions, literals, caches and line tables).
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        size_of::<MethodCode>()
            + self.ops.len() * size_of::<Op>()
            + self.literals.len() * size_of::<Cell<Value>>()
            + self.sel_ids.len() * size_of::<Cell<u32>>()
            + self.caches.len() * size_of::<Pic>()
            + self.line_by_pc.len() * size_of::<u32>()
            + self.blocks.iter().map(|b| b.memory_bytes()).sum::<usize>()
    }

    /// Source line of instruction `pc`.
    #[inline]
    pub fn line_of(&self, pc: usize) -> u32 {
        match self.line_by_pc.get(pc) {
            Some(&line) => line,
            None => lupa_compiler::line_at(&self.lines, self.first_line, pc),
        }
    }

    /// The line of each of `count` instructions, from a line table.
    pub fn lines_by_pc(lines: &[(u32, u32)], first_line: u32, count: usize) -> Box<[u32]> {
        (0..count)
            .map(|pc| lupa_compiler::line_at(lines, first_line, pc))
            .collect()
    }

    /// Has this method the pragma?
    pub fn has_pragma(&self, name: &str) -> bool {
        self.pragmas.iter().any(|(p, _)| p == name)
    }

    /// How many named fields of its receiver the method (with its blocks)
    /// reads or writes: the highest field index it uses, plus one (0 when it
    /// touches none). Method installation and `invokeOn:with:` check it
    /// against the receiver's shape.
    pub fn fields_used(&self) -> usize {
        let own = self
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::PushField(i) | Op::StoreField(i) | Op::PopField(i) => Some(*i as usize + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        self.blocks
            .iter()
            .map(|b| b.fields_used())
            .fold(own, usize::max)
    }

    /// Does it need an env of its own?
    #[inline(always)]
    pub fn has_env(&self) -> bool {
        self.env_size > 0 || self.needs_env
    }
}
