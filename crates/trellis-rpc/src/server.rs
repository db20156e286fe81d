//! The Unix socket server: bind privately, check each peer's uid before serving,
//! one thread per connection up to a cap, and a graceful shutdown.
//!
//! One control thread owns the bookkeeping; an accept thread feeds it new
//! connections and connection threads report when they end, all over one
//! channel, so there is no shared mutable state beyond the shutdown flag.

#![allow(
    clippy::disallowed_methods,
    reason = "the daemon's transport port: it owns the socket file and its ownership lock"
)]

use std::collections::BTreeMap;
use std::fs::{self, Permissions};
use std::io;
use std::net::Shutdown;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::codes::ErrorCode;
use crate::connection::{ConnectionContext, Handler, serve_connection};
use crate::credentials::{PeerCredentials, SocketPeerCredentials, current_uid};
use crate::framing::{DEFAULT_FRAME_LIMIT, write_frame};
use crate::jsonrpc::{Response, RpcError};
use crate::outbox::{DEFAULT_OUTBOX_BYTES, DEFAULT_OUTBOX_TOTAL_BYTES, Outboxes};
use crate::shutdown::{Event, ShutdownHandle};
use crate::socket_file::{Probe, SocketError, ensure_private_dir, path_facts, probe};

/// The default cap on simultaneous connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// How long a refusal frame may take to write before the peer is dropped.
const REFUSAL_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// The default time a client has to take one frame the server writes: a client
/// that does not read it within this long is dropped.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// The default time a request frame may take to arrive once its first byte has.
pub const DEFAULT_FRAME_TIMEOUT: Duration = Duration::from_secs(10);

/// How the server behaves; [`ServerConfig::new`] gives the production defaults.
#[derive(Clone)]
pub struct ServerConfig {
    /// This binary's version, reported by `rpc.hello`.
    pub version: String,
    pub frame_limit: usize,
    /// Bounds the writing of each frame to a client; one that does not take
    /// the frame in time is dropped.
    pub write_timeout: Duration,
    /// Bounds how long a started request frame may take to arrive; a client that
    /// stalls mid-frame is dropped and its partial frame freed.
    pub frame_timeout: Duration,
    /// Bounds the answers waiting for one client, in bytes; past it the
    /// connection's requests wait (see `outbox.rs`).
    pub outbox_bytes: usize,
    /// Bounds the answers waiting for all clients together, in bytes.
    pub outbox_total_bytes: usize,
    pub max_connections: usize,
    pub credentials: Arc<dyn PeerCredentials>,
    /// The uid that must own the socket directory and every peer.
    pub uid: u32,
    /// The stack of each connection's thread, which runs the handler (`None`:
    /// the platform's default for a new thread).
    pub handler_stack_bytes: Option<usize>,
}

impl ServerConfig {
    pub fn new(version: impl Into<String>) -> Self {
        Self {
            version: version.into(),
            frame_limit: DEFAULT_FRAME_LIMIT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            frame_timeout: DEFAULT_FRAME_TIMEOUT,
            outbox_bytes: DEFAULT_OUTBOX_BYTES,
            outbox_total_bytes: DEFAULT_OUTBOX_TOTAL_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            credentials: Arc::new(SocketPeerCredentials),
            uid: current_uid(),
            handler_stack_bytes: None,
        }
    }
}

/// A bound, not yet serving, socket server.
pub struct Server {
    listener: Option<UnixListener>,
    /// Held for the server's lifetime: one daemon per socket path, even when
    /// several clients spawn one at the same moment.
    ownership: fs::File,
    path: PathBuf,
    file_id: (u64, u64),
    config: ServerConfig,
    shutdown: ShutdownHandle,
    events: Receiver<Event>,
}

