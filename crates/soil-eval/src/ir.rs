//! The resolved program the interpreter walks: locals are frame slots,
//! definitions and builtins are indices, constructors and fields are resolved
//! through the type environment. Holds no `Rc`, so a compiled program is
//! `Send + Sync` and can be run on a dedicated evaluation thread.

use soil_rt::prelude as ids;
use soil_rt::{ShapeId, TypeId};
use trellis_diag::TextRange;

use crate::builtins::BuiltinId;

/// Index of a [`Code`] (a definition body, lambda body or clause) in the program.
pub type CodeId = u32;
/// Index of a top-level definition.
pub type DefId = u32;
/// A frame slot.
pub type Slot = u32;

/// One function body (or a clause evaluated in its definition's frame).
#[derive(Debug)]
pub struct Code {
    /// Shown in the panic chain (the definition's name, or a clause label).
    pub name: String,
    /// Index of the file the code's spans point into.
    pub file: Option<u32>,
    pub arity: u32,
    /// Slots the frame needs: parameters first, then captures, self, locals.
    pub frame_size: u32,
    /// Where each captured value goes in this code's frame.
    pub capture_slots: Box<[Slot]>,
    /// Where the closure itself goes (local recursive functions).
    pub self_slot: Option<Slot>,
    /// Requires/ensures guards of a definition body, checked on every call.
    pub clauses: Option<Box<Clauses>>,
    pub body: Expr,
}

/// A definition's runtime guards, evaluated in its frame.
#[derive(Debug)]
pub struct Clauses {
    pub requires: Vec<ClauseIr>,
    pub ensures: Vec<ClauseIr>,
    /// Where the result is stored for the ensures clauses.
    pub result_slot: Slot,
}

#[derive(Debug)]
pub struct ClauseIr {
    /// A placeholder code naming the clause in panic chains.
    pub code: CodeId,
    pub expr: Expr,
    pub span: TextRange,
}

/// A literal that needs an allocation; materialised once per run.
#[derive(Debug)]
pub enum Const {
    Str(Box<str>),
}

#[derive(Debug)]
pub enum Expr {
    Unit,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Const(u32),
    Local(Slot),
    /// The last read of a slot on its path: moves the value out, so a list
    /// built by an accumulator stays uniquely owned and grows in place.
    LocalMove(Slot),
    /// The list in a local without its first `skip` elements: the rest of a
    /// `[x, ..rest]` match read where it is used instead of bound by the
    /// match (rests.rs). `moved` marks the local's last read.
    RestOf {
        slot: Slot,
        skip: u32,
        moved: bool,
    },
    /// A definition used as a value (a constant is evaluated; a function becomes a function value).
    Global(DefId),
    /// A builtin used as a value (arity-0 builtins are evaluated).
    Builtin(BuiltinId),
    /// A constructor with a positional payload used as a function value.
    ConstructorFn {
        ty: TypeId,
        tag: u32,
    },
    CallGlobal {
        def: DefId,
        args: Box<[Expr]>,
        span: TextRange,
    },
    CallBuiltin {
        builtin: BuiltinId,
        args: Box<[Expr]>,
        span: TextRange,
    },
    Call {
        func: Box<Expr>,
        args: Box<[Expr]>,
        /// Set on a local loop's call to itself (loops.rs): how each
        /// argument reaches its parameter when the call reuses the frame.
        loop_plan: Option<Box<[Handoff]>>,
        span: TextRange,
    },
    Closure {
        code: CodeId,
        captures: Box<[Slot]>,
    },
    Let {
        slot: Slot,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// Clears `slots` (locals that are dead from here on, at the start of a
    /// branch or right after a binding nobody reads), then continues with
    /// `body`: what they held is released now, not when the frame ends, so a
    /// list or map they shared becomes uniquely held again.
    Release {
        slots: Box<[Slot]>,
        body: Box<Expr>,
    },
    LetPattern {
        pattern: Pat,
        value: Box<Expr>,
        body: Box<Expr>,
        span: TextRange,
    },
    If {
        cond: Box<Expr>,
        then_branch: Box<Expr>,
        else_branch: Box<Expr>,
    },
    Match {
        scrutinee: Box<Expr>,
        arms: Box<[Arm]>,
        /// Which arm selection fits the arms, decided once when compiled.
        kind: MatchKind,
        span: TextRange,
    },
    Binary {
        op: Op,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
        span: TextRange,
    },
    /// `local <op> integer literal` (`n - 1`, `n < 2`, `i + 1`): the commonest
    /// operator shape of recursions and loops, fused so an `I64` local is
    /// decided in one step instead of two operand evaluations and a dispatch.
    /// `moved` marks the slot's last read (see [`Expr::LocalMove`]);
    /// `literal_first` marks `2 * i` and `1 + i` (`+` and `*` only), whose
    /// operands a failing operator reports in their written order.
    LocalOpI64 {
        op: Op,
        slot: Slot,
        moved: bool,
        literal: i64,
        literal_first: bool,
        span: TextRange,
    },
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>, TextRange),
    Variant {
        ty: TypeId,
        tag: u32,
        payload: Option<Box<Expr>>,
    },
    Record {
        shape: ShapeId,
        fields: Box<[Expr]>,
    },
    /// `r.name`: the index is found by the record's shape among the candidates.
    Field {
        record: Box<Expr>,
        candidates: Box<[(ShapeId, u32)]>,
        name: Box<str>,
        span: TextRange,
    },
    Update {
        record: Box<Expr>,
        fields: Box<[FieldUpdate]>,
        /// The replaced fields the new values read, fetched before them
        /// (see field_reuse.rs).
        prefetch: Option<Box<Prefetch>>,
        span: TextRange,
    },
    List(Box<[Expr]>),
    Tuple(Box<[Expr]>),
    /// `e is Pattern` (predicates).
    Is(Box<Expr>, Pat),
    /// Never evaluated: runs of definitions reaching a hole are refused first.
    Hole(Box<str>, TextRange),
}

