//! The scope-aware walk (`soil_syntax::visit`): a tracing visitor prints every
//! binder as it enters scope and every name read with the binder it resolves to,
//! so each golden shows the scoping rules of spec §5.7–§5.9 and §6 at work:
//! shadowing, local functions, pattern variables and their paths, nested lambdas,
//! puns, `is`, and names that are free.

use expect_test::{Expect, expect};
use soil_syntax::ast::{ExprKind, Ident, Item, Pattern, PatternKind};
use soil_syntax::visit::{
    Binder, Function, Matched, PatternStep, Scope, Visitor, walk_equation, walk_expr,
};
use soil_syntax::{parse_item, parse_predicate, print_expr};
use trellis_diag::TextRange;

/// Labels binders `name#n` in the order they enter scope and writes one line per
/// event; `visit_pattern` and `visit_function_body` lines show where the walk
/// calls those hooks.
#[derive(Default)]
struct Trace {
    next: usize,
    lines: Vec<String>,
}

impl Visitor for Trace {
    type Binding = String;

    fn bind(&mut self, name: &Ident, binder: Binder<'_>, scope: &Scope<String>) -> String {
        let label = format!("{}#{}", name.text, self.next);
        self.next += 1;
        let shadows = match scope.lookup(&name.text) {
            Some(hidden) => format!(", shadows {hidden}"),
            None => String::new(),
        };
        self.lines
            .push(format!("bind {label}: {}{shadows}", describe(binder)));
        label
    }

    fn reference(&mut self, name: &Ident, at: TextRange, binding: Option<&String>) {
        let resolved = binding.map_or("free".to_owned(), |label| format!("-> {label}"));
        self.lines.push(format!(
            "read {} at {}..{} {resolved}",
            name.text, at.start, at.end
        ));
    }

    fn visit_function_body(
        &mut self,
        function: Function,
        body: &soil_syntax::ast::Expr,
        scope: &mut Scope<String>,
    ) {
        self.lines.push(format!("{function:?} body"));
        self.visit_expr(body, scope);
        self.lines.push(format!("{function:?} body ends"));
    }

    fn visit_pattern(&mut self, pattern: &Pattern) {
        if let PatternKind::Constructor { name, .. } | PatternKind::Record { name, .. } =
            &pattern.kind
        {
            self.lines.push(format!("pattern {}", name.text));
        }
    }
}

fn describe(binder: Binder<'_>) -> String {
    match binder {
        Binder::Param { function, index } => format!("{function:?} param {index}"),
        Binder::Let { value } => format!("let, value `{}`", print_expr(value)),
        Binder::LocalFunctionSelf { arity } => format!("local function/{arity} in its own body"),
        Binder::LocalFunction { arity } => format!("local function/{arity} in the let body"),
        Binder::Pattern { matched, path } => {
            let source = match matched {
                Matched::Scrutinee(_) => "scrutinee",
                Matched::LetValue(_) => "let value",
                Matched::IsOperand(_) => "is operand",
            };
            let steps: Vec<String> = path.iter().map(step).collect();
            format!(
                "pattern variable of {source} `{}` at [{}]",
                print_expr(matched.expr()),
                steps.join(", ")
            )
        }
    }
}

fn step(step: &PatternStep) -> String {
    match step {
        PatternStep::TupleElement { index, len } => format!("tuple {index}/{len}"),
        PatternStep::Payload => "payload".to_owned(),
        PatternStep::Field { index } => format!("field {index}"),
        PatternStep::ListElement { index } => format!("element {index}"),
        PatternStep::ListRest { elements } => format!("rest after {elements}"),
    }
}

#[track_caller]
fn check_equation(source: &str, expect: Expect) {
    let (item, diagnostics) = parse_item(source);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let Some(Item::Equation(equation)) = item else {
        panic!("not an equation: {source}");
    };
    let mut trace = Trace::default();
    walk_equation(&mut trace, &equation, &mut Scope::new());
    expect.assert_eq(&(trace.lines.join("\n") + "\n"));
}

/// A predicate walked with `bound` already in scope, as the free-reference walk
/// binds `result` and the parameters.
#[track_caller]
fn check_predicate(source: &str, bound: &[&str], expect: Expect) {
    let (predicate, diagnostics) = parse_predicate(source);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let mut trace = Trace::default();
    let mut scope = Scope::new();
    for name in bound {
        scope.bind(*name, format!("{name}(outer)"));
    }
    trace.visit_expr(&predicate.expect("parses"), &mut scope);
    expect.assert_eq(&(trace.lines.join("\n") + "\n"));
}

