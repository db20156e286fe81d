//! Per-module tables: what a pass over the whole root reads (design §7.3). Every
//! definition's hashes and every code item's program, one memo per module, so a
//! pass after an edit confirms one memo per untouched module instead of one per
//! definition, and re-joins only the tables whose entries moved.

use std::sync::Arc;

use trellis_hash::Digest;

use crate::db::Db;
use crate::documents::program_json;
use crate::hashing::{module_code_items, soil_hash};
use crate::index::Module;
use crate::spec::{SpecHashes, spec_hashes};

/// One definition's current hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinitionHashes {
    pub name: String,
    /// The three-part hashes of `<name>.tr`; `None` for a helper or a body
    /// without a spec.
    pub spec: Option<SpecHashes>,
    /// `None` for a type, or for a function without a body yet.
    pub soil_hash: Option<Digest>,
}

/// The hashes of every definition of `module` with a spec or a body, in name order.
#[salsa::tracked(returns(ref))]
pub fn module_hashes<'db>(db: &'db dyn Db, module: Module<'db>) -> Vec<DefinitionHashes> {
    let Some(files) = crate::index::module_files(db, module) else {
        return Vec::new();
    };
    // Both sides are in name order: merge them.
    let spec_row = |name: &String, file| DefinitionHashes {
        name: name.clone(),
        spec: Some(spec_hashes(db, file)),
        soil_hash: None,
    };
    let items = module_code_items(db, module);
    let mut specs = files.specs.iter().peekable();
    let mut rows = Vec::with_capacity(files.specs.len().max(items.len()));
    for &item in items {
        let name = item.name(db);
        while let Some((spec, &file)) = specs.next_if(|(spec, _)| *spec < name) {
            rows.push(spec_row(spec, file));
        }
        let spec = specs.next_if(|(spec, _)| *spec == name);
        rows.push(DefinitionHashes {
            name: name.clone(),
            spec: spec.map(|(_, &file)| spec_hashes(db, file)),
            soil_hash: soil_hash(db, item),
        });
    }
    rows.extend(specs.map(|(name, &file)| spec_row(name, file)));
    rows
}

/// The `program.json` of every function and helper of `module`, by name in name
/// order. The documents are shared with [`program_json`]'s memos, not copied.
#[salsa::tracked(returns(ref))]
pub fn module_programs<'db>(db: &'db dyn Db, module: Module<'db>) -> Vec<(String, Arc<str>)> {
    module_code_items(db, module)
        .iter()
        .map(|&item| (item.name(db).clone(), program_json(db, item).clone()))
        .collect()
}
