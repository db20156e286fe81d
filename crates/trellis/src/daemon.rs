//! `trellis daemon run`: bind the root's socket and serve the [`Service`] until a
//! `daemon.stop` request. One database per daemon, behind a mutex: requests are
//! answered one at a time, each from a freshly refreshed revision. Nothing is
//! written to a socket under that mutex: progress is queued to each connection's
//! writer, whose writes are bounded, so a client that stops reading is dropped
//! instead of stalling everyone else.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use trellis_rpc::{Answer, Handler, Notifier, RpcError, Server, ServerConfig, ShutdownHandle};

use trellis_agent::{Lowering, Requeue};
use trellis_service::identity::binary_identity;
use trellis_service::protocol::{DaemonStatus, DaemonStopped, encode_answer};
use trellis_service::service::Service;

struct DaemonHandler {
    service: Arc<Mutex<Service>>,
    /// The lowering queue and its runner thread (design §4.9): its own state,
    /// so following a lowering never holds the service.
    lowering: Arc<Lowering>,
    shutdown: ShutdownHandle,
    started: std::time::Instant,
}

impl Handler for DaemonHandler {
    fn handle(&self, method: &str, params: Value, notifier: &mut Notifier<'_>) -> Answer {
        // Progress is queued to the connection's writer, never written here:
        // the database lock may be held, and no client may make another wait
        // (trellis-rpc's writer thread bounds the write). A client that stopped
        // listening loses progress, not the answer.
        let mut progress = |event: Value| {
            let _ = notifier.notify("progress", event);
        };
        match method {
            "daemon.stop" => {
                // The jobs end first, each with its outcome, so every client
                // following one is answered before the connections close.
                self.lowering
                    .shutdown("the daemon was stopped (trellis daemon stop)");
                self.shutdown.shutdown();
                Ok(encode_answer(&DaemonStopped {
                    stopped: true,
                    pid: std::process::id(),
                }))
            }
            "daemon.status" => Ok(encode_answer(&DaemonStatus {
                pid: std::process::id(),
                version: binary_identity(),
                uptime_ms: self.started.elapsed().as_millis() as u64,
            })),
            "jobs" => Ok(self.lowering.jobs()),
            "jobs.follow" => self.lowering.follow_request(&params, &mut progress),
            "lower" => self.lowering.lower(&params, &mut progress),
            "decisions.triage" => self.lowering.triage(&params, &mut progress),
            "answer" => {
                // A request to re-run the asking job rides beside the answer's
                // own params; it re-runs as the job that asked ran.
                let mut params = params;
                let lower = params
                    .as_object_mut()
                    .and_then(|fields| fields.remove("lower"));
                let mut answer = self.service_call(method, &params, &mut progress)?;
                if let (Some(_), Some(def)) = (lower, answer["requeue"].as_str()) {
                    let (requeued, provider, follow) = match self.lowering.requeue_asked(def) {
                        Requeue::Queued { provider, cursor } => {
                            (true, Some(provider), Some(cursor))
                        }
                        Requeue::Busy { cursor } => (false, None, Some(cursor)),
                        Requeue::Unknown => (false, None, None),
                    };
                    answer["requeued"] = Value::Bool(requeued);
                    answer["requeued_with"] = serde_json::json!(provider);
                    answer["follow"] = serde_json::json!(follow);
                }
                Ok(answer)
            }
            _ => self.service_call(method, &params, &mut progress),
        }
    }
}

impl DaemonHandler {
    /// A request the service answers, under its lock.
    fn service_call(
        &self,
        method: &str,
        params: &Value,
        progress: &mut dyn FnMut(Value),
    ) -> Result<Value, RpcError> {
        let mut service = lock(&self.service);
        let started = std::time::Instant::now();
        let answer = service.handle(method, params, progress);
        let long = started.elapsed() >= LONG_ANSWER || service.follows_many_changes();
        // What can wait until the answer is out waits, on a thread of its own.
        if service.untidy() {
            let service = Arc::clone(&self.service);
            spawn_asking("trellis-tidy", move || {
                lock(&service).tidy();
                if long {
                    return_free_pages();
                    crate::heap::back_loaded_heap_with_huge_pages();
                }
            });
        }
        if service.wants_warm_up() {
            let service = Arc::clone(&self.service);
            spawn_asking("trellis-warm-up", move || {
                std::thread::sleep(WARM_UP_AFTER_THE_ANSWER);
                Service::warm_up(&service);
                crate::heap::back_loaded_heap_with_huge_pages();
            });
        }
        answer
    }
}

