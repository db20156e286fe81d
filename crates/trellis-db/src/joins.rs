//! The root-wide answers — `check` of every definition, every `status` row, the
//! unreadable locks — joined outside salsa entry by entry, so a request after an
//! edit asks salsa only about the entries the edit can reach (design §7.5).
//! Salsa's own root-wide memos revalidate every memo of the root after any text
//! edit (§7.1); a host that keeps a `RootJoins` beside its database instead
//! keeps each module's last entries — its own files' and one per spec and lock
//! — and re-asks exactly those an edit may move, as the mention index
//! ([`crate::mentions`]) reaches them. What no mention can bound — a new soil0
//! pin, the project's files, a type, a file outside the module layout — drops
//! every part. The entries are asked through the functions salsa's per-module
//! memos are built from, and the check is joined by the same `join_check`
//! salsa's memo uses.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use trellis_diag::Diagnostic;

use crate::change::Change;
use crate::db::RootDatabase;
use crate::files::Workspace;
use crate::index::{ModuleFiles, root_index};
use crate::mentions::{Mentions, Reached};
use crate::pipeline::{
    CheckReport, StatusRow, check_module_head, check_module_helpers, check_spec_entry, join_check,
    project_status_row, scope_status_row, spec_status_row,
};
use crate::spread;
use crate::status::read_lock_file;

/// One kind of a module's part, entry by entry: what belongs to the module as a
/// whole (`M`), and one entry per file stem (`S`), with the stems an edit
/// reached since. Refreshing asks salsa again for the module's own entry and
/// the reached stems' alone, and keeps every other entry.
struct Part<M, S> {
    entries: Option<(M, BTreeMap<String, S>)>,
    stale: FxHashSet<String>,
}

impl<M, S> Default for Part<M, S> {
    fn default() -> Self {
        Part {
            entries: None,
            stale: FxHashSet::default(),
        }
    }
}

impl<M, S> Part<M, S> {
    /// The part as the database has it now: built whole the first time, and
    /// afterwards the module's own entry and the reached stems' asked again,
    /// over `stems`, the module's current list (so a stem that came is asked,
    /// one that went is dropped).
    /// Returns whether anything was asked.
    fn refresh<'a>(
        &mut self,
        stems: impl Iterator<Item = &'a String>,
        module: impl FnOnce() -> M,
        mut stem: impl FnMut(&str) -> S,
    ) -> bool {
        let mut kept = match self.entries.take() {
            Some(entries) if self.stale.is_empty() => {
                self.entries = Some(entries);
                return false;
            }
            Some((_, by_stem)) => by_stem,
            None => BTreeMap::new(),
        };
        let by_stem = stems
            .map(|name| {
                let value = match kept.remove(name) {
                    Some(value) if !self.stale.contains(name) => value,
                    _ => stem(name),
                };
                (name.clone(), value)
            })
            .collect();
        self.stale.clear();
        self.entries = Some((module(), by_stem));
        true
    }

    /// The stems of `stems` the next refresh asks salsa about.
    fn to_ask<'a>(&self, stems: impl Iterator<Item = &'a String>) -> Vec<&'a String> {
        match &self.entries {
            None => stems.collect(),
            // Most modules: nothing reached, and no stem looked at.
            Some(_) if self.stale.is_empty() => Vec::new(),
            Some(_) => stems.filter(|stem| self.stale.contains(*stem)).collect(),
        }
    }

    fn entries(&self) -> &(M, BTreeMap<String, S>) {
        self.entries.as_ref().expect("refreshed before it is read")
    }
}

/// One module's parts, each filled when first asked for: the check (its own
/// files' findings before the specs', its helpers' after), the status rows
/// (its decision scope's before the specs'), and the unreadable locks.
#[derive(Default)]
struct ModuleParts {
    check: Part<(CheckReport, CheckReport), CheckReport>,
    status: Part<Option<StatusRow>, Option<StatusRow>>,
    lock_problems: Part<(), Vec<Diagnostic>>,
    /// Each part's entries joined in order, made again when one moves, so a
    /// join costs one append per module.
    check_joined: CheckReport,
    status_joined: Vec<StatusRow>,
    status_counts: Vec<StatusCount>,
    lock_problems_joined: Vec<Diagnostic>,
}

