//! A scripted model endpoint for the claude-code tests: an HTTP/1.1 server on
//! 127.0.0.1 that speaks the subset of the Messages API the Claude Code CLI
//! uses (`POST /v1/messages`, answered as server-sent events when the request
//! says `"stream": true`, as one JSON message otherwise) and replays a playbook
//! of assistant turns — a `tool_use` block with its input, a final text, or no
//! answer at all — recording every request it received, so a test can assert
//! what the agent was shown and offered.
//!
//! A request is the conversation's when it offers the trellis tools
//! (`mcp__trellis__…`); only those take the next turn. Anything else the CLI
//! asks on the side gets a short text, and an exhausted playbook answers "done".
//! A [`Turn::NextSession`] marker keeps the turns after it for the next CLI
//! session (its `x-claude-code-session-id` header): a session that asks on
//! after its own turns are played gets "done", never the next job's turns.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

/// One assistant turn of the playbook.
#[derive(Clone, Debug)]
pub enum Turn {
    /// A `tool_use` block calling `mcp__trellis__<tool>` with this input.
    Tool(String, Value),
    /// A final text (`end_turn`).
    Text(String),
    /// Accept the request and never answer it.
    Hang,
    /// The turns after this one are the next session's.
    NextSession,
}

impl Turn {
    pub fn tool(name: &str, input: Value) -> Turn {
        Turn::Tool(name.to_owned(), input)
    }

    pub fn text(text: &str) -> Turn {
        Turn::Text(text.to_owned())
    }
}

/// A running endpoint; dropping it stops it.
pub struct Endpoint {
    address: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    stopping: AtomicBool,
}

struct State {
    turns: VecDeque<Turn>,
    requests: Vec<Value>,
    answered: u64,
    /// The session the last conversational request came from.
    session: Option<String>,
}

