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

use rustc_hash::{FxHashMap, FxHashSet};
use trellis_diag::Diagnostic;

use crate::change::Change;
use crate::db::RootDatabase;
use crate::files::{FileKind, Workspace};
use crate::index::root_index;
use crate::pipeline::{
    CheckReport, StatusRow, join_check, module_check_part, module_status_rows, project_status_row,
};
use crate::soil::ItemKind;
use crate::status::read_lock_file;

/// One module's parts, each filled when first asked for after an invalidation.
#[derive(Default)]
struct ModuleParts {
    check: Option<CheckReport>,
    status: Option<Vec<StatusRow>>,
    lock_problems: Option<Vec<Diagnostic>>,
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
            Some(modules) => {
                self.parts.retain(|module, _| !modules.contains(module));
            }
            None => self.parts.clear(),
        }
    }

    /// The whole root's check, as [`crate::check_root`] answers it for the root.
    pub fn check(&mut self, db: &RootDatabase) -> CheckReport {
        self.sync(db);
        for module in root_index(db, Workspace::get(db)).modules.keys() {
            let parts = self.parts.entry(module.clone()).or_default();
            if parts.check.is_none() {
                parts.check = Some(module_check_part(db, module).clone());
            }
        }
        let parts = &self.parts;
        let joined = join_check(db, |module| {
            parts[module].check.as_ref().expect("filled above")
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
        self.sync(db);
        let index = root_index(db, Workspace::get(db));
        for module in index.modules.keys() {
            let parts = self.parts.entry(module.clone()).or_default();
            if parts.status.is_none() {
                parts.status = Some(module_status_rows(db, module).to_vec());
            }
        }
        self.project_row = project_status_row(db);
        let parts = &self.parts;
        let rows: Vec<&StatusRow> = (self.project_row.iter())
            .chain(
                index
                    .modules
                    .keys()
                    .flat_map(|module| parts[module].status.as_deref().expect("filled above")),
            )
            .collect();
        debug_assert!(
            rows.iter().copied().eq(crate::root_status(db).iter()),
            "the joined status differs from the database's"
        );
        rows
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
            let parts = self.parts.entry(module.clone()).or_default();
            let part = parts.lock_problems.get_or_insert_with(|| {
                files
                    .locks
                    .values()
                    .flat_map(|&file| unreadable(file))
                    .cloned()
                    .collect()
            });
            problems.extend(part.iter().cloned());
        }
        problems
    }

    /// The modules some of whose parts are held, sorted: what the next answer
    /// does not ask salsa about again (for tests and benchmarks).
    pub fn held_modules(&self) -> Vec<&str> {
        let mut held: Vec<&str> = self.parts.keys().map(String::as_str).collect();
        held.sort_unstable();
        held
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
            let words: Vec<u32> = words_of(text).map(|word| self.word_id(word)).collect();
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

    /// The modules holding `seeds`, or the owners whose files mention one of
    /// `words`, and every owner whose files mention one of them, transitively;
    /// `None` when a type is reached (every definition may read the type
    /// environment) or a word is none the index could hold.
    fn reach(&self, seeds: Vec<Owner>, words: &[String]) -> Option<FxHashSet<String>> {
        let mut seen: FxHashSet<u32> = FxHashSet::default();
        let mut modules = FxHashSet::default();
        let mut queue: Vec<u32> = (seeds.iter())
            .filter_map(|owner| self.owner_ids.get(owner).copied())
            .collect();
        for word in words {
            // A word the index leaves out (a tag like `2d`) could be anywhere.
            let indexed: Vec<&str> = words_of(word).collect();
            let first = indexed.first()?;
            if let Some(&word) = self.word_ids.get(*first) {
                queue.extend(self.mentioned_by[word as usize].keys());
            }
        }
        while let Some(owner) = queue.pop() {
            if !seen.insert(owner) {
                continue;
            }
            let (module, stem) = &self.owners[owner as usize];
            modules.insert(module.clone());
            match ItemKind::of(stem) {
                ItemKind::Type => return None,
                // The module's spec and helpers speak for every definition in it.
                ItemKind::Helper => queue.extend(
                    self.in_module
                        .get(module)
                        .into_iter()
                        .flat_map(|o| o.keys()),
                ),
                ItemKind::Function => {}
            }
            if let Some(&word) = self.word_ids.get(stem.as_str()) {
                queue.extend(self.mentioned_by[word as usize].keys());
            }
        }
        Some(modules)
    }
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
