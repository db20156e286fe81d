//! Shared test helpers: corpus discovery, layout-free tree comparison, a scoped
//! renamer of local binders and a token re-layer (for hash-form invariance).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use soil_syntax::ast::*;
use soil_syntax::lexer::{TokenKind, lex};

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// Every `examples/*/*.soil` file plus the fixtures under
/// `test-data/soil-syntax/ok`, sorted, as (display name, text).
pub fn corpus() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    if let Ok(modules) = std::fs::read_dir(root.join("examples")) {
        for module in modules.flatten() {
            if !module.path().is_dir() {
                continue;
            }
            for entry in std::fs::read_dir(module.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "soil") {
                    files.push(path);
                }
            }
        }
    }
    for entry in std::fs::read_dir(root.join("test-data/soil-syntax/ok"))
        .expect("fixtures")
        .flatten()
    {
        if entry.path().extension().is_some_and(|e| e == "soil") {
            files.push(entry.path());
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            let text = std::fs::read_to_string(&path).expect("readable corpus file");
            (name, text)
        })
        .collect()
}

/// Parses a corpus file, failing the test on any diagnostic.
#[track_caller]
pub fn parse_clean(name: &str, text: &str) -> SourceFile {
    let (file, diagnostics) = soil_syntax::parse_file(text);
    assert!(diagnostics.is_empty(), "{name}: {diagnostics:#?}");
    file
}

/// Re-lays the tokens of canonical `text` with varied whitespace and comments
/// between them. Tokens at column 1 (item starts) stay at the start of a line
/// (spec §7.2); no other token lands there.
pub fn relayout(text: &str, seed: u64) -> String {
    let mut errors = Vec::new();
    let tokens = lex(text, &mut errors);
    assert!(errors.is_empty());
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    const SEPARATORS: &[&str] = &[
        " ",
        "  ",
        "\n   ",
        " -- a comment\n    ",
        "\t",
        "\n\n     ",
        " ",
    ];
    let mut out = String::new();
    for (i, token) in tokens.iter().enumerate() {
        if token.kind == TokenKind::Eof {
            break;
        }
        if i > 0 {
            if is_column_zero(text, token.start) {
                out.push_str("\n-- between items\n\n");
            } else {
                out.push_str(SEPARATORS[next() % SEPARATORS.len()]);
            }
        }
        out.push_str(&text[token.start as usize..token.end as usize]);
    }
    out.push('\n');
    out
}

fn is_column_zero(text: &str, offset: u32) -> bool {
    offset == 0 || text.as_bytes()[offset as usize - 1] == b'\n'
}

/// Renames every local binder of an item to a fresh name, consistently with
/// Soil's scoping (spec §9.1), leaving globals, fields and constructors alone.
pub fn rename_locals(item: &Item) -> Item {
    let mut renamer = Renamer {
        scope: Vec::new(),
        counter: 0,
    };
    let mut item = item.clone();
    if let Item::Equation(eq) = &mut item {
        let eq = std::sync::Arc::make_mut(eq);
        let mark = renamer.scope.len();
        for param in &mut eq.params {
            renamer.bind_param(param);
        }
        renamer.expr(&mut eq.body);
        renamer.scope.truncate(mark);
    }
    item
}

struct Renamer {
    scope: Vec<(String, String)>,
    counter: u32,
}

impl Renamer {
    fn fresh(&mut self, ident: &mut Ident) -> (String, String) {
        self.counter += 1;
        let new = format!(
            "renamed_{}_{}",
            self.counter,
            ident.text.trim_start_matches('_')
        );
        let pair = (ident.text.clone(), new.clone());
        ident.text = new;
        pair
    }

    fn bind_param(&mut self, param: &mut Param) {
        if let Param::Named(ident) = param {
            let pair = self.fresh(ident);
            self.scope.push(pair);
        }
    }

    fn lookup(&self, name: &str) -> Option<String> {
        self.scope
            .iter()
            .rev()
            .find(|(old, _)| old == name)
            .map(|(_, new)| new.clone())
    }

    fn occurrence(&self, ident: &mut Ident) {
        if let Some(new) = self.lookup(&ident.text) {
            ident.text = new;
        }
    }

    fn pattern(&mut self, pattern: &mut Pattern, bound: &mut Vec<(String, String)>) {
        match &mut pattern.kind {
            PatternKind::Wildcard | PatternKind::Literal(_) => {}
            PatternKind::Var(ident) => bound.push(self.fresh(ident)),
            PatternKind::Constructor { payload, .. } => {
                if let Some(payload) = payload {
                    self.pattern(payload, bound);
                }
            }
            PatternKind::Record { fields, .. } => {
                for field in fields {
                    match &mut field.pattern {
                        Some(p) => self.pattern(p, bound),
                        None => {
                            // Spell the pun out so the field keeps its name.
                            let mut var = field.name.clone();
                            bound.push(self.fresh(&mut var));
                            field.pattern = Some(Pattern {
                                kind: PatternKind::Var(var),
                                span: field.span,
                            });
                        }
                    }
                }
            }
            PatternKind::Tuple(elements) => {
                for element in elements {
                    self.pattern(element, bound);
                }
            }
            PatternKind::List { elements, rest } => {
                for element in elements {
                    self.pattern(element, bound);
                }
                if let Some(ListRest {
                    binder: Some(ident),
                    ..
                }) = rest
                {
                    bound.push(self.fresh(ident));
                }
            }
        }
    }