impl ModuleParts {
    /// Marks the entries of `stems` to be asked again.
    fn reach(&mut self, stems: &FxHashSet<String>) {
        for stale in [
            &mut self.check.stale,
            &mut self.status.stale,
            &mut self.lock_problems.stale,
        ] {
            stale.extend(stems.iter().cloned());
        }
    }

    fn is_reached(&self) -> bool {
        !(self.check.stale.is_empty()
            && self.status.stale.is_empty()
            && self.lock_problems.stale.is_empty())
    }
}

/// A host's cache of the root-wide answers (see the module paragraph). Every
/// change to the database passes through [`RootJoins::invalidate`] just before
/// it is applied; a change applied without it is noticed (the database counts
/// its changes) and drops everything. In debug builds every answer is compared
/// with salsa's own root-wide memo.
#[derive(Default)]
pub struct RootJoins {
    parts: FxHashMap<String, ModuleParts>,
    project_row: Option<StatusRow>,
    project_counts: Vec<StatusCount>,
    mentions: Mentions,
    /// [`RootDatabase::changes_applied`] as of the parts held.
    synced: u64,
    /// How many threads may ask salsa about the entries to refresh before
    /// they are joined ([`crate::spread`]); 0 and 1 ask on the caller's alone.
    threads: usize,
}

impl RootJoins {
    /// Joins that ask the entries an answer needs on up to `threads` threads
    /// first (a host passes the cores it may use; tests keep the default, one).
    pub fn with_threads(threads: usize) -> Self {
        RootJoins {
            threads,
            ..RootJoins::default()
        }
    }

