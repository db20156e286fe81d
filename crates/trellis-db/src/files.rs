//! The inputs: one `SourceFile` per file of the root, and the `Workspace` holding
//! the file list and `soil.toml`. Paths are root-relative and `/`-separated; no
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

/// The root: its `soil.toml` text and its files, sorted by path. Adding or
/// removing a file changes `files`; editing one changes only that file's text. A
/// database holds exactly one root, so this input is a singleton.
#[salsa::input(singleton, debug)]
pub struct Workspace {
    #[returns(ref)]
    pub config_text: Arc<str>,
    #[returns(ref)]
    pub files: Arc<[SourceFile]>,
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
