//! One served connection: read frames, answer each request, keep going after
//! malformed or oversized frames, and answer the built-in `rpc.hello` handshake.
//!
//! Requests on one connection are handled in order; concurrency comes from
//! connections, each on its own thread.
//!
//! No handler ever writes to the socket: responses and notifications are queued
//! to the connection's writer thread (through the byte-bounded outbox of
//! `outbox.rs`), which must hand each frame over within the server's write
//! timeout and drops a client that does not take it (it shuts the socket, so
//! the reading side ends too). A handler that holds shared state while it
//! notifies therefore never waits on a client. A response waits for room in
//! the outbox before the next request is read, so a client that does not read
//! its answers is not read from either. A frame, once its first byte has
//! arrived, must be complete within the frame timeout, so a half-sent frame
//! cannot hold its buffer for longer than that.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::codes::ErrorCode;
use crate::framing::{FrameError, FrameReader, encode_frame};
use crate::jsonrpc::{Request, Response, RpcError, decode_request};
use crate::outbox::{Outbox, Outboxes, WriterQueue};
use crate::shutdown::ShutdownHandle;

/// The handshake method the server answers itself (JSON-RPC reserves `rpc.`
/// names for the protocol, so no handler method can collide with it).
pub const HELLO_METHOD: &str = "rpc.hello";

/// The stop method the server answers itself, on any connection and whatever
/// version the client announced, so a client can always retire a daemon of
/// another version.
pub const SHUTDOWN_METHOD: &str = "rpc.shutdown";

/// The wire protocol generation, reported by `rpc.hello`; it moves only when the
/// framing or the handshake changes.
pub const PROTOCOL_VERSION: u32 = 1;

/// What a handler answers a call with: its result, or the error the caller gets.
pub type Answer = Result<Value, RpcError>;

/// What the daemon does for each method. Implementations are shared by every
/// connection thread, hence `Send + Sync`.
pub trait Handler: Send + Sync {
    /// Answers one call; `params` is `Value::Null` when the request had none.
    /// Progress goes to `notifier`, sent to the caller before the response; a
    /// method without progress leaves it alone.
    fn handle(&self, method: &str, params: Value, notifier: &mut Notifier<'_>) -> Answer;
}

/// A handler whose state its owner keeps a hand on (a test reading counters, a
/// host stopping its queue) is served as is.
impl<H: Handler + ?Sized> Handler for Arc<H> {
    fn handle(&self, method: &str, params: Value, notifier: &mut Notifier<'_>) -> Answer {
        (**self).handle(method, params, notifier)
    }
}

/// Sends notifications to the client whose request is being handled. Sending
/// never blocks: the frame is queued for the connection's writer thread.
pub struct Notifier<'a> {
    outbox: &'a Outbox,
    limit: usize,
}

impl Notifier<'_> {
    /// Queues `{"jsonrpc":"2.0","method":…,"params":…}`. A notification over the
    /// frame limit is refused here rather than sent for the client to reject. When
    /// the client's outbox (or the server's) has no room for it, the notification
    /// is dropped (`WouldBlock`); when the client is gone, `BrokenPipe`.
    pub fn notify(&mut self, method: &str, params: Value) -> io::Result<()> {
        let frame = encode_frame(&Request::notification(method, params))?;
        let size = frame.len() - 1;
        if size > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "notification of {size} bytes exceeds the frame limit of {}",
                    self.limit
                ),
            ));
        }
        self.outbox.offer(frame)
    }
}

/// Starts the thread that writes `stream`'s frames from `queue`; a frame the
/// client has not taken within `timeout` (however it trickles) shuts the socket
/// down both ways and frees what was queued.
fn spawn_writer(
    stream: UnixStream,
    timeout: Duration,
    queue: WriterQueue,
) -> io::Result<thread::JoinHandle<()>> {
    let mut stream = stream;
    thread::Builder::new()
        .name("trellis-rpc-writer".to_owned())
        .spawn(move || {
            while let Some(frame) = queue.next() {
                if write_within(&mut stream, &frame, timeout).is_err() {
                    // Closed before any room is freed, so no response waiting
                    // for room slips in (and the reader on to another request).
                    queue.close();
                    // Also wakes the reading side, which then ends the connection.
                    let _ = stream.shutdown(Shutdown::Both);
                    return;
                }
                queue.written(frame.len());
            }
        })
}

/// Writes all of `frame` within `timeout`: a client that reads a byte at a time
/// cannot keep a frame (and the room it holds) for longer than that.
fn write_within(stream: &mut UnixStream, frame: &[u8], timeout: Duration) -> io::Result<()> {
    let deadline = Instant::now() + timeout;
    let mut rest = frame;
    while !rest.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not take the frame in time",
            ));
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => rest = &rest[written..],
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    stream.flush()
}

/// The socket's reading side, with an optional deadline for the frame being read.
struct DeadlineReader {
    stream: UnixStream,
    deadline: Option<Instant>,
}

impl Read for DeadlineReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let timeout = match self.deadline {
            None => None,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the frame did not arrive in time",
                    ));
                }
                Some(left)
            }
        };
        self.stream.set_read_timeout(timeout)?;
        self.stream.read(buf)
    }
}

/// What every connection thread shares.
pub(crate) struct ConnectionContext {
    pub handler: Arc<dyn Handler>,
    pub version: String,
    pub frame_limit: usize,
    pub write_timeout: Duration,
    pub frame_timeout: Duration,
    pub outboxes: Arc<Outboxes>,
    pub shutdown: ShutdownHandle,
}

