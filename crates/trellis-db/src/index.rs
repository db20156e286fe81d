//! The root's layout, read from the directories' file lists alone: which modules
//! exist, the keys of per-module and per-definition queries ([`Module`],
//! [`Item`]), and which spec, Soil and lock files each holds. Nothing here
//! re-executes when a file is edited. Each module's table ([`module_files`])
//! reads its own directory's list, so a file coming or going re-executes that
//! table and the O(modules) join of tables ([`root_index`]); per-definition
//! queries read their module's table through [`definition_files`], and salsa
//! cuts the change off there (design §7.3): only the touched module's queries
//! (and those of modules that read the name) re-execute.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::db::Db;
use crate::files::{Directory, FileKind, SourceFile, Workspace, directory_name, position_in};

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

/// A definition by module and name, the key of per-definition queries: a
/// public function (`csvstats::median`), a private helper
/// (`csvstats::_halfway`) or a type (`csvstats::Row`).
#[salsa::interned(debug)]
pub struct Item<'db> {
    #[returns(ref)]
    pub module: String,
    #[returns(ref)]
    pub name: String,
}

/// What a definition is, from its name alone: `_helper`, `Type` or `function`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemKind {
    Function,
    Helper,
    Type,
}

impl ItemKind {
    pub fn of(name: &str) -> ItemKind {
        if name.starts_with('_') {
            ItemKind::Helper
        } else if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            ItemKind::Type
        } else {
            ItemKind::Function
        }
    }
}

impl<'db> Item<'db> {
    pub fn kind(self, db: &'db dyn Db) -> ItemKind {
        ItemKind::of(self.name(db))
    }

    /// `module::name`, as diagnostics and locks print it.
    pub fn qualified(self, db: &'db dyn Db) -> String {
        format!("{}::{}", self.module(db), self.name(db))
    }
}

/// The root's layout: its own files and its modules, each module's table
/// shared with [`module_files`] (so assembling it copies no file table).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootIndex {
    /// `_project.tr`
    pub project: Option<SourceFile>,
    /// `_project.lock`
    pub project_lock: Option<SourceFile>,
    pub modules: BTreeMap<String, Arc<ModuleFiles>>,
}

impl RootIndex {
    pub fn module(&self, name: &str) -> Option<&ModuleFiles> {
        self.modules.get(name).map(|files| &**files)
    }
}

/// Assembled from each directory's [`module_files`] and [`project_files`]: a
/// file coming or going re-executes one module's table and this join of
/// references, O(modules), never a walk over every file.
#[salsa::tracked(returns(ref))]
pub fn root_index(db: &dyn Db, workspace: Workspace) -> RootIndex {
    let (project, project_lock) = project_files(db);
    let mut index = RootIndex {
        project,
        project_lock,
        modules: BTreeMap::new(),
    };
    for &directory in workspace.directories(db).iter() {
        let name = directory.name(db);
        if name.is_empty() {
            continue;
        }
        if let Some(files) = module_files(db, Module::new(db, name.clone())) {
            index.modules.insert(name.clone(), files.clone());
        }
    }
    index
}

/// The top-level directories by name.
#[salsa::tracked(returns(ref))]
fn directories_by_name(db: &dyn Db, workspace: Workspace) -> BTreeMap<String, Directory> {
    (workspace.directories(db).iter())
        .map(|&directory| (directory.name(db).clone(), directory))
        .collect()
}

/// The top-level directory `name` (`""`: the root's own files).
fn directory(db: &dyn Db, name: &str) -> Option<Directory> {
    *module_directory(db, Module::new(db, name.to_owned()))
}

/// A module's directory, cut off from the directory list: a directory coming or
/// going re-executes this lookup once per module, and nothing behind it.
#[salsa::tracked]
fn module_directory<'db>(db: &'db dyn Db, module: Module<'db>) -> Option<Directory> {
    let workspace = Workspace::try_get(db)?;
    directories_by_name(db, workspace)
        .get(module.name(db))
        .copied()
}

