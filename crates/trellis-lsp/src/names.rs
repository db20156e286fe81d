//! Every name a piece of Soil writes, with where it is and what kind of name it
//! is, read off the syntax tree with the scoping rules of `trellis-db`'s free
//! references (a `let` binds after its value, a local function in its own body, a
//! match arm's pattern in its guard and body, an `is` pattern nowhere). Locals are
//! resolved here to their binder; everything else is resolved against the root by
//! [`crate::analysis`]. Spans are those of the tree walked: file offsets for a
//! `.soil` file, block-content offsets for a spec block.

use soil_syntax::ast::{
    Equation, Expr, ExprKind, FieldInit, LetBinder, Param, Pattern, PatternKind, Signature, Type,
    TypeKind,
};
use trellis_diag::TextRange;

/// What a written name is, before the root resolves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    /// Binds a local: a parameter, a `let`, a lambda's or a pattern's variable.
    Binder,
    /// Uses the local bound at `binder`.
    Local { binder: TextRange },
    /// A bare value name no local binds: a definition or helper of the module,
    /// or a builtin.
    Value,
    /// `module::name` (the range is the `name` part's).
    Qualified { module: String },
    /// A constructor, or a record type built or matched by name.
    Constructor,
    /// A type named in a signature or an annotation.
    Type,
    /// A typed hole (`?name`; the text is without the `?`).
    Hole,
    /// The name a signature or an equation defines.
    Defines,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub range: TextRange,
    pub text: String,
    pub name: Name,
}

/// What a walk found: every name in order, and the locals in scope at the probe
/// offset (innermost expression containing it), when one was given.
#[derive(Default)]
pub struct Walk {
    pub occurrences: Vec<Occurrence>,
    pub scope_at_probe: Option<Vec<(String, TextRange)>>,
    probe: Option<u32>,
    scopes: Vec<Vec<(String, TextRange)>>,
}

/// The names of an equation, its parameters bound in its body.
pub fn equation(equation: &Equation, probe: Option<u32>) -> Walk {
    let mut walk = Walk::probing(probe);
    walk.found(&equation.name.text, equation.name.span, Name::Defines);
    walk.push();
    for param in &equation.params {
        walk.param(param);
    }
    walk.see_scope(equation.span);
    walk.expr(&equation.body);
    walk.pop();
    walk
}

/// The names of a predicate or property body whose own names (`result`, the
/// parameters, a property's binders) are `bound` at the given binder ranges.
pub fn predicate(expr: &Expr, bound: &[(String, TextRange)], probe: Option<u32>) -> Walk {
    let mut walk = Walk::probing(probe);
    walk.scopes.push(bound.to_vec());
    walk.expr(expr);
    walk
}

/// The names of a signature: the name it defines, its named parameters (binders)
/// and the types it mentions.
pub fn signature(signature: &Signature) -> Walk {
    let mut walk = Walk::default();
    walk.found(&signature.name.text, signature.name.span, Name::Defines);
    walk.ty(&signature.ty);
    walk
}

/// The type names of one type.
pub fn ty(ty: &Type) -> Walk {
    let mut walk = Walk::default();
    walk.ty(ty);
    walk
}

impl Walk {
    fn probing(probe: Option<u32>) -> Walk {
        Walk {
            probe,
            ..Walk::default()
        }
    }

    /// The occurrence whose range holds `offset` (its end included, so a cursor
    /// just after a name still finds it).
    pub fn at(&self, offset: u32) -> Option<&Occurrence> {
        self.occurrences
            .iter()
            .find(|o| o.range.start <= offset && offset <= o.range.end)
    }

    fn found(&mut self, text: &str, range: TextRange, name: Name) {
        self.occurrences.push(Occurrence {
            range,
            text: text.to_owned(),
            name,
        });
    }

    fn push(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn pop(&mut self) {
        self.scopes.pop();
    }

    fn bind(&mut self, text: &str, range: TextRange) {
        self.found(text, range, Name::Binder);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((text.to_owned(), range));
        }
    }

