//! Pre-flight checks (design §4.5), run over decoded expect cases before any
//! lowering is attempted: the contradiction check and the vacuity probes. Each is
//! a pure function returning diagnostics; none evaluates Soil itself (the
//! requires probe takes the caller's evaluator).

use std::collections::BTreeMap;

use soil_rt::{RtType, TypeBody, TypeEnv, Value};
use soil_syntax::ast::{BinOp, Expr, ExprKind, Ident, Literal, PatternKind, Spanned, UnaryOp};
use soil_syntax::visit::{Binder, Scope, Visitor};
use trellis_diag::{Diagnostic, Span, TextRange};

use crate::codes::Code;

/// One expect case, decoded against its definition's signature.
#[derive(Clone, Debug)]
pub struct ExpectCase {
    pub definition: String,
    /// The lock row name, `block#k`.
    pub row: String,
    /// The case's place in the `.tr` file.
    pub span: Option<Span>,
    /// The non-capability arguments, in order.
    pub args: Vec<Value>,
    /// The fakes in scope, by parameter, as canonical JSON (part of the input).
    pub fakes: Vec<(String, String)>,
    pub expected: Expected,
}

#[derive(Clone, Debug)]
pub enum Expected {
    Value(Value),
    Panic,
}

impl ExpectCase {
    /// Decodes a parsed `test` case against the definition's non-capability
    /// parameter types and result type. Fakes are kept as compact JSON (their
    /// shape is the soil0 fake state, not a Soil type).
    pub fn decode(
        definition: &str,
        row: &str,
        case: &trellis_spec::TestCase,
        params: &[RtType],
        result: &RtType,
        env: &TypeEnv,
        span: Option<Span>,
    ) -> Result<ExpectCase, Box<Diagnostic>> {
        let args_text = format!(
            "[{}]",
            case.args
                .iter()
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>()
                .join(",")
        );
        let args = soil_rt::decode_args(&args_text, params, env).map_err(Box::new)?;
        let expected = match &case.expected {
            trellis_spec::Expected::Value(json) => {
                Expected::Value(soil_rt::decode(&json.text, result, env).map_err(Box::new)?)
            }
            trellis_spec::Expected::Panic(_) => Expected::Panic,
        };
        Ok(ExpectCase {
            definition: definition.to_owned(),
            row: row.to_owned(),
            span,
            args,
            fakes: case
                .fakes
                .iter()
                .map(|(param, json)| (param.clone(), json.value.to_string()))
                .collect(),
            expected,
        })
    }
}

/// A labelled clause with its place in the file.
#[derive(Clone, Debug)]
pub struct LabelledClause<'a> {
    pub label: String,
    pub span: Option<Span>,
    pub predicate: &'a Expr,
}

/// `preflight-contradiction`: two cases of one definition with the same canonical
/// input (arguments and fakes) but different expected outcomes.
pub fn contradictions(cases: &[ExpectCase], env: &TypeEnv) -> Vec<Diagnostic> {
    let mut first_by_input: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let key = (case.definition.clone(), input_key(case, env));
        let Some(&earlier) = first_by_input.get(&key) else {
            first_by_input.insert(key, index);
            continue;
        };
        let first = &cases[earlier];
        let (a, b) = (
            expected_text(&first.expected, env),
            expected_text(&case.expected, env),
        );
        if a == b {
            continue;
        }
        let mut diagnostic = Code::PreflightContradiction.diagnostic(format!(
            "{} ({}) and {} ({}) call {} with the same input {} but expect {a} and {b}",
            first.row,
            line_of(first),
            case.row,
            line_of(case),
            case.definition,
            key.1,
        ));
        if let Some(span) = case.span {
            diagnostic = diagnostic.with_span(span);
        }
        diagnostic = match first.span {
            Some(span) => diagnostic.with_note_at(format!("{} expects {a}", first.row), span),
            None => diagnostic.with_note(format!("{} expects {a}", first.row)),
        };
        out.push(diagnostic);
    }
    out
}

fn input_key(case: &ExpectCase, env: &TypeEnv) -> String {
    let args: Vec<String> = case.args.iter().map(|v| soil_rt::encode(v, env)).collect();
    let mut key = format!("[{}]", args.join(","));
    for (param, fake) in &case.fakes {
        key.push_str(&format!(" with {param} = {fake}"));
    }
    key
}