/// The file at a root-relative path: a lookup in its directory's list alone, so
/// a query asking for one file sleeps through files coming and going elsewhere.
pub fn file_at(db: &dyn Db, path: &str) -> Option<SourceFile> {
    let files = directory(db, directory_name(path))?.files(db);
    position_in(db, files, path).ok().map(|at| files[at])
}

/// Every file whose path starts with `prefix`, in path order; a prefix naming a
/// directory (`dir/...`) reads that directory's list alone.
pub fn files_under(db: &dyn Db, prefix: &str) -> Vec<SourceFile> {
    let mut files: Vec<SourceFile> = match prefix.split_once('/') {
        Some((name, _)) => directory(db, name)
            .map(|directory| directory.files(db).to_vec())
            .unwrap_or_default(),
        None => all_files(db),
    };
    // Both lists are in path order already.
    files.retain(|file| file.path(db).as_str().starts_with(prefix));
    files
}

/// Every file of the root, in path order.
pub fn all_files(db: &dyn Db) -> Vec<SourceFile> {
    let Some(workspace) = Workspace::try_get(db) else {
        return Vec::new();
    };
    let mut files: Vec<SourceFile> = (workspace.directories(db).iter())
        .flat_map(|directory| directory.files(db).iter().copied())
        .collect();
    files.sort_by(|a, b| a.path(db).as_str().cmp(b.path(db).as_str()));
    files
}

/// `_project.tr` and `_project.lock`, read from the root's own files alone.
#[salsa::tracked(returns(copy))]
pub fn project_files(db: &dyn Db) -> (Option<SourceFile>, Option<SourceFile>) {
    let mut found = (None, None);
    if let Some(root) = directory(db, "") {
        for &file in root.files(db).iter() {
            match file.path(db).as_str() {
                "_project.tr" => found.0 = Some(file),
                "_project.lock" => found.1 = Some(file),
                _ => {}
            }
        }
    }
    found
}

/// One module's files (`None` when the module has no directory holding a file
/// of its own). The cut-off point between the file lists and everything per
/// module: it reads its directory's list alone, so a file coming or going
/// elsewhere never wakes it.
#[salsa::tracked(returns(ref))]
pub fn module_files<'db>(db: &'db dyn Db, module: Module<'db>) -> Option<Arc<ModuleFiles>> {
    let name = module.name(db);
    if name.is_empty() {
        return None;
    }
    let directory = directory(db, name)?;
    let mut table: Option<ModuleFiles> = None;
    for &file in directory.files(db).iter() {
        let path = file.path(db);
        if path.components().count() != 2 {
            continue;
        }
        let (Some(stem), kind) = (path.file_stem(), FileKind::of(path)) else {
            continue;
        };
        let files = table.get_or_insert_with(ModuleFiles::default);
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
    table.map(Arc::new)
}

/// The type specs (`<Type>.tr`) of one module, in name order: what the
/// root-wide type tables read per module, cut off from the module's other files.
#[salsa::tracked(returns(ref))]
pub fn module_type_specs<'db>(db: &'db dyn Db, module: Module<'db>) -> Vec<(String, SourceFile)> {
    let Some(files) = module_files(db, module) else {
        return Vec::new();
    };
    (files.specs.iter())
        .filter(|(stem, _)| ItemKind::of(stem) == ItemKind::Type)
        .map(|(stem, &file)| (stem.clone(), file))
        .collect()
}

/// [`module_files`] by the module's name.
pub fn files_of<'db>(db: &'db dyn Db, module: &str) -> Option<&'db ModuleFiles> {
    module_files(db, Module::new(db, module.to_owned())).as_deref()
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

/// The spec file of a definition: `<module>/<name>.tr`.
pub fn spec_file(db: &dyn Db, item: Item<'_>) -> Option<SourceFile> {
    definition_files(db, item).spec
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
    module_files(db, module).as_deref()?.spec
}

/// `_project.tr`, cut off from the file list like [`module_files`].
pub fn project_spec(db: &dyn Db) -> Option<SourceFile> {
    project_files(db).0
}
