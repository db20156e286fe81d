//! Inference and checking of expressions, patterns and predicates for one
//! definition: Hindley–Milner anchored on the declared signature, let-polymorphism,
//! nominal records and sums, operator constraints resolved after inference, effect
//! accumulation per function body, holes.

use rustc_hash::{FxHashMap, FxHashSet};
use soil_syntax::ast::{self, Expr, ExprKind, UnaryOp};
use trellis_diag::TextRange;

use crate::codes::Code;
use crate::env::{Payload, RowMember, TypeBody, TypeEnv, substitute_params};
use crate::error::{Findings, Origin, TypeError};
use crate::exhaustive::{Matrix, Pat};
use crate::hints::{Hints, did_you_mean};
use crate::ty::{Row, RowVar, Scheme, Ty, VarNames, print_ty};
use crate::unify::{MAX_APPLIED, Subst, UnifyError, generalize};

mod operators;
mod patterns;
mod records;

/// A module-level definition as seen from a reference.
#[derive(Clone, Debug)]
pub(crate) enum GlobalDef {
    Ready(Scheme),
    /// Unsigned and not yet checked: referring to it breaks callee-first order.
    Pending,
}

/// An effect performed at `span`: applying an arrow with `row`. `cause` names
/// what performs it for messages (`at`, `integer /`).
#[derive(Clone, Debug)]
pub(crate) struct EffectUse {
    pub row: Row,
    pub span: TextRange,
    pub origin: Origin,
    pub cause: String,
}

/// A constraint on an operator's operands, resolved after the whole definition
/// is inferred: operand types often become known only after the operator.
enum Deferred {
    Numeric {
        ty: Ty,
        span: TextRange,
        op: &'static str,
        signed_only: bool,
        origin: Origin,
    },
    Concat {
        ty: Ty,
        span: TextRange,
        origin: Origin,
    },
    Comparable {
        ty: Ty,
        span: TextRange,
        op: &'static str,
        origin: Origin,
    },
    Division {
        ty: Ty,
        row_var: u32,
        span: TextRange,
        origin: Origin,
    },
}

/// A hole as met: its type and the locals in scope then (resolved at the end).
pub(crate) struct HoleRecord {
    pub name: String,
    pub ty: Ty,
    pub scope: Vec<(String, Scheme)>,
}

/// The state of checking one definition: the substitution, the local scope, one
/// effect accumulator per enclosing function body, and what is resolved at the end.
pub(crate) struct Checker<'a> {
    pub env: &'a TypeEnv,
    globals: &'a FxHashMap<String, GlobalDef>,
    prelude: &'a FxHashMap<String, Scheme>,
    /// The check's hint finder, shared by its definitions.
    pub hints: &'a Hints,
    module: String,
    /// The definition under check, when unsigned: its monomorphic self type.
    pub self_mono: Option<(String, Ty)>,
    pub subst: Subst,
    scope: Vec<(String, Scheme)>,
    accumulators: Vec<Vec<EffectUse>>,
    deferred: Vec<Deferred>,
    pub holes: Vec<HoleRecord>,
    pub errors: Findings,
    pub rigid_types: FxHashSet<String>,
    pub rigid_rows: FxHashSet<String>,
    pub origin: Origin,
    /// Module-level definitions referenced, with where.
    pub references: Vec<(String, TextRange, Origin)>,
    /// Set while the body's effects are held to the declared signature's row,
    /// so an undeclared effect's diagnostic says how to declare it.
    pub signature_row: bool,
    /// Whether to record [`Checker::name_types`]: only an editor's hover asks, so
    /// an ordinary check pays nothing for it.
    pub observing: bool,
    /// Each name the equation binds or mentions, with its type there (the
    /// instantiated type at a use), while `observing`.
    pub name_types: Vec<(TextRange, Ty)>,
}

