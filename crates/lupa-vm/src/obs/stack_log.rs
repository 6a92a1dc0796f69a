//! The stacks the interpreter copies for a sampler, kept by what changed.
//!
//! A sampled program's outer frames change less often than its inner ones:
//! a benchmark harness, a recursion's first levels stay for many samples.
//! Kept whole, each copy cost the run fresh memory for every frame (AWFY
//! Havlak with the JIT off at 10 kHz: 109 frames a sample, 12 MB for three
//! seconds, about 3,000 page faults). A [`StackLog`] keeps each copy as the
//! number of outer frames it shares with the copy before it and the frames
//! it does not, appended to one buffer: a sample costs its entry and the
//! frames that changed (on Havlak 53 of the 109).
//!
//! A frame is stored in one 32-bit word when its method id and pc are small
//! (every frame of the AWFY benchmarks), else as an escape word and the two
//! numbers (`pack`): half the memory of storing the pairs, so half the
//! fresh pages a long sampled run touches (Havlak with the JIT at 10 kHz:
//! 5.4 MB of frames in 1.3 s, 1,300 page faults, before).
//!
//! Contract. `StackLog::push` (the VM's) compares the frames it is given with the
//! previous copy's (kept whole in one reused buffer) as it stores them; a
//! [`StackCursor`] gives back any copy's whole frames, exactly as pushed,
//! rebuilding them forwards from the previous one it gave (copies read in
//! the order they were pushed cost the frames that changed; going back
//! starts again from the first). [`StackLog::iter`] answers owned
//! [`StackSample`]s, for tests and small logs.

use crate::obs::sampling::StackSample;

/// What a copy is, beside its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackEntry {
    /// The sampler's request it answers (0: a deterministic sample).
    pub seq: u64,
    /// The running process.
    pub process: u32,
    /// Were outer frames left out (deeper than `MAX_STACK`)?
    pub truncated: bool,
    /// The send counter when the stack was copied.
    pub sends: u64,
    /// Outer frames the same as the previous copy's.
    shared: u32,
    /// Where its other frames start in the log's words.
    start: usize,
    /// How many frames it has in all.
    len: u32,
}

/// Copied stacks, oldest first, each stored as what it does not share with
/// the one before it (module doc).
#[derive(Debug, Clone, Default)]
pub struct StackLog {
    entries: Vec<StackEntry>,
    /// The frames each copy does not share with its predecessor, in order,
    /// packed ([`pack`]).
    words: Vec<u32>,
    /// The newest copy's frames, whole.
    last: Vec<(u32, u32)>,
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
        (body, top): (&[F], Option<(u32, u32)>),
        frame: impl Fn(&F) -> (u32, u32),
    ) {
        // The outer frames the previous copy has too, compared in one tight
        // loop over both slices (a deep stack's copy is mostly this), then
        // the rest appended.
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
        self.last
            .extend(body.get(shared..).unwrap_or(&[]).iter().map(&frame));
        self.last.extend(top.filter(|_| shared <= body.len()));
        let len = self.last.len();
        let start = self.words.len();
        for &f in &self.last[shared..] {
            pack(f, &mut self.words);
        }
        self.entries.push(StackEntry {
            seq,
            process,
            truncated,
            sends,
            shared: shared as u32,
            start,
            len: len as u32,
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

    /// The copies' entries, oldest first (index them for a [`StackCursor`]).
    pub fn entries(&self) -> &[StackEntry] {
        &self.entries
    }

    /// A reader of the copies' frames.
    pub fn cursor(&self) -> StackCursor<'_> {
        StackCursor {
            log: self,
            at: None,
            frames: Vec::new(),
        }
    }

    /// Every copy, whole and owned, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = StackSample> + '_ {
        let mut cursor = self.cursor();
        (0..self.entries.len()).map(move |i| {
            let e = self.entries[i];
            StackSample {
                seq: e.seq,
                process: e.process,
                frames: cursor.frames(i).to_vec(),
                truncated: e.truncated,
                sends: e.sends,
            }
        })
    }
}

/// Bits of a packed frame's pc: a frame whose pc is below `1 << PC_BITS` and
/// whose method id is below `1 << (31 - PC_BITS)` is one word.
const PC_BITS: u32 = 12;

/// The word before a frame stored as its two numbers.
const ESCAPE: u32 = 1 << 31;

/// Append frame `(method, pc)` to `words`: one word `method << PC_BITS |
/// pc` when both fit (the top bit clear), else [`ESCAPE`], the method id and
/// the pc.
fn pack((method, pc): (u32, u32), words: &mut Vec<u32>) {
    if pc < 1 << PC_BITS && method < 1 << (31 - PC_BITS) {
        words.push(method << PC_BITS | pc);
    } else {
        words.extend_from_slice(&[ESCAPE, method, pc]);
    }
}

/// Append the `count` frames packed at the start of `words` to `frames`.
fn unpack(words: &[u32], count: usize, frames: &mut Vec<(u32, u32)>) {
    let mut at = 0;
    for _ in 0..count {
        let w = words[at];
        if w & ESCAPE == 0 {
            frames.push((w >> PC_BITS, w & ((1 << PC_BITS) - 1)));
            at += 1;
        } else {
            frames.push((words[at + 1], words[at + 2]));
            at += 3;
        }
    }
}

