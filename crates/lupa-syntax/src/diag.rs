//! Source files, positions and diagnostics.
//!
//! A [`SourceFile`] owns the text of a file and an index of its line starts,
//! so that [`SourceFile::line_col`] is a binary search. A [`Diagnostic`] is an
//! error message with a [`Span`]; [`Diagnostic::render`] formats it as
//!
//! ```text
//! path/to/Foo.som:12:7: error: expected ')' to close the method body, found end of file
//!    12 |     foo = ( ^1 +
//!       |       ^
//! ```

use std::fmt;

use crate::ast::Span;

/// A source file: its name and text, with a line index.
///
/// Build it with [`SourceFile::new`]; the line index is computed once there,
/// so `text` must not be changed afterwards (positions would be wrong, though
/// nothing panics).
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Display name (path as given by the user).
    pub name: String,
    /// The full text.
    pub text: String,
    /// Byte offset of the start of every line (the first is always 0).
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// Wrap a text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0u32];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| u32::try_from(i + 1).unwrap_or(u32::MAX)),
        );
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// Number of lines (a final line without newline counts; an empty text has one line).
    pub fn line_count(&self) -> u32 {
        u32::try_from(self.line_starts.len()).unwrap_or(u32::MAX)
    }

    /// 0-based index of the line containing `offset` (clamped to the text).
    fn line_index(&self, offset: u32) -> usize {
        // Index of the last line start <= offset; line_starts[0] == 0 so this is >= 0.
        self.line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// Byte range of a 0-based line, without its line terminator.
    fn line_range(&self, index: usize) -> (usize, usize) {
        let len = self.text.len();
        let start = self
            .line_starts
            .get(index)
            .map_or(len, |&s| s as usize)
            .min(len);
        let mut end = self
            .line_starts
            .get(index + 1)
            .map_or(len, |&s| (s as usize).saturating_sub(1))
            .clamp(start, len);
        let bytes = self.text.as_bytes();
        if end > start && bytes.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        (start, end)
    }

    /// The text of a 1-based line, without its line terminator (empty if out of range).
    pub fn line_text(&self, line: u32) -> &str {
        let Some(index) = (line as usize).checked_sub(1) else {
            return "";
        };
        if index >= self.line_starts.len() {
            return "";
        }
        let (start, end) = self.line_range(index);
        self.text.get(start..end).unwrap_or("")
    }

    /// 1-based line and column (in characters) of a byte offset.
    ///
    /// Offsets past the end of the text are clamped to the end; an offset
    /// inside a multi-byte character counts as that character.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let index = self.line_index(offset);
        let start = self.line_starts.get(index).map_or(0, |&s| s as usize);
        let line_text = self.text.get(start..).unwrap_or("");
        let rel = (offset as usize).saturating_sub(start);
        let col = line_text
            .char_indices()
            .take_while(|&(i, c)| i < rel && c != '\n')
            .count();
        let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
        (line, u32::try_from(col + 1).unwrap_or(u32::MAX))
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
    /// A diagnostic with the given message and location.
    pub fn new(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            span,
        }
    }

    /// Render as `file:line:col: error: message`, the source line and a caret line.
    ///
    /// The line number is right-aligned in a gutter of at least five
    /// characters; the caret line repeats tabs of the source line so that the
    /// carets stay aligned. There is no trailing newline.
    pub fn render(&self, file: &SourceFile) -> String {
        let (line, col) = file.line_col(self.span.start);
        let text = file.line_text(line);
        let number = line.to_string();
        let width = number.len().max(5);

        // Characters of the line before the caret, and the caret count.
        let before = (col as usize).saturating_sub(1);
        let mut pad = String::with_capacity(before);
        for c in text.chars().take(before) {
            pad.push(if c == '\t' { '\t' } else { ' ' });
        }
        let line_start = file
            .line_starts
            .get((line as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0);
        let line_end = line_start.saturating_add(u32::try_from(text.len()).unwrap_or(u32::MAX));
        let end = self.span.end.min(line_end);
        let carets = if end > self.span.start {
            let start_rel = self.span.start.saturating_sub(line_start) as usize;
            let end_rel = end.saturating_sub(line_start) as usize;
            text.char_indices()
                .filter(|&(i, _)| i >= start_rel && i < end_rel)
                .count()
                .max(1)
        } else {
            1
        };

        format!(
            "{}:{}:{}: error: {}\n{:>width$} | {}\n{:>width$} | {}{}",
            file.name,
            line,
            col,
            self.message,
            number,
            text,
            "",
            pad,
            "^".repeat(carets),
        )
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_basics() {
        let f = SourceFile::new("x", "ab\ncdé\n\nx");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(1), (1, 2));
        assert_eq!(f.line_col(2), (1, 3));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(5), (2, 3));
        assert_eq!(f.line_col(7), (2, 4)); // after the 2-byte 'é'
        assert_eq!(f.line_col(8), (3, 1));
        assert_eq!(f.line_col(9), (4, 1));
        assert_eq!(f.line_col(10), (4, 2));
        assert_eq!(f.line_col(1000), (4, 2));
        assert_eq!(f.line_count(), 4);
        assert_eq!(f.line_text(2), "cdé");
        assert_eq!(f.line_text(3), "");
        assert_eq!(f.line_text(0), "");
        assert_eq!(f.line_text(99), "");
    }

    #[test]
    fn crlf_lines() {
        let f = SourceFile::new("x", "ab\r\ncd\r\n");
        assert_eq!(f.line_text(1), "ab");
        assert_eq!(f.line_text(2), "cd");
        assert_eq!(f.line_col(4), (2, 1));
    }

    #[test]
    fn render_shape() {
        let f = SourceFile::new("Foo.som", "Foo = (\n\tfoo = ( ^1 + bar )\n)\n");
        let d = Diagnostic::new("bad", Span::new(17, 20));
        assert_eq!(
            d.render(&f),
            "Foo.som:2:10: error: bad\n    2 | \tfoo = ( ^1 + bar )\n      | \t        ^^^"
        );
    }

    #[test]
    fn render_out_of_range_does_not_panic() {
        let f = SourceFile::new("e.som", "");
        let d = Diagnostic::new("m", Span::new(5, 3));
        assert_eq!(d.render(&f), "e.som:1:1: error: m\n    1 | \n      | ^");
    }
}