/// How a local loop's call to itself hands argument `i` to parameter `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handoff {
    /// The argument is parameter `i` moved: it stays where it is.
    Stays,
    /// No later argument reads parameter `i`: evaluated straight into it.
    Direct,
    /// The argument is `push` of parameter `i` (its last read) and an item
    /// that leaves parameter `i` alone, and no later argument reads it: the
    /// item is pushed onto the list where it is.
    Appends,
    /// A later argument reads parameter `i`: evaluated aside on the stack
    /// and stored once every argument is evaluated.
    Deferred,
    /// The argument is parameter `i`'s rest (`RestOf` on its last read) and
    /// no later argument reads it: the list is shortened where it is.
    Advances(u32),
}

/// The fields of `{ r with ... }` (`r` the local `source`) that the new
/// values read, each fetched into its own slot before they are evaluated.
#[derive(Debug)]
pub struct Prefetch {
    pub source: Slot,
    /// Move the fields out of the record (set by liveness when `source`
    /// dies at the update); otherwise they are cloned.
    pub take: bool,
    pub fields: Box<[FetchedField]>,
}

/// A replaced field an update's new values read, and the slot it goes to.
#[derive(Debug)]
pub struct FetchedField {
    pub slot: Slot,
    pub candidates: Box<[(ShapeId, u32)]>,
    pub name: Box<str>,
}

#[derive(Debug)]
pub struct FieldUpdate {
    pub candidates: Box<[(ShapeId, u32)]>,
    pub name: Box<str>,
    pub value: Expr,
}

/// How a `match` selects its arm, from the shape of its arms (decided when
/// the match is compiled, and again after liveness has turned the variables
/// nobody reads into wildcards).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    /// The scrutinee is evaluated to a value and each arm tried in turn.
    General,
    /// Every arm is a pair pattern or `_`: a pair literal scrutinee is never
    /// built, its two values are matched directly.
    Pairs,
    /// Every arm is an unguarded list pattern of variables and wildcards
    /// (`[]`, `[x, ..rest]`): a list local still read later is taken apart
    /// where it is, in its slot.
    Lists,
    /// The two unguarded arms `[]` and `[x, ..rest]` (in either order, `x`
    /// and `rest` variables or wildcards), the arms at these indices: a list
    /// local is decided by its length alone. `head` and `rest` are the slots
    /// `x` and `rest` bind ([`NO_SLOT`] for a wildcard).
    EmptyOrCons {
        empty: u8,
        cons: u8,
        head: Slot,
        rest: Slot,
    },
    /// The two unguarded arms `Some x` and `None` (the second may be `_`),
    /// in either order, `x` a variable or a wildcard, the arms at these
    /// indices: an `Option` is decided by its tag alone, and `match map_get
    /// key m with` looks the key up without building the `Option` at all.
    /// `payload` is the slot `x` binds ([`NO_SLOT`] for a wildcard).
    SomeOrNone { some: u8, none: u8, payload: Slot },
}

/// No slot: a wildcard in [`MatchKind::EmptyOrCons`].
pub const NO_SLOT: Slot = Slot::MAX;

