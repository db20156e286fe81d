//! The server end to end over an in-memory connection, with a host whose disk is
//! a map: what is published and when (each open document's diagnostics carry its
//! version; a caller's appear when its callee's signature breaks and go when the
//! edit is undone), that an edit cancels a re-check still running (salsa unwinds
//! the snapshot; the server says so in a log message), that a request is
//! answered while a re-check runs, and a soil.toml that does not parse.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use trellis_db::{Change, RootDatabase};
use trellis_diag::Diagnostic;
use trellis_lsp::{DiskRefresh, Host, RootDisk};

const ROOT: &str = "/virtual/root";

struct MapHost {
    files: Vec<(String, String)>,
    /// Every `trellis` command the server asked the host to run.
    ran: Arc<std::sync::Mutex<Vec<Vec<String>>>>,
    writes: Writes,
}

/// Files written to the "disk" after the first load, reported by the next refresh.
type Writes = Arc<std::sync::Mutex<Vec<(String, String)>>>;

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

/// A client on one end of the connection, the server on a thread at the other.
struct Client {
    connection: Connection,
    server: Option<std::thread::JoinHandle<Result<(), String>>>,
    ran: Arc<std::sync::Mutex<Vec<Vec<String>>>>,
    writes: Writes,
    next_id: i32,
    /// Every message read, in order.
    seen: Vec<Message>,
    /// Those not yet picked by a wait (a wait looks here first).
    unpicked: Vec<usize>,
}

const WAIT: Duration = Duration::from_secs(60);

impl Client {
    fn start(files: Vec<(String, String)>) -> Client {
        let (server_end, client_end) = Connection::memory();
        let ran = Arc::new(std::sync::Mutex::new(Vec::new()));
        let writes = Writes::default();
        let host = MapHost {
            files,
            ran: ran.clone(),
            writes: writes.clone(),
        };
        let server = std::thread::spawn(move || {
            trellis_lsp::serve(server_end, Arc::new(host), RootDatabase::default())
        });
        let mut client = Client {
            connection: client_end,
            server: Some(server),
            ran,
            writes,
            next_id: 0,
            seen: Vec::new(),
            unpicked: Vec::new(),
        };
        let init = client.request(
            "initialize",
            json!({
                "capabilities": { "workspace": { "codeLens": { "refreshSupport": true } } },
                "rootUri": format!("file://{ROOT}"),
            }),
        );
        let answer = client.response(init);
        assert_eq!(answer["capabilities"]["positionEncoding"], "utf-16");
        client.notify("initialized", json!({}));
        client
    }

    fn request(&mut self, method: &str, params: Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let request = Request::new(id.clone(), method.to_owned(), params);
        self.connection.sender.send(request.into()).expect("send");
        id
    }

    fn notify(&self, method: &str, params: Value) {
        let notification = Notification::new(method.to_owned(), params);
        self.connection
            .sender
            .send(notification.into())
            .expect("send");
    }

    /// The first message, read before or now, that `pick` accepts and no earlier
    /// wait picked.
    fn until<T>(&mut self, mut pick: impl FnMut(&Message) -> Option<T>) -> T {
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

    fn response(&mut self, id: RequestId) -> Value {
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
    fn published(&mut self, uri: &str, accept: impl Fn(&Value) -> bool) -> Value {
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

    fn open(&self, path: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": {
                "uri": uri(path), "languageId": "soil", "version": 1, "text": text
            }}),
        );
    }

    fn replace(&self, path: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri(path), "version": version },
                "contentChanges": [{ "text": text }],
            }),
        );
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let id = self.request("shutdown", Value::Null);
        self.response(id);
        self.notify("exit", Value::Null);
        if let Some(server) = self.server.take() {
            let outcome = server.join().expect("the server thread ends");
            assert_eq!(outcome, Ok(()));
        }
    }
}

fn uri(path: &str) -> String {
    format!("file://{ROOT}/{path}")
}

