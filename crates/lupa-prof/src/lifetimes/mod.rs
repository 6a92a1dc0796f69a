//! Object lifetimes: the model Illimani's lifetime profiler fills (in either
//! of its modes, VM or faithful), what it says (densities, allocation sites,
//! their short / long / immortal classification) and its reports.
//!
//! A [`Lifetimes`] holds the sampled allocations ([`Record`]: class, size,
//! allocation stack, birth and death on three clocks, censoring, sampling
//! probability), the sites they name, the collections that ran, and the
//! run's exact totals. Analyses live in [`analysis`]; the writers are one per
//! format: [`text`] (summary, densities, sites), [`csv`] (one row per record,
//! a header with units), JSON ([`Lifetimes::metadata_json`]: the run and its
//! analysis, units stated), [`svg`] (the paper's two density charts, by
//! objects and by memory, on each clock), [`html`] (a page with the charts,
//! the summary and the site table) and [`trace`] (a Chrome trace-event
//! timeline of the collections and the allocation rate, which Perfetto and
//! `chrome://tracing` open).
//!
//! Contract:
//! - a record's death clocks are never before its birth clocks; a censored
//!   record (still alive at the stop) has the stop's clocks as death, and its
//!   lifetime is a lower bound; with [`Lifetimes::final_gc`], a full GC at
//!   the stop found every other record dead;
//! - `probability` is in (0, 1]: a record stands for `1 / probability`
//!   allocations, so weighted sums estimate the run's totals without bias
//!   ([`analysis::Analysis`]);
//! - a record's `class` indexes [`Lifetimes::classes`] and its `stack`
//!   indexes [`Lifetimes::stacks`], whose entries index [`Lifetimes::sites`],
//!   the allocation site first (records share their names and stacks).

pub mod advice;
pub mod analysis;
pub mod csv;
mod format;
pub mod html;
pub mod svg;
pub mod text;
pub mod trace;

use serde::{Deserialize, Serialize};

pub use format::LifetimesFormat;

/// The version of the JSON document ([`Lifetimes::metadata_json`]). 2:
/// `sampling.mean_interval_bytes` removed (no rate samples by bytes).
pub const VERSION: u32 = 2;

/// A lifetime profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Lifetimes {
    /// The command that produced it, e.g. `lupa lifetimes GcLoad`.
    pub command: String,
    /// The profiled program (class and arguments).
    pub program: String,
    /// `vm` or `faithful`.
    pub mode: String,
    /// How allocations were sampled.
    pub sampling: Sampling,
    /// A full GC ran at the stop (the default), so that the censored
    /// records are the objects really alive at the end; without it, objects
    /// that died after the last collection are censored too.
    #[serde(default)]
    pub final_gc: bool,
    /// Sampling stopped when the records reached their share of
    /// `--max-heap`: the allocations after that point have no record, so the
    /// profile describes the start of the run only ([`Lifetimes::limit_note`]).
    #[serde(default)]
    pub stopped_at_limit: bool,
    /// The run's exact totals (from the VM, not the sample).
    pub totals: Totals,
    /// Class names, once each.
    pub classes: Vec<String>,
    /// Allocation sites and stack frames, named once.
    pub sites: Vec<Site>,
    /// Allocation stacks, once each: indices into `sites`, the site first
    /// (empty: no Smalltalk frame).
    pub stacks: Vec<Vec<u32>>,
    /// The records, in allocation order.
    pub records: Vec<Record>,
    /// The collections during the run, in order.
    pub collections: Vec<Collection>,
}

/// How allocations were sampled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// The requested rate in (0, 1] (1: every allocation).
    pub rate: f64,
    /// Every n-th allocation (deterministic) when > 0.
    pub every_nth: u64,
    /// The seed of the gaps between sampled objects.
    pub seed: u64,
}

