//! Samples into a [`Profile`]: each sample is a path from the root (its
//! process's label, then its Smalltalk frames, outermost first, then a
//! pseudo-frame for what the VM was doing when it was not interpreting)
//! charged its weight.
//!
//! Contract: the profile's grand total is the sum of the weights; a sample of
//! process N > 0 is below `<process N>`; the leaf of a sample taken in a
//! primitive is the method holding the primitive, of a collection
//! `<scavenge>` or `<full GC>` (package `GC`), of a process switch
//! `<process switch>` (package `VM`, like the process labels), of an
//! allocation `<allocation>` (package `Memory`; below the primitive's method
//! when it happens in one), of a blocking file call `<waiting>` (package
//! `Waiting`), of the VM sleeping for a Delay `<idle>` (package `Idle`); a
//! `finalization` sample is interpreted code, located like one, and a
//! `native code` sample is located like one too (its frames are the
//! interpreter's: native code keeps them), at the instruction its native pc
//! maps to when the sampler took one (`--native`); the
//! call line of a frame is the line of its caller's current send; node
//! activations are 0 (a sampler does not see calls). The sites answered
//! (method id, instruction index, weight) locate the interpreted samples at
//! their bytecode; the timeline answered holds every sample, in order, at its
//! node (its contract: `lupa_prof::timeline`).

use crate::naming::{name_methods, placeholder};
use lupa_prof::{
    MethodInfo, Metric, NodeId, Profile, ProfileBuilder, SampleNode, SampleTree, TimedSample,
    Timeline, process_label,
};
use lupa_trie::{Trie, TrieNode};
use lupa_vm::{StackFrame, StackLog, Vm, VmState};
use rustc_hash::FxHashMap;

/// The tree node each stack-log node was made, per process: a table by node
/// for process 0 (where almost every sample is), a map for the others (a
/// table each would cost every process the whole log's size).
struct Resolved {
    main: Vec<SampleNode>,
    others: FxHashMap<(u32, TrieNode), SampleNode>,
    /// The nodes of a path not made yet, innermost first (reused).
    climb: Vec<TrieNode>,
}

impl Resolved {
    /// No tree node: never a node's id (a trie makes none with id
    /// `u32::MAX`: `lupa_trie::Trie::child`).
    const UNSEEN: SampleNode = SampleNode::MAX;

    fn new(nodes: usize) -> Self {
        Resolved {
            main: vec![Self::UNSEEN; nodes],
            others: FxHashMap::default(),
            climb: Vec::new(),
        }
    }

    /// The tree node of stack-log node `at` (a node of `paths`) for
    /// `process`: the nearest node of its path already made (at worst the
    /// empty path's: the root, or the process's label), then its other
    /// frames below it, each remembered, so that a stack costs its new
    /// frames once.
    fn node_of(
        &mut self,
        tree: &mut SampleTree<Raw>,
        paths: &Trie<StackFrame>,
        process: u32,
        at: TrieNode,
    ) -> SampleNode {
        let mut climb = std::mem::take(&mut self.climb);
        climb.clear();
        let mut up = at;
        let mut node = loop {
            if let Some(n) = self.get(process, up) {
                break n;
            }
            match paths.parent(up) {
                Some(p) => {
                    climb.push(up);
                    up = p;
                }
                None => {
                    let label = match process {
                        0 => SampleTree::<Raw>::ROOT,
                        p => tree.child(SampleTree::<Raw>::ROOT, Raw::process(p)),
                    };
                    self.set(process, up, label);
                    break label;
                }
            }
        };
        for &c in climb.iter().rev() {
            if let Some(&(id, pc)) = paths.frame(c) {
                node = tree.child(node, Raw::code(id, pc));
            }
            self.set(process, c, node);
        }
        self.climb = climb;
        node
    }

    fn get(&self, process: u32, node: TrieNode) -> Option<SampleNode> {
        match process {
            0 => self
                .main
                .get(node as usize)
                .copied()
                .filter(|&n| n != Self::UNSEEN),
            p => self.others.get(&(p, node)).copied(),
        }
    }

    fn set(&mut self, process: u32, node: TrieNode, to: SampleNode) {
        match process {
            0 => {
                if let Some(n) = self.main.get_mut(node as usize) {
                    *n = to;
                }
            }
            p => {
                self.others.insert((p, node), to);
            }
        }
    }
}

/// What ran at the innermost end of a sample, below its Smalltalk frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leaf {
    /// Bytecode of the innermost frame.
    Interpreted,
    /// Native code the JIT compiled, running the innermost frame's method,
    /// or where the sampled native pc says: `(method id, instruction)`,
    /// the instruction [`ENTRY`] for the function's entry.
    Native(Option<(u32, u32)>),
    /// The primitive of this method.
    Primitive(u32),
    /// A VM activity with no method: `<scavenge>`, `<full GC>`, ...; below
    /// the primitive (the id of the method holding it) it happens in, if any
    /// (an allocation in `Array class>>new:`).
    Vm(VmState, Option<u32>),
}