impl MatchKind {
    pub fn of(arms: &[Arm]) -> MatchKind {
        let pair = |arm: &Arm| match &arm.pattern {
            Pat::Tuple(patterns) => patterns.len() == 2,
            Pat::Wild => true,
            _ => false,
        };
        let list = |arm: &Arm| {
            arm.guard.is_none()
                && matches!(&arm.pattern, Pat::List { elements, .. }
                    if elements.iter().all(|p| matches!(p, Pat::Wild | Pat::Bind(_))))
        };
        let empty = |arm: &Arm| {
            arm.guard.is_none()
                && matches!(&arm.pattern, Pat::List { elements, rest: None } if elements.is_empty())
        };
        let cons = |arm: &Arm| {
            list(arm)
                && matches!(&arm.pattern, Pat::List { elements, rest: Some(_) } if elements.len() == 1)
        };
        let empty_or_cons = |empty: u8, cons: u8| {
            let (head, rest) = match &arms[cons as usize].pattern {
                Pat::List { elements, rest } => (
                    match elements.first() {
                        Some(Pat::Bind(slot)) => *slot,
                        _ => NO_SLOT,
                    },
                    match rest {
                        Some(Some(slot)) => *slot,
                        _ => NO_SLOT,
                    },
                ),
                _ => (NO_SLOT, NO_SLOT),
            };
            MatchKind::EmptyOrCons {
                empty,
                cons,
                head,
                rest,
            }
        };
        match arms {
            [a, b] if empty(a) && cons(b) => return empty_or_cons(0, 1),
            [a, b] if cons(a) && empty(b) => return empty_or_cons(1, 0),
            _ => {}
        }
        let some = |arm: &Arm| match &arm.pattern {
            Pat::Variant {
                ty: ids::OPTION,
                tag: ids::SOME,
                payload: Some(payload),
            } if arm.guard.is_none() => match **payload {
                Pat::Bind(slot) => Some(slot),
                Pat::Wild => Some(NO_SLOT),
                _ => None,
            },
            _ => None,
        };
        let none = |arm: &Arm, last: bool| {
            arm.guard.is_none()
                && match &arm.pattern {
                    Pat::Variant {
                        ty: ids::OPTION,
                        tag: ids::NONE,
                        payload: None,
                    } => true,
                    Pat::Wild => last,
                    _ => false,
                }
        };
        if let [a, b] = arms {
            let found = match (some(a), some(b)) {
                (Some(payload), _) if none(b, true) => Some((0, 1, payload)),
                (_, Some(payload)) if none(a, false) => Some((1, 0, payload)),
                _ => None,
            };
            if let Some((some, none, payload)) = found {
                return MatchKind::SomeOrNone {
                    some,
                    none,
                    payload,
                };
            }
        }
        if arms.iter().all(pair) {
            MatchKind::Pairs
        } else if arms.iter().all(list) {
            MatchKind::Lists
        } else {
            MatchKind::General
        }
    }
}

#[derive(Debug)]
pub struct Arm {
    pub pattern: Pat,
    pub guard: Option<Expr>,
    pub body: Expr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Concat,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug)]
pub enum Pat {
    Wild,
    Bind(Slot),
    Unit,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(Box<str>),
    Variant {
        ty: TypeId,
        tag: u32,
        payload: Option<Box<Pat>>,
    },
    /// A record (or inline-record payload) pattern: `(field index, pattern)`.
    Record {
        fields: Box<[(u32, Pat)]>,
    },
    Tuple(Box<[Pat]>),
    /// `[p1, p2]` (`rest: None`), `[p1, ..]` (`Some(None)`), `[p1, ..rest]` (`Some(Some(slot))`).
    List {
        elements: Box<[Pat]>,
        rest: Option<Option<Slot>>,
    },
}

