//! The free references of a Soil item, read off the syntax tree alone: which names a
//! definition's body mentions that it does not bind itself. `soil_hash` folds in the
//! hash of every referent, and the call graph is built from these sets. Keeping this
//! syntactic (no type information) means a body edit that keeps the same references
//! re-executes nothing that depends on them.

use std::collections::BTreeSet;

use soil_syntax::ast::{
    Equation, Expr, ExprKind, FieldInit, LetBinder, Param, Pattern, PatternKind, Type, TypeKind,
};

/// A name an item refers to, before resolution.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FreeRef {
    /// A lower-case value name: a definition of the same module, a private helper,
    /// or a builtin.
    Value(String),
    /// `module::name`.
    Qualified { module: String, name: String },
    /// A constructor or a record type built by name.
    Constructor(String),
    /// A type named in an annotation or a signature.
    Type(String),
}

/// The sorted, de-duplicated free references of an equation.
pub fn equation_refs(equation: &Equation) -> BTreeSet<FreeRef> {
    let mut walker = Walker::default();
    walker.push_scope();
    for param in &equation.params {
        walker.bind_param(param);
    }
    walker.expr(&equation.body);
    walker.refs
}

/// The free references of a predicate whose own names (`result`, the parameters)
/// are `bound`.
pub fn predicate_refs(predicate: &Expr, bound: &[&str]) -> BTreeSet<FreeRef> {
    let mut walker = Walker::default();
    walker.push_scope();
    for name in bound {
        walker.bind(name);
    }
    walker.expr(predicate);
    walker.refs
}

/// The type names a type mentions (signatures contribute these to `soil_hash`).
pub fn type_refs(ty: &Type) -> BTreeSet<FreeRef> {
    let mut walker = Walker::default();
    walker.ty(ty);
    walker.refs
}

#[derive(Default)]
struct Walker {
    scopes: Vec<Vec<String>>,
    refs: BTreeSet<FreeRef>,
}

impl Walker {
    fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    fn bind(&mut self, name: &str) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(name.to_owned());
        }
    }

    fn bound(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .rev()
            .any(|scope| scope.iter().any(|n| n == name))
    }

    fn bind_param(&mut self, param: &Param) {
        if let Param::Named(ident) = param {
            self.bind(&ident.text);
        }
    }

    fn expr(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::Literal(_) | ExprKind::Hole(_) => {}
            ExprKind::Var(ident) => {
                if !self.bound(&ident.text) {
                    self.refs.insert(FreeRef::Value(ident.text.clone()));
                }
            }
            ExprKind::Qualified { module, name } => {
                self.refs.insert(FreeRef::Qualified {
                    module: module.text.clone(),
                    name: name.text.clone(),
                });
            }
            ExprKind::Constructor(ident) => {
                self.refs.insert(FreeRef::Constructor(ident.text.clone()));
            }
            ExprKind::App { func, args } => {
                self.expr(func);
                args.iter().for_each(|arg| self.expr(arg));
            }
            ExprKind::Lambda { params, body } => {
                self.push_scope();
                params.iter().for_each(|param| self.bind_param(param));
                self.expr(body);
                self.pop_scope();
            }
            ExprKind::Let(let_expr) => {
                self.push_scope();
                match &let_expr.binder {
                    LetBinder::Var(ident) => {
                        self.expr(&let_expr.value);
                        self.bind(&ident.text);
                    }
                    LetBinder::Function { name, params } => {
                        // A local function is in scope in its own body.
                        self.bind(&name.text);
                        self.push_scope();
                        params.iter().for_each(|param| self.bind_param(param));
                        self.expr(&let_expr.value);
                        self.pop_scope();
                    }
                    LetBinder::Pattern(pattern) => {
                        self.expr(&let_expr.value);
                        self.pattern(pattern);
                    }
                }
                self.expr(&let_expr.body);
                self.pop_scope();
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.expr(cond);
                self.expr(then_branch);
                self.expr(else_branch);
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for arm in arms {
                    self.push_scope();
                    self.pattern(&arm.pattern);
                    if let Some(guard) = &arm.guard {
                        self.expr(guard);
                    }
                    self.expr(&arm.body);
                    self.pop_scope();
                }
            }
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Implies { lhs, rhs } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Record { name, fields } => {
                self.refs.insert(FreeRef::Constructor(name.text.clone()));
                self.field_inits(fields);
            }
            ExprKind::Update { record, fields } => {
                self.expr(record);
                self.field_inits(fields);
            }
            ExprKind::Field { record, .. } => self.expr(record),
            ExprKind::List(elements) | ExprKind::Tuple(elements) => {
                elements.iter().for_each(|element| self.expr(element));
            }
            ExprKind::Annot { expr, ty } => {
                self.expr(expr);
                self.ty(ty);
            }
            ExprKind::Is { expr, pattern } => {
                self.expr(expr);
                // Names bound by an `is` pattern are not in scope anywhere.
                self.push_scope();
                self.pattern(pattern);
                self.pop_scope();
            }
        }
    }

    fn field_inits(&mut self, fields: &[FieldInit]) {
        for field in fields {
            match &field.value {
                Some(value) => self.expr(value),
                // A pun `{ line }` reads the variable `line`.
                None => {
                    if !self.bound(&field.name.text) {
                        self.refs.insert(FreeRef::Value(field.name.text.clone()));
                    }
                }
            }
        }
    }

    /// Binds a pattern's variables in the current scope, collecting the constructors
    /// it tests.
    fn pattern(&mut self, pattern: &Pattern) {
        match &pattern.kind {
            PatternKind::Wildcard | PatternKind::Literal(_) => {}
            PatternKind::Var(ident) => self.bind(&ident.text),
            PatternKind::Constructor { name, payload } => {
                self.refs.insert(FreeRef::Constructor(name.text.clone()));
                if let Some(payload) = payload {
                    self.pattern(payload);
                }
            }
            PatternKind::Record { name, fields, .. } => {
                self.refs.insert(FreeRef::Constructor(name.text.clone()));
                for field in fields {
                    match &field.pattern {
                        Some(inner) => self.pattern(inner),
                        None => self.bind(&field.name.text),
                    }
                }
            }
            PatternKind::Tuple(elements) => elements.iter().for_each(|p| self.pattern(p)),
            PatternKind::List { elements, rest } => {
                elements.iter().for_each(|p| self.pattern(p));
                if let Some(binder) = rest.as_ref().and_then(|rest| rest.binder.as_ref()) {
                    self.bind(&binder.text);
                }
            }
        }
    }

    fn ty(&mut self, ty: &Type) {
        match &ty.kind {
            TypeKind::Named(ident) => {
                self.refs.insert(FreeRef::Type(ident.text.clone()));
            }
            TypeKind::Var(_) | TypeKind::Unit => {}
            TypeKind::App { head, args } => {
                self.refs.insert(FreeRef::Type(head.text.clone()));
                args.iter().for_each(|arg| self.ty(arg));
            }
            TypeKind::Tuple(elements) => elements.iter().for_each(|element| self.ty(element)),
            TypeKind::Function(function) => {
                self.ty(&function.param);
                self.ty(&function.result);
            }
        }
    }
}
