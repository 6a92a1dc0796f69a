//! Random ASTs: compiling never panics, and whatever compiles passes `verify`
//! (jump targets, local/env/literal indices, stack depths all in range).

use lupa_compiler::{compile_method, disassemble, verify};
use lupa_syntax::{
    BlockDef, Body, Expr, Ident, Literal, Message, MethodBody, MethodDef, SelectorKind, SourceFile,
    Span, Stmt,
};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use std::cell::Cell;

const NAMES: &[&str] = &[
    "a",
    "b",
    "t",
    "u",
    "x",
    "self",
    "super",
    "nil",
    "true",
    "false",
    "Foo",
    "first",
    "thisContext",
];

/// Selectors, mostly those the compiler inlines or treats specially. The
/// number of arguments is chosen independently, so some sends are absurd.
const SELECTORS: &[&str] = &[
    "ifTrue:",
    "ifFalse:",
    "ifTrue:ifFalse:",
    "ifFalse:ifTrue:",
    "and:",
    "or:",
    "&&",
    "||",
    "whileTrue:",
    "whileFalse:",
    "whileTrue",
    "whileFalse",
    "ifNil:",
    "ifNotNil:",
    "ifNil:ifNotNil:",
    "ifNotNil:ifNil:",
    "to:do:",
    "to:by:do:",
    "downTo:do:",
    "timesRepeat:",
    "value",
    "value:",
    "+",
    "<",
    "at:put:",
    "foo",
    "bar:baz:",
];

fn span() -> impl Strategy<Value = Span> {
    (0u32..200, 0u32..20).prop_map(|(s, l)| Span::new(s, s + l))
}

fn ident() -> impl Strategy<Value = Ident> {
    (prop::sample::select(NAMES), span()).prop_map(|(n, span)| Ident {
        name: n.to_string(),
        span,
    })
}

fn named(names: &'static [&'static str]) -> impl Strategy<Value = Ident> {
    (prop::sample::select(names), span()).prop_map(|(n, span)| Ident {
        name: n.to_string(),
        span,
    })
}

/// Declared names: distinct, except rarely (a duplicate or reserved name is an error).
fn decls(names: &'static [&'static str]) -> impl Strategy<Value = Vec<Ident>> {
    let name = prop_oneof![30 => named(names), 1 => ident()];
    (prop::collection::vec(name, 0..3), 0..30).prop_map(|(mut v, dice)| {
        if dice != 0 {
            v.sort_by(|a, b| a.name.cmp(&b.name));
            v.dedup_by(|a, b| a.name == b.name);
        }
        v
    })
}

fn literal() -> impl Strategy<Value = Literal> {
    let leaf = prop_oneof![
        prop_oneof![-3i64..4, any::<i64>()].prop_map(Literal::Integer),
        any::<f64>().prop_map(Literal::Double),
        "[a-c]{0,2}".prop_map(Literal::String),
        "[a-c:]{1,3}".prop_map(Literal::Symbol),
        Just(Literal::True),
        Just(Literal::Nil),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop::collection::vec(inner, 0..3).prop_map(Literal::Array)
    })
}

fn message(expr: impl Strategy<Value = Expr> + Clone) -> impl Strategy<Value = Message> {
    let arity = prop_oneof![4 => Just(None), 1 => (0usize..4).prop_map(Some)];
    (prop::sample::select(SELECTORS), arity, span()).prop_flat_map(move |(sel, arity, span)| {
        let n = arity.unwrap_or_else(|| {
            sel.matches(':').count().max(usize::from(
                !sel.ends_with(':') && !sel.chars().all(char::is_alphanumeric),
            ))
        });
        prop::collection::vec(expr.clone(), n).prop_map(move |args| Message {
            selector: sel.to_string(),
            args,
            span,
        })
    })
}

fn stmt(expr: impl Strategy<Value = Expr>) -> impl Strategy<Value = Stmt> {
    (expr, any::<bool>(), span()).prop_map(|(e, ret, s)| {
        if ret {
            Stmt::Return(e, s)
        } else {
            Stmt::Expr(e)
        }
    })
}

fn body(expr: impl Strategy<Value = Expr> + Clone) -> impl Strategy<Value = Body> {
    (
        decls(&["t", "u"]),
        prop::collection::vec(stmt(expr), 0..4),
        span(),
    )
        .prop_map(|(locals, statements, span)| Body {
            locals,
            statements,
            span,
        })
}

fn expr() -> impl Strategy<Value = Expr> + Clone {
    let leaf = prop_oneof![
        (literal(), span()).prop_map(|(l, s)| Expr::Literal(l, s)),
        ident().prop_map(Expr::Var),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            1 => (prop_oneof![9 => named(&["t", "u", "x"]), 1 => ident()], inner.clone()).prop_map(|(i, e)| Expr::Assign(i, Box::new(e))),
            3 => (inner.clone(), message(inner.clone())).prop_map(|(r, m)| Expr::Send(Box::new(r), m)),
            1 => (inner.clone(), prop::collection::vec(message(inner.clone()), 2..4))
                .prop_map(|(r, ms)| Expr::Cascade(Box::new(r), ms)),
            3 => (decls(&["a", "b", "x"]), body(inner), span())
                .prop_map(|(params, body, span)| Expr::Block(Box::new(BlockDef { params, body, span }))),
        ]
    })
}

fn method() -> impl Strategy<Value = (MethodDef, Vec<String>)> {
    let fields = prop::collection::vec(
        prop::sample::select(&["first", "x", "Foo", "nil"][..]),
        0..3,
    );
    (decls(&["a", "b", "x"]), body(expr()), fields).prop_map(|(params, body, fields)| {
        let mut body = body;
        for local in ["t", "u"] {
            if !body.locals.iter().any(|l| l.name == local) {
                body.locals.push(Ident {
                    name: local.into(),
                    span: Span::default(),
                });
            }
        }
        let def = MethodDef {
            selector: "m".into(),
            kind: SelectorKind::Keyword,
            params,
            pragmas: Vec::new(),
            body: MethodBody::Code(body),
            span: Span::new(0, 50),
        };
        (def, fields.into_iter().map(String::from).collect())
    })
}

#[test]
fn compiled_code_is_always_valid() {
    let src = SourceFile::new("random", "a\nb\nc\n".repeat(40));
    let (compiled, rejected) = (Cell::new(0), Cell::new(0));
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 3000,
        ..ProptestConfig::default()
    });
    let result = runner.run(&method(), |(def, fields)| {
        match compile_method(&def, &fields, &src) {
            Ok(code) => {
                if let Err(e) = verify(&code) {
                    return Err(TestCaseError::fail(format!(
                        "{e}\n{def:#?}\n{}",
                        disassemble(&code)
                    )));
                }
                compiled.set(compiled.get() + 1);
            }
            Err(_) => rejected.set(rejected.get() + 1),
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // Most generated methods should be valid, or the test checks little.
    let (ok, bad) = (compiled.get(), rejected.get());
    assert!(ok > 2 * bad, "{ok} compiled, {bad} rejected");
}
