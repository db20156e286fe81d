//! Decision entries and scopes (tr-grammar §5.2, §9; design §4.3). Each entry hashes
//! on its own, so editing one entry moves only that entry's hash and wakes only the
//! lowerings that cite it; the scope hash covers the set of labels, so adding an
//! entry flags the scope once. What a module's definitions see of both scopes
//! is gathered once per module ([`scope_decisions`]).

use std::collections::BTreeMap;

use trellis_hash::Digest;
use trellis_lock::Scope;
use trellis_spec::{BlockSyntax, DecisionEntry, DecisionEntryPart};

use crate::db::Db;
use crate::files::SourceFile;
use crate::index::{Module, module_spec, project_spec};
use crate::spec::parse_spec;

/// A decision by scope file (`_project.tr` or `<module>/_module.tr`) and label.
#[salsa::interned(debug)]
pub struct DecisionKey<'db> {
    #[returns(copy)]
    pub scope: SourceFile,
    #[returns(ref)]
    pub label: String,
}

/// The entries of a scope file's `decisions` block, in document order.
#[salsa::tracked(returns(ref))]
pub fn decision_entries(db: &dyn Db, scope: SourceFile) -> Vec<DecisionEntry> {
    parse_spec(db, scope)
        .file
        .blocks
        .iter()
        .filter_map(|block| match &block.value.syntax {
            BlockSyntax::Decisions(entries) => Some(entries.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// One entry's hash: its exact bytes, label line through its `rejected:` lines.
#[salsa::tracked(returns(copy))]
pub fn decision_entry_hash<'db>(db: &'db dyn Db, key: DecisionKey<'db>) -> Option<Digest> {
    let label = key.label(db);
    decision_entries(db, key.scope(db))
        .iter()
        .find(|entry| &entry.label == label)
        .map(|entry| {
            DecisionEntryPart {
                label: entry.label.clone(),
                bytes: entry.bytes.clone(),
            }
            .hash()
        })
}

/// The scope hash: the scope's labels, sorted byte-wise, joined with NUL.
#[salsa::tracked(returns(copy))]
pub fn scope_hash(db: &dyn Db, scope: SourceFile) -> Digest {
    trellis_spec::scope_hash(
        decision_entries(db, scope)
            .iter()
            .map(|entry| entry.label.as_str()),
    )
}

/// Every decision entry a module's definitions see, by (scope, label), and the
/// two scope hashes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionsInScope {
    pub entries: BTreeMap<(Scope, String), Digest>,
    pub project_scope_hash: Option<Digest>,
    pub module_scope_hash: Option<Digest>,
}

/// The decisions a module's definitions see: the project's and the module's.
pub fn scope_decisions<'db>(db: &'db dyn Db, module: &str) -> &'db DecisionsInScope {
    module_decisions(db, Module::new(db, module.to_owned()))
}

/// [`scope_decisions`], one memo per module: every definition's status reads it.
#[salsa::tracked(returns(ref))]
fn module_decisions<'db>(db: &'db dyn Db, module: Module<'db>) -> DecisionsInScope {
    let mut scope = DecisionsInScope::default();
    let mut add = |file: SourceFile, which: Scope| {
        for entry in decision_entries(db, file) {
            let key = DecisionKey::new(db, file, entry.label.clone());
            if let Some(hash) = decision_entry_hash(db, key) {
                scope.entries.insert((which, entry.label.clone()), hash);
            }
        }
        scope_hash(db, file)
    };
    scope.project_scope_hash = project_spec(db).map(|file| add(file, Scope::Project));
    scope.module_scope_hash = module_spec(db, module).map(|file| add(file, Scope::Module));
    scope
}

/// The scope hash of no labels at all, for a scope without a decisions file.
pub fn empty_scope_hash() -> Digest {
    trellis_spec::scope_hash(std::iter::empty())
}
