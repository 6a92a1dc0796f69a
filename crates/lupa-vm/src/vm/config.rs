//! [`VmOptions`]: what a VM is configured with at creation (class path, heap,
//! stack-depth limit, heap verification, quiet output).

use lupa_heap::HeapConfig;
use std::path::PathBuf;

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
    /// Allocation sites whose objects are allocated in old space
    /// (`--pretenure FILE`; see `pretenure.rs`).
    pub pretenure: Vec<crate::obs::pretenure::PretenureSite>,
    /// When methods and blocks are compiled to native code, if a JIT is
    /// installed (`--jit`; see `interp/native.rs`).
    pub jit: JitMode,
    /// Activations plus backward jumps of a method or block before it is
    /// compiled (`--jit-threshold`).
    pub jit_threshold: u32,
    /// Compile hot code on a compiler thread beside the VM thread
    /// (`--jit-thread`, on by default): the VM thread only copies what the
    /// compiler reads and installs what comes back, at its safepoints, and
    /// interprets the code meanwhile. Off: compiled at the safepoint where it
    /// got hot, on the VM thread (deterministic compile points). Only for
    /// [`JitMode::On`]: `Always` compiles at the first call, on the VM
    /// thread.
    pub jit_thread: bool,
    /// Bytes of the JIT's code zone (`--code-zone`).
    pub code_zone_bytes: usize,
    /// Name each compilation on standard error (`--jit-log`).
    pub jit_log: bool,
    /// Write the JIT's functions to `/tmp/perf-PID.map` as they are made and
    /// moved (`--perf-map`), so that Linux `perf` and samply name them.
    pub perf_map: bool,
    /// Makes the JIT `Vm::new` installs (unless `jit` is off); `None`: no JIT,
    /// everything is interpreted. The `lupa` binary sets it to `lupa-jit`'s.
    pub jit_factory: Option<JitFactory>,
}

/// Makes a JIT for a VM with these options, or says why it cannot.
pub type JitFactory = fn(&VmOptions) -> Result<Box<dyn crate::Jit>, String>;

/// When the interpreter asks an installed JIT to compile code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JitMode {
    /// Never: everything is interpreted.
    Off,
    /// When a method or block is hot (`jit_threshold` activations and
    /// backward jumps).
    #[default]
    On,
    /// At its first activation.
    Always,
}

impl JitMode {
    /// The name `--jit` takes.
    pub fn name(self) -> &'static str {
        match self {
            JitMode::Off => "off",
            JitMode::On => "on",
            JitMode::Always => "always",
        }
    }

    /// The mode called `name`.
    pub fn from_name(name: &str) -> Option<JitMode> {
        [JitMode::Off, JitMode::On, JitMode::Always]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// The default `code_zone_bytes`.
pub const DEFAULT_CODE_ZONE_BYTES: usize = 32 << 20;

/// The default `jit_threshold`. Since send sites are specialised on their
/// inline caches, a function is some 8-12x its bytecode's bytes and compiles
/// in 1-3 ms: on SOM's AWFY harness (cachegrind, whole runs) 2000 executes
/// 3.5-6.5% fewer instructions than 10 000 on Json, DeltaBlue, CD and
/// Richards; 500 and 1000 save about 1% more, for more compiled code.
pub const DEFAULT_JIT_THRESHOLD: u32 = 2_000;

impl Default for VmOptions {
    fn default() -> Self {
        VmOptions {
            class_path: Vec::new(),
            use_bundled: true,
            heap: HeapConfig::default(),
            max_frames: 200_000,
            verify_heap: cfg!(debug_assertions),
            quiet: false,
            pretenure: Vec::new(),
            jit: JitMode::default(),
            jit_threshold: DEFAULT_JIT_THRESHOLD,
            jit_thread: true,
            code_zone_bytes: DEFAULT_CODE_ZONE_BYTES,
            jit_log: false,
            perf_map: false,
            jit_factory: None,
        }
    }
}
