//! The profile data model: a calling-context tree of methods with a metric.
//!
//! A [`Profile`] is what a profiler fills and what every report reads:
//!
//! * `methods` — the table of methods ([`MethodInfo`]), referenced by index;
//! * `nodes` — a calling-context tree (CCT): one [`Node`] per distinct call path,
//!   with the number of activations of that context and the metric attributed to
//!   it directly (`self_value`, e.g. the sends executed by the method's own code).
//!
//! # The synthetic root
//!
//! A profile made by [`ProfileBuilder`] (or [`Profile::new`]) has exactly one root:
//! node [`ROOT_NODE`] (index 0), whose method is method 0, named [`ROOT_NAME`]
//! (`"<root>"`). It is *synthetic*: it stands for "outside any profiled method" and
//! has no activations; the metric charged while no method is active lands in its
//! `self_value`. Reports leave it out of paths (folded stacks, speedscope, flame
//! graph labels) and out of the method ranking, and show its inclusive value as the
//! grand total.
//!
//! Profiles read from elsewhere may have several roots (nodes with `parent: None`)
//! and no synthetic root; every computation here works on any forest. A root is
//! synthetic when its method is named [`ROOT_NAME`] and has an empty class
//! ([`MethodInfo::is_synthetic_root`]).
//!
//! # Derived values
//!
//! * [`Profile::node_totals`]: the inclusive (total) value of each node, i.e. its
//!   self value plus its descendants';
//! * [`Profile::method_stats`]: per method, activations and self value summed over
//!   all its contexts, and the total summed only over contexts that have no
//!   ancestor context of the same method — so recursion is not double counted (as
//!   MessageTally and KCachegrind do);
//! * [`Profile::call_edges`]: the call graph, per (caller method, callee method).
//!
//! All tree walks are iterative: deep recursion in the profiled program cannot
//! overflow the analysing thread's stack.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use crate::builder::ProfileBuilder;
pub use crate::ids::{MethodId, NodeId};

crate::ids::index_by!(NodeId: Node);
crate::ids::index_by!(MethodId: MethodInfo, MethodStats);

/// Name of the synthetic root method of profiles made by [`ProfileBuilder`].
pub const ROOT_NAME: &str = "<root>";

/// Index of the synthetic root node (and of its method) in a profile made by
/// [`ProfileBuilder`] or [`Profile::new`].
pub const ROOT_NODE: NodeId = NodeId(0);

/// Index of the synthetic root method (the method of [`ROOT_NODE`]).
pub const ROOT_METHOD: MethodId = MethodId(0);

/// What the values of a profile measure.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Executed message sends (Compteur's metric).
    Sends,
    /// Stack samples taken by a sampling profiler.
    Samples,
    /// Elapsed time in nanoseconds.
    Nanoseconds,
    /// Executed bytecodes.
    Bytecodes,
    /// Allocated bytes.
    Bytes,
    /// Anything else: a display name (e.g. `"Allocations"`) and a unit (`"objects"`).
    Custom {
        /// Display name of the metric, e.g. in table headers.
        name: String,
        /// Unit of one value, e.g. `"objects"`.
        unit: String,
    },
}

impl Metric {
    /// Display name: `"Sends"`, `"Samples"`, `"Time"`, ...
    pub fn name(&self) -> &str {
        match self {
            Metric::Sends => "Sends",
            Metric::Samples => "Samples",
            Metric::Nanoseconds => "Time",
            Metric::Bytecodes => "Bytecodes",
            Metric::Bytes => "Allocation",
            Metric::Custom { name, .. } => name,
        }
    }

    /// Unit of one value: `"sends"`, `"samples"`, `"ns"`, ...
    pub fn unit(&self) -> &str {
        match self {
            Metric::Sends => "sends",
            Metric::Samples => "samples",
            Metric::Nanoseconds => "ns",
            Metric::Bytecodes => "bytecodes",
            Metric::Bytes => "bytes",
            Metric::Custom { unit, .. } => unit,
        }
    }

    /// The event name for the callgrind `events:` line (no white space):
    /// `Sends`, `Samples`, `Nanoseconds`, ...
    pub fn event_name(&self) -> String {
        let raw = match self {
            Metric::Sends => "Sends",
            Metric::Samples => "Samples",
            Metric::Nanoseconds => "Nanoseconds",
            Metric::Bytecodes => "Bytecodes",
            Metric::Bytes => "Bytes",
            Metric::Custom { name, .. } => name,
        };
        let cleaned: String = raw
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        if cleaned.is_empty() {
            "Value".to_string()
        } else {
            cleaned
        }
    }

