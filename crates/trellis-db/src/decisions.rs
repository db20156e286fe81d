//! Decision entries and scopes (tr-grammar §5.2, §9; design §4.3). Each entry hashes
//! on its own, so editing one entry moves only that entry's hash and wakes only the
//! lowerings that cite it; the scope hash covers the set of labels, so adding an
//! entry flags the scope once.

use trellis_hash::Digest;
use trellis_spec::{BlockSyntax, DecisionEntry, DecisionEntryPart};

use crate::db::Db;
use crate::files::SourceFile;
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
