//! Parser tests: AST shapes (as compact S-expressions), literals and spans.

#![allow(clippy::unwrap_used)]

use lupa_syntax::{
    BlockDef, ClassDef, Expr, Literal, Message, MethodBody, MethodDef, SelectorKind, SourceFile,
    Span, Stmt, parse_class, parse_method,
};
use num_bigint::BigInt;

// ----- S-expression rendering of the AST --------------------------------

fn lit(l: &Literal) -> String {
    match l {
        Literal::Integer(i) => i.to_string(),
        Literal::BigInteger(b) => format!("big:{b}"),
        Literal::Double(d) => format!("d:{d:?}"),
        Literal::String(s) => format!("{s:?}"),
        Literal::Symbol(s) => format!("#{s}"),
        Literal::Array(items) => {
            format!("#({})", items.iter().map(lit).collect::<Vec<_>>().join(" "))
        }
        Literal::True => "true".into(),
        Literal::False => "false".into(),
        Literal::Nil => "nil".into(),
    }
}

fn msg(m: &Message) -> String {
    let mut s = m.selector.clone();
    for a in &m.args {
        s.push(' ');
        s.push_str(&sexp(a));
    }
    s
}

fn block(b: &BlockDef) -> String {
    let params: Vec<_> = b.params.iter().map(|p| p.name.as_str()).collect();
    let locals: Vec<_> = b.body.locals.iter().map(|p| p.name.as_str()).collect();
    let mut s = format!("[({}) ({})", params.join(" "), locals.join(" "));
    for st in &b.body.statements {
        s.push(' ');
        s.push_str(&stmt(st));
    }
    s.push(']');
    s
}

fn sexp(e: &Expr) -> String {
    match e {
        Expr::Literal(l, _) => lit(l),
        Expr::Var(id) => id.name.clone(),
        Expr::Assign(id, v) => format!("(:= {} {})", id.name, sexp(v)),
        Expr::Send(r, m) => format!("({} {})", sexp(r), msg(m)),
        Expr::Cascade(r, ms) => {
            let parts: Vec<_> = ms.iter().map(|m| format!("({})", msg(m))).collect();
            format!("(cascade {} {})", sexp(r), parts.join(" "))
        }
        Expr::Block(b) => block(b),
    }
}

fn stmt(s: &Stmt) -> String {
    match s {
        Stmt::Expr(e) => sexp(e),
        Stmt::Return(e, _) => format!("(^ {})", sexp(e)),
    }
}

fn method(src: &str) -> MethodDef {
    match parse_method(src) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.render(&SourceFile::new("test", src))),
    }
}

fn class(src: &str) -> ClassDef {
    match parse_class(src) {
        Ok(c) => c,
        Err(d) => panic!("{}", d.render(&SourceFile::new("test", src))),
    }
}

fn body(m: &MethodDef) -> &lupa_syntax::Body {
    match &m.body {
        MethodBody::Code(b) => b,
        MethodBody::Primitive => panic!("primitive"),
    }
}

/// The statements of `foo = ( <stmts> )`, rendered and joined with "; ".
fn stmts(src: &str) -> String {
    let text = format!("foo = ( {src} )");
    let m = method(&text);
    body(&m)
        .statements
        .iter()
        .map(stmt)
        .collect::<Vec<_>>()
        .join("; ")
}

fn err(src: &str) -> String {
    match parse_method(&format!("foo = ( {src} )")) {
        Ok(m) => panic!("expected an error, got {m:?}"),
        Err(d) => d.message,
    }
}

/// Source text of a span in `foo = ( <src> )`.
fn slice(src: &str, span: Span) -> String {
    let text = format!("foo = ( {src} )");
    text[span.start as usize..span.end as usize].to_string()
}

// ----- precedence ---------------------------------------------------------

