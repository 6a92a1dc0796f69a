//! Tests on hand-built ASTs: errors, limits and inputs the parser never produces.

use lupa_compiler::{CompiledCode, Op, compile_method, disassemble, verify};
use lupa_syntax::{
    BlockDef, Body, Diagnostic, Expr, Ident, Literal, Message, MethodBody, MethodDef, SelectorKind,
    SourceFile, Span, Stmt,
};

fn span(start: u32) -> Span {
    Span::new(start, start + 1)
}
fn id(name: &str) -> Ident {
    Ident {
        name: name.into(),
        span: Span::default(),
    }
}
fn id_at(name: &str, at: u32) -> Ident {
    Ident {
        name: name.into(),
        span: span(at),
    }
}
fn var(name: &str) -> Expr {
    Expr::Var(id(name))
}
fn int(n: i64) -> Expr {
    Expr::Literal(Literal::Integer(n), Span::default())
}
fn send(recv: Expr, selector: &str, args: Vec<Expr>) -> Expr {
    Expr::Send(
        Box::new(recv),
        Message {
            selector: selector.into(),
            args,
            span: Span::default(),
        },
    )
}
fn block(params: &[&str], locals: &[&str], statements: Vec<Stmt>) -> Expr {
    Expr::Block(Box::new(BlockDef {
        params: params.iter().map(|p| id(p)).collect(),
        body: Body {
            locals: locals.iter().map(|l| id(l)).collect(),
            statements,
            span: Span::default(),
        },
        span: Span::default(),
    }))
}
fn method(params: Vec<Ident>, locals: Vec<Ident>, statements: Vec<Stmt>) -> MethodDef {
    MethodDef {
        selector: "test".into(),
        kind: if params.is_empty() {
            SelectorKind::Unary
        } else {
            SelectorKind::Keyword
        },
        params,
        pragmas: Vec::new(),
        body: MethodBody::Code(Body {
            locals,
            statements,
            span: Span::default(),
        }),
        span: Span::new(0, 10),
    }
}

fn compile(def: &MethodDef) -> Result<CompiledCode, Diagnostic> {
    let fields = vec!["f".to_string()];
    let code = compile_method(def, &fields, &SourceFile::new("t", "x".repeat(100)))?;
    if let Err(e) = verify(&code) {
        panic!("verify: {e}\n{}", disassemble(&code));
    }
    Ok(code)
}

fn error(def: &MethodDef) -> Diagnostic {
    match compile(def) {
        Ok(c) => panic!(
            "compiled:\n{}",
            disassemble(&c).chars().take(2000).collect::<String>()
        ),
        Err(d) => d,
    }
}

#[test]
fn assigning_pseudo_variables_is_an_error_at_the_name() {
    for name in ["self", "super", "nil", "true", "false"] {
        let def = method(
            vec![],
            vec![],
            vec![Stmt::Expr(Expr::Assign(id_at(name, 7), Box::new(int(1))))],
        );
        let d = error(&def);
        assert_eq!(
            d.message,
            format!("cannot assign to pseudo-variable '{name}'")
        );
        assert_eq!(d.span, span(7));
    }
}

#[test]
fn assigning_an_unknown_name_is_an_error() {
    let def = method(
        vec![],
        vec![],
        vec![Stmt::Expr(Expr::Assign(id_at("Foo", 3), Box::new(int(1))))],
    );
    let d = error(&def);
    assert_eq!(
        d.message,
        "cannot assign to 'Foo': no such variable or field"
    );
    assert_eq!(d.span, span(3));
}

#[test]
fn arguments_and_block_parameters_are_assignable() {
    let def = method(
        vec![id("a")],
        vec![],
        vec![
            Stmt::Expr(Expr::Assign(id("a"), Box::new(int(1)))),
            Stmt::Expr(block(
                &["b"],
                &[],
                vec![Stmt::Expr(Expr::Assign(id("b"), Box::new(int(2))))],
            )),
        ],
    );
    let code = compile(&def)
        .map_err(|d| d.message)
        .unwrap_or_else(|m| panic!("{m}"));
    assert_eq!(code.code[..2], [Op::PushInt(1), Op::PopLocal(0)]);
}