fn expected_text(expected: &Expected, env: &TypeEnv) -> String {
    match expected {
        Expected::Value(value) => soil_rt::encode(value, env),
        Expected::Panic => "panic".to_owned(),
    }
}

fn line_of(case: &ExpectCase) -> String {
    case.span.map_or_else(
        || "line ?".to_owned(),
        |span| format!("line {}", span.start.line),
    )
}

/// `preflight-vacuous-requires`: a requires clause that no expect case's input
/// satisfies. `holds(label, args)` evaluates the clause on one input (`None`
/// when evaluation failed, which does not count as satisfying it).
pub fn vacuous_requires(
    definition: &str,
    clauses: &[LabelledClause<'_>],
    cases: &[ExpectCase],
    mut holds: impl FnMut(&str, &[Value]) -> Option<bool>,
) -> Vec<Diagnostic> {
    let inputs: Vec<&ExpectCase> = cases
        .iter()
        .filter(|c| c.definition == definition)
        .collect();
    if inputs.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for clause in clauses {
        let satisfied = inputs
            .iter()
            .any(|case| holds(&clause.label, &case.args) == Some(true));
        if !satisfied {
            let diagnostic = Code::PreflightVacuousRequires.diagnostic(format!(
                "requires `{}` of {definition} holds for none of its {} expect case inputs: the tests never exercise the definition's domain",
                clause.label,
                inputs.len()
            ));
            out.push(with_optional_span(diagnostic, clause.span));
        }
    }
    out
}

/// `preflight-trivial-ensures`: an ensures clause that holds whatever the result.
pub fn trivial_ensures(clauses: &[LabelledClause<'_>]) -> Vec<Diagnostic> {
    clauses
        .iter()
        .filter_map(|clause| {
            let why = if is_trivially_true(clause.predicate) {
                "is true whatever the result"
            } else if !mentions_result(clause.predicate) {
                "never mentions `result`, so it constrains nothing the definition computes"
            } else {
                return None;
            };
            let diagnostic = Code::PreflightTrivialEnsures
                .diagnostic(format!("ensures `{}` {why}", clause.label));
            Some(with_optional_span(diagnostic, clause.span))
        })
        .collect()
}

/// Syntactically true: `true`, `e == e` (and `<=`, `>=`), `not false`, an
/// `implies` with a true conclusion or a false premise, an `or` with a true side,
/// an `and` of two true sides, `e is _`, and `if`/`let` whose branches are true.
pub fn is_trivially_true(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Literal(Literal::Bool(b)) => *b,
        ExprKind::Binary { op, lhs, rhs } => match op {
            BinOp::Eq | BinOp::Le | BinOp::Ge => lhs.without_spans() == rhs.without_spans(),
            BinOp::Or => is_trivially_true(lhs) || is_trivially_true(rhs),
            BinOp::And => is_trivially_true(lhs) && is_trivially_true(rhs),
            _ => false,
        },
        ExprKind::Unary {
            op: UnaryOp::Not,
            operand,
        } => is_trivially_false(operand),
        ExprKind::Implies { lhs, rhs } => is_trivially_true(rhs) || is_trivially_false(lhs),
        ExprKind::Is { pattern, .. } => {
            matches!(pattern.kind, PatternKind::Wildcard | PatternKind::Var(_))
        }
        ExprKind::If {
            then_branch,
            else_branch,
            ..
        } => is_trivially_true(then_branch) && is_trivially_true(else_branch),
        ExprKind::Let(let_expr) => is_trivially_true(&let_expr.body),
        ExprKind::Annot { expr, .. } => is_trivially_true(expr),
        _ => false,
    }
}

fn is_trivially_false(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Literal(Literal::Bool(b)) => !*b,
        ExprKind::Binary { op, lhs, rhs } => match op {
            BinOp::Ne | BinOp::Lt | BinOp::Gt => lhs.without_spans() == rhs.without_spans(),
            BinOp::And => is_trivially_false(lhs) || is_trivially_false(rhs),
            BinOp::Or => is_trivially_false(lhs) && is_trivially_false(rhs),
            _ => false,
        },
        ExprKind::Unary {
            op: UnaryOp::Not,
            operand,
        } => is_trivially_true(operand),
        ExprKind::Annot { expr, .. } => is_trivially_false(expr),
        _ => false,
    }
}

