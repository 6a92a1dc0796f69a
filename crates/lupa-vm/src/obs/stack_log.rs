//! The stacks the interpreter copies for a sampler, each interned as a path.
//!
//! A sampled program's outer frames change less often than its inner ones:
//! a benchmark harness, a recursion's first levels stay for many samples;
//! and its stacks come back: a run's thousands of samples make about as many
//! distinct paths as samples, most of them sharing all but their last
//! frames with a path seen before. Kept whole, each copy cost the run fresh
//! memory for every frame (AWFY Havlak with the JIT off at 10 kHz: 109
//! frames a sample, 12 MB for three seconds, about 3,000 page faults); kept as
//! the frames that changed since the copy before (the previous design: on
//! Havlak 63 of 108 with the JIT, 4 bytes each), they still cost the frames
//! that changed, stored, then read again and interned by the sampler at the
//! end. A [`StackLog`] interns each copy in a [`Trie`] of frames as it is
//! pushed: a copy is one node, a frame the previous copy has too costs a
//! comparison, a changed frame a lookup among its parent's few children,
//! and only a path never seen before costs memory. The sampler builds its
//! profile per distinct node, not per frame of every sample.
//!
//! Contract. `StackLog::push` (the VM's) compares the frames it is given with
//! the previous copy's (kept whole in one reused buffer, with their nodes)
//! and interns the rest below the last shared one; a copy's [`StackEntry`]
//! holds its node in [`StackLog::paths`], whose path is the copy's frames
//! exactly as pushed ([`StackLog::frames`]), or, once the trie is full
//! (about four billion nodes, far more than a sampler keeps), their outer
//! part that has nodes.

use lupa_trie::{Trie, TrieNode};

/// A frame of a copied stack: `(method id, pc)`, pc the index of the
/// instruction after the frame's current one. A copy has at most
/// [`MAX_STACK`](crate::MAX_STACK) frames: a deeper stack keeps its innermost
/// ones ([`StackEntry::truncated`]).
pub type StackFrame = (u32, u32);

/// What a copy is, beside its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackEntry {
    /// The sampler's request it answers (0: a deterministic sample).
    pub seq: u64,
    /// The running process.
    pub process: u32,
    /// Were outer frames left out (deeper than `MAX_STACK`)?
    pub truncated: bool,
    /// The send counter when the stack was copied (the sends between two
    /// samples are charged to the later one).
    pub sends: u64,
    /// Its frames: a node of [`StackLog::paths`].
    pub node: TrieNode,
}

/// Copied stacks, oldest first, each a node of a trie of frames (module
/// doc).
#[derive(Debug, Clone, Default)]
pub struct StackLog {
    entries: Vec<StackEntry>,
    /// Every copy's path of frames.
    paths: Trie<StackFrame>,
    /// The newest copy's frames, whole, and the node of each one's path.
    last: Vec<StackFrame>,
    last_nodes: Vec<TrieNode>,
}

impl StackLog {
    /// Keep a copy of the frames `body` (as `frame` reads each one: `(method
    /// id, pc)`, outermost first), then `top` if given, with what it is.
    pub(crate) fn push<F>(
        &mut self,
        seq: u64,
        process: u32,
        truncated: bool,
        sends: u64,
        (body, top): (&[F], Option<StackFrame>),
        frame: impl Fn(&F) -> StackFrame,
    ) {
        // The outer frames the previous copy has too, compared in one tight
        // loop over both slices (a deep stack's copy is mostly this), then
        // the rest interned below the last of them.
        let mut shared = self
            .last
            .iter()
            .zip(body)
            .take_while(|(kept, f)| **kept == frame(f))
            .count();
        if shared == body.len() && top.is_some() && self.last.get(shared).copied() == top {
            shared += 1;
        }
        self.last.truncate(shared);
        self.last_nodes.truncate(shared);
        let mut node = self
            .last_nodes
            .last()
            .copied()
            .unwrap_or(Trie::<StackFrame>::ROOT);
        let rest = body.get(shared..).unwrap_or(&[]).iter().map(&frame);
        for f in rest.chain(top.filter(|_| shared <= body.len())) {
            let below = self.paths.child(node, f);
            if below == node {
                // The trie is full: the copy's path ends at its last frame
                // that has a node.
                break;
            }
            node = below;
            self.last.push(f);
            self.last_nodes.push(node);
        }
        self.entries.push(StackEntry {
            seq,
            process,
            truncated,
            sends,
            node,
        });
    }