/// An answer that took this long, or followed a change of many files (a
/// first load, however quick), did work on the scale of the root (a first
/// `status`, a suite's run), and what it freed is worth handing back to the
/// system once it is out; an edit's answer takes milliseconds, and the pages
/// it frees are the ones the next edit reuses. After such an answer, or the
/// load behind stored answers, the heap the root fills is gathered into huge
/// pages ([`crate::heap::back_loaded_heap_with_huge_pages`]). The change
/// decides where the clock could not: a first load of a small root, or of
/// one on a fast machine, ends under the line.
const LONG_ANSWER: Duration = Duration::from_millis(50);

/// Hands the pages the allocator holds free back to the system. mimalloc
/// purges a freed page a second after it is freed, but only when an
/// allocation comes by to do it, and an idle daemon makes none: without this
/// it would hold the peak of its last long answer (a first load's parse
/// trees, freed by the tidy once it is out) until the next request. A few
/// milliseconds, off the answer's path.
fn return_free_pages() {
    #[expect(unsafe_code, reason = "mimalloc's C entry point")]
    // SAFETY: mi_collect takes no pointer and may run on any thread at any
    // time; without mimalloc as the global allocator (tests) it tidies an
    // empty heap.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// Starts `work`, which asks the database, on a thread of its own with the
/// stack such work needs (`trellis_db::QUERY_STACK_BYTES`, design §7.18).
fn spawn_asking(name: &str, work: impl FnOnce() + Send + 'static) {
    if let Err(error) = trellis_db::spawn_query_thread(name, work) {
        eprintln!("trellis daemon: no thread for {name}: {error}");
    }
}

/// Serves the root until stopped. Returns a message for the user on failure.
pub fn run(root: &Path) -> Result<(), String> {
    let socket = trellis_rpc::socket_path_for(root).map_err(|e| format!("no socket path: {e}"))?;
    let config = ServerConfig {
        // Each connection's thread answers its requests from the database.
        handler_stack_bytes: Some(trellis_db::QUERY_STACK_BYTES),
        ..ServerConfig::new(binary_identity())
    };
    let server = Server::bind(&socket, config).map_err(|e| e.to_diagnostic().message)?;
    // Read once here, not by the service: answers depend only on the request.
    let watch = !std::env::var("TRELLIS_WATCH")
        .is_ok_and(|value| matches!(value.as_str(), "off" | "0" | "false" | "no"));
    // The agent jail is probed once, a while after the start (a bubblewrap
    // run, tens of milliseconds of both cores that the first answer needs
    // more): a real provider is refused later with what this found missing,
    // and a `lower` arriving first runs the probe itself (design §4.9.1).
    std::thread::spawn(|| {
        std::thread::sleep(JAIL_PROBE_DELAY);
        if let Err(problem) = trellis_agent::jail::probe_once() {
            eprintln!(
                "trellis daemon: {} (real agent providers are refused)",
                problem.message
            );
        }
    });
    let mut service = Service::watching(root.to_owned(), watch);
    // Answer from the stored answers while the root loads behind them, when
    // the root is as they were (design §7.16); else load the root before the
    // first client asks, so its first answer is quick.
    if !service.start_from_store() {
        service.refresh();
    }
    let queue = service.change_queue();
    let service = Arc::new(Mutex::new(service));
    if lock(&service).wants_warm_up() {
        // The client that started this daemon asks first; the load behind
        // the stored answers starts once it is answered, or after a while.
        let service = Arc::clone(&service);
        spawn_asking("trellis-warm-up", move || {
            std::thread::sleep(WARM_UP_PATIENCE);
            Service::warm_up(&service);
        });
    }
    if let Some(queue) = queue {
        let service = Arc::clone(&service);
        spawn_asking("trellis-ahead", move || {
            ask_ahead_of_requests(&service, &queue)
        });
    }
    let lowering = Lowering::start(Arc::clone(&service), socket.clone());
    let service_for_store = Arc::clone(&service);
    let shutdown = server.shutdown_handle();
    // A stop that does not come through `daemon.stop` (`rpc.shutdown`, from a
    // client of another build) ends the jobs the same way.
    {
        let (lowering, shutdown) = (Arc::clone(&lowering), shutdown.clone());
        std::thread::spawn(move || {
            while !shutdown.is_requested() {
                std::thread::sleep(Duration::from_millis(100));
            }
            lowering.shutdown("the daemon was stopped");
        });
    }
    let handler = DaemonHandler {
        service,
        lowering: Arc::clone(&lowering),
        shutdown,
        started: std::time::Instant::now(),
    };
    eprintln!(
        "trellis daemon for {} listening on {}",
        root.display(),
        socket.display()
    );
    let served = server.serve(handler);
    // However serving ended, no job outlives it without its outcome.
    lowering.shutdown("the daemon stopped");
    // The next daemon starts from what this one answered (design §7.16), its
    // files' stamps vouching for them wherever they can.
    let mut service = lock(&service_for_store);
    service.settle_racy();
    service.store_answers(true);
    drop(service);
    trellis_service::service::stop_warm_oracles();
    served.map_err(|e| format!("the daemon stopped: {e}"))
}

/// How long a daemon that starts from stored answers waits for its first
/// request before it loads the root behind them (design §7.16): the load
/// takes both cores, and the request that started the daemon is quick.
const WARM_UP_PATIENCE: Duration = Duration::from_secs(1);

/// How long the load behind the stored answers waits once the first answer
/// is made: long enough for it to be written and for the client to read it,
/// print it and exit, which the load's threads on both cores held back by
/// 11–14 ms of a restart's 100 (design §7.16).
const WARM_UP_AFTER_THE_ANSWER: Duration = Duration::from_millis(10);

/// How long after its start the daemon probes the agent jail (design
/// §4.9.1): past its first answer, which needs both cores.
const JAIL_PROBE_DELAY: Duration = Duration::from_secs(1);

/// How long a file may stay open for writing before its change is applied
/// anyway: an editor's save closes within microseconds; a process that keeps
/// a file open must not keep the work from starting.
const WRITE_PATIENCE: Duration = Duration::from_millis(25);

/// How long the feed must stay quiet after its first event before a change
/// that may continue is applied: a save of a definition writes its `.tr` and
/// its `.soil` microseconds apart, and applying the first alone would be
/// cancelled by the second. A save in place of a body, of decisions or of
/// `soil.toml` is applied at once: nothing else is written with it, and the
/// pause was a tenth of the `status` after a hub's edit (design §7.10).
const QUIET: Duration = Duration::from_micros(300);

/// The daemon's thread that starts on a change as soon as the feed reports it
/// (design §7.10): the client that made the edit is still starting when the
/// change is applied and what the next check and status need is answered
/// here, off the service's lock, so a request that arrives meanwhile is never
/// held up by it. A request that changes the root first cancels the work.
fn ask_ahead_of_requests(service: &Mutex<Service>, queue: &std::fs::File) {
    use trellis_service::service::AheadOfRequests;
    let mut patience = None;
    loop {
        let news = trellis_service::watch::sys::wait_for_events(queue, patience);
        if news && lock(service).change_may_continue() {
            std::thread::sleep(QUIET);
        }
        let ahead = lock(service).ask_ahead(!news);
        patience = None;
        match ahead {
            AheadOfRequests::Nothing => {}
            AheadOfRequests::Writing => patience = Some(WRITE_PATIENCE),
            AheadOfRequests::Ask(ahead) => {
                // A bug met here is met again by the request, which reports
                // it; this thread goes on to the next change.
                let answered =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ahead.answer()));
                match answered {
                    // What no request took yet is kept, unless the feed
                    // already has the next change.
                    Ok(true)
                        if !trellis_service::watch::sys::wait_for_events(
                            queue,
                            Some(Duration::ZERO),
                        ) =>
                    {
                        lock(service).absorb_answered_ahead();
                    }
                    Ok(_) => {}
                    Err(_) => eprintln!(
                        "trellis daemon: answering a change ahead of its request panicked"
                    ),
                }
            }
        }
    }
}

/// The service, whatever a panic under its lock left: salsa keeps the
/// database consistent, so serving goes on.
fn lock(service: &Mutex<Service>) -> MutexGuard<'_, Service> {
    service
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
