//! Inference and checking of expressions, patterns and predicates for one
//! definition: Hindley–Milner anchored on the declared signature, let-polymorphism,
//! nominal records and sums, operator constraints resolved after inference, effect
//! accumulation per function body, holes.

use rustc_hash::FxHashMap;
use soil_syntax::ast::{self, BinOp, Expr, ExprKind, Pattern, PatternKind, UnaryOp};
use trellis_diag::TextRange;

use crate::codes::Code;
use crate::env::{Payload, RowMember, TypeBody, TypeEnv, substitute_params};
use crate::error::{Origin, TypeError};
use crate::exhaustive::{Ctor, Matrix, Pat};
use crate::ty::{Row, Scheme, Ty, VarNames, print_ty};
use crate::unify::{Subst, UnifyError, generalize};

/// A module-level definition as seen from a reference.
#[derive(Clone, Debug)]
pub(crate) enum GlobalDef {
    Ready(Scheme),
    /// Unsigned and not yet checked: referring to it breaks callee-first order.
    Pending,
}

/// An effect performed at `span`: applying an arrow with `row`.
#[derive(Clone, Debug)]
pub(crate) struct EffectUse {
    pub row: Row,
    pub span: TextRange,
    pub origin: Origin,
}

enum Deferred {
    Numeric { ty: Ty, span: TextRange, op: &'static str, signed_only: bool, origin: Origin },
    Concat { ty: Ty, span: TextRange, origin: Origin },
    Comparable { ty: Ty, span: TextRange, op: &'static str, origin: Origin },
    Division { ty: Ty, row_var: u32, span: TextRange, origin: Origin },
}

pub(crate) struct HoleRecord {
    pub name: String,
    pub ty: Ty,
    pub scope: Vec<(String, Scheme)>,
}

pub(crate) struct Checker<'a> {
    pub env: &'a TypeEnv,
    globals: &'a FxHashMap<String, GlobalDef>,
    prelude: &'a FxHashMap<String, Scheme>,
    module: String,
    /// The definition under check, when unsigned: its monomorphic self type.
    pub self_mono: Option<(String, Ty)>,
    pub subst: Subst,
    scope: Vec<(String, Scheme)>,
    accumulators: Vec<Vec<EffectUse>>,
    deferred: Vec<Deferred>,
    pub holes: Vec<HoleRecord>,
    pub errors: Vec<TypeError>,
    pub rigid_types: Vec<String>,
    pub rigid_rows: Vec<String>,
    pub origin: Origin,
    /// Module-level definitions referenced, with where.
    pub references: Vec<(String, TextRange, Origin)>,
}

impl<'a> Checker<'a> {
    pub(crate) fn new(
        env: &'a TypeEnv,
        globals: &'a FxHashMap<String, GlobalDef>,
        prelude: &'a FxHashMap<String, Scheme>,
        module: &str,
    ) -> Checker<'a> {
        Checker {
            env,
            globals,
            prelude,
            module: module.to_owned(),
            self_mono: None,
            subst: Subst::default(),
            scope: Vec::new(),
            accumulators: Vec::new(),
            deferred: Vec::new(),
            holes: Vec::new(),
            errors: Vec::new(),
            rigid_types: Vec::new(),
            rigid_rows: Vec::new(),
            origin: Origin::Equation,
            references: Vec::new(),
        }
    }

    pub(crate) fn error(&mut self, code: Code, message: impl Into<String>, span: TextRange) {
        self.push(TypeError::new(code, message, span));
    }

    pub(crate) fn push(&mut self, mut error: TypeError) {
        error.origin = self.origin;
        if !self.errors.contains(&error) {
            self.errors.push(error);
        }
    }

    pub(crate) fn show(&self, ty: &Ty) -> String {
        print_ty(&self.subst.resolve(ty), &mut VarNames::default())
    }