#[test]
fn a_let_binder_is_out_of_scope_in_its_value_and_shadows_in_its_body() {
    check_equation(
        "f x = let x = x + 1 in let y = x in \\x -> x + y",
        expect![[r#"
            bind x#0: Equation param 0
            Equation body
            read x at 14..15 -> x#0
            bind x#1: let, value `x + 1`, shadows x#0
            read x at 31..32 -> x#1
            bind y#2: let, value `x`
            bind x#3: Lambda param 0, shadows x#1
            Lambda body
            read x at 42..43 -> x#3
            read y at 46..47 -> y#2
            Lambda body ends
            Equation body ends
        "#]],
    );
}

#[test]
fn a_later_parameter_shadows_an_earlier_one_and_wildcards_bind_nothing() {
    check_equation(
        "f a _ a = a",
        expect![[r#"
            bind a#0: Equation param 0
            bind a#1: Equation param 2, shadows a#0
            Equation body
            read a at 10..11 -> a#1
            Equation body ends
        "#]],
    );
}

#[test]
fn nested_lambdas_see_every_enclosing_parameter_and_nothing_leaks_out() {
    check_equation(
        "f g = (\\x -> \\y -> g x y z) (\\z -> x z)",
        expect![[r#"
            bind g#0: Equation param 0
            Equation body
            bind x#1: Lambda param 0
            Lambda body
            bind y#2: Lambda param 0
            Lambda body
            read g at 19..20 -> g#0
            read x at 21..22 -> x#1
            read y at 23..24 -> y#2
            read z at 25..26 free
            Lambda body ends
            Lambda body ends
            bind z#3: Lambda param 0
            Lambda body
            read x at 35..36 free
            read z at 37..38 -> z#3
            Lambda body ends
            Equation body ends
        "#]],
    );
}

#[test]
fn a_local_function_is_in_scope_in_its_own_body_and_in_the_let_body() {
    check_equation(
        "f n = let go acc k = if k == 0 then acc else go (acc * k) (k - 1) in go 1 n",
        expect![[r#"
            bind n#0: Equation param 0
            Equation body
            bind go#1: local function/2 in its own body
            bind acc#2: Local param 0
            bind k#3: Local param 1
            Local body
            read k at 24..25 -> k#3
            read acc at 36..39 -> acc#2
            read go at 45..47 -> go#1
            read acc at 49..52 -> acc#2
            read k at 55..56 -> k#3
            read k at 59..60 -> k#3
            Local body ends
            bind go#4: local function/2 in the let body
            read go at 69..71 -> go#4
            read n at 74..75 -> n#0
            Equation body ends
        "#]],
    );
}

#[test]
fn a_local_functions_parameter_shadows_its_name() {
    check_equation(
        "f = let go go = go in go",
        expect![[r#"
            Equation body
            bind go#0: local function/1 in its own body
            bind go#1: Local param 0, shadows go#0
            Local body
            read go at 16..18 -> go#1
            Local body ends
            bind go#2: local function/1 in the let body
            read go at 22..24 -> go#2
            Equation body ends
        "#]],
    );
}

#[test]
fn arm_variables_scope_over_guard_and_body_only_with_their_paths() {
    check_equation(
        "f xs = match xs with | [Some (a, b), ..rest] if a > b -> len rest | Row { line, cells = [c] } -> line + c | _ -> a end",
        expect![[r#"
            bind xs#0: Equation param 0
            Equation body
            read xs at 13..15 -> xs#0
            pattern Some
            bind a#1: pattern variable of scrutinee `xs` at [element 0, payload, tuple 0/2]
            bind b#2: pattern variable of scrutinee `xs` at [element 0, payload, tuple 1/2]
            bind rest#3: pattern variable of scrutinee `xs` at [rest after 1]
            read a at 48..49 -> a#1
            read b at 52..53 -> b#2
            read len at 57..60 free
            read rest at 61..65 -> rest#3
            pattern Row
            bind line#4: pattern variable of scrutinee `xs` at [field 0]
            bind c#5: pattern variable of scrutinee `xs` at [field 1, element 0]
            read line at 97..101 -> line#4
            read c at 104..105 -> c#5
            read a at 113..114 free
            Equation body ends
        "#]],
    );
}

#[test]
fn pattern_variables_are_bound_together_against_the_outer_scope() {
    // Each bind hook sees the scope the pattern is matched in: `ys` shadows the
    // parameter `ys`, and the second `x` does not see the first.
    check_equation(
        "f xs ys = match (xs, ys) with | (ys, xs) -> xs | (x, x) -> x end",
        expect![[r#"
            bind xs#0: Equation param 0
            bind ys#1: Equation param 1
            Equation body
            read xs at 17..19 -> xs#0
            read ys at 21..23 -> ys#1
            bind ys#2: pattern variable of scrutinee `(xs, ys)` at [tuple 0/2], shadows ys#1
            bind xs#3: pattern variable of scrutinee `(xs, ys)` at [tuple 1/2], shadows xs#0
            read xs at 44..46 -> xs#3
            bind x#4: pattern variable of scrutinee `(xs, ys)` at [tuple 0/2]
            bind x#5: pattern variable of scrutinee `(xs, ys)` at [tuple 1/2]
            read x at 59..60 -> x#5
            Equation body ends
        "#]],
    );
}

#[test]
fn a_let_pattern_binds_after_its_value() {
    check_equation(
        "f p = let (a, b) = (a, p) in a b",
        expect![[r#"
            bind p#0: Equation param 0
            Equation body
            read a at 20..21 free
            read p at 23..24 -> p#0
            bind a#1: pattern variable of let value `(a, p)` at [tuple 0/2]
            bind b#2: pattern variable of let value `(a, p)` at [tuple 1/2]
            read a at 29..30 -> a#1
            read b at 31..32 -> b#2
            Equation body ends
        "#]],
    );
}

#[test]
fn puns_read_their_name_and_a_punned_field_pattern_binds_it() {
    check_equation(
        "f line r = (Row { line, cells = line }, { r with line }, match r with | Row { line = l, cells } -> (l, cells, line) end)",
        expect![[r#"
            bind line#0: Equation param 0
            bind r#1: Equation param 1
            Equation body
            read line at 18..22 -> line#0
            read line at 32..36 -> line#0
            read r at 42..43 -> r#1
            read line at 49..53 -> line#0
            read r at 63..64 -> r#1
            pattern Row
            bind l#2: pattern variable of scrutinee `r` at [field 0]
            bind cells#3: pattern variable of scrutinee `r` at [field 1]
            read l at 100..101 -> l#2
            read cells at 103..108 -> cells#3
            read line at 110..114 -> line#0
            Equation body ends
        "#]],
    );
}

#[test]
fn is_binds_in_no_scope_and_outer_names_resolve_to_the_callers_bindings() {
    check_predicate(
        "result is Ok v and (v > 0 implies len xs == n)",
        &["result", "xs"],
        expect![[r#"
            read result at 0..6 -> result(outer)
            pattern Ok
            bind v#0: pattern variable of is operand `result` at [payload]
            read v at 20..21 free
            read len at 34..37 free
            read xs at 38..40 -> xs(outer)
            read n at 44..45 free
        "#]],
    );
}

#[test]
fn a_parenthesised_variable_is_read_at_the_parentheses() {
    check_predicate(
        "f (x)",
        &[],
        expect![[r#"
            read f at 0..1 free
            read x at 2..5 free
        "#]],
    );
}

/// An analysis that overrides `visit_expr` for the forms without binders and
/// leaves the rest to `walk_expr` keeps the scoping: here, counting free reads
/// everywhere except under `ignore`.
#[test]
fn an_override_that_defers_to_walk_expr_keeps_scoping() {
    #[derive(Default)]
    struct FreeOutsideIgnore {
        free: Vec<String>,
    }
    impl Visitor for FreeOutsideIgnore {
        type Binding = ();
        fn bind(&mut self, _: &Ident, _: Binder<'_>, _: &Scope<()>) {}
        fn reference(&mut self, name: &Ident, _: TextRange, binding: Option<&()>) {
            if binding.is_none() {
                self.free.push(name.text.clone());
            }
        }
        fn visit_expr(&mut self, expr: &soil_syntax::ast::Expr, scope: &mut Scope<()>) {
            if let ExprKind::App { func, .. } = &expr.kind
                && matches!(&func.kind, ExprKind::Var(name) if name.text == "ignore")
            {
                return;
            }
            walk_expr(self, expr, scope);
        }
    }
    let (predicate, _) = parse_predicate("let y = a in \\x -> x + y + b + ignore c + d");
    let mut visitor = FreeOutsideIgnore::default();
    visitor.visit_expr(&predicate.expect("parses"), &mut Scope::new());
    assert_eq!(visitor.free, ["a", "b", "d"]);
}
