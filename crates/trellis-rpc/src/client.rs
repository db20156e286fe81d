//! The client side: where a root's daemon socket lives, connecting (spawning the
//! daemon when it is absent or stale), calls with request ids, and the version
//! handshake.

#![allow(
    clippy::disallowed_methods,
    reason = "the client's transport port: the socket's place derives from the canonical root and XDG_RUNTIME_DIR"
)]

use std::fmt;
use std::fs;
use std::io::{self, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trellis_hash::Digest;

use crate::codes::ErrorCode;
use crate::connection::{HELLO_METHOD, SHUTDOWN_METHOD};
use crate::credentials::current_uid;
use crate::framing::{DEFAULT_FRAME_LIMIT, FrameError, FrameReader, write_frame};
use crate::jsonrpc::{
    Id, Incoming, IncomingFrame, Notification, Request, Response, ResultFrame, RpcError,
    decode_incoming, decode_incoming_frame,
};
use crate::socket_file::{Probe, SocketError, check_private_dir, path_facts, probe};

/// The directory under `$XDG_RUNTIME_DIR` that holds daemon sockets.
pub const RUNTIME_SUBDIR: &str = "trellis";

/// The socket of the daemon serving `root`, from the process environment:
/// `$XDG_RUNTIME_DIR/trellis/<root hash>.sock`, or `/tmp/trellis-<uid>/<root
/// hash>.sock` when `XDG_RUNTIME_DIR` is unset, empty or relative (the XDG rule
/// for an unusable value). Fails when `root` cannot be canonicalized.
pub fn socket_path_for(root: &Path) -> io::Result<PathBuf> {
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    socket_path_with(root, runtime_dir.as_deref(), current_uid())
}

/// [`socket_path_for`] with the environment passed in.
pub fn socket_path_with(root: &Path, runtime_dir: Option<&Path>, uid: u32) -> io::Result<PathBuf> {
    let canonical = fs::canonicalize(root)?;
    Ok(socket_dir(runtime_dir, uid).join(format!("{}.sock", root_hash(&canonical))))
}

/// The socket directory. The fallback is a fixed `/tmp` path rather than
/// `$TMPDIR` so a client and the daemon it spawned agree even if one of them
/// runs with a different temporary directory; the server creates it 0700 and
/// both sides refuse it unless it is ours and private.
pub fn socket_dir(runtime_dir: Option<&Path>, uid: u32) -> PathBuf {
    match runtime_dir.filter(|dir| dir.is_absolute()) {
        Some(dir) => dir.join(RUNTIME_SUBDIR),
        None => PathBuf::from(format!("/tmp/trellis-{uid}")),
    }
}

/// The first 16 hex digits of the SHA-256 of the canonical root path's bytes.
pub fn root_hash(canonical_root: &Path) -> String {
    let mut hex = Digest::of(canonical_root.as_os_str().as_bytes()).hex();
    hex.truncate(16);
    hex
}

/// Why a call failed.
#[derive(Debug)]
pub enum CallError {
    /// The server answered with an error.
    Rpc(RpcError),
    /// The stream failed (including a read timeout).
    Io(io::Error),
    /// The server's frame exceeded the client's frame limit.
    FrameTooLarge { limit: usize },
    /// The server hung up before answering.
    Disconnected,
    /// The server sent something that is not a response to this call.
    Protocol(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Rpc(error) => write!(f, "{error}"),
            CallError::Io(error) => write!(f, "daemon connection failed: {error}"),
            CallError::FrameTooLarge { limit } => {
                write!(f, "the daemon sent a frame over the limit of {limit} bytes")
            }
            CallError::Disconnected => write!(f, "the daemon closed the connection"),
            CallError::Protocol(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for CallError {}

impl From<io::Error> for CallError {
    fn from(error: io::Error) -> Self {
        CallError::Io(error)
    }
}

impl From<FrameError> for CallError {
    fn from(error: FrameError) -> Self {
        match error {
            FrameError::TooLarge { limit, .. } => CallError::FrameTooLarge { limit },
            FrameError::Io(error) => CallError::Io(error),
        }
    }
}

/// One frame a call read: a notification, or a response's id and outcome.
enum Received<T> {
    Notification(Notification),
    Response(Option<Id>, Result<T, RpcError>),
}

impl From<Incoming> for Received<Value> {
    fn from(incoming: Incoming) -> Self {
        match incoming {
            Incoming::Notification(notification) => Received::Notification(notification),
            Incoming::Response(response) => Received::Response(response.id, response.outcome),
        }
    }
}

impl From<IncomingFrame> for Received<ResultFrame> {
    fn from(incoming: IncomingFrame) -> Self {
        match incoming {
            IncomingFrame::Notification(notification) => Received::Notification(notification),
            IncomingFrame::Response { id, outcome } => Received::Response(id, outcome),
        }
    }
}

/// What the version handshake found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HelloOutcome {
    /// The daemon runs this client's version.
    Match,
    /// The daemon runs another version (one binary, so an upgrade happened):
    /// stop it and spawn a fresh one. Until then it refuses this connection's
    /// calls with `VersionMismatch`.
    Mismatch { daemon_version: String },
}

/// A call sent and not answered yet ([`Client::send`]).
#[derive(Debug)]
#[must_use = "its answer is read with Client::receive or Client::receive_frame"]
pub struct Sent(Id);

/// A connection to a daemon. Calls are answered in order; notifications the
/// server sends while a call is pending are handed to the caller.
pub struct Client {
    frames: FrameReader<BufReader<UnixStream>>,
    writer: UnixStream,
    next_id: i64,
}

impl Client {
    pub fn connect(path: &Path) -> io::Result<Client> {
        Client::from_stream(UnixStream::connect(path)?, DEFAULT_FRAME_LIMIT)
    }

    pub fn from_stream(stream: UnixStream, frame_limit: usize) -> io::Result<Client> {
        let read_half = stream.try_clone()?;
        Ok(Client {
            frames: FrameReader::new(BufReader::new(read_half), frame_limit),
            writer: stream,
            next_id: 1,
        })
    }

    /// Bounds how long one read or write may block (`None`: forever).
    pub fn set_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.writer.set_read_timeout(timeout)?;
        self.writer.set_write_timeout(timeout)
    }

    /// Calls `method`; `Value::Null` params are sent as absent. Notifications
    /// that arrive first are dropped (see [`Client::call_with_notifications`]).
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        self.call_with_notifications(method, params, &mut |_| {})
    }

    /// Calls `method`, handing every notification that precedes the response to
    /// `on_notification`: responses and notifications share the stream, and the
    /// response is the frame carrying this call's id.
    pub fn call_with_notifications(
        &mut self,
        method: &str,
        params: Value,
        on_notification: &mut dyn FnMut(Notification),
    ) -> Result<Value, CallError> {
        let sent = self.send(method, params)?;
        self.receive(sent, on_notification)
    }

    /// Sends a call without reading its answer: [`Client::receive`] or
    /// [`Client::receive_frame`] reads it, after the answers of the calls
    /// sent before it (the daemon answers a connection's calls in order).
    pub fn send(&mut self, method: &str, params: Value) -> Result<Sent, CallError> {
        let id = Id::Number(self.next_id);
        self.next_id += 1;
        match write_frame(&mut self.writer, &Request::call(id.clone(), method, params)) {
            Ok(()) => Ok(Sent(id)),
            Err(error) => Err(self.refusal_after_failed_write(error)),
        }
    }

    /// The answer to the `sent` call, every notification before it handed to
    /// `on_notification`.
    pub fn receive(
        &mut self,
        sent: Sent,
        on_notification: &mut dyn FnMut(Notification),
    ) -> Result<Value, CallError> {
        self.receive_with(sent, on_notification, |frame| {
            decode_incoming(&frame).map(Received::from)
        })
    }

    /// [`Client::receive`], the result left in its frame for the caller to
    /// decode into its own types ([`ResultFrame::decode`]).
    pub fn receive_frame(
        &mut self,
        sent: Sent,
        on_notification: &mut dyn FnMut(Notification),
    ) -> Result<ResultFrame, CallError> {
        self.receive_with(sent, on_notification, |frame| {
            decode_incoming_frame(frame).map(Received::from)
        })
    }

    /// Reads frames until the `sent` call's response, decoding each with
    /// `decode`.
    fn receive_with<T>(
        &mut self,
        Sent(id): Sent,
        on_notification: &mut dyn FnMut(Notification),
        decode: impl Fn(Vec<u8>) -> Result<Received<T>, String>,
    ) -> Result<T, CallError> {
        loop {
            let Some(frame) = self.frames.read_frame()? else {
                return Err(CallError::Disconnected);
            };
            match decode(frame).map_err(CallError::Protocol)? {
                Received::Notification(notification) => on_notification(notification),
                Received::Response(response_id, outcome) => {
                    // An error without an id is the server refusing the
                    // connection or a frame it could not attribute: ours.
                    let attributable = response_id.as_ref() == Some(&id)
                        || (response_id.is_none() && outcome.is_err());
                    if !attributable {
                        return Err(CallError::Protocol(format!(
                            "expected the response to request {id}, got one for {}",
                            response_id
                                .map_or_else(|| "null".to_owned(), |other| other.to_string())
                        )));
                    }
                    return outcome.map_err(CallError::Rpc);
                }
            }
        }
    }

    /// A server that refuses a connection (busy, unauthorized peer) writes one
    /// error frame and closes, so our write can fail before we read why: prefer
    /// the server's stated reason over the bare broken pipe.
    fn refusal_after_failed_write(&mut self, error: io::Error) -> CallError {
        let closed = matches!(
            error.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
        );
        if closed
            && let Ok(Some(frame)) = self.frames.read_frame()
            && let Ok(Incoming::Response(Response {
                id: None,
                outcome: Err(refusal),
            })) = decode_incoming(&frame)
        {
            return CallError::Rpc(refusal);
        }
        CallError::Io(error)
    }

    /// Sends a notification (no response expected).
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), CallError> {
        write_frame(&mut self.writer, &Request::notification(method, params))?;
        Ok(())
    }

    /// The version handshake: announces `version` and reports whether the daemon
    /// runs the same one.
    pub fn hello(&mut self, version: &str) -> Result<HelloOutcome, CallError> {
        let sent = self.send_hello(version)?;
        self.receive_hello(sent, version)
    }

    /// Sends the version handshake without reading its answer: a call sent
    /// right behind it ([`Client::send`]) saves a command's second round
    /// trip. The daemon answers a call that follows a mismatched handshake
    /// with `VersionMismatch` and runs nothing, so a daemon of another
    /// version never runs it.
    pub fn send_hello(&mut self, version: &str) -> Result<Sent, CallError> {
        self.send(HELLO_METHOD, json!({ "version": version }))
    }

    /// What the handshake [`Client::send_hello`] sent found.
    pub fn receive_hello(&mut self, sent: Sent, version: &str) -> Result<HelloOutcome, CallError> {
        let answer = self.receive(sent, &mut |_| {})?;
        let Some(daemon_version) = answer.get("version").and_then(Value::as_str) else {
            return Err(CallError::Protocol(
                "the rpc.hello answer has no version".to_owned(),
            ));
        };
        Ok(if daemon_version == version {
            HelloOutcome::Match
        } else {
            HelloOutcome::Mismatch {
                daemon_version: daemon_version.to_owned(),
            }
        })
    }
}

