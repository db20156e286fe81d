//! Completion: on a `.tr` fence's opening line, the reserved block languages;
//! after `module::`, the names a call there may use — all of the module's own
//! definitions and helpers, or only what another module exports (tr-grammar
//! §5.1: anything else is `unexported-name`); elsewhere in Soil (a `.soil` file
//! or a spec's formal and test blocks), the names in scope — the locals at the
//! cursor, the module's definitions and helpers, the root's types and
//! constructors, the other modules, and the prelude. The text before the cursor
//! is cut on character boundaries only: whatever precedes the word (`—`, `“`,
//! a no-break space, an emoji) may be several bytes long.

use std::collections::BTreeMap;

use soil_syntax::ast::Item;
use trellis_db::{Db, Workspace};
use trellis_spec::BlockKind;

use crate::builtins::builtins;
use crate::hover::declared_signature;
use crate::names;
use crate::paths::module_of;
use crate::resolve::{content_offset, file_at};

/// What a completion offers; the server maps it to the protocol's item kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Local,
    Function,
    Type,
    Constructor,
    Module,
    Builtin,
    FenceLanguage,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
}

/// The completions at `offset` of a root file (`text` is the document's).
pub fn completions(db: &dyn Db, path: &str, text: &str, offset: u32) -> Vec<Completion> {
    let mut offset = (offset as usize).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |at| at + 1);
    let before = &text[line_start..offset];
    if path.ends_with(".tr") {
        let trimmed = before.trim_start();
        let fence = trimmed
            .strip_prefix("```")
            .or_else(|| trimmed.strip_prefix("~~~"));
        if let Some(word) = fence
            && !word.contains(' ')
        {
            return fence_languages();
        }
    }
    let module = module_of(path).unwrap_or_default();
    // `other::` completes that module's names.
    let word_start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .map_or(0, |(at, c)| at + c.len_utf8());
    if let Some((qualifier, _)) = before[word_start..].rsplit_once("::") {
        return if qualifier == module {
            module_names(db, qualifier)
        } else {
            exported_names(db, qualifier)
        };
    }
    let mut items: BTreeMap<String, Completion> = BTreeMap::new();
    let mut add = |label: &str, kind: CompletionKind, detail: Option<String>| {
        items.entry(label.to_owned()).or_insert(Completion {
            label: label.to_owned(),
            kind,
            detail,
        });
    };
    for local in locals_at(db, path, offset as u32) {
        add(&local, CompletionKind::Local, None);
    }
    for completion in module_names(db, module) {
        add(&completion.label, completion.kind, completion.detail);
    }
    if let Some(workspace) = Workspace::try_get(db) {
        for other in trellis_db::root_index(db, workspace).modules.keys() {
            if other != module {
                add(&format!("{other}::"), CompletionKind::Module, None);
            }
        }
        let index = trellis_db::type_index(db);
        for (type_module, ty) in index.declarations.keys() {
            add(
                ty,
                CompletionKind::Type,
                Some(format!("{type_module}::{ty}")),
            );
        }
        for (constructor, types) in &index.constructors {
            let detail = types.first().map(|(m, ty)| format!("{m}::{ty}"));
            add(constructor, CompletionKind::Constructor, detail);
        }
    }
    let builtins = builtins();
    for (name, ty) in &builtins.values {
        add(name, CompletionKind::Builtin, Some(ty.clone()));
    }
    for (name, ty) in &builtins.constructors {
        add(name, CompletionKind::Constructor, Some(ty.clone()));
    }
    for name in builtins.types.keys() {
        add(name, CompletionKind::Type, Some("builtin type".to_owned()));
    }
    items.into_values().collect()
}

fn fence_languages() -> Vec<Completion> {
    BlockKind::ALL
        .iter()
        .map(|kind| Completion {
            label: kind.word().to_owned(),
            kind: CompletionKind::FenceLanguage,
            detail: Some(format!("{:?} block", kind.class()).to_lowercase()),
        })
        .collect()
}

/// A module's definitions (with their signatures) and helpers.
fn module_names(db: &dyn Db, module: &str) -> Vec<Completion> {
    let Some(files) = trellis_db::files_of(db, module) else {
        return Vec::new();
    };
    let mut names: Vec<String> = files
        .specs
        .keys()
        .chain(files.soils.keys())
        .filter(|name| !name.starts_with(|c: char| c.is_ascii_uppercase()))
        .cloned()
        .collect();
    if let Some(private) = files.private_soil {
        names.extend(trellis_db::module_helpers(db, private).iter().cloned());
    }
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| Completion {
            detail: declared_signature(db, module, &name),
            label: name,
            kind: CompletionKind::Function,
        })
        .collect()
}

/// What another module exports of its definitions (its types are completed
/// everywhere, unqualified).
fn exported_names(db: &dyn Db, module: &str) -> Vec<Completion> {
    if trellis_db::files_of(db, module).is_none() {
        return Vec::new();
    }
    let exports = trellis_db::module_exports(db, trellis_db::Module::new(db, module.to_owned()));
    module_names(db, module)
        .into_iter()
        .filter(|completion| exports.contains(&completion.label))
        .collect()
}

/// The locals in scope at `offset`: in a `.soil` equation, its binders there; in
/// a spec block, the signature's parameters (and `result`) and a property's binders.
fn locals_at(db: &dyn Db, path: &str, offset: u32) -> Vec<String> {
    let Some(file) = file_at(db, path) else {
        return Vec::new();
    };
    if path.ends_with(".soil") {
        for item in &trellis_db::parse_soil(db, file).ast.items {
            if let Item::Equation(equation) = item
                && equation.span.start <= offset
                && offset <= equation.span.end
            {
                let walk = names::equation(equation, Some(offset));
                return walk
                    .scope_at_probe
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(name, _)| name)
                    .collect();
            }
        }
        return Vec::new();
    }
    let tr = &trellis_db::parse_spec(db, file).file;
    let mut locals: Vec<String> = crate::resolve::spec_params(tr)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for block in &tr.blocks {
        if content_offset(&block.location, offset).is_some()
            && let trellis_spec::BlockSyntax::Property(Some(property)) = &block.value.syntax
        {
            locals.extend(property.binders.iter().map(|binder| binder.name.clone()));
        }
    }
    locals
}
