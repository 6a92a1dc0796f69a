//! The object model on the Rust side: well-known classes, class descriptions,
//! symbols and runtime method code.

use lupa_compiler::{CodeKind, Const, Op};
use lupa_heap::Value;
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

/// Fixed class indices of the kernel classes (index 0 is never a class).
pub mod cls {
    /// `Object`
    pub const OBJECT: u32 = 1;
    /// `Class`
    pub const CLASS: u32 = 2;
    /// `Metaclass`
    pub const METACLASS: u32 = 3;
    /// `Nil` (class of nil)
    pub const NIL: u32 = 4;
    /// `True`
    pub const TRUE: u32 = 5;
    /// `False`
    pub const FALSE: u32 = 6;
    /// `Boolean`
    pub const BOOLEAN: u32 = 7;
    /// `Integer` (SmallIntegers and large integers alike)
    pub const INTEGER: u32 = 8;
    /// `Double`
    pub const DOUBLE: u32 = 9;
    /// `String`
    pub const STRING: u32 = 10;
    /// `Symbol`
    pub const SYMBOL: u32 = 11;
    /// `Array`
    pub const ARRAY: u32 = 12;
    /// `Method`
    pub const METHOD: u32 = 13;
    /// `Primitive`
    pub const PRIMITIVE: u32 = 14;
    /// `Block`
    pub const BLOCK: u32 = 15;
    /// `Block1` (no-argument blocks)
    pub const BLOCK1: u32 = 16;
    /// `Block2` (one argument)
    pub const BLOCK2: u32 = 17;
    /// `Block3` (two arguments)
    pub const BLOCK3: u32 = 18;
    /// `Block4` (three arguments)
    pub const BLOCK4: u32 = 19;
    /// `System`
    pub const SYSTEM: u32 = 20;
    /// Lupa's hidden environment class (captured variables).
    pub const ENV: u32 = 21;
    /// `Process`
    pub const PROCESS: u32 = 22;
    /// `ProcessorScheduler`
    pub const SCHEDULER: u32 = 23;
    /// `Semaphore`
    pub const SEMAPHORE: u32 = 24;
    /// `WeakArray`
    pub const WEAK_ARRAY: u32 = 25;
    /// `Context` (holder of the frame primitives)
    pub const CONTEXT: u32 = 26;
    /// `Ephemeron`
    pub const EPHEMERON: u32 = 27;
    /// Number of well-known classes (+1).
    pub const COUNT: u32 = 28;

    /// Names of the well-known classes, by index.
    pub const NAMES: [&str; COUNT as usize] = [
        "",
        "Object",
        "Class",
        "Metaclass",
        "Nil",
        "True",
        "False",
        "Boolean",
        "Integer",
        "Double",
        "String",
        "Symbol",
        "Array",
        "Method",
        "Primitive",
        "Block",
        "Block1",
        "Block2",
        "Block3",
        "Block4",
        "System",
        "LupaEnvironment",
        "Process",
        "ProcessorScheduler",
        "Semaphore",
        "WeakArray",
        "Context",
        "Ephemeron",
    ];
}

/// How instances of a class are laid out beyond their named fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Named fields only.
    Fixed,
    /// Named fields then indexable pointer slots (Array).
    Indexable,
    /// Bytes (String, Symbol).
    Bytes,
    /// Raw words (Double, large Integer).
    Words,
    /// Weak indexable slots (WeakArray).
    Weak,
    /// An ephemeron: named fields only, the first (key) and second (value) with
    /// ephemeron semantics (Ephemeron and its subclasses).
    Ephemeron,
}

/// A class, as the VM sees it.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    /// Class name (`Foo`, or `Foo class` for a metaclass).
    pub name: Rc<str>,
    /// Superclass index, `None` for the root.
    pub superclass: Option<u32>,
    /// For a class: its metaclass index. For a metaclass: its sole instance's index.
    pub partner: u32,
    /// Is this a metaclass?
    pub is_meta: bool,
    /// All instance field names, inherited first.
    pub fields: Vec<Rc<str>>,
    /// Instance layout.
    pub shape: Shape,
    /// Method dictionary: selector symbol id -> method object (or any object).
    pub methods: rustc_hash::FxHashMap<u32, Value>,
    /// Selectors in definition order (for `methods`, reports and determinism).
    pub method_order: Vec<u32>,
    /// The class object in the heap (a `Value` updated by the collector).
    pub object: Value,
    /// Where the class was loaded from (`Kernel/Object.som`, a path, or `<synthetic>`).
    pub source: Rc<str>,
    /// Package: the directory the class file was in (`Kernel`, `Benchmarks/Richards`).
    pub category: Rc<str>,
    /// Has its definition been loaded (false for a placeholder)?
    pub loaded: bool,
}

