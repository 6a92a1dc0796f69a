//! [`ProfileBuilder`]: how a profiler fills a [`Profile`] while the program runs,
//! one `enter`/`exit`/`add_self` per event, in O(1) each (see the type's doc).

use crate::ids::{MethodId, NodeId};
use crate::profile::{
    CallSite, MethodInfo, Metric, Node, Profile, ROOT_METHOD, ROOT_NAME, ROOT_NODE,
};
use lupa_trie::Children;
use rustc_hash::FxHashMap;

/// Builds a [`Profile`] from activation events, as a VM's hooks produce them.
///
/// The builder keeps the current calling context. [`enter`](Self::enter) moves to
/// the child context for a method (creating it on first use) and counts an
/// activation; [`exit`](Self::exit) (or [`exit_unwinding`](Self::exit_unwinding),
/// identical) returns to the parent; [`add_self`](Self::add_self) charges a value
/// to the current context. Before any `enter` (and after the matching exits) the
/// current context is the synthetic root. A sampler gives contexts with their
/// values at once instead ([`add_context`](Self::add_context), through a
/// [`SampleTree`](crate::SampleTree)).
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
    /// Per node, its children by method: `enter` scans these (side by side)
    /// instead of loading each child node (one cache line each); a node's
    /// children in the profile are in the same order.
    kids: Children<MethodId, NodeId>,
    by_name: FxHashMap<String, MethodId>,
    by_key: Vec<MethodId>,
    counter_mark: u64,
    unbalanced_exits: u64,
}

/// One frame of a sample's path ([`ProfileBuilder::add_context`]): the method,
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
            kids: {
                let mut kids = Children::new();
                kids.add_node();
                kids
            },
            by_name,
            by_key: Vec::new(),
            counter_mark: 0,
            unbalanced_exits: 0,
        }
    }

    /// Make room for `additional` more nodes, so that a builder that knows
    /// about how many it will make (a sampler: at most its tree's nodes,
    /// [`SampleTree::len`](crate::SampleTree::len)) does not copy its per-node tables as they grow: each copy
    /// is fresh memory the process faults in.
    pub fn reserve_nodes(&mut self, additional: usize) {
        self.profile.nodes.reserve(additional);
        self.kids.reserve(additional);
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
        match self.kids.get(parent.0, method) {
            Some(c) => c,
            None => self.new_child(parent, method),
        }
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
        self.kids.add_node();
        self.kids.insert(parent.0, method, id);
        crate::profile::push_first_exact(&mut self.profile.nodes[parent].children, id);
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

    /// The context of `method` below `parent` (made the first time), as
    /// `samples` samples reached it, `self_value` of their value charged to
    /// it and `total` in all (its subtree's): what entering it from
    /// `parent` that many times, charging and exiting builds (its
    /// activations, its call line if it has none yet, one call site of
    /// `samples` calls and `total` at `line` unless the line is 0), with the
    /// values given at once. A sampler gives each distinct path of its
    /// samples this way, parents first ([`SampleTree`](crate::SampleTree)).
    /// The current context does not move.
    pub fn add_context(
        &mut self,
        parent: NodeId,
        (method, line): SampleFrame,
        self_value: u64,
        samples: u64,
        total: u64,
    ) -> NodeId {
        let child = self.child_of(parent, method);
        let node = &mut self.profile.nodes[child];
        node.activations += samples;
        if node.call_line.is_none() && line.is_some() {
            node.call_line = line;
        }
        if let Some(l) = line.filter(|&l| l != 0 && samples != 0) {
            CallSite::add(&mut node.sites, l, samples, total);
        }
        self.add_self_to(child, self_value);
        child
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

    /// The profile built so far (open activations are included as they are:
    /// their call sites are counted when they exit, or at
    /// [`finish`](Self::finish)).
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The profile. Open activations need not be closed: their values are
    /// already charged.
    pub fn finish(mut self) -> Profile {
        // Activations still open are counted at their call sites as they are.
        while !self.stack.is_empty() {
            self.exit();
        }
        self.profile
    }
}
