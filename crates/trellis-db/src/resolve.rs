//! Resolving an item's free references to what they name: a definition of the root,
//! a type, or a builtin. Resolution is by name only (no types): a bare name is a
//! definition or helper of the same module, else a builtin; constructors and type
//! names find the type spec declaring them, same module first. The name a
//! command is given (`module::name`) is resolved here too
//! ([`resolve_definition`]), by the same layout and by name alone.

use std::collections::BTreeMap;

use soil_syntax::ast::{TypeDecl, TypeDeclBody};
use trellis_diag::Diagnostic;
use trellis_spec::BlockSyntax;

use crate::db::Db;
use crate::files::Workspace;
use crate::index::{Item, ItemKind, Module, module_type_specs, root_index};
use crate::prelude;
use crate::refs::FreeRef;
use crate::soil::module_helpers;
use crate::spec::formal_blocks;

/// What a reference names. Strings, not interned ids, so graphs built from these
/// are plain values.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// A function or private helper of the root: (module, name).
    Definition(String, String),
    /// A type of the root: (module, type name).
    Type(String, String),
    /// A prelude value, type or constructor.
    Builtin,
    /// Nothing by that name; the checker reports it.
    Unresolved,
}

/// Every type spec's declaration, and which type declares each constructor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeIndex {
    /// (module, type name) → the declaration (spans relative to its block).
    pub declarations: BTreeMap<(String, String), TypeDecl>,
    /// Constructor (or record type) name → the (module, type) declaring it.
    pub constructors: BTreeMap<String, Vec<(String, String)>>,
}

#[salsa::tracked(returns(ref))]
pub fn type_index(db: &dyn Db) -> TypeIndex {
    let mut index = TypeIndex::default();
    for module in root_index(db, Workspace::get(db)).modules.keys() {
        for &(_, file) in module_type_specs(db, Module::new(db, module.clone())) {
            let declaration =
                formal_blocks(db, file)
                    .iter()
                    .find_map(|block| match &block.syntax {
                        BlockSyntax::TypeDecl(Some(declaration)) => Some(declaration.clone()),
                        _ => None,
                    });
            let Some(declaration) = declaration else {
                continue;
            };
            let key = (module.clone(), declaration.name.text.clone());
            let mut declare = |constructor: &str| {
                index
                    .constructors
                    .entry(constructor.to_owned())
                    .or_default()
                    .push(key.clone());
            };
            match &declaration.body {
                TypeDeclBody::Record(_) => declare(&declaration.name.text),
                TypeDeclBody::Sum(variants) => variants.iter().for_each(|v| declare(&v.name.text)),
                TypeDeclBody::Opaque => {}
            }
            index.declarations.insert(key, declaration);
        }
    }
    index
}

/// Resolves one reference made from `from` (an item of module `from.module`).
pub fn resolve(db: &dyn Db, from: Item<'_>, reference: &FreeRef) -> Target {
    let module = from.module(db);
    match reference {
        FreeRef::Value(name) => resolve_value(db, module, name),
        FreeRef::Qualified { module, name } => match resolve_value(db, module, name) {
            Target::Builtin => Target::Unresolved,
            target => target,
        },
        FreeRef::Constructor(name) => {
            let index = type_index(db);
            match pick_same_module_first(index.constructors.get(name), module) {
                Some((module, ty)) => Target::Type(module, ty),
                None if prelude::is_constructor(name) => Target::Builtin,
                None => Target::Unresolved,
            }
        }
        FreeRef::Type(name) => {
            let index = type_index(db);
            let candidates: Vec<(String, String)> = index
                .declarations
                .keys()
                .filter(|(_, ty)| ty == name)
                .cloned()
                .collect();
            match pick_same_module_first(Some(&candidates), module) {
                Some((module, ty)) => Target::Type(module, ty),
                None if prelude::is_type(name) => Target::Builtin,
                None => Target::Unresolved,
            }
        }
    }
}

fn resolve_value(db: &dyn Db, module: &str, name: &str) -> Target {
    let files = crate::index::definition_files(db, Item::new(db, module, name));
    let defined = match ItemKind::of(name) {
        ItemKind::Function => files.soil.is_some() || files.spec.is_some(),
        ItemKind::Helper => files
            .soil
            .is_some_and(|file| module_helpers(db, file).contains(name)),
        ItemKind::Type => false,
    };
    if defined {
        return Target::Definition(module.to_owned(), name.to_owned());
    }
    if prelude::is_value(name) {
        Target::Builtin
    } else {
        Target::Unresolved
    }
}

fn pick_same_module_first(
    candidates: Option<&Vec<(String, String)>>,
    module: &str,
) -> Option<(String, String)> {
    let candidates = candidates?;
    candidates
        .iter()
        .find(|(m, _)| m == module)
        .or_else(|| {
            if candidates.len() == 1 {
                candidates.first()
            } else {
                None
            }
        })
        .cloned()
}

/// `module::name` or `module/name` → (module, name).
pub fn split_definition_name(name: &str) -> Option<(&str, &str)> {
    name.split_once("::").or_else(|| name.split_once('/'))
}

/// What a command may name: a function, or (for `check`) a type as well.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    Function,
    FunctionOrType,
}

/// The one answer to "is `def` a definition of this root?" for every command
/// that names one (`check`, `test`, `adopt`, `review`, `call`, `context`, a
/// lowering): `module::name` (or `module/name`) whose `.tr` spec the root
/// holds, of the kind `named` admits. A `.soil` without its spec is not a
/// definition: `check` reports it as an orphan. Otherwise `unknown-definition`,
/// saying which of those it is not.
pub fn resolve_definition<'db>(
    db: &'db dyn Db,
    def: &str,
    named: Named,
) -> Result<Item<'db>, Diagnostic> {
    let unknown = |why: String| Diagnostic::new("unknown-definition", why);
    let Some((module, name)) =
        split_definition_name(def).filter(|(m, n)| !m.is_empty() && !n.is_empty())
    else {
        return Err(unknown(format!(
            "`{def}` is not a definition name; write module::name"
        )));
    };
    let index = root_index(db, Workspace::get(db));
    if !index
        .module(module)
        .is_some_and(|files| files.specs.contains_key(name))
    {
        return Err(unknown(format!("no definition `{def}` in this root")));
    }
    match (ItemKind::of(name), named) {
        (ItemKind::Function, _) | (ItemKind::Type, Named::FunctionOrType) => {
            Ok(Item::new(db, module, name))
        }
        (ItemKind::Type, Named::Function) => Err(unknown(format!(
            "`{def}` is a type, not a function definition"
        ))),
        (ItemKind::Helper, _) => Err(unknown(format!("`{def}` names a helper, not a definition"))),
    }
}
