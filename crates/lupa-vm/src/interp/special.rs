//! The fast paths of `Op::Special` sends: SmallInteger and Double arithmetic and
//! comparisons, `==`, `isNil`/`notNil`, `not`, Array `at:`/`at:put:`, `length`,
//! String `=`. Each answers false when it does not apply, and the interpreter
//! then sends the message normally; either way it counts as one send.

use crate::image::Lookup;
use crate::objects::{MethodCode, cls};
use crate::vm::{Vm, VmError};
use lupa_compiler::SpecialOp;
use lupa_heap::Value;

impl Vm {
    /// A number as f64 (SmallInteger, Double, large Integer).
    pub fn number_as_f64(&self, v: Value) -> Option<f64> {
        if let Some(i) = v.as_int() {
            return Some(i as f64);
        }
        if v.is_float() {
            return Some(v.float_unchecked());
        }
        if v.is_ptr() {
            match self.heap.class_index(v) {
                cls::DOUBLE => return Some(f64::from_bits(self.heap.word(v, 0))),
                cls::INTEGER => {
                    use num_traits::ToPrimitive;
                    return crate::prims::integer::big_of(self, v).and_then(|b| b.to_f64());
                }
                _ => {}
            }
        }
        None
    }

    #[inline(always)]
    pub(super) fn double_of(&self, v: Value) -> Option<f64> {
        if v.is_float() {
            Some(v.float_unchecked())
        } else if v.is_ptr() && self.heap.class_index(v) == cls::DOUBLE {
            Some(f64::from_bits(self.heap.word(v, 0)))
        } else {
            None
        }
    }

    /// The 0-based slot that index `i` (a SmallInteger, 1-based) denotes in `a`, if `a`
    /// is an Array and `i` is in range: the fast paths of `at:` and `at:put:`.
    #[inline(always)]
    pub(super) fn array_slot(&self, a: Value, i: Value) -> Option<usize> {
        if a.is_ptr() && self.heap.class_index(a) == cls::ARRAY {
            let i = i.as_int()?;
            (i >= 1 && (i as usize) <= self.heap.size(a)).then(|| i as usize - 1)
        } else {
            None
        }
    }

    /// Is the method the special send `op` of `code` (selector literal
    /// `sel`, send site `site`) would run on the receiver on the stack
    /// instrumented: an enabled trap (a MethodProxies trap its fast path
    /// would skip), an object (`run:with:in:`) or a watched method
    /// (`obs/watch.rs`)? Only asked by the observing loop while a trap is
    /// installed, or a method watched, under a special selector
    /// ([`Observation::guarding_traps`](crate::obs::Observation)); at the
    /// meta level traps do not fire, so the fast path stands. The lookup
    /// fills the site's inline cache, which the send then uses.
    #[inline(never)]
    pub(super) fn special_is_instrumented(
        &mut self,
        code: &MethodCode,
        sel: u16,
        site: u16,
        op: SpecialOp,
    ) -> bool {
        if self.sched.running.at_meta_level() {
            return false;
        }
        let argc = op.selector().1 as usize;
        let stack = &self.sched.running.stack;
        let Some(&receiver) = stack.len().checked_sub(1 + argc).and_then(|i| stack.get(i)) else {
            return false;
        };
        let class = self.class_of(receiver);
        let epoch = self.image.classes.epoch();
        let Some(cache) = code.caches.get(site as usize) else {
            return false;
        };
        let method = if let Some(m) = crate::objects::pic_lookup(cache, class, epoch) {
            m
        } else {
            let Some(selector) = code.sel_ids.get(sel as usize).map(|c| c.get()) else {
                return false;
            };
            match self.image.lookup(&self.heap, class, selector) {
                Lookup::Method(id) => {
                    crate::objects::pic_fill(cache, class, epoch, id);
                    id
                }
                Lookup::Object(_) => return true,
                Lookup::NotFound => return false,
            }
        };
        self.obs.watches.wants(method) != 0
            || self.image.methods.get(method as usize).is_some_and(|m| {
                m.trap_shortcut && m.literals.first().is_some_and(|l| l.get() == Value::TRUE)
            })
    }

