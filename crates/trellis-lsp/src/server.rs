//! The main loop, in the manner of rust-analyzer's: one thread owns the database
//! and the documents and does nothing slow; every request and every re-check runs
//! on a worker over a snapshot (a clone of the database). An edit is applied on
//! the main thread, which sets the buffer's text as an input; salsa then cancels
//! every snapshot still computing (each unwinds with `salsa::Cancelled` at its
//! next query), so a check of text the editor no longer shows stops within a
//! query, a stale request answers `ContentModified`, and a fresh check starts on
//! the new revision. The editor never waits for a check.
//!
//! Open buffers are inputs of this server's own database only (design §9.9):
//! the disk's text of an overlaid file is kept aside and restored when the buffer
//! closes, and what the disk says of it meanwhile updates only that copy.
//!
//! Nothing a client sends is dropped unsaid: params that do not fit answer
//! `InvalidParams` (a notification's are logged to the client); an edit that
//! cannot be applied marks its document diverged — the client is told, and
//! requests on it fail — until its whole text arrives again. Work waits in
//! bounded queues (the transport's, [`JOBS`]), so a client that stops reading
//! pauses the server instead of growing it.

use std::collections::{BTreeMap, HashMap};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, bounded, select, unbounded};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, LogMessage, Notification as _, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{
    CodeLensRequest, Completion, DocumentSymbolRequest, ExecuteCommand, Formatting, GotoDefinition,
    HoverRequest, References, Request as _,
};
use lsp_types::{
    CodeLensOptions, CompletionOptions, ExecuteCommandOptions, InitializeParams, InitializeResult,
    LogMessageParams, MessageType, OneOf, PositionEncodingKind, PublishDiagnosticsParams,
    SaveOptions, ServerCapabilities, ServerInfo, ShowMessageParams, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri,
};
use serde_json::{Value, json};
use trellis_db::{Change, RootDatabase};
use trellis_diag::Diagnostic;

use crate::handlers::{self, Answer, Context, Failure, Place, READ_SPEC_COMMAND, RUN_COMMAND};
use crate::overlay::Overlay;
use crate::paths::{is_checked, path_of, relative};
use crate::ports::{Host, RootDisk};
use crate::text::{Encoding, apply_change};

/// How often the disk is asked what changed (the host's change feed makes each
/// ask one non-blocking read when nothing did).
const DISK_TICK: Duration = Duration::from_millis(250);
/// Workers: enough that a hover never waits behind a re-check.
const WORKERS: usize = 3;
/// Jobs waiting for a worker. Past this the main loop waits for one to finish
/// (and so stops reading): each job holds a snapshot and its request.
const JOBS: usize = 64;

