//! Termination: recognises structural recursion (and guarded numeric descent) in a
//! definition and its local functions; anything else needs the
//! `nonstructural-recursion` escape hatch.
//!
//! A recursive call is accepted when, for some parameter position `i`, its `i`-th
//! argument is a variable bound by pattern matching strictly inside the value of
//! parameter `i` (a list tail or element, a constructor payload, a record field),
//! or is `n - k` for a positive literal `k` where `n` is parameter `i` and the call
//! sits where `n > 0` is known (the then-branch of `n > 0`, `n >= 1`, the
//! else-branch of `n <= 0`, `n < 1`, conjunctions and negations of these, and
//! match guards). Passing a recursive function as a value is not accepted.
//!
//! Scoping is the scope-aware walk's (`soil_syntax::visit`); what this module adds
//! is what each binder is to the recursion (a parameter, a sub-term of one, a
//! recursive function) and the facts `n > 0` in force.

use soil_syntax::ast::{self, BinOp, Expr, ExprKind, Ident, MatchArm, UnaryOp};
use soil_syntax::visit::{
    Binder, Function, Matched, PatternStep, Scope, Visitor, walk_equation, walk_expr,
};
use trellis_diag::TextRange;

/// The outcome for one definition body.
#[derive(Debug, Default)]
pub(crate) struct Recursion {
    /// Some recursive call (direct or through a local function) exists.
    pub recursive: bool,
    /// Spans of recursive references not recognised as structural.
    pub nonstructural: Vec<TextRange>,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Plain,
    /// Parameter `index` of recursive function `function`, or an alias of it.
    Param(usize, usize),
    /// A strict sub-term of those parameters.
    Subterm(Vec<(usize, usize)>),
    /// A recursive function (the definition or a local one) with its arity.
    Function(usize, usize),
}

struct Walker<'a> {
    module: &'a str,
    definition: &'a str,
    /// Variables known positive where the walk is.
    positive: Vec<String>,
    /// The id the next local function gets (the definition itself is 0).
    next_function: usize,
    out: Recursion,
}

/// Analyses `equation`, the body of the definition `module::name`.
pub(crate) fn analyse(module: &str, equation: &ast::Equation) -> Recursion {
    let mut walker = Walker {
        module,
        definition: &equation.name.text,
        positive: Vec::new(),
        next_function: 1,
        out: Recursion::default(),
    };
    walk_equation(&mut walker, equation, &mut Scope::new());
    walker.out
}

impl Visitor for Walker<'_> {
    type Binding = Kind;

    fn bind(&mut self, _: &Ident, binder: Binder<'_>, scope: &Scope<Kind>) -> Kind {
        match binder {
            Binder::Param {
                function: Function::Equation,
                index,
            } => Kind::Param(0, index),
            // A local function's parameters are bound right after its name, which
            // took the newest id.
            Binder::Param {
                function: Function::Local,
                index,
            } => Kind::Param(self.next_function - 1, index),
            Binder::Param {
                function: Function::Lambda,
                ..
            }
            | Binder::LocalFunction { .. } => Kind::Plain,
            Binder::LocalFunctionSelf { arity } => {
                let id = self.next_function;
                self.next_function += 1;
                Kind::Function(id, arity)
            }
            Binder::Let { value } => kind_of(value, scope),
            Binder::Pattern { matched, path } => pattern_kind(matched, path, scope),
        }
    }

    /// A recursive function named anywhere but in a call's head is passed as a value.
    fn reference(&mut self, name: &Ident, at: TextRange, binding: Option<&Kind>) {
        let recursive = match binding {
            Some(kind) => matches!(kind, Kind::Function(..)),
            None => name.text == self.definition,
        };
        if recursive {
            self.out.recursive = true;
            self.out.nonstructural.push(at);
        }
    }

    fn visit_expr(&mut self, expr: &Expr, scope: &mut Scope<Kind>) {
        match &expr.kind {
            ExprKind::App { func, args } => {
                if let Some((function, arity)) = self.callee(func, scope) {
                    self.out.recursive = true;
                    let decreasing = args
                        .iter()
                        .enumerate()
                        .take(arity)
                        .any(|(index, arg)| self.decreases(function, index, arg, scope));
                    if !decreasing {
                        self.out.nonstructural.push(expr.span);
                    }
                } else {
                    self.visit_expr(func, scope);
                }
                for arg in args {
                    self.visit_expr(arg, scope);
                }
            }
            ExprKind::Qualified { .. } => {
                if self.callee(expr, scope).is_some() {
                    self.out.recursive = true;
                    self.out.nonstructural.push(expr.span);
                }
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.visit_expr(cond, scope);
                let mark = self.positive.len();
                positive_facts(cond, true, &mut self.positive);
                self.visit_expr(then_branch, scope);
                self.positive.truncate(mark);
                positive_facts(cond, false, &mut self.positive);
                self.visit_expr(else_branch, scope);
                self.positive.truncate(mark);
            }
            _ => walk_expr(self, expr, scope),
        }
    }

    /// Facts about the enclosing function's parameters say nothing about a local
    /// function's, which it may be called with anything.
    fn visit_function_body(&mut self, function: Function, body: &Expr, scope: &mut Scope<Kind>) {
        if function == Function::Local {
            let outer_facts = std::mem::take(&mut self.positive);
            self.visit_expr(body, scope);
            self.positive = outer_facts;
        } else {
            self.visit_expr(body, scope);
        }
    }

    /// A guard's facts hold in its arm's body.
    fn visit_arm(&mut self, arm: &MatchArm, scope: &mut Scope<Kind>) {
        let mark = self.positive.len();
        if let Some(guard) = &arm.guard {
            self.visit_expr(guard, scope);
            positive_facts(guard, true, &mut self.positive);
        }
        self.visit_expr(&arm.body, scope);
        self.positive.truncate(mark);
    }
}

