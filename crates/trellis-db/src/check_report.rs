//! `trellis check` as queries: per definition, every diagnostic from its spec
//! (parse, validity, root context: `spec_check`), its Soil (parse, then the
//! checker) and its tests' static half (property predicates, test values:
//! `test_check`), each a memoized value, joined per module and for the root, so
//! `check` after an edit re-derives only what the edit touched.

use trellis_diag::{Diagnostic, LineIndex, Span, TextRange};

use crate::check::{CheckOutcome, check_definition, env_diagnostics, report_diagnostics};
use crate::config::root_config;
use crate::db::Db;
use crate::exports::export_violations;
use crate::files::Workspace;
use crate::index::{Item, ItemKind, Module, ModuleFiles, RootIndex, root_index};
use crate::resolve::split_definition_name;
use crate::soil::{item_equation, item_soil_file, parse_soil};
use crate::spec_check::spec_diagnostics;
use crate::test_check::test_diagnostics;

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
        self.append_findings(other);
    }

    /// Adds `other`'s findings after this report's, not its count.
    pub(crate) fn append_findings(&mut self, other: &CheckReport) {
        self.diagnostics.extend(other.diagnostics.iter().cloned());
        self.holes.extend(other.holes.iter().cloned());
    }

    /// Whether it holds a diagnostic or a hole.
    pub(crate) fn has_findings(&self) -> bool {
        !self.diagnostics.is_empty() || !self.holes.is_empty()
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
        return join_check(db, |index, report| {
            for module in index.modules.keys() {
                report.append(module_check(db, Module::new(db, module.to_owned())));
            }
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
/// `append_modules` adds to the report in the index's order — between the
/// project spec's findings and the type environment's.
pub(crate) fn join_check(
    db: &dyn Db,
    append_modules: impl FnOnce(&RootIndex, &mut CheckReport),
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
    append_modules(index, &mut report);
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
