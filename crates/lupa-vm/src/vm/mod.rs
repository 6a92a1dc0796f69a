//! The [`Vm`] itself: its state and construction, symbols, globals and value
//! helpers, and running a program. The rest of its behaviour is split by concern:
//!
//! - `config`: [`VmOptions`]; `error`: [`VmError`];
//! - `loader`: class-path search, bootstrap, class definition;
//! - `methods`: runtime method code, installation, method dictionaries, lookup;
//! - `gc_roots`: the roots handed to the collector and the collection glue;
//! - `output`: the program's standard output;
//! - elsewhere: the class table (`class_table`), the interpreter (`interp`),
//!   processes (`process`), MethodProxies support (`proxies`), primitives (`prims`).

mod config;
mod error;
mod gc_roots;
mod loader;
mod methods;
mod output;

pub(crate) use crate::class_table::Lookup;
pub use config::VmOptions;
pub use error::VmError;
pub use loader::{BUNDLED, package_of};

use crate::class_table::ClassTable;
use crate::interp::ProcessState;
use crate::objects::{MethodCode, Shape, Symbols, cls};
use crate::observe::Observation;
use lupa_heap::{Heap, OutOfMemory, Value};
use lupa_syntax::SourceFile;
use std::collections::HashMap;
use std::rc::Rc;

/// One Lupa virtual machine.
pub struct Vm {
    /// The object heap.
    pub heap: Heap,
    /// The class table (classes by index and name, lookup, epoch).
    pub classes: ClassTable,
    /// Interned symbols.
    pub symbols: Symbols,
    pub(crate) globals: rustc_hash::FxHashMap<u32, Value>,
    /// Method table, indexed by method id.
    pub methods: Vec<Rc<MethodCode>>,
    /// Per class: is the default method behind each `Op::Special` fast path still installed?
    pub(crate) fast_paths: crate::interp::FastPathCache,
    /// The running process's stack, frames, pending unwinds and meta level (the
    /// other processes' states are saved in the scheduler).
    pub running: ProcessState,
    pub(crate) procs: crate::process::Scheduler,
    /// Options.
    pub options: VmOptions,
    /// Observation points (counters, hooks, sampling register).
    pub obs: Observation,
    pub(crate) out: std::io::BufWriter<Box<dyn std::io::Write>>,
    pub(crate) prims: HashMap<String, crate::objects::PrimFn>,
    pub(crate) loading: Vec<String>,
    pub(crate) system_object: Value,
    pub(crate) processor_object: Value,
    /// The semaphore the finalization process waits on (`System>>finalizationSemaphore:`);
    /// signalled after a collection that queued ephemerons for mourning.
    pub(crate) finalization_semaphore: Value,
    /// A collection queued ephemerons for mourning and the finalization process
    /// has not been scheduled yet.
    pub(crate) finalization_due: bool,
    /// The stack-depth limit and the stack-overflow state.
    pub(crate) limits: crate::interp::RuntimeLimits,
    pub(crate) start_time: std::time::Instant,
    pub(crate) program_args: Vec<String>,
    /// Values held by Rust code across safepoints (roots).
    pub handles: Vec<Value>,
    pub(crate) rng_state: u64,
    pub(crate) sources: HashMap<Rc<str>, Rc<SourceFile>>,
    pub(crate) exit_code: Option<i32>,
    /// SUnit tests are running (`run_test_classes`): `system exit:` is then an
    /// error of the test that sent it, so it cannot end the run and hide the
    /// results of the other tests.
    pub(crate) running_tests: bool,
    captured: Option<String>,
    pub(crate) sym_cache: crate::interp::WellKnownSymbols,
    /// The profiler door of the Smalltalk side (`profiling.rs`).
    pub(crate) profilers: crate::profiling::ProfilerRegistry,
    /// The last lifetime recording stopped from Smalltalk (`System>>stopLifetimes`).
    pub(crate) last_lifetimes: Option<crate::lifetimes::LifetimeRecording>,
    /// The files the program has open (`File`, `prims/file.rs`).
    pub(crate) files: crate::files::OpenFiles,
    /// Pretenuring advice in force (`VmOptions::pretenure`), if any.
    pub(crate) pretenuring: Option<crate::pretenure::Pretenuring>,
}

