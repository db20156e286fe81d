//! A seeded fuzzer for the daemon's transport over its socket: each case binds
//! a server with small, random bounds (frame limit, outbox per connection and
//! in total) behind a handler that echoes, notifies and answers large, then
//! writes it a session — sound requests, notifications, frames with their
//! bytes flipped, cut or doubled, blank lines, lines over the frame limit,
//! answers over it, raw garbage — in chunks of random sizes, reading the
//! answers as it goes (sometimes slowly, so the outbox fills and the server
//! waits), then closes its side. Every case must end (no hang), answer only
//! with well-formed frames, never with an internal error (-32603), answer each
//! sound request exactly once and in order, refuse an answer over the frame
//! limit with -32001 under its id, and then still serve a new connection and
//! stop cleanly.
//!
//! The normal suite runs a few cases from a fixed seed. Longer runs:
//!
//! ```text
//! TRELLIS_RPC_FUZZ_SECONDS=300 cargo test -p trellis-rpc --release --test fuzz -- --nocapture
//! TRELLIS_RPC_FUZZ_CASES=5000 TRELLIS_RPC_FUZZ_SEED=42 cargo test -p trellis-rpc --test fuzz
//! ```
//!
//! A failure names its seed and case; `TRELLIS_RPC_FUZZ_SEED=<seed>` and
//! `TRELLIS_RPC_FUZZ_CASES=<case + 1>` replay it.

#![allow(
    clippy::disallowed_methods,
    reason = "the fuzzer's length is read from the environment; tests use files"
)]

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};
use trellis_hash::splitmix::SplitMix64;

use serde_json::{Value, json};
use trellis_rpc::{Answer, Client, Handler, Notifier, Server, ServerConfig};

const SUITE_CASES: u64 = 40;
const DEFAULT_SEED: u64 = 0x7270_6366;
/// How long one case may take, end to end.
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
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

/// Echoes, notifies `n` times then answers, or answers `size` bytes.
struct Fuzzed;

impl Handler for Fuzzed {
    fn handle(&self, method: &str, params: Value, notifier: &mut Notifier<'_>) -> Answer {
        match method {
            "notify" => {
                let n = params["n"].as_u64().unwrap_or(0).min(64);
                for step in 0..n {
                    // Dropped when the client is behind: progress may be lost.
                    let _ = notifier
                        .notify("progress", json!({ "step": step, "pad": "p".repeat(200) }));
                }
                Ok(json!("notified"))
            }
            "big" => {
                let size = params["size"].as_u64().unwrap_or(0).min(1 << 20) as usize;
                Ok(json!("b".repeat(size)))
            }
            _ => Ok(params),
        }
    }
}

