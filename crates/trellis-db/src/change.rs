//! Every edit enters the database through one `Change`, applied in one place, so
//! the CLI refresh, the daemon and a future language server all move the database
//! the same way (an unsaved editor buffer is just another text).

use std::collections::BTreeMap;
use std::sync::Arc;

use camino::Utf8PathBuf;
use salsa::{Durability, Setter};

use crate::config::CONFIG_FILE;
use crate::db::RootDatabase;
use crate::files::{SourceFile, Workspace};

/// A batch of edits: the new `soil.toml` text, and file texts set (`Some`) or
/// removed (`None`), keyed by root-relative path.
///
/// Durability (design §7.1): a file enters the database durable (HIGH) and becomes
/// volatile (LOW) at its first edit, so after an edit every query over files that
/// were never edited revalidates in O(1) — rust-analyzer's library/local split, by
/// edit history instead of by location. Salsa does not backdate a value whose
/// durability dropped, so a file's first edit re-executes its dependents once; a
/// host that knows a file is about to change (an editor opened it) can pay that
/// ahead of time with [`Change::mark_volatile`].
#[derive(Clone, Debug, Default)]
pub struct Change {
    pub config_text: Option<String>,
    /// Keyed by the path's text (`/`-separated, root-relative).
    pub files: BTreeMap<String, Option<String>>,
    /// Files to demote to volatile without changing their text.
    pub volatile: Vec<String>,
}

impl Change {
    pub fn set_config(&mut self, text: impl Into<String>) -> &mut Self {
        self.config_text = Some(text.into());
        self
    }

    pub fn set_file(&mut self, path: impl Into<Utf8PathBuf>, text: impl Into<String>) -> &mut Self {
        self.files
            .insert(path.into().into_string(), Some(text.into()));
        self
    }

    /// Sets a file by its root-relative path, as a host reads it from disk: the
    /// root's [`CONFIG_FILE`] is the configuration, anything else a file of the root.
    pub fn set_root_file(
        &mut self,
        path: impl Into<Utf8PathBuf>,
        text: impl Into<String>,
    ) -> &mut Self {
        let path = path.into();
        if path == CONFIG_FILE {
            self.set_config(text)
        } else {
            self.set_file(path, text)
        }
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
                .config_text_durability(Durability::HIGH)
                .new(db),
        };
        if let Some(config) = self.config_text
            && **workspace.config_text(db) != *config
        {
            workspace
                .set_config_text(db)
                .with_durability(Durability::HIGH)
                .to(Arc::from(config));
        }
        if self.files.is_empty() && self.volatile.is_empty() {
            return workspace;
        }
        // The file list is sorted by path text, so an edit finds its file by binary
        // search; the map of every path is built only when files come or go.
        let existing = workspace.files(db).clone();
        let find = |db: &RootDatabase, path: &str| {
            existing
                .binary_search_by(|file| file.path(db).as_str().cmp(path))
                .ok()
                .map(|at| existing[at])
        };
        let mut added_or_removed: BTreeMap<String, Option<String>> = BTreeMap::new();
        for (path, text) in self.files {
            match (find(db, &path), text) {
                (Some(file), Some(text)) => {
                    if **file.text(db) != *text {
                        file.set_text(db)
                            .with_durability(Durability::LOW)
                            .to(Arc::from(text));
                    }
                }
                (None, None) => {}
                (_, text) => {
                    added_or_removed.insert(path, text);
                }
            }
        }
        for path in &self.volatile {
            if let Some(file) = find(db, path) {
                let text = file.text(db).clone();
                file.set_text(db).with_durability(Durability::LOW).to(text);
            }
        }
        if !added_or_removed.is_empty() {
            let mut by_path: BTreeMap<String, SourceFile> = existing
                .iter()
                .map(|&file| (file.path(db).as_str().to_owned(), file))
                .collect();
            for (path, text) in added_or_removed {
                match text {
                    Some(text) => {
                        let file =
                            SourceFile::builder(Utf8PathBuf::from(path.clone()), Arc::from(text))
                                .durability(Durability::HIGH)
                                .new(db);
                        by_path.insert(path, file);
                    }
                    None => {
                        by_path.remove(&path);
                    }
                }
            }
            let files: Arc<[SourceFile]> = by_path.into_values().collect();
            workspace
                .set_files(db)
                .with_durability(Durability::HIGH)
                .to(files);
        }
        workspace
    }
}
