//! The [`Vm`]: its parts and construction, running a program, and the value
//! helpers the interpreter and the primitives share (allocation published to a
//! sampler, class of a value, symbols as objects). The parts live in their own
//! modules: `image` (code and names), `sched` (processes), `obs` (observation),
//! `io` (streams and files), `interp` (the interpreter, which runs on the whole
//! `Vm`), `prims` (the primitives, likewise).
//!
//! - `config`: [`VmOptions`]; `error`: [`VmError`];
//! - `boot`: making a VM: its parts, the primitive table bound into the
//!   image, the kernel bootstrap and the main process;
//! - `collect`: the roots handed to the collector and the collection glue;
//! - `observing`: the observation API (samplers, site counts, line coverage,
//!   lifetimes, pretenuring), which changes `obs` and asks for a safepoint;
//! - `profiler_door`: the door through which Smalltalk starts and stops the
//!   profilers of the profiler layer (`System>>startProfiler:`).

mod boot;
mod collect;
mod config;
mod error;
mod observing;
pub(crate) mod profiler_door;
mod side_tables;
pub(crate) use side_tables::SIDE_TABLE_SHARE;

pub(crate) use crate::image::Lookup;
pub use config::{DEFAULT_CODE_ZONE_BYTES, DEFAULT_JIT_THRESHOLD, JitFactory, JitMode, VmOptions};
pub use error::VmError;

use crate::image::Image;
use crate::io::Io;
use crate::objects::{Shape, cls};
use crate::obs::Observation;
use crate::sched::Scheduler;
use lupa_heap::{Heap, OutOfMemory, Value};

/// One Lupa virtual machine: a set of parts that own their state.
///
/// | part | what it owns |
/// | --- | --- |
/// | `heap` | the object heap and its collector (lupa-heap) |
/// | `image` | classes, symbols, globals, methods, primitives, loaded sources ([`Image`]) |
/// | `sched` | the running process's stacks and frames, every other process, semaphores, delays ([`Scheduler`]) |
/// | `obs` | the observation points: counters, hooks, sampling, coverage, lifetimes, pretenuring ([`Observation`]) |
/// | `io` | the program's streams, open files, arguments and exit status ([`Io`]) |
/// | `limits` | the stack-depth limit and the stack budget |
/// | `profilers` | the profiler door of the Smalltalk side (`profiler_door.rs`) |
///
/// The interpreter and the primitives take the whole `&mut Vm`; everything
/// else takes the parts it needs.
pub struct Vm {
    /// The object heap.
    pub heap: Heap,
    /// Classes, symbols, globals, methods and the primitive table.
    pub image: Image,
    /// Processes and the running process's state.
    pub sched: Scheduler,
    /// Observation points (counters, hooks, sampling register).
    pub obs: Observation,
    /// The program's streams, files and arguments.
    pub io: Io,
    /// The stack-depth limit and the stack-overflow state.
    pub(crate) limits: crate::interp::RuntimeLimits,
    /// Options.
    pub(crate) options: VmOptions,
    /// Values held by Rust code across safepoints (roots).
    pub handles: Vec<Value>,
    pub(crate) rng_state: u64,
    /// The profiler door of the Smalltalk side (`profiler_door.rs`).
    pub(crate) profilers: profiler_door::ProfilerRegistry,
    /// The native tier: the installed JIT and its compile queue (`interp/native.rs`).
    pub(crate) native: crate::interp::native::NativeTier,
}