impl Client {
    /// Stops the daemon (`rpc.shutdown`, answered by the transport itself, so it
    /// works whatever version the daemon runs), hangs up, and waits until the
    /// daemon has removed its socket at `path`, so a following
    /// [`connect_or_spawn`] reaches a fresh daemon rather than the dying one.
    pub fn shutdown_daemon(mut self, path: &Path, timeout: Duration) -> Result<(), CallError> {
        let started = Instant::now();
        let bound = path_facts(path)
            .map_err(|error| CallError::Io(io::Error::other(error.to_string())))?
            .map(|facts| facts.file_id);
        match self.call(SHUTDOWN_METHOD, Value::Null) {
            Ok(_) => {}
            Err(CallError::Rpc(error)) if error.kind() == Some(ErrorCode::ShuttingDown) => {}
            Err(error) => return Err(error),
        }
        drop(self);
        let mut delay = Duration::from_millis(2);
        loop {
            let current = path_facts(path).ok().flatten().map(|facts| facts.file_id);
            if current.is_none() || current != bound {
                return Ok(());
            }
            let waited = started.elapsed();
            if waited >= timeout {
                return Err(CallError::Io(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the daemon did not remove {} within {} ms",
                        path.display(),
                        waited.as_millis()
                    ),
                )));
            }
            thread::sleep(delay.min(timeout - waited));
            delay = (delay * 2).min(Duration::from_millis(100));
        }
    }
}