impl Vm {
    /// A VM with the kernel loaded, ready to run programs.
    pub fn new(options: VmOptions) -> Result<Vm, VmError> {
        let heap = Heap::new(options.heap.clone());
        let limits = crate::interp::RuntimeLimits::new(options.max_frames, options.heap.max_heap);
        let seed = options.heap.hash_seed;
        let mut vm = Vm {
            heap,
            classes: ClassTable::new(),
            symbols: Symbols::default(),
            globals: Default::default(),
            methods: Vec::new(),
            fast_paths: Default::default(),
            running: ProcessState::with_capacity(1 << 16, 1 << 10),
            procs: crate::process::Scheduler::default(),
            options,
            obs: Observation::default(),
            out: std::io::BufWriter::with_capacity(1 << 16, Box::new(std::io::stdout())),
            prims: HashMap::new(),
            loading: Vec::new(),
            system_object: Value::NIL,
            processor_object: Value::NIL,
            finalization_semaphore: Value::NIL,
            finalization_due: false,
            limits,
            start_time: std::time::Instant::now(),
            program_args: Vec::new(),
            handles: Vec::new(),
            rng_state: seed | 1,
            sources: HashMap::new(),
            exit_code: None,
            running_tests: false,
            captured: None,
            sym_cache: Default::default(),
            profilers: Default::default(),
            last_lifetimes: None,
            files: Default::default(),
            pretenuring: None,
        };
        vm.pretenuring = crate::pretenure::Pretenuring::new(&vm.options.pretenure);
        crate::prims::register_all(&mut vm);
        vm.bootstrap()?;
        Ok(vm)
    }

