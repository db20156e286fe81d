//! What the server's integration tests share: a host whose disk is a map, a
//! client over an in-memory connection (messages), and a client over pipes
//! through the server's own transport (bytes), with the roots they serve.

#![allow(dead_code, reason = "each test file uses part of the support")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use trellis_db::{Change, RootDatabase};
use trellis_diag::Diagnostic;
use trellis_lsp::transport::{Bounds, IoThreads};
use trellis_lsp::{DiskRefresh, Host, RootDisk};

pub const ROOT: &str = "/virtual/root";
/// How long a test waits for an answer: far past any the server needs.
pub const WAIT: Duration = Duration::from_secs(60);

/// Files written to the "disk" after the first load, reported by the next refresh.
pub type Writes = Arc<Mutex<Vec<(String, String)>>>;
/// Every `trellis` command the server asked the host to run.
pub type Ran = Arc<Mutex<Vec<Vec<String>>>>;

pub struct MapHost {
    pub files: Vec<(String, String)>,
    pub ran: Ran,
    pub writes: Writes,
}

struct MapDisk {
    files: Option<Vec<(String, String)>>,
    writes: Writes,
}

impl RootDisk for MapDisk {
    fn refresh(&mut self) -> DiskRefresh {
        let mut change = Change::default();
        let written = std::mem::take(&mut *self.writes.lock().expect("writes"));
        for (path, text) in self
            .files
            .take()
            .unwrap_or_default()
            .into_iter()
            .chain(written)
        {
            change.set_root_file(path, text);
        }
        DiskRefresh {
            change,
            problems: Vec::new(),
        }
    }
}

impl Host for MapHost {
    fn find_root(&self, _folder: Option<&Path>) -> Result<PathBuf, Diagnostic> {
        Ok(PathBuf::from(ROOT))
    }

    fn disk(&self, _root: &Path) -> Box<dyn RootDisk> {
        Box::new(MapDisk {
            files: Some(self.files.clone()),
            writes: self.writes.clone(),
        })
    }

    fn run_trellis(&self, _root: &Path, args: &[String]) -> Result<String, String> {
        self.ran.lock().expect("the log").push(args.to_vec());
        Ok(format!("ran {}", args.join(" ")))
    }
}

pub fn uri(path: &str) -> String {
    format!("file://{ROOT}/{path}")
}

pub fn count(params: &Value) -> usize {
    params["diagnostics"].as_array().map_or(0, Vec::len)
}

pub fn small_root() -> Vec<(String, String)> {
    let spec = |name: &str, sig: &str| {
        format!(
            "---\nname: {name}\n---\n\n# {name}\n\nA definition.\n\n```soil-sig\n{sig}\n```\n\n```test basics\n{name}(1) -> 2\n```\n"
        )
    };
    [
        (
            "soil.toml",
            "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n".to_owned(),
        ),
        ("m/double.tr", spec("double", "double : (x : I64) -> I64")),
        ("m/double.soil", "double x = x + x\n".to_owned()),
        ("m/quad.tr", spec("quad", "quad : (x : I64) -> I64")),
        ("m/quad.soil", "quad x = double (double x)\n".to_owned()),
    ]
    .into_iter()
    .map(|(path, text)| (path.to_owned(), text))
    .collect()
}

/// The characters the position bugs were found with: an em dash, curly quotes,
/// an arrow, a no-break space (two UTF-8 bytes, one UTF-16 unit), emoji (four
/// bytes, a surrogate pair) and a combining accent.
pub const MULTI_BYTE: &[char] = &['—', '“', '”', '→', '\u{a0}', '😀', '𝄞', '\u{301}'];

/// A root whose prose, string literals, comments and decisions are full of
/// multi-byte characters, in two modules: `text` exports `shout` and keeps
/// `_echo` private; `app` calls across.
pub fn multi_byte_root() -> Vec<(String, String)> {
    let chars: String = MULTI_BYTE.iter().collect();
    [
        (
            "soil.toml",
            "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n".to_owned(),
        ),
        (
            "_project.tr",
            format!(
                "---\nname: project\n---\n\n# The project — “quoted” → 😀\n\nProse{chars}with\u{a0}spaces.\n"
            ),
        ),
        (
            "text/_module.tr",
            format!(
                "---\nname: text\n---\n\n# text — “strings” → 😀\n\nShouting{chars}: `shout`.\n\n```exports\nshout\n```\n"
            ),
        ),
        (
            "text/shout.tr",
            format!(
                "---\nname: shout\n---\n\n# shout\n\nAdds — “emphasis” → 😀 to `s`{chars}.\n\n```soil-sig\nshout : (s : Utf8) -> Utf8\n```\n\n```test basics\nshout(\"“a”\") -> \"“a”—😀\"\n```\n"
            ),
        ),
        (
            "text/shout.soil",
            "shout s =\n  _echo (s ++ \"—😀\")\n".to_owned(),
        ),
        (
            "text/_private.soil",
            format!("_echo : (s : Utf8) -> Utf8\n\n_echo s =\n  let tail = \"{chars}\" in\n  if s == tail then s else s\n"),
        ),
        (
            "app/_module.tr",
            "---\nname: app\n---\n\n# app → 😀\n\nCalls `text`.\n".to_owned(),
        ),
        (
            "app/main.tr",
            format!(
                "---\nname: main\n---\n\n# main\n\nShouts{chars}“hello”.\n\n```soil-sig\nmain : (x : Utf8) -> Utf8\n```\n\n```test basics\nmain(\"😀\") -> \"😀—😀\"\n```\n"
            ),
        ),
        (
            "app/main.soil",
            "main x =\n  let greeting = \"— “hi” → \u{a0}😀\" in\n  text::shout (greeting ++ x)\n"
                .to_owned(),
        ),
    ]
    .into_iter()
    .map(|(path, text)| (path.to_owned(), text))
    .collect()
}