    /// The speedscope `ValueUnit` for this metric (`"none"` when speedscope has
    /// no matching unit).
    pub fn speedscope_unit(&self) -> &'static str {
        match self {
            Metric::Nanoseconds => "nanoseconds",
            Metric::Bytes => "bytes",
            _ => "none",
        }
    }
}

/// A profiled method (or block, or any other code unit the profiler reports).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MethodInfo {
    /// Display name, normally `"Class>>selector"`; unique names are expected by
    /// the text reports (two methods with one name are shown as two lines).
    pub name: String,
    /// Class name (`"Integer"`, `"Integer class"`); empty if not applicable.
    pub class: String,
    /// Selector (`"fib:"`); empty if not applicable.
    pub selector: String,
    /// Category or package (used to colour flame graphs and to filter).
    #[serde(default)]
    pub category: String,
    /// Source file, if known.
    #[serde(default)]
    pub file: Option<String>,
    /// Line of the method's definition in `file`, if known (1-based).
    #[serde(default)]
    pub line: Option<u32>,
    /// The method's self value split by source line, `(line, value)` in line
    /// order, when the profiler knows where in the method its own cost arose
    /// (Compteur: the line of each executed send). Empty when unknown. Summed
    /// over lines it is at most the method's self value summed over its
    /// contexts; exports put any rest on the definition line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_costs: Vec<(u32, u64)>,
}

impl MethodInfo {
    /// A method named `"Class>>selector"`, without category, file or line.
    pub fn new(class: impl Into<String>, selector: impl Into<String>) -> MethodInfo {
        let class = class.into();
        let selector = selector.into();
        MethodInfo {
            name: format!("{class}>>{selector}"),
            class,
            selector,
            category: String::new(),
            file: None,
            line: None,
            line_costs: Vec::new(),
        }
    }

    /// A method with a free-form name (no class/selector split).
    pub fn named(name: impl Into<String>) -> MethodInfo {
        MethodInfo {
            name: name.into(),
            class: String::new(),
            selector: String::new(),
            category: String::new(),
            file: None,
            line: None,
            line_costs: Vec::new(),
        }
    }

    /// The synthetic root method ([`ROOT_NAME`]).
    pub fn synthetic_root() -> MethodInfo {
        MethodInfo::named(ROOT_NAME)
    }

    /// Is this the synthetic root method (named [`ROOT_NAME`], empty class)?
    pub fn is_synthetic_root(&self) -> bool {
        self.name == ROOT_NAME && self.class.is_empty()
    }

    /// Set the category (package).
    pub fn with_category(mut self, category: impl Into<String>) -> MethodInfo {
        self.category = category.into();
        self
    }

    /// Set the source file and line.
    pub fn with_location(mut self, file: impl Into<String>, line: Option<u32>) -> MethodInfo {
        self.file = Some(file.into());
        self.line = line;
        self
    }
}

/// One calling context: a method reached by one particular call path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// Index into [`Profile::methods`].
    pub method: MethodId,
    /// Parent context; `None` for a root.
    pub parent: Option<NodeId>,
    /// Child contexts (distinct callee methods in this context).
    pub children: Vec<NodeId>,
    /// How many times this context was entered.
    pub activations: u64,
    /// Metric attributed to this context directly (not to its callees).
    pub self_value: u64,
    /// The source line, in the parent context's method, of the call that
    /// first entered this context (a context stands for every call of its
    /// method from its parent; callgrind places the call cost on this line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_line: Option<u32>,
    /// The calls into this context per source line of the parent's method
    /// (when the profiler records them: Compteur), each with its calls and
    /// the inclusive value of those activations, in the order first seen;
    /// their calls add up to `activations`, their values to the context's
    /// total. Callgrind writes each call site on its own line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<CallSite>,
}

/// The calls into a context from one source line of its parent's method
/// ([`Node::sites`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSite {
    /// The line of the send in the parent's method.
    pub line: u32,
    /// Activations from that line.
    pub calls: u64,
    /// The inclusive value of those activations.
    pub total: u64,
}

impl CallSite {
    /// Add `calls` calls of inclusive value `total` from `line` to `sites`.
    /// A context's first site gets room for itself only: most contexts are
    /// called from one line (a profile of a deep recursion has thousands of
    /// contexts), and a list grows as usual from its second.
    pub fn add(sites: &mut Vec<CallSite>, line: u32, calls: u64, total: u64) {
        match sites.iter_mut().find(|s| s.line == line) {
            Some(s) => {
                s.calls = s.calls.saturating_add(calls);
                s.total = s.total.saturating_add(total);
            }
            None => CallSite::push_new(sites, CallSite { line, calls, total }),
        }
    }

