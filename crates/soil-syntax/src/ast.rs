//! The Soil syntax tree: what the parser produces and the printer, type checker,
//! interpreter and `.tr` parser consume.
//!
//! Shape, top down:
//! - a [`SourceFile`] is a list of [`Item`]s: [`TypeDecl`], [`Signature`] or
//!   [`Equation`] (spec §7);
//! - types are [`Type`] (spec §3): names, variables, application, tuples, unit and
//!   arrows whose parameter may be named and whose effect row ([`EffectRow`]) holds
//!   labels and row variables;
//! - expressions are [`Expr`] (spec §5), patterns [`Pattern`] (spec §6).
//!
//! Every node carries a `span`: a byte range relative to the text that was parsed
//! (callers that parse a fragment of a larger file shift spans with
//! [`Spanned::shift_spans`]). Parentheses leave no node behind: `(e)` is `e`, so the
//! tree is what the canonical printer needs and nothing else. Nodes derive `Eq` and
//! `Hash` including their spans; compare trees modulo layout with
//! [`Spanned::without_spans`].
//!
//! Conventions consumers rely on:
//! - Constructor application is ordinary application: `Some x` is
//!   `App { func: Constructor(Some), args: [x] }`; a constructor with an inline record
//!   payload, or a record type built by name, is [`ExprKind::Record`].
//! - A field written by punning (`Row { line }`) has `value: None`; it means
//!   `line = line`.
//! - A minus sign written directly before an integer or float literal folds into the
//!   literal (`-5` is `Literal(Int(-5))`); any other `-e` is `Unary { Neg, e }`.

use trellis_diag::TextRange;

/// A lower- or upper-case identifier (or a hole or field name) with its span.
/// `text` never includes sigils: the hole `?gap` has the name `gap`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub text: String,
    pub span: TextRange,
}

/// A whole `.soil` file (spec §7).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceFile {
    pub items: Vec<Item>,
    pub span: TextRange,
}

/// A top-level item (spec §7). An equation is shared, not copied, by
/// whatever keeps it beyond its file's parse (a definition's memo holds the
/// same one while the parse lives).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    TypeDecl(TypeDecl),
    Signature(Signature),
    Equation(std::sync::Arc<Equation>),
}

impl Item {
    /// The name the item declares or defines.
    pub fn name(&self) -> &Ident {
        match self {
            Item::TypeDecl(decl) => &decl.name,
            Item::Signature(sig) => &sig.name,
            Item::Equation(eq) => &eq.name,
        }
    }

    pub fn span(&self) -> TextRange {
        match self {
            Item::TypeDecl(decl) => decl.span,
            Item::Signature(sig) => sig.span,
            Item::Equation(eq) => eq.span,
        }
    }
}

/// `type Name params = body` (spec §4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TypeDecl {
    pub name: Ident,
    /// Lower-case type parameters, in order.
    pub params: Vec<Ident>,
    pub body: TypeDeclBody,
    pub span: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeDeclBody {
    /// `type Row = { line : I64, cells : List F64 }`: a nominal record.
    Record(Vec<FieldDecl>),
    /// `type E = A | B I64 | C { x : I64 }`: a sum, at least one variant.
    Sum(Vec<Variant>),
    /// `type Fs` with no `=`: an opaque type supplied by the toolchain (capabilities).
    Opaque,
}

/// `name : Type` inside a record declaration or inline-record payload.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: Type,
    pub span: TextRange,
}

/// One alternative of a sum declaration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub name: Ident,
    pub payload: VariantPayload,
    pub span: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum VariantPayload {
    /// `EmptyLine`
    None,
    /// `BadArity I64`: exactly one positional payload type.
    Positional(Type),
    /// `BadCell { index : I64, raw : Utf8 }`
    Record(Vec<FieldDecl>),
}

/// `name : Type` (spec §7; the contents of a `.tr` `soil-sig` block).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    pub name: Ident,
    pub ty: Type,
    pub span: TextRange,
}

/// `name p1 p2 = body` (spec §7).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Equation {
    pub name: Ident,
    pub params: Vec<Param>,
    pub body: Expr,
    pub span: TextRange,
}

/// A parameter of an equation, lambda or local function: a name or `_`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    Named(Ident),
    Wildcard(TextRange),
}

impl Param {
    pub fn span(&self) -> TextRange {
        match self {
            Param::Named(ident) => ident.span,
            Param::Wildcard(span) => *span,
        }
    }
}

/// A type (spec §3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    pub kind: TypeKind,
    pub span: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// An upper-case type name with no arguments: `I64`, `Row`, `Fs`.
    Named(Ident),
    /// A lower-case type variable: `a`.
    Var(Ident),
    /// `List a`, `Map k v`: an upper-case head applied to one or more arguments.
    App { head: Ident, args: Vec<Type> },
    /// `(A, B)`, two or more elements.
    Tuple(Vec<Type>),
    /// `()`
    Unit,
    /// `(name : param) ->{row} result`, `param -> result`.
    Function(Box<FunctionType>),
}

/// One arrow of a (curried) function type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionType {
    /// The parameter's name when written `(name : T) -> ...`.
    pub param_name: Option<Ident>,
    pub param: Type,
    pub effects: EffectRow,
    pub result: Type,
}

