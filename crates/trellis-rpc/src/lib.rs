//! `trellis-rpc` owns the transport between the `trellis` CLI and its daemon:
//! newline-delimited JSON-RPC 2.0 framing (shared by the socket, stdio and
//! in-memory tests), the message types and the stable error-code table, the Unix
//! socket server (private directory, peer uid check, one thread per connection,
//! graceful shutdown) and the client (socket location, connect-or-spawn, calls,
//! version handshake). It knows no Trellis method names and must not depend on
//! the spec, lock or database crates; the binary composes it with a [`Handler`].
//!
//! The RPC is not contractual (seed 000 §0); these rules are what the binary and
//! its tests rely on.
//!
//! ## 1. Framing
//!
//! A frame is one compact JSON document followed by `\n`, in both directions.
//! Frames are at most 16 MiB ([`DEFAULT_FRAME_LIMIT`]), newline excluded. The
//! limit is enforced while reading: a reader never holds more than the limit
//! for one line, answers an oversized request with `FrameTooLarge` (id `null`),
//! discards the rest of that line and keeps serving the connection. A response
//! that would exceed the limit is replaced by a `FrameTooLarge` error for its id.
//! End of stream before a frame's first byte ends the connection; a final line
//! without `\n` is still a frame.
//!
//! No client can stall another. Waiting for a request's first byte is free, but
//! once it has arrived the whole frame must arrive within the frame timeout (10 s,
//! [`DEFAULT_FRAME_TIMEOUT`]) or the connection is dropped and its partial frame
//! freed. Handlers never write to the socket: responses and notifications go
//! to the connection's writer thread through an outbox bounded in bytes, per
//! connection (1 MiB, [`DEFAULT_OUTBOX_BYTES`]) and across the server's
//! connections (64 MiB, [`DEFAULT_OUTBOX_TOTAL_BYTES`]); a frame counts until it
//! is written, and a connection with nothing queued may always queue one frame
//! if the total has room. Notifications never wait (without room they are
//! dropped); a response waits for room, and the connection reads no further
//! request meanwhile, so a client that does not read its answers stops being
//! read (backpressure) and costs at most its outbox and the answer in hand.
//! Each frame must be taken by the client within the write timeout (5 s,
//! [`DEFAULT_WRITE_TIMEOUT`]), however it trickles; a client that does not take
//! it is disconnected and its outbox freed.
//!
//! ## 2. Messages
//!
//! Requests are JSON-RPC 2.0 objects (`jsonrpc`, `id` integer or string,
//! `method`, optional `params` array or object); without `id` a request is a
//! notification and gets no response. Batches are refused with
//! `InvalidRequest`. Requests on one connection are answered in order. The
//! server may send notifications (`method` + `params`, no `id`) before a
//! response; clients demultiplex by id: the response is the frame carrying the
//! call's id, or an error with id `null` (a frame the server could not
//! attribute, or a refused connection).
//!
//! ## 3. Error codes
//!
//! Centralized in [`ErrorCode`] and pinned by a test; never renumber or reuse one.
//! When the transport raises an error, `data` is `{"errors":[Diagnostic]}` with
//! the diagnostic code shown (registry source `trellis`); a handler's
//! `RequestFailed` carries the method's own diagnostics in the same shape.
//!
//! | code   | name             | diagnostic code         | meaning |
//! |--------|------------------|-------------------------|---------|
//! | -32700 | ParseError       | `rpc-parse-error`       | the frame is not JSON (span points at the failure) |
//! | -32600 | InvalidRequest   | `rpc-invalid-request`   | JSON that is not a request; batches |
//! | -32601 | MethodNotFound   | `rpc-method-not-found`  | unknown method, or an `rpc.` name other than `rpc.hello`/`rpc.shutdown` |
//! | -32602 | InvalidParams    | `rpc-invalid-params`    | params do not fit the method |
//! | -32603 | InternalError    | `rpc-internal-error`    | the handler panicked |
//! | -32000 | RequestFailed    | (the method's own)      | the method ran and failed |
//! | -32001 | FrameTooLarge    | `rpc-frame-too-large`   | a request or response over the frame limit |
//! | -32002 | UnauthorizedPeer | `rpc-unauthorized-peer` | the peer's uid is not the daemon's; connection closed |
//! | -32003 | VersionMismatch  | `rpc-version-mismatch`  | the client announced another version; restart the daemon |
//! | -32004 | ServerBusy       | `rpc-server-busy`       | connection cap reached; connection closed |
//! | -32005 | RequestCancelled | `rpc-request-cancelled` | cancelled by an input change; retry |
//! | -32006 | ShuttingDown     | `rpc-shutting-down`     | the daemon is stopping |
//!
//! Socket errors ([`SocketError`]) render as `rpc-socket-insecure`,
//! `rpc-socket-in-use` and `rpc-daemon-unreachable`.
//!
//! ## 4. Socket and authority
//!
//! The socket of the daemon for a root is
//! `$XDG_RUNTIME_DIR/trellis/<h>.sock`, `<h>` the first 16 hex digits of the
//! SHA-256 of the canonical absolute root path; without a usable (set, absolute)
//! `XDG_RUNTIME_DIR` it is `/tmp/trellis-<uid>/<h>.sock`. The directory is created
//! with mode 0700 and the socket set to 0600; a directory that is a symlink, not
//! owned by the user or group/world accessible is refused by both server and
//! client, never repaired. Before reading a frame the server checks the peer's
//! uid (`SO_PEERCRED`) against its own; another uid receives one
//! `UnauthorizedPeer` error and is disconnected. A leftover socket with no
//! listener is removed only if it is a socket owned by the user. One server per
//! socket is ensured by an exclusive lock on `<socket>.lock`, which a stopping
//! server removes while it still holds the lock (a server binding meanwhile
//! sees the unlink and locks a fresh file), so none are left behind.
//!
//! ## 5. Spawning and the version handshake
//!
//! [`connect_or_spawn`] connects; when nothing listens it runs the caller's spawn
//! callback once and retries with backoff (2 ms doubling to 100 ms) until the
//! timeout. The server answers `rpc.hello` `{"version": v}` itself with
//! `{"version": daemon_version, "protocol": 1}`; after a mismatched hello every
//! other call on that connection fails with `VersionMismatch`, so a client that
//! ignores [`HelloOutcome::Mismatch`] still cannot talk to a stale daemon. The
//! server also answers `rpc.shutdown` itself, on any connection and whatever the
//! announced version, so the restart is always possible:
//!
//! ```no_run
//! # use std::{path::Path, time::Duration};
//! # use trellis_rpc::{HelloOutcome, connect_or_spawn};
//! # fn spawn_daemon() -> std::io::Result<()> { Ok(()) }
//! # fn run(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
//! let timeout = Duration::from_secs(5);
//! let mut client = connect_or_spawn(path, spawn_daemon, timeout)?;
//! if let HelloOutcome::Mismatch { .. } = client.hello(env!("CARGO_PKG_VERSION"))? {
//!     client.shutdown_daemon(path, timeout)?;
//!     client = connect_or_spawn(path, spawn_daemon, timeout)?;
//!     client.hello(env!("CARGO_PKG_VERSION"))?;
//! }
//! let answer = client.call("check", serde_json::json!({}))?;
//! # Ok(()) }
//! ```
//!
//! ## 6. Shutdown
//!
//! [`ShutdownHandle::shutdown`] (called by the handler's stop method, or by
//! `rpc.shutdown`) stops accepting, answers requests that arrive afterwards with `ShuttingDown`,
//! lets in-flight requests finish and send their responses, closes every
//! connection and removes the socket file.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-hash`.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod client;
mod codes;
mod connection;
mod credentials;
mod framing;
mod jsonrpc;
mod outbox;
mod server;
mod shutdown;
mod socket_file;

