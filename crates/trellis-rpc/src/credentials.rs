//! The peer-credential port: who is on the other end of a Unix socket.
//!
//! The server asks this port for the peer's uid before it reads a single frame.
//! [`SocketPeerCredentials`] asks the kernel; [`FixedPeerCredentials`] answers a
//! fixed identity so tests can play a second user. This module also holds the
//! crate's only `unsafe` code (two libc calls), kept in [`sys`].

use std::io;
use std::os::unix::net::UnixStream;

/// The identity the kernel recorded for a socket peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerIdentity {
    pub uid: u32,
    pub gid: u32,
    /// The peer's process id, where the platform reports it.
    pub pid: Option<i32>,
}

/// Tells who is connected on `stream`.
pub trait PeerCredentials: Send + Sync {
    fn peer(&self, stream: &UnixStream) -> io::Result<PeerIdentity>;
}

/// The real port: `SO_PEERCRED` on Linux, `getpeereid` elsewhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct SocketPeerCredentials;

impl PeerCredentials for SocketPeerCredentials {
    fn peer(&self, stream: &UnixStream) -> io::Result<PeerIdentity> {
        sys::peer_identity(stream)
    }
}

/// A fake for tests: every peer has this identity.
#[derive(Clone, Copy, Debug)]
pub struct FixedPeerCredentials(pub PeerIdentity);

impl PeerCredentials for FixedPeerCredentials {
    fn peer(&self, _stream: &UnixStream) -> io::Result<PeerIdentity> {
        Ok(self.0)
    }
}

/// The effective uid of this process: the uid that owns what it creates and the
/// uid a peer must have.
pub fn current_uid() -> u32 {
    sys::effective_uid()
}

#[allow(unsafe_code)]
mod sys {
    use std::io;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    use super::PeerIdentity;

    pub(super) fn effective_uid() -> u32 {
        // SAFETY: geteuid takes no arguments, touches no memory of ours and
        // cannot fail (POSIX).
        unsafe { libc::geteuid() }
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(super) fn peer_identity(stream: &UnixStream) -> io::Result<PeerIdentity> {
        let mut credentials = libc::ucred {
            pid: 0,
            uid: 0,
            gid: 0,
        };
        let mut length = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: the fd is a live socket borrowed from `stream` for the whole
        // call; `credentials` is a valid, writable `ucred` and `length` holds its
        // exact size, so the kernel writes at most that many bytes into it.
        let status = unsafe {
            libc::getsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&raw mut credentials).cast::<libc::c_void>(),
                &raw mut length,
            )
        };
        if status != 0 {
            return Err(io::Error::last_os_error());
        }
        if length as usize != std::mem::size_of::<libc::ucred>() {
            return Err(io::Error::other(
                "SO_PEERCRED returned a short credential record",
            ));
        }
        Ok(PeerIdentity {
            uid: credentials.uid,
            gid: credentials.gid,
            pid: Some(credentials.pid),
        })
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(super) fn peer_identity(stream: &UnixStream) -> io::Result<PeerIdentity> {
        let mut uid: libc::uid_t = 0;
        let mut gid: libc::gid_t = 0;
        // SAFETY: the fd is a live socket borrowed from `stream`; `uid` and `gid`
        // are valid, writable locals of the types getpeereid expects.
        let status = unsafe { libc::getpeereid(stream.as_raw_fd(), &raw mut uid, &raw mut gid) };
        if status != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(PeerIdentity {
            uid,
            gid,
            pid: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_reports_our_own_uid_for_a_socketpair() {
        let (left, _right) = UnixStream::pair().expect("socketpair");
        let identity = SocketPeerCredentials.peer(&left).expect("peer credentials");
        assert_eq!(identity.uid, current_uid());
        #[cfg(target_os = "linux")]
        assert_eq!(identity.pid, i32::try_from(std::process::id()).ok());
    }
}
