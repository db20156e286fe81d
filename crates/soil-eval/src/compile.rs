//! Resolution: the syntax tree of each definition becomes IR with locals as
//! frame slots (closures capture by copying into the callee's frame),
//! definitions and builtins as indices, constructors and fields resolved
//! through the type environment. Never panics on an ill-typed program: what
//! cannot be resolved becomes a diagnostic.
//!
//! Each frame's names live in the scope-aware walk's table
//! (`soil_syntax::visit::Scope`), bound and dropped where spec §5.7–§5.9 say. The
//! walk itself stays here: it translates rather than observes, in the order the IR
//! wants — a frame slot for every parameter, `_` included, and the self slot after
//! them; a construction's fields in declaration order; prefetch slots between an
//! updated record and its fields — and a name it resolves may become a capture in
//! every frame between its use and its binder. Hooks that observe a fixed walk
//! cannot say any of that without handing each decision back.

use std::collections::HashMap;
use std::sync::Arc;

use soil_rt::{Payload, ShapeId, TypeBody, TypeEnv, TypeId};
use soil_syntax::ast;
use soil_syntax::visit::{Scope as Names, ScopeMark};
use trellis_diag::{Diagnostic, LineIndex, TextRange};

use crate::builtins::{self, BuiltinId};
use crate::codes::EvalCode;
use crate::field_reuse::prefetch_fields;
use crate::ir::{Arm, Code, CodeId, Const, DefId, Expr, FieldUpdate, MatchKind, Op, Pat, Slot};
use crate::liveness::mark_function;
use crate::loops::plan_loop_calls;
use crate::rests::sink_rests;

mod options;

/// What a name in expression position refers to.
enum Target {
    Local(Slot),
    Def(DefId),
    Builtin(BuiltinId),
}

/// One function body being compiled.
#[derive(Default)]
struct Scope {
    /// Names in scope and their slots.
    names: Names<Slot>,
    next_slot: Slot,
    /// `(slot in the enclosing frame, slot in this frame)` per captured variable.
    captures: Vec<(Slot, Slot)>,
    capture_names: Vec<(String, Slot)>,
    self_binding: Option<(String, Slot)>,
}

impl Scope {
    fn alloc(&mut self) -> Slot {
        let slot = self.next_slot;
        self.next_slot += 1;
        slot
    }
}

/// Tables shared by every definition of a program.
pub(crate) struct Globals<'a> {
    pub env: &'a TypeEnv,
    /// `name` and `module::name` → definition.
    pub defs: HashMap<String, DefId>,
    pub arities: Vec<u32>,
    /// Field name → every `(shape, index)` declaring it.
    pub fields: HashMap<String, Vec<(ShapeId, u32)>>,
}

impl<'a> Globals<'a> {
    pub fn new(env: &'a TypeEnv) -> Globals<'a> {
        let mut fields: HashMap<String, Vec<(ShapeId, u32)>> = HashMap::new();
        for (shape_id, shape) in env.shapes() {
            for (i, field) in shape.fields.iter().enumerate() {
                fields
                    .entry(field.name.clone())
                    .or_default()
                    .push((shape_id, i as u32));
            }
        }
        Globals {
            env,
            defs: HashMap::new(),
            arities: Vec::new(),
            fields,
        }
    }
}

/// Output shared across the definitions being compiled.
#[derive(Default)]
pub(crate) struct Output {
    pub codes: Vec<Code>,
    pub consts: Vec<Const>,
    const_index: HashMap<String, u32>,
    pub errors: Vec<Diagnostic>,
}

/// A file the spans of some syntax point into: its index, name and text.
pub(crate) type FileRef = Option<(u32, String, Option<Arc<str>>)>;

/// Compiles one definition (or clause) body.
pub(crate) struct DefCompiler<'g, 'o> {
    globals: &'g Globals<'g>,
    out: &'o mut Output,
    module: Option<String>,
    file: FileRef,
    def_name: String,
    scopes: Vec<Scope>,
    pub holes: Vec<(String, TextRange)>,
    pub refs: Vec<DefId>,
}

impl<'g, 'o> DefCompiler<'g, 'o> {
    pub fn new(
        globals: &'g Globals<'g>,
        out: &'o mut Output,
        def_name: &str,
        module: Option<String>,
        file: FileRef,
    ) -> Self {
        DefCompiler {
            globals,
            out,
            module,
            file,
            def_name: def_name.to_owned(),
            scopes: Vec::new(),
            holes: Vec::new(),
            refs: Vec::new(),
        }
    }

