//! What is wrong with a spec file in its root, beside what the checker says
//! of Soil: the spec's own parse and validity, the rules that need the root
//! (declared tags, a module's listing), and for a type spec the checker's view
//! of its declaration. `check`, the status ladder and lock generation all read
//! a spec's problems here, so they cannot disagree about them.

use trellis_diag::Diagnostic;
use trellis_spec::RootContext;

use crate::check::{env_diagnostics, report_diagnostics};
use crate::config::{TagName, tag_declared};
use crate::db::Db;
use crate::files::SourceFile;
use crate::index::files_of;
use crate::spec::parse_spec;

/// Everything wrong with one spec file in its root: its own parse and validity
/// diagnostics, and the rules that need the root (declared tags, exports).
#[salsa::tracked(returns(ref))]
pub fn spec_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let parse = parse_spec(db, file);
    let mut diagnostics = parse.diagnostics.clone();
    // The spec's own tags that are declared: all the tag check needs to know.
    let tags: Vec<String> = (parse.file.frontmatter.tags.iter())
        .filter(|tag| tag_declared(db, TagName::new(db, tag.to_string())))
        .cloned()
        .collect();
    let path = file.path(db);
    let module_dir = path.parent().and_then(|p| p.file_name());
    let module_definitions: Option<Vec<String>> = match (path.file_stem(), module_dir) {
        (Some("_module"), Some(module)) => {
            files_of(db, module).map(|files| files.specs.keys().cloned().collect())
        }
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

/// What is wrong with a type spec now: its own validity and the checker's view of
/// its declaration.
pub fn type_problems(db: &dyn Db, spec: SourceFile) -> Vec<Diagnostic> {
    let path = spec.path(db).as_str();
    let mut problems = spec_diagnostics(db, spec).clone();
    problems.extend(
        environment_problems(db)
            .iter()
            .filter(|d| d.file.as_deref() == Some(path))
            .cloned(),
    );
    problems
}

/// The checker's findings about the type environment, at file positions; one
/// memo for the root, shared by every type's row.
#[salsa::tracked(returns(ref))]
fn environment_problems(db: &dyn Db) -> Vec<Diagnostic> {
    report_diagnostics(db, env_diagnostics(db))
}
