//! Exports enforced (tr-grammar §5.1): a definition may call into another module
//! only through the names that module's `exports` block lists. A module without
//! an `exports` block exports nothing. Resolution is left alone — the reference
//! still names its target, so hashes do not depend on the rule — and each
//! violation is a diagnostic at the written reference.

use std::collections::BTreeSet;

use trellis_diag::{Diagnostic, LineIndex, TextRange};
use trellis_spec::BlockSyntax;

use crate::db::Db;
use crate::index::Item;
use crate::refs::FreeRef;
use crate::soil::{free_refs, item_soil_file};
use crate::spec::parse_spec;

/// The names a module exports, from its `_module.tr`.
#[salsa::tracked(returns(ref))]
pub fn module_exports(db: &dyn Db, module: crate::index::Module<'_>) -> BTreeSet<String> {
    let Some(spec) = crate::index::module_spec(db, module) else {
        return BTreeSet::new();
    };
    parse_spec(db, spec)
        .file
        .blocks
        .iter()
        .filter_map(|block| match &block.value.syntax {
            BlockSyntax::Exports(exports) => Some(exports.iter().map(|e| e.name.clone())),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Every qualified reference of `item` to a name its module does not export. A
/// definition that names no other module is answered from its references, with
/// no memo of its own on the path every pass confirms.
pub fn export_violations<'db>(db: &'db dyn Db, item: Item<'db>) -> &'db [Diagnostic] {
    let own = item.module(db);
    let crosses = free_refs(db, item)
        .iter()
        .any(|reference| matches!(reference, FreeRef::Qualified { module, .. } if module != own));
    if crosses {
        qualified_violations(db, item)
    } else {
        &[]
    }
}

#[salsa::tracked(returns(ref))]
fn qualified_violations<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<Diagnostic> {
    let own = item.module(db);
    let mut out = Vec::new();
    for reference in free_refs(db, item).iter() {
        let FreeRef::Qualified { module, name } = reference else {
            continue;
        };
        let target = crate::index::Module::new(db, module.clone());
        if module == own || !crate::index::module_exists(db, target) {
            continue;
        }
        let exported = module_exports(db, target);
        if exported.contains(name) {
            continue;
        }
        let written = format!("{module}::{name}");
        let mut diagnostic = Diagnostic::new(
            "unexported-name",
            format!(
                "`{written}` is not exported by module `{module}`: add `{name}` to the `exports` block of {module}/_module.tr, or do not call it from `{own}`"
            ),
        );
        if let Some(file) = item_soil_file(db, item) {
            let text = file.text(db);
            diagnostic = diagnostic.with_file(file.path(db).as_str());
            if let Some(at) = text.find(&written) {
                let range = TextRange::new(at as u32, (at + written.len()) as u32);
                diagnostic = diagnostic.with_span(LineIndex::new(text).span(text, range));
            }
        }
        out.push(diagnostic);
    }
    out
}