pub use client::{
    CallError, Client, HelloOutcome, RUNTIME_SUBDIR, Sent, connect_or_spawn, connect_or_spawn_as,
    is_version_mismatch, root_hash, socket_dir, socket_path_for, socket_path_with,
};
pub use codes::{ErrorCode, diag};
pub use connection::{
    Answer, HELLO_METHOD, Handler, Notifier, PROTOCOL_VERSION, SHUTDOWN_METHOD, catching,
};
pub use credentials::{
    FixedPeerCredentials, PeerCredentials, PeerIdentity, SocketPeerCredentials, current_uid,
};
pub use framing::{
    DEFAULT_FRAME_LIMIT, FrameError, FrameReader, discard_line, encode_frame, read_frame,
    write_encoded, write_frame,
};
pub use jsonrpc::{
    Id, Incoming, IncomingFrame, JSONRPC_VERSION, Notification, Request, Response, ResultFrame,
    RpcError, decode_incoming, decode_incoming_frame, decode_request,
};
pub use outbox::{DEFAULT_OUTBOX_BYTES, DEFAULT_OUTBOX_TOTAL_BYTES};
pub use server::{
    DEFAULT_FRAME_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_WRITE_TIMEOUT, Server, ServerConfig,
};
pub use shutdown::ShutdownHandle;
pub use socket_file::{
    PathFacts, Probe, SocketError, check_private_dir, ensure_private_dir, path_facts,
    private_dir_violation, probe,
};