#[test]
fn unary_binary_keyword_precedence() {
    assert_eq!(stmts("a foo bar"), "((a foo) bar)");
    assert_eq!(stmts("a + b * c"), "((a + b) * c)");
    assert_eq!(stmts("a + b foo"), "(a + (b foo))");
    assert_eq!(stmts("a foo + b bar"), "((a foo) + (b bar))");
    assert_eq!(
        stmts("a at: 1 + 2 put: b foo"),
        "(a at:put: (1 + 2) (b foo))"
    );
    assert_eq!(stmts("a at: (b at: c)"), "(a at: (b at: c))");
    assert_eq!(stmts("(a foo: b) bar: c"), "((a foo: b) bar: c)");
    assert_eq!(stmts("a foo; bar"), "(cascade a (foo) (bar))");
    assert_eq!(stmts("x := y := 3 + 4"), "(:= x (:= y (3 + 4)))");
    assert_eq!(stmts("^ a max: b"), "(^ (a max: b))");
    assert_eq!(
        stmts("a == b ifTrue: [1] ifFalse: [2]"),
        "((a == b) ifTrue:ifFalse: [() () 1] [() () 2])"
    );
}

#[test]
fn binary_operators() {
    assert_eq!(stmts("a <= b"), "(a <= b)");
    assert_eq!(stmts("a ~= b"), "(a ~= b)");
    assert_eq!(stmts("a -> b"), "(a -> b)");
    assert_eq!(stmts("a >>> 2"), "(a >>> 2)");
    assert_eq!(stmts("a | b"), "(a | b)");
    assert_eq!(stmts("a || [b]"), "(a || [() () b])");
    assert_eq!(stmts("a , 'x'"), "(a , \"x\")");
    assert_eq!(stmts("a \\ 2"), "(a \\ 2)");
    assert_eq!(stmts("a @ b % c & d"), "(((a @ b) % c) & d)");
}

#[test]
fn statements_and_periods() {
    assert_eq!(stmts(""), "");
    assert_eq!(stmts("a. b."), "a; b");
    assert_eq!(stmts("a. ^ b"), "a; (^ b)");
    assert_eq!(stmts("a.. b"), "a; b");
    assert_eq!(stmts("^ self."), "(^ self)");
    assert_eq!(stmts("super foo"), "(super foo)");
}

// ----- cascades -------------------------------------------------------------

#[test]
fn cascades_go_to_the_receiver_of_the_last_send() {
    assert_eq!(stmts("a foo bar; baz"), "(cascade (a foo) (bar) (baz))");
    assert_eq!(
        stmts("a foo: 1; bar: 2; baz"),
        "(cascade a (foo: 1) (bar: 2) (baz))"
    );
    assert_eq!(
        stmts("a + 1; - 2; * 3 sqrt"),
        "(cascade a (+ 1) (- 2) (* (3 sqrt)))"
    );
    assert_eq!(
        stmts("a foo: b bar; baz"),
        "(cascade a (foo: (b bar)) (baz))"
    );
    assert_eq!(stmts("a + b c; d"), "(cascade a (+ (b c)) (d))");
    assert_eq!(
        stmts("x := Array new: 3; yourself"),
        "(:= x (cascade Array (new: 3) (yourself)))"
    );
    assert_eq!(stmts("(a foo; bar) baz"), "((cascade a (foo) (bar)) baz)");
    assert_eq!(
        stmts("a foo; at: 1 + 2 put: 3 foo"),
        "(cascade a (foo) (at:put: (1 + 2) (3 foo)))"
    );
}

#[test]
fn cascade_errors() {
    assert!(err("a; foo").contains("a cascade ';' must follow a message send"));
    assert!(err("(a foo); bar").contains("must follow a message send"));
    assert!(err("a foo; bar baz").contains("each part of a cascade is a single message"));
    assert!(err("a foo; ").contains("expected a message after ';' in the cascade"));
}

// ----- literals ---------------------------------------------------------------

