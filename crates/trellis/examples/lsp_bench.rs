//! The language server's edit latency (issue 20): the time from writing a
//! `didChange` to reading the `publishDiagnostics` it causes, through the real
//! stdio transport of a `trellis lsp` process, at N = 2,000 synthetic
//! definitions (`trellis_db::synthetic`). Rows:
//!
//! - typing: a body edit of an open leaf buffer, flipped back and forth (the
//!   case of a person typing: the same file again and again);
//! - first edit: a body edit of a leaf opened just before, a fresh file each
//!   sample (opening pays the file's durability demotion, design §7.1);
//! - signature break: a leaf's spec signature made to return `Bool`, timed to the
//!   publication of a caller's new error (in another file, not open);
//! - undo: the signature restored, timed to the caller's diagnostics returning to
//!   what they were (the generated root carries `unexported-name` findings of its own);
//! - hover: a call's hover (signature, status, hashes) right after a body edit.
//!
//! Each row gives min and median over its samples; the goal for a body edit is
//! 10 ms. Run with `cargo build --release -p trellis && cargo run --release -p
//! trellis --example lsp_bench -- [N]` (default 2000). The machine is shared:
//! read the medians, and compare rows of one run rather than runs.

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use trellis_db::synthetic::{soil_path, spec_path, synthetic_root};

const SAMPLES: usize = 9;
const PER_MODULE: usize = 50;
const BODY_GOAL_MS: f64 = 10.0;
const WAIT: Duration = Duration::from_secs(120);

struct Server {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    messages: Receiver<Message>,
    root: PathBuf,
    next_id: i32,
    versions: std::collections::BTreeMap<String, i32>,
    /// How many diagnostics each URI's last publication carried (the synthetic
    /// root is not clean: some files carry findings before any edit).
    counts: std::cell::RefCell<std::collections::BTreeMap<String, usize>>,
}

impl Server {
    fn start(trellis: &Path, root: &Path) -> Result<Server, String> {
        let mut child = Command::new(trellis)
            .arg("lsp")
            .env("TRELLIS_ROOT", root)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start trellis lsp: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stdin = BufWriter::new(child.stdin.take().ok_or("no stdin")?);
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Ok(Some(message)) = Message::read(&mut reader) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Ok(Server {
            child,
            stdin,
            messages,
            root: root.to_owned(),
            next_id: 0,
            versions: Default::default(),
            counts: Default::default(),
        })
    }

    fn send(&mut self, message: Message) -> Result<(), String> {
        message
            .write(&mut self.stdin)
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("write to the server: {e}"))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<RequestId, String> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Request::new(id.clone(), method.to_owned(), params).into())?;
        Ok(id)
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.send(Notification::new(method.to_owned(), params).into())
    }

    fn uri(&self, path: &str) -> String {
        format!("file://{}/{path}", self.root.display())
    }

    /// Reads until `pick` accepts a message.
    fn until(&self, pick: impl FnMut(&Message) -> bool) -> Result<Instant, String> {
        self.until_for("a response", pick)
    }

    fn until_for(
        &self,
        what: &str,
        mut pick: impl FnMut(&Message) -> bool,
    ) -> Result<Instant, String> {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) => {
                    let picked = pick(&message);
                    if let Message::Notification(n) = &message
                        && n.method == "textDocument/publishDiagnostics"
                        && let Some(uri) = n.params["uri"].as_str()
                    {
                        self.counts
                            .borrow_mut()
                            .insert(uri.to_owned(), count(&n.params));
                    }
                    if picked {
                        return Ok(Instant::now());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("the server sent no {what} in {} s", WAIT.as_secs()));
                }
                Err(RecvTimeoutError::Disconnected) => return Err("the server exited".into()),
            }
        }
    }

    fn published(&self, uri: &str, accept: impl Fn(&Value) -> bool) -> Result<Instant, String> {
        self.until_for(&format!("diagnostics for {uri}"), |message| {
            matches!(message, Message::Notification(n)
                if n.method == "textDocument/publishDiagnostics"
                    && n.params["uri"] == uri
                    && accept(&n.params))
        })
    }

    fn open(&mut self, path: &str) -> Result<String, String> {
        let text = std::fs::read_to_string(self.root.join(path))
            .map_err(|e| format!("read {path}: {e}"))?;
        self.versions.insert(path.to_owned(), 1);
        let uri = self.uri(path);
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "soil", "version": 1, "text": text } }),
        )?;
        self.published(&uri, |p| p["version"] == 1)?;
        Ok(text)
    }

    /// Sends the whole new text as one change; returns when it was written and
    /// the version it carries.
    fn change(&mut self, path: &str, text: &str) -> Result<(Instant, i32), String> {
        let version = self.versions.get(path).copied().unwrap_or(1) + 1;
        self.versions.insert(path.to_owned(), version);
        let uri = self.uri(path);
        let sent = Instant::now();
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version },
                    "contentChanges": [{ "text": text }] }),
        )?;
        Ok((sent, version))
    }
}

fn count(params: &Value) -> usize {
    params["diagnostics"].as_array().map_or(0, Vec::len)
}

#[derive(Default)]
struct Row {
    name: &'static str,
    samples: Vec<Duration>,
}

impl Row {
    fn stats(&self) -> (f64, f64) {
        let mut sorted = self.samples.clone();
        sorted.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        (
            sorted.first().copied().map_or(0.0, ms),
            sorted.get(sorted.len() / 2).copied().map_or(0.0, ms),
        )
    }
}

