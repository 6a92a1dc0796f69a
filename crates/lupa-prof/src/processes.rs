//! The processes of a profile. A profiler that follows several Smalltalk
//! processes builds one tree per process and grafts each one but the first
//! (the main process) under a label node `<process N>` below the root
//! ([`Profile::graft`] with [`process_label`]). This file reads that structure
//! back as first-class processes, for the exports that show processes apart
//! (JSON, speedscope, pprof).
//!
//! Contract: every node reachable from a root belongs to exactly one process;
//! process 0 ("main") owns the root's own value and every top-level context
//! that is not a label; process N owns the children of its label node.
//! Processes are answered main first, then by number.

use crate::profile::{NodeId, Profile, ROOT_NODE};

/// The name of the label node a process's tree is grafted under.
pub fn process_label(number: usize) -> String {
    format!("<process {number}>")
}

/// The process number of a label node's name (`<process 3>` is 3).
pub fn process_number(label: &str) -> Option<usize> {
    label
        .strip_prefix("<process ")?
        .strip_suffix('>')?
        .parse()
        .ok()
}

/// One process of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessTree {
    /// 0 for the main process, N for `<process N>`.
    pub number: usize,
    /// `main` or `process N`.
    pub name: String,
    /// Its top-level contexts.
    pub roots: Vec<NodeId>,
    /// Value charged to the process outside any context (the root's own
    /// value, for the main process).
    pub outside: u64,
}

impl Profile {
    /// For each node, the index in `processes` (this profile's
    /// [`processes`](Self::processes)) of the process it belongs to: a
    /// process's contexts and its label; the synthetic root and anything else
    /// belong to the first (main).
    pub fn node_processes(&self, processes: &[ProcessTree]) -> Vec<usize> {
        let mut out = vec![0; self.nodes.len()];
        for (i, p) in processes.iter().enumerate() {
            let mut stack: Vec<NodeId> = p.roots.clone();
            for &r in &p.roots {
                if let Some(label) = self.nodes[r].parent
                    && !self.is_synthetic(label)
                {
                    out[label.index()] = i;
                }
            }
            while let Some(n) = stack.pop() {
                out[n.index()] = i;
                stack.extend(self.nodes[n].children.iter().copied());
            }
        }
        out
    }

    /// The processes of this profile, main first then by number (see the
    /// module contract). A profile without labels has one process.
    pub fn processes(&self) -> Vec<ProcessTree> {
        let mut main = ProcessTree {
            number: 0,
            name: "main".to_string(),
            roots: Vec::new(),
            outside: 0,
        };
        let mut others = Vec::new();
        for r in self.roots() {
            if r != ROOT_NODE || !self.is_synthetic(r) {
                main.roots.push(r);
                continue;
            }
            main.outside += self.nodes[r].self_value;
            for &c in &self.nodes[r].children {
                let label = &self.methods[self.nodes[c].method.index()];
                match process_number(&label.name).filter(|_| label.class.is_empty()) {
                    Some(number) => others.push(ProcessTree {
                        number,
                        name: format!("process {number}"),
                        roots: self.nodes[c].children.clone(),
                        outside: self.nodes[c].self_value,
                    }),
                    None => main.roots.push(c),
                }
            }
        }
        others.sort_by_key(|p| p.number);
        std::iter::once(main).chain(others).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MethodInfo, Metric, ProfileBuilder};

    fn one(name: &str, sends: u64) -> Profile {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let m = b.add_method(MethodInfo::new("T", name));
        b.enter(m);
        b.add_self(sends);
        b.exit();
        b.finish()
    }

    #[test]
    fn labels_round_trip() {
        assert_eq!(process_number(&process_label(12)), Some(12));
        assert_eq!(process_number("<process x>"), None);
        assert_eq!(process_number("main"), None);
    }

    #[test]
    fn grafted_processes_are_found_again() {
        let mut main = one("run", 5);
        main.graft(&one("a", 3), &process_label(2));
        main.graft(&one("b", 4), &process_label(1));
        let ps = main.processes();
        let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["main", "process 1", "process 2"]);
        let totals = main.node_totals();
        let sum = |p: &ProcessTree| p.roots.iter().map(|r| totals[r.index()]).sum::<u64>();
        assert_eq!(ps.iter().map(sum).collect::<Vec<_>>(), [5, 4, 3]);
        assert_eq!(one("run", 1).processes().len(), 1);
    }
}
