//! The mention index behind [`crate::RootJoins`] (design §7.5): which owners'
//! files mention which words, and what an edit reaches through them. An owner is
//! a definition, a type or a module's own file, by module and file stem; an
//! owner's entries may move when an owner whose stem its files mention moves,
//! so the reach of an edit is the transitive closure of mentions from the
//! edited owners — over-approximating every reference a check, hash or status
//! follows. A spec's prose is no reference (nothing but its own prose hash
//! reads it), so a spec is indexed by the words of its frontmatter and its
//! reserved blocks alone (§7.14).

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::db::RootDatabase;
use crate::files::FileKind;
use crate::index::ItemKind;
use crate::spec::parse_spec;

/// A definition, a module's own file (`_module`, `_private`) or a type, by the
/// module and file stem its files share.
pub(crate) type Owner = (String, String);

/// Which owners' files mention which names: the reverse of every reference a
/// definition's check, hashes or status can follow, over-approximated by the
/// words of its files (a qualified `m::f` mentions `f`, whatever the module).
/// Owners and words are numbered, so indexing a file allocates only its new words.
#[derive(Default)]
pub(crate) struct Mentions {
    pub(crate) built: bool,
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
    /// Indexes every file of the root; a spec by its parse, which the first
    /// answer reads anyway.
    pub(crate) fn build(&mut self, db: &RootDatabase) {
        *self = Mentions::default();
        for file in crate::index::all_files(db) {
            let path = file.path(db).as_str();
            if owner_of(path).is_none() {
                continue;
            }
            let said = match FileKind::of(camino::Utf8Path::new(path)) {
                FileKind::Spec => Said::Spec(&parse_spec(db, file).file),
                _ => Said::Text(file.text(db)),
            };
            self.update(path, Some(said));
        }
        self.built = true;
    }

    /// Replaces what `path` says (`None`: the file is gone) and returns its
    /// owner and whether its module came or went with it, or `None` when the
    /// file is not a module's definition file — what no mention bounds.
    pub(crate) fn update(&mut self, path: &str, said: Option<Said<'_>>) -> Option<(Owner, bool)> {
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
        if let Some(said) = said {
            // A lock is read by its own definition's status alone, and what it
            // records of others (edges, decisions) is compared with what the
            // definition's own files say: its words reach no one, and most of
            // them are digests.
            let read_by_others = FileKind::of(camino::Utf8Path::new(path)) != FileKind::Lock;
            let words: Vec<u32> = match (read_by_others, said) {
                (false, _) => Vec::new(),
                (true, Said::Text(text)) => words_of(text).map(|word| self.word_id(word)).collect(),
                (true, Said::Spec(spec)) => {
                    let mut words: Vec<u32> =
                        (spec_words(spec)).map(|word| self.word_id(word)).collect();
                    words.sort_unstable();
                    words.dedup();
                    words
                }
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
    /// its definitions too, and no further. `None` when an edited type is
    /// among them (every definition may read the type environment) or a word
    /// is none the index could hold.
    pub(crate) fn reach(
        &self,
        seeds: Vec<Owner>,
        words: &[String],
    ) -> Option<BTreeMap<String, Reached>> {
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
                // A type whose own text moved may move the type environment,
                // which every check reads. One reached through what its
                // blocks mention (an invariant calling a predicate) moves its
                // own entries and whoever names it, as a function does.
                ItemKind::Type if edited.contains(&owner) => return None,
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
                ItemKind::Function | ItemKind::Type => {
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

/// What one file says, as the index reads it.
pub(crate) enum Said<'a> {
    /// A Soil file (or a lock, whose words are left out): every word.
    Text(&'a str),
    /// A spec: its frontmatter and reserved blocks, never its prose.
    Spec(&'a trellis_spec::TrFile),
}

/// The words of what other owners can read of a spec: its frontmatter's name
/// and tags, and each reserved block's info string and content. Its prose is
/// read by its own prose hash alone, so a name said there reaches no one.
fn spec_words(spec: &trellis_spec::TrFile) -> impl Iterator<Item = &str> {
    let front = &spec.frontmatter;
    (front.name.iter().chain(&front.tags))
        .flat_map(|text| words_of(text))
        .chain(spec.blocks.iter().flat_map(|block| {
            let value = &block.value;
            (value.header.name.iter())
                .flat_map(|name| words_of(name))
                .chain(words_of(&value.content))
        }))
}

/// What an edit reaches of one module.
pub(crate) enum Reached {
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

/// The distinct words of `text` that could name a definition, a helper or a
/// type.
fn words_of(text: &str) -> impl Iterator<Item = &str> {
    let mut words: Vec<&str> = text
        .split(|c: char| !is_word_char(c))
        .filter(|word| word.starts_with(|c: char| c.is_alphabetic() || c == '_'))
        .collect();
    words.sort_unstable();
    words.dedup();
    words.into_iter()
}
