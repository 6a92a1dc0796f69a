//! Method naming: placeholder method infos (`#id`, the VM's method id) replaced
//! by class, selector, package and source location.
//!
//! Profilers record only the VM's method ids while the program runs (cheap); they
//! name them once at the end through the VM's query API
//! ([`lupa_vm::Image::describe_method`]), never through its tables. Contract: a method info
//! whose name is `#N` with `N` a method id the VM knows is replaced; every other
//! info (the synthetic root, `<process N>` labels, unknown ids) is left as is.

use lupa_prof::{MethodInfo, Profile};
use lupa_vm::Vm;

/// The placeholder name of the VM method `id` in a profile being built.
pub fn placeholder(id: u32) -> String {
    format!("#{id}")
}

/// Replace the placeholder `#id` method infos of `profile` by real names,
/// packages and locations from `vm`.
pub fn name_methods(vm: &Vm, profile: &mut Profile) {
    for info in profile.methods.iter_mut() {
        let Some(d) = info
            .name
            .strip_prefix('#')
            .and_then(|s| s.parse::<u32>().ok())
            .and_then(|id| vm.image.describe_method(id))
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