/// Serves one editor session over `connection` until `exit` (or the editor goes
/// away). `db` is the database to fill (tests pass one that logs executions).
pub fn serve(connection: Connection, host: Arc<dyn Host>, db: RootDatabase) -> Result<(), String> {
    let Some((id, params)) = initialize_request(&connection) else {
        return Ok(());
    };
    let encoding = negotiate_encoding(&params);
    let lens_refresh = params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|workspace| workspace.code_lens.as_ref())
        .and_then(|lens| lens.refresh_support)
        .unwrap_or(false);
    let result = InitializeResult {
        capabilities: capabilities(encoding),
        server_info: Some(ServerInfo {
            name: "trellis".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
    };
    let result = serde_json::to_value(result).map_err(|e| e.to_string())?;
    // `initialized` is read by the main loop like any notification: a client
    // that sends something else first is served, not dropped.
    let _ = connection.sender.send(Response::new_ok(id, result).into());
    let folder = workspace_folder(&params);
    let (root, why_no_root) = match host.find_root(folder.as_deref()) {
        Ok(root) => (Some(root), None),
        Err(diagnostic) => (None, Some(diagnostic.message)),
    };
    let disk = root.as_deref().map(|root| host.disk(root));
    let (events, event_queue) = unbounded();
    let mut server = Server {
        sender: connection.sender.clone(),
        host,
        root,
        why_no_root,
        disk,
        load_problems: Vec::new(),
        db,
        documents: BTreeMap::new(),
        overlay: Overlay::default(),
        encoding,
        pool: Pool::new(WORKERS),
        events,
        generation: 0,
        published: HashMap::new(),
        shutting_down: false,
        lens_refresh,
        next_request: 0,
        unsaved: Vec::new(),
    };
    server.refresh_disk(true);
    server.run(&connection.receiver, &event_queue)
}

/// Waits for `initialize` with params that fit (none: the client left or sent
/// `exit`). Requests before it answer `ServerNotInitialized`, an `initialize`
/// whose params do not fit answers `InvalidParams` and is waited for again, and
/// other notifications are dropped, as the protocol says.
fn initialize_request(connection: &Connection) -> Option<(RequestId, InitializeParams)> {
    for message in &connection.receiver {
        let reply = match message {
            Message::Request(request) if request.method == "initialize" => {
                match serde_json::from_value::<InitializeParams>(request.params) {
                    Ok(params) => return Some((request.id, params)),
                    Err(error) => Response::new_err(
                        request.id,
                        ErrorCode::InvalidParams as i32,
                        format!("initialize: the params do not fit: {error}"),
                    ),
                }
            }
            Message::Request(request) => Response::new_err(
                request.id,
                ErrorCode::ServerNotInitialized as i32,
                format!(
                    "{} before initialize: send initialize first",
                    request.method
                ),
            ),
            Message::Notification(notification) if notification.method == "exit" => return None,
            Message::Notification(_) | Message::Response(_) => continue,
        };
        let _ = connection.sender.send(reply.into());
    }
    None
}

fn negotiate_encoding(params: &InitializeParams) -> Encoding {
    let offered = params
        .capabilities
        .general
        .as_ref()
        .and_then(|general| general.position_encodings.as_ref());
    match offered {
        Some(kinds) if kinds.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
        _ => Encoding::Utf16,
    }
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![":".to_owned(), "`".to_owned()]),
            ..CompletionOptions::default()
        }),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![RUN_COMMAND.to_owned(), READ_SPEC_COMMAND.to_owned()],
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// The folder the editor opened: its first workspace folder, else its root URI.
#[allow(deprecated, reason = "rootUri is still what many clients send")]
fn workspace_folder(params: &InitializeParams) -> Option<PathBuf> {
    let from_folders = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .and_then(|folder| path_of(&folder.uri));
    from_folders.or_else(|| params.root_uri.as_ref().and_then(path_of))
}

/// One open document.
struct Document {
    uri: Uri,
    version: i32,
    text: String,
    place: Place,
    /// Why the server's text can no longer be trusted to be the editor's: an
    /// edit that could not be applied. Requests on the document fail until the
    /// editor sends its whole text (or reopens it).
    diverged: Option<String>,
}

/// What workers report back to the main loop.
enum Event {
    /// A finished re-check of revision `generation`: protocol diagnostics by URI.
    Diagnostics {
        generation: u64,
        by_uri: BTreeMap<String, Vec<lsp_types::Diagnostic>>,
    },
    /// The re-check of revision `generation` was cancelled by an edit `after`
    /// it started (salsa unwound its snapshot).
    Cancelled { generation: u64, after: Duration },
    /// A command changed the root: ask the disk now rather than at the next tick.
    DiskChanged,
}

struct Server {
    sender: Sender<Message>,
    host: Arc<dyn Host>,
    root: Option<PathBuf>,
    why_no_root: Option<String>,
    disk: Option<Box<dyn RootDisk>>,
    load_problems: Vec<Diagnostic>,
    db: RootDatabase,
    /// By URI text.
    documents: BTreeMap<String, Document>,
    /// The open buffers' paths, with the disk's text kept aside.
    overlay: Overlay,
    encoding: Encoding,
    pool: Pool,
    events: Sender<Event>,
    /// Bumped on every change to the database's inputs.
    generation: u64,
    /// What was last published per URI, with the document version it was for.
    published: HashMap<String, (Option<i32>, Vec<lsp_types::Diagnostic>)>,
    shutting_down: bool,
    /// Whether the client re-asks for lenses when told (`workspace/codeLens/refresh`).
    lens_refresh: bool,
    /// The id of the last request this server sent the client.
    next_request: i32,
    /// The root paths whose open buffers differ from the disk, in order.
    unsaved: Vec<String>,
}

