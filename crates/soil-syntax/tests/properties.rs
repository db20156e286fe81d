//! Property tests: the front end never panics, and generated trees survive
//! print → parse → print unchanged.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use proptest::prelude::*;
use soil_syntax::ast::*;
use soil_syntax::{
    hash_form_item, parse_expr, parse_file, parse_predicate, parse_signature, parse_type,
    parse_type_decl, print_expr, print_file,
};
use trellis_diag::TextRange;

const SPAN: TextRange = TextRange { start: 0, end: 0 };

fn parse_everything(text: &str) {
    let _ = parse_file(text);
    let _ = parse_expr(text);
    let _ = parse_predicate(text);
    let _ = parse_type(text);
    let _ = parse_signature(text);
    let _ = parse_type_decl(text);
}

const TOKENS: &[&str] = &[
    "let",
    "in",
    "if",
    "then",
    "else",
    "match",
    "with",
    "end",
    "type",
    "and",
    "or",
    "not",
    "true",
    "false",
    "implies",
    "is",
    "x",
    "f",
    "_y",
    "Some",
    "Row",
    "m::g",
    "?h",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "::",
    ".",
    "..",
    "->",
    "->{Panic}",
    "\\",
    "|",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "++",
    "+",
    "-",
    "*",
    "/",
    "%",
    "0",
    "42u",
    "1.5",
    "1e400",
    "99999999999999999999",
    "\"s\"",
    "\"\\q\"",
    "\"open",
    "_",
    "?",
    "&",
    "\n",
    "-- c\n",
    "é",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        parse_everything(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soup_never_panics(picks in proptest::collection::vec(0..TOKENS.len(), 0..60)) {
        let text: Vec<&str> = picks.iter().map(|&i| TOKENS[i]).collect();
        parse_everything(&text.join(" "));
    }

    #[test]
    fn generated_files_round_trip(file in source_file()) {
        let printed = print_file(&file);
        let (reparsed, diagnostics) = parse_file(&printed);
        prop_assert!(diagnostics.is_empty(), "{:#?}\n{}", diagnostics, printed);
        prop_assert_eq!(reparsed.without_spans(), file.without_spans(), "{}", printed);
        prop_assert_eq!(print_file(&reparsed), printed);
        for (original, again) in file.items.iter().zip(&reparsed.items) {
            prop_assert_eq!(hash_form_item(original), hash_form_item(again));
        }
    }

    #[test]
    fn generated_predicates_round_trip(expr in expr(true)) {
        let printed = print_expr(&expr);
        let (reparsed, diagnostics) = parse_predicate(&printed);
        prop_assert!(diagnostics.is_empty(), "{:#?}\n{}", diagnostics, printed);
        let reparsed = reparsed.expect("a tree when there are no errors");
        prop_assert_eq!(reparsed.without_spans(), expr.without_spans(), "{}", printed);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let depth = 100_000;
    let cases = [
        format!("f = {}1{}", "(".repeat(depth), ")".repeat(depth)),
        format!("f = {}1{}", "[".repeat(depth), "]".repeat(depth)),
        format!("f = {}1", "let x = 1 in ".repeat(depth)),
        format!("f = {}1", "\\x -> ".repeat(depth)),
        format!("f = {}1", "not ".repeat(depth)),
        format!("f = {}1{}", "-(".repeat(depth), ")".repeat(depth)),
        format!("f = 1{}", " + 1".repeat(depth)),
        format!("f = 1{}", " ++ 1".repeat(depth)),
        format!("f = x{}", ".y".repeat(depth)),
        format!("f : {}I64{}", "(".repeat(depth), ")".repeat(depth)),
        format!("f : {}I64", "I64 -> ".repeat(depth)),
        format!(
            "f = match x with | {}_{} -> 1 end",
            "(".repeat(depth),
            ")".repeat(depth)
        ),
        format!(
            "f = match x with | {}_{} -> 1 end",
            "Some (".repeat(depth),
            ")".repeat(depth)
        ),
    ];
    for text in cases {
        let (_, diagnostics) = parse_file(&text);
        let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert!(
            codes.contains(&"nesting-too-deep"),
            "{}: {codes:?}",
            &text[..30]
        );
    }
}

// ---- generators: trees in the shapes the parser produces ----------------------

fn ident(text: &str) -> Ident {
    Ident {
        text: text.to_owned(),
        span: SPAN,
    }
}

fn lower() -> impl Strategy<Value = Ident> {
    prop::sample::select(vec!["x", "y", "acc", "go", "_helper", "xs", "result", "f1"])
        .prop_map(ident)
}

fn upper() -> impl Strategy<Value = Ident> {
    prop::sample::select(vec!["Some", "None", "Row", "Ok", "BadCell", "I64"]).prop_map(ident)
}

fn param() -> impl Strategy<Value = Param> {
    prop_oneof![4 => lower().prop_map(Param::Named), 1 => Just(Param::Wildcard(SPAN))]
}

fn literal(allow_float: bool) -> BoxedStrategy<Literal> {
    let mut options = vec![
        any::<i64>().prop_map(Literal::Int).boxed(),
        any::<u64>().prop_map(Literal::UInt).boxed(),
        any::<String>().prop_map(Literal::Str).boxed(),
        any::<bool>().prop_map(Literal::Bool).boxed(),
        Just(Literal::Unit).boxed(),
    ];
    if allow_float {
        options.push(
            any::<f64>()
                .prop_filter("finite", |v| v.is_finite())
                .prop_map(|v| Literal::Float(v.to_bits()))
                .boxed(),
        );
    }
    prop::strategy::Union::new(options).boxed()
}

fn unique_by_name<T: Clone>(items: Vec<(Ident, T)>) -> Vec<(Ident, T)> {
    let mut seen = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|(name, _)| seen.insert(name.text.clone()))
        .collect()
}

fn ty() -> BoxedStrategy<Type> {
    let leaf = prop_oneof![
        upper().prop_map(TypeKind::Named),
        lower().prop_map(TypeKind::Var),
        Just(TypeKind::Unit),
    ]
    .prop_map(|kind| Type { kind, span: SPAN });
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (upper(), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(head, args)| TypeKind::App { head, args }),
            prop::collection::vec(inner.clone(), 2..4).prop_map(TypeKind::Tuple),
            (
                prop::option::of(lower()),
                inner.clone(),
                prop::collection::vec(upper(), 0..2),
                prop::collection::vec(lower(), 0..2),
                inner,
            )
                .prop_map(|(param_name, param, labels, vars, result)| {
                    TypeKind::Function(Box::new(FunctionType {
                        param_name,
                        param,
                        effects: EffectRow {
                            labels,
                            vars,
                            span: SPAN,
                        },
                        result,
                    }))
                }),
        ]
        .prop_map(|kind| Type { kind, span: SPAN })
    })
    .boxed()
}

