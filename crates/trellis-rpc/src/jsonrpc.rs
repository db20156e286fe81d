//! JSON-RPC 2.0 messages as this crate's own serde types, and the decoders that
//! turn one frame into a request (server side) or a response or notification
//! (client side) with a precise error for anything else.
//!
//! Core crates are not `Serialize`; everything that crosses the wire is spelled
//! here or in the handler's own `Value`s.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use trellis_diag::{Diagnostic, LineIndex, TextRange};

use crate::codes::ErrorCode;

/// The `jsonrpc` member every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: JSON-RPC allows a number or a string. A missing id makes the
/// request a notification; an unknown id on an error response is `null`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    Number(i64),
    String(String),
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A call (with an id, expecting a response) or a notification (without one).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request {
    pub jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
    pub method: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Request {
    pub fn call(id: Id, method: impl Into<String>, params: Value) -> Self {
        Self {
            jsonrpc: JSONRPC_VERSION,
            id: Some(id),
            method: method.into(),
            params: structured(params),
        }
    }

    pub fn notification(method: impl Into<String>, params: Value) -> Self {
        Self {
            jsonrpc: JSONRPC_VERSION,
            id: None,
            method: method.into(),
            params: structured(params),
        }
    }
}

/// `params` must be an array or an object when present; `null` means absent.
fn structured(params: Value) -> Option<Value> {
    (!params.is_null()).then_some(params)
}

/// A server-to-client notification (progress, log lines), interleaved with
/// responses on the same stream: clients demultiplex by the presence of an id.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Value,
}

/// The answer to a call: a result or an error, for the call's id (`None` when
/// the server could not tell which call, e.g. a frame that did not parse).
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub id: Option<Id>,
    pub outcome: Result<Value, RpcError>,
}

impl Response {
    pub fn ok(id: Id, result: Value) -> Self {
        Self {
            id: Some(id),
            outcome: Ok(result),
        }
    }

    pub fn error(id: Option<Id>, error: RpcError) -> Self {
        Self {
            id,
            outcome: Err(error),
        }
    }

    /// The wire form: `{"jsonrpc":"2.0","id":…,"result":…}` or `…,"error":{…}}`
    /// (what [`Response`]'s `Serialize` writes, without building it as a value).
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("jsonrpc".to_owned(), Value::from(JSONRPC_VERSION));
        object.insert(
            "id".to_owned(),
            serde_json::to_value(&self.id).unwrap_or(Value::Null),
        );
        match &self.outcome {
            Ok(result) => object.insert("result".to_owned(), result.clone()),
            Err(error) => object.insert("error".to_owned(), error.to_json()),
        };
        Value::Object(object)
    }
}

/// Serialized borrowing the result: a large answer is written once, never
/// copied into a second value first.
impl Serialize for Response {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("id", &self.id)?;
        match &self.outcome {
            Ok(result) => map.serialize_entry("result", result)?,
            Err(error) => map.serialize_entry("error", &error.to_json())?,
        }
        map.end()
    }
}

