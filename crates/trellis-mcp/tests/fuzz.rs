//! A seeded fuzzer for the MCP server over a byte stream (the `trellis _mcp`
//! shim's loop, its job port scripted): each case writes a session — both
//! handshakes, `tools/list`, tool calls with sound and mistyped arguments,
//! notifications, stray responses, ids of every JSON type, blank lines,
//! frames with their bytes flipped, cut or doubled, lines over the frame limit,
//! raw garbage — read in chunks of random sizes, until the input ends. Every
//! case must end with `serve` returning cleanly, answer only with well-formed
//! JSON-RPC responses whose ids are strings, numbers or null, never with an
//! internal error (-32603), answer each sound request exactly once under its
//! id, and send no tool result over the cap but the cap's own refusal.
//!
//! The normal suite runs a few cases from a fixed seed. Longer runs:
//!
//! ```text
//! TRELLIS_MCP_FUZZ_SECONDS=300 cargo test -p trellis-mcp --release --test fuzz -- --nocapture
//! TRELLIS_MCP_FUZZ_CASES=5000 TRELLIS_MCP_FUZZ_SEED=42 cargo test -p trellis-mcp --test fuzz
//! ```
//!
//! A failure names its seed and case; `TRELLIS_MCP_FUZZ_SEED=<seed>` and
//! `TRELLIS_MCP_FUZZ_CASES=<case + 1>` replay it.

#![allow(
    clippy::disallowed_methods,
    reason = "the fuzzer's length is read from the environment"
)]

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read};
use std::time::{Duration, Instant};
use trellis_hash::splitmix::SplitMix64;

use serde_json::{Value, json};
use trellis_mcp::{JobPort, McpServer, TOOLS, Tool, serve};

const SUITE_CASES: u64 = 200;
const DEFAULT_SEED: u64 = 0x6d63_7066;

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
fn the_mcp_server_survives_fuzzed_byte_streams() {
    let seed = env_number("TRELLIS_MCP_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let seconds = env_number("TRELLIS_MCP_FUZZ_SECONDS");
    let cases = env_number("TRELLIS_MCP_FUZZ_CASES").unwrap_or(match seconds {
        Some(_) => u64::MAX,
        None => SUITE_CASES,
    });
    let deadline = seconds.map(|seconds| Instant::now() + Duration::from_secs(seconds));
    let started = Instant::now();
    let (mut ran, mut frames, mut answers) = (0u64, 0u64, 0u64);
    for case in 0..cases {
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            break;
        }
        let mut rng = Rng::seeded(seed ^ case.wrapping_mul(0xa076_1d64_78bd_642f));
        let (sent, answered) = run_case(&mut rng).unwrap_or_else(|why| {
            panic!("seed {seed} case {case}: {why}");
        });
        frames += sent;
        answers += answered;
        ran += 1;
    }
    eprintln!(
        "fuzz: seed {seed}, {ran} cases, {frames} frames, {answers} answers in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(ran > 0 && answers > 0);
}

/// A job port that answers from its arguments alone: results of every size
/// (some over the cap), failures with diagnostics, and deliberately odd
/// documents.
struct Scripted;

impl JobPort for Scripted {
    fn call(&mut self, tool: Tool, arguments: &Value) -> Result<Value, Vec<Value>> {
        let size = arguments.to_string().len();
        match (tool, size % 4) {
            (Tool::ReadSpec, _) | (_, 0) => Err(vec![
                trellis_diag::Diagnostic::new("unknown-spec-ref", "no such section").to_json(),
            ]),
            (Tool::ReadContext, _) => Ok(json!({"tag": "File", "content": "é".repeat(size * 7)})),
            (_, 1) => Ok(json!({"tool": tool.name(), "arguments": arguments})),
            (_, 2) => Ok(json!([null, "\u{2028}", -0.0, 1e300])),
            _ => Ok(json!({"tag": "None"})),
        }
    }
}

/// Reads from memory in chunks of random sizes, so frames straddle the
/// reader's buffer at every offset.
struct Chunked {
    bytes: Vec<u8>,
    at: usize,
    rng: Rng,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let most = if self.rng.chance(30) { 7 } else { 4096 };
        let size = (1 + self.rng.below(most) as usize)
            .min(buf.len())
            .min(self.bytes.len() - self.at);
        buf[..size].copy_from_slice(&self.bytes[self.at..self.at + size]);
        self.at += size;
        Ok(size)
    }
}

