//! Every edit enters the database through one `Change`, applied in one place, so
//! the CLI refresh, the daemon and a future language server all move the database
//! the same way (an unsaved editor buffer is just another text).

use std::collections::BTreeMap;
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use salsa::{Durability, Setter};

use crate::config::CONFIG_FILE;
use crate::db::RootDatabase;
use crate::files::{Directory, FileKind, SourceFile, Workspace, directory_name, position_in};

/// A batch of edits: the new `soil.toml` text, and file texts set (`Some`) or
/// removed (`None`), keyed by root-relative path. A text is the shared string
/// the database holds: a host reading many files makes each on the thread
/// that read it, so applying a change copies none (a first load's texts are
/// the root's bytes, which the one applying thread copied before).
///
/// Durability (design §7.1): the layout (which directories and files exist) is
/// HIGH, the texts of specs, locks and `soil.toml` MEDIUM, the texts of Soil files
/// LOW, each for its whole life: an edit keeps a text's durability, so salsa
/// always backdates a re-executed query whose value did not move, and an edit
/// re-executes what it really changed. The price is that every memo over texts
/// of the edited kind or below that a request asks about revalidates deeply; a
/// host asks only about what the edit can reach ([`crate::RootJoins`]). A host
/// that asks about one file over and over while it is typed in (an editor) marks
/// that file volatile ([`Change::mark_volatile`]): its text is LOW from then on,
/// its edits too, so queries over the specs and locks revalidate in O(1).
#[derive(Clone, Debug, Default)]
pub struct Change {
    pub config_text: Option<String>,
    /// Keyed by the path's text (`/`-separated, root-relative).
    pub files: BTreeMap<String, Option<Arc<str>>>,
    /// Files to demote to volatile without changing their text.
    pub volatile: Vec<String>,
}

/// One file's edit: its path, and its new text (`None`: the file is removed).
type FileEdit = (String, Option<Arc<str>>);

impl Change {
    pub fn set_config(&mut self, text: impl Into<String>) -> &mut Self {
        self.config_text = Some(text.into());
        self
    }

    pub fn set_file(
        &mut self,
        path: impl Into<Utf8PathBuf>,
        text: impl Into<Arc<str>>,
    ) -> &mut Self {
        self.files
            .insert(path.into().into_string(), Some(text.into()));
        self
    }

    /// Sets a file by its root-relative path, as a host reads it from disk: the
    /// root's [`CONFIG_FILE`] is the configuration, anything else a file of the root.
    pub fn set_root_file(
        &mut self,
        path: impl Into<Utf8PathBuf>,
        text: impl Into<Arc<str>>,
    ) -> &mut Self {
        self.set_root_files(vec![(path.into().into_string(), text.into())])
    }

    /// [`Change::set_root_file`] for many files at once, as a host's load
    /// reads them: into a change that sets no file yet, the map is built in
    /// one pass rather than searched once per file (half of a first load's
    /// bookkeeping at 20,000 definitions). A path given twice sets its last text.
    pub fn set_root_files(&mut self, files: Vec<(String, Arc<str>)>) -> &mut Self {
        let mut texts = Vec::with_capacity(files.len());
        for (path, text) in files {
            // By text: a path's own equality walks its components, a tenth of
            // a first load's applying at 20,000 definitions.
            if path == CONFIG_FILE {
                self.set_config(&*text);
            } else {
                texts.push((path, Some(text)));
            }
        }
        if self.files.is_empty() {
            self.files = texts.into_iter().collect();
        } else {
            self.files.extend(texts);
        }
        self
    }

    pub fn remove_file(&mut self, path: impl Into<Utf8PathBuf>) -> &mut Self {
        self.files.insert(path.into().into_string(), None);
        self
    }

    pub fn mark_volatile(&mut self, path: impl Into<Utf8PathBuf>) -> &mut Self {
        self.volatile.push(path.into().into_string());
        self
    }

    pub fn is_empty(&self) -> bool {
        self.config_text.is_none() && self.files.is_empty() && self.volatile.is_empty()
    }

