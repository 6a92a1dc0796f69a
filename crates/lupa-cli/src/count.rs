//! `lupa count`: Compteur's deterministic profiler. Every executed message send
//! is charged to the method (or block) activation that executed it; the
//! activation hooks build one calling-context tree per process, which are then
//! merged into one profile (other processes appear under `<process N>` nodes).

use lupa_prof::{MethodInfo, Metric, Node, Profile, ProfileBuilder};
use lupa_vm::{Activation, ActivationHooks, Vm};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

/// What is charged to activations: executed sends (Compteur), or elapsed wall
/// time measured at every enter and exit (an exact, MessageTally-like timing
/// profile, used as the time-based reference of `lupa stability`).
#[derive(Debug, Clone, Copy)]
pub enum Clock {
    /// The VM's send counter.
    Sends,
    /// Nanoseconds since this instant.
    Time(std::time::Instant),
}

impl Clock {
    fn metric(self) -> Metric {
        match self {
            Clock::Sends => Metric::Sends,
            Clock::Time(_) => Metric::Nanoseconds,
        }
    }

    #[inline]
    fn read(self, sends: u64) -> u64 {
        match self {
            Clock::Sends => sends,
            Clock::Time(t0) => t0.elapsed().as_nanos() as u64,
        }
    }
}

/// Per-process builders, driven by the VM's activation hooks.
pub struct SendCounter {
    builders: FxHashMap<usize, ProfileBuilder>,
    current: usize,
    clock: Clock,
}

impl SendCounter {
    fn builder(&mut self, process: usize) -> &mut ProfileBuilder {
        let metric = self.clock.metric();
        self.builders
            .entry(process)
            .or_insert_with(|| ProfileBuilder::new(metric))
    }
}

/// The hook object installed in the VM (shares the counter with the caller).
struct Hooks(Rc<RefCell<SendCounter>>);

impl ActivationHooks for Hooks {
    fn enter(&mut self, ev: &Activation) {
        let mut c = self.0.borrow_mut();
        c.current = ev.process;
        let now = c.clock.read(ev.sends);
        let b = c.builder(ev.process);
        b.advance_counter(now);
        let m = b.method_for_key(ev.method, || MethodInfo::named(format!("#{}", ev.method)));
        b.enter(m);
    }

    fn exit(&mut self, ev: &Activation, unwinding: bool) {
        let mut c = self.0.borrow_mut();
        let now = c.clock.read(ev.sends);
        let b = c.builder(ev.process);
        b.advance_counter(now);
        if unwinding {
            b.exit_unwinding();
        } else {
            b.exit();
        }
    }

    fn process_switch(&mut self, from: usize, to: usize, sends: u64) {
        let mut c = self.0.borrow_mut();
        let now = c.clock.read(sends);
        c.builder(from).advance_counter(now);
        c.builder(to).set_counter_mark(now);
        c.current = to;
    }
}

/// Start counting: install the hooks. Call [`finish`] after the run.
pub fn start(vm: &mut Vm, clock: Clock) -> Rc<RefCell<SendCounter>> {
    let now = clock.read(vm.obs.sends);
    let mut main = ProfileBuilder::new(clock.metric());
    main.set_counter_mark(now);
    let mut builders = FxHashMap::default();
    builders.insert(0, main);
    let counter = Rc::new(RefCell::new(SendCounter {
        builders,
        current: 0,
        clock,
    }));
    vm.obs.set_hooks(Some(Box::new(Hooks(counter.clone()))));
    counter
}

/// Stop counting and build the merged profile, with method names, packages and
/// source locations from the VM.
pub fn finish(vm: &mut Vm, counter: Rc<RefCell<SendCounter>>) -> Profile {
    vm.obs.set_hooks(None);
    let mut c = counter.borrow_mut();
    let now = c.clock.read(vm.obs.sends);
    let current = c.current;
    c.builder(current).advance_counter(now);
    let mut procs: Vec<(usize, ProfileBuilder)> = c.builders.drain().collect();
    procs.sort_by_key(|(p, _)| *p);
    let mut profile: Option<Profile> = None;
    for (p, b) in procs {
        let mut prof = b.finish();
        name_methods(vm, &mut prof);
        profile = Some(match profile {
            None => prof,
            Some(mut main) => {
                graft(&mut main, &prof, &format!("<process {p}>"));
                main
            }
        });
    }
    let metric = c.clock.metric();
    profile.unwrap_or_else(|| Profile::new(metric))
}

/// Replace the placeholder `#id` method infos by real names and locations.
fn name_methods(vm: &Vm, prof: &mut Profile) {
    for info in prof.methods.iter_mut() {
        let Some(d) = info
            .name
            .strip_prefix('#')
            .and_then(|s| s.parse::<u32>().ok())
            .and_then(|id| vm.describe_method(id))
        else {
            continue;
        };
        let mut m = MethodInfo::new(d.class.clone(), d.selector.clone())
            .with_category(d.category.clone())
            .with_location(d.file.clone(), Some(d.first_line));
        m.name = d.display_name();
        *info = m;
    }
}

/// Append `other`'s tree under a new child of `main`'s root named `label`.
fn graft(main: &mut Profile, other: &Profile, label: &str) {
    let root = lupa_prof::ROOT_NODE;
    let label_method = main.methods.len();
    main.methods.push(MethodInfo::named(label.to_string()));
    let label_node = main.nodes.len();
    main.nodes.push(Node {
        method: label_method,
        parent: Some(root),
        children: Vec::new(),
        activations: 0,
        self_value: 0,
    });
    main.nodes[root].children.push(label_node);
    // Methods of `other`, by name, in `main`.
    let mut method_map = Vec::with_capacity(other.methods.len());
    for m in &other.methods {
        let idx = match main.method_index(&m.name) {
            Some(i) => i,
            None => {
                main.methods.push(m.clone());
                main.methods.len() - 1
            }
        };
        method_map.push(idx);
    }
    // Nodes of `other` (its root becomes the label node).
    let offset = main.nodes.len();
    let other_root = lupa_prof::ROOT_NODE;
    let map_node = |n: usize| {
        if n == other_root {
            label_node
        } else {
            offset + n - usize::from(n > other_root)
        }
    };
    for (i, n) in other.nodes.iter().enumerate() {
        if i == other_root {
            main.nodes[label_node].self_value += n.self_value;
            let kids: Vec<usize> = n.children.iter().map(|&k| map_node(k)).collect();
            main.nodes[label_node].children.extend(kids);
            continue;
        }
        main.nodes.push(Node {
            method: method_map[n.method],
            parent: n.parent.map(map_node),
            children: n.children.iter().map(|&k| map_node(k)).collect(),
            activations: n.activations,
            self_value: n.self_value,
        });
    }
}
