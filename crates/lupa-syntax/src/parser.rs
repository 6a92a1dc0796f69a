//! Parser (to be written).
use crate::ast::{ClassDef, MethodDef};
use crate::diag::Diagnostic;
/// Parse a class definition file.
pub fn parse_class(_text: &str) -> Result<ClassDef, Diagnostic> {
    unimplemented!()
}
/// Parse one method definition (`pattern = ( ... )`).
pub fn parse_method(_text: &str) -> Result<MethodDef, Diagnostic> {
    unimplemented!()
}
