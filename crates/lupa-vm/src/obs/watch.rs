//! Method watches: what every call of chosen methods did, kept by the VM.
//!
//! Spy's built-in profilers (test coverage, type feedback) need per method
//! facts the interpreter sees at each call anyway: how many calls, how many
//! distinct receivers, which test was running, the classes of the arguments
//! and of the answer. Gathered by a MethodProxies trap, each call ran a
//! dozen Smalltalk sends of hooks around the method (a whole-Kernel coverage
//! of the bundled suites took 25 times a plain run). A watch
//! ([`Vm::start_watch`](crate::Vm::start_watch)) names the methods instead,
//! and the interpreter records each call itself:
//!
//! - **which calls**: every call of a watched method made at the base level
//!   (the program's own; a call made by instrumentation code, at the meta
//!   level, is never counted), however it runs: with a frame, as a
//!   primitive, as a trivial method without a frame, or a special send
//!   (`+`, `at:`, `value`...) whose fast path would skip the lookup (while a
//!   watched method has a special selector, the observing loop looks before
//!   it takes one: `Vm::special_is_instrumented`). A method reached through
//!   a proxy's trap is counted when the trap runs it (its code is the same);
//! - **receivers** ([`RECEIVERS`]): distinct by identity, without keeping
//!   them alive: [`Distinct`] holds identity hashes (with the class), exact
//!   up to [`EXACT_LIMIT`], then a HyperLogLog estimate;
//! - **tags** ([`TAGS`]): the tag in force at the call (a number the
//!   program sets with `System>>watch:tag:`, e.g. the running test);
//! - **arguments** ([`ARGUMENTS`]): the classes seen at each argument index;
//! - **answers** ([`ANSWERS`]): the classes of what the calls answered. A
//!   call that answers at once (a primitive, a trivial method) is recorded
//!   there; one that pushed a frame is recorded when that frame returns (a
//!   non-local return to it and an exception handler returning from it
//!   included); one unwound past is not (it answered nothing);
//! - **the same answer** ([`SAME_ANSWER`]): whether every answer was one
//!   object (by identity) other than the receiver, and that object (kept,
//!   as a profiler's hook would keep it, until an answer differs);
//! - **receiver fields** ([`RECEIVER_FIELDS`]): whether a call changed a
//!   named field of its receiver (its fields are compared by identity
//!   before and after the call, until one call changed them; what it does
//!   to other objects is not seen).
//!
//! Watches may nest (a profiler run inside a profiled program): a call is
//! recorded by every watch that names its method. The only heap references
//! held are the same answers and, during a call, its receiver and the
//! snapshot of its fields: the collector updates them as roots
//! ([`Watches::visit_roots`]).
//!
//! Cost: nothing while no watch is on (one flag tested per invoke). While one
//! is, the interpreter takes its activation path (trivial methods through
//! `invoke`, returns test the frame's `WATCHED` flag; nothing is announced
//! per activation, as activation hooks are), and native code runs, whenever
//! the watch started: a method's direct entry refuses a native call while a
//! watch is on, and the runtime's `watched call` entry makes the call
//! instead (the entry's checks, the probe of the caller's inline-cache
//! entry made on the site's cache, the send counted, the call recorded when
//! a watch names the method, the frame pushed, the method's native code
//! called: no lookup and no instruction decoded); a site compiled to inline
//! a trivial method or run a leaf primitive has the runtime's `primitive`
//! entry `invoke` it; every return goes through the runtime's return, which
//! records a `WATCHED` frame's answer and pops a frame that would have
//! returned inline as native code pops it (`Vm::native_watched_call`,
//! `Vm::native_return`). Code compiled while a watch is on does not leave
//! native code for a call that would record nothing new: per method id a
//! [`WatchCell`] (a monomorphic cache of the recording, rebuilt when watches
//! start and stop, missed when a tag changes or a collection moves the
//! receiver it holds, refilled by the runtime at each call it records) holds
//! a receiver and argument classes already recorded and an answer class
//! already recorded; a direct entry or a trivial method's site that finds
//! the same ones there (compared in native code) only counts the call in the
//! cell (folded into the watch's count when watches start and stop) and
//! goes on natively; the frame it pushes is flagged `ANSWER`, and its
//! return, when the answer's class is the cell's, pops it inline (any other
//! answer is recorded by the runtime for the frame's method). A method no
//! watch names goes on natively; one two watches name, or whose watch
//! compares same answers or receiver fields, always asks the runtime.
//! While no watch records anything at the end of calls, returns stay
//! inline (`SLOW_CALLS`). A call asks what to record with one indexed load
//! ([`Watches::wants`], a table kept when watches start and stop); each
//! watch finds the method's facts by one more (`Watch::slot`); repeats are
//! cheap (the same receiver key or tag as the last call's is looked at
//! once, a class set compares its newest class first); an expected answer is a small `Copy` record pushed and, at the
//! frame's return, popped (the newest is the one in all but stale cases);
//! receiver fields are copied only while a method's are still compared,
//! into a stack the watches reuse (no allocation per call).

use rustc_hash::FxHashSet;

use lupa_heap::Value;