    /// How many copies it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Does it hold none?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The copies' entries, oldest first.
    pub fn entries(&self) -> &[StackEntry] {
        &self.entries
    }

    /// The copies' paths: a [`StackEntry::node`]'s frames, each frame's
    /// parent.
    pub fn paths(&self) -> &Trie<StackFrame> {
        &self.paths
    }

    /// The frames of copy `index`, outermost first, in `out` (empty past
    /// the end).
    pub fn frames(&self, index: usize, out: &mut Vec<StackFrame>) {
        match self.entries.get(index) {
            Some(e) => self.paths.path(e.node, out),
            None => out.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stacks() -> impl Strategy<Value = Vec<Vec<StackFrame>>> {
        // Small method ids and pcs, so that neighbours share prefixes often,
        // and now and then a large one.
        let method = prop_oneof![8 => 0u32..3, 1 => Just(1 << 19), 1 => Just(u32::MAX)];
        let pc = prop_oneof![8 => 0u32..3, 1 => Just(1 << 12), 1 => Just(u32::MAX)];
        prop::collection::vec(prop::collection::vec((method, pc), 0..8), 0..40)
    }

    proptest! {
        /// Every copy comes back as it was pushed, whether its last frame
        /// came as the body's or as the top; equal copies are one node, and
        /// the trie holds no more nodes than frames were pushed.
        #[test]
        fn copies_come_back_whole(all in stacks(), split in 0usize..2) {
            let mut log = StackLog::default();
            for (i, s) in all.iter().enumerate() {
                let (body, top) = match s.split_last() {
                    Some((t, body)) if (i + split) % 2 == 0 => (body, Some(*t)),
                    _ => (&s[..], None),
                };
                log.push(i as u64, 0, false, i as u64 * 10, (body, top), |f| *f);
            }
            prop_assert_eq!(log.len(), all.len());
            let mut out = Vec::new();
            for (i, s) in all.iter().enumerate() {
                log.frames(i, &mut out);
                prop_assert_eq!(&out, s);
                for (j, t) in all.iter().enumerate() {
                    let same = log.entries()[i].node == log.entries()[j].node;
                    prop_assert_eq!(same, s == t);
                }
            }
            log.frames(all.len(), &mut out);
            prop_assert!(out.is_empty());
            prop_assert!(log.paths().len() <= 1 + all.iter().map(Vec::len).sum::<usize>());
        }
    }

    #[test]
    fn a_full_trie_cuts_a_copy_short_at_its_last_known_frame() {
        let mut log = StackLog {
            paths: Trie::with_limit(4),
            ..StackLog::default()
        };
        let s: Vec<StackFrame> = (0..5).map(|i| (i, 1)).collect();
        log.push(1, 0, false, 0, (&s[..4], Some(s[4])), |f| *f);
        let mut out = Vec::new();
        log.frames(0, &mut out);
        assert_eq!(out, &s[..3], "three nodes below the root");
        // The next copy shares what was kept, and is cut short the same way.
        log.push(2, 0, false, 1, (&s[..], None), |f| *f);
        log.frames(1, &mut out);
        assert_eq!(out, &s[..3]);
        assert_eq!(log.entries()[1].node, log.entries()[0].node);
    }

    #[test]
    fn a_copy_interns_only_the_frames_that_changed() {
        let mut log = StackLog::default();
        let deep: Vec<StackFrame> = (0..100).map(|i| (i, 1)).collect();
        log.push(1, 0, false, 0, (&deep[..], None), |f| *f);
        let mut next = deep.clone();
        next[99] = (99, 2);
        log.push(2, 0, false, 5, (&next[..], None), |f| *f);
        log.push(3, 0, false, 9, (&next[..49], Some(next[49])), |f| *f);
        log.push(4, 0, false, 12, (&deep[..], None), |f| *f);
        assert_eq!(
            log.paths().len(),
            1 + 100 + 1,
            "one node for the changed frame"
        );
        let e = log.entries();
        assert_eq!(e[3].node, e[0].node, "a path seen before is its node");
        assert_eq!(log.paths().parent(e[1].node), log.paths().parent(e[0].node));
        let mut out = Vec::new();
        log.frames(2, &mut out);
        assert_eq!(out, &next[..50]);
        log.frames(1, &mut out);
        assert_eq!(out, next);
        log.frames(0, &mut out);
        assert_eq!(out, deep);
    }
}
