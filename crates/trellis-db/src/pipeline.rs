//! The static pipeline as queries: per definition, every diagnostic from its spec
//! (parse, validity, root context) and its Soil (parse, then the checker), each a
//! memoized value, so `check` after an edit re-derives only what the edit touched.

use trellis_diag::Diagnostic;
use trellis_spec::RootContext;

use crate::check::{CheckOutcome, check_definition, env_diagnostics, report_diagnostics};
use crate::config::root_config;
use crate::db::Db;
use crate::files::{SourceFile, Workspace};
use crate::index::root_index;
use crate::soil::{Item, ItemKind, parse_soil};
use crate::spec::parse_spec;

/// Everything wrong with one spec file in its root: its own parse and validity
/// diagnostics, and the rules that need the root (declared tags, exports).
#[salsa::tracked(returns(ref))]
pub fn spec_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let parse = parse_spec(db, file);
    let mut diagnostics = parse.diagnostics.clone();
    let tags: Vec<String> = match root_config(db, Workspace::get(db)) {
        Ok(config) => config.tags.keys().cloned().collect(),
        Err(_) => Vec::new(),
    };
    let path = file.path(db);
    let module_dir = path.parent().and_then(|p| p.file_name());
    let module_definitions: Option<Vec<String>> = match (path.file_stem(), module_dir) {
        (Some("_module"), Some(module)) => root_index(db, Workspace::get(db))
            .module(module)
            .map(|files| files.specs.keys().cloned().collect()),
        _ => None,
    };
    let context = RootContext {
        tags: &tags,
        module_dir,
        module_definitions: module_definitions.as_deref(),
    };
    diagnostics.extend(
        trellis_spec::check_in_root(&parse.file, file.text(db), &context)
            .into_iter()
            .map(|d| d.in_file(path.as_str())),
    );
    diagnostics
}

/// The result of checking a root (or one definition of it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// How many definitions were checked.
    pub checked: usize,
    pub diagnostics: Vec<Diagnostic>,
}

/// `module::name` or `module/name` → (module, name).
pub fn split_definition_name(name: &str) -> Option<(&str, &str)> {
    name.split_once("::").or_else(|| name.split_once('/'))
}

/// Checks every definition of the root, or only `only` (`module::name`).
pub fn check_root(db: &dyn Db, only: Option<&str>) -> CheckReport {
    let workspace = Workspace::get(db);
    let mut report = CheckReport::default();
    if let Err(diagnostic) = root_config(db, workspace) {
        report.diagnostics.push(diagnostic.clone());
        return report;
    }
    let wanted = only.and_then(split_definition_name);
    let index = root_index(db, workspace);
    if only.is_none() {
        if let Some(project) = index.project {
            report.diagnostics.extend(spec_diagnostics(db, project).iter().cloned());
        }
    }
    for (module, files) in &index.modules {
        if wanted.is_some_and(|(m, _)| m != module) {
            continue;
        }
        if wanted.is_none() {
            if let Some(spec) = files.spec {
                report.diagnostics.extend(spec_diagnostics(db, spec).iter().cloned());
            }
            if let Some(private) = files.private_soil {
                report.diagnostics.extend(parse_soil(db, private).diagnostics.iter().cloned());
            }
        }
        for (name, &spec) in &files.specs {
            if wanted.is_some_and(|(_, n)| n != name) {
                continue;
            }
            report.checked += 1;
            report.diagnostics.extend(spec_diagnostics(db, spec).iter().cloned());
            if let Some(&soil) = files.soils.get(name) {
                report.diagnostics.extend(parse_soil(db, soil).diagnostics.iter().cloned());
            }
            if ItemKind::of(name) == ItemKind::Function {
                let item = Item::new(db, module.clone(), name.clone());
                if let CheckOutcome::Failed(errors) = check_definition(db, item) {
                    report.diagnostics.extend(report_diagnostics(db, errors));
                }
            }
        }
        if wanted.is_none() {
            if let Some(private) = files.private_soil {
                for helper in crate::soil::module_helpers(db, private) {
                    let item = Item::new(db, module.clone(), helper.clone());
                    if let CheckOutcome::Failed(errors) = check_definition(db, item) {
                        report.diagnostics.extend(report_diagnostics(db, errors));
                    }
                }
            }
        }
    }
    if wanted.is_none() {
        report.diagnostics.extend(report_diagnostics(db, env_diagnostics(db)));
    }
    dedup(&mut report.diagnostics);
    report
}

/// The same problem reached through two definitions is reported once.
fn dedup(diagnostics: &mut Vec<Diagnostic>) {
    let mut seen = std::collections::HashSet::new();
    diagnostics.retain(|d| seen.insert((d.code.clone(), d.file.clone(), d.span.map(|s| s.start.offset), d.message.clone())));
}

/// One row of `trellis status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusRow {
    pub name: String,
    pub status: String,
    pub reason: Option<String>,
    pub fix: Option<String>,
}

/// The status of every function spec of the root.
pub fn root_status(db: &dyn Db) -> Vec<StatusRow> {
    let index = root_index(db, Workspace::get(db));
    let mut rows = Vec::new();
    for (module, files) in &index.modules {
        for name in files.specs.keys() {
            let lowered = files.soils.contains_key(name);
            rows.push(StatusRow {
                name: format!("{module}::{name}"),
                status: if lowered { "lowered" } else { "not-lowered" }.to_owned(),
                reason: None,
                fix: None,
            });
        }
    }
    rows
}
