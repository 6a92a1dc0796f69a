//! The VM: heap, class table, symbols, globals, method table, class loading.

use crate::class_table::ClassTable;
pub use crate::class_table::Lookup;
use crate::interp::ProcessState;
use crate::objects::{InlineCache, MethodCode, Shape, Symbols, cls};
use crate::observe::Observation;
use lupa_compiler::{CodeKind, CompiledCode, Const};
use lupa_heap::{Heap, HeapConfig, OutOfMemory, Value};
use lupa_syntax::{ClassDef, SourceFile};
use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

/// Options of one VM instance.
#[derive(Debug, Clone)]
pub struct VmOptions {
    /// User class path, searched before the bundled library.
    pub class_path: Vec<PathBuf>,
    /// Search the bundled library after the class path.
    pub use_bundled: bool,
    /// Heap configuration.
    pub heap: HeapConfig,
    /// Maximum number of frames per process before a stack-overflow error.
    pub max_frames: usize,
    /// Verify the heap after every collection (`--verify-heap`; on by default in
    /// debug builds, so that every test run checks the heap).
    pub verify_heap: bool,
    /// Discard the program's standard output (for calibration runs).
    pub quiet: bool,
}

impl Default for VmOptions {
    fn default() -> Self {
        VmOptions {
            class_path: Vec::new(),
            use_bundled: true,
            heap: HeapConfig::default(),
            max_frames: 200_000,
            verify_heap: cfg!(debug_assertions),
            quiet: false,
        }
    }
}

/// Errors that end a run.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// A source file failed to parse or compile (already rendered with location).
    #[error("{0}")]
    Compile(String),
    /// A class could not be found on the class path.
    #[error("{0}")]
    ClassNotFound(String),
    /// The program exited via `system exit: code`.
    #[error("exit {0}")]
    Exit(i32),
    /// A fatal runtime problem (already described, with a backtrace when known).
    #[error("{0}")]
    Fatal(String),
    /// I/O problem reading a source file.
    #[error("{0}")]
    Io(String),
}

impl From<OutOfMemory> for VmError {
    fn from(e: OutOfMemory) -> Self {
        VmError::Fatal(format!("{e}"))
    }
}

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
    pub(crate) out: std::io::BufWriter<std::io::Stdout>,
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
    captured: Option<String>,
    pub(crate) sym_cache: crate::interp::WellKnownSymbols,
}

include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