fn small_root() -> Vec<(String, String)> {
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

fn count(params: &Value) -> usize {
    params["diagnostics"].as_array().map_or(0, Vec::len)
}

#[test]
fn diagnostics_follow_edits_with_versions_callers_included() {
    let root = small_root();
    let mut client = Client::start(root.clone());
    let spec = &root.iter().find(|(p, _)| p == "m/double.tr").unwrap().1;
    client.open("m/double.tr", spec);
    let opened = client.published(&uri("m/double.tr"), |_| true);
    assert_eq!(opened["version"], 1);
    assert_eq!(count(&opened), 0, "{opened}");

    let broken = spec.replace("-> I64", "-> Bool");
    client.replace("m/double.tr", 2, &broken);
    let caller = client.published(&uri("m/quad.soil"), |p| count(p) > 0);
    assert_eq!(caller["version"], Value::Null, "quad.soil is not open");
    assert_eq!(caller["diagnostics"][0]["code"], "type-mismatch");
    assert_eq!(
        caller["diagnostics"][0]["codeDescription"]["href"],
        "trellis-spec:soil0-cli#9.2"
    );
    assert_eq!(caller["diagnostics"][0]["source"], "trellis (fix-types)");

    client.replace("m/double.tr", 3, spec);
    let cleared = client.published(&uri("m/quad.soil"), |p| count(p) == 0);
    assert_eq!(count(&cleared), 0);
    let own = client.published(&uri("m/double.tr"), |p| p["version"] == 3);
    assert_eq!(count(&own), 0);
}

#[test]
fn a_broken_soil_toml_is_reported_and_the_rest_keeps_answering() {
    let root = small_root();
    let mut client = Client::start(root.clone());
    client.open("soil.toml", "[toolchain\n");
    let broken = client.published(&uri("soil.toml"), |p| count(p) > 0);
    assert_eq!(broken["diagnostics"][0]["code"], "config-invalid");
    client.open("m/quad.soil", "quad x = double (double x)\n");
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri("m/quad.soil") },
                "position": { "line": 0, "character": 10 } }),
    );
    let answer = client.response(hover);
    let text = answer["contents"]["value"].as_str().unwrap_or_default();
    assert!(text.contains("double : (x : I64) -> I64"), "{answer}");
}

/// An edit during the cold check of a large root cancels it; a hover sent while
/// the next re-check runs is answered; the last version's diagnostics arrive.
#[test]
fn an_edit_cancels_the_running_check_and_requests_do_not_wait_for_it() {
    let files = trellis_db::synthetic::synthetic_root(1000);
    let leaf_path = trellis_db::synthetic::soil_path(3);
    let leaf = files
        .iter()
        .find(|(p, _)| *p == leaf_path)
        .unwrap()
        .1
        .clone();
    let mut client = Client::start(files);
    // The cold check of every definition is running now: this edit overtakes it.
    client.open(
        &leaf_path,
        &leaf.replace("let base = x *", "let base = 1 + x *"),
    );
    let cancelled = client.until(|message| match message {
        Message::Notification(n) if n.method == "window/logMessage" => {
            n.params["message"].as_str().map(str::to_owned)
        }
        _ => None,
    });
    assert!(cancelled.contains("cancelled by an edit"), "{cancelled}");
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&leaf_path) },
                "position": { "line": 0, "character": 1 } }),
    );
    let answer = client.response(hover);
    assert!(
        answer["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .contains("f00003"),
        "{answer}"
    );
    let final_diagnostics = client.published(&uri(&leaf_path), |p| p["version"] == 1);
    assert_eq!(count(&final_diagnostics), 0);
    // No publication was made for a revision the edit had overtaken: the only
    // one for the leaf is the final one.
    let for_leaf = client
        .seen
        .iter()
        .filter(|m| {
            matches!(m, Message::Notification(n)
            if n.method == "textDocument/publishDiagnostics" && n.params["uri"] == uri(&leaf_path))
        })
        .count();
    assert_eq!(for_leaf, 1);
}

/// A lens shows the status row and runs its fix through the host — the server
/// itself writes nothing.
#[test]
fn a_status_lens_runs_its_fix_through_the_host() {
    let root = small_root();
    let mut client = Client::start(root.clone());
    let spec = &root.iter().find(|(p, _)| p == "m/double.tr").unwrap().1;
    client.open("m/double.tr", spec);
    let lenses = client.request(
        "textDocument/codeLens",
        json!({ "textDocument": { "uri": uri("m/double.tr") } }),
    );
    let lenses = client.response(lenses);
    let command = &lenses[0]["command"];
    assert_eq!(
        command["title"],
        "not-lowered: a .soil file exists but no lowering is recorded for it — run `trellis adopt m::double`"
    );
    assert_eq!(command["command"], "trellis.run");
    let run = client.request(
        "workspace/executeCommand",
        json!({ "command": "trellis.run", "arguments": command["arguments"] }),
    );
    let answer = client.response(run);
    assert_eq!(
        answer["ran"][0]["output"], "ran adopt m::double",
        "{answer}"
    );
    assert_eq!(
        *client.ran.lock().unwrap(),
        vec![vec!["adopt".to_owned(), "m::double".to_owned()]]
    );
}

