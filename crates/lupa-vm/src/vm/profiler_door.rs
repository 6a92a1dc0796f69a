//! The Smalltalk side's door to Lupa's profilers.
//!
//! The profilers live in the profiler layer (`crates/lupa-profilers`), which depends
//! on the VM; the VM cannot depend on them. So the embedder installs one
//! [`ProfilerFactory`] ([`Vm::set_profiler_factory`]; `lupa_profilers::install` does
//! it, and the `lupa` binary calls that on every VM it creates), and the primitives
//! `System>>startProfiler:` and `System>>stopProfiler` go through it:
//!
//! ```text
//! system startProfiler: #compteur.   "the factory starts the profiler of that name"
//! ... work ...
//! system stopProfiler                "answers its report, a String"
//! ```
//!
//! `System>>stopProfilerData` stops it too, answering the report as data
//! ([`ProfilerReport::to_smalltalk`]), the method-level call graph included
//! ([`CallGraph`], which Spy's time and call graph reads). `Compteur
//! class>>profile:` and `VMProfiler class>>spyOn:` wrap them around a block with
//! `ensure:`.
//!
//! Contract: at most one profiler runs at a time, and only while no other observer
//! owns the activation hooks (a program run under `lupa count` cannot start one:
//! the primitive fails with an error saying so). A profiler still running when the
//! VM is dropped is simply dropped with it.

use crate::vm::Vm;
use lupa_heap::{OutOfMemory, Value};

/// A SmallInteger (values past 2^61 are clamped: no profile total gets there).
fn small(v: u64) -> Value {
    Value::small(v.min(1 << 61) as i64)
}

/// A profiler started from Smalltalk; it owns whatever observation it installed.
pub trait ProfilerSession {
    /// Stop observing (remove the hooks it installed) and answer the report.
    fn stop(self: Box<Self>, vm: &mut Vm) -> ProfilerReport;
}

/// What a profiler started from Smalltalk answers when it stops.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfilerReport {
    /// The text report (its ranking).
    pub text: String,
    /// The MessageTally-style tree report.
    pub tree: String,
    /// The grand total, in the profile's unit (sends, samples...).
    pub total: u64,
    /// The part of the total spent in the garbage collector (0 when the
    /// profiler does not see the collector).
    pub gc: u64,
    /// Per method: its display name (`Class>>selector`), self and total values.
    pub methods: Vec<(String, u64, u64)>,
    /// The call graph at method level (Spy's time and call graph).
    pub graph: CallGraph,
}

/// The call graph of a profiled run at method level (Spy's time and call
/// graph, section 3.5 of the Spy paper): a block's activations and values are
/// its own ([`CallGraph::blocks`], each inside its home method), not its home
/// method's; the calls its code makes are its home method's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallGraph {
    /// The methods that ran, `Class>>selector` (`Foo class>>bar` on the class side).
    pub methods: Vec<GraphMethod>,
    /// Calls: caller and callee (indices into `methods`) and how many
    /// activations of the callee the caller's code (its blocks included) made.
    pub edges: Vec<(usize, usize, u64)>,
    /// The blocks that ran, each with its home method.
    pub blocks: Vec<GraphBlock>,
}

/// One method of a [`CallGraph`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphMethod {
    /// `Class>>selector`.
    pub name: String,
    /// Its activations (its blocks' not counted).
    pub calls: u64,
    /// Its own value (sends, samples...), its blocks' left out.
    pub own: u64,
    /// Its inclusive value: while one of its activations was on the stack
    /// (recursion counted once), blocks that ran inside it included, those
    /// that ran after it returned not.
    pub total: u64,
}

/// One block of a [`CallGraph`]: its value is its own, not its home method's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphBlock {
    /// Its name as the profile gives it (`[]#2 in Foo>>bar`).
    pub name: String,
    /// Its home method (an index into [`CallGraph::methods`]).
    pub home: usize,
    /// Its activations.
    pub calls: u64,
    /// Its own value (sends, samples...): its code's.
    pub own: u64,
    /// Its inclusive value: while one of its activations was on the stack
    /// (its recursion counted once).
    pub total: u64,
}

