//! Last-use analysis: a local read that no later evaluation on its path needs
//! becomes a move, so values built by accumulators (`push acc x`, `acc ++ ys`)
//! stay uniquely owned and are extended in place instead of copied. Locals that
//! die without a last read are released where they die ([`Expr::Release`] at
//! the start of a branch that no longer needs them, or right after a `let` that
//! nobody reads), and pattern variables nobody reads are not bound at all: the
//! reuse of Perceus-style reference counting, so that taking a tuple or record
//! accumulator apart leaves the list or map inside it uniquely held.

use crate::ir::{Expr, MatchKind, Pat};

/// Marks the moves and releases of a function body whose first `params`
/// slots are its parameters; parameters it never reads are released on entry.
pub(crate) fn mark_function(body: &mut Expr, frame_size: u32, params: u32) {
    let mut live = vec![false; frame_size as usize];
    mark_moves(body, &mut live);
    let unread: Vec<u32> = (0..params).filter(|p| !is_live(&live, *p)).collect();
    release(body, unread);
}

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
        Expr::LocalMove(slot) | Expr::RestOf { slot, .. } => set(live, *slot, true),
        Expr::Release { slots, body } => {
            mark_moves(body, live);
            for slot in slots.iter() {
                set(live, *slot, false);
            }
        }
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
            if !is_live(live, *slot) {
                release(body, vec![*slot]);
            }
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
            let then_live = live.clone();
            union(live, &other);
            release(then_branch, dead_in(live, &then_live));
            release(else_branch, dead_in(live, &other));
            mark_moves(cond, live);
        }
        Expr::Match {
            scrutinee,
            arms,
            kind,
            ..
        } => {
            let after = live.clone();
            // What must survive when an arm's pattern or guard fails and the
            // next arm is tried (nothing after the last arm: that is a panic).
            let mut fallthrough = vec![false; live.len()];
            let mut body_lives = Vec::with_capacity(arms.len());
            for arm in arms.iter_mut().rev() {
                let mut arm_live = after.clone();
                mark_moves(&mut arm.body, &mut arm_live);
                body_lives.push(arm_live.clone());
                if let Some(guard) = &mut arm.guard {
                    union(&mut arm_live, &fallthrough);
                    mark_moves(guard, &mut arm_live);
                }
                kill_bindings(&mut arm.pattern, &mut arm_live);
                union(&mut arm_live, &fallthrough);
                fallthrough = arm_live;
            }
            // Entering an arm's body, release what the scrutinee's evaluation
            // left live for other arms or this arm's guard, and this arm's
            // pattern variables that only its guard reads.
            for (arm, body_live) in arms.iter_mut().zip(body_lives.iter().rev()) {
                let mut held = fallthrough.clone();
                bound_slots(&arm.pattern, &mut |slot| set(&mut held, slot, true));
                release(&mut arm.body, dead_in(&held, body_live));
            }
            *live = fallthrough;
            mark_moves(scrutinee, live);
            // The variables nobody reads are wildcards now: bind none of them.
            *kind = MatchKind::of(arms);
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
        Expr::Update {
            record,
            fields,
            prefetch,
            ..
        } => {
            if let Some(prefetch) = prefetch {
                prefetch.take = !is_live(live, prefetch.source);
            }
            for update in fields.iter_mut().rev() {
                mark_moves(&mut update.value, live);
            }
            mark_moves(record, live);
            if let Some(prefetch) = prefetch {
                for field in prefetch.fields.iter() {
                    set(live, field.slot, false);
                }
                set(live, prefetch.source, true);
            }
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

/// The slots held in `held` that are not in `live`.
fn dead_in(held: &[bool], live: &[bool]) -> Vec<u32> {
    held.iter()
        .enumerate()
        .filter(|(slot, held)| **held && !is_live(live, *slot as u32))
        .map(|(slot, _)| slot as u32)
        .collect()
}

/// Prefixes `expr` with the release of `slots` (nothing when there are none).
fn release(expr: &mut Expr, slots: Vec<u32>) {
    if slots.is_empty() {
        return;
    }
    let body = std::mem::replace(expr, Expr::Unit);
    *expr = Expr::Release {
        slots: slots.into(),
        body: Box::new(body),
    };
}

/// Ends the bindings of `pattern` (they are not live before it binds them);
/// a variable that is not live after the pattern is not bound at all.
fn kill_bindings(pattern: &mut Pat, live: &mut Vec<bool>) {
    match pattern {
        Pat::Bind(slot) => {
            if !is_live(live, *slot) {
                *pattern = Pat::Wild;
            } else {
                set(live, *slot, false);
            }
        }
        Pat::Variant {
            payload: Some(p), ..
        } => kill_bindings(p, live),
        Pat::Record { fields } => fields.iter_mut().for_each(|(_, p)| kill_bindings(p, live)),
        Pat::Tuple(items) => items.iter_mut().for_each(|p| kill_bindings(p, live)),
        Pat::List { elements, rest } => {
            elements.iter_mut().for_each(|p| kill_bindings(p, live));
            if let Some(Some(slot)) = rest {
                if is_live(live, *slot) {
                    set(live, *slot, false);
                } else {
                    *rest = Some(None);
                }
            }
        }
        _ => {}
    }
}

/// Every slot `pattern` binds.
pub(crate) fn bound_slots(pattern: &Pat, each: &mut impl FnMut(u32)) {
    match pattern {
        Pat::Bind(slot) => each(*slot),
        Pat::Variant {
            payload: Some(p), ..
        } => bound_slots(p, each),
        Pat::Record { fields } => fields.iter().for_each(|(_, p)| bound_slots(p, each)),
        Pat::Tuple(items) => items.iter().for_each(|p| bound_slots(p, each)),
        Pat::List { elements, rest } => {
            elements.iter().for_each(|p| bound_slots(p, each));
            if let Some(Some(slot)) = rest {
                each(*slot);
            }
        }
        _ => {}
    }
}
