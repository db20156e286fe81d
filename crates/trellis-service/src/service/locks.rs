//! The commands that write locks: `adopt` (record a hand-written lowering and stamp
//! scope and type locks), `review` (re-stamp a prose-only edit), `decisions
//! editorial` (re-stamp decision edges the human declares meaning-preserving).
//! Values come from the database; writing is atomic (`trellis-lock`).

use std::path::Path;

use trellis_db::{
    Citation, Item, ItemKind, LockState, Workspace, adopted_lock, editorial_lock, lock_state,
    read_lock_file, reviewed_lock, root_index, spec_lock, split_definition_name,
};
use trellis_diag::Diagnostic;
use trellis_lock::{Lock, SaveError, Scope, StdFs, Toolchain};
use trellis_rpc::RpcError;

use super::{Service, failed, invalid_params};
use crate::codes::HostCode;
use crate::protocol::{
    AdoptAnswer, AdoptParams, EditorialAnswer, EditorialParams, ReviewAnswer, ReviewParams,
};

pub fn toolchain() -> Toolchain {
    Toolchain {
        trellis: crate::identity::VERSION.to_owned(),
        soil0_cli: crate::identity::SOIL0_VERSION.to_owned(),
    }
}

/// Writes a lock unless the file already holds exactly its canonical text; says
/// whether it wrote.
pub(crate) fn save(root: &Path, relative: &str, lock: &Lock) -> Result<bool, Diagnostic> {
    let target = root.join(relative);
    let current = std::fs::read_to_string(&target).ok();
    if current.as_deref() == Some(trellis_lock::write_lock(lock).as_str()) {
        return Ok(false);
    }
    trellis_lock::save_lock(&StdFs, &target, lock)
        .map(|()| true)
        .map_err(|error| match error {
            SaveError::Invariants(mut problems) if !problems.is_empty() => {
                problems.remove(0).in_file(relative)
            }
            SaveError::Invariants(_) => {
                HostCode::LockBadValue.diagnostic(format!("{relative} breaks a lock invariant"))
            }
            SaveError::Io(error) => HostCode::RootUnreadable
                .diagnostic(format!("cannot write {relative}: {error}"))
                .with_file(relative),
        })
}

fn citations(cites: &[String]) -> Result<Vec<Citation>, RpcError> {
    let mut out = Vec::new();
    for text in cites {
        let (scope, label) = match text.split_once(':') {
            Some(("project", label)) => (Scope::Project, label),
            Some(("module", label)) => (Scope::Module, label),
            _ => {
                return Err(invalid_params(format!(
                    "--cite takes project:LABEL or module:LABEL, not `{text}`"
                )));
            }
        };
        out.push(Citation {
            scope,
            label: label.to_owned(),
        });
    }
    Ok(out)
}

/// The function definitions a command applies to: one, or all.
pub(super) fn targets(
    service: &Service,
    def: Option<&str>,
) -> Result<Vec<(String, String)>, RpcError> {
    let db = service.database();
    if let Some(def) = def {
        let item = trellis_db::resolve_definition(db, def, trellis_db::Named::Function)
            .map_err(|d| failed(&[d]))?;
        return Ok(vec![(item.module(db).clone(), item.name(db).clone())]);
    }
    let index = root_index(db, Workspace::get(db));
    let mut out = Vec::new();
    for (module, files) in &index.modules {
        for name in files.specs.keys() {
            if ItemKind::of(name) == ItemKind::Function {
                out.push((module.clone(), name.clone()));
            }
        }
    }
    Ok(out)
}

/// What one adopt wrote, refused and withdrew.
#[derive(Default)]
struct Adopted {
    written: Vec<String>,
    errors: Vec<Diagnostic>,
    unaccepted: Vec<String>,
}

impl Adopted {
    fn save(&mut self, root: &Path, relative: String, lock: &Lock, previous: Option<&Lock>) {
        match save(root, &relative, lock) {
            Ok(true) => {
                if previous.is_some_and(Lock::accepted) && !lock.accepted() {
                    self.unaccepted.push(entry_name(&relative));
                }
                self.written.push(relative);
            }
            Ok(false) => {}
            Err(error) => self.errors.push(error),
        }
    }
}