#[test]
fn negative_literals() {
    assert_eq!(stmts("x := -5"), "(:= x -5)");
    assert_eq!(stmts("^ -5"), "(^ -5)");
    assert_eq!(stmts("(-5)"), "-5");
    assert_eq!(stmts("a foo: -5"), "(a foo: -5)");
    assert_eq!(stmts("a max: -2.5"), "(a max: d:-2.5)");
    assert_eq!(stmts("3-4"), "(3 - 4)");
    assert_eq!(stmts("a - 4"), "(a - 4)");
    assert_eq!(stmts("a -4"), "(a - 4)");
    assert_eq!(stmts("a - -4"), "(a - -4)");
    assert_eq!(stmts("-5 abs"), "(-5 abs)");
    assert_eq!(
        stmts("x := -9223372036854775808"),
        "(:= x -9223372036854775808)"
    );
    assert_eq!(
        stmts("x := -9223372036854775809"),
        "(:= x big:-9223372036854775809)"
    );
    // SOM: a `--` sequence is an operator, `--5` is not a literal.
    assert_eq!(stmts("a--5"), "(a -- 5)");
}

#[test]
fn numbers() {
    assert_eq!(
        stmts("0. 42. 3.14. 1.5e10. 2e-3. 1e2"),
        "0; 42; d:3.14; d:15000000000.0; d:0.002; d:100.0"
    );
    assert_eq!(stmts("9223372036854775807"), "9223372036854775807");
    assert_eq!(stmts("9223372036854775808"), "big:9223372036854775808");
    let m = method("foo = ( ^ 123456789012345678901234567890 )");
    let Stmt::Return(Expr::Literal(Literal::BigInteger(b), _), _) = &body(&m).statements[0] else {
        panic!("not a big integer");
    };
    assert_eq!(
        *b,
        "123456789012345678901234567890".parse::<BigInt>().unwrap()
    );
    // `3.` ends a statement; `3 . 4` too.
    assert_eq!(stmts("3. 4"), "3; 4");
    assert_eq!(stmts("3 e"), "(3 e)");
}

#[test]
fn strings_and_escapes() {
    assert_eq!(stmts("'it''s'"), "\"it's\"");
    assert_eq!(
        stmts(r"'\t\b\n\r\f\0\'\\'"),
        "\"\\t\\u{8}\\n\\r\\u{c}\\0'\\\\\""
    );
    assert_eq!(stmts("''"), "\"\"");
    assert_eq!(stmts("'multi\nline'"), "\"multi\\nline\"");
    assert_eq!(
        stmts("'h\u{e9}llo \"not a comment\"'"),
        "\"h\u{e9}llo \\\"not a comment\\\"\""
    );
    assert!(err(r"'\q'").contains("unknown escape sequence '\\q'"));
}

#[test]
fn symbols() {
    assert_eq!(
        stmts("#foo. #foo:bar:. #+. #<=. #'hello world'. #at:put:"),
        "#foo; #foo:bar:; #+; #<=; #hello world; #at:put:"
    );
    assert_eq!(stmts("#Foo123"), "#Foo123");
    assert_eq!(stmts("#|"), "#|");
}

#[test]
fn literal_arrays() {
    assert_eq!(
        stmts("#(1 2.0 'str' #sym sym foo:bar: (nested 1) #(nested) true false nil)"),
        "#(1 d:2.0 \"str\" #sym #sym #foo:bar: #(#nested 1) #(#nested) true false nil)"
    );
    assert_eq!(stmts("#()"), "#()");
    assert_eq!(
        stmts("#(-1 - 2 -3.5 + ++ #+ at: foo:)"),
        "#(-1 -2 d:-3.5 #+ #++ #+ #at: #foo:)"
    );
    assert_eq!(
        stmts("#(4 5 6 'a' -7 -8.0 #(9.0 #a) #b #())"),
        "#(4 5 6 \"a\" -7 d:-8.0 #(d:9.0 #a) #b #())"
    );
    assert_eq!(
        stmts("#(1 100 9223372036854775807 -50 -2147483648)"),
        "#(1 100 9223372036854775807 -50 -2147483648)"
    );
    assert_eq!(
        stmts("#(99999999999999999999)"),
        "#(big:99999999999999999999)"
    );
    assert!(
        err("#(1 [2])").contains("expected a literal or ')' to close the literal array, found '['")
    );
}