/// Rebuilds a [`StackLog`]'s copies (module doc).
#[derive(Debug)]
pub struct StackCursor<'a> {
    log: &'a StackLog,
    /// The copy `frames` holds.
    at: Option<usize>,
    frames: Vec<(u32, u32)>,
}

impl StackCursor<'_> {
    /// The frames of copy `index` (empty past the end).
    pub fn frames(&mut self, index: usize) -> &[(u32, u32)] {
        self.frames_since(index).0
    }

    /// The frames of copy `index` (empty past the end), and how many of its
    /// outer frames are known to be those of the copy this cursor gave
    /// before (0 for the first): the frames no copy in between changed,
    /// which a reader of copies in order need not look at again.
    pub fn frames_since(&mut self, index: usize) -> (&[(u32, u32)], usize) {
        if index >= self.log.entries.len() {
            self.at = None;
            self.frames.clear();
            return (&[], 0);
        }
        let from = match self.at {
            Some(at) if at <= index => at + 1,
            _ => {
                self.frames.clear();
                0
            }
        };
        let mut unchanged = self.frames.len();
        for e in &self.log.entries[from..=index] {
            unchanged = unchanged.min(e.shared as usize);
            self.frames.truncate(e.shared as usize);
            let own = e.len as usize - e.shared as usize;
            unpack(&self.log.words[e.start..], own, &mut self.frames);
        }
        self.at = Some(index);
        (&self.frames, unchanged.min(self.frames.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stacks() -> impl Strategy<Value = Vec<Vec<(u32, u32)>>> {
        // Small method ids and pcs, so that neighbours share prefixes often,
        // and now and then one too large to pack in a word.
        let method = prop_oneof![8 => 0u32..3, 1 => Just(1 << 19), 1 => Just(u32::MAX)];
        let pc = prop_oneof![8 => 0u32..3, 1 => Just(1 << 12), 1 => Just(u32::MAX)];
        prop::collection::vec(prop::collection::vec((method, pc), 0..8), 0..40)
    }

    proptest! {
        /// Every copy comes back as it was pushed, read in order, read
        /// again from any point, and read backwards.
        #[test]
        fn copies_come_back_whole(all in stacks(), seek in 0usize..40) {
            let mut log = StackLog::default();
            for (i, s) in all.iter().enumerate() {
                log.push(i as u64, 0, false, i as u64 * 10, (&s[..], None), |f| *f);
            }
            prop_assert_eq!(log.len(), all.len());
            let back: Vec<_> = log.iter().map(|s| s.frames).collect();
            prop_assert_eq!(&back, &all);
            let mut c = log.cursor();
            if !all.is_empty() {
                let k = seek % all.len();
                prop_assert_eq!(c.frames(k), &all[k][..]);
                for i in (0..all.len()).rev() {
                    prop_assert_eq!(c.frames(i), &all[i][..]);
                }
            }
            prop_assert!(c.frames(all.len()).is_empty());
            // Read in order, each copy says how many outer frames it is
            // known to share with the one read before (a lower bound of
            // what they share, exact between neighbours).
            let mut c = log.cursor();
            let mut before: Vec<(u32, u32)> = Vec::new();
            for (i, s) in all.iter().enumerate() {
                let step = 1 + seek % 3;
                if i % step != 0 {
                    continue;
                }
                let (f, same) = c.frames_since(i);
                prop_assert_eq!(f, &s[..]);
                prop_assert_eq!(&f[..same], &before[..same]);
                if step == 1 && i > 0 {
                    let really = s.iter().zip(&before).take_while(|(a, b)| a == b).count();
                    prop_assert_eq!(same, really);
                }
                before = f.to_vec();
            }
            // What is stored: at most three words for each frame pushed, one
            // for each whose numbers are small.
            let words = |f: &(u32, u32)| if f.0 < 1 << 19 && f.1 < 1 << 12 { 1 } else { 3 };
            prop_assert!(log.words.len() <= all.iter().flatten().map(words).sum::<usize>());
        }
    }

    #[test]
    fn a_copy_stores_only_the_frames_that_changed() {
        let mut log = StackLog::default();
        let deep: Vec<(u32, u32)> = (0..100).map(|i| (i, 1)).collect();
        log.push(1, 0, false, 0, (&deep[..], None), |f| *f);
        let mut next = deep.clone();
        next[99] = (99, 2);
        log.push(2, 0, false, 5, (&next[..], None), |f| *f);
        log.push(3, 0, false, 9, (&next[..49], Some(next[49])), |f| *f);
        assert_eq!(log.words.len(), 100 + 1);
        let e = log.entries();
        assert_eq!((e[1].shared, e[2].shared, e[2].len), (99, 50, 50));
        let mut c = log.cursor();
        assert_eq!(c.frames(2), &next[..50]);
        assert_eq!(c.frames(1), &next[..]);
        assert_eq!(c.frames(0), &deep[..]);
    }
}
