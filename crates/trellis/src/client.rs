//! The client side: find the root's daemon, start it when absent, make sure it runs
//! this very binary (restart it otherwise), and call it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use trellis_diag::Diagnostic;
use trellis_rpc::{CallError, Client, HelloOutcome, Sent, SocketError};

use trellis_service::identity::binary_identity;

const SPAWN_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request could not be answered.
#[derive(Debug)]
pub enum ClientError {
    /// The daemon answered with diagnostics.
    Failed(Vec<Diagnostic>),
    /// The daemon could not be reached or misbehaved.
    Transport(String),
}

impl ClientError {
    fn from_call(error: CallError) -> Self {
        match error {
            CallError::Rpc(error) => Self::from_rpc(error),
            other => ClientError::Transport(other.to_string()),
        }
    }

    /// An error answer: its diagnostics, or the bare error when it has none.
    pub fn from_rpc(error: trellis_rpc::RpcError) -> Self {
        let diagnostics = error.diagnostics();
        if diagnostics.is_empty() {
            ClientError::Transport(error.to_string())
        } else {
            ClientError::Failed(diagnostics)
        }
    }

    fn from_socket(error: SocketError) -> Self {
        ClientError::Failed(vec![error.to_diagnostic()])
    }
}

/// Connects to the root's daemon, spawning it if none is there, and checks it runs
/// this binary; a daemon from another build is stopped and replaced once.
pub fn connect(root: &Path) -> Result<Client, ClientError> {
    handshake(root, None).map(|(client, _)| client)
}

/// [`connect`], with one call sent right behind the version handshake, before
/// its answer is read: a command's call costs one round trip, not two (design
/// §9.4). A daemon of another build refuses the call unrun.
fn connect_calling(
    root: &Path,
    method: &str,
    params: &Value,
) -> Result<(Client, Sent), ClientError> {
    let (client, sent) = handshake(root, Some((method, params)))?;
    Ok((
        client,
        sent.expect("the handshake sends the call it is given"),
    ))
}

/// The daemon's connection after the version handshake, with `call`, when
/// given, sent behind it and not answered yet.
fn handshake(
    root: &Path,
    call: Option<(&str, &Value)>,
) -> Result<(Client, Option<Sent>), ClientError> {
    let socket =
        trellis_rpc::socket_path_for(root).map_err(|e| ClientError::Transport(e.to_string()))?;
    let identity = binary_identity();
    let deadline = Instant::now() + SPAWN_TIMEOUT;
    let mut restarted = false;
    loop {
        let mut client =
            trellis_rpc::connect_or_spawn(&socket, || spawn_daemon(root), SPAWN_TIMEOUT)
                .map_err(ClientError::from_socket)?;
        let outcome = client.send_hello(&identity).and_then(|hello| {
            let sent =
                (call.map(|(method, params)| client.send(method, params.clone()))).transpose()?;
            Ok((client.receive_hello(hello, &identity)?, sent))
        });
        match outcome {
            Ok((HelloOutcome::Match, sent)) => return Ok((client, sent)),
            Ok((HelloOutcome::Mismatch { .. }, sent)) if !restarted => {
                restarted = true;
                // The call sent behind the handshake was refused unrun; its
                // refusal comes before the answer to the shutdown.
                if let Some(sent) = sent {
                    let _ = client.receive(sent, &mut |_| {});
                }
                // `rpc.shutdown` is honoured whatever version the client announced.
                client
                    .shutdown_daemon(&socket, SPAWN_TIMEOUT)
                    .map_err(ClientError::from_call)?;
            }
            Ok((HelloOutcome::Mismatch { daemon_version }, _)) => {
                return Err(ClientError::Transport(format!(
                    "the daemon runs {daemon_version}, this client {identity}, and restarting it did not help"
                )));
            }
            // A daemon killed a moment ago can still accept while its last threads
            // exit, then resets the connection: its socket is stale; probe again.
            // One that never answered the handshake never ran the call behind it.
            Err(error) if went_away(&error) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(error) => return Err(ClientError::from_call(error)),
        }
    }
}

fn went_away(error: &CallError) -> bool {
    match error {
        CallError::Disconnected => true,
        CallError::Io(error) => matches!(
            error.kind(),
            std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::UnexpectedEof
        ),
        _ => false,
    }
}

/// Connects only if a daemon is already running (for `daemon stop|status`).
pub fn connect_existing(root: &Path) -> Result<Option<Client>, ClientError> {
    let socket =
        trellis_rpc::socket_path_for(root).map_err(|e| ClientError::Transport(e.to_string()))?;
    match Client::connect(&socket) {
        Ok(client) => Ok(Some(client)),
        Err(_) => Ok(None),
    }
}

/// Waits until process `pid` has exited (or is a zombie nobody reaped yet);
/// `false` when it still runs after `timeout`.
pub fn wait_for_exit(pid: i32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut delay = Duration::from_millis(1);
    while is_running(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_millis(50));
    }
    true
}

