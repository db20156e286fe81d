//! The rows of `trellis status`, one memo per module and joined for the root:
//! a function's row from its status ladder ([`definition_status`]), a type's
//! and a decision scope's from their own rungs (`entry_status`). The joins
//! beside the database ([`crate::RootJoins`]) build their rows with the same
//! functions, entry by entry.

use std::sync::Arc;

use trellis_diag::Diagnostic;
use trellis_lock::{Scope, Status};

use crate::db::Db;
use crate::entry_status::{scope_entry_row, type_row};
use crate::files::Workspace;
use crate::index::{Item, ItemKind, Module, ModuleFiles, module_files, root_index};
use crate::status::{
    Explain, StatusRow, definition_status, status_past_checks, unreadable_function_row,
};

/// The status of every definition and decision scope of the root (memoized).
#[salsa::tracked(returns(ref))]
pub fn root_status(db: &dyn Db) -> Vec<StatusRow> {
    let index = root_index(db, Workspace::get(db));
    let mut rows: Vec<StatusRow> = project_status_row(db).into_iter().collect();
    for module in index.modules.keys() {
        rows.extend(
            module_status(db, Module::new(db, module.clone()))
                .iter()
                .cloned(),
        );
    }
    rows
}

/// The project's decision-scope row, the one row of the root's status that
/// belongs to no module.
pub(crate) fn project_status_row(db: &dyn Db) -> Option<StatusRow> {
    let index = root_index(db, Workspace::get(db));
    let project = index.project?;
    Some(scope_entry_row(
        db,
        "project".to_owned(),
        project,
        Scope::Project,
        index.project_lock,
    ))
}

/// One module's rows of the root's status: its decision scope, then each function.
#[salsa::tracked(returns(ref))]
fn module_status<'db>(db: &'db dyn Db, module: Module<'db>) -> Vec<StatusRow> {
    let Some(files) = module_files(db, module) else {
        return Vec::new();
    };
    let name = module.name(db);
    (scope_status_row(db, name, files).into_iter())
        .chain((files.specs.keys()).filter_map(|stem| spec_status_row(db, name, files, stem)))
        .collect()
}

/// A module's decision-scope row, when it has a `_module.tr`.
pub(crate) fn scope_status_row(
    db: &dyn Db,
    module: &str,
    files: &ModuleFiles,
) -> Option<StatusRow> {
    let spec = files.spec?;
    Some(scope_entry_row(
        db,
        module.to_owned(),
        spec,
        Scope::Module,
        files.locks.get("_module").copied(),
    ))
}

/// The status row of one spec of a module, by its stem: a type's or a
/// function's (a helper's name has none).
pub(crate) fn spec_status_row(
    db: &dyn Db,
    module: &str,
    files: &ModuleFiles,
    name: &str,
) -> Option<StatusRow> {
    spec_status_entry(db, module, files, name, None, Explain::Callees)
        .map(|entry| Arc::unwrap_or_clone(entry.row))
}

/// A status row as the joins hold it, with whether its ladder must be
/// climbed again after an edit that moved only hashes below it.
#[derive(Clone, Debug)]
pub(crate) struct HeldRow {
    /// Shared with the joined answer: a moved row is built once and joined,
    /// shelved and held without copying its texts.
    pub(crate) row: Arc<StatusRow>,
    /// The row's ladder climbed past the check rungs
    /// ([`trellis_lock::Status::passed_checks`]), so a moved callee hash can
    /// change it; every other row is decided below what such an edit moves.
    pub(crate) past_checks: bool,
    /// A `callee-changed` row whose reason names the moved edges without
    /// what changed below them ([`Explain::EdgesOnly`]).
    pub(crate) brief: bool,
}

/// [`spec_status_row`], given the row `held` before an edit that moved only
/// hashes below this spec (design §7.8), if that is all that moved: a row
/// decided below the check rungs stands, and a function's ladder is climbed
/// again past them without asking for its problems (design §7.13), saying of
/// a moved callee what `explain` asks.
pub(crate) fn spec_status_entry(
    db: &dyn Db,
    module: &str,
    files: &ModuleFiles,
    name: &str,
    held: Option<&HeldRow>,
    explain: Explain,
) -> Option<HeldRow> {
    let &spec = files.specs.get(name)?;
    if let Some(held) = held
        && (!held.past_checks || ItemKind::of(name) != ItemKind::Function)
    {
        return Some(held.clone());
    }
    match ItemKind::of(name) {
        ItemKind::Type => Some(HeldRow {
            row: Arc::new(type_row(
                db,
                format!("{module}::{name}"),
                spec,
                files.locks.get(name).copied(),
            )),
            past_checks: false,
            brief: false,
        }),
        ItemKind::Function => {
            let item = Item::new(db, module, name);
            let qualified = item.qualified(db);
            let row = |status: &Result<Status, Vec<Diagnostic>>, brief: bool| match status {
                Ok(status) => HeldRow {
                    row: Arc::new(StatusRow::from_status(qualified, "function", status)),
                    past_checks: status.passed_checks(),
                    brief: brief && matches!(status, Status::CalleeChanged { .. }),
                },
                Err(errors) => HeldRow {
                    row: Arc::new(unreadable_function_row(db, item, errors)),
                    past_checks: false,
                    brief: false,
                },
            };
            // The memoized status is read in place, never cloned.
            Some(match held {
                Some(_) => row(
                    &status_past_checks(db, item, explain),
                    explain == Explain::EdgesOnly,
                ),
                None => row(definition_status(db, item), false),
            })
        }
        ItemKind::Helper => None,
    }
}
