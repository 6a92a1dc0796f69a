//! SOM Smalltalk syntax for Lupa: lexer, parser, AST and diagnostics.
//!
//! Entry points:
//! - [`parse_class`] parses a whole `.som` class file;
//! - [`parse_method`] parses one method definition (used by `Class compile:`);
//! - [`SourceFile`] maps byte offsets to line/column and renders [`Diagnostic`]s
//!   as `file:line:col: message`, the source line and a caret.
//!
//! The parser never panics, whatever the input: every problem is a [`Diagnostic`].

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(missing_docs)]

pub mod ast;
mod diag;
mod lexer;
mod parser;

pub use ast::*;
pub use diag::{Diagnostic, SourceFile};
pub use lexer::{Lexer, Token, TokenKind};
pub use parser::{MAX_EXPR_DEPTH, MAX_NESTING, parse_class, parse_method};
