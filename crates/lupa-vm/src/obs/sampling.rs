//! What the VM publishes for a sampling profiler, and the stacks it copies for
//! it (ARCHITECTURE.md, "The sampler (VMProfiler)").
//!
//! Contract. While a sampler is attached ([`Vm::attach_sampler`](crate::Vm::attach_sampler)) the VM
//! thread, and only it, writes the [`SampleRegister`]'s words with relaxed
//! stores; any thread reads them with relaxed loads, without a lock:
//! - `last`: `(method id << 32) | pc` of the last executed send;
//! - `state`: a [`VmState`] packed with its detail and the running process
//!   ([`SampleRegister::read_state`]), written on transitions (a primitive
//!   starts and ends, a method lookup that walks the classes, a
//!   collection starts and ends, a process switch, an allocation, a blocking
//!   operating-system call, the VM sleeping for a `Delay`). The states that
//!   interrupt another (allocation, collection, waiting, idle) save the word
//!   they replace and restore it when they end (`Observation::push_state`),
//!   so an allocation inside a primitive goes back to that primitive. The
//!   finalization process's `Interpreting` is published as `Finalization`
//!   while it mourns (from the resume by `schedule_finalization` until it
//!   waits on the finalization semaphore again);
//! - `request`: a stack request the sampler sets to its sample's sequence
//!   number (non-zero) and announces (`sched/poll.rs`). The interpreter
//!   sees it at its next safepoint (before the next frame it runs, at a back
//!   jump; native code at its next send), in either loop, and copies the
//!   running process's stack into
//!   [`Observation::take_stacks`]'s log, tagged with that number: the sampler
//!   never walks frames the interpreter mutates, and the sample keeps the state
//!   of its tick (a primitive or a collection running then is charged the
//!   sample, though the stack is copied at the next safepoint: no safepoint
//!   bias on the leaf state).
//!
//! In deterministic mode ([`Vm::sample_every`](crate::Vm::sample_every)) the interpreter itself takes a
//! sample each time the send counter passes a multiple of N (no thread, no
//! clock): the same program gives the same samples, bit for bit.
//!
//! [`SampleRegister`]: crate::obs::SampleRegister
//! [`SampleRegister::read_state`]: crate::obs::SampleRegister::read_state
//! [`Observation::take_stacks`]: crate::obs::Observation::take_stacks

/// What the VM thread is doing, as the sampling register's `state` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum VmState {
    /// Running Smalltalk bytecode (including fast-path sends).
    Interpreting = 0,
    /// In a primitive; the detail is the id of the method holding it.
    Primitive = 1,
    /// A scavenge of the young generation.
    Scavenge = 2,
    /// A full (mark-compact) collection.
    FullGc = 3,
    /// Switching processes.
    ProcessSwitch = 4,
    /// Looking a method up (an inline-cache miss that also misses the
    /// lookup cache): the class hierarchy is searched; the detail is the
    /// selector's symbol id.
    Lookup = 5,
    /// Allocating a large object ([`PUBLISHED_ALLOCATION`] elements or more:
    /// `Vm::instantiate` and the VM's other allocation entry points, inside a
    /// primitive or not; smaller objects, closures, activation environments
    /// and the arithmetic's boxed Doubles are charged to what allocates
    /// them). The detail is the id of the method holding the primitive it
    /// happens in plus one, 0 outside a primitive; the word it replaced is
    /// restored afterwards (a primitive's `Primitive` and its detail).
    Allocation = 6,
    /// Running the finalization process's Smalltalk code: from the moment
    /// `schedule_finalization` resumes it for queued ephemerons until it waits
    /// on the finalization semaphore again (it replaces `Interpreting` for that
    /// process; its primitives and lookups keep their own states).
    Finalization = 7,
    /// In a file primitive's call to the file layer, which may block in the
    /// operating system (file opens, reads, writes and closes,
    /// `System>>loadFile:`). Reads and writes are buffered (64 KB), so the
    /// state also covers the copies a call makes from or to its buffer when it
    /// does not reach the system: the time of a file call, not only of its
    /// system calls.
    Waiting = 8,
    /// No process can run: the VM thread sleeps until the earliest pending
    /// `Delay` expires.
    Idle = 9,
    /// Running native code the JIT compiled (a compiled method or block, and
    /// the runtime calls it makes that publish no state of their own); the
    /// stack copied for the sample locates it like interpreted code, at the
    /// send where native code tested the request.
    Native = 10,
    /// The JIT compiling hot methods and blocks (at a safepoint of the
    /// loop); with a compiler thread, copying what it reads of them (the
    /// thread's own time is not the VM thread's: `--jit-stats` reports it).
    JitCompile = 11,
    /// The JIT making room in its full code zone (evicting and moving
    /// functions), inside a compilation or an installation.
    CodeEviction = 12,
    /// The JIT installing the native code its compiler thread made (at a
    /// safepoint of the loop).
    JitInstall = 13,
}