fn pattern() -> BoxedStrategy<Pattern> {
    let leaf = prop_oneof![
        Just(PatternKind::Wildcard),
        lower().prop_map(PatternKind::Var),
        literal(false).prop_map(PatternKind::Literal),
        upper().prop_map(|name| PatternKind::Constructor {
            name,
            payload: None
        }),
    ]
    .prop_map(|kind| Pattern { kind, span: SPAN });
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (upper(), inner.clone()).prop_map(|(name, p)| PatternKind::Constructor {
                name,
                payload: Some(Box::new(p))
            }),
            (
                upper(),
                prop::collection::vec((lower(), prop::option::of(inner.clone())), 0..3),
                any::<bool>()
            )
                .prop_map(|(name, fields, rest)| PatternKind::Record {
                    name,
                    fields: unique_by_name(fields)
                        .into_iter()
                        .map(|(name, pattern)| FieldPattern {
                            name,
                            pattern,
                            span: SPAN
                        })
                        .collect(),
                    rest,
                }),
            prop::collection::vec(inner.clone(), 2..4).prop_map(PatternKind::Tuple),
            (
                prop::collection::vec(inner, 0..3),
                prop::option::of(prop::option::of(lower()))
            )
                .prop_map(|(elements, rest)| PatternKind::List {
                    elements,
                    rest: rest.map(|binder| ListRest { binder, span: SPAN }),
                }),
        ]
        .prop_map(|kind| Pattern { kind, span: SPAN })
    })
    .boxed()
}

fn field_inits(inner: BoxedStrategy<Expr>, min: usize) -> impl Strategy<Value = Vec<FieldInit>> {
    prop::collection::vec((lower(), prop::option::of(inner)), min..3).prop_map(move |fields| {
        unique_by_name(fields)
            .into_iter()
            .map(|(name, value)| FieldInit {
                name,
                value,
                span: SPAN,
            })
            .collect()
    })
}

