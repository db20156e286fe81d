//! The byte stream under the protocol (design §9.9): `Content-Length` frames
//! read within stated bounds, answered when malformed, and resynchronised.
//!
//! `lsp-server`'s own stdio transport trusts the client: it allocates whatever
//! `Content-Length` declares before reading a byte of it, and ends the process
//! at the first frame it cannot parse. This one feeds the same
//! [`lsp_server::Connection`] from a reader thread that
//!
//! - holds at most [`Bounds::max_header`] bytes of headers and
//!   [`Bounds::max_body`] bytes of body per frame, growing the body's buffer as
//!   its bytes arrive (never to the declared length up front); a body declared
//!   longer than the limit is answered and skipped as it arrives, unread;
//! - refuses a body of more than [`Bounds::max_values`] JSON values before
//!   parsing it, since a parsed value costs many times its text;
//! - answers what it cannot take: `-32700` for a body that is not UTF-8 or
//!   not JSON and for a header it cannot read, `-32600` for JSON that is not a
//!   message (with the request's id when it has one) and for a body over the
//!   limit — and keeps serving. After a header it cannot read (or a body that
//!   runs into the next frame) it skips to the next `Content-Length`; one
//!   error answers each such stretch of garbage;
//! - stops only when the stream ends or fails, saying why
//!   ([`IoThreads::join`]).
//!
//! What flows to and from the server waits in bounded queues: the reader hands
//! over one message at a time, and the writer's queue holds [`OUTBOX`]
//! messages. A client that stops reading fills the pipe, then the queue, then
//! pauses the server's loop — and so its own reading — instead of growing it.

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded, never, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use serde_json::{Map, Value, json};

/// The most body one frame may declare: 16 MiB, the daemon's frame limit
/// (design §9.1). A document that large is far past anything the checker reads
/// in an editor's time.
pub const MAX_BODY: usize = 16 * 1024 * 1024;
/// The most header bytes one frame may carry (its lines and their line ends).
/// A frame's header is one or two short lines.
pub const MAX_HEADER: usize = 8 * 1024;
/// The most JSON values one body may hold (estimated from its separators, before
/// parsing). An editor's largest messages — a whole document, a batch of file
/// events — hold a few thousand; a parsed value costs 32 bytes and more.
pub const MAX_VALUES: usize = 1 << 20;
/// Messages queued for the writer before the server waits for it.
pub const OUTBOX: usize = 64;
/// Refusals said on stderr (all are answered).
const LOGGED_REFUSALS: u64 = 32;

/// The bounds a transport reads within.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub max_body: usize,
    pub max_header: usize,
    pub max_values: usize,
    /// Whether what was refused is also said on stderr (an editor shows the
    /// server's stderr as its log).
    pub log_to_stderr: bool,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            max_body: MAX_BODY,
            max_header: MAX_HEADER,
            max_values: MAX_VALUES,
            log_to_stderr: true,
        }
    }
}

/// A connection over this process's stdin and stdout.
pub fn stdio() -> (Connection, IoThreads) {
    over(io::stdin(), io::stdout(), Bounds::default())
}

/// A connection over any byte stream pair (tests use pipes).
pub fn over<R, W>(input: R, output: W, bounds: Bounds) -> (Connection, IoThreads)
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let (to_server, from_client) = bounded::<Message>(0);
    let (to_client, outbox) = bounded::<Message>(OUTBOX);
    let (refuse, refusals) = bounded::<Value>(OUTBOX);
    let reader = std::thread::Builder::new()
        .name("trellis-lsp-reader".to_owned())
        .spawn(move || {
            let mut frames = Frames::new(input, bounds);
            frames.run(&to_server, &refuse)
        })
        .expect("the reader thread starts");
    let writer = std::thread::Builder::new()
        .name("trellis-lsp-writer".to_owned())
        .spawn(move || write_all(output, &outbox, &refusals))
        .expect("the writer thread starts");
    let connection = Connection {
        sender: to_client,
        receiver: from_client,
    };
    (connection, IoThreads { reader, writer })
}