/// One session; the frames sent and the messages answered, or what went wrong.
fn run_case(rng: &mut Rng) -> Result<(u64, u64), String> {
    let frame_limit = 64 + rng.below(16 * 1024) as usize;
    let cap_tokens = 1 + rng.below(2048) as usize;
    let mut session = Session {
        rng: Rng::seeded(rng.next()),
        next_id: 1,
        frames: 0,
        expected: BTreeMap::new(),
        frame_limit,
    };
    let mut stream = Vec::new();
    for _ in 0..3 + session.rng.below(40) {
        stream.extend(session.step());
    }
    if session.rng.chance(20) {
        // The last frame without its newline is still a frame.
        stream.pop();
    }
    let input = io::BufReader::with_capacity(
        1 + rng.below(512) as usize,
        Chunked {
            bytes: stream,
            at: 0,
            rng: Rng::seeded(rng.next()),
        },
    );
    let mut output = Vec::new();
    let mut server = McpServer::new(Scripted, "0.0.0-fuzz")
        .with_result_cap(cap_tokens)
        .with_frame_limit(frame_limit);
    serve(input, &mut output, &mut server).map_err(|why| format!("serve failed: {why}"))?;
    let mut answered: BTreeMap<i64, u32> = BTreeMap::new();
    let mut count = 0;
    for line in output.lines() {
        let line = line.map_err(|why| format!("output not UTF-8: {why}"))?;
        count += 1;
        let message: Value =
            serde_json::from_str(&line).map_err(|why| format!("not JSON ({why}): {line}"))?;
        check_response(&message, cap_tokens.saturating_mul(4), &session.expected)?;
        if let Some(id) = message["id"].as_i64() {
            *answered.entry(id).or_default() += 1;
        }
    }
    for (id, method) in &session.expected {
        if answered.get(id) != Some(&1) {
            return Err(format!(
                "the sound request {id} ({method}) was answered {} times",
                answered.get(id).copied().unwrap_or(0)
            ));
        }
    }
    Ok((session.frames, count))
}

/// One answer's shape: JSON-RPC 2.0, an allowed id, exactly one of result and
/// error, no internal error, and a tool result within the cap (or the cap's
/// refusal).
fn check_response(
    message: &Value,
    cap_bytes: usize,
    expected: &BTreeMap<i64, String>,
) -> Result<(), String> {
    if message["jsonrpc"] != "2.0" {
        return Err(format!("not JSON-RPC 2.0: {message}"));
    }
    if !matches!(
        message.get("id"),
        Some(Value::String(_) | Value::Number(_) | Value::Null)
    ) {
        return Err(format!(
            "an id that is not a string, number or null: {message}"
        ));
    }
    if message.get("result").is_some() == message.get("error").is_some() {
        return Err(format!("not exactly one of result and error: {message}"));
    }
    if message["error"]["code"] == -32603 {
        return Err(format!("an internal error: {message}"));
    }
    let tool_call = message["id"]
        .as_i64()
        .and_then(|id| expected.get(&id))
        .is_some_and(|method| method == "tools/call");
    if let (true, Some(result)) = (tool_call, message.get("result")) {
        let content = result["content"].as_array().map_or(&[][..], Vec::as_slice);
        let [item] = content else {
            return Err(format!("not one content item: {message}"));
        };
        let text = item["text"].as_str().unwrap_or_default();
        let document: Value = serde_json::from_str(text)
            .map_err(|why| format!("the text is not one JSON document ({why}): {message}"))?;
        let refused = document["errors"][0]["code"] == "mcp-result-too-large";
        if text.len() > cap_bytes && !refused {
            return Err(format!(
                "a result over the cap of {cap_bytes} bytes: {message}"
            ));
        }
        if !result["isError"].is_boolean() {
            return Err(format!("no isError: {message}"));
        }
    }
    Ok(())
}

/// What a session has sent: the sound requests that must each be answered
/// once under their id.
struct Session {
    rng: Rng,
    next_id: i64,
    frames: u64,
    expected: BTreeMap<i64, String>,
    frame_limit: usize,
}

const METHODS: &[&str] = &[
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "tools/call",
    "tools/call",
    "resources/list",
    "",
];

const MODERN_META: &str = "io.modelcontextprotocol/protocolVersion";

impl Session {
    /// One line: a sound request or notification, or something broken; always
    /// ends in a newline, so a broken line never eats its neighbour.
    fn step(&mut self) -> Vec<u8> {
        self.frames += 1;
        let mut line = match self.rng.below(10) {
            0..=5 => {
                let id = self.next_id;
                self.next_id += 1;
                let (bytes, method) = self.request(json!(id));
                if bytes.len() <= self.frame_limit {
                    self.expected.insert(id, method);
                }
                bytes
            }
            6 => {
                let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                serde_json::to_vec(&notification).expect("JSON")
            }
            7 => self.odd_message(),
            _ => self.broken(),
        };
        line.push(b'\n');
        line
    }

