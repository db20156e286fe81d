//! `Option` idioms compiled as the matches they mean.
//!
//! An `Option` combinator given a lambda literal becomes a match, the
//! lambda's body inlined in the enclosing frame:
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
//!
//! And an `Option` named only to be matched at once, `let found = e in match
//! found with | Some x -> .. | None -> .. end` with `found` read nowhere
//! else, is the match of `e` itself: the same value at the same point,
//! decided by its tag, and over `map_get` never built.

use soil_rt::prelude as ids;
use soil_syntax::ast;
use soil_syntax::visit::{self, Binder, Scope as Names, Visitor};
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
                // The prelude's, not a definition or local of that name.
                if name.text != "option_map"
                    || !matches!(self.resolve(&name.text), Some(Target::Builtin(_)))
                {
                    return None;
                }
                let none = |compiler: &mut Self| compiler.expr(default);
                Some(self.option_match(option, param, body, |body| body, none, span))
            }
            _ => None,
        }
    }

    /// `let name = value in body` as the match of `value` itself, when `body`
    /// is a match of `name` with an `Option`'s two arms and reads `name`
    /// nowhere else; `None` leaves the `let` as it is.
    pub(super) fn option_matched_at_once(
        &mut self,
        name: &ast::Ident,
        value: &ast::Expr,
        body: &ast::Expr,
    ) -> Option<Expr> {
        let ast::ExprKind::Match { scrutinee, arms } = &body.kind else {
            return None;
        };
        if !matches!(&scrutinee.kind, ast::ExprKind::Var(read) if read.text == name.text)
            || reads_of(name, body) != 1
        {
            return None;
        }
        let scrutinee = self.boxed(value);
        let arms: Box<[Arm]> = arms.iter().map(|arm| self.arm(arm)).collect();
        let kind = MatchKind::of(&arms);
        if let MatchKind::SomeOrNone { .. } = kind {
            return Some(Expr::Match {
                scrutinee,
                arms,
                kind,
                span: body.span,
            });
        }
        // Other arms keep the local: a list in a slot is taken apart where
        // it is. The arms do not read it, so it is bound after them.
        let mark = self.names_mark();
        let slot = self.bind(&name.text);
        self.reset_names(mark);
        Some(Expr::Let {
            slot,
            value: scrutinee,
            body: Box::new(Expr::Match {
                scrutinee: Box::new(Expr::Local(slot)),
                arms,
                kind,
                span: body.span,
            }),
        })
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

/// How many times `body` reads the `name` bound just outside it (a binder of
/// the same name inside hides it).
fn reads_of(name: &ast::Ident, body: &ast::Expr) -> usize {
    /// Counts the reads whose binding is the outer `name` (`true`).
    struct Reads(usize);
    impl Visitor for Reads {
        type Binding = bool;
        fn bind(&mut self, _: &ast::Ident, _: Binder<'_>, _: &Names<bool>) -> bool {
            false
        }
        fn reference(&mut self, _: &ast::Ident, _: TextRange, binding: Option<&bool>) {
            self.0 += usize::from(binding == Some(&true));
        }
    }
    let mut scope = Names::new();
    scope.bind(name.text.as_str(), true);
    let mut reads = Reads(0);
    visit::walk_expr(&mut reads, body, &mut scope);
    reads.0
}

#[cfg(test)]
mod tests {
    use crate::ir::Expr;

    const LETS: &str = r#"
found_or : (m : Map Utf8 I64) -> (k : Utf8) -> I64
found_or m k = let found = map_get k m in match found with | Some c -> c | None -> 0 end
shadowed : (m : Map Utf8 I64) -> (k : Utf8) -> I64
shadowed m k = let found = map_get k m in match found with | Some found -> found | _ -> 0 end
kept : (m : Map Utf8 I64) -> (k : Utf8) -> (I64, Option I64)
kept m k = let found = map_get k m in match found with | Some c -> (c, found) | None -> (0, found) end
guarded : (m : Map Utf8 I64) -> (k : Utf8) -> I64
guarded m k = let found = map_get k m in match found with | Some c if c > 1 -> c | _ -> 0 end
first_or : (xs : List I64) -> I64
first_or xs = let ys = reverse xs in match ys with | [] -> 0 | [y, ..] -> y end
"#;

    /// The `let`s left in the body of `def`.
    fn lets_in(def: &str) -> usize {
        fn count(e: &Expr) -> usize {
            let mut n = usize::from(matches!(e, Expr::Let { .. }));
            e.each_child(&mut |child| n += count(child));
            n
        }
        let program = crate::program_from_source(LETS, None).expect("the program compiles");
        let def = program
            .defs
            .iter()
            .find(|d| d.name == def)
            .expect("defined");
        count(&program.codes[def.code as usize].body)
    }

    /// An `Option` matched at once with its two arms, and read nowhere else
    /// (an arm's own `found` is another variable), is no local; one an arm
    /// reads, one matched with a guard, and a list all keep theirs. The
    /// goldens of `tests/eval.rs` give the same answers either way.
    #[test]
    fn an_option_matched_at_once_is_matched_where_it_is_made() {
        assert_eq!(lets_in("found_or"), 0);
        assert_eq!(lets_in("shadowed"), 0);
        assert_eq!(lets_in("kept"), 1);
        assert_eq!(lets_in("guarded"), 1);
        assert_eq!(lets_in("first_or"), 1);
    }
}
