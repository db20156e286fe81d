//! Local loops: a capture-free local function calling itself (`go` in
//! `let go out xs = ... go (push out x) rest in ...`) reuses its frame when
//! the call is in tail position (machine.rs). This pass plans, once per
//! call, how each argument reaches its parameter, so the loop writes its
//! arguments in place instead of through temporaries on the stack top.

use crate::builtins;
use crate::ir::{Expr, Handoff, Slot};

/// Plans every call in `body` (a code's body, not the bodies of closures it
/// builds, which are codes of their own) whose callee is the code's own
/// self slot with `arity` arguments. Run after liveness, which decides the
/// moves the plan relies on.
pub(crate) fn plan_loop_calls(body: &mut Expr, self_slot: Slot, arity: u32) {
    if let Expr::Call {
        func,
        args,
        loop_plan,
        ..
    } = body
        && let Expr::Local(slot) | Expr::LocalMove(slot) = **func
        && slot == self_slot
        && args.len() == arity as usize
    {
        *loop_plan = Some(handoffs(args));
    }
    body.each_child_mut(&mut |child| plan_loop_calls(child, self_slot, arity));
}

/// Argument `i` goes straight into parameter `i` unless a later argument
/// still needs the parameter's old value (or could clear it); the move of
/// parameter `i` into position `i` needs nothing at all, and `push` onto
/// it only the push.
fn handoffs(args: &[Expr]) -> Box<[Handoff]> {
    (0..args.len())
        .map(|i| {
            let slot = i as Slot;
            if matches!(args[i], Expr::LocalMove(s) if s == slot) {
                Handoff::Stays
            } else if args[i + 1..].iter().any(|later| touches(later, slot)) {
                Handoff::Deferred
            } else if appends_to(&args[i], slot) {
                Handoff::Appends
            } else if let Expr::RestOf {
                slot: s,
                skip,
                moved: true,
            } = args[i]
                && s == slot
            {
                Handoff::Advances(skip)
            } else {
                Handoff::Direct
            }
        })
        .collect()
}

/// Whether `arg` is `push` of `slot` on its last read and an item that
/// leaves `slot` alone (`go (push out x) ...` for parameter `out`).
fn appends_to(arg: &Expr, slot: Slot) -> bool {
    let Expr::CallBuiltin { builtin, args, .. } = arg else {
        return false;
    };
    builtins::lookup("push") == Some(*builtin)
        && matches!(&args[..], [Expr::LocalMove(s), item] if *s == slot && !touches(item, slot))
}

/// Whether evaluating `expr` may read or clear `slot`.
pub(crate) fn touches(expr: &Expr, slot: Slot) -> bool {
    let here = match expr {
        Expr::Local(s)
        | Expr::LocalMove(s)
        | Expr::RestOf { slot: s, .. }
        | Expr::LocalOpI64 { slot: s, .. } => *s == slot,
        Expr::Closure { captures, .. } => captures.contains(&slot),
        Expr::Release { slots, .. } => slots.contains(&slot),
        Expr::Update {
            prefetch: Some(prefetch),
            ..
        } => prefetch.source == slot,
        _ => false,
    };
    let mut below = false;
    expr.each_child(&mut |child| below = below || touches(child, slot));
    here || below
}