    /// A site `add` did not find: out of line, so that `add` stays small
    /// enough to inline where contexts are exited (a new site is rare).
    #[cold]
    #[inline(never)]
    fn push_new(sites: &mut Vec<CallSite>, site: CallSite) {
        push_first_exact(sites, site);
    }
}

/// Push `item` to `list`, with room for it only when it is the first (the
/// per-node lists of a profile: most nodes have one child and one call
/// site, and a list's default first room is four).
pub(crate) fn push_first_exact<T>(list: &mut Vec<T>, item: T) {
    if list.capacity() == 0 {
        list.reserve_exact(1);
    }
    list.push(item);
}

/// A profile: methods, a calling-context tree and the metric of its values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// What the values measure.
    pub metric: Metric,
    /// The methods, referenced by [`Node::method`].
    pub methods: Vec<MethodInfo>,
    /// The calling-context tree (a forest in general; see the module docs).
    pub nodes: Vec<Node>,
}

/// Per-method aggregate of a profile ([`Profile::method_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodStats {
    /// Activations, summed over all contexts of the method.
    pub activations: u64,
    /// Self value, summed over all contexts of the method.
    pub self_value: u64,
    /// Inclusive value: the totals of the method's outermost contexts (those with
    /// no ancestor context of the same method), so recursion is counted once.
    pub total: u64,
    /// Number of contexts (tree nodes) of the method.
    pub contexts: u64,
}

/// A call-graph edge ([`Profile::call_edges`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallEdge {
    /// Calling method (index into [`Profile::methods`]).
    pub caller: MethodId,
    /// Called method.
    pub callee: MethodId,
    /// Activations of `callee` directly from `caller`.
    pub calls: u64,
    /// Inclusive value of those activations (sum of the totals of the callee's
    /// contexts whose parent context is the caller's). With recursion this counts
    /// nested recursive calls again, as callgrind's own call costs do.
    pub total: u64,
    /// Like `total`, but only over callee contexts with no ancestor context of the
    /// callee's method (nested recursive activations count 0), so that the
    /// `outer_total`s of a method's incoming edges add up to its
    /// [`MethodStats::total`].
    pub outer_total: u64,
    /// The caller's source line of these calls, when the profiler recorded it
    /// (the first recorded call line of the contributing contexts).
    pub line: Option<u32>,
}

/// A structural problem found by [`Profile::validate`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProfileError {
    /// A node refers to a method index out of range.
    #[error("node {node} refers to method {method}, but there are {methods} methods")]
    MethodOutOfRange {
        /// The node.
        node: usize,
        /// Its method index.
        method: usize,
        /// Number of methods.
        methods: usize,
    },
    /// A parent or child index is out of range.
    #[error("node {node} refers to node {other}, but there are {nodes} nodes")]
    NodeOutOfRange {
        /// The node.
        node: usize,
        /// The bad index.
        other: usize,
        /// Number of nodes.
        nodes: usize,
    },
    /// `children` and `parent` disagree.
    #[error("node {child} is listed as a child of {parent} but its parent is {actual:?}")]
    ParentMismatch {
        /// The parent listing the child.
        parent: usize,
        /// The child.
        child: usize,
        /// The child's recorded parent.
        actual: Option<usize>,
    },
    /// A node is not reachable from a root exactly once (cycle or shared child).
    #[error("node {node} is not reachable exactly once from the roots")]
    NotATree {
        /// The node.
        node: usize,
    },
}

impl Profile {
    /// An empty profile with the synthetic root (method 0 and node 0).
    pub fn new(metric: Metric) -> Profile {
        Profile {
            metric,
            methods: vec![MethodInfo::synthetic_root()],
            nodes: vec![Node {
                method: ROOT_METHOD,
                parent: None,
                children: Vec::new(),
                activations: 0,
                self_value: 0,
                call_line: None,
                sites: Vec::new(),
            }],
        }
    }