/// Why the reader stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// The client sent `exit`.
    Exit,
    /// The stream ended between frames.
    Closed,
    /// The server stopped taking messages.
    ServerGone,
    /// The stream ended inside a frame, or failed: nothing more can be read.
    Broken(String),
}

/// The transport's threads.
pub struct IoThreads {
    reader: JoinHandle<Ending>,
    writer: JoinHandle<io::Result<()>>,
}

impl IoThreads {
    /// Waits for both threads (call it once the server has returned): `Err`
    /// says why the stream could not go on, when it ended otherwise than by
    /// `exit` or a close between frames.
    pub fn join(self) -> Result<(), String> {
        let ending = self
            .reader
            .join()
            .unwrap_or_else(|_| Ending::Broken("the reader thread panicked".to_owned()));
        let written = self
            .writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")));
        match (ending, written) {
            (Ending::Broken(why), _) => Err(why),
            (_, Err(error)) if error.kind() != io::ErrorKind::BrokenPipe => {
                Err(format!("cannot write to the client: {error}"))
            }
            _ => Ok(()),
        }
    }

    /// Waits for the reader alone, for its ending (tests).
    pub fn join_reader(self) -> Ending {
        self.reader
            .join()
            .unwrap_or_else(|_| Ending::Broken("the reader thread panicked".to_owned()))
    }
}

/// Writes the server's messages and the reader's refusals until both stop.
///
/// A refusal goes out before any answer the server gives after it: the
/// reader queues a refusal before it hands the server the next request, so
/// the refusals waiting when a message is taken are written first. (`select!`
/// alone picks among ready channels at random, and a client reading the
/// refusal and then the answer to its next request would wait for an answer
/// already passed.)
fn write_all(
    output: impl Write,
    outbox: &Receiver<Message>,
    refusals: &Receiver<Value>,
) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(64 * 1024, output);
    let (mut messages, mut refused) = (Some(outbox), Some(refusals));
    let (no_message, no_refusal) = (never::<Message>(), never::<Value>());
    while messages.is_some() || refused.is_some() {
        select! {
            recv(messages.unwrap_or(&no_message)) -> message => match message {
                Ok(message) => {
                    while let Ok(refusal) = refusals.try_recv() {
                        write_refusal(&mut output, &refusal)?;
                    }
                    message.write(&mut output)?;
                }
                Err(_) => messages = None,
            },
            recv(refused.unwrap_or(&no_refusal)) -> refusal => match refusal {
                Ok(refusal) => write_refusal(&mut output, &refusal)?,
                Err(_) => refused = None,
            },
        }
    }
    output.flush()
}

