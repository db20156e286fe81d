//! Status rows for the entries that are not functions (lock-schema §8.6, last
//! paragraph): type specs and module or project specs, compared with their locks
//! the way functions are — validity, formal changes (a type's declaration, a
//! module's exports), decision membership, prose — without the lowering rungs.

use trellis_lock::{Lock, Scope, Status};

use crate::db::Db;
use crate::files::SourceFile;
use crate::locks::read_lock_file;
use crate::spec::{invariant_labels, spec_hashes};
use crate::spec_check::{spec_diagnostics, type_problems};
use crate::status::{StatusRow, scope_row_status};

fn row(
    name: String,
    kind: &'static str,
    status: &str,
    reason: String,
    fix: Option<String>,
) -> StatusRow {
    StatusRow {
        name,
        kind,
        status: status.to_owned(),
        reason: Some(reason),
        fix,
    }
}

fn problem_list(problems: &[trellis_diag::Diagnostic]) -> String {
    problems
        .iter()
        .map(|d| format!("{} ({})", d.message, d.code))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What every kind of entry shares: unreadable, unstamped, invalid, formally
/// changed. `None` when none of these holds.
fn common_rungs<'a>(
    db: &dyn Db,
    name: &str,
    kind: &'static str,
    spec: SourceFile,
    lock: Option<&'a Result<Lock, Vec<trellis_diag::Diagnostic>>>,
    problems: &[trellis_diag::Diagnostic],
) -> Result<&'a Lock, StatusRow> {
    // Each entry is stamped by name: a bare `trellis adopt` stamps the whole
    // root, every hand-written lowering with it.
    let adopt = format!("trellis adopt {name}");
    let lock = match lock {
        None => {
            return Err(row(
                name.to_owned(),
                kind,
                "not-stamped",
                "the spec has never been stamped into a lock".to_owned(),
                Some(adopt),
            ));
        }
        Some(Err(errors)) => {
            let reason = errors
                .first()
                .map(|d| format!("the lock is unreadable: {}", d.message))
                .unwrap_or_else(|| "the lock is unreadable".to_owned());
            return Err(row(
                name.to_owned(),
                kind,
                "lock-unreadable",
                reason,
                Some(adopt),
            ));
        }
        Some(Ok(lock)) => lock,
    };
    if !problems.is_empty() {
        return Err(row(
            name.to_owned(),
            kind,
            "spec-invalid",
            format!("the spec does not check: {}", problem_list(problems)),
            Some(format!(
                "fix the spec (trellis check shows where), then {adopt}"
            )),
        ));
    }
    let current = spec_hashes(db, spec);
    if lock.spec().hashes.formal != current.formal {
        let what = match kind {
            "type" => "the type declaration or its invariants changed since it was stamped",
            _ => "the exports or another formal block changed since it was stamped",
        };
        return Err(row(
            name.to_owned(),
            kind,
            "spec-changed",
            what.to_owned(),
            Some(adopt),
        ));
    }
    Ok(lock)
}

/// A type spec's row: `module::Type`.
pub fn type_row(
    db: &dyn Db,
    name: String,
    spec: SourceFile,
    lock: Option<SourceFile>,
) -> StatusRow {
    let read = lock.map(|file| read_lock_file(db, file));
    let problems = type_problems(db, spec);
    let lock = match common_rungs(db, &name, "type", spec, read, &problems) {
        Ok(lock) => lock,
        Err(row) => return row,
    };
    if lock.spec().hashes.prose != spec_hashes(db, spec).prose {
        return row(
            name.clone(),
            "type",
            "review-suggested",
            "only prose changed; review that the declaration still matches it".to_owned(),
            Some(format!("trellis review {name}")),
        );
    }
    let invariants = invariant_labels(db, spec);
    StatusRow {
        status: if lock.accepted() { "accepted" } else { "green" }.to_owned(),
        reason: (!invariants.is_empty()).then(|| {
            format!(
                "the declaration checks; its invariants are not tested in v1 (no constrained generation yet): {}",
                invariants.join(", ")
            )
        }),
        fix: None,
        name,
        kind: "type",
    }
}

/// A module's or the project's row: exports and formal blocks, decision
/// membership, prose.
pub fn scope_entry_row(
    db: &dyn Db,
    name: String,
    spec: SourceFile,
    which: Scope,
    lock: Option<SourceFile>,
) -> StatusRow {
    let read = lock.map(|file| read_lock_file(db, file));
    let problems = spec_diagnostics(db, spec);
    let lock = match common_rungs(db, &name, "scope", spec, read, problems) {
        Ok(lock) => lock,
        Err(row) => return row,
    };
    if let Status::DecisionFlagged { labels, .. } = scope_row_status(db, spec, which, Some(lock)) {
        let fix = labels.first().map(|label| match which {
            Scope::Project => format!("trellis decisions editorial {label}"),
            Scope::Module => format!("trellis decisions editorial {label} --module {name}"),
        });
        return row(
            name,
            "scope",
            "decision-flagged",
            format!(
                "decision entries were added or removed since the scope was stamped: {} (each may apply to any definition in scope: triage, or declare it editorial)",
                labels.join(", ")
            ),
            fix,
        );
    }
    if lock.spec().hashes.prose != spec_hashes(db, spec).prose {
        return row(
            name.clone(),
            "scope",
            "review-suggested",
            "only prose changed since the scope was stamped".to_owned(),
            Some(format!("trellis review {name}")),
        );
    }
    StatusRow {
        status: if lock.accepted() { "accepted" } else { "green" }.to_owned(),
        reason: None,
        fix: None,
        name,
        kind: "scope",
    }
}