/// A lock written on disk (as `trellis adopt` writes one) reaches the server
/// through its disk, and the editor is asked to fetch its lenses again.
#[test]
fn a_lock_written_on_disk_refreshes_the_lenses() {
    let root = small_root();
    let mut client = Client::start(root.clone());
    let spec = &root.iter().find(|(p, _)| p == "m/double.tr").unwrap().1;
    client.open("m/double.tr", spec);
    client.published(&uri("m/double.tr"), |_| true);
    client
        .writes
        .lock()
        .unwrap()
        .push(("m/double.lock".to_owned(), "not a lock".to_owned()));
    client.until(|message| match message {
        Message::Request(request) if request.method == "workspace/codeLens/refresh" => Some(()),
        _ => None,
    });
    let lenses = client.request(
        "textDocument/codeLens",
        json!({ "textDocument": { "uri": uri("m/double.tr") } }),
    );
    let lenses = client.response(lenses);
    let title = lenses[0]["command"]["title"].as_str().unwrap_or_default();
    assert!(title.starts_with("lock-unreadable"), "{lenses}");
    // And the unreadable lock is reported on the lock itself.
    let on_lock = client.published(&uri("m/double.lock"), |p| count(p) > 0);
    assert!(
        on_lock["diagnostics"][0]["code"]
            .as_str()
            .unwrap_or_default()
            .starts_with("lock-")
    );
}

struct NoRoot;

impl Host for NoRoot {
    fn find_root(&self, _folder: Option<&Path>) -> Result<PathBuf, Diagnostic> {
        Err(Diagnostic::new(
            "config-no-root",
            "no soil.toml above /tmp/x",
        ))
    }

    fn disk(&self, _root: &Path) -> Box<dyn RootDisk> {
        unreachable!("no root, no disk")
    }

    fn run_trellis(&self, _root: &Path, _args: &[String]) -> Result<String, String> {
        Err("no root".to_owned())
    }
}

/// Without a root the server still serves: every document is checked for its
/// syntax alone, says why, and formats.
#[test]
fn without_a_root_documents_get_their_syntax_checked_and_formatting() {
    let (server_end, client) = Connection::memory();
    let server = std::thread::spawn(move || {
        trellis_lsp::serve(server_end, Arc::new(NoRoot), RootDatabase::default())
    });
    let send = |message: Message| client.sender.send(message).expect("send");
    send(
        Request::new(
            RequestId::from(1),
            "initialize".to_owned(),
            json!({ "capabilities": {} }),
        )
        .into(),
    );
    send(Notification::new("initialized".to_owned(), json!({})).into());
    let document = "file:///tmp/x/lone.soil";
    send(
        Notification::new(
            "textDocument/didOpen".to_owned(),
            json!({ "textDocument": { "uri": document, "languageId": "soil", "version": 1,
                                      "text": "f   x =  x+1\n" } }),
        )
        .into(),
    );
    send(
        Request::new(
            RequestId::from(2),
            "textDocument/formatting".to_owned(),
            json!({ "textDocument": { "uri": document },
                    "options": { "tabSize": 2, "insertSpaces": true } }),
        )
        .into(),
    );
    let (mut published, mut formatted) = (None, None);
    while published.is_none() || formatted.is_none() {
        match client
            .receiver
            .recv_timeout(WAIT)
            .expect("the server answers")
        {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                published = Some(n.params)
            }
            Message::Response(r) if r.id == RequestId::from(2) => {
                formatted = r.response_result.ok()
            }
            _ => {}
        }
    }
    let published = published.unwrap();
    assert_eq!(published["diagnostics"].as_array().map(Vec::len), Some(1));
    assert_eq!(published["diagnostics"][0]["code"], "root-outside");
    let message = published["diagnostics"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("no root (no soil.toml above /tmp/x)"),
        "{message}"
    );
    assert_eq!(formatted.unwrap()[0]["newText"], "f x = x + 1\n");
    send(Request::new(RequestId::from(3), "shutdown".to_owned(), Value::Null).into());
    send(Notification::new("exit".to_owned(), Value::Null).into());
    assert_eq!(server.join().expect("the server ends"), Ok(()));
}