impl Sampling {
    /// How allocations were sampled, in words (the text and HTML reports).
    pub fn description(&self) -> String {
        if self.every_nth > 0 {
            format!("every {}th allocation", self.every_nth)
        } else if self.rate >= 1.0 {
            "every allocation".to_string()
        } else {
            format!(
                "rate {} (each object with probability {}, seed {})",
                self.rate, self.rate, self.seed
            )
        }
    }
}

/// Exact totals of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Duration of the profiled run, µs.
    pub duration_us: u64,
    /// Bytes allocated (headers included).
    pub allocated_bytes: u64,
    /// Objects allocated.
    pub allocated_objects: u64,
    /// Scavenges.
    pub scavenges: u64,
    /// Full GCs.
    pub full_gcs: u64,
    /// Time in collections, µs.
    pub gc_us: u64,
    /// The eden size, bytes (the nursery a short-lived object dies in).
    pub eden_bytes: u64,
}

/// A method (or block) at an instruction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Site {
    /// `Class>>selector`, `[] in Class>>selector` for a block.
    pub method: String,
    /// Index of the send instruction.
    pub pc: u32,
    /// Its source line (0: unknown).
    pub line: u32,
}

impl Site {
    /// `Class>>selector:line`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.method, self.line)
    }
}

/// One sampled allocation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Class: an index into [`Lifetimes::classes`].
    pub class: u32,
    /// Size in the heap, bytes, header included.
    pub size_bytes: u64,
    /// Allocation stack: an index into [`Lifetimes::stacks`].
    pub stack: u32,
    /// Allocation clock at birth, bytes.
    pub birth_bytes: u64,
    /// Allocation clock at death, bytes.
    pub death_bytes: u64,
    /// µs since the start, at birth.
    pub birth_us: u64,
    /// µs since the start, at death.
    pub death_us: u64,
    /// Scavenges that did not find it dead.
    pub survived_scavenges: u32,
    /// Full GCs that did not find it dead.
    pub survived_full_gcs: u32,
    /// Alive at the stop (its death is the stop, its lifetime a lower
    /// bound; see [`Lifetimes::final_gc`]).
    pub censored: bool,
    /// The probability it was sampled, in (0, 1].
    pub probability: f64,
}

impl Record {
    /// Lifetime in bytes allocated.
    pub fn lifetime_bytes(&self) -> u64 {
        self.death_bytes.saturating_sub(self.birth_bytes)
    }
    /// Lifetime in µs.
    pub fn lifetime_us(&self) -> u64 {
        self.death_us.saturating_sub(self.birth_us)
    }
    /// Collections survived.
    pub fn survived(&self) -> u32 {
        self.survived_scavenges + self.survived_full_gcs
    }
    /// How many allocations it stands for.
    pub fn weight(&self) -> f64 {
        if self.probability > 0.0 {
            1.0 / self.probability
        } else {
            1.0
        }
    }
}

/// One collection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collection {
    /// µs since the start.
    pub start_us: u64,
    /// Duration, µs.
    pub duration_us: u64,
    /// A full GC (else a scavenge).
    pub full: bool,
    /// Allocation clock at the collection, bytes.
    pub allocated_bytes: u64,
}

