//! Soil-side queries: parsed `.soil` files, each item's equation, its hash form
//! (soil-syntax-spec §9.1) and its free references. A binder rename or a reformat
//! re-parses the file, but the hash form comes out equal, so nothing that reads it
//! runs again.

use std::collections::BTreeSet;
use std::sync::Arc;

use soil_syntax::ast::{self, Equation, Signature};
use trellis_diag::Diagnostic;

use crate::db::Db;
use crate::files::SourceFile;
use crate::index::{Item, ItemKind, definition_files};
use crate::refs::{FreeRef, equation_refs};

/// A parsed `.soil` file and what the parser reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoilParse {
    pub ast: ast::SourceFile,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parsed once, read by the memos that keep what they need of it (the
/// item's equation, its facts, its references); so only the last few hundred
/// parses are kept once a revision ends (design §7.15), not one per file.
#[salsa::tracked(returns(ref), lru = 256)]
pub fn parse_soil(db: &dyn Db, file: SourceFile) -> Arc<SoilParse> {
    let (parsed, diagnostics) = soil_syntax::parse_file(file.text(db));
    let path = file.path(db).as_str();
    let diagnostics = diagnostics.into_iter().map(|d| d.in_file(path)).collect();
    Arc::new(SoilParse {
        ast: parsed,
        diagnostics,
    })
}

/// Turns the LRU of [`parse_soil`] off ([`crate::keep_every_parse`]);
/// its setter is visible in this module alone.
pub(crate) fn keep_every_parse(db: &mut dyn Db) {
    parse_soil::set_lru_capacity(db, 0);
}

/// The `.soil` file holding an item's equation: `<module>/<name>.soil` for a public
/// function, `<module>/_private.soil` for a helper.
pub fn item_soil_file(db: &dyn Db, item: Item<'_>) -> Option<SourceFile> {
    match item.kind(db) {
        ItemKind::Function | ItemKind::Helper => definition_files(db, item).soil,
        ItemKind::Type => None,
    }
}

/// The item's equation, if its file has one.
#[salsa::tracked(returns(ref))]
pub fn item_equation<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Arc<Equation>> {
    equation_in_file(db, item).cloned()
}

/// The item's equation, read from its file's parse without a memo of its own:
/// for queries that memoize what they derive from it (`soil_facts`).
pub(crate) fn equation_in_file<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
) -> Option<&'db Arc<Equation>> {
    let file = item_soil_file(db, item)?;
    let name = item.name(db);
    parse_soil(db, file)
        .ast
        .items
        .iter()
        .find_map(|candidate| match candidate {
            ast::Item::Equation(equation) if &equation.name.text == name => Some(equation),
            _ => None,
        })
}

/// A private helper's signature item in `_private.soil`.
#[salsa::tracked(returns(ref))]
pub fn helper_signature<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Signature> {
    if item.kind(db) != ItemKind::Helper {
        return None;
    }
    let file = item_soil_file(db, item)?;
    let name = item.name(db);
    parse_soil(db, file)
        .ast
        .items
        .iter()
        .find_map(|candidate| match candidate {
            ast::Item::Signature(signature) if &signature.name.text == name => {
                Some(signature.clone())
            }
            _ => None,
        })
}

/// The item's free references, read off its equation, sorted and each once:
/// a slice, as [`crate::assembly::program_refs`] keeps its targets.
#[salsa::tracked(returns(ref))]
pub fn free_refs<'db>(db: &'db dyn Db, item: Item<'db>) -> Box<[FreeRef]> {
    item_equation(db, item)
        .as_ref()
        .map(|equation| equation_refs(equation).into_iter().collect())
        .unwrap_or_default()
}

/// The names of the private helpers `_private.soil` defines in a module.
#[salsa::tracked(returns(ref))]
pub fn module_helpers(db: &dyn Db, file: SourceFile) -> BTreeSet<String> {
    parse_soil(db, file)
        .ast
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::Equation(equation) => Some(equation.name.text.clone()),
            _ => None,
        })
        .collect()
}
