//! Sealed body edits (design §7.8): an edit of a function's `.soil` that leaves
//! what every other entry reads of it as it was. A caller's check reads a
//! signed callee by its declaration alone, unless the two are in one recursion
//! cycle (§7.4); the programs and cycles every check and property check is
//! built from follow the definitions' program references; so when a function
//! is signed before and after, in no cycle, and refers to the same targets,
//! no entry but its own can see its body — except through hashes, which
//! `soil_hash` chains up to every dependent and the status ladder compares
//! below its check rungs. [`crate::RootJoins`] re-asks such an edit's reach for
//! those hashes alone. Whether the edit is sealed is known only once it is
//! applied; the face it must keep is read just before.
//!
//! A spec has a face too (§7.14): what any entry but its owner's reads of it
//! is its frontmatter and its reserved blocks, by value — the checker, the
//! programs, the suites and the decisions read blocks located in their own
//! content, and the prose is read by the spec's own prose hash alone. A spec
//! edit that keeps them (prose, blank lines, a heading) is sealed: it moves
//! its owner's entries and nothing else. A lock is read by its own
//! definition's status alone, so its edits are sealed the same way.

use std::collections::BTreeMap;

use camino::Utf8Path;
use soil_types::Declaration;
use trellis_spec::{BlockKind, BlockValue, TrFile};

use crate::assembly::{program_cycle, program_refs};
use crate::check::checker_declaration;
use crate::db::Db;
use crate::files::FileKind;
use crate::index::{Item, ItemKind};
use crate::mentions::{Owner, Reached};
use crate::resolve::Target;
use crate::spec::parse_spec;

/// What every entry but a function's own reads of its body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BodyFace {
    refs: Box<[Target]>,
    declaration: Declaration,
}

impl BodyFace {
    /// The face of `module::name` as `db` has it, or `None` when others may
    /// read its body: unsigned or unlowered (its type is inferred from the
    /// body), or a member of a recursion cycle.
    pub(crate) fn of(db: &dyn Db, (module, name): &Owner) -> Option<BodyFace> {
        let item = Item::new(db, module.as_str(), name.as_str());
        let declaration = checker_declaration(db, item).clone()?;
        if program_cycle(db, item).is_some() {
            return None;
        }
        Some(BodyFace {
            refs: program_refs(db, item).clone(),
            declaration,
        })
    }
}

/// Whether `path`, owned by `owner`, is a function's `.soil`: the only file
/// whose edit may be sealed.
pub(crate) fn is_body_file(path: &str, owner: &Owner) -> bool {
    FileKind::of(Utf8Path::new(path)) == FileKind::Soil
        && ItemKind::of(&owner.1) == ItemKind::Function
}

/// A body edit held until it is applied: the face its function had before,
/// and what the edit reaches.
pub(crate) struct BodyEdit {
    pub(crate) owner: Owner,
    pub(crate) before: BodyFace,
    pub(crate) reach: BTreeMap<String, Reached>,
}

impl BodyEdit {
    /// Whether the function still shows the face it had.
    pub(crate) fn is_sealed(&self, db: &dyn Db) -> bool {
        BodyFace::of(db, &self.owner).is_some_and(|after| after == self.before)
    }
}

/// What an edit of a spec moved of its face.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpecEdit {
    /// Frontmatter and blocks as they were: only its owner's entries move.
    Sealed,
    /// Some block or the frontmatter moved; `exports` says whether an
    /// `exports` block did (a module's own spec reaches whoever names one of
    /// its definitions only then).
    Moved { exports: bool },
}

/// How `after`, the new parse of the spec at `path`, differs from the one
/// `db` holds (a spec `db` does not hold moved everything).
pub(crate) fn spec_edit(db: &dyn Db, path: &str, after: &TrFile) -> SpecEdit {
    let Some(file) = crate::index::file_at(db, path) else {
        return SpecEdit::Moved { exports: true };
    };
    let before = &parse_spec(db, file).file;
    if face(before).eq(face(after)) && before.frontmatter == after.frontmatter {
        return SpecEdit::Sealed;
    }
    let exports = |spec| face(spec).filter(|block| block.header.kind == BlockKind::Exports);
    SpecEdit::Moved {
        exports: !exports(before).eq(exports(after)),
    }
}

/// A spec's reserved blocks, by value: located in their own content, so
/// equal whatever moved around them.
fn face(spec: &TrFile) -> impl Iterator<Item = &BlockValue> {
    spec.blocks.iter().map(|block| &*block.value)
}