    /// Applies the change, creating the workspace on first use. Unchanged texts are
    /// not set again, so a refresh that finds nothing new does not start a revision.
    pub fn apply(self, db: &mut RootDatabase) -> Workspace {
        db.count_change();
        let workspace = match Workspace::try_get(db) {
            Some(workspace) => workspace,
            None => Workspace::builder(Arc::from(""), Arc::from(Vec::new()))
                .config_text_durability(TEXT)
                .directories_durability(LAYOUT)
                .new(db),
        };
        if let Some(config) = self.config_text
            && **workspace.config_text(db) != *config
        {
            workspace
                .set_config_text(db)
                .with_durability(TEXT)
                .to(Arc::from(config));
        }
        if self.files.is_empty() && self.volatile.is_empty() {
            return workspace;
        }
        let directories = workspace.directories(db).clone();
        let mut edits: BTreeMap<String, Vec<FileEdit>> = BTreeMap::new();
        // A directory's files are one run in path order (the root's own files
        // aside, between them): a name is made per run, not per file.
        let mut pending = self.files.into_iter().peekable();
        while let Some((path, text)) = pending.next() {
            let name = directory_name(&path).to_owned();
            let mut run = vec![(path, text)];
            while let Some((next, _)) = pending.peek()
                && directory_name(next) == name
            {
                run.extend(pending.next());
            }
            edits.entry(name).or_default().extend(run);
        }
        let mut came = Vec::new();
        let mut went = Vec::new();
        for (name, edits) in edits {
            match find_directory(db, &directories, &name) {
                Some(directory) => {
                    if !edit_directory(db, directory, edits) {
                        went.push(directory);
                    }
                }
                None => {
                    let mut files: Vec<SourceFile> = (edits.into_iter())
                        .filter_map(|(path, text)| Some(new_file(db, path, text?)))
                        .collect();
                    if !files.is_empty() {
                        files.sort_by(|a, b| a.path(db).as_str().cmp(b.path(db).as_str()));
                        let directory = Directory::builder(name, Arc::from(files))
                            .durability(LAYOUT)
                            .new(db);
                        came.push(directory);
                    }
                }
            }
        }
        for path in &self.volatile {
            let file =
                find_directory(db, &directories, directory_name(path)).and_then(|directory| {
                    let files = directory.files(db);
                    position_in(db, files, path).ok().map(|at| files[at])
                });
            if let Some(file) = file
                && db.mark_volatile(file)
            {
                let text = file.text(db).clone();
                file.set_text(db).with_durability(VOLATILE).to(text);
            }
        }
        if !came.is_empty() || !went.is_empty() {
            let mut all: Vec<Directory> = (directories.iter().copied())
                .filter(|directory| !went.contains(directory))
                .chain(came)
                .collect();
            all.sort_by(|a, b| a.name(db).cmp(b.name(db)));
            workspace
                .set_directories(db)
                .with_durability(LAYOUT)
                .to(Arc::from(all));
        }
        workspace
    }
}

/// Keeps every parse for the life of `db`: salsa's LRU (design §7.15) frees
/// parses when a revision ends, which a process that ends with its first
/// answer never reaches, and its bookkeeping takes a lock shared by every
/// thread at each read of a parse. Set by a one-shot command before it
/// loads; a long-lived host keeps the LRU.
pub fn keep_every_parse(db: &mut RootDatabase) {
    crate::soil::keep_every_parse(db);
    crate::spec::keep_every_parse(db);
}

/// Which files and directories exist: changed by a file or module coming or
/// going. Above the texts, so a query reading only the layout (`root_index`,
/// `module_files`, `definition_files`) revalidates in O(1) after a text edit.
const LAYOUT: Durability = Durability::HIGH;
/// What the specs, locks and `soil.toml` say.
const TEXT: Durability = Durability::MEDIUM;
/// What the Soil files say: below the specs and locks, so after a body edit the
/// queries that read only specs, locks and the layout (a status row's spec
/// hashes, its lock) revalidate in O(1). The Soil is what an agent rewrites on
/// every lowering and a person edits most; a spec edit still walks both.
const SOIL: Durability = Durability::LOW;
/// The texts of files a host marked volatile (an editor's open buffers): below
/// everything, so a keystroke leaves every query over the rest O(1) to revalidate.
const VOLATILE: Durability = Durability::LOW;

/// What the type specs say: every check reads the type environment they
/// make, so they sit with the layout; an edit of a function's spec then leaves
/// the environment O(1) to revalidate, where it would walk every type spec
/// (design §7.14). A type edit is a global edit either way.
const TYPES: Durability = Durability::HIGH;

/// A file's text durability, by its kind for its whole life (§7.1).
fn text_durability(path: &str) -> Durability {
    let path = Utf8Path::new(path);
    match FileKind::of(path) {
        FileKind::Soil => SOIL,
        FileKind::Spec if is_type_spec(path) => TYPES,
        _ => TEXT,
    }
}

/// A type's spec: `<module>/<Type>.tr`, its stem capitalised.
fn is_type_spec(path: &Utf8Path) -> bool {
    path.components().count() == 2
        && (path.file_stem())
            .is_some_and(|stem| crate::index::ItemKind::of(stem) == crate::index::ItemKind::Type)
}