    fn binder_of(&self, text: &str) -> Option<TextRange> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(name, _)| name == text)
            .map(|(_, range)| *range)
    }

    /// Records the scope when `span` holds the probe: called on the way down, so
    /// the innermost expression's scope wins.
    fn see_scope(&mut self, span: TextRange) {
        if let Some(probe) = self.probe
            && span.start <= probe
            && probe <= span.end
        {
            let mut visible: Vec<(String, TextRange)> = Vec::new();
            for (name, range) in self.scopes.iter().flatten() {
                visible.retain(|(seen, _)| seen != name);
                visible.push((name.clone(), *range));
            }
            self.scope_at_probe = Some(visible);
        }
    }

    fn param(&mut self, param: &Param) {
        if let Param::Named(ident) = param {
            self.bind(&ident.text, ident.span);
        }
    }

    fn value(&mut self, text: &str, range: TextRange) {
        match self.binder_of(text) {
            Some(binder) => self.found(text, range, Name::Local { binder }),
            None => self.found(text, range, Name::Value),
        }
    }

    fn expr(&mut self, expr: &Expr) {
        self.see_scope(expr.span);
        match &expr.kind {
            ExprKind::Literal(_) => {}
            ExprKind::Hole(ident) => self.found(&ident.text, expr.span, Name::Hole),
            ExprKind::Var(ident) => self.value(&ident.text, ident.span),
            ExprKind::Qualified { module, name } => self.found(
                &name.text,
                name.span,
                Name::Qualified {
                    module: module.text.clone(),
                },
            ),
            ExprKind::Constructor(ident) => self.found(&ident.text, ident.span, Name::Constructor),
            ExprKind::App { func, args } => {
                self.expr(func);
                args.iter().for_each(|arg| self.expr(arg));
            }
            ExprKind::Lambda { params, body } => {
                self.push();
                params.iter().for_each(|param| self.param(param));
                self.expr(body);
                self.pop();
            }
            ExprKind::Let(let_expr) => {
                self.push();
                match &let_expr.binder {
                    LetBinder::Var(ident) => {
                        self.expr(&let_expr.value);
                        self.bind(&ident.text, ident.span);
                    }
                    LetBinder::Function { name, params } => {
                        self.bind(&name.text, name.span);
                        self.push();
                        params.iter().for_each(|param| self.param(param));
                        self.expr(&let_expr.value);
                        self.pop();
                    }
                    LetBinder::Pattern(pattern) => {
                        self.expr(&let_expr.value);
                        self.pattern(pattern);
                    }
                }
                self.expr(&let_expr.body);
                self.pop();
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
                    self.push();
                    self.pattern(&arm.pattern);
                    self.see_scope(arm.span);
                    if let Some(guard) = &arm.guard {
                        self.expr(guard);
                    }
                    self.expr(&arm.body);
                    self.pop();
                }
            }
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Implies { lhs, rhs } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Record { name, fields } => {
                self.found(&name.text, name.span, Name::Constructor);
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
                self.push();
                self.pattern(pattern);
                self.pop();
            }
        }
    }

    fn field_inits(&mut self, fields: &[FieldInit]) {
        for field in fields {
            match &field.value {
                Some(value) => self.expr(value),
                // A pun `{ line }` reads the variable `line`.
                None => self.value(&field.name.text, field.name.span),
            }
        }
    }

    fn pattern(&mut self, pattern: &Pattern) {
        match &pattern.kind {
            PatternKind::Wildcard | PatternKind::Literal(_) => {}
            PatternKind::Var(ident) => self.bind(&ident.text, ident.span),
            PatternKind::Constructor { name, payload } => {
                self.found(&name.text, name.span, Name::Constructor);
                if let Some(payload) = payload {
                    self.pattern(payload);
                }
            }
            PatternKind::Record { name, fields, .. } => {
                self.found(&name.text, name.span, Name::Constructor);
                for field in fields {
                    match &field.pattern {
                        Some(inner) => self.pattern(inner),
                        None => self.bind(&field.name.text, field.name.span),
                    }
                }
            }
            PatternKind::Tuple(elements) => elements.iter().for_each(|p| self.pattern(p)),
            PatternKind::List { elements, rest } => {
                elements.iter().for_each(|p| self.pattern(p));
                if let Some(binder) = rest.as_ref().and_then(|rest| rest.binder.as_ref()) {
                    self.bind(&binder.text, binder.span);
                }
            }
        }
    }

    fn ty(&mut self, ty: &Type) {
        match &ty.kind {
            TypeKind::Named(ident) => self.found(&ident.text, ident.span, Name::Type),
            TypeKind::Var(_) | TypeKind::Unit => {}
            TypeKind::App { head, args } => {
                self.found(&head.text, head.span, Name::Type);
                args.iter().for_each(|arg| self.ty(arg));
            }
            TypeKind::Tuple(elements) => elements.iter().for_each(|element| self.ty(element)),
            TypeKind::Function(function) => {
                if let Some(name) = &function.param_name {
                    self.found(&name.text, name.span, Name::Binder);
                }
                self.ty(&function.param);
                self.ty(&function.result);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> String {
        let (file, diagnostics) = soil_syntax::parse_file(text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let soil_syntax::ast::Item::Equation(eq) = &file.items[0] else {
            panic!("an equation");
        };
        equation(eq, None)
            .occurrences
            .iter()
            .map(|o| match &o.name {
                Name::Local { binder } => format!("{}→{}", o.text, binder.start),
                other => format!("{}:{other:?}@{}", o.text, o.range.start),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn locals_resolve_to_their_binders_and_the_rest_stays_free() {
        expect_test::expect![[r#"f:Defines@0 x:Binder@2 sort:Value@16 x→2 s:Binder@12 s→12 g:Qualified { module: "helpers" }@42 Some:Constructor@45 y:Binder@52 y→52"#]]
        .assert_eq(&names("f x =\n  let s = sort x in\n  s ++ helpers::g (Some (\\y -> y))"));
    }
}