impl VmState {
    /// Every state, in order.
    pub const ALL: [VmState; 14] = [
        VmState::Interpreting,
        VmState::Primitive,
        VmState::Scavenge,
        VmState::FullGc,
        VmState::ProcessSwitch,
        VmState::Lookup,
        VmState::Allocation,
        VmState::Finalization,
        VmState::Waiting,
        VmState::Idle,
        VmState::Native,
        VmState::JitCompile,
        VmState::CodeEviction,
        VmState::JitInstall,
    ];

    /// A short name: `interpreting`, `primitive`, `scavenge`, `full GC`,
    /// `process switch`, `method lookup`, `allocation`, `finalization`,
    /// `waiting`, `idle`, `native code`, `jit compile`, `code-zone eviction`,
    /// `jit install`.
    pub fn name(self) -> &'static str {
        match self {
            VmState::Interpreting => "interpreting",
            VmState::Primitive => "primitive",
            VmState::Scavenge => "scavenge",
            VmState::FullGc => "full GC",
            VmState::ProcessSwitch => "process switch",
            VmState::Lookup => "method lookup",
            VmState::Allocation => "allocation",
            VmState::Finalization => "finalization",
            VmState::Waiting => "waiting",
            VmState::Idle => "idle",
            VmState::Native => "native code",
            VmState::JitCompile => "jit compile",
            VmState::CodeEviction => "code-zone eviction",
            VmState::JitInstall => "jit install",
        }
    }

    /// Is it Smalltalk code running (interpreted or native)?
    pub fn is_smalltalk(self) -> bool {
        matches!(
            self,
            VmState::Interpreting | VmState::Finalization | VmState::Native
        )
    }

    /// Is it time spent in the collector?
    pub fn is_gc(self) -> bool {
        matches!(self, VmState::Scavenge | VmState::FullGc)
    }

    /// The state whose `state as u8` is `b` (`Interpreting` for a value no
    /// state has): how a state packed in a word is read back.
    pub fn from_bits(b: u8) -> VmState {
        match b {
            1 => VmState::Primitive,
            2 => VmState::Scavenge,
            3 => VmState::FullGc,
            4 => VmState::ProcessSwitch,
            5 => VmState::Lookup,
            6 => VmState::Allocation,
            7 => VmState::Finalization,
            8 => VmState::Waiting,
            9 => VmState::Idle,
            10 => VmState::Native,
            11 => VmState::JitCompile,
            12 => VmState::CodeEviction,
            13 => VmState::JitInstall,
            _ => VmState::Interpreting,
        }
    }
}

/// The VM state at one moment, as published: what, its detail (a primitive's
/// method id), and the running process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateWord {
    /// What the VM was doing.
    pub state: VmState,
    /// For [`VmState::Primitive`]: the id of the method holding the primitive;
    /// for [`VmState::Lookup`]: the selector's symbol id; for
    /// [`VmState::Allocation`]: the id of the method of the primitive it
    /// happens in plus one (0: not in a primitive).
    pub detail: u32,
    /// The running process (0: the main process).
    pub process: u32,
}

impl StateWord {
    pub(crate) fn pack(state: VmState, detail: u32, process: usize) -> u64 {
        (state as u64) | ((detail as u64) << 8) | (((process as u64) & 0xFF_FFFF) << 40)
    }

