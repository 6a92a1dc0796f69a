//! Pretenuring (Blackburn et al., TOPLAS 2007): objects allocated at sites
//! that a lifetime profile found long-lived or immortal are allocated
//! directly in old space, so that scavenges never copy them.
//!
//! The advice is a list of [`PretenureSite`]s — a class name, the display
//! name of the allocating method (`Foo>>bar`, `[] in Foo>>bar`) and the send
//! instruction — as `lupa lifetimes --format advice` writes them, given to the
//! VM in [`VmOptions::pretenure`](crate::VmOptions::pretenure). A site is the
//! one Illimani records ([`allocation_stack_from`]): allocators and one
//! constructor skipped, so the advice of a profile applies as it was found.
//!
//! Cost: nothing when there is no advice. With advice, the allocating
//! primitives (`new`, `new:`, String `concatenate:` and
//! `primSubstringFrom:to:`) look the class up in a per-class-index table
//! (resolved by name once per class); only classes named in the advice pay
//! for finding the site, cached per (class, method, pc).

use crate::image::Image;
use crate::obs::lifetimes::allocation_stack_from;
use crate::sched::ProcessState;
use lupa_heap::Heap;
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

impl Pretenuring {
    /// Before a primitive instantiates class `c` for the top frame of
    /// `running`: if the advice names this allocation site, make `heap` put
    /// the object in old space. Answers whether it did.
    #[cold]
    #[inline(never)]
    pub(crate) fn advise(
        &mut self,
        heap: &mut Heap,
        image: &Image,
        running: &ProcessState,
        c: u32,
    ) -> bool {
        let ci = c as usize;
        if self.class_state.len() <= ci {
            self.class_state.resize(ci + 1, 0);
        }
        if self.class_state[ci] == 0 {
            let name = image.class_name(c);
            self.class_state[ci] = if self.by_class.contains_key(name) {
                2
            } else {
                1
            };
        }
        let mut advised = false;
        if self.class_state[ci] == 2 && !running.frames.is_empty() {
            let top = running.frames.len() - 1;
            if let Some(&(method, pc)) =
                allocation_stack_from(image, running, top, None, 1, c).first()
            {
                let by_class = &self.by_class;
                advised = *self.sites.entry((c, method, pc)).or_insert_with(|| {
                    let name = image
                        .describe_method(method)
                        .map(|d| d.display_name())
                        .unwrap_or_default();
                    by_class
                        .get(image.class_name(c))
                        .is_some_and(|v| v.iter().any(|(m, q)| *m == name && *q == pc))
                });
            }
        }
        if advised {
            heap.tenure_next_allocation();
            self.objects += 1;
        }
        advised
    }
}
