//! The parser must never panic nor overflow the stack, and must be fast.

use std::time::{Duration, Instant};

use lupa_syntax::{Lexer, MAX_NESTING, SourceFile, TokenKind, parse_class, parse_method};
use proptest::prelude::*;

const SAMPLE: &str = r#"
"A sample class exercising most of the syntax."
Sample = Object (
    | a b c |

    initialize = ( a := 1. b := -2.5e3. c := #(1 'x' #y z: (w) #(nil true false) foo:bar: #+ -) )
    + other = ( ^ a + other value )
    | other = ( ^ self or: other )
    at: i put: v = ( <noInstrumentation> | t | t := i. ^ v )
    cascade = ( ^ Array new: 3; yourself; at: 1 put: 'it''s\n'; size )
    blocks = ( ^ [:x :y | | t | t := x + y. t > 0 ifTrue: [^t]. t] value: 1 value: 2 )
    deep = ( ^ ((((1 + 2) * 3) - 4) / 5) printString , 'x' )
    prim = primitive
    pragma = ( | x | <primitive> <key: 1 other: #sym> x := 99999999999999999999999. ^x )

    ------------

    | instances |
    new = ( ^ super new initialize )
    instances = ( ^ instances ifNil: [ instances := 0 ] )
)
"#;

/// Characters that matter to the lexer and parser.
const ALPHABET: &[char] = &[
    '(', ')', '[', ']', '|', ':', '=', '^', '.', ';', '#', '\'', '"', '-', '+', '<', '>', '\\',
    '$', 'a', 'b', 'x', '1', '9', 'e', ' ', '\n', '\t', '_', 'é', '€', '\r', '\0', '&', ',', '~',
];

fn check(text: &str) {
    let file = SourceFile::new("fuzz.som", text);
    for result in [parse_class(text).err(), parse_method(text).err()]
        .into_iter()
        .flatten()
    {
        let rendered = result.render(&file);
        assert!(rendered.contains("error:"));
        assert!(result.span.start as usize <= text.len(), "{result:?}");
        assert!(result.span.end as usize <= text.len(), "{result:?}");
    }
    // The lexer terminates and its spans are in bounds.
    let mut count = 0;
    for token in Lexer::new(text) {
        count += 1;
        assert!(token.span.start <= token.span.end);
        assert!(token.span.end as usize <= text.len());
        assert!(count <= text.len() + 1, "lexer does not make progress");
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, String),
    Duplicate(usize, usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..20usize).prop_map(|(p, n)| Mutation::Delete(p, n)),
        (
            any::<usize>(),
            proptest::collection::vec(proptest::sample::select(ALPHABET), 1..8)
        )
            .prop_map(|(p, cs)| Mutation::Insert(p, cs.into_iter().collect())),
        (any::<usize>(), 1..40usize, any::<usize>())
            .prop_map(|(p, n, q)| Mutation::Duplicate(p, n, q)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Apply a mutation to a vector of chars (so that every position is valid).
fn apply(chars: &mut Vec<char>, m: &Mutation) {
    let len = chars.len();
    match m {
        Mutation::Delete(p, n) => {
            let p = p % (len + 1);
            let end = (p + n).min(len);
            chars.drain(p..end);
        }
        Mutation::Insert(p, s) => {
            let p = p % (len + 1);
            for (i, c) in s.chars().enumerate() {
                chars.insert(p + i, c);
            }
        }
        Mutation::Duplicate(p, n, q) => {
            let p = p % (len + 1);
            let end = (p + n).min(len);
            let piece: Vec<char> = chars[p..end].to_vec();
            let q = q % (chars.len() + 1);
            for (i, c) in piece.into_iter().enumerate() {
                chars.insert(q + i, c);
            }
        }
        Mutation::Truncate(p) => chars.truncate(p % (len + 1)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_never_panic(s in "\\PC{0,200}") {
        check(&s);
    }

    #[test]
    fn random_syntax_soup_never_panics(cs in proptest::collection::vec(proptest::sample::select(ALPHABET), 0..300)) {
        let s: String = cs.into_iter().collect();
        check(&s);
    }

    #[test]
    fn mutated_classes_never_panic(ms in proptest::collection::vec(mutation(), 1..6)) {
        let mut chars: Vec<char> = SAMPLE.chars().collect();
        for m in &ms {
            apply(&mut chars, m);
        }
        let s: String = chars.into_iter().collect();
        check(&s);
    }
}

#[test]
fn the_sample_parses() {
    let c = parse_class(SAMPLE)
        .unwrap_or_else(|d| panic!("{}", d.render(&SourceFile::new("s", SAMPLE))));
    assert_eq!(c.instance_methods.len(), 9);
    assert_eq!(c.class_methods.len(), 2);
}

fn deep_inputs(n: usize) -> Vec<(&'static str, String)> {
    vec![
        (
            "parentheses",
            format!("foo = ( ^{}1{} )", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "blocks",
            format!("foo = ( ^{}1{} )", "[".repeat(n), "]".repeat(n)),
        ),
        (
            "block params",
            format!("foo = ( ^{}1{} )", "[:a | ".repeat(n), "]".repeat(n)),
        ),
        (
            "keyword blocks",
            format!("foo = ( ^{}1{} )", "x foo: [".repeat(n), "]".repeat(n)),
        ),
        (
            "literal arrays",
            format!("foo = ( ^{}1{} )", "#(".repeat(n), ")".repeat(n)),
        ),
        (
            "nested arrays",
            format!("foo = ( ^#{}1{} )", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "pragma arrays",
            format!("foo = ( <a: {}> )", "#(".repeat(n)),
        ),
        ("unclosed", format!("foo = ( {}", "([".repeat(n))),
        ("assignments", format!("foo = ( {}1 )", "a := ".repeat(n))),
        ("unary chain", format!("foo = ( 1{} )", " foo".repeat(n))),
        ("binary chain", format!("foo = ( 1{} )", " + 1".repeat(n))),
        ("keyword args", format!("foo = ( a{} )", " at: 1".repeat(n))),
        ("cascade", format!("foo = ( a foo{} )", "; bar".repeat(n))),
        ("statements", format!("foo = ( {} )", "a. ".repeat(n))),
    ]
}

#[test]
fn deep_nesting_gives_a_diagnostic() {
    for (name, src) in deep_inputs(100_000) {
        let start = Instant::now();
        let result = parse_method(&src);
        assert!(start.elapsed() < Duration::from_secs(5), "{name} is slow");
        match (name, result) {
            // Long flat sequences are fine.
            ("keyword args" | "cascade" | "statements", Ok(_)) => {}
            (_, Ok(_)) => panic!("{name}: expected a diagnostic"),
            (_, Err(d)) => {
                if name != "unclosed" {
                    assert!(d.message.contains("too deep"), "{name}: {}", d.message);
                }
            }
        }
        let class = format!("Foo = ( {src} )");
        assert!(
            parse_class(&class).is_err()
                || matches!(name, "keyword args" | "cascade" | "statements")
        );
    }
}

#[test]
fn maximum_nesting_fits_in_a_small_stack() {
    // At the limit the parser succeeds and needs well under 1 MiB of stack,
    // even in debug builds.
    let n = MAX_NESTING as usize - 1;
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || {
            for (name, src) in deep_inputs(n) {
                match name {
                    "parentheses" | "blocks" | "block params" | "literal arrays"
                    | "nested arrays" => {
                        if let Err(d) = parse_method(&src) {
                            panic!("{name}: {}", d.message);
                        }
                    }
                    _ => {
                        let _ = parse_method(&src);
                    }
                }
            }
        });
    assert!(handle.map(|h| h.join().is_ok()).unwrap_or(false));
}

#[test]
fn big_file_is_fast() {
    // About 5000 lines.
    let mut text = String::from("Big = Object (\n  | a b c |\n");
    for i in 0..1000 {
        text.push_str(&format!(
            "  method{i}: x with: y = (\n    | t u |\n    t := x + y * {i} - (a foo: b bar: #(1 2 #c 'd')).\n    u := [:k | k printString , 'it''s' ] value: t; yourself.\n    ^ t > u ifTrue: [ t ] ifFalse: [ u negated ]\n  )\n"
        ));
    }
    text.push_str(")\n");
    assert!(text.lines().count() > 5000);
    let start = Instant::now();
    let tokens = Lexer::new(&text)
        .filter(|t| t.kind != TokenKind::Eof)
        .count();
    let lexed = start.elapsed();
    let start = Instant::now();
    let class = parse_class(&text).unwrap_or_else(|d| panic!("{}", d.message));
    let parsed = start.elapsed();
    assert_eq!(class.instance_methods.len(), 1000);
    eprintln!(
        "{} lines, {tokens} tokens: lexed in {lexed:?}, parsed in {parsed:?}",
        text.lines().count()
    );
    // Generous bound for slow debug builds on loaded machines.
    assert!(parsed < Duration::from_secs(2));
}

#[test]
fn many_declarations_are_fast() {
    let names: Vec<String> = (0..100_000).map(|i| format!("v{i}")).collect();
    let src = format!("foo = ( | {} | ^v1 )", names.join(" "));
    let start = Instant::now();
    assert!(parse_method(&src).is_ok());
    let class = format!("Foo = ( | {} | )", names.join(" "));
    assert!(parse_class(&class).is_ok());
    assert!(start.elapsed() < Duration::from_secs(2));
}