impl Server {
    fn run(
        &mut self,
        messages: &Receiver<Message>,
        events: &Receiver<Event>,
    ) -> Result<(), String> {
        let tick = crossbeam_channel::tick(DISK_TICK);
        loop {
            select! {
                recv(messages) -> message => match message {
                    Ok(Message::Request(request)) => self.on_request(request),
                    Ok(Message::Notification(notification)) => {
                        if notification.method == "exit" {
                            return Ok(());
                        }
                        self.on_notification(notification);
                    }
                    Ok(Message::Response(_)) => {}
                    // The editor went away without `exit`.
                    Err(_) => return Ok(()),
                },
                recv(events) -> event => match event {
                    Ok(Event::Diagnostics { generation, by_uri }) => {
                        self.publish(generation, by_uri);
                    }
                    Ok(Event::Cancelled { generation, after }) => self.notify(
                        LogMessage::METHOD,
                        LogMessageParams {
                            typ: MessageType::LOG,
                            message: format!(
                                "re-check of revision {generation} cancelled by an edit after {} ms",
                                after.as_millis()
                            ),
                        },
                    ),
                    Ok(Event::DiskChanged) => self.refresh_disk(false),
                    Err(_) => return Ok(()),
                },
                recv(tick) -> _ => self.refresh_disk(false),
            }
        }
    }

    fn send(&self, message: impl Into<Message>) {
        // A closed connection ends the loop at its next receive.
        let _ = self.sender.send(message.into());
    }

    fn notify(&self, method: &str, params: impl serde::Serialize) {
        self.send(Notification::new(method.to_owned(), params));
    }

    fn context(&self) -> Context {
        Context {
            root: self.root.clone(),
            encoding: self.encoding,
            unsaved: Vec::new(),
        }
    }

    /// Asks the disk what changed. What it says of a file a buffer overlays goes
    /// aside (the buffer wins until it closes); the rest is applied.
    fn refresh_disk(&mut self, first: bool) {
        let Some(disk) = self.disk.as_mut() else {
            if first {
                self.recheck();
            }
            return;
        };
        let refresh = disk.refresh();
        let problems_moved = refresh.problems != self.load_problems;
        self.load_problems = refresh.problems;
        // A save (or any write) under an open buffer may make it saved.
        let under_buffers = refresh.change.config_text.is_some()
            || refresh
                .change
                .files
                .keys()
                .any(|path| self.overlay.is_open(path));
        let change = self.overlay.from_disk(refresh.change);
        if first || problems_moved || !change.is_empty() {
            // A lock a command wrote moves a status row: the lenses are stale.
            let locks_moved = change.files.keys().any(|path| path.ends_with(".lock"));
            change.apply(&mut self.db);
            self.generation += 1;
            self.recheck();
            if locks_moved && !first {
                self.refresh_lenses();
            }
        }
        if under_buffers {
            self.note_unsaved();
        }
    }

