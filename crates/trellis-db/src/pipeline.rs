//! The static pipeline as queries: per definition, every diagnostic from its spec
//! (parse, validity, root context), its Soil (parse, then the checker) and its
//! tests' static half (property predicates, test values: `test_check`), each a
//! memoized value, so `check` after an edit re-derives only what the edit touched.

use std::sync::Arc;

use trellis_diag::{Diagnostic, LineIndex, Span, TextRange};

use crate::check::{CheckOutcome, check_definition, env_diagnostics, report_diagnostics};
use crate::config::root_config;
use crate::db::Db;
use crate::entry_status::{scope_entry_row, type_row};
use crate::exports::export_violations;
use crate::files::Workspace;
use crate::index::{Item, ItemKind, Module, ModuleFiles, root_index};
use crate::resolve::split_definition_name;
use crate::soil::{item_equation, item_soil_file, parse_soil};
use crate::spec_check::spec_diagnostics;
use crate::status::definition_status;
use crate::test_check::test_diagnostics;
use trellis_lock::{Edge, Scope, Status};

/// The result of checking a root (or one definition of it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// How many definitions were checked.
    pub checked: usize,
    pub diagnostics: Vec<Diagnostic>,
    /// The open typed holes of definitions that check (design §3.16).
    pub holes: Vec<OpenHole>,
}

impl CheckReport {
    /// Adds `other`'s count and findings after this report's.
    pub(crate) fn append(&mut self, other: &CheckReport) {
        self.checked += other.checked;
        self.diagnostics.extend(other.diagnostics.iter().cloned());
        self.holes.extend(other.holes.iter().cloned());
    }
}

/// One open typed hole, for a person: what it must produce and what it can use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenHole {
    /// `module::name` of the definition holding it.
    pub definition: String,
    /// The hole's name, without the `?`.
    pub name: String,
    /// The goal type, in canonical text.
    pub goal: String,
    /// The parameters and locals in scope, outermost first: (name, type).
    pub scope: Vec<(String, String)>,
    /// The `.soil` file and the span of `?name` in it.
    pub file: Option<String>,
    pub span: Option<Span>,
}

/// Checks every definition of the root, or only `only` (`module::name`). The whole
/// root's report is itself memoized, so a re-check that finds nothing changed is one
/// lookup.
pub fn check_root(db: &dyn Db, only: Option<&str>) -> CheckReport {
    match only {
        None => whole_root_check(db).clone(),
        Some(_) => check_root_uncached(db, only),
    }
}

#[salsa::tracked(returns(ref))]
fn whole_root_check(db: &dyn Db) -> CheckReport {
    check_root_uncached(db, None)
}

fn check_root_uncached(db: &dyn Db, only: Option<&str>) -> CheckReport {
    let Some((module, name)) = only.and_then(split_definition_name) else {
        return join_check(db, |module, report| {
            report.append(module_check(db, Module::new(db, module.to_owned())));
        });
    };
    let workspace = Workspace::get(db);
    let mut report = CheckReport::default();
    if let Err(diagnostic) = root_config(db, workspace) {
        report.diagnostics.push(diagnostic.clone());
        return report;
    }
    if let Some(files) = root_index(db, workspace).module(module) {
        report = check_module_files(db, module, files, Some(name));
    }
    dedup(&mut report.diagnostics);
    report
}

/// The whole root's check joined from one part per module — salsa's memo of
/// each ([`module_check`]) or a host's copy of it ([`crate::RootJoins`]), which
/// `append_module` adds to the report — between the project spec's findings and
/// the type environment's.
pub(crate) fn join_check(
    db: &dyn Db,
    mut append_module: impl FnMut(&str, &mut CheckReport),
) -> CheckReport {
    let workspace = Workspace::get(db);
    let mut report = CheckReport::default();
    if let Err(diagnostic) = root_config(db, workspace) {
        report.diagnostics.push(diagnostic.clone());
        return report;
    }
    let index = root_index(db, workspace);
    if let Some(project) = index.project {
        report
            .diagnostics
            .extend(spec_diagnostics(db, project).iter().cloned());
    }
    for module in index.modules.keys() {
        append_module(module, &mut report);
    }
    report
        .diagnostics
        .extend(report_diagnostics(db, env_diagnostics(db)));
    dedup(&mut report.diagnostics);
    report
}

/// One module's part of the whole-root check.
#[salsa::tracked(returns(ref))]
fn module_check<'db>(db: &'db dyn Db, module: Module<'db>) -> CheckReport {
    match crate::index::module_files(db, module) {
        Some(files) => check_module_files(db, module.name(db), files, None),
        None => CheckReport::default(),
    }
}