impl ProfilerReport {
    /// As Smalltalk data: `{ text. tree. total. gc. methods. graph }`, methods an
    /// Array of `{ name. self. total }`, graph `{ graphMethods. calls. blocks }`
    /// with graphMethods `{ name. calls. self. total }`, calls `{ caller.
    /// callee. count }` and blocks `{ name. home. calls. self. total }`
    /// (1-based indices into graphMethods): what
    /// `System>>stopProfilerData` answers.
    pub fn to_smalltalk(&self, vm: &mut Vm) -> Result<Value, OutOfMemory> {
        let mut methods = Vec::with_capacity(self.methods.len());
        for (name, own, total) in &self.methods {
            let name = vm.new_string(name)?;
            let triple = vm.new_array(&[name, small(*own), small(*total)])?;
            methods.push(triple);
        }
        let methods = vm.new_array(&methods)?;
        let graph = self.graph.to_smalltalk(vm)?;
        let text = vm.new_string(&self.text)?;
        let tree = vm.new_string(&self.tree)?;
        vm.new_array(&[
            text,
            tree,
            small(self.total),
            small(self.gc),
            methods,
            graph,
        ])
    }
}

impl CallGraph {
    /// As Smalltalk data: `{ methods. calls. blocks }` (see
    /// [`ProfilerReport::to_smalltalk`]; blocks `{ name. home. calls. self.
    /// total }`, home a 1-based index into methods).
    /// Allocation does not collect (the collector runs at the next safepoint),
    /// so the values built here stay valid while it builds the rest.
    pub fn to_smalltalk(&self, vm: &mut Vm) -> Result<Value, OutOfMemory> {
        let mut rows = Vec::with_capacity(self.methods.len());
        for m in &self.methods {
            let name = vm.new_string(&m.name)?;
            rows.push(vm.new_array(&[name, small(m.calls), small(m.own), small(m.total)])?);
        }
        let methods = vm.new_array(&rows)?;
        let mut calls = Vec::with_capacity(self.edges.len());
        for &(from, to, n) in &self.edges {
            calls.push(vm.new_array(&[small(from as u64 + 1), small(to as u64 + 1), small(n)])?);
        }
        let calls = vm.new_array(&calls)?;
        let mut blocks = Vec::with_capacity(self.blocks.len());
        for b in &self.blocks {
            let name = vm.new_string(&b.name)?;
            blocks.push(vm.new_array(&[
                name,
                small(b.home as u64 + 1),
                small(b.calls),
                small(b.own),
                small(b.total),
            ])?);
        }
        let blocks = vm.new_array(&blocks)?;
        vm.new_array(&[methods, calls, blocks])
    }
}

/// Starts the profiler called `name` on the VM, or says why it cannot.
pub type ProfilerFactory = fn(vm: &mut Vm, name: &str) -> Result<Box<dyn ProfilerSession>, String>;

/// The installed factory and the running session, if any.
#[derive(Default)]
pub(crate) struct ProfilerRegistry {
    factory: Option<ProfilerFactory>,
    running: Option<Box<dyn ProfilerSession>>,
}

impl Vm {
    /// Install the factory through which Smalltalk starts profilers (replacing any).
    pub fn set_profiler_factory(&mut self, factory: ProfilerFactory) {
        self.profilers.factory = Some(factory);
    }

    /// Is a profiler started from Smalltalk running?
    pub fn profiler_running(&self) -> bool {
        self.profilers.running.is_some()
    }

    /// `System>>startProfiler:`: start the profiler called `name`.
    pub(crate) fn start_profiler(&mut self, name: &str) -> Result<(), String> {
        let Some(factory) = self.profilers.factory else {
            return Err(
                "no profilers are installed in this VM (embedders: lupa_profilers::install)".into(),
            );
        };
        if self.profilers.running.is_some() {
            return Err("a profiler is already running (stopProfiler first)".into());
        }
        if self.obs.has_hooks() {
            return Err(
                "the activation hooks are in use by another profiler (e.g. lupa count)".into(),
            );
        }
        let session = factory(self, name)?;
        self.profilers.running = Some(session);
        Ok(())
    }

    /// `System>>stopProfiler`: stop the running profiler and answer its report.
    pub(crate) fn stop_profiler(&mut self) -> Result<ProfilerReport, String> {
        match self.profilers.running.take() {
            Some(session) => Ok(session.stop(self)),
            None => Err("no profiler is running (startProfiler: first)".into()),
        }
    }
}
