//! [`ProfileBuilder`]: how a profiler fills a [`Profile`] while the program runs,
//! one `enter`/`exit`/`add_self` per event, in O(1) each (see the type's doc).

use crate::ids::{MethodId, NodeId};
use crate::profile::{
    CallSite, MethodInfo, Metric, Node, Profile, ROOT_METHOD, ROOT_NAME, ROOT_NODE,
};
use rustc_hash::FxHashMap;

/// Children per node up to which [`ProfileBuilder::enter`] scans linearly; nodes
/// with more children are indexed in a hash map.
const LINEAR_CHILDREN: usize = 8;

/// Builds a [`Profile`] from activation events, as a VM's hooks produce them.
///
/// The builder keeps the current calling context. [`enter`](Self::enter) moves to
/// the child context for a method (creating it on first use) and counts an
/// activation; [`exit`](Self::exit) (or [`exit_unwinding`](Self::exit_unwinding),
/// identical) returns to the parent; [`add_self`](Self::add_self) charges a value
/// to the current context. Before any `enter` (and after the matching exits) the
/// current context is the synthetic root.
///
/// Costs: `enter` is O(1) amortised — a linear scan of at most
/// 8 children, then a hash-map lookup keyed by (parent, method) for nodes with
/// many callees; `exit` and `add_self` are a few loads and stores.
///
/// Methods are registered with [`add_method`](Self::add_method),
/// [`intern_method`](Self::intern_method) (deduplicated by name) or
/// [`method_for_key`](Self::method_for_key) (a dense table keyed by the VM's own
/// small method ids, filled lazily).
#[derive(Debug, Clone)]
pub struct ProfileBuilder {
    profile: Profile,
    /// The open activations, innermost last: each one's parent context
    /// (the current one is `current`), with the value charged in all before
    /// it began and the caller's line when known (0: unknown), from which its
    /// [`CallSite`] is counted when it ends.
    stack: Vec<Open>,
    /// Everything charged so far (by `add_self`).
    charged: u64,
    current: NodeId,
    /// Per node, its children with their methods, side by side: `enter` scans
    /// these pairs (contiguous) instead of loading each child node (one cache
    /// line each); a node's children in the profile are in the same order.
    kids: Vec<Vec<(MethodId, NodeId)>>,
    /// (parent node, method) -> child node, for nodes with many children.
    wide: FxHashMap<(NodeId, MethodId), NodeId>,
    by_name: FxHashMap<String, MethodId>,
    by_key: Vec<MethodId>,
    counter_mark: u64,
    unbalanced_exits: u64,
    /// The path of the last [`add_sample`](Self::add_sample), each frame with
    /// the node it reached, so that the next sample walks only the frames
    /// past the part they share; and what each frame is still owed: the
    /// samples and weight added while it was on the path are counted (its
    /// activations, its call site) when it leaves the path.
    last_path: Vec<OnPath>,
    /// Samples added by `add_sample`, and their weight.
    sampled: u64,
    sampled_weight: u64,
    /// Per node (by index), what the frames leaving the samples' paths owe
    /// it, folded into the node at [`finish`](Self::finish): kept beside
    /// the nodes, small and dense, so that a sample's frames do not load
    /// their nodes and call sites (a cache miss each on a deep profile: half
    /// of a sample's building time on Havlak's 109 frames).
    owed: Vec<Owed>,
    /// One bit per node: has it no `call_line` yet? (A sample's new frames
    /// test this, not their nodes: a bit per node stays in the cache.)
    no_call_line: Vec<u64>,
}

/// What the sampled paths owe a node ([`ProfileBuilder::owed`]).
#[derive(Debug, Clone, Copy, Default)]
struct Owed {
    activations: u64,
    /// Calls and their total at the call site of line `site_line` (one line
    /// at a time: a frame leaving the path from another line first hands
    /// this one to the node, so that the node's call sites keep the order
    /// in which their lines came).
    site_calls: u64,
    site_total: u64,
    site_line: u32,
}

impl Owed {
    /// Hand the owed call site to `node`.
    fn pay_site(&mut self, node: &mut Node) {
        if self.site_calls != 0 {
            CallSite::add(
                &mut node.sites,
                self.site_line,
                self.site_calls,
                self.site_total,
            );
            (self.site_calls, self.site_total) = (0, 0);
        }
    }
}

