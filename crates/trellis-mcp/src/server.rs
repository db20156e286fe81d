//! The protocol: one JSON-RPC 2.0 message per line on stdio, framed by
//! `trellis-rpc`'s codec (so the size limit and the newline rule are the daemon
//! socket's). Both generations are served from one loop, per request: a request
//! whose `_meta` names [`MODERN_PROTOCOL`] is answered in that revision (every
//! result carries `resultType`, cacheable ones `ttlMs`/`cacheScope`, and the
//! server's identity rides in `_meta`); anything else is the `initialize`
//! generation ([`LEGACY_PROTOCOL`]). Clients that probe `server/discover` and
//! fall back on `-32601` therefore reach whichever path they prefer. Notifications
//! (and stray responses) are never answered, nor are blank lines; unknown
//! methods get `-32601`; an id that is not a string, a number or null is never
//! echoed (`-32600` with id `null`).

use std::io::{self, BufRead, Write};

use serde_json::{Map, Value, json};
use trellis_diag::Diagnostic;
use trellis_rpc::{DEFAULT_FRAME_LIMIT, ErrorCode, FrameError, FrameReader, RpcError, write_frame};

use crate::port::JobPort;
use crate::schema::excerpt;
use crate::tools::{Tool, tool_list};

/// The 2026 revision: `server/discover`, the version in each request's `_meta`.
pub const MODERN_PROTOCOL: &str = "2026-07-28";
/// The `initialize` generation's newest revision, which this server answers with.
pub const LEGACY_PROTOCOL: &str = "2025-11-25";
/// Older `initialize` revisions a client may ask for and get echoed back: the
/// tools-only subset is the same in all of them.
const LEGACY_ACCEPTED: &[&str] = &[LEGACY_PROTOCOL, "2025-06-18", "2025-03-26", "2024-11-05"];
/// Where a modern request names its protocol version.
pub const PROTOCOL_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The default cap on one tool result, in tokens (bytes/4, contract §5): Claude
/// Code's own default cap on an MCP result.
pub const DEFAULT_RESULT_CAP: usize = 25_000;

/// One MCP session over a job port.
pub struct McpServer<P> {
    port: P,
    version: String,
    /// In tokens (bytes/4).
    result_cap: usize,
    /// The longest message [`serve`] reads, in bytes.
    frame_limit: usize,
}

impl<P: JobPort> McpServer<P> {
    /// `version` is what `serverInfo.version` says: the trellis version.
    pub fn new(port: P, version: &str) -> Self {
        Self {
            port,
            version: version.to_owned(),
            result_cap: DEFAULT_RESULT_CAP,
            frame_limit: DEFAULT_FRAME_LIMIT,
        }
    }

    pub fn with_result_cap(mut self, tokens: usize) -> Self {
        self.result_cap = tokens;
        self
    }

    /// Reads messages of at most `bytes` (the daemon's 16 MiB by default; the
    /// fuzzer lowers it so that oversized frames are cheap).
    pub fn with_frame_limit(mut self, bytes: usize) -> Self {
        self.frame_limit = bytes;
        self
    }

