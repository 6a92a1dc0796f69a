//! The lexer: turns source text into [`Token`]s.
//!
//! The lexer is pull-based ([`Lexer::next_token`], or the [`Iterator`]
//! implementation) and never fails: a lexical error becomes a
//! [`TokenKind::Error`] token carrying the message, which the parser reports
//! when it reaches it. Whitespace and `"comments"` are skipped.
//!
//! Token texts (identifiers, keywords, operators) are not copied: use
//! [`Lexer::text`] (or slice the source with the token's span).

use num_bigint::BigInt;

use crate::ast::Span;

/// A token kind.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// `foo`, `Foo`, `foo_bar2`; also `self`, `super`, `nil`, `true`, `false`, `primitive`.
    Identifier,
    /// `foo:` (identifier immediately followed by a colon that does not start `:=`).
    Keyword,
    /// A sequence of binary operator characters `~ & | * / \ + = > < , @ % -`,
    /// e.g. `+`, `<=`, `||`, `->`. (The parser splits it when it needs a single
    /// `|` or `>`, as in `[:a || t | ...]`.)
    Operator,
    /// A line of four or more dashes separating instance side and class side.
    Separator,
    /// An unsigned integer literal that fits in `i64`.
    Integer(i64),
    /// An unsigned integer literal too large for `i64`.
    BigInteger(BigInt),
    /// An unsigned floating point literal: `3.14`, `1.5e10`, `2e-3`.
    Double(f64),
    /// A string literal, escapes processed.
    String(String),
    /// A symbol literal (`#foo`, `#at:put:`, `#+`, `#'a b'`) without the `#`.
    Symbol(String),
    /// `#(`, the start of a literal array.
    LiteralArrayStart,
    /// `:` (block parameters).
    Colon,
    /// `:=`
    Assign,
    /// `^`
    Caret,
    /// `.`
    Period,
    /// `;`
    Semicolon,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// End of input. Its span is empty and placed just after the last token.
    Eof,
    /// A lexical error (unterminated string or comment, unknown escape,
    /// unexpected character...), with its message.
    Error(String),
}

/// A token.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is (byte offsets).
    pub span: Span,
}

/// Whether `c` is one of SOM's binary operator characters.
pub(crate) fn is_operator_char(c: u8) -> bool {
    matches!(
        c,
        b'~' | b'&'
            | b'|'
            | b'*'
            | b'/'
            | b'\\'
            | b'+'
            | b'='
            | b'>'
            | b'<'
            | b','
            | b'@'
            | b'%'
            | b'-'
    )
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphabetic() || c.is_ascii_digit() || c == '_'
}

/// The lexer.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// End of the last token returned (where `Eof` is placed).
    last_end: usize,
    /// Whether `Eof` has been returned by the iterator.
    finished: bool,
    /// A more precise span for the error token being built.
    error_span: Option<Span>,
}