    /// Unifies `found` into `expected`, reporting a mismatch at `span`.
    pub(crate) fn expect(&mut self, expected: &Ty, found: &Ty, span: TextRange) -> bool {
        match self.subst.unify(expected, found) {
            Ok(()) => true,
            Err(error) => {
                let mut names = VarNames::default();
                let expected_text = print_ty(&self.subst.resolve(expected), &mut names);
                let found_text = print_ty(&self.subst.resolve(found), &mut names);
                let report = match error {
                    UnifyError::Mismatch => TypeError::new(
                        Code::TypeMismatch,
                        format!("expected `{expected_text}`, found `{found_text}`"),
                        span,
                    ),
                    UnifyError::Infinite => TypeError::new(
                        Code::InfiniteType,
                        format!("this would need an infinite type (`{expected_text}` = `{found_text}`)"),
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

    fn add_effect(&mut self, row: Row, span: TextRange) {
        if row.labels.is_empty() && row.vars.is_empty() {
            return;
        }
        let origin = self.origin;
        if let Some(top) = self.accumulators.last_mut() {
            top.push(EffectUse { row, span, origin });
        }
    }

    /// Requires every effect in `entries` to be within `target`: an open target
    /// grows, a closed one reports `code` at the call that needs the effect.
    pub(crate) fn constrain_subset(&mut self, entries: &[EffectUse], target: &Row, code: Code) {
        for entry in entries {
            let row = self.subst.resolve_row(&entry.row);
            for label in &row.labels {
                let current = self.subst.resolve_row(target);
                if current.labels.contains(label) {
                    continue;
                }
                match current.flex_vars().first() {
                    Some(&tail) => {
                        let mut grown = Row::label(label);
                        grown.union(&self.subst.fresh_row());
                        self.subst.bind_row(tail, grown);
                    }
                    None => {
                        let declared = row_text(&current);
                        let message = if code == Code::PredicateEffect {
                            format!("a predicate may not perform `{label}`")
                        } else {
                            format!("effect `{label}` is not declared")
                        };
                        let mut error = TypeError::new(code, message, entry.span)
                            .note(format!("declared row: {declared}"));
                        error.origin = entry.origin;
                        if !self.errors.contains(&error) {
                            self.errors.push(error);
                        }
                    }
                }
            }
            for var in row.flex_vars() {
                let current = self.subst.resolve_row(target);
                if current.flex_vars().contains(&var) {
                    continue;
                }
                match current.flex_vars().first() {
                    Some(&tail) => {
                        let mut grown = Row::var(crate::ty::RowVar::Flex(var));
                        grown.union(&self.subst.fresh_row());
                        self.subst.bind_row(tail, grown);
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

    // ---- name resolution -------------------------------------------------------

    fn lookup_var(&mut self, ident: &ast::Ident, span: TextRange) -> Ty {
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
        self.error(Code::UnknownName, format!("unknown name `{}`", ident.text), span);
        self.subst.fresh()
    }

    fn lookup_global(&mut self, qualified: &str, span: TextRange) -> Option<Ty> {
        if let Some((name, ty)) = &self.self_mono {
            if name == qualified {
                let ty = ty.clone();
                self.references.push((qualified.to_owned(), span, self.origin));
                return Some(ty);
            }
        }
        match self.globals.get(qualified)? {
            GlobalDef::Ready(scheme) => {
                let scheme = scheme.clone();
                self.references.push((qualified.to_owned(), span, self.origin));
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
            ExprKind::If { cond, then_branch, else_branch } => {
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
                    Some(ty) => ty,
                    None => {
                        self.error(Code::UnknownName, format!("unknown definition `{qualified}`"), span);
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
            ExprKind::If { cond, then_branch, else_branch } => {
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
            ExprKind::Update { record, fields } => self.update(record, fields, span),
            ExprKind::Field { record, field } => self.field(record, field),
            ExprKind::List(elements) => {
                let element = self.subst.fresh();
                for item in elements {
                    self.check(item, &element);
                }
                Ty::Con("List".into(), vec![element])
            }
            ExprKind::Tuple(elements) => Ty::Tuple(elements.iter().map(|e| self.infer(e)).collect()),
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
            ExprKind::Is { expr: inner, pattern } => {
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
        self.holes.push(HoleRecord { name: name.text.clone(), ty, scope });
    }

    fn lower_annotation(&mut self, ty: &ast::Type) -> Ty {
        let mut fresh_types: FxHashMap<String, Ty> = FxHashMap::default();
        let mut fresh_rows: FxHashMap<String, crate::ty::RowVar> = FxHashMap::default();
        let rigid_types = self.rigid_types.clone();
        let rigid_rows = self.rigid_rows.clone();
        let mut errors = Vec::new();
        let subst = std::cell::RefCell::new(&mut self.subst);
        let mut vars = |name: &str| {
            if rigid_types.iter().any(|r| r == name) {
                return Some(Ty::Rigid(name.to_owned()));
            }
            Some(fresh_types.entry(name.to_owned()).or_insert_with(|| subst.borrow_mut().fresh()).clone())
        };
        let mut rows = |name: &str| {
            if rigid_rows.iter().any(|r| r == name) {
                return Some(RowMember::Rigid(name.to_owned()));
            }
            let var = *fresh_rows
                .entry(name.to_owned())
                .or_insert_with(|| subst.borrow_mut().fresh_row_var());
            Some(RowMember::Flex(var))
        };
        let lowered = self.env.lower(ty, &mut vars, &mut rows, &mut errors);
        for error in errors {
            self.push(error);
        }
        lowered
    }

    fn constructor_value(&mut self, name: &ast::Ident) -> Ty {
        let env = self.env;
        let Some((type_name, _, info, variant)) = env.ctor(&name.text) else {
            if matches!(env.get(&name.text).map(|i| &i.body), Some(TypeBody::Record(_))) {
                self.error(
                    Code::WrongConstructorForm,
                    format!("`{}` is a record type: build it with `{} {{ ... }}`", name.text, name.text),
                    name.span,
                );
            } else {
                self.error(Code::UnknownConstructor, format!("unknown constructor `{}`", name.text), name.span);
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
                    format!("`{}` has a record payload: build it with `{} {{ ... }}`", name.text, name.text),
                    name.span,
                );
                result
            }
        }
    }

    fn apply(&mut self, func: &Expr, args: &[Expr], span: TextRange) -> Ty {
        let mut current = self.infer(func);
        let mut params: Vec<Ty> = Vec::new();
        for (index, arg) in args.iter().enumerate() {
            match self.subst.shallow(&current) {
                Ty::Fun(param, row, result) => {
                    params.push(*param);
                    self.add_effect(row, span);
                    current = *result;
                }
                Ty::Var(_) => {
                    let param = self.subst.fresh();
                    let row = self.subst.fresh_row();
                    let result = self.subst.fresh();
                    let arrow = Ty::fun(param.clone(), row.clone(), result.clone());
                    self.expect(&arrow, &current, func.span);
                    params.push(param);
                    self.add_effect(row, span);
                    current = result;
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
            match remaining.as_ref().map(|t| self.subst.shallow(t)) {
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
                self.bind(&ident.text, Scheme::mono(ty.clone()));
            }
        }
    }

    fn let_in(&mut self, let_expr: &ast::LetExpr, expected: Option<&Ty>) -> Ty {
        let mark = self.scope_mark();
        match &let_expr.binder {
            ast::LetBinder::Var(ident) => {
                let ty = self.infer(&let_expr.value);
                let scheme = self.generalize(&ty);
                self.bind(&ident.text, scheme);
            }
            ast::LetBinder::Function { name, params } => {
                let self_ty = self.subst.fresh();
                self.bind(&name.text, Scheme::mono(self_ty.clone()));
                let ty = self.lambda(params, &let_expr.value, None, let_expr.value.span);
                self.expect(&self_ty, &ty, name.span);
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
            self.subst.free_vars(&scheme.ty, &mut fixed_tys, &mut fixed_rows);
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
                    self.subst.free_row_vars(&Row::var(crate::ty::RowVar::Flex(*row_var)), &mut fixed_rows);
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

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr, span: TextRange) -> Ty {
        let origin = self.origin;
        match op {
            BinOp::And | BinOp::Or => {
                self.check(lhs, &Ty::con("Bool"));
                self.check(rhs, &Ty::con("Bool"));
                Ty::con("Bool")
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let ty = self.infer(lhs);
                self.check(rhs, &ty);
                self.deferred.push(Deferred::Comparable { ty, span, op: op.symbol(), origin });
                Ty::con("Bool")
            }
            BinOp::Concat => {
                let ty = self.infer(lhs);
                self.check(rhs, &ty);
                self.deferred.push(Deferred::Concat { ty: ty.clone(), span, origin });
                ty
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                let ty = self.infer(lhs);
                self.check(rhs, &ty);
                self.deferred.push(Deferred::Numeric {
                    ty: ty.clone(),
                    span,
                    op: op.symbol(),
                    signed_only: false,
                    origin,
                });
                if matches!(op, BinOp::Div | BinOp::Rem) && !is_nonzero_int_literal(rhs) {
                    let var = self.subst.fresh_row_var();
                    self.add_effect(Row::var(var), span);
                    if let crate::ty::RowVar::Flex(row_var) = var {
                        self.deferred.push(Deferred::Division { ty: ty.clone(), row_var, span, origin });
                    }
                }
                ty
            }
        }
    }

    fn record_fields(&mut self, name: &ast::Ident) -> Option<(Ty, Vec<(String, Ty)>)> {
        let env = self.env;
        if let Some(info) = env.get(&name.text) {
            if let TypeBody::Record(fields) = &info.body {
                let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
                let fields = fields.iter().map(|(n, t)| (n.clone(), substitute_params(t, &args))).collect();
                return Some((Ty::Con(name.text.clone(), args), fields));
            }
        }
        match env.ctor(&name.text) {
            Some((type_name, _, info, variant)) => match &variant.payload {
                Payload::Record(fields) => {
                    let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
                    let fields = fields.iter().map(|(n, t)| (n.clone(), substitute_params(t, &args))).collect();
                    Some((Ty::Con(type_name.to_owned(), args), fields))
                }
                _ => {
                    self.error(
                        Code::WrongConstructorForm,
                        format!("`{}` has no record payload", name.text),
                        name.span,
                    );
                    None
                }
            },
            None => {
                self.error(
                    Code::UnknownConstructor,
                    format!("unknown record type or constructor `{}`", name.text),
                    name.span,
                );
                None
            }
        }
    }

    fn record(&mut self, name: &ast::Ident, inits: &[ast::FieldInit], span: TextRange) -> Ty {
        let Some((ty, fields)) = self.record_fields(name) else {
            for init in inits {
                if let Some(value) = &init.value {
                    self.infer(value);
                }
            }
            return self.subst.fresh();
        };
        self.field_inits(&name.text, &fields, inits);
        let missing: Vec<&str> = fields
            .iter()
            .filter(|(field, _)| !inits.iter().any(|init| init.name.text == *field))
            .map(|(field, _)| field.as_str())
            .collect();
        if !missing.is_empty() {
            self.error(
                Code::MissingField,
                format!("`{}` is missing field(s) {}", name.text, quoted(&missing)),
                span,
            );
        }
        ty
    }

    fn field_inits(&mut self, owner: &str, fields: &[(String, Ty)], inits: &[ast::FieldInit]) {
        let mut seen: Vec<&str> = Vec::new();
        for init in inits {
            let field = init.name.text.as_str();
            let value_ty = match fields.iter().find(|(n, _)| n == field) {
                Some((_, ty)) => Some(ty.clone()),
                None => {
                    self.error(
                        Code::UnknownField,
                        format!("`{owner}` has no field `{field}`"),
                        init.name.span,
                    );
                    None
                }
            };
            if seen.contains(&field) {
                self.error(Code::DuplicateField, format!("field `{field}` is given twice"), init.name.span);
            }
            seen.push(field);
            match (&init.value, value_ty) {
                (Some(value), Some(ty)) => self.check(value, &ty),
                (Some(value), None) => {
                    self.infer(value);
                }
                (None, Some(ty)) => {
                    let found = self.lookup_var(&init.name, init.name.span);
                    self.expect(&ty, &found, init.name.span);
                }
                (None, None) => {}
            }
        }
    }

    /// The record type of `ty`, instantiated; resolving an unknown type by the
    /// unique record declaring `field`.
    fn record_of(&mut self, ty: &Ty, field: &ast::Ident) -> Option<(String, Vec<(String, Ty)>)> {
        let env = self.env;
        match self.subst.shallow(ty) {
            Ty::Con(name, args) => match env.get(&name).map(|info| &info.body) {
                Some(TypeBody::Record(fields)) => Some((
                    name.clone(),
                    fields.iter().map(|(n, t)| (n.clone(), substitute_params(t, &args))).collect(),
                )),
                _ => {
                    self.error(
                        Code::UnknownField,
                        format!("type `{}` is not a record, so it has no field `{}`", self.show(ty), field.text),
                        field.span,
                    );
                    None
                }
            },
            Ty::Var(_) => {
                let candidates = env.records_with_field(&field.text);
                match candidates.as_slice() {
                    [only] => {
                        let ident = ast::Ident { text: only.clone(), span: field.span };
                        let (record_ty, fields) = self.record_fields(&ident)?;
                        self.expect(&record_ty, ty, field.span);
                        Some((only.clone(), fields))
                    }
                    [] => {
                        self.error(Code::UnknownField, format!("no record type has a field `{}`", field.text), field.span);
                        None
                    }
                    many => {
                        self.push(
                            TypeError::new(
                                Code::AmbiguousField,
                                format!("field `{}` belongs to several record types; annotate the record's type", field.text),
                                field.span,
                            )
                            .note(format!("candidates: {}", many.join(", "))),
                        );
                        None
                    }
                }
            }
            other => {
                let shown = self.show(&other);
                self.error(
                    Code::UnknownField,
                    format!("type `{shown}` is not a record, so it has no field `{}`", field.text),
                    field.span,
                );
                None
            }
        }
    }

    fn field(&mut self, record: &Expr, field: &ast::Ident) -> Ty {
        let ty = self.infer(record);
        let Some((owner, fields)) = self.record_of(&ty, field) else {
            return self.subst.fresh();
        };
        match fields.into_iter().find(|(n, _)| *n == field.text) {
            Some((_, field_ty)) => field_ty,
            None => {
                self.error(Code::UnknownField, format!("`{owner}` has no field `{}`", field.text), field.span);
                self.subst.fresh()
            }
        }
    }

    fn update(&mut self, record: &Expr, inits: &[ast::FieldInit], _span: TextRange) -> Ty {
        let ty = self.infer(record);
        let Some(first) = inits.first() else {
            return ty;
        };
        match self.record_of(&ty, &first.name) {
            Some((owner, fields)) => self.field_inits(&owner, &fields, inits),
            None => {
                for init in inits {
                    if let Some(value) = &init.value {
                        self.infer(value);
                    }
                }
            }
        }
        ty
    }

    fn match_arms(
        &mut self,
        scrutinee: &Expr,
        arms: &[ast::MatchArm],
        expected: Option<&Ty>,
        span: TextRange,
    ) -> Ty {
        let scrutinee_ty = self.infer(scrutinee);
        let result = match expected {
            Some(ty) => ty.clone(),
            None => self.subst.fresh(),
        };
        let mut rows: Vec<Vec<Pat>> = Vec::new();
        let mut patterns_ok = true;
        for arm in arms {
            let mark = self.scope_mark();
            let mut binds = Vec::new();
            let pat = self.pattern(&arm.pattern, &scrutinee_ty, &mut binds);
            if let Some(guard) = &arm.guard {
                self.check(guard, &Ty::con("Bool"));
            }
            self.check(&arm.body, &result);
            self.scope_reset(mark);
            match pat {
                Some(pat) => {
                    let matrix = Matrix { env: self.env };
                    if patterns_ok && matrix.useful(&rows, &[pat.clone()]).is_none() {
                        self.error(
                            Code::RedundantPattern,
                            "this arm can never match: earlier arms cover it",
                            arm.pattern.span,
                        );
                    }
                    if arm.guard.is_none() {
                        rows.push(vec![pat]);
                    }
                }
                None => patterns_ok = false,
            }
        }
        if patterns_ok {
            let matrix = Matrix { env: self.env };
            if let Some(witness) = matrix.useful(&rows, &[Pat::Wild]) {
                let missing = witness.first().map(|w| matrix.print(w)).unwrap_or_default();
                self.push(
                    TypeError::new(
                        Code::NonExhaustiveMatch,
                        format!("this match does not cover `{missing}`"),
                        span,
                    )
                    .note(format!("not matched: {missing}")),
                );
            }
        }
        result
    }

    // ---- patterns --------------------------------------------------------------

    /// Checks a pattern against `expected`, binding its variables in scope.
    /// Returns its matrix form, or `None` after an error.
    pub(crate) fn pattern(
        &mut self,
        pattern: &Pattern,
        expected: &Ty,
        binds: &mut Vec<String>,
    ) -> Option<Pat> {
        let span = pattern.span;
        match &pattern.kind {
            PatternKind::Wildcard => Some(Pat::Wild),
            PatternKind::Var(ident) => {
                self.bind_pattern_var(ident, expected.clone(), binds);
                Some(Pat::Wild)
            }
            PatternKind::Literal(literal) => {
                let ty = literal_type(literal);
                if !self.expect(expected, &ty, span) {
                    return None;
                }
                Some(match literal {
                    ast::Literal::Bool(value) => Pat::Ctor(Ctor::Bool(*value), Vec::new()),
                    ast::Literal::Unit => Pat::Ctor(Ctor::Unit, Vec::new()),
                    ast::Literal::Int(n) => Pat::Ctor(Ctor::Lit(n.to_string()), Vec::new()),
                    ast::Literal::UInt(n) => Pat::Ctor(Ctor::Lit(format!("{n}u")), Vec::new()),
                    ast::Literal::Float(bits) => {
                        Pat::Ctor(Ctor::Lit(format!("{:?}", f64::from_bits(*bits))), Vec::new())
                    }
                    ast::Literal::Str(text) => Pat::Ctor(Ctor::Lit(format!("{text:?}")), Vec::new()),
                })
            }
            PatternKind::Constructor { name, payload } => {
                let env = self.env;
                let Some((type_name, index, info, variant)) = env.ctor(&name.text) else {
                    self.error(Code::UnknownConstructor, format!("unknown constructor `{}`", name.text), name.span);
                    return None;
                };
                let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
                let ty = Ty::Con(type_name.to_owned(), args.clone());
                if !self.expect(expected, &ty, span) {
                    return None;
                }
                let ctor = Ctor::Variant { ty: type_name.to_owned(), index };
                match (&variant.payload, payload) {
                    (Payload::None, None) => Some(Pat::Ctor(ctor, Vec::new())),
                    (Payload::Positional(payload_ty), Some(inner)) => {
                        let payload_ty = substitute_params(payload_ty, &args);
                        let inner = self.pattern(inner, &payload_ty, binds)?;
                        Some(Pat::Ctor(ctor, vec![inner]))
                    }
                    (Payload::None, Some(_)) => {
                        self.error(
                            Code::WrongConstructorForm,
                            format!("`{}` has no payload", name.text),
                            span,
                        );
                        None
                    }
                    (Payload::Positional(_), None) => {
                        self.error(
                            Code::WrongConstructorForm,
                            format!("`{}` carries a payload: write `{} _`", name.text, name.text),
                            span,
                        );
                        None
                    }
                    (Payload::Record(_), _) => {
                        self.error(
                            Code::WrongConstructorForm,
                            format!("`{}` has a record payload: write `{} {{ .. }}`", name.text, name.text),
                            span,
                        );
                        None
                    }
                }
            }
            PatternKind::Record { name, fields, rest } => {
                let (ty, declared) = self.record_fields(name)?;
                if !self.expect(expected, &ty, span) {
                    return None;
                }
                let ctor = match self.env.ctor(&name.text) {
                    Some((type_name, index, ..)) => Ctor::Variant { ty: type_name.to_owned(), index },
                    None => Ctor::Record { ty: name.text.clone() },
                };
                let mut subs = vec![Pat::Wild; declared.len()];
                let mut ok = true;
                let mut seen: Vec<&str> = Vec::new();
                for field in fields {
                    let Some(position) = declared.iter().position(|(n, _)| *n == field.name.text) else {
                        self.error(
                            Code::UnknownField,
                            format!("`{}` has no field `{}`", name.text, field.name.text),
                            field.name.span,
                        );
                        ok = false;
                        continue;
                    };
                    if seen.contains(&field.name.text.as_str()) {
                        self.error(
                            Code::DuplicateField,
                            format!("field `{}` appears twice", field.name.text),
                            field.name.span,
                        );
                        ok = false;
                    }
                    seen.push(&field.name.text);
                    let field_ty = declared[position].1.clone();
                    match &field.pattern {
                        Some(inner) => match self.pattern(inner, &field_ty, binds) {
                            Some(sub) => subs[position] = sub,
                            None => ok = false,
                        },
                        None => self.bind_pattern_var(&field.name, field_ty, binds),
                    }
                }
                if !rest {
                    let missing: Vec<&str> = declared
                        .iter()
                        .filter(|(n, _)| !seen.contains(&n.as_str()))
                        .map(|(n, _)| n.as_str())
                        .collect();
                    if !missing.is_empty() {
                        self.error(
                            Code::MissingField,
                            format!("pattern omits field(s) {}; add them or `..`", quoted(&missing)),
                            span,
                        );
                        ok = false;
                    }
                }
                ok.then_some(Pat::Ctor(ctor, subs))
            }
            PatternKind::Tuple(elements) => {
                let tys: Vec<Ty> = elements.iter().map(|_| self.subst.fresh()).collect();
                if !self.expect(expected, &Ty::Tuple(tys.clone()), span) {
                    return None;
                }
                let mut subs = Vec::new();
                let mut ok = true;
                for (element, ty) in elements.iter().zip(&tys) {
                    match self.pattern(element, ty, binds) {
                        Some(sub) => subs.push(sub),
                        None => ok = false,
                    }
                }
                ok.then_some(Pat::Ctor(Ctor::Tuple(elements.len()), subs))
            }
            PatternKind::List { elements, rest } => {
                let element_ty = self.subst.fresh();
                let list_ty = Ty::Con("List".into(), vec![element_ty.clone()]);
                if !self.expect(expected, &list_ty, span) {
                    return None;
                }
                let mut subs = Vec::new();
                let mut ok = true;
                for element in elements {
                    match self.pattern(element, &element_ty, binds) {
                        Some(sub) => subs.push(sub),
                        None => ok = false,
                    }
                }
                let tail = match rest {
                    None => Pat::Ctor(Ctor::Nil, Vec::new()),
                    Some(rest) => {
                        if let Some(binder) = &rest.binder {
                            self.bind_pattern_var(binder, list_ty.clone(), binds);
                        }
                        Pat::Wild
                    }
                };
                let pat = subs
                    .into_iter()
                    .rev()
                    .fold(tail, |tail, head| Pat::Ctor(Ctor::Cons, vec![head, tail]));
                ok.then_some(pat)
            }
        }
    }

    fn bind_pattern_var(&mut self, ident: &ast::Ident, ty: Ty, binds: &mut Vec<String>) {
        if binds.contains(&ident.text) {
            self.error(
                Code::DuplicateBinding,
                format!("`{}` is bound twice in this pattern", ident.text),
                ident.span,
            );
        }
        binds.push(ident.text.clone());
        self.bind(&ident.text, Scheme::mono(ty));
    }

    // ---- after inference ---------------------------------------------------------

    /// Resolves operator constraints. With holes present an unresolved operand
    /// type is not an error: the draft is partial.
    pub(crate) fn resolve_deferred(&mut self, tolerate_ambiguity: bool) {
        let deferred = std::mem::take(&mut self.deferred);
        for item in &deferred {
            match item {
                Deferred::Numeric { ty, span, op, signed_only, origin } => {
                    self.origin = *origin;
                    match self.subst.resolve(ty) {
                        Ty::Con(name, _) if name == "I64" || name == "F64" => {}
                        Ty::Con(name, _) if name == "U64" && !signed_only => {}
                        Ty::Var(_) => {
                            if !tolerate_ambiguity {
                                self.error(
                                    Code::AmbiguousNumeric,
                                    format!("cannot tell which numeric type `{op}` works on; annotate it"),
                                    *span,
                                );
                            }
                        }
                        other => {
                            let allowed = if *signed_only { "I64 or F64" } else { "I64, U64 or F64" };
                            let shown = self.show(&other);
                            self.push(
                                TypeError::new(
                                    Code::TypeMismatch,
                                    format!("operator `{op}` needs {allowed}, found `{shown}`"),
                                    *span,
                                )
                                .note(format!("expected: {allowed}"))
                                .note(format!("found: {shown}")),
                            );
                        }
                    }
                }
                Deferred::Concat { ty, span, origin } => {
                    self.origin = *origin;
                    match self.subst.resolve(ty) {
                        Ty::Con(name, _) if name == "Utf8" || name == "List" => {}
                        Ty::Var(_) => {
                            if !tolerate_ambiguity {
                                self.error(
                                    Code::AmbiguousConcat,
                                    "cannot tell whether `++` joins lists or strings; annotate it",
                                    *span,
                                );
                            }
                        }
                        other => {
                            let shown = self.show(&other);
                            self.push(
                                TypeError::new(Code::TypeMismatch, format!("`++` needs Utf8 or a List, found `{shown}`"), *span)
                                    .note("expected: Utf8 or List a")
                                    .note(format!("found: {shown}")),
                            );
                        }
                    }
                }
                Deferred::Comparable { ty, span, op, origin } => {
                    self.origin = *origin;
                    let resolved = self.subst.resolve(ty);
                    if resolved.contains_function() {
                        let shown = self.show(&resolved);
                        self.error(
                            Code::NotComparable,
                            format!("`{op}` cannot compare functions (type `{shown}`)"),
                            *span,
                        );
                    }
                }
                Deferred::Division { ty, row_var, span, origin } => {
                    self.origin = *origin;
                    let is_integer = matches!(
                        self.subst.resolve(ty),
                        Ty::Con(name, _) if name == "I64" || name == "U64"
                    );
                    if !is_integer {
                        continue;
                    }
                    let row = self.subst.resolve_row(&Row::var(crate::ty::RowVar::Flex(*row_var)));
                    if row.labels.contains("Panic") {
                        continue;
                    }
                    match row.flex_vars().first() {
                        Some(&tail) => self.subst.bind_row(tail, Row::label("Panic")),
                        None => self.error(
                            Code::EffectNotDeclared,
                            "integer division by a non-literal divisor needs `Panic`, which is not declared here",
                            *span,
                        ),
                    }
                }
            }
        }
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

fn is_nonzero_int_literal(expr: &Expr) -> bool {
    matches!(
        expr.kind,
        ExprKind::Literal(ast::Literal::Int(n)) if n != 0
    ) || matches!(expr.kind, ExprKind::Literal(ast::Literal::UInt(n)) if n != 0)
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

pub(crate) fn row_text(row: &Row) -> String {
    let labels: Vec<&str> = row.labels.iter().map(String::as_str).collect();
    format!("{{{}}}", labels.join(", "))
}