/// The effect row on an arrow: `->{Fs, Panic}`, `->{e}`, or nothing (`->`, the empty
/// row). Labels are upper-case names, row variables lower-case; the canonical
/// printer writes labels first, then variables, each in source order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EffectRow {
    pub labels: Vec<Ident>,
    pub vars: Vec<Ident>,
    pub span: TextRange,
}

impl EffectRow {
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.vars.is_empty()
    }
}

/// An expression (spec §5).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExprKind {
    Literal(Literal),
    /// A lower-case name: local, parameter or top-level definition.
    Var(Ident),
    /// `module::name`
    Qualified {
        module: Ident,
        name: Ident,
    },
    /// An upper-case constructor name; applied with [`ExprKind::App`].
    Constructor(Ident),
    /// `?name`
    Hole(Ident),
    /// `f x y`: one node for the whole spine, `args` non-empty.
    App {
        func: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `\x y -> body`
    Lambda {
        params: Vec<Param>,
        body: Box<Expr>,
    },
    Let(Box<LetExpr>),
    If {
        cond: Box<Expr>,
        then_branch: Box<Expr>,
        else_branch: Box<Expr>,
    },
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<MatchArm>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    /// `Row { line = 1, cells }`: a record type or inline-record variant built by name.
    Record {
        name: Ident,
        fields: Vec<FieldInit>,
    },
    /// `{ r with cells = [] }`
    Update {
        record: Box<Expr>,
        fields: Vec<FieldInit>,
    },
    /// `r.cells`
    Field {
        record: Box<Expr>,
        field: Ident,
    },
    /// `[a, b]`
    List(Vec<Expr>),
    /// `(a, b)`, two or more elements.
    Tuple(Vec<Expr>),
    /// `(e : T)`
    Annot {
        expr: Box<Expr>,
        ty: Type,
    },
    /// `a implies b` (predicates only, spec §11).
    Implies {
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `e is Pattern` (predicates only, spec §11).
    Is {
        expr: Box<Expr>,
        pattern: Box<Pattern>,
    },
}

/// `let binder = value in body`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LetExpr {
    pub binder: LetBinder,
    pub value: Expr,
    pub body: Expr,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LetBinder {
    /// `let x = ...`
    Var(Ident),
    /// `let go acc xs = ...`: a local function, in scope in its own body.
    Function { name: Ident, params: Vec<Param> },
    /// `let (a, b) = ...`: an irrefutable destructuring pattern (also `let _ = ...`).
    Pattern(Pattern),
}

/// `| pattern if guard -> body`
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MatchArm {
    pub pattern: Pattern,
    pub guard: Option<Expr>,
    pub body: Expr,
    pub span: TextRange,
}

/// `field = value`, or the pun `field` (`value: None`, meaning `field = field`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldInit {
    pub name: Ident,
    pub value: Option<Expr>,
    pub span: TextRange,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Or,
    And,
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

impl BinOp {
    pub const ALL: &'static [BinOp] = &[
        BinOp::Or,
        BinOp::And,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Concat,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
    ];

    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "or",
            BinOp::And => "and",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Concat => "++",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `not e`
    Not,
    /// `-e`
    Neg,
}

/// A literal value. Floats are stored as IEEE bits so the tree stays `Eq + Hash`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Literal {
    /// `42`, `-7` (I64).
    Int(i64),
    /// `42u` (U64).
    UInt(u64),
    /// `1.5`, `2e10` (F64), as `f64::to_bits`.
    Float(u64),
    /// The decoded string value (escapes resolved).
    Str(String),
    Bool(bool),
    /// `()`
    Unit,
}

impl Literal {
    /// The value of a `Float` literal.
    pub fn float_value(&self) -> Option<f64> {
        match self {
            Literal::Float(bits) => Some(f64::from_bits(*bits)),
            _ => None,
        }
    }
}

/// A pattern (spec §6).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PatternKind {
    /// `_`
    Wildcard,
    /// `x`: binds.
    Var(Ident),
    /// `0`, `-1`, `"a"`, `true`, `()`.
    Literal(Literal),
    /// `None`, `Some p`: a variant with no payload or one positional payload.
    Constructor {
        name: Ident,
        payload: Option<Box<Pattern>>,
    },
    /// `BadCell { index, raw = r }`, `Row { line, .. }`.
    Record {
        name: Ident,
        fields: Vec<FieldPattern>,
        rest: bool,
    },
    /// `(a, b)`, two or more elements.
    Tuple(Vec<Pattern>),
    /// `[]`, `[x, y]`, `[x, ..rest]`, `[x, ..]`.
    List {
        elements: Vec<Pattern>,
        rest: Option<ListRest>,
    },
}

/// `field = pattern`, or the pun `field` (`pattern: None`, binding `field`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldPattern {
    pub name: Ident,
    pub pattern: Option<Pattern>,
    pub span: TextRange,
}

/// The `..rest` (binding the remaining elements) or `..` tail of a list pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ListRest {
    pub binder: Option<Ident>,
    pub span: TextRange,
}

pub use crate::spans::Spanned;