/// Connects to the daemon at `path`, spawning one when none is there.
///
/// The socket directory, if present, must be ours and private (else
/// `Insecure`). A socket file nobody listens on is removed (only a socket we
/// own). When nothing listens, `spawn` runs once (the caller starts `trellis
/// daemon run` detached) and connecting is retried until `timeout`, each
/// millisecond at first and then with backoff ([`Probes`]).
pub fn connect_or_spawn(
    path: &Path,
    spawn: impl FnOnce() -> io::Result<()>,
    timeout: Duration,
) -> Result<Client, SocketError> {
    connect_or_spawn_as(path, spawn, timeout, current_uid())
}

/// [`connect_or_spawn`] for an explicit uid (the owner the directory and a stale
/// socket must have).
pub fn connect_or_spawn_as(
    path: &Path,
    spawn: impl FnOnce() -> io::Result<()>,
    timeout: Duration,
    uid: u32,
) -> Result<Client, SocketError> {
    let started = Instant::now();
    let dir = path.parent().unwrap_or_else(|| Path::new("/"));
    let mut spawn = Some(spawn);
    let mut probes = Probes::default();
    let mut last_error = None;
    loop {
        check_private_dir(dir, uid)?;
        match probe(path, uid)? {
            Probe::Live(stream) => {
                return Client::from_stream(stream, DEFAULT_FRAME_LIMIT).map_err(|error| {
                    SocketError::Io {
                        path: path.to_owned(),
                        error,
                    }
                });
            }
            Probe::Absent | Probe::StaleRemoved => {
                if let Some(spawn) = spawn.take() {
                    spawn().map_err(SocketError::Spawn)?;
                }
            }
            Probe::Failed(error) => last_error = Some(error),
        }
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(SocketError::Unreachable {
                path: path.to_owned(),
                waited,
                last_error,
            });
        }
        thread::sleep(probes.pause(waited).min(timeout - waited));
    }
}