impl<'a> Checker<'a> {
    pub(crate) fn new(
        env: &'a TypeEnv,
        globals: &'a FxHashMap<String, GlobalDef>,
        prelude: &'a FxHashMap<String, Scheme>,
        hints: &'a Hints,
        module: &str,
    ) -> Checker<'a> {
        Checker {
            env,
            globals,
            prelude,
            hints,
            module: module.to_owned(),
            self_mono: None,
            subst: Subst::default(),
            scope: Vec::new(),
            accumulators: Vec::new(),
            deferred: Vec::new(),
            holes: Vec::new(),
            errors: Findings::default(),
            rigid_types: FxHashSet::default(),
            rigid_rows: FxHashSet::default(),
            origin: Origin::Equation,
            references: Vec::new(),
            signature_row: false,
            observing: false,
            name_types: Vec::new(),
        }
    }

    /// Records a name's type at `span` for [`crate::name_types`]; a no-op unless
    /// observing, and only in the equation (clause spans point into spec blocks).
    pub(crate) fn observe(&mut self, span: TextRange, ty: &Ty) {
        if self.observing && self.origin == Origin::Equation {
            self.name_types.push((span, ty.clone()));
        }
    }

    pub(crate) fn error(&mut self, code: Code, message: impl Into<String>, span: TextRange) {
        self.push(TypeError::new(code, message, span));
    }

    pub(crate) fn push(&mut self, mut error: TypeError) {
        error.origin = self.origin;
        self.errors.add(error);
    }

    /// Whether a finding at `span` will be kept: once the definition has its
    /// fill, it is only counted here, and the caller skips composing it (a
    /// mismatch's message prints both types, which on a long body of mistakes
    /// cost time in proportion to each type, for every one).
    pub(crate) fn room_for(&mut self, span: TextRange) -> bool {
        if self.errors.full() {
            self.errors.leave_out(Some(span), self.origin);
            return false;
        }
        true
    }

    pub(crate) fn show(&self, ty: &Ty) -> String {
        print_ty(&self.subst.resolve(ty), &mut VarNames::default())
    }

    /// Unifies `found` into `expected`, reporting a mismatch at `span`.
    pub(crate) fn expect(&mut self, expected: &Ty, found: &Ty, span: TextRange) -> bool {
        match self.subst.unify(expected, found) {
            Ok(()) => true,
            Err(_) if !self.room_for(span) => false,
            Err(error) => {
                let mut names = VarNames::default();
                let expected_text = print_ty(&self.subst.resolve(expected), &mut names);
                let found_text = print_ty(&self.subst.resolve(found), &mut names);
                let report = match error {
                    UnifyError::Mismatch => match self.missing_arguments(expected, found) {
                        // Still `type-mismatch` (codes are contractual,
                        // soil0-cli §12); the message names the repair.
                        Some(missing) => TypeError::new(
                            Code::TypeMismatch,
                            format!(
                                "missing {}: this is a function still waiting for {}, where `{expected_text}` is expected",
                                if missing.len() == 1 {
                                    "an argument".to_owned()
                                } else {
                                    format!("{} arguments", missing.len())
                                },
                                missing
                                    .iter()
                                    .map(|t| format!("`{t}`"))
                                    .collect::<Vec<_>>()
                                    .join(", then ")
                            ),
                            span,
                        ),
                        None => TypeError::new(
                            Code::TypeMismatch,
                            format!("expected `{expected_text}`, found `{found_text}`"),
                            span,
                        ),
                    },
                    UnifyError::Infinite => TypeError::new(
                        Code::InfiniteType,
                        format!(
                            "this would need an infinite type (`{expected_text}` = `{found_text}`)"
                        ),
                        span,
                    ),
                    UnifyError::Effect { label } => TypeError::new(
                        Code::EffectNotDeclared,
                        format!("effect `{label}` is not allowed by the expected type"),
                        span,
                    ),
                };
                self.push(
                    report
                        .note(format!("expected: {expected_text}"))
                        .note(format!("found: {found_text}")),
                );
                false
            }
        }
    }

    /// When `found` is a function whose result after some arguments would be
    /// `expected` (a call given too few arguments), the types of the missing ones.
    /// Each unification is a trial, undone at once, so nothing is committed.
    fn missing_arguments(&mut self, expected: &Ty, found: &Ty) -> Option<Vec<String>> {
        if matches!(self.subst.shallow(expected), Ty::Fun(..)) {
            return None;
        }
        let mut params = Vec::new();
        let mut current = self.subst.shallow(found);
        while let Ty::Fun(param, _, result) = current {
            params.push(*param);
            let shown = self.subst.trial(|trial| {
                trial.unify(expected, &result).ok().map(|()| {
                    let mut names = VarNames::default();
                    params
                        .iter()
                        .map(|p| print_ty(&trial.resolve(p), &mut names))
                        .collect()
                })
            });
            if shown.is_some() {
                return shown;
            }
            current = self.subst.shallow_owned(*result);
        }
        None
    }

    // ---- scopes, effects --------------------------------------------------------

    pub(crate) fn bind(&mut self, name: &str, scheme: Scheme) {
        self.scope.push((name.to_owned(), scheme));
    }

    pub(crate) fn scope_len(&self) -> usize {
        self.scope.len()
    }

    pub(crate) fn unbind(&mut self, mark: usize) {
        self.scope.truncate(mark);
    }

    fn scope_mark(&self) -> usize {
        self.scope.len()
    }

    fn scope_reset(&mut self, mark: usize) {
        self.scope.truncate(mark);
    }

    pub(crate) fn push_effects(&mut self) {
        self.accumulators.push(Vec::new());
    }

    pub(crate) fn pop_effects(&mut self) -> Vec<EffectUse> {
        self.accumulators.pop().unwrap_or_default()
    }

    pub(crate) fn add_effect(&mut self, row: Row, span: TextRange, cause: String) {
        if row.labels.is_empty() && row.vars.is_empty() {
            return;
        }
        let origin = self.origin;
        if let Some(top) = self.accumulators.last_mut() {
            top.push(EffectUse {
                row,
                span,
                origin,
                cause,
            });
        }
    }

    /// Requires every effect in `entries` to be within `target`: an open target
    /// grows, a closed one reports `code` at the call that needs the effect.
    ///
    /// `target` is flattened once and kept flat by hand as its tail is bound:
    /// binding the tail `t` to `R` (flattened at binding time, `t` left out)
    /// leaves the flattened target `(current - {t}) + R`, and binding a variable
    /// outside it leaves it as it was. Re-flattening it after every binding, as
    /// this once did, cost time in proportion to everything the target had
    /// absorbed so far: a body of n calls took n^2 (with a quadratic flattening,
    /// n^3: issue 41).
    pub(crate) fn constrain_subset(&mut self, entries: &[EffectUse], target: &Row, code: Code) {
        let mut current = self.subst.resolve_row(target);
        for entry in entries {
            let row = self.subst.resolve_row(&entry.row);
            for label in &row.labels {
                if current.labels.contains(label) {
                    continue;
                }
                match newest_flex(&current) {
                    Some(tail) => {
                        let mut grown = Row::label(label);
                        grown.union(&self.subst.fresh_row());
                        self.grow_tail(&mut current, tail, grown);
                    }
                    None => {
                        let declared = row_text(&current);
                        let cause = &entry.cause;
                        let message = if code == Code::PredicateEffect {
                            format!("a predicate may not perform `{label}` (performed by {cause})")
                        } else {
                            format!("effect `{label}` is not declared (performed by {cause})")
                        };
                        let mut error = TypeError::new(code, message, entry.span)
                            .note(format!("declared row: {declared}"));
                        if self.signature_row && code == Code::EffectNotDeclared {
                            let mut wanted = current.labels.iter().cloned().collect::<Vec<_>>();
                            wanted.push(label.clone());
                            let row = format!("->{{{}}}", wanted.join(", "));
                            error = error.note(if wanted.len() == 1 {
                                format!("fix: add {row} to the signature")
                            } else {
                                format!("fix: write {row} in the signature")
                            });
                        }
                        error.origin = entry.origin;
                        self.errors.add(error);
                    }
                }
            }
            for var in row.flex_vars() {
                if current.vars.contains(&RowVar::Flex(var)) {
                    continue;
                }
                match newest_flex(&current) {
                    Some(tail) => {
                        let mut grown = Row::var(RowVar::Flex(var));
                        grown.union(&self.subst.fresh_row());
                        self.grow_tail(&mut current, tail, grown);
                    }
                    None => {
                        let bound = Row {
                            labels: current.labels.clone(),
                            vars: Default::default(),
                        };
                        self.subst.bind_row(var, bound);
                    }
                }
            }
        }
    }

    /// Binds `current`'s flexible `tail` to `grown` and keeps `current` the
    /// flattened target it stood for (see [`Checker::constrain_subset`]).
    fn grow_tail(&mut self, current: &mut Row, tail: u32, grown: Row) {
        self.subst.bind_row(tail, grown);
        current.vars.remove(&RowVar::Flex(tail));
        if let Some(bound) = self.subst.bound_row(tail) {
            current.union(bound);
        }
    }

    // ---- name resolution -------------------------------------------------------

    fn lookup_var(&mut self, ident: &ast::Ident, span: TextRange) -> Ty {
        let ty = self.resolve_var(ident, span);
        self.observe(span, &ty);
        ty
    }

    fn resolve_var(&mut self, ident: &ast::Ident, span: TextRange) -> Ty {
        if let Some((_, scheme)) = self.scope.iter().rev().find(|(n, _)| *n == ident.text) {
            let scheme = scheme.clone();
            return self.subst.instantiate(&scheme);
        }
        let qualified = format!("{}::{}", self.module, ident.text);
        if let Some(ty) = self.lookup_global(&qualified, span) {
            return ty;
        }
        if let Some(scheme) = self.prelude.get(&ident.text) {
            let scheme = scheme.clone();
            return self.subst.instantiate(&scheme);
        }
        if !self.room_for(span) {
            return self.subst.fresh();
        }
        let prefix = format!("{}::", self.module);
        let candidates = self
            .scope
            .iter()
            .map(|(name, _)| name.as_str())
            .chain(self.globals.keys().filter_map(|q| q.strip_prefix(&prefix)))
            .chain(self.prelude.keys().map(String::as_str));
        let hint = did_you_mean(self.hints.closest(&ident.text, candidates));
        self.error(
            Code::UnknownName,
            format!("unknown name `{}`{hint}", ident.text),
            span,
        );
        self.subst.fresh()
    }

    fn lookup_global(&mut self, qualified: &str, span: TextRange) -> Option<Ty> {
        if let Some((name, ty)) = &self.self_mono
            && name == qualified
        {
            let ty = ty.clone();
            self.references
                .push((qualified.to_owned(), span, self.origin));
            return Some(ty);
        }
        match self.globals.get(qualified)? {
            GlobalDef::Ready(scheme) => {
                let scheme = scheme.clone();
                self.references
                    .push((qualified.to_owned(), span, self.origin));
                Some(self.subst.instantiate(&scheme))
            }
            GlobalDef::Pending => {
                self.error(
                    Code::CalleeOrder,
                    format!("`{qualified}` has no signature and is not checked yet"),
                    span,
                );
                Some(self.subst.fresh())
            }
        }
    }

    // ---- expressions -----------------------------------------------------------

    pub(crate) fn check(&mut self, expr: &Expr, expected: &Ty) {
        match &expr.kind {
            ExprKind::Lambda { params, body } => {
                self.lambda(params, body, Some(expected), expr.span);
            }
            ExprKind::Let(let_expr) => {
                self.let_in(let_expr, Some(expected));
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.check(cond, &Ty::con("Bool"));
                self.check(then_branch, expected);
                self.check(else_branch, expected);
            }
            ExprKind::Match { scrutinee, arms } => {
                self.match_arms(scrutinee, arms, Some(expected), expr.span);
            }
            ExprKind::Hole(name) => {
                self.hole(name, expected.clone());
            }
            _ => {
                let found = self.infer(expr);
                self.expect(expected, &found, expr.span);
            }
        }
    }

    pub(crate) fn infer(&mut self, expr: &Expr) -> Ty {
        let span = expr.span;
        match &expr.kind {
            ExprKind::Literal(literal) => literal_type(literal),
            ExprKind::Var(ident) => self.lookup_var(ident, span),
            ExprKind::Qualified { module, name } => {
                let qualified = format!("{}::{}", module.text, name.text);
                match self.lookup_global(&qualified, span) {
                    Some(ty) => {
                        self.observe(name.span, &ty);
                        ty
                    }
                    None if !self.room_for(span) => self.subst.fresh(),
                    None => {
                        let hint = did_you_mean(
                            self.hints
                                .closest(&qualified, self.globals.keys().map(String::as_str)),
                        );
                        self.error(
                            Code::UnknownName,
                            format!("unknown definition `{qualified}`{hint}"),
                            span,
                        );
                        self.subst.fresh()
                    }
                }
            }
            ExprKind::Constructor(name) => self.constructor_value(name),
            ExprKind::Hole(name) => {
                let ty = self.subst.fresh();
                self.hole(name, ty.clone());
                ty
            }
            ExprKind::App { func, args } => self.apply(func, args, span),
            ExprKind::Lambda { params, body } => self.lambda(params, body, None, span),
            ExprKind::Let(let_expr) => self.let_in(let_expr, None),
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.check(cond, &Ty::con("Bool"));
                let ty = self.infer(then_branch);
                self.check(else_branch, &ty);
                ty
            }
            ExprKind::Match { scrutinee, arms } => self.match_arms(scrutinee, arms, None, span),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, span),
            ExprKind::Unary { op, operand } => match op {
                UnaryOp::Not => {
                    self.check(operand, &Ty::con("Bool"));
                    Ty::con("Bool")
                }
                UnaryOp::Neg => {
                    let ty = self.infer(operand);
                    let origin = self.origin;
                    self.deferred.push(Deferred::Numeric {
                        ty: ty.clone(),
                        span,
                        op: "unary -",
                        signed_only: true,
                        origin,
                    });
                    ty
                }
            },
            ExprKind::Record { name, fields } => self.record(name, fields, span),
            ExprKind::Update { record, fields } => self.update(record, fields),
            ExprKind::Field { record, field } => self.field(record, field),
            ExprKind::List(elements) => {
                let element = self.subst.fresh();
                for item in elements {
                    self.check(item, &element);
                }
                Ty::Con("List".into(), vec![element])
            }
            ExprKind::Tuple(elements) => {
                Ty::Tuple(elements.iter().map(|e| self.infer(e)).collect())
            }
            ExprKind::Annot { expr: inner, ty } => {
                let annotated = self.lower_annotation(ty);
                self.check(inner, &annotated);
                annotated
            }
            ExprKind::Implies { lhs, rhs } => {
                self.check(lhs, &Ty::con("Bool"));
                self.check(rhs, &Ty::con("Bool"));
                Ty::con("Bool")
            }
            ExprKind::Is {
                expr: inner,
                pattern,
            } => {
                let ty = self.infer(inner);
                let mark = self.scope_mark();
                let mut binds = Vec::new();
                self.pattern(pattern, &ty, &mut binds);
                self.scope_reset(mark);
                Ty::con("Bool")
            }
        }
    }

    fn hole(&mut self, name: &ast::Ident, ty: Ty) {
        let mut scope: Vec<(String, Scheme)> = Vec::new();
        for (local, scheme) in self.scope.iter().rev() {
            if !scope.iter().any(|(n, _)| n == local) {
                scope.push((local.clone(), scheme.clone()));
            }
        }
        scope.reverse();
        self.holes.push(HoleRecord {
            name: name.text.clone(),
            ty,
            scope,
        });
    }

    /// An annotation's type: the signature's type and row variables keep their
    /// meaning, any other variable is a fresh unknown (one per name).
    fn lower_annotation(&mut self, ty: &ast::Type) -> Ty {
        let mut names = VariableNames::default();
        names.collect(ty);
        let fresh_types: FxHashMap<&str, Ty> = names
            .types
            .iter()
            .filter(|name| !self.rigid_types.contains(**name))
            .map(|name| (*name, self.subst.fresh()))
            .collect();
        let fresh_rows: FxHashMap<&str, RowVar> = names
            .rows
            .iter()
            .filter(|name| !self.rigid_rows.contains(**name))
            .map(|name| (*name, self.subst.fresh_row_var()))
            .collect();
        let mut vars = |name: &str| {
            Some(
                fresh_types
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| Ty::Rigid(name.to_owned())),
            )
        };
        let mut rows = |name: &str| {
            Some(match fresh_rows.get(name) {
                Some(var) => RowMember::Flex(*var),
                None => RowMember::Rigid(name.to_owned()),
            })
        };
        let mut errors = Vec::new();
        let lowered = self
            .env
            .lower(ty, &mut vars, &mut rows, &mut errors, self.hints);
        for error in errors {
            self.push(error);
        }
        lowered
    }

    fn constructor_value(&mut self, name: &ast::Ident) -> Ty {
        let env = self.env;
        let Some((type_name, _, info, variant)) = env.ctor(&name.text) else {
            if matches!(
                env.get(&name.text).map(|i| &i.body),
                Some(TypeBody::Record(_))
            ) {
                self.error(
                    Code::WrongConstructorForm,
                    format!(
                        "`{}` is a record type: build it with `{} {{ ... }}`",
                        name.text, name.text
                    ),
                    name.span,
                );
            } else {
                let hint =
                    did_you_mean(self.hints.closest(&name.text, self.env.constructor_names()));
                self.error(
                    Code::UnknownConstructor,
                    format!("unknown constructor `{}`{hint}", name.text),
                    name.span,
                );
            }
            return self.subst.fresh();
        };
        let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
        let result = Ty::Con(type_name.to_owned(), args.clone());
        match &variant.payload {
            Payload::None => result,
            Payload::Positional(payload) => {
                let row = self.subst.fresh_row();
                Ty::fun(substitute_params(payload, &args), row, result)
            }
            Payload::Record(_) => {
                self.error(
                    Code::WrongConstructorForm,
                    format!(
                        "`{}` has a record payload: build it with `{} {{ ... }}`",
                        name.text, name.text
                    ),
                    name.span,
                );
                self.subst.fresh()
            }
        }
    }

    fn apply(&mut self, func: &Expr, args: &[Expr], span: TextRange) -> Ty {
        let cause = match &func.kind {
            ExprKind::Var(ident) | ExprKind::Constructor(ident) => format!("`{}`", ident.text),
            ExprKind::Qualified { module, name } => format!("`{}::{}`", module.text, name.text),
            _ => "this call".to_owned(),
        };
        let mut current = self.infer(func);
        let mut params: Vec<Ty> = Vec::new();
        for (index, arg) in args.iter().enumerate() {
            match self.subst.shallow_owned(current) {
                Ty::Fun(param, row, result) => {
                    params.push(*param);
                    self.add_effect(row, span, cause.clone());
                    current = *result;
                }
                unknown @ Ty::Var(_) => {
                    let Some(result) = self.subst.applied_result(&unknown) else {
                        if self.room_for(arg.span) {
                            self.push(TypeError::new(
                                Code::ArityMismatch,
                                format!(
                                    "this chain of applications gives one function more than {MAX_APPLIED} arguments; give it a signature or split the chain"
                                ),
                                arg.span,
                            ));
                        }
                        for extra in &args[index..] {
                            self.infer(extra);
                        }
                        current = self.subst.fresh();
                        break;
                    };
                    let param = self.subst.fresh();
                    let row = self.subst.fresh_row();
                    let arrow = Ty::fun(param.clone(), row.clone(), result.clone());
                    self.expect(&arrow, &unknown, func.span);
                    params.push(param);
                    self.add_effect(row, span, cause.clone());
                    current = result;
                }
                other if !self.room_for(arg.span) => {
                    for extra in &args[index..] {
                        self.infer(extra);
                    }
                    current = other;
                    break;
                }
                other => {
                    let shown = self.show(&other);
                    let message = if index == 0 {
                        format!("this is not a function: its type is `{shown}`")
                    } else {
                        format!("too many arguments: after {index} the result has type `{shown}`")
                    };
                    self.push(
                        TypeError::new(Code::ArityMismatch, message, arg.span)
                            .note(format!("expected: {index} argument(s)"))
                            .note(format!("found: {} argument(s)", args.len())),
                    );
                    for extra in &args[index..] {
                        self.infer(extra);
                    }
                    current = other;
                    break;
                }
            }
        }
        // Plain arguments first, so lambdas see their parameter types.
        let pairs: Vec<(&Expr, Ty)> = args.iter().zip(params).collect();
        for (arg, param) in &pairs {
            if !matches!(arg.kind, ExprKind::Lambda { .. }) {
                self.check(arg, param);
            }
        }
        for (arg, param) in &pairs {
            if matches!(arg.kind, ExprKind::Lambda { .. }) {
                self.check(arg, param);
            }
        }
        if pairs.len() < args.len() {
            return self.subst.fresh();
        }
        current
    }

    /// A lambda or local function: parameters from the expected arrows where known,
    /// body effects collected into the last arrow's row.
    pub(crate) fn lambda(
        &mut self,
        params: &[ast::Param],
        body: &Expr,
        expected: Option<&Ty>,
        span: TextRange,
    ) -> Ty {
        let mut param_tys = Vec::new();
        let mut rows: Vec<Option<Row>> = Vec::new();
        let mut remaining = expected.cloned();
        for _ in params {
            match remaining.take().map(|t| self.subst.shallow_owned(t)) {
                Some(Ty::Fun(param, row, result)) => {
                    param_tys.push(*param);
                    rows.push(Some(row));
                    remaining = Some(*result);
                }
                _ => {
                    param_tys.push(self.subst.fresh());
                    rows.push(None);
                    remaining = None;
                }
            }
        }
        let mark = self.scope_mark();
        self.bind_params(params, &param_tys);
        self.push_effects();
        let body_ty = match &remaining {
            Some(result) => {
                self.check(body, result);
                result.clone()
            }
            None => self.infer(body),
        };
        let entries = self.pop_effects();
        self.scope_reset(mark);
        let last_row = match rows.last() {
            Some(Some(row)) => row.clone(),
            _ => self.subst.fresh_row(),
        };
        self.constrain_subset(&entries, &last_row, Code::EffectNotDeclared);
        let fully_expected = rows.iter().all(Option::is_some);
        let mut ty = body_ty;
        for index in (0..params.len()).rev() {
            let row = if index + 1 == params.len() {
                last_row.clone()
            } else {
                match &rows[index] {
                    Some(row) => row.clone(),
                    None => self.subst.fresh_row(),
                }
            };
            ty = Ty::fun(param_tys[index].clone(), row, ty);
        }
        if let (Some(expected), false) = (expected, fully_expected) {
            self.expect(expected, &ty, span);
        }
        ty
    }

    pub(crate) fn bind_params(&mut self, params: &[ast::Param], tys: &[Ty]) {
        let mut seen: Vec<&str> = Vec::new();
        for (param, ty) in params.iter().zip(tys) {
            if let ast::Param::Named(ident) = param {
                if seen.contains(&ident.text.as_str()) {
                    self.error(
                        Code::DuplicateBinding,
                        format!("parameter `{}` is bound twice", ident.text),
                        ident.span,
                    );
                }
                seen.push(&ident.text);
                self.observe(ident.span, ty);
                self.bind(&ident.text, Scheme::mono(ty.clone()));
            }
        }
    }

    fn let_in(&mut self, let_expr: &ast::LetExpr, expected: Option<&Ty>) -> Ty {
        let mark = self.scope_mark();
        match &let_expr.binder {
            ast::LetBinder::Var(ident) => {
                let ty = self.infer(&let_expr.value);
                self.observe(ident.span, &ty);
                let scheme = self.generalize(&ty);
                self.bind(&ident.text, scheme);
            }
            ast::LetBinder::Function { name, params } => {
                let self_ty = self.subst.fresh();
                self.bind(&name.text, Scheme::mono(self_ty.clone()));
                let ty = self.lambda(params, &let_expr.value, None, let_expr.value.span);
                self.expect(&self_ty, &ty, name.span);
                self.observe(name.span, &ty);
                self.scope_reset(mark);
                let scheme = self.generalize(&ty);
                self.bind(&name.text, scheme);
            }
            ast::LetBinder::Pattern(pattern) => {
                let ty = self.infer(&let_expr.value);
                let mut binds = Vec::new();
                if let Some(pat) = self.pattern(pattern, &ty, &mut binds) {
                    let matrix = Matrix { env: self.env };
                    if let Some(witness) = matrix.useful(&[vec![pat]], &[Pat::Wild]) {
                        let missing = witness.first().map(|w| matrix.print(w)).unwrap_or_default();
                        self.push(
                            TypeError::new(
                                Code::RefutablePattern,
                                "a `let` pattern must match every value; use `match`",
                                pattern.span,
                            )
                            .note(format!("not matched: {missing}")),
                        );
                    }
                }
            }
        }
        let ty = match expected {
            Some(expected) => {
                self.check(&let_expr.body, expected);
                expected.clone()
            }
            None => self.infer(&let_expr.body),
        };
        self.scope_reset(mark);
        ty
    }

    /// Quantifies the variables of `ty` not fixed by the scope, pending operator
    /// constraints or effect accumulators.
    fn generalize(&mut self, ty: &Ty) -> Scheme {
        let resolved = self.subst.resolve(ty);
        let mut tys = Vec::new();
        let mut rows = Vec::new();
        self.subst.free_vars(&resolved, &mut tys, &mut rows);
        let mut fixed_tys = Vec::new();
        let mut fixed_rows = Vec::new();
        for (_, scheme) in &self.scope {
            self.subst
                .free_vars(&scheme.ty, &mut fixed_tys, &mut fixed_rows);
        }
        for deferred in &self.deferred {
            match deferred {
                Deferred::Numeric { ty, .. }
                | Deferred::Concat { ty, .. }
                | Deferred::Comparable { ty, .. } => {
                    self.subst.free_vars(ty, &mut fixed_tys, &mut fixed_rows)
                }
                Deferred::Division { ty, row_var, .. } => {
                    self.subst.free_vars(ty, &mut fixed_tys, &mut fixed_rows);
                    self.subst
                        .free_row_vars(&Row::var(RowVar::Flex(*row_var)), &mut fixed_rows);
                    fixed_rows.push(*row_var);
                }
            }
        }
        for accumulator in &self.accumulators {
            for entry in accumulator {
                self.subst.free_row_vars(&entry.row, &mut fixed_rows);
            }
        }
        if let Some((_, ty)) = &self.self_mono {
            self.subst.free_vars(ty, &mut fixed_tys, &mut fixed_rows);
        }
        tys.retain(|v| !fixed_tys.contains(v));
        rows.retain(|v| !fixed_rows.contains(v));
        generalize(&resolved, &tys, &rows)
    }
}

