//! What code generation reads of a method or block, copied on the VM thread
//! so that a compiler thread can compile it: a [`Unit`] is `Send` and holds
//! no `Rc`, no `Cell` and nothing of the `Image`.
//!
//! **Contract.** Codegen reads *only* a unit (never `MethodCode` or the
//! `Image`): the instructions and the frame's shape (immutable in a
//! `MethodCode`), the *addresses* of the cells native code reads at run time
//! (literals, selector ids, inline-cache entries: they live in the
//! `MethodCode`, which the image keeps for the whole run, so the addresses
//! stay valid and are only ever dereferenced by the compiled code, on the VM
//! thread), and what each send site's inline cache held when the unit was
//! made, with the facts codegen specialises on about each method it named
//! (arguments, trivial kind and operand). Those facts are fixed per method
//! id (a method's code never changes; a redefinition makes a new method with
//! a new id), and native code checks at run time that the cache still names
//! that method id for the receiver's class in the epoch now, so a unit made
//! some time before its code is installed is as correct as one made at the
//! install: a cache refilled meanwhile sends through the runtime.
//!
//! Nothing here is a heap address: literal values are read through their
//! cells (which the collector patches), so a collection between the copy
//! and the install moves nothing the code embeds.

use lupa_compiler::Op;
use lupa_vm::{
    CodeKind, CompileOptions, FastEntry, Image, MethodCode, TRIVIAL_NONE, leaf_primitive,
};

/// A send site's method that is a leaf primitive's (`leaf_primitive`): its
/// [`Seen::kind`] (not a trivial kind), which codegen calls by the runtime's
/// `primitive` entry.
pub(crate) const LEAF_PRIMITIVE: u64 = u64::MAX;

/// One inline-cache entry filled when the unit was made, and what codegen
/// needs of the method it named.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    /// The entry's address (native code probes it at run time).
    pub(crate) cell: i64,
    /// The receiver class it held.
    pub(crate) class: u32,
    /// The method it named.
    pub(crate) method: u32,
    /// That method's arguments.
    pub(crate) num_args: usize,
    /// Its trivial kind and operand (`FastEntry::trivial_of`;
    /// [`TRIVIAL_NONE`] for a trap, which runs its shortcut first;
    /// [`LEAF_PRIMITIVE`] for a leaf primitive's method).
    pub(crate) kind: u64,
    pub(crate) operand: u64,
}

/// A method or block as codegen reads it (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    /// Its id in the VM's method table (the function's name).
    pub(crate) id: u32,
    /// Its instructions.
    pub(crate) ops: Box<[Op]>,
    pub(crate) num_args: usize,
    pub(crate) num_temps: usize,
    pub(crate) max_stack: usize,
    /// Has it an environment of its own (`MethodCode::has_env`)?
    env: bool,
    /// Is it a block (its activations have a closure)?
    block: bool,
    /// Did the interpreter meet a Double, or compare a String, at its
    /// special sends (`MethodCode::saw_double`, `saw_string`)? Its inline
    /// Double and String paths are compiled only then.
    pub(crate) doubles: bool,
    pub(crate) strings: bool,
    /// `<metaLevel>`, `<baseLevel>` or `<trapShortcut>`.
    pub(crate) meta_level: bool,
    /// The address of each literal's cell.
    pub(crate) literals: Box<[i64]>,
    /// The address of each literal's selector-id cell.
    pub(crate) sel_ids: Box<[i64]>,
    /// Per send site: the inline-cache entries filled then.
    pub(crate) caches: Box<[Box<[Seen]>]>,
    /// Compiled to count line coverage's arrivals (`CompileOptions`): where
    /// its counters are.
    pub(crate) lines: Option<Box<LineCounters>>,
    /// Was a method watch on when the unit was made? A method's direct
    /// entry and return then look at the watches' cells in native code
    /// (`obs::watch::WatchCell`) before they ask the runtime; code made
    /// without a watch asks it (and plain runs compile nothing for it).
    pub(crate) watching: bool,
}