    /// Check indices and that `nodes` is a forest whose `parent` and `children`
    /// links agree.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let n = self.nodes.len();
        for (i, node) in self.nodes.iter().enumerate() {
            if node.method.index() >= self.methods.len() {
                return Err(ProfileError::MethodOutOfRange {
                    node: i,
                    method: node.method.index(),
                    methods: self.methods.len(),
                });
            }
            if let Some(p) = node.parent
                && p.index() >= n
            {
                return Err(ProfileError::NodeOutOfRange {
                    node: i,
                    other: p.index(),
                    nodes: n,
                });
            }
            for &c in &node.children {
                if c.index() >= n {
                    return Err(ProfileError::NodeOutOfRange {
                        node: i,
                        other: c.index(),
                        nodes: n,
                    });
                }
                if self.nodes[c].parent != Some(NodeId(i)) {
                    return Err(ProfileError::ParentMismatch {
                        parent: i,
                        child: c.index(),
                        actual: self.nodes[c].parent.map(NodeId::index),
                    });
                }
            }
        }
        let mut seen = vec![false; n];
        let mut stack: Vec<NodeId> = self.roots().collect();
        while let Some(i) = stack.pop() {
            if seen[i.index()] {
                return Err(ProfileError::NotATree { node: i.index() });
            }
            seen[i.index()] = true;
            stack.extend(self.nodes[i].children.iter().copied());
        }
        match seen.iter().position(|s| !s) {
            Some(node) => Err(ProfileError::NotATree { node }),
            None => Ok(()),
        }
    }

    /// The root nodes (those without a parent), in index order.
    pub fn roots(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.parent.is_none())
            .map(|(i, _)| NodeId(i))
    }

    /// The method of a node.
    pub fn method_of(&self, node: NodeId) -> &MethodInfo {
        &self.methods[self.nodes[node].method]
    }

    /// Does the profile know how many activations its contexts stand for?
    /// A sampling profiler sees no calls: every count is 0, which reports
    /// show as unknown rather than as "0 calls".
    pub fn knows_activations(&self) -> bool {
        self.nodes.iter().any(|n| n.activations > 0)
    }

    /// Is this node a synthetic root (a root whose method is the synthetic root)?
    pub fn is_synthetic(&self, node: NodeId) -> bool {
        self.nodes[node].parent.is_none() && self.method_of(node).is_synthetic_root()
    }

    /// The index of the first method with this name.
    pub fn method_index(&self, name: &str) -> Option<MethodId> {
        self.methods
            .iter()
            .position(|m| m.name == name)
            .map(MethodId)
    }

    /// Nodes in depth-first pre-order (parents before children; children in their
    /// stored order). Nodes unreachable from a root are left out.
    pub fn preorder(&self) -> Vec<NodeId> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<NodeId> = self.roots().collect();
        stack.reverse();
        let mut seen = vec![false; self.nodes.len()];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i.index()], true) {
                continue; // malformed input: do not loop
            }
            order.push(i);
            stack.extend(self.nodes[i].children.iter().rev().copied());
        }
        order
    }

    /// Visit every node `roots` reach, depth first (children in their stored
    /// order), with its path: the non-synthetic nodes from its root to it,
    /// outermost first (itself last unless synthetic). One walk shares the
    /// path, so the work is linear in the tree however deep it is; each node
    /// is visited once (malformed cyclic input does not loop).
    pub fn walk_paths(
        &self,
        roots: impl IntoIterator<Item = NodeId>,
        mut visit: impl FnMut(NodeId, &[NodeId]),
    ) {
        let mut seen = vec![false; self.nodes.len()];
        let mut path: Vec<NodeId> = Vec::new();
        let mut todo: Vec<(NodeId, usize)> = roots.into_iter().map(|r| (r, 0)).collect();
        todo.reverse();
        while let Some((n, len)) = todo.pop() {
            match seen.get_mut(n.index()) {
                Some(s) if !*s => *s = true,
                _ => continue,
            }
            path.truncate(len);
            if !self.is_synthetic(n) {
                path.push(n);
            }
            visit(n, &path);
            let here = path.len();
            todo.extend(self.nodes[n].children.iter().rev().map(|&c| (c, here)));
        }
    }

    /// The inclusive (total) value of every node: its self value plus the self
    /// values of all its descendants. Indexed like `nodes`.
    pub fn node_totals(&self) -> Vec<u64> {
        let order = self.preorder();
        let mut totals: Vec<u64> = self.nodes.iter().map(|n| n.self_value).collect();
        for &i in order.iter().rev() {
            if let Some(p) = self.nodes[i].parent
                && p.index() < totals.len()
            {
                totals[p.index()] = totals[p.index()].saturating_add(totals[i.index()]);
            }
        }
        totals
    }

    /// The sum of all self values reachable from the roots (the grand total).
    pub fn grand_total(&self) -> u64 {
        let totals = self.node_totals();
        self.roots()
            .map(|r| totals[r.index()])
            .fold(0, u64::saturating_add)
    }

    /// Per-method aggregates, indexed like `methods` (see [`MethodStats`]).
    pub fn method_stats(&self) -> Vec<MethodStats> {
        let totals = self.node_totals();
        self.method_stats_with(&totals)
    }

    /// [`Profile::method_stats`] with precomputed [`Profile::node_totals`].
    pub fn method_stats_with(&self, totals: &[u64]) -> Vec<MethodStats> {
        let outermost = self.outermost_contexts();
        let mut stats = vec![MethodStats::default(); self.methods.len()];
        for i in self.preorder() {
            let node = &self.nodes[i];
            let s = &mut stats[node.method.index()];
            s.activations = s.activations.saturating_add(node.activations);
            s.self_value = s.self_value.saturating_add(node.self_value);
            s.contexts += 1;
            if outermost[i.index()] {
                s.total = s.total.saturating_add(totals[i.index()]);
            }
        }
        stats
    }

    /// For each node: does no ancestor context have the same method? (The
    /// contexts whose totals make up their method's total.)
    pub fn outermost_contexts(&self) -> Vec<bool> {
        let mut outermost = vec![false; self.nodes.len()];
        let mut on_path = vec![0u32; self.methods.len()];
        // Iterative DFS with explicit exit events to maintain `on_path`.
        let mut stack: Vec<(NodeId, bool)> = self.roots().map(|r| (r, false)).collect();
        stack.reverse();
        let mut seen = vec![false; self.nodes.len()];
        while let Some((i, exiting)) = stack.pop() {
            let node = &self.nodes[i];
            let m = node.method.index();
            if exiting {
                on_path[m] -= 1;
                continue;
            }
            if std::mem::replace(&mut seen[i.index()], true) {
                continue;
            }
            outermost[i.index()] = on_path[m] == 0;
            on_path[m] += 1;
            stack.push((i, true));
            stack.extend(node.children.iter().rev().map(|&c| (c, false)));
        }
        outermost
    }

    /// The call graph: one edge per (caller method, callee method) pair that
    /// occurs as (parent context, child context), sorted by caller index then
    /// callee index. Edges from a synthetic root are included.
    pub fn call_edges(&self) -> Vec<CallEdge> {
        let totals = self.node_totals();
        self.call_edges_with(&totals)
    }

    /// [`Profile::call_edges`] with precomputed [`Profile::node_totals`].
    pub fn call_edges_with(&self, totals: &[u64]) -> Vec<CallEdge> {
        let outermost = self.outermost_contexts();
        type Sums = (u64, u64, u64, Option<u32>);
        let mut edges: FxHashMap<(MethodId, MethodId), Sums> = FxHashMap::default();
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(p) = node.parent {
                let e = edges
                    .entry((self.nodes[p].method, node.method))
                    .or_insert((0, 0, 0, None));
                e.0 = e.0.saturating_add(node.activations);
                e.1 = e.1.saturating_add(totals[i]);
                if outermost[i] {
                    e.2 = e.2.saturating_add(totals[i]);
                }
                e.3 = e.3.or(node.call_line);
            }
        }
        let mut out: Vec<CallEdge> = edges
            .into_iter()
            .map(
                |((caller, callee), (calls, total, outer_total, line))| CallEdge {
                    caller,
                    callee,
                    calls,
                    total,
                    outer_total,
                    line,
                },
            )
            .collect();
        out.sort_by_key(|e| (e.caller, e.callee));
        out
    }

    /// The methods on the path from the root to `node` (inclusive), leaving out a
    /// synthetic root.
    pub fn path(&self, node: NodeId) -> Vec<MethodId> {
        let mut path = Vec::new();
        let mut cur = Some(node);
        while let Some(i) = cur {
            if !self.is_synthetic(i) {
                path.push(self.nodes[i].method);
            }
            cur = self.nodes[i].parent;
            if path.len() > self.nodes.len() {
                break; // malformed (cyclic) input
            }
        }
        path.reverse();
        path
    }

    /// The methods that occur in at least one node, as a flag per method.
    pub fn used_methods(&self) -> Vec<bool> {
        let mut used = vec![false; self.methods.len()];
        for n in &self.nodes {
            if let Some(u) = used.get_mut(n.method.index()) {
                *u = true;
            }
        }
        used
    }

    /// A profile reporting only the methods `keep` accepts, with the values of the
    /// hidden ones folded into their callers — the paper's "instrument just the
    /// application" (Bergel 2011, §4.2 and §7): the counts of a kept method still
    /// include what it causes in hidden library methods.
    ///
    /// * A kept node becomes a child of the copy of its nearest kept ancestor
    ///   (contexts that become identical, e.g. `main → lib1 → a` and
    ///   `main → lib2 → a`, are merged: activations and self values add up).
    /// * A hidden node's self value is added to the self value of its nearest kept
    ///   ancestor; its activations are dropped.
    /// * A hidden node with no kept ancestor is dropped with its self value; its kept
    ///   descendants become roots (merged by method).
    /// * A synthetic root is always kept, so with a builder-made profile nothing is
    ///   lost: the grand total is unchanged.
    ///
    /// The method table keeps only the accepted methods (and the synthetic root),
    /// in their original order.
    pub fn filtered(&self, keep: impl Fn(&MethodInfo) -> bool) -> Profile {
        self.filtered_mapped(keep).0
    }

    /// [`filtered`](Self::filtered), and where each old node's self value went:
    /// `map[old]` is the new node holding it, `None` when it was dropped (for
    /// a [`Timeline`](crate::Timeline) to follow, [`Timeline::remap`](crate::Timeline::remap)).
    pub fn filtered_mapped(
        &self,
        keep: impl Fn(&MethodInfo) -> bool,
    ) -> (Profile, Vec<Option<NodeId>>) {
        let mut node_map: Vec<Option<NodeId>> = vec![None; self.nodes.len()];
        let mut remap: Vec<Option<MethodId>> = vec![None; self.methods.len()];
        let mut methods = Vec::new();
        for (i, m) in self.methods.iter().enumerate() {
            if m.is_synthetic_root() || keep(m) {
                remap[i] = Some(MethodId(methods.len()));
                methods.push(m.clone());
            }
        }
        let mut out = Profile {
            metric: self.metric.clone(),
            methods,
            nodes: Vec::new(),
        };
        let mut index: FxHashMap<(Option<NodeId>, MethodId), NodeId> = FxHashMap::default();
        // (old node, new nearest kept ancestor)
        let mut stack: Vec<(NodeId, Option<NodeId>)> = self.roots().map(|r| (r, None)).collect();
        stack.reverse();
        let mut seen = vec![false; self.nodes.len()];
        while let Some((i, anc)) = stack.pop() {
            if std::mem::replace(&mut seen[i.index()], true) {
                continue;
            }
            let node = &self.nodes[i];
            let child_anc = match remap[node.method.index()] {
                Some(m) => {
                    let new = *index.entry((anc, m)).or_insert_with(|| {
                        let id = NodeId(out.nodes.len());
                        out.nodes.push(Node {
                            method: m,
                            parent: anc,
                            children: Vec::new(),
                            activations: 0,
                            self_value: 0,
                            call_line: None,
                            sites: Vec::new(),
                        });
                        if let Some(a) = anc {
                            out.nodes[a].children.push(id);
                        }
                        id
                    });
                    let n = &mut out.nodes[new];
                    n.activations = n.activations.saturating_add(node.activations);
                    n.self_value = n.self_value.saturating_add(node.self_value);
                    Some(new)
                }
                None => {
                    if let Some(a) = anc {
                        let n = &mut out.nodes[a];
                        n.self_value = n.self_value.saturating_add(node.self_value);
                    }
                    anc
                }
            };
            node_map[i.index()] = child_anc;
            stack.extend(node.children.iter().rev().map(|&c| (c, child_anc)));
        }
        (out, node_map)
    }

    /// Serialise as (pretty) JSON.
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }

    /// Read a profile from JSON (not validated: see [`Profile::validate`]).
    pub fn from_json(s: &str) -> serde_json::Result<Profile> {
        serde_json::from_str(s)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The small hand-built profile used by the report snapshots:
    ///
    /// ```text
    /// <root>
    ///   Main>>main            self 10, 1 activation
    ///     Main>>a             self 20, 2 activations
    ///       Lib>>b            self 30, 2 activations
    ///     Lib>>b              self 5,  1 activation
    ///     Main>>c             self 1,  1 activation   (recursion c -> c -> c)
    ///       Main>>c           self 2,  1
    ///         Main>>c         self 4,  1
    /// ```
    /// Totals: c chain 7, b 30 under a, a 50, main 10+50+5+7 = 72.
    pub(crate) fn sample_profile() -> Profile {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let main = b.add_method(
            MethodInfo::new("Main", "main")
                .with_category("App")
                .with_location("Main.som", Some(3)),
        );
        let a = b.add_method(
            MethodInfo::new("Main", "a")
                .with_category("App")
                .with_location("Main.som", Some(10)),
        );
        let lib_b = b.add_method(
            MethodInfo::new("Lib", "b")
                .with_category("Kernel")
                .with_location("Lib.som", Some(7)),
        );
        let c = b.add_method(
            MethodInfo::new("Main", "c")
                .with_category("App")
                .with_location("Main.som", Some(20)),
        );
        b.enter(main);
        b.add_self(10);
        for _ in 0..2 {
            b.enter(a);
            b.add_self(10);
            b.enter(lib_b);
            b.add_self(15);
            b.exit();
            b.exit();
        }
        b.enter(lib_b);
        b.add_self(5);
        b.exit_unwinding();
        b.enter(c);
        b.add_self(1);
        b.enter(c);
        b.add_self(2);
        b.enter(c);
        b.add_self(4);
        b.exit();
        b.exit();
        b.exit();
        b.exit();
        let p = b.finish();
        p.validate().expect("valid");
        p
    }

    fn stats_of(p: &Profile, name: &str) -> MethodStats {
        let i = p.method_index(name).expect("method");
        p.method_stats()[i]
    }

    #[test]
    fn builder_builds_the_cct() {
        let p = sample_profile();
        // root, main, a, b(under a), b(under main), c, c, c
        assert_eq!(p.nodes.len(), 8);
        assert_eq!(p.grand_total(), 72);
        let totals = p.node_totals();
        assert_eq!(totals[ROOT_NODE.index()], 72);
        assert_eq!(totals[1], 72);
        let a = stats_of(&p, "Main>>a");
        assert_eq!((a.activations, a.self_value, a.total), (2, 20, 50));
        let b = stats_of(&p, "Lib>>b");
        assert_eq!(
            (b.activations, b.self_value, b.total, b.contexts),
            (3, 35, 35, 2)
        );
        // Recursion: c's total is the outermost context's total (7), not 7+6+4.
        let c = stats_of(&p, "Main>>c");
        assert_eq!(
            (c.activations, c.self_value, c.total, c.contexts),
            (3, 7, 7, 3)
        );
        let root = p.method_stats()[ROOT_METHOD];
        assert_eq!((root.activations, root.total), (0, 72));
    }

    #[test]
    fn call_edges_aggregate_by_method_pair() {
        let p = sample_profile();
        let idx = |n: &str| p.method_index(n).expect("method");
        let edges = p.call_edges();
        let find = |a: MethodId, b: MethodId| {
            edges
                .iter()
                .find(|e| e.caller == a && e.callee == b)
                .copied()
                .expect("edge")
        };
        let e = find(idx("Main>>a"), idx("Lib>>b"));
        assert_eq!((e.calls, e.total), (2, 30));
        let e = find(idx("Main>>main"), idx("Lib>>b"));
        assert_eq!((e.calls, e.total), (1, 5));
        // Recursive edge c -> c: two activations, totals 6 + 4, but both are
        // nested in an activation of c.
        let e = find(idx("Main>>c"), idx("Main>>c"));
        assert_eq!((e.calls, e.total, e.outer_total), (2, 10, 0));
        // Incoming outer totals add up to method totals.
        let stats = p.method_stats();
        for (m, s) in stats.iter().enumerate().skip(1) {
            let incoming: u64 = edges
                .iter()
                .filter(|e| e.callee == MethodId(m))
                .map(|e| e.outer_total)
                .sum();
            assert_eq!(incoming, s.total, "method {m}");
        }
        let e = find(ROOT_METHOD, idx("Main>>main"));
        assert_eq!((e.calls, e.total), (1, 72));
        // root→main, main→a, a→b, main→b, main→c, c→c
        assert_eq!(edges.len(), 6);
    }

    #[test]
    fn values_before_enter_and_unbalanced_exits() {
        let mut b = ProfileBuilder::new(Metric::Samples);
        b.add_self(3);
        b.exit();
        assert_eq!(b.unbalanced_exits(), 1);
        let m = b.intern_method(MethodInfo::new("A", "m"));
        assert_eq!(b.intern_method(MethodInfo::new("A", "m")), m);
        b.enter(m);
        assert_eq!(b.depth(), 1);
        b.add_self(4);
        // Finish with an open activation.
        let p = b.finish();
        assert_eq!(p.grand_total(), 7);
        assert_eq!(p.nodes[ROOT_NODE].self_value, 3);
        p.validate().expect("valid");
    }

    #[test]
    fn counter_attribution() {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let m = b.method_for_key(7, || MethodInfo::new("A", "m"));
        assert_eq!(b.method_for_key(7, || MethodInfo::new("X", "never")), m);
        let n = b.method_for_key(2, || MethodInfo::new("A", "n"));
        b.set_counter_mark(100);
        b.advance_counter(101); // the send that activates m: charged to the root
        b.enter(m);
        b.advance_counter(105);
        b.enter(n);
        b.advance_counter(106);
        b.exit();
        b.advance_counter(110);
        b.exit();
        let p = b.finish();
        let s = p.method_stats();
        assert_eq!(s[m].self_value, 8);
        assert_eq!(s[m].total, 9);
        assert_eq!(s[n].self_value, 1);
        assert_eq!(p.grand_total(), 10);
    }

    #[test]
    fn wide_nodes_use_the_index() {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let ms: Vec<MethodId> = (0..50)
            .map(|i| b.add_method(MethodInfo::new("C", format!("m{i}"))))
            .collect();
        for _round in 0..3 {
            for &m in &ms {
                b.enter(m);
                b.add_self(1);
                b.exit();
            }
        }
        let p = b.finish();
        assert_eq!(p.nodes.len(), 51);
        assert!(p.nodes[1..].iter().all(|n| n.activations == 3));
        assert_eq!(p.grand_total(), 150);
        p.validate().expect("valid");
    }

    #[test]
    fn filtering_folds_hidden_methods_into_kept_callers() {
        let p = sample_profile();
        let f = p.filtered(|m| m.category == "App");
        f.validate().expect("valid");
        assert_eq!(f.grand_total(), p.grand_total());
        assert!(f.method_index("Lib>>b").is_none());
        let a = stats_of(&f, "Main>>a");
        // a's own 20 plus b's 30 under it; b's activations are gone.
        assert_eq!((a.activations, a.self_value, a.total), (2, 50, 50));
        let main = stats_of(&f, "Main>>main");
        assert_eq!((main.activations, main.self_value, main.total), (1, 15, 72));
        // root, main, a, c, c, c
        assert_eq!(f.nodes.len(), 6);
    }

    #[test]
    fn filtering_merges_contexts_and_drops_rootless_hidden_nodes() {
        // A forest without synthetic root: lib1 -> a, main -> {lib1 -> a, lib2 -> a}
        let methods = ["Lib>>one", "App>>a", "App>>main", "Lib>>two"]
            .iter()
            .map(|n| {
                let (c, s) = n.split_once(">>").expect("name");
                MethodInfo::new(c, s).with_category(c)
            })
            .collect();
        let node = |method: usize, parent: Option<usize>, children: Vec<usize>, self_value| Node {
            method: MethodId(method),
            parent: parent.map(NodeId),
            children: children.into_iter().map(NodeId).collect(),
            activations: 1,
            self_value,
            call_line: None,
            sites: Vec::new(),
        };
        let p = Profile {
            metric: Metric::Sends,
            methods,
            nodes: vec![
                node(0, None, vec![1], 100),   // 0: Lib>>one (root, hidden)
                node(1, Some(0), vec![], 1),   // 1: App>>a
                node(2, None, vec![3, 5], 10), // 2: App>>main
                node(0, Some(2), vec![4], 20), // 3: Lib>>one
                node(1, Some(3), vec![], 2),   // 4: App>>a
                node(3, Some(2), vec![6], 30), // 5: Lib>>two
                node(1, Some(5), vec![], 3),   // 6: App>>a
            ],
        };
        p.validate().expect("valid input");
        let f = p.filtered(|m| m.category == "App");
        f.validate().expect("valid output");
        // The hidden root's 100 is dropped; everything else is kept.
        assert_eq!(p.grand_total(), 166);
        assert_eq!(f.grand_total(), 66);
        let a = stats_of(&f, "App>>a");
        assert_eq!((a.activations, a.self_value, a.contexts), (3, 6, 2));
        let main = stats_of(&f, "App>>main");
        assert_eq!((main.self_value, main.total), (60, 65));
        // main's two hidden children led to `a`: one merged context.
        let main_node = f
            .roots()
            .find(|&r| f.method_of(r).name == "App>>main")
            .expect("main root");
        assert_eq!(f.nodes[main_node].children.len(), 1);
        let merged = f.nodes[main_node].children[0];
        assert_eq!(f.nodes[merged].activations, 2);
        assert_eq!(f.nodes[merged].self_value, 5);
    }

    #[test]
    fn validate_rejects_malformed() {
        let mut p = sample_profile();
        p.nodes[2].parent = Some(NodeId(3));
        assert!(matches!(
            p.validate(),
            Err(ProfileError::ParentMismatch { .. })
        ));
        let mut p = sample_profile();
        p.nodes[1].method = MethodId(99);
        assert!(matches!(
            p.validate(),
            Err(ProfileError::MethodOutOfRange { .. })
        ));
    }

    #[test]
    fn json_round_trip() {
        let p = sample_profile();
        let s = p.to_json().expect("json");
        let q = Profile::from_json(&s).expect("parse");
        assert_eq!(p, q);
    }

    #[test]
    fn deep_recursion_does_not_overflow() {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let m = b.add_method(MethodInfo::new("R", "deep"));
        for _ in 0..200_000 {
            b.enter(m);
            b.add_self(1);
        }
        let p = b.finish();
        assert_eq!(p.grand_total(), 200_000);
        let s = p.method_stats()[m];
        assert_eq!((s.activations, s.total), (200_000, 200_000));
        assert_eq!(p.path(NodeId(p.nodes.len() - 1)).len(), 200_000);
    }
}
