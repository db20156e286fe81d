//! An `Option` combinator given a lambda literal compiles to the match it
//! means, the lambda's body inlined in the enclosing frame:
//!
//! - `option_map (\x -> e) o` is `match o with | Some x -> Some e | None -> None end`;
//! - `unwrap_or (option_map (\x -> e) o) d` is `match o with | Some x -> e | None -> d end`
//!   when `d` is a literal or a local: its evaluation cannot fail, so
//!   skipping it when there is a value changes nothing.
//!
//! Either way no closure is made or called, and the second builds no `Option`
//! at all: the count `map_insert w (unwrap_or (option_map (\c -> c + 1)
//! (map_get w counts)) 1) counts` becomes a match decided by the tag, which
//! looks the word up where the map is (`MatchKind::SomeOrNone`). The order
//! of evaluation is the call's: `o`, then `e` when there is a value. A panic
//! inside `e` is reported as one in the match written out would be: its chain
//! names the enclosing definition, not a `(lambda)` frame, and under
//! `unwrap_or` a call that ends `e` is a tail call of that definition's.

use soil_rt::prelude as ids;
use soil_syntax::ast;
use trellis_diag::TextRange;

use super::{DefCompiler, Target};
use crate::builtins::{self, BuiltinId};
use crate::ir::{Arm, Expr, MatchKind, Pat};

impl DefCompiler<'_, '_> {
    /// The match a saturated call of `builtin` on `args` means, when it is one
    /// of the two forms above; `None` leaves the call as it is.
    pub(super) fn option_lambda(
        &mut self,
        builtin: BuiltinId,
        args: &[ast::Expr],
        span: TextRange,
    ) -> Option<Expr> {
        match (builtins::BUILTINS[builtin as usize].name, args) {
            ("option_map", [func, option]) => {
                let (param, body) = lambda_of_one(func)?;
                let some = |body| Expr::Variant {
                    ty: ids::OPTION,
                    tag: ids::SOME,
                    payload: Some(Box::new(body)),
                };
                let none = |_: &mut Self| Expr::Variant {
                    ty: ids::OPTION,
                    tag: ids::NONE,
                    payload: None,
                };
                Some(self.option_match(option, param, body, some, none, span))
            }
            ("unwrap_or", [mapped, default]) if self.settled(default) => {
                let ast::ExprKind::App { func, args } = &mapped.kind else {
                    return None;
                };
                let ([lambda, option], ast::ExprKind::Var(name)) = (&args[..], &func.kind) else {
                    return None;
                };
                let (param, body) = lambda_of_one(lambda)?;
                if name.text != "option_map"
                    || !matches!(self.resolve(&name.text), Some(Target::Builtin(b))
                        if builtins::BUILTINS[b as usize].name == "option_map")
                {
                    return None;
                }
                let none = |compiler: &mut Self| compiler.expr(default);
                Some(self.option_match(option, param, body, |body| body, none, span))
            }
            _ => None,
        }
    }

    /// A default whose evaluation cannot fail: a literal (negated or not) or
    /// a local. A definition's value is not one: reading it may evaluate it.
    fn settled(&mut self, e: &ast::Expr) -> bool {
        match &e.kind {
            ast::ExprKind::Literal(_) => true,
            ast::ExprKind::Unary {
                op: ast::UnaryOp::Neg,
                operand,
            } => matches!(operand.kind, ast::ExprKind::Literal(_)),
            ast::ExprKind::Var(ident) => {
                !self.scopes.is_empty()
                    && self
                        .resolve_local(self.scopes.len() - 1, &ident.text)
                        .is_some()
            }
            _ => false,
        }
    }

    /// `match option with | Some param -> some(body) | None -> none end`,
    /// `param` bound in this frame for `body` alone.
    fn option_match(
        &mut self,
        option: &ast::Expr,
        param: &ast::Param,
        body: &ast::Expr,
        some: impl FnOnce(Expr) -> Expr,
        none: impl FnOnce(&mut Self) -> Expr,
        span: TextRange,
    ) -> Expr {
        let scrutinee = self.boxed(option);
        let mark = self.names_mark();
        let payload = match param {
            ast::Param::Named(ident) => Pat::Bind(self.bind(&ident.text)),
            ast::Param::Wildcard(_) => Pat::Wild,
        };
        let some_body = some(self.expr(body));
        self.reset_names(mark);
        let none_body = none(self);
        let arms: Box<[Arm]> = Box::new([
            Arm {
                pattern: Pat::Variant {
                    ty: ids::OPTION,
                    tag: ids::SOME,
                    payload: Some(Box::new(payload)),
                },
                guard: None,
                body: some_body,
            },
            Arm {
                pattern: Pat::Variant {
                    ty: ids::OPTION,
                    tag: ids::NONE,
                    payload: None,
                },
                guard: None,
                body: none_body,
            },
        ]);
        Expr::Match {
            scrutinee,
            kind: MatchKind::of(&arms),
            arms,
            span,
        }
    }
}

/// The parameter and body of a lambda literal of one parameter.
fn lambda_of_one(e: &ast::Expr) -> Option<(&ast::Param, &ast::Expr)> {
    match &e.kind {
        ast::ExprKind::Lambda { params, body } if params.len() == 1 => Some((&params[0], body)),
        _ => None,
    }
}