/// Whether `pid` names a live (not zombie) process.
fn is_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesized command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) if std::path::Path::new("/proc/self").exists() => false,
        Err(_) => signal_zero(pid),
    }
}

/// Without `/proc`: signal 0 probes for existence without touching the process.
#[allow(unsafe_code)]
fn signal_zero(pid: i32) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only checks that `pid` exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Starts `trellis daemon run` for the root, detached, its output in
/// `.trellis/daemon.log`.
fn spawn_daemon(root: &Path) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe()?;
    let log_dir = root.join(".trellis");
    std::fs::create_dir_all(&log_dir)?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_dir.join("daemon.log"))?;
    Command::new(exe)
        .args(["daemon", "run"])
        .env("TRELLIS_ROOT", root)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()?;
    Ok(())
}

/// One request to the daemon; progress notifications go to `progress`.
pub fn call(
    client: &mut Client,
    method: &str,
    params: Value,
    progress: &mut dyn FnMut(Value),
) -> Result<Value, ClientError> {
    client
        .call_with_notifications(method, params, &mut |notification| {
            progress(notification.params)
        })
        .map_err(ClientError::from_call)
}

/// One request over the path every command takes: the root's daemon, or,
/// under `--no-daemon`, a service in this process, behind the daemon's panic
/// boundary so a bug answers as it would there. Progress events of long
/// commands go to `progress`.
pub fn request(
    root: &Path,
    no_daemon: bool,
    method: &str,
    params: Value,
    progress: &mut dyn FnMut(Value),
) -> Result<Value, ClientError> {
    let (answer, unstored) = request_storing_later(root, no_daemon, method, params, progress);
    if let Some(unstored) = unstored {
        unstored.store();
    }
    answer
}

/// [`request`], with what an in-process service answered left to store
/// ([`Unstored::store`]) once the answer is out: a one-shot `check` stores
/// the status beside it (design §7.16), which a person need not wait for to
/// read the check.
pub fn request_storing_later(
    root: &Path,
    no_daemon: bool,
    method: &str,
    params: Value,
    progress: &mut dyn FnMut(Value),
) -> (Result<Value, ClientError>, Option<Unstored>) {
    if no_daemon {
        let (answer, unstored) = in_process(root, method, &params, progress);
        (answer, Some(unstored))
    } else {
        let answer = connect_calling(root, method, &params).and_then(|(mut client, sent)| {
            (client.receive(sent, &mut |notification| progress(notification.params)))
                .map_err(ClientError::from_call)
        });
        (answer, None)
    }
}

/// [`request`], the result left in its frame for the caller to decode into its
/// own types (the `context` answer's thousands of files).
pub fn request_frame(
    root: &Path,
    no_daemon: bool,
    method: &str,
    params: Value,
    progress: &mut dyn FnMut(Value),
) -> Result<trellis_rpc::ResultFrame, ClientError> {
    if no_daemon {
        let (answer, unstored) = in_process(root, method, &params, progress);
        unstored.store();
        answer.map(|result| trellis_rpc::ResultFrame::of(&result))
    } else {
        connect_calling(root, method, &params).and_then(|(mut client, sent)| {
            (client.receive_frame(sent, &mut |notification| progress(notification.params)))
                .map_err(ClientError::from_call)
        })
    }
}

fn in_process(
    root: &Path,
    method: &str,
    params: &Value,
    progress: &mut dyn FnMut(Value),
) -> (Result<Value, ClientError>, Unstored) {
    let mut service = trellis_service::service::Service::one_shot(root.to_owned());
    let answer = trellis_rpc::catching(method, || service.handle(method, params, progress))
        .map_err(ClientError::from_rpc);
    (answer, Unstored(service))
}

/// An in-process service whose answers are not stored yet.
pub struct Unstored(trellis_service::service::Service);

impl Unstored {
    /// Stores what the service answered, so the next run may answer without
    /// loading the root (design §7.16), then lets it go. Freeing the
    /// database memo by memo was a seventh of a cold `check --no-daemon` at
    /// 20,000 definitions (design §7.15): it is freed on a thread of its own,
    /// which a command that ends now does not wait for (the operating system
    /// takes the memory back whole) and a REPL lets finish.
    pub fn store(self) {
        let mut service = self.0;
        // The store is a cache, and may compute the answer not asked: a bug
        // there must not fail the command whose answer is out. Behind the
        // same panic boundary as the request itself.
        let stored = trellis_rpc::catching("store", || {
            service.store_answers_of_one_shot();
            Ok(Value::Null)
        });
        if let Err(error) = stored {
            eprintln!(
                "trellis: the answers were not kept for the next run: {}",
                error.message
            );
        }
        std::thread::spawn(move || drop(service));
    }
}