#[test]
fn the_transport_survives_fuzzed_byte_streams() {
    let seed = env_number("TRELLIS_RPC_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let seconds = env_number("TRELLIS_RPC_FUZZ_SECONDS");
    let cases = env_number("TRELLIS_RPC_FUZZ_CASES").unwrap_or(match seconds {
        Some(_) => u64::MAX,
        None => SUITE_CASES,
    });
    let deadline = seconds.map(|seconds| Instant::now() + Duration::from_secs(seconds));
    let started = Instant::now();
    let dir = std::env::temp_dir().join(format!("trellis-fuzz-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let (mut ran, mut frames, mut answers) = (0u64, 0u64, 0u64);
    for case in 0..cases {
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            break;
        }
        let mut rng = Rng::seeded(seed ^ case.wrapping_mul(0xa076_1d64_78bd_642f));
        let socket = dir.join("run").join(format!("{}.sock", case % 8));
        let (sent, answered) = run_case(&mut rng, socket).unwrap_or_else(|why| {
            panic!("seed {seed} case {case}: {why}");
        });
        frames += sent;
        answers += answered;
        ran += 1;
    }
    let _ = fs::remove_dir_all(&dir);
    eprintln!(
        "fuzz: seed {seed}, {ran} cases, {frames} frames, {answers} answers in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(ran > 0 && answers > 0);
}

/// What a sound request expects: its id and whether its answer is over the
/// frame limit (then it must be refused with -32001).
struct Expected {
    id: i64,
    too_large: bool,
}

/// One session; the frames sent and the frames received, or what went wrong.
fn run_case(rng: &mut Rng, socket: PathBuf) -> Result<(u64, u64), String> {
    let mut config = ServerConfig::new("fuzz");
    config.frame_limit = 256 + rng.below(64 * 1024) as usize;
    config.outbox_bytes = 512 + rng.below(64 * 1024) as usize;
    config.outbox_total_bytes = config.frame_limit + rng.below(256 * 1024) as usize;
    let frame_limit = config.frame_limit;
    let server = Server::bind(&socket, config).map_err(|why| format!("bind: {why}"))?;
    let shutdown = server.shutdown_handle();
    let serving = thread::spawn(move || server.serve(Fuzzed));

    let mut session = Session {
        rng: Rng::seeded(rng.next()),
        next_id: 1,
        frames: 0,
        expected: Vec::new(),
        frame_limit,
    };
    let mut stream = Vec::new();
    for _ in 0..3 + session.rng.below(40) {
        stream.extend(session.step());
    }
    let frames = session.frames;
    let expected = session.expected;

    let connection = UnixStream::connect(&socket).map_err(|why| format!("connect: {why}"))?;
    connection
        .set_read_timeout(Some(CASE_LIMIT))
        .map_err(|why| why.to_string())?;
    let mut writing = connection.try_clone().map_err(|why| why.to_string())?;
    let mut chunks = Rng::seeded(rng.next());
    let writer = thread::spawn(move || {
        let mut at = 0;
        while at < stream.len() {
            let most = if chunks.chance(20) { 16 } else { 8192 };
            let end = (at + 1 + chunks.below(most) as usize).min(stream.len());
            if writing.write_all(&stream[at..end]).is_err() {
                return;
            }
            at = end;
        }
        let _ = writing.shutdown(Shutdown::Write);
    });
    let slow_reader = rng.chance(25);
    let (done, received) = mpsc::channel();
    thread::spawn(move || {
        let mut lines = Vec::new();
        let mut reader = BufReader::new(connection);
        let outcome = loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) => break Ok(lines),
                Ok(_) => lines.push(line),
                Err(why) => break Err(format!("reading the answers: {why}")),
            }
            if slow_reader && lines.len() % 4 == 0 {
                thread::sleep(Duration::from_millis(1));
            }
        };
        let _ = done.send(outcome);
    });
    let lines = received
        .recv_timeout(CASE_LIMIT)
        .map_err(|_| format!("the connection did not end within {CASE_LIMIT:?}"))??;
    let _ = writer.join();

    let mut answered = Vec::new();
    for line in &lines {
        let message: Value =
            serde_json::from_str(line).map_err(|why| format!("not JSON ({why}): {line}"))?;
        check_frame(&message)?;
        if let Some(id) = message["id"].as_i64() {
            answered.push((id, message));
        }
    }
    // Each sound request once, in order; an answer over the limit refused.
    let ids: Vec<i64> = answered.iter().map(|(id, _)| *id).collect();
    let wanted: Vec<i64> = expected.iter().map(|e| e.id).collect();
    if ids != wanted {
        return Err(format!("answered {ids:?}, expected {wanted:?}"));
    }
    for (expected, (_, message)) in expected.iter().zip(&answered) {
        let refused = message["error"]["code"] == -32001;
        if expected.too_large != refused {
            return Err(format!(
                "request {} (over the limit: {}) answered {message}",
                expected.id, expected.too_large
            ));
        }
    }
    // The server still serves, and stops.
    let mut client = Client::connect(&socket).map_err(|why| format!("reconnect: {why}"))?;
    client
        .set_timeout(Some(CASE_LIMIT))
        .map_err(|why| why.to_string())?;
    let echoed = client
        .call("echo", json!([1]))
        .map_err(|why| format!("a fresh client: {why}"))?;
    if echoed != json!([1]) {
        return Err(format!("a fresh client got {echoed}"));
    }
    drop(client);
    shutdown.shutdown();
    serving
        .join()
        .map_err(|_| "the server panicked".to_owned())?
        .map_err(|why| format!("serve failed: {why}"))?;
    Ok((frames, lines.len() as u64))
}

