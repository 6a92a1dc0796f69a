//! Making a [`Vm`]: its parts, with the primitive tables (`prims`) bound into
//! the image by class and selector, the kernel loaded (`Image::bootstrap`)
//! and the main process created. The only place that ties the VM to its
//! primitives.

use super::{Vm, VmError, VmOptions};
use crate::image::Image;
use crate::io::Io;
use crate::obs::Observation;
use crate::sched::{ProcessState, Scheduler};
use lupa_heap::Heap;

impl Vm {
    /// A VM with the kernel loaded, ready to run programs.
    pub fn new(options: VmOptions) -> Result<Vm, VmError> {
        let heap = Heap::new(options.heap.clone());
        let limits = crate::interp::RuntimeLimits::new(options.max_frames, options.heap.max_heap);
        let seed = options.heap.hash_seed;
        let mut vm = Vm {
            heap,
            image: Image::new(
                options.class_path.clone(),
                options.use_bundled,
                crate::prims::bindings(),
            ),
            sched: Scheduler {
                running: ProcessState::with_capacity(1 << 16, 1 << 10),
                ..Scheduler::default()
            },
            obs: Observation::default(),
            io: Io::new(options.quiet),
            limits,
            options,
            handles: Vec::new(),
            rng_state: seed | 1,
            profilers: Default::default(),
            native: Default::default(),
        };
        vm.obs.pretenuring = crate::obs::pretenure::Pretenuring::new(&vm.options.pretenure);
        vm.image.bootstrap(&mut vm.heap)?;
        if vm.options.jit != crate::JitMode::Off
            && let Some(factory) = vm.options.jit_factory
        {
            match factory(&vm.options) {
                Ok(jit) => vm.install_jit(jit),
                Err(why) => vm.native.unavailable = Some(why),
            }
        }
        vm.init_main_process()?;
        Ok(vm)
    }
}
