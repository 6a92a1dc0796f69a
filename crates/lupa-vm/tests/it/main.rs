//! The integration tests of lupa-vm, one test binary (one module per
//! area) so that the workspace links few test programs.

mod coverage;
mod delay;
mod fuzz_pipeline;
mod observe;
mod side_tables;

/// The id of the method (or block) whose selector is `selector`.
fn method_id(vm: &lupa_vm::Vm, selector: &str) -> u32 {
    (0..vm.image.method_count() as u32)
        .find(|&id| {
            vm.image
                .describe_method(id)
                .is_some_and(|d| d.selector == selector)
        })
        .expect("method compiled")
}
