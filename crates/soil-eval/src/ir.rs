//! The resolved program the interpreter walks: locals are frame slots,
//! definitions and builtins are indices, constructors and fields are resolved
//! through the type environment. Holds no `Rc`, so a compiled program is
//! `Send + Sync` and can be run on a dedicated evaluation thread.

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
    /// `moved` marks the slot's last read (see [`Expr::LocalMove`]).
    LocalOpI64 {
        op: Op,
        slot: Slot,
        moved: bool,
        literal: i64,
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
        span: TextRange,
    },
    List(Box<[Expr]>),
    Tuple(Box<[Expr]>),
    /// `e is Pattern` (predicates).
    Is(Box<Expr>, Pat),
    /// Never evaluated: runs of definitions reaching a hole are refused first.
    Hole(Box<str>, TextRange),
}

#[derive(Debug)]
pub struct FieldUpdate {
    pub candidates: Box<[(ShapeId, u32)]>,
    pub name: Box<str>,
    pub value: Expr,
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
