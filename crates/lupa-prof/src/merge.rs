//! Merging: the profiles of several runs of one profiler summed into one.
//!
//! Contract of [`Profile::merge`]: both profiles measure the same metric
//! (else [`MergeError`] and `self` is unchanged); methods are matched by name
//! (a method's per-line costs are summed line by line, and its file, line and
//! category are kept from `self`, taken from `other` when `self` has none);
//! contexts are matched by their call path (a root by its method, a child by
//! its parent's context and its method): a matched context adds `other`'s
//! activations and self value, an unmatched one is appended with its
//! subtree. So the merged grand total is the sum of both, and merging is
//! independent of the order of `other`'s nodes.

use rustc_hash::FxHashMap;
use thiserror::Error;

use crate::profile::{MethodId, Metric, Node, NodeId, Profile};

/// Why two profiles cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot merge a profile of {left} with one of {right}")]
pub struct MergeError {
    /// The metric of the profile merged into.
    pub left: String,
    /// The metric of the other.
    pub right: String,
}

impl Profile {
    /// Add `other`'s values to this profile (see the module documentation).
    pub fn merge(&mut self, other: &Profile) -> Result<(), MergeError> {
        if self.metric != other.metric {
            return Err(MergeError {
                left: metric_name(&self.metric),
                right: metric_name(&other.metric),
            });
        }
        // Methods of `other` in `self`, by name.
        let mut by_name: FxHashMap<String, MethodId> = self
            .methods
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.clone(), MethodId(i)))
            .collect();
        let mut method_map = Vec::with_capacity(other.methods.len());
        for m in &other.methods {
            let id = match by_name.get(&m.name) {
                Some(&id) => {
                    let mine = &mut self.methods[id.index()];
                    if mine.file.is_none() {
                        mine.file.clone_from(&m.file);
                        mine.line = m.line;
                    }
                    if mine.category.is_empty() {
                        mine.category.clone_from(&m.category);
                    }
                    for &(line, v) in &m.line_costs {
                        match mine.line_costs.iter_mut().find(|(l, _)| *l == line) {
                            Some(c) => c.1 = c.1.saturating_add(v),
                            None => mine.line_costs.push((line, v)),
                        }
                    }
                    mine.line_costs.sort_unstable_by_key(|&(l, _)| l);
                    id
                }
                None => {
                    self.methods.push(m.clone());
                    let id = MethodId(self.methods.len() - 1);
                    by_name.insert(m.name.clone(), id);
                    id
                }
            };
            method_map.push(id);
        }
        // Contexts of `other`, parents first.
        let mut node_map: Vec<Option<NodeId>> = vec![None; other.nodes.len()];
        for n in other.preorder() {
            let theirs = &other.nodes[n];
            let method = method_map[theirs.method.index()];
            let parent = theirs.parent.and_then(|p| node_map[p.index()]);
            let found = match parent {
                Some(p) => self.nodes[p]
                    .children
                    .iter()
                    .copied()
                    .find(|&c| self.nodes[c].method == method),
                None => self.roots().find(|&r| self.nodes[r].method == method),
            };
            let mine = match found {
                Some(c) => {
                    let node = &mut self.nodes[c];
                    node.activations = node.activations.saturating_add(theirs.activations);
                    node.self_value = node.self_value.saturating_add(theirs.self_value);
                    if node.call_line.is_none() {
                        node.call_line = theirs.call_line;
                    }
                    for s in &theirs.sites {
                        crate::profile::CallSite::add(&mut node.sites, s.line, s.calls, s.total);
                    }
                    c
                }
                None => {
                    let id = NodeId(self.nodes.len());
                    self.nodes.push(Node {
                        method,
                        parent,
                        children: Vec::new(),
                        activations: theirs.activations,
                        self_value: theirs.self_value,
                        call_line: theirs.call_line,
                        sites: theirs.sites.clone(),
                    });
                    if let Some(p) = parent {
                        self.nodes[p].children.push(id);
                    }
                    id
                }
            };
            node_map[n.index()] = Some(mine);
        }
        Ok(())
    }
}

/// A metric as an error message names it.
fn metric_name(m: &Metric) -> String {
    m.name().to_string()
}

#[cfg(test)]
mod tests {
    use crate::profile::{MethodInfo, Metric, ProfileBuilder};
    use crate::report::folded;

    fn run(work: u64, extra: bool) -> crate::Profile {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let main = b.add_method(MethodInfo::new("Main", "run"));
        let w = b.add_method(MethodInfo::new("Main", "work"));
        b.enter(main);
        b.add_self(1);
        b.enter(w);
        b.add_self(work);
        b.exit();
        if extra {
            let x = b.add_method(MethodInfo::new("Main", "extra"));
            b.enter(x);
            b.add_self(7);
            b.exit();
        }
        b.exit();
        b.finish()
    }

    #[test]
    fn merging_sums_matching_paths_and_appends_the_rest() {
        let mut a = run(5, false);
        let b = run(3, true);
        a.merge(&b).expect("same metric");
        assert_eq!(a.validate(), Ok(()));
        assert_eq!(a.grand_total(), 6 + 11);
        assert_eq!(
            folded::to_string(&a),
            "Main>>run 2\nMain>>run;Main>>work 8\nMain>>run;Main>>extra 7\n"
        );
        let work = a.method_index("Main>>work").expect("work");
        assert_eq!(a.method_stats()[work.index()].activations, 2);
    }

    #[test]
    fn different_metrics_do_not_merge() {
        let mut a = run(1, false);
        let b = crate::Profile::new(Metric::Samples);
        let before = a.clone();
        assert!(a.merge(&b).is_err());
        assert_eq!(a, before);
    }
}