/// Record distinct receivers.
pub const RECEIVERS: u32 = 1;
/// Record the tags in force at the calls.
pub const TAGS: u32 = 2;
/// Record the classes of the arguments.
pub const ARGUMENTS: u32 = 4;
/// Record the classes of the answers.
pub const ANSWERS: u32 = 8;
/// Record whether every answer was the same object.
pub const SAME_ANSWER: u32 = 16;
/// Record whether a call changed a named field of its receiver.
pub const RECEIVER_FIELDS: u32 = 32;
/// Every option.
pub const ALL: u32 = RECEIVERS | TAGS | ARGUMENTS | ANSWERS | SAME_ANSWER | RECEIVER_FIELDS;
/// Set in what [`Watches::wants`] answers when a watch names the method
/// (whatever its options).
pub const NAMED: u32 = 1 << 31;
/// Set in what [`Watches::wants`] answers when the method has a cell native
/// code may use ([`WatchCell`]; the runtime refills it at each call it
/// records: [`Watches::refill`]).
pub const CELLED: u32 = 1 << 30;
/// The options that need each call's end.
pub const AT_THE_END: u32 = ANSWERS | SAME_ANSWER | RECEIVER_FIELDS;

/// What native code may do at a direct entry of a method while only method
/// watches are on, by method id ([`Watches::cells`], read through
/// `NativeCtx::watch_cells`): a monomorphic cache of what the method's last
/// recorded call was, so that a call that would record nothing new (only its
/// count) stays in native code. `#[repr(C)]`: native code reads it at fixed
/// offsets.
///
/// [`WatchCell::mode`] is 0 for a method no watch names (the call goes on
/// as without a watch); at or above [`CELL_OFF`] the call goes through the
/// runtime, which records it ([`CELL_OFF`]: always, e.g. a method two
/// watches name, or one whose watch compares same answers or receiver
/// fields; [`CELL_MISS`]: until the runtime records its next call, when
/// what the cell holds is not known to be recorded). Otherwise its bits say
/// what native code compares with what the cell holds before it only adds
/// one to [`WatchCell::calls`] (folded into the watch's count when the
/// watches change or are read): [`CELL_RECEIVER`], [`CELL_ARGUMENTS`]; with
/// [`CELL_ANSWER`], the frame pushed is flagged `WATCHED | ANSWER` (its
/// return records its answer for its method, [`Watches::answer`], unless
/// the answer's class is [`WatchCell::answer`], one already recorded).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WatchCell {
    /// 0, the [`CELL_NAMED`] bits, or at least [`CELL_OFF`].
    pub mode: u64,
    /// Calls native code counted here (not yet in the watch's facts).
    pub calls: u64,
    /// A receiver (its bits) whose identity key is recorded (valid until a
    /// collection moves objects: [`Watches::visit_roots`]).
    pub receiver: u64,
    /// A class index among the recorded answer classes, or [`NO_CLASS`].
    pub answer: u64,
    /// Per argument, a class index among those recorded at its index.
    pub arguments: [u64; CELL_ARGUMENTS_MAX],
}

/// [`WatchCell::mode`]: a watch names the method (native code counts it).
pub const CELL_NAMED: u64 = 1;
/// [`WatchCell::mode`]: the receiver must be [`WatchCell::receiver`].
pub const CELL_RECEIVER: u64 = 2;
/// [`WatchCell::mode`]: the arguments' classes must be [`WatchCell::arguments`].
pub const CELL_ARGUMENTS: u64 = 4;
/// [`WatchCell::mode`]: the frame's answer is recorded at its return, by
/// its method (the frame flagged `Frame::ANSWER`).
pub const CELL_ANSWER: u64 = 8;
/// [`WatchCell::mode`] at or above it: the runtime records the call.
pub const CELL_OFF: u64 = 1 << 62;
/// [`WatchCell::mode`]: until the runtime records the next call.
pub const CELL_MISS: u64 = 1 << 63;
/// Arguments a [`WatchCell`] compares (a method with more has [`CELL_OFF`]).
pub const CELL_ARGUMENTS_MAX: usize = 4;
/// No class ([`WatchCell::answer`]).
pub const NO_CLASS: u64 = u64::MAX;

/// Where native code finds the cells ([`Watches::table`], read through
/// `NativeCtx::watch_cells`): their address and count, kept by the watches
/// whenever they rebuild them (the table itself does not move while native
/// code runs).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CellTable {
    /// The first cell's address.
    pub cells: u64,
    /// Cells (a method made since has none: the runtime records its calls).
    pub len: u64,
}

impl WatchCell {
    const UNNAMED: WatchCell = WatchCell {
        mode: 0,
        calls: 0,
        receiver: 0,
        answer: NO_CLASS,
        arguments: [NO_CLASS; CELL_ARGUMENTS_MAX],
    };
}

/// Distinct values counted exactly up to this many.
pub const EXACT_LIMIT: usize = 1024;
/// HyperLogLog registers past [`EXACT_LIMIT`] (standard error 1.04 / 64 = 1.6%).
const REGISTERS: usize = 4096;

/// Distinct 64-bit keys counted without keeping what they stand for: exact
/// up to [`EXACT_LIMIT`], then a HyperLogLog sketch of 4096 registers
/// (Flajolet et al. 2007; linear counting below 2.5 x 4096). The same key
/// twice in a row is looked at once.
#[derive(Debug, Clone, Default)]
pub struct Distinct {
    exact: FxHashSet<u64>,
    registers: Option<Box<[u8; REGISTERS]>>,
    last: Option<u64>,
}

