//! The context bundle of one definition at one budget, as a query
//! (`context_bundle`): the pieces in priority order, packed, with the manifest
//! rendered last because it lists what was packed. Salsa memoizes it per
//! (definition, budget); it re-executes only when a piece it reads moved, and
//! each piece is its own query, so an unrelated edit revalidates it in O(pieces).

use std::sync::Arc;

use trellis_db::{Db, Item, ItemKind, Module, Workspace, root_index, spec_file, spec_hashes};
use trellis_diag::Diagnostic;
use trellis_hash::{Digest, Hasher};

use crate::manifest::{self, Manifest};
use crate::packer::{Dropped, Tier, Unit, pack, tokens};
use crate::pieces::{
    BundleFile, OracleStanza, callable_surface, callee_md, callee_path, decisions_md,
    module_examples, module_md, oracle, previous_soil, spec_md, tests_json,
};

/// A packed bundle: what a host writes (every file, `bundle.json` first) and
/// what it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextBundle {
    /// `csvstats/median`.
    pub definition: String,
    pub budget: u64,
    pub estimate: u64,
    /// `bundle.json`, then the packed files in priority order.
    pub files: Vec<BundleFile>,
    pub dropped: Vec<Dropped>,
    /// Over every file's path and bytes, in path order (questions, §8).
    pub hash: Digest,
}

impl ContextBundle {
    pub fn manifest(&self) -> &str {
        &self.files[0].text
    }
}

/// The item `module::name` names, if it is a function definition with a spec.
pub fn definition_item<'db>(db: &'db dyn Db, def: &str) -> Result<Item<'db>, Diagnostic> {
    let index = root_index(db, Workspace::get(db));
    let found = trellis_db::split_definition_name(def).filter(|(module, name)| {
        ItemKind::of(name) == ItemKind::Function
            && index
                .module(module)
                .is_some_and(|files| files.specs.contains_key(*name))
    });
    match found {
        Some((module, name)) => Ok(Item::new(db, module.to_owned(), name.to_owned())),
        None => Err(Diagnostic::new(
            "unknown-definition",
            format!("no function definition `{def}` in this root (write module::name)"),
        )),
    }
}

/// The bundle's units before packing, in priority order (§5).
#[salsa::tracked(returns(ref))]
pub fn bundle_units<'db>(db: &'db dyn Db, item: Item<'db>) -> Arc<[Unit]> {
    let module = Module::new(db, item.module(db).clone());
    let one = |tier, file: &BundleFile| Unit {
        tier,
        files: vec![file.clone()],
    };
    let mut units = Vec::new();
    if let Some(spec) = spec_md(db, item) {
        units.push(one(Tier::Spec, spec));
    }
    if let Some(decisions) = decisions_md(db, module) {
        units.push(one(Tier::Spec, decisions));
    }
    units.push(one(Tier::Tests, tests_json(db, item)));
    if let Some(previous) = previous_soil(db, item) {
        units.push(one(Tier::Previous, previous));
    }
    if let Some((_, Some(reference))) = oracle(db, item) {
        units.push(one(Tier::Reference, reference));
    }
    for &callee in callable_surface(db, item) {
        let file = BundleFile {
            path: callee_path(db, item, callee),
            text: callee_md(db, callee).clone(),
        };
        units.push(Unit {
            tier: Tier::Callees,
            files: vec![file],
        });
    }
    let index = root_index(db, Workspace::get(db));
    let own = item.module(db);
    let modules = std::iter::once(own).chain(index.modules.keys().filter(|name| *name != own));
    for name in modules {
        for pair in module_examples(db, Module::new(db, name.clone())) {
            if name == own && pair.name == *item.name(db) {
                continue;
            }
            units.push(Unit {
                tier: Tier::Examples,
                files: vec![pair.spec.clone(), pair.soil.clone()],
            });
        }
    }
    if let Some(prose) = module_md(db, module) {
        units.push(one(Tier::ModuleProse, prose));
    }
    units.into()
}

/// The packed bundle of `item` at `budget` tokens, or `budget-too-small`.
#[salsa::tracked(returns(ref))]
pub fn context_bundle<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
    budget: u64,
) -> Result<Arc<ContextBundle>, Diagnostic> {
    let packing = pack(bundle_units(db, item), budget)?;
    let definition = format!("{}/{}", item.module(db), item.name(db));
    let hashes = spec_file(db, item).map(|file| spec_hashes(db, file));
    let spec_hashes = match hashes {
        Some(h) => [
            h.formal.to_string(),
            h.test.to_string(),
            h.prose.to_string(),
        ],
        None => Default::default(),
    };
    let oracle_stanza: Option<&OracleStanza> = oracle(db, item).as_ref().map(|(stanza, _)| stanza);
    let mut packed_paths = vec!["bundle.json"];
    packed_paths.extend(packing.packed.iter().map(|file| file.path.as_str()));
    // The estimate counts the manifest, which prints the estimate: settle the
    // number (it can only move when its digit count does).
    let mut estimate = packing.tokens;
    let mut text = String::new();
    for _ in 0..4 {
        text = manifest::render(&Manifest {
            definition: definition.clone(),
            budget,
            estimate,
            packed: packed_paths.clone(),
            dropped: &packing.dropped,
            oracle: oracle_stanza,
            spec_hashes: spec_hashes.clone(),
        });
        let settled = packing.tokens + tokens(text.len());
        if settled == estimate {
            break;
        }
        estimate = settled;
    }
    let mut files = vec![BundleFile {
        path: "bundle.json".to_owned(),
        text: Arc::from(text),
    }];
    files.extend(packing.packed.iter().cloned());
    let mut by_path: Vec<&BundleFile> = files.iter().collect();
    by_path.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hasher = Hasher::tagged("trellis-context-bundle/1");
    for file in by_path {
        hasher.part(file.path.as_bytes()).part(file.text.as_bytes());
    }
    Ok(Arc::new(ContextBundle {
        definition,
        budget,
        estimate,
        files,
        dropped: packing.dropped,
        hash: hasher.finish(),
    }))
}