    /// Answers one frame; `None` when nothing is to be sent back. A blank line
    /// (clients may end a message with `\r\n` or send a lone newline) is no
    /// message and gets no answer.
    pub fn handle_frame(&mut self, frame: &[u8]) -> Option<Value> {
        if frame.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let message: Value = match serde_json::from_slice(frame) {
            Ok(message) => message,
            Err(error) => {
                let why = if std::str::from_utf8(frame).is_err() {
                    "the frame is not UTF-8".to_owned()
                } else {
                    format!("the frame is not JSON: {error}")
                };
                return Some(error_response(
                    Value::Null,
                    RpcError::new(ErrorCode::ParseError, why),
                ));
            }
        };
        let Value::Object(message) = message else {
            return Some(error_response(
                Value::Null,
                RpcError::new(
                    ErrorCode::InvalidRequest,
                    "a message is one JSON object (no batches)",
                ),
            ));
        };
        let id = message.get("id").cloned();
        let is_response = message.contains_key("result") || message.contains_key("error");
        if let Some(bad) = id.as_ref().filter(|id| !valid_id(id)) {
            // JSON-RPC ids are strings, numbers or null: anything else is not
            // echoed (a stray response is not answered at all).
            let found = match bad {
                Value::Object(_) => "an object",
                Value::Array(_) => "an array",
                _ => "a boolean",
            };
            return (!is_response).then(|| {
                error_response(
                    Value::Null,
                    RpcError::new(
                        ErrorCode::InvalidRequest,
                        format!("a request id is a string, a number or null, not {found}"),
                    ),
                )
            });
        }
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            // A response to nothing we asked, or garbage without an id: a reply
            // to either could only confuse the client.
            return id.filter(|id| !id.is_null() && !is_response).map(|id| {
                error_response(
                    id,
                    RpcError::new(ErrorCode::InvalidRequest, "a request needs a method"),
                )
            });
        };
        let id = id?; // a notification: never answered
        if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some(error_response(
                id,
                RpcError::new(ErrorCode::InvalidRequest, "`jsonrpc` must be \"2.0\""),
            ));
        }
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let modern = params
            .get("_meta")
            .and_then(|meta| meta.get(PROTOCOL_META_KEY))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(version) = &modern
            && version != MODERN_PROTOCOL
        {
            let error = RpcError::new(
                ErrorCode::InvalidParams,
                format!("unsupported protocol version {}; this server speaks {MODERN_PROTOCOL} and {LEGACY_PROTOCOL}", excerpt(version)),
            )
            .with_data_field("supported", json!([MODERN_PROTOCOL, LEGACY_PROTOCOL]));
            return Some(error_response(id, error));
        }
        let modern = modern.is_some();
        let result = match method {
            "server/discover" => Ok(json!({
                "supportedVersions": [MODERN_PROTOCOL],
                "capabilities": { "tools": { "listChanged": false } },
                "instructions": INSTRUCTIONS,
                "ttlMs": 0,
                "cacheScope": "private",
            })),
            "initialize" if !modern => {
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version = asked
                    .filter(|asked| LEGACY_ACCEPTED.contains(asked))
                    .unwrap_or(LEGACY_PROTOCOL);
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": self.server_info(),
                    "instructions": INSTRUCTIONS,
                }))
            }
            "ping" => Ok(json!({})),
            "tools/list" => {
                let mut result = json!({ "tools": tool_list() });
                if modern {
                    result["ttlMs"] = json!(0);
                    result["cacheScope"] = json!("private");
                }
                Ok(result)
            }
            "tools/call" => self.call(&params),
            _ => Err(RpcError::new(
                ErrorCode::MethodNotFound,
                format!("no method named {}", excerpt(method)),
            )),
        };
        Some(match result {
            Ok(mut result) => {
                if modern {
                    result["resultType"] = json!("complete");
                    result["_meta"] = json!({ SERVER_INFO_META_KEY: self.server_info() });
                }
                json!({ "jsonrpc": "2.0", "id": id, "result": result })
            }
            Err(error) => error_response(id, error),
        })
    }

    fn server_info(&self) -> Value {
        json!({ "name": "trellis", "version": self.version })
    }

    fn call(&mut self, params: &Value) -> Result<Value, RpcError> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(RpcError::invalid_params("tools/call needs a tool `name`"));
        };
        let Some(tool) = Tool::from_name(name) else {
            return Ok(self.failure(vec![
                Diagnostic::new(
                    "mcp-unknown-tool",
                    format!("no tool named {}; the tools are read_context, check_types, check_refinements, run_tests, write_soil, read_spec and ask_human", excerpt(name)),
                )
                .to_json(),
            ]));
        };
        let empty = Value::Object(Map::new());
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(arguments) => arguments,
        };
        if let Err(diagnostic) = tool.spec().input.validate(arguments, "$") {
            return Ok(self.failure(vec![diagnostic.to_json()]));
        }
        Ok(match self.port.call(tool, arguments) {
            Ok(document) => self.result(&document, false),
            Err(errors) => self.failure(errors),
        })
    }

    fn failure(&self, errors: Vec<Value>) -> Value {
        self.result(&json!({ "errors": errors }), true)
    }

    /// One text item holding one compact document, refused over the cap.
    fn result(&self, document: &Value, is_error: bool) -> Value {
        let text = document.to_string();
        let cap_bytes = self.result_cap.saturating_mul(4);
        if text.len() > cap_bytes {
            let diagnostic = Diagnostic::new(
                "mcp-result-too-large",
                format!(
                    "the result is about {} tokens ({} bytes), over this server's result cap of {} tokens ({} bytes); it was not sent — ask for less (a smaller file or directory)",
                    text.len().div_ceil(4),
                    text.len(),
                    self.result_cap,
                    cap_bytes
                ),
            );
            let refusal = json!({ "errors": [diagnostic] }).to_string();
            return json!({ "content": [{ "type": "text", "text": refusal }], "isError": true });
        }
        json!({ "content": [{ "type": "text", "text": text }], "isError": is_error })
    }
}

const INSTRUCTIONS: &str = "Trellis lowering job: read the bundle with read_context, write Soil with write_soil, check with check_types and run_tests, and ask_human when the spec does not decide. Every result is one JSON document.";

/// Whether `id` may be a JSON-RPC id: a string, a number or null.
fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
}

fn error_response(id: Value, error: RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() })
}

/// Serves `server` until the input ends. An oversized frame is answered with a
/// `-32001` error and skipped; a failed read or write (the client went away)
/// ends the session with that error.
pub fn serve<P: JobPort>(
    input: impl BufRead,
    mut output: impl Write,
    server: &mut McpServer<P>,
) -> io::Result<()> {
    let mut reader = FrameReader::new(input, server.frame_limit);
    loop {
        let reply = match reader.read_frame() {
            Ok(None) => return Ok(()),
            Ok(Some(frame)) => server.handle_frame(&frame),
            Err(FrameError::TooLarge { limit, .. }) => Some(error_response(
                Value::Null,
                RpcError::new(
                    ErrorCode::FrameTooLarge,
                    format!("a message over the frame limit of {limit} bytes was discarded"),
                ),
            )),
            Err(FrameError::Io(error)) => return Err(error),
        };
        if let Some(reply) = reply {
            write_frame(&mut output, &reply)?;
            output.flush()?;
        }
    }
}