    /// Where a document URI lives, for the database.
    fn place_of(&self, uri: &Uri, text: &str) -> Place {
        let path = path_of(uri);
        let name = path
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| uri.as_str().to_owned());
        match (&self.root, &path) {
            (Some(root), Some(path)) => match relative(root, path) {
                Some(relative) if is_checked(&relative) => Place::Root(relative),
                _ => Place::Outside {
                    name,
                    text: text.to_owned(),
                },
            },
            _ => Place::Outside {
                name,
                text: text.to_owned(),
            },
        }
    }

    fn on_notification(&mut self, notification: Notification) {
        let Notification { method, params } = notification;
        match method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Some(params) = self
                    .notification_params::<lsp_types::DidOpenTextDocumentParams>(&method, params)
                else {
                    return;
                };
                let document = params.text_document;
                let place = self.place_of(&document.uri, &document.text);
                let change = match &place {
                    Place::Root(path) => self.overlay.open(&self.db, path, &document.text),
                    Place::Outside { .. } => Change::default(),
                };
                self.documents.insert(
                    document.uri.as_str().to_owned(),
                    Document {
                        uri: document.uri,
                        version: document.version,
                        text: document.text,
                        place,
                        diverged: None,
                    },
                );
                self.force_apply(change);
                self.note_unsaved();
            }
            DidChangeTextDocument::METHOD => self.on_change(params),
            DidCloseTextDocument::METHOD => {
                let Some(params) = self
                    .notification_params::<lsp_types::DidCloseTextDocumentParams>(&method, params)
                else {
                    return;
                };
                let Some(document) = self.documents.remove(params.text_document.uri.as_str())
                else {
                    return;
                };
                let change = match &document.place {
                    Place::Root(path) => self.overlay.close(path),
                    Place::Outside { .. } => {
                        // Its syntax findings go with it.
                        self.notify(
                            PublishDiagnostics::METHOD,
                            PublishDiagnosticsParams::new(document.uri.clone(), Vec::new(), None),
                        );
                        self.published.remove(document.uri.as_str());
                        Change::default()
                    }
                };
                self.force_apply(change);
                self.note_unsaved();
            }
            DidSaveTextDocument::METHOD | DidChangeWatchedFiles::METHOD => {
                self.refresh_disk(false);
            }
            _ => {}
        }
    }

    /// A notification's params, or (logged to the client) none when they do
    /// not fit its method.
    fn notification_params<P: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Option<P> {
        match serde_json::from_value(params) {
            Ok(params) => Some(params),
            Err(error) => {
                self.log(
                    MessageType::WARNING,
                    format!("trellis lsp ignored a {method} whose params do not fit: {error}"),
                );
                None
            }
        }
    }

    fn log(&self, typ: MessageType, message: String) {
        self.notify(LogMessage::METHOD, LogMessageParams { typ, message });
    }

    /// `didChange`: each change applied in order to a copy of the text, the
    /// copy kept only if every change applied. Otherwise (or when the params
    /// do not fit) the document is diverged: the client is told, requests on it
    /// fail, and its next whole-text change (or reopening it) brings it back.
    fn on_change(&mut self, params: Value) {
        let uri = request_document(&params);
        let params = match serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(params)
        {
            Ok(params) => params,
            Err(error) => {
                let why = format!("a didChange whose params do not fit: {error}");
                match uri {
                    Some(uri) if self.documents.contains_key(&uri) => self.diverge(&uri, why),
                    _ => self.log(MessageType::WARNING, format!("trellis lsp ignored {why}")),
                }
                return;
            }
        };
        let uri = params.text_document.uri.as_str().to_owned();
        let encoding = self.encoding;
        let Some(document) = self.documents.get_mut(&uri) else {
            self.log(
                MessageType::WARNING,
                format!("trellis lsp ignored a didChange of {uri}, which is not open"),
            );
            return;
        };
        document.version = params.text_document.version;
        // While diverged, only a whole text is worth applying: start from the last.
        let from = match document.diverged {
            Some(_) => match params
                .content_changes
                .iter()
                .rposition(|change| change.range.is_none())
            {
                Some(whole) => whole,
                None => return,
            },
            None => 0,
        };
        let mut text = document.text.clone();
        for (index, change) in params.content_changes.iter().enumerate().skip(from) {
            if let Err(error) = apply_change(&mut text, change, encoding) {
                let why = format!(
                    "change {} of version {} could not be applied: {error}",
                    index + 1,
                    params.text_document.version
                );
                self.diverge(&uri, why);
                return;
            }
        }
        let Some(document) = self.documents.get_mut(&uri) else {
            return;
        };
        let recovered = document.diverged.take().is_some();
        document.text = text;
        let change = match &mut document.place {
            Place::Root(path) => self.overlay.edit(path, &document.text),
            Place::Outside { text, .. } => {
                text.clone_from(&document.text);
                Change::default()
            }
        };
        if recovered {
            self.log(
                MessageType::INFO,
                format!("trellis lsp has the whole text of {uri} again"),
            );
        }
        self.force_apply(change);
        self.note_unsaved();
    }

    /// Marks an open document diverged and tells the client why (once per
    /// divergence: its later changes are dropped in silence until it recovers).
    fn diverge(&mut self, uri: &str, why: String) {
        let Some(document) = self.documents.get_mut(uri) else {
            return;
        };
        if document.diverged.is_some() {
            return;
        }
        let message = format!(
            "trellis lsp lost track of {uri}: {why}. Its answers are paused until the editor \
             sends its whole text: close and reopen it"
        );
        document.diverged = Some(message.clone());
        self.notify(
            ShowMessage::METHOD,
            ShowMessageParams {
                typ: MessageType::ERROR,
                message: message.clone(),
            },
        );
        self.log(MessageType::ERROR, message);
    }

    /// Recomputes which open buffers differ from the disk. When one no longer
    /// does (saved, or closed unsaved), every lens that said "save first" is
    /// stale: the client is asked to fetch them again. A buffer that becomes
    /// unsaved needs no such ask — the client fetches the edited document's
    /// lenses itself, and a stale lens elsewhere has its command refused with
    /// the same words.
    fn note_unsaved(&mut self) {
        let unsaved: Vec<String> = self
            .documents
            .values()
            .filter_map(|document| match &document.place {
                Place::Root(path) if self.overlay.is_unsaved(path, &document.text) => {
                    Some(path.clone())
                }
                _ => None,
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let saved = self.unsaved.iter().any(|path| !unsaved.contains(path));
        self.unsaved = unsaved;
        if saved {
            self.refresh_lenses();
        }
    }

    /// Asks the client to fetch its code lenses again, when it can be asked.
    fn refresh_lenses(&mut self) {
        if !self.lens_refresh {
            return;
        }
        self.next_request += 1;
        let id = RequestId::from(format!("trellis-{}", self.next_request));
        self.send(Request::new(
            id,
            "workspace/codeLens/refresh".to_owned(),
            Value::Null,
        ));
    }

    /// [`Server::apply`], re-checking even when the inputs did not move (a
    /// document's version did, and its diagnostics are republished for it).
    fn force_apply(&mut self, change: Change) {
        if !change.is_empty() {
            change.apply(&mut self.db);
        }
        self.generation += 1;
        self.recheck();
    }

    /// Starts a re-check of the current revision on a worker.
    fn recheck(&mut self) {
        let snapshot = self.db.clone();
        let generation = self.generation;
        let root = self.root.clone();
        let encoding = self.encoding;
        let load_problems = self.load_problems.clone();
        let why = match (&self.root, &self.why_no_root) {
            (Some(root), _) => format!("outside the root {}", root.display()),
            (None, Some(why)) => format!("no root ({why})"),
            (None, None) => "no root".to_owned(),
        };
        let outside: Vec<(Uri, String, String)> = self
            .documents
            .values()
            .filter_map(|document| match &document.place {
                Place::Outside { name, text } => {
                    Some((document.uri.clone(), name.clone(), text.clone()))
                }
                Place::Root(_) => None,
            })
            .collect();
        let events = self.events.clone();
        self.pool.spawn(move || {
            let started = Instant::now();
            let computed = salsa::Cancelled::catch(AssertUnwindSafe(|| {
                let mut by_uri = match &root {
                    Some(root) => {
                        handlers::root_diagnostics(&snapshot, root, &load_problems, encoding)
                    }
                    None => BTreeMap::new(),
                };
                for (uri, name, text) in &outside {
                    let diagnostics =
                        handlers::outside_diagnostics(uri, name, text, &why, encoding);
                    by_uri.insert(uri.as_str().to_owned(), diagnostics);
                }
                by_uri
            }));
            // Let the next edit in before reporting.
            drop(snapshot);
            let event = match computed {
                Ok(by_uri) => Event::Diagnostics { generation, by_uri },
                Err(_cancelled) => Event::Cancelled {
                    generation,
                    after: started.elapsed(),
                },
            };
            let _ = events.send(event);
        });
    }

    /// Publishes a finished re-check, unless an edit has overtaken it: what moved,
    /// and every open document whose version moved since its last publication.
    fn publish(
        &mut self,
        generation: u64,
        mut by_uri: BTreeMap<String, Vec<lsp_types::Diagnostic>>,
    ) {
        if generation != self.generation {
            return;
        }
        let mut uris: Vec<String> = by_uri.keys().cloned().collect();
        uris.extend(self.published.keys().cloned());
        uris.extend(self.documents.keys().cloned());
        uris.sort();
        uris.dedup();
        for uri_text in uris {
            let diagnostics = by_uri.remove(&uri_text).unwrap_or_default();
            let version = self.documents.get(&uri_text).map(|d| d.version);
            let unchanged = match self.published.get(&uri_text) {
                Some((published_version, published)) => {
                    *published == diagnostics && *published_version == version
                }
                None => diagnostics.is_empty() && version.is_none(),
            };
            if unchanged {
                continue;
            }
            let Ok(uri) = uri_text.parse::<Uri>() else {
                continue;
            };
            self.notify(
                PublishDiagnostics::METHOD,
                PublishDiagnosticsParams::new(uri, diagnostics.clone(), version),
            );
            if diagnostics.is_empty() && version.is_none() {
                self.published.remove(&uri_text);
            } else {
                self.published.insert(uri_text, (version, diagnostics));
            }
        }
    }

    fn on_request(&mut self, request: Request) {
        if self.shutting_down {
            self.send(Response::new_err(
                request.id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".to_owned(),
            ));
            return;
        }
        if request.method == "shutdown" {
            self.shutting_down = true;
            self.send(Response::new_ok(request.id, Value::Null));
            return;
        }
        if request.method == "initialize" {
            self.send(Response::new_err(
                request.id,
                ErrorCode::InvalidRequest as i32,
                "the server is already initialized".to_owned(),
            ));
            return;
        }
        let document = request_document(&request.params).and_then(|uri| self.documents.get(&uri));
        if let Some(why) = document.and_then(|document| document.diverged.clone()) {
            self.send(Response::new_err(
                request.id,
                ErrorCode::RequestFailed as i32,
                why,
            ));
            return;
        }
        let place = document.map(|document| document.place.clone());
        let mut context = self.context();
        if matches!(
            request.method.as_str(),
            CodeLensRequest::METHOD | ExecuteCommand::METHOD
        ) {
            context.unsaved.clone_from(&self.unsaved);
        }
        let snapshot = self.db.clone();
        let sender = self.sender.clone();
        let host = self.host.clone();
        let events = self.events.clone();
        let Request { id, method, params } = request;
        self.pool.spawn(move || {
            let answer = answer(
                &snapshot,
                &context,
                place.as_ref(),
                &method,
                params,
                &*host,
                &events,
            );
            drop(snapshot);
            let _ = sender.send(respond(id, answer).into());
        });
    }
}

/// The document a request's params name (`textDocument.uri`).
fn request_document(params: &Value) -> Option<String> {
    params["textDocument"]["uri"].as_str().map(str::to_owned)
}

fn respond(id: RequestId, answer: Answer) -> Response {
    match answer {
        Ok(value) => Response::new_ok(id, value),
        Err(failure) => Response::new_err(id, failure.code, failure.message),
    }
}

/// One request's answer on a worker: a cancelled snapshot is `ContentModified`, a
/// bug is an internal error (the server keeps serving).
fn answer(
    db: &RootDatabase,
    context: &Context,
    place: Option<&Place>,
    method: &str,
    params: Value,
    host: &dyn Host,
    events: &Sender<Event>,
) -> Answer {
    let run = AssertUnwindSafe(|| dispatch(db, context, place, method, params, host, events));
    match std::panic::catch_unwind(|| salsa::Cancelled::catch(run)) {
        Ok(Ok(answer)) => answer,
        Ok(Err(_cancelled)) => Err(Failure {
            code: ErrorCode::ContentModified as i32,
            message: "the document changed; ask again".to_owned(),
        }),
        Err(_panic) => Err(Failure {
            code: ErrorCode::InternalError as i32,
            message: format!(
                "trellis lsp: internal error answering {method} (a bug: please report it)"
            ),
        }),
    }
}

fn params_of<P: serde::de::DeserializeOwned>(params: Value) -> Result<P, Failure> {
    serde_json::from_value(params).map_err(|e| Failure {
        code: ErrorCode::InvalidParams as i32,
        message: e.to_string(),
    })
}

fn dispatch(
    db: &RootDatabase,
    context: &Context,
    place: Option<&Place>,
    method: &str,
    params: Value,
    host: &dyn Host,
    events: &Sender<Event>,
) -> Answer {
    // The params are read first, so ones that do not fit answer `InvalidParams`
    // whether the document is open or not; a request about a document that is
    // not open then answers nothing.
    macro_rules! on_document {
        ($handler:expr) => {{
            let params = params_of(params)?;
            match place {
                Some(place) => $handler(db, context, place, params),
                None => Ok(Value::Null),
            }
        }};
    }
    match method {
        HoverRequest::METHOD => on_document!(handlers::hover),
        GotoDefinition::METHOD => on_document!(handlers::definition),
        References::METHOD => on_document!(handlers::references_of),
        DocumentSymbolRequest::METHOD => {
            on_document!(|db, context, place, _: lsp_types::DocumentSymbolParams| {
                handlers::document_symbols(db, context, place)
            })
        }
        Formatting::METHOD => on_document!(handlers::formatting),
        Completion::METHOD => on_document!(handlers::completion),
        CodeLensRequest::METHOD => {
            on_document!(|db, context, place, _: lsp_types::CodeLensParams| {
                handlers::code_lenses(db, context, place)
            })
        }
        "trellis/readSpec" => match params["ref"].as_str() {
            Some(reference) => handlers::read_spec(reference),
            None => Err(Failure::invalid(
                "trellis/readSpec takes {\"ref\": \"<doc>#<section>\"}",
            )),
        },
        ExecuteCommand::METHOD => {
            let params: lsp_types::ExecuteCommandParams = params_of(params)?;
            execute(context, params, host, events)
        }
        _ => Err(Failure {
            code: ErrorCode::MethodNotFound as i32,
            message: format!("trellis lsp does not serve {method}"),
        }),
    }
}

/// `trellis.run [[args…], …]` runs each step through the host, in order, stopping
/// at the first failure; `trellis.readSpec ref` answers the section.
fn execute(
    context: &Context,
    params: lsp_types::ExecuteCommandParams,
    host: &dyn Host,
    events: &Sender<Event>,
) -> Answer {
    match params.command.as_str() {
        READ_SPEC_COMMAND => match params.arguments.first().and_then(Value::as_str) {
            Some(reference) => handlers::read_spec(reference),
            None => Err(Failure::invalid(
                "trellis.readSpec takes one argument, \"<doc>#<section>\"",
            )),
        },
        RUN_COMMAND => {
            let Some(root) = &context.root else {
                return Err(Failure::failed("no root: nothing to run"));
            };
            if let Some(note) = handlers::unsaved_note(&context.unsaved) {
                return Err(Failure::failed(format!("not run: {note}")));
            }
            let steps: Vec<Vec<String>> = params
                .arguments
                .first()
                .cloned()
                .map(serde_json::from_value)
                .transpose()
                .map_err(|e| Failure {
                    code: ErrorCode::InvalidParams as i32,
                    message: format!("trellis.run takes a list of argument lists: {e}"),
                })?
                .unwrap_or_default();
            let mut printed = Vec::new();
            for step in &steps {
                let outcome = host.run_trellis(root, step);
                let _ = events.send(Event::DiskChanged);
                match outcome {
                    Ok(output) => printed.push(json!({ "args": step, "output": output })),
                    Err(why) => {
                        return Err(Failure::failed(format!(
                            "`trellis {}` failed: {why}",
                            step.join(" ")
                        )));
                    }
                }
            }
            Ok(json!({ "ran": printed }))
        }
        other => Err(Failure {
            code: ErrorCode::InvalidParams as i32,
            message: format!("unknown command {other}"),
        }),
    }
}

/// A fixed set of worker threads taking jobs from one queue.
struct Pool {
    jobs: Sender<Box<dyn FnOnce() + Send>>,
}

impl Pool {
    fn new(workers: usize) -> Pool {
        let (jobs, queue) = bounded::<Box<dyn FnOnce() + Send>>(JOBS);
        for index in 0..workers {
            let queue = queue.clone();
            let spawned =
                trellis_db::spawn_query_thread(&format!("trellis-lsp-worker-{index}"), move || {
                    for job in queue {
                        // A bug in one job must not take the worker with it.
                        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
                    }
                });
            if spawned.is_err() {
                break;
            }
        }
        Pool { jobs }
    }

    fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        let _ = self.jobs.send(Box::new(job));
    }
}