/// A frame of the last sample's path ([`ProfileBuilder::last_path`]).
#[derive(Debug, Clone, Copy)]
struct OnPath {
    frame: SampleFrame,
    node: NodeId,
    /// `sampled` and `sampled_weight` when the frame joined the path.
    sampled_before: u64,
    weight_before: u64,
}

/// One frame of a sample's path ([`ProfileBuilder::add_sample`]): the method,
/// and the line of the call in the caller's source when known (as
/// [`ProfileBuilder::enter_from`] takes it; `None` as
/// [`ProfileBuilder::enter`]).
pub type SampleFrame = (MethodId, Option<u32>);

const NO_METHOD: MethodId = MethodId(usize::MAX);

/// An open activation of [`ProfileBuilder`].
#[derive(Debug, Clone, Copy)]
struct Open {
    parent: NodeId,
    charged_before: u64,
    line: u32,
}

impl ProfileBuilder {
    /// A builder for a profile of this metric, positioned at the synthetic root.
    pub fn new(metric: Metric) -> ProfileBuilder {
        let profile = Profile::new(metric);
        let mut by_name = FxHashMap::default();
        by_name.insert(ROOT_NAME.to_string(), ROOT_METHOD);
        ProfileBuilder {
            profile,
            stack: Vec::with_capacity(256),
            charged: 0,
            current: ROOT_NODE,
            kids: vec![Vec::new()],
            wide: FxHashMap::default(),
            by_name,
            by_key: Vec::new(),
            counter_mark: 0,
            unbalanced_exits: 0,
            last_path: Vec::new(),
            sampled: 0,
            sampled_weight: 0,
            owed: vec![Owed::default()],
            no_call_line: vec![1],
        }
    }

    /// Make room for `additional` more nodes, so that a builder that knows
    /// about how many it will make (a sampler: about one a sample on a deep
    /// profile) does not copy its per-node tables as they grow: each copy
    /// is fresh memory the process faults in.
    pub fn reserve_nodes(&mut self, additional: usize) {
        self.profile.nodes.reserve(additional);
        self.kids.reserve(additional);
        self.owed.reserve(additional);
        self.no_call_line.reserve(additional / 64 + 1);
    }

    /// Register a method (always a new entry) and answer its index.
    pub fn add_method(&mut self, info: MethodInfo) -> MethodId {
        let id = MethodId(self.profile.methods.len());
        self.by_name.entry(info.name.clone()).or_insert(id);
        self.profile.methods.push(info);
        id
    }

    /// The index of the method with this name, registering `info` if there is none.
    pub fn intern_method(&mut self, info: MethodInfo) -> MethodId {
        if let Some(&id) = self.by_name.get(&info.name) {
            return id;
        }
        self.add_method(info)
    }

    /// The method registered for a VM key (e.g. the VM's method id), calling `make`
    /// and interning its result (by name) the first time the key is seen. Keys
    /// index a dense table: keep them small.
    #[inline]
    pub fn method_for_key(&mut self, key: u32, make: impl FnOnce() -> MethodInfo) -> MethodId {
        let k = key as usize;
        if let Some(&m) = self.by_key.get(k)
            && m != NO_METHOD
        {
            return m;
        }
        let m = self.intern_method(make());
        if self.by_key.len() <= k {
            self.by_key.resize(k + 1, NO_METHOD);
        }
        self.by_key[k] = m;
        m
    }

    /// [`enter`](Self::enter), recording `line` (the line of the call in the
    /// caller's source) on the context if this is its first activation.
    #[inline]
    pub fn enter_from(&mut self, method: MethodId, line: Option<u32>) {
        self.enter(method);
        if let Some(open) = self.stack.last_mut() {
            open.line = line.unwrap_or(0);
        }
        let node = &mut self.profile.nodes[self.current];
        if node.call_line.is_none() && line.is_some() {
            node.call_line = line;
            let n = self.current.0;
            self.no_call_line[n / 64] &= !(1 << (n % 64));
        }
    }

