//! Per-class checks that a fast path may be taken because the default method is
//! still installed (`isNil`/`notNil` and `==` inherited from Object, String's
//! primitive `=`). Each result is valid for one epoch of the class table.

use crate::objects::cls;
use crate::vm::{Lookup, Vm};

impl Vm {
    /// Is `String>>=` the native primitive (not overridden by the class library)?
    pub(super) fn string_eq_is_primitive(&mut self) -> bool {
        if self.string_eq_ok == self.epoch {
            return true;
        }
        let sel = self.sym_cache.equal;
        let ok = match self.lookup(cls::STRING, sel) {
            Lookup::Method(id) => {
                let m = &self.methods[id as usize];
                m.holder.get() == cls::STRING && m.primitive.get().is_some()
            }
            _ => false,
        };
        if ok {
            self.string_eq_ok = self.epoch;
        }
        ok
    }

    /// `==` may take the fast path for class `c` (it inherits Object's primitive).
    #[inline]
    pub(super) fn default_identity_ok(&mut self, c: u32) -> bool {
        if self.identity_ok.get(c as usize) == Some(&self.epoch) {
            return true;
        }
        let sel = self.sym_cache.identical;
        let ok = match self.lookup(c, sel) {
            Lookup::Method(id) => {
                let m = &self.methods[id as usize];
                m.holder.get() == cls::OBJECT && m.primitive.get().is_some()
            }
            _ => false,
        };
        if ok {
            if self.identity_ok.len() <= c as usize {
                self.identity_ok.resize(c as usize + 1, 0);
            }
            self.identity_ok[c as usize] = self.epoch;
        }
        ok
    }

    pub(super) fn fast_nil_test_ok(&mut self, c: u32) -> bool {
        if self.nil_test_ok.get(c as usize) == Some(&self.epoch) {
            return true;
        }
        let (isnil, notnil) = (self.sym_cache.is_nil, self.sym_cache.not_nil);
        let default = |vm: &mut Vm, sel| match vm.lookup(c, sel) {
            Lookup::Method(id) => vm.methods[id as usize].holder.get() == cls::OBJECT,
            _ => false,
        };
        let ok = default(self, isnil) && default(self, notnil);
        if ok {
            if self.nil_test_ok.len() <= c as usize {
                self.nil_test_ok.resize(c as usize + 1, 0);
            }
            self.nil_test_ok[c as usize] = self.epoch;
        }
        ok
    }
}
