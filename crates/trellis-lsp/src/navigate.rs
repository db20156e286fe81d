//! Go to definition and find references, across `.tr`, `.soil` and `.lock`
//! files. A definition has two homes — its spec's signature and its Soil
//! equation — and going to it offers both; a decision label goes to its entry.
//! References are found by walking every file of the root with the same names
//! and the same resolution as [`crate::resolve`], so a reference is exactly a name
//! that resolves to the symbol (a local of the same name elsewhere is not one).

use soil_syntax::ast::{Item, TypeDeclBody};
use trellis_db::{Db, SourceFile, Workspace};
use trellis_diag::TextRange;
use trellis_spec::BlockSyntax;

use crate::names::{self, Name};
use crate::paths::{module_of, stem_of};
use crate::resolve::{
    DecisionScope, Symbol, block_names, file_at, resolve_free, spec_params, string_value_range,
};

/// A range of a root file (file offsets).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileRange {
    pub path: String,
    pub range: TextRange,
}

/// Where a symbol is defined: for a function its spec's signature name and its
/// equation's name (both, spec first); for a type or constructor its declaration
/// in the type's spec; for a local its binder; for a decision its entry's label.
pub fn definitions(db: &dyn Db, from_path: &str, symbol: &Symbol) -> Vec<FileRange> {
    match symbol {
        Symbol::Definition { module, name } => definition_homes(db, module, name),
        Symbol::Type { module, name } => type_home(db, module, name, None).into_iter().collect(),
        Symbol::Constructor { module, ty, name } => {
            type_home(db, module, ty, Some(name)).into_iter().collect()
        }
        Symbol::Local { binder, .. } => vec![FileRange {
            path: from_path.to_owned(),
            range: *binder,
        }],
        Symbol::Decision { scope, label } => decision_home(db, scope, label).into_iter().collect(),
        Symbol::Builtin { .. } | Symbol::Hole { .. } => Vec::new(),
    }
}

fn definition_homes(db: &dyn Db, module: &str, name: &str) -> Vec<FileRange> {
    let mut homes = Vec::new();
    let spec_path = format!("{module}/{name}.tr");
    if let Some(file) = file_at(db, &spec_path) {
        let tr = &trellis_db::parse_spec(db, file).file;
        let signature = tr
            .blocks
            .iter()
            .find_map(|block| match &block.value.syntax {
                BlockSyntax::Signature(Some(signature)) => {
                    Some(block.location.file_range(signature.name.span))
                }
                _ => None,
            });
        let range = signature
            .or(tr.frontmatter_location.name_value)
            .unwrap_or_default();
        homes.push(FileRange {
            path: spec_path,
            range,
        });
    }
    let soil_path = if name.starts_with('_') {
        format!("{module}/_private.soil")
    } else {
        format!("{module}/{name}.soil")
    };
    if let Some(file) = file_at(db, &soil_path) {
        // A helper's signature and equation both live in `_private.soil`: the
        // signature first, as a spec's comes first for a function.
        for item in &trellis_db::parse_soil(db, file).ast.items {
            let defined = match item {
                Item::Signature(signature) if name.starts_with('_') => &signature.name,
                Item::Equation(equation) => &equation.name,
                _ => continue,
            };
            if defined.text == name {
                homes.push(FileRange {
                    path: soil_path.clone(),
                    range: defined.span,
                });
            }
        }
    }
    homes
}

fn type_home(db: &dyn Db, module: &str, ty: &str, constructor: Option<&str>) -> Option<FileRange> {
    let path = format!("{module}/{ty}.tr");
    let file = file_at(db, &path)?;
    let tr = &trellis_db::parse_spec(db, file).file;
    tr.blocks.iter().find_map(|block| {
        let BlockSyntax::TypeDecl(Some(decl)) = &block.value.syntax else {
            return None;
        };
        let span = match (constructor, &decl.body) {
            (Some(name), TypeDeclBody::Sum(variants)) => variants
                .iter()
                .find(|variant| variant.name.text == name)
                .map_or(decl.name.span, |variant| variant.name.span),
            _ => decl.name.span,
        };
        Some(FileRange {
            path: path.clone(),
            range: block.location.file_range(span),
        })
    })
}

