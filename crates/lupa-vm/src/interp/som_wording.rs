//! SOM's words for a primitive's type error. Under SOM's own core-lib (a
//! foreign kernel, whose `Object>>error:` is not Lupa's), an error is reported
//! as SOM VMs report it (see `failures`): after Lupa's message, which names
//! the primitive and the argument, comes the line SOM's IntegrationTests
//! expect, in the words and type names of yksom (the VM their tests come
//! from): `Expected a numeric type but got type 'String_'.`, `Expected object
//! of type 'Int' but got type 'Double'.`.

use crate::objects::cls;
use crate::prims::Expected;
use crate::vm::Vm;
use lupa_heap::Value;

impl Vm {
    /// SOM's line for a primitive that expected `expected` and got `got`;
    /// `None` for the kinds SOM has no primitive taking (processes, frames).
    pub(super) fn som_type_error(&self, expected: Expected, got: Value) -> Option<String> {
        let got = self.som_type_name(got);
        let expected = match expected {
            Expected::Number => {
                return Some(format!("Expected a numeric type but got type '{got}'."));
            }
            Expected::SmallInteger | Expected::Integer => "Int",
            Expected::String | Expected::Symbol => "String_",
            Expected::Class => "Class",
            Expected::Method => "Method",
            Expected::Block => "Block",
            Expected::Array | Expected::Indexable => "Array",
            Expected::Process | Expected::Semaphore | Expected::Frame => return None,
        };
        Some(format!(
            "Expected object of type '{expected}' but got type '{got}'."
        ))
    }

    /// The SOM type name of `v`, as yksom names its kinds of object.
    fn som_type_name(&self, v: Value) -> &'static str {
        if v.is_int() {
            return "Int";
        }
        let c = self.class_of(v);
        match c {
            cls::INTEGER => "ArbInt",
            cls::DOUBLE => "Double",
            cls::STRING | cls::SYMBOL => "String_",
            cls::ARRAY => "Array",
            cls::BLOCK..=cls::BLOCK4 => "Block",
            cls::METHOD | cls::PRIMITIVE => "Method",
            cls::METACLASS => "Class",
            _ if self
                .image
                .classes
                .get(c as usize)
                .is_some_and(|i| i.is_meta) =>
            {
                "Class"
            }
            _ => "Inst",
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::prims::Expected;
    use crate::vm::{Vm, VmOptions};
    use lupa_heap::Value;

    #[test]
    fn type_errors_in_soms_words() {
        let mut vm = Vm::new(VmOptions::default()).expect("vm boots");
        let s = vm.new_string("a").expect("alloc");
        let d = vm.new_double(1.5).expect("alloc");
        let sys = vm.image.system_object;
        let line = |vm: &Vm, e, v| vm.som_type_error(e, v).unwrap_or_default();
        assert_eq!(
            line(&vm, Expected::Number, s),
            "Expected a numeric type but got type 'String_'."
        );
        assert_eq!(
            line(&vm, Expected::Integer, d),
            "Expected object of type 'Int' but got type 'Double'."
        );
        assert_eq!(
            line(&vm, Expected::String, sys),
            "Expected object of type 'String_' but got type 'Inst'."
        );
        assert_eq!(
            line(&vm, Expected::String, Value::small(3)),
            "Expected object of type 'String_' but got type 'Int'."
        );
        assert_eq!(vm.som_type_error(Expected::Frame, s), None);
    }
}