/// The name status shows for the entry whose lock is at `relative`:
/// `module::name`, a module's name, or `project`.
fn entry_name(relative: &str) -> String {
    let stem = relative.strip_suffix(".lock").unwrap_or(relative);
    match stem.split_once('/') {
        Some((module, "_module")) => module.to_owned(),
        Some((module, name)) => format!("{module}::{name}"),
        None => "project".to_owned(),
    }
}

/// Stamps the lock of one type, module or project spec (`relative` its lock's
/// path): refused while the spec does not check.
fn stamp_entry(
    service: &Service,
    adopted: &mut Adopted,
    relative: String,
    spec: trellis_db::SourceFile,
    toolchain: &Toolchain,
) {
    let db = service.database();
    let previous = trellis_db::file_at(db, &relative)
        .and_then(|file| trellis_db::read_lock_file(db, file).as_ref().ok());
    let problems = trellis_db::type_problems(db, spec);
    if !problems.is_empty() {
        adopted.errors.extend(problems);
        return;
    }
    if let Some(lock) = spec_lock(db, spec, toolchain, previous) {
        adopted.save(service.root(), relative, &lock, previous);
    }
}

pub fn adopt(service: &mut Service, params: &AdoptParams) -> Result<AdoptAnswer, RpcError> {
    let def = params.def.as_deref();
    let cite = citations(params.cite.as_deref().unwrap_or_default())?;
    let toolchain = toolchain();
    let root = service.root().to_owned();
    // A type, a module or `project` by name stamps that entry's lock alone (the
    // fix its status row prescribes); citations belong to lowerings.
    if let Some(name) = def
        && let Err(not_a_function) = targets(service, Some(name))
    {
        let Some((relative, spec)) = entry_spec(service, name) else {
            return Err(not_a_function);
        };
        if !cite.is_empty() {
            return Err(invalid_params(format!(
                "--cite applies to a definition's lowering, not to {name}"
            )));
        }
        let mut adopted = Adopted::default();
        stamp_entry(service, &mut adopted, relative, spec, &toolchain);
        adopted.errors.extend(rewrite_manifest(service).err());
        return Ok(AdoptAnswer {
            written: adopted.written,
            errors: adopted.errors,
            unaccepted: adopted.unaccepted,
        });
    }
    let db = service.database();
    let mut adopted = Adopted::default();
    for (module, name) in targets(service, def)? {
        let item = Item::new(db, module.clone(), name.clone());
        let previous = match lock_state(db, &module, &name) {
            LockState::Present(Lock::Function(lock)) => Some(lock.clone()),
            _ => None,
        };
        if def.is_none()
            && !root_index(db, Workspace::get(db))
                .module(&module)
                .is_some_and(|m| m.soils.contains_key(&name))
        {
            continue;
        }
        // Citations given for one definition replace its edges; otherwise the
        // recorded edges stay exactly as they are (never silently re-stamped).
        let cite_here: Option<&[Citation]> = match def {
            Some(_) if !cite.is_empty() => Some(&cite),
            _ => None,
        };
        match adopted_lock(db, item, &toolchain, cite_here, previous.as_ref()) {
            Ok(lock) => {
                let relative = format!("{module}/{name}.lock");
                let previous = previous.map(Lock::Function);
                adopted.save(&root, relative, &Lock::Function(lock), previous.as_ref());
            }
            Err(problems) => adopted.errors.extend(problems),
        }
    }
    if def.is_none() {
        let index = root_index(db, Workspace::get(db));
        let mut specs: Vec<(String, trellis_db::SourceFile)> = Vec::new();
        if let Some(project) = index.project {
            specs.push(("_project.lock".to_owned(), project));
        }
        for (module, files) in &index.modules {
            if let Some(spec) = files.spec {
                specs.push((format!("{module}/_module.lock"), spec));
            }
            for (name, &spec) in &files.specs {
                if ItemKind::of(name) == ItemKind::Type {
                    specs.push((format!("{module}/{name}.lock"), spec));
                }
            }
        }
        for (relative, spec) in specs {
            stamp_entry(service, &mut adopted, relative, spec, &toolchain);
        }
    }
    adopted.errors.extend(rewrite_manifest(service).err());
    Ok(AdoptAnswer {
        written: adopted.written,
        errors: adopted.errors,
        unaccepted: adopted.unaccepted,
    })
}