    /// Enter `method` (an index answered by the registration functions) from the
    /// current context.
    ///
    /// `method` is not checked here (this is the hot path): an index that was not
    /// registered makes the finished profile fail [`Profile::validate`], and the
    /// reports, which expect a valid profile, panic on it.
    #[inline]
    pub fn enter(&mut self, method: MethodId) {
        if self.stack.is_empty() && !self.last_path.is_empty() {
            self.leave_path(0);
        }
        let parent = self.current;
        let child = self.child_of(parent, method);
        self.profile.nodes[child].activations += 1;
        self.stack.push(Open {
            parent,
            charged_before: self.charged,
            line: 0,
        });
        self.current = child;
    }

    #[inline]
    fn child_of(&mut self, parent: NodeId, method: MethodId) -> NodeId {
        let kids = &self.kids[parent.0];
        if kids.len() <= LINEAR_CHILDREN {
            for &(m, c) in kids {
                if m == method {
                    return c;
                }
            }
        } else if let Some(&c) = self.wide.get(&(parent, method)) {
            return c;
        }
        self.new_child(parent, method)
    }

    #[cold]
    fn new_child(&mut self, parent: NodeId, method: MethodId) -> NodeId {
        let id = NodeId(self.profile.nodes.len());
        self.profile.nodes.push(Node {
            method,
            parent: Some(parent),
            children: Vec::new(),
            activations: 0,
            self_value: 0,
            call_line: None,
            sites: Vec::new(),
        });
        self.kids.push(Vec::new());
        self.owed.push(Owed::default());
        if id.0.is_multiple_of(64) {
            self.no_call_line.push(0);
        }
        self.no_call_line[id.0 / 64] |= 1 << (id.0 % 64);
        self.kids[parent.0].push((method, id));
        let nodes = &mut self.profile.nodes;
        nodes[parent].children.push(id);
        let len = nodes[parent].children.len();
        if len == LINEAR_CHILDREN + 1 {
            for &c in &nodes[parent].children {
                self.wide.insert((parent, nodes[c].method), c);
            }
        } else if len > LINEAR_CHILDREN + 1 {
            self.wide.insert((parent, method), id);
        }
        id
    }

    /// Leave the current context (a return). An exit with no matching enter is
    /// counted ([`unbalanced_exits`](Self::unbalanced_exits)) and otherwise ignored.
    #[inline]
    pub fn exit(&mut self) {
        match self.stack.pop() {
            Some(open) => {
                if open.line != 0 {
                    self.close_site(open);
                }
                self.current = open.parent;
            }
            None => self.unbalanced_exits += 1,
        }
    }

    /// Count the activation `open` of the current context at its call site.
    fn close_site(&mut self, open: Open) {
        let total = self.charged.wrapping_sub(open.charged_before);
        let node = &mut self.profile.nodes[self.current];
        // Only a builder that took samples owes a call site (events alone
        // never touch `owed`): its line goes first, as it came first.
        if self.sampled != 0 {
            self.owed[self.current.0].pay_site(node);
        }
        CallSite::add(&mut node.sites, open.line, 1, total);
    }

    /// Leave the current context by unwinding (exception, non-local return,
    /// process termination). Identical to [`exit`](Self::exit): the values charged
    /// so far stay where they were charged.
    #[inline]
    pub fn exit_unwinding(&mut self) {
        self.exit();
    }

    /// Charge `value` to the current context's self value.
    #[inline]
    pub fn add_self(&mut self, value: u64) {
        self.add_self_to(self.current, value);
    }

    /// Charge `weight` to the context `path` (outermost frame first) and
    /// answer its node: the same profile as entering each frame
    /// ([`enter_from`](Self::enter_from)), [`add_self`](Self::add_self) and
    /// exiting them all, as a sampling profiler builds a sample, but each
    /// frame the path shares with the previous sample's (the same methods and
    /// lines from the outermost frame) takes its node from there instead of
    /// looking it up: consecutive samples of a deep stack mostly differ near
    /// the leaf. Every frame still counts its activation and, with a line,
    /// one call of the sample's weight at its call site, but a frame counts
    /// the samples it was in when it leaves the path (a later sample does not
    /// share it, [`enter`](Self::enter) starts at the root, or
    /// [`finish`](Self::finish)), so that a sample costs only the frames it
    /// does not share.
    ///
    /// The path starts at the current context, which must be the root (no
    /// open activation); elsewhere the frames are entered and exited one by
    /// one.
    pub fn add_sample(&mut self, path: &[SampleFrame], weight: u64) -> NodeId {
        self.add_sample_sharing(path, 0, weight)
    }

