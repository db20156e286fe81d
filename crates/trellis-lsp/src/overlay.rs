//! Editor buffers as inputs of the server's database (design §9.9). An open
//! buffer's text replaces its file's: the disk's text is kept aside, what the
//! disk says of that file while the buffer is open updates only the copy kept
//! aside, and closing the buffer puts the disk's text back (or removes a file the
//! disk never had). Every edit is a [`Change`], applied by the caller in one place,
//! exactly as the host's loader applies the disk's.

use std::collections::HashMap;
use std::sync::Arc;

use trellis_db::{CONFIG_FILE, Change, Db};

use crate::resolve::file_at;

/// The root paths open buffers overlay, each with the disk's text (none: the
/// file is not on disk).
#[derive(Default)]
pub struct Overlay {
    shadowed: HashMap<String, Option<Arc<str>>>,
}

impl Overlay {
    pub fn is_open(&self, path: &str) -> bool {
        self.shadowed.contains_key(path)
    }

    /// Whether an open buffer's `text` differs from what the disk holds for its
    /// path (a file the disk lacks is always unsaved). A `trellis` command acts
    /// on the disk, so a code lens waits for such a buffer to be saved.
    pub fn is_unsaved(&self, path: &str, text: &str) -> bool {
        self.shadowed
            .get(path)
            .is_some_and(|on_disk| on_disk.as_deref() != Some(text))
    }

    /// A buffer opens with `text`. The file becomes volatile at once, so the
    /// first keystroke costs no more than the next (design §7.1).
    pub fn open(&mut self, db: &dyn Db, path: &str, text: &str) -> Change {
        if self.is_open(path) {
            // Opened again without a close: the disk's text kept aside stays
            // (the database holds the earlier buffer's, not the disk's).
            return self.edit(path, text);
        }
        let on_disk = if path == CONFIG_FILE {
            trellis_db::Workspace::try_get(db).map(|w| w.config_text(db).clone())
        } else {
            file_at(db, path).map(|file| file.text(db).clone())
        };
        let mut change = Change::default();
        if on_disk.as_deref() == Some(text) && path != CONFIG_FILE {
            change.mark_volatile(path);
        } else {
            change.set_root_file(path, text);
        }
        self.shadowed.insert(path.to_owned(), on_disk);
        change
    }

    /// The buffer's text changed.
    pub fn edit(&self, path: &str, text: &str) -> Change {
        let mut change = Change::default();
        change.set_root_file(path, text);
        change
    }

    /// The buffer closed: back to what the disk says.
    pub fn close(&mut self, path: &str) -> Change {
        let mut change = Change::default();
        match self.shadowed.remove(path).flatten() {
            Some(text) => {
                change.set_root_file(path, text);
            }
            None if path != CONFIG_FILE => {
                change.remove_file(path);
            }
            None => {}
        }
        change
    }

    /// What of the disk's change reaches the database: everything but the files
    /// a buffer overlays, whose disk text is kept aside instead.
    pub fn from_disk(&mut self, mut change: Change) -> Change {
        if let Some(config) = change.config_text.take() {
            match self.shadowed.get_mut(CONFIG_FILE) {
                Some(shadow) => *shadow = Some(Arc::from(config)),
                None => change.config_text = Some(config),
            }
        }
        let files = std::mem::take(&mut change.files);
        for (path, text) in files {
            match self.shadowed.get_mut(&path) {
                Some(shadow) => *shadow = text,
                None => {
                    change.files.insert(path, text);
                }
            }
        }
        change
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trellis_db::RootDatabase;

    fn text(db: &RootDatabase, path: &str) -> Option<String> {
        file_at(db, path).map(|file| file.text(db).to_string())
    }

    /// The buffer wins while open, the disk's later text is what closing restores,
    /// and a buffer for a file the disk lacks adds it only while open.
    #[test]
    fn buffers_overlay_the_disk_until_they_close() {
        let mut db = RootDatabase::default();
        let mut disk = Change::default();
        disk.set_config("[toolchain]\n")
            .set_file("m/f.soil", "f x = x\n");
        disk.apply(&mut db);
        let mut overlay = Overlay::default();
        overlay.open(&db, "m/f.soil", "f x = x\n").apply(&mut db);
        overlay.edit("m/f.soil", "f x = 1\n").apply(&mut db);
        let mut later = Change::default();
        later.set_file("m/f.soil", "f x = 2\n");
        overlay.from_disk(later).apply(&mut db);
        assert_eq!(
            text(&db, "m/f.soil").as_deref(),
            Some("f x = 1\n"),
            "the buffer wins"
        );
        overlay.close("m/f.soil").apply(&mut db);
        assert_eq!(
            text(&db, "m/f.soil").as_deref(),
            Some("f x = 2\n"),
            "the disk's latest"
        );

        overlay.open(&db, "m/new.soil", "g x = x\n").apply(&mut db);
        assert!(text(&db, "m/new.soil").is_some());
        overlay.close("m/new.soil").apply(&mut db);
        assert_eq!(text(&db, "m/new.soil"), None);

        // Opened twice without a close: closing still restores the disk's text.
        overlay.open(&db, "m/f.soil", "f x = 3\n").apply(&mut db);
        overlay.open(&db, "m/f.soil", "f x = 4\n").apply(&mut db);
        assert_eq!(text(&db, "m/f.soil").as_deref(), Some("f x = 4\n"));
        overlay.close("m/f.soil").apply(&mut db);
        assert_eq!(text(&db, "m/f.soil").as_deref(), Some("f x = 2\n"));
    }
}