/// Where code compiled to count lines counts them (`codegen/lines.rs`).
#[derive(Debug, Clone)]
pub(crate) struct LineCounters {
    /// The address of its first arrivals counter (`MethodCode::arrivals`,
    /// one per instruction).
    pub(crate) arrivals: i64,
    /// Likewise, the first arrivals counter of each trivial method its send
    /// sites named (an inline run of one is its arrival at pc 0).
    pub(crate) trivial: Box<[(u32, i64)]>,
}

impl Unit {
    /// Copy what codegen reads of `code` (on the VM thread, at a safepoint),
    /// to compile with `options`, `watching` as [`Unit::watching`] says.
    pub(crate) fn of(
        code: &MethodCode,
        image: &Image,
        options: CompileOptions,
        watching: bool,
    ) -> Unit {
        // Line coverage's counters: made now, at addresses that stay valid
        // while the method lives (the whole run).
        let arrivals_of = |m: &MethodCode| m.arrivals.counters(m.ops.len()).as_ptr() as i64;
        let caches = code
            .caches
            .iter()
            .map(|pic| {
                pic.iter()
                    .filter_map(|cell| {
                        let e = cell.get();
                        if e.class == 0 {
                            return None;
                        }
                        let m = image.method_code(e.method)?;
                        // A trap runs its proxy's shortcut first (the
                        // interpreter's `invoke`): never inline.
                        let (kind, operand) = if m.trap_shortcut {
                            (TRIVIAL_NONE, 0)
                        } else if leaf_primitive(m) {
                            (LEAF_PRIMITIVE, 0)
                        } else {
                            FastEntry::trivial_of(m)
                        };
                        Some(Seen {
                            cell: cell.as_ptr() as i64,
                            class: e.class,
                            method: e.method,
                            num_args: m.num_args,
                            kind,
                            operand,
                        })
                    })
                    .collect()
            })
            .collect::<Box<[Box<[Seen]>]>>();
        let lines = options.count_lines.then(|| {
            let mut trivial: Vec<(u32, i64)> = Vec::new();
            for e in caches.iter().flatten() {
                if e.kind != TRIVIAL_NONE
                    && e.kind != LEAF_PRIMITIVE
                    && !trivial.iter().any(|t| t.0 == e.method)
                    && let Some(m) = image.method_code(e.method)
                {
                    trivial.push((e.method, arrivals_of(m)));
                }
            }
            Box::new(LineCounters {
                arrivals: arrivals_of(code),
                trivial: trivial.into_boxed_slice(),
            })
        });
        Unit {
            id: code.id,
            ops: code.ops.clone(),
            num_args: code.num_args,
            num_temps: code.num_temps,
            max_stack: code.max_stack,
            env: code.has_env(),
            block: code.kind == CodeKind::Block,
            doubles: code.saw_double.get(),
            strings: code.saw_string.get(),
            meta_level: code.meta_level,
            literals: code.literals.iter().map(|c| c.as_ptr() as i64).collect(),
            sel_ids: code.sel_ids.iter().map(|c| c.as_ptr() as i64).collect(),
            caches,
            lines,
            watching,
        }
    }

    /// Has it an environment of its own?
    pub(crate) fn has_env(&self) -> bool {
        self.env
    }

    /// Is it a block?
    pub(crate) fn is_block(&self) -> bool {
        self.block
    }

    /// The unit an entry stub is made over (`codegen/stubs.rs`): no
    /// instructions, a block's or a method's; what the stub knows of its
    /// callee are its parameters.
    pub(crate) fn stub(block: bool) -> Unit {
        Unit {
            id: 0,
            ops: Box::new([]),
            num_args: 0,
            num_temps: 0,
            max_stack: 0,
            env: false,
            block,
            doubles: false,
            strings: false,
            meta_level: false,
            literals: Box::new([]),
            sel_ids: Box::new([]),
            caches: Box::new([]),
            lines: None,
            watching: false,
        }
    }

    /// A method of `ops` with no arguments, temporaries, literals or send
    /// sites (for the compiler thread's tests).
    #[cfg(test)]
    pub(crate) fn for_tests(ops: Vec<Op>) -> Unit {
        Unit {
            ops: ops.into_boxed_slice(),
            max_stack: 2,
            ..Unit::stub(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn a_unit_crosses_threads() {
        assert_send::<Unit>();
    }
}