/// The module's own spec and helpers, and each definition (or only `only`):
/// [`check_module_head`], each [`check_spec_entry`], [`check_module_helpers`].
fn check_module_files(
    db: &dyn Db,
    module: &str,
    files: &ModuleFiles,
    only: Option<&str>,
) -> CheckReport {
    let mut report = CheckReport::default();
    if only.is_none() {
        report.append(&check_module_head(db, files));
    }
    for name in files.specs.keys() {
        if only.is_none_or(|only| only == name) {
            report.append(&check_spec_entry(db, module, files, name));
        }
    }
    if only.is_none() {
        report.append(&check_module_helpers(db, module, files));
    }
    report
}

/// What a module's own files say: its `_module.tr` and its `_private.soil`'s parse.
pub(crate) fn check_module_head(db: &dyn Db, files: &ModuleFiles) -> CheckReport {
    let mut report = CheckReport::default();
    if let Some(spec) = files.spec {
        report
            .diagnostics
            .extend(spec_diagnostics(db, spec).iter().cloned());
    }
    if let Some(private) = files.private_soil {
        report
            .diagnostics
            .extend(parse_soil(db, private).diagnostics.iter().cloned());
    }
    report
}

/// One spec of a module, by its stem: the spec, its Soil's parse, and for a
/// function its check, its tests' static half and its exports.
pub(crate) fn check_spec_entry(
    db: &dyn Db,
    module: &str,
    files: &ModuleFiles,
    name: &str,
) -> CheckReport {
    let mut report = CheckReport::default();
    let Some(&spec) = files.specs.get(name) else {
        return report;
    };
    report.checked += 1;
    report
        .diagnostics
        .extend(spec_diagnostics(db, spec).iter().cloned());
    if let Some(&soil) = files.soils.get(name) {
        report
            .diagnostics
            .extend(parse_soil(db, soil).diagnostics.iter().cloned());
    }
    if ItemKind::of(name) == ItemKind::Function {
        let item = Item::new(db, module, name);
        definition_outcome(db, item, &mut report);
        report
            .diagnostics
            .extend(report_diagnostics(db, test_diagnostics(db, item)));
        report
            .diagnostics
            .extend(export_violations(db, item).iter().cloned());
    }
    report
}

/// A module's private helpers: each one's check and exports.
pub(crate) fn check_module_helpers(db: &dyn Db, module: &str, files: &ModuleFiles) -> CheckReport {
    let mut report = CheckReport::default();
    if let Some(private) = files.private_soil {
        for helper in crate::soil::module_helpers(db, private) {
            let item = Item::new(db, module, helper.as_str());
            definition_outcome(db, item, &mut report);
            report
                .diagnostics
                .extend(export_violations(db, item).iter().cloned());
        }
    }
    report
}

/// `item`'s check: its diagnostics at file positions, or its open holes.
fn definition_outcome(db: &dyn Db, item: Item<'_>, report: &mut CheckReport) {
    match check_definition(db, item) {
        CheckOutcome::Failed(errors) => report.diagnostics.extend(report_diagnostics(db, errors)),
        CheckOutcome::Checked(facts) => report.holes.extend(facts.holes.iter().map(|hole| {
            let (file, span) = hole_location(db, item, &hole.name);
            OpenHole {
                definition: item.qualified(db),
                name: hole.name.clone(),
                goal: hole.goal.clone(),
                scope: hole
                    .scope
                    .iter()
                    .map(|entry| (entry.name.clone(), entry.ty.clone()))
                    .collect(),
                file,
                span,
            }
        })),
        CheckOutcome::NotLowered => {}
    }
}

/// Where `?name` is written in `item`'s equation. The facts carry no positions
/// (so they survive reformatting); the place is looked up only when reported.
fn hole_location(db: &dyn Db, item: Item<'_>, name: &str) -> (Option<String>, Option<Span>) {
    let Some(file) = item_soil_file(db, item) else {
        return (None, None);
    };
    let path = Some(file.path(db).to_string());
    let Some(equation) = item_equation(db, item) else {
        return (path, None);
    };
    let text = file.text(db);
    let range = equation.span.as_usize_range();
    let Some(body) = text.get(range.clone()) else {
        return (path, None);
    };
    let needle = format!("?{name}");
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '\'';
    let found = body
        .match_indices(&needle)
        .map(|(at, _)| at)
        .find(|&at| !body[at + needle.len()..].starts_with(ident));
    let span = found.map(|at| {
        let start = (range.start + at) as u32;
        LineIndex::new(text).span(text, TextRange::new(start, start + needle.len() as u32))
    });
    (path, span)
}