/// A native primitive: the receiver and its arguments are on top of the stack
/// (read through [`Args`](crate::Args)); `prims/outcome.rs` says what the
/// send path does with its [`PrimResult`](crate::PrimResult).
pub type PrimFn = fn(&mut crate::Vm, crate::prims::Args) -> crate::prims::PrimResult;

/// Inline cache of one send site: class index, method-dictionary epoch, method id.
#[derive(Debug, Clone, Copy, Default)]
pub struct InlineCache {
    /// Receiver class index (0 = empty).
    pub class: u32,
    /// Epoch when filled.
    pub epoch: u32,
    /// Target method id.
    pub method: u32,
}

/// Methods simple enough to run without a frame (when no activation hooks are on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trivial {
    /// `^field`
    Getter(u16),
    /// `field := arg` (answers self)
    Setter(u16),
    /// `^self` or an empty method
    ReturnSelf,
    /// `^literal` (index into the literal frame)
    Literal(u16),
    /// `^smallInteger`
    Int(i32),
    /// `^nil`, `^true`, `^false`
    Nil,
    /// `^true`
    True,
    /// `^false`
    False,
}

impl Trivial {
    /// Recognise a trivial method from its code.
    pub fn of(ops: &[Op], num_args: usize, num_temps: usize, has_env: bool) -> Option<Trivial> {
        if num_temps != 0 || has_env {
            return None;
        }
        Some(match ops {
            [Op::PushField(i), Op::ReturnTop, ..] if num_args == 0 => Trivial::Getter(*i),
            [Op::PushLocal(0), Op::PopField(i), Op::ReturnSelf, ..] if num_args == 1 => {
                Trivial::Setter(*i)
            }
            [Op::ReturnSelf, ..] => Trivial::ReturnSelf,
            [Op::PushSelf, Op::ReturnTop, ..] => Trivial::ReturnSelf,
            [Op::PushLiteral(k), Op::ReturnTop, ..] => Trivial::Literal(*k),
            [Op::PushInt(n), Op::ReturnTop, ..] => Trivial::Int(*n),
            [Op::PushNil, Op::ReturnTop, ..] => Trivial::Nil,
            [Op::PushTrue, Op::ReturnTop, ..] => Trivial::True,
            [Op::PushFalse, Op::ReturnTop, ..] => Trivial::False,
            _ => return None,
        })
    }
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
    /// One inline cache per send site.
    pub caches: Box<[Cell<InlineCache>]>,
    /// Nested blocks.
    pub blocks: Box<[Rc<MethodCode>]>,
    /// Runs without a frame (see [`Trivial`]); never set for primitives and blocks.
    pub trivial: Option<Trivial>,
    /// Native primitive, if any.
    pub primitive: Cell<Option<PrimFn>>,
    /// Declared `= primitive` (no Smalltalk fallback).
    pub primitive_only: bool,
    /// `<unwindProtect>`
    pub unwind_protect: bool,
    /// `<exceptionHandler>`
    pub exception_handler: bool,
    /// `<metaLevel>`: the running process is at the meta level while this method is
    /// active (the VM maintains the count across returns and unwinds).
    pub meta_level: bool,
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
}

impl MethodCode {
    /// Source line of instruction `pc`.
    pub fn line_of(&self, pc: usize) -> u32 {
        lupa_compiler::line_at(&self.lines, self.first_line, pc)
    }

    /// Has this method the pragma?
    pub fn has_pragma(&self, name: &str) -> bool {
        self.pragmas.iter().any(|(p, _)| p == name)
    }

    /// Does it need an env of its own?
    #[inline(always)]
    pub fn has_env(&self) -> bool {
        self.env_size > 0 || self.needs_env
    }
}

/// Interned symbols: id <-> text <-> heap Symbol object.
#[derive(Default)]
pub struct Symbols {
    pub(crate) by_name: HashMap<Rc<str>, u32>,
    pub(crate) names: Vec<Rc<str>>,
    pub(crate) objects: Vec<Value>,
}

impl Symbols {
    /// The text of symbol `id`.
    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map(|s| &**s).unwrap_or("")
    }

    /// The id of an already interned symbol.
    pub fn lookup(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }
}