fn span(start: usize, end: usize) -> Span {
    // Callers check that the text is at most u32::MAX bytes long; saturate anyway.
    Span::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src,
            pos: 0,
            last_end: 0,
            finished: false,
            error_span: None,
        }
    }

    /// The source text of a span (empty if the span is not valid in this source).
    pub fn text(&self, span: Span) -> &'a str {
        self.src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + ahead).copied()
    }

    fn peek_char(&self) -> Option<char> {
        self.src.get(self.pos..).and_then(|s| s.chars().next())
    }

    /// Skip whitespace and comments. Returns an error token for an unterminated comment.
    fn skip_trivia(&mut self) -> Option<Token> {
        loop {
            match self.peek_char() {
                Some(c) if c.is_whitespace() => self.pos += c.len_utf8(),
                Some('"') => {
                    let start = self.pos;
                    let rest = self.src.get(start + 1..).unwrap_or("");
                    match rest.find('"') {
                        Some(i) => self.pos = start + 1 + i + 1,
                        None => {
                            self.pos = self.src.len();
                            return Some(Token {
                                kind: TokenKind::Error(
                                    "unterminated comment: missing closing '\"'".into(),
                                ),
                                span: span(start, start + 1),
                            });
                        }
                    }
                }
                _ => return None,
            }
        }
    }

    /// The next token. After the end of input, returns `Eof` forever.
    pub fn next_token(&mut self) -> Token {
        if let Some(err) = self.skip_trivia() {
            return err;
        }
        let start = self.pos;
        let Some(c) = self.peek_char() else {
            return Token {
                kind: TokenKind::Eof,
                span: span(self.last_end, self.last_end),
            };
        };
        let kind = self.lex_from(c, start);
        if self.pos <= start {
            // Defensive: always make progress.
            self.pos = start + c.len_utf8();
        }
        self.last_end = self.pos;
        let span = self
            .error_span
            .take()
            .unwrap_or_else(|| span(start, self.pos));
        Token { kind, span }
    }

    fn lex_from(&mut self, c: char, start: usize) -> TokenKind {
        match c {
            '\'' => match self.lex_string() {
                Ok(s) => TokenKind::String(s),
                Err(e) => e,
            },
            '#' => self.lex_hash(),
            '(' => self.single(TokenKind::LParen),
            ')' => self.single(TokenKind::RParen),
            '[' => self.single(TokenKind::LBracket),
            ']' => self.single(TokenKind::RBracket),
            '^' => self.single(TokenKind::Caret),
            '.' => self.single(TokenKind::Period),
            ';' => self.single(TokenKind::Semicolon),
            ':' => {
                if self.peek_byte(1) == Some(b'=') {
                    self.pos += 2;
                    TokenKind::Assign
                } else {
                    self.single(TokenKind::Colon)
                }
            }
            '-' if self.src.get(start..).is_some_and(|s| s.starts_with("----")) => {
                while self.peek_byte(0) == Some(b'-') {
                    self.pos += 1;
                }
                TokenKind::Separator
            }
            '0'..='9' => self.lex_number(),
            '$' => {
                self.pos += 1;
                if let Some(next) = self.peek_char().filter(|c| !c.is_whitespace()) {
                    self.pos += next.len_utf8();
                }
                TokenKind::Error(
                    "character literals ($x) are not supported in SOM; use a string such as 'x'"
                        .into(),
                )
            }
            _ if c.is_ascii() && is_operator_char(c as u8) => {
                while self.peek_byte(0).is_some_and(is_operator_char) {
                    self.pos += 1;
                }
                TokenKind::Operator
            }
            _ if is_ident_start(c) => {
                self.skip_ident();
                if self.peek_byte(0) == Some(b':') && self.peek_byte(1) != Some(b'=') {
                    self.pos += 1;
                    TokenKind::Keyword
                } else {
                    TokenKind::Identifier
                }
            }
            _ => {
                self.pos += c.len_utf8();
                TokenKind::Error(format!("unexpected character {c:?}"))
            }
        }
    }

    fn single(&mut self, kind: TokenKind) -> TokenKind {
        self.pos += 1;
        kind
    }

    fn skip_ident(&mut self) {
        while let Some(c) = self.peek_char() {
            if !is_ident_char(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    fn skip_digits(&mut self) {
        while self.peek_byte(0).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    /// Lex a number starting at a digit: `123`, `3.14`, `1.5e10`, `2e-3`.
    fn lex_number(&mut self) -> TokenKind {
        let start = self.pos;
        self.skip_digits();
        let mut is_double = false;
        if self.peek_byte(0) == Some(b'.') && self.peek_byte(1).is_some_and(|b| b.is_ascii_digit())
        {
            is_double = true;
            self.pos += 1;
            self.skip_digits();
        }
        if self.peek_byte(0) == Some(b'e') {
            let digit_at = if self.peek_byte(1) == Some(b'-') {
                2
            } else {
                1
            };
            if self.peek_byte(digit_at).is_some_and(|b| b.is_ascii_digit()) {
                is_double = true;
                self.pos += digit_at;
                self.skip_digits();
            }
        }
        let text = self.src.get(start..self.pos).unwrap_or("0");
        if is_double {
            match text.parse::<f64>() {
                Ok(d) if d.is_finite() => TokenKind::Double(d),
                _ => TokenKind::Error(format!("floating point literal {text} is out of range")),
            }
        } else {
            let mut value: i64 = 0;
            for b in text.bytes() {
                match value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(i64::from(b - b'0')))
                {
                    Some(v) => value = v,
                    None => {
                        return match BigInt::parse_bytes(text.as_bytes(), 10) {
                            Some(big) => TokenKind::BigInteger(big),
                            None => TokenKind::Error(format!("invalid integer literal {text}")),
                        };
                    }
                }
            }
            TokenKind::Integer(value)
        }
    }

    /// Lex a string starting at the opening quote. On error, returns the error
    /// token kind (and leaves `pos` after the offending part).
    fn lex_string(&mut self) -> Result<String, TokenKind> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = self.src.get(self.pos..).unwrap_or("");
            let Some(i) = rest.find(['\'', '\\']) else {
                self.pos = self.src.len();
                self.error_span = Some(span(open, open + 1));
                return Err(TokenKind::Error(
                    "unterminated string literal: missing closing quote (')".into(),
                ));
            };
            out.push_str(rest.get(..i).unwrap_or(""));
            self.pos += i;
            if self.peek_byte(0) == Some(b'\'') {
                if self.peek_byte(1) == Some(b'\'') {
                    // Smalltalk-style doubled quote.
                    out.push('\'');
                    self.pos += 2;
                    continue;
                }
                self.pos += 1;
                return Ok(out);
            }
            // Backslash escape.
            let escaped = match self.peek_byte(1) {
                Some(b't') => '\t',
                Some(b'b') => '\u{8}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b'f') => '\u{c}',
                Some(b'0') => '\0',
                Some(b'\'') => '\'',
                Some(b'\\') => '\\',
                _ => {
                    let esc_start = self.pos;
                    self.pos += 1;
                    let shown = match self.peek_char() {
                        Some(c) => {
                            self.pos += c.len_utf8();
                            format!("\\{c}")
                        }
                        None => "\\".to_string(),
                    };
                    self.error_span = Some(span(esc_start, self.pos));
                    return Err(TokenKind::Error(format!(
                        "unknown escape sequence '{shown}' in string (valid escapes are \\t \\b \\n \\r \\f \\0 \\' and \\\\)"
                    )));
                }
            };
            out.push(escaped);
            self.pos += 2;
        }
    }

    /// Lex what follows `#`: a symbol or the start of a literal array.
    fn lex_hash(&mut self) -> TokenKind {
        self.pos += 1;
        match self.peek_char() {
            Some('(') => {
                self.pos += 1;
                TokenKind::LiteralArrayStart
            }
            Some('\'') => match self.lex_string() {
                Ok(s) => TokenKind::Symbol(s),
                Err(e) => e,
            },
            Some(c) if is_ident_start(c) => {
                let start = self.pos;
                self.skip_ident();
                // Keyword selectors: `#at:put:` (and SOM's lenient `#at:put`).
                while self.peek_byte(0) == Some(b':') && self.peek_byte(1) != Some(b'=') {
                    self.pos += 1;
                    if self.peek_char().is_some_and(is_ident_start) {
                        self.skip_ident();
                    } else {
                        break;
                    }
                }
                TokenKind::Symbol(self.src.get(start..self.pos).unwrap_or("").to_string())
            }
            Some(c) if c.is_ascii() && is_operator_char(c as u8) => {
                let start = self.pos;
                while self.peek_byte(0).is_some_and(is_operator_char) {
                    self.pos += 1;
                }
                TokenKind::Symbol(self.src.get(start..self.pos).unwrap_or("").to_string())
            }
            _ => TokenKind::Error(
                "expected a symbol name, an operator, a string or '(' after '#'".into(),
            ),
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    /// Yields every token, then `Eof` once, then `None`.
    fn next(&mut self) -> Option<Token> {
        if self.finished {
            return None;
        }
        let t = self.next_token();
        if t.kind == TokenKind::Eof {
            self.finished = true;
        }
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokenKind, &str)> {
        let lexer = Lexer::new(src);
        let text = lexer.clone();
        lexer.map(|t| (t.kind.clone(), text.text(t.span))).collect()
    }

    #[test]
    fn basic_tokens() {
        use TokenKind::*;
        assert_eq!(
            kinds("a := b foo: 3 + 4.5 ; bar ^ . [ :x | ] ( ) #( )"),
            vec![
                (Identifier, "a"),
                (Assign, ":="),
                (Identifier, "b"),
                (Keyword, "foo:"),
                (Integer(3), "3"),
                (Operator, "+"),
                (Double(4.5), "4.5"),
                (Semicolon, ";"),
                (Identifier, "bar"),
                (Caret, "^"),
                (Period, "."),
                (LBracket, "["),
                (Colon, ":"),
                (Identifier, "x"),
                (Operator, "|"),
                (RBracket, "]"),
                (LParen, "("),
                (RParen, ")"),
                (LiteralArrayStart, "#("),
                (RParen, ")"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn operators_and_separator() {
        use TokenKind::*;
        assert_eq!(
            kinds("<= || -> - ---- ------ >>>"),
            vec![
                (Operator, "<="),
                (Operator, "||"),
                (Operator, "->"),
                (Operator, "-"),
                (Separator, "----"),
                (Separator, "------"),
                (Operator, ">>>"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn numbers() {
        use TokenKind::*;
        assert_eq!(kinds("3.")[0], (Integer(3), "3"));
        assert_eq!(kinds("3.x")[0], (Integer(3), "3"));
        assert_eq!(kinds("1.5e10")[0], (Double(1.5e10), "1.5e10"));
        assert_eq!(kinds("2e-3")[0], (Double(2e-3), "2e-3"));
        assert_eq!(kinds("2e")[0], (Integer(2), "2"));
        assert_eq!(kinds("2e-")[0], (Integer(2), "2"));
        assert_eq!(
            kinds("9223372036854775807")[0],
            (Integer(i64::MAX), "9223372036854775807")
        );
        assert_eq!(
            kinds("9223372036854775808")[0].0,
            BigInteger("9223372036854775808".parse().unwrap_or_default())
        );
        assert!(matches!(kinds("1e999")[0].0, Error(_)));
    }

    #[test]
    fn strings_and_symbols() {
        use TokenKind::*;
        assert_eq!(kinds(r"'it''s'")[0].0, String("it's".into()));
        assert_eq!(kinds(r"'a\tb\n\'\\\0'")[0].0, String("a\tb\n'\\\0".into()));
        assert_eq!(kinds("#foo")[0].0, Symbol("foo".into()));
        assert_eq!(kinds("#at:put:")[0].0, Symbol("at:put:".into()));
        assert_eq!(kinds("#+")[0].0, Symbol("+".into()));
        assert_eq!(kinds("#'a b'")[0].0, Symbol("a b".into()));
        assert!(matches!(kinds(r"'\a'")[0].0, Error(_)));
        assert!(matches!(kinds("'abc")[0].0, Error(_)));
        assert!(matches!(kinds("\"abc")[0].0, Error(_)));
        assert!(matches!(kinds("#")[0].0, Error(_)));
        assert!(matches!(kinds("$a")[0].0, Error(_)));
    }

    #[test]
    fn keywords_vs_assign() {
        use TokenKind::*;
        assert_eq!(
            kinds("a:=1 at:x"),
            vec![
                (Identifier, "a"),
                (Assign, ":="),
                (Integer(1), "1"),
                (Keyword, "at:"),
                (Identifier, "x"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn eof_after_last_token() {
        let mut l = Lexer::new("foo  \"c\"  \n");
        assert_eq!(l.next_token().span, Span::new(0, 3));
        let eof = l.next_token();
        assert_eq!(eof.kind, TokenKind::Eof);
        assert_eq!(eof.span, Span::new(3, 3));
    }
}