/// The same problem reached through two definitions is reported once.
fn dedup(diagnostics: &mut Vec<Diagnostic>) {
    let mut seen = std::collections::HashSet::new();
    diagnostics.retain(|d| {
        seen.insert((
            d.code.clone(),
            d.file.clone(),
            d.span.map(|s| s.start.offset),
            d.message.clone(),
        ))
    });
}

/// One row of `trellis status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusRow {
    /// `module::name`, `module` (a module's decisions) or `project`.
    pub name: String,
    pub kind: &'static str,
    pub status: String,
    pub reason: Option<String>,
    pub fix: Option<String>,
}

impl StatusRow {
    pub fn from_status(name: String, kind: &'static str, status: &Status) -> StatusRow {
        StatusRow {
            status: status.name().to_owned(),
            reason: (!status.is_settled()).then(|| status.reason()),
            fix: status.fixing_command(&name),
            name,
            kind,
        }
    }

    pub fn unreadable(name: String, kind: &'static str, errors: &[Diagnostic]) -> StatusRow {
        let reason = errors
            .first()
            .map(|d| format!("the lock is unreadable: {}", d.message));
        StatusRow {
            name,
            kind,
            status: "lock-unreadable".to_owned(),
            reason,
            fix: Some("trellis adopt".to_owned()),
        }
    }
}

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
    let Some(files) = crate::index::module_files(db, module) else {
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
    spec_status_entry(db, module, files, name, None).map(|entry| Arc::unwrap_or_clone(entry.row))
}

/// A status row as the joins hold it, with what its ladder needs to be
/// climbed again from the callee rung.
#[derive(Clone, Debug)]
pub(crate) struct HeldRow {
    /// Shared with the joined answer: a moved row is built once and joined,
    /// shelved and held without copying its texts.
    pub(crate) row: Arc<StatusRow>,
    /// For a row whose ladder climbed past the check rungs
    /// ([`trellis_lock::Status::passed_checks`]): the edges its lock recorded
    /// ([`trellis_lock::recorded_edges`]). `None` for every other row.
    pub(crate) past_checks: Option<Arc<[Edge]>>,
}

/// [`spec_status_row`], given the row `held` before an edit that moved only
/// hashes below this spec (design §7.8), if that is all that moved: a row
/// decided above the check rungs stands, and a function's ladder is climbed
/// again without asking for its problems — and without its lock, its spec
/// or its own body when a callee it recorded moved (design §7.13): every
/// rung above the callee rung reads only what such an edit leaves alone.
pub(crate) fn spec_status_entry(
    db: &dyn Db,
    module: &str,
    files: &ModuleFiles,
    name: &str,
    held: Option<&HeldRow>,
) -> Option<HeldRow> {
    let &spec = files.specs.get(name)?;
    if let Some(held) = held
        && (held.past_checks.is_none() || ItemKind::of(name) != ItemKind::Function)
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
            past_checks: None,
        }),
        ItemKind::Function => {
            let item = Item::new(db, module, name);
            let qualified = item.qualified(db);
            if let Some(edges) = held.and_then(|held| held.past_checks.as_ref()) {
                let moved = trellis_lock::moved_edges(edges.iter(), |edge| {
                    crate::status::current_edge(db, item, edge)
                });
                if !moved.is_empty() {
                    let status = Status::CalleeChanged { edges: moved };
                    return Some(HeldRow {
                        row: Arc::new(StatusRow::from_status(qualified, "function", &status)),
                        past_checks: Some(Arc::clone(edges)),
                    });
                }
            }
            let row = |status: &Result<Status, Vec<Diagnostic>>| match status {
                Ok(status) => HeldRow {
                    row: Arc::new(StatusRow::from_status(qualified, "function", status)),
                    // A ladder past the checks read a function lock with a
                    // lowering; none (never here) would re-climb in full.
                    past_checks: status.passed_checks().then(|| {
                        crate::status::recorded_edges(db, item).unwrap_or_else(|| Arc::from([]))
                    }),
                },
                Err(errors) => HeldRow {
                    row: Arc::new(StatusRow::unreadable(qualified, "function", errors)),
                    past_checks: None,
                },
            };
            // The memoized status is read in place, never cloned.
            Some(match held {
                Some(_) => row(&crate::status::status_past_checks(db, item)),
                None => row(definition_status(db, item)),
            })
        }
        ItemKind::Helper => None,
    }
}