    /// A method dictionary changed under selector `sel`: when it is a special
    /// selector, recompute whether a trap (or an object) is installed under
    /// one, or a watched method may be skipped by a fast path, and guard the
    /// special sends accordingly.
    pub(crate) fn special_selector_changed(&mut self, sel: u32) {
        if SpecialOp::for_selector(self.image.symbols.name(sel)).is_none() {
            return;
        }
        let on = self.image.special_selector_instrumented(&self.heap);
        let traps = self.obs.set_guarding_traps(on);
        let watches = self.refresh_watch_guard();
        if traps || watches {
            self.observation_changed();
        }
    }

    /// Guard the special sends while a watched method is one a fast path
    /// may run instead ([`fast_path_may_skip`](Self::fast_path_may_skip));
    /// answers whether the guard changed.
    pub(crate) fn refresh_watch_guard(&mut self) -> bool {
        let named: Vec<u32> = self.obs.watches.named().collect();
        let on = named.into_iter().any(|m| self.fast_path_may_skip(m));
        self.obs.set_guarding_watches(on)
    }

    /// May a fast path of its special selector run instead of method `m`:
    /// is `m` what a lookup from a class whose instances a fast path takes
    /// finds? SmallIntegers and Doubles for arithmetic and comparisons, and
    /// Strings for `=` and `~=`; Arrays for `at:` and `at:put:`; Arrays,
    /// Strings and Symbols for `length`; true and false for `not`; blocks
    /// for `value` and `value:` (activated directly); any class for `==`,
    /// `isNil` and `notNil`, whose fast paths hold per class (`special`
    /// above; native code's inline paths take the same receivers). A method
    /// of another selector, or of a class no fast path takes (a user's
    /// `at:` or `value`), is sent: its calls reach `invoke` unguarded.
    fn fast_path_may_skip(&mut self, m: u32) -> bool {
        let Some((op, sel)) = self
            .image
            .methods
            .get(m as usize)
            .and_then(|c| Some((SpecialOp::for_selector(&c.selector_name)?, c.selector)))
        else {
            return false;
        };
        let classes: &[u32] = match op {
            SpecialOp::IdentityEq | SpecialOp::IsNil | SpecialOp::NotNil => return true,
            SpecialOp::Eq | SpecialOp::Ne => &[cls::INTEGER, cls::DOUBLE, cls::STRING],
            SpecialOp::Add
            | SpecialOp::Sub
            | SpecialOp::Mul
            | SpecialOp::Lt
            | SpecialOp::Gt
            | SpecialOp::Le
            | SpecialOp::Ge
            | SpecialOp::Div
            | SpecialOp::Mod
            | SpecialOp::BitAnd => &[cls::INTEGER, cls::DOUBLE],
            SpecialOp::Not => &[cls::TRUE, cls::FALSE],
            SpecialOp::At | SpecialOp::AtPut => &[cls::ARRAY],
            SpecialOp::Length => &[cls::ARRAY, cls::STRING, cls::SYMBOL],
            SpecialOp::Value | SpecialOp::ValueWith => &[
                cls::BLOCK,
                cls::BLOCK1,
                cls::BLOCK2,
                cls::BLOCK3,
                cls::BLOCK4,
            ],
        };
        classes.iter().any(
            |&c| matches!(self.image.lookup(&self.heap, c, sel), Lookup::Method(id) if id == m),
        )
    }

