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

use soil_syntax::ast::{self, BinOp, Expr, ExprKind, LetBinder, Pattern, PatternKind, UnaryOp};
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
    scope: Vec<(String, Kind)>,
    positive: Vec<String>,
    next_function: usize,
    out: Recursion,
}

/// Analyses `equation`, the body of the definition `module::name`.
pub(crate) fn analyse(module: &str, equation: &ast::Equation) -> Recursion {
    let mut walker = Walker {
        module,
        definition: &equation.name.text,
        scope: Vec::new(),
        positive: Vec::new(),
        next_function: 1,
        out: Recursion::default(),
    };
    for (index, param) in equation.params.iter().enumerate() {
        if let ast::Param::Named(ident) = param {
            walker
                .scope
                .push((ident.text.clone(), Kind::Param(0, index)));
        }
    }
    walker.expr(&equation.body);
    walker.out
}

impl Walker<'_> {
    fn lookup(&self, name: &str) -> Option<&Kind> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, k)| k)
    }

    /// The recursive function a callee expression names, if any.
    fn callee(&self, expr: &Expr) -> Option<(usize, usize)> {
        match &expr.kind {
            ExprKind::Var(ident) => match self.lookup(&ident.text) {
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

    fn expr(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::App { func, args } => {
                if let Some((function, arity)) = self.callee(func) {
                    self.out.recursive = true;
                    let decreasing = args
                        .iter()
                        .enumerate()
                        .take(arity)
                        .any(|(index, arg)| self.decreases(function, index, arg));
                    if !decreasing {
                        self.out.nonstructural.push(expr.span);
                    }
                } else {
                    self.expr(func);
                }
                for arg in args {
                    self.expr(arg);
                }
            }
            ExprKind::Var(_) | ExprKind::Qualified { .. } => {
                if self.callee(expr).is_some() {
                    self.out.recursive = true;
                    self.out.nonstructural.push(expr.span);
                }
            }
            ExprKind::Literal(_) | ExprKind::Constructor(_) | ExprKind::Hole(_) => {}
            ExprKind::Lambda { params, body } => {
                let mark = self.scope.len();
                for param in params {
                    if let ast::Param::Named(ident) = param {
                        self.scope.push((ident.text.clone(), Kind::Plain));
                    }
                }
                self.expr(body);
                self.scope.truncate(mark);
            }
            ExprKind::Let(let_expr) => self.let_in(let_expr),
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.expr(cond);
                let mark = self.positive.len();
                let mut facts = Vec::new();
                positive_facts(cond, true, &mut facts);
                self.positive.extend(facts);
                self.expr(then_branch);
                self.positive.truncate(mark);
                let mut facts = Vec::new();
                positive_facts(cond, false, &mut facts);
                self.positive.extend(facts);
                self.expr(else_branch);
                self.positive.truncate(mark);
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for arm in arms {
                    let mark = self.scope.len();
                    let positive_mark = self.positive.len();
                    self.bind_match(scrutinee, &arm.pattern);
                    if let Some(guard) = &arm.guard {
                        self.expr(guard);
                        let mut facts = Vec::new();
                        positive_facts(guard, true, &mut facts);
                        self.positive.extend(facts);
                    }
                    self.expr(&arm.body);
                    self.positive.truncate(positive_mark);
                    self.scope.truncate(mark);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Implies { lhs, rhs } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Record { fields, .. } => {
                for field in fields {
                    match &field.value {
                        Some(value) => self.expr(value),
                        None => self.expr(&Expr {
                            kind: ExprKind::Var(field.name.clone()),
                            span: field.name.span,
                        }),
                    }
                }
            }
            ExprKind::Update { record, fields } => {
                self.expr(record);
                for field in fields {
                    if let Some(value) = &field.value {
                        self.expr(value);
                    }
                }
            }
            ExprKind::Field { record, .. } => self.expr(record),
            ExprKind::List(elements) | ExprKind::Tuple(elements) => {
                for element in elements {
                    self.expr(element);
                }
            }
            ExprKind::Annot { expr: inner, .. } => self.expr(inner),
            ExprKind::Is { expr: inner, .. } => self.expr(inner),
        }
    }

    fn let_in(&mut self, let_expr: &ast::LetExpr) {
        let mark = self.scope.len();
        match &let_expr.binder {
            LetBinder::Var(ident) => {
                self.expr(&let_expr.value);
                let kind = self.kind_of(&let_expr.value);
                self.scope.push((ident.text.clone(), kind));
            }
            LetBinder::Function { name, params } => {
                let id = self.next_function;
                self.next_function += 1;
                self.scope
                    .push((name.text.clone(), Kind::Function(id, params.len())));
                for (index, param) in params.iter().enumerate() {
                    if let ast::Param::Named(ident) = param {
                        self.scope
                            .push((ident.text.clone(), Kind::Param(id, index)));
                    }
                }
                let outer_facts = std::mem::take(&mut self.positive);
                self.expr(&let_expr.value);
                self.positive = outer_facts;
                self.scope.truncate(mark);
                self.scope.push((name.text.clone(), Kind::Plain));
            }
            LetBinder::Pattern(pattern) => {
                self.expr(&let_expr.value);
                let kind = self.kind_of(&let_expr.value);
                self.bind_pattern(pattern, &kind, false);
            }
        }
        self.expr(&let_expr.body);
        self.scope.truncate(mark);
    }

    fn kind_of(&self, expr: &Expr) -> Kind {
        match &expr.kind {
            ExprKind::Var(ident) => match self.lookup(&ident.text) {
                Some(Kind::Function(..)) | None => Kind::Plain,
                Some(kind) => kind.clone(),
            },
            _ => Kind::Plain,
        }
    }

    fn bind_match(&mut self, scrutinee: &Expr, pattern: &Pattern) {
        match (&scrutinee.kind, &pattern.kind) {
            (ExprKind::Tuple(parts), PatternKind::Tuple(patterns))
                if parts.len() == patterns.len() =>
            {
                for (part, pattern) in parts.iter().zip(patterns) {
                    let kind = self.kind_of(part);
                    self.bind_pattern(pattern, &kind, false);
                }
            }
            _ => {
                let kind = self.kind_of(scrutinee);
                self.bind_pattern(pattern, &kind, false);
            }
        }
    }

    /// Binds pattern variables; those strictly inside a constructor, list or record
    /// become sub-terms of whatever the matched value was part of.
    fn bind_pattern(&mut self, pattern: &Pattern, kind: &Kind, strict: bool) {
        let inner_kind = |kind: &Kind| match kind {
            Kind::Param(f, i) => Kind::Subterm(vec![(*f, *i)]),
            Kind::Subterm(origins) => Kind::Subterm(origins.clone()),
            _ => Kind::Plain,
        };
        let bound = if strict {
            inner_kind(kind)
        } else {
            kind.clone()
        };
        match &pattern.kind {
            PatternKind::Wildcard | PatternKind::Literal(_) => {}
            PatternKind::Var(ident) => self.scope.push((ident.text.clone(), bound)),
            PatternKind::Constructor { payload, .. } => {
                if let Some(payload) = payload {
                    self.bind_pattern(payload, kind, true);
                }
            }
            PatternKind::Record { fields, .. } => {
                for field in fields {
                    match &field.pattern {
                        Some(inner) => self.bind_pattern(inner, kind, true),
                        None => self.scope.push((field.name.text.clone(), inner_kind(kind))),
                    }
                }
            }
            // A component of a sub-term is a sub-term; a component of the value
            // itself has another type, so it relates to nothing.
            PatternKind::Tuple(elements) => {
                let component = if strict { kind.clone() } else { Kind::Plain };
                for element in elements {
                    self.bind_pattern(element, &component, strict);
                }
            }
            PatternKind::List { elements, rest } => {
                for element in elements {
                    self.bind_pattern(element, kind, true);
                }
                if let Some(ast::ListRest {
                    binder: Some(ident),
                    ..
                }) = rest
                {
                    let tail_kind = if elements.is_empty() {
                        bound.clone()
                    } else {
                        inner_kind(kind)
                    };
                    self.scope.push((ident.text.clone(), tail_kind));
                }
            }
        }
    }

    fn decreases(&self, function: usize, index: usize, arg: &Expr) -> bool {
        match &arg.kind {
            ExprKind::Var(ident) => matches!(
                self.lookup(&ident.text),
                Some(Kind::Subterm(origins)) if origins.contains(&(function, index))
            ),
            ExprKind::Annot { expr, .. } => self.decreases(function, index, expr),
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
                    && self.lookup(&ident.text) == Some(&Kind::Param(function, index))
                    && self.positive.contains(&ident.text)
            }
            _ => false,
        }
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
