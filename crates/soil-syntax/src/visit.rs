//! The one scope-aware walk over Soil expressions and patterns: it brings local
//! binders into scope and takes them out again as the language's scoping rules say
//! (spec §5.7–§5.9, §6, §11), and tells a [`Visitor`] what it meets — each binder as
//! it enters scope, each name read together with the binding it resolves to (or
//! none: the name is free), each expression and pattern node. Every analysis that
//! asks "is this name local here?" walks with it, so they agree on scoping by
//! construction and each implements only what it does differently.
//!
//! The rules, in the order the walk applies them:
//! - parameters (an equation's, a lambda's, a local function's) enter scope left to
//!   right before the body; a later one shadows an earlier one of the same name;
//! - `let x = e1 in e2`: `e1` is walked without `x`, `e2` with it;
//! - `let go p1 .. pn = e1 in e2`: `e1` is walked with `go` and then its parameters
//!   in scope (a parameter named `go` shadows it), `e2` with `go` alone; `go` is
//!   bound once for each, as [`Binder::LocalFunctionSelf`] and
//!   [`Binder::LocalFunction`], since a use inside `e1` is a recursive call and a
//!   use in `e2` is not;
//! - `let p = e1 in e2`: `e1` first, then `p`'s variables, in scope in `e2`;
//! - `match e with | p if g -> b`: `e` with nothing new; each arm's pattern
//!   variables are in scope in its guard and body only;
//! - `e is p` (predicates): `p`'s variables are in scope nowhere;
//! - a punned field in a construction or update (`Row { line }`,
//!   `{ r with line }`) reads the name `line`; a punned field pattern binds it.
//!
//! A pattern's variables are bound together: the [`Visitor::bind`] hook of each sees
//! the scope the pattern is matched in, never a sibling variable, and they enter
//! scope in pattern order (left to right, depth first) once the pattern is walked.

use trellis_diag::TextRange;

use crate::ast::{Equation, Expr, ExprKind, FieldInit, Ident, LetBinder, MatchArm, Param, Pattern};
use crate::ast::{LetExpr, PatternKind};

/// The local names in scope, innermost last, each with what the visitor recorded
/// when it was bound. Shadowed entries stay below the entry that hides them.
#[derive(Clone, Debug)]
pub struct Scope<B> {
    entries: Vec<(String, B)>,
}

/// A point in a [`Scope`] to return to: everything bound after it leaves scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeMark(usize);

impl<B> Default for Scope<B> {
    fn default() -> Self {
        Scope {
            entries: Vec::new(),
        }
    }
}

impl<B> Scope<B> {
    pub fn new() -> Self {
        Scope::default()
    }

    /// Brings `name` into scope, shadowing any earlier binding of it.
    pub fn bind(&mut self, name: impl Into<String>, binding: B) {
        self.entries.push((name.into(), binding));
    }

    /// The innermost binding of `name`; `None` when the name is free here.
    pub fn lookup(&self, name: &str) -> Option<&B> {
        self.entries
            .iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|(_, binding)| binding)
    }

    /// Every binding in scope, outermost first (a shadowed one before the one that
    /// hides it).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &B)> {
        self.entries
            .iter()
            .map(|(name, binding)| (name.as_str(), binding))
    }

    pub fn mark(&self) -> ScopeMark {
        ScopeMark(self.entries.len())
    }

    /// Takes out of scope everything bound since `mark`.
    pub fn reset(&mut self, mark: ScopeMark) {
        self.entries.truncate(mark.0);
    }
}

/// Whose parameters these are, and whose body is being walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// A top-level equation `name p1 .. pn = body`.
    Equation,
    /// `\p1 .. pn -> body`.
    Lambda,
    /// `let go p1 .. pn = body in ...`.
    Local,
}

