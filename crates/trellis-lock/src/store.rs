//! Atomic writes through a small filesystem port (lock-schema §1.6): write a
//! temp file of this write's own beside the target, fsync it, rename it over
//! the target, fsync the directory. A crash at any point leaves either the old
//! file or the new one, never half of either, and concurrent writers never
//! share a temp file. Every file the host writes into a root (locks,
//! `soil.lock`, `soil.toml`) goes through [`write_atomic`].

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use trellis_diag::Diagnostic;

use crate::invariants::{check_invariants, check_transition};
use crate::model::{Lock, SoilLock};
use crate::read::read_lock_bytes;
use crate::write::{write_lock, write_soil_lock};

/// The filesystem operations an atomic write needs, and nothing else.
pub trait LockFs {
    /// The file's bytes, or `None` when it does not exist.
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;
    /// Creates or truncates `path`, writes `bytes` and fsyncs the file.
    fn write_synced(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Fsyncs a directory so a rename inside it is durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Removes a file (a failed write's temp file).
    fn remove(&self, path: &Path) -> io::Result<()>;
}

/// The real filesystem.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFs;

#[allow(
    clippy::disallowed_methods,
    reason = "the atomic writer's one real file-system port"
)]
impl LockFs for StdFs {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        match fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn write_synced(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut file = fs::File::create(path)?;
        file.write_all(bytes)?;
        file.sync_all()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        // Directories open read-only on Unix; fsync on them is how a rename is
        // made durable. Elsewhere the open fails and there is nothing to do.
        match fs::File::open(dir) {
            Ok(handle) => handle.sync_all(),
            Err(_) if !cfg!(unix) => Ok(()),
            Err(error) => Err(error),
        }
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
}

/// The real filesystem for a cache whose reader verifies what it reads (the
/// answer store, design §7.16): atomic as through [`StdFs`] — a reader finds
/// the old file or the new one, never half — but not durable: nothing is
/// fsynced. A crash may lose the write, which costs the next start its
/// shortcut and never a wrong answer; the two fsyncs cost a one-shot command
/// tens of milliseconds on a virtual disk.
#[derive(Clone, Copy, Debug, Default)]
pub struct CacheFs;

#[allow(
    clippy::disallowed_methods,
    reason = "the atomic writer's real file-system port for caches"
)]
impl LockFs for CacheFs {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        StdFs.read(path)
    }

    /// Writes without the fsync: see [`CacheFs`].
    fn write_synced(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        fs::File::create(path)?.write_all(bytes)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        StdFs.rename(from, to)
    }

    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        StdFs.remove(path)
    }
}

/// What every temp file name ends with: a suffix no input uses, so readers and
/// root walks (which look for `*.lock`) never see one.
pub const TEMP_SUFFIX: &str = ".trellis-tmp";

/// Whether a file name is one of the writer's temp files.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(TEMP_SUFFIX)
}

/// A fresh temp file name for one write of `target`: hidden, beside it, and
/// unique to this process and this write (`.<file>.<pid>-<n>.trellis-tmp`), so
/// concurrent writers of one target — threads or processes — never write,
/// rename or remove each other's temp file.
pub fn temp_path(target: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.{}-{n}{TEMP_SUFFIX}", std::process::id()))
}

/// Writes `bytes` to `target` atomically through `port`, through a temp name
/// of its own, so any number of writers may write one target at once: each
/// rename is atomic and the last one wins. A write that fails removes its
/// temp file (a crash cannot, and leaves an inert hidden file behind).
pub fn write_atomic(port: &impl LockFs, target: &Path, bytes: &[u8]) -> io::Result<()> {
    let temp = temp_path(target);
    let written = port
        .write_synced(&temp, bytes)
        .and_then(|()| port.rename(&temp, target));
    if let Err(error) = written {
        let _ = port.remove(&temp);
        return Err(error);
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    port.sync_dir(dir)
}

/// Why a lock was not saved.
#[derive(Debug)]
pub enum SaveError {
    /// The lock breaks an invariant; nothing was written.
    Invariants(Vec<Diagnostic>),
    Io(io::Error),
}

/// Checks the invariants — including, against the lock currently at `target`,
/// that no human-authored block became agent-authored — then writes the
/// canonical text atomically. An unreadable previous lock is simply replaced.
pub fn save_lock(port: &impl LockFs, target: &Path, lock: &Lock) -> Result<(), SaveError> {
    let mut problems = check_invariants(lock);
    if let Some(previous) = port
        .read(target)
        .map_err(SaveError::Io)?
        .and_then(|bytes| read_lock_bytes(&bytes).ok())
    {
        problems.extend(check_transition(&previous, lock));
    }
    if !problems.is_empty() {
        let file = target.to_string_lossy();
        return Err(SaveError::Invariants(
            problems.into_iter().map(|d| d.in_file(&file)).collect(),
        ));
    }
    write_atomic(port, target, write_lock(lock).as_bytes()).map_err(SaveError::Io)
}

/// Writes `soil.lock` atomically (its invariants are the merge's, §7).
pub fn save_soil_lock(port: &impl LockFs, target: &Path, soil_lock: &SoilLock) -> io::Result<()> {
    write_atomic(port, target, write_soil_lock(soil_lock).as_bytes())
}

/// Why a lock could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    Invalid(Vec<Diagnostic>),
    Io(io::Error),
}

/// Reads and validates the lock at `target`; `Ok(None)` when there is none.
pub fn load_lock(port: &impl LockFs, target: &Path) -> Result<Option<Lock>, LoadError> {
    let Some(bytes) = port.read(target).map_err(LoadError::Io)? else {
        return Ok(None);
    };
    let file = target.to_string_lossy();
    read_lock_bytes(&bytes).map(Some).map_err(|diagnostics| {
        LoadError::Invalid(diagnostics.into_iter().map(|d| d.in_file(&file)).collect())
    })
}