/// Whether `result` occurs free: a binder of that name (`let result = ...`, a
/// lambda parameter, a pattern variable) hides the definition's result beneath it,
/// and a punned field `Row { result }` reads it.
fn mentions_result(expr: &Expr) -> bool {
    struct ReadsResult(bool);
    impl Visitor for ReadsResult {
        type Binding = ();
        fn bind(&mut self, _: &Ident, _: Binder<'_>, _: &Scope<()>) {}
        fn reference(&mut self, name: &Ident, _: TextRange, binding: Option<&()>) {
            self.0 |= binding.is_none() && name.text == "result";
        }
    }
    let mut reads = ReadsResult(false);
    reads.visit_expr(expr, &mut Scope::new());
    reads.0
}

/// `preflight-unexercised-variant`: the result type is a sum and no expect case
/// of the definition expects some variant (say, never an `Err`).
pub fn unexercised_variants(
    definition: &str,
    result_type: &RtType,
    env: &TypeEnv,
    cases: &[ExpectCase],
) -> Vec<Diagnostic> {
    let RtType::Named(id, _) = result_type else {
        return Vec::new();
    };
    let Some(TypeBody::Sum(variants)) = env.decl(*id).map(|d| &d.body) else {
        return Vec::new();
    };
    let expected: Vec<&Value> = cases
        .iter()
        .filter(|c| c.definition == definition)
        .filter_map(|c| match &c.expected {
            Expected::Value(value) => Some(value),
            Expected::Panic => None,
        })
        .collect();
    if expected.is_empty() {
        return Vec::new();
    }
    let missing: Vec<&str> = variants
        .iter()
        .enumerate()
        .filter(|(tag, _)| {
            !expected
                .iter()
                .any(|v| matches!(v, Value::Variant { tag: t, .. } if *t as usize == *tag))
        })
        .map(|(_, v)| v.name.as_str())
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    vec![Code::PreflightUnexercisedVariant.diagnostic(format!(
        "no expect case of {definition} expects {} of its result type {}",
        missing.join(", "),
        env.display(result_type)
    ))]
}

fn with_optional_span(diagnostic: Diagnostic, span: Option<Span>) -> Diagnostic {
    match span {
        Some(span) => diagnostic.with_span(span),
        None => diagnostic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use soil_rt::prelude;
    use trellis_diag::Position;

    fn at_line(line: u32) -> Option<Span> {
        let position = Position {
            line,
            column: 1,
            offset: 0,
        };
        Some(Span {
            start: position,
            end: position,
        })
    }

    fn case(row: &str, line: u32, args: Vec<Value>, expected: Expected) -> ExpectCase {
        ExpectCase {
            definition: "m/f".into(),
            row: row.into(),
            span: at_line(line),
            args,
            fakes: Vec::new(),
            expected,
        }
    }

    fn ok(v: Value) -> Expected {
        Expected::Value(Value::variant(prelude::RESULT, prelude::OK, Some(v)))
    }

    fn predicate(text: &str) -> Expr {
        let (expr, diagnostics) = soil_syntax::parse_predicate(text);
        assert!(diagnostics.is_empty(), "{text}: {diagnostics:?}");
        expr.expect("parses")
    }

    fn clause<'a>(label: &str, predicate: &'a Expr) -> LabelledClause<'a> {
        LabelledClause {
            label: label.into(),
            span: at_line(3),
            predicate,
        }
    }

    #[test]
    fn parsed_test_cases_decode_into_expect_cases() {
        let json = |text: &str| trellis_spec::JsonText {
            text: text.into(),
            value: serde_json::from_str(text).expect("json"),
            range: trellis_diag::TextRange::empty(0),
        };
        let parsed = trellis_spec::TestCase {
            callee: "f".into(),
            args: vec![json("[1, 2]"), json("\"x\"")],
            expected: trellis_spec::Expected::Value(json("{\"tag\":\"Some\", \"value\": 2.0}")),
            fakes: vec![("fs".into(), json("{\"files\": {}}"))],
            range: trellis_diag::TextRange::empty(0),
        };
        let env = TypeEnv::new();
        let params = [RtType::List(Box::new(RtType::I64)), RtType::Utf8];
        let result = RtType::Named(prelude::OPTION, vec![RtType::F64]);
        let case = ExpectCase::decode("m/f", "t#1", &parsed, &params, &result, &env, at_line(4))
            .expect("decodes");
        assert_eq!(
            input_key(&case, &env),
            r#"[[1,2],"x"] with fs = {"files":{}}"#
        );
        assert_eq!(
            expected_text(&case.expected, &env),
            r#"{"tag":"Some","value":2.0}"#
        );
        let bad = ExpectCase::decode(
            "m/f",
            "t#1",
            &parsed,
            &[RtType::I64, RtType::Utf8],
            &result,
            &env,
            None,
        )
        .expect_err("a list is not an I64");
        assert_eq!(bad.code, "json-type-mismatch");
    }

    #[test]
    fn a_contradictory_pair_is_named_with_both_lines() {
        let env = TypeEnv::new();
        let cases = [
            case(
                "basics#1",
                10,
                vec![Value::I64(1)],
                Expected::Value(Value::F64(2.0)),
            ),
            case(
                "basics#2",
                11,
                vec![Value::I64(2)],
                Expected::Value(Value::F64(2.0)),
            ),
            case(
                "edge#1",
                20,
                vec![Value::I64(1)],
                Expected::Value(Value::F64(3.0)),
            ),
            case("edge#2", 21, vec![Value::I64(2)], Expected::Panic),
        ];
        let found = contradictions(&cases, &env);
        let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        expect_test::expect![[r#"
            [
                "basics#1 (line 10) and edge#1 (line 20) call m/f with the same input [1] but expect 2.0 and 3.0",
                "basics#2 (line 11) and edge#2 (line 21) call m/f with the same input [2] but expect 2.0 and panic",
            ]
        "#]]
        .assert_debug_eq(&messages);
        assert!(found.iter().all(|d| d.code == "preflight-contradiction"));
        assert_eq!(found[0].span.map(|s| s.start.line), Some(20));
        assert_eq!(found[0].notes[0].span.map(|s| s.start.line), Some(10));
    }

    #[test]
    fn consistent_cases_and_different_fakes_do_not_contradict() {
        let env = TypeEnv::new();
        let mut with_file = case("fs#1", 5, vec![Value::str("a.txt")], ok(Value::str("x")));
        with_file.fakes = vec![("fs".into(), r#"{"files":{"a.txt":"x"}}"#.into())];
        let mut without = case("fs#2", 6, vec![Value::str("a.txt")], ok(Value::str("y")));
        without.fakes = vec![("fs".into(), r#"{"files":{"a.txt":"y"}}"#.into())];
        let same = case("fs#3", 7, vec![Value::str("a.txt")], ok(Value::str("x")));
        let mut same_fake = same.clone();
        same_fake.fakes = with_file.fakes.clone();
        assert!(contradictions(&[with_file, without, same_fake], &env).is_empty());
    }

    #[test]
    fn a_requires_no_input_satisfies_fires() {
        let non_empty = predicate("len xs > 0");
        let positive = predicate("all (\\x -> x > 0) xs");
        let clauses = [
            clause("non_empty", &non_empty),
            clause("positive", &positive),
        ];
        let cases = [
            case(
                "t#1",
                1,
                vec![Value::list(vec![Value::I64(-1)])],
                Expected::Panic,
            ),
            case(
                "t#2",
                2,
                vec![Value::list(vec![Value::I64(0), Value::I64(3)])],
                Expected::Panic,
            ),
        ];
        // Stands in for the interpreter: evaluates the two clauses directly.
        let holds = |label: &str, args: &[Value]| {
            let Value::List(xs) = &args[0] else {
                return None;
            };
            Some(match label {
                "non_empty" => !xs.is_empty(),
                _ => xs.iter().all(|x| matches!(x, Value::I64(n) if *n > 0)),
            })
        };
        let found = vacuous_requires("m/f", &clauses, &cases, holds);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "preflight-vacuous-requires");
        assert!(
            found[0].message.contains("`positive`"),
            "{}",
            found[0].message
        );
        // With one satisfying input nothing fires.
        let more = [
            cases[0].clone(),
            case(
                "t#3",
                3,
                vec![Value::list(vec![Value::I64(5)])],
                Expected::Panic,
            ),
        ];
        assert!(vacuous_requires("m/f", &clauses, &more, holds).is_empty());
    }

    /// What `trivial_ensures` says of ensures clauses with these texts, each its
    /// own label.
    fn trivial_ensures_of(texts: &[&str]) -> Vec<Diagnostic> {
        let trees: Vec<Expr> = texts.iter().map(|text| predicate(text)).collect();
        let clauses: Vec<LabelledClause<'_>> = texts
            .iter()
            .zip(&trees)
            .map(|(text, tree)| clause(text, tree))
            .collect();
        trivial_ensures(&clauses)
    }

    #[test]
    fn trivial_ensures_fire_and_real_ones_do_not() {
        let trivial = [
            "true",
            "result == result",
            "len xs > 0 implies true",
            "result >= 0 or true",
            "false implies result == 0",
            "result is _",
            "not (result != result)",
            "len xs >= 0",
        ];
        let real = [
            "result >= 0",
            "result == len xs",
            "len xs > 0 implies result >= minimum xs",
            "result is Ok _",
        ];
        let texts: Vec<&str> = trivial.iter().chain(real.iter()).copied().collect();
        let found = trivial_ensures_of(&texts);
        let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        expect_test::expect![[r#"
            [
                "ensures `true` is true whatever the result",
                "ensures `result == result` is true whatever the result",
                "ensures `len xs > 0 implies true` is true whatever the result",
                "ensures `result >= 0 or true` is true whatever the result",
                "ensures `false implies result == 0` is true whatever the result",
                "ensures `result is _` is true whatever the result",
                "ensures `not (result != result)` is true whatever the result",
                "ensures `len xs >= 0` never mentions `result`, so it constrains nothing the definition computes",
            ]
        "#]]
        .assert_debug_eq(&messages);
        assert!(found.iter().all(|d| d.code == "preflight-trivial-ensures"));
    }

    /// The earlier walk matched the name `result` anywhere: it took a rebinding for a
    /// mention and missed a pun. It reads through the scope now.
    #[test]
    fn result_is_mentioned_only_where_it_is_free() {
        let texts = [
            "let result = len xs in result >= 0",
            "all (\\result -> result > 0) xs",
            "match xs with | [result] -> result > 0 | _ -> len xs >= 0 end",
            "let r = Row { result } in r.result >= 0",
            "let n = len xs in result >= n",
        ];
        let found = trivial_ensures_of(&texts);
        let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        expect_test::expect![[r#"
            [
                "ensures `let result = len xs in result >= 0` never mentions `result`, so it constrains nothing the definition computes",
                "ensures `all (\\result -> result > 0) xs` never mentions `result`, so it constrains nothing the definition computes",
                "ensures `match xs with | [result] -> result > 0 | _ -> len xs >= 0 end` never mentions `result`, so it constrains nothing the definition computes",
            ]
        "#]].assert_debug_eq(&messages);
    }

    #[test]
    fn an_unexercised_result_variant_fires() {
        let env = TypeEnv::new();
        let result_type = RtType::Named(prelude::RESULT, vec![RtType::I64, RtType::Utf8]);
        let only_ok = [
            case("t#1", 1, vec![Value::str("1")], ok(Value::I64(1))),
            case("t#2", 2, vec![Value::str("x")], Expected::Panic),
        ];
        let found = unexercised_variants("m/f", &result_type, &env, &only_ok);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "preflight-unexercised-variant");
        expect_test::expect![
            "no expect case of m/f expects Err of its result type Result I64 Utf8"
        ]
        .assert_eq(&found[0].message);
        let err = Value::variant(prelude::RESULT, prelude::ERR, Some(Value::str("bad")));
        let both = [
            only_ok[0].clone(),
            case("t#3", 3, vec![Value::str("x")], Expected::Value(err)),
        ];
        assert!(unexercised_variants("m/f", &result_type, &env, &both).is_empty());
        // A non-sum result type never fires.
        assert!(unexercised_variants("m/f", &RtType::I64, &env, &only_ok).is_empty());
    }
}