/// `initialize`'s params: the root, and UTF-8 positions when asked.
pub fn initialize_params(utf8: bool) -> Value {
    let mut params = json!({
        "capabilities": { "workspace": { "codeLens": { "refreshSupport": true } } },
        "rootUri": format!("file://{ROOT}"),
    });
    if utf8 {
        params["capabilities"]["general"] = json!({ "positionEncodings": ["utf-8", "utf-16"] });
    }
    params
}

/// A client on one end of an in-memory connection, the server on a thread at
/// the other.
pub struct Client {
    pub connection: Connection,
    server: Option<std::thread::JoinHandle<Result<(), String>>>,
    pub ran: Ran,
    pub writes: Writes,
    next_id: i32,
    /// Every message read, in order.
    pub seen: Vec<Message>,
    /// Those not yet picked by a wait (a wait looks here first).
    unpicked: Vec<usize>,
}

impl Client {
    pub fn start(files: Vec<(String, String)>) -> Client {
        Client::start_encoded(files, false)
    }

    /// An initialized client whose positions count UTF-8 bytes, or UTF-16 units.
    pub fn start_encoded(files: Vec<(String, String)>, utf8: bool) -> Client {
        let mut client = Client::connect(files);
        let init = client.request("initialize", initialize_params(utf8));
        let answer = client.response(init);
        let expected = if utf8 { "utf-8" } else { "utf-16" };
        assert_eq!(answer["capabilities"]["positionEncoding"], expected);
        client.notify("initialized", json!({}));
        client
    }

    /// A client that has sent nothing yet.
    pub fn connect(files: Vec<(String, String)>) -> Client {
        let (server_end, client_end) = Connection::memory();
        let ran = Ran::default();
        let writes = Writes::default();
        let host = MapHost {
            files,
            ran: ran.clone(),
            writes: writes.clone(),
        };
        let server = std::thread::spawn(move || {
            trellis_lsp::serve(server_end, Arc::new(host), RootDatabase::default())
        });
        Client {
            connection: client_end,
            server: Some(server),
            ran,
            writes,
            next_id: 0,
            seen: Vec::new(),
            unpicked: Vec::new(),
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let request = Request::new(id.clone(), method.to_owned(), params);
        self.connection.sender.send(request.into()).expect("send");
        id
    }

    pub fn notify(&self, method: &str, params: Value) {
        let notification = Notification::new(method.to_owned(), params);
        self.connection
            .sender
            .send(notification.into())
            .expect("send");
    }

    /// The first message, read before or now, that `pick` accepts and no earlier
    /// wait picked.
    pub fn until<T>(&mut self, mut pick: impl FnMut(&Message) -> Option<T>) -> T {
        for at in 0..self.unpicked.len() {
            if let Some(found) = pick(&self.seen[self.unpicked[at]]) {
                self.unpicked.remove(at);
                return found;
            }
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(message) = self.connection.receiver.recv_timeout(left) else {
                panic!(
                    "the server did not answer in time; it sent: {:#?}",
                    self.seen
                );
            };
            let found = pick(&message);
            self.seen.push(message);
            match found {
                Some(found) => return found,
                None => self.unpicked.push(self.seen.len() - 1),
            }
        }
    }

    /// A response's result, or `{"error": code, "message": …}`.
    pub fn response(&mut self, id: RequestId) -> Value {
        self.until(|message| match message {
            Message::Response(response) if response.id == id => {
                Some(match &response.response_result {
                    Ok(value) => value.clone(),
                    Err(error) => json!({ "error": error.code, "message": error.message }),
                })
            }
            _ => None,
        })
    }

    /// The next publication for `uri` whose diagnostics satisfy `accept`.
    pub fn published(&mut self, uri: &str, accept: impl Fn(&Value) -> bool) -> Value {
        self.until(|message| match message {
            Message::Notification(n)
                if n.method == "textDocument/publishDiagnostics"
                    && n.params["uri"] == uri
                    && accept(&n.params) =>
            {
                Some(n.params.clone())
            }
            _ => None,
        })
    }

    /// The params of the next notification of `method` whose message holds
    /// `text`.
    pub fn notified(&mut self, method: &str, text: &str) -> Value {
        self.until(|message| match message {
            Message::Notification(n)
                if n.method == method
                    && n.params["message"]
                        .as_str()
                        .is_some_and(|message| message.contains(text)) =>
            {
                Some(n.params.clone())
            }
            _ => None,
        })
    }

    pub fn open(&self, path: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": {
                "uri": uri(path), "languageId": "soil", "version": 1, "text": text
            }}),
        );
    }

    pub fn replace(&self, path: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri(path), "version": version },
                "contentChanges": [{ "text": text }],
            }),
        );
    }

    /// Shuts the server down and checks it ended well.
    pub fn finish(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        let Some(server) = self.server.take() else {
            return;
        };
        let id = self.request("shutdown", Value::Null);
        self.response(id);
        self.notify("exit", Value::Null);
        let outcome = server.join().expect("the server thread ends");
        assert_eq!(outcome, Ok(()));
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.shut_down();
        }
    }
}

