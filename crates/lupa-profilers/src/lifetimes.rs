//! Illimani's lifetime profiler driven from Rust
//! ([`crate::ProfileMode::Lifetimes`], `lupa lifetimes`): record a workload
//! in one of the two modes and answer a [`lupa_prof::lifetimes::Lifetimes`].
//!
//! - **VM mode** ([`LifetimeMode::Vm`]): the VM records sampled allocations
//!   and their deaths itself ([`lupa_vm::obs::lifetimes`]); nothing runs in
//!   Smalltalk.
//! - **Faithful mode** ([`LifetimeMode::Faithful`]): the bundled
//!   `IllLifetimeProfiler beFaithful` instruments the allocating methods with
//!   MethodProxies and follows each sampled object with an ephemeron; when
//!   the program has finished, it hands its records to the VM
//!   (`System>>recordLifetimes:totals:`), in the VM mode's shapes.
//!
//! Both run a full GC at the stop unless [`LifetimeConfig::final_gc`] is off,
//! so that the censored records are the objects really alive at the end.
//!
//! Both give a [`lupa_vm::LifetimeRecording`], which [`to_model`] names
//! (classes, methods, lines) into the report model.

use std::collections::HashMap;

use lupa_prof::lifetimes::{Collection, Lifetimes, Record, Sampling, Site, Totals};
use lupa_vm::obs::lifetimes::policy_for;
use lupa_vm::{LifetimeOptions, LifetimeRecording, SamplingPolicy, Vm, VmError};

use crate::error::ProfilerError;
use crate::spy::{Handles, class_array, send};
use crate::workload::Workload;

/// Which implementation records the lifetimes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifetimeMode {
    /// The VM samples allocations and the collector reports deaths.
    Vm,
    /// The paper's technique: MethodProxies on the allocators and ephemerons.
    Faithful,
}

impl LifetimeMode {
    /// `vm` or `faithful`.
    pub fn name(self) -> &'static str {
        match self {
            LifetimeMode::Vm => "vm",
            LifetimeMode::Faithful => "faithful",
        }
    }
}

/// What to record.
#[derive(Debug, Clone, PartialEq)]
pub struct LifetimeConfig {
    /// The mode.
    pub mode: LifetimeMode,
    /// Sampling rate in (0, 1]: in both modes, each allocation is sampled
    /// independently with this probability, whatever its size
    /// ([`policy_for`]).
    pub rate: f64,
    /// Every n-th allocation instead (deterministic) when > 0.
    pub every_nth: u64,
    /// Seed of the random gaps between sampled allocations.
    pub seed: u64,
    /// Frames kept per record.
    pub stack_depth: usize,
    /// Only objects of these classes (none: all).
    pub only: Vec<String>,
    /// Never objects of these classes.
    pub ignore: Vec<String>,
    /// Run a full GC at the stop (the default), so that the records still
    /// alive are the objects really alive at the end (`--no-final-gc`:
    /// without it, the objects that died after the last collection are
    /// reported alive).
    pub final_gc: bool,
}

impl LifetimeConfig {
    /// The defaults: VM mode, 1% of the objects, seed 42, 8 frames, every class,
    /// a final full GC.
    pub const DEFAULT: LifetimeConfig = LifetimeConfig {
        mode: LifetimeMode::Vm,
        rate: 0.01,
        every_nth: 0,
        seed: 42,
        stack_depth: 8,
        only: Vec::new(),
        ignore: Vec::new(),
        final_gc: true,
    };
}

impl Default for LifetimeConfig {
    fn default() -> Self {
        LifetimeConfig::DEFAULT
    }
}

fn class_indices(vm: &mut Vm, names: &[String]) -> Result<Vec<u32>, VmError> {
    names.iter().map(|n| vm.load_class_by_name(n)).collect()
}

/// A running lifetime profiler (of [`crate::ProfileMode::Lifetimes`]).
pub(crate) struct Recording {
    config: LifetimeConfig,
    /// Faithful mode: the Smalltalk profiler, rooted.
    faithful: Option<(Handles, usize)>,
    /// What ran (the model's `program`).
    program: String,
}

