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
pub struct Symbols {
    pub(crate) by_name: HashMap<Rc<str>, u32>,
    pub(crate) names: Vec<Rc<str>>,
    pub(crate) objects: Vec<Value>,
}

impl Symbols {
    /// The text of symbol `id`.
    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map(|s| &**s).unwrap_or("")
    }

    /// The id of an already interned symbol.
    pub fn lookup(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }
}
