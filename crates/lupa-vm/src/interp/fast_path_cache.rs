//! The per-class "default method still installed" checks behind the fast paths
//! of `Op::Special`, as one cache.
//!
//! A fast path may replace a send only while the method it stands for is the
//! default one: `isNil`/`notNil` inherited from Object ([`FastPath::NilTest`]),
//! `==` as Object's primitive ([`FastPath::Identity`]), `String>>=` as String's own
//! primitive ([`FastPath::StringEq`]). Checking that is a lookup; the cache
//! remembers, per fast path and receiver class, the class-table epoch at which the
//! check last succeeded.
//!
//! Invalidation rule (the only one): an entry holds only for the epoch it was
//! recorded in. Any change to any method dictionary bumps the epoch
//! ([`crate::ClassTable::bump_epoch`]), so every entry is stale at once, exactly like
//! the inline caches; the next use re-checks. Epochs start at 1 and skip 0, so a
//! fresh (zero) entry never holds. Failed checks are not recorded.

use crate::objects::cls;
use crate::vm::{Lookup, Vm};

/// A fast path that is valid only while a default method is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FastPath {
    /// `isNil`/`notNil`: both still Object's.
    NilTest = 0,
    /// `==`: still Object's primitive.
    Identity = 1,
    /// `String>>=`: still String's own primitive (asked for class `String` only).
    StringEq = 2,
}

/// Per fast path and class: the epoch of the last successful check (0: none).
/// `String>>=` concerns one class only, so its entry is a single word.
#[derive(Debug, Default)]
pub struct FastPathCache {
    per_class: [Vec<u32>; 2],
    string_eq: u32,
}

impl FastPathCache {
    /// Does `path` hold for class `class` in epoch `epoch` (checked and recorded)?
    #[inline(always)]
    pub fn holds(&self, path: FastPath, class: u32, epoch: u32) -> bool {
        match path {
            FastPath::StringEq => self.string_eq == epoch,
            _ => self.per_class[path as usize].get(class as usize) == Some(&epoch),
        }
    }

    /// Record that `path` holds for class `class` during epoch `epoch`.
    pub fn record(&mut self, path: FastPath, class: u32, epoch: u32) {
        if path == FastPath::StringEq {
            self.string_eq = epoch;
            return;
        }
        let v = &mut self.per_class[path as usize];
        if v.len() <= class as usize {
            v.resize(class as usize + 1, 0);
        }
        v[class as usize] = epoch;
    }
}

impl Vm {
    /// May the fast path `path` be taken for a receiver of class `c`?
    #[inline(always)]
    pub(super) fn fast_path_ok(&mut self, path: FastPath, c: u32) -> bool {
        self.fast_paths.holds(path, c, self.classes.epoch()) || self.check_fast_path(path, c)
    }

    /// Check by lookup that the default method of `path` is installed for class
    /// `c`, recording success for the current epoch.
    #[cold]
    #[inline(never)]
    fn check_fast_path(&mut self, path: FastPath, c: u32) -> bool {
        let syms = self.sym_cache;
        let ok = match path {
            FastPath::NilTest => {
                self.method_holder(c, syms.is_nil, false) == Some(cls::OBJECT)
                    && self.method_holder(c, syms.not_nil, false) == Some(cls::OBJECT)
            }
            FastPath::Identity => self.method_holder(c, syms.identical, true) == Some(cls::OBJECT),
            FastPath::StringEq => self.method_holder(c, syms.equal, true) == Some(cls::STRING),
        };
        if ok {
            let epoch = self.classes.epoch();
            self.fast_paths.record(path, c, epoch);
        }
        ok
    }

    /// The class holding the method `sel` finds for class `c` (if it is a
    /// method, and a primitive when `primitive` is asked).
    fn method_holder(&mut self, c: u32, sel: u32, primitive: bool) -> Option<u32> {
        match self.lookup(c, sel) {
            Lookup::Method(id) => {
                let m = &self.methods[id as usize];
                (!primitive || m.primitive.get().is_some()).then(|| m.holder.get())
            }
            _ => None,
        }
    }
}
