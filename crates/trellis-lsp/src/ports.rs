//! What the server asks of its host (design §9.9): where the root is, the root's
//! files as they are on disk, and running a `trellis` command for a code lens.
//! The server itself reads no file and starts no process — the host's loader and
//! change feed read the disk, and a fix runs through the CLI, whose writes take
//! the root's writer lock like any other command's.

use std::path::{Path, PathBuf};

use trellis_db::Change;
use trellis_diag::Diagnostic;

/// What changed on disk since the last refresh, as the host's loader found it.
#[derive(Default)]
pub struct DiskRefresh {
    pub change: Change,
    /// Files that could not be loaded (unreadable, not UTF-8, not a regular
    /// file): all of them, every time, as the loader reports them.
    pub problems: Vec<Diagnostic>,
}

/// The root's files on disk.
pub trait RootDisk: Send {
    /// What changed since the last call; the first call loads every file. A host
    /// with a change feed reads only what the feed names.
    fn refresh(&mut self) -> DiskRefresh;
}

/// The host's side of the server.
pub trait Host: Send + Sync + 'static {
    /// The root for the workspace folder the editor opened (none when it named
    /// none), by the CLI's rule; or why there is none.
    fn find_root(&self, folder: Option<&Path>) -> Result<PathBuf, Diagnostic>;

    /// The root's disk, read through the host's loader.
    fn disk(&self, root: &Path) -> Box<dyn RootDisk>;

    /// Runs `trellis ARGS` in the root and returns what it printed, or why it failed.
    fn run_trellis(&self, root: &Path, args: &[String]) -> Result<String, String>;
}
