//! The server's control channel and the handle that requests a graceful
//! shutdown through it. Its own module because both sides hold it: the server
//! owns the channel's receiving end, and every connection keeps a handle for
//! `rpc.shutdown`; with the handle in either of them, the server and a
//! connection would import each other.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;

/// What the server's control thread hears: the accept thread's new
/// connections, the connection threads' ends, and a shutdown request.
pub(crate) enum Event {
    Accepted(UnixStream),
    Closed(u64),
    Shutdown,
}

/// Requests a graceful shutdown: stop accepting, let in-flight requests finish,
/// close every connection, remove the socket. Cheap to clone; a handler keeps one
/// to implement its stop method.
#[derive(Clone)]
pub struct ShutdownHandle {
    inner: Arc<ShutdownInner>,
}

struct ShutdownInner {
    requested: AtomicBool,
    events: Sender<Event>,
    path: PathBuf,
}

impl ShutdownHandle {
    /// A handle that reports to `events`, for the server bound at `path`.
    pub(crate) fn new(events: Sender<Event>, path: &Path) -> Self {
        ShutdownHandle {
            inner: Arc::new(ShutdownInner {
                requested: AtomicBool::new(false),
                events,
                path: path.to_owned(),
            }),
        }
    }

    pub fn shutdown(&self) {
        if self.inner.requested.swap(true, Ordering::SeqCst) {
            return;
        }
        let _ = self.inner.events.send(Event::Shutdown);
        // The accept thread is blocked in accept(); a connection wakes it to see
        // the flag. If the socket file is gone the thread stays parked, but
        // `serve` no longer waits for it.
        let _ = UnixStream::connect(&self.inner.path);
    }

    pub fn is_requested(&self) -> bool {
        self.inner.requested.load(Ordering::SeqCst)
    }

    /// The server's control channel.
    pub(crate) fn events(&self) -> &Sender<Event> {
        &self.inner.events
    }
}