pub fn review(service: &mut Service, params: &ReviewParams) -> Result<ReviewAnswer, RpcError> {
    let def = params.def.as_str();
    let root = service.root().to_owned();
    if let Some((relative, spec)) = entry_spec(service, def) {
        return review_entry(service, def, &relative, spec);
    }
    let (module, name) = targets(service, Some(def))?.remove(0);
    let db = service.database();
    let item = Item::new(db, module.clone(), name.clone());
    let LockState::Present(Lock::Function(lock)) = lock_state(db, &module, &name) else {
        return Err(failed(&[
            HostCode::UnknownDefinition.diagnostic(format!("{def} has no lock to review"))
        ]));
    };
    let lock = reviewed_lock(db, item, lock).ok_or_else(|| invalid_params("nothing to review"))?;
    save(
        &root,
        &format!("{module}/{name}.lock"),
        &Lock::Function(lock),
    )
    .map_err(|e| failed(&[e]))?;
    rewrite_manifest(service).map_err(|e| failed(&[e]))?;
    Ok(ReviewAnswer {
        reviewed: def.to_owned(),
    })
}

/// The lock path and spec of a non-function entry: `project`, a module by name, or
/// a type (`module::Type`).
fn entry_spec(service: &Service, name: &str) -> Option<(String, trellis_db::SourceFile)> {
    let db = service.database();
    let index = root_index(db, Workspace::get(db));
    if name == "project" {
        return index.project.map(|spec| ("_project.lock".to_owned(), spec));
    }
    if let Some(spec) = index.module(name).and_then(|m| m.spec) {
        return Some((format!("{name}/_module.lock"), spec));
    }
    let (module, stem) = split_definition_name(name)?;
    if ItemKind::of(stem) != ItemKind::Type {
        return None;
    }
    let spec = *index.module(module)?.specs.get(stem)?;
    Some((format!("{module}/{stem}.lock"), spec))
}

/// Re-stamps the prose hash of a type, module or project lock.
fn review_entry(
    service: &mut Service,
    name: &str,
    relative: &str,
    spec: trellis_db::SourceFile,
) -> Result<ReviewAnswer, RpcError> {
    let db = service.database();
    let lock = trellis_db::file_at(db, relative)
        .and_then(|file| trellis_db::read_lock_file(db, file).as_ref().ok().cloned())
        .ok_or_else(|| {
            failed(&[HostCode::UnknownDefinition.diagnostic(format!(
                "{name} has no lock to review: stamp it with trellis adopt"
            ))])
        })?;
    let mut lock = lock;
    let prose = trellis_db::spec_hashes(db, spec).prose;
    match &mut lock {
        Lock::Type(l) => l.spec.hashes.prose = prose,
        Lock::Module(l) => l.spec.hashes.prose = prose,
        Lock::Project(l) => l.spec.hashes.prose = prose,
        Lock::Function(_) => return Err(invalid_params("nothing to review")),
    }
    save(service.root(), relative, &lock).map_err(|e| failed(&[e]))?;
    rewrite_manifest(service).map_err(|e| failed(&[e]))?;
    Ok(ReviewAnswer {
        reviewed: name.to_owned(),
    })
}

