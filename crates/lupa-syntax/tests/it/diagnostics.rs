//! Rendered diagnostics, as insta snapshots (in `tests/snapshots`).
//! To update them: `INSTA_UPDATE=always cargo test -p lupa-syntax --test diagnostics`,
//! then review the diff.

#![allow(clippy::unwrap_used)]

use lupa_syntax::{SourceFile, parse_class, parse_method};

fn class_error(src: &str) -> String {
    match parse_class(src) {
        Ok(c) => panic!("expected an error, parsed {c:?}"),
        Err(d) => d.render(&SourceFile::new("path/to/Foo.som", src)),
    }
}

fn method_error(src: &str) -> String {
    match parse_method(src) {
        Ok(m) => panic!("expected an error, parsed {m:?}"),
        Err(d) => d.render(&SourceFile::new("method", src)),
    }
}

macro_rules! class_snapshot {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(class_error($src));
        }
    };
}

macro_rules! method_snapshot {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(method_error($src));
        }
    };
}

class_snapshot!(eof_after_binary_operator, "Foo = (\n\n    foo = ( ^1 + \n");
class_snapshot!(eof_in_method_body, "Foo = (\n    foo = (\n        ^1\n");
class_snapshot!(eof_in_class_body, "Foo = (\n    foo = ( ^1 )\n");
class_snapshot!(
    missing_period,
    "Foo = (\n    foo = (\n        a bar\n        b baz: 1 2\n    )\n)\n"
);
class_snapshot!(missing_equals_after_class_name, "Foo Object ( )");
class_snapshot!(missing_class_body, "Foo = Object\n");
class_snapshot!(not_a_class, "\"just a comment\" 'a string'");
class_snapshot!(bad_method_pattern, "Foo = (\n    3 = ( ^3 )\n)");
class_snapshot!(missing_method_equals, "Foo = (\n    foo ( ^3 )\n)");
class_snapshot!(
    keyword_pattern_without_parameter,
    "Foo = (\n    at: = ( )\n)"
);
class_snapshot!(missing_method_body, "Foo = (\n    foo = ^3\n)");
class_snapshot!(junk_after_class, "Foo = ( )\nBar = ( )\n");
class_snapshot!(second_separator, "Foo = (\n----\n  new = ( )\n----\n)");
class_snapshot!(duplicate_field, "Foo = (\n    | a b a |\n)");
class_snapshot!(
    unterminated_field_declaration,
    "Foo = (\n    | a b\n    foo = ( )\n)"
);
class_snapshot!(unterminated_string, "Foo = (\n    foo = ( ^'abc )\n)\n");
class_snapshot!(
    unterminated_comment,
    "Foo = (\n    \"a comment\n    foo = ( )\n)\n"
);
class_snapshot!(
    unknown_escape,
    "Foo = (\n    run = (\n        '\\a' println\n    )\n)\n"
);
class_snapshot!(
    tabs_are_kept_in_the_caret_line,
    "Foo = (\n\tfoo = (\n\t\t^ a foo: \t)\n)"
);
class_snapshot!(non_ascii_columns, "Foo = (\n    foo = ( ^'héllo' , ) \n)");
method_snapshot!(unclosed_block, "foo = ( [:x | x foo )");
method_snapshot!(
    unclosed_block_at_eof,
    "foo = (\n  #(1 2) do: [:x |\n    x print.\n"
);
method_snapshot!(block_parameter_without_bar, "foo = ( [:x x] )");
method_snapshot!(unclosed_literal_array, "foo = ( #(1 2 ");
method_snapshot!(bad_literal_array_item, "foo = ( #(1 ^ 2) )");
method_snapshot!(assignment_to_expression, "foo = ( a foo := 3 )");
method_snapshot!(assignment_to_self, "foo = ( self := 3 )");
method_snapshot!(character_literal, "foo = ( ^$a )");
method_snapshot!(unexpected_character, "foo = ( a ! b )");
method_snapshot!(misplaced_pragma, "foo = ( a foo. <primitive> )");
method_snapshot!(pragma_with_non_literal, "foo = ( <foo: bar> )");
method_snapshot!(unclosed_pragma, "foo = ( <foo ^1 )");
method_snapshot!(cascade_without_send, "foo = ( a; foo )");
method_snapshot!(cascade_part_with_two_messages, "foo = ( a foo; bar baz )");
method_snapshot!(missing_keyword_argument, "foo = ( a at: )");
method_snapshot!(missing_return_value, "foo = ( ^ )");
method_snapshot!(separator_in_body, "foo = ( ---- )");
method_snapshot!(unclosed_parenthesis, "foo = ( ^(a + b )");
method_snapshot!(duplicate_parameter, "m: arg1 m: arg1 = ( )");
method_snapshot!(reserved_local, "foo = ( | a nil | )");
method_snapshot!(trailing_text_after_method, "foo = ( ) bar");
method_snapshot!(big_float, "foo = ( ^1e400 )");

#[test]
fn too_deep_nesting() {
    let src = format!("foo = ( ^{}1{} )", "(".repeat(300), ")".repeat(300));
    let d = parse_method(&src).unwrap_err();
    assert_eq!(d.span.start, 8 + 1 + 256);
    insta::assert_snapshot!(d.message);
}

#[test]
fn too_long_chain() {
    let src = format!("foo = ( ^1{} )", " + 1".repeat(1500));
    let d = parse_method(&src).unwrap_err();
    insta::assert_snapshot!(d.message);
}