impl Walker<'_> {
    /// The recursive function a callee expression names, if any.
    fn callee(&self, expr: &Expr, scope: &Scope<Kind>) -> Option<(usize, usize)> {
        match &expr.kind {
            ExprKind::Var(ident) => match scope.lookup(&ident.text) {
                Some(Kind::Function(id, arity)) => Some((*id, *arity)),
                Some(_) => None,
                None if ident.text == self.definition => Some((0, usize::MAX)),
                None => None,
            },
            // A qualified name is never shadowed by a local.
            ExprKind::Qualified { module, name }
                if module.text == self.module && name.text == self.definition =>
            {
                Some((0, usize::MAX))
            }
            _ => None,
        }
    }

    fn decreases(&self, function: usize, index: usize, arg: &Expr, scope: &Scope<Kind>) -> bool {
        match &arg.kind {
            ExprKind::Var(ident) => matches!(
                scope.lookup(&ident.text),
                Some(Kind::Subterm(origins)) if origins.contains(&(function, index))
            ),
            ExprKind::Annot { expr, .. } => self.decreases(function, index, expr, scope),
            ExprKind::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            } => {
                let ExprKind::Var(ident) = &lhs.kind else {
                    return false;
                };
                let positive_literal =
                    matches!(rhs.kind, ExprKind::Literal(ast::Literal::Int(k)) if k > 0);
                positive_literal
                    && scope.lookup(&ident.text) == Some(&Kind::Param(function, index))
                    && self.positive.contains(&ident.text)
            }
            _ => false,
        }
    }
}

/// What a variable bound to `expr` is: an alias keeps a parameter's or sub-term's
/// kind, anything else relates to nothing.
fn kind_of(expr: &Expr, scope: &Scope<Kind>) -> Kind {
    match &expr.kind {
        ExprKind::Var(ident) => match scope.lookup(&ident.text) {
            Some(Kind::Function(..)) | None => Kind::Plain,
            Some(kind) => kind.clone(),
        },
        _ => Kind::Plain,
    }
}