impl Recording {
    /// Start recording: the VM samples (VM mode), or the bundled
    /// `IllLifetimeProfiler beFaithful` instruments the allocators. An
    /// unknown class in `only`/`ignore`, a rate out of (0, 1] or a faithful
    /// mode that cannot install is an error.
    pub(crate) fn start(vm: &mut Vm, config: &LifetimeConfig) -> Result<Recording, ProfilerError> {
        if !(config.rate > 0.0 && config.rate <= 1.0) {
            return Err(ProfilerError::Config(format!(
                "the sampling rate must be in (0, 1], not {}",
                config.rate
            )));
        }
        let only = class_indices(vm, &config.only)?;
        let ignored = class_indices(vm, &config.ignore)?;
        let faithful = match config.mode {
            LifetimeMode::Vm => {
                let policy = policy_for(config.rate, config.every_nth, config.seed);
                vm.start_lifetimes(LifetimeOptions {
                    policy,
                    only,
                    ignored,
                    stack_depth: config.stack_depth.max(1),
                });
                None
            }
            LifetimeMode::Faithful => {
                let h = Handles::new(vm);
                match start_faithful(vm, &h, config, &only, &ignored) {
                    Ok(p) => Some((h, p)),
                    Err(e) => {
                        h.release(vm);
                        return Err(e.into());
                    }
                }
            }
        };
        Ok(Recording {
            config: config.clone(),
            faithful,
            program: String::new(),
        })
    }

    /// Run the workload, remembering what ran.
    pub(crate) fn run(&mut self, vm: &mut Vm, workload: Workload<'_>) -> Result<i32, VmError> {
        self.program = workload.describe(vm);
        workload.run(vm)
    }

    /// Stop and name the recording into the report model (its command is
    /// left empty).
    pub(crate) fn finish(self, vm: &mut Vm) -> Result<Lifetimes, ProfilerError> {
        let recording = match self.faithful {
            None => {
                if self.config.final_gc {
                    // Who is really alive at the end: the deaths this full
                    // GC finds are recorded at the stop's clocks.
                    vm.request_final_lifetimes_gc();
                    vm.collect_garbage()?;
                }
                vm.stop_lifetimes()
            }
            Some((h, p)) => {
                let done = finish_faithful(vm, &h, p, self.config.final_gc);
                h.release(vm);
                done?
            }
        };
        Ok(to_model(vm, &recording, &self.config, &self.program, ""))
    }
}

/// Make, configure and start the faithful profiler; answers its slot.
fn start_faithful(
    vm: &mut Vm,
    h: &Handles,
    config: &LifetimeConfig,
    only: &[u32],
    ignored: &[u32],
) -> Result<usize, VmError> {
    let class = vm.class_named("IllLifetimeProfiler")?;
    let profiler = vm.send_message(class, "new", &[])?;
    let p = h.keep(vm, profiler);
    send(vm, h, p, "beFaithful", &[])?;
    let rate = vm.new_double(config.rate).map_err(VmError::from)?;
    send(vm, h, p, "samplingRate:", &[rate])?;
    if config.every_nth > 0 {
        let n = lupa_vm::Value::small(config.every_nth.min(1 << 40) as i64);
        send(vm, h, p, "everyNth:", &[n])?;
    }
    let seed = lupa_vm::Value::small((config.seed & ((1 << 40) - 1)) as i64);
    send(vm, h, p, "seed:", &[seed])?;
    let depth = lupa_vm::Value::small(config.stack_depth.clamp(1, 256) as i64);
    send(vm, h, p, "stackDepth:", &[depth])?;
    send(
        vm,
        h,
        p,
        "finalGC:",
        &[lupa_vm::Value::bool(config.final_gc)],
    )?;
    if !only.is_empty() {
        let a = class_array(vm, h, only)?;
        let a = h.get(vm, a);
        send(vm, h, p, "captureOnly:", &[a])?;
    }
    if !ignored.is_empty() {
        let a = class_array(vm, h, ignored)?;
        let a = h.get(vm, a);
        send(vm, h, p, "ignore:", &[a])?;
    }
    // The VM logs the collections (for the trace); it samples nothing.
    vm.start_lifetimes(LifetimeOptions {
        policy: SamplingPolicy::Nothing,
        only: Vec::new(),
        ignored: Vec::new(),
        stack_depth: 1,
    });
    send(vm, h, p, "startProfiling", &[])?;
    Ok(p)
}