    /// Fast paths of special sends (of `code`, which notes the Doubles and
    /// Strings they meet: `MethodCode::saw_double`). Answers true when done
    /// (result on the stack).
    #[inline(always)]
    pub(super) fn special(&mut self, op: SpecialOp, code: &MethodCode) -> Result<bool, VmError> {
        let n = self.sched.running.stack.len();
        match op {
            SpecialOp::Add
            | SpecialOp::Sub
            | SpecialOp::Mul
            | SpecialOp::Lt
            | SpecialOp::Gt
            | SpecialOp::Le
            | SpecialOp::Ge
            | SpecialOp::Eq
            | SpecialOp::Ne
            | SpecialOp::Div
            | SpecialOp::Mod
            | SpecialOp::BitAnd => {
                let a = self.sched.running.stack[n - 2];
                let b = self.sched.running.stack[n - 1];
                if a.is_int() && b.is_int() {
                    let (x, y) = (a.int_unchecked(), b.int_unchecked());
                    let r = match op {
                        SpecialOp::Add => match x.checked_add(y).and_then(Value::from_i64) {
                            Some(v) => v,
                            None => return Ok(false),
                        },
                        SpecialOp::Sub => match x.checked_sub(y).and_then(Value::from_i64) {
                            Some(v) => v,
                            None => return Ok(false),
                        },
                        SpecialOp::Mul => match x.checked_mul(y).and_then(Value::from_i64) {
                            Some(v) => v,
                            None => return Ok(false),
                        },
                        SpecialOp::Lt => Value::bool(x < y),
                        SpecialOp::Gt => Value::bool(x > y),
                        SpecialOp::Le => Value::bool(x <= y),
                        SpecialOp::Ge => Value::bool(x >= y),
                        SpecialOp::Eq => Value::bool(x == y),
                        SpecialOp::Ne => Value::bool(x != y),
                        SpecialOp::Div => {
                            if y == 0 {
                                return Ok(false);
                            }
                            match Value::from_i64(floor_div(x, y)) {
                                Some(v) => v,
                                None => return Ok(false),
                            }
                        }
                        SpecialOp::Mod => {
                            if y == 0 {
                                return Ok(false);
                            }
                            let m = x % y;
                            Value::small(if m != 0 && ((m < 0) != (y < 0)) {
                                m + y
                            } else {
                                m
                            })
                        }
                        SpecialOp::BitAnd => Value::small(x & y),
                        _ => return Ok(false),
                    };
                    self.sched.running.stack.truncate(n - 2);
                    self.sched.running.stack.push(r);
                    return Ok(true);
                }
                let (Some(x), Some(y)) = (
                    self.double_of(a),
                    self.double_of(b).or_else(|| b.as_int().map(|i| i as f64)),
                ) else {
                    if matches!(op, SpecialOp::Eq | SpecialOp::Ne) {
                        let done = self.string_equality(op, a, b, n)?;
                        if done {
                            code.saw_string.set(true);
                        }
                        return Ok(done);
                    }
                    return Ok(false);
                };
                code.saw_double.set(true);
                let r = match op {
                    SpecialOp::Add => self.new_double(x + y)?,
                    SpecialOp::Sub => self.new_double(x - y)?,
                    SpecialOp::Mul => self.new_double(x * y)?,
                    SpecialOp::Lt => Value::bool(x < y),
                    SpecialOp::Gt => Value::bool(x > y),
                    SpecialOp::Le => Value::bool(x <= y),
                    SpecialOp::Ge => Value::bool(x >= y),
                    SpecialOp::Eq => Value::bool(x == y),
                    SpecialOp::Ne => Value::bool(x != y),
                    _ => return Ok(false),
                };
                self.sched.running.stack.truncate(n - 2);
                self.sched.running.stack.push(r);
                Ok(true)
            }
            SpecialOp::IdentityEq => {
                let b = self.sched.running.stack[n - 1];
                let a = self.sched.running.stack[n - 2];
                // A class may override == (SOM's Integer>>== is `=`): then send it.
                let c = self.class_of(a);
                if !self.image.default_identity_ok(&self.heap, c) {
                    return Ok(false);
                }
                self.sched.running.stack.truncate(n - 2);
                self.sched.running.stack.push(Value::bool(a == b));
                Ok(true)
            }
            SpecialOp::IsNil | SpecialOp::NotNil => {
                // Only nil itself and plain objects take the fast path; a class may override.
                let a = self.sched.running.stack[n - 1];
                let c = self.class_of(a);
                if c != cls::NIL && !self.image.fast_nil_test_ok(&self.heap, c) {
                    return Ok(false);
                }
                let isnil = a == Value::NIL;
                self.sched.running.stack[n - 1] = Value::bool(if op == SpecialOp::IsNil {
                    isnil
                } else {
                    !isnil
                });
                Ok(true)
            }
            SpecialOp::Not => {
                let a = self.sched.running.stack[n - 1];
                if a == Value::TRUE {
                    self.sched.running.stack[n - 1] = Value::FALSE;
                } else if a == Value::FALSE {
                    self.sched.running.stack[n - 1] = Value::TRUE;
                } else {
                    return Ok(false);
                }
                Ok(true)
            }
            SpecialOp::At => {
                let a = self.sched.running.stack[n - 2];
                let i = self.sched.running.stack[n - 1];
                if let Some(k) = self.array_slot(a, i) {
                    let v = self.heap.slot(a, k);
                    self.sched.running.stack.truncate(n - 2);
                    self.sched.running.stack.push(v);
                    return Ok(true);
                }
                Ok(false)
            }
            SpecialOp::AtPut => {
                let a = self.sched.running.stack[n - 3];
                let i = self.sched.running.stack[n - 2];
                let v = self.sched.running.stack[n - 1];
                if let Some(k) = self.array_slot(a, i) {
                    self.heap.set_slot(a, k, v);
                    self.sched.running.stack.truncate(n - 3);
                    self.sched.running.stack.push(a);
                    return Ok(true);
                }
                Ok(false)
            }
            SpecialOp::Length => {
                let a = self.sched.running.stack[n - 1];
                if a.is_ptr() {
                    let c = self.heap.class_index(a);
                    if c == cls::ARRAY || c == cls::STRING || c == cls::SYMBOL {
                        self.sched.running.stack[n - 1] = Value::small(self.heap.size(a) as i64);
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            SpecialOp::Value | SpecialOp::ValueWith => Ok(false),
        }
    }

    /// `a = b` for a String receiver while `String>>=` is the primitive:
    /// whether `b` is a String or Symbol with the same characters; `None`
    /// when this fast path does not apply (the send is made).
    #[inline(always)]
    pub(crate) fn string_equal(&mut self, a: Value, b: Value) -> Option<bool> {
        if !(a.is_ptr() && b.is_ptr()) || self.heap.class_index(a) != cls::STRING {
            return None;
        }
        if !self.image.string_eq_is_primitive(&self.heap) {
            return None;
        }
        let cb = self.heap.class_index(b);
        Some((cb == cls::STRING || cb == cls::SYMBOL) && self.heap.bytes(a) == self.heap.bytes(b))
    }

    /// `=`/`~=` between two Strings (or a String and a Symbol) by byte comparison, when
    /// the receiver is a plain String whose `=` is the primitive. Answers false (send
    /// normally) otherwise.
    #[inline]
    pub(super) fn string_equality(
        &mut self,
        op: SpecialOp,
        a: Value,
        b: Value,
        n: usize,
    ) -> Result<bool, VmError> {
        let Some(eq) = self.string_equal(a, b) else {
            return Ok(false);
        };
        self.sched.running.stack.truncate(n - 2);
        self.sched
            .running
            .stack
            .push(Value::bool(if op == SpecialOp::Eq { eq } else { !eq }));
        Ok(true)
    }
}

/// Integer division rounding towards negative infinity (SOM's `/` and `//` on Integers).
pub(crate) fn floor_div(x: i64, y: i64) -> i64 {
    let q = x / y;
    if (x % y != 0) && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}