impl Server {
    /// Binds `path`: creates its directory with mode 0700 if absent and refuses
    /// one that is not ours or not private, takes the path's ownership lock
    /// (`<path>.lock`; a second server for the same path is refused), removes a
    /// stale socket of ours, refuses a live one, then binds and listens under a
    /// temporary name, sets it to 0600 and renames it into place — so a client
    /// never sees a socket at `path` that is bound but not yet listening (and
    /// would mistake it for a stale one).
    pub fn bind(path: &Path, config: ServerConfig) -> Result<Server, SocketError> {
        let dir = path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .ok_or_else(|| SocketError::Io {
                path: path.to_owned(),
                error: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a socket path needs a directory",
                ),
            })?;
        ensure_private_dir(dir, config.uid)?;
        let ownership = takeownership(path)?;
        match probe(path, config.uid)? {
            Probe::Live(_) => {
                return Err(SocketError::InUse {
                    path: path.to_owned(),
                });
            }
            Probe::Absent | Probe::StaleRemoved => {}
            Probe::Failed(error) => {
                return Err(SocketError::Io {
                    path: path.to_owned(),
                    error,
                });
            }
        }
        let io_error = |error| SocketError::Io {
            path: path.to_owned(),
            error,
        };
        let mut staging = path.as_os_str().to_owned();
        staging.push(format!(".{}.staging", std::process::id()));
        let staging = PathBuf::from(staging);
        let _ = fs::remove_file(&staging);
        let listener = UnixListener::bind(&staging).map_err(io_error)?;
        // Until this chmod the socket has umask permissions, but the 0700
        // directory already keeps every other user out.
        fs::set_permissions(&staging, Permissions::from_mode(0o600)).map_err(io_error)?;
        fs::rename(&staging, path).map_err(io_error)?;
        let file_id = path_facts(path)?
            .map(|facts| facts.file_id)
            .unwrap_or_default();
        let (sender, events) = channel();
        let shutdown = ShutdownHandle::new(sender, path);
        Ok(Server {
            listener: Some(listener),
            ownership,
            path: path.to_owned(),
            file_id,
            config,
            shutdown,
            events,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.shutdown.clone()
    }

    /// Serves until [`ShutdownHandle::shutdown`]; then waits for in-flight
    /// requests, closes every connection and removes the socket file.
    pub fn serve(mut self, handler: impl Handler + 'static) -> io::Result<()> {
        let Some(listener) = self.listener.take() else {
            return Ok(());
        };
        let context = Arc::new(ConnectionContext {
            handler: Arc::new(handler),
            version: self.config.version.clone(),
            frame_limit: self.config.frame_limit,
            write_timeout: self.config.write_timeout,
            frame_timeout: self.config.frame_timeout,
            outboxes: Outboxes::new(self.config.outbox_bytes, self.config.outbox_total_bytes),
            shutdown: self.shutdown.clone(),
        });
        spawn_acceptor(listener, self.shutdown.clone())?;
        let mut live: BTreeMap<u64, (UnixStream, JoinHandle<()>)> = BTreeMap::new();
        let mut next_id = 0u64;
        while let Ok(event) = self.events.recv() {
            match event {
                Event::Accepted(stream) => {
                    if let Some(stream) = self.admit(stream, live.len()) {
                        next_id += 1;
                        if let Some(entry) = self.start_connection(next_id, stream, &context) {
                            live.insert(next_id, entry);
                        }
                    }
                }
                Event::Closed(id) => {
                    if let Some((_, thread)) = live.remove(&id) {
                        let _ = thread.join();
                    }
                }
                Event::Shutdown => break,
            }
        }
        // Closing the read side ends each connection after its current request.
        for (stream, _) in live.values() {
            let _ = stream.shutdown(Shutdown::Read);
        }
        for (_, (_, thread)) in live {
            let _ = thread.join();
        }
        Ok(())
    }

    /// Checks the peer and the cap; a refused peer gets one error frame and is
    /// closed. Returns the stream when it may be served.
    fn admit(&self, stream: UnixStream, live: usize) -> Option<UnixStream> {
        let uid = self.config.uid;
        let refusal = match self.config.credentials.peer(&stream) {
            Ok(peer) if peer.uid != uid => Some(RpcError::new(
                ErrorCode::UnauthorizedPeer,
                format!("peer uid {} is not the daemon's uid {uid}", peer.uid),
            )),
            Err(error) => Some(RpcError::new(
                ErrorCode::UnauthorizedPeer,
                format!("the peer's credentials could not be read: {error}"),
            )),
            Ok(_) if self.shutdown.is_requested() => Some(RpcError::new(
                ErrorCode::ShuttingDown,
                "the daemon is shutting down",
            )),
            Ok(_) if live >= self.config.max_connections => Some(RpcError::new(
                ErrorCode::ServerBusy,
                format!(
                    "the daemon is serving its maximum of {} connections",
                    self.config.max_connections
                ),
            )),
            Ok(_) => None,
        };
        match refusal {
            None => Some(stream),
            Some(error) => {
                refuse(stream, error);
                None
            }
        }
    }

    fn start_connection(
        &self,
        id: u64,
        stream: UnixStream,
        context: &Arc<ConnectionContext>,
    ) -> Option<(UnixStream, JoinHandle<()>)> {
        let control = match stream.try_clone() {
            Ok(control) => control,
            Err(error) => {
                refuse(
                    stream,
                    RpcError::new(
                        ErrorCode::InternalError,
                        format!("could not clone the connection: {error}"),
                    ),
                );
                return None;
            }
        };
        // Shared, not moved: a refused spawn drops its closure, and the try
        // with the default stack needs the connection back.
        let connection = Arc::new(Mutex::new(Some((
            stream,
            Arc::clone(context),
            self.shutdown.events().clone(),
        ))));
        let start = |stack: Option<usize>| {
            let connection = Arc::clone(&connection);
            let mut builder = thread::Builder::new().name(format!("trellis-rpc-conn-{id}"));
            if let Some(bytes) = stack {
                builder = builder.stack_size(bytes);
            }
            builder.spawn(move || {
                let taken = connection
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                if let Some((stream, context, events)) = taken {
                    serve_connection(stream, &context);
                    let _ = events.send(Event::Closed(id));
                }
            })
        };
        // A stack the system refuses (a host that commits every mapping up
        // front) leaves the connection to a thread with the default stack.
        let stack = self.config.handler_stack_bytes;
        let spawned = start(stack).or_else(|error| match stack {
            Some(_) => start(None),
            None => Err(error),
        });
        match spawned {
            Ok(thread) => Some((control, thread)),
            Err(error) => {
                refuse(
                    control,
                    RpcError::new(
                        ErrorCode::ServerBusy,
                        format!("could not start a connection thread: {error}"),
                    ),
                );
                None
            }
        }
    }
}

impl Drop for Server {
    /// Removes the socket file, but only if it is still the one this server bound
    /// (a successor may have replaced it), and the ownership file likewise.
    fn drop(&mut self) {
        if let Ok(Some(facts)) = path_facts(&self.path)
            && facts.file_id == self.file_id
        {
            let _ = fs::remove_file(&self.path);
        }
        // Still holding its lock, remove the ownership file if it is ours; a
        // server binding meanwhile notices the unlink and takes a fresh file.
        let lock_path = ownership_path(&self.path);
        if let (Ok(held), Ok(current)) = (self.ownership.metadata(), fs::metadata(&lock_path))
            && identity(&held) == identity(&current)
        {
            let _ = fs::remove_file(&lock_path);
        }
    }
}

fn spawn_acceptor(listener: UnixListener, shutdown: ShutdownHandle) -> io::Result<()> {
    thread::Builder::new()
        .name("trellis-rpc-accept".to_owned())
        .spawn(move || {
            loop {
                let accepted = listener.accept();
                if shutdown.is_requested() {
                    return;
                }
                match accepted {
                    Ok((stream, _)) => {
                        if shutdown.events().send(Event::Accepted(stream)).is_err() {
                            return;
                        }
                    }
                    // Out of descriptors and similar: back off instead of spinning.
                    Err(_) => thread::sleep(Duration::from_millis(10)),
                }
            }
        })
        .map(drop)
}

fn refuse(stream: UnixStream, error: RpcError) {
    let mut stream = stream;
    let _ = stream.set_write_timeout(Some(REFUSAL_WRITE_TIMEOUT));
    let _ = write_frame(&mut stream, &Response::error(None, error).to_json());
    let _ = stream.shutdown(Shutdown::Both);
}

/// `<path>.lock`, the file whose lock says who owns the socket path.
fn ownership_path(path: &Path) -> PathBuf {
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    PathBuf::from(lock_path)
}

/// (device, inode) of an open file or of a path, to tell whether they are one.
fn identity(metadata: &fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino())
}

/// Takes the exclusive lock of `<path>.lock`, held while the server lives; another
/// holder means another server owns the path (`InUse`). A server removes the
/// file when it stops (so they do not pile up in the runtime directory), which
/// means the file we locked may have been unlinked by its previous owner just
/// before: the lock counts only if the path still names the file we locked,
/// otherwise we try again with the new file.
fn takeownership(path: &Path) -> Result<fs::File, SocketError> {
    use std::os::unix::fs::OpenOptionsExt;
    let lock_path = ownership_path(path);
    let io_error = |error| SocketError::Io {
        path: path.to_owned(),
        error,
    };
    loop {
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(io_error)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(SocketError::InUse {
                    path: path.to_owned(),
                });
            }
            Err(fs::TryLockError::Error(error)) => return Err(io_error(error)),
        }
        let ours = identity(&file.metadata().map_err(io_error)?);
        match fs::metadata(&lock_path) {
            Ok(current) if identity(&current) == ours => return Ok(file),
            // Unlinked (or replaced) by the owner that just stopped: retry.
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(io_error(error)),
        }
    }
}