/// When to probe a socket that is not there yet. A daemon just spawned
/// binds its socket a few milliseconds after it starts (3 ms at 20,000
/// definitions here): probed each millisecond through the first
/// [`Probes::EAGER`], the client connects within a millisecond of it, where
/// a backoff from 2 ms connected up to 4 ms after it (the probes at 2, 6 and
/// 14 ms). A daemon slower to start is then waited for with a backoff of
/// up to a tenth of a second. A probe is one `connect`, tens of
/// microseconds.
struct Probes {
    backoff: Duration,
}

impl Default for Probes {
    fn default() -> Self {
        Probes {
            backoff: Duration::from_millis(2),
        }
    }
}

impl Probes {
    const EAGER: Duration = Duration::from_millis(50);

    /// The pause before the next probe, `waited` after the first.
    fn pause(&mut self, waited: Duration) -> Duration {
        if waited < Self::EAGER {
            return Duration::from_millis(1);
        }
        let pause = self.backoff;
        self.backoff = (self.backoff * 2).min(Duration::from_millis(100));
        pause
    }
}

/// Whether `error` means the daemon runs another version (the caller restarts it).
pub fn is_version_mismatch(error: &CallError) -> bool {
    matches!(error, CallError::Rpc(rpc) if rpc.kind() == Some(ErrorCode::VersionMismatch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_is_probed_each_millisecond_at_first_then_with_backoff() {
        let mut probes = Probes::default();
        let mut waited = Duration::ZERO;
        let mut pauses = Vec::new();
        while waited < Duration::from_secs(1) {
            let pause = probes.pause(waited);
            pauses.push(pause.as_millis());
            waited += pause;
        }
        assert_eq!(
            pauses[..50],
            [1; 50],
            "each millisecond through the first 50"
        );
        assert_eq!(pauses[50..56], [2, 4, 8, 16, 32, 64], "then doubling");
        assert_eq!(pauses[56..], [100; 9], "to a tenth of a second");
    }

    #[test]
    fn the_socket_lives_under_the_runtime_dir_or_a_per_uid_tmp_dir() {
        let root = std::env::temp_dir();
        let canonical = fs::canonicalize(&root).expect("temp dir canonicalizes");
        let hash = root_hash(&canonical);
        assert_eq!(hash.len(), 16);
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(
            socket_path_with(&root, Some(Path::new("/run/user/1000")), 1000).expect("path"),
            PathBuf::from(format!("/run/user/1000/trellis/{hash}.sock"))
        );
        let fallback = PathBuf::from(format!("/tmp/trellis-1000/{hash}.sock"));
        assert_eq!(socket_path_with(&root, None, 1000).expect("path"), fallback);
        assert_eq!(
            socket_path_with(&root, Some(Path::new("relative")), 1000).expect("path"),
            fallback
        );
        assert_eq!(
            socket_path_with(&root, Some(Path::new("")), 1000).expect("path"),
            fallback
        );
    }

    #[test]
    fn the_root_hash_is_pinned() {
        assert_eq!(
            root_hash(Path::new("/home/user/project")),
            &Digest::of(b"/home/user/project").hex()[..16]
        );
        expect_test::expect!["9dad1e4e08b0b11c"]
            .assert_eq(&root_hash(Path::new("/home/user/project")));
    }

    #[test]
    fn a_relative_spelling_of_the_root_hashes_like_the_absolute_one() {
        let dir = std::env::temp_dir();
        let via_dot = dir.join(".");
        assert_eq!(
            socket_path_with(&dir, None, 1).expect("path"),
            socket_path_with(&via_dot, None, 1).expect("path")
        );
        assert!(socket_path_with(Path::new("/no/such/root/anywhere"), None, 1).is_err());
    }
}
