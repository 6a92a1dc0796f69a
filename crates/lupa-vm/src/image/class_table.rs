//! The class table: every class by index, classes by name, method lookup with
//! its global cache, and the epoch that inline caches compare.
//!
//! Invariants:
//! - a class index never changes and is never reused; index 0 is a placeholder
//!   that is never a class (a lookup there finds nothing), the kernel classes have
//!   the fixed indices of [`crate::cls`], metaclasses come after them;
//! - the epoch starts at 1 and is never 0; **any change to any method dictionary
//!   bumps it** ([`ClassTable::bump_epoch`]: done by [`ClassTable::put_method`],
//!   [`ClassTable::remove_method`] and by class (re)definition), which clears the
//!   global lookup cache and thereby invalidates every inline cache
//!   (`(class, epoch, method)` entries of `MethodCode::caches`) and every
//!   `FastPathCache` entry, since both hold only for the epoch they were made in;
//! - the lookup cache only holds `(class, selector) -> method id` pairs found by a
//!   full lookup during the current epoch.
//!
//! The table dereferences to the slice of [`ClassInfo`], so `table[c as usize]`,
//! `table.len()` and `table.iter()` read it; code that changes a method
//! dictionary through that slice must call [`ClassTable::bump_epoch`].

use crate::objects::{ClassInfo, Shape};
use lupa_heap::Value;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

/// Result of a method lookup.
#[derive(Debug, Clone, Copy)]
pub enum Lookup {
    /// A method (id).
    Method(u32),
    /// A non-method object found in a method dictionary.
    Object(Value),
    /// Nothing: `doesNotUnderstand:`.
    NotFound,
}

/// Every class of a VM, with lookup, its cache and the epoch.
#[derive(Debug)]
pub struct ClassTable {
    classes: Vec<ClassInfo>,
    by_name: HashMap<Rc<str>, u32>,
    lookup_cache: rustc_hash::FxHashMap<(u32, u32), u32>,
    epoch: u32,
}

impl Default for ClassTable {
    fn default() -> Self {
        Self::new()
    }
}

impl ClassTable {
    /// A table holding only the placeholder at index 0.
    pub fn new() -> Self {
        let none = ClassInfo {
            name: Rc::from("<none>"),
            superclass: None,
            partner: 0,
            is_meta: false,
            fields: Vec::new(),
            shape: Shape::Fixed,
            methods: Default::default(),
            method_order: Vec::new(),
            methods_array: Value::NIL,
            object: Value::NIL,
            source: Rc::from("<none>"),
            category: Rc::from(""),
            loaded: true,
        };
        ClassTable {
            classes: vec![none],
            by_name: HashMap::new(),
            lookup_cache: Default::default(),
            epoch: 1,
        }
    }

    /// The current epoch (inline caches and the fast-path cache compare it).
    #[inline(always)]
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// A method dictionary changed: start a new epoch (invalidating every inline
    /// cache and fast-path entry) and clear the lookup cache.
    pub fn bump_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
        self.lookup_cache.clear();
    }

    /// Append a placeholder class (not yet defined) and answer its index; a class
    /// (not a metaclass) is registered under its name.
    pub fn add(&mut self, name: &str, is_meta: bool) -> u32 {
        let idx = self.classes.len() as u32;
        self.classes.push(ClassInfo {
            name: Rc::from(name),
            superclass: None,
            partner: 0,
            is_meta,
            fields: Vec::new(),
            shape: Shape::Fixed,
            methods: Default::default(),
            method_order: Vec::new(),
            methods_array: Value::NIL,
            object: Value::NIL,
            source: Rc::from("<synthetic>"),
            category: Rc::from(""),
            loaded: false,
        });
        if !is_meta {
            self.by_name.insert(Rc::from(name), idx);
        }
        idx
    }

    /// The index of the class registered under `name` (loaded or not).
    pub fn index_of(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// Set the superclass of class `c`, and its metaclass's accordingly (the
    /// metaclass of a root class inherits from `Class`).
    pub fn set_superclass(&mut self, c: u32, sup: Option<u32>) {
        self.classes[c as usize].superclass = sup;
        let m = self.classes[c as usize].partner;
        let msup = match sup {
            Some(s) => Some(self.classes[s as usize].partner),
            None => Some(crate::cls::CLASS),
        };
        self.classes[m as usize].superclass = msup;
    }

    /// Is class `c` `k` or a subclass of it?
    pub fn is_kind_of(&self, mut c: u32, k: u32) -> bool {
        loop {
            if c == k {
                return true;
            }
            match self.classes.get(c as usize).and_then(|i| i.superclass) {
                Some(s) => c = s,
                None => return false,
            }
        }
    }

    /// The method `sel` means for instances of class `c`, if a lookup found
    /// it before (the lookup cache, emptied whenever a class or a method
    /// dictionary changes): one hash probe, no walk.
    #[inline]
    pub fn cached(&self, c: u32, sel: u32) -> Option<u32> {
        self.lookup_cache.get(&(c, sel)).copied()
    }

    /// Find what `sel` means for instances of class `c`: walk the superclass chain
    /// to the first dictionary holding `sel`. `method_id` tells a method object
    /// (answering its id, which is cached) from any other object.
    pub fn lookup(
        &mut self,
        c: u32,
        sel: u32,
        method_id: impl FnMut(Value) -> Option<u32>,
    ) -> Lookup {
        if let Some(id) = self.cached(c, sel) {
            return Lookup::Method(id);
        }
        self.walk(c, sel, method_id)
    }

    /// [`lookup`](Self::lookup) past its cache: the superclass chain walked.
    pub fn walk(
        &mut self,
        c: u32,
        sel: u32,
        mut method_id: impl FnMut(Value) -> Option<u32>,
    ) -> Lookup {
        let mut cur = Some(c);
        while let Some(k) = cur {
            let info = &self.classes[k as usize];
            if let Some(&obj) = info.methods.get(&sel) {
                if let Some(id) = method_id(obj) {
                    self.lookup_cache.insert((c, sel), id);
                    return Lookup::Method(id);
                }
                return Lookup::Object(obj);
            }
            cur = info.superclass;
        }
        Lookup::NotFound
    }

    /// Put any object into class `c`'s method dictionary under `sel`.
    pub fn put_method(&mut self, c: u32, sel: u32, obj: Value) {
        let info = &mut self.classes[c as usize];
        if info.methods.insert(sel, obj).is_none() {
            info.method_order.push(sel);
        }
        info.methods_array = Value::NIL;
        self.bump_epoch();
    }

    /// Keep `array` as the answer of class `c`'s `methods`.
    pub fn set_methods_array(&mut self, c: u32, array: Value) {
        self.classes[c as usize].methods_array = array;
    }

    /// Remove a selector from class `c`; answers what was there.
    pub fn remove_method(&mut self, c: u32, sel: u32) -> Option<Value> {
        let info = &mut self.classes[c as usize];
        let old = info.methods.remove(&sel);
        if old.is_some() {
            info.method_order.retain(|&s| s != sel);
        }
        info.methods_array = Value::NIL;
        self.bump_epoch();
        old
    }
}

impl Deref for ClassTable {
    type Target = [ClassInfo];

    #[inline(always)]
    fn deref(&self) -> &[ClassInfo] {
        &self.classes
    }
}

impl DerefMut for ClassTable {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [ClassInfo] {
        &mut self.classes
    }
}
