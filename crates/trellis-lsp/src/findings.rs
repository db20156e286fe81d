//! What the editor shows as diagnostics, grouped by file: everything `trellis
//! check` reports for the root — files that could not be loaded, unreadable
//! locks, the whole-root check report — and each open typed hole as an
//! information-level `open-hole` with its goal and the names in scope. A
//! document outside the root (or with no root at all) is checked for its syntax
//! alone and says so with one `root-outside`. The whole-root report is memoized
//! per module (design §7.3), so after an edit this re-joins only what moved.

use std::collections::BTreeMap;

use trellis_db::{Db, Workspace};
use trellis_diag::Diagnostic;

/// How loud a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Information,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub severity: Severity,
}

fn error(diagnostic: Diagnostic) -> Finding {
    Finding {
        diagnostic,
        severity: Severity::Error,
    }
}

/// The root's findings by root-relative path (a finding without a file is
/// filed under `soil.toml`, the root's own file). `load_problems` are what the
/// host's loader could not read.
pub fn root_findings(db: &dyn Db, load_problems: &[Diagnostic]) -> BTreeMap<String, Vec<Finding>> {
    let mut by_file: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    let mut file = |finding: Finding| {
        let path = finding
            .diagnostic
            .file
            .clone()
            .unwrap_or_else(|| trellis_db::CONFIG_FILE.to_owned());
        by_file.entry(path).or_default().push(finding);
    };
    for problem in load_problems {
        file(error(problem.clone()));
    }
    let Some(workspace) = Workspace::try_get(db) else {
        return by_file;
    };
    let index = trellis_db::root_index(db, workspace);
    let locks = index.project_lock.iter().chain(
        index
            .modules
            .values()
            .flat_map(|files| files.locks.values()),
    );
    for &lock in locks {
        if let Err(errors) = trellis_db::read_lock_file(db, lock) {
            errors.iter().cloned().map(error).for_each(&mut file);
        }
    }
    let report = trellis_db::check_root(db, None);
    for diagnostic in report.diagnostics {
        file(error(diagnostic));
    }
    for hole in report.holes {
        let scope = if hole.scope.is_empty() {
            String::from("nothing")
        } else {
            hole.scope
                .iter()
                .map(|(name, ty)| format!("{name} : {ty}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut diagnostic = Diagnostic::new(
            "open-hole",
            format!(
                "hole ?{} in {}: {} — in scope: {scope}",
                hole.name, hole.definition, hole.goal
            ),
        );
        diagnostic.file = hole.file.clone();
        diagnostic.span = hole.span;
        file(Finding {
            diagnostic,
            severity: Severity::Information,
        });
    }
    by_file
}

/// The findings of a document the root does not check: its syntax, and why
/// nothing else is checked (`why` names the root it is outside of, or why there
/// is none).
pub fn outside_findings(name: &str, text: &str, why: &str) -> Vec<Finding> {
    let mut findings = vec![Finding {
        diagnostic: Diagnostic::new(
            "root-outside",
            format!("{why}: only this file's syntax is checked"),
        ),
        severity: Severity::Information,
    }];
    let syntax = if name.ends_with(".soil") {
        soil_syntax::parse_file(text).1
    } else if name.ends_with(".tr") {
        let stem = crate::paths::stem_of(name);
        trellis_spec::parse_tr(text, stem).1
    } else {
        Vec::new()
    };
    findings.extend(syntax.into_iter().map(error));
    findings
}
