//! The server end to end over an in-memory connection, with a host whose disk is
//! a map: what is published and when (each open document's diagnostics carry its
//! version; a caller's appear when its callee's signature breaks and go when the
//! edit is undone), that an edit cancels a re-check still running (salsa unwinds
//! the snapshot; the server says so in a log message), that a request is
//! answered while a re-check runs, and a soil.toml that does not parse.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use support::{Client, WAIT, count, small_root, uri};
use trellis_db::RootDatabase;
use trellis_diag::Diagnostic;
use trellis_lsp::{Host, RootDisk};

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

/// Params that do not fit answer `InvalidParams` — `initialize`'s too, after
/// which the client may try again — whether or not the document is open;
/// requests before `initialize` answer `ServerNotInitialized`.
#[test]
fn params_that_do_not_fit_answer_invalid_params() {
    let mut client = Client::connect(small_root());
    let early = client.request("textDocument/hover", json!({}));
    assert_eq!(client.response(early)["error"], -32002);
    let bad = client.request("initialize", json!({ "capabilities": 5 }));
    let answer = client.response(bad);
    assert_eq!(answer["error"], -32602, "{answer}");
    let good = client.request("initialize", support::initialize_params(false));
    assert!(client.response(good)["capabilities"].is_object());
    client.notify("initialized", json!({}));

    let position = json!({ "line": 0, "character": 0 });
    for (method, params) in [
        (
            "textDocument/hover",
            json!({ "textDocument": 5, "position": position }),
        ),
        (
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri("m/quad.soil") } }),
        ),
        (
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": 7 } }),
        ),
        ("textDocument/documentSymbol", json!({})),
        (
            "textDocument/formatting",
            json!({ "textDocument": { "uri": uri("m/quad.soil") } }),
        ),
        ("workspace/executeCommand", json!({ "command": 3 })),
        (
            "workspace/executeCommand",
            json!({ "command": "trellis.readSpec", "arguments": [] }),
        ),
        ("trellis/readSpec", json!({ "reference": "design#9.9" })),
    ] {
        let id = client.request(method, params.clone());
        let answer = client.response(id);
        assert_eq!(answer["error"], -32602, "{method} {params}: {answer}");
    }
    // Params that fit, about a document that is not open: nothing to say.
    let closed = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri("m/quad.soil") }, "position": position }),
    );
    assert_eq!(client.response(closed), Value::Null);
    let unknown = client.request("textDocument/rename", json!({}));
    assert_eq!(client.response(unknown)["error"], -32601);
    let again = client.request("initialize", support::initialize_params(false));
    assert_eq!(client.response(again)["error"], -32600);
}

/// An edit that names no place in the server's text (a line it does not have,
/// the middle of a character) is not applied anywhere else: the document is
/// diverged — the client is told, and requests on it fail — until its whole
/// text arrives, which brings it back.
#[test]
fn an_edit_that_cannot_be_applied_diverges_the_document_until_its_whole_text_arrives() {
    let mut client = Client::start(small_root());
    let path = "m/quad.soil";
    client.open(path, "quad x = double (double x) -- 😀\n");
    client.published(&uri(path), |p| p["version"] == 1);
    let change = |version: i32, line: u32, character: u32| {
        json!({
            "textDocument": { "uri": uri(path), "version": version },
            "contentChanges": [{
                "range": { "start": { "line": line, "character": character },
                           "end": { "line": line, "character": character } },
                "text": "!"
            }],
        })
    };
    // Inside the emoji's surrogate pair (UTF-16 column 31 of 30..32).
    client.notify("textDocument/didChange", change(2, 0, 31));
    let shown = client.notified("window/showMessage", "lost track of");
    let message = shown["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("lost track of") && message.contains("falls inside a character"),
        "{message}"
    );
    assert_eq!(shown["type"], 1, "an error");
    let hover = json!({ "textDocument": { "uri": uri(path) },
                        "position": { "line": 0, "character": 10 } });
    let refused = client.request("textDocument/hover", hover.clone());
    let answer = client.response(refused);
    assert_eq!(answer["error"], -32803, "{answer}");
    // Later range edits stay unapplied, with no second message.
    client.notify("textDocument/didChange", change(3, 0, 0));
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(path), "version": 4 }, "contentChanges": 5 }),
    );
    client.replace(path, 5, "quad x = double (double x)\n");
    client.notified("window/logMessage", "has the whole text of");
    let answered = client.request("textDocument/hover", hover);
    let answer = client.response(answered);
    assert!(
        answer["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .contains("double"),
        "{answer}"
    );
    client.published(&uri(path), |p| p["version"] == 5);
    let messages = client
        .seen
        .iter()
        .filter(|m| matches!(m, Message::Notification(n) if n.method == "window/showMessage"))
        .count();
    assert_eq!(messages, 1);

    // Params that do not fit diverge an open document too.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(path), "version": 6 }, "contentChanges": 5 }),
    );
    client.notified("window/showMessage", "a didChange whose params do not fit");
}