pub fn decisions_editorial(
    service: &mut Service,
    params: &EditorialParams,
) -> Result<EditorialAnswer, RpcError> {
    let label = params.label.as_str();
    let module_filter = params.module.as_deref();
    let root = service.root().to_owned();
    let toolchain = toolchain();
    let db = service.database();
    let index = root_index(db, Workspace::get(db));
    // Which scopes hold the label now, or recorded it before it was removed.
    let holds = |spec: trellis_db::SourceFile, lock: Option<trellis_db::SourceFile>| {
        let current = trellis_db::decision_entries(db, spec)
            .iter()
            .any(|e| e.label == label);
        let recorded = lock
            .and_then(|file| trellis_db::read_lock_file(db, file).as_ref().ok())
            .is_some_and(|lock| match lock {
                Lock::Module(lock) => lock.decisions.entries.contains_key(label),
                Lock::Project(lock) => lock.decisions.entries.contains_key(label),
                _ => false,
            });
        current || recorded
    };
    let mut scopes: Vec<(Scope, Option<String>)> = Vec::new();
    if let Some(project) = index.project
        && holds(project, index.project_lock)
        && module_filter.is_none()
    {
        scopes.push((Scope::Project, None));
    }
    for (module, files) in &index.modules {
        if module_filter.is_some_and(|m| m != module) {
            continue;
        }
        if let Some(spec) = files.spec
            && holds(spec, files.locks.get("_module").copied())
        {
            scopes.push((Scope::Module, Some(module.clone())));
        }
    }
    if scopes.is_empty() {
        return Err(failed(&[
            HostCode::UnknownDecision.diagnostic(format!("no decision `{label}` in this root"))
        ]));
    }
    if scopes.len() > 1 && module_filter.is_none() {
        let names: Vec<String> = scopes
            .iter()
            .map(|(s, m)| m.clone().unwrap_or_else(|| format!("{s:?}").to_lowercase()))
            .collect();
        return Err(failed(&[HostCode::UnknownDecision.diagnostic(format!(
            "`{label}` is a decision in several scopes ({}); choose one with --module",
            names.join(", ")
        ))]));
    }
    let (scope, module) = scopes.remove(0);
    let mut written = Vec::new();
    let mut errors = Vec::new();
    for (def_module, name) in targets(service, None)? {
        if scope == Scope::Module && module.as_deref() != Some(def_module.as_str()) {
            continue;
        }
        let item = Item::new(db, def_module.clone(), name.clone());
        let LockState::Present(Lock::Function(lock)) = lock_state(db, &def_module, &name) else {
            continue;
        };
        if let Some(lock) = editorial_lock(db, item, lock, scope, label) {
            let relative = format!("{def_module}/{name}.lock");
            match save(&root, &relative, &Lock::Function(lock)) {
                Ok(true) => written.push(relative),
                Ok(false) => {}
                Err(error) => errors.push(error),
            }
        }
    }
    // Re-stamp this one label in the scope's record: an added entry declared
    // harmless, a changed one declared editorial, a removed one forgotten. Other
    // labels whose membership moved stay flagged.
    let (relative, spec, lock_file) = match &module {
        None => (
            "_project.lock".to_owned(),
            index.project,
            index.project_lock,
        ),
        Some(module) => (
            format!("{module}/_module.lock"),
            index.module(module).and_then(|m| m.spec),
            index
                .module(module)
                .and_then(|m| m.locks.get("_module").copied()),
        ),
    };
    let previous = lock_file.and_then(|file| trellis_db::read_lock_file(db, file).as_ref().ok());
    if let Some(lock) = spec
        .and_then(|spec| trellis_db::editorial_scope_lock(db, spec, &toolchain, previous, label))
    {
        match save(&root, &relative, &lock) {
            Ok(true) => written.push(relative),
            Ok(false) => {}
            Err(error) => errors.push(error),
        }
    }
    errors.extend(rewrite_manifest(service).err());
    Ok(EditorialAnswer {
        label: label.to_owned(),
        written,
        errors,
    })
}

/// Rewrites `soil.lock`, the pure merge of every lock in the root (lock-schema §7),
/// keyed by the qualified name the lock's path gives (`csvstats/median`). It is
/// derived from the lock inputs the database reads — the files of the one root
/// walk (crate::walk: no symlink followed, nothing outside the root), refreshed
/// first so the locks this request wrote are in — and not from a walk of its
/// own. Locks that cannot be read are left out (`check`, `status` and `test`
/// report them). The file is written through the one atomic writer, and only
/// when its text changes; a failed write is the caller's error.
pub fn rewrite_manifest(service: &mut Service) -> Result<(), Diagnostic> {
    service.refresh();
    let db = service.database();
    let index = root_index(db, Workspace::get(db));
    let project = index.project_lock.map(|file| ("_project".to_owned(), file));
    let modules = index.modules.iter().flat_map(|(module, files)| {
        files
            .locks
            .iter()
            .map(move |(stem, &file)| (format!("{module}/{stem}"), file))
    });
    let locks: Vec<(String, Lock)> = project
        .into_iter()
        .chain(modules)
        .filter_map(|(name, file)| Some((name, read_lock_file(db, file).as_ref().ok()?.clone())))
        .collect();
    let manifest = trellis_lock::merge(locks, Default::default());
    super::decision_store::remember_decision_texts(service);
    let target = service.root().join(crate::walk::MANIFEST_FILE);
    let text = trellis_lock::write_soil_lock(&manifest);
    if std::fs::read_to_string(&target).ok().as_deref() == Some(text.as_str()) {
        return Ok(());
    }
    trellis_lock::save_soil_lock(&StdFs, &target, &manifest).map_err(|error| {
        HostCode::RootUnreadable
            .diagnostic(format!("cannot write soil.lock: {error}"))
            .with_file(crate::walk::MANIFEST_FILE)
    })
}
