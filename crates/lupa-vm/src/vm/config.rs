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
            pretenure: Vec::new(),
        }
    }
}