impl Leaf {
    pub(crate) fn of(state: VmState, detail: u32) -> Leaf {
        match state {
            // The finalization process's own code: charged to its method and
            // bytecode like any interpreted sample (the state tells it apart).
            VmState::Interpreting | VmState::Finalization => Leaf::Interpreted,
            VmState::Native => Leaf::Native(None),
            VmState::Primitive => Leaf::Primitive(detail),
            VmState::Allocation => Leaf::Vm(VmState::Allocation, detail.checked_sub(1)),
            other => Leaf::Vm(other, None),
        }
    }
}

/// One weighted sample.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    pub(crate) process: u32,
    /// Its copied stack: an index into the entries of the [`StackLog`]
    /// given to [`build`] (its frames `(method id, pc)` outermost first, pc
    /// the index after the frame's current instruction, are the path of the
    /// entry's node).
    pub(crate) stack: usize,
    pub(crate) leaf: Leaf,
    pub(crate) weight: u64,
    /// Its time (ns since the start; sends in deterministic mode).
    pub(crate) time_ns: u64,
    /// The VM state of its tick.
    pub(crate) state: VmState,
    /// Sends executed since the previous sample.
    pub(crate) sends: u64,
}

/// The instruction index that stands for a native function's entry (its
/// prologue and resume dispatch: machine code mapped to no instruction).
pub const ENTRY: u32 = u32::MAX;

/// What [`build`] makes of the samples.
pub(crate) struct Built {
    /// The calling-context tree.
    pub(crate) profile: Profile,
    /// Interpreted samples by bytecode: `(method id, instruction, value)`,
    /// each site once (its samples' values summed), in order.
    pub(crate) sites: Vec<(u32, u32, u64)>,
    /// Samples in native code by bytecode: `(method id, instruction or
    /// [`ENTRY`], value)`, each site once, in order.
    pub(crate) native_sites: Vec<(u32, u32, u64)>,
    /// Every sample, in order, at its node.
    pub(crate) timeline: Timeline,
}

/// The most nodes [`build`] makes room for before it knows how many it needs.
const MAX_RESERVED_NODES: usize = 1 << 16;

/// Sites and their values, ordered by method id and instruction.
fn by_site(sites: FxHashMap<(u32, u32), u64>) -> Vec<(u32, u32, u64)> {
    let mut all: Vec<(u32, u32, u64)> = sites.into_iter().map(|((m, i), v)| (m, i, v)).collect();
    all.sort_unstable();
    all
}

/// The pseudo-frame of a VM activity. Its category is what the Firefox
/// Profiler colours by: the collector and the allocator (memory) apart from
/// the rest of the runtime, and the time the VM does not run (blocked in the
/// operating system, or idle until a Delay expires).
fn vm_frame(state: VmState) -> MethodInfo {
    let category = match state {
        _ if state.is_gc() => "GC",
        VmState::Allocation => "Memory",
        VmState::Waiting => "Waiting",
        VmState::Idle => "Idle",
        _ => "VM",
    };
    MethodInfo::named(vm_frame_name(state)).with_category(category)
}

/// The name of the pseudo-frame of a VM activity.
pub(crate) fn vm_frame_name(state: VmState) -> String {
    format!("<{}>", state.name())
}

/// A frame of a sample's path as the [`SampleTree`] keeps it: one word,
/// compared as the stack log gives it (a node's children are scanned for
/// it), made a profile frame (a method and the line of its call) once per
/// distinct path, when the profile is built. The high half is a method id
/// (or a process number, or a VM state), the low half a Smalltalk frame's pc
/// (the index after its current instruction, which its callee's call line
/// comes from), or one of the three marks above every pc ([`Raw::Code`]
/// keeps a pc below them: a method of four billion instructions would have
/// its last ones read as the one before).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Raw(u64);

/// What a [`Raw`] frame is.
enum RawKind {
    /// A Smalltalk frame: its method id and pc.
    Code(u32, u32),
    /// The method holding the primitive (or the allocation) a sample is in.
    Primitive(u32),
    /// The label of process N > 0.
    Process(u32),
    /// A VM activity's pseudo-frame (its `VmState` as `u8`).
    State(u32),
}

impl Raw {
    const PRIMITIVE: u32 = u32::MAX;
    const PROCESS: u32 = u32::MAX - 1;
    const STATE: u32 = u32::MAX - 2;

    fn word(high: u32, low: u32) -> Raw {
        Raw(u64::from(high) << 32 | u64::from(low))
    }

    fn code(id: u32, pc: u32) -> Raw {
        Raw::word(id, pc.min(Raw::STATE - 1))
    }

    fn primitive(id: u32) -> Raw {
        Raw::word(id, Raw::PRIMITIVE)
    }

