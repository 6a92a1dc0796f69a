//! Interned symbols: [`Symbols`] maps a symbol id to its text and heap Symbol
//! object, and text back to the id.
//!
//! Contract: ids are dense and never reused (`names[id]`, `objects[id]`);
//! `by_name` and `names` always agree. The heap objects are GC roots, updated in
//! place by the collector; a Symbol object carries its id in its identity hash.

use lupa_heap::Value;
use std::collections::HashMap;
use std::rc::Rc;

/// Interned symbols: id <-> text <-> heap Symbol object.
#[derive(Default)]
pub(crate) struct Symbols {
    pub(crate) by_name: HashMap<Rc<str>, u32>,
    pub(crate) names: Vec<Rc<str>>,
    pub(crate) objects: Vec<Value>,
    /// Bytes of the symbols' texts.
    pub(crate) text_bytes: usize,
}

impl Symbols {
    /// The memory the table takes outside the heap, with one more symbol of
    /// `len` bytes (a VM-side table: symbols are never freed, so a program
    /// making them from strings is bounded by its share of `--max-heap`,
    /// `vm::side_tables`). An estimate: each text with its reference counts,
    /// the two vectors' and the map's capacity, doubled when they are full.
    pub(crate) fn side_bytes_with(&self, len: usize) -> usize {
        const RC_COUNTS: usize = 16;
        const MAP_ENTRY: usize = 32;
        let n = self.names.len() + 1;
        let grown = |cap: usize| if n > cap { (2 * cap).max(n) } else { cap };
        self.text_bytes
            + len
            + n * RC_COUNTS
            + grown(self.names.capacity()) * std::mem::size_of::<Rc<str>>()
            + grown(self.objects.capacity()) * std::mem::size_of::<Value>()
            + grown(self.by_name.capacity()) * MAP_ENTRY
    }

    /// The text of symbol `id`.
    pub(crate) fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map(|s| &**s).unwrap_or("")
    }

    /// The id of an already interned symbol.
    pub(crate) fn lookup(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }
}

/// Symbols the interpreter sends by itself.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WellKnownSymbols {
    pub(crate) dnu: u32,
    pub(crate) run_with_in: u32,
    pub(crate) escaped_block: u32,
    pub(crate) unknown_global: u32,
    pub(crate) must_be_boolean: u32,
    pub(crate) error: u32,
    pub(crate) value: u32,
    pub(crate) is_nil: u32,
    pub(crate) not_nil: u32,
    pub(crate) identical: u32,
    pub(crate) equal: u32,
}

impl WellKnownSymbols {
    pub(crate) fn new(image: &mut super::Image) -> Self {
        WellKnownSymbols {
            dnu: image.intern("doesNotUnderstand:arguments:"),
            run_with_in: image.intern("run:with:in:"),
            escaped_block: image.intern("escapedBlock:"),
            unknown_global: image.intern("unknownGlobal:"),
            must_be_boolean: image.intern("mustBeBoolean"),
            error: image.intern("error:"),
            value: image.intern("value"),
            is_nil: image.intern("isNil"),
            not_nil: image.intern("notNil"),
            identical: image.intern("=="),
            equal: image.intern("="),
        }
    }
}

/// The first character of every hidden selector.
pub(crate) const HIDDEN_PREFIX: char = '\u{1}';

impl Symbols {
    /// Is symbol `id` a hidden selector (its name starts with [`HIDDEN_PREFIX`])?
    /// Hidden selectors are found by lookup but not listed by
    /// `methods`/`selectors`/`respondsTo:`.
    pub(crate) fn is_hidden(&self, id: u32) -> bool {
        self.name(id).starts_with(HIDDEN_PREFIX)
    }
}

/// Number of arguments a selector takes, from its spelling (a hidden selector's
/// leading U+0001 is ignored).
pub(crate) fn selector_arity(name: &str) -> usize {
    let name = name.strip_prefix(HIDDEN_PREFIX).unwrap_or(name);
    let colons = name.matches(':').count();
    if colons > 0 {
        colons
    } else {
        usize::from(
            name.chars()
                .next()
                .is_some_and(|c| !c.is_alphanumeric() && c != '_'),
        )
    }
}