    fn arguments(&mut self, tool: &str) -> Value {
        let text = |rng: &mut Rng| -> Value {
            match rng.below(5) {
                0 => json!(""),
                1 => json!("é😀\u{0}\"\\"),
                2 => json!("x".repeat(rng.below(3000) as usize)),
                3 => json!(rng.next().to_string()),
                _ => json!("spec.md"),
            }
        };
        let sound = match tool {
            "read_context" => json!({"path": text(&mut self.rng)}),
            "read_spec" => json!({"ref": text(&mut self.rng)}),
            "write_soil" => json!({"soil": text(&mut self.rng), "decisions_applied":
                [{"scope": {"tag": "Module"}, "label": text(&mut self.rng)}]}),
            "ask_human" => json!({"kind": {"tag": "Rule"}, "question": text(&mut self.rng),
                "hole": {"tag": "Some", "value": "h"}, "options": [text(&mut self.rng)]}),
            _ => json!({}),
        };
        if !self.rng.chance(25) {
            return sound;
        }
        // Mistyped: a value of another shape somewhere, an extra field, or none.
        let replacements = [
            json!(null),
            json!(-1),
            json!([]),
            json!({}),
            json!({"tag": "Nope"}),
            json!("😀"),
        ];
        let replacement = self.rng.pick(&replacements);
        match (sound, self.rng.below(3)) {
            (Value::Object(mut fields), 0) if !fields.is_empty() => {
                let key = fields.keys().next().cloned().unwrap_or_default();
                fields.insert(key, replacement.clone());
                Value::Object(fields)
            }
            (Value::Object(mut fields), 1) => {
                fields.insert("extra".to_owned(), replacement.clone());
                Value::Object(fields)
            }
            _ => replacement.clone(),
        }
    }

    /// A sound request with `id`, and its method.
    fn request(&mut self, id: Value) -> (Vec<u8>, String) {
        let method = *self.rng.pick(METHODS);
        let mut params = match method {
            "initialize" => {
                json!({"protocolVersion": self.rng.pick(&["2025-11-25", "2024-11-05", "1999-01-01"])})
            }
            "tools/call" => {
                let name = if self.rng.chance(5) {
                    "no_such_tool"
                } else {
                    self.rng.pick(TOOLS).name
                };
                json!({"name": name, "arguments": self.arguments(name)})
            }
            _ => json!({}),
        };
        if self.rng.chance(40) {
            let version = if self.rng.chance(90) {
                "2026-07-28"
            } else {
                "2030-01-01"
            };
            params["_meta"] = json!({ MODERN_META: version });
        }
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !self.rng.chance(10) {
            message["params"] = params;
        }
        (
            serde_json::to_vec(&message).expect("JSON"),
            method.to_owned(),
        )
    }

    /// Well-formed JSON that is not a sound request.
    fn odd_message(&mut self) -> Vec<u8> {
        let ids = [
            json!({"a": 1}),
            json!([1]),
            json!(true),
            json!(null),
            json!(1.5),
            json!("s"),
            json!("b-odd"),
        ];
        let id = self.rng.pick(&ids).clone();
        let message = match self.rng.below(7) {
            0 => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
            1 => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            2 => json!({"jsonrpc": "2.0", "id": id, "error": {"code": 1, "message": "m"}}),
            3 => json!({"jsonrpc": "1.0", "id": id, "method": "ping"}),
            4 => json!({"id": id}),
            5 => json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            _ => json!({"jsonrpc": "2.0", "id": id, "method": 7}),
        };
        serde_json::to_vec(&message).expect("JSON")
    }

    /// A sound request broken at the byte level, a blank line, an oversized
    /// line, or garbage.
    fn broken(&mut self) -> Vec<u8> {
        // String ids, so that a broken frame that still parses is not taken
        // for a sound request (whose ids are numbers).
        let id = format!("b{}", self.rng.below(1000));
        let (mut bytes, _) = self.request(json!(id));
        match self.rng.below(7) {
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
            3 => bytes = b" \t\r".repeat(self.rng.below(3) as usize),
            4 => bytes = vec![b'{'; self.frame_limit + 1 + self.rng.below(100) as usize],
            5 => {
                bytes = (0..self.rng.below(300))
                    .map(|_| self.rng.next() as u8)
                    .collect();
            }
            _ => {
                let depth = self.rng.below(300) as usize;
                bytes = format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes();
            }
        }
        bytes
    }
}
