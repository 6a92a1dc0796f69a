//! Code generation (to be written).
use crate::bytecode::CompiledCode;
use lupa_syntax::{Diagnostic, MethodDef, SourceFile};

/// Compile one method. `fields` are all instance variable names of the class the
/// method is compiled in (inherited ones first), so that field `i` is
/// `PushField(i)`. Names that are neither locals, arguments, fields nor pseudo
/// variables compile to `PushGlobal`.
pub fn compile_method(
    _def: &MethodDef,
    _fields: &[String],
    _src: &SourceFile,
) -> Result<CompiledCode, Diagnostic> {
    unimplemented!()
}
