//! Spec-side queries: the parsed `.tr` and the hashes of its classes
//! (tr-grammar §1). Each hash class is its own small query returning a `Digest`:
//! after any edit all three re-execute cheaply, and salsa stops at each one whose
//! value did not move, so a prose edit wakes nothing that reads the formal or test
//! hash.

use std::sync::Arc;

use trellis_diag::Diagnostic;
use trellis_hash::Digest;
use trellis_spec::{BlockKind, BlockSyntax, BlockValue, SpanClass, TrFile};

use crate::db::Db;
use crate::files::SourceFile;

/// A parsed spec and what the parser reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecParse {
    pub file: TrFile,
    pub diagnostics: Vec<Diagnostic>,
}

/// The spec's stem: `median` for `csvstats/median.tr`.
fn stem(db: &dyn Db, file: SourceFile) -> String {
    file.path(db).file_stem().unwrap_or_default().to_owned()
}

/// Parsed once, read by the memos that keep what they need of it (its blocks,
/// its hashes, its findings); so only the last few hundred parses are kept
/// once a revision ends (design §7.15), not one per spec.
#[salsa::tracked(returns(ref), lru = 256)]
pub fn parse_spec(db: &dyn Db, file: SourceFile) -> Arc<SpecParse> {
    let (parsed, diagnostics) = trellis_spec::parse_tr(file.text(db), &stem(db, file));
    let path = file.path(db).as_str();
    let diagnostics = diagnostics.into_iter().map(|d| d.in_file(path)).collect();
    Arc::new(SpecParse {
        file: parsed,
        diagnostics,
    })
}

/// Turns the LRU of [`parse_spec`] off ([`crate::keep_every_parse`]);
/// its setter is visible in this module alone.
pub(crate) fn keep_every_parse(db: &mut dyn Db) {
    parse_spec::set_lru_capacity(db, 0);
}

/// Formal: the frontmatter name, then each formal block's (info string, content).
pub fn formal_hash(db: &dyn Db, file: SourceFile) -> Digest {
    spec_hashes(db, file).formal
}

/// Test: each test block's (info string, content).
pub fn test_hash(db: &dyn Db, file: SourceFile) -> Digest {
    spec_hashes(db, file).test
}

/// Prose: the file's bytes with the name line and every reserved fence elided.
pub fn prose_hash(db: &dyn Db, file: SourceFile) -> Digest {
    spec_hashes(db, file).prose
}

/// The three spec hashes of a file, for status and locks (the lock's own
/// record of them): one memo, so every pass confirms one value per spec. A
/// reader of one part re-executes after an edit of another and backdates;
/// hashing a spec is microseconds, a memo per part would be three more
/// confirmations per spec on every pass.
pub use trellis_lock::SpecHashes;

/// Hashes every spec of the root, and reads every type spec's invariant
/// labels. A host calls it while the parses its last answer read are still
/// held: a `check` reads every spec's parse but none of its hashes, and a
/// `status` after it would parse every spec again for them (and each type's
/// for its labels) once the parses were dropped (design §7.15).
pub fn hash_every_spec(db: &dyn Db) {
    let index = crate::index::root_index(db, crate::files::Workspace::get(db));
    for module in index.modules.values() {
        for (stem, &spec) in &module.specs {
            spec_hashes(db, spec);
            if crate::index::ItemKind::of(stem) == crate::index::ItemKind::Type {
                invariant_labels(db, spec);
            }
        }
    }
    let scopes = (index.modules.values().filter_map(|module| module.spec)).chain(index.project);
    for spec in scopes {
        spec_hashes(db, spec);
    }
}

#[salsa::tracked(returns(copy))]
pub fn spec_hashes(db: &dyn Db, file: SourceFile) -> SpecHashes {
    let spec = &parse_spec(db, file).file;
    SpecHashes {
        formal: spec.formal_hash(),
        test: spec.test_hash(),
        prose: spec.prose_hash(file.text(db)),
    }
}

/// The position-free values of one file's blocks of a kind, in document order.
/// Reading these instead of the parse keeps consumers asleep after edits elsewhere.
#[salsa::tracked(returns(ref))]
pub fn formal_blocks(db: &dyn Db, file: SourceFile) -> Vec<Arc<BlockValue>> {
    (parse_spec(db, file).file.blocks_of_class(SpanClass::Formal))
        .map(|block| Arc::clone(&block.value))
        .collect()
}

#[salsa::tracked(returns(ref))]
pub fn test_blocks(db: &dyn Db, file: SourceFile) -> Vec<Arc<BlockValue>> {
    (parse_spec(db, file).file.blocks_of_class(SpanClass::Test))
        .map(|block| Arc::clone(&block.value))
        .collect()
}

/// The labels of a type spec's `invariant` clauses, in document order: a
/// memo of its own, so a type's status row needs no parse of its spec.
#[salsa::tracked(returns(ref))]
pub fn invariant_labels(db: &dyn Db, spec: SourceFile) -> Vec<String> {
    parse_spec(db, spec)
        .file
        .blocks_of(BlockKind::Invariant)
        .filter_map(|block| match &block.value.syntax {
            BlockSyntax::Clauses(clauses) => Some(clauses.iter().map(|c| c.label.clone())),
            _ => None,
        })
        .flatten()
        .collect()
}
