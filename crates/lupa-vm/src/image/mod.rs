//! The image: everything the VM knows about the program's code, independent of
//! any running process — the class table, symbols, globals, the method table,
//! the primitive table, the loaded source files, the class loader, and the
//! caches derived from method dictionaries.
//!
//! - `class_table`: [`ClassTable`] (classes by index and name, lookup, the epoch);
//! - `symbols`: [`Symbols`] (interned symbols);
//! - `methods`: compiled code -> runtime [`MethodCode`], installation, lookup;
//! - `loader`: the class-path search, bootstrap and class definition;
//! - `query`: the query API profilers use: what a method id names
//!   ([`MethodDescription`]), its instructions and lines;
//! - `fast_path_cache`: per class, "is the default method behind a fast path
//!   still installed" ([`FastPathCache`]).
//!
//! An [`Image`] owns its state; its methods take the heap (and nothing else of
//! the VM) when they make heap objects, so the loader, the interpreter and the
//! primitives can borrow the image and the heap at once.

pub(crate) mod class_table;
mod fast_path_cache;
mod loader;
mod methods;
mod query;
mod symbols;

pub use class_table::{ClassTable, Lookup};
pub(crate) use fast_path_cache::{FastPath, FastPathCache};
pub use loader::{BUNDLED, BUNDLED_PREFIX, PackageInfo, package_of};
pub use query::{InstructionInfo, MethodDescription};
pub(crate) use symbols::{HIDDEN_PREFIX, Symbols, WellKnownSymbols, selector_arity};

use crate::objects::{MethodCode, PrimId, Shape, cls};
use lupa_heap::{Heap, OutOfMemory, Value};
use lupa_syntax::SourceFile;
use std::collections::HashMap;
use std::rc::Rc;

/// The program's code and names (see the module documentation).
pub struct Image {
    /// The class table (classes by index and name, lookup, epoch).
    pub(crate) classes: ClassTable,
    /// Interned symbols.
    pub(crate) symbols: Symbols,
    pub(crate) globals: rustc_hash::FxHashMap<u32, Value>,
    /// Method table, indexed by method id.
    pub(crate) methods: Vec<Rc<MethodCode>>,
    /// Per class: is the default method behind each `Op::Special` fast path still installed?
    pub(crate) fast_paths: FastPathCache,
    /// The native primitives, by `Class>>selector` (bound when a method is made).
    pub(crate) prims: HashMap<String, PrimId>,
    /// Classes being loaded (a cycle of superclasses is an error).
    pub(crate) loading: Vec<String>,
    /// The `System` instance (`system`).
    pub(crate) system_object: Value,
    /// The `ProcessorScheduler` instance (`Processor`).
    pub(crate) processor_object: Value,
    /// Loaded source files, by path.
    pub(crate) sources: HashMap<Rc<str>, Rc<SourceFile>>,
    /// Symbols the interpreter sends by itself.
    pub(crate) sym_cache: WellKnownSymbols,
    /// The user's class path, searched before the bundled library.
    pub(crate) class_path: Vec<std::path::PathBuf>,
    /// Search the bundled library after the class path.
    pub(crate) use_bundled: bool,
    /// The hotness new methods and blocks start with (`interp/native.rs`).
    pub(crate) start_hotness: u32,
    /// The kernel (`Object`) is not Lupa's but a class path's, e.g. SOM's
    /// core-lib, whose `Object>>error:` prints and exits rather than signal
    /// a catchable `Error`: primitive errors are then reported by the VM, as
    /// SOM VMs do (see `Vm::send_error`).
    pub(crate) foreign_kernel: bool,
    /// Bytes of the methods made at run time (`compile:` and its sources,
    /// method copies): they are never freed (a method id stays valid for profiles),
    /// so they count against `--max-heap` (`vm::side_tables`).
    pub(crate) runtime_code_bytes: usize,
}

impl Image {
    /// An empty image that loads classes from `class_path` (then from the
    /// bundled library when `use_bundled`).
    /// Its primitives are `bindings`: (class name, selector, primitive).
    pub(crate) fn new(
        class_path: Vec<std::path::PathBuf>,
        use_bundled: bool,
        bindings: impl Iterator<Item = (&'static str, &'static str, PrimId)>,
    ) -> Image {
        Image {
            classes: ClassTable::new(),
            symbols: Symbols::default(),
            globals: Default::default(),
            methods: Vec::new(),
            fast_paths: FastPathCache::default(),
            prims: bindings
                .map(|(c, s, id)| (format!("{c}>>{s}"), id))
                .collect(),
            loading: Vec::new(),
            system_object: Value::NIL,
            processor_object: Value::NIL,
            sources: HashMap::new(),
            sym_cache: WellKnownSymbols::default(),
            class_path,
            use_bundled,
            start_hotness: u32::MAX,
            foreign_kernel: false,
            runtime_code_bytes: 0,
        }
    }

