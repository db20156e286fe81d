//! The root-wide answers — `check` of every definition, every `status` row, the
//! unreadable locks — joined outside salsa from per-module parts, so a request
//! after an edit asks salsa only about the modules the edit can reach (design
//! §7.5). Salsa's own root-wide memos revalidate every memo of the root after
//! any text edit (§7.1); a host that keeps a `RootJoins` beside its database
//! instead keeps each module's last parts and drops exactly those an edit may
//! move: the edited definitions' modules and the modules of every definition
//! whose files mention an edited name, transitively. A module that comes or goes
//! reaches whoever mentions its name, and a tag declared or withdrawn whoever
//! mentions the tag. What no mention can bound — a new soil0 pin, the project's
//! files, a type, a file outside the module layout — drops every part. The parts
//! are salsa's memos, cloned, and the check is joined by the same `join_check`
//! salsa's memo uses.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use trellis_diag::Diagnostic;

use crate::change::Change;
use crate::db::RootDatabase;
use crate::files::{FileKind, Workspace};
use crate::index::{ModuleFiles, root_index};
use crate::pipeline::{
    CheckReport, StatusRow, check_module_head, check_module_helpers, check_spec_entry, join_check,
    project_status_row, scope_status_row, spec_status_row,
};
use crate::soil::ItemKind;
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
    /// The check's entries joined in order, made again when one moves, so a
    /// join costs one append per module; the same for the status rows and the
    /// lock problems.
    check_joined: CheckReport,
    status_joined: Vec<StatusRow>,
    status_counts: Vec<StatusCount>,
    lock_problems_joined: Vec<Diagnostic>,
    status: Part<Option<StatusRow>, Option<StatusRow>>,
    lock_problems: Part<(), Vec<Diagnostic>>,
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
}

impl RootJoins {
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

/// A definition, a module's own file (`_module`, `_private`) or a type, by the
/// module and file stem its files share.
type Owner = (String, String);

/// Which owners' files mention which names: the reverse of every reference a
/// definition's check, hashes or status can follow, over-approximated by the
/// words of its files (a qualified `m::f` mentions `f`, whatever the module).
/// Owners and words are numbered, so indexing a file allocates only its new words.
#[derive(Default)]
struct Mentions {
    built: bool,
    owners: Vec<Owner>,
    owner_ids: FxHashMap<Owner, u32>,
    word_ids: FxHashMap<Box<str>, u32>,
    /// Each indexed file's owner and distinct words.
    files: FxHashMap<String, (u32, Vec<u32>)>,
    /// By word: the owners whose files mention it, with how many of their files do.
    mentioned_by: Vec<FxHashMap<u32, u32>>,
    /// A module → its owners, with how many files each has.
    in_module: FxHashMap<String, FxHashMap<u32, u32>>,
}

impl Mentions {
    fn build(&mut self, db: &RootDatabase) {
        *self = Mentions::default();
        for file in crate::index::all_files(db) {
            self.update(file.path(db).as_str(), Some(file.text(db)));
        }
        self.built = true;
    }

    /// Replaces what `path` says (`None`: the file is gone) and returns its
    /// owner and whether its module came or went with it, or `None` when the
    /// file is not a module's definition file — what no mention bounds.
    fn update(&mut self, path: &str, text: Option<&str>) -> Option<(Owner, bool)> {
        let (module, stem) = owner_of(path)?;
        let had_module = self.in_module.get(&module).is_some_and(|o| !o.is_empty());
        let owner = self.owner_id(&module, &stem);
        if let Some((_, old)) = self.files.remove(path) {
            for word in old {
                decrement(&mut self.mentioned_by[word as usize], owner);
            }
            if let Some(owners) = self.in_module.get_mut(&module) {
                decrement(owners, owner);
            }
        }
        if let Some(text) = text {
            // A lock is read by its own definition's status alone, and what it
            // records of others (edges, decisions) is compared with what the
            // definition's own files say: its words reach no one, and most of
            // them are digests.
            let read_by_others = FileKind::of(camino::Utf8Path::new(path)) != FileKind::Lock;
            let words: Vec<u32> = match read_by_others {
                true => words_of(text).map(|word| self.word_id(word)).collect(),
                false => Vec::new(),
            };
            for &word in &words {
                *self.mentioned_by[word as usize].entry(owner).or_default() += 1;
            }
            self.files.insert(path.to_owned(), (owner, words));
            *(self.in_module.entry(module.clone()).or_default())
                .entry(owner)
                .or_default() += 1;
        }
        let has_module = self.in_module.get(&module).is_some_and(|o| !o.is_empty());
        Some(((module, stem), had_module != has_module))
    }

    fn owner_id(&mut self, module: &str, stem: &str) -> u32 {
        let key = (module.to_owned(), stem.to_owned());
        if let Some(&id) = self.owner_ids.get(&key) {
            return id;
        }
        let id = self.owners.len() as u32;
        self.owners.push(key.clone());
        self.owner_ids.insert(key, id);
        id
    }

    fn word_id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.word_ids.get(word) {
            return id;
        }
        let id = self.mentioned_by.len() as u32;
        self.mentioned_by.push(FxHashMap::default());
        self.word_ids.insert(Box::from(word), id);
        id
    }