impl Vm {
    /// Run a program the SOM way: `system initialize: #('ClassName' 'arg'...)`.
    /// Answers the process exit code.
    pub fn run_main(&mut self, args: &[String]) -> Result<i32, VmError> {
        self.io.program_args = args.to_vec();
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.new_string(a)?);
        }
        let arr = self.new_array(&vals)?;
        let sys = self.image.system_object;
        let r = self.send_message(sys, "initialize:", &[arr]);
        let flushed = self.io.flush();
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
        Ok(self.image.class_object(c))
    }

    /// Load a class by name (from the class path, then the bundled library),
    /// with its superclasses; answers its index. Already loaded: its index.
    pub fn load_class_by_name(&mut self, name: &str) -> Result<u32, VmError> {
        self.image.load_class_by_name(&mut self.heap, name)
    }

    /// Define (or redefine) a class from source text `text` read from `path`,
    /// in package `category`; `expected` is the class name the file must define.
    pub fn load_class_source(
        &mut self,
        path: &str,
        text: &str,
        category: &str,
        expected: Option<&str>,
    ) -> Result<u32, VmError> {
        self.image
            .load_class_source(&mut self.heap, path, text, category, expected)
    }

    /// Total messages sent so far.
    pub fn send_count(&self) -> u64 {
        self.obs.sends
    }

    /// The id of a Symbol object (its identity hash minus one), checked
    /// against the symbol table: only the table's own object for that id is
    /// that Symbol.
    pub fn symbol_id(&mut self, v: Value) -> Option<u32> {
        if !v.is_ptr() || self.heap.class_index(v) != cls::SYMBOL {
            return None;
        }
        let id = self.heap.identity_hash(v).checked_sub(1)?;
        (self.image.symbols.objects.get(id as usize) == Some(&v)).then_some(id)
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

    /// Run the allocation `f` of an object of `elements` slots, bytes or
    /// words, publishing [`VmState::Allocation`] meanwhile while a sampler is
    /// attached and the object is large
    /// ([`PUBLISHED_ALLOCATION`](crate::obs::sampling::PUBLISHED_ALLOCATION)
    /// elements or more), then the state it interrupted (a primitive's, with
    /// its detail). Without a sampler it costs one predictable branch. The
    /// heap never collects inside an allocation (it raises `needs_gc` for the
    /// next safepoint), so no collection state is nested in it.
    ///
    /// [`VmState::Allocation`]: crate::obs::sampling::VmState::Allocation
    #[inline(always)]
    pub(crate) fn allocating<T>(
        &mut self,
        elements: usize,
        f: impl FnOnce(&mut lupa_heap::Heap) -> T,
    ) -> T {
        if self.obs.sampler_attached() && elements >= crate::obs::sampling::PUBLISHED_ALLOCATION {
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
        let saved = self.obs.push_allocation(self.sched.current);
        let r = f(&mut self.heap);
        self.obs.pop_state(saved);
        r
    }

    /// Run `f`, a blocking operating-system call of a primitive (a file's
    /// open, read, write or close), publishing [`VmState::Waiting`] meanwhile
    /// while a sampler is attached, then the primitive's state again.
    ///
    /// [`VmState::Waiting`]: crate::obs::sampling::VmState::Waiting
    pub(crate) fn blocking<T>(&mut self, f: impl FnOnce(&mut Vm) -> T) -> T {
        let saved = self.obs.push_state(
            crate::obs::sampling::VmState::Waiting,
            0,
            self.sched.current,
        );
        let r = f(self);
        self.obs.pop_state(saved);
        r
    }

    /// A new String.
    pub fn new_string(&mut self, s: &str) -> Result<Value, OutOfMemory> {
        self.allocating(s.len(), |h| h.alloc_bytes(cls::STRING, s.as_bytes()))
    }

    /// A new byte object of class `c` holding `bytes`.
    pub(crate) fn new_bytes(&mut self, c: u32, bytes: &[u8]) -> Result<Value, OutOfMemory> {
        self.allocating(bytes.len(), |h| h.alloc_bytes(c, bytes))
    }

    /// A new word object of class `c` holding `words`.
    pub(crate) fn new_words(&mut self, c: u32, words: &[u64]) -> Result<Value, OutOfMemory> {
        self.allocating(words.len(), |h| h.alloc_words(c, words))
    }

    /// A new Array of the given values.
    pub fn new_array(&mut self, values: &[Value]) -> Result<Value, OutOfMemory> {
        self.allocating(values.len(), |h| h.alloc_with(cls::ARRAY, values))
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
    /// Published as an allocation to an attached sampler when large (as
    /// `Vm::allocating` does).
    pub fn instantiate(&mut self, c: u32, extra: usize) -> Result<Value, OutOfMemory> {
        if self.obs.sampler_attached() && extra >= crate::obs::sampling::PUBLISHED_ALLOCATION {
            return self.instantiate_published(c, extra);
        }
        self.image.instantiate(&mut self.heap, c, extra)
    }

    /// [`Vm::instantiate`] while a sampler is attached: published as an
    /// allocation (out of line, so that the unobserved path is the same code
    /// as before, after one branch; written as a closure over [`Vm::allocating`]
    /// it cost Storage 0.7% more instructions).
    #[inline(never)]
    fn instantiate_published(&mut self, c: u32, extra: usize) -> Result<Value, OutOfMemory> {
        let saved = self.obs.push_allocation(self.sched.current);
        let r = self.image.instantiate(&mut self.heap, c, extra);
        self.obs.pop_state(saved);
        r
    }

    /// Is `v` a String or Symbol? Answers its text (lossy for invalid UTF-8).
    pub fn string_of(&self, v: Value) -> Option<String> {
        if v.is_ptr() && self.image.classes[self.heap.class_index(v) as usize].shape == Shape::Bytes
        {
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
        let info = self.image.classes.get(c as usize)?;
        if info.is_meta || c == cls::METACLASS {
            // The class table's own object for that index: an instance of a
            // metaclass made by `new` is no class.
            let idx = self.heap.identity_hash(v);
            let known = self.image.classes.get(idx as usize)?;
            (known.object == v).then_some(idx)
        } else {
            None
        }
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
