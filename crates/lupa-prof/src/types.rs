//! Type feedback: the model Spy's `TypeProfiler` fills (per method, the
//! generalised classes of its arguments and answer, and the argument classes
//! that sibling implementations saw and it did not), and its reports, text
//! and JSON ([`Types`] is a [`Report`]).
//!
//! Contract: [`MethodTypes::signature`] is the profiler's own signature
//! (`Foo >> at: <Integer> put: <String | nil> ^ <Foo>`) and
//! [`parse_signature`] reads its `<...>` groups back, the last one the
//! answer's; the JSON document has its `version` first.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::report::{DefaultFile, FormatInfo, Report, ReportFormat};

/// The version of the JSON document.
pub const VERSION: u32 = 1;

/// One method's types.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodTypes {
    /// `Foo` or `Foo class`.
    pub class: String,
    /// The selector.
    pub selector: String,
    /// Calls seen.
    pub calls: u64,
    /// One type per argument (a class name, `nil` when it was only nil,
    /// `?` when never called), `| nil` appended when nil was seen too.
    pub arguments: Vec<String>,
    /// The answer's type, the same way.
    pub returns: String,
    /// `Foo >> at: <Integer> put: <String | nil> ^ <Foo>`.
    pub signature: String,
}

/// A type-feedback profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Types {
    /// [`VERSION`].
    pub version: u32,
    /// The command that produced it.
    pub command: String,
    /// Methods, sorted by signature.
    pub methods: Vec<MethodTypes>,
    /// `C>>sel: argument N was never X (as in D>>sel:)` and `never called` lines.
    pub missing: Vec<String>,
}

/// The argument and answer types written in a signature (`<...>` groups;
/// the last is the answer's).
pub fn parse_signature(signature: &str) -> (Vec<String>, String) {
    let mut types: Vec<String> = signature
        .split('<')
        .skip(1)
        .filter_map(|s| s.split_once('>').map(|(t, _)| t.trim().to_string()))
        .collect();
    let returns = types.pop().unwrap_or_default();
    (types, returns)
}

impl Types {
    /// The text report: one signature per line, then the missing argument classes.
    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n", self.command);
        for m in &self.methods {
            out.push_str(&m.signature);
            if m.calls == 0 {
                out.push_str("    (never called)");
            }
            out.push('\n');
        }
        if !self.missing.is_empty() {
            out.push_str("\nArgument classes sibling implementations saw and these did not:\n");
            for l in &self.missing {
                out.push_str("  ");
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    /// The JSON document (pretty), `version` first.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The formats of a type-feedback report (both to standard output unless a
/// file is named).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypesFormat {
    /// One signature per method.
    Text,
    /// The same as JSON.
    Json,
}

impl TypesFormat {
    /// Every format, the default first.
    pub const ALL: [TypesFormat; 2] = [TypesFormat::Text, TypesFormat::Json];
}

impl ReportFormat for TypesFormat {
    fn info(self) -> FormatInfo {
        let (name, description) = match self {
            TypesFormat::Text => (
                "text",
                "One signature per method, then the argument classes siblings saw",
            ),
            TypesFormat::Json => ("json", "The same as JSON (with a version field)"),
        };
        FormatInfo {
            name,
            aliases: &[],
            description,
            default_file: DefaultFile::Stdout,
        }
    }
}

impl Report for Types {
    type Format = TypesFormat;
    type Options = ();
    const FORMATS: &'static [TypesFormat] = &TypesFormat::ALL;
    const NOUN: &'static str = "types";

    fn write(&self, format: TypesFormat, _: &(), w: &mut dyn Write) -> io::Result<()> {
        let text = match format {
            TypesFormat::Text => self.to_text(),
            TypesFormat::Json => self.to_json(),
        };
        w.write_all(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_split_into_types() {
        let (args, ret) = parse_signature("Foo >> at: <Integer> put: <String | nil> ^ <Foo>");
        assert_eq!(args, ["Integer", "String | nil"]);
        assert_eq!(ret, "Foo");
        let (args, ret) = parse_signature("Foo >> size ^ <?>");
        assert!(args.is_empty());
        assert_eq!(ret, "?");
    }

    #[test]
    fn reports() {
        crate::report::api::tests::check_formats::<Types>();
        let t = Types {
            version: VERSION,
            command: "lupa types".into(),
            methods: vec![MethodTypes {
                class: "Foo".into(),
                selector: "size".into(),
                calls: 0,
                arguments: Vec::new(),
                returns: "?".into(),
                signature: "Foo >> size ^ <?>".into(),
            }],
            missing: vec!["Foo>>bar: never called".into()],
        };
        assert_eq!(
            t.render(TypesFormat::Text, &()),
            "lupa types\nFoo >> size ^ <?>    (never called)\n\n\
Argument classes sibling implementations saw and these did not:\n  Foo>>bar: never called\n"
        );
        assert!(
            t.render(TypesFormat::Json, &())
                .starts_with("{\n  \"version\": 1,")
        );
    }
}
