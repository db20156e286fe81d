//! Span traversal over the syntax tree: shifting a fragment's spans into file
//! coordinates, and erasing them to compare trees modulo layout.

use trellis_diag::TextRange;

use crate::ast::*;

/// Visits every span in a node, so callers can shift a fragment's spans into file
/// coordinates or erase them to compare trees modulo layout.
pub trait Spanned: Sized {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange));

    /// Moves every span right by `delta` bytes.
    fn shift_spans(&mut self, delta: u32) {
        self.for_each_span_mut(&mut |span| *span = span.shifted(delta));
    }

    /// A copy with every span set to the empty range at 0.
    fn without_spans(&self) -> Self
    where
        Self: Clone,
    {
        let mut copy = self.clone();
        copy.for_each_span_mut(&mut |span| *span = TextRange::default());
        copy
    }
}

impl Spanned for Ident {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
    }
}

impl<T: Spanned> Spanned for Vec<T> {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        for node in self {
            node.for_each_span_mut(f);
        }
    }
}

impl<T: Spanned> Spanned for Option<T> {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        if let Some(node) = self {
            node.for_each_span_mut(f);
        }
    }
}

impl<T: Spanned> Spanned for Box<T> {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        (**self).for_each_span_mut(f);
    }
}

impl Spanned for SourceFile {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.items.for_each_span_mut(f);
    }
}

impl Spanned for Item {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        match self {
            Item::TypeDecl(decl) => decl.for_each_span_mut(f),
            Item::Signature(sig) => sig.for_each_span_mut(f),
            Item::Equation(eq) => std::sync::Arc::make_mut(eq).for_each_span_mut(f),
        }
    }
}

impl Spanned for TypeDecl {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.name.for_each_span_mut(f);
        self.params.for_each_span_mut(f);
        match &mut self.body {
            TypeDeclBody::Record(fields) => fields.for_each_span_mut(f),
            TypeDeclBody::Sum(variants) => variants.for_each_span_mut(f),
            TypeDeclBody::Opaque => {}
        }
    }
}

impl Spanned for FieldDecl {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.name.for_each_span_mut(f);
        self.ty.for_each_span_mut(f);
    }
}

impl Spanned for Variant {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.name.for_each_span_mut(f);
        match &mut self.payload {
            VariantPayload::None => {}
            VariantPayload::Positional(ty) => ty.for_each_span_mut(f),
            VariantPayload::Record(fields) => fields.for_each_span_mut(f),
        }
    }
}

impl Spanned for Signature {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.name.for_each_span_mut(f);
        self.ty.for_each_span_mut(f);
    }
}

impl Spanned for Equation {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.name.for_each_span_mut(f);
        self.params.for_each_span_mut(f);
        self.body.for_each_span_mut(f);
    }
}

impl Spanned for Param {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        match self {
            Param::Named(ident) => ident.for_each_span_mut(f),
            Param::Wildcard(span) => f(span),
        }
    }
}

impl Spanned for Type {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        match &mut self.kind {
            TypeKind::Named(ident) | TypeKind::Var(ident) => ident.for_each_span_mut(f),
            TypeKind::App { head, args } => {
                head.for_each_span_mut(f);
                args.for_each_span_mut(f);
            }
            TypeKind::Tuple(elements) => elements.for_each_span_mut(f),
            TypeKind::Unit => {}
            TypeKind::Function(function) => {
                function.param_name.for_each_span_mut(f);
                function.param.for_each_span_mut(f);
                function.effects.for_each_span_mut(f);
                function.result.for_each_span_mut(f);
            }
        }
    }
}

impl Spanned for EffectRow {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.labels.for_each_span_mut(f);
        self.vars.for_each_span_mut(f);
    }
}

impl Spanned for Expr {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        match &mut self.kind {
            ExprKind::Literal(_) => {}
            ExprKind::Var(ident) | ExprKind::Constructor(ident) | ExprKind::Hole(ident) => {
                ident.for_each_span_mut(f)
            }
            ExprKind::Qualified { module, name } => {
                module.for_each_span_mut(f);
                name.for_each_span_mut(f);
            }
            ExprKind::App { func, args } => {
                func.for_each_span_mut(f);
                args.for_each_span_mut(f);
            }
            ExprKind::Lambda { params, body } => {
                params.for_each_span_mut(f);
                body.for_each_span_mut(f);
            }
            ExprKind::Let(let_expr) => {
                match &mut let_expr.binder {
                    LetBinder::Var(ident) => ident.for_each_span_mut(f),
                    LetBinder::Function { name, params } => {
                        name.for_each_span_mut(f);
                        params.for_each_span_mut(f);
                    }
                    LetBinder::Pattern(pattern) => pattern.for_each_span_mut(f),
                }
                let_expr.value.for_each_span_mut(f);
                let_expr.body.for_each_span_mut(f);
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                cond.for_each_span_mut(f);
                then_branch.for_each_span_mut(f);
                else_branch.for_each_span_mut(f);
            }
            ExprKind::Match { scrutinee, arms } => {
                scrutinee.for_each_span_mut(f);
                arms.for_each_span_mut(f);
            }
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Implies { lhs, rhs } => {
                lhs.for_each_span_mut(f);
                rhs.for_each_span_mut(f);
            }
            ExprKind::Unary { operand, .. } => operand.for_each_span_mut(f),
            ExprKind::Record { name, fields } => {
                name.for_each_span_mut(f);
                fields.for_each_span_mut(f);
            }
            ExprKind::Update { record, fields } => {
                record.for_each_span_mut(f);
                fields.for_each_span_mut(f);
            }
            ExprKind::Field { record, field } => {
                record.for_each_span_mut(f);
                field.for_each_span_mut(f);
            }
            ExprKind::List(elements) | ExprKind::Tuple(elements) => elements.for_each_span_mut(f),
            ExprKind::Annot { expr, ty } => {
                expr.for_each_span_mut(f);
                ty.for_each_span_mut(f);
            }
            ExprKind::Is { expr, pattern } => {
                expr.for_each_span_mut(f);
                pattern.for_each_span_mut(f);
            }
        }
    }
}

impl Spanned for MatchArm {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.pattern.for_each_span_mut(f);
        self.guard.for_each_span_mut(f);
        self.body.for_each_span_mut(f);
    }
}

impl Spanned for FieldInit {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.name.for_each_span_mut(f);
        self.value.for_each_span_mut(f);
    }
}

impl Spanned for Pattern {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        match &mut self.kind {
            PatternKind::Wildcard | PatternKind::Literal(_) => {}
            PatternKind::Var(ident) => ident.for_each_span_mut(f),
            PatternKind::Constructor { name, payload } => {
                name.for_each_span_mut(f);
                payload.for_each_span_mut(f);
            }
            PatternKind::Record { name, fields, .. } => {
                name.for_each_span_mut(f);
                fields.for_each_span_mut(f);
            }
            PatternKind::Tuple(elements) => elements.for_each_span_mut(f),
            PatternKind::List { elements, rest } => {
                elements.for_each_span_mut(f);
                rest.for_each_span_mut(f);
            }
        }
    }
}

impl Spanned for FieldPattern {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.name.for_each_span_mut(f);
        self.pattern.for_each_span_mut(f);
    }
}

impl Spanned for ListRest {
    fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(&mut self.span);
        self.binder.for_each_span_mut(f);
    }
}