/// One refusal, framed and flushed.
fn write_refusal(output: &mut impl Write, refusal: &Value) -> io::Result<()> {
    let body = serde_json::to_string(refusal).map_err(io::Error::other)?;
    write!(output, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    output.flush()
}

/// The header that starts a frame, matched without regard to case.
const CONTENT_LENGTH: &[u8] = b"content-length";

/// One frame's header, read.
enum Header {
    /// The body's declared length.
    Length(u64),
    /// The stream ended before a new frame began.
    End,
    /// The header could not be read: why, and the bytes after its first, to
    /// search again for the next frame.
    Malformed { why: String, rest: Vec<u8> },
}

/// A message refused: the id to answer (null when there is none), the code
/// and why.
struct Refusal {
    id: Value,
    code: ErrorCode,
    why: String,
}

/// The reader's side: frames out of a byte stream, with bytes pushed back to
/// be read again first when a frame turned out to hold the start of the next.
struct Frames<R> {
    input: BufReader<R>,
    pushed_back: Vec<u8>,
    pushed_at: usize,
    bounds: Bounds,
    /// Refusals so far.
    refused: u64,
}

/// The stream ended inside a frame, or failed.
struct Broken(String);

impl From<io::Error> for Broken {
    fn from(error: io::Error) -> Broken {
        Broken(format!("cannot read from the client: {error}"))
    }
}

impl<R: Read> Frames<R> {
    fn new(input: R, bounds: Bounds) -> Frames<R> {
        Frames {
            input: BufReader::with_capacity(64 * 1024, input),
            pushed_back: Vec::new(),
            pushed_at: 0,
            bounds,
            refused: 0,
        }
    }

    fn run(&mut self, server: &Sender<Message>, refuse: &Sender<Value>) -> Ending {
        match self.serve(server, refuse) {
            Ok(ending) => ending,
            Err(Broken(why)) => Ending::Broken(why),
        }
    }

    fn serve(
        &mut self,
        server: &Sender<Message>,
        refuse: &Sender<Value>,
    ) -> Result<Ending, Broken> {
        // Set once garbage has been answered, until a frame reads well: the
        // rest of the same stretch is skipped without another answer.
        let mut resyncing = false;
        let mut started = Vec::new();
        loop {
            let header = self.header(std::mem::take(&mut started))?;
            let length = match header {
                Header::End => return Ok(Ending::Closed),
                Header::Malformed { why, rest } => {
                    if !resyncing {
                        self.refuse(refuse, Value::Null, ErrorCode::ParseError, why);
                    }
                    resyncing = true;
                    self.push_back(rest);
                    if !self.skip_to_next_frame()? {
                        return Err(Broken(
                            "the stream ended while looking for the next frame after a \
                             malformed one"
                                .to_owned(),
                        ));
                    }
                    // The header's first line has begun.
                    started = b"Content-Length".to_vec();
                    continue;
                }
                Header::Length(length) => length,
            };
            if length > self.bounds.max_body as u64 {
                self.refuse(
                    refuse,
                    Value::Null,
                    ErrorCode::InvalidRequest,
                    format!(
                        "a frame of {length} bytes exceeds the limit of {} bytes: its body is \
                         skipped",
                        self.bounds.max_body
                    ),
                );
                self.skip(length)?;
                resyncing = false;
                continue;
            }
            let body = self.body(length as usize)?;
            match decode(&body, self.bounds.max_values) {
                Ok(message) => {
                    resyncing = false;
                    let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                    if server.send(message).is_err() {
                        return Ok(Ending::ServerGone);
                    }
                    if exit {
                        return Ok(Ending::Exit);
                    }
                }
                Err(refusal) if refusal.code as i32 == ErrorCode::ParseError as i32 => {
                    // A body that is not JSON may have run into the next frame
                    // (a length declared too long): read on from its header.
                    if let Some(next) = find_content_length(&body[1.min(body.len())..]) {
                        self.push_back(body[1 + next..].to_vec());
                    }
                    if !resyncing {
                        self.refuse(refuse, refusal.id, refusal.code, refusal.why);
                    }
                    resyncing = true;
                }
                Err(refusal) => {
                    resyncing = false;
                    self.refuse(refuse, refusal.id, refusal.code, refusal.why);
                }
            }
        }
    }

    fn refuse(&mut self, refuse: &Sender<Value>, id: Value, code: ErrorCode, why: String) {
        self.refused += 1;
        // Past a few, refusals are not logged: an editor that never reads the
        // server's stderr would otherwise stall it once the pipe filled.
        if self.bounds.log_to_stderr && self.refused <= LOGGED_REFUSALS {
            eprintln!("trellis lsp: refused a frame: {why}");
            if self.refused == LOGGED_REFUSALS {
                eprintln!("trellis lsp: further refusals are answered, not logged");
            }
        }
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": code as i32, "message": why },
        });
        // A writer that is gone has a client that is gone: nothing to tell.
        let _ = refuse.send(answer);
    }

    /// The next bytes: those pushed back first, then the stream's.
    fn fill(&mut self) -> io::Result<&[u8]> {
        if self.pushed_at < self.pushed_back.len() {
            return Ok(&self.pushed_back[self.pushed_at..]);
        }
        loop {
            match self.input.fill_buf() {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
                // Buffered now: asking again reads nothing (at the stream's
                // end it asks the stream once more, which ends again).
                Ok(_) => return self.input.fill_buf(),
            }
        }
    }

    fn consume(&mut self, count: usize) {
        if self.pushed_at < self.pushed_back.len() {
            self.pushed_at += count;
            if self.pushed_at == self.pushed_back.len() {
                self.pushed_back = Vec::new();
                self.pushed_at = 0;
            }
        } else {
            self.input.consume(count);
        }
    }

    /// Puts `bytes` before what is left to read.
    fn push_back(&mut self, mut bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        bytes.extend_from_slice(&self.pushed_back[self.pushed_at..]);
        self.pushed_back = bytes;
        self.pushed_at = 0;
    }

    /// Reads one frame's header lines up to the blank line. `started` is what
    /// of the first line was already read (when resynchronising).
    fn header(&mut self, started: Vec<u8>) -> Result<Header, Broken> {
        let mut budget = self.bounds.max_header.saturating_sub(started.len());
        let mut line = started;
        let mut length: Option<u64> = None;
        let mut lines = 0usize;
        loop {
            match self.line(&mut line, &mut budget)? {
                Line::Read => {}
                Line::End if lines == 0 && line.is_empty() => return Ok(Header::End),
                Line::End => {
                    return Err(Broken(format!(
                        "the stream ended inside a frame's header ({} bytes of it read)",
                        self.bounds.max_header - budget
                    )));
                }
                Line::TooLong => {
                    return Ok(Header::Malformed {
                        why: format!(
                            "a frame's header is longer than {} bytes",
                            self.bounds.max_header
                        ),
                        rest: line.get(1..).unwrap_or_default().to_vec(),
                    });
                }
            }
            if line.is_empty() {
                if lines == 0 {
                    // A blank line between frames: tolerated.
                    continue;
                }
                return Ok(match length {
                    Some(length) => Header::Length(length),
                    None => Header::Malformed {
                        why: "a frame's header has no Content-Length".to_owned(),
                        rest: Vec::new(),
                    },
                });
            }
            lines += 1;
            if let Err(why) = header_line(&line, &mut length) {
                // With its line end: a frame found in it ends its line there.
                let mut rest = line[1..].to_vec();
                rest.push(b'\n');
                return Ok(Header::Malformed { why, rest });
            }
            line.clear();
        }
    }

    /// Reads up to the next `\n` into `line` (without it, nor a `\r` before
    /// it), spending `budget`.
    fn line(&mut self, line: &mut Vec<u8>, budget: &mut usize) -> Result<Line, Broken> {
        loop {
            let available = self.fill()?;
            if available.is_empty() {
                return Ok(Line::End);
            }
            let newline = available.iter().position(|&byte| byte == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            if take > *budget {
                let take = (*budget).min(available.len());
                line.extend_from_slice(&available[..take]);
                self.consume(take);
                return Ok(Line::TooLong);
            }
            line.extend_from_slice(&available[..newline.unwrap_or(take)]);
            *budget -= take;
            self.consume(take);
            if newline.is_some() {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Line::Read);
            }
        }
    }

    /// Discards bytes up to and including the next `Content-Length`, in any
    /// case, holding none of them. False: the stream ended first.
    fn skip_to_next_frame(&mut self) -> Result<bool, Broken> {
        let mut matched = 0usize;
        loop {
            let available = self.fill()?;
            if available.is_empty() {
                return Ok(false);
            }
            let mut used = available.len();
            for (at, &byte) in available.iter().enumerate() {
                let byte = byte.to_ascii_lowercase();
                // No proper prefix of the name recurs inside it, so a mismatch
                // can only restart the match at this byte.
                matched = if byte == CONTENT_LENGTH[matched] {
                    matched + 1
                } else if byte == CONTENT_LENGTH[0] {
                    1
                } else {
                    0
                };
                if matched == CONTENT_LENGTH.len() {
                    used = at + 1;
                    break;
                }
            }
            self.consume(used);
            if matched == CONTENT_LENGTH.len() {
                return Ok(true);
            }
        }
    }

    /// Discards `length` bytes as they arrive.
    fn skip(&mut self, mut length: u64) -> Result<(), Broken> {
        let declared = length;
        while length > 0 {
            let available = self.fill()?.len();
            if available == 0 {
                return Err(Broken(format!(
                    "the stream ended {} bytes into the {declared}-byte body being skipped",
                    declared - length
                )));
            }
            let take = (available as u64).min(length);
            self.consume(take as usize);
            length -= take;
        }
        Ok(())
    }

    /// Reads a body of `length` bytes (within the limit), its buffer growing as
    /// bytes arrive.
    fn body(&mut self, length: usize) -> Result<Vec<u8>, Broken> {
        let mut body: Vec<u8> = Vec::new();
        while body.len() < length {
            let available = self.fill()?;
            if available.is_empty() {
                return Err(Broken(format!(
                    "the stream ended {} bytes into a {length}-byte body",
                    body.len()
                )));
            }
            let take = available.len().min(length - body.len());
            if body.len() + take > body.capacity() {
                // Doubling, but never past the declared length.
                let target = (body.len() + take)
                    .max(body.capacity().saturating_mul(2))
                    .min(length);
                body.reserve_exact(target - body.len());
            }
            body.extend_from_slice(&available[..take]);
            self.consume(take);
        }
        Ok(body)
    }
}

