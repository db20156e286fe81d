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

use std::collections::{BTreeMap, BTreeSet};

use camino::Utf8Path;
use soil_types::Declaration;

use crate::assembly::{program_cycle, program_refs};
use crate::check::checker_declaration;
use crate::db::Db;
use crate::files::FileKind;
use crate::index::{Item, ItemKind};
use crate::mentions::{Owner, Reached};
use crate::resolve::Target;

/// What every entry but a function's own reads of its body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BodyFace {
    refs: BTreeSet<Target>,
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