fn expr(predicate: bool) -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        literal(true).prop_map(ExprKind::Literal),
        lower().prop_map(ExprKind::Var),
        (lower(), lower()).prop_map(|(module, name)| ExprKind::Qualified { module, name }),
        upper().prop_map(ExprKind::Constructor),
        lower().prop_map(ExprKind::Hole),
    ]
    .prop_map(|kind| Expr { kind, span: SPAN });
    leaf.prop_recursive(4, 40, 4, move |inner| {
        let boxed = || inner.clone().prop_map(Box::new);
        let let_binder = prop_oneof![
            lower().prop_map(LetBinder::Var),
            (lower(), prop::collection::vec(param(), 1..3))
                .prop_map(|(name, params)| LetBinder::Function { name, params }),
            pattern()
                .prop_filter("a plain variable parses as LetBinder::Var", |p| {
                    !matches!(p.kind, PatternKind::Var(_))
                })
                .prop_map(LetBinder::Pattern),
        ];
        let arm = (pattern(), prop::option::of(inner.clone()), inner.clone()).prop_map(
            |(pattern, guard, body)| MatchArm {
                pattern,
                guard,
                body,
                span: SPAN,
            },
        );
        let binary_op = prop::sample::select(BinOp::ALL.to_vec());
        let mut options: Vec<BoxedStrategy<ExprKind>> = vec![
            (boxed(), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(func, args)| ExprKind::App { func, args })
                .boxed(),
            (prop::collection::vec(param(), 1..3), boxed())
                .prop_map(|(params, body)| ExprKind::Lambda { params, body })
                .boxed(),
            (let_binder, inner.clone(), inner.clone())
                .prop_map(|(binder, value, body)| {
                    ExprKind::Let(Box::new(LetExpr {
                        binder,
                        value,
                        body,
                    }))
                })
                .boxed(),
            (boxed(), boxed(), boxed())
                .prop_map(|(cond, then_branch, else_branch)| ExprKind::If {
                    cond,
                    then_branch,
                    else_branch,
                })
                .boxed(),
            (boxed(), prop::collection::vec(arm, 1..3))
                .prop_map(|(scrutinee, arms)| ExprKind::Match { scrutinee, arms })
                .boxed(),
            (binary_op, boxed(), boxed())
                .prop_map(|(op, lhs, rhs)| ExprKind::Binary { op, lhs, rhs })
                .boxed(),
            (
                prop::sample::select(vec![UnaryOp::Not, UnaryOp::Neg]),
                boxed(),
            )
                .prop_map(|(op, operand)| ExprKind::Unary { op, operand })
                .boxed(),
            (upper(), field_inits(inner.clone(), 0))
                .prop_map(|(name, fields)| ExprKind::Record { name, fields })
                .boxed(),
            (boxed(), field_inits(inner.clone(), 1))
                .prop_map(|(record, fields)| ExprKind::Update { record, fields })
                .boxed(),
            (boxed(), lower())
                .prop_map(|(record, field)| ExprKind::Field { record, field })
                .boxed(),
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(ExprKind::List)
                .boxed(),
            prop::collection::vec(inner.clone(), 2..4)
                .prop_map(ExprKind::Tuple)
                .boxed(),
            (boxed(), ty())
                .prop_map(|(expr, ty)| ExprKind::Annot { expr, ty })
                .boxed(),
        ];
        if predicate {
            options.push(
                (boxed(), boxed())
                    .prop_map(|(lhs, rhs)| ExprKind::Implies { lhs, rhs })
                    .boxed(),
            );
            options.push(
                (boxed(), pattern().prop_map(Box::new))
                    .prop_map(|(expr, pattern)| ExprKind::Is { expr, pattern })
                    .boxed(),
            );
        }
        prop::strategy::Union::new(options).prop_map(|kind| Expr { kind, span: SPAN })
    })
    .boxed()
}

fn type_decl() -> impl Strategy<Value = TypeDecl> {
    let fields = || {
        prop::collection::vec((lower(), ty()), 0..3).prop_map(|fields| {
            unique_by_name(fields)
                .into_iter()
                .map(|(name, ty)| FieldDecl {
                    name,
                    ty,
                    span: SPAN,
                })
                .collect::<Vec<_>>()
        })
    };
    let payload = prop_oneof![
        Just(VariantPayload::None),
        ty().prop_map(VariantPayload::Positional),
        fields().prop_map(VariantPayload::Record),
    ];
    let body = prop_oneof![
        fields().prop_map(TypeDeclBody::Record),
        prop::collection::vec((upper(), payload), 1..4).prop_map(|variants| {
            TypeDeclBody::Sum(
                unique_by_name(variants)
                    .into_iter()
                    .map(|(name, payload)| Variant {
                        name,
                        payload,
                        span: SPAN,
                    })
                    .collect(),
            )
        }),
        Just(TypeDeclBody::Opaque),
    ];
    (upper(), prop::collection::vec(lower(), 0..3), body).prop_map(|(name, params, body)| {
        TypeDecl {
            name,
            params,
            body,
            span: SPAN,
        }
    })
}

fn source_file() -> impl Strategy<Value = SourceFile> {
    let item = prop_oneof![
        type_decl().prop_map(Item::TypeDecl),
        (lower(), ty()).prop_map(|(name, ty)| Item::Signature(Signature {
            name,
            ty,
            span: SPAN
        })),
        (lower(), prop::collection::vec(param(), 0..3), expr(false)).prop_map(
            |(name, params, body)| Item::Equation(
                Equation {
                    name,
                    params,
                    body,
                    span: SPAN
                }
                .into()
            )
        ),
    ];
    prop::collection::vec(item, 0..4).prop_map(|items| SourceFile { items, span: SPAN })
}