/// Serves `stream` until the client hangs up, the stream fails, shutdown closes
/// its read side, a frame stalls past the frame timeout, or the client stops
/// reading.
pub(crate) fn serve_connection(stream: UnixStream, context: &ConnectionContext) {
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let (outbox, queue) = context.outboxes.open();
    let Ok(writer) = spawn_writer(write_half, context.write_timeout, queue) else {
        return;
    };
    let reader = DeadlineReader {
        stream,
        deadline: None,
    };
    let mut frames = FrameReader::new(BufReader::new(reader), context.frame_limit);
    let mut state = ConnectionState::default();
    loop {
        // Waiting for a request is free; once one starts, it must finish in time.
        frames.get_mut().get_mut().deadline = None;
        match frames.get_mut().fill_buf() {
            Ok(bytes) if !bytes.is_empty() => {}
            _ => break,
        }
        frames.get_mut().get_mut().deadline = Some(Instant::now() + context.frame_timeout);
        let response = match frames.read_frame() {
            Ok(Some(frame)) => dispatch(&frame, context, &mut state, &outbox),
            Ok(None) | Err(FrameError::Io(_)) => break,
            Err(FrameError::TooLarge { limit, .. }) => Some(Response::error(
                None,
                RpcError::new(
                    ErrorCode::FrameTooLarge,
                    format!("the request frame exceeds the limit of {limit} bytes"),
                ),
            )),
        };
        if let Some(response) = response
            && send_response(&outbox, response, context.frame_limit).is_err()
        {
            break;
        }
    }
    // Whatever is queued is still written (each write bounded), then the thread ends.
    drop(outbox);
    let _ = writer.join();
    let _ = frames.get_mut().get_mut().stream.shutdown(Shutdown::Both);
}

#[derive(Default)]
struct ConnectionState {
    /// The version a client announced in `rpc.hello`, when it differs from ours.
    mismatched_client_version: Option<String>,
}

fn dispatch(
    frame: &[u8],
    context: &ConnectionContext,
    state: &mut ConnectionState,
    outbox: &Outbox,
) -> Option<Response> {
    let request = match decode_request(frame) {
        Ok(request) => request,
        Err(response) => return Some(*response),
    };
    let Request {
        id, method, params, ..
    } = request;
    let params = params.unwrap_or(Value::Null);
    let outcome = if context.shutdown.is_requested() {
        Err(RpcError::new(
            ErrorCode::ShuttingDown,
            "the daemon is shutting down",
        ))
    } else if method == HELLO_METHOD {
        hello(&params, context, state)
    } else if method == SHUTDOWN_METHOD {
        context.shutdown.shutdown();
        Ok(json!({ "stopping": true }))
    } else if method.starts_with("rpc.") {
        Err(RpcError::method_not_found(&method))
    } else if let Some(client_version) = &state.mismatched_client_version {
        Err(version_mismatch(&context.version, client_version))
    } else {
        call_handler(&method, params, context, outbox)
    };
    id.map(|id| Response {
        id: Some(id),
        outcome,
    })
}

fn hello(
    params: &Value,
    context: &ConnectionContext,
    state: &mut ConnectionState,
) -> Result<Value, RpcError> {
    let Some(client_version) = params.get("version").and_then(Value::as_str) else {
        return Err(RpcError::invalid_params(
            "rpc.hello takes {\"version\": <client version string>}",
        ));
    };
    state.mismatched_client_version =
        (client_version != context.version).then(|| client_version.to_owned());
    Ok(json!({ "version": context.version, "protocol": PROTOCOL_VERSION }))
}

fn version_mismatch(daemon_version: &str, client_version: &str) -> RpcError {
    RpcError::new(
        ErrorCode::VersionMismatch,
        format!("the daemon runs version {daemon_version} but the client is {client_version}; restart the daemon"),
    )
    .with_data_field("daemon_version", Value::from(daemon_version))
    .with_data_field("client_version", Value::from(client_version))
}

/// Runs the handler, turning a panic into an internal error so one bad request
/// cannot take the connection (or the daemon) down.
fn call_handler(
    method: &str,
    params: Value,
    context: &ConnectionContext,
    outbox: &Outbox,
) -> Result<Value, RpcError> {
    let mut notifier = Notifier {
        outbox,
        limit: context.frame_limit,
    };
    let handler = &context.handler;
    catching(method, || handler.handle(method, params, &mut notifier))
}

/// Runs one request's work, turning a panic into an internal error so one bad
/// request cannot take the connection, the daemon or an in-process (`--no-daemon`)
/// client down: the one panic boundary every way of answering a request shares.
pub fn catching(
    method: &str,
    run: impl FnOnce() -> Result<Value, RpcError>,
) -> Result<Value, RpcError> {
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(outcome) => outcome,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-text panic".to_owned());
            Err(RpcError::new(
                ErrorCode::InternalError,
                format!("the handler for {method:?} panicked: {what}"),
            ))
        }
    }
}

/// Queues a response; one too large for the frame limit is replaced by a
/// `FrameTooLarge` error for the same id, so the client learns why.
fn send_response(outbox: &Outbox, response: Response, limit: usize) -> io::Result<()> {
    let frame = encode_frame(&response)?;
    let size = frame.len() - 1;
    if size <= limit {
        return outbox.send(frame);
    }
    let replacement = Response::error(
        response.id,
        RpcError::new(
            ErrorCode::FrameTooLarge,
            format!("the response is {size} bytes, over the frame limit of {limit}"),
        ),
    );
    outbox.send(encode_frame(&replacement)?)
}