    fn error(&mut self, code: EvalCode, span: TextRange, message: String) {
        let mut diagnostic = Diagnostic::new(code.code(), message)
            .with_note(format!("in definition {}", self.def_name));
        if let Some((_, name, text)) = &self.file {
            diagnostic = diagnostic.with_file(name.clone());
            if let Some(text) = text {
                diagnostic = diagnostic.with_span(LineIndex::new(text).span(text, span));
            }
        }
        self.out.errors.push(diagnostic);
    }

    /// Compiles a function body with `params` into a new code; returns its id
    /// and the enclosing-frame slots it captures.
    pub fn function(
        &mut self,
        name: &str,
        params: &[ast::Param],
        self_name: Option<&str>,
        body: &ast::Expr,
    ) -> (CodeId, Vec<Slot>) {
        let mut scope = Scope::default();
        for param in params {
            let slot = scope.alloc();
            if let ast::Param::Named(ident) = param {
                scope.names.bind(ident.text.as_str(), slot);
            }
        }
        if let Some(self_name) = self_name {
            let slot = scope.alloc();
            scope.self_binding = Some((self_name.to_owned(), slot));
        }
        self.scopes.push(scope);
        let mut body = self.expr(body);
        let scope = self.scopes.pop().unwrap_or_default();
        mark_function(&mut body, scope.next_slot, params.len() as u32);
        sink_rests(&mut body);
        if let Some((_, self_slot)) = &scope.self_binding
            && scope.captures.is_empty()
        {
            plan_loop_calls(&mut body, *self_slot, params.len() as u32);
        }
        let code = Code {
            name: name.to_owned(),
            file: self.file_index(),
            arity: params.len() as u32,
            frame_size: scope.next_slot,
            capture_slots: scope.captures.iter().map(|(_, inner)| *inner).collect(),
            self_slot: scope.self_binding.map(|(_, slot)| slot),
            clauses: None,
            body,
        };
        self.out.codes.push(code);
        let id = (self.out.codes.len() - 1) as CodeId;
        (id, scope.captures.iter().map(|(outer, _)| *outer).collect())
    }

    /// Compiles a definition with its clauses: the clauses share the body's
    /// frame (parameters by name, `result` in its own slot). Moves are not
    /// marked in such a body, since ensures clauses read the parameters after it.
    pub fn definition_with_clauses(
        &mut self,
        params: &[ast::Param],
        body: &ast::Expr,
        requires: &[(String, &ast::Expr, FileRef)],
        ensures: &[(String, &ast::Expr, FileRef)],
    ) -> CodeId {
        let mut scope = Scope::default();
        for param in params {
            let slot = scope.alloc();
            if let ast::Param::Named(ident) = param {
                scope.names.bind(ident.text.as_str(), slot);
            }
        }
        self.scopes.push(scope);
        let body = self.expr(body);
        let mut compiled = crate::ir::Clauses {
            requires: Vec::new(),
            ensures: Vec::new(),
            result_slot: 0,
        };
        for (label, predicate, file) in requires {
            let clause = self.clause(label, "requires", predicate, file.clone());
            compiled.requires.push(clause);
        }
        let result_slot = self.scopes.last_mut().map_or(0, |s| s.alloc());
        compiled.result_slot = result_slot;
        if let Some(scope) = self.scopes.last_mut() {
            scope.names.bind("result", result_slot);
        }
        for (label, predicate, file) in ensures {
            let clause = self.clause(label, "ensures", predicate, file.clone());
            compiled.ensures.push(clause);
        }
        let scope = self.scopes.pop().unwrap_or_default();
        self.out.codes.push(Code {
            name: self.def_name.clone(),
            file: self.file_index(),
            arity: params.len() as u32,
            frame_size: scope.next_slot,
            capture_slots: Box::new([]),
            self_slot: None,
            clauses: Some(Box::new(compiled)),
            body,
        });
        (self.out.codes.len() - 1) as CodeId
    }