/// One frame's shape: JSON-RPC 2.0; a response has an allowed id, exactly
/// one of result and error, and no internal error; a notification a method.
fn check_frame(message: &Value) -> Result<(), String> {
    if message["jsonrpc"] != "2.0" {
        return Err(format!("not JSON-RPC 2.0: {message}"));
    }
    match message.get("id") {
        None => {
            if !message["method"].is_string() {
                return Err(format!("neither a response nor a notification: {message}"));
            }
        }
        Some(Value::String(_) | Value::Number(_) | Value::Null) => {
            if message.get("result").is_some() == message.get("error").is_some() {
                return Err(format!("not exactly one of result and error: {message}"));
            }
            if message["error"]["code"] == -32603 {
                return Err(format!("an internal error: {message}"));
            }
        }
        Some(_) => {
            return Err(format!(
                "an id that is not a string, number or null: {message}"
            ));
        }
    }
    Ok(())
}

struct Session {
    rng: Rng,
    next_id: i64,
    frames: u64,
    expected: Vec<Expected>,
    frame_limit: usize,
}

impl Session {
    /// One line, always ending in a newline so a broken line never eats its
    /// neighbour.
    fn step(&mut self) -> Vec<u8> {
        self.frames += 1;
        let mut line = match self.rng.below(10) {
            0..=5 => {
                let id = self.next_id;
                self.next_id += 1;
                let (bytes, answer_size) = self.request(json!(id));
                if bytes.len() <= self.frame_limit {
                    self.expected.push(Expected {
                        id,
                        too_large: answer_size > self.frame_limit,
                    });
                }
                bytes
            }
            6 => serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "echo", "params": [1]}))
                .expect("JSON"),
            _ => self.broken(),
        };
        line.push(b'\n');
        line
    }

    /// A sound request with `id`, and about how large its answer is (the
    /// answer's frame, or 0 when it is surely small).
    fn request(&mut self, id: Value) -> (Vec<u8>, usize) {
        let (method, params, answer_size) = match self.rng.below(4) {
            0 => {
                // Answers near the limit either side, and far past it.
                let size = match self.rng.below(3) {
                    0 => self.rng.below(self.frame_limit as u64) as usize / 2,
                    1 => self.frame_limit + self.rng.below(64) as usize,
                    _ => self.frame_limit * 2,
                };
                // The answer's frame: the string plus its envelope.
                let envelope = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":\"\"}}").len();
                ("big", json!({"size": size}), size + envelope)
            }
            1 => ("notify", json!({"n": self.rng.below(40)}), 0),
            // An echo's answer is shorter than its request.
            _ => ("echo", json!(["é".repeat(self.rng.below(200) as usize)]), 0),
        };
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        (serde_json::to_vec(&message).expect("JSON"), answer_size)
    }

    /// A request broken at the byte level, a blank line, an oversized line,
    /// JSON that is no request, or garbage.
    fn broken(&mut self) -> Vec<u8> {
        // String ids, so that a broken frame that still parses is not taken
        // for a sound request (whose ids are numbers).
        let id = format!("b{}", self.rng.below(1000));
        let (mut bytes, _) = self.request(json!(id));
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
            3 => bytes = b" \t\r".repeat(self.rng.below(3) as usize),
            4 => bytes = vec![b'['; self.frame_limit + 1 + self.rng.below(5000) as usize],
            5 => {
                bytes = (0..self.rng.below(300))
                    .map(|_| self.rng.next() as u8)
                    .collect();
            }
            6 => {
                let odd = [
                    json!([{"jsonrpc": "2.0", "id": 1, "method": "echo"}]),
                    json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "echo"}),
                    json!({"jsonrpc": "2.0", "id": "b-odd", "method": "rpc.nope"}),
                    json!({"jsonrpc": "2.0", "id": "b-odd", "method": "echo", "params": 3}),
                    json!({"jsonrpc": "2.0", "id": "b-odd", "result": {}}),
                    json!({"jsonrpc": "1.0", "id": "b-odd", "method": "echo"}),
                ];
                bytes = serde_json::to_vec(&odd[self.rng.below(odd.len() as u64) as usize])
                    .expect("JSON");
            }
            _ => {
                let depth = self.rng.below(300) as usize;
                bytes = format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes();
            }
        }
        bytes
    }
}