// ----- blocks -------------------------------------------------------------------

#[test]
fn blocks() {
    assert_eq!(stmts("[]"), "[() ()]");
    assert_eq!(stmts("[:a | ]"), "[(a) ()]");
    assert_eq!(stmts("[:a]"), "[(a) ()]");
    assert_eq!(
        stmts("[:a :b | | t1 t2 | t1 := a. t2 := b. t1 + t2]"),
        "[(a b) (t1 t2) (:= t1 a) (:= t2 b) (t1 + t2)]"
    );
    assert_eq!(stmts("[:a || t | t]"), "[(a) (t) t]");
    assert_eq!(stmts("[:a|a]"), "[(a) () a]");
    assert_eq!(stmts("[:a|-1]"), "[(a) () -1]");
    assert_eq!(stmts("[ | t | t ]"), "[() (t) t]");
    assert_eq!(stmts("[ || 1 ]"), "[() () 1]");
    assert_eq!(stmts("[ ^ 1 ]"), "[() () (^ 1)]");
    assert_eq!(stmts("[ :x | x ] value: 3"), "([(x) () x] value: 3)");
}

// ----- methods and pragmas ----------------------------------------------------

#[test]
fn method_patterns() {
    let m = method("foo = ( )");
    assert_eq!((m.selector.as_str(), m.kind), ("foo", SelectorKind::Unary));
    let m = method("+ other = ( ^ other )");
    assert_eq!((m.selector.as_str(), m.kind), ("+", SelectorKind::Binary));
    assert_eq!(m.params[0].name, "other");
    let m = method("= other = ( ^ self == other )");
    assert_eq!((m.selector.as_str(), m.kind), ("=", SelectorKind::Binary));
    let m = method("| arg = ( ^ arg )");
    assert_eq!(m.selector, "|");
    let m = method("at: i put: v = ( ^ v )");
    assert_eq!(
        (m.selector.as_str(), m.kind),
        ("at:put:", SelectorKind::Keyword)
    );
    let names: Vec<_> = m.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["i", "v"]);
    let m = method("value: x = primitive");
    assert_eq!(m.body, MethodBody::Primitive);
    assert_eq!(m.span, Span::new(0, 20));
    let m = method("primitive = ( ^ primitive )");
    assert_eq!(m.selector, "primitive");
    assert_eq!(stmts("primitive foo"), "(primitive foo)");
    let m = method("foo=(^1)");
    assert_eq!(m.span, Span::new(0, 8));
}

#[test]
fn pragmas() {
    let m = method("foo = ( <noInstrumentation> | a | ^ a )");
    assert_eq!(m.pragmas.len(), 1);
    assert_eq!(m.pragmas[0].selector, "noInstrumentation");
    assert_eq!(m.pragmas[0].span, Span::new(8, 27));
    assert_eq!(body(&m).locals[0].name, "a");

    let m = method("foo = ( | a | <primitive> ^ a )");
    assert_eq!(m.pragmas[0].selector, "primitive");
    assert_eq!(body(&m).statements.len(), 1);

    let m = method("foo = ( <a> <b: 1 c: #d> | x | <e: 'str' f: -2 g: #(1 2) h: true> x )");
    let sels: Vec<_> = m.pragmas.iter().map(|p| p.selector.as_str()).collect();
    assert_eq!(sels, ["a", "b:c:", "e:f:g:h:"]);
    assert_eq!(
        m.pragmas[1].args,
        [Literal::Integer(1), Literal::Symbol("d".into())]
    );
    assert_eq!(
        m.pragmas[2].args,
        [
            Literal::String("str".into()),
            Literal::Integer(-2),
            Literal::Array(vec![Literal::Integer(1), Literal::Integer(2)]),
            Literal::True
        ]
    );
    // Operators glued to the pragma delimiters are split.
    let m = method("foo = (<a>|x|<b>^x)");
    assert_eq!(m.pragmas.len(), 2);
    assert_eq!(body(&m).locals.len(), 1);
    // `<` later in the body is a binary operator.
    assert_eq!(stmts("a < b"), "(a < b)");
    assert!(err("a. <foo>").contains("pragmas are only allowed at the start of a method body"));
    assert!(err("<foo: bar>").contains("expected a literal argument"));
    assert!(err("<foo").contains("expected '>' to close the pragma <foo, found ')'"));
}