/// A JSON-RPC error object. `code` is kept as a number so codes from a newer
/// peer survive decoding; [`RpcError::kind`] maps it back to the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error of `kind`. When the kind has a transport diagnostic code, `data`
    /// carries `{"errors":[that diagnostic]}` so every error renders like any
    /// other Trellis diagnostic.
    pub fn new(kind: ErrorCode, message: impl Into<String>) -> Self {
        let message = message.into();
        let data = kind
            .diagnostic_code()
            .map(|code| errors_data(&[Diagnostic::new(code, message.clone())]));
        Self {
            code: kind.code(),
            message,
            data,
        }
    }

    /// A method that ran and failed with `diagnostics` (`RequestFailed`); the
    /// message is the first diagnostic's.
    pub fn failed(diagnostics: &[Diagnostic]) -> Self {
        let message = diagnostics
            .first()
            .map_or_else(|| "request failed".to_owned(), |d| d.message.clone());
        Self {
            code: ErrorCode::RequestFailed.code(),
            message,
            data: Some(errors_data(diagnostics)),
        }
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::MethodNotFound,
            format!("no method named {method:?}"),
        )
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParams, message)
    }

    /// Replaces `data` with `{"errors": diagnostics}`.
    pub fn with_diagnostics(mut self, diagnostics: &[Diagnostic]) -> Self {
        self.data = Some(errors_data(diagnostics));
        self
    }

    /// Adds (or replaces) one member of an object `data`, keeping `errors`.
    pub fn with_data_field(mut self, key: &str, value: Value) -> Self {
        let mut object = match self.data.take() {
            Some(Value::Object(object)) => object,
            _ => Map::new(),
        };
        object.insert(key.to_owned(), value);
        self.data = Some(Value::Object(object));
        self
    }

    /// The table entry for this code, `None` for a code this build does not know.
    pub fn kind(&self) -> Option<ErrorCode> {
        ErrorCode::from_code(self.code)
    }

    /// The diagnostics in `data.errors` (empty when there are none). One this
    /// build cannot read is kept, as an `rpc-invalid-request` quoting it.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let errors = self
            .data
            .as_ref()
            .and_then(|data| data.get("errors"))
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        errors
            .iter()
            .map(|error| {
                Diagnostic::deserialize(error).unwrap_or_else(|problem| {
                    Diagnostic::new(
                        crate::codes::diag::INVALID_REQUEST,
                        format!(
                            "the peer sent a diagnostic this build cannot read ({problem}): {error}"
                        ),
                    )
                })
            })
            .collect()
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(self)
            .unwrap_or_else(|_| json!({"code": self.code, "message": self.message}))
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

fn errors_data(diagnostics: &[Diagnostic]) -> Value {
    json!({ "errors": diagnostics })
}

/// Decodes one frame as a request. An `Err` carries the response to send: its id
/// is the request's when the frame got far enough to have one.
pub fn decode_request(frame: &[u8]) -> Result<Request, Box<Response>> {
    let value: Value = serde_json::from_slice(frame)
        .map_err(|error| Box::new(Response::error(None, parse_error(frame, &error))))?;
    let Value::Object(mut object) = value else {
        let message = if value.is_array() {
            "batch requests are not supported: send one request per line"
        } else {
            "a request must be a JSON object"
        };
        return Err(Box::new(Response::error(
            None,
            RpcError::new(ErrorCode::InvalidRequest, message),
        )));
    };
    let invalid = |id: Option<Id>, message: &str| {
        Box::new(Response::error(
            id,
            RpcError::new(ErrorCode::InvalidRequest, message),
        ))
    };
    let id = match object.remove("id") {
        None => None,
        Some(raw) => match serde_json::from_value::<Id>(raw) {
            Ok(id) => Some(id),
            Err(_) => return Err(invalid(None, "`id` must be an integer or a string")),
        },
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
        return Err(invalid(id, "`jsonrpc` must be \"2.0\""));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => return Err(invalid(id, "`method` must be a string")),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => None,
        Some(params @ (Value::Array(_) | Value::Object(_))) => Some(params),
        Some(_) => return Err(invalid(id, "`params` must be an array or an object")),
    };
    Ok(Request {
        jsonrpc: JSONRPC_VERSION,
        id,
        method,
        params,
    })
}

/// What a client can receive.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    Response(Response),
    Notification(Notification),
}

/// Decodes one frame a client received; `Err` explains a frame that is neither a
/// response nor a notification.
pub fn decode_incoming(frame: &[u8]) -> Result<Incoming, String> {
    let value: Value = serde_json::from_slice(frame)
        .map_err(|error| format!("the server sent invalid JSON: {error}"))?;
    let Value::Object(mut object) = value else {
        return Err("the server sent a frame that is not a JSON object".to_owned());
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
        return Err("the server sent a frame without `jsonrpc: \"2.0\"`".to_owned());
    }
    if let Some(Value::String(method)) = object.remove("method") {
        let params = object.remove("params").unwrap_or(Value::Null);
        return Ok(Incoming::Notification(Notification { method, params }));
    }
    let id = match object.remove("id") {
        None | Some(Value::Null) => None,
        Some(raw) => Some(
            serde_json::from_value::<Id>(raw)
                .map_err(|_| "the server sent a response with a malformed id".to_owned())?,
        ),
    };
    let outcome = match (object.remove("result"), object.remove("error")) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => Err(serde_json::from_value::<RpcError>(error)
            .map_err(|error| format!("the server sent a malformed error object: {error}"))?),
        _ => return Err("a response must carry exactly one of `result` and `error`".to_owned()),
    };
    Ok(Incoming::Response(Response { id, outcome }))
}