/// How a server behind a transport ended: what `serve` returned, and what the
/// transport's threads said when joined.
pub type Ended = (Result<(), String>, Result<(), String>);

/// A client speaking bytes to the server through its transport over pipes, as
/// an editor does over stdio; frames it reads back are parsed on a thread.
pub struct WireClient {
    input: Option<std::io::PipeWriter>,
    pub messages: Receiver<Value>,
    server: Option<std::thread::JoinHandle<Ended>>,
    next_id: i64,
}

impl WireClient {
    /// A server on `files` behind a transport with `bounds`, initialized.
    pub fn start(files: Vec<(String, String)>, bounds: Bounds) -> WireClient {
        let mut client = WireClient::connect(files, bounds);
        let id = client.request("initialize", initialize_params(false));
        let answer = client.response(id);
        assert!(answer["result"]["capabilities"].is_object(), "{answer}");
        client.notify("initialized", json!({}));
        client
    }

    /// A server that has read nothing yet.
    pub fn connect(files: Vec<(String, String)>, bounds: Bounds) -> WireClient {
        let (client, output) = WireClient::connect_with(files, bounds, true);
        assert!(output.is_none());
        client
    }

    /// A server that has read nothing yet; unless `drain`, nothing reads what
    /// it writes but the caller, who gets the pipe's end (a client that never
    /// reads holds it and reads nothing).
    pub fn connect_with(
        files: Vec<(String, String)>,
        bounds: Bounds,
        drain: bool,
    ) -> (WireClient, Option<std::io::PipeReader>) {
        let (server_reads, client_writes) = std::io::pipe().expect("a pipe");
        let (client_reads, server_writes) = std::io::pipe().expect("a pipe");
        let server = std::thread::spawn(move || {
            let (connection, io_threads): (Connection, IoThreads) =
                trellis_lsp::transport::over(server_reads, server_writes, bounds);
            let host = MapHost {
                files,
                ran: Ran::default(),
                writes: Writes::default(),
            };
            let served = trellis_lsp::serve(connection, Arc::new(host), RootDatabase::default());
            (served, io_threads.join())
        });
        let (sink, messages) = crossbeam_channel::unbounded();
        let undrained = if drain {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(client_reads);
                while let Some(body) = read_frame(&mut reader) {
                    let value = serde_json::from_slice(&body).expect("the server writes JSON");
                    if sink.send(value).is_err() {
                        break;
                    }
                }
            });
            None
        } else {
            Some(client_reads)
        };
        let client = WireClient {
            input: Some(client_writes),
            messages,
            server: Some(server),
            next_id: 0,
        };
        (client, undrained)
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("the input is open");
        input.write_all(bytes).expect("the server reads");
        input.flush().expect("the server reads");
    }

    /// Writes `bytes`; false when the server has stopped reading.
    pub fn try_send_raw(&mut self, bytes: &[u8]) -> bool {
        let input = self.input.as_mut().expect("the input is open");
        input.write_all(bytes).and_then(|()| input.flush()).is_ok()
    }

    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_string(message).expect("JSON");
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The next response whose id is `id`, whole (`result` or `error`).
    pub fn response(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        self.next(|message| message.get("method").is_none() && message["id"] == id)
    }

    /// The next message `accept` takes (the others are dropped).
    pub fn next(&mut self, accept: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .expect("the server answers in time");
            if accept(&message) {
                return message;
            }
        }
    }

    /// Closes the server's input and returns how the server and its
    /// transport ended.
    pub fn close(mut self) -> Ended {
        self.input = None;
        let server = self.server.take().expect("the server runs");
        server.join().expect("the server thread ends")
    }
}

/// One frame's body from a trusted stream (the server's output); none at its end.
pub fn read_frame(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// This process's resident memory in bytes (Linux), or none elsewhere.
#[allow(
    clippy::disallowed_methods,
    reason = "a test reads its own /proc entry"
)]
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