#[test]
fn reserved_and_duplicate_declarations_are_errors() {
    let d = error(&method(vec![], vec![id_at("self", 4)], vec![]));
    assert!(d.message.contains("reserved"), "{}", d.message);
    assert_eq!(d.span, span(4));
    let d = error(&method(vec![id("a")], vec![id_at("a", 5)], vec![]));
    assert_eq!(d.message, "variable 'a' is declared twice");
    assert_eq!(d.span, span(5));
    let d = error(&method(
        vec![],
        vec![],
        vec![Stmt::Expr(block(&["x", "x"], &[], vec![]))],
    ));
    assert!(d.message.contains("twice"));
    // Shadowing an outer name is fine.
    assert!(
        compile(&method(
            vec![id("x")],
            vec![],
            vec![Stmt::Expr(block(&["x"], &[], vec![]))]
        ))
        .is_ok()
    );
}

#[test]
fn literal_pseudo_constants_in_code() {
    let def = method(
        vec![],
        vec![],
        vec![Stmt::Return(
            send(
                Expr::Literal(Literal::True, Span::default()),
                "foo:bar:",
                vec![
                    Expr::Literal(Literal::False, Span::default()),
                    Expr::Literal(Literal::Nil, Span::default()),
                ],
            ),
            Span::default(),
        )],
    );
    let code = compile(&def)
        .map_err(|d| d.message)
        .unwrap_or_else(|m| panic!("{m}"));
    assert_eq!(code.code[..3], [Op::PushTrue, Op::PushFalse, Op::PushNil]);
}

#[test]
fn super_as_a_local_name_cannot_be_declared_so_super_always_means_super() {
    let d = error(&method(vec![id("super")], vec![], vec![]));
    assert!(d.message.contains("reserved"));
}

#[test]
fn literal_frame_limit() {
    let stmts = |n: i64| {
        (0..n)
            .map(|i| Stmt::Expr(send(var("self"), "foo:", vec![int(i + (1 << 40))])))
            .collect()
    };
    // 65535 integer literals plus the selector: 65536 entries, the maximum.
    let code = compile(&method(vec![], vec![], stmts(65535)))
        .map_err(|d| d.message)
        .unwrap_or_else(|m| panic!("{m}"));
    assert_eq!(code.literals.len(), 65536);
    let d = error(&method(vec![], vec![], stmts(65536)));
    assert!(d.message.contains("too many literals"), "{}", d.message);
}

#[test]
fn send_site_limit() {
    let stmts = |n: usize| {
        (0..n)
            .map(|_| Stmt::Expr(send(var("self"), "foo", vec![])))
            .collect()
    };
    assert_eq!(
        compile(&method(vec![], vec![], stmts(65535)))
            .map(|c| c.num_send_sites)
            .ok(),
        Some(65535)
    );
    assert!(
        error(&method(vec![], vec![], stmts(65536)))
            .message
            .contains("too many message sends")
    );
}

#[test]
fn argument_limits() {
    let params = |n: usize| (0..n).map(|i| id(&format!("a{i}"))).collect::<Vec<_>>();
    assert!(compile(&method(params(255), vec![], vec![])).is_ok());
    assert!(
        error(&method(params(256), vec![], vec![]))
            .message
            .contains("too many arguments")
    );
    let names: Vec<String> = (0..256).map(|i| format!("b{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let d = error(&method(
        vec![],
        vec![],
        vec![Stmt::Expr(block(&names, &[], vec![]))],
    ));
    assert!(d.message.contains("too many block parameters"));
}

#[test]
fn variable_limit() {
    let locals = |n: usize| (0..n).map(|i| id(&format!("t{i}"))).collect::<Vec<_>>();
    assert_eq!(
        compile(&method(vec![], locals(65535), vec![]))
            .map(|c| c.num_temps)
            .ok(),
        Some(65535)
    );
    assert!(
        error(&method(vec![], locals(65536), vec![]))
            .message
            .contains("too many variables")
    );
    assert!(
        error(&method(vec![id("a")], locals(65536), vec![]))
            .message
            .contains("too many variables")
    );
}

