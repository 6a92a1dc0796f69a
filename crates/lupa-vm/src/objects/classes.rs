//! A class as the VM sees it: its instance layout ([`Shape`]) and its
//! description ([`ClassInfo`]: name, superclass, metaclass partner, fields,
//! method dictionary, heap object, source).
//!
//! Contract: a `ClassInfo` lives in the class table at the index that its heap
//! object carries in its identity hash; `object` and the values of `methods` are
//! GC roots, updated in place by the collector. `method_order` lists the keys of
//! `methods` in definition order, so reports and `methods` are deterministic.

use lupa_heap::Value;
use std::rc::Rc;

/// How instances of a class are laid out beyond their named fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Named fields only.
    Fixed,
    /// Named fields then indexable pointer slots (Array).
    Indexable,
    /// Bytes (String, Symbol).
    Bytes,
    /// Raw words (Double, large Integer).
    Words,
    /// Weak indexable slots (WeakArray).
    Weak,
    /// An ephemeron: named fields only, the first (key) and second (value) with
    /// ephemeron semantics (Ephemeron and its subclasses).
    Ephemeron,
}

/// A class, as the VM sees it.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    /// Class name (`Foo`, or `Foo class` for a metaclass).
    pub name: Rc<str>,
    /// Superclass index, `None` for the root.
    pub superclass: Option<u32>,
    /// For a class: its metaclass index. For a metaclass: its sole instance's index.
    pub partner: u32,
    /// Is this a metaclass?
    pub is_meta: bool,
    /// All instance field names, inherited first.
    pub fields: Vec<Rc<str>>,
    /// Instance layout.
    pub shape: Shape,
    /// Method dictionary: selector symbol id -> method object (or any object).
    pub methods: rustc_hash::FxHashMap<u32, Value>,
    /// Selectors in definition order (for `methods`, reports and determinism).
    pub method_order: Vec<u32>,
    /// The Array `Class>>methods` answered, kept until the methods change so
    /// that it answers the same object every time (nil: none yet).
    pub methods_array: Value,
    /// The class object in the heap (a `Value` updated by the collector).
    pub object: Value,
    /// Where the class was loaded from (`Kernel/Object.som`, a path, or `<synthetic>`).
    pub source: Rc<str>,
    /// Package: the directory the class file was in (`Kernel`, `Benchmarks/Richards`).
    pub category: Rc<str>,
    /// Has its definition been loaded (false for a placeholder)?
    pub loaded: bool,
}