/// Where a local binder stands; handed to [`Visitor::bind`].
#[derive(Clone, Copy, Debug)]
pub enum Binder<'a> {
    /// Parameter `index` of a function (counting `_`, which binds nothing).
    Param { function: Function, index: usize },
    /// `let x = value in ...`: `x`, in scope after `value`.
    Let { value: &'a Expr },
    /// `let go p1 .. pn = ...`: `go` inside its own body, where a use recurses.
    /// Its parameters are bound right after it.
    LocalFunctionSelf { arity: usize },
    /// The same `go` in the `in` body.
    LocalFunction { arity: usize },
    /// A pattern variable (a punned field and a `..rest` too): `path` leads from the
    /// matched value to it.
    Pattern {
        matched: Matched<'a>,
        path: &'a [PatternStep],
    },
}

/// The value a pattern is matched against.
#[derive(Clone, Copy, Debug)]
pub enum Matched<'a> {
    /// A `match` scrutinee; the pattern is one arm's.
    Scrutinee(&'a Expr),
    /// The value of `let pattern = value in ...`.
    LetValue(&'a Expr),
    /// The left operand of `operand is pattern`.
    IsOperand(&'a Expr),
}

impl<'a> Matched<'a> {
    pub fn expr(self) -> &'a Expr {
        match self {
            Matched::Scrutinee(expr) | Matched::LetValue(expr) | Matched::IsOperand(expr) => expr,
        }
    }
}

/// One step from a matched value into a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternStep {
    /// Element `index` of a tuple pattern with `len` elements.
    TupleElement { index: usize, len: usize },
    /// The positional payload of a constructor pattern.
    Payload,
    /// Field `index` (as written) of a record pattern, explicit or punned.
    Field { index: usize },
    /// Element `index` of a list pattern.
    ListElement { index: usize },
    /// The `..rest` of a list pattern, after `elements` fixed elements.
    ListRest { elements: usize },
}

/// What an analysis does at the places the walk stops. Only [`Visitor::bind`] is
/// required; every `visit_*` hook defaults to the plain walk, so an override does its
/// own work and calls the matching `walk_*` function (or `visit_*` on the children)
/// for the rest. An override of [`Visitor::visit_expr`] must leave the binding forms
/// (lambda, `let`, `match`, `is`) to [`walk_expr`], or scoping is lost.
pub trait Visitor {
    /// What the analysis remembers about each local binder.
    type Binding;

    /// A binder enters scope: what to remember about it. `scope` is the scope it is
    /// bound in (for a pattern variable, the one the pattern is matched in).
    fn bind(
        &mut self,
        name: &Ident,
        binder: Binder<'_>,
        scope: &Scope<Self::Binding>,
    ) -> Self::Binding;

    /// A lower-case name is read (a variable, or a punned field in a construction or
    /// update), with its innermost local binding or `None` if it is free. `at` is
    /// the reading expression's span (parentheses around a variable included) or
    /// the punned field's name.
    fn reference(&mut self, name: &Ident, at: TextRange, binding: Option<&Self::Binding>) {
        let _ = (name, at, binding);
    }

    /// Every expression, before its children.
    fn visit_expr(&mut self, expr: &Expr, scope: &mut Scope<Self::Binding>) {
        walk_expr(self, expr, scope);
    }

    /// A function's body, with its parameters (and a local function's own name) in
    /// scope.
    fn visit_function_body(
        &mut self,
        function: Function,
        body: &Expr,
        scope: &mut Scope<Self::Binding>,
    ) {
        let _ = function;
        self.visit_expr(body, scope);
    }

    /// A match arm's guard and body, with its pattern's variables in scope.
    fn visit_arm(&mut self, arm: &MatchArm, scope: &mut Scope<Self::Binding>) {
        walk_arm(self, arm, scope);
    }

    /// Every pattern node, before its sub-patterns and before any variable it binds.
    fn visit_pattern(&mut self, pattern: &Pattern) {
        let _ = pattern;
    }
}

/// Walks an equation: its parameters in scope in its body.
pub fn walk_equation<V: Visitor + ?Sized>(
    visitor: &mut V,
    equation: &Equation,
    scope: &mut Scope<V::Binding>,
) {
    let mark = scope.mark();
    bind_params(visitor, Function::Equation, &equation.params, scope);
    visitor.visit_function_body(Function::Equation, &equation.body, scope);
    scope.reset(mark);
}

