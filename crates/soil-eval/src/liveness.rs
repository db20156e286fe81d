//! Last-use analysis: a local read that no later evaluation on its path needs
//! becomes a move, so values built by accumulators (`push acc x`, `acc ++ ys`)
//! stay uniquely owned and are extended in place instead of copied.

use crate::ir::{Expr, Pat};

/// Rewrites last reads in `expr` to moves. `live` holds, per slot, whether a
/// later evaluation reads it; on return it holds what is live before `expr`.
pub(crate) fn mark_moves(expr: &mut Expr, live: &mut Vec<bool>) {
    match expr {
        Expr::Local(slot) => {
            let slot = *slot;
            if !is_live(live, slot) {
                *expr = Expr::LocalMove(slot);
            }
            set(live, slot, true);
        }
        Expr::LocalMove(slot) => set(live, *slot, true),
        Expr::LocalOpI64 { slot, moved, .. } => {
            if !is_live(live, *slot) {
                *moved = true;
            }
            set(live, *slot, true);
        }
        Expr::Unit
        | Expr::Bool(_)
        | Expr::I64(_)
        | Expr::U64(_)
        | Expr::F64(_)
        | Expr::Const(_)
        | Expr::Global(_)
        | Expr::Builtin(_)
        | Expr::ConstructorFn { .. }
        | Expr::Hole(..) => {}
        Expr::CallGlobal { args, .. } | Expr::CallBuiltin { args, .. } => mark_all(args, live),
        Expr::List(items) | Expr::Tuple(items) => mark_all(items, live),
        Expr::Record { fields, .. } => mark_all(fields, live),
        Expr::Call { func, args, .. } => {
            mark_all(args, live);
            mark_moves(func, live);
        }
        Expr::Closure { captures, .. } => {
            for slot in captures.iter() {
                set(live, *slot, true);
            }
        }
        Expr::Let { slot, value, body } => {
            mark_moves(body, live);
            set(live, *slot, false);
            mark_moves(value, live);
        }
        Expr::LetPattern {
            pattern,
            value,
            body,
            ..
        } => {
            mark_moves(body, live);
            kill_bindings(pattern, live);
            mark_moves(value, live);
        }
        Expr::If {
            cond,
            then_branch,
            else_branch,
        } => {
            let mut other = live.clone();
            mark_moves(then_branch, live);
            mark_moves(else_branch, &mut other);
            union(live, &other);
            mark_moves(cond, live);
        }
        Expr::Match {
            scrutinee, arms, ..
        } => {
            let after = live.clone();
            // What must survive when an arm's pattern or guard fails and the
            // next arm is tried (nothing after the last arm: that is a panic).
            let mut fallthrough = vec![false; live.len()];
            for arm in arms.iter_mut().rev() {
                let mut arm_live = after.clone();
                mark_moves(&mut arm.body, &mut arm_live);
                if let Some(guard) = &mut arm.guard {
                    union(&mut arm_live, &fallthrough);
                    mark_moves(guard, &mut arm_live);
                }
                kill_bindings(&arm.pattern, &mut arm_live);
                union(&mut arm_live, &fallthrough);
                fallthrough = arm_live;
            }
            *live = fallthrough;
            mark_moves(scrutinee, live);
        }
        Expr::Binary { lhs, rhs, .. } => {
            mark_moves(rhs, live);
            mark_moves(lhs, live);
        }
        Expr::And(lhs, rhs) | Expr::Or(lhs, rhs) => {
            // The right operand may be skipped: what is live after the whole
            // expression stays live before it.
            let after = live.clone();
            mark_moves(rhs, live);
            union(live, &after);
            mark_moves(lhs, live);
        }
        Expr::Not(e) | Expr::Neg(e, _) => mark_moves(e, live),
        Expr::Variant { payload, .. } => {
            if let Some(p) = payload {
                mark_moves(p, live);
            }
        }
        Expr::Field { record, .. } => mark_moves(record, live),
        Expr::Update { record, fields, .. } => {
            for update in fields.iter_mut().rev() {
                mark_moves(&mut update.value, live);
            }
            mark_moves(record, live);
        }
        Expr::Is(e, pattern) => {
            kill_bindings(pattern, live);
            mark_moves(e, live);
        }
    }
}

fn mark_all(items: &mut [Expr], live: &mut Vec<bool>) {
    for item in items.iter_mut().rev() {
        mark_moves(item, live);
    }
}

fn is_live(live: &[bool], slot: u32) -> bool {
    live.get(slot as usize).copied().unwrap_or(false)
}

fn set(live: &mut Vec<bool>, slot: u32, value: bool) {
    let slot = slot as usize;
    if slot >= live.len() {
        live.resize(slot + 1, false);
    }
    live[slot] = value;
}

fn union(into: &mut Vec<bool>, other: &[bool]) {
    if other.len() > into.len() {
        into.resize(other.len(), false);
    }
    for (a, b) in into.iter_mut().zip(other) {
        *a |= *b;
    }
}

fn kill_bindings(pattern: &Pat, live: &mut Vec<bool>) {
    match pattern {
        Pat::Bind(slot) => set(live, *slot, false),
        Pat::Variant {
            payload: Some(p), ..
        } => kill_bindings(p, live),
        Pat::Record { fields } => fields.iter().for_each(|(_, p)| kill_bindings(p, live)),
        Pat::Tuple(items) => items.iter().for_each(|p| kill_bindings(p, live)),
        Pat::List { elements, rest } => {
            elements.iter().for_each(|p| kill_bindings(p, live));
            if let Some(Some(slot)) = rest {
                set(live, *slot, false);
            }
        }
        _ => {}
    }
}