    /// What `seeds`, and the owners whose files mention one of `words`, reach:
    /// those owners and every owner whose files mention one of them,
    /// transitively, by module — a module's own files (an edited `_module`, a
    /// `_private`) reach all of it, an edited `_module` the direct mentioners of
    /// its definitions too, and no further. `None` when a type is reached (every definition may read
    /// the type environment) or a word is none the index could hold.
    fn reach(&self, seeds: Vec<Owner>, words: &[String]) -> Option<BTreeMap<String, Reached>> {
        let mut seen: FxHashSet<u32> = FxHashSet::default();
        let mut reached: BTreeMap<String, Reached> = BTreeMap::new();
        let mut queue: Vec<u32> = (seeds.iter())
            .filter_map(|owner| self.owner_ids.get(owner).copied())
            .collect();
        let edited: FxHashSet<u32> = queue.iter().copied().collect();
        for word in words {
            // A word the index leaves out (a tag like `2d`) could be anywhere.
            let indexed: Vec<&str> = words_of(word).collect();
            let first = indexed.first()?;
            if let Some(&word) = self.word_ids.get(*first) {
                queue.extend(self.mentioned_by[word as usize].keys());
            }
        }
        // Owners whose own entries move but whose change goes no further.
        let mut named_only: Vec<u32> = Vec::new();
        while let Some(owner) = queue.pop() {
            if !seen.insert(owner) {
                continue;
            }
            let (module, stem) = &self.owners[owner as usize];
            let entry = reached
                .entry(module.clone())
                .or_insert_with(|| Reached::Stems(FxHashSet::default()));
            match ItemKind::of(stem) {
                ItemKind::Type => return None,
                // An edited `_module.tr` moves its module's entries (decisions,
                // grants, its own findings) and, through its exports, the
                // checks of whoever names a definition of it; exports never
                // enter a hash (exports.rs), so it moves nothing further.
                ItemKind::Helper if stem == "_module" && edited.contains(&owner) => {
                    *entry = Reached::Whole;
                    for &member in self
                        .in_module
                        .get(module)
                        .into_iter()
                        .flat_map(|o| o.keys())
                    {
                        let (_, member_stem) = &self.owners[member as usize];
                        if let Some(&word) = self.word_ids.get(member_stem.as_str()) {
                            named_only.extend(self.mentioned_by[word as usize].keys());
                        }
                    }
                    continue;
                }
                // A `_module.tr` that only names what moved (in its exports)
                // moves its own entries; edited, it speaks for the module.
                ItemKind::Helper if stem == "_module" && !edited.contains(&owner) => {
                    if let Reached::Stems(stems) = entry {
                        stems.insert(stem.clone());
                    }
                }
                // The module's spec and helpers speak for every definition in it.
                ItemKind::Helper => {
                    *entry = Reached::Whole;
                    queue.extend(
                        self.in_module
                            .get(module)
                            .into_iter()
                            .flat_map(|o| o.keys()),
                    );
                }
                ItemKind::Function => {
                    if let Reached::Stems(stems) = entry {
                        stems.insert(stem.clone());
                    }
                }
            }
            if let Some(&word) = self.word_ids.get(stem.as_str()) {
                queue.extend(self.mentioned_by[word as usize].keys());
            }
        }
        for owner in named_only {
            let (module, stem) = &self.owners[owner as usize];
            let entry = reached
                .entry(module.clone())
                .or_insert_with(|| Reached::Stems(FxHashSet::default()));
            if let Reached::Stems(stems) = entry {
                stems.insert(stem.clone());
            }
        }
        Some(reached)
    }
}

/// What an edit reaches of one module.
enum Reached {
    /// Its own files: every entry.
    Whole,
    /// These stems' entries.
    Stems(FxHashSet<String>),
}

/// Counts one fewer of `key`, forgetting it at zero.
fn decrement(counts: &mut FxHashMap<u32, u32>, key: u32) {
    if let Some(count) = counts.get_mut(&key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(&key);
        }
    }
}

/// `module/stem.{tr,soil,lock}`, when the stem is a plain word; anything else
/// has no owner.
fn owner_of(path: &str) -> Option<Owner> {
    let (module, file) = path.split_once('/')?;
    let (stem, _) = file.rsplit_once('.')?;
    let indexed = matches!(
        FileKind::of(camino::Utf8Path::new(path)),
        FileKind::Spec | FileKind::Soil | FileKind::Lock
    );
    let plain = |word: &str| !word.is_empty() && word.chars().all(is_word_char);
    (indexed && !file.contains('/') && plain(module) && plain(stem))
        .then(|| (module.to_owned(), stem.to_owned()))
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The distinct words of `text` that could name a definition or a helper.
fn words_of(text: &str) -> impl Iterator<Item = &str> {
    let mut words: Vec<&str> = text
        .split(|c: char| !is_word_char(c))
        .filter(|word| word.starts_with(|c: char| c.is_lowercase() || c == '_'))
        .collect();
    words.sort_unstable();
    words.dedup();
    words.into_iter()
}