    /// The entries of the modules' `part` that the next answer asks salsa
    /// about, as (module, files, stem); none when no other thread may ask.
    fn to_ask<'i, M, S>(
        &self,
        index: &'i crate::index::RootIndex,
        part: impl Fn(&ModuleParts) -> &Part<M, S>,
    ) -> Vec<(&'i String, &'i ModuleFiles, &'i String)> {
        if self.threads < 2 {
            return Vec::new();
        }
        (index.modules.iter())
            .flat_map(|(module, files)| {
                let stems = files.specs.keys();
                let stems = match self.parts.get(module) {
                    Some(parts) => part(parts).to_ask(stems),
                    None => stems.collect(),
                };
                stems.into_iter().map(move |stem| (module, &**files, stem))
            })
            .collect()
    }

    /// Drops the parts `change` can move. Call it just before `change.apply(db)`,
    /// while `db` still holds the texts the change replaces.
    pub fn invalidate(&mut self, db: &RootDatabase, change: &Change) {
        self.sync(db);
        self.synced = db.changes_applied() + 1;
        if self.parts.is_empty() {
            // Nothing held: the index is built afresh when next asked for.
            self.mentions = Mentions::default();
            return;
        }
        let mut seeds = Vec::new();
        let mut words = Vec::new();
        if let Some(config) = &change.config_text {
            let before = ConfigReach::of(Workspace::get(db).config_text(db));
            let after = ConfigReach::of(config);
            if before.soil0_major != after.soil0_major {
                self.parts.clear();
            }
            // A tag declared or withdrawn moves the specs that name it alone.
            words.extend(before.tags.symmetric_difference(&after.tags).cloned());
        }
        for (path, text) in &change.files {
            match self.mentions.update(path, text.as_deref()) {
                Some((owner, module_came_or_went)) => {
                    // Whoever names the module may resolve differently now.
                    if module_came_or_went {
                        words.push(owner.0.clone());
                        self.parts.remove(&owner.0);
                    }
                    seeds.push(owner);
                }
                None => self.parts.clear(),
            }
        }
        if self.parts.is_empty() {
            return;
        }
        match self.mentions.reach(seeds, &words) {
            Some(reached) => {
                for (module, stems) in reached {
                    match (stems, self.parts.get_mut(&module)) {
                        (_, None) => {}
                        (Reached::Whole, Some(_)) => {
                            self.parts.remove(&module);
                        }
                        (Reached::Stems(stems), Some(parts)) => parts.reach(&stems),
                    }
                }
            }
            None => self.parts.clear(),
        }
    }

    /// The whole root's check, as [`crate::check_root`] answers it for the root.
    pub fn check(&mut self, db: &RootDatabase) -> CheckReport {
        self.sync(db);
        let index = root_index(db, Workspace::get(db));
        let ahead = self.to_ask(index, |parts| &parts.check);
        spread::ask_ahead(db, &ahead, self.threads, |db, (module, files, stem)| {
            check_spec_entry(db, module, files, stem);
        });
        for (module, files) in &index.modules {
            let parts = self.parts_of(module);
            let asked = parts.check.refresh(
                files.specs.keys(),
                || {
                    let head = check_module_head(db, files);
                    (head, check_module_helpers(db, module, files))
                },
                |stem| check_spec_entry(db, module, files, stem),
            );
            if asked {
                let ((head, helpers), specs) = parts.check.entries();
                let mut joined = head.clone();
                specs.values().for_each(|entry| joined.append(entry));
                joined.append(helpers);
                parts.check_joined = joined;
            }
        }
        let parts = &self.parts;
        let joined = join_check(db, |module, report| {
            report.append(&parts[module].check_joined);
        });
        debug_assert_eq!(
            joined,
            crate::check_root(db, None),
            "the joined check differs from the database's"
        );
        joined
    }

    /// Every row of the root's status, in [`crate::root_status`]'s order.
    pub fn status(&mut self, db: &RootDatabase) -> Vec<&StatusRow> {
        (self.status_groups(db).into_iter())
            .flat_map(|group| group.rows)
            .collect()
    }

    /// The root's status rows in [`crate::root_status`]'s order, in groups —
    /// the project's row, then each module's — each with its counts by status
    /// and kind, so a summary can count a group whose rows it does not show
    /// without reading them.
    pub fn status_groups(&mut self, db: &RootDatabase) -> Vec<RowGroup<'_>> {
        self.sync(db);
        let index = root_index(db, Workspace::get(db));
        let ahead = self.to_ask(index, |parts| &parts.status);
        spread::ask_ahead(db, &ahead, self.threads, |db, (module, files, stem)| {
            spec_status_row(db, module, files, stem);
        });
        for (module, files) in &index.modules {
            let parts = self.parts_of(module);
            let asked = parts.status.refresh(
                files.specs.keys(),
                || scope_status_row(db, module, files),
                |stem| spec_status_row(db, module, files, stem),
            );
            if asked {
                let (scope, specs) = parts.status.entries();
                parts.status_joined = (scope.iter())
                    .chain(specs.values().flatten())
                    .cloned()
                    .collect();
                parts.status_counts = count_statuses(&parts.status_joined);
            }
        }
        self.project_row = project_status_row(db);
        self.project_counts = count_statuses(self.project_row.as_slice());
        let parts = &self.parts;
        let groups: Vec<RowGroup<'_>> = std::iter::once(RowGroup {
            rows: self.project_row.as_slice(),
            counts: &self.project_counts,
        })
        .chain((index.modules.keys()).map(|module| {
            let parts = &parts[module.as_str()];
            RowGroup {
                rows: &parts.status_joined,
                counts: &parts.status_counts,
            }
        }))
        .collect();
        debug_assert!(
            (groups.iter())
                .flat_map(|group| group.rows)
                .eq(crate::root_status(db).iter()),
            "the joined status differs from the database's"
        );
        groups
    }

    /// The problems of every lock file that cannot be read, the project's first.
    pub fn lock_problems(&mut self, db: &RootDatabase) -> Vec<Diagnostic> {
        self.sync(db);
        let index = root_index(db, Workspace::get(db));
        let unreadable = |file| {
            read_lock_file(db, file)
                .as_ref()
                .err()
                .into_iter()
                .flatten()
        };
        let mut problems: Vec<Diagnostic> = index
            .project_lock
            .into_iter()
            .flat_map(unreadable)
            .cloned()
            .collect();
        for (module, files) in &index.modules {
            let parts = self.parts_of(module);
            let asked = parts.lock_problems.refresh(
                files.locks.keys(),
                || (),
                |stem| lock_entry_problems(db, files, stem),
            );
            if asked {
                let (_, by_stem) = parts.lock_problems.entries();
                parts.lock_problems_joined = by_stem.values().flatten().cloned().collect();
            }
            problems.extend(parts.lock_problems_joined.iter().cloned());
        }
        problems
    }

    /// The modules whose parts are held with no entry to ask again, sorted:
    /// what the next answer asks salsa nothing about (for tests and benchmarks).
    pub fn held_modules(&self) -> Vec<&str> {
        let mut held: Vec<&str> = (self.parts.iter())
            .filter(|(_, parts)| !parts.is_reached())
            .map(|(module, _)| module.as_str())
            .collect();
        held.sort_unstable();
        held
    }

    /// The `module::stem` entries of held modules that the next answer asks
    /// salsa about again, sorted (for tests and benchmarks).
    pub fn reached_entries(&self) -> Vec<String> {
        let mut reached: Vec<String> = (self.parts.iter())
            .flat_map(|(module, parts)| {
                (parts.check.stale.iter()).map(move |stem| format!("{module}::{stem}"))
            })
            .collect();
        reached.sort_unstable();
        reached
    }

    /// `module`'s parts, made empty the first time it is asked for.
    fn parts_of(&mut self, module: &str) -> &mut ModuleParts {
        if !self.parts.contains_key(module) {
            self.parts.insert(module.to_owned(), ModuleParts::default());
        }
        self.parts.get_mut(module).expect("inserted above")
    }

    /// Makes the parts answer for `db` as it is: everything is dropped if a
    /// change reached it without [`RootJoins::invalidate`], and the mention index
    /// is built before the first part is kept.
    fn sync(&mut self, db: &RootDatabase) {
        if self.synced != db.changes_applied() {
            self.parts.clear();
            self.mentions = Mentions::default();
            self.synced = db.changes_applied();
        }
        if !self.mentions.built {
            self.mentions.build(db);
        }
    }
}

