//! The checker as queries. `check_definition` hands soil-types the root's type
//! environment and the definition's callee-first program, built from
//! position-free values: spec blocks are located in their own content, so a prose
//! edit above a signature changes nothing the checker sees. Diagnostics come back
//! block-relative and are mapped to file positions only when reported
//! ([`report_diagnostics`]), which is the one place that reads block locations.

use std::sync::Arc;

use rustc_hash::FxHashSet;
use soil_syntax::ast::Signature;
use soil_types::{
    Allow, CheckFacts, ClauseKind, Declaration, Definition, Env, Located, Program, SourceText,
};
use trellis_diag::{Diagnostic, LineIndex, Position, Span};
use trellis_spec::{BlockKind, BlockSyntax, BlockValue, Clause, SpanClass};

use crate::assembly::{helper_grants, program_callees, program_cycle, program_order};
use crate::db::Db;
use crate::files::Workspace;
use crate::index::{Item, ItemKind, Module, module_type_specs, root_index};
use crate::soil::{helper_signature, item_equation, item_soil_file};
use crate::spec::{formal_blocks, parse_spec};

/// Separates a spec path from a block's class and index in a diagnostic's `file`
/// while it is block-relative; never appears in a real path.
const BLOCK_MARK: char = '\u{1}';

/// A diagnostic's `file` while it points into the `index`-th block of `class`
/// (formal or test) of the spec at `path`: `path`, the mark, `f` or `t`, `index`.
pub(crate) fn block_path(path: &str, class: SpanClass, index: usize) -> String {
    let letter = if class == SpanClass::Test { 't' } else { 'f' };
    format!("{path}{BLOCK_MARK}{letter}{index}")
}

pub(crate) fn block_source(
    path: &str,
    class: SpanClass,
    index: usize,
    block: &BlockValue,
) -> Arc<SourceText> {
    SourceText::new(Some(block_path(path, class, index)), &block.content)
}

/// The root's type environment for the checker.
#[salsa::tracked(returns(ref))]
pub fn checker_env(db: &dyn Db) -> Env {
    let index = root_index(db, Workspace::get(db));
    let mut env = Env::default();
    for module in index.modules.keys() {
        for &(_, file) in module_type_specs(db, Module::new(db, module.clone())) {
            for (k, block) in formal_blocks(db, file).iter().enumerate() {
                if let BlockSyntax::TypeDecl(Some(declaration)) = &block.syntax {
                    env.types.push(Located {
                        node: declaration.clone(),
                        source: block_source(file.path(db).as_str(), SpanClass::Formal, k, block),
                    });
                }
            }
        }
    }
    env
}

/// The root's types prepared once for every definition: declared over the
/// prelude for the checker, and built for the runner, which decodes test
/// values with them and compiles every suite of `trellis test` against them.
/// Preparing them per definition cost each definition time in proportion to
/// the root's types, and a root of N definitions N times that (design §7.11).
/// Never compared (the prepared forms have no equality); it re-runs only when
/// `checker_env` moved, which every check reads anyway.
#[salsa::tracked(returns(ref), no_eq)]
pub fn root_types(db: &dyn Db) -> trellis_verify::suite::SuiteTypes {
    trellis_verify::suite::SuiteTypes::of(checker_env(db))
}

/// What every check is checked against: [`root_types`], declared.
pub(crate) fn declared_env(db: &dyn Db) -> &soil_types::DeclaredEnv {
    root_types(db).declared()
}

/// One definition as the checker sees it; `None` when it has no body yet.
/// Built for each program it enters, not kept: a memo of it held a second
/// copy of every equation of the root, a sixth of a cold check's memory, and
/// every program copied it again anyway (design §7.15).
pub fn checker_definition(db: &dyn Db, item: Item<'_>) -> Option<Definition> {
    let equation = item_equation(db, item).clone()?;
    let soil = item_soil_file(db, item)?;
    let soil_source = SourceText::shared(Some(soil.path(db).to_string()), soil.text(db).clone());
    let mut definition = Definition {
        name: item.qualified(db),
        signature: None,
        equation: Located {
            node: equation,
            source: soil_source.clone(),
        },
        clauses: Vec::new(),
        allow: Vec::new(),
    };
    match item.kind(db) {
        ItemKind::Helper => {
            definition.signature = helper_signature(db, item).clone().map(|node| Located {
                node,
                source: soil_source.clone(),
            });
            definition.allow = helper_grants(db, item)
                .iter()
                .map(|(hatch, reason)| Allow {
                    hatch: hatch.clone(),
                    reason: reason.clone(),
                })
                .collect();
        }
        ItemKind::Function => {
            let Some(spec) = crate::index::spec_file(db, item) else {
                return Some(definition);
            };
            let path = spec.path(db).to_string();
            for (k, block) in formal_blocks(db, spec).iter().enumerate() {
                let source = || block_source(&path, SpanClass::Formal, k, block);
                match (block.header.kind, &block.syntax) {
                    (BlockKind::SoilSig, BlockSyntax::Signature(Some(signature))) => {
                        definition.signature = Some(Located {
                            node: signature.clone(),
                            source: source(),
                        });
                    }
                    (BlockKind::Requires, BlockSyntax::Clauses(clauses)) => {
                        definition.clauses.extend(clauses_of(
                            ClauseKind::Requires,
                            clauses,
                            &source(),
                        ));
                    }
                    (BlockKind::Ensures, BlockSyntax::Clauses(clauses)) => {
                        definition.clauses.extend(clauses_of(
                            ClauseKind::Ensures,
                            clauses,
                            &source(),
                        ));
                    }
                    (BlockKind::Allow, BlockSyntax::Allow(grants)) => {
                        definition.allow.extend(grants.iter().map(|g| Allow {
                            hatch: g.hatch.clone(),
                            reason: g.reason.clone(),
                        }));
                    }
                    _ => {}
                }
            }
        }
        ItemKind::Type => return None,
    }
    Some(definition)
}