// ----- classes --------------------------------------------------------------------

#[test]
fn class_structure() {
    let c = class(
        "Foo = Bar (\n  | a b |\n  foo = ( ^a )\n  + x = ( ^b )\n  ----\n  | c |\n  new = ( ^super new )\n  bar: x = primitive\n)\n",
    );
    assert_eq!(c.name.name, "Foo");
    assert_eq!(c.superclass.as_ref().map(|s| s.name.as_str()), Some("Bar"));
    let names = |v: &[lupa_syntax::Ident]| v.iter().map(|i| i.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&c.instance_fields), ["a", "b"]);
    assert_eq!(names(&c.class_fields), ["c"]);
    let sels = |v: &[MethodDef]| v.iter().map(|m| m.selector.clone()).collect::<Vec<_>>();
    assert_eq!(sels(&c.instance_methods), ["foo", "+"]);
    assert_eq!(sels(&c.class_methods), ["new", "bar:"]);
    assert_eq!(c.span, Span::new(0, 112));

    let c = class("Foo = ()");
    assert!(c.superclass.is_none());
    let c = class("Foo = nil ( ------------ )");
    assert_eq!(c.superclass.map(|s| s.name), Some("nil".into()));
}

#[test]
fn bar_methods_versus_field_declarations() {
    let c = class("Foo = ( | arg = ( ^arg ) || arg = ( ^arg ) )");
    assert!(c.instance_fields.is_empty());
    let sels: Vec<_> = c
        .instance_methods
        .iter()
        .map(|m| m.selector.as_str())
        .collect();
    assert_eq!(sels, ["|", "||"]);
    let c = class("Foo = ( || foo = ( ) )");
    assert_eq!(c.instance_methods[0].selector, "||");
    let c = class("Foo = ( || )");
    assert!(c.instance_fields.is_empty());
    let c = class("Foo = ( | a | | b = ( ^b ) )");
    assert_eq!(c.instance_fields.len(), 1);
    assert_eq!(c.instance_methods[0].selector, "|");
    let c = class("Foo = ( |a|= other = ( ) )");
    assert_eq!(c.instance_fields.len(), 1);
    assert_eq!(c.instance_methods[0].selector, "=");
    let c = class("Foo = ( ---- | a b | | x = ( ) )");
    assert_eq!(c.class_fields.len(), 2);
    assert_eq!(c.class_methods[0].selector, "|");
}

#[test]
fn comments_everywhere() {
    let c = class(
        "\"c\" Foo \"c\" = \"c\" Bar \"c\" ( \"c\" | \"c\" a \"c\" | \"c\" foo \"c\" = \"c\" ( \"c\" ^ \"c\" a \"c\" ) \"c\" ) \"c\"",
    );
    assert_eq!(c.instance_methods.len(), 1);
}

