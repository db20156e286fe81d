//! The inputs: one `SourceFile` per file of the root, one `Directory` per
//! top-level directory holding its file list, and the `Workspace` holding the
//! directories and `soil.toml`. Paths are root-relative and `/`-separated; no
//! absolute path ever enters the database, so hashes do not depend on where the
//! root lives.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

/// One file of the root. `text` is the file's bytes as UTF-8 (a file that is not
/// UTF-8 is reported by the host before it becomes an input).
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: Utf8PathBuf,
    #[returns(ref)]
    pub text: Arc<str>,
}

/// One directory at the top of the root and every file under it, sorted by
/// path text: a module's directory, or (named `""`) the root's own files. Each
/// directory holds its own list, so a file coming or going in one module
/// changes that module's input alone and the rest of the root stays asleep
/// (design §7.3).
#[salsa::input(debug)]
pub struct Directory {
    #[returns(ref)]
    pub name: String,
    #[returns(ref)]
    pub files: Arc<[SourceFile]>,
}

/// The root: its `soil.toml` text and its top-level directories, sorted by
/// name. Adding or removing a file changes its directory's `files`; a
/// directory coming or going changes `directories`; editing a file changes
/// only that file's text. A database holds exactly one root, so this input is
/// a singleton.
#[salsa::input(singleton, debug)]
pub struct Workspace {
    #[returns(ref)]
    pub config_text: Arc<str>,
    #[returns(ref)]
    pub directories: Arc<[Directory]>,
}

/// The top-level directory `path` (root-relative text) lies in: `""` for a
/// file at the root.
pub fn directory_name(path: &str) -> &str {
    path.split_once('/').map_or("", |(directory, _)| directory)
}

/// Where `path` is (or would go) in a directory's file list, which is sorted by
/// path text: the one lookup the change and the queries share. Generic over
/// the database, as salsa's own field getters are, so the inputs know no
/// query surface.
pub(crate) fn position_in<Db: ?Sized + salsa::Database>(
    db: &Db,
    files: &[SourceFile],
    path: &str,
) -> Result<usize, usize> {
    files.binary_search_by(|file| file.path(db).as_str().cmp(path))
}

/// What a file is, from its name alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    Spec,
    Soil,
    Lock,
    Other,
}

impl FileKind {
    pub fn of(path: &Utf8Path) -> FileKind {
        match path.extension() {
            Some("tr") => FileKind::Spec,
            Some("soil") => FileKind::Soil,
            Some("lock") => FileKind::Lock,
            _ => FileKind::Other,
        }
    }
}
