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

use super::{Image, Lookup};
use crate::objects::cls;
use lupa_heap::Heap;

/// A fast path that is valid only while a default method is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FastPath {
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
pub(crate) struct FastPathCache {
    per_class: [Vec<u32>; 2],
    string_eq: u32,
}

impl FastPathCache {
    /// Does `path` hold for class `class` in epoch `epoch` (checked and recorded)?
    #[inline(always)]
    pub(crate) fn holds(&self, path: FastPath, class: u32, epoch: u32) -> bool {
        match path {
            FastPath::StringEq => self.string_eq == epoch,
            _ => self.per_class[path as usize].get(class as usize) == Some(&epoch),
        }
    }

    /// The address of `StringEq`'s one word, for native code (equal to the
    /// epoch: `String>>=` is String's own primitive).
    pub(crate) fn string_eq_word(&self) -> *const u32 {
        &self.string_eq
    }

    /// The per-class entries of `path` (not `StringEq`), for native code:
    /// their address and number (entry `c` equal to the epoch: the fast
    /// path holds for class `c`).
    pub(crate) fn table(&self, path: FastPath) -> (*const u32, usize) {
        let v = &self.per_class[path as usize % 2];
        (v.as_ptr(), v.len())
    }

    /// Record that `path` holds for class `class` during epoch `epoch`.
    pub(crate) fn record(&mut self, path: FastPath, class: u32, epoch: u32) {
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

impl Image {
    /// `isNil`/`notNil` may take the fast path for class `c`: neither is overridden
    /// below Object. (The hit is inlined into the interpreter loop; the check of
    /// a class not seen in this epoch is out of line.)
    #[inline(always)]
    pub(crate) fn fast_nil_test_ok(&mut self, heap: &Heap, c: u32) -> bool {
        let epoch = self.classes.epoch();
        self.fast_paths.holds(FastPath::NilTest, c, epoch)
            || self.fast_nil_test_miss(heap, c, epoch)
    }

    #[cold]
    #[inline(never)]
    fn fast_nil_test_miss(&mut self, heap: &Heap, c: u32, epoch: u32) -> bool {
        let (isnil, notnil) = (self.sym_cache.is_nil, self.sym_cache.not_nil);
        let ok = self.method_holder(heap, c, isnil, false) == Some(cls::OBJECT)
            && self.method_holder(heap, c, notnil, false) == Some(cls::OBJECT);
        if ok {
            self.fast_paths.record(FastPath::NilTest, c, epoch);
        }
        ok
    }

    /// `==` may take the fast path for class `c`: it inherits Object's primitive.
    #[inline(always)]
    pub(crate) fn default_identity_ok(&mut self, heap: &Heap, c: u32) -> bool {
        let epoch = self.classes.epoch();
        self.fast_paths.holds(FastPath::Identity, c, epoch)
            || self.default_identity_miss(heap, c, epoch)
    }

    #[cold]
    #[inline(never)]
    fn default_identity_miss(&mut self, heap: &Heap, c: u32, epoch: u32) -> bool {
        let sel = self.sym_cache.identical;
        let ok = self.method_holder(heap, c, sel, true) == Some(cls::OBJECT);
        if ok {
            self.fast_paths.record(FastPath::Identity, c, epoch);
        }
        ok
    }

    /// Is `String>>=` the native primitive (not overridden by the class library)?
    #[inline(always)]
    pub(crate) fn string_eq_is_primitive(&mut self, heap: &Heap) -> bool {
        let epoch = self.classes.epoch();
        self.fast_paths
            .holds(FastPath::StringEq, cls::STRING, epoch)
            || self.string_eq_miss(heap, epoch)
    }

    #[cold]
    #[inline(never)]
    fn string_eq_miss(&mut self, heap: &Heap, epoch: u32) -> bool {
        let sel = self.sym_cache.equal;
        let ok = self.method_holder(heap, cls::STRING, sel, true) == Some(cls::STRING);
        if ok {
            self.fast_paths
                .record(FastPath::StringEq, cls::STRING, epoch);
        }
        ok
    }

    /// Is a trap (a `<trapShortcut>` method) or an object installed under a
    /// selector the interpreter has a fast path for, in any class? (Then
    /// the observing loop must look before it takes a fast path.)
    pub(crate) fn special_selector_instrumented(&self, heap: &Heap) -> bool {
        self.classes.iter().any(|info| {
            info.methods.iter().any(|(&sel, &v)| {
                let instrumented = match super::methods::method_id_of(heap, &self.methods, v) {
                    Some(id) => self.methods[id as usize].trap_shortcut,
                    None => true,
                };
                instrumented
                    && lupa_compiler::SpecialOp::for_selector(self.symbols.name(sel)).is_some()
            })
        })
    }

    /// The class holding the method `sel` finds for class `c` (if it is a
    /// method, and a primitive when `primitive` is asked).
    fn method_holder(&mut self, heap: &Heap, c: u32, sel: u32, primitive: bool) -> Option<u32> {
        match self.lookup(heap, c, sel) {
            Lookup::Method(id) => {
                let m = &self.methods[id as usize];
                (!primitive || m.primitive.get().is_some()).then(|| m.holder.get())
            }
            _ => None,
        }
    }
}