/// A response's result left in the frame it came in, for a caller that decodes
/// it into its own types, borrowing their strings from the frame, rather than
/// into a `Value`: a result listing thousands of files is then a few vectors,
/// not a map and a string per field.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultFrame(Vec<u8>);

impl ResultFrame {
    /// The frame a result computed in-process would have come in (for callers
    /// that answer without a daemon).
    pub fn of(result: &Value) -> ResultFrame {
        let frame = json!({ "jsonrpc": JSONRPC_VERSION, "result": result });
        ResultFrame(serde_json::to_vec(&frame).unwrap_or_default())
    }

    /// The result as a `T`.
    pub fn decode<'a, T: Deserialize<'a>>(&'a self) -> Result<T, String> {
        #[derive(Deserialize)]
        struct Envelope<T> {
            result: T,
        }
        serde_json::from_slice::<Envelope<T>>(&self.0)
            .map(|envelope| envelope.result)
            .map_err(|error| format!("the result is not what was expected: {error}"))
    }
}

/// What a client can receive, a response's result left in its frame.
#[derive(Clone, Debug, PartialEq)]
pub enum IncomingFrame {
    Response {
        id: Option<Id>,
        outcome: Result<ResultFrame, RpcError>,
    },
    Notification(Notification),
}

/// [`decode_incoming`], skipping over a response's result instead of building
/// it: the same checks, the result kept as [`ResultFrame`].
pub fn decode_incoming_frame(frame: Vec<u8>) -> Result<IncomingFrame, String> {
    /// Whether a member is there at all (`null` included).
    fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
    }
    #[derive(Deserialize)]
    struct Members {
        jsonrpc: Option<String>,
        #[serde(default, deserialize_with = "present")]
        method: bool,
        #[serde(default)]
        id: Option<Value>,
        #[serde(default, deserialize_with = "present")]
        result: bool,
        #[serde(default)]
        error: Option<Value>,
    }
    let members: Members = match serde_json::from_slice(&frame) {
        Ok(members) => members,
        // Not an object of these members: the full decoder says precisely why.
        Err(_) => {
            return decode_incoming(&frame)
                .and_then(|_| Err("the server sent a frame this client cannot read".to_owned()));
        }
    };
    if members.jsonrpc.as_deref() != Some(JSONRPC_VERSION) || members.method {
        return match decode_incoming(&frame)? {
            Incoming::Notification(notification) => Ok(IncomingFrame::Notification(notification)),
            Incoming::Response(_) => Err("the server sent an unreadable response".to_owned()),
        };
    }
    let id = match members.id {
        None | Some(Value::Null) => None,
        Some(raw) => Some(
            serde_json::from_value::<Id>(raw)
                .map_err(|_| "the server sent a response with a malformed id".to_owned())?,
        ),
    };
    let outcome = match (members.result, members.error) {
        (true, None) => Ok(ResultFrame(frame)),
        (false, Some(error)) => Err(serde_json::from_value::<RpcError>(error)
            .map_err(|error| format!("the server sent a malformed error object: {error}"))?),
        _ => return Err("a response must carry exactly one of `result` and `error`".to_owned()),
    };
    Ok(IncomingFrame::Response { id, outcome })
}

/// The -32700 error for a frame that is not JSON, with the failure's location
/// when the frame is text.
fn parse_error(frame: &[u8], error: &serde_json::Error) -> RpcError {
    let message = format!("the frame is not valid JSON: {error}");
    let mut diagnostic = Diagnostic::new(crate::codes::diag::PARSE_ERROR, message.clone());
    if let Ok(text) = std::str::from_utf8(frame)
        && let Some(offset) = byte_offset(text, error.line(), error.column())
    {
        diagnostic =
            diagnostic.with_span(LineIndex::new(text).span(text, TextRange::empty(offset)));
    }
    RpcError::new(ErrorCode::ParseError, message).with_diagnostics(&[diagnostic])
}