    /// The state a sample reads from the published `word`, the running
    /// `primitive` (its method id plus one; 0: none) and whether native code
    /// runs: a primitive in interpreted or native code (or in the
    /// finalization process) is `Primitive`, whatever interrupts it
    /// (an allocation, a collection) is itself; `Interpreting` in native
    /// code is `Native`.
    pub(crate) fn effective(word: u64, primitive: u32, in_native: bool) -> u64 {
        let s = StateWord::unpack(word);
        match s.state {
            VmState::Interpreting | VmState::Native | VmState::Finalization if primitive != 0 => {
                StateWord::pack(VmState::Primitive, primitive - 1, s.process as usize)
            }
            VmState::Interpreting if in_native => {
                StateWord::pack(VmState::Native, s.detail, s.process as usize)
            }
            _ => word,
        }
    }

    pub(crate) fn unpack(v: u64) -> StateWord {
        StateWord {
            state: VmState::from_bits(v as u8),
            detail: (v >> 8) as u32,
            process: (v >> 40) as u32,
        }
    }
}

/// Something the VM did that a timeline shows as a marker, recorded while a
/// sampler thread is attached ([`Observation::take_events`]).
///
/// [`Observation::take_events`]: crate::obs::Observation::take_events
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmEvent {
    /// What happened.
    pub kind: VmEventKind,
    /// When it started.
    pub start: std::time::Instant,
    /// How long it took (zero for an instant event).
    pub duration: std::time::Duration,
    /// The process running when it happened (for a switch: the next one).
    pub process: u32,
}

/// The kinds of [`VmEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VmEventKind {
    /// A scavenge of the young generation; bytes tenured by it.
    Scavenge {
        /// Bytes promoted to old space.
        tenured_bytes: u64,
    },
    /// A full (mark-compact) collection; what survived it.
    FullGc {
        /// Bytes live after it (old space and survivors).
        live_bytes: u64,
    },
    /// The running process changed.
    ProcessSwitch {
        /// The process that stopped running.
        from: u32,
        /// The process that runs now.
        to: u32,
    },
}

/// The most events kept for one sampling session (a timeline of a long run
/// keeps its first events; the rest are counted as dropped).
pub const MAX_EVENTS: usize = 1 << 17;

/// The smallest allocation, in slots, bytes or words, published as
/// [`VmState::Allocation`]: a smaller one is a bump of the allocation pointer
/// and a few stores, charged to what allocates it (a primitive, or the
/// interpreted code), since publishing it would cost more than it does.
pub const PUBLISHED_ALLOCATION: usize = 512;

/// The deepest stack copied into a sample (innermost frames kept).
pub const MAX_STACK: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_survives_packing() {
        for s in VmState::ALL {
            let w = StateWord::unpack(StateWord::pack(s, 77, 3));
            assert_eq!((w.state, w.detail, w.process), (s, 77, 3));
        }
        assert_eq!(VmState::Lookup.name(), "method lookup");
        for (i, s) in VmState::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "ALL is in bit order");
            assert_eq!(VmState::from_bits(i as u8), *s);
        }
        assert_eq!(VmState::from_bits(200), VmState::Interpreting);
    }

    #[test]
    fn new_states_pack_with_detail_and_process() {
        let cases = [
            (VmState::Allocation, "allocation", 6),
            (VmState::Finalization, "finalization", 7),
            (VmState::Waiting, "waiting", 8),
            (VmState::Idle, "idle", 9),
            (VmState::Native, "native code", 10),
            (VmState::JitCompile, "jit compile", 11),
            (VmState::CodeEviction, "code-zone eviction", 12),
            (VmState::JitInstall, "jit install", 13),
        ];
        for (s, name, bits) in cases {
            assert_eq!(s as u8, bits);
            assert_eq!(s.name(), name);
            assert!(!s.is_gc());
            let v = StateWord::pack(s, u32::MAX, 0xFF_FFFF);
            assert_eq!(v as u8, bits);
            let w = StateWord::unpack(v);
            assert_eq!((w.state, w.detail, w.process), (s, u32::MAX, 0xFF_FFFF));
        }
    }
}