fn find_directory(db: &RootDatabase, directories: &[Directory], name: &str) -> Option<Directory> {
    (directories
        .binary_search_by(|directory| directory.name(db).as_str().cmp(name))
        .ok())
    .map(|at| directories[at])
}

/// A file the database has not held, durable (§7.1).
fn new_file(db: &mut RootDatabase, path: String, text: Arc<str>) -> SourceFile {
    let durability = text_durability(&path);
    SourceFile::builder(Utf8PathBuf::from(path), text)
        .path_durability(LAYOUT)
        .text_durability(durability)
        .new(db)
}

/// Applies one directory's edits; `false` when no file is left in it. The list
/// is copied only when a file comes or goes, and stays durable like the files.
fn edit_directory(db: &mut RootDatabase, directory: Directory, edits: Vec<FileEdit>) -> bool {
    let existing = directory.files(db).clone();
    let mut list: Option<Vec<SourceFile>> = None;
    for (path, text) in edits {
        let files = list.as_deref().unwrap_or(&existing);
        match (position_in(db, files, &path), text) {
            (Ok(at), Some(text)) => {
                let file = files[at];
                if **file.text(db) != *text {
                    let durability = if db.is_volatile(file) {
                        VOLATILE
                    } else {
                        text_durability(&path)
                    };
                    file.set_text(db).with_durability(durability).to(text);
                }
            }
            (Ok(at), None) => {
                list.get_or_insert_with(|| existing.to_vec()).remove(at);
            }
            (Err(at), Some(text)) => {
                let file = new_file(db, path, text);
                list.get_or_insert_with(|| existing.to_vec())
                    .insert(at, file);
            }
            (Err(_), None) => {}
        }
    }
    match list {
        Some(files) if files.is_empty() => false,
        Some(files) => {
            directory
                .set_files(db)
                .with_durability(LAYOUT)
                .to(Arc::from(files));
            true
        }
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(change: &Change) -> Vec<(&str, Option<&str>)> {
        (change.files.iter())
            .map(|(path, text)| (path.as_str(), text.as_deref()))
            .collect()
    }

    #[test]
    fn many_files_set_at_once_are_set_as_one_by_one() {
        let files = [
            ("m/b.soil", "b"),
            ("soil.toml", "[project]"),
            ("m/a.tr", "a"),
            ("m/b.soil", "b again"),
        ];
        let mut one_by_one = Change::default();
        for (path, text) in files {
            one_by_one.set_root_file(path, text);
        }
        let mut at_once = Change::default();
        at_once.set_root_files(
            files
                .map(|(path, text)| (path.to_owned(), Arc::from(text)))
                .into(),
        );
        assert_eq!(texts(&at_once), texts(&one_by_one));
        assert_eq!(
            texts(&at_once),
            [("m/a.tr", Some("a")), ("m/b.soil", Some("b again"))]
        );
        assert_eq!(at_once.config_text.as_deref(), Some("[project]"));

        // Into a change that already holds files: added beside them.
        at_once.remove_file("m/c.tr");
        at_once.set_root_files(vec![("m/a.tr".to_owned(), Arc::from("a again"))]);
        assert_eq!(
            texts(&at_once),
            [
                ("m/a.tr", Some("a again")),
                ("m/b.soil", Some("b again")),
                ("m/c.tr", None)
            ]
        );
    }

    #[test]
    fn applying_groups_a_directorys_files_around_the_roots_own() {
        let mut db = RootDatabase::default();
        let mut change = Change::default();
        // In path order the root's own files fall between the directories'.
        for path in ["a/x.tr", "b.tr", "b/y.tr", "c-d/z.tr", "c/w.tr", "d.tr"] {
            change.set_root_file(path, "text");
        }
        let workspace = change.apply(&mut db);
        let layout: Vec<(String, Vec<String>)> = (workspace.directories(&db).iter())
            .map(|directory| {
                let files = (directory.files(&db).iter())
                    .map(|file| file.path(&db).to_string())
                    .collect();
                (directory.name(&db).clone(), files)
            })
            .collect();
        let expected: Vec<(String, Vec<String>)> = [
            ("", vec!["b.tr", "d.tr"]),
            ("a", vec!["a/x.tr"]),
            ("b", vec!["b/y.tr"]),
            ("c", vec!["c/w.tr"]),
            ("c-d", vec!["c-d/z.tr"]),
        ]
        .into_iter()
        .map(|(name, files)| {
            (
                name.to_owned(),
                files.into_iter().map(str::to_owned).collect(),
            )
        })
        .collect();
        assert_eq!(layout, expected);
    }
}