/// serde_json reports 1-based lines and 1-based byte columns; 0 means unknown.
fn byte_offset(text: &str, line: usize, column: usize) -> Option<u32> {
    if line == 0 {
        return None;
    }
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let offset = (line_start + column.saturating_sub(1)).min(text.len());
    let offset = (0..=offset).rev().find(|&at| text.is_char_boundary(at))?;
    u32::try_from(offset).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    #[track_caller]
    fn check_request(frame: &str, expect: Expect) {
        let rendered = match decode_request(frame.as_bytes()) {
            Ok(request) => serde_json::to_string(&request).expect("serializes"),
            Err(response) => response.to_json().to_string(),
        };
        expect.assert_eq(&rendered);
    }

    /// Skipping the result decodes every frame as the full decoder does: the
    /// same notification, id, error or refusal, and a result that decodes to
    /// the same value.
    #[test]
    fn a_frame_kept_result_decodes_as_the_value_would() {
        let frames = [
            r#"{"jsonrpc":"2.0","id":1,"result":{"packed":{"paths":["a","b\u0000c"],"bytes":[1,2]}}}"#,
            r#"{"jsonrpc":"2.0","id":"s","result":null}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#,
            r#"{"jsonrpc":"2.0","method":"progress","params":{"done":1}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":3}"#,
            r#"{"jsonrpc":"2.0","id":[1],"result":1}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":1}"#,
            r#"{"id":1,"result":1}"#,
            r#"[1,2]"#,
            r#"not json"#,
        ];
        for frame in frames {
            let full = decode_incoming(frame.as_bytes());
            let kept = decode_incoming_frame(frame.as_bytes().to_vec());
            match (full, kept) {
                (Ok(Incoming::Notification(a)), Ok(IncomingFrame::Notification(b))) => {
                    assert_eq!(a, b, "{frame}");
                }
                (Ok(Incoming::Response(a)), Ok(IncomingFrame::Response { id, outcome })) => {
                    assert_eq!(a.id, id, "{frame}");
                    let outcome = outcome.map(|result| result.decode::<Value>().expect("decodes"));
                    assert_eq!(a.outcome, outcome, "{frame}");
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{frame}"),
                (full, kept) => panic!("{frame}: {full:?} against {kept:?}"),
            }
        }
    }

    #[test]
    fn a_result_frame_decodes_into_borrowed_types() {
        #[derive(Deserialize)]
        struct Columns<'a> {
            #[serde(borrow)]
            paths: Vec<&'a str>,
            bytes: Vec<u64>,
        }
        let frame = ResultFrame::of(&json!({ "paths": ["a.md", "b.md"], "bytes": [3, 4] }));
        let columns: Columns<'_> = frame.decode().expect("decodes");
        assert_eq!(
            (columns.paths, columns.bytes),
            (vec!["a.md", "b.md"], vec![3, 4])
        );
        assert!(frame.decode::<Vec<u64>>().is_err(), "not a list");
    }

    /// The frame a server writes is the wire form `to_json` spells, byte for
    /// byte, for results, errors and responses to no id.
    #[test]
    fn a_serialized_response_is_its_wire_form() {
        let responses = [
            Response::ok(Id::Number(3), json!({"b": [1, "two"], "a": null})),
            Response::ok(Id::String("x".to_owned()), Value::Null),
            Response::error(
                Some(Id::Number(4)),
                RpcError::new(ErrorCode::InvalidParams, "no"),
            ),
            Response::error(None, RpcError::new(ErrorCode::ParseError, "bad")),
        ];
        for response in responses {
            assert_eq!(
                serde_json::to_string(&response).expect("serializes"),
                response.to_json().to_string()
            );
        }
    }

    #[test]
    fn decodes_calls_and_notifications() {
        check_request(
            r#"{"jsonrpc":"2.0","id":7,"method":"check","params":{"root":"."}}"#,
            expect![[r#"{"jsonrpc":"2.0","id":7,"method":"check","params":{"root":"."}}"#]],
        );
        check_request(
            r#"{"jsonrpc":"2.0","method":"ping"}"#,
            expect![[r#"{"jsonrpc":"2.0","method":"ping"}"#]],
        );
        check_request(
            r#"{"jsonrpc":"2.0","id":"a","method":"m","params":null}"#,
            expect![[r#"{"jsonrpc":"2.0","id":"a","method":"m"}"#]],
        );
    }

    #[test]
    fn malformed_json_is_a_parse_error_with_a_span() {
        check_request(
            r#"{"jsonrpc":"2.0",}"#,
            expect![[
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the frame is not valid JSON: trailing comma at line 1 column 18","data":{"errors":[{"code":"rpc-parse-error","message":"the frame is not valid JSON: trailing comma at line 1 column 18","file":{"tag":"None"},"span":{"tag":"Some","value":{"start":{"line":1,"column":18,"offset":17},"end":{"line":1,"column":18,"offset":17}}},"notes":[],"repair_class":"fix-input","spec_ref":"design#9.2"}]}}}"#
            ]],
        );
    }

    #[test]
    fn shapes_that_are_not_requests_are_invalid_requests() {
        let codes: Vec<String> = [
            r#"[1,2]"#,
            r#""text""#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":3}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"m","params":4}"#,
        ]
        .iter()
        .map(|frame| match decode_request(frame.as_bytes()) {
            Ok(_) => "accepted".to_owned(),
            Err(response) => {
                let error = response.outcome.expect_err("an error response");
                format!("{:?} {} {}", response.id, error.code, error.message)
            }
        })
        .collect();
        expect![[r#"
            [
                "None -32600 batch requests are not supported: send one request per line",
                "None -32600 a request must be a JSON object",
                "Some(Number(1)) -32600 `jsonrpc` must be \"2.0\"",
                "None -32600 `id` must be an integer or a string",
                "Some(Number(2)) -32600 `method` must be a string",
                "Some(Number(3)) -32600 `params` must be an array or an object",
            ]
        "#]]
        .assert_debug_eq(&codes);
    }

    #[test]
    fn responses_and_notifications_round_trip_through_the_client_decoder() {
        let ok = Response::ok(Id::Number(1), json!({"n": 1}));
        let failed = Response::error(
            Some(Id::String("x".to_owned())),
            RpcError::new(ErrorCode::ServerBusy, "busy"),
        );
        for response in [ok, failed] {
            let frame = response.to_json().to_string();
            assert_eq!(
                decode_incoming(frame.as_bytes()),
                Ok(Incoming::Response(response))
            );
        }
        let note = r#"{"jsonrpc":"2.0","method":"progress","params":{"done":3}}"#;
        assert_eq!(
            decode_incoming(note.as_bytes()),
            Ok(Incoming::Notification(Notification {
                method: "progress".to_owned(),
                params: json!({"done": 3})
            }))
        );
        assert_eq!(
            decode_incoming(
                br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#
            ),
            Err("a response must carry exactly one of `result` and `error`".to_owned())
        );
    }

    /// What a peer sends that is no diagnostic is kept, quoted, not dropped.
    #[test]
    fn an_unreadable_peer_diagnostic_is_kept() {
        let error = RpcError {
            code: ErrorCode::RequestFailed.code(),
            message: "x".to_owned(),
            data: Some(json!({ "errors": [{ "message": "no code" }] })),
        };
        let diagnostics = error.diagnostics();
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].code, "rpc-invalid-request");
        assert!(diagnostics[0].message.contains(r#"{"message":"no code"}"#));
    }

    #[test]
    fn failed_requests_carry_their_diagnostics() {
        let error = RpcError::failed(&[Diagnostic::new("config-invalid", "bad soil.toml")])
            .with_data_field("hint", json!("x"));
        assert_eq!(error.kind(), Some(ErrorCode::RequestFailed));
        assert_eq!(error.message, "bad soil.toml");
        assert_eq!(
            error.diagnostics(),
            [Diagnostic::new("config-invalid", "bad soil.toml")]
        );
        assert_eq!(
            error.data.as_ref().map(|d| d["hint"].clone()),
            Some(json!("x"))
        );
    }
}