/// A 64-bit mix (splitmix64's finaliser), so that nearby keys spread.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

impl Distinct {
    /// Count `key`.
    pub fn add(&mut self, key: u64) {
        if self.last == Some(key) {
            return;
        }
        self.last = Some(key);
        if let Some(r) = self.registers.as_mut() {
            Self::add_hash(r, key);
            return;
        }
        self.exact.insert(key);
        if self.exact.len() > EXACT_LIMIT {
            let mut r = Box::new([0u8; REGISTERS]);
            for &k in &self.exact {
                Self::add_hash(&mut r, k);
            }
            self.exact = FxHashSet::default();
            self.registers = Some(r);
        }
    }

    fn add_hash(r: &mut [u8; REGISTERS], key: u64) {
        let h = mix(key);
        let index = (h as usize) & (REGISTERS - 1);
        let rest = h >> 12;
        let rank = (rest.trailing_zeros() + 1).min(53) as u8;
        if rank > r[index] {
            r[index] = rank;
        }
    }

    /// How many distinct keys (exact, or the estimate).
    pub fn count(&self) -> u64 {
        let Some(r) = self.registers.as_ref() else {
            return self.exact.len() as u64;
        };
        let m = REGISTERS as f64;
        let sum: f64 = r.iter().map(|&x| 2f64.powi(-i32::from(x))).sum();
        let zeros = r.iter().filter(|&&x| x == 0).count();
        let raw = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
        if raw <= 2.5 * m && zeros > 0 {
            return (m * (m / zeros as f64).ln()).round() as u64;
        }
        raw.round() as u64
    }

    /// Is [`Distinct::count`] an estimate?
    pub fn is_estimated(&self) -> bool {
        self.registers.is_some()
    }
}

/// What one watch saw of one method.
#[derive(Debug, Clone, Default)]
pub struct MethodFacts {
    /// Calls at the base level.
    pub executions: u64,
    /// Distinct receivers (with [`RECEIVERS`]).
    pub receivers: Distinct,
    /// The tags in force at its calls, in the order first seen (with [`TAGS`]).
    pub tags: Vec<u32>,
    last_tag: Option<u32>,
    /// Per argument index, the class indices seen, in the order first seen
    /// (with [`ARGUMENTS`]).
    pub arguments: Vec<Vec<u32>>,
    /// The class indices of its answers, in the order first seen (with [`ANSWERS`]).
    pub answers: Vec<u32>,
    /// Calls that answered (with [`SAME_ANSWER`]).
    pub answered: u64,
    /// What its answers were (with [`SAME_ANSWER`]).
    pub same: Same,
    /// Did a call change a named field of its receiver (with [`RECEIVER_FIELDS`])?
    pub changed_receiver: bool,
}

/// What the answers of a method's calls were, by identity.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Same {
    /// None yet.
    #[default]
    Unseen,
    /// Always this object, never the receiver.
    One(Value),
    /// Not always the same, or the receiver.
    Varied,
}

/// Add `class` to a set of classes in the order first seen (the newest, most
/// often the one seen again, is compared first).
#[inline(always)]
fn add_class(set: &mut Vec<u32>, class: u32) {
    if set.last() != Some(&class) && !set.contains(&class) {
        set.push(class);
    }
}

/// One watch: its methods and what it saw of them.
#[derive(Debug, Clone)]
pub struct Watch {
    /// Its number (answered by `start`).
    pub id: u32,
    options: u32,
    /// Per method id, its slot + 1 (0: not watched).
    slot_of: Vec<u32>,
    /// The methods as given: each one's slot.
    order: Vec<u32>,
    facts: Vec<MethodFacts>,
    tag: Option<u32>,
}

impl Watch {
    /// What it saw of each method, in the order they were given (a method
    /// given twice appears twice, with the same facts).
    pub fn facts(&self) -> impl Iterator<Item = &MethodFacts> {
        self.order.iter().map(|&s| &self.facts[s as usize])
    }

    #[inline]
    fn slot(&self, method: u32) -> Option<usize> {
        match self.slot_of.get(method as usize) {
            Some(&s) if s > 0 => Some(s as usize - 1),
            _ => None,
        }
    }
}

/// Named fields read before a call, while it runs: the first
/// [`INLINE_FIELDS`] in place (no allocation for most objects), the rest in
/// `spill`. A call that goes on in a frame keeps them in the watches' field
/// stack ([`Snapshot`]).
#[derive(Debug, Clone)]
pub struct Fields {
    inline: [Value; INLINE_FIELDS],
    len: usize,
    spill: Vec<Value>,
}

/// Fields a [`Fields`] holds without allocating.
pub const INLINE_FIELDS: usize = 6;

impl Default for Fields {
    fn default() -> Fields {
        Fields {
            inline: [Value::NIL; INLINE_FIELDS],
            len: 0,
            spill: Vec::new(),
        }
    }
}