/// `other::` completes what `other` exports, never its private names (which a
/// call could not use: `unexported-name`); a module's own names, helpers
/// included, complete inside it.
#[test]
fn completion_offers_only_what_another_module_exports() {
    let mut client = Client::start(support::multi_byte_root());
    let labels = |client: &mut Client, path: &str, text: &str, at: &str| {
        client.open(path, text);
        let before = &text[..text.find(at).expect("the probe") + at.len()];
        let line = before.matches('\n').count() as u32;
        let column = before.rsplit('\n').next().unwrap_or_default();
        let id = client.request(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri(path) },
                    "position": { "line": line, "character": column.encode_utf16().count() } }),
        );
        let answer = client.response(id);
        let labels: Vec<String> = answer
            .as_array()
            .unwrap_or_else(|| panic!("completion answers a list: {answer}"))
            .iter()
            .map(|item| item["label"].as_str().unwrap_or_default().to_owned())
            .collect();
        labels
    };
    let across = labels(
        &mut client,
        "app/main.soil",
        "main x =\n  text::sh x\n",
        "text::",
    );
    assert_eq!(across, ["shout"]);
    let inside = labels(
        &mut client,
        "text/shout.soil",
        "shout s =\n  text::_e (s ++ \"—😀\")\n",
        "text::",
    );
    assert!(
        inside.contains(&"_echo".to_owned()) && inside.contains(&"shout".to_owned()),
        "{inside:?}"
    );
}

/// A status lens offers its command only while every buffer is saved: the
/// status it shows is the buffers', the command acts on the disk. Typing makes
/// it say "save first", a stale lens's command refuses to run, and saving
/// brings the command back (the editor is asked to refresh its lenses).
#[test]
fn a_lens_waits_for_unsaved_buffers_to_be_saved() {
    let root = small_root();
    let mut client = Client::start(root.clone());
    let path = "m/double.tr";
    let spec = root.iter().find(|(p, _)| p == path).unwrap().1.clone();
    client.open(path, &spec);
    let lens = |client: &mut Client| {
        let id = client.request(
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": uri(path) } }),
        );
        client.response(id)[0]["command"].clone()
    };
    let runnable = lens(&mut client);
    assert_eq!(runnable["command"], "trellis.run");

    let edited = spec.replace("A definition.", "A definition — “doubled” → 😀.");
    client.replace(path, 2, &edited);
    let waiting = lens(&mut client);
    let title = waiting["title"].as_str().unwrap_or_default();
    assert!(
        title.starts_with("not-lowered")
            && title.ends_with("(save m/double.tr first: `trellis` acts on the saved files)"),
        "{title}"
    );
    assert_eq!(waiting["command"], "");
    assert_eq!(waiting["arguments"], Value::Null);
    let stale = client.request(
        "workspace/executeCommand",
        json!({ "command": "trellis.run", "arguments": runnable["arguments"] }),
    );
    let refused = client.response(stale);
    assert_eq!(refused["error"], -32803, "{refused}");
    assert!(client.ran.lock().unwrap().is_empty(), "nothing ran");

    // Saved: the disk has the buffer's text, and the lens its command.
    client
        .writes
        .lock()
        .unwrap()
        .push((path.to_owned(), edited.clone()));
    client.notify(
        "textDocument/didSave",
        json!({ "textDocument": { "uri": uri(path) } }),
    );
    client.until(|message| match message {
        Message::Request(request) if request.method == "workspace/codeLens/refresh" => Some(()),
        _ => None,
    });
    assert_eq!(lens(&mut client)["command"], "trellis.run");
    let refreshes = client
        .seen
        .iter()
        .filter(|m| matches!(m, Message::Request(r) if r.method == "workspace/codeLens/refresh"))
        .count();
    assert_eq!(refreshes, 1, "asked once: when the buffer was saved");
}