/// Stop the faithful profiler in `p` and take its records from the VM.
/// The collections are logged up to the stop: the profiler's final full
/// GC (in `stopProfiling`) is not part of the run.
fn finish_faithful(
    vm: &mut Vm,
    h: &Handles,
    p: usize,
    final_gc: bool,
) -> Result<LifetimeRecording, VmError> {
    let log = vm.stop_lifetimes();
    send(vm, h, p, "stopProfiling", &[])?;
    send(vm, h, p, "handOverToVm", &[])?;
    let mut recording = vm.take_last_lifetimes().unwrap_or_default();
    recording.collections = log.collections;
    recording.final_gc = final_gc;
    Ok(recording)
}

/// Name a recording's classes, methods and lines: the report model.
pub fn to_model(
    vm: &Vm,
    rec: &LifetimeRecording,
    config: &LifetimeConfig,
    program: &str,
    command: &str,
) -> Lifetimes {
    let mut sites: Vec<Site> = Vec::new();
    let mut site_index: HashMap<(u32, u32), u32> = HashMap::new();
    // Stacks: the VM's, one for one, with their frames named as sites.
    let stacks: Vec<Vec<u32>> = rec
        .stacks
        .iter()
        .map(|st| {
            st.iter()
                .map(|&(id, pc)| {
                    *site_index.entry((id, pc)).or_insert_with(|| {
                        let method = vm
                            .image
                            .describe_method(id)
                            .map_or_else(|| format!("method #{id}"), |d| d.display_name());
                        sites.push(Site {
                            method,
                            pc,
                            line: vm.image.line_of(id, pc).unwrap_or(0),
                        });
                        (sites.len() - 1) as u32
                    })
                })
                .collect()
        })
        .collect();
    let mut classes: Vec<String> = Vec::new();
    let mut class_index: HashMap<u32, u32> = HashMap::new();
    let mut records = Vec::with_capacity(rec.records.len());
    for r in &rec.records {
        let class = *class_index.entry(r.class).or_insert_with(|| {
            classes.push(vm.image.class_name(r.class).to_string());
            (classes.len() - 1) as u32
        });
        records.push(Record {
            class,
            size_bytes: r.bytes,
            stack: r.stack,
            birth_bytes: r.birth_bytes,
            death_bytes: r.death_bytes,
            birth_us: r.birth_us,
            death_us: r.death_us,
            survived_scavenges: r.survived_scavenges,
            survived_full_gcs: r.survived_full_gcs,
            censored: r.censored,
            probability: r.probability,
        });
    }
    let seed = match rec.policy {
        Some(SamplingPolicy::PerObject { seed, .. }) => seed,
        _ => config.seed,
    };
    Lifetimes {
        command: command.to_string(),
        program: program.to_string(),
        mode: config.mode.name().to_string(),
        final_gc: rec.final_gc,
        stopped_at_limit: rec.stopped_at_limit,
        sampling: Sampling {
            rate: config.rate,
            every_nth: config.every_nth,
            seed,
        },
        totals: Totals {
            duration_us: rec.duration_us,
            allocated_bytes: rec.allocated_bytes,
            allocated_objects: rec.allocated_objects,
            scavenges: rec.scavenges,
            full_gcs: rec.full_gcs,
            gc_us: rec.gc_us,
            eden_bytes: vm.heap.stats().eden_bytes,
        },
        classes,
        sites,
        stacks,
        records,
        collections: rec
            .collections
            .iter()
            .map(|c| Collection {
                start_us: c.start_us,
                duration_us: c.duration_us,
                full: c.full,
                allocated_bytes: c.allocated_bytes,
            })
            .collect(),
    }
}