/// Walks the children of `expr`, binding and unbinding as the scoping rules say.
pub fn walk_expr<V: Visitor + ?Sized>(visitor: &mut V, expr: &Expr, scope: &mut Scope<V::Binding>) {
    match &expr.kind {
        ExprKind::Literal(_)
        | ExprKind::Qualified { .. }
        | ExprKind::Constructor(_)
        | ExprKind::Hole(_) => {}
        ExprKind::Var(name) => visitor.reference(name, expr.span, scope.lookup(&name.text)),
        ExprKind::App { func, args } => {
            visitor.visit_expr(func, scope);
            for arg in args {
                visitor.visit_expr(arg, scope);
            }
        }
        ExprKind::Lambda { params, body } => {
            let mark = scope.mark();
            bind_params(visitor, Function::Lambda, params, scope);
            visitor.visit_function_body(Function::Lambda, body, scope);
            scope.reset(mark);
        }
        ExprKind::Let(let_expr) => walk_let(visitor, let_expr, scope),
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            visitor.visit_expr(cond, scope);
            visitor.visit_expr(then_branch, scope);
            visitor.visit_expr(else_branch, scope);
        }
        ExprKind::Match { scrutinee, arms } => {
            visitor.visit_expr(scrutinee, scope);
            for arm in arms {
                let mark = scope.mark();
                bind_pattern(visitor, &arm.pattern, Matched::Scrutinee(scrutinee), scope);
                visitor.visit_arm(arm, scope);
                scope.reset(mark);
            }
        }
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Implies { lhs, rhs } => {
            visitor.visit_expr(lhs, scope);
            visitor.visit_expr(rhs, scope);
        }
        ExprKind::Unary { operand, .. } => visitor.visit_expr(operand, scope),
        ExprKind::Record { fields, .. } => walk_field_inits(visitor, fields, scope),
        ExprKind::Update { record, fields } => {
            visitor.visit_expr(record, scope);
            walk_field_inits(visitor, fields, scope);
        }
        ExprKind::Field { record, .. } => visitor.visit_expr(record, scope),
        ExprKind::List(elements) | ExprKind::Tuple(elements) => {
            for element in elements {
                visitor.visit_expr(element, scope);
            }
        }
        ExprKind::Annot { expr: inner, .. } => visitor.visit_expr(inner, scope),
        ExprKind::Is {
            expr: operand,
            pattern,
        } => {
            visitor.visit_expr(operand, scope);
            let mark = scope.mark();
            bind_pattern(visitor, pattern, Matched::IsOperand(operand), scope);
            scope.reset(mark);
        }
    }
}

/// Walks an arm's guard, then its body.
pub fn walk_arm<V: Visitor + ?Sized>(
    visitor: &mut V,
    arm: &MatchArm,
    scope: &mut Scope<V::Binding>,
) {
    if let Some(guard) = &arm.guard {
        visitor.visit_expr(guard, scope);
    }
    visitor.visit_expr(&arm.body, scope);
}

fn walk_let<V: Visitor + ?Sized>(
    visitor: &mut V,
    let_expr: &LetExpr,
    scope: &mut Scope<V::Binding>,
) {
    let mark = scope.mark();
    match &let_expr.binder {
        LetBinder::Var(name) => {
            visitor.visit_expr(&let_expr.value, scope);
            let binder = Binder::Let {
                value: &let_expr.value,
            };
            bind_one(visitor, name, binder, scope);
        }
        LetBinder::Function { name, params } => {
            let arity = params.len();
            bind_one(visitor, name, Binder::LocalFunctionSelf { arity }, scope);
            bind_params(visitor, Function::Local, params, scope);
            visitor.visit_function_body(Function::Local, &let_expr.value, scope);
            scope.reset(mark);
            bind_one(visitor, name, Binder::LocalFunction { arity }, scope);
        }
        LetBinder::Pattern(pattern) => {
            visitor.visit_expr(&let_expr.value, scope);
            let matched = Matched::LetValue(&let_expr.value);
            bind_pattern(visitor, pattern, matched, scope);
        }
    }
    visitor.visit_expr(&let_expr.body, scope);
    scope.reset(mark);
}