fn main() {
    if let Err(message) = run() {
        eprintln!("lsp_bench: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let definitions: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|_| format!("not a count: {n}"))?,
        None => 2000,
    };
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let trellis = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("trellis"))
        .filter(|path| path.is_file())
        .ok_or_else(|| {
            format!(
                "no trellis binary next to {}; build it first with `cargo build --release -p trellis`",
                exe.display()
            )
        })?;
    let base = std::env::temp_dir().join(format!("tr-lsp-{}-{definitions}", std::process::id()));
    let root = base.join("root");
    let _ = std::fs::remove_dir_all(&base);
    let files = synthetic_root(definitions);
    for (relative, text) in &files {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap_or(&root))
            .map_err(|e| format!("mkdir: {e}"))?;
        std::fs::write(&path, text).map_err(|e| format!("write: {e}"))?;
    }
    let outcome = measure(&trellis, &root, &files, definitions);
    if std::env::var_os("TRELLIS_BENCH_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&base);
    }
    let rows = outcome?;
    println!(
        "trellis lsp bench: didChange → publishDiagnostics through stdio, N = {definitions}, {SAMPLES} samples a row"
    );
    println!("{:<18} {:>9} {:>9}", "row", "min ms", "median ms");
    for row in &rows {
        let (min, median) = row.stats();
        println!("{:<18} {min:>9.2} {median:>9.2}", row.name);
    }
    let (_, typing) = rows[1].stats();
    println!(
        "body edit (typing) median / goal {BODY_GOAL_MS} ms = {:.2}",
        typing / BODY_GOAL_MS
    );
    Ok(())
}

fn measure(
    trellis: &Path,
    root: &Path,
    files: &[(String, String)],
    definitions: usize,
) -> Result<Vec<Row>, String> {
    let mut server = Server::start(trellis, root)?;
    let started = Instant::now();
    let init = server.request(
        "initialize",
        json!({ "capabilities": {}, "rootUri": format!("file://{}", root.display()) }),
    )?;
    server.until(|m| matches!(m, Message::Response(r) if r.id == init))?;
    server.notify("initialized", json!({}))?;
    let modules = definitions.div_ceil(PER_MODULE);
    // The first open waits for the cold check of the whole root.
    let typed = soil_path(modules / 2 * PER_MODULE + 1);
    let typed_text = server.open(&typed)?;
    let cold = Row {
        name: "open (cold check)",
        samples: vec![started.elapsed()],
    };

    let mut typing = Row {
        name: "typing",
        ..Row::default()
    };
    let edited = typed_text.replacen("let base = x *", "let base = 1 + x *", 1);
    for sample in 0..=SAMPLES {
        let text = if sample % 2 == 0 {
            &edited
        } else {
            &typed_text
        };
        let (sent, version) = server.change(&typed, text)?;
        let uri = server.uri(&typed);
        let done = server.published(&uri, |p| p["version"] == version)?;
        // The first flip is the buffer's first edit: keep it out of the row.
        if sample > 0 {
            typing.samples.push(done - sent);
        }
    }

    let mut first = Row {
        name: "first edit",
        ..Row::default()
    };
    for sample in 0..SAMPLES {
        let module = (sample * 7 + 3) % modules;
        let path = soil_path(module * PER_MODULE + 2);
        let text = server.open(&path)?;
        let (sent, version) = server.change(
            &path,
            &text.replacen("let base = x *", "let base = 1 + x *", 1),
        )?;
        let uri = server.uri(&path);
        let done = server.published(&uri, |p| p["version"] == version)?;
        first.samples.push(done - sent);
    }

    let mut broken = Row {
        name: "signature break",
        ..Row::default()
    };
    let mut undo = Row {
        name: "undo",
        ..Row::default()
    };
    for sample in 0..SAMPLES {
        let module = (sample * 11 + 5) % modules;
        let leaf = module * PER_MODULE + (sample % 10);
        let name = format!("f{leaf:05}");
        // A caller: a synthetic body naming the leaf (same module or a later one).
        let Some(caller) = files.iter().find_map(|(path, text)| {
            (path.ends_with(".soil") && *path != soil_path(leaf) && calls(text, &name))
                .then(|| path.clone())
        }) else {
            continue;
        };
        let path = spec_path(leaf);
        let spec = server.open(&path)?;
        let wrong = spec.replacen("(x : I64) -> I64", "(x : I64) -> Bool", 1);
        let caller_uri = server.uri(&caller);
        let before = server
            .counts
            .borrow()
            .get(&caller_uri)
            .copied()
            .unwrap_or(0);
        let (sent, _) = server.change(&path, &wrong)?;
        let done = server.published(&caller_uri, |p| count(p) > before)?;
        broken.samples.push(done - sent);
        let (sent, _) = server.change(&path, &spec)?;
        let done = server.published(&caller_uri, |p| count(p) == before)?;
        undo.samples.push(done - sent);
    }

    let mut hover = Row {
        name: "hover after edit",
        ..Row::default()
    };
    for sample in 0..SAMPLES {
        let text = if sample % 2 == 0 {
            &edited
        } else {
            &typed_text
        };
        server.change(&typed, text)?;
        let uri = server.uri(&typed);
        let sent = Instant::now();
        let id = server.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 1 } }),
        )?;
        let done = server.until(|m| matches!(m, Message::Response(r) if r.id == id))?;
        hover.samples.push(done - sent);
    }

    let shutdown = server.request("shutdown", Value::Null)?;
    server.until(|m| matches!(m, Message::Response(r) if r.id == shutdown))?;
    server.notify("exit", Value::Null)?;
    let _ = server.child.wait();
    Ok(vec![cold, typing, first, broken, undo, hover])
}

/// Whether a synthetic body calls `name` (bare or qualified).
fn calls(text: &str, name: &str) -> bool {
    text.lines()
        .skip(1)
        .any(|line| line.contains(&format!(" {name} (")) || line.contains(&format!("::{name} (")))
}
