//! A seeded fuzzer for the server over a byte stream: each case starts a
//! server behind its transport on pipes and writes it a session — valid
//! requests and notifications at random positions of multi-byte documents,
//! edits with ranges valid and not, params of the wrong shape, frames with
//! their bytes flipped, cut, doubled or their length rewritten, raw garbage —
//! in chunks of random sizes, then closes the stream. Every case must end (no
//! hang), answer only with well-formed frames, never with an internal error
//! (-32603), and `serve` must return cleanly.
//!
//! The normal suite runs a few cases from a fixed seed. Longer runs:
//!
//! ```text
//! TRELLIS_LSP_FUZZ_SECONDS=300 cargo test -p trellis-lsp --release --test fuzz -- --nocapture
//! TRELLIS_LSP_FUZZ_CASES=5000 TRELLIS_LSP_FUZZ_SEED=42 cargo test -p trellis-lsp --test fuzz
//! ```
//!
//! A failure names its seed and case; `TRELLIS_LSP_FUZZ_SEED=<seed>` and
//! `TRELLIS_LSP_FUZZ_CASES=<case + 1>` replay it.

#![allow(
    clippy::disallowed_methods,
    reason = "the fuzzer's length is read from the environment"
)]

mod support;

use std::time::{Duration, Instant};
use trellis_hash::splitmix::SplitMix64;

use serde_json::{Value, json};
use support::{MULTI_BYTE, WireClient, multi_byte_root, uri};
use trellis_lsp::transport::Bounds;

/// Cases the normal suite runs.
const SUITE_CASES: u64 = 24;
const DEFAULT_SEED: u64 = 0x7e11_15f0;
/// How long one case may take to end once its stream is closed.
const CASE_LIMIT: Duration = Duration::from_secs(60);

/// The workspace's one seeded source (`trellis_hash::splitmix`), drawn from as
/// this fuzzer always has, so a seed replays the same cases.
struct Rng(SplitMix64);

impl Rng {
    fn seeded(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

#[test]
fn the_server_survives_fuzzed_byte_streams() {
    let seed = env_number("TRELLIS_LSP_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let seconds = env_number("TRELLIS_LSP_FUZZ_SECONDS");
    let cases = env_number("TRELLIS_LSP_FUZZ_CASES").unwrap_or(match seconds {
        Some(_) => u64::MAX,
        None => SUITE_CASES,
    });
    let deadline = seconds.map(|seconds| Instant::now() + Duration::from_secs(seconds));
    let started = Instant::now();
    let mut ran = 0u64;
    let mut frames_sent = 0u64;
    let mut answers = 0u64;
    for case in 0..cases {
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            break;
        }
        let mut rng = Rng::seeded(seed ^ case.wrapping_mul(0xa076_1d64_78bd_642f));
        let (sent, answered) = run_case(&mut rng).unwrap_or_else(|why| {
            panic!("seed {seed} case {case}: {why}");
        });
        frames_sent += sent;
        answers += answered;
        ran += 1;
    }
    eprintln!(
        "fuzz: seed {seed}, {ran} cases, {frames_sent} frames, {answers} answers in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(ran > 0 && answers > 0);
}

/// One session; the frames sent and the messages answered, or what went wrong.
fn run_case(rng: &mut Rng) -> Result<(u64, u64), String> {
    let bounds = Bounds {
        // Small enough that a rewritten length often passes it.
        max_body: 1 + rng.below(64 * 1024) as usize,
        max_header: 64 + rng.below(8 * 1024) as usize,
        max_values: 16 + rng.below(4096) as usize,
        log_to_stderr: false,
    };
    let mut session = Session::new(rng);
    let client = WireClient::connect(multi_byte_root(), bounds);
    let mut stream = Vec::new();
    let utf8 = session.rng.chance(50);
    stream.extend(frame(&json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": support::initialize_params(utf8),
    })));
    stream.extend(frame(
        &json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
    ));
    let steps = 5 + session.rng.below(40);
    for _ in 0..steps {
        stream.extend(session.step());
    }
    if session.rng.chance(70) {
        stream.extend(frame(
            &json!({ "jsonrpc": "2.0", "id": 1_000_000, "method": "shutdown" }),
        ));
        stream.extend(frame(&json!({ "jsonrpc": "2.0", "method": "exit" })));
    }
    let frames = session.frames + 4;
    let messages = client.messages.clone();
    let (served, _transport) = feed(client, &stream, session.rng)?;
    served.map_err(|why| format!("serve returned an error: {why}"))?;
    let mut answered = 0;
    for message in messages.try_iter() {
        answered += 1;
        if message["error"]["code"] == -32603 {
            return Err(format!("an internal error: {message}"));
        }
        if message.get("jsonrpc") != Some(&json!("2.0")) {
            return Err(format!("not JSON-RPC 2.0: {message}"));
        }
    }
    Ok((frames, answered))
}

/// Writes `stream` in random chunks, closes it, and waits for the server.
fn feed(mut client: WireClient, stream: &[u8], rng: &mut Rng) -> Result<support::Ended, String> {
    let mut at = 0;
    while at < stream.len() {
        let most = if rng.chance(20) { 16 } else { 8192 };
        let size = 1 + rng.below(most) as usize;
        let end = (at + size).min(stream.len());
        if !client.try_send_raw(&stream[at..end]) {
            // The server stopped reading (it took `exit`): the rest is moot.
            break;
        }
        at = end;
    }
    let (done, ended) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let _ = done.send(client.close());
    });
    ended
        .recv_timeout(CASE_LIMIT)
        .map_err(|_| format!("the server did not end within {CASE_LIMIT:?} of its input closing"))
}

fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("JSON");
    let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    framed.extend(body);
    framed
}

/// What a session knows: the documents it opened (path, text, version).
struct Session<'r> {
    rng: &'r mut Rng,
    open: Vec<(String, String, i32)>,
    next_id: i64,
    frames: u64,
}

const PATHS: &[&str] = &[
    "app/main.soil",
    "app/main.tr",
    "text/shout.soil",
    "text/shout.tr",
    "text/_private.soil",
    "_project.tr",
    "soil.toml",
    "app/new.soil",
];

const REQUESTS: &[&str] = &[
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/documentSymbol",
    "textDocument/codeLens",
    "textDocument/formatting",
    "workspace/executeCommand",
    "trellis/readSpec",
    "textDocument/rename",
    "$/cancelRequest",
];

impl Session<'_> {
    fn new(rng: &mut Rng) -> Session<'_> {
        Session {
            rng,
            open: Vec::new(),
            next_id: 1,
            frames: 0,
        }
    }

    /// One step of the session: a frame (sound or broken) or raw garbage.
    fn step(&mut self) -> Vec<u8> {
        self.frames += 1;
        let message = match self.rng.below(10) {
            0..=2 => self.request(),
            3 | 4 => self.open_document(),
            5 | 6 => self.change(),
            7 => self.close_or_save(),
            _ => return self.broken(),
        };
        let mut message = message;
        if self.rng.chance(10) {
            mistype(self.rng, &mut message);
        }
        frame(&message)
    }

    fn text(&mut self) -> String {
        let mut text = String::new();
        for _ in 0..self.rng.below(12) {
            let piece = match self.rng.below(8) {
                0 => "\n".to_owned(),
                1 => "\r\n".to_owned(),
                2 => "main x = text::shout x\n".to_owned(),
                3 => "\"str".to_owned(),
                4 => " ".to_owned(),
                _ => self.rng.pick(MULTI_BYTE).to_string(),
            };
            text.push_str(&piece);
        }
        text
    }

    fn document(&mut self) -> String {
        match self.open.len() {
            0 => self.rng.pick(PATHS).to_string(),
            n => self.open[self.rng.below(n as u64) as usize].0.clone(),
        }
    }

    fn position(&mut self) -> Value {
        let big = self.rng.chance(10);
        json!({
            "line": if big { self.rng.next() as u32 } else { self.rng.below(12) as u32 },
            "character": if big { self.rng.next() as u32 } else { self.rng.below(40) as u32 },
        })
    }

    fn request(&mut self) -> Value {
        let method = *self.rng.pick(REQUESTS);
        let path = self.document();
        let mut params = json!({
            "textDocument": { "uri": uri(&path) },
            "position": self.position(),
        });
        match method {
            "textDocument/references" => {
                params["context"] = json!({ "includeDeclaration": self.rng.chance(50) });
            }
            "textDocument/formatting" => {
                params["options"] = json!({ "tabSize": 2, "insertSpaces": true });
            }
            "workspace/executeCommand" => {
                params = json!({ "command": "trellis.readSpec", "arguments": ["design#9.9"] });
            }
            "trellis/readSpec" => params = json!({ "ref": "soil-syntax-spec#1" }),
            "$/cancelRequest" => params = json!({ "id": self.next_id }),
            _ => {}
        }
        self.next_id += 1;
        if method.starts_with('$') {
            return json!({ "jsonrpc": "2.0", "method": method, "params": params });
        }
        json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params })
    }

    fn open_document(&mut self) -> Value {
        let path = self.rng.pick(PATHS).to_string();
        let text = self.text();
        self.open.push((path.clone(), text.clone(), 1));
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": { "uri": uri(&path), "languageId": "soil", "version": 1, "text": text }
        }})
    }

    fn change(&mut self) -> Value {
        let path = self.document();
        let version = 2 + self.rng.below(100) as i32;
        let mut changes = Vec::new();
        for _ in 0..1 + self.rng.below(3) {
            let text = self.text();
            if self.rng.chance(20) {
                changes.push(json!({ "text": text }));
            } else {
                let (start, end) = (self.position(), self.position());
                changes.push(json!({ "range": { "start": start, "end": end }, "text": text }));
            }
        }
        json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": { "uri": uri(&path), "version": version },
            "contentChanges": changes,
        }})
    }

    fn close_or_save(&mut self) -> Value {
        let path = self.document();
        let method = if self.rng.chance(50) {
            self.open.retain(|(open, _, _)| *open != path);
            "textDocument/didClose"
        } else {
            "textDocument/didSave"
        };
        json!({ "jsonrpc": "2.0", "method": method,
                "params": { "textDocument": { "uri": uri(&path) } } })
    }

    /// A sound frame broken at the byte level, or garbage.
    fn broken(&mut self) -> Vec<u8> {
        let sound = self.request();
        let mut bytes = frame(&sound);
        match self.rng.below(8) {
            0 => {
                for _ in 0..1 + self.rng.below(4) {
                    let at = self.rng.below(bytes.len() as u64) as usize;
                    bytes[at] ^= 1 << self.rng.below(8);
                }
            }
            1 => bytes.truncate(self.rng.below(bytes.len() as u64) as usize),
            2 => {
                let doubled = bytes.clone();
                bytes.extend(doubled);
            }
            3 => {
                // The length rewritten: too short, too long, huge, or not a number.
                let body = bytes
                    .split_off(bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4);
                let length = match self.rng.below(4) {
                    0 => (body.len() as u64)
                        .saturating_sub(1 + self.rng.below(8))
                        .to_string(),
                    1 => (body.len() as u64 + 1 + self.rng.below(8)).to_string(),
                    2 => "2000000000".to_owned(),
                    _ => "½".to_owned(),
                };
                bytes = format!("Content-Length: {length}\r\n\r\n").into_bytes();
                bytes.extend(body);
            }
            4 => {
                // The header dropped.
                let body_at = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
                bytes.drain(..body_at);
            }
            5 => {
                let at = self.rng.below(bytes.len() as u64) as usize;
                let c = self.rng.pick(MULTI_BYTE).to_string();
                bytes.splice(at..at, c.into_bytes());
            }
            6 => {
                bytes = (0..self.rng.below(300))
                    .map(|_| self.rng.next() as u8)
                    .collect();
            }
            _ => {
                // A long header line, or many.
                let line = "X-Padding: ".to_owned() + &"p".repeat(self.rng.below(20_000) as usize);
                bytes.splice(0..0, format!("{line}\r\n").into_bytes());
            }
        }
        bytes
    }
}

/// Replaces one value inside `message`'s params with a value of another shape.
fn mistype(rng: &mut Rng, message: &mut Value) {
    let replacement = match rng.below(6) {
        0 => json!(null),
        1 => json!(-1),
        2 => json!("😀"),
        3 => json!([]),
        4 => json!({}),
        _ => json!(1.5e300),
    };
    let mut at = &mut message["params"];
    loop {
        let keys: Vec<String> = match at {
            Value::Object(map) if !map.is_empty() => map.keys().cloned().collect(),
            _ => break,
        };
        let key = rng.pick(&keys).clone();
        if rng.chance(40) {
            at[&key] = replacement;
            return;
        }
        at = &mut at[&key];
    }
    *at = replacement;
}