    fn process(p: u32) -> Raw {
        Raw::word(p, Raw::PROCESS)
    }

    fn state(state: VmState) -> Raw {
        Raw::word(state as u32, Raw::STATE)
    }

    fn kind(self) -> RawKind {
        let (high, low) = ((self.0 >> 32) as u32, self.0 as u32);
        match low {
            Raw::PRIMITIVE => RawKind::Primitive(high),
            Raw::PROCESS => RawKind::Process(high),
            Raw::STATE => RawKind::State(high),
            pc => RawKind::Code(high, pc),
        }
    }
}

/// Build the profile of `samples` (names from `vm`), the bytecode sites of
/// the interpreted ones and of the native ones, and the timeline of them all
/// (without markers).
pub(crate) fn build(
    vm: &Vm,
    metric: Metric,
    stacks: &StackLog,
    samples: impl IntoIterator<Item = Sample>,
) -> Built {
    // The path of each sample: its process, its frames, then its leaf's
    // frames, interned in a tree of raw frames. Its frames are a node of
    // the stack log's trie, already interned as the run copied them: each
    // such node is made a tree node once (per process), its path's nodes
    // not yet seen made below the nearest one that was, so that a sample
    // costs a lookup, and only a path never seen before costs its new
    // frames. The profile is made of the tree at the end, a path at a time.
    let paths = stacks.paths();
    let mut tree: SampleTree<Raw> = SampleTree::new();
    // The tree has about as many nodes as the stack log's trie (its
    // pseudo-frames and process labels aside: Havlak 14,400 for 14,200); the
    // room it does not use is never touched.
    tree.reserve(paths.len().min(MAX_RESERVED_NODES));
    // Summed by site as the samples come (a deep profile has a few
    // thousand sites for hundreds of thousands of samples).
    let mut sites: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    let mut native_sites: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    let mut timeline = Timeline {
        states: VmState::ALL.iter().map(|s| s.name().to_string()).collect(),
        ..Timeline::default()
    };
    timeline.samples.reserve(stacks.len());
    let mut resolved = Resolved::new(paths.len());
    for s in samples {
        let at = stacks
            .entries()
            .get(s.stack)
            .map_or(Trie::<StackFrame>::ROOT, |e| e.node);
        let mut node = resolved.node_of(&mut tree, paths, s.process, at);
        let last = paths.frame(at).copied();
        match s.leaf {
            Leaf::Interpreted => {
                if let Some((id, pc)) = last {
                    *sites.entry((id, pc.saturating_sub(1))).or_insert(0) += s.weight;
                }
            }
            Leaf::Native(at) => {
                let at = at.or_else(|| last.map(|(id, pc)| (id, pc.saturating_sub(1))));
                if let Some((id, index)) = at {
                    *native_sites.entry((id, index)).or_insert(0) += s.weight;
                }
            }
            Leaf::Primitive(id) => node = tree.child(node, Raw::primitive(id)),
            Leaf::Vm(state, within) => {
                if let Some(id) = within {
                    node = tree.child(node, Raw::primitive(id));
                }
                node = tree.child(node, Raw::state(state));
            }
        }
        tree.add(node, s.weight);
        timeline.samples.push(TimedSample {
            time_ns: s.time_ns,
            // The tree's node until the profile's is known.
            node: NodeId(node as usize),
            state: s.state as u16,
            weight: s.weight,
            sends: s.sends,
        });
    }
    let mut b = ProfileBuilder::new(metric);
    b.reserve_nodes(tree.len());
    // Each VM state's pseudo-frame, interned at its first path.
    let mut state_frames = [None; VmState::ALL.len()];
    let at = tree.into_profile(&mut b, |b, parent, frame| match frame.kind() {
        RawKind::Process(p) => {
            let label = MethodInfo::named(process_label(p as usize)).with_category("VM");
            (b.intern_method(label), None)
        }
        // The call line of a frame is its caller's current send's.
        RawKind::Code(id, _) | RawKind::Primitive(id) => {
            let m = b.method_for_key(id, || MethodInfo::named(placeholder(id)));
            let line = match parent.map(|p| p.kind()) {
                Some(RawKind::Code(c, cpc)) => vm.image.line_of(c, cpc.saturating_sub(1)),
                _ => None,
            };
            (m, line)
        }
        RawKind::State(i) => {
            let state = VmState::from_bits(i as u8);
            let m = *state_frames[state as usize]
                .get_or_insert_with(|| b.intern_method(vm_frame(state)));
            (m, None)
        }
    });
    for t in &mut timeline.samples {
        t.node = at[t.node.0];
    }
    let mut profile = b.finish();
    for n in &mut profile.nodes {
        n.activations = 0;
    }
    name_methods(vm, &mut profile);
    Built {
        profile,
        sites: by_site(sites),
        native_sites: by_site(native_sites),
        timeline,
    }
}
