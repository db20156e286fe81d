//! No client can stall the server for another: a client that stops reading while
//! its request streams notifications under a shared lock, and a client that sends
//! half a frame and goes quiet, are both dropped, and everyone else is answered.
//! A client that sends requests and never reads their answers stops being read:
//! the server answers only as many as its outbox holds (design §9.1, §9.11).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trellis_rpc::{Answer, Client, Handler, Notifier, Server, ServerConfig, ShutdownHandle};

/// A daemon-like handler: every method runs under one lock, as the real daemon's
/// database does; `flood` notifies far more than a socket buffer holds.
struct Locked {
    state: Mutex<()>,
    flooded: AtomicUsize,
    /// How many `big` requests were answered.
    big: AtomicUsize,
}

/// The size of one `big` answer.
const BIG: usize = 256 * 1024;

impl Handler for Locked {
    fn handle(&self, method: &str, params: Value, notifier: &mut Notifier<'_>) -> Answer {
        let _guard = self.state.lock().expect("lock");
        if method == "big" {
            self.big.fetch_add(1, Ordering::SeqCst);
            return Ok(json!("b".repeat(BIG)));
        }
        if method != "flood" {
            return Ok(params);
        }
        let chunk = "p".repeat(64 * 1024);
        for step in 0..200 {
            // A client that stopped listening loses progress, not the answer.
            let _ = notifier.notify("progress", json!({ "step": step, "pad": chunk }));
        }
        self.flooded.fetch_add(1, Ordering::SeqCst);
        Ok(json!("flooded"))
    }
}

struct Served {
    _dir: TempDir,
    socket: PathBuf,
    shutdown: ShutdownHandle,
    thread: Option<thread::JoinHandle<std::io::Result<()>>>,
    handler: Arc<Locked>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn serve(tag: &str, config: ServerConfig) -> Served {
    let dir = std::env::temp_dir().join(format!("trellis-stall-{}-{tag}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let socket = dir.join("run").join("d.sock");
    let server = Server::bind(&socket, config).expect("binds");
    let shutdown = server.shutdown_handle();
    let handler = Arc::new(Locked {
        state: Mutex::new(()),
        flooded: AtomicUsize::new(0),
        big: AtomicUsize::new(0),
    });
    let served = Arc::clone(&handler);
    let thread = thread::spawn(move || server.serve(served));
    Served {
        _dir: TempDir(dir),
        socket,
        shutdown,
        thread: Some(thread),
        handler,
    }
}

#[test]
fn a_client_that_never_reads_stalls_nobody() {
    let mut config = ServerConfig::new("1");
    config.write_timeout = Duration::from_millis(300);
    let served = serve("reader", config);
    // Sends `flood` and never reads a byte of the answer.
    let mut silent = UnixStream::connect(&served.socket).expect("connects");
    silent
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"flood\"}\n")
        .expect("sends");
    // The flood holds the lock while it notifies; it must finish all the same.
    let started = Instant::now();
    while served.handler.flooded.load(Ordering::SeqCst) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the handler is stuck writing to a client that does not read"
        );
        thread::sleep(Duration::from_millis(10));
    }
    let mut other = Client::connect(&served.socket).expect("connects");
    other
        .set_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    assert_eq!(
        other.call("echo", json!([1])).expect("answered"),
        json!([1])
    );
    // Answers are never dropped (progress may be): asking for more than the kernel
    // buffers makes the server's writer wait on the silent client for certain, so
    // the write timeout must drop it, however the flood's progress was scheduled.
    let pad = "q".repeat(64 * 1024);
    for id in 2..66 {
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"echo\",\"params\":[\"{pad}\"]}}\n"
        );
        if silent.write_all(request.as_bytes()).is_err() {
            break; // already dropped
        }
    }
    // Not reading for well past the write timeout leaves the writer blocked on a
    // full buffer (the answers are megabytes), so it must drop the client; reading
    // at once would drain the buffer and let the writer go on, which is no drop.
    thread::sleep(Duration::from_secs(2));
    // The silent client was dropped: after what the kernel buffered, the end.
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut sink = Vec::new();
    match silent.read_to_end(&mut sink) {
        Ok(_) => {}
        Err(error) => assert!(
            matches!(
                error.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            ),
            "the server closes the connection, not: {error}"
        ),
    }
}

#[test]
fn a_half_sent_frame_is_dropped_after_the_frame_timeout() {
    let mut config = ServerConfig::new("1");
    config.frame_timeout = Duration::from_millis(200);
    let served = serve("half", config);
    let mut half = UnixStream::connect(&served.socket).expect("connects");
    half.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    half.write_all(&vec![b'x'; 1 << 20])
        .expect("sends a megabyte");
    let mut reader = BufReader::new(half);
    let mut line = String::new();
    // The server gives up on the frame and hangs up: end of stream, not a timeout.
    let read = reader.read_line(&mut line).expect("closed, not timed out");
    assert_eq!(read, 0, "{line}");
    // An idle connection (no frame started) is not dropped.
    let mut idle = Client::connect(&served.socket).expect("connects");
    thread::sleep(Duration::from_millis(400));
    idle.set_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    assert_eq!(idle.call("echo", json!([2])).expect("answered"), json!([2]));
}

#[test]
fn a_client_that_never_reads_its_answers_stops_being_read() {
    let mut config = ServerConfig::new("1");
    config.write_timeout = Duration::from_secs(3);
    let served = serve("deaf", config);
    let mut deaf = UnixStream::connect(&served.socket).expect("connects");
    deaf.set_write_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    let mut sent = 0;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(1) {
        let request = format!("{{\"jsonrpc\":\"2.0\",\"id\":{sent},\"method\":\"big\"}}\n");
        if deaf.write_all(request.as_bytes()).is_ok() {
            sent += 1;
        }
    }
    let answered = served.handler.big.load(Ordering::SeqCst);
    // The outbox holds 1 MiB (four answers), the writer one more on its way
    // into the socket buffer, and the reader one in hand: a handful, not the
    // thousands of requests the client managed to send before the server
    // stopped reading.
    assert!(
        answered <= 8,
        "{answered} answers were made for a client that reads none ({sent} requests sent)"
    );
    // Everyone else is still answered at once.
    let mut other = Client::connect(&served.socket).expect("connects");
    other
        .set_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    assert_eq!(
        other.call("echo", json!([3])).expect("answered"),
        json!([3])
    );
    // After the write timeout the deaf client is dropped, its outbox freed.
    thread::sleep(Duration::from_secs(4));
    deaf.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut sink = Vec::new();
    let _ = deaf.read_to_end(&mut sink);
    assert!(
        sink.len() < 8 * (BIG + 64),
        "{} bytes reached the client",
        sink.len()
    );
    assert_eq!(served.handler.big.load(Ordering::SeqCst), answered);
}