    fn clause(
        &mut self,
        label: &str,
        kind: &str,
        predicate: &ast::Expr,
        file: FileRef,
    ) -> crate::ir::ClauseIr {
        let saved = std::mem::replace(&mut self.file, file);
        let expr = self.expr(predicate);
        self.out.codes.push(Code {
            name: format!("{} {kind} {label}", self.def_name),
            file: self.file_index(),
            arity: 0,
            frame_size: 0,
            capture_slots: Box::new([]),
            self_slot: None,
            clauses: None,
            body: Expr::Unit,
        });
        self.file = saved;
        crate::ir::ClauseIr {
            code: (self.out.codes.len() - 1) as CodeId,
            expr,
            span: predicate.span,
        }
    }

    fn file_index(&self) -> Option<u32> {
        self.file.as_ref().map(|(index, _, _)| *index)
    }

    // ----- names ----------------------------------------------------------

    fn resolve_local(&mut self, level: usize, name: &str) -> Option<Slot> {
        let scope = &self.scopes[level];
        if let Some(slot) = scope.names.lookup(name) {
            return Some(*slot);
        }
        if let Some((n, slot)) = &scope.self_binding
            && n == name
        {
            return Some(*slot);
        }
        if let Some((_, slot)) = scope.capture_names.iter().find(|(n, _)| n == name) {
            return Some(*slot);
        }
        if level == 0 {
            return None;
        }
        let outer = self.resolve_local(level - 1, name)?;
        let scope = &mut self.scopes[level];
        let inner = scope.alloc();
        scope.captures.push((outer, inner));
        scope.capture_names.push((name.to_owned(), inner));
        Some(inner)
    }

    fn resolve(&mut self, name: &str) -> Option<Target> {
        if !self.scopes.is_empty()
            && let Some(slot) = self.resolve_local(self.scopes.len() - 1, name)
        {
            return Some(Target::Local(slot));
        }
        let qualified = self.module.as_ref().map(|m| format!("{m}::{name}"));
        let def = qualified
            .and_then(|q| self.globals.defs.get(&q).copied())
            .or_else(|| self.globals.defs.get(name).copied());
        if let Some(def) = def {
            self.refs.push(def);
            return Some(Target::Def(def));
        }
        builtins::lookup(name).map(Target::Builtin)
    }

    fn resolve_qualified(&mut self, module: &str, name: &str) -> Option<Target> {
        let def = self
            .globals
            .defs
            .get(&format!("{module}::{name}"))
            .copied()?;
        self.refs.push(def);
        Some(Target::Def(def))
    }

    fn bind(&mut self, name: &str) -> Slot {
        let scope = self.scopes.last_mut();
        match scope {
            Some(scope) => {
                let slot = scope.alloc();
                scope.names.bind(name, slot);
                slot
            }
            None => 0,
        }
    }

    fn names_mark(&self) -> Option<ScopeMark> {
        self.scopes.last().map(|s| s.names.mark())
    }

    /// Drops the names bound since `mark`; their slots stay allocated.
    fn reset_names(&mut self, mark: Option<ScopeMark>) {
        if let (Some(scope), Some(mark)) = (self.scopes.last_mut(), mark) {
            scope.names.reset(mark);
        }
    }

    fn constant(&mut self, text: &str) -> Expr {
        if let Some(&index) = self.out.const_index.get(text) {
            return Expr::Const(index);
        }
        self.out.consts.push(Const::Str(text.into()));
        let index = (self.out.consts.len() - 1) as u32;
        self.out.const_index.insert(text.to_owned(), index);
        Expr::Const(index)
    }

    // ----- expressions ------------------------------------------------------

    fn exprs(&mut self, items: &[ast::Expr]) -> Box<[Expr]> {
        items.iter().map(|e| self.expr(e)).collect()
    }