fn clauses_of(
    kind: ClauseKind,
    clauses: &[Clause],
    source: &Arc<SourceText>,
) -> Vec<soil_types::Clause> {
    clauses
        .iter()
        .filter_map(|clause| {
            let predicate = clause.predicate.clone()?;
            Some(soil_types::Clause {
                kind,
                label: clause.label.clone(),
                predicate: Located {
                    node: predicate,
                    source: source.clone(),
                },
            })
        })
        .collect()
}

/// Whether [`checker_definition`] has a definition for `item`: it has an
/// equation in its `.soil` (a type never does).
pub(crate) fn has_body(db: &dyn Db, item: Item<'_>) -> bool {
    item_equation(db, item).is_some()
}

/// The outcome of checking one definition against its callee-first program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// No `.soil` body yet: nothing to check.
    NotLowered,
    Checked(CheckFacts),
    /// Diagnostics, block-relative for spec blocks (see [`report_diagnostics`]).
    Failed(Vec<Diagnostic>),
}

/// What a caller's check needs of a signed definition: its name and declared
/// signature. Editing the body leaves this value unchanged, so the callers'
/// checks are confirmed rather than re-run.
#[salsa::tracked(returns(ref))]
pub fn checker_declaration<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Declaration> {
    if !has_body(db, item) {
        return None;
    }
    Some(Declaration {
        name: item.qualified(db),
        signature: checker_signature(db, item)?,
    })
}

/// The signature [`checker_definition`] gives `item`, read without its body:
/// a helper's from `_private.soil`, a function's from its spec's last
/// `soil-sig` block.
fn checker_signature(db: &dyn Db, item: Item<'_>) -> Option<Located<Signature>> {
    match item.kind(db) {
        ItemKind::Helper => {
            let node = helper_signature(db, item).clone()?;
            let soil = item_soil_file(db, item)?;
            Some(Located {
                node,
                source: SourceText::shared(Some(soil.path(db).to_string()), soil.text(db).clone()),
            })
        }
        ItemKind::Function => {
            let spec = crate::index::spec_file(db, item)?;
            let path = spec.path(db).as_str();
            let blocks = formal_blocks(db, spec).iter().enumerate();
            (blocks.rev()).find_map(|(k, block)| match (block.header.kind, &block.syntax) {
                (BlockKind::SoilSig, BlockSyntax::Signature(Some(signature))) => Some(Located {
                    node: signature.clone(),
                    source: block_source(path, SpanClass::Formal, k, block),
                }),
                _ => None,
            })
        }
        ItemKind::Type => None,
    }
}

/// Checks `item` against its callee-first program ([`definition_program`]), in
/// which only what the check reads in full enters with its body; the signed
/// definitions those call enter by signature alone ([`checker_declaration`]).
#[salsa::tracked(returns(ref))]
pub fn check_definition<'db>(db: &'db dyn Db, item: Item<'db>) -> CheckOutcome {
    if !has_body(db, item) {
        return CheckOutcome::NotLowered;
    }
    let program = definition_program(db, item);
    // Problems in the environment are reported once, by `env_diagnostics`.
    let report = soil_types::check_declared(declared_env(db), &program);
    match report.for_definition(&item.qualified(db)) {
        Some(Ok(facts)) => CheckOutcome::Checked(facts),
        Some(Err(errors)) => CheckOutcome::Failed(errors),
        None => CheckOutcome::Failed(Vec::new()),
    }
}