    fn fields(&mut self, fields: &mut [FieldInit]) {
        for field in fields {
            match &mut field.value {
                Some(value) => self.expr(value),
                None => {
                    let mut var = field.name.clone();
                    self.occurrence(&mut var);
                    field.value = Some(Expr {
                        kind: ExprKind::Var(var),
                        span: field.span,
                    });
                }
            }
        }
    }

    fn expr(&mut self, expr: &mut Expr) {
        match &mut expr.kind {
            ExprKind::Literal(_)
            | ExprKind::Qualified { .. }
            | ExprKind::Constructor(_)
            | ExprKind::Hole(_) => {}
            ExprKind::Var(ident) => self.occurrence(ident),
            ExprKind::App { func, args } => {
                self.expr(func);
                args.iter_mut().for_each(|a| self.expr(a));
            }
            ExprKind::Lambda { params, body } => {
                let mark = self.scope.len();
                params.iter_mut().for_each(|p| self.bind_param(p));
                self.expr(body);
                self.scope.truncate(mark);
            }
            ExprKind::Let(let_expr) => {
                let mark = self.scope.len();
                match &mut let_expr.binder {
                    LetBinder::Var(ident) => {
                        let pair = self.fresh(ident);
                        self.expr(&mut let_expr.value);
                        self.scope.push(pair);
                    }
                    LetBinder::Function { name, params } => {
                        let pair = self.fresh(name);
                        self.scope.push(pair);
                        let inner = self.scope.len();
                        params.iter_mut().for_each(|p| self.bind_param(p));
                        self.expr(&mut let_expr.value);
                        self.scope.truncate(inner);
                    }
                    LetBinder::Pattern(pattern) => {
                        let mut bound = Vec::new();
                        self.pattern(pattern, &mut bound);
                        self.expr(&mut let_expr.value);
                        self.scope.extend(bound);
                    }
                }
                self.expr(&mut let_expr.body);
                self.scope.truncate(mark);
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.expr(cond);
                self.expr(then_branch);
                self.expr(else_branch);
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for arm in arms {
                    let mark = self.scope.len();
                    let mut bound = Vec::new();
                    self.pattern(&mut arm.pattern, &mut bound);
                    self.scope.extend(bound);
                    if let Some(guard) = &mut arm.guard {
                        self.expr(guard);
                    }
                    self.expr(&mut arm.body);
                    self.scope.truncate(mark);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Implies { lhs, rhs } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Record { fields, .. } => self.fields(fields),
            ExprKind::Update { record, fields } => {
                self.expr(record);
                self.fields(fields);
            }
            ExprKind::Field { record, .. } => self.expr(record),
            ExprKind::List(elements) | ExprKind::Tuple(elements) => {
                elements.iter_mut().for_each(|e| self.expr(e))
            }
            ExprKind::Annot { expr, .. } => self.expr(expr),
            ExprKind::Is { expr, pattern } => {
                self.expr(expr);
                let mut bound = Vec::new();
                self.pattern(pattern, &mut bound);
            }
        }
    }
}

/// Applies `edit` to the first expression (pre-order) for which it returns true.
pub fn edit_first(item: &Item, edit: &mut dyn FnMut(&mut Expr) -> bool) -> Option<Item> {
    let mut item = item.clone();
    let Item::Equation(eq) = &mut item else {
        return None;
    };
    if visit(&mut std::sync::Arc::make_mut(eq).body, edit) {
        Some(item)
    } else {
        None
    }
}

fn visit(expr: &mut Expr, edit: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    if edit(expr) {
        return true;
    }
    let children: Vec<&mut Expr> = match &mut expr.kind {
        ExprKind::App { func, args } => std::iter::once(&mut **func)
            .chain(args.iter_mut())
            .collect(),
        ExprKind::Lambda { body, .. } => vec![body],
        ExprKind::Let(l) => vec![&mut l.value, &mut l.body],
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => vec![cond, then_branch, else_branch],
        ExprKind::Match { scrutinee, arms } => {
            let mut v: Vec<&mut Expr> = vec![scrutinee];
            for arm in arms {
                if let Some(g) = &mut arm.guard {
                    v.push(g);
                }
                v.push(&mut arm.body);
            }
            v
        }
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Implies { lhs, rhs } => vec![lhs, rhs],
        ExprKind::Unary { operand, .. } => vec![operand],
        ExprKind::Record { fields, .. } => {
            fields.iter_mut().filter_map(|f| f.value.as_mut()).collect()
        }
        ExprKind::Update { record, fields } => std::iter::once(&mut **record)
            .chain(fields.iter_mut().filter_map(|f| f.value.as_mut()))
            .collect(),
        ExprKind::Field { record, .. } => vec![record],
        ExprKind::List(e) | ExprKind::Tuple(e) => e.iter_mut().collect(),
        ExprKind::Annot { expr, .. } | ExprKind::Is { expr, .. } => vec![expr],
        _ => Vec::new(),
    };
    children.into_iter().any(|child| visit(child, edit))
}
