//! Rests read where they are used: `match xs with | [x, ..rest] -> ...`
//! on a local `xs` binds `rest` as a view of `xs`'s storage, which the
//! branches that do not need it release again at once, and the branch that
//! passes it on (`go ... rest`) releases `xs` just before. When every path
//! through the arm either never reads `rest` or passes it as one argument
//! of a call right after releasing `xs`, `rest` is not bound at all: that
//! argument reads `xs`'s rest itself ([`Expr::RestOf`], moving `xs`), and
//! a local loop shortens its parameter in place (loops.rs). The storage's
//! owner count is the same at every step (one view, `xs` instead of
//! `rest`), so reuse and copies are unchanged. Runs after liveness, whose
//! moves and releases it reads.

use crate::ir::{Expr, MatchKind, NO_SLOT, Pat, Slot};
use crate::loops::touches;

/// Rewrites every `[x, ..rest]` match in `expr` whose rest can be read
/// where it is used.
pub(crate) fn sink_rests(expr: &mut Expr) {
    expr.each_child_mut(&mut sink_rests);
    let Expr::Match {
        scrutinee,
        arms,
        kind,
        ..
    } = expr
    else {
        return;
    };
    let (MatchKind::EmptyOrCons { cons, rest, .. }, Expr::Local(list)) = (*kind, &**scrutinee)
    else {
        return;
    };
    let (list, cons) = (*list, cons as usize);
    if rest == NO_SLOT || !rewrite(&mut arms[cons].body, list, rest, false) {
        return;
    }
    rewrite(&mut arms[cons].body, list, rest, true);
    if let Pat::List { rest, .. } = &mut arms[cons].pattern {
        *rest = Some(None);
    }
    *kind = MatchKind::of(arms);
}

/// Whether every path through `expr` lets `rest` (a view of the list in
/// `list`) go unbound; with `apply`, makes it so.
fn rewrite(expr: &mut Expr, list: Slot, rest: Slot, apply: bool) -> bool {
    if !touches(expr, rest) {
        return true;
    }
    match expr {
        Expr::Release { slots, .. } if slots.contains(&rest) => {
            // Dead from here: never bound, nothing to release.
            if apply {
                remove(expr, rest);
            }
            true
        }
        Expr::Release { slots, body } if slots.contains(&list) => {
            // `list` dies here and `rest` lives on: the call right after
            // must pass `rest` on, and touch neither otherwise.
            let Some(at) = passed_once(body, list, rest) else {
                return false;
            };
            if apply {
                if let Some(args) = call_args(body) {
                    args[at] = Expr::RestOf {
                        slot: list,
                        skip: 1,
                        moved: true,
                    };
                }
                remove(expr, list);
            }
            true
        }
        Expr::Release { body, .. } => rewrite(body, list, rest, apply),
        Expr::If {
            cond,
            then_branch,
            else_branch,
        } => {
            !touches(cond, list)
                && !touches(cond, rest)
                && rewrite(then_branch, list, rest, apply)
                && rewrite(else_branch, list, rest, apply)
        }
        Expr::Match {
            scrutinee, arms, ..
        } => {
            !touches(scrutinee, list)
                && !touches(scrutinee, rest)
                && arms.iter_mut().all(|arm| {
                    arm.guard
                        .as_ref()
                        .is_none_or(|g| !touches(g, list) && !touches(g, rest))
                        && rewrite(&mut arm.body, list, rest, apply)
                })
        }
        _ => false,
    }
}

/// The arguments of a call.
fn call_args(expr: &mut Expr) -> Option<&mut [Expr]> {
    match expr {
        Expr::Call { args, .. }
        | Expr::CallGlobal { args, .. }
        | Expr::CallBuiltin { args, .. } => Some(args),
        _ => None,
    }
}

/// The position of the one argument of the call `expr` that moves `rest`,
/// if nothing else in the call touches `rest` or `list`.
fn passed_once(expr: &mut Expr, list: Slot, rest: Slot) -> Option<usize> {
    if let Expr::Call { func, .. } = expr
        && (touches(func, list) || touches(func, rest))
    {
        return None;
    }
    let args = call_args(expr)?;
    let at = args
        .iter()
        .position(|arg| matches!(arg, Expr::LocalMove(s) if *s == rest))?;
    let others_clear = args
        .iter()
        .enumerate()
        .all(|(i, arg)| i == at || !(touches(arg, list) || touches(arg, rest)));
    others_clear.then_some(at)
}

/// Takes `slot` out of the release `expr`, and the release away once it
/// releases nothing.
fn remove(expr: &mut Expr, slot: Slot) {
    let Expr::Release { slots, body } = expr else {
        return;
    };
    let kept: Box<[Slot]> = slots.iter().copied().filter(|s| *s != slot).collect();
    if kept.is_empty() {
        let body = std::mem::replace(&mut **body, Expr::Unit);
        *expr = body;
    } else {
        *slots = kept;
    }
}