#[test]
fn field_limit() {
    let fields: Vec<String> = (0..70000).map(|i| format!("f{i}")).collect();
    let def = method(
        vec![],
        vec![],
        vec![Stmt::Return(var("f69999"), Span::default())],
    );
    let d = compile_method(&def, &fields, &SourceFile::new("t", ""))
        .err()
        .map(|d| d.message);
    assert!(d.is_some_and(|m| m.contains("65536 fields")));
    let def = method(
        vec![],
        vec![],
        vec![Stmt::Return(var("f65535"), Span::default())],
    );
    let code = compile_method(&def, &fields, &SourceFile::new("t", ""))
        .ok()
        .map(|c| c.code);
    assert_eq!(code, Some(vec![Op::PushField(65535), Op::ReturnTop]));
}

#[test]
fn env_depth_limit() {
    // Each block has a local read by the innermost block: one env per level.
    let refs = |levels: usize| {
        let reads = (0..levels)
            .map(|i| Stmt::Expr(send(var(&format!("v{i}")), "foo", vec![])))
            .collect();
        let mut e = block(&[], &[], reads);
        for i in (1..levels).rev() {
            e = block(&[], &[format!("v{i}").as_str()], vec![Stmt::Expr(e)]);
        }
        method(vec![], vec![id("v0")], vec![Stmt::Expr(e)])
    };
    assert!(compile(&refs(100)).is_ok());
    let d = error(&refs(300));
    assert!(d.message.contains("env depth"), "{}", d.message);
}

/// Methods nested as deeply as the parser allows compile even from a thread
/// with a small stack; deeper ones are rejected with a diagnostic.
#[test]
fn deep_nesting_never_overflows_the_stack() {
    /// Four shapes of methods about `levels` deep (the parser counts a level
    /// per send, assignment and block).
    fn shapes(levels: usize) -> Vec<MethodDef> {
        let mut args = var("x");
        let mut blocks = var("x");
        let mut ifs = var("x");
        let mut loops = var("x");
        for _ in 0..levels {
            args = send(var("x"), "foo:", vec![args]);
            blocks = block(&[], &["t"], vec![Stmt::Expr(blocks)]);
        }
        for _ in 0..levels / 2 {
            ifs = send(
                var("x"),
                "ifTrue:",
                vec![block(&[], &["t"], vec![Stmt::Expr(ifs)])],
            );
        }
        for _ in 0..levels / 3 {
            loops = send(
                int(1),
                "to:do:",
                vec![
                    var("x"),
                    block(
                        &["i"],
                        &[],
                        vec![Stmt::Return(
                            Expr::Assign(id("x"), Box::new(loops)),
                            Span::default(),
                        )],
                    ),
                ],
            );
        }
        [args, blocks, ifs, loops]
            .into_iter()
            .map(|e| method(vec![], vec![id("x")], vec![Stmt::Expr(e)]))
            .collect()
    }
    let result = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            for def in shapes(lupa_syntax::MAX_EXPR_DEPTH as usize) {
                let code = compile(&def)
                    .map_err(|d| d.message)
                    .unwrap_or_else(|m| panic!("{m}"));
                assert!(!disassemble(&code).is_empty());
                std::mem::forget(def); // dropping is the caller's (recursive) business
            }
            // Beyond what the parser accepts, and beyond what the compiler accepts
            // for each shape.
            let too_deep = 6 * lupa_syntax::MAX_EXPR_DEPTH.max(lupa_syntax::MAX_NESTING) as usize;
            for def in shapes(too_deep) {
                assert!(error(&def).message.contains("nested too deeply"));
                std::mem::forget(def);
            }
        })
        .map(|t| t.join());
    assert!(matches!(result, Ok(Ok(()))));
}