    /// A new instance of class `c` with `extra` indexable slots (or bytes or
    /// words), made in `heap` without telling anyone (the VM's
    /// `instantiate` publishes the allocation to a sampler).
    #[inline(always)]
    pub(crate) fn instantiate(
        &self,
        heap: &mut Heap,
        c: u32,
        extra: usize,
    ) -> Result<Value, OutOfMemory> {
        let info = &self.classes[c as usize];
        let named = info.fields.len();
        match info.shape {
            Shape::Fixed | Shape::Indexable => heap.alloc_pointers(c, named + extra),
            Shape::Weak => heap.alloc_weak(c, named + extra),
            Shape::Ephemeron => heap.alloc_ephemeron(c, named + extra),
            Shape::Bytes => heap.alloc_bytes(c, &vec![0u8; extra]),
            Shape::Words => heap.alloc_words(c, &vec![0u64; extra.max(1)]),
        }
    }

    /// Why `selector` (`new`, `new:`...) may not make an instance of class
    /// `c`, or `None` when it may: the instances of the classes
    /// [`cls::made_by_vm`] are made by the VM alone.
    pub(crate) fn instantiation_problem(&self, c: u32, selector: &str) -> Option<String> {
        cls::made_by_vm(c).then(|| {
            format!(
                "{} cannot be instantiated with {selector}",
                self.class_name(c)
            )
        })
    }

    /// Intern a symbol, answering its id.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.symbols.by_name.get(name) {
            return id;
        }
        let id = self.symbols.names.len() as u32;
        let rc: Rc<str> = Rc::from(name);
        self.symbols.text_bytes += name.len();
        self.symbols.by_name.insert(rc.clone(), id);
        self.symbols.names.push(rc);
        self.symbols.objects.push(Value::NIL);
        id
    }

    /// The Symbol object for an id (allocated in `heap` on first use).
    pub fn symbol_object(&mut self, heap: &mut Heap, id: u32) -> Result<Value, OutOfMemory> {
        let existing = self.symbols.objects[id as usize];
        if existing != Value::NIL {
            return Ok(existing);
        }
        let name = self.symbols.names[id as usize].clone();
        let v = heap.alloc_bytes(cls::SYMBOL, name.as_bytes())?;
        heap.set_identity_hash(v, id + 1);
        self.symbols.objects[id as usize] = v;
        Ok(v)
    }

    /// Intern `name` and answer its Symbol object.
    pub fn symbol(&mut self, heap: &mut Heap, name: &str) -> Result<Value, OutOfMemory> {
        let id = self.intern(name);
        self.symbol_object(heap, id)
    }

    /// The code of method or block `id` (a frame's `method`).
    #[inline(always)]
    pub(crate) fn code(&self, id: u32) -> &Rc<MethodCode> {
        &self.methods[id as usize]
    }

    /// The code of method or block `id`, if there is one (the JIT reads the
    /// methods a send site's inline cache names).
    pub fn method_code(&self, id: u32) -> Option<&MethodCode> {
        self.methods.get(id as usize).map(|m| &**m)
    }

    /// The class object of a class index.
    pub fn class_object(&self, c: u32) -> Value {
        self.classes
            .get(c as usize)
            .map(|i| i.object)
            .unwrap_or(Value::NIL)
    }

    /// Name of a class index.
    pub fn class_name(&self, c: u32) -> &str {
        self.classes
            .get(c as usize)
            .map(|i| &*i.name)
            .unwrap_or("?")
    }

    /// The value of a global.
    pub fn global(&self, name: &str) -> Option<Value> {
        let id = self.symbols.lookup(name)?;
        self.globals.get(&id).copied()
    }

    /// Set a global.
    pub fn set_global(&mut self, name: &str, v: Value) {
        let id = self.intern(name);
        self.globals.insert(id, v);
    }

    /// The primitive registered for `class>>selector`, if any.
    pub(crate) fn find_primitive(&self, class: &str, selector: &str) -> Option<PrimId> {
        self.prims.get(&format!("{class}>>{selector}")).copied()
    }

    /// Is class `c` class `k` or a subclass of it?
    pub fn is_kind_of(&self, c: u32, k: u32) -> bool {
        self.classes.is_kind_of(c, k)
    }

    /// Every root the image holds, for the collector: globals, symbols, class
    /// objects and method dictionaries, method literals and method objects,
    /// the system objects.
    pub(crate) fn visit_roots(&mut self, root: &mut impl FnMut(&mut Value)) {
        for v in self.globals.values_mut() {
            root(v);
        }
        for v in self.symbols.objects.iter_mut() {
            root(v);
        }
        for info in self.classes.iter_mut() {
            root(&mut info.object);
            root(&mut info.methods_array);
            for v in info.methods.values_mut() {
                root(v);
            }
        }
        for m in self.methods.iter() {
            for l in m.literals.iter() {
                let mut v = l.get();
                root(&mut v);
                l.set(v);
            }
            let mut o = m.object.get();
            root(&mut o);
            m.object.set(o);
        }
        root(&mut self.system_object);
        root(&mut self.processor_object);
    }
}