/// A pattern variable's kind, from the matched value's and the way down to it: a
/// variable strictly inside a constructor, list or record is a sub-term of whatever
/// the matched value was part of. A component of a sub-term is a sub-term; a
/// component of the value itself has another type, so it relates to nothing —
/// except that a match on a tuple of expressions relates each component pattern to
/// its own expression.
fn pattern_kind(matched: Matched<'_>, path: &[PatternStep], scope: &Scope<Kind>) -> Kind {
    let (mut kind, path) = match (matched, path) {
        (Matched::Scrutinee(scrutinee), [PatternStep::TupleElement { index, len }, rest @ ..]) => {
            match &scrutinee.kind {
                ExprKind::Tuple(parts) if parts.len() == *len => {
                    (kind_of(&parts[*index], scope), rest)
                }
                _ => (kind_of(scrutinee, scope), path),
            }
        }
        _ => (kind_of(matched.expr(), scope), path),
    };
    let mut strict = false;
    for step in path {
        match step {
            PatternStep::Payload | PatternStep::Field { .. } | PatternStep::ListElement { .. } => {
                strict = true;
            }
            PatternStep::TupleElement { .. } => {
                if !strict {
                    kind = Kind::Plain;
                }
            }
            // `[..rest]` is the whole list; after an element, the tail is smaller.
            PatternStep::ListRest { elements } => {
                if *elements > 0 {
                    strict = true;
                }
            }
        }
    }
    if !strict {
        return kind;
    }
    match kind {
        Kind::Param(function, index) => Kind::Subterm(vec![(function, index)]),
        Kind::Subterm(origins) => Kind::Subterm(origins),
        Kind::Plain | Kind::Function(..) => Kind::Plain,
    }
}

/// Variables known to be positive (≥ 1) when `cond` evaluates to `truth`.
fn positive_facts(cond: &Expr, truth: bool, out: &mut Vec<String>) {
    match &cond.kind {
        ExprKind::Binary {
            op: BinOp::And,
            lhs,
            rhs,
        } if truth => {
            positive_facts(lhs, true, out);
            positive_facts(rhs, true, out);
        }
        ExprKind::Binary {
            op: BinOp::Or,
            lhs,
            rhs,
        } if !truth => {
            positive_facts(lhs, false, out);
            positive_facts(rhs, false, out);
        }
        ExprKind::Unary {
            op: UnaryOp::Not,
            operand,
        } => positive_facts(operand, !truth, out),
        ExprKind::Binary { op, lhs, rhs } => {
            let (var, op, literal) = match (&lhs.kind, &rhs.kind) {
                (ExprKind::Var(v), ExprKind::Literal(ast::Literal::Int(k))) => (v, *op, *k),
                (ExprKind::Literal(ast::Literal::Int(k)), ExprKind::Var(v)) => (v, mirror(*op), *k),
                _ => return,
            };
            // Normalise to a fact that holds: `var op literal`.
            let op = if truth { Some(op) } else { negate(op) };
            let positive = match op {
                Some(BinOp::Gt) => literal >= 0,
                Some(BinOp::Ge) => literal >= 1,
                _ => false,
            };
            if positive {
                out.push(var.text.clone());
            }
        }
        _ => {}
    }
}

fn mirror(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        other => other,
    }
}

