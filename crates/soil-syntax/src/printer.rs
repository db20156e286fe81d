//! The canonical printer (spec §9): one layout for every tree, decided by the
//! tree's shape and never by line width, so printing a parsed canonical text gives
//! the same text back. With a binder environment it prints the hash form (spec
//! §9.1) instead; see `hash_form`.
//!
//! Layout in brief: `let`, `if` and `match` always break lines; everything else is
//! printed on one line. The "open" forms (`let`, `if`, `match`, lambdas), which
//! extend as far right as they can, are parenthesised in every position except
//! block positions (a body, a branch, a `let` value).

use std::fmt::Write as _;

use crate::ast::{
    EffectRow, Equation, Expr, ExprKind, FieldDecl, FieldInit, FieldPattern, Ident, Item,
    LetBinder, Literal, Param, Pattern, PatternKind, Signature, SourceFile, Type, TypeDecl,
    TypeDeclBody, TypeKind, UnaryOp, VariantPayload,
};
use crate::hash_form::BinderEnv;
use crate::parser::level;
use crate::visit::ScopeMark;

const INDENT: usize = 2;

pub(crate) struct Printer {
    out: String,
    indent: usize,
    /// Present in hash-form mode: numbers local binders.
    binders: Option<BinderEnv>,
}

impl Printer {
    pub(crate) fn canonical() -> Self {
        Self {
            out: String::new(),
            indent: 0,
            binders: None,
        }
    }

    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            out: String::with_capacity(capacity),
            indent: 0,
            binders: None,
        }
    }

    pub(crate) fn hash_form() -> Self {
        Self {
            out: String::new(),
            indent: 0,
            binders: Some(BinderEnv::default()),
        }
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn text(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn newline(&mut self) {
        const SPACES: &str = "                                                                ";
        self.out.push('\n');
        let mut remaining = self.indent;
        while remaining > 0 {
            let run = remaining.min(SPACES.len());
            self.out.push_str(&SPACES[..run]);
            remaining -= run;
        }
    }

    fn indented(&mut self, f: impl FnOnce(&mut Self)) {
        self.indent += INDENT;
        f(self);
        self.indent -= INDENT;
    }

    // ---- items ----------------------------------------------------------------

    pub(crate) fn file(&mut self, file: &SourceFile) {
        for (i, item) in file.items.iter().enumerate() {
            if i > 0 {
                self.text("\n");
            }
            self.item(item);
        }
    }

    /// One item followed by a newline.
    pub(crate) fn item(&mut self, item: &Item) {
        match item {
            Item::TypeDecl(decl) => self.type_decl(decl),
            Item::Signature(sig) => self.signature(sig),
            Item::Equation(eq) => self.equation(eq),
        }
        self.text("\n");
    }

    fn signature(&mut self, sig: &Signature) {
        self.text(&sig.name.text);
        self.text(" : ");
        self.ty(&sig.ty);
    }

    fn equation(&mut self, eq: &Equation) {
        let scope = self.scope_mark();
        self.text(&eq.name.text);
        for param in &eq.params {
            self.text(" ");
            self.bind_param(param);
        }
        self.text(" =");
        self.body_after_header(&eq.body);
        self.scope_reset(scope);
    }

    /// After `... =` or `... ->`: a flat body on the same line, anything else on
    /// the next line, indented.
    fn body_after_header(&mut self, body: &Expr) {
        // A lambda keeps its header on this line and indents only its own body.
        if is_flat(body) || matches!(body.kind, ExprKind::Lambda { .. }) {
            self.text(" ");
            self.expr(body, level::LOWEST);
        } else {
            self.indented(|p| {
                p.newline();
                p.expr(body, level::LOWEST);
            });
        }
    }

    pub(crate) fn type_decl(&mut self, decl: &TypeDecl) {
        self.text("type ");
        self.text(&decl.name.text);
        for param in &decl.params {
            self.text(" ");
            self.text(&param.text);
        }
        match &decl.body {
            TypeDeclBody::Opaque => {}
            TypeDeclBody::Record(fields) => {
                self.text(" = {");
                if !fields.is_empty() {
                    self.indented(|p| {
                        for (i, field) in fields.iter().enumerate() {
                            p.newline();
                            p.field_decl(field);
                            if i + 1 < fields.len() {
                                p.text(",");
                            }
                        }
                    });
                    self.newline();
                }
                self.text("}");
            }
            TypeDeclBody::Sum(variants) => {
                self.text(" =");
                self.indented(|p| {
                    for variant in variants {
                        p.newline();
                        p.text("| ");
                        p.text(&variant.name.text);
                        match &variant.payload {
                            VariantPayload::None => {}
                            VariantPayload::Positional(ty) => {
                                p.text(" ");
                                p.ty_at(ty, TypePrec::Atom);
                            }
                            VariantPayload::Record(fields) => {
                                p.text(" ");
                                p.inline_field_decls(fields);
                            }
                        }
                    }
                });
            }
        }
    }

    fn field_decl(&mut self, field: &FieldDecl) {
        self.text(&field.name.text);
        self.text(" : ");
        self.ty(&field.ty);
    }

    fn inline_field_decls(&mut self, fields: &[FieldDecl]) {
        if fields.is_empty() {
            self.text("{}");
            return;
        }
        self.text("{ ");
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                self.text(", ");
            }
            self.field_decl(field);
        }
        self.text(" }");
    }

    // ---- types ----------------------------------------------------------------

    pub(crate) fn ty(&mut self, ty: &Type) {
        self.ty_at(ty, TypePrec::Function);
    }

    fn ty_at(&mut self, ty: &Type, min: TypePrec) {
        let prec = match &ty.kind {
            TypeKind::Function(_) => TypePrec::Function,
            TypeKind::App { .. } => TypePrec::App,
            _ => TypePrec::Atom,
        };
        if prec < min {
            self.text("(");
            self.ty_at(ty, TypePrec::Function);
            self.text(")");
            return;
        }
        match &ty.kind {
            TypeKind::Named(name) | TypeKind::Var(name) => self.text(&name.text),
            TypeKind::App { head, args } => {
                self.text(&head.text);
                for arg in args {
                    self.text(" ");
                    self.ty_at(arg, TypePrec::Atom);
                }
            }
            TypeKind::Tuple(elements) => {
                self.text("(");
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 {
                        self.text(", ");
                    }
                    self.ty(element);
                }
                self.text(")");
            }
            TypeKind::Unit => self.text("()"),
            TypeKind::Function(function) => {
                match &function.param_name {
                    Some(name) => {
                        self.text("(");
                        self.text(&name.text);
                        self.text(" : ");
                        self.ty(&function.param);
                        self.text(")");
                    }
                    None => self.ty_at(&function.param, TypePrec::App),
                }
                self.text(" ->");
                self.effect_row(&function.effects);
                self.text(" ");
                self.ty(&function.result);
            }
        }
    }

    fn effect_row(&mut self, row: &EffectRow) {
        if row.is_empty() {
            return;
        }
        self.text("{");
        for (i, name) in row.labels.iter().chain(&row.vars).enumerate() {
            if i > 0 {
                self.text(", ");
            }
            self.text(&name.text);
        }
        self.text("}");
    }

    // ---- expressions ----------------------------------------------------------

    /// Prints `expr`, parenthesised if it binds more loosely than `min`.
    pub(crate) fn expr(&mut self, expr: &Expr, min: u8) {
        if precedence(expr) < min {
            self.parenthesised(expr);
            return;
        }
        match &expr.kind {
            ExprKind::Literal(literal) => self.literal(literal),
            ExprKind::Var(name) => self.occurrence(name),
            ExprKind::Qualified { module, name } => {
                self.text(&module.text);
                self.text("::");
                self.text(&name.text);
            }
            ExprKind::Constructor(name) => self.text(&name.text),
            ExprKind::Hole(name) => {
                self.text("?");
                self.text(&name.text);
            }
            ExprKind::App { func, args } => {
                self.expr(func, level::POSTFIX);
                for arg in args {
                    self.text(" ");
                    self.expr(arg, level::POSTFIX);
                }
            }
            ExprKind::Lambda { params, body } => {
                let scope = self.scope_mark();
                self.text("\\");
                for (i, param) in params.iter().enumerate() {
                    if i > 0 {
                        self.text(" ");
                    }
                    self.bind_param(param);
                }
                self.text(" ->");
                self.body_after_header(body);
                self.scope_reset(scope);
            }
            ExprKind::Let(let_expr) => {
                let scope = self.scope_mark();
                self.text("let ");
                match &let_expr.binder {
                    LetBinder::Var(name) => {
                        let number = self.number(name);
                        self.text(" =");
                        self.let_value(&let_expr.value);
                        self.push_binder(name, number);
                    }
                    LetBinder::Function { name, params } => {
                        let number = self.number(name);
                        self.push_binder(name, number);
                        let after_name = self.scope_mark();
                        for param in params {
                            self.text(" ");
                            self.bind_param(param);
                        }
                        self.text(" =");
                        self.let_value(&let_expr.value);
                        self.scope_reset(after_name);
                    }
                    LetBinder::Pattern(pattern) => {
                        let mut bound = Vec::new();
                        self.pattern(pattern, &mut bound);
                        self.text(" =");
                        self.let_value(&let_expr.value);
                        self.push_binders(bound);
                    }
                }
                self.newline();
                self.expr(&let_expr.body, level::LOWEST);
                self.scope_reset(scope);
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.text("if ");
                self.expr(cond, level::LOWEST + 1);
                self.text(" then");
                self.indented(|p| {
                    p.newline();
                    p.expr(then_branch, level::LOWEST);
                });
                self.newline();
                self.text("else");
                if matches!(else_branch.kind, ExprKind::If { .. }) {
                    self.text(" ");
                    self.expr(else_branch, level::LOWEST);
                } else {
                    self.indented(|p| {
                        p.newline();
                        p.expr(else_branch, level::LOWEST);
                    });
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                self.text("match ");
                self.expr(scrutinee, level::LOWEST + 1);
                self.text(" with");
                for arm in arms {
                    let scope = self.scope_mark();
                    self.newline();
                    self.text("| ");
                    let mut bound = Vec::new();
                    self.pattern(&arm.pattern, &mut bound);
                    self.push_binders(bound);
                    if let Some(guard) = &arm.guard {
                        self.text(" if ");
                        self.expr(guard, level::LOWEST + 1);
                    }
                    self.text(" ->");
                    self.body_after_header(&arm.body);
                    self.scope_reset(scope);
                }
                self.newline();
                self.text("end");
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let op_level = binary_level(*op);
                let (lhs_min, rhs_min) = operand_levels(op_level);
                self.expr(lhs, lhs_min);
                self.text(" ");
                self.text(op.symbol());
                self.text(" ");
                self.expr(rhs, rhs_min);
            }
            ExprKind::Implies { lhs, rhs } => {
                self.expr(lhs, level::IMPLIES + 1);
                self.text(" implies ");
                self.expr(rhs, level::IMPLIES);
            }
            ExprKind::Is { expr, pattern } => {
                self.expr(expr, level::COMPARE + 1);
                self.text(" is ");
                let mut bound = Vec::new();
                self.pattern(pattern, &mut bound);
            }
            ExprKind::Unary {
                op: UnaryOp::Not,
                operand,
            } => {
                self.text("not ");
                self.expr(operand, level::COMPARE);
            }
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => {
                self.text("-");
                if starts_with_number(operand) {
                    self.parenthesised(operand);
                } else {
                    self.expr(operand, level::APP);
                }
            }
            ExprKind::Record { name, fields } => {
                self.text(&name.text);
                self.text(" ");
                if fields.is_empty() {
                    self.text("{}");
                } else {
                    self.text("{ ");
                    self.field_inits(fields);
                    self.text(" }");
                }
            }
            ExprKind::Update { record, fields } => {
                self.text("{ ");
                self.expr(record, level::LOWEST + 1);
                self.text(" with ");
                self.field_inits(fields);
                self.text(" }");
            }
            ExprKind::Field { record, field } => {
                self.expr(record, level::POSTFIX);
                self.text(".");
                self.text(&field.text);
            }
            ExprKind::List(elements) => {
                self.text("[");
                self.comma_separated(elements);
                self.text("]");
            }
            ExprKind::Tuple(elements) => {
                self.text("(");
                self.comma_separated(elements);
                self.text(")");
            }
            ExprKind::Annot { expr, ty } => {
                self.text("(");
                self.expr(expr, level::LOWEST + 1);
                self.text(" : ");
                self.ty(ty);
                self.text(")");
            }
        }
    }

    /// `(e)`. Line-breaking forms open their own indented block inside the
    /// parentheses so the closing parenthesis stands on its own line.
    fn parenthesised(&mut self, expr: &Expr) {
        self.text("(");
        if matches!(
            expr.kind,
            ExprKind::Let(_) | ExprKind::If { .. } | ExprKind::Match { .. }
        ) {
            self.indented(|p| {
                p.newline();
                p.expr(expr, level::LOWEST);
            });
            self.newline();
        } else if matches!(expr.kind, ExprKind::Lambda { .. }) && !is_flat(expr) {
            // A multi-line lambda argument closes on its own line.
            self.expr(expr, level::LOWEST);
            self.newline();
        } else {
            self.expr(expr, level::LOWEST);
        }
        self.text(")");
    }

    /// After `let x =`: the value and `in`.
    fn let_value(&mut self, value: &Expr) {
        if is_flat(value) {
            self.text(" ");
            self.expr(value, level::LOWEST);
            self.text(" in");
        } else if matches!(value.kind, ExprKind::Lambda { .. }) {
            self.text(" ");
            self.expr(value, level::LOWEST);
            self.newline();
            self.text("in");
        } else {
            self.indented(|p| {
                p.newline();
                p.expr(value, level::LOWEST);
            });
            self.newline();
            self.text("in");
        }
    }

    fn comma_separated(&mut self, elements: &[Expr]) {
        for (i, element) in elements.iter().enumerate() {
            if i > 0 {
                self.text(", ");
            }
            self.expr(element, level::LOWEST + 1);
        }
    }

    fn field_inits(&mut self, fields: &[FieldInit]) {
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                self.text(", ");
            }
            self.text(&field.name.text);
            match &field.value {
                Some(value) => {
                    self.text(" = ");
                    self.expr(value, level::LOWEST + 1);
                }
                // The hash form spells puns out so renaming a binder cannot change it.
                None if self.binders.is_some() => {
                    self.text(" = ");
                    self.occurrence(&field.name);
                }
                None => {}
            }
        }
    }

    pub(crate) fn literal(&mut self, literal: &Literal) {
        match literal {
            Literal::Int(value) => {
                let _ = write!(self.out, "{value}");
            }
            Literal::UInt(value) => {
                let _ = write!(self.out, "{value}u");
            }
            Literal::Float(bits) => {
                let value = f64::from_bits(*bits);
                if value.is_nan() {
                    self.text("nan");
                } else if value.is_infinite() {
                    self.text(if value < 0.0 { "-infinity" } else { "infinity" });
                } else {
                    // `{:?}` is the shortest text that reads back to the same bits and
                    // always has a `.` or an exponent.
                    let _ = write!(self.out, "{value:?}");
                }
            }
            Literal::Str(value) => write_string_literal(&mut self.out, value),
            Literal::Bool(value) => self.text(if *value { "true" } else { "false" }),
            Literal::Unit => self.text("()"),
        }
    }

    // ---- patterns -------------------------------------------------------------

    /// Prints a pattern; in hash form the variables it binds are numbered and
    /// appended to `bound` for the caller to bring into scope.
    pub(crate) fn pattern(&mut self, pattern: &Pattern, bound: &mut Vec<(String, u32)>) {
        match &pattern.kind {
            PatternKind::Wildcard => self.text("_"),
            PatternKind::Var(name) => self.pattern_binder(name, bound),
            PatternKind::Literal(literal) => self.literal(literal),
            PatternKind::Constructor { name, payload } => {
                self.text(&name.text);
                if let Some(payload) = payload {
                    self.text(" ");
                    let needs_parens = matches!(
                        payload.kind,
                        PatternKind::Constructor {
                            payload: Some(_),
                            ..
                        }
                    );
                    if needs_parens {
                        self.text("(");
                    }
                    self.pattern(payload, bound);
                    if needs_parens {
                        self.text(")");
                    }
                }
            }
            PatternKind::Record { name, fields, rest } => {
                self.text(&name.text);
                if fields.is_empty() && !rest {
                    self.text(" {}");
                    return;
                }
                self.text(" { ");
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        self.text(", ");
                    }
                    self.field_pattern(field, bound);
                }
                if *rest {
                    if !fields.is_empty() {
                        self.text(", ");
                    }
                    self.text("..");
                }
                self.text(" }");
            }
            PatternKind::Tuple(elements) => {
                self.text("(");
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 {
                        self.text(", ");
                    }
                    self.pattern(element, bound);
                }
                self.text(")");
            }
            PatternKind::List { elements, rest } => {
                self.text("[");
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 {
                        self.text(", ");
                    }
                    self.pattern(element, bound);
                }
                if let Some(rest) = rest {
                    if !elements.is_empty() {
                        self.text(", ");
                    }
                    self.text("..");
                    if let Some(binder) = &rest.binder {
                        self.pattern_binder(binder, bound);
                    }
                }
                self.text("]");
            }
        }
    }

    fn field_pattern(&mut self, field: &FieldPattern, bound: &mut Vec<(String, u32)>) {
        self.text(&field.name.text);
        match &field.pattern {
            Some(pattern) => {
                self.text(" = ");
                self.pattern(pattern, bound);
            }
            None if self.binders.is_some() => {
                self.text(" = ");
                self.pattern_binder(&field.name, bound);
            }
            None => {}
        }
    }

    // ---- binders (identity in canonical mode, numbering in hash form) ----------

    fn scope_mark(&self) -> Option<ScopeMark> {
        self.binders.as_ref().map(BinderEnv::mark)
    }

    fn scope_reset(&mut self, mark: Option<ScopeMark>) {
        if let (Some(env), Some(mark)) = (&mut self.binders, mark) {
            env.reset(mark);
        }
    }

    /// Prints a binding site; returns its number in hash form.
    fn number(&mut self, name: &Ident) -> u32 {
        match &mut self.binders {
            Some(env) => {
                let number = env.fresh();
                let _ = write!(self.out, "%{number}");
                number
            }
            None => {
                self.out.push_str(&name.text);
                0
            }
        }
    }

    fn push_binder(&mut self, name: &Ident, number: u32) {
        if let Some(env) = &mut self.binders {
            env.push(name.text.clone(), number);
        }
    }

    fn push_binders(&mut self, bound: Vec<(String, u32)>) {
        if let Some(env) = &mut self.binders {
            for (name, number) in bound {
                env.push(name, number);
            }
        }
    }

    /// A parameter: numbered and brought into scope at once.
    fn bind_param(&mut self, param: &Param) {
        match param {
            Param::Named(name) => {
                let number = self.number(name);
                self.push_binder(name, number);
            }
            Param::Wildcard(_) => self.text("_"),
        }
    }

    fn pattern_binder(&mut self, name: &Ident, bound: &mut Vec<(String, u32)>) {
        let number = self.number(name);
        if self.binders.is_some() {
            bound.push((name.text.clone(), number));
        }
    }

    /// A variable occurrence: its binder's number if local, else its name.
    fn occurrence(&mut self, name: &Ident) {
        match self.binders.as_ref().and_then(|env| env.lookup(&name.text)) {
            Some(number) => {
                let _ = write!(self.out, "%{number}");
            }
            None => self.out.push_str(&name.text),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum TypePrec {
    Function,
    App,
    Atom,
}

fn binary_level(op: crate::ast::BinOp) -> u8 {
    use crate::ast::BinOp::*;
    match op {
        Or => level::OR,
        And => level::AND,
        Eq | Ne | Lt | Le | Gt | Ge => level::COMPARE,
        Concat => level::CONCAT,
        Add | Sub => level::ADD,
        Mul | Div | Rem => level::MUL,
    }
}

/// The minimum operand levels of a binary operator at `op_level` (spec §8).
fn operand_levels(op_level: u8) -> (u8, u8) {
    match op_level {
        level::CONCAT => (op_level + 1, op_level),
        level::COMPARE => (op_level + 1, op_level + 1),
        _ => (op_level, op_level + 1),
    }
}

/// How tightly an expression binds (the levels of spec §8).
pub(crate) fn precedence(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Literal(Literal::Int(value)) if *value < 0 => level::NEG,
        ExprKind::Literal(Literal::Float(bits)) if f64::from_bits(*bits).is_sign_negative() => {
            level::NEG
        }
        ExprKind::Literal(_)
        | ExprKind::Var(_)
        | ExprKind::Qualified { .. }
        | ExprKind::Constructor(_)
        | ExprKind::Hole(_)
        | ExprKind::Update { .. }
        | ExprKind::List(_)
        | ExprKind::Tuple(_)
        | ExprKind::Annot { .. } => level::ATOM,
        ExprKind::Field { .. } => level::POSTFIX,
        // A record literal reads as a constructor applied to its fields, so it is
        // parenthesised where an application would be.
        ExprKind::App { .. } | ExprKind::Record { .. } => level::APP,
        ExprKind::Unary {
            op: UnaryOp::Neg, ..
        } => level::NEG,
        ExprKind::Unary {
            op: UnaryOp::Not, ..
        } => level::NOT,
        ExprKind::Binary { op, .. } => binary_level(*op),
        ExprKind::Implies { .. } => level::IMPLIES,
        ExprKind::Is { .. } => level::COMPARE,
        ExprKind::Let(_)
        | ExprKind::If { .. }
        | ExprKind::Match { .. }
        | ExprKind::Lambda { .. } => level::LOWEST,
    }
}

/// Whether the printed expression would begin with a digit (after `-` it would
/// fold into a negative literal, so such an operand is parenthesised).
fn starts_with_number(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Literal(Literal::Int(_) | Literal::UInt(_) | Literal::Float(_)) => true,
        ExprKind::App { func, .. } => starts_with_number(func),
        ExprKind::Field { record, .. } => starts_with_number(record),
        _ => false,
    }
}