impl Expr {
    /// Calls `f` on each direct sub-expression.
    pub(crate) fn each_child(&self, f: &mut impl FnMut(&Expr)) {
        match self {
            Expr::Unit
            | Expr::Bool(_)
            | Expr::I64(_)
            | Expr::U64(_)
            | Expr::F64(_)
            | Expr::Const(_)
            | Expr::Local(_)
            | Expr::LocalMove(_)
            | Expr::RestOf { .. }
            | Expr::LocalOpI64 { .. }
            | Expr::Global(_)
            | Expr::Builtin(_)
            | Expr::ConstructorFn { .. }
            | Expr::Closure { .. }
            | Expr::Hole(..) => {}
            Expr::CallGlobal { args, .. } | Expr::CallBuiltin { args, .. } => {
                args.iter().for_each(f)
            }
            Expr::Call { func, args, .. } => {
                f(func);
                args.iter().for_each(f);
            }
            Expr::Let { value, body, .. } | Expr::LetPattern { value, body, .. } => {
                f(value);
                f(body);
            }
            Expr::Release { body, .. } => f(body),
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                f(cond);
                f(then_branch);
                f(else_branch);
            }
            Expr::Match {
                scrutinee, arms, ..
            } => {
                f(scrutinee);
                for arm in arms.iter() {
                    if let Some(guard) = &arm.guard {
                        f(guard);
                    }
                    f(&arm.body);
                }
            }
            Expr::Binary { lhs, rhs, .. } | Expr::And(lhs, rhs) | Expr::Or(lhs, rhs) => {
                f(lhs);
                f(rhs);
            }
            Expr::Not(e) | Expr::Neg(e, _) | Expr::Is(e, _) => f(e),
            Expr::Variant { payload, .. } => {
                if let Some(p) = payload {
                    f(p);
                }
            }
            Expr::Record { fields, .. } => fields.iter().for_each(f),
            Expr::Field { record, .. } => f(record),
            Expr::Update { record, fields, .. } => {
                f(record);
                fields.iter().for_each(|u| f(&u.value));
            }
            Expr::List(items) | Expr::Tuple(items) => items.iter().for_each(f),
        }
    }

    /// [`Self::each_child`], mutably.
    pub(crate) fn each_child_mut(&mut self, f: &mut impl FnMut(&mut Expr)) {
        match self {
            Expr::Unit
            | Expr::Bool(_)
            | Expr::I64(_)
            | Expr::U64(_)
            | Expr::F64(_)
            | Expr::Const(_)
            | Expr::Local(_)
            | Expr::LocalMove(_)
            | Expr::RestOf { .. }
            | Expr::LocalOpI64 { .. }
            | Expr::Global(_)
            | Expr::Builtin(_)
            | Expr::ConstructorFn { .. }
            | Expr::Closure { .. }
            | Expr::Hole(..) => {}
            Expr::CallGlobal { args, .. } | Expr::CallBuiltin { args, .. } => {
                args.iter_mut().for_each(f)
            }
            Expr::Call { func, args, .. } => {
                f(func);
                args.iter_mut().for_each(f);
            }
            Expr::Let { value, body, .. } | Expr::LetPattern { value, body, .. } => {
                f(value);
                f(body);
            }
            Expr::Release { body, .. } => f(body),
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                f(cond);
                f(then_branch);
                f(else_branch);
            }
            Expr::Match {
                scrutinee, arms, ..
            } => {
                f(scrutinee);
                for arm in arms.iter_mut() {
                    if let Some(guard) = &mut arm.guard {
                        f(guard);
                    }
                    f(&mut arm.body);
                }
            }
            Expr::Binary { lhs, rhs, .. } | Expr::And(lhs, rhs) | Expr::Or(lhs, rhs) => {
                f(lhs);
                f(rhs);
            }
            Expr::Not(e) | Expr::Neg(e, _) | Expr::Is(e, _) => f(e),
            Expr::Variant { payload, .. } => {
                if let Some(p) = payload {
                    f(p);
                }
            }
            Expr::Record { fields, .. } => fields.iter_mut().for_each(f),
            Expr::Field { record, .. } => f(record),
            Expr::Update { record, fields, .. } => {
                f(record);
                fields.iter_mut().for_each(|u| f(&mut u.value));
            }
            Expr::List(items) | Expr::Tuple(items) => items.iter_mut().for_each(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(pattern: Pat, guard: Option<Expr>) -> Arm {
        Arm {
            pattern,
            guard,
            body: Expr::Unit,
        }
    }

    fn some(payload: Pat) -> Pat {
        Pat::Variant {
            ty: ids::OPTION,
            tag: ids::SOME,
            payload: Some(Box::new(payload)),
        }
    }

    const NONE: Pat = Pat::Variant {
        ty: ids::OPTION,
        tag: ids::NONE,
        payload: None,
    };

    /// `Some x` and `None` (or a last `_`), unguarded, in either order, are
    /// decided by the tag; anything else keeps the general arm loop.
    #[test]
    fn some_and_none_arms_are_decided_by_the_tag() {
        let kind = |arms: Vec<Arm>| MatchKind::of(&arms);
        let by_tag = |some, none, payload| MatchKind::SomeOrNone {
            some,
            none,
            payload,
        };
        assert_eq!(
            kind(vec![arm(some(Pat::Bind(3)), None), arm(NONE, None)]),
            by_tag(0, 1, 3)
        );
        assert_eq!(
            kind(vec![arm(NONE, None), arm(some(Pat::Wild), None)]),
            by_tag(1, 0, NO_SLOT)
        );
        assert_eq!(
            kind(vec![arm(some(Pat::Bind(2)), None), arm(Pat::Wild, None)]),
            by_tag(0, 1, 2)
        );
        let general = [
            // A first `_` takes everything: the `Some` arm is never reached.
            vec![arm(Pat::Wild, None), arm(some(Pat::Bind(2)), None)],
            vec![
                arm(some(Pat::Bind(2)), Some(Expr::Bool(true))),
                arm(NONE, None),
            ],
            vec![arm(some(Pat::I64(1)), None), arm(NONE, None)],
            vec![arm(some(Pat::Bind(2)), None), arm(some(Pat::Wild), None)],
        ];
        for arms in general {
            assert_eq!(kind(arms), MatchKind::General);
        }
    }
}
