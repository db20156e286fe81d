//! Atomic lock writes through a small filesystem port (lock-schema §1.6): write
//! a temp file beside the target, fsync it, rename it over the target, fsync
//! the directory. A crash at any point leaves either the old lock or the new
//! one, never half of either.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

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
}

/// The real filesystem.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFs;

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
}

/// The temp file a write of `target` goes through. The name is fixed per target
/// (so a temp left by a crash is overwritten by the next write, never
/// accumulated) and hidden with a suffix no lock uses (so readers and root
/// scans, which look for `*.lock`, ignore it).
pub fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.trellis-tmp"))
}

/// Writes `bytes` to `target` atomically through `port`. The daemon serializes
/// writes of one target, so one fixed temp name per target is enough.
pub fn write_atomic(port: &impl LockFs, target: &Path, bytes: &[u8]) -> io::Result<()> {
    let temp = temp_path(target);
    port.write_synced(&temp, bytes)?;
    port.rename(&temp, target)?;
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