#[test]
fn declarations_are_checked() {
    assert!(err("| a a | a").contains("duplicate local variable 'a'"));
    assert!(err("| self | 1").contains("'self' is a reserved name"));
    assert!(err("[:a :a | a]").contains("duplicate block parameter 'a'"));
    assert!(
        err("[:a | | a | a]").contains("local variable 'a' has the same name as a block parameter")
    );
    assert!(err("self := 1").contains("cannot assign to 'self'"));
    assert!(err("true := 1").contains("cannot assign to 'true'"));
    let e = parse_method("at: x put: x = ( )").unwrap_err();
    assert!(
        e.message.contains("duplicate method parameter 'x'"),
        "{}",
        e.message
    );
    let e = parse_method("at: x = ( | x | )").unwrap_err();
    assert!(
        e.message
            .contains("has the same name as a method parameter"),
        "{}",
        e.message
    );
    // Shadowing an outer scope is allowed.
    assert_eq!(stmts("| a | [:a | a]"), "[(a) () a]");
}

// ----- spans ------------------------------------------------------------------------

#[test]
fn spans_are_accurate() {
    let src = "x := a foo: b + 1 bar: (c baz). ^ [:y | y]";
    let m = method(&format!("foo = ( {src} )"));
    let b = body(&m);
    assert_eq!(slice(src, b.span), format!(" {src} "));
    let Stmt::Expr(Expr::Assign(x, value)) = &b.statements[0] else {
        panic!()
    };
    assert_eq!(slice(src, x.span), "x");
    assert_eq!(
        slice(src, b.statements[0].span()),
        "x := a foo: b + 1 bar: (c baz)"
    );
    let Expr::Send(recv, m1) = &**value else {
        panic!()
    };
    assert_eq!(slice(src, recv.span()), "a");
    assert_eq!(slice(src, m1.span), "foo: b + 1 bar: (c baz)");
    let Expr::Send(b1, plus) = &m1.args[0] else {
        panic!()
    };
    assert_eq!(slice(src, b1.span()), "b");
    assert_eq!(slice(src, plus.span), "+ 1");
    let Expr::Send(_, baz) = &m1.args[1] else {
        panic!()
    };
    assert_eq!(slice(src, baz.span), "baz");
    let Stmt::Return(blk, ret_span) = &b.statements[1] else {
        panic!()
    };
    assert_eq!(slice(src, *ret_span), "^ [:y | y]");
    assert_eq!(slice(src, blk.span()), "[:y | y]");
    let Expr::Block(bd) = blk else { panic!() };
    assert_eq!(slice(src, bd.params[0].span), "y");
    assert_eq!(slice(src, bd.body.span), ":y | y");

    let src = "a foo; bar: 1";
    let m = method(&format!("foo = ( {src} )"));
    let Stmt::Expr(Expr::Cascade(r, ms)) = &body(&m).statements[0] else {
        panic!()
    };
    assert_eq!(slice(src, r.span()), "a");
    assert_eq!(slice(src, ms[0].span), "foo");
    assert_eq!(slice(src, ms[1].span), "bar: 1");
    assert_eq!(slice(src, body(&m).statements[0].span()), "a foo; bar: 1");

    let src = "-5 abs. #(1 2). 'x' , #y";
    let m = method(&format!("foo = ( {src} )"));
    let spans: Vec<_> = body(&m)
        .statements
        .iter()
        .map(|s| slice(src, s.span()))
        .collect();
    assert_eq!(spans, ["-5 abs", "#(1 2)", "'x' , #y"]);
}

#[test]
fn method_and_class_spans_with_line_col() {
    let src = "Foo = (\n  foo = ( ^1 )\n  bar: x = (\n    ^ x\n  )\n)";
    let c = class(src);
    let f = SourceFile::new("Foo.som", src);
    let bar = &c.instance_methods[1];
    assert_eq!(f.line_col(bar.span.start), (3, 3));
    assert_eq!(f.line_col(bar.span.end), (5, 4));
    let Stmt::Return(e, _) = &body(bar).statements[0] else {
        panic!()
    };
    assert_eq!(f.line_col(e.span().start), (4, 7));
}