fn literal_type(literal: &ast::Literal) -> Ty {
    Ty::con(match literal {
        ast::Literal::Int(_) => "I64",
        ast::Literal::UInt(_) => "U64",
        ast::Literal::Float(_) => "F64",
        ast::Literal::Str(_) => "Utf8",
        ast::Literal::Bool(_) => "Bool",
        ast::Literal::Unit => "Unit",
    })
}

/// Names in backquotes, the first twenty of them: a message listing every
/// missing field of a very wide record would grow with the record at every
/// construction.
fn quoted(names: &[&str]) -> String {
    const SHOWN: usize = 20;
    let mut text = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// The row's newest flexible variable: where a subset constraint has grown
/// the row, the tail it grew it by, which nothing else mentions. Growing the
/// row's oldest variable instead, as this once did, grew whatever else shared
/// that variable (the rows of the arrows a body calls), so each later call's
/// row flattened through every earlier one: quadratic in the calls of a body,
/// and a looser inferred row (`twice f x = f (f x)` read `{e, e1}` for `{e}`).
fn newest_flex(row: &Row) -> Option<u32> {
    row.vars.iter().rev().find_map(|var| match var {
        RowVar::Flex(id) => Some(*id),
        RowVar::Gen(_) => None,
    })
}

pub(crate) fn row_text(row: &Row) -> String {
    let labels: Vec<&str> = row.labels.iter().map(String::as_str).collect();
    format!("{{{}}}", labels.join(", "))
}

/// The type and row variable names a type mentions, each once, in order of
/// first mention (found in constant time each: a signature of thousands of
/// variables made a search of the list quadratic).
#[derive(Default)]
struct VariableNames<'t> {
    types: Vec<&'t str>,
    rows: Vec<&'t str>,
    seen_types: FxHashSet<&'t str>,
    seen_rows: FxHashSet<&'t str>,
}

impl<'t> VariableNames<'t> {
    fn collect(&mut self, ty: &'t ast::Type) {
        match &ty.kind {
            ast::TypeKind::Var(name) => {
                if self.seen_types.insert(&name.text) {
                    self.types.push(&name.text);
                }
            }
            ast::TypeKind::Named(_) | ast::TypeKind::Unit => {}
            ast::TypeKind::App { args, .. } => args.iter().for_each(|a| self.collect(a)),
            ast::TypeKind::Tuple(elements) => elements.iter().for_each(|e| self.collect(e)),
            ast::TypeKind::Function(function) => {
                self.collect(&function.param);
                for var in &function.effects.vars {
                    if self.seen_rows.insert(&var.text) {
                        self.rows.push(&var.text);
                    }
                }
                self.collect(&function.result);
            }
        }
    }
}
