//! Lexer (to be written).
/// A token kind.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {}
/// A token.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {}
/// The lexer.
pub struct Lexer {}
