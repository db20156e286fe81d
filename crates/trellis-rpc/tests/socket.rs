//! End-to-end tests over real Unix sockets in private temporary directories.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::fs;
use std::io::{self, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::{Value, json};
use trellis_rpc::{
    Answer, CallError, Client, ErrorCode, FixedPeerCredentials, Handler, HelloOutcome, Notifier,
    PeerIdentity, RpcError, Server, ServerConfig, ShutdownHandle, SocketError, connect_or_spawn,
    current_uid, is_version_mismatch, read_frame,
};

const VERSION: &str = "1.2.3";
const TIMEOUT: Duration = Duration::from_secs(10);

/// A unique directory under the temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let path =
            std::env::temp_dir().join(format!("trellis-rpc-{}-{n}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        TempDir(path)
    }

    /// The socket path inside a not-yet-created private `run` directory.
    fn socket(&self) -> PathBuf {
        self.0.join("run").join("d.sock")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The test daemon's methods.
struct TestHandler {
    shutdown: Arc<Mutex<Option<ShutdownHandle>>>,
}

impl Handler for TestHandler {
    fn handle(&self, method: &str, params: Value, notifier: &mut Notifier<'_>) -> Answer {
        match method {
            "echo" => Ok(params),
            "add" => {
                let a = params["a"]
                    .as_i64()
                    .ok_or_else(|| RpcError::invalid_params("a must be an integer"))?;
                let b = params["b"]
                    .as_i64()
                    .ok_or_else(|| RpcError::invalid_params("b must be an integer"))?;
                Ok(json!(a + b))
            }
            "big" => Ok(json!("x".repeat(4096))),
            "panic" => panic!("the test handler was asked to panic"),
            "stop" => {
                if let Some(handle) = self.shutdown.lock().expect("lock").as_ref() {
                    handle.shutdown();
                }
                Ok(json!("stopping"))
            }
            "progress" => {
                for step in 0..3 {
                    notifier
                        .notify("progress", json!({"step": step}))
                        .map_err(|e| RpcError::new(ErrorCode::InternalError, e.to_string()))?;
                }
                Ok(json!("done"))
            }
            _ => Err(RpcError::method_not_found(method)),
        }
    }
}

struct Running {
    path: PathBuf,
    shutdown: ShutdownHandle,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Running {
    fn stop(self) {
        self.shutdown.shutdown();
        self.wait();
    }

    /// Waits for `serve` to return (after someone requested shutdown).
    fn wait(mut self) {
        if let Some(thread) = self.thread.take() {
            thread
                .join()
                .expect("server thread")
                .expect("serve returns Ok");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn config() -> ServerConfig {
    ServerConfig::new(VERSION)
}

fn start(path: &Path, config: ServerConfig) -> Running {
    let server = Server::bind(path, config).expect("binds");
    let shutdown = server.shutdown_handle();
    let slot = Arc::new(Mutex::new(Some(shutdown.clone())));
    let handler = TestHandler { shutdown: slot };
    let thread = thread::spawn(move || server.serve(handler));
    Running {
        path: path.to_owned(),
        shutdown,
        thread: Some(thread),
    }
}

fn client(path: &Path) -> Client {
    let client = Client::connect(path).expect("connects");
    client.set_timeout(Some(TIMEOUT)).expect("timeout");
    client
}

fn rpc_error(result: Result<Value, CallError>) -> RpcError {
    match result {
        Err(CallError::Rpc(error)) => error,
        other => panic!("expected an RPC error, got {other:?}"),
    }
}

/// A raw connection for sending frames the client would never send.
struct Raw {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Raw {
    fn connect(path: &Path) -> Raw {
        let stream = UnixStream::connect(path).expect("connects");
        stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
        Raw {
            reader: BufReader::new(stream.try_clone().expect("clone")),
            writer: stream,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("writes");
    }

    fn receive(&mut self) -> Option<Value> {
        read_frame(&mut self.reader, 1 << 20)
            .expect("reads")
            .map(|frame| serde_json::from_slice(&frame).expect("the server sends JSON"))
    }
}

#[test]
fn a_call_round_trips_and_the_handshake_reports_versions() {
    let dir = TempDir::new("roundtrip");
    let running = start(&dir.socket(), config());
    let mut c = client(&running.path);
    assert_eq!(c.hello(VERSION).expect("hello"), HelloOutcome::Match);
    assert_eq!(
        c.call("echo", json!({"k": [1, "two"]})).expect("echo"),
        json!({"k": [1, "two"]})
    );
    assert_eq!(
        c.call("add", json!({"a": 2, "b": 40})).expect("add"),
        json!(42)
    );
    c.notify("echo", json!([1])).expect("notification sent");
    let unknown = rpc_error(c.call("nope", Value::Null));
    assert_eq!(unknown.kind(), Some(ErrorCode::MethodNotFound));
    assert_eq!(unknown.diagnostics()[0].code, "rpc-method-not-found");
    let reserved = rpc_error(c.call("rpc.other", Value::Null));
    assert_eq!(reserved.kind(), Some(ErrorCode::MethodNotFound));
    let bad_params = rpc_error(c.call("add", json!({"a": "x"})));
    assert_eq!(bad_params.kind(), Some(ErrorCode::InvalidParams));

    // A client of another version learns the daemon's, and is refused until it
    // reconnects to a matching daemon.
    let mut old = client(&running.path);
    assert_eq!(
        old.hello("0.9.0").expect("hello"),
        HelloOutcome::Mismatch {
            daemon_version: VERSION.to_owned()
        }
    );
    let refused = old.call("echo", json!([1])).expect_err("refused");
    assert!(is_version_mismatch(&refused), "{refused:?}");
    let CallError::Rpc(refused) = refused else {
        unreachable!()
    };
    assert_eq!(
        refused.data.as_ref().map(|d| d["daemon_version"].clone()),
        Some(json!(VERSION))
    );
    assert_eq!(
        c.call("echo", json!([2])).expect("others unaffected"),
        json!([2])
    );
    running.stop();
}

/// A command sends its one call right behind the handshake, before reading
/// the handshake's answer (one round trip, not two): the call is answered
/// after it, and behind a mismatched handshake it is refused unrun — the
/// `stop` sent there would end the daemon.
#[test]
fn a_handler_stack_the_system_refuses_leaves_the_connection_to_the_default_one() {
    let dir = TempDir::new("stack");
    // 64 TiB: more address space than a process has, so the spawn is refused.
    let refused = ServerConfig {
        handler_stack_bytes: Some(1 << 46),
        ..config()
    };
    let running = start(&dir.socket(), refused);
    let mut c = client(&running.path);
    assert_eq!(
        c.call("add", json!({"a": 2, "b": 40})).expect("add"),
        json!(42)
    );
    running.stop();
}

#[test]
fn a_call_sent_behind_the_handshake_runs_only_when_the_versions_match() {
    let dir = TempDir::new("behind-hello");
    let running = start(&dir.socket(), config());
    let mut current = client(&running.path);
    let hello = current.send_hello(VERSION).expect("sent");
    let sent = current.send("add", json!({"a": 2, "b": 3})).expect("sent");
    assert_eq!(
        current.receive_hello(hello, VERSION).expect("hello"),
        HelloOutcome::Match
    );
    assert_eq!(
        current.receive(sent, &mut |_| {}).expect("answered"),
        json!(5)
    );

    let mut old = client(&running.path);
    let hello = old.send_hello("0.9.0").expect("sent");
    let sent = old.send("stop", Value::Null).expect("sent");
    assert_eq!(
        old.receive_hello(hello, "0.9.0").expect("hello"),
        HelloOutcome::Mismatch {
            daemon_version: VERSION.to_owned()
        }
    );
    let refused = old.receive(sent, &mut |_| {}).expect_err("refused");
    assert!(is_version_mismatch(&refused), "{refused:?}");
    assert_eq!(
        current
            .call("echo", json!([1]))
            .expect("the daemon still runs"),
        json!([1])
    );
    running.stop();
}

#[test]
fn sixteen_concurrent_clients_each_make_several_calls() {
    let dir = TempDir::new("concurrent");
    let running = start(&dir.socket(), config());
    let threads: Vec<_> = (0..16i64)
        .map(|n| {
            let path = running.path.clone();
            thread::spawn(move || {
                let mut c = client(&path);
                (0..10i64)
                    .map(|k| c.call("add", json!({"a": n * 100, "b": k})).expect("add"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (n, thread) in threads.into_iter().enumerate() {
        let results = thread.join().expect("client thread");
        let expected: Vec<Value> = (0..10).map(|k| json!(n as i64 * 100 + k)).collect();
        assert_eq!(results, expected);
    }
    running.stop();
}

#[test]
fn notifications_arrive_before_the_response() {
    let dir = TempDir::new("notify");
    let running = start(&dir.socket(), config());
    let mut c = client(&running.path);
    let mut seen = Vec::new();
    let result = c
        .call_with_notifications("progress", Value::Null, &mut |n| {
            seen.push((n.method, n.params))
        })
        .expect("progress");
    assert_eq!(result, json!("done"));
    assert_eq!(
        seen,
        vec![
            ("progress".to_owned(), json!({"step": 0})),
            ("progress".to_owned(), json!({"step": 1})),
            ("progress".to_owned(), json!({"step": 2}))
        ]
    );
    running.stop();
}

#[test]
fn a_stale_socket_is_removed_and_the_daemon_spawned() {
    let dir = TempDir::new("stale");
    let path = dir.socket();
    let run = path.parent().expect("dir");
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(run)
        .expect("mkdir");
    drop(UnixListener::bind(&path).expect("a listener that then dies"));
    assert!(
        path.exists(),
        "the dead listener leaves its socket file behind"
    );

    let spawned = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&spawned);
    let spawn_path = path.clone();
    let mut c = connect_or_spawn(
        &path,
        move || {
            *slot.lock().expect("lock") = Some(start(&spawn_path, config()));
            Ok(())
        },
        TIMEOUT,
    )
    .expect("connects after spawning");
    assert_eq!(
        c.call("echo", json!(["after recovery"])).expect("echo"),
        json!(["after recovery"])
    );
    let running = spawned.lock().expect("lock").take().expect("spawn ran");
    running.stop();
}

#[test]
fn an_absent_daemon_is_spawned_and_a_live_one_is_not() {
    let dir = TempDir::new("spawn");
    let path = dir.socket();
    let spawned = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&spawned);
    let spawn_path = path.clone();
    let mut c = connect_or_spawn(
        &path,
        move || {
            // Spawn the way a detached daemon starts: in the background, a little later.
            let running = thread::spawn(move || {
                thread::sleep(Duration::from_millis(30));
                start(&spawn_path, config())
            });
            *slot.lock().expect("lock") = Some(running);
            Ok(())
        },
        TIMEOUT,
    )
    .expect("connects after spawning");
    assert_eq!(
        c.call("add", json!({"a": 1, "b": 1})).expect("add"),
        json!(2)
    );

    let called = AtomicBool::new(false);
    let mut again = connect_or_spawn(
        &path,
        || {
            called.store(true, Ordering::SeqCst);
            Ok(())
        },
        TIMEOUT,
    )
    .expect("connects to the live daemon");
    assert!(
        !called.load(Ordering::SeqCst),
        "a live daemon is not spawned again"
    );
    assert_eq!(again.call("echo", json!([3])).expect("echo"), json!([3]));

    let thread = spawned.lock().expect("lock").take().expect("spawn ran");
    thread.join().expect("spawner").stop();
}

#[test]
fn a_daemon_that_never_comes_up_is_reported_unreachable() {
    let dir = TempDir::new("unreachable");
    let error = match connect_or_spawn(&dir.socket(), || Ok(()), Duration::from_millis(60)) {
        Err(error) => error,
        Ok(_) => panic!("nothing should be listening"),
    };
    assert!(
        matches!(error, SocketError::Unreachable { .. }),
        "{error:?}"
    );
    assert_eq!(error.to_diagnostic().code, "rpc-daemon-unreachable");
    assert_eq!(error.to_diagnostic().repair_class, "retry");
}

#[test]
fn a_peer_with_another_uid_is_refused_and_disconnected() {
    let dir = TempDir::new("peer");
    let mut config = config();
    let stranger = current_uid().wrapping_add(1);
    config.credentials = Arc::new(FixedPeerCredentials(PeerIdentity {
        uid: stranger,
        gid: 0,
        pid: None,
    }));
    let running = start(&dir.socket(), config);
    let mut raw = Raw::connect(&running.path);
    let refusal = raw.receive().expect("one error frame");
    assert_eq!(refusal["id"], Value::Null);
    assert_eq!(
        refusal["error"]["code"],
        json!(ErrorCode::UnauthorizedPeer.code())
    );
    assert_eq!(
        refusal["error"]["data"]["errors"][0]["code"],
        "rpc-unauthorized-peer"
    );
    assert_eq!(raw.receive(), None, "then the connection is closed");

    let mut c = client(&running.path);
    let error = rpc_error(c.call("echo", json!([1])));
    assert_eq!(error.kind(), Some(ErrorCode::UnauthorizedPeer));
    assert!(
        error.message.contains(&format!("peer uid {stranger}")),
        "{}",
        error.message
    );
    running.stop();
}

#[test]
fn an_oversized_frame_is_answered_and_the_connection_keeps_serving() {
    let dir = TempDir::new("oversized");
    let mut config = config();
    config.frame_limit = 1024;
    let running = start(&dir.socket(), config);
    let mut bystander = client(&running.path);
    let mut raw = Raw::connect(&running.path);

    let mut huge = br#"{"jsonrpc":"2.0","id":1,"method":"echo","params":[""#.to_vec();
    huge.extend(std::iter::repeat_n(b'x', 200_000));
    huge.extend_from_slice(b"\"]}\n");
    raw.send(&huge);
    let answer = raw.receive().expect("an error frame");
    assert_eq!(
        answer["error"]["code"],
        json!(ErrorCode::FrameTooLarge.code())
    );
    assert_eq!(
        answer["error"]["data"]["errors"][0]["code"],
        "rpc-frame-too-large"
    );

    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[\"small\"]}\n");
    assert_eq!(raw.receive().expect("answer")["result"], json!(["small"]));
    assert_eq!(
        bystander.call("echo", json!([1])).expect("echo"),
        json!([1])
    );

    // A response over the limit becomes an error for the same request.
    let mut c = client(&running.path);
    let error = rpc_error(c.call("big", Value::Null));
    assert_eq!(error.kind(), Some(ErrorCode::FrameTooLarge));
    assert_eq!(
        c.call("echo", json!([4])).expect("still serving"),
        json!([4])
    );
    running.stop();
}

#[test]
fn malformed_json_is_answered_with_a_parse_error_and_serving_continues() {
    let dir = TempDir::new("malformed");
    let running = start(&dir.socket(), config());
    let mut raw = Raw::connect(&running.path);
    raw.send(b"{\"jsonrpc\": \"2.0\", oops}\n");
    let answer = raw.receive().expect("an error frame");
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], json!(-32700));
    assert_eq!(
        answer["error"]["data"]["errors"][0]["span"]["value"]["start"]["column"],
        json!(20)
    );
    raw.send(b"[1,2]\n");
    assert_eq!(
        raw.receive().expect("an error frame")["error"]["code"],
        json!(-32600)
    );
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"echo\",\"params\":{}}\n");
    let ok = raw.receive().expect("answer");
    assert_eq!(
        (ok["id"].clone(), ok["result"].clone()),
        (json!("s"), json!({}))
    );
    assert_eq!(
        client(&running.path)
            .call("echo", json!([5]))
            .expect("echo"),
        json!([5])
    );
    running.stop();
}

#[test]
fn a_panicking_handler_is_an_internal_error_not_a_crash() {
    let dir = TempDir::new("panic");
    let running = start(&dir.socket(), config());
    let mut c = client(&running.path);
    let error = rpc_error(c.call("panic", Value::Null));
    assert_eq!(error.kind(), Some(ErrorCode::InternalError));
    assert!(
        error.message.contains("asked to panic"),
        "{}",
        error.message
    );
    assert_eq!(
        c.call("echo", json!([6])).expect("still serving"),
        json!([6])
    );
    running.stop();
}

#[test]
fn the_socket_directory_is_0700_and_the_socket_0600() {
    let dir = TempDir::new("modes");
    let running = start(&dir.socket(), config());
    let mode = |p: &Path| fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(running.path.parent().expect("dir")), 0o700);
    assert_eq!(mode(&running.path), 0o600);
    running.stop();
}

#[test]
fn a_directory_with_loose_modes_or_another_owner_is_refused() {
    let dir = TempDir::new("loose");
    let path = dir.socket();
    let run = path.parent().expect("dir");
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(run)
        .expect("mkdir");
    fs::set_permissions(run, fs::Permissions::from_mode(0o755)).expect("chmod");
    let error = Server::bind(&path, config()).err().expect("refused");
    assert_eq!(
        error.to_string(),
        format!(
            "refusing {}: the socket directory has mode 0755; it must be 0700",
            run.display()
        )
    );
    assert_eq!(error.to_diagnostic().code, "rpc-socket-insecure");
    let called = AtomicBool::new(false);
    let client_error = connect_or_spawn(
        &path,
        || {
            called.store(true, Ordering::SeqCst);
            Ok(())
        },
        TIMEOUT,
    )
    .err()
    .expect("the client refuses it too");
    assert!(
        matches!(client_error, SocketError::Insecure { .. }),
        "{client_error:?}"
    );
    assert!(
        !called.load(Ordering::SeqCst),
        "nothing is spawned into an insecure directory"
    );

    fs::set_permissions(run, fs::Permissions::from_mode(0o700)).expect("chmod");
    let mut as_someone_else = config();
    as_someone_else.uid = current_uid().wrapping_add(1);
    let error = Server::bind(&path, as_someone_else).err().expect("refused");
    assert!(
        error
            .to_string()
            .contains(&format!("owned by uid {}", current_uid())),
        "{error}"
    );
    assert!(!path.exists(), "nothing was bound");
}

#[test]
fn a_live_socket_is_not_taken_over_and_a_non_socket_is_not_removed() {
    let dir = TempDir::new("inuse");
    let running = start(&dir.socket(), config());
    let error = Server::bind(&running.path, config())
        .err()
        .expect("refused");
    assert!(matches!(error, SocketError::InUse { .. }), "{error:?}");
    assert_eq!(
        client(&running.path)
            .call("echo", json!([7]))
            .expect("first daemon intact"),
        json!([7])
    );
    let path = running.path.clone();
    running.stop();
    assert!(!path.exists(), "shutdown removes the socket");

    fs::write(&path, b"not a socket").expect("write");
    let error = Server::bind(&path, config()).err().expect("refused");
    assert!(error.to_string().contains("not a socket"), "{error}");
    assert_eq!(fs::read(&path).expect("kept"), b"not a socket");
}

#[test]
fn connections_beyond_the_cap_are_refused_politely() {
    let dir = TempDir::new("cap");
    let mut config = config();
    config.max_connections = 2;
    let running = start(&dir.socket(), config);
    let mut first = client(&running.path);
    let mut second = client(&running.path);
    // Both are admitted once they have been served.
    assert_eq!(first.call("echo", json!([1])).expect("echo"), json!([1]));
    assert_eq!(second.call("echo", json!([2])).expect("echo"), json!([2]));
    let mut third = client(&running.path);
    let error = rpc_error(third.call("echo", json!([3])));
    assert_eq!(error.kind(), Some(ErrorCode::ServerBusy));
    assert_eq!(error.diagnostics()[0].repair_class, "retry");
    drop(first);
    // The freed slot is reusable once the server notices the hang-up.
    let mut fourth = None;
    for _ in 0..200 {
        let mut candidate = client(&running.path);
        if candidate.call("echo", json!([4])).is_ok() {
            fourth = Some(candidate);
            break;
        }
        thread::sleep(Duration::from_millis(5));
    }
    assert!(fourth.is_some(), "a slot frees up after a client leaves");
    running.stop();
}

#[test]
fn a_stop_request_shuts_down_gracefully() {
    let dir = TempDir::new("stop");
    let running = start(&dir.socket(), config());
    let path = running.path.clone();
    let mut idle = client(&path);
    assert_eq!(idle.call("echo", json!([1])).expect("echo"), json!([1]));
    let mut stopper = client(&path);
    assert_eq!(
        stopper.call("stop", Value::Null).expect("stop answers"),
        json!("stopping")
    );
    running.wait();
    assert!(!path.exists(), "the socket file is removed");
    assert!(matches!(
        idle.call("echo", json!([2])),
        Err(CallError::Disconnected | CallError::Io(_))
    ));
}

/// A stopped server leaves nothing in the runtime directory: not its socket, and
/// not its ownership file (`<socket>.lock`, which used to pile up, one per
/// root ever served). A server started after it binds as before.
#[test]
fn a_stopped_server_leaves_no_files_behind() {
    let dir = TempDir::new("tidy");
    let path = dir.socket();
    for round in 0..3 {
        let running = start(&path, config());
        assert_eq!(
            client(&path).call("echo", json!([round])).expect("echo"),
            json!([round])
        );
        running.stop();
        let left: Vec<_> = fs::read_dir(path.parent().expect("dir"))
            .expect("read run dir")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

#[test]
fn a_daemon_of_another_version_is_stopped_and_replaced() {
    let dir = TempDir::new("restart");
    let path = dir.socket();
    let old_daemon = start(&path, ServerConfig::new("0.9.0"));
    let spawned = Arc::new(Mutex::new(Vec::new()));
    let spawn = || {
        let slot = Arc::clone(&spawned);
        let spawn_path = path.clone();
        move || {
            slot.lock()
                .expect("lock")
                .push(start(&spawn_path, config()));
            Ok(())
        }
    };
    let mut c = connect_or_spawn(&path, spawn(), TIMEOUT).expect("connects to the old daemon");
    let HelloOutcome::Mismatch { daemon_version } = c.hello(VERSION).expect("hello") else {
        panic!("the old daemon should mismatch");
    };
    assert_eq!(daemon_version, "0.9.0");
    assert!(
        spawned.lock().expect("lock").is_empty(),
        "a live daemon is not respawned"
    );

    c.shutdown_daemon(&path, TIMEOUT)
        .expect("the old daemon stops");
    old_daemon.wait();
    let mut c = connect_or_spawn(&path, spawn(), TIMEOUT).expect("connects to a fresh daemon");
    assert_eq!(c.hello(VERSION).expect("hello"), HelloOutcome::Match);
    assert_eq!(c.call("echo", json!([8])).expect("echo"), json!([8]));
    drop(c);
    let fresh = spawned.lock().expect("lock").pop().expect("spawned once");
    fresh.stop();
}

#[test]
fn an_endless_line_is_answered_while_it_is_still_arriving() {
    let dir = TempDir::new("endless");
    let mut config = config();
    config.frame_limit = 4096;
    let running = start(&dir.socket(), config);
    let mut raw = Raw::connect(&running.path);
    let mut writer = raw.writer.try_clone().expect("clone");
    let keep_sending = Arc::new(AtomicBool::new(true));
    let sending = Arc::clone(&keep_sending);
    let sender = thread::spawn(move || {
        let chunk = vec![b'z'; 64 * 1024];
        let mut sent = 0usize;
        while sending.load(Ordering::SeqCst) {
            writer.write_all(&chunk).expect("the server keeps reading");
            sent += chunk.len();
        }
        writer.write_all(b"\n").expect("newline");
        sent
    });
    // The refusal arrives while the line has no end in sight: the newline is
    // only sent after this answer (a server that waited for it would time out).
    let answer = raw.receive().expect("an error frame");
    assert_eq!(
        answer["error"]["code"],
        json!(ErrorCode::FrameTooLarge.code())
    );
    keep_sending.store(false, Ordering::SeqCst);
    let sent = sender.join().expect("sender");
    assert!(sent >= 64 * 1024);
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"echo\",\"params\":[9]}\n");
    assert_eq!(raw.receive().expect("answer")["result"], json!([9]));
    running.stop();
}

#[test]
fn handles_and_configs_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ShutdownHandle>();
    assert_send_sync::<ServerConfig>();
}