fn walk_field_inits<V: Visitor + ?Sized>(
    visitor: &mut V,
    fields: &[FieldInit],
    scope: &mut Scope<V::Binding>,
) {
    for field in fields {
        match &field.value {
            Some(value) => visitor.visit_expr(value, scope),
            None => {
                let name = &field.name;
                visitor.reference(name, name.span, scope.lookup(&name.text));
            }
        }
    }
}

fn bind_one<V: Visitor + ?Sized>(
    visitor: &mut V,
    name: &Ident,
    binder: Binder<'_>,
    scope: &mut Scope<V::Binding>,
) {
    let binding = visitor.bind(name, binder, scope);
    scope.bind(name.text.as_str(), binding);
}

fn bind_params<V: Visitor + ?Sized>(
    visitor: &mut V,
    function: Function,
    params: &[Param],
    scope: &mut Scope<V::Binding>,
) {
    for (index, param) in params.iter().enumerate() {
        if let Param::Named(name) = param {
            bind_one(visitor, name, Binder::Param { function, index }, scope);
        }
    }
}

/// Binds every variable of `pattern`, matched against `matched`.
fn bind_pattern<V: Visitor + ?Sized>(
    visitor: &mut V,
    pattern: &Pattern,
    matched: Matched<'_>,
    scope: &mut Scope<V::Binding>,
) {
    let mut binder = PatternBinder {
        visitor,
        matched,
        scope,
        path: Vec::new(),
        bound: Vec::new(),
    };
    binder.pattern(pattern);
    let bound = binder.bound;
    for (name, binding) in bound {
        scope.bind(name, binding);
    }
}

/// Collects a pattern's bindings against the scope it is matched in; the caller
/// brings them into scope together.
struct PatternBinder<'v, 's, 'm, V: Visitor + ?Sized> {
    visitor: &'v mut V,
    matched: Matched<'m>,
    scope: &'s Scope<V::Binding>,
    path: Vec<PatternStep>,
    bound: Vec<(String, V::Binding)>,
}

impl<V: Visitor + ?Sized> PatternBinder<'_, '_, '_, V> {
    fn variable(&mut self, name: &Ident) {
        let binder = Binder::Pattern {
            matched: self.matched,
            path: &self.path,
        };
        let binding = self.visitor.bind(name, binder, self.scope);
        self.bound.push((name.text.clone(), binding));
    }

    fn step(&mut self, step: PatternStep, pattern: &Pattern) {
        self.path.push(step);
        self.pattern(pattern);
        self.path.pop();
    }

    fn pattern(&mut self, pattern: &Pattern) {
        self.visitor.visit_pattern(pattern);
        match &pattern.kind {
            PatternKind::Wildcard | PatternKind::Literal(_) => {}
            PatternKind::Var(name) => self.variable(name),
            PatternKind::Constructor { payload, .. } => {
                if let Some(payload) = payload {
                    self.step(PatternStep::Payload, payload);
                }
            }
            PatternKind::Record { fields, .. } => {
                for (index, field) in fields.iter().enumerate() {
                    let step = PatternStep::Field { index };
                    match &field.pattern {
                        Some(inner) => self.step(step, inner),
                        None => {
                            self.path.push(step);
                            self.variable(&field.name);
                            self.path.pop();
                        }
                    }
                }
            }
            PatternKind::Tuple(elements) => {
                let len = elements.len();
                for (index, element) in elements.iter().enumerate() {
                    self.step(PatternStep::TupleElement { index, len }, element);
                }
            }
            PatternKind::List { elements, rest } => {
                for (index, element) in elements.iter().enumerate() {
                    self.step(PatternStep::ListElement { index }, element);
                }
                if let Some(name) = rest.as_ref().and_then(|rest| rest.binder.as_ref()) {
                    self.path.push(PatternStep::ListRest {
                        elements: elements.len(),
                    });
                    self.variable(name);
                    self.path.pop();
                }
            }
        }
    }
}
