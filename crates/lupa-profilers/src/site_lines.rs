//! Compteur's self costs by source line: the VM counts every send at its
//! instruction while Compteur runs ([`lupa_vm::Vm::start_site_counts`]);
//! at the end those counts become each method's
//! [`MethodInfo::line_costs`](lupa_prof::MethodInfo::line_costs).
//!
//! Contract: a method's line costs are keyed by the same display name
//! [`name_methods`](crate::naming::name_methods) gives it, summed over every VM
//! method of that name and over every process, like the method's self value in
//! the merged profile; so, summed over lines, they equal that self value (each
//! send is charged to the activation that executed it, and counted at the
//! instruction that executed it).

use lupa_prof::Profile;
use lupa_vm::Vm;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// Set the line costs of `profile`'s methods from `sites` (`(method id,
/// instruction index, sends)`, as the VM answers them).
pub(crate) fn attach(vm: &Vm, sites: &[(u32, u32, u64)], profile: &mut Profile) {
    let mut names: FxHashMap<u32, Option<String>> = FxHashMap::default();
    let mut by_name: FxHashMap<String, BTreeMap<u32, u64>> = FxHashMap::default();
    for &(method, index, sends) in sites {
        let name = names
            .entry(method)
            .or_insert_with(|| vm.image.describe_method(method).map(|d| d.display_name()));
        let (Some(name), Some(line)) = (name.as_ref(), vm.image.line_of(method, index)) else {
            continue;
        };
        *by_name
            .entry(name.clone())
            .or_default()
            .entry(line)
            .or_insert(0) += sends;
    }
    for info in &mut profile.methods {
        if let Some(lines) = by_name.remove(&info.name) {
            info.line_costs = lines.into_iter().collect();
        }
    }
}