/// Whether an expression prints on one line: it contains no `let`, `if` or `match`.
pub(crate) fn is_flat(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Let(_) | ExprKind::If { .. } | ExprKind::Match { .. } => false,
        ExprKind::Literal(_)
        | ExprKind::Var(_)
        | ExprKind::Qualified { .. }
        | ExprKind::Constructor(_)
        | ExprKind::Hole(_) => true,
        ExprKind::App { func, args } => is_flat(func) && args.iter().all(is_flat),
        ExprKind::Lambda { body, .. } => is_flat(body),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Implies { lhs, rhs } => {
            is_flat(lhs) && is_flat(rhs)
        }
        ExprKind::Unary { operand, .. } => is_flat(operand),
        ExprKind::Record { fields, .. } => fields_flat(fields),
        ExprKind::Update { record, fields } => is_flat(record) && fields_flat(fields),
        ExprKind::Field { record, .. } => is_flat(record),
        ExprKind::List(elements) | ExprKind::Tuple(elements) => elements.iter().all(is_flat),
        ExprKind::Annot { expr, .. } | ExprKind::Is { expr, .. } => is_flat(expr),
    }
}

fn fields_flat(fields: &[FieldInit]) -> bool {
    fields
        .iter()
        .all(|field| field.value.as_ref().is_none_or(is_flat))
}

/// A string literal with the canonical escapes (spec §2.6).
fn write_string_literal(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