    /// [`add_sample`](Self::add_sample) where the caller knows that the
    /// first `same` frames of `path` are the previous sample's (the path it
    /// gave the last time, cut there): they are not compared again, so that
    /// a sample costs the frames that changed, not the depth of its stack.
    /// The frames past `same` are compared as `add_sample` does.
    pub fn add_sample_sharing(&mut self, path: &[SampleFrame], same: usize, weight: u64) -> NodeId {
        if !self.stack.is_empty() {
            for &(m, line) in path {
                self.enter_from(m, line);
            }
            self.add_self(weight);
            let leaf = self.current;
            for _ in path {
                self.exit();
            }
            return leaf;
        }
        let same = same.min(path.len()).min(self.last_path.len());
        debug_assert!(
            path[..same]
                .iter()
                .zip(&self.last_path)
                .all(|(f, on)| *f == on.frame),
            "add_sample_sharing: the frames said to be the same are not"
        );
        let shared = same
            + path[same..]
                .iter()
                .zip(&self.last_path[same..])
                .take_while(|(f, on)| **f == on.frame)
                .count();
        self.leave_path(shared);
        let mut parent = self.last_path.last().map_or(ROOT_NODE, |on| on.node);
        for &(m, line) in &path[shared..] {
            let child = self.child_of(parent, m);
            let (word, bit) = (child.0 / 64, 1 << (child.0 % 64));
            if line.is_some() && self.no_call_line[word] & bit != 0 {
                self.no_call_line[word] &= !bit;
                self.profile.nodes[child].call_line = line;
            }
            self.last_path.push(OnPath {
                frame: (m, line),
                node: child,
                sampled_before: self.sampled,
                weight_before: self.sampled_weight,
            });
            parent = child;
        }
        self.add_self_to(parent, weight);
        self.sampled += 1;
        self.sampled_weight = self.sampled_weight.wrapping_add(weight);
        parent
    }

    /// Count the frames of the last sample's path from `depth` on, which the
    /// next sample does not share: each activation and call made while it
    /// was on the path (owed to its node: [`ProfileBuilder::owed`]).
    fn leave_path(&mut self, depth: usize) {
        for on in self.last_path.drain(depth..) {
            let calls = self.sampled - on.sampled_before;
            let owed = &mut self.owed[on.node.0];
            owed.activations += calls;
            if let Some(line) = on.frame.1.filter(|&l| l != 0) {
                let total = self.sampled_weight.wrapping_sub(on.weight_before);
                if owed.site_line != line {
                    owed.pay_site(&mut self.profile.nodes[on.node]);
                    owed.site_line = line;
                }
                owed.site_calls = owed.site_calls.saturating_add(calls);
                owed.site_total = owed.site_total.saturating_add(total);
            }
        }
    }

    /// Charge `value` to the self value of `node`.
    fn add_self_to(&mut self, node: NodeId, value: u64) {
        let n = &mut self.profile.nodes[node];
        n.self_value = n.self_value.wrapping_add(value);
        self.charged = self.charged.wrapping_add(value);
    }

    /// Charge the growth of a monotonic counter (e.g. the VM's send counter) since
    /// the previous call to the current context, Compteur style: call it with the
    /// counter's value just before each `enter`/`exit` (and before `finish`). The
    /// first call charges the counter's whole value (the mark starts at 0; use
    /// [`set_counter_mark`](Self::set_counter_mark) to start elsewhere). A counter
    /// that went backwards (reset) charges nothing and moves the mark.
    #[inline]
    pub fn advance_counter(&mut self, counter: u64) {
        if counter > self.counter_mark {
            self.add_self(counter - self.counter_mark);
        }
        self.counter_mark = counter;
    }

    /// Set the mark [`advance_counter`](Self::advance_counter) measures from.
    pub fn set_counter_mark(&mut self, counter: u64) {
        self.counter_mark = counter;
    }

    /// The current context's node index.
    pub fn current_node(&self) -> NodeId {
        self.current
    }