impl Fields {
    /// Add the next field.
    pub fn push(&mut self, v: Value) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = v,
            None => self.spill.push(v),
        }
        self.len += 1;
    }

    /// How many fields.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Is it empty?
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Field `i` (nil past the end).
    pub fn get(&self, i: usize) -> Value {
        match self.inline.get(i) {
            Some(&v) if i < self.len => v,
            Some(_) => Value::NIL,
            None => self
                .spill
                .get(i - INLINE_FIELDS)
                .copied()
                .unwrap_or(Value::NIL),
        }
    }

    /// The fields in order.
    pub fn iter(&self) -> impl Iterator<Item = Value> + '_ {
        let n = self.len.min(INLINE_FIELDS);
        self.inline[..n].iter().chain(&self.spill).copied()
    }
}

/// Where the named fields of a pending call's receiver, read before the
/// call, are kept ([`Watches::expect_answer`]): a range of the watches'
/// field stack.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Snapshot {
    start: u32,
    len: u32,
}

impl Snapshot {
    fn end(self) -> usize {
        self.start as usize + self.len as usize
    }
}

/// A call whose answer is still to come: the frame at `depth` of `process`
/// answers for `method`, called on `receiver` whose named fields are in
/// `fields` (with [`RECEIVER_FIELDS`], while undecided). Small and `Copy`:
/// expecting and answering a call moves a few words.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    process: usize,
    depth: usize,
    /// The method called.
    pub method: u32,
    /// The receiver of the call.
    pub receiver: Value,
    /// Its named fields before the call (when they are compared).
    pub fields: Option<Snapshot>,
    /// The field stack's length when the call was expected (what lies
    /// below is kept while it is pending).
    top: usize,
}

/// The watches on now.
#[derive(Debug, Default)]
pub struct Watches {
    list: Vec<Watch>,
    next_id: u32,
    /// Per method id, what [`Watches::wants`] answers: the options of every
    /// watch that names it, with [`NAMED`] (kept when watches start and
    /// stop, so that each call asks one indexed load).
    wants: Vec<u32>,
    /// The calls whose answers are to come, oldest first (each process's
    /// in the order of its frames).
    pending: Vec<Pending>,
    /// The receiver fields of pending calls ([`Snapshot`]s), in the order of
    /// `pending`: what lies past the newest pending call's `top` is free.
    fields: Vec<Value>,
    /// Per method id, what native code may do at its direct entry
    /// ([`WatchCell`]); rebuilt when watches start and stop, empty while none
    /// is on.
    cells: Vec<WatchCell>,
    /// Where `cells` are, for native code.
    table: CellTable,
    /// The cells given a receiver since the last collection (which misses
    /// them: [`Watches::visit_roots`]).
    holding: Vec<u32>,
}

impl Watches {
    /// Is any watch on? (Tested by every `invoke`: one length compare.)
    #[inline(always)]
    pub fn is_on(&self) -> bool {
        !self.list.is_empty()
    }

    /// Start watching `methods` (method ids) with `options`: answers the
    /// watch's number.
    pub fn start(&mut self, methods: &[u32], options: u32) -> u32 {
        self.fold_calls();
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let mut w = Watch {
            id: self.next_id,
            options: options & ALL,
            slot_of: Vec::new(),
            order: Vec::with_capacity(methods.len()),
            facts: Vec::new(),
            tag: None,
        };
        for &m in methods {
            let i = m as usize;
            if w.slot_of.len() <= i {
                w.slot_of.resize(i + 1, 0);
            }
            if w.slot_of[i] == 0 {
                w.facts.push(MethodFacts::default());
                w.slot_of[i] = w.facts.len() as u32;
            }
            w.order.push(w.slot_of[i] - 1);
        }
        self.list.push(w);
        self.refresh_wants();
        self.next_id
    }

    /// Stop watch `id` and answer it (None: no such watch).
    pub fn stop(&mut self, id: u32) -> Option<Watch> {
        let i = self.list.iter().position(|w| w.id == id)?;
        self.fold_calls();
        let w = self.list.remove(i);
        if !self.answers_expected() {
            self.pending.clear();
            self.fields.clear();
        }
        self.refresh_wants();
        Some(w)
    }

    /// Does a watch record something at the end of calls ([`AT_THE_END`])?
    /// (While none does, no return needs the runtime, and nothing is pending.)
    pub fn answers_expected(&self) -> bool {
        self.list.iter().any(|w| w.options & AT_THE_END != 0)
    }

    /// The cells native code reads at direct entries ([`WatchCell`], by
    /// method id; empty while no watch is on). Native code adds to their
    /// [`WatchCell::calls`] (folded into the facts when watches start and
    /// stop).
    pub fn cells(&mut self) -> &mut [WatchCell] {
        &mut self.cells
    }

    /// Are there cells (rebuilt for native code since a watch started)?
    pub fn has_cells(&self) -> bool {
        !self.cells.is_empty()
    }

    /// Where native code finds the cells (the address of a table the
    /// watches keep up to date: valid while they do not move).
    pub fn table(&self) -> *const CellTable {
        &self.table
    }

