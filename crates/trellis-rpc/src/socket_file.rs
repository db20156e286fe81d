//! The filesystem side of the socket: a private directory (owned by us, mode
//! 0700, not a symlink), stale-socket detection and removal, and the one error
//! type binding and connecting report.
//!
//! The directory check is the first security boundary (the peer uid check is the
//! second): a socket inside a directory only we can enter can only have been put
//! there by us, so the client trusts what it connects to and the server's socket
//! is unreachable by other users even before its own mode is tightened.

#![allow(
    clippy::disallowed_methods,
    reason = "the daemon's transport port: it inspects and removes the socket file"
)]

use std::fmt;
use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use trellis_diag::Diagnostic;

use crate::codes::diag;

/// Why a socket could not be bound or reached.
#[derive(Debug)]
pub enum SocketError {
    /// A directory or socket on the path is not private to this user.
    Insecure { path: PathBuf, reason: String },
    /// A live server already listens on this socket.
    InUse { path: PathBuf },
    /// No server answered before the deadline (after spawning one).
    Unreachable {
        path: PathBuf,
        waited: Duration,
        last_error: Option<io::Error>,
    },
    /// The spawn callback failed.
    Spawn(io::Error),
    /// Any other file or socket operation failed.
    Io { path: PathBuf, error: io::Error },
}

impl SocketError {
    fn io(path: &Path, error: io::Error) -> Self {
        SocketError::Io {
            path: path.to_owned(),
            error,
        }
    }

    /// The diagnostic a command prints for this error.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let code = match self {
            SocketError::Insecure { .. } => diag::SOCKET_INSECURE,
            SocketError::InUse { .. } => diag::SOCKET_IN_USE,
            SocketError::Unreachable { .. } | SocketError::Spawn(_) | SocketError::Io { .. } => {
                diag::DAEMON_UNREACHABLE
            }
        };
        Diagnostic::new(code, self.to_string())
    }
}

impl fmt::Display for SocketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SocketError::Insecure { path, reason } => {
                write!(f, "refusing {}: {reason}", path.display())
            }
            SocketError::InUse { path } => {
                write!(f, "a daemon is already listening on {}", path.display())
            }
            SocketError::Unreachable {
                path,
                waited,
                last_error,
            } => {
                write!(
                    f,
                    "no daemon answered on {} within {} ms",
                    path.display(),
                    waited.as_millis()
                )?;
                match last_error {
                    Some(error) => write!(f, " (last error: {error})"),
                    None => Ok(()),
                }
            }
            SocketError::Spawn(error) => write!(f, "could not start the daemon: {error}"),
            SocketError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for SocketError {}

/// What `lstat` says about a path, reduced to what the checks need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathFacts {
    pub is_symlink: bool,
    pub is_dir: bool,
    pub is_socket: bool,
    pub owner_uid: u32,
    pub mode: u32,
    /// `(device, inode)`: tells a replaced file from the one we looked at.
    pub file_id: (u64, u64),
}

impl PathFacts {
    fn of(metadata: &fs::Metadata) -> Self {
        let file_type = metadata.file_type();
        Self {
            is_symlink: file_type.is_symlink(),
            is_dir: file_type.is_dir(),
            is_socket: file_type.is_socket(),
            owner_uid: metadata.uid(),
            mode: metadata.mode() & 0o7777,
            file_id: (metadata.dev(), metadata.ino()),
        }
    }
}