fn negate(op: BinOp) -> Option<BinOp> {
    match op {
        BinOp::Lt => Some(BinOp::Ge),
        BinOp::Le => Some(BinOp::Gt),
        BinOp::Gt => Some(BinOp::Le),
        BinOp::Ge => Some(BinOp::Lt),
        _ => None,
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// `recursive` and the source text of each nonstructural reference.
    fn verdict(source: &str) -> String {
        let (item, diagnostics) = soil_syntax::parse_item(source);
        assert!(diagnostics.is_empty(), "{source}: {diagnostics:#?}");
        let Some(ast::Item::Equation(equation)) = item else {
            panic!("not an equation: {source}");
        };
        let recursion = analyse("m", &equation);
        let spans: Vec<&str> = recursion
            .nonstructural
            .iter()
            .map(|span| &source[span.start as usize..span.end as usize])
            .collect();
        match (recursion.recursive, spans.is_empty()) {
            (false, _) => "non-recursive".to_owned(),
            (true, true) => "structural".to_owned(),
            (true, false) => format!("nonstructural at {spans:?}"),
        }
    }

    /// Each case followed by its verdict.
    fn verdicts(cases: &[&str]) -> String {
        let lines: Vec<String> = cases
            .iter()
            .map(|case| format!("{case}\n  {}", verdict(case)))
            .collect();
        lines.join("\n")
    }

    #[test]
    fn verdicts_follow_the_binders_in_scope() {
        let cases = [
            "len xs = match xs with | [] -> 0 | [_, ..rest] -> 1 + len rest end",
            "count n = if n > 0 then count (n - 1) else 0",
            "count n = match n with | _ if n >= 1 -> count (n - 1) | _ -> 0 end",
            "count n = if n <= 0 then 0 else count (n - 1)",
            "sum xs = let go acc ys = match ys with | [y, ..rest] -> go (acc + y) rest | [] -> acc end in go 0 xs",
            "f xs = let go ys = ys in go xs",
            "f xs = map f xs",
            "f xs = map (f) xs",
            "zip xs ys = match (xs, ys) with | ([x, ..a], [y, ..b]) -> zip a b | _ -> [] end",
            "f n = if n > 0 then (let go k = f (n - 1) in go 0) else 0",
            "f t = match t with | Node { left, right = r } -> f left + f r | Leaf -> 0 end",
            "f t = match t with | Some (a, b) -> f a + f b | None -> 0 end",
            "f xs = let ys = xs in match ys with | [_, ..r] -> f r | [] -> 0 end",
            "f xs = let [_, ..r] = xs in f r",
            "f xs = match xs with | [_, ..r] -> m::f r | [] -> 0 end",
            "f xs = match xs with | [_, ..r] -> other::f r | [] -> 0 end",
            "f xs = let f = 1 in f",
            "f xs = (\\xs -> f xs) xs",
            "step r = Cfg { step }",
            "f x = match x with | (a, b) -> f a end",
            "f xs = match xs with | [..r] -> f r | _ -> 0 end",
            "f xs = let go go = go 1 in go xs",
        ];
        expect_test::expect![[r#"
            len xs = match xs with | [] -> 0 | [_, ..rest] -> 1 + len rest end
              structural
            count n = if n > 0 then count (n - 1) else 0
              structural
            count n = match n with | _ if n >= 1 -> count (n - 1) | _ -> 0 end
              structural
            count n = if n <= 0 then 0 else count (n - 1)
              structural
            sum xs = let go acc ys = match ys with | [y, ..rest] -> go (acc + y) rest | [] -> acc end in go 0 xs
              structural
            f xs = let go ys = ys in go xs
              non-recursive
            f xs = map f xs
              nonstructural at ["f"]
            f xs = map (f) xs
              nonstructural at ["(f)"]
            zip xs ys = match (xs, ys) with | ([x, ..a], [y, ..b]) -> zip a b | _ -> [] end
              structural
            f n = if n > 0 then (let go k = f (n - 1) in go 0) else 0
              nonstructural at ["f (n - 1)"]
            f t = match t with | Node { left, right = r } -> f left + f r | Leaf -> 0 end
              structural
            f t = match t with | Some (a, b) -> f a + f b | None -> 0 end
              structural
            f xs = let ys = xs in match ys with | [_, ..r] -> f r | [] -> 0 end
              structural
            f xs = let [_, ..r] = xs in f r
              structural
            f xs = match xs with | [_, ..r] -> m::f r | [] -> 0 end
              structural
            f xs = match xs with | [_, ..r] -> other::f r | [] -> 0 end
              non-recursive
            f xs = let f = 1 in f
              non-recursive
            f xs = (\xs -> f xs) xs
              nonstructural at ["f xs"]
            step r = Cfg { step }
              nonstructural at ["step"]
            f x = match x with | (a, b) -> f a end
              nonstructural at ["f a"]
            f xs = match xs with | [..r] -> f r | _ -> 0 end
              nonstructural at ["f r"]
            f xs = let go go = go 1 in go xs
              non-recursive"#]].assert_eq(&verdicts(&cases));
    }

    /// Two places the earlier walk went wrong: a punned field of a functional update
    /// reads its name like any other pun, and the components of a tuple pattern are
    /// bound together, so `(ys, xs)` over `(xs, ys)` swaps which parameter each is.
    #[test]
    fn update_puns_and_swapped_tuple_components_are_judged_by_what_they_bind() {
        let cases = [
            "step r = { r with step }",
            "f xs ys = match (xs, ys) with | (ys, [_, ..xs]) -> f xs ys | _ -> 0 end",
            "f xs ys = match (xs, ys) with | (ys, [_, ..xs]) -> f ys xs | _ -> 0 end",
        ];
        expect_test::expect![[r#"
            step r = { r with step }
              nonstructural at ["step"]
            f xs ys = match (xs, ys) with | (ys, [_, ..xs]) -> f xs ys | _ -> 0 end
              nonstructural at ["f xs ys"]
            f xs ys = match (xs, ys) with | (ys, [_, ..xs]) -> f ys xs | _ -> 0 end
              structural"#]]
        .assert_eq(&verdicts(&cases));
    }
}