/// The callee-first program `item` is checked in: what its check reads with
/// bodies ([`checked_members`]), callees first, and by signature alone
/// ([`checker_declaration`]) the signed definitions those call, in name order
/// (a declaration is a type to look up, never checked). The rest of the
/// program — what the signed callees call in turn — is never read by this
/// check, so it is not in it: the check depends on its direct callees, not on
/// its closure. Most checks read one body, their own, and need no order at
/// all; only a check that reads others' bodies (a recursion cycle, an unsigned
/// callee) orders them by [`program_order`], which follows the whole closure
/// (design §7.15). Shared with the editor's `name_types` (crate::ide), which
/// must check exactly what `check_definition` does.
pub(crate) fn definition_program(db: &dyn Db, item: Item<'_>) -> Program {
    let (in_full, called) = checked_members(db, item);
    let mut program = Program::default();
    if in_full.len() == 1 {
        program.definitions.extend(checker_definition(db, item));
    } else {
        for (module, name) in program_order(db, item).iter() {
            let member = Item::new(db, module.as_str(), name.as_str());
            if in_full.contains(&member)
                && let Some(definition) = checker_definition(db, member)
            {
                program.definitions.push(definition);
            }
        }
    }
    let mut called: Vec<(&String, &String, Item<'_>)> = (called.into_iter())
        .map(|member| (member.module(db), member.name(db), member))
        .collect();
    called.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    for (_, _, member) in called {
        if let Some(declaration) = checker_declaration(db, member) {
            program.declarations.push(declaration.clone());
        }
    }
    program
}

/// The members of `item`'s program its check reads with their bodies, and the
/// signed definitions those call. Read with bodies: `item`, the members of its
/// own recursion cycle (the recursion check follows bodies), and, transitively,
/// every unsigned definition those call (its type is inferred from its body). A
/// signed callee outside the cycle is never among them, so editing its body
/// leaves `item`'s check alone.
fn checked_members<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
) -> (FxHashSet<Item<'db>>, FxHashSet<Item<'db>>) {
    let mut in_full = FxHashSet::from_iter([item]);
    if let Some(cycle) = program_cycle(db, item) {
        in_full.extend(
            cycle
                .iter()
                .map(|(m, n)| Item::new(db, m.as_str(), n.as_str())),
        );
    }
    let mut called = FxHashSet::default();
    let mut to_visit: Vec<Item<'db>> = in_full.iter().copied().collect();
    while let Some(member) = to_visit.pop() {
        for callee in program_callees(db, member) {
            if in_full.contains(&callee) {
                continue;
            }
            if checker_declaration(db, callee).is_some() {
                called.insert(callee);
            } else if in_full.insert(callee) {
                to_visit.push(callee);
            }
        }
    }
    called.retain(|callee| !in_full.contains(callee));
    (in_full, called)
}

/// Problems in the type declarations themselves (block-relative).
#[salsa::tracked(returns(ref))]
pub fn env_diagnostics(db: &dyn Db) -> Vec<Diagnostic> {
    soil_types::check_declared(declared_env(db), &Program::default()).env_errors
}

/// Maps block-relative diagnostics to positions in their `.tr` file. Reads the
/// spec's block locations, so it re-runs after any edit of the spec; it is cheap
/// and nothing memoized depends on its result's positions.
pub fn report_diagnostics(db: &dyn Db, diagnostics: &[Diagnostic]) -> Vec<Diagnostic> {
    diagnostics
        .iter()
        .map(|diagnostic| relocate(db, diagnostic.clone()))
        .collect()
}

fn relocate(db: &dyn Db, mut diagnostic: Diagnostic) -> Diagnostic {
    let Some((path, block)) = diagnostic
        .file
        .as_deref()
        .and_then(|file| file.split_once(BLOCK_MARK))
    else {
        return diagnostic;
    };
    let class = match block.chars().next() {
        Some('t') => SpanClass::Test,
        _ => SpanClass::Formal,
    };
    let block = block
        .get(1..)
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let path = path.to_owned();
    diagnostic.file = Some(path.clone());
    let Some(file) = crate::index::file_at(db, &path) else {
        return diagnostic;
    };
    let parse = parse_spec(db, file);
    let Some(location) = parse
        .file
        .blocks
        .iter()
        .filter(|b| b.value.header.kind.class() == class)
        .nth(block)
        .map(|b| &b.location)
    else {
        return diagnostic;
    };
    let text = file.text(db);
    let index = LineIndex::new(text);
    let map = |span: Span| -> Span {
        let at = |p: Position| index.position(text, location.file_offset(p.offset));
        Span {
            start: at(span.start),
            end: at(span.end),
        }
    };
    diagnostic.span = diagnostic.span.map(map);
    for note in &mut diagnostic.notes {
        note.span = note.span.map(map);
    }
    diagnostic
}
