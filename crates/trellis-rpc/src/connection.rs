//! One served connection: read frames, answer each request, keep going after
//! malformed or oversized frames, and answer the built-in `rpc.hello` handshake.
//!
//! Requests on one connection are handled in order; concurrency comes from
//! connections, each on its own thread.

use std::io::{self, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::codes::ErrorCode;
use crate::framing::{FrameError, FrameReader, encode_frame, write_encoded, write_frame};
use crate::jsonrpc::{Request, Response, RpcError, decode_request};
use crate::server::ShutdownHandle;

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

/// What the daemon does for each method. Implementations are shared by every
/// connection thread, hence `Send + Sync`.
pub trait Handler: Send + Sync {
    /// Answers one call; `params` is `Value::Null` when the request had none.
    fn handle(&self, method: &str, params: Value) -> Result<Value, RpcError>;

    /// Like [`Handler::handle`], with a [`Notifier`] for progress notifications
    /// sent before the response. The server always calls this one; the default
    /// ignores the notifier.
    fn handle_with_notifier(
        &self,
        method: &str,
        params: Value,
        notifier: &mut Notifier<'_>,
    ) -> Result<Value, RpcError> {
        let _ = notifier;
        self.handle(method, params)
    }
}

/// Sends notifications to the client whose request is being handled.
pub struct Notifier<'a> {
    writer: &'a mut dyn Write,
    limit: usize,
}

impl Notifier<'_> {
    /// Sends `{"jsonrpc":"2.0","method":…,"params":…}`. A notification over the
    /// frame limit is refused here rather than sent for the client to reject.
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
        write_encoded(self.writer, &frame)
    }
}

/// What every connection thread shares.
pub(crate) struct ConnectionContext {
    pub handler: Arc<dyn Handler>,
    pub version: String,
    pub frame_limit: usize,
    pub shutdown: ShutdownHandle,
}

/// Serves `stream` until the client hangs up, the stream fails, or shutdown
/// closes its read side.
pub(crate) fn serve_connection(stream: UnixStream, context: &ConnectionContext) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut frames = FrameReader::new(BufReader::new(read_half), context.frame_limit);
    let mut writer = stream;
    let mut state = ConnectionState::default();
    loop {
        let response = match frames.read_frame() {
            Ok(Some(frame)) => dispatch(&frame, context, &mut state, &mut writer),
            Ok(None) | Err(FrameError::Io(_)) => return,
            Err(FrameError::TooLarge { limit, .. }) => Some(Response::error(
                None,
                RpcError::new(
                    ErrorCode::FrameTooLarge,
                    format!("the request frame exceeds the limit of {limit} bytes"),
                ),
            )),
        };
        if let Some(response) = response
            && send_response(&mut writer, response, context.frame_limit).is_err()
        {
            return;
        }
    }
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
    writer: &mut UnixStream,
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
        call_handler(&method, params, context, writer)
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
    writer: &mut UnixStream,
) -> Result<Value, RpcError> {
    let mut notifier = Notifier {
        writer,
        limit: context.frame_limit,
    };
    let handler = &context.handler;
    match catch_unwind(AssertUnwindSafe(|| {
        handler.handle_with_notifier(method, params, &mut notifier)
    })) {
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

/// Writes a response; one too large for the frame limit is replaced by a
/// `FrameTooLarge` error for the same id, so the client learns why.
pub(crate) fn send_response(
    writer: &mut impl Write,
    response: Response,
    limit: usize,
) -> io::Result<()> {
    let frame = encode_frame(&response.to_json())?;
    let size = frame.len() - 1;
    if size <= limit {
        return write_encoded(writer, &frame);
    }
    let replacement = Response::error(
        response.id,
        RpcError::new(
            ErrorCode::FrameTooLarge,
            format!("the response is {size} bytes, over the frame limit of {limit}"),
        ),
    );
    write_frame(writer, &replacement.to_json())
}