    /// The number of open activations (0 at the root).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// Exits that had no matching enter.
    pub fn unbalanced_exits(&self) -> u64 {
        self.unbalanced_exits
    }

    /// The profile built so far (open activations are included as they are;
    /// the samples' frames have their self values, their activations and
    /// call sites are added at [`finish`](Self::finish)).
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The profile. Open activations need not be closed: their values are
    /// already charged.
    pub fn finish(mut self) -> Profile {
        self.leave_path(0);
        // Activations still open are counted at their call sites as they are.
        while !self.stack.is_empty() {
            self.exit();
        }
        for (owed, node) in self.owed.iter_mut().zip(&mut self.profile.nodes) {
            node.activations += owed.activations;
            owed.pay_site(node);
        }
        self.profile
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Frames over a few methods and lines, so that paths share prefixes.
    fn frame() -> impl Strategy<Value = (usize, Option<u32>)> {
        (0..4usize, prop_oneof![Just(None), (0..3u32).prop_map(Some)])
    }

    /// A sample: its frames (method index, line), its weight, and whether the
    /// sampled builder gets it as events too (a profiler mixing both).
    type Drawn = (Vec<(usize, Option<u32>)>, u64, bool);

    fn samples() -> impl Strategy<Value = Vec<Drawn>> {
        prop::collection::vec(
            (
                prop::collection::vec(frame(), 0..7),
                1..100u64,
                prop::bool::weighted(0.1),
            ),
            0..40,
        )
    }

    /// Enter `path`, charge `weight`, exit; answer the leaf's node.
    fn by_events(b: &mut ProfileBuilder, path: &[SampleFrame], weight: u64) -> NodeId {
        for &(m, line) in path {
            b.enter_from(m, line);
        }
        b.add_self(weight);
        let leaf = b.current_node();
        for _ in path {
            b.exit();
        }
        leaf
    }

    fn builder() -> (ProfileBuilder, Vec<MethodId>) {
        let mut b = ProfileBuilder::new(Metric::Samples);
        let ms = (0..4)
            .map(|i| b.add_method(MethodInfo::named(format!("C>>m{i}"))))
            .collect();
        (b, ms)
    }

    proptest! {
        /// `add_sample` builds the very profile that entering, charging and
        /// exiting each sample's frames builds, whatever the samples share.
        #[test]
        fn add_sample_is_enter_charge_exit(samples in samples()) {
            let (mut one_by_one, ms) = builder();
            let (mut sampled, _) = builder();
            // The same samples told what they share with the previous one
            // (all of it, or a part: a lower bound is enough).
            let (mut told, _) = builder();
            let mut previous: Vec<SampleFrame> = Vec::new();
            for (i, (frames, weight, as_events)) in samples.iter().enumerate() {
                let path: Vec<SampleFrame> = frames.iter().map(|&(m, l)| (ms[m], l)).collect();
                let leaf = by_events(&mut one_by_one, &path, *weight);
                if *as_events {
                    prop_assert_eq!(by_events(&mut sampled, &path, *weight), leaf);
                    prop_assert_eq!(by_events(&mut told, &path, *weight), leaf);
                    previous.clear();
                } else {
                    prop_assert_eq!(sampled.add_sample(&path, *weight), leaf);
                    let same = path.iter().zip(&previous).take_while(|(a, b)| a == b).count();
                    let same = if i % 2 == 0 { same } else { same / 2 };
                    prop_assert_eq!(told.add_sample_sharing(&path, same, *weight), leaf);
                    previous = path;
                }
            }
            let expected = one_by_one.finish();
            prop_assert_eq!(&expected, &sampled.finish());
            prop_assert_eq!(&expected, &told.finish());
        }
    }

    #[test]
    fn add_sample_inside_an_open_activation_enters_and_exits() {
        let (mut b, ms) = builder();
        b.enter(ms[0]);
        let leaf = b.add_sample(&[(ms[1], Some(4))], 7);
        assert_eq!(b.current_node(), NodeId(1));
        assert_eq!(b.depth(), 1);
        b.exit();
        let p = b.finish();
        assert_eq!(p.nodes[leaf].self_value, 7);
        assert_eq!(
            p.nodes[leaf].sites,
            vec![CallSite {
                line: 4,
                calls: 1,
                total: 7
            }]
        );
    }
}