    fn boxed(&mut self, e: &ast::Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn expr(&mut self, e: &ast::Expr) -> Expr {
        use ast::ExprKind as K;
        match &e.kind {
            K::Literal(literal) => self.literal(literal),
            K::Var(ident) => self.variable(ident),
            K::Qualified { module, name } => match self.resolve_qualified(&module.text, &name.text)
            {
                Some(target) => self.target_value(target),
                None => {
                    let message = format!("`{}::{}` is not defined", module.text, name.text);
                    self.error(EvalCode::UnresolvedName, e.span, message);
                    Expr::Unit
                }
            },
            K::Constructor(ident) => self.constructor_value(ident),
            K::Hole(ident) => {
                self.holes.push((ident.text.clone(), e.span));
                Expr::Hole(ident.text.clone().into(), e.span)
            }
            K::App { func, args } => self.application(func, args, e.span),
            K::Lambda { params, body } => {
                let name = format!("{} (lambda)", self.def_name);
                let (code, captures) = self.function(&name, params, None, body);
                Expr::Closure {
                    code,
                    captures: captures.into(),
                }
            }
            K::Let(let_expr) => self.let_expr(let_expr, e.span),
            K::If {
                cond,
                then_branch,
                else_branch,
            } => Expr::If {
                cond: self.boxed(cond),
                then_branch: self.boxed(then_branch),
                else_branch: self.boxed(else_branch),
            },
            K::Match { scrutinee, arms } => {
                let scrutinee = self.boxed(scrutinee);
                let arms: Box<[Arm]> = arms.iter().map(|arm| self.arm(arm)).collect();
                Expr::Match {
                    scrutinee,
                    kind: MatchKind::of(&arms),
                    arms,
                    span: e.span,
                }
            }
            K::Binary { op, lhs, rhs } => {
                let lhs = self.boxed(lhs);
                let rhs = self.boxed(rhs);
                let op = match op {
                    ast::BinOp::And => return Expr::And(lhs, rhs),
                    ast::BinOp::Or => return Expr::Or(lhs, rhs),
                    ast::BinOp::Eq => Op::Eq,
                    ast::BinOp::Ne => Op::Ne,
                    ast::BinOp::Lt => Op::Lt,
                    ast::BinOp::Le => Op::Le,
                    ast::BinOp::Gt => Op::Gt,
                    ast::BinOp::Ge => Op::Ge,
                    ast::BinOp::Concat => Op::Concat,
                    ast::BinOp::Add => Op::Add,
                    ast::BinOp::Sub => Op::Sub,
                    ast::BinOp::Mul => Op::Mul,
                    ast::BinOp::Div => Op::Div,
                    ast::BinOp::Rem => Op::Rem,
                };
                if let (Expr::Local(slot), Expr::I64(literal)) = (&*lhs, &*rhs)
                    && op != Op::Concat
                {
                    return Expr::LocalOpI64 {
                        op,
                        slot: *slot,
                        moved: false,
                        literal: *literal,
                        literal_first: false,
                        span: e.span,
                    };
                }
                if let (Expr::I64(literal), Expr::Local(slot)) = (&*lhs, &*rhs)
                    && matches!(op, Op::Add | Op::Mul)
                {
                    return Expr::LocalOpI64 {
                        op,
                        slot: *slot,
                        moved: false,
                        literal: *literal,
                        literal_first: true,
                        span: e.span,
                    };
                }
                Expr::Binary {
                    op,
                    lhs,
                    rhs,
                    span: e.span,
                }
            }
            K::Unary { op, operand } => {
                let operand = self.boxed(operand);
                match op {
                    ast::UnaryOp::Not => Expr::Not(operand),
                    ast::UnaryOp::Neg => Expr::Neg(operand, e.span),
                }
            }
            K::Record { name, fields } => self.record(name, fields, e.span),
            K::Update { record, fields } => {
                let record = self.boxed(record);
                let mut fields: Box<[FieldUpdate]> = fields
                    .iter()
                    .map(|init| FieldUpdate {
                        candidates: self.field_candidates(&init.name),
                        name: init.name.text.clone().into(),
                        value: self.field_value(init),
                    })
                    .collect();
                let prefetch = match (&*record, self.scopes.last_mut()) {
                    (Expr::Local(source), Some(scope)) => {
                        prefetch_fields(*source, &mut fields, || scope.alloc())
                    }
                    _ => None,
                };
                Expr::Update {
                    record,
                    fields,
                    prefetch,
                    span: e.span,
                }
            }
            K::Field { record, field } => Expr::Field {
                record: self.boxed(record),
                candidates: self.field_candidates(field),
                name: field.text.clone().into(),
                span: e.span,
            },
            K::List(items) => Expr::List(self.exprs(items)),
            K::Tuple(items) => Expr::Tuple(self.exprs(items)),
            K::Annot { expr, .. } => self.expr(expr),
            K::Implies { lhs, rhs } => {
                Expr::Or(Box::new(Expr::Not(self.boxed(lhs))), self.boxed(rhs))
            }
            K::Is { expr, pattern } => {
                let value = self.boxed(expr);
                let mark = self.names_mark();
                let pattern = self.pattern(pattern);
                self.reset_names(mark);
                Expr::Is(value, pattern)
            }
        }
    }

    fn literal(&mut self, literal: &ast::Literal) -> Expr {
        match literal {
            ast::Literal::Int(n) => Expr::I64(*n),
            ast::Literal::UInt(n) => Expr::U64(*n),
            ast::Literal::Float(bits) => Expr::F64(f64::from_bits(*bits)),
            ast::Literal::Str(s) => self.constant(s),
            ast::Literal::Bool(b) => Expr::Bool(*b),
            ast::Literal::Unit => Expr::Unit,
        }
    }

    fn variable(&mut self, ident: &ast::Ident) -> Expr {
        match self.resolve(&ident.text) {
            Some(target) => self.target_value(target),
            None => {
                let message = format!("`{}` is not defined", ident.text);
                self.error(EvalCode::UnresolvedName, ident.span, message);
                Expr::Unit
            }
        }
    }

    fn target_value(&mut self, target: Target) -> Expr {
        match target {
            Target::Local(slot) => Expr::Local(slot),
            Target::Def(def) => Expr::Global(def),
            Target::Builtin(b) => Expr::Builtin(b),
        }
    }

    fn constructor_value(&mut self, ident: &ast::Ident) -> Expr {
        let Some((ty, tag)) = self.globals.env.variant(&ident.text) else {
            let message = format!("constructor `{}` is not declared", ident.text);
            self.error(EvalCode::UnresolvedName, ident.span, message);
            return Expr::Unit;
        };
        match self.globals.env.variant_decl(ty, tag).map(|v| &v.payload) {
            Some(Payload::None) => Expr::Variant {
                ty,
                tag,
                payload: None,
            },
            Some(Payload::Positional(_)) => Expr::ConstructorFn { ty, tag },
            _ => {
                let message = format!(
                    "constructor `{}` needs its fields: `{} {{ ... }}`",
                    ident.text, ident.text
                );
                self.error(EvalCode::InvalidProgram, ident.span, message);
                Expr::Unit
            }
        }
    }

    fn application(&mut self, func: &ast::Expr, args: &[ast::Expr], span: TextRange) -> Expr {
        let target = match &func.kind {
            ast::ExprKind::Var(ident) => self.resolve(&ident.text),
            ast::ExprKind::Qualified { module, name } => {
                self.resolve_qualified(&module.text, &name.text)
            }
            ast::ExprKind::Constructor(ident) => {
                if let Some((ty, tag)) = self.globals.env.variant(&ident.text)
                    && let Some(Payload::Positional(_)) =
                        self.globals.env.variant_decl(ty, tag).map(|v| &v.payload)
                    && args.len() == 1
                {
                    let payload = self.boxed(&args[0]);
                    return Expr::Variant {
                        ty,
                        tag,
                        payload: Some(payload),
                    };
                }
                None
            }
            _ => None,
        };
        match target {
            Some(Target::Def(def))
                if self.globals.arities.get(def as usize) == Some(&(args.len() as u32)) =>
            {
                Expr::CallGlobal {
                    def,
                    args: self.exprs(args),
                    span,
                }
            }
            Some(Target::Builtin(builtin))
                if builtins::BUILTINS[builtin as usize].arity as usize == args.len() =>
            {
                match self.option_lambda(builtin, args, span) {
                    Some(inlined) => inlined,
                    None => fused_call(builtin, self.exprs(args), span),
                }
            }
            Some(target) => {
                let func = Box::new(self.target_value(target));
                Expr::Call {
                    func,
                    args: self.exprs(args),
                    loop_plan: None,
                    span,
                }
            }
            None => Expr::Call {
                func: self.boxed(func),
                args: self.exprs(args),
                loop_plan: None,
                span,
            },
        }
    }

    fn let_expr(&mut self, let_expr: &ast::LetExpr, span: TextRange) -> Expr {
        match &let_expr.binder {
            ast::LetBinder::Var(ident) => {
                if let Some(matched) =
                    self.option_matched_at_once(ident, &let_expr.value, &let_expr.body)
                {
                    return matched;
                }
                let value = self.boxed(&let_expr.value);
                let mark = self.names_mark();
                let slot = self.bind(&ident.text);
                let body = self.boxed(&let_expr.body);
                self.reset_names(mark);
                Expr::Let { slot, value, body }
            }
            ast::LetBinder::Function { name, params } => {
                let label = format!("{}.{}", self.def_name, name.text);
                let (code, captures) =
                    self.function(&label, params, Some(&name.text), &let_expr.value);
                let value = Box::new(Expr::Closure {
                    code,
                    captures: captures.into(),
                });
                let mark = self.names_mark();
                let slot = self.bind(&name.text);
                let body = self.boxed(&let_expr.body);
                self.reset_names(mark);
                Expr::Let { slot, value, body }
            }
            ast::LetBinder::Pattern(pattern) => {
                let value = self.boxed(&let_expr.value);
                let mark = self.names_mark();
                let pattern = self.pattern(pattern);
                let body = self.boxed(&let_expr.body);
                self.reset_names(mark);
                Expr::LetPattern {
                    pattern,
                    value,
                    body,
                    span,
                }
            }
        }
    }

    fn arm(&mut self, arm: &ast::MatchArm) -> Arm {
        let mark = self.names_mark();
        let pattern = self.pattern(&arm.pattern);
        let guard = arm.guard.as_ref().map(|g| self.expr(g));
        let body = self.expr(&arm.body);
        self.reset_names(mark);
        Arm {
            pattern,
            guard,
            body,
        }
    }

    fn field_candidates(&mut self, field: &ast::Ident) -> Box<[(ShapeId, u32)]> {
        match self.globals.fields.get(&field.text) {
            Some(candidates) => candidates.clone().into(),
            None => {
                let message = format!("no record declares a field `{}`", field.text);
                self.error(EvalCode::UnresolvedName, field.span, message);
                Box::new([])
            }
        }
    }

    fn field_value(&mut self, init: &ast::FieldInit) -> Expr {
        match &init.value {
            Some(value) => self.expr(value),
            None => self.variable(&init.name),
        }
    }

    /// The record shape (and, for an inline-record variant, its sum and tag)
    /// that `name` builds.
    fn record_target(&mut self, name: &ast::Ident) -> Option<(ShapeId, Option<(TypeId, u32)>)> {
        let env = self.globals.env;
        if let Some(ty) = env.lookup(&name.text)
            && let Some(TypeBody::Record(shape)) = env.decl(ty).map(|d| &d.body)
        {
            return Some((*shape, None));
        }
        if let Some((ty, tag)) = env.variant(&name.text)
            && let Some(Payload::Record(shape)) = env.variant_decl(ty, tag).map(|v| &v.payload)
        {
            return Some((*shape, Some((ty, tag))));
        }
        let message = format!(
            "`{}` is neither a record type nor a variant with fields",
            name.text
        );
        self.error(EvalCode::UnresolvedName, name.span, message);
        None
    }

    fn record(&mut self, name: &ast::Ident, inits: &[ast::FieldInit], span: TextRange) -> Expr {
        let Some((shape_id, variant)) = self.record_target(name) else {
            return Expr::Unit;
        };
        let env = self.globals.env;
        let Some(shape) = env.shape(shape_id) else {
            return Expr::Unit;
        };
        for init in inits {
            if shape.field_index(&init.name.text).is_none() {
                let message = format!("`{}` has no field `{}`", name.text, init.name.text);
                self.error(EvalCode::InvalidProgram, init.span, message);
            }
        }
        let mut fields = Vec::with_capacity(shape.fields.len());
        for field in &shape.fields {
            match inits.iter().find(|i| i.name.text == field.name) {
                Some(init) => fields.push(self.field_value(init)),
                None => {
                    let message = format!("`{}` is missing the field `{}`", name.text, field.name);
                    self.error(EvalCode::InvalidProgram, span, message);
                    fields.push(Expr::Unit);
                }
            }
        }
        let record = Expr::Record {
            shape: shape_id,
            fields: fields.into(),
        };
        match variant {
            Some((ty, tag)) => Expr::Variant {
                ty,
                tag,
                payload: Some(Box::new(record)),
            },
            None => record,
        }
    }

    // ----- patterns ---------------------------------------------------------

    fn pattern(&mut self, p: &ast::Pattern) -> Pat {
        use ast::PatternKind as P;
        match &p.kind {
            P::Wildcard => Pat::Wild,
            P::Var(ident) => Pat::Bind(self.bind(&ident.text)),
            P::Literal(literal) => match literal {
                ast::Literal::Int(n) => Pat::I64(*n),
                ast::Literal::UInt(n) => Pat::U64(*n),
                ast::Literal::Float(bits) => Pat::F64(f64::from_bits(*bits)),
                ast::Literal::Str(s) => Pat::Str(s.clone().into()),
                ast::Literal::Bool(b) => Pat::Bool(*b),
                ast::Literal::Unit => Pat::Unit,
            },
            P::Constructor { name, payload } => {
                let Some((ty, tag)) = self.globals.env.variant(&name.text) else {
                    let message = format!("constructor `{}` is not declared", name.text);
                    self.error(EvalCode::UnresolvedName, name.span, message);
                    return Pat::Wild;
                };
                let payload = payload.as_ref().map(|inner| Box::new(self.pattern(inner)));
                Pat::Variant { ty, tag, payload }
            }
            P::Record { name, fields, .. } => {
                let Some((shape_id, variant)) = self.record_target(name) else {
                    return Pat::Wild;
                };
                let env = self.globals.env;
                let mut compiled = Vec::with_capacity(fields.len());
                for field in fields {
                    let index = env
                        .shape(shape_id)
                        .and_then(|s| s.field_index(&field.name.text));
                    let Some(index) = index else {
                        let message = format!("`{}` has no field `{}`", name.text, field.name.text);
                        self.error(EvalCode::InvalidProgram, field.span, message);
                        continue;
                    };
                    let inner = match &field.pattern {
                        Some(inner) => self.pattern(inner),
                        None => Pat::Bind(self.bind(&field.name.text)),
                    };
                    compiled.push((index as u32, inner));
                }
                let record = Pat::Record {
                    fields: compiled.into(),
                };
                match variant {
                    Some((ty, tag)) => Pat::Variant {
                        ty,
                        tag,
                        payload: Some(Box::new(record)),
                    },
                    None => record,
                }
            }
            P::Tuple(items) => Pat::Tuple(items.iter().map(|i| self.pattern(i)).collect()),
            P::List { elements, rest } => {
                let elements = elements.iter().map(|i| self.pattern(i)).collect();
                let rest = rest
                    .as_ref()
                    .map(|r| r.binder.as_ref().map(|b| self.bind(&b.text)));
                Pat::List { elements, rest }
            }
        }
    }
}

/// A saturated call of `builtin`, or the fused builtin that computes it with
/// one of its arguments, a call of another builtin, in one step
/// ([`builtins::fuse`]). The arguments keep their order (the outer call's
/// before the inner call, the inner call's, the outer call's after it), so
/// they are evaluated, moved and released exactly as in the nest.
fn fused_call(builtin: BuiltinId, args: Box<[Expr]>, span: TextRange) -> Expr {
    let fused = args.iter().enumerate().find_map(|(at, arg)| match arg {
        Expr::CallBuiltin {
            builtin: inner,
            args: inner_args,
            ..
        } => builtins::fuse(builtin, *inner)
            .filter(|&(fused, position)| {
                position == at
                    && builtins::BUILTINS[fused as usize].arity as usize
                        == inner_args.len() + args.len() - 1
            })
            .map(|(fused, _)| (fused, at)),
        _ => None,
    });
    let Some((fused, at)) = fused else {
        return Expr::CallBuiltin {
            builtin,
            args,
            span,
        };
    };
    let mut all = Vec::with_capacity(args.len() + 2);
    for (i, arg) in args.into_vec().into_iter().enumerate() {
        match arg {
            Expr::CallBuiltin { args: inner, .. } if i == at => all.extend(inner.into_vec()),
            other => all.push(other),
        }
    }
    Expr::CallBuiltin {
        builtin: fused,
        args: all.into_boxed_slice(),
        span,
    }
}
