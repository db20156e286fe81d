//! Operators: their typing, the constraints resolved once the whole definition
//! is inferred (numeric, concatenation, comparability), and integer division's
//! `Panic`.

use soil_syntax::ast::{self, BinOp, Expr, ExprKind};
use trellis_diag::TextRange;

use super::{Checker, Deferred};
use crate::codes::Code;
use crate::error::TypeError;
use crate::ty::{Row, RowVar, Ty};

impl Checker<'_> {
    pub(super) fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr, span: TextRange) -> Ty {
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
                self.deferred.push(Deferred::Comparable {
                    ty,
                    span,
                    op: op.symbol(),
                    origin,
                });
                Ty::con("Bool")
            }
            BinOp::Concat => {
                let ty = self.infer(lhs);
                self.check(rhs, &ty);
                self.deferred.push(Deferred::Concat {
                    ty: ty.clone(),
                    span,
                    origin,
                });
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
                    self.add_effect(Row::var(var), span, format!("integer `{}`", op.symbol()));
                    if let RowVar::Flex(row_var) = var {
                        self.deferred.push(Deferred::Division {
                            ty: ty.clone(),
                            row_var,
                            span,
                            origin,
                        });
                    }
                }
                ty
            }
        }
    }

    /// Resolves operator constraints. With holes present an unresolved operand
    /// type is not an error: the draft is partial.
    pub(crate) fn resolve_deferred(&mut self, tolerate_ambiguity: bool) {
        let deferred = std::mem::take(&mut self.deferred);
        for item in &deferred {
            match item {
                Deferred::Numeric {
                    ty,
                    span,
                    op,
                    signed_only,
                    origin,
                } => {
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
                            let allowed = if *signed_only {
                                "I64 or F64"
                            } else {
                                "I64, U64 or F64"
                            };
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
                                TypeError::new(
                                    Code::TypeMismatch,
                                    format!("`++` needs Utf8 or a List, found `{shown}`"),
                                    *span,
                                )
                                .note("expected: Utf8 or List a")
                                .note(format!("found: {shown}")),
                            );
                        }
                    }
                }
                Deferred::Comparable {
                    ty,
                    span,
                    op,
                    origin,
                } => {
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
                Deferred::Division {
                    ty,
                    row_var,
                    span,
                    origin,
                } => {
                    self.origin = *origin;
                    let is_integer = matches!(
                        self.subst.resolve(ty),
                        Ty::Con(name, _) if name == "I64" || name == "U64"
                    );
                    if !is_integer {
                        continue;
                    }
                    let row = self.subst.resolve_row(&Row::var(RowVar::Flex(*row_var)));
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

fn is_nonzero_int_literal(expr: &Expr) -> bool {
    matches!(
        expr.kind,
        ExprKind::Literal(ast::Literal::Int(n)) if n != 0
    ) || matches!(expr.kind, ExprKind::Literal(ast::Literal::UInt(n)) if n != 0)
}