enum Line {
    Read,
    End,
    TooLong,
}

/// Reads one `Name: value` header line; only `Content-Length` is kept (the
/// protocol's one other header, `Content-Type`, can only say UTF-8).
fn header_line(line: &[u8], length: &mut Option<u64>) -> Result<(), String> {
    let shown = || String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
    let Some(colon) = line.iter().position(|&byte| byte == b':') else {
        return Err(format!("`{}` is not a header line", shown()));
    };
    let name = line[..colon].trim_ascii();
    let value = line[colon + 1..].trim_ascii();
    let is_token = !name.is_empty()
        && name
            .iter()
            .all(|&byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
    if !is_token {
        return Err(format!("`{}` is not a header line", shown()));
    }
    if !name.eq_ignore_ascii_case(CONTENT_LENGTH) {
        return Ok(());
    }
    let digits = !value.is_empty() && value.iter().all(u8::is_ascii_digit);
    let parsed = std::str::from_utf8(value)
        .ok()
        .filter(|_| digits)
        .map(str::parse::<u64>);
    match parsed {
        Some(Ok(parsed)) if length.is_none_or(|seen| seen == parsed) => {
            *length = Some(parsed);
            Ok(())
        }
        Some(Ok(_)) => Err("a frame's header has two different Content-Lengths".to_owned()),
        Some(Err(_)) => Err(format!(
            "Content-Length {} is too large to count",
            String::from_utf8_lossy(value)
        )),
        None => Err(format!(
            "Content-Length `{}` is not a number",
            String::from_utf8_lossy(&value[..value.len().min(80)])
        )),
    }
}

/// Where `content-length` (any case) first occurs in `bytes`.
fn find_content_length(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(CONTENT_LENGTH.len())
        .position(|window| window.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// A body as a message, or why it is not one.
fn decode(body: &[u8], max_values: usize) -> Result<Message, Refusal> {
    let refuse = |code, why: String| Refusal {
        id: Value::Null,
        code,
        why,
    };
    let text = std::str::from_utf8(body).map_err(|error| {
        refuse(
            ErrorCode::ParseError,
            format!(
                "the body is not UTF-8 (byte {} is not)",
                error.valid_up_to()
            ),
        )
    })?;
    if json_values(text) > max_values {
        return Err(refuse(
            ErrorCode::InvalidRequest,
            format!("the body holds more than {max_values} JSON values"),
        ));
    }
    let value: Value = serde_json::from_str(text).map_err(|error| {
        refuse(
            ErrorCode::ParseError,
            format!("the body is not JSON: {error}"),
        )
    })?;
    message_of(value)
}

/// An upper bound on the values a JSON text holds: one more than its
/// separators and openings outside strings.
fn json_values(text: &str) -> usize {
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for byte in text.bytes() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b',' | b':' | b'[' | b'{' => count += 1,
            _ => {}
        }
    }
    count
}

/// A JSON value as a request, notification or response (`lsp-server`'s
/// shapes), or why it is none: the protocol's messages are objects, one per
/// frame; a request's id is a 32-bit integer or a string (`lsp-server`'s
/// `RequestId`), answered as given when it is neither.
fn message_of(value: Value) -> Result<Message, Refusal> {
    let invalid = |id: Value, why: &str| Refusal {
        id,
        code: ErrorCode::InvalidRequest,
        why: why.to_owned(),
    };
    let map: Map<String, Value> = match value {
        Value::Object(map) => map,
        Value::Array(_) => return Err(invalid(Value::Null, "batches are not served")),
        _ => return Err(invalid(Value::Null, "a message is a JSON object")),
    };
    // An id to answer with: what was sent, when JSON-RPC allows it.
    let answerable = match map.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    let has_id = map.contains_key("id");
    match map.get("method") {
        Some(Value::String(_)) if has_id => serde_json::from_value::<Request>(Value::Object(map))
            .map(Message::Request)
            .map_err(|_| {
                invalid(
                    answerable,
                    "a request's id must be a string or a 32-bit integer",
                )
            }),
        Some(Value::String(_)) => serde_json::from_value::<Notification>(Value::Object(map))
            .map(Message::Notification)
            .map_err(|error| invalid(Value::Null, &format!("not a notification: {error}"))),
        Some(_) => Err(invalid(answerable, "a message's method must be a string")),
        None if has_id && (map.contains_key("result") || map.contains_key("error")) => {
            serde_json::from_value::<Response>(Value::Object(map))
                .map(Message::Response)
                .map_err(|error| invalid(Value::Null, &format!("not a response: {error}")))
        }
        None => Err(invalid(
            answerable,
            "neither a request, a notification nor a response",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames read from `bytes` by a reader with small bounds: the messages in
    /// order, then the refusals (as `code: why`), then the ending.
    fn read(bytes: &[u8], bounds: Bounds) -> (Vec<Message>, Vec<String>, Ending) {
        let (server, messages) = crossbeam_channel::unbounded();
        let (refuse, refusals) = crossbeam_channel::unbounded();
        let mut frames = Frames::new(bytes, bounds);
        let ending = frames.run(&server, &refuse);
        let messages = messages.try_iter().collect();
        let refusals = refusals
            .try_iter()
            .map(|value: Value| {
                format!(
                    "{} {}: {}",
                    value["id"],
                    value["error"]["code"],
                    value["error"]["message"].as_str().unwrap_or_default()
                )
            })
            .collect();
        (messages, refusals, ending)
    }

    fn small() -> Bounds {
        Bounds {
            max_body: 200,
            max_header: 64,
            max_values: 20,
            log_to_stderr: false,
        }
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    const HOVER: &str = r#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{}}"#;

    fn ids(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|message| match message {
                Message::Request(request) => format!("request {}", request.id),
                Message::Notification(n) => format!("notification {}", n.method),
                Message::Response(r) => format!("response {}", r.id),
            })
            .collect()
    }

    /// Each malformed frame is answered, and the valid request after it is
    /// still read.
    #[test]
    fn each_malformed_frame_is_answered_and_the_next_frame_read() {
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            (
                "non-numeric length",
                b"Content-Length: abc\r\n\r\n{}".to_vec(),
                "null -32700: Content-Length `abc` is not a number",
            ),
            (
                "negative length",
                b"Content-Length: -5\r\n\r\n{}".to_vec(),
                "null -32700: Content-Length `-5` is not a number",
            ),
            (
                "no header at all",
                br#"{"id":1}"#.to_vec(),
                "null -32700: `{\"id\":1}Content-Length: 66` is not a header line",
            ),
            (
                "no Content-Length",
                b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}".to_vec(),
                "null -32700: a frame's header has no Content-Length",
            ),
            (
                "not JSON",
                frame("{not json").into_bytes(),
                "null -32700: the body is not JSON",
            ),
            (
                "not UTF-8",
                [b"Content-Length: 4\r\n\r\n".as_slice(), b"\"\xff\xfe\""].concat(),
                "null -32700: the body is not UTF-8 (byte 1 is not)",
            ),
            (
                "body longer than declared",
                br#"Content-Length: 10

{"jsonrpc":"2.0","id":1,"method":"x"}"#
                    .to_vec(),
                "null -32700: the body is not JSON",
            ),
            (
                "body shorter than declared",
                b"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\"}".to_vec(),
                "null -32700: the body is not JSON",
            ),
            (
                "a batch",
                frame(r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#).into_bytes(),
                "null -32600: batches are not served",
            ),
            (
                "a float id",
                frame(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#).into_bytes(),
                "1.5 -32600: a request's id must be a string or a 32-bit integer",
            ),
            (
                "no method",
                frame(r#"{"jsonrpc":"2.0","id":"a"}"#).into_bytes(),
                "\"a\" -32600: neither a request",
            ),
            (
                "too many values",
                frame(&format!("[{}0]", "0,".repeat(30))).into_bytes(),
                "null -32600: the body holds more than 20 JSON values",
            ),
            (
                "header too long",
                format!("X-Padding: {}\r\n", "p".repeat(100)).into_bytes(),
                "null -32700: a frame's header is longer than 64 bytes",
            ),
            (
                "body over the limit",
                format!("Content-Length: 300\r\n\r\n{}", " ".repeat(300)).into_bytes(),
                "null -32600: a frame of 300 bytes exceeds the limit of 200 bytes",
            ),
        ];
        for (name, bad, expected) in cases {
            let stream = [bad.as_slice(), frame(HOVER).as_bytes()].concat();
            let (messages, refusals, ending) = read(&stream, small());
            assert_eq!(ids(&messages), ["request 7"], "{name}: {refusals:?}");
            assert_eq!(refusals.len(), 1, "{name}: {refusals:?}");
            assert!(
                refusals[0].starts_with(expected),
                "{name}: {} does not start with {expected}",
                refusals[0]
            );
            assert_eq!(ending, Ending::Closed, "{name}");
        }
    }

    /// A header declaring more than the limit is answered at once, before its
    /// body arrives, and the body is skipped without being held.
    #[test]
    fn a_huge_declared_length_is_answered_before_its_body_and_never_allocated() {
        let stream = b"Content-Length: 2000000000\r\n\r\nxyz";
        let quiet = Bounds {
            log_to_stderr: false,
            ..Bounds::default()
        };
        let (messages, refusals, ending) = read(stream, quiet);
        assert!(messages.is_empty());
        assert_eq!(
            refusals,
            [
                "null -32600: a frame of 2000000000 bytes exceeds the limit of 16777216 bytes: \
                 its body is skipped"
            ]
        );
        assert_eq!(
            ending,
            Ending::Broken(
                "the stream ended 3 bytes into the 2000000000-byte body being skipped".to_owned()
            )
        );
        let (_, refusals, _) = read(b"Content-Length: 99999999999999999999999\r\n\r\n", small());
        assert_eq!(
            refusals,
            ["null -32700: Content-Length 99999999999999999999999 is too large to count"]
        );
    }

    /// Where the stream ends decides what is said: between frames is a close,
    /// inside one is broken (with how far it got).
    #[test]
    fn the_stream_ending_inside_a_frame_says_where() {
        let (_, _, ending) = read(b"", small());
        assert_eq!(ending, Ending::Closed);
        let (_, _, ending) = read(b"Content-Len", small());
        assert_eq!(
            ending,
            Ending::Broken("the stream ended inside a frame's header (11 bytes of it read)".into())
        );
        let (_, _, ending) = read(b"Content-Length: 50\r\n\r\n{\"a\"", small());
        assert_eq!(
            ending,
            Ending::Broken("the stream ended 4 bytes into a 50-byte body".into())
        );
        let (_, refusals, ending) = read(b"{garbage}\r\nwithout end", small());
        assert_eq!(refusals.len(), 1);
        assert!(
            matches!(ending, Ending::Broken(why) if why.contains("looking for the next frame"))
        );
    }

    /// One stretch of garbage, however long and whatever it holds, is one
    /// answer; the frames around it are read, and `exit` stops the reader.
    #[test]
    fn one_stretch_of_garbage_is_one_answer_and_exit_stops_reading() {
        let garbage = "}{ content-length: no\r\n\r\n Content-Length: 3\r\n\r\nabc ".repeat(5);
        let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
        let stream = format!(
            "{}{garbage}{}\r\n{}{}",
            frame(HOVER),
            frame(HOVER),
            frame(exit),
            frame(HOVER)
        );
        let (messages, refusals, ending) = read(stream.as_bytes(), small());
        assert_eq!(
            ids(&messages),
            ["request 7", "request 7", "notification exit"]
        );
        assert_eq!(refusals.len(), 1, "{refusals:?}");
        assert_eq!(ending, Ending::Exit);
    }

    /// Headers in any case and order, with `Content-Type` and blank lines
    /// between frames, and a response from the client, are all read.
    #[test]
    fn headers_in_any_case_and_responses_are_read() {
        let body = r#"{"jsonrpc":"2.0","id":"trellis-1","result":null}"#;
        let stream = format!(
            "content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: {}\n\n{body}\r\n{}",
            body.len(),
            frame(HOVER)
        );
        let bounds = Bounds {
            log_to_stderr: false,
            ..Bounds::default()
        };
        let (messages, refusals, _) = read(stream.as_bytes(), bounds);
        assert!(refusals.is_empty(), "{refusals:?}");
        assert_eq!(ids(&messages), ["response \"trellis-1\"", "request 7"]);
    }

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert_eq!(json_values(r#"{"a,b:[{":1}"#), 3);
        assert_eq!(json_values(r#"[1,2,{"k":"\",","v":[]}]"#), 9);
    }

    /// A refusal waiting when an answer is written goes out first, whichever
    /// channel the writer's `select!` happens to take (it picks at random: run
    /// many times, a writer that did not drain the refusals first fails).
    #[test]
    fn a_refusal_goes_out_before_the_answer_after_it() {
        for _ in 0..64 {
            let (to_client, outbox) = bounded::<Message>(OUTBOX);
            let (refuse, refusals) = bounded::<Value>(OUTBOX);
            refuse
                .send(json!({ "jsonrpc": "2.0", "id": null,
                              "error": { "code": -32700, "message": "garbage" } }))
                .expect("queued");
            to_client
                .send(Message::Response(Response::new_ok(7.into(), Value::Null)))
                .expect("queued");
            drop((to_client, refuse));
            let mut written = Vec::new();
            write_all(&mut written, &outbox, &refusals).expect("written");
            let written = String::from_utf8(written).expect("UTF-8");
            let refusal = written.find("garbage").expect("the refusal is written");
            let answer = written.find("\"id\":7").expect("the answer is written");
            assert!(refusal < answer, "the refusal first: {written}");
        }
    }
}
