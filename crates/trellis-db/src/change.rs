//! Every edit enters the database through one `Change`, applied in one place, so
//! the CLI refresh, the daemon and a future language server all move the database
//! the same way (an unsaved editor buffer is just another text).

use std::collections::BTreeMap;
use std::sync::Arc;

use camino::Utf8PathBuf;
use salsa::{Durability, Setter};

use crate::db::RootDatabase;
use crate::files::{SourceFile, Workspace};

/// A batch of edits: the new `soil.toml` text, and file texts set (`Some`) or
/// removed (`None`), keyed by root-relative path.
#[derive(Clone, Debug, Default)]
pub struct Change {
    pub config_text: Option<String>,
    /// Keyed by the path's text (`/`-separated, root-relative).
    pub files: BTreeMap<String, Option<String>>,
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

    pub fn remove_file(&mut self, path: impl Into<Utf8PathBuf>) -> &mut Self {
        self.files.insert(path.into().into_string(), None);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.config_text.is_none() && self.files.is_empty()
    }

    /// Applies the change, creating the workspace on first use. Unchanged texts are
    /// not set again, so a refresh that finds nothing new does not start a revision.
    pub fn apply(self, db: &mut RootDatabase) -> Workspace {
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
        if self.files.is_empty() {
            return workspace;
        }
        // Keyed by the path's text: comparing `Path`s component by component is
        // several times slower, and this map holds every file of the root.
        let mut by_path: BTreeMap<String, SourceFile> = workspace
            .files(db)
            .iter()
            .map(|&file| (file.path(db).as_str().to_owned(), file))
            .collect();
        let mut list_changed = false;
        for (path, text) in self.files {
            match (by_path.get(&path).copied(), text) {
                (Some(file), Some(text)) => {
                    if **file.text(db) != *text {
                        // An edited file becomes volatile: queries over files that
                        // were never edited keep HIGH durability and revalidate in
                        // O(1) after edits elsewhere (rust-analyzer's library/local
                        // split, by edit history instead of by location).
                        file.set_text(db)
                            .with_durability(Durability::LOW)
                            .to(Arc::from(text));
                    }
                }
                (None, Some(text)) => {
                    let file =
                        SourceFile::new(db, Utf8PathBuf::from(path.clone()), Arc::from(text));
                    by_path.insert(path, file);
                    list_changed = true;
                }
                (Some(_), None) => {
                    by_path.remove(&path);
                    list_changed = true;
                }
                (None, None) => {}
            }
        }
        if list_changed {
            let files: Arc<[SourceFile]> = by_path.into_values().collect();
            workspace
                .set_files(db)
                .with_durability(Durability::HIGH)
                .to(files);
        }
        workspace
    }
}