/// `lstat`, with "absent" as `None`.
pub fn path_facts(path: &Path) -> Result<Option<PathFacts>, SocketError> {
    match fs::symlink_metadata(path) {
        Ok(metadata) => Ok(Some(PathFacts::of(&metadata))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(SocketError::io(path, error)),
    }
}

/// Why a directory is not private to `uid`, or `None` when it is.
pub fn private_dir_violation(facts: &PathFacts, uid: u32) -> Option<String> {
    if facts.is_symlink {
        Some("the socket directory is a symlink".to_owned())
    } else if !facts.is_dir {
        Some("the socket directory is not a directory".to_owned())
    } else if facts.owner_uid != uid {
        Some(format!(
            "the socket directory is owned by uid {}, not {uid}",
            facts.owner_uid
        ))
    } else if facts.mode & 0o077 != 0 {
        Some(format!(
            "the socket directory has mode {:04o}; it must be 0700",
            facts.mode
        ))
    } else {
        None
    }
}

/// Checks `dir` if it exists; returns whether it does.
pub fn check_private_dir(dir: &Path, uid: u32) -> Result<bool, SocketError> {
    match path_facts(dir)? {
        None => Ok(false),
        Some(facts) => match private_dir_violation(&facts, uid) {
            None => Ok(true),
            Some(reason) => Err(SocketError::Insecure {
                path: dir.to_owned(),
                reason,
            }),
        },
    }
}

/// Creates `dir` (and missing ancestors) with mode 0700 if absent, then checks
/// that it is private to `uid`. An existing directory is never loosened or
/// re-owned: a wrong one is refused for a human to inspect.
pub fn ensure_private_dir(dir: &Path, uid: u32) -> Result<(), SocketError> {
    if !check_private_dir(dir, uid)? {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|error| SocketError::io(dir, error))?;
        // Another user may have won the race to create it: check what is there.
        if !check_private_dir(dir, uid)? {
            return Err(SocketError::io(
                dir,
                io::Error::new(io::ErrorKind::NotFound, "the socket directory vanished"),
            ));
        }
    }
    Ok(())
}

/// What is at a socket path.
pub enum Probe {
    /// Nothing: no file.
    Absent,
    /// A server accepted the connection.
    Live(UnixStream),
    /// A socket file nobody listens on (a crashed server's leftover); removed.
    StaleRemoved,
    /// Connecting failed for another reason (e.g. the path is not a socket).
    Failed(io::Error),
}

/// Connects to `path`; when the connection is refused, removes the leftover
/// socket file, but only if it is a socket owned by `uid` and still the same
/// file that refused (so a socket a concurrent server just bound is kept).
pub fn probe(path: &Path, uid: u32) -> Result<Probe, SocketError> {
    let before = path_facts(path)?;
    match UnixStream::connect(path) {
        Ok(stream) => Ok(Probe::Live(stream)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Probe::Absent),
        Err(error) if error.kind() == io::ErrorKind::ConnectionRefused => {
            let Some(facts) = path_facts(path)? else {
                return Ok(Probe::Absent);
            };
            if !facts.is_socket {
                return Err(SocketError::Insecure {
                    path: path.to_owned(),
                    reason: "the path exists but is not a socket".to_owned(),
                });
            }
            if facts.owner_uid != uid {
                return Err(SocketError::Insecure {
                    path: path.to_owned(),
                    reason: format!(
                        "the stale socket is owned by uid {}, not {uid}",
                        facts.owner_uid
                    ),
                });
            }
            if before.map(|b| b.file_id) != Some(facts.file_id) {
                // Replaced while we looked: leave it to the next probe.
                return Ok(Probe::Failed(error));
            }
            match fs::remove_file(path) {
                Ok(()) => Ok(Probe::StaleRemoved),
                Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Probe::StaleRemoved),
                Err(error) => Err(SocketError::io(path, error)),
            }
        }
        Err(error) => Ok(Probe::Failed(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_facts(owner_uid: u32, mode: u32) -> PathFacts {
        PathFacts {
            is_symlink: false,
            is_dir: true,
            is_socket: false,
            owner_uid,
            mode,
            file_id: (1, 1),
        }
    }

    #[test]
    fn only_a_0700_directory_of_ours_is_private() {
        assert_eq!(private_dir_violation(&dir_facts(1000, 0o700), 1000), None);
        assert_eq!(
            private_dir_violation(&dir_facts(1001, 0o700), 1000).as_deref(),
            Some("the socket directory is owned by uid 1001, not 1000")
        );
        assert_eq!(
            private_dir_violation(&dir_facts(1000, 0o755), 1000).as_deref(),
            Some("the socket directory has mode 0755; it must be 0700")
        );
        assert_eq!(
            private_dir_violation(&dir_facts(1000, 0o710), 1000).as_deref(),
            Some("the socket directory has mode 0710; it must be 0700")
        );
        let link = PathFacts {
            is_symlink: true,
            is_dir: false,
            ..dir_facts(1000, 0o777)
        };
        assert_eq!(
            private_dir_violation(&link, 1000).as_deref(),
            Some("the socket directory is a symlink")
        );
    }
}
