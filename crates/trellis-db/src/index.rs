//! The root's layout, read from the file list alone: which modules exist and which
//! spec, Soil and lock files each holds. It re-executes only when a file is added or
//! removed, never when one is edited. Per-definition queries read one module's
//! files through [`module_files`], whose value stays equal when a file comes or
//! goes in another module: salsa then cuts the change off there (design §7.3), and
//! only the touched module's queries (and those of modules that read it) re-execute.

use std::collections::BTreeMap;

use crate::db::Db;
use crate::files::{FileKind, SourceFile, Workspace};
use crate::soil::{Item, ItemKind};

/// The files of one module directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleFiles {
    /// `_module.tr`
    pub spec: Option<SourceFile>,
    /// `_private.soil`
    pub private_soil: Option<SourceFile>,
    /// `<stem>.tr` by stem (function and type specs).
    pub specs: BTreeMap<String, SourceFile>,
    /// `<stem>.soil` by stem (public definitions' bodies).
    pub soils: BTreeMap<String, SourceFile>,
    /// `<stem>.lock` by stem (`_module` for the module's own lock).
    pub locks: BTreeMap<String, SourceFile>,
}

/// A module by name: the key of per-module queries, which split root-wide reports
/// so an edit re-derives one module's part and re-joins the rest.
#[salsa::interned(debug)]
pub struct Module<'db> {
    #[returns(ref)]
    pub name: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootIndex {
    /// `_project.tr`
    pub project: Option<SourceFile>,
    /// `_project.lock`
    pub project_lock: Option<SourceFile>,
    pub modules: BTreeMap<String, ModuleFiles>,
    /// Every file by its root-relative path (references, fixtures).
    pub by_path: BTreeMap<String, SourceFile>,
}

impl RootIndex {
    pub fn module(&self, name: &str) -> Option<&ModuleFiles> {
        self.modules.get(name)
    }
}

#[salsa::tracked(returns(ref))]
pub fn root_index(db: &dyn Db, workspace: Workspace) -> RootIndex {
    let mut index = RootIndex::default();
    for &file in workspace.files(db).iter() {
        let path = file.path(db);
        index.by_path.insert(path.as_str().to_owned(), file);
        let components: Vec<&str> = path.components().map(|c| c.as_str()).collect();
        let (Some(stem), kind) = (path.file_stem(), FileKind::of(path)) else {
            continue;
        };
        match components.as_slice() {
            [_] => match (stem, kind) {
                ("_project", FileKind::Spec) => index.project = Some(file),
                ("_project", FileKind::Lock) => index.project_lock = Some(file),
                _ => {}
            },
            [module, _] => {
                let files = index.modules.entry((*module).to_owned()).or_default();
                match (stem, kind) {
                    ("_module", FileKind::Spec) => files.spec = Some(file),
                    ("_private", FileKind::Soil) => files.private_soil = Some(file),
                    (_, FileKind::Spec) => {
                        files.specs.insert(stem.to_owned(), file);
                    }
                    (_, FileKind::Soil) => {
                        files.soils.insert(stem.to_owned(), file);
                    }
                    (_, FileKind::Lock) => {
                        files.locks.insert(stem.to_owned(), file);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    index
}

/// One module's files (`None` when the module has no directory). The cut-off point
/// between the root-wide file list and everything per module: adding or removing a
/// file re-executes this for every module, but only the touched module's value moves.
#[salsa::tracked(returns(ref))]
pub fn module_files<'db>(db: &'db dyn Db, module: Module<'db>) -> Option<ModuleFiles> {
    root_index(db, Workspace::get(db))
        .module(module.name(db))
        .cloned()
}

/// [`module_files`] by the module's name.
pub fn files_of<'db>(db: &'db dyn Db, module: &str) -> Option<&'db ModuleFiles> {
    module_files(db, Module::new(db, module.to_owned())).as_ref()
}

/// The files of one definition, by its name alone: `<name>.tr`, its Soil
/// (`<name>.soil`, or `_private.soil` for a helper) and `<name>.lock`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DefinitionFiles {
    pub spec: Option<SourceFile>,
    pub soil: Option<SourceFile>,
    pub lock: Option<SourceFile>,
}

/// One definition's files: what every per-definition query reads instead of
/// its module's whole table, so a file added to or removed from a module
/// re-executes this small query once per definition there, and nothing behind
/// the definitions whose own files did not move (design §7.3).
#[salsa::tracked(returns(copy))]
pub fn definition_files<'db>(db: &'db dyn Db, item: Item<'db>) -> DefinitionFiles {
    let Some(files) = files_of(db, item.module(db)) else {
        return DefinitionFiles::default();
    };
    let name = item.name(db);
    DefinitionFiles {
        spec: files.specs.get(name).copied(),
        soil: match item.kind(db) {
            ItemKind::Helper => files.private_soil,
            ItemKind::Function | ItemKind::Type => files.soils.get(name).copied(),
        },
        lock: files.locks.get(name).copied(),
    }
}

/// Whether `module` has a directory, cut off from its file table.
#[salsa::tracked(returns(copy))]
pub fn module_exists<'db>(db: &'db dyn Db, module: Module<'db>) -> bool {
    module_files(db, module).is_some()
}

/// The module's `_module.tr`, cut off from its file table like
/// [`definition_files`].
#[salsa::tracked(returns(copy))]
pub fn module_spec<'db>(db: &'db dyn Db, module: Module<'db>) -> Option<SourceFile> {
    module_files(db, module).as_ref()?.spec
}

/// `_project.tr`, cut off from the file list like [`module_files`].
#[salsa::tracked]
pub fn project_spec(db: &dyn Db) -> Option<SourceFile> {
    root_index(db, Workspace::get(db)).project
}
