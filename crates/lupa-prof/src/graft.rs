//! Grafting: one profile's tree appended under a labelled child of another's root.
//!
//! A profiler that builds one tree per process (Compteur, the timing profiler)
//! merges them into one profile by grafting every other process's tree under a
//! `<process N>` node. Contract of [`Profile::graft`]: `self` keeps all its nodes
//! and methods at their indices; a new method named `label` and a new node for
//! it (a child of [`ROOT_NODE`]) are appended; `other`'s root becomes that node
//! (its self value is added to it, its children become the label node's
//! children) and every other node of `other` is appended in order. Methods of
//! `other` are matched by name with those of `self` (new names are appended).
//! Both profiles are expected to be builder-made (root at [`ROOT_NODE`]).

use crate::profile::{MethodId, MethodInfo, Node, NodeId, Profile, ROOT_NODE};

impl Profile {
    /// Append `other`'s tree under a new child of this profile's root named
    /// `label` (see the module documentation for the exact contract).
    pub fn graft(&mut self, other: &Profile, label: &str) {
        let label_method = MethodId(self.methods.len());
        self.methods.push(MethodInfo::named(label.to_string()));
        let label_node = NodeId(self.nodes.len());
        self.nodes.push(Node {
            method: label_method,
            parent: Some(ROOT_NODE),
            children: Vec::new(),
            activations: 0,
            self_value: 0,
            call_line: None,
            sites: Vec::new(),
        });
        self.nodes[ROOT_NODE].children.push(label_node);
        // Methods of `other`, by name, in `self`.
        let mut method_map = Vec::with_capacity(other.methods.len());
        for m in &other.methods {
            let id = match self.method_index(&m.name) {
                Some(id) => id,
                None => {
                    self.methods.push(m.clone());
                    MethodId(self.methods.len() - 1)
                }
            };
            method_map.push(id);
        }
        // Nodes of `other` (its root becomes the label node).
        let offset = self.nodes.len();
        let map_node = |n: NodeId| {
            if n == ROOT_NODE {
                label_node
            } else {
                NodeId(offset + n.index() - usize::from(n > ROOT_NODE))
            }
        };
        for (i, n) in other.nodes.iter().enumerate() {
            if NodeId(i) == ROOT_NODE {
                self.nodes[label_node].self_value += n.self_value;
                let kids: Vec<NodeId> = n.children.iter().map(|&k| map_node(k)).collect();
                self.nodes[label_node].children.extend(kids);
                continue;
            }
            self.nodes.push(Node {
                method: method_map[n.method.index()],
                parent: n.parent.map(map_node),
                children: n.children.iter().map(|&k| map_node(k)).collect(),
                activations: n.activations,
                self_value: n.self_value,
                call_line: n.call_line,
                sites: n.sites.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::profile::{MethodInfo, Metric, ProfileBuilder};
    use crate::report::folded;

    #[test]
    fn graft_under_a_label() {
        let mut a = ProfileBuilder::new(Metric::Sends);
        let main = a.add_method(MethodInfo::new("Main", "run"));
        let work = a.add_method(MethodInfo::new("Main", "work"));
        a.enter(main);
        a.add_self(2);
        a.enter(work);
        a.add_self(5);
        a.exit();
        a.exit();
        let mut main_profile = a.finish();

        let mut b = ProfileBuilder::new(Metric::Sends);
        b.add_self(1); // charged to the other process's root
        let work = b.add_method(MethodInfo::new("Main", "work"));
        let helper = b.add_method(MethodInfo::new("Lib", "help"));
        b.enter(work);
        b.add_self(3);
        b.enter(helper);
        b.add_self(4);
        b.exit();
        b.exit();
        let other = b.finish();

        let methods_before = main_profile.methods.len();
        main_profile.graft(&other, "<process 1>");
        assert_eq!(main_profile.validate(), Ok(()));
        assert_eq!(main_profile.grand_total(), 2 + 5 + 1 + 3 + 4);
        // `Main>>work` is shared by name; `<process 1>` and `Lib>>help` are new.
        assert_eq!(main_profile.methods.len(), methods_before + 2);
        assert_eq!(
            folded::to_string(&main_profile),
            "<process 1> 1\n<process 1>;Main>>work 3\n<process 1>;Main>>work;Lib>>help 4\n\
Main>>run 2\nMain>>run;Main>>work 5\n"
        );
    }
}