impl Vm {
    /// A VM with the kernel loaded, ready to run programs.
    pub fn new(options: VmOptions) -> Result<Vm, VmError> {
        let heap = Heap::new(options.heap.clone());
        let limits = crate::interp::RuntimeLimits::new(options.max_frames);
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
            out: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout()),
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
            captured: None,
            sym_cache: Default::default(),
        };
        crate::prims::register_all(&mut vm);
        vm.bootstrap()?;
        Ok(vm)
    }

    // ----- symbols -----

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

    // ----- values -----

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

    /// A new String.
    pub fn new_string(&mut self, s: &str) -> Result<Value, OutOfMemory> {
        self.heap.alloc_bytes(cls::STRING, s.as_bytes())
    }

    /// A new Array of the given values.
    pub fn new_array(&mut self, values: &[Value]) -> Result<Value, OutOfMemory> {
        self.heap.alloc_with(cls::ARRAY, values)
    }

    /// A new Double.
    #[inline]
    pub fn new_double(&mut self, d: f64) -> Result<Value, OutOfMemory> {
        match Value::from_f64(d) {
            Some(v) => Ok(v),
            None => self.heap.alloc_words(cls::DOUBLE, &[d.to_bits()]),
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

    // ----- class table -----

    /// Create a class and its metaclass (placeholders, not yet defined), answering the class index.
    fn create_class_pair(&mut self, name: &str) -> Result<u32, OutOfMemory> {
        let c = self.classes.add(name, false);
        let m = self.classes.add(&format!("{name} class"), true);
        self.classes[c as usize].partner = m;
        self.classes[m as usize].partner = c;
        let cobj = self.alloc_class_objects(c)?;
        self.set_global(name, cobj);
        Ok(c)
    }

    /// Allocate the heap objects of class `c` and its metaclass: the class object is
    /// an instance of the metaclass, the metaclass object an instance of Metaclass;
    /// each carries its class index as identity hash. Answers the class object.
    fn alloc_class_objects(&mut self, c: u32) -> Result<Value, OutOfMemory> {
        let m = self.classes[c as usize].partner;
        let cobj = self.heap.alloc_pointers(m, 0)?;
        self.heap.set_identity_hash(cobj, c);
        let mobj = self.heap.alloc_pointers(cls::METACLASS, 0)?;
        self.heap.set_identity_hash(mobj, m);
        self.classes[c as usize].object = cobj;
        self.classes[m as usize].object = mobj;
        Ok(cobj)
    }

    fn bootstrap(&mut self) -> Result<(), VmError> {
        // Fixed indices for the well-known classes; metaclasses come after them.
        for name in &cls::NAMES[1..] {
            self.classes.add(name, false);
        }
        for c in 1..cls::COUNT {
            let name = format!("{} class", self.classes[c as usize].name);
            let m = self.classes.add(&name, true);
            self.classes[c as usize].partner = m;
            self.classes[m as usize].partner = c;
        }
        for c in 1..cls::COUNT {
            let cobj = self.alloc_class_objects(c)?;
            let name = self.classes[c as usize].name.clone();
            if c != cls::ENV {
                self.set_global(&name, cobj);
            }
        }
        // Shapes of the kernel classes.
        for (c, shape) in [
            (cls::ARRAY, Shape::Indexable),
            (cls::STRING, Shape::Bytes),
            (cls::SYMBOL, Shape::Bytes),
            (cls::DOUBLE, Shape::Words),
            (cls::INTEGER, Shape::Words),
            (cls::WEAK_ARRAY, Shape::Weak),
            (cls::EPHEMERON, Shape::Ephemeron),
            (cls::ENV, Shape::Indexable),
        ] {
            self.classes[c as usize].shape = shape;
        }
        self.sym_cache = crate::interp::WellKnownSymbols::new(self);
        // Load the kernel in dependency order (superclasses load themselves first).
        for c in 1..cls::COUNT {
            if c == cls::ENV {
                self.classes[c as usize].superclass = Some(cls::OBJECT);
                let m = self.classes[c as usize].partner;
                self.classes[m as usize].superclass =
                    Some(self.classes[cls::OBJECT as usize].partner);
                self.classes[c as usize].loaded = true;
                continue;
            }
            let name = self.classes[c as usize].name.to_string();
            if !self.classes[c as usize].loaded {
                match self.load_class_by_name(&name) {
                    Ok(_) => {}
                    Err(VmError::ClassNotFound(_)) if c > cls::SYSTEM || c == cls::BLOCK4 => {
                        // Optional kernel classes (processes, weak arrays, ephemerons, Context, Block4) may be
                        // absent from a user's core-lib: give them a minimal definition.
                        self.define_synthetic(c)?;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        if self.classes[cls::BLOCK4 as usize].superclass.is_none() {
            self.define_synthetic(cls::BLOCK4)?;
        }
        // The system object.
        let sys = self.instantiate(cls::SYSTEM, 0)?;
        self.system_object = sys;
        self.set_global("system", sys);
        let sched = self.instantiate(cls::SCHEDULER, 0)?;
        self.processor_object = sched;
        self.set_global("Processor", sched);
        crate::process::Scheduler::init_main(self)?;
        Ok(())
    }

    fn define_synthetic(&mut self, c: u32) -> Result<(), VmError> {
        let sup = match c {
            cls::BLOCK4 => cls::BLOCK,
            _ => cls::OBJECT,
        };
        if !self.classes[sup as usize].loaded {
            let name = self.classes[sup as usize].name.to_string();
            self.load_class_by_name(&name)?;
        }
        self.classes.set_superclass(c, Some(sup));
        self.classes[c as usize].fields = self.classes[sup as usize].fields.clone();
        self.classes[c as usize].loaded = true;
        let m = self.classes[c as usize].partner;
        self.classes[m as usize].loaded = true;
        // Primitive-only synthetic methods for the classes the VM relies on.
        let prims: &[(&str, &str)] = match c {
            cls::BLOCK4 => &[("value:with:with:", "value: a with: b with: c = primitive")],
            _ => &[],
        };
        for (_, src) in prims {
            self.compile_and_install(c, src, "<synthetic>")?;
        }
        Ok(())
    }

    /// Instantiate class `c` with `extra` indexable slots (or bytes/words).
    pub fn instantiate(&mut self, c: u32, extra: usize) -> Result<Value, OutOfMemory> {
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

    // ----- class loading -----

    /// Find the source of class `name`: the class path first, then the bundled library.
    fn find_class_source(&self, name: &str) -> Option<(String, String, String)> {
        let file = format!("{name}.som");
        for dir in &self.options.class_path {
            let p = dir.join(&file);
            if let Ok(text) = std::fs::read_to_string(&p) {
                let cat = dir
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Some((p.display().to_string(), text, cat));
            }
        }
        if self.options.use_bundled {
            for (path, text) in BUNDLED {
                let base = path.rsplit('/').next().unwrap_or(path);
                if base == file {
                    let cat = path
                        .rsplit_once('/')
                        .map(|(d, _)| d.to_string())
                        .unwrap_or_default();
                    return Some((format!("<lupa>/{path}"), (*text).to_string(), cat));
                }
            }
        }
        None
    }

    /// Names of every class the class path and bundled library offer (for `lupa test`).
    pub fn available_class_names(&self, bundled_prefix: Option<&str>) -> Vec<String> {
        let mut names = Vec::new();
        for dir in &self.options.class_path {
            if let Ok(rd) = std::fs::read_dir(dir) {
                for e in rd.flatten() {
                    let p = e.path();
                    if p.extension().is_some_and(|x| x == "som")
                        && let Some(s) = p.file_stem()
                    {
                        names.push(s.to_string_lossy().into_owned());
                    }
                }
            }
        }
        if let Some(prefix) = bundled_prefix {
            for (path, _) in BUNDLED {
                if path.starts_with(prefix) {
                    let base = path.rsplit('/').next().unwrap_or(path);
                    names.push(base.trim_end_matches(".som").to_string());
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// Load (if needed) and answer the class index of `name`.
    pub fn load_class_by_name(&mut self, name: &str) -> Result<u32, VmError> {
        if let Some(c) = self.classes.index_of(name)
            && self.classes[c as usize].loaded
        {
            return Ok(c);
        }
        if self.loading.iter().any(|n| n == name) {
            return Err(VmError::Compile(format!(
                "class {name} inherits from itself (cycle: {})",
                self.loading.join(" -> ")
            )));
        }
        let Some((path, text, category)) = self.find_class_source(name) else {
            let path = self
                .options
                .class_path
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(":");
            let wherein = match (path.is_empty(), self.options.use_bundled) {
                (true, true) => "in Lupa's class library (no class path given)".to_string(),
                (true, false) => {
                    "anywhere: no class path given and the bundled library is off".to_string()
                }
                (false, true) => format!("on the class path ({path}) nor in Lupa's class library"),
                (false, false) => format!("on the class path ({path})"),
            };
            return Err(VmError::ClassNotFound(format!(
                "cannot find class {name}: no {name}.som {wherein}"
            )));
        };
        self.loading.push(name.to_string());
        let r = self.load_class_source(&path, &text, &category, Some(name));
        self.loading.pop();
        r
    }

    /// Parse, compile and install a class from source. `expected` is the name the
    /// file must define (its file name).
    pub fn load_class_source(
        &mut self,
        path: &str,
        text: &str,
        category: &str,
        expected: Option<&str>,
    ) -> Result<u32, VmError> {
        let src = Rc::new(SourceFile::new(path, text));
        let def = lupa_syntax::parse_class(text).map_err(|d| VmError::Compile(d.render(&src)))?;
        if let Some(exp) = expected
            && def.name.name != exp
        {
            return Err(VmError::Compile(format!(
                "{path}: the file defines class {} but was expected to define {exp}",
                def.name.name
            )));
        }
        self.sources.insert(Rc::from(path), src.clone());
        self.define_class(&def, &src, category)
    }

    fn define_class(
        &mut self,
        def: &ClassDef,
        src: &Rc<SourceFile>,
        category: &str,
    ) -> Result<u32, VmError> {
        let name = def.name.name.as_str();
        let sup = match &def.superclass {
            None => Some(cls::OBJECT),
            Some(id) if id.name == "nil" => None,
            Some(id) => {
                let s = self.load_class_by_name(&id.name).map_err(|e| match e {
                    VmError::ClassNotFound(m) => {
                        let (l, c) = src.line_col(id.span.start);
                        VmError::ClassNotFound(format!(
                            "{}:{l}:{c}: superclass of {name}: {m}",
                            src.name
                        ))
                    }
                    other => other,
                })?;
                Some(s)
            }
        };
        let c = match self.classes.index_of(name) {
            Some(c) => c,
            None => self.create_class_pair(name)?,
        };
        if name == "Object" && sup.is_some() {
            // Object must be the root.
        }
        self.classes.set_superclass(c, sup);
        let m = self.classes[c as usize].partner;
        // Fields.
        let mut fields: Vec<Rc<str>> = sup
            .map(|s| self.classes[s as usize].fields.clone())
            .unwrap_or_default();
        for f in &def.instance_fields {
            if fields.iter().any(|g| **g == *f.name) {
                let (l, c) = src.line_col(f.span.start);
                return Err(VmError::Compile(format!(
                    "{}:{l}:{c}: error: field '{}' of {name} is already defined in a superclass",
                    src.name, f.name
                )));
            }
        }
        fields.extend(
            def.instance_fields
                .iter()
                .map(|f| Rc::from(f.name.as_str())),
        );
        let msup = self.classes[m as usize].superclass.unwrap_or(cls::CLASS);
        let mut mfields: Vec<Rc<str>> = if msup == m {
            Vec::new()
        } else {
            self.classes[msup as usize].fields.clone()
        };
        mfields.extend(def.class_fields.iter().map(|f| Rc::from(f.name.as_str())));
        // Shape is inherited unless the class is a kernel class with a fixed shape.
        if c >= cls::COUNT
            && let Some(s) = sup
        {
            self.classes[c as usize].shape = self.classes[s as usize].shape;
        }
        self.classes[c as usize].fields = fields;
        self.classes[c as usize].source = Rc::from(src.name.as_str());
        self.classes[c as usize].category = Rc::from(category);
        self.classes[m as usize].source = Rc::from(src.name.as_str());
        self.classes[m as usize].category = Rc::from(category);
        let old_class_fields = self.classes[m as usize].fields.len();
        self.classes[m as usize].fields = mfields;
        // The class object must have room for its class-side fields.
        let need = self.classes[m as usize].fields.len();
        if need != old_class_fields || self.heap.size(self.classes[c as usize].object) != need {
            let old = self.classes[c as usize].object;
            let new = self.heap.alloc_pointers(m, need)?;
            let keep = self.heap.size(old).min(need);
            for i in 0..keep {
                let v = self.heap.slot(old, i);
                self.heap.set_slot(new, i, v);
            }
            self.heap.set_identity_hash(new, c);
            self.classes[c as usize].object = new;
            self.set_global(name, new);
        }
        // Methods.
        self.classes[c as usize].methods.clear();
        self.classes[c as usize].method_order.clear();
        self.classes[m as usize].methods.clear();
        self.classes[m as usize].method_order.clear();
        for md in &def.instance_methods {
            self.compile_def_and_install(c, md, src)?;
        }
        for md in &def.class_methods {
            self.compile_def_and_install(m, md, src)?;
        }
        self.classes[c as usize].loaded = true;
        self.classes[m as usize].loaded = true;
        self.bump_epoch();
        Ok(c)
    }

    fn compile_def_and_install(
        &mut self,
        c: u32,
        md: &lupa_syntax::MethodDef,
        src: &Rc<SourceFile>,
    ) -> Result<u32, VmError> {
        let fields: Vec<String> = self.classes[c as usize]
            .fields
            .iter()
            .map(|f| f.to_string())
            .collect();
        let cc = lupa_compiler::compile_method(md, &fields, src)
            .map_err(|d| VmError::Compile(d.render(src)))?;
        if cfg!(debug_assertions)
            && let Err(e) = lupa_compiler::verify(&cc)
        {
            return Err(VmError::Compile(format!(
                "{}: internal error: the compiled code of {} fails verification: {e}",
                src.name, md.selector
            )));
        }
        let id = self.install_code(c, &cc, &src.name)?;
        self.methods[id as usize]
            .source_range
            .set((md.span.start, md.span.end));
        self.sources
            .entry(Rc::from(src.name.as_str()))
            .or_insert_with(|| src.clone());
        Ok(id)
    }

    /// Compile method source in class `c` and install it; answers the method id.
    pub fn compile_and_install(
        &mut self,
        c: u32,
        source: &str,
        file: &str,
    ) -> Result<u32, VmError> {
        let src = Rc::new(SourceFile::new(file, source));
        let md = lupa_syntax::parse_method(source).map_err(|d| VmError::Compile(d.render(&src)))?;
        self.compile_def_and_install(c, &md, &src)
    }

    /// Turn compiled code into runtime code (recursively for blocks) and register it.
    pub(crate) fn make_code(
        &mut self,
        holder: u32,
        cc: &CompiledCode,
        file: &Rc<str>,
    ) -> Result<Rc<MethodCode>, OutOfMemory> {
        let blocks = cc
            .blocks
            .iter()
            .map(|b| self.make_code(holder, b, file))
            .collect::<Result<Vec<_>, _>>()?;
        let mut lits = Vec::with_capacity(cc.literals.len());
        let mut sel_ids = Vec::with_capacity(cc.literals.len());
        for l in &cc.literals {
            lits.push(Cell::new(self.const_value(l)?));
            sel_ids.push(Cell::new(match l {
                Const::Symbol(s) => self.intern(s),
                _ => u32::MAX,
            }));
        }
        let selector = self.intern(&cc.selector);
        let id = self.methods.len() as u32;
        let class_name = self.classes[holder as usize].name.to_string();
        let mut primitive = None;
        if cc.is_primitive || cc.pragmas.iter().any(|(p, _)| p == "primitive") {
            primitive = self.find_primitive(&class_name, &cc.selector);
        }
        let special = cc.pragmas.iter().any(|(p, _)| {
            matches!(
                p.as_str(),
                "metaLevel" | "unwindProtect" | "exceptionHandler" | "trapShortcut"
            )
        });
        let trivial =
            if primitive.is_none() && cc.kind == CodeKind::Method && !cc.is_primitive && !special {
                crate::objects::Trivial::of(
                    &cc.code,
                    cc.num_args as usize,
                    cc.num_temps as usize,
                    cc.env_size > 0 || cc.needs_env,
                )
            } else {
                None
            };
        let code = Rc::new(MethodCode {
            trivial,
            id,
            kind: cc.kind,
            selector,
            selector_name: Rc::from(cc.selector.as_str()),
            holder: Cell::new(holder),
            num_args: cc.num_args as usize,
            num_temps: cc.num_temps as usize,
            env_size: cc.env_size as usize,
            needs_env: cc.needs_env,
            home_env: cc.kind == CodeKind::Method && (cc.env_size > 0 || cc.needs_env),
            max_stack: cc.max_stack as usize,
            ops: cc.code.clone().into_boxed_slice(),
            literals: lits.into_boxed_slice(),
            sel_ids: sel_ids.into_boxed_slice(),
            caches: (0..cc.num_send_sites)
                .map(|_| Cell::new(InlineCache::default()))
                .collect(),
            blocks: blocks.into_boxed_slice(),
            primitive: Cell::new(primitive),
            primitive_only: cc.is_primitive,
            unwind_protect: cc.pragmas.iter().any(|(p, _)| p == "unwindProtect"),
            exception_handler: cc.pragmas.iter().any(|(p, _)| p == "exceptionHandler"),
            trap_shortcut: cc.pragmas.iter().any(|(p, _)| p == "trapShortcut"),
            meta_level: cc.pragmas.iter().any(|(p, _)| p == "metaLevel"),
            pragmas: cc.pragmas.clone(),
            lines: cc.lines.clone(),
            first_line: cc.first_line,
            file: file.clone(),
            source_range: Cell::new((0, 0)),
            object: Cell::new(Value::NIL),
            home: Cell::new(id),
            local_names: cc.local_names.clone(),
        });
        for b in code.blocks.iter() {
            set_home(b, id);
        }
        self.methods.push(code.clone());
        Ok(code)
    }

    /// A copy of method `m` (fresh literal frame and inline caches) for class `holder`
    /// under `selector`, with its own Method object. Not installed anywhere.
    pub fn copy_method(
        &mut self,
        m: &MethodCode,
        holder: u32,
        selector: u32,
    ) -> Result<Rc<MethodCode>, OutOfMemory> {
        let id = self.methods.len() as u32;
        let selector_name: Rc<str> = Rc::from(self.symbols.name(selector));
        let code = Rc::new(MethodCode {
            id,
            kind: m.kind,
            selector,
            selector_name,
            holder: Cell::new(holder),
            num_args: m.num_args,
            num_temps: m.num_temps,
            env_size: m.env_size,
            needs_env: m.needs_env,
            home_env: m.home_env,
            max_stack: m.max_stack,
            ops: m.ops.clone(),
            literals: m.literals.iter().map(|c| Cell::new(c.get())).collect(),
            sel_ids: m.sel_ids.iter().map(|c| Cell::new(c.get())).collect(),
            caches: m
                .caches
                .iter()
                .map(|_| Cell::new(InlineCache::default()))
                .collect(),
            blocks: m.blocks.clone(),
            trivial: m.trivial,
            primitive: Cell::new(m.primitive.get()),
            primitive_only: m.primitive_only,
            unwind_protect: m.unwind_protect,
            exception_handler: m.exception_handler,
            meta_level: m.meta_level,
            trap_shortcut: m.trap_shortcut,
            pragmas: m.pragmas.clone(),
            lines: m.lines.clone(),
            first_line: m.first_line,
            file: m.file.clone(),
            source_range: Cell::new(m.source_range.get()),
            object: Cell::new(Value::NIL),
            home: Cell::new(id),
            local_names: m.local_names.clone(),
        });
        let mclass = if code.primitive_only {
            cls::PRIMITIVE
        } else {
            cls::METHOD
        };
        let obj = self.heap.alloc_pointers(mclass, 0)?;
        self.heap.set_identity_hash(obj, id + 1);
        code.object.set(obj);
        self.methods.push(code.clone());
        Ok(code)
    }

    /// Install compiled code as method of class `c`; answers its id.
    pub fn install_code(
        &mut self,
        c: u32,
        cc: &CompiledCode,
        file: &str,
    ) -> Result<u32, OutOfMemory> {
        let file: Rc<str> = Rc::from(file);
        let code = self.make_code(c, cc, &file)?;
        debug_assert_eq!(code.kind, CodeKind::Method);
        let mclass = if code.primitive_only {
            cls::PRIMITIVE
        } else {
            cls::METHOD
        };
        let obj = self.heap.alloc_pointers(mclass, 0)?;
        self.heap.set_identity_hash(obj, code.id + 1);
        code.object.set(obj);
        let sel = code.selector;
        self.put_method(c, sel, obj);
        Ok(code.id)
    }

    /// Put any object into class `c`'s method dictionary under `sel`.
    pub fn put_method(&mut self, c: u32, sel: u32, obj: Value) {
        self.classes.put_method(c, sel, obj);
    }

    /// Remove a selector from class `c`; answers what was there.
    pub fn remove_method(&mut self, c: u32, sel: u32) -> Option<Value> {
        self.classes.remove_method(c, sel)
    }

    /// If `v` is a Method/Primitive object, its code.
    pub fn method_code_of(&mut self, v: Value) -> Option<Rc<MethodCode>> {
        let id = method_id_of(&mut self.heap, &self.methods, v)?;
        Some(self.methods[id as usize].clone())
    }

    fn const_value(&mut self, c: &Const) -> Result<Value, OutOfMemory> {
        Ok(match c {
            Const::Nil => Value::NIL,
            Const::True => Value::TRUE,
            Const::False => Value::FALSE,
            Const::Int(i) => match Value::from_i64(*i) {
                Some(v) => v,
                None => crate::prims::integer::big_to_value(self, &num_bigint::BigInt::from(*i))?,
            },
            Const::BigInt(b) => crate::prims::integer::big_to_value(self, b)?,
            Const::Double(d) => self.new_double(*d)?,
            Const::String(s) => self.new_string(s)?,
            Const::Symbol(s) => self.symbol(s)?,
            Const::Array(items) => {
                let mut vals = Vec::with_capacity(items.len());
                for i in items {
                    vals.push(self.const_value(i)?);
                }
                self.new_array(&vals)?
            }
        })
    }

    // ----- lookup -----

    /// Find what `sel` means for instances of class `c`: a method id, or an object to
    /// `run:with:in:`, or nothing.
    pub fn lookup(&mut self, c: u32, sel: u32) -> Lookup {
        let (heap, methods) = (&mut self.heap, &self.methods);
        self.classes
            .lookup(c, sel, |obj| method_id_of(heap, methods, obj))
    }

    // ----- output -----

    /// Write to standard output (buffered).
    pub fn print(&mut self, s: &str) {
        if let Some(buf) = self.captured.as_mut() {
            buf.push_str(s);
        } else if !self.options.quiet {
            let _ = self.out.write_all(s.as_bytes());
        }
    }

    /// Capture the program's standard output in memory from now on.
    pub fn capture_output(&mut self) {
        self.captured = Some(String::new());
    }

    /// Take what was captured so far.
    pub fn take_captured(&mut self) -> String {
        self.captured
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Flush standard output.
    pub fn flush(&mut self) {
        let _ = self.out.flush();
    }

    /// The source text of a method's definition, if known.
    pub fn method_source(&self, code: &MethodCode) -> Option<String> {
        let (start, end) = code.source_range.get();
        if end <= start {
            return None;
        }
        let src = self.sources.get(&*code.file)?;
        src.text
            .get(start as usize..end as usize)
            .map(str::to_string)
    }

    /// The source file registered under a name (for diagnostics).
    pub fn source(&self, name: &str) -> Option<Rc<SourceFile>> {
        self.sources.get(name).cloned()
    }

    // ----- garbage collection -----

    /// Collect now, updating every root.
    pub fn collect_garbage(&mut self) {
        let t0 = std::time::Instant::now();
        let mut c = self.heap.start_collection();
        let mut root = |v: &mut Value| c.root(v);
        self.running.visit_roots(&mut root);
        for p in self.procs.all_mut() {
            p.visit_roots(&mut root);
        }
        for v in self.globals.values_mut() {
            c.root(v);
        }
        for v in self.symbols.objects.iter_mut() {
            c.root(v);
        }
        for info in self.classes.iter_mut() {
            c.root(&mut info.object);
            for v in info.methods.values_mut() {
                c.root(v);
            }
        }
        for m in self.methods.iter() {
            for l in m.literals.iter() {
                let mut v = l.get();
                c.root(&mut v);
                l.set(v);
            }
            let mut o = m.object.get();
            c.root(&mut o);
            m.object.set(o);
        }
        for v in self.handles.iter_mut() {
            c.root(v);
        }
        c.root(&mut self.system_object);
        c.root(&mut self.processor_object);
        c.root(&mut self.finalization_semaphore);
        c.finish();
        let elapsed = t0.elapsed();
        self.obs.gc_time_ns += elapsed.as_nanos() as u64;
        if self.obs.gc_hooks_on() {
            let kind = self
                .heap
                .last_collection()
                .unwrap_or(lupa_heap::CollectionKind::Scavenge);
            let deaths = self.heap.take_deaths();
            let ev = crate::observe::GcEvent {
                kind,
                duration: elapsed,
                number: self.heap.stats().collections,
                deaths: &deaths,
            };
            self.obs.collection(&ev);
        }
        if self.heap.mourn_queue_len() > 0 && !self.finalization_semaphore.is_nil() {
            self.finalization_due = true;
        }
        if self.options.verify_heap
            && let Err(e) = self.heap.verify(self.classes.len() as u32)
        {
            eprintln!("lupa: heap verification failed after GC: {e}");
            std::process::exit(70);
        }
    }
}

fn set_home(b: &Rc<MethodCode>, id: u32) {
    b.home.set(id);
    for inner in b.blocks.iter() {
        set_home(inner, id);
    }
}

/// The id of method object `v` (a Method or Primitive instance registered in
/// `methods`), or `None` for any other value.
pub(crate) fn method_id_of(heap: &mut Heap, methods: &[Rc<MethodCode>], v: Value) -> Option<u32> {
    if !v.is_ptr() {
        return None;
    }
    let c = heap.class_index(v);
    if c != cls::METHOD && c != cls::PRIMITIVE {
        return None;
    }
    let id = heap.identity_hash(v).checked_sub(1)?;
    let code = methods.get(id as usize)?;
    (code.object.get() == v).then_some(id)
}