    /// Rebuild the cells for the watches on now, for `methods` method ids
    /// (None: no cells, native code asks the runtime; the calls counted in
    /// the old ones folded first): 0 for a method no
    /// watch names; [`CELL_OFF`] for one more than one watch names, or whose
    /// watch compares same answers or receiver fields; otherwise what its
    /// watch's options ask compared, missed until the runtime records a
    /// call. Called when watches start and stop.
    pub fn rebuild_cells(&mut self, methods: Option<usize>) {
        self.fold_calls();
        self.cells.clear();
        self.holding.clear();
        self.table = CellTable::default();
        for wants in &mut self.wants {
            *wants &= !CELLED;
        }
        let Some(methods) = methods.filter(|_| self.is_on()) else {
            return;
        };
        self.cells
            .resize(methods.max(self.wants.len()), WatchCell::UNNAMED);
        for m in 0..self.wants.len() {
            let wants = self.wants[m];
            if wants == 0 {
                continue;
            }
            let naming = self.list.iter().filter(|w| w.slot(m as u32).is_some());
            let mode = if naming.count() != 1 || wants & (SAME_ANSWER | RECEIVER_FIELDS) != 0 {
                CELL_OFF
            } else {
                CELL_MISS
                    | CELL_NAMED
                    | if wants & RECEIVERS != 0 {
                        CELL_RECEIVER
                    } else {
                        0
                    }
                    | if wants & ARGUMENTS != 0 {
                        CELL_ARGUMENTS
                    } else {
                        0
                    }
                    | if wants & ANSWERS != 0 { CELL_ANSWER } else { 0 }
            };
            self.cells[m].mode = mode;
            if mode & CELL_OFF == 0 {
                self.wants[m] |= CELLED;
            }
        }
        self.table = CellTable {
            cells: self.cells.as_mut_ptr() as u64,
            len: self.cells.len() as u64,
        };
    }

    /// Add the calls native code counted in the cells to the facts of the
    /// watch that names each method (one watch: the cell says so).
    fn fold_calls(&mut self) {
        for (m, c) in self.cells.iter_mut().enumerate() {
            if c.calls == 0 {
                continue;
            }
            let n = std::mem::take(&mut c.calls);
            for w in &mut self.list {
                if let Some(s) = w.slot(m as u32) {
                    w.facts[s].executions += n;
                }
            }
        }
    }

    /// A collection moved objects: the receivers the cells hold no longer
    /// name theirs (their next calls are recorded by the runtime).
    fn objects_moved(&mut self) {
        for m in self.holding.drain(..) {
            if let Some(c) = self.cells.get_mut(m as usize) {
                c.mode |= CELL_MISS;
            }
        }
    }

    /// Recompute [`Watches::wants`]'s table from the watches on.
    fn refresh_wants(&mut self) {
        self.wants.clear();
        for w in &self.list {
            if self.wants.len() < w.slot_of.len() {
                self.wants.resize(w.slot_of.len(), 0);
            }
            for (wants, &s) in self.wants.iter_mut().zip(&w.slot_of) {
                if s > 0 {
                    *wants |= w.options | NAMED;
                }
            }
        }
    }

    /// Set the tag of watch `id` (None: no tag); false when there is no such watch.
    pub fn set_tag(&mut self, id: u32, tag: Option<u32>) -> bool {
        match self.list.iter_mut().find(|w| w.id == id) {
            Some(w) => {
                if w.options & TAGS != 0 && w.tag != tag {
                    // A tag its methods' facts may not have: their next
                    // calls are recorded by the runtime.
                    for (m, &s) in w.slot_of.iter().enumerate() {
                        if let Some(c) = self.cells.get_mut(m)
                            && s > 0
                            && c.mode & CELL_OFF == 0
                        {
                            c.mode |= CELL_MISS;
                        }
                    }
                }
                w.tag = tag;
                true
            }
            None => false,
        }
    }

    /// The options of every watch that names `method`, with [`NAMED`] (0:
    /// none does). One indexed load.
    #[inline(always)]
    pub fn wants(&self, method: u32) -> u32 {
        self.wants.get(method as usize).copied().unwrap_or(0)
    }