/// The spec holding a scope's decisions.
fn scope_spec_path(scope: &DecisionScope) -> String {
    match scope {
        DecisionScope::Project => "_project.tr".to_owned(),
        DecisionScope::Module(module) => format!("{module}/_module.tr"),
    }
}

fn decision_home(db: &dyn Db, scope: &DecisionScope, label: &str) -> Option<FileRange> {
    let path = scope_spec_path(scope);
    let file = file_at(db, &path)?;
    let tr = &trellis_db::parse_spec(db, file).file;
    tr.blocks.iter().find_map(|block| {
        let names = block_names(&block.value.syntax, &block.value.content, &[], None);
        names
            .labels
            .iter()
            .find(|(found, _)| found == label)
            .map(|(_, range)| FileRange {
                path: path.clone(),
                range: block.location.file_range(*range),
            })
    })
}

/// Every place that names `symbol`, in path order; its definitions too when
/// `with_declarations`.
pub fn references(
    db: &dyn Db,
    from_path: &str,
    symbol: &Symbol,
    with_declarations: bool,
) -> Vec<FileRange> {
    let mut found = Vec::new();
    match symbol {
        Symbol::Local { binder, .. } => {
            found.extend(local_references(db, from_path, *binder, with_declarations));
        }
        Symbol::Decision { scope, label } => {
            if with_declarations {
                found.extend(decision_home(db, scope, label));
            }
            found.extend(decision_citations(db, scope, label));
        }
        Symbol::Hole { .. } => {}
        _ => {
            for file in trellis_db::all_files(db) {
                db.unwind_if_revision_cancelled();
                let path = file.path(db).as_str();
                found.extend(references_in(db, path, file, symbol, with_declarations));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The names of one root file that resolve to `symbol`.
fn references_in(
    db: &dyn Db,
    path: &str,
    file: SourceFile,
    symbol: &Symbol,
    with_declarations: bool,
) -> Vec<FileRange> {
    let Some(module) = module_of(path) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let consider = |name: &Name, text: &str, range: TextRange, found: &mut Vec<FileRange>| {
        if !with_declarations && *name == Name::Defines {
            return;
        }
        if resolve_free(db, module, name, text).as_ref() == Some(symbol) {
            found.push(FileRange {
                path: path.to_owned(),
                range,
            });
        }
    };
    if path.ends_with(".soil") {
        for item in &trellis_db::parse_soil(db, file).ast.items {
            let walk = match item {
                Item::Signature(signature) => names::signature(signature),
                Item::Equation(equation) => names::equation(equation, None),
                Item::TypeDecl(_) => continue,
            };
            for occurrence in &walk.occurrences {
                consider(
                    &occurrence.name,
                    &occurrence.text,
                    occurrence.range,
                    &mut found,
                );
            }
        }
    } else if path.ends_with(".tr") {
        let tr = &trellis_db::parse_spec(db, file).file;
        let stem = stem_of(path);
        let params = spec_params(tr);
        for block in &tr.blocks {
            let names = block_names(&block.value.syntax, &block.value.content, &params, None);
            for occurrence in &names.walk.occurrences {
                let (name, text) = match &occurrence.name {
                    // A spec's signature defines the spec's own definition.
                    Name::Defines => (Name::Defines, stem),
                    other => (other.clone(), occurrence.text.as_str()),
                };
                // A type declaration's own name is its definition.
                let name = match (&name, &block.value.syntax) {
                    (Name::Type, BlockSyntax::TypeDecl(Some(decl)))
                        if decl.name.span == occurrence.range =>
                    {
                        if !with_declarations {
                            continue;
                        }
                        Name::Type
                    }
                    _ => name,
                };
                consider(
                    &name,
                    text,
                    block.location.file_range(occurrence.range),
                    &mut found,
                );
            }
        }
    } else if path.ends_with(".lock") {
        // A lock's calls and helpers name definitions of its module.
        if let Symbol::Definition { module: m, name } = symbol
            && m == module
        {
            let text = file.text(db);
            let whole = TextRange::new(0, text.len() as u32);
            let mut from = 0usize;
            let written = format!("\"name\":\"{name}\"");
            while let Some(at) = text[from..].find(&written) {
                let start = from + at;
                let range = TextRange::new(start as u32, (start + written.len()) as u32);
                if let Some(value) = string_value_range(text, range, "name", name)
                    && whole.end >= value.end
                {
                    found.push(FileRange {
                        path: path.to_owned(),
                        range: value,
                    });
                }
                from = start + written.len();
            }
        }
    }
    found
}

fn local_references(
    db: &dyn Db,
    path: &str,
    binder: TextRange,
    with_declarations: bool,
) -> Vec<FileRange> {
    let Some(file) = file_at(db, path) else {
        return Vec::new();
    };
    let mut walks = Vec::new();
    if path.ends_with(".soil") {
        for item in &trellis_db::parse_soil(db, file).ast.items {
            if let Item::Equation(equation) = item
                && equation.span.start <= binder.start
                && binder.end <= equation.span.end
            {
                walks.push((names::equation(equation, None), None));
            }
        }
    } else if path.ends_with(".tr") {
        let tr = &trellis_db::parse_spec(db, file).file;
        let params = spec_params(tr);
        for block in &tr.blocks {
            let names = block_names(&block.value.syntax, &block.value.content, &params, None);
            walks.push((names.walk, Some((block.location.clone(), params.clone()))));
        }
    }
    let mut found = Vec::new();
    for (walk, block) in walks {
        for occurrence in &walk.occurrences {
            let (range, bound_at) = match &block {
                None => (occurrence.range, None),
                Some((location, params)) => {
                    let range = location.file_range(occurrence.range);
                    let bound = match &occurrence.name {
                        Name::Local { binder } if params.iter().any(|(_, r)| r == binder) => {
                            Some(*binder)
                        }
                        Name::Local { binder } => Some(location.file_range(*binder)),
                        _ => None,
                    };
                    (range, bound)
                }
            };
            let bound_at = bound_at.or(match &occurrence.name {
                Name::Local { binder } => Some(*binder),
                _ => None,
            });
            let is_binder = occurrence.name == Name::Binder && range == binder;
            if (is_binder && with_declarations) || bound_at == Some(binder) {
                found.push(FileRange {
                    path: path.to_owned(),
                    range,
                });
            }
        }
    }
    if with_declarations && path.ends_with(".tr") && !found.iter().any(|f| f.range == binder) {
        found.push(FileRange {
            path: path.to_owned(),
            range: binder,
        });
    }
    found
}

/// The locks citing a decision: each `{"scope":…,"label":…}` edge naming it.
fn decision_citations(db: &dyn Db, scope: &DecisionScope, label: &str) -> Vec<FileRange> {
    let Some(workspace) = Workspace::try_get(db) else {
        return Vec::new();
    };
    let index = trellis_db::root_index(db, workspace);
    let (scope_word, modules): (&str, Vec<&String>) = match scope {
        DecisionScope::Project => ("project", index.modules.keys().collect()),
        DecisionScope::Module(module) => (
            "module",
            index.modules.keys().filter(|m| *m == module).collect(),
        ),
    };
    let written = format!("\"scope\":\"{scope_word}\",\"label\":\"{label}\"");
    let mut found = Vec::new();
    for module in modules {
        for (stem, &lock) in &index.modules[module].locks {
            let text = lock.text(db);
            let mut from = 0usize;
            while let Some(at) = text[from..].find(&written) {
                let start = from + at;
                let range = TextRange::new(start as u32, (start + written.len()) as u32);
                if let Some(value) = string_value_range(text, range, "label", label) {
                    found.push(FileRange {
                        path: format!("{module}/{stem}.lock"),
                        range: value,
                    });
                }
                from = start + written.len();
            }
        }
    }
    found
}
