//! Pretenuring (Blackburn et al., TOPLAS 2007): objects allocated at sites
//! that a lifetime profile found long-lived or immortal are allocated
//! directly in old space, so that scavenges never copy them.
//!
//! The advice is a list of [`PretenureSite`]s — a class name, the display
//! name of the allocating method (`Foo>>bar`, `[] in Foo>>bar`) and the send
//! instruction — as `lupa lifetimes --format advice` writes them, given to the
//! VM in [`VmOptions::pretenure`](crate::VmOptions::pretenure). A site is the
//! one Illimani records ([`Vm::allocation_stack_from`]): allocators and one
//! constructor skipped, so the advice of a profile applies as it was found.
//!
//! Cost: nothing when there is no advice. With advice, the allocating
//! primitives (`new`, `new:`, String `concatenate:` and
//! `primSubstringFrom:to:`) look the class up in a per-class-index table
//! (resolved by name once per class); only classes named in the advice pay
//! for finding the site, cached per (class, method, pc).

use crate::vm::Vm;
use rustc_hash::FxHashMap;

/// One allocation site whose objects go to old space.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PretenureSite {
    /// The class allocated.
    pub class: String,
    /// The allocating method's display name (`Foo>>bar`).
    pub method: String,
    /// The send instruction's index in that method.
    pub pc: u32,
}

/// What the VM keeps while pretenuring.
#[derive(Debug, Default)]
pub(crate) struct Pretenuring {
    /// Advised (method, pc) pairs per class name.
    by_class: FxHashMap<String, Vec<(String, u32)>>,
    /// Per class index: 0 not yet resolved, 1 not advised, 2 advised.
    class_state: Vec<u8>,
    /// (class, method id, pc) -> pretenure?
    sites: FxHashMap<(u32, u32, u32), bool>,
    /// Objects and bytes allocated in old space because of the advice.
    pub(crate) objects: u64,
    pub(crate) bytes: u64,
}

impl Pretenuring {
    pub(crate) fn new(sites: &[PretenureSite]) -> Option<Pretenuring> {
        if sites.is_empty() {
            return None;
        }
        let mut p = Pretenuring::default();
        for s in sites {
            p.by_class
                .entry(s.class.clone())
                .or_default()
                .push((s.method.clone(), s.pc));
        }
        Some(p)
    }
}

impl Vm {
    /// Before a primitive instantiates class `c` for the running frame: if the
    /// advice names this allocation site, make the heap put the object in old
    /// space. Answers whether it did.
    #[inline]
    pub(crate) fn pretenure_if_advised(&mut self, c: u32) -> bool {
        if self.obs.pretenuring.is_none() {
            return false;
        }
        self.pretenure_slow(c)
    }

    #[cold]
    #[inline(never)]
    fn pretenure_slow(&mut self, c: u32) -> bool {
        let Some(mut p) = self.obs.pretenuring.take() else {
            return false;
        };
        let ci = c as usize;
        if p.class_state.len() <= ci {
            p.class_state.resize(ci + 1, 0);
        }
        if p.class_state[ci] == 0 {
            let name = self.image.class_name(c);
            p.class_state[ci] = if p.by_class.contains_key(name) { 2 } else { 1 };
        }
        let mut advised = false;
        if p.class_state[ci] == 2 && !self.sched.running.frames.is_empty() {
            let top = self.sched.running.frames.len() - 1;
            if let Some(&(method, pc)) = self.allocation_stack_from(top, None, 1, c).first() {
                advised = *p.sites.entry((c, method, pc)).or_insert_with(|| {
                    let name = self
                        .describe_method(method)
                        .map(|d| d.display_name())
                        .unwrap_or_default();
                    p.by_class
                        .get(self.image.class_name(c))
                        .is_some_and(|v| v.iter().any(|(m, q)| *m == name && *q == pc))
                });
            }
        }
        if advised {
            self.heap.tenure_next_allocation();
            p.objects += 1;
        }
        self.obs.pretenuring = Some(p);
        advised
    }

    /// A new String with these bytes, made by a primitive for the running
    /// frame: in old space when the advice names the site.
    pub(crate) fn string_at_site(
        &mut self,
        bytes: &[u8],
    ) -> Result<lupa_heap::Value, lupa_heap::OutOfMemory> {
        let pretenured = self.pretenure_if_advised(crate::objects::cls::STRING);
        let v = self.heap.alloc_bytes(crate::objects::cls::STRING, bytes)?;
        if pretenured {
            self.note_pretenured(v);
        }
        Ok(v)
    }

    /// Objects allocated in old space by the pretenuring advice, and their bytes.
    pub fn pretenured(&self) -> (u64, u64) {
        self.obs
            .pretenuring
            .as_ref()
            .map_or((0, 0), |p| (p.objects, p.bytes))
    }

    /// Count the bytes of an object pretenured just now.
    pub(crate) fn note_pretenured(&mut self, v: lupa_heap::Value) {
        let bytes = self.heap.total_bytes(v);
        if let Some(p) = self.obs.pretenuring.as_mut() {
            p.bytes += bytes;
        }
    }
}