    /// The methods the watches name.
    pub fn named(&self) -> impl Iterator<Item = u32> + '_ {
        self.wants
            .iter()
            .enumerate()
            .filter(|&(_, &o)| o != 0)
            .map(|(m, _)| m as u32)
    }

    /// A call of `method` (with [`CELLED`] in its [`Watches::wants`]) on
    /// `receiver` with arguments of the classes `arguments` (with
    /// [`ARGUMENTS`]) was just recorded: its cell holds them now, so that a
    /// call of the same receiver with arguments of the same classes records
    /// nothing more but its count.
    #[inline(always)]
    pub fn refill(&mut self, method: u32, receiver: Value, arguments: &[u32]) {
        if let Some(c) = self.cells.get_mut(method as usize)
            && c.mode & CELL_OFF == 0
            && arguments.len() <= CELL_ARGUMENTS_MAX
        {
            c.receiver = receiver.raw();
            for (a, &k) in c.arguments.iter_mut().zip(arguments) {
                *a = u64::from(k);
            }
            if c.mode & (CELL_MISS | CELL_RECEIVER) == CELL_MISS | CELL_RECEIVER {
                self.holding.push(method);
            }
            c.mode &= !CELL_MISS;
        }
    }

    /// A call of `method`: `receiver` its identity key (with [`RECEIVERS`]),
    /// `arguments` its arguments' classes (with [`ARGUMENTS`]).
    #[inline(always)]
    pub fn call(&mut self, method: u32, receiver: u64, arguments: &[u32]) {
        for w in &mut self.list {
            let Some(s) = w.slot(method) else { continue };
            let (options, tag) = (w.options, w.tag);
            let f = &mut w.facts[s];
            f.executions += 1;
            if options & RECEIVERS != 0 {
                f.receivers.add(receiver);
            }
            if options & TAGS != 0
                && let Some(t) = tag
                && f.last_tag != Some(t)
            {
                f.last_tag = Some(t);
                if !f.tags.contains(&t) {
                    f.tags.push(t);
                }
            }
            if options & ARGUMENTS != 0 {
                if f.arguments.len() < arguments.len() {
                    f.arguments.resize_with(arguments.len(), Vec::new);
                }
                for (set, &c) in f.arguments.iter_mut().zip(arguments) {
                    add_class(set, c);
                }
            }
        }
    }

    /// Does a watch compare the receiver fields of `method`'s calls (none
    /// of them has changed them yet)?
    pub fn compares_fields(&self, method: u32) -> bool {
        self.list.iter().any(|w| {
            w.options & RECEIVER_FIELDS != 0
                && w.slot(method).is_some_and(|s| !w.facts[s].changed_receiver)
        })
    }

    /// A call of `method` on `receiver` answered `answer`, an instance of
    /// class `class`; `changed` tells whether it changed a named field of
    /// the receiver (None: not compared).
    #[inline(always)]
    pub fn answer(
        &mut self,
        method: u32,
        receiver: Value,
        answer: Value,
        class: u32,
        changed: Option<bool>,
    ) {
        for w in &mut self.list {
            let Some(s) = w.slot(method) else { continue };
            let f = &mut w.facts[s];
            if w.options & ANSWERS != 0 {
                add_class(&mut f.answers, class);
            }
            if w.options & SAME_ANSWER != 0 {
                f.answered += 1;
                f.same = match f.same {
                    _ if answer == receiver => Same::Varied,
                    Same::Unseen => Same::One(answer),
                    Same::One(first) if first == answer => Same::One(first),
                    _ => Same::Varied,
                };
            }
            if w.options & RECEIVER_FIELDS != 0 && changed == Some(true) {
                f.changed_receiver = true;
            }
        }
    }

    /// A call of `method` just recorded as answering an instance of class
    /// `class` (a frameless one, or an `ANSWER` frame's): its cell holds
    /// the class, so that a call answering one of it records nothing more.
    pub fn note_answer(&mut self, method: u32, class: u32) {
        if let Some(c) = self.cells.get_mut(method as usize)
            && c.mode & (CELL_OFF | CELL_ANSWER) == CELL_ANSWER
        {
            c.answer = u64::from(class);
        }
    }

    /// The fields a [`Snapshot`] holds (those of a call just answered stay
    /// readable until the next call is expected).
    pub fn fields(&self, s: Snapshot) -> &[Value] {
        self.fields.get(s.start as usize..s.end()).unwrap_or(&[])
    }

    /// The call of `method` on `receiver` goes on in the frame at `depth`
    /// of `process`: its return answers for it. Its receiver's `fields`
    /// are kept on the field stack, past the pending calls' (what lay there,
    /// the fields of calls answered since, is given back: no allocation
    /// once the stack has grown).
    #[inline]
    pub fn expect_answer(
        &mut self,
        process: usize,
        depth: usize,
        method: u32,
        receiver: Value,
        fields: Option<&Fields>,
    ) {
        let fields = fields.map(|f| {
            self.fields
                .truncate(self.pending.last().map_or(0, |p| p.top));
            let start = self.fields.len();
            self.fields.extend(f.iter());
            Snapshot {
                start: start as u32,
                len: (self.fields.len() - start) as u32,
            }
        });
        self.pending.push(Pending {
            process,
            depth,
            method,
            receiver,
            fields,
            top: self.fields.len(),
        });
    }

    /// Visit the heap references held (the collector updates them).
    pub fn visit_roots(&mut self, root: &mut impl FnMut(&mut Value)) {
        // The cells' receivers are not kept (nor updated): a collection
        // misses them.
        self.objects_moved();
        for w in &mut self.list {
            for f in &mut w.facts {
                if let Same::One(v) = &mut f.same {
                    root(v);
                }
            }
        }
        for p in &mut self.pending {
            root(&mut p.receiver);
        }
        // The part past the pending calls' too: it was kept up to date by
        // every collection since it was written, and may be read once more.
        for v in &mut self.fields {
            root(v);
        }
    }

    /// The frame at `depth` of `process` returns: the call it answers for,
    /// if any (its fields stay readable until the next call is expected).
    /// (Expectations of deeper frames of the process, which can only be
    /// stale, are dropped.) The newest expectation is the common case: one
    /// compare and a pop.
    #[inline]
    pub fn answered(&mut self, process: usize, depth: usize) -> Option<Pending> {
        match self.pending.last() {
            Some(p) if p.process == process && p.depth == depth => self.pending.pop(),
            _ => self.answered_below(process, depth),
        }
    }

    /// [`Watches::answered`] when the newest expectation is not the one.
    #[inline(never)]
    fn answered_below(&mut self, process: usize, depth: usize) -> Option<Pending> {
        loop {
            let i = self.pending.iter().rposition(|p| p.process == process)?;
            if self.pending[i].depth < depth {
                return None;
            }
            let p = self.pending.remove(i);
            if p.depth == depth {
                return Some(p);
            }
        }
    }

    /// The frame at `depth` of `process` is unwound: it answers nothing.
    pub fn unwound(&mut self, process: usize, depth: usize) {
        let _ = self.answered(process, depth);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_is_exact_up_to_the_limit_then_close() {
        let mut d = Distinct::default();
        for k in 0..EXACT_LIMIT as u64 {
            d.add(k * 7919);
            d.add(k * 7919);
        }
        assert_eq!(d.count(), EXACT_LIMIT as u64);
        assert!(!d.is_estimated());
        for k in 0..100_000u64 {
            d.add(k * 7919);
        }
        assert!(d.is_estimated());
        let n = d.count() as f64;
        // Six standard errors (1.6%) either side.
        assert!((n - 100_000.0).abs() < 100_000.0 * 0.1, "estimate {n}");
    }

    #[test]
    fn calls_are_recorded_by_every_watch_naming_the_method() {
        let mut w = Watches::default();
        let a = w.start(&[3, 5, 3], ALL);
        let b = w.start(&[5], RECEIVERS);
        assert_eq!(w.wants(5), ALL | NAMED);
        assert_eq!(w.wants(4), 0);
        w.set_tag(a, Some(7));
        w.call(5, 1, &[10, 11]);
        w.call(5, 2, &[10, 12]);
        w.set_tag(a, Some(8));
        w.call(5, 2, &[13, 11]);
        w.answer(5, Value::NIL, Value::TRUE, 20, None);
        let wb = w.stop(b).expect("watch b");
        let f: Vec<_> = wb.facts().collect();
        assert_eq!((f[0].executions, f[0].receivers.count()), (3, 2));
        assert!(f[0].tags.is_empty() && f[0].arguments.is_empty());
        let wa = w.stop(a).expect("watch a");
        let f: Vec<_> = wa.facts().collect();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].executions, 0);
        assert_eq!(f[1].tags, vec![7, 8]);
        assert_eq!(f[1].arguments, vec![vec![10, 13], vec![11, 12]]);
        assert_eq!(f[1].answers, vec![20]);
        assert!(!w.is_on());
    }

    #[test]
    fn answers_come_from_the_frame_of_the_call_and_not_from_unwound_ones() {
        let mut w = Watches::default();
        w.start(&[1, 2], ANSWERS);
        let r = Value::NIL;
        w.expect_answer(0, 4, 1, r, None);
        w.expect_answer(1, 2, 2, r, None);
        w.expect_answer(0, 6, 2, r, None);
        let method = |p: Option<Pending>| p.map(|p| p.method);
        assert_eq!(method(w.answered(0, 5)), None);
        w.unwound(0, 6);
        assert_eq!(method(w.answered(0, 6)), None);
        assert_eq!(method(w.answered(1, 2)), Some(2));
        // A stale deeper expectation does not hide the one at the depth.
        w.expect_answer(0, 9, 2, r, None);
        assert_eq!(method(w.answered(0, 4)), Some(1));
        assert!(w.pending.is_empty());
    }

    #[test]
    fn fields_hold_past_the_inline_ones() {
        let mut f = Fields::default();
        assert!(f.is_empty());
        for i in 0..10 {
            f.push(Value::small(i));
        }
        assert_eq!(f.len(), 10);
        assert_eq!(f.get(3), Value::small(3));
        assert_eq!(f.get(8), Value::small(8));
        assert_eq!(f.get(10), Value::NIL);
        assert_eq!(
            f.iter().collect::<Vec<_>>(),
            (0..10).map(Value::small).collect::<Vec<_>>()
        );
    }

    fn fields_of(v: &[i64]) -> Fields {
        let mut f = Fields::default();
        for &i in v {
            f.push(Value::small(i));
        }
        f
    }

    #[test]
    fn fields_are_kept_while_their_calls_are_pending() {
        let mut w = Watches::default();
        w.start(&[1], RECEIVER_FIELDS);
        let small = |v: &[i64]| v.iter().map(|&i| Value::small(i)).collect::<Vec<_>>();
        w.expect_answer(0, 1, 1, Value::NIL, Some(&fields_of(&[1, 2, 3])));
        w.expect_answer(0, 2, 1, Value::NIL, Some(&fields_of(&[7; 10])));
        let p = w.answered(0, 2).expect("the call at depth 2");
        assert_eq!(
            p.fields.map(|s| w.fields(s).to_vec()),
            Some(small(&[7; 10]))
        );
        // Given back when the next call is expected.
        w.expect_answer(0, 2, 1, Value::NIL, Some(&fields_of(&[4])));
        assert_eq!(w.fields.len(), 4);
        let p = w.answered(0, 2).expect("the call at depth 2");
        assert_eq!(p.fields.map(|s| w.fields(s).to_vec()), Some(small(&[4])));
        let p = w.answered(0, 1).expect("the call at depth 1");
        assert_eq!(
            p.fields.map(|s| w.fields(s).to_vec()),
            Some(small(&[1, 2, 3]))
        );
        // None pending: the next call's fields start at the bottom again.
        w.expect_answer(0, 1, 1, Value::NIL, Some(&fields_of(&[5])));
        assert_eq!(w.fields.len(), 1);
    }

    /// What `answered` must answer: the expectation the old linear search
    /// found (the newest of the process; an older depth ends the search;
    /// deeper, stale ones are dropped), with the fields it was given.
    #[derive(Debug, Clone)]
    enum Op {
        Expect(usize, usize, Option<Vec<i64>>),
        Answered(usize, usize),
        Unwound(usize, usize),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let fields = proptest::collection::vec(0i64..100, 0..9);
        prop_oneof![
            (0usize..3, 0usize..8, proptest::option::of(fields))
                .prop_map(|(p, d, f)| Op::Expect(p, d, f)),
            (0usize..3, 0usize..8).prop_map(|(p, d)| Op::Answered(p, d)),
            (0usize..3, 0usize..8).prop_map(|(p, d)| Op::Unwound(p, d)),
        ]
    }

    fn model_answered(
        model: &mut Vec<(usize, usize, u32, Option<Vec<i64>>)>,
        process: usize,
        depth: usize,
    ) -> Option<(u32, Option<Vec<i64>>)> {
        loop {
            let i = model.iter().rposition(|p| p.0 == process)?;
            if model[i].1 < depth {
                return None;
            }
            let p = model.remove(i);
            if p.1 == depth {
                return Some((p.2, p.3));
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_answer_stack_answers_as_the_model(ops in proptest::collection::vec(op(), 0..200)) {
            let mut w = Watches::default();
            w.start(&[0], ALL);
            let mut model = Vec::new();
            let small = |v: &[i64]| v.iter().map(|&i| Value::small(i)).collect::<Vec<_>>();
            for (k, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Expect(p, d, f) => {
                        let given = f.as_deref().map(fields_of);
                        w.expect_answer(p, d, k as u32, Value::NIL, given.as_ref());
                        model.push((p, d, k as u32, f));
                    }
                    Op::Answered(p, d) | Op::Unwound(p, d) => {
                        let got = w
                            .answered(p, d)
                            .map(|a| (a.method, a.fields.map(|s| w.fields(s).to_vec())));
                        let want = model_answered(&mut model, p, d)
                            .map(|(m, f)| (m, f.map(|f| small(&f))));
                        proptest::prop_assert_eq!(got, want);
                    }
                }
            }
        }
    }

    fn named_wants(options: u32) -> u32 {
        options | NAMED | CELLED
    }

    #[test]
    fn cells_hold_what_was_recorded_and_their_counts_are_folded() {
        let mut w = Watches::default();
        let a = w.start(&[1, 2], ARGUMENTS | ANSWERS | TAGS);
        w.rebuild_cells(Some(4));
        let mode = |w: &mut Watches, m: usize| w.cells()[m].mode;
        assert_eq!(mode(&mut w, 0), 0, "not named: goes on natively");
        let named = CELL_NAMED | CELL_ARGUMENTS | CELL_ANSWER;
        assert_eq!(mode(&mut w, 1), CELL_MISS | named);
        // A call recorded by the runtime fills the cell.
        assert_eq!(w.wants(1), named_wants(ARGUMENTS | ANSWERS | TAGS));
        w.call(1, 0, &[10]);
        w.refill(1, Value::small(3), &[10]);
        w.answer(1, Value::NIL, Value::TRUE, 20, None);
        w.note_answer(1, 20);
        assert_eq!(mode(&mut w, 1), named);
        assert_eq!((w.cells()[1].arguments[0], w.cells()[1].answer), (10, 20));
        // Native code counts calls there; a tag change misses the cell.
        w.cells()[1].calls += 5;
        w.set_tag(a, Some(4));
        assert_eq!(mode(&mut w, 1), CELL_MISS | named);
        // A second watch naming the method: its cell is off.
        let b = w.start(&[1], RECEIVERS);
        w.rebuild_cells(Some(4));
        assert_eq!(mode(&mut w, 1), CELL_OFF);
        assert_eq!(mode(&mut w, 2), CELL_MISS | named);
        w.stop(b);
        w.rebuild_cells(Some(4));
        let wa = w.stop(a).expect("watch a");
        let f: Vec<_> = wa.facts().collect();
        assert_eq!(f[0].executions, 6, "one recorded, five counted natively");
        // Receivers held are missed when objects move.
        w.start(&[1], RECEIVERS);
        w.rebuild_cells(Some(2));
        w.call(1, 7, &[]);
        w.refill(1, Value::small(3), &[]);
        assert_eq!(mode(&mut w, 1), CELL_NAMED | CELL_RECEIVER);
        w.visit_roots(&mut |_| {});
        assert_eq!(mode(&mut w, 1), CELL_MISS | CELL_NAMED | CELL_RECEIVER);
    }

    #[test]
    fn the_same_answer_is_one_object_never_the_receiver() {
        let mut w = Watches::default();
        let id = w.start(&[1, 2, 3], SAME_ANSWER | RECEIVER_FIELDS);
        let (a, b, r) = (Value::small(1), Value::small(2), Value::small(9));
        w.answer(1, r, a, 0, Some(false));
        w.answer(1, r, a, 0, Some(false));
        w.answer(2, r, a, 0, Some(false));
        w.answer(2, r, b, 0, Some(true));
        w.answer(3, r, r, 0, None);
        let f: Vec<_> = w.stop(id).expect("watch").facts().cloned().collect();
        assert_eq!(
            (f[0].answered, f[0].same, f[0].changed_receiver),
            (2, Same::One(a), false)
        );
        assert_eq!((f[1].same, f[1].changed_receiver), (Same::Varied, true));
        assert_eq!(f[2].same, Same::Varied);
    }
}