impl Endpoint {
    pub fn start(turns: Vec<Turn>) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let address = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                turns: turns.into(),
                requests: Vec::new(),
                answered: 0,
                session: None,
            }),
            stopping: AtomicBool::new(false),
        });
        let accepting = Arc::clone(&shared);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accepting.stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let connection = Arc::clone(&accepting);
                std::thread::spawn(move || serve(stream, &connection));
            }
        });
        Endpoint { address, shared }
    }

    /// `ANTHROPIC_BASE_URL` for the CLI.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every request received, in order: `{method, path, headers, body, answer}`
    /// (`headers` with lower-case names; `answer` says which turn it got and the
    /// usage it reported).
    pub fn requests(&self) -> Vec<Value> {
        self.shared.lock().requests.clone()
    }

    /// The conversation's requests: those that offered the trellis tools.
    pub fn model_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|request| offers_trellis_tools(&request["body"]))
            .collect()
    }

    /// The turns not played yet.
    pub fn turns_left(&self) -> usize {
        self.shared.lock().turns.len()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.address);
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn offers_trellis_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|tools| {
        tools.iter().any(|tool| {
            tool["name"]
                .as_str()
                .is_some_and(|name| name.starts_with("mcp__trellis__"))
        })
    })
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Serves one keep-alive connection, request after request.
fn serve(stream: TcpStream, shared: &Shared) {
    let Ok(reading) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reading);
    let mut writer = stream;
    while let Some(request) = read_request(&mut reader) {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let headers: serde_json::Map<String, Value> = request
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect();
        let is_messages = request.method == "POST" && request.path.starts_with("/v1/messages");
        let conversation = is_messages && offers_trellis_tools(&body);
        let (turn, id) = {
            let mut state = shared.lock();
            state.answered += 1;
            let id = state.answered;
            let session = request
                .headers
                .iter()
                .find(|(name, _)| name == "x-claude-code-session-id")
                .map(|(_, value)| value.clone());
            let turn = if conversation {
                let turn = loop {
                    match state.turns.front() {
                        Some(Turn::NextSession) if state.session != session => {
                            state.turns.pop_front();
                        }
                        Some(Turn::NextSession) | None => break Turn::text("done"),
                        Some(_) => break state.turns.pop_front().unwrap_or(Turn::Hang),
                    }
                };
                state.session = session;
                turn
            } else {
                Turn::text("ok")
            };
            (turn, id)
        };
        let usage = json!({
            "input_tokens": (request.body.len() as u64).div_ceil(4).max(1),
            "output_tokens": match &turn {
                Turn::Tool(name, input) => (name.len() + input.to_string().len()) as u64 / 4 + 1,
                Turn::Text(text) => text.len() as u64 / 4 + 1,
                Turn::Hang | Turn::NextSession => 0,
            },
        });
        let answer = match &turn {
            _ if !is_messages => json!({ "kind": "not-found" }),
            Turn::Tool(name, _) => json!({ "kind": "tool", "tool": name, "usage": usage }),
            Turn::Text(text) => json!({ "kind": "text", "text": text, "usage": usage }),
            Turn::Hang | Turn::NextSession => json!({ "kind": "hang" }),
        };
        shared.lock().requests.push(json!({
            "method": request.method,
            "path": request.path,
            "headers": headers,
            "body": body,
            "answer": answer,
        }));
        if !is_messages {
            let _ = write!(
                writer,
                "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
            );
            continue;
        }
        if matches!(turn, Turn::Hang) {
            while !shared.stopping.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
            }
            return;
        }
        let model = body["model"].as_str().unwrap_or("scripted").to_owned();
        let (content, stop_reason) = match &turn {
            Turn::Tool(name, input) => (
                json!({ "type": "tool_use", "id": format!("toolu_{id:04}"),
                        "name": format!("mcp__trellis__{name}"), "input": input }),
                "tool_use",
            ),
            Turn::Text(text) => (json!({ "type": "text", "text": text }), "end_turn"),
            Turn::Hang | Turn::NextSession => return,
        };
        let (content_type, payload) = if body["stream"] == json!(true) {
            (
                "text/event-stream",
                events(id, &model, &content, stop_reason, &usage),
            )
        } else {
            (
                "application/json",
                json!({
                    "id": format!("msg_{id:04}"), "type": "message", "role": "assistant",
                    "model": model, "content": [content], "stop_reason": stop_reason,
                    "stop_sequence": null, "usage": usage,
                })
                .to_string(),
            )
        };
        let written = write!(
            writer,
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\n\
             request-id: req_{id:04}\r\ncontent-length: {}\r\n\r\n{payload}",
            payload.len()
        )
        .and_then(|()| writer.flush());
        if written.is_err() {
            return;
        }
    }
}

/// The server-sent events of one streamed message with one content block.
fn events(id: u64, model: &str, content: &Value, stop_reason: &str, usage: &Value) -> String {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    event(
        "message_start",
        json!({ "type": "message_start", "message": {
            "id": format!("msg_{id:04}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": { "input_tokens": usage["input_tokens"], "output_tokens": 1 } } }),
    );
    if content["type"] == "tool_use" {
        // As the real service does: the block opens with an empty input, which
        // arrives as one JSON delta.
        let mut opening = content.clone();
        opening["input"] = json!({});
        event(
            "content_block_start",
            json!({ "type": "content_block_start", "index": 0, "content_block": opening }),
        );
        event(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0,
                    "delta": { "type": "input_json_delta", "partial_json": content["input"].to_string() } }),
        );
    } else {
        event(
            "content_block_start",
            json!({ "type": "content_block_start", "index": 0,
                    "content_block": { "type": "text", "text": "" } }),
        );
        event(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0,
                    "delta": { "type": "text_delta", "text": content["text"] } }),
        );
    }
    event(
        "content_block_stop",
        json!({ "type": "content_block_stop", "index": 0 }),
    );
    event(
        "message_delta",
        json!({ "type": "message_delta",
                "delta": { "stop_reason": stop_reason, "stop_sequence": null },
                "usage": { "output_tokens": usage["output_tokens"] } }),
    );
    event("message_stop", json!({ "type": "message_stop" }));
    out
}

/// One request off the connection; `None` at its end or on a malformed one.
fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let header = |wanted: &str| {
        headers
            .iter()
            .find(|(name, _)| name == wanted)
            .map(|(_, value)| value.clone())
    };
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0u8; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}