    /// Run a program the SOM way: `system initialize: #('ClassName' 'arg'...)`.
    /// Answers the process exit code.
    pub fn run_main(&mut self, args: &[String]) -> Result<i32, VmError> {
        self.program_args = args.to_vec();
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.new_string(a)?);
        }
        let arr = self.new_array(&vals)?;
        let sys = self.system_object;
        let r = self.send_message(sys, "initialize:", &[arr]);
        let flushed = self.flush();
        if r.is_ok() || matches!(r, Err(VmError::Exit(_))) {
            flushed?;
        }
        match r {
            Ok(_) => Ok(0),
            Err(VmError::Exit(code)) => Ok(code),
            Err(e) => Err(e),
        }
    }

    /// Answer the class object for a name, loading it if needed.
    pub fn class_named(&mut self, name: &str) -> Result<lupa_heap::Value, VmError> {
        let c = self.load_class_by_name(name)?;
        Ok(self.class_object(c))
    }

    /// Total messages sent so far.
    pub fn send_count(&self) -> u64 {
        self.obs.sends
    }

    /// Intern a symbol, answering its id.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.symbols.by_name.get(name) {
            return id;
        }
        let id = self.symbols.names.len() as u32;
        let rc: Rc<str> = Rc::from(name);
        self.symbols.by_name.insert(rc.clone(), id);
        self.symbols.names.push(rc);
        self.symbols.objects.push(Value::NIL);
        id
    }

    /// The Symbol object for an id (allocated on first use).
    pub fn symbol_object(&mut self, id: u32) -> Result<Value, OutOfMemory> {
        let existing = self.symbols.objects[id as usize];
        if existing != Value::NIL {
            return Ok(existing);
        }
        let name = self.symbols.names[id as usize].clone();
        let v = self.heap.alloc_bytes(cls::SYMBOL, name.as_bytes())?;
        self.heap.set_identity_hash(v, id + 1);
        self.symbols.objects[id as usize] = v;
        Ok(v)
    }

    /// Intern and answer the Symbol object.
    pub fn symbol(&mut self, name: &str) -> Result<Value, OutOfMemory> {
        let id = self.intern(name);
        self.symbol_object(id)
    }

    /// The id of a Symbol object (its identity hash minus one).
    pub fn symbol_id(&mut self, v: Value) -> Option<u32> {
        if v.is_ptr() && self.heap.class_index(v) == cls::SYMBOL {
            Some(self.heap.identity_hash(v) - 1)
        } else {
            None
        }
    }

    /// The class index of any value.
    #[inline(always)]
    pub fn class_of(&self, v: Value) -> u32 {
        if v.is_int() {
            cls::INTEGER
        } else if v.is_ptr() {
            self.heap.class_index(v)
        } else if v.is_float() {
            cls::DOUBLE
        } else if v == Value::NIL {
            cls::NIL
        } else if v == Value::TRUE {
            cls::TRUE
        } else {
            cls::FALSE
        }
    }

    /// Run the allocation `f`, publishing [`VmState::Allocation`] meanwhile
    /// while a sampler is attached, then the state it interrupted (a
    /// primitive's, with its detail). Without a sampler it costs one
    /// predictable branch. The heap never collects inside an allocation (it
    /// raises `needs_gc` for the next safepoint), so no collection state is
    /// nested in it.
    ///
    /// [`VmState::Allocation`]: crate::sampling::VmState::Allocation
    #[inline(always)]
    pub(crate) fn allocating<T>(&mut self, f: impl FnOnce(&mut lupa_heap::Heap) -> T) -> T {
        if self.obs.sampler_attached() {
            self.allocating_published(f)
        } else {
            f(&mut self.heap)
        }
    }

    /// [`allocating`](Self::allocating) with a sampler attached (out of line).
    #[inline(never)]
    pub(crate) fn allocating_published<T>(
        &mut self,
        f: impl FnOnce(&mut lupa_heap::Heap) -> T,
    ) -> T {
        let saved = self.obs.push_allocation(self.procs.current);
        let r = f(&mut self.heap);
        self.obs.pop_state(saved);
        r
    }

    /// Run `f`, a blocking operating-system call of a primitive (a file's
    /// open, read, write or close), publishing [`VmState::Waiting`] meanwhile
    /// while a sampler is attached, then the primitive's state again.
    ///
    /// [`VmState::Waiting`]: crate::sampling::VmState::Waiting
    pub(crate) fn blocking<T>(&mut self, f: impl FnOnce(&mut Vm) -> T) -> T {
        let saved = self
            .obs
            .push_state(crate::sampling::VmState::Waiting, 0, self.procs.current);
        let r = f(self);
        self.obs.pop_state(saved);
        r
    }

    /// A new String.
    pub fn new_string(&mut self, s: &str) -> Result<Value, OutOfMemory> {
        self.allocating(|h| h.alloc_bytes(cls::STRING, s.as_bytes()))
    }

    /// A new byte object of class `c` holding `bytes`.
    pub(crate) fn new_bytes(&mut self, c: u32, bytes: &[u8]) -> Result<Value, OutOfMemory> {
        self.allocating(|h| h.alloc_bytes(c, bytes))
    }

    /// A new word object of class `c` holding `words`.
    pub(crate) fn new_words(&mut self, c: u32, words: &[u64]) -> Result<Value, OutOfMemory> {
        self.allocating(|h| h.alloc_words(c, words))
    }

    /// A new Array of the given values.
    pub fn new_array(&mut self, values: &[Value]) -> Result<Value, OutOfMemory> {
        self.allocating(|h| h.alloc_with(cls::ARRAY, values))
    }

    /// A new Double. Not published as an allocation: the interpreter's
    /// arithmetic boxes Doubles on its fast path, which must not test for a
    /// sampler.
    #[inline]
    pub fn new_double(&mut self, d: f64) -> Result<Value, OutOfMemory> {
        match Value::from_f64(d) {
            Some(v) => Ok(v),
            None => self.heap.alloc_words(cls::DOUBLE, &[d.to_bits()]),
        }
    }

    /// Instantiate class `c` with `extra` indexable slots (or bytes/words).
    pub fn instantiate(&mut self, c: u32, extra: usize) -> Result<Value, OutOfMemory> {
        if self.obs.sampler_attached() {
            return self.instantiate_published(c, extra);
        }
        self.instantiate_unpublished(c, extra)
    }

    /// [`Vm::instantiate`] while a sampler is attached: published as an
    /// allocation (out of line, so that the unobserved path is the same code
    /// as before, after one branch; written as a closure over [`Vm::allocating`]
    /// it cost Storage 0.7% more instructions).
    #[inline(never)]
    fn instantiate_published(&mut self, c: u32, extra: usize) -> Result<Value, OutOfMemory> {
        let saved = self.obs.push_allocation(self.procs.current);
        let r = self.instantiate_unpublished(c, extra);
        self.obs.pop_state(saved);
        r
    }

    #[inline(always)]
    fn instantiate_unpublished(&mut self, c: u32, extra: usize) -> Result<Value, OutOfMemory> {
        let info = &self.classes[c as usize];
        let named = info.fields.len();
        match info.shape {
            Shape::Fixed | Shape::Indexable => self.heap.alloc_pointers(c, named + extra),
            Shape::Weak => self.heap.alloc_weak(c, named + extra),
            Shape::Ephemeron => self.heap.alloc_ephemeron(c, named + extra),
            Shape::Bytes => self.heap.alloc_bytes(c, &vec![0u8; extra]),
            Shape::Words => self.heap.alloc_words(c, &vec![0u64; extra.max(1)]),
        }
    }

    /// Is `v` a String or Symbol? Answers its text (lossy for invalid UTF-8).
    pub fn string_of(&self, v: Value) -> Option<String> {
        if v.is_ptr() && self.classes[self.heap.class_index(v) as usize].shape == Shape::Bytes {
            Some(String::from_utf8_lossy(self.heap.bytes(v)).into_owned())
        } else {
            None
        }
    }

    /// The class index that a class object stands for, if `v` is a class object.
    pub fn class_index_of_object(&mut self, v: Value) -> Option<u32> {
        if !v.is_ptr() {
            return None;
        }
        let c = self.heap.class_index(v);
        let info = self.classes.get(c as usize)?;
        if info.is_meta || c == cls::METACLASS {
            let idx = self.heap.identity_hash(v);
            if (idx as usize) < self.classes.len() {
                Some(idx)
            } else {
                None
            }
        } else {
            None
        }
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

    /// Flush every inline and lookup cache (a method dictionary changed).
    pub fn bump_epoch(&mut self) {
        self.classes.bump_epoch();
    }

    /// Next value of the VM's seeded random generator (for `atRandom`).
    pub fn next_random(&mut self) -> u64 {
        let mut x = self.rng_state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng_state = x;
        x
    }
}
