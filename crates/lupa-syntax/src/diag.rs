//! Diagnostics (to be written).
use crate::ast::Span;

/// A source file: its name and text, with a line index.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Display name (path as given by the user).
    pub name: String,
    /// The full text.
    pub text: String,
}

impl SourceFile {
    /// Wrap a text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile { name: name.into(), text: text.into() }
    }
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, _offset: u32) -> (u32, u32) {
        (1, 1)
    }
}

/// An error in a source file.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// What is wrong, e.g. "expected ')' but found end of file".
    pub message: String,
    /// Where.
    pub span: Span,
}

impl Diagnostic {
    /// Render as `file:line:col: error: message`, the source line and a caret line.
    pub fn render(&self, _file: &SourceFile) -> String {
        self.message.clone()
    }
}