/// Some consecutive status rows — the project's, or one module's — with how
/// many have each status and kind.
pub struct RowGroup<'a> {
    pub rows: &'a [StatusRow],
    /// (status, kind, how many), in order of first appearance.
    pub counts: &'a [StatusCount],
}

/// A status, a kind of row, and how many rows have both.
pub type StatusCount = (String, &'static str, usize);

fn count_statuses(rows: &[StatusRow]) -> Vec<StatusCount> {
    let mut counts: Vec<StatusCount> = Vec::new();
    for row in rows {
        match (counts.iter_mut())
            .find(|(status, kind, _)| *status == row.status && *kind == row.kind)
        {
            Some((_, _, count)) => *count += 1,
            None => counts.push((row.status.clone(), row.kind, 1)),
        }
    }
    counts
}

/// The problems of one lock file of a module, by its stem.
fn lock_entry_problems(db: &RootDatabase, files: &ModuleFiles, stem: &str) -> Vec<Diagnostic> {
    (files.locks.get(stem))
        .and_then(|&file| read_lock_file(db, file).as_ref().err())
        .cloned()
        .unwrap_or_default()
}

/// What a module's parts read of `soil.toml` ([`crate::config::declared_tags`]
/// and [`crate::config::soil0_major`]): an edit that leaves both alone — a
/// tag's description, the entrypoint, the trellis pin — keeps every part, and
/// the join's head reports the configuration's own error anew each time.
struct ConfigReach {
    tags: std::collections::BTreeSet<String>,
    soil0_major: String,
}

impl ConfigReach {
    fn of(text: &str) -> ConfigReach {
        let config = crate::config::parse_config(text).ok();
        ConfigReach {
            tags: (config.iter())
                .flat_map(|config| config.tags.keys().cloned())
                .collect(),
            soil0_major: crate::config::soil0_major_of(config.as_ref()),
        }
    }
}