impl Lifetimes {
    /// What a censored record is in this profile, for the reports: alive at
    /// the end (a final full GC found the others dead), or only not found
    /// dead by the last collection (`--no-final-gc`).
    pub fn censored_meaning(&self) -> &'static str {
        if self.final_gc {
            "alive at the end, after a final full GC"
        } else {
            "not found dead, no final full GC: some may be dead"
        }
    }

    /// The warning the reports print when sampling stopped at its limit.
    pub fn limit_note(&self) -> Option<&'static str> {
        self.stopped_at_limit.then_some(
            "sampling stopped when the records reached their share of --max-heap; \
             later allocations are not recorded (raise --max-heap or lower --rate)",
        )
    }

    /// Check the contract (see the module doc); answers the first violation.
    pub fn check(&self) -> Result<(), String> {
        for (i, r) in self.records.iter().enumerate() {
            if r.death_bytes < r.birth_bytes || r.death_us < r.birth_us {
                return Err(format!("record {i} dies before its birth"));
            }
            if !(r.probability > 0.0 && r.probability <= 1.0) {
                return Err(format!("record {i} has probability {}", r.probability));
            }
            if r.class as usize >= self.classes.len() {
                return Err(format!(
                    "record {i} names class {}, which does not exist",
                    r.class
                ));
            }
            if r.stack as usize >= self.stacks.len() {
                return Err(format!(
                    "record {i} names stack {}, which does not exist",
                    r.stack
                ));
            }
        }
        for (k, st) in self.stacks.iter().enumerate() {
            if let Some(&s) = st.iter().find(|&&s| s as usize >= self.sites.len()) {
                return Err(format!("stack {k} names site {s}, which does not exist"));
            }
        }
        Ok(())
    }

    /// The class name of a record.
    pub fn class_of(&self, r: &Record) -> &str {
        self.classes
            .get(r.class as usize)
            .map_or("?", String::as_str)
    }

    /// The allocation stack of a record: site indices, the site first.
    pub fn stack_of(&self, r: &Record) -> &[u32] {
        self.stacks.get(r.stack as usize).map_or(&[], Vec::as_slice)
    }

    /// The allocation site of a record.
    pub fn site_of(&self, r: &Record) -> Option<&Site> {
        self.stack_of(r)
            .first()
            .and_then(|&i| self.sites.get(i as usize))
    }

    /// The index of class `name`, added when new (for builders).
    pub fn intern_class(&mut self, name: &str) -> u32 {
        match self.classes.iter().position(|c| c == name) {
            Some(i) => i as u32,
            None => {
                self.classes.push(name.to_string());
                (self.classes.len() - 1) as u32
            }
        }
    }

    /// The index of `site`, added when new (for builders).
    pub fn intern_site(&mut self, site: Site) -> u32 {
        match self.sites.iter().position(|s| *s == site) {
            Some(i) => i as u32,
            None => {
                self.sites.push(site);
                (self.sites.len() - 1) as u32
            }
        }
    }

    /// The index of `stack` (site indices, the site first), added when new
    /// (for builders).
    pub fn intern_stack(&mut self, stack: Vec<u32>) -> u32 {
        match self.stacks.iter().position(|s| *s == stack) {
            Some(i) => i as u32,
            None => {
                self.stacks.push(stack);
                (self.stacks.len() - 1) as u32
            }
        }
    }

    /// Write [`Lifetimes::metadata_json`], pretty-printed.
    pub fn write_json<W: std::io::Write + ?Sized>(&self, w: &mut W) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(&self.metadata_json())
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        w.write_all(text.as_bytes())?;
        w.write_all(b"\n")
    }

    /// The JSON metadata document: the run (program, mode, sampling, exact
    /// totals, units) and its analysis (summary, densities, sites), without
    /// the records (the CSV export has them).
    pub fn metadata_json(&self) -> serde_json::Value {
        let a = analysis::Analysis::of(self);
        serde_json::json!({
            "version": VERSION,
            "tool": "lupa lifetimes",
            "command": self.command,
            "program": self.program,
            "mode": self.mode,
            "sampling": self.sampling,
            "totals": self.totals,
            "units": {
                "size": "bytes (header included)",
                "bytes clock": "bytes allocated since the VM started",
                "time clock": "microseconds since profiling started",
                "collections clock": "collections survived",
                "estimates": "records weighted by 1/probability (Horvitz-Thompson)",
            },
            "records": self.records.len(),
            "censored": a.censored,
            "final_gc": self.final_gc,
            "stopped_at_limit": self.stopped_at_limit,
            "estimated": { "objects": a.estimated_objects, "bytes": a.estimated_bytes },
            "summary": a.summary_line(),
            "long_lived_threshold_bytes": a.threshold_bytes,
            "densities": a.densities,
            "sites": a.sites,
            "classes": a.classes,
        })
    }
}
