//! The job queue and its runner (impl plan §8.2, design §4.9): `lower` requests
//! append definitions in callee-first order, each with the callees it waits on;
//! a scheduler thread starts each entry once what it waits on has landed and its
//! request's `--jobs` has a free slot, on a worker thread of its own; and every
//! state change is an event the requesting clients follow. A callee that does
//! not land holds its callers (`held`, with the reason). The rules are
//! `schedule`'s; the state, the threads and the events are here. Queue state is
//! its own mutex, never the service's: a client asking `jobs` or waiting on its
//! lowerings holds nothing the runner or other requests need.
//!
//! Every job that starts ends with an outcome, in its events and in f.log —
//! whatever ends it: the gate, a cap, the agent's failure, the daemon stopping
//! (`cancelled`), even a bug in the runner (its [`JobLog`] writes the outcome
//! as it is dropped). A stopping daemon cancels its queue too, so no client
//! following a lowering is left without an outcome.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trellis_diag::Diagnostic;
use trellis_rpc::{ErrorCode, RpcError};

use crate::agent::{self, AgentProcess, Invocation};
use crate::providers::Provider;
use crate::schedule::{self, Active, Batch, Queued};
use trellis_service::codes::HostCode;
use trellis_service::flog;
use trellis_service::order;
use trellis_service::service::Service;
use trellis_service::service::lowering::{Agent, Gate};
use trellis_service::service::triage::Flagged;

/// How often the runner looks whether a running job's agent has ended.
const POLL: Duration = Duration::from_millis(5);
/// How often it checks the caps and whether what the job was built against
/// still holds (a refresh and a bundle comparison under the service lock).
const STALENESS_POLL: Duration = Duration::from_millis(100);
/// How many times an invalidated job is re-queued before it is reported failed.
const MAX_ATTEMPTS: u32 = 5;
/// Finished jobs kept for `trellis jobs`.
const FINISHED_KEPT: usize = 200;
/// How often the scheduler looks again with nothing to wake it (a total
/// wall-clock cap running out on a queued entry).
const SCHEDULER_POLL: Duration = Duration::from_millis(250);
/// How long a stopping daemon waits for its running jobs to record their endings
/// (the agent is ended within a staleness poll; a gate already under way
/// finishes first).
const STOP_WAIT: Duration = Duration::from_secs(20);

/// The daemon's lowering queue and runner.
pub struct Lowering {
    state: Mutex<QueueState>,
    changed: Condvar,
    service: Arc<Mutex<Service>>,
    socket: PathBuf,
}

#[derive(Default)]
struct QueueState {
    /// In queue order (`Entry::seq`).
    pending: VecDeque<Entry>,
    /// In the order they started.
    running: Vec<Running>,
    /// The next entry's place in the queue.
    next_seq: u64,
    finished: VecDeque<Finished>,
    events: Vec<Event>,
    /// Why the daemon is stopping, once it is: nothing more starts.
    stopping: Option<String>,
    /// The runner is done and every queued entry was cancelled: no event
    /// follows.
    stopped: bool,
    /// How many jobs each queue key has started in this daemon's life.
    runs: std::collections::HashMap<String, u32>,
    /// The entry of each definition whose last job asked a question: its
    /// answer re-runs the job as it ran (provider, environment, PATH).
    asked: std::collections::HashMap<String, Entry>,
}

#[derive(Clone)]
struct Entry {
    def: String,
    provider: Provider,
    path: String,
    /// Consecutive invalidations so far, plus one.
    attempt: u32,
    /// The nth job of this key in the daemon's life (set when it starts).
    run: u32,
    /// A triage of one flagged reliance instead of a lowering.
    triage: Option<Flagged>,
    /// Its place in the queue: jobs start in this order as they can, and the
    /// drafts of one module that add private helpers land in it.
    seq: u64,
    /// Its request's `--jobs`: it starts only while fewer jobs hold a slot.
    limit: usize,
    /// Queue keys that must land (end green or partial) before it starts.
    waits_on: BTreeSet<String>,
    /// Its request's jobs together, for the total caps.
    batch: Arc<Batch>,
}

impl Entry {
    /// The definition it works on (a triage's key names an entry besides).
    fn subject(&self) -> &str {
        self.triage
            .as_ref()
            .map_or(&self.def, |flagged| &flagged.def)
    }

    fn module(&self) -> &str {
        self.subject().split("::").next().unwrap_or_default()
    }
}

struct Running {
    entry: Entry,
    job: Option<String>,
    started: Instant,
    /// The agent's process group, so a shutdown can kill it.
    group: Option<i32>,
    /// False while its agent is done and it waits for its turn to land.
    holds_slot: bool,
}

#[derive(Clone)]
struct Finished {
    def: String,
    job: Option<String>,
    outcome: &'static str,
    detail: Value,
    attempt: u32,
    seconds: f64,
}

#[derive(Clone)]
struct Event {
    def: String,
    state: &'static str,
    job: Option<String>,
    detail: Value,
}

/// An outcome that ends a queue entry (`invalidated` re-queues it instead).
const TERMINAL: &[&str] = &[
    "green",
    "partial",
    "failed",
    "question",
    "cancelled",
    "conforms",
    "nonconforming",
    "held",
];

/// Which lowering an answer re-ran, for the `answer` request's reply.
pub enum Requeue {
    /// Queued afresh with the asking job's provider.
    Queued { provider: String, cursor: usize },
    /// Already queued or running; its outcome is followed from `cursor`.
    Busy { cursor: usize },
    /// This daemon ran no job of the definition that asked (it was restarted
    /// since): nothing is guessed.
    Unknown,
}

impl Lowering {
    /// Starts the runner thread over the daemon's service.
    pub fn start(service: Arc<Mutex<Service>>, socket: PathBuf) -> Arc<Lowering> {
        // What a killed predecessor left: nothing ran those jobs' endings.
        crate::claude::sweep_scratch(&socket);
        let lowering = Arc::new(Lowering {
            state: Mutex::new(QueueState::default()),
            changed: Condvar::new(),
            service,
            socket,
        });
        let runner = Arc::clone(&lowering);
        std::thread::Builder::new()
            .name("trellis-lowering".to_owned())
            .spawn(move || runner.run())
            .expect("spawn the job-runner thread");
        lowering
    }

    fn state(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn service(&self) -> MutexGuard<'_, Service> {
        self.service.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops the runner (the daemon is shutting down, `why`): nothing more
    /// starts, every queued entry is cancelled, and each running job is ended —
    /// its agent's group killed — and records its outcome (`cancelled`) before
    /// this returns, waiting at most [`STOP_WAIT`]. Later calls wait the same way.
    pub fn shutdown(&self, why: &str) {
        let mut state = self.state();
        if state.stopping.is_none() {
            state.stopping = Some(why.to_owned());
            let pending: Vec<Entry> = state.pending.drain(..).collect();
            for entry in pending {
                let detail = cancelled_detail("queue", why);
                push_event(&mut state, &entry.def, "cancelled", None, detail);
            }
        }
        self.changed.notify_all();
        let deadline = Instant::now() + STOP_WAIT;
        while !state.running.is_empty() && Instant::now() < deadline {
            state = self
                .changed
                .wait_timeout(state, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        for running in &state.running {
            // The runner is stuck in a step that does not watch for the stop:
            // end the agent at least; its job is left to the next start's sweep.
            if let Some(group) = running.group {
                agent::kill_process_group(group);
            }
            eprintln!(
                "trellis daemon: {} did not end within {} s of the stop",
                running.entry.def,
                STOP_WAIT.as_secs()
            );
        }
        state.stopped = true;
        self.changed.notify_all();
    }
    /// `jobs`: the queue (each entry with what it waits on: the callees that
    /// must land first, none when it waits for a slot), the running set (in the
    /// order they started; `running` is its first, for older clients) and the
    /// finished ones.
    pub fn jobs(&self) -> Value {
        let state = self.state();
        let pending: Vec<Value> = state
            .pending
            .iter()
            .map(|entry| {
                json!({
                    "def": entry.def, "attempt": entry.attempt, "provider": entry.provider.name,
                    "waits_on": entry.waits_on, "jobs": entry.limit,
                })
            })
            .collect();
        let running: Vec<Value> = state
            .running
            .iter()
            .map(|running| {
                json!({
                    "def": running.entry.def,
                    "job": running.job,
                    "attempt": running.entry.attempt,
                    "provider": running.entry.provider.name,
                    "seconds": running.started.elapsed().as_secs_f64(),
                    "group": running.group,
                    // `landing`: its agent is done; it waits for an earlier job
                    // of its module to land first.
                    "phase": if running.holds_slot { "running" } else { "landing" },
                })
            })
            .collect();
        let finished: Vec<Value> = state.finished.iter().map(Finished::to_json).collect();
        json!({
            "pending": pending,
            "running": running.first().cloned().unwrap_or(Value::Null),
            "running_set": running,
            "finished": finished,
        })
    }

    fn refuse_when_stopping(&self) -> Result<(), RpcError> {
        match &self.state().stopping {
            Some(why) => Err(RpcError::new(
                ErrorCode::ShuttingDown,
                format!("the daemon is stopping ({why}): nothing more is queued"),
            )),
            None => Ok(()),
        }
    }

    /// `lower {defs, provider, path}`: queues the definitions (all that need a
    /// lowering when none is named), then follows them, sending each job state
    /// change to `progress`, until each has an outcome.
    pub fn lower(
        &self,
        params: &Value,
        progress: &mut dyn FnMut(Value),
    ) -> Result<Value, RpcError> {
        let provider = Provider::from_json(&params["provider"]).ok_or_else(|| {
            RpcError::new(
                ErrorCode::InvalidParams,
                "lower: `provider` must be a provider record",
            )
        })?;
        if provider.needs_jail() {
            // The sandbox is not best-effort (design §4.9.1).
            crate::jail::available().map_err(|d| RpcError::failed(&[d]))?;
        }
        let limit = jobs_param(params, "lower", schedule::default_jobs())?;
        self.refuse_when_stopping()?;
        let named: Vec<String> = match &params["defs"] {
            Value::Null => Vec::new(),
            Value::Array(defs) => defs
                .iter()
                .map(|def| def.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    RpcError::new(ErrorCode::InvalidParams, "lower: `defs` must be names")
                })?,
            _ => {
                return Err(RpcError::new(
                    ErrorCode::InvalidParams,
                    "lower: `defs` must be an array of names",
                ));
            }
        };
        let path = trellis_service::service::client_path_param(params);
        let (batch, may_call, skipped) = {
            let mut service = self.service();
            service.refresh();
            trellis_service::service::check_pin_of(&service).map_err(|d| RpcError::failed(&[d]))?;
            let (candidates, skipped) = service
                .lowering_candidates(&named)
                .map_err(|errors| RpcError::failed(&errors))?;
            let db = service.database();
            let functions: BTreeSet<String> = order::functions(db).into_iter().collect();
            let may_call: BTreeMap<String, BTreeSet<String>> = candidates
                .iter()
                .map(|def| (def.clone(), order::may_call(db, def, &functions)))
                .collect();
            let ordered = order::callee_first(&candidates, |def| {
                may_call.get(def).cloned().unwrap_or_default()
            });
            (ordered, may_call, skipped)
        };
        let cursor;
        let mut queued = Vec::new();
        let mut already = Vec::new();
        {
            let mut state = self.state();
            cursor = state.events.len();
            let in_queue: BTreeSet<String> = state.keys().map(str::to_owned).collect();
            let waits = schedule::batch_waits(&batch, &may_call, &in_queue);
            let shared = Arc::new(Batch::new(provider.caps.total));
            for (def, waits_on) in batch.iter().zip(waits) {
                if state.is_busy(def) {
                    already.push(def.clone());
                    continue;
                }
                let entry = Entry {
                    def: def.clone(),
                    provider: provider.clone(),
                    path: path.clone(),
                    attempt: 1,
                    run: 0,
                    triage: None,
                    seq: 0,
                    limit,
                    waits_on,
                    batch: Arc::clone(&shared),
                };
                let detail = json!({ "attempt": 1, "waits_on": entry.waits_on });
                state.enqueue(entry);
                push_event(&mut state, def, "queued", None, detail);
                queued.push(def.clone());
            }
            self.changed.notify_all();
        }
        let outcomes = self.follow(cursor, &batch, progress);
        Ok(json!({
            "queued": queued,
            "already_queued": already,
            "skipped": skipped,
            "outcomes": outcomes,
        }))
    }

    /// Queues `def` fresh as the job that asked its question ran — the same
    /// provider, with the environment and `PATH` its `lower` brought — unless
    /// it is queued or running already (an answered question re-runs its job,
    /// trellis-daemon §8). Does not wait: the reply's cursor lets the client
    /// follow it ([`Lowering::follow_request`]).
    pub fn requeue_asked(&self, def: &str) -> Requeue {
        let mut state = self.state();
        let cursor = state.events.len();
        if state.is_busy(def) {
            return Requeue::Busy { cursor };
        }
        if state.stopping.is_some() {
            return Requeue::Unknown;
        }
        let Some(asked) = state.asked.remove(def) else {
            return Requeue::Unknown;
        };
        let provider = asked.provider.name.clone();
        // A fresh request of its own: its callees had landed when it asked,
        // and the asking request's totals are not this one's.
        let batch = Arc::new(Batch::new(asked.provider.caps.total));
        state.enqueue(Entry {
            attempt: 1,
            run: 0,
            waits_on: BTreeSet::new(),
            batch,
            ..asked
        });
        push_event(&mut state, def, "queued", None, json!({ "attempt": 1 }));
        self.changed.notify_all();
        Requeue::Queued { provider, cursor }
    }

    /// `jobs.follow {defs, cursor}`: follows the named definitions' jobs from
    /// an event cursor (an `answer` reply's) as `lower` does, until each has an
    /// outcome.
    pub fn follow_request(
        &self,
        params: &Value,
        progress: &mut dyn FnMut(Value),
    ) -> Result<Value, RpcError> {
        let defs: Vec<String> = params["defs"]
            .as_array()
            .and_then(|defs| defs.iter().map(|d| d.as_str().map(str::to_owned)).collect())
            .ok_or_else(|| {
                RpcError::new(
                    ErrorCode::InvalidParams,
                    "jobs.follow: `defs` must be names",
                )
            })?;
        let cursor = params["cursor"]
            .as_u64()
            .and_then(|cursor| usize::try_from(cursor).ok())
            .ok_or_else(|| {
                RpcError::new(
                    ErrorCode::InvalidParams,
                    "jobs.follow: `cursor` must be an event cursor",
                )
            })?;
        let cursor = {
            let state = self.state();
            let cursor = cursor.min(state.events.len());
            // Only a job that is there to follow: a name with nothing queued,
            // running or reported since the cursor would be waited on for ever.
            for def in &defs {
                let known = state.is_busy(def)
                    || state.events[cursor..].iter().any(|event| &event.def == def);
                if !known {
                    return Err(RpcError::failed(&[HostCode::JobNotFound.diagnostic(
                        format!("no lowering of {def} to follow: nothing is queued or running"),
                    )]));
                }
            }
            cursor
        };
        let outcomes = self.follow(cursor, &defs, progress);
        Ok(json!({ "queued": [], "already_queued": [], "skipped": [], "outcomes": outcomes }))
    }

    /// `decisions.triage {label, provider, path}`: one triage job per flagged
    /// reliance (on `label`, or on any entry), followed like `lower`.
    pub fn triage(
        &self,
        params: &Value,
        progress: &mut dyn FnMut(Value),
    ) -> Result<Value, RpcError> {
        let provider = Provider::from_json(&params["provider"]).ok_or_else(|| {
            RpcError::new(
                ErrorCode::InvalidParams,
                "decisions.triage: `provider` must be a provider record",
            )
        })?;
        let label = params["label"].as_str();
        let path = trellis_service::service::client_path_param(params);
        // Triage ran one job at a time before `--jobs` existed, and still does
        // unless the request says otherwise.
        let limit = jobs_param(params, "decisions.triage", 1)?;
        self.refuse_when_stopping()?;
        let flagged = {
            let mut service = self.service();
            service.refresh();
            trellis_service::service::check_pin_of(&service).map_err(|d| RpcError::failed(&[d]))?;
            service.flagged_reliances(label)
        };
        let mut keys = Vec::new();
        let cursor = {
            let mut state = self.state();
            let cursor = state.events.len();
            let shared = Arc::new(Batch::new(provider.caps.total));
            for item in &flagged {
                let key = format!("{} ({}:{})", item.def, scope_word(item.scope), item.label);
                state.enqueue(Entry {
                    def: key.clone(),
                    provider: provider.clone(),
                    path: path.clone(),
                    attempt: 1,
                    run: 0,
                    triage: Some(item.clone()),
                    seq: 0,
                    limit,
                    waits_on: BTreeSet::new(),
                    batch: Arc::clone(&shared),
                });
                push_event(
                    &mut state,
                    &key,
                    "queued",
                    None,
                    json!({ "attempt": 1, "kind": "triage" }),
                );
                keys.push(key);
            }
            self.changed.notify_all();
            cursor
        };
        let outcomes = self.follow(cursor, &keys, progress);
        Ok(json!({ "queued": keys, "already_queued": [], "skipped": [], "outcomes": outcomes }))
    }

    /// Sends the events of `keys` from `cursor` on to `progress` until each has
    /// an outcome; returns the outcomes.
    fn follow(
        &self,
        mut cursor: usize,
        keys: &[String],
        progress: &mut dyn FnMut(Value),
    ) -> Vec<Value> {
        // A definition is done once an outcome other than `invalidated` is
        // reported for it.
        let mut open: BTreeSet<String> = keys.iter().cloned().collect();
        let mut outcomes: Vec<Value> = Vec::new();
        let mut state = self.state();
        loop {
            while cursor < state.events.len() {
                let event = state.events[cursor].clone();
                cursor += 1;
                if !open.contains(&event.def) {
                    continue;
                }
                progress(event.to_json());
                if TERMINAL.contains(&event.state) {
                    open.remove(&event.def);
                    outcomes.push(event.to_json());
                }
            }
            if open.is_empty() {
                break;
            }
            if state.stopped {
                // The stop cancelled the queue and waited for the running job;
                // a key still open was queued after the stop, or its job did
                // not end in time: either way no outcome will come.
                let why = state.stopping.clone().unwrap_or_default();
                for def in std::mem::take(&mut open) {
                    let event = Event {
                        def,
                        state: "cancelled",
                        job: None,
                        detail: cancelled_detail("stop", &why),
                    };
                    progress(event.to_json());
                    outcomes.push(event.to_json());
                }
                break;
            }
            state = self
                .changed
                .wait_timeout(state, Duration::from_millis(500))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        outcomes
    }

    /// The scheduler thread, for the daemon's life: starts each queued entry,
    /// in queue order, once `schedule::next_to_start` lets it, on a worker
    /// thread of its own; an entry whose request's total caps are spent ends
    /// `failed` without starting.
    fn run(self: Arc<Self>) {
        let mut state = self.state();
        loop {
            if state.stopping.is_some() {
                return;
            }
            self.fail_spent(&mut state);
            let next = {
                let queue: Vec<Queued<'_>> = state
                    .pending
                    .iter()
                    .map(|entry| Queued {
                        key: &entry.def,
                        subject: entry.subject(),
                        waits_on: &entry.waits_on,
                        limit: entry.limit,
                    })
                    .collect();
                let running: Vec<Active<'_>> = state
                    .running
                    .iter()
                    .map(|running| Active {
                        subject: running.entry.subject(),
                        holds_slot: running.holds_slot,
                    })
                    .collect();
                schedule::next_to_start(&queue, &running)
            };
            let Some(index) = next else {
                state = self
                    .changed
                    .wait_timeout(state, SCHEDULER_POLL)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                continue;
            };
            let Some(mut entry) = state.pending.remove(index) else {
                continue;
            };
            let runs = state.runs.entry(entry.def.clone()).or_default();
            *runs += 1;
            entry.run = *runs;
            state.running.push(Running {
                entry: entry.clone(),
                job: None,
                started: Instant::now(),
                group: None,
                holds_slot: true,
            });
            push_event(
                &mut state,
                &entry.def,
                "started",
                None,
                json!({ "attempt": entry.attempt }),
            );
            self.changed.notify_all();
            let worker = Arc::clone(&self);
            let seq = entry.seq;
            let spawned = std::thread::Builder::new()
                .name("trellis-job".to_owned())
                .spawn(move || worker.work(entry));
            if let Err(error) = spawned {
                let entry = state.take_running(seq).map(|running| running.entry);
                if let Some(entry) = entry {
                    let detail = json!({ "stage": "start", "errors": [Diagnostic::new(
                        trellis_rpc::diag::INTERNAL_ERROR,
                        format!("the daemon could not start a thread for the job: {error}"),
                    ).to_json()] });
                    self.record(&mut state, &entry, "failed", None, detail, Duration::ZERO);
                }
            }
        }
    }

    /// Ends, `failed` before they start, the queued entries whose request has
    /// spent a total cap (and holds their callers).
    fn fail_spent(&self, state: &mut QueueState) {
        let now = Instant::now();
        while let Some(index) = state
            .pending
            .iter()
            .position(|entry| entry.batch.spent_out(now).is_some())
        {
            let Some(entry) = state.pending.remove(index) else {
                break;
            };
            let cap = entry.batch.spent_out(now).unwrap_or_default();
            let detail = json!({
                "stage": "queue",
                "cap": cap,
                "errors": [HostCode::JobCapExceeded.diagnostic(format!(
                    "the request's {cap} cap was spent before {} started", entry.def
                )).to_json()],
            });
            self.record(state, &entry, "failed", None, detail, Duration::ZERO);
        }
    }

    /// A worker thread: one job, start to outcome.
    fn work(self: Arc<Self>, entry: Entry) {
        let started = Instant::now();
        // A bug in a job must not take the queue with it: the job ends
        // failed (its JobLog has written the f.log outcome) and the others go on.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_job(&entry)));
        let mut state = self.state();
        let running = state.take_running(entry.seq);
        let (outcome, job, detail) = ran.unwrap_or_else(|_| {
            let job = running.and_then(|running| running.job);
            ("failed", job, internal_failure())
        });
        self.record(&mut state, &entry, outcome, job, detail, started.elapsed());
    }

    /// An entry's outcome: its event, its place in the finished list, and what
    /// it means for the queue — an invalidated job is queued again in its
    /// place; one that landed (green, partial) releases the entries waiting on
    /// it; one that did not (failed, question, cancelled, held) holds them.
    fn record(
        &self,
        state: &mut QueueState,
        entry: &Entry,
        mut outcome: &'static str,
        job: Option<String>,
        mut detail: Value,
        took: Duration,
    ) {
        if outcome == "invalidated"
            && let Some(why) = state.stopping.clone()
        {
            outcome = "cancelled";
            detail = cancelled_detail("agent", &why);
        }
        if outcome == "question" && entry.triage.is_none() {
            state.asked.insert(entry.def.clone(), entry.clone());
        }
        push_event(state, &entry.def, outcome, job.clone(), detail.clone());
        state.remember(Finished {
            def: entry.def.clone(),
            job,
            outcome,
            detail,
            attempt: entry.attempt,
            seconds: took.as_secs_f64(),
        });
        match outcome {
            "invalidated" if entry.attempt < MAX_ATTEMPTS => {
                let mut again = entry.clone();
                again.attempt += 1;
                push_event(
                    state,
                    &again.def,
                    "queued",
                    None,
                    json!({ "attempt": again.attempt }),
                );
                state.requeue(again);
            }
            "invalidated" => {
                let detail = json!({ "errors": [HostCode::JobInvalidated.diagnostic(
                    format!("{} was invalidated {MAX_ATTEMPTS} times in a row; not re-queued", entry.def),
                ).to_json()] });
                push_event(state, &entry.def, "failed", None, detail);
                hold_callers(state, &entry.def, "failed");
            }
            "green" | "partial" => {
                for waiting in &mut state.pending {
                    waiting.waits_on.remove(&entry.def);
                }
            }
            _ => hold_callers(state, &entry.def, outcome),
        }
        self.changed.notify_all();
    }

    fn note_phase(&self, entry: &Entry, phase: &'static str, job: Option<&str>, detail: Value) {
        let mut state = self.state();
        if let Some(running) = state.running_mut(entry.seq)
            && job.is_some()
        {
            running.job = job.map(str::to_owned);
        }
        push_event(
            &mut state,
            &entry.def,
            phase,
            job.map(str::to_owned),
            detail,
        );
        self.changed.notify_all();
    }

    /// Waits until no entry queued before `entry` in its module is still
    /// queued or running: a draft that adds private helpers appends them to
    /// the module's `_private.soil`, so those land in queue order, as one job
    /// at a time would land them. A job waiting here holds no slot. `Err` when
    /// the daemon stops meanwhile; `Ok(true)` when it waited.
    fn wait_for_landing_turn(&self, entry: &Entry) -> Result<bool, String> {
        let mut state = self.state();
        let mut waited = false;
        loop {
            if let Some(why) = state.stopping.clone() {
                return Err(why);
            }
            let earlier = state
                .pending
                .iter()
                .chain(state.running.iter().map(|running| &running.entry))
                .any(|other| {
                    other.seq < entry.seq
                        && other.triage.is_none()
                        && other.module() == entry.module()
                });
            if !earlier {
                break;
            }
            if !waited {
                waited = true;
                if let Some(running) = state.running_mut(entry.seq) {
                    running.holds_slot = false;
                }
                self.changed.notify_all();
            }
            state = self
                .changed
                .wait_timeout(state, SCHEDULER_POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        if let Some(running) = state.running_mut(entry.seq) {
            running.holds_slot = true;
        }
        Ok(waited)
    }

    /// One job, start to outcome: `(outcome, job id, detail)`.
    fn run_job(&self, entry: &Entry) -> (&'static str, Option<String>, Value) {
        if let Some(flagged) = &entry.triage {
            return self.run_triage(entry, flagged);
        }
        let provider = &entry.provider;
        let agent = Agent {
            provider: provider.name.clone(),
            model: provider.model.clone(),
            // Its own turn cap, or what its request's total leaves if less.
            max_tool_calls: entry.batch.turns_for_next(provider.caps.turns),
        };
        let (module, name) = match trellis_db::split_definition_name(&entry.def) {
            Some((module, name)) => (module.to_owned(), name.to_owned()),
            None => {
                return failed(
                    None,
                    vec![
                        HostCode::UnknownDefinition
                            .diagnostic(format!("`{}` is not module::name", entry.def)),
                    ],
                );
            }
        };
        let started = {
            let mut service = self.service();
            service.refresh();
            service.start_lowering(&entry.def, provider.packer_budget(), &entry.path, &agent)
        };
        let started = match started {
            Ok(started) => started,
            Err(errors) => return failed(None, errors),
        };
        let job = started.job.clone();
        self.note_job(entry, &job);
        let mut timings = Timings {
            bundle: started.bundle_time,
            preflight: started.preflight_time,
            ..Timings::default()
        };
        let root = self.service().root().to_owned();
        let log = JobLog::new(&root, &module, &job, &entry.def);
        log.event(
            "job_started",
            json!({
                "spec_hashes": started.manifest["spec_hashes"],
                "provider": provider.name, "kind": provider.kind_name(), "model": provider.model,
                "budget": provider.budget, "attempt": entry.attempt,
                "caps": {
                    "turns": provider.caps.turns, "wall_clock_s": provider.caps.wall_clock_s, "cost_usd": provider.caps.cost_usd,
                    "total": { "turns": provider.caps.total.turns, "wall_clock_s": provider.caps.total.wall_clock_s, "cost_usd": provider.caps.total.cost_usd },
                },
            }),
        );
        let findings: Vec<Value> = started.preflight.iter().map(Diagnostic::to_json).collect();
        log.event("preflight", json!({ "findings": findings }));
        if !started.preflight.is_empty() {
            self.service().end_lowering(&job, "the pre-flight");
            let detail = json!({ "stage": "preflight", "errors": findings });
            return log.outcome("failed", detail);
        }
        log.event("bundle_packed", json!({ "manifest": started.manifest }));
        self.note_phase(
            entry,
            "agent",
            Some(&job),
            json!({ "provider": provider.name }),
        );
        let invocation = Invocation {
            job: &job,
            socket: &self.socket,
            module: &module,
            name: &name,
            run: entry.run,
            root: &root,
            client_path: &entry.path,
            service: &self.service,
        };
        let process = agent::command(provider, &invocation).and_then(AgentProcess::spawn);
        let mut process = match process {
            Ok(process) => process,
            Err(error) => {
                self.service().end_lowering(&job, "the agent did not start");
                let detail = json!({ "stage": "agent", "errors": [error.to_json()] });
                return log.outcome("failed", detail);
            }
        };
        self.note_group(entry, Some(process.group()));
        let agent_clock = Instant::now();
        let mut stop = self.watch(&job, entry, &mut process);
        if stop.is_none() {
            // The agent ended on its own, perhaps right after the daemon ended its
            // job (its last call was refused at the turn cap, or it asked).
            let (calls, ended) = self.service().lowering_state(&job);
            stop = match ended.as_deref() {
                Some("ask_human") => Some(Stop::Asked),
                Some("the turn cap") => Some(Stop::Cap(turn_cap(provider, calls))),
                // An agent that stopped itself at its budget (Claude Code's
                // --max-budget-usd) reports the cost on its last line only.
                _ if process.report().cost_usd > provider.caps.cost_usd => {
                    Some(Stop::Cap("cost".to_owned()))
                }
                _ => None,
            };
        }
        let (report, status) = process.finish();
        timings.agent = agent_clock.elapsed();
        timings.tool_calls = self.service().lowering_tool_time(&job);
        let calls = self.service().lowering_state(&job).0;
        entry.batch.end(&job, calls, report.cost_usd);
        self.note_group(entry, None);
        log.event("agent_result", report.to_json());
        if let Some(Stop::Invalidated(why)) = &stop {
            let detail = json!({ "stage": "agent", "reason": why });
            return log.outcome("invalidated", detail);
        }
        if let Some(Stop::Shutdown(why)) = &stop {
            return log.outcome("cancelled", cancelled_detail("agent", why));
        }
        let agent_problem = match stop {
            None | Some(Stop::Broken) => agent_failure(&report, status),
            Some(_) => None,
        };
        if let Some(problem) = agent_problem {
            self.service().end_lowering(&job, "the agent failed");
            let detail = json!({ "stage": "agent", "errors": [problem.to_json()] });
            return log.outcome("failed", detail);
        }
        // The lock records the model the agent said it ran, when it said.
        let agent = Agent {
            model: report.model.clone().unwrap_or(agent.model),
            ..agent
        };
        if self.service().lowering_adds_helpers(&job) {
            match self.wait_for_landing_turn(entry) {
                Err(why) => {
                    self.service().end_lowering(&job, "the daemon stopped");
                    return log.outcome("cancelled", cancelled_detail("agent", &why));
                }
                Ok(true) => {
                    // It waited: what it was built against may have moved.
                    let current = {
                        let mut service = self.service();
                        service.refresh();
                        service.lowering_is_current(&job)
                    };
                    if let Err(why) = current {
                        self.service().end_lowering(&job, "invalidated");
                        let detail = json!({ "stage": "landing", "reason": why });
                        return log.outcome("invalidated", detail);
                    }
                }
                Ok(false) => {}
            }
        }
        self.note_phase(entry, "gate", Some(&job), json!({}));
        let gate_clock = Instant::now();
        let gate = {
            let mut service = self.service();
            service.finish_lowering(&job, &agent, &mut |_| {})
        };
        timings.gate = gate_clock.elapsed();
        let cap = match &stop {
            Some(Stop::Cap(cap)) => Some(cap.clone()),
            _ => None,
        };
        let (outcome, mut detail) = match gate {
            // A green draft is committed even when a cap stopped the agent: it
            // passed every gate a finished agent's would (design §4.9); the cap
            // is reported beside it.
            Gate::Green { soil } => ("green", json!({ "soil": soil, "cap": cap })),
            Gate::Partial { holes } => ("partial", json!({ "holes": holes, "cap": cap })),
            Gate::Question { question } => {
                let asked = std::fs::read_to_string(root.join(&question))
                    .ok()
                    .and_then(|text| serde_json::from_str::<Value>(&text).ok());
                log.event("question", json!({ "file": question, "question": asked }));
                ("question", json!({ "question": question }))
            }
            Gate::Failed {
                mut errors,
                failures,
            } => {
                if let Some(cap) = &cap {
                    errors.insert(
                        0,
                        HostCode::JobCapExceeded.diagnostic(format!("the job hit its {cap} cap")),
                    );
                }
                let errors: Vec<Value> = errors.iter().map(Diagnostic::to_json).collect();
                (
                    "failed",
                    json!({ "stage": "gate", "errors": errors, "failures": failures, "cap": cap }),
                )
            }
        };
        detail["timings"] = timings.to_json();
        log.outcome(outcome, detail)
    }

    /// Records the running job's id, for a runner that must report it even
    /// when the job unwinds.
    fn note_job(&self, entry: &Entry, job: &str) {
        if let Some(running) = self.state().running_mut(entry.seq) {
            running.job = Some(job.to_owned());
        }
    }

    fn note_group(&self, entry: &Entry, group: Option<i32>) {
        if let Some(running) = self.state().running_mut(entry.seq) {
            running.group = group;
        }
    }

    /// Waits for the agent to end, enforcing the caps — the job's own and its
    /// request's totals — and watching for invalidation and the daemon's stop;
    /// kills the agent's group when it stops it.
    fn watch(&self, job: &str, entry: &Entry, process: &mut AgentProcess) -> Option<Stop> {
        let provider = &entry.provider;
        let deadline = Instant::now() + Duration::from_secs(provider.caps.wall_clock_s);
        let mut checked = Instant::now();
        loop {
            // The stop first: an agent the stop killed did not end on its own.
            let stopping = self.state().stopping.clone();
            let stop = if let Some(why) = stopping {
                Some(Stop::Shutdown(why))
            } else if process.try_exit().is_some() {
                return None;
            } else if checked.elapsed() < STALENESS_POLL {
                std::thread::sleep(POLL);
                continue;
            } else if Instant::now() >= deadline {
                Some(Stop::Cap("wall-clock".to_owned()))
            } else if process.report().cost_usd > provider.caps.cost_usd {
                Some(Stop::Cap("cost".to_owned()))
            } else if broken(&process.report()) {
                // An agent whose MCP server failed keeps asking its model
                // without tools: end it now, not after its last turn.
                Some(Stop::Broken)
            } else {
                checked = Instant::now();
                let (current, (calls, ended)) = {
                    let mut service = self.service();
                    service.refresh();
                    (
                        service.lowering_is_current(job),
                        service.lowering_state(job),
                    )
                };
                entry.batch.note(job, calls, process.report().cost_usd);
                match current {
                    Err(why) => Some(Stop::Invalidated(why)),
                    Ok(()) => match ended.as_deref() {
                        // The agent CLI keeps going after its MCP server is done
                        // with it: end it here.
                        Some("ask_human") => Some(Stop::Asked),
                        Some("the turn cap") => Some(Stop::Cap(turn_cap(provider, calls))),
                        _ => entry
                            .batch
                            .reached(Instant::now())
                            .map(|cap| Stop::Cap(cap.to_owned())),
                    },
                }
            };
            if let Some(stop) = stop {
                let reason = match &stop {
                    Stop::Invalidated(_) => "invalidated",
                    Stop::Cap(_) => "a cap",
                    Stop::Asked => "ask_human",
                    Stop::Shutdown(_) => "the daemon stopped",
                    Stop::Broken => "the agent failed",
                };
                self.service().end_lowering(job, reason);
                process.kill_group();
                return Some(stop);
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Lowering {
    /// A triage job: the agent reads the entry then and now, the spec and the
    /// Soil, and answers; `conforms` re-stamps the edge (outcome `conforms`),
    /// anything else leaves it flagged (`nonconforming`).
    fn run_triage(
        &self,
        entry: &Entry,
        flagged: &Flagged,
    ) -> (&'static str, Option<String>, Value) {
        let provider = &entry.provider;
        let (module, name) = trellis_db::split_definition_name(&flagged.def)
            .map(|(m, n)| (m.to_owned(), n.to_owned()))
            .unwrap_or_default();
        let started = {
            let mut service = self.service();
            service.refresh();
            let turns = entry.batch.turns_for_next(provider.caps.turns);
            service.start_triage(flagged, &entry.path, turns)
        };
        let job = match started {
            Ok(job) => job,
            Err(errors) => return failed(None, errors),
        };
        self.note_job(entry, &job);
        let root = self.service().root().to_owned();
        let log = JobLog::new(&root, &module, &job, &flagged.def);
        let decision = json!({ "scope": scope_word(flagged.scope), "label": flagged.label, "relied_on": flagged.relied_on.to_string() });
        log.event(
            "job_started",
            json!({ "kind": "triage", "decision": decision, "provider": provider.name, "model": provider.model }),
        );
        self.note_phase(
            entry,
            "agent",
            Some(&job),
            json!({ "provider": provider.name }),
        );
        let invocation = Invocation {
            job: &job,
            socket: &self.socket,
            module: &module,
            name: &format!("{name}.triage"),
            run: entry.run,
            root: &root,
            client_path: &entry.path,
            service: &self.service,
        };
        let mut process = match agent::command(provider, &invocation).and_then(AgentProcess::spawn)
        {
            Ok(process) => process,
            Err(error) => {
                self.service().end_lowering(&job, "the agent did not start");
                let detail = json!({ "stage": "agent", "errors": [error.to_json()] });
                return log.outcome("failed", detail);
            }
        };
        self.note_group(entry, Some(process.group()));
        let stop = self.watch(&job, entry, &mut process);
        let (report, status) = process.finish();
        let calls = self.service().lowering_state(&job).0;
        entry.batch.end(&job, calls, report.cost_usd);
        self.note_group(entry, None);
        self.service().end_lowering(&job, "the agent finished");
        log.event("agent_result", report.to_json());
        let answer = report
            .result
            .as_ref()
            .map(|(_, text)| text.clone())
            .unwrap_or_default();
        let problem = match &stop {
            Some(Stop::Shutdown(why)) => {
                return log.outcome("cancelled", cancelled_detail("agent", why));
            }
            Some(Stop::Invalidated(why)) => {
                Some(HostCode::JobInvalidated.diagnostic(format!("the spec {why}")))
            }
            Some(Stop::Cap(cap)) => {
                Some(HostCode::JobCapExceeded.diagnostic(format!("the job hit its {cap} cap")))
            }
            Some(Stop::Asked | Stop::Broken) | None => agent_failure(&report, status),
        };
        if let Some(problem) = problem {
            let detail = json!({ "stage": "agent", "errors": [problem.to_json()] });
            return log.outcome("failed", detail);
        }
        let applied = self.service().apply_triage(flagged, &answer);
        let (outcome, detail) = match applied {
            Ok(true) => (
                "conforms",
                json!({ "decision": decision, "answer": answer }),
            ),
            Ok(false) => (
                "nonconforming",
                json!({ "decision": decision, "answer": answer }),
            ),
            Err(error) => (
                "failed",
                json!({ "stage": "verdict", "errors": [error.to_json()] }),
            ),
        };
        log.event(
            "triage",
            json!({ "entry": decision, "verdict": outcome, "answer": answer }),
        );
        log.outcome(outcome, detail)
    }
}

impl QueueState {
    /// The keys queued or running.
    fn keys(&self) -> impl Iterator<Item = &str> {
        self.pending.iter().map(|entry| entry.def.as_str()).chain(
            self.running
                .iter()
                .map(|running| running.entry.def.as_str()),
        )
    }

    fn is_busy(&self, key: &str) -> bool {
        self.keys().any(|queued| queued == key)
    }

    /// Appends `entry` at the end of the queue.
    fn enqueue(&mut self, mut entry: Entry) {
        self.next_seq += 1;
        entry.seq = self.next_seq;
        self.pending.push_back(entry);
    }

    /// Puts `entry` back in its own place (an invalidated job goes first among
    /// those queued after it).
    fn requeue(&mut self, entry: Entry) {
        let at = self
            .pending
            .iter()
            .position(|queued| queued.seq > entry.seq)
            .unwrap_or(self.pending.len());
        self.pending.insert(at, entry);
    }

    fn running_mut(&mut self, seq: u64) -> Option<&mut Running> {
        self.running
            .iter_mut()
            .find(|running| running.entry.seq == seq)
    }

    fn take_running(&mut self, seq: u64) -> Option<Running> {
        let index = self
            .running
            .iter()
            .position(|running| running.entry.seq == seq)?;
        Some(self.running.remove(index))
    }

    fn remember(&mut self, finished: Finished) {
        self.finished.push_back(finished);
        while self.finished.len() > FINISHED_KEPT {
            self.finished.pop_front();
        }
    }
}

/// Ends, `held`, every queued entry that waits on `ended` (which ended
/// `outcome` without landing), directly or through another held entry: none
/// of them could be lowered against the callee it needs.
fn hold_callers(state: &mut QueueState, ended: &str, outcome: &str) {
    let held = {
        let queue: Vec<(&str, &BTreeSet<String>)> = state
            .pending
            .iter()
            .map(|entry| (entry.def.as_str(), &entry.waits_on))
            .collect();
        schedule::held_by(&queue, ended)
    };
    let mut taken: Vec<(Entry, String)> = Vec::new();
    for (index, via) in held.into_iter().rev() {
        if let Some(entry) = state.pending.remove(index) {
            taken.push((entry, via));
        }
    }
    taken.reverse();
    let ending = match outcome {
        "question" => "asked a question".to_owned(),
        other => format!("ended {other}"),
    };
    for (entry, via) in taken {
        let reason = if via == ended {
            format!("its callee {ended} {ending}")
        } else {
            format!("its callee {via} is held ({ended} {ending})")
        };
        let detail =
            json!({ "reason": reason, "callee": via, "cause": ended, "cause_outcome": outcome });
        push_event(state, &entry.def, "held", None, detail.clone());
        state.remember(Finished {
            def: entry.def.clone(),
            job: None,
            outcome: "held",
            detail,
            attempt: entry.attempt,
            seconds: 0.0,
        });
    }
}

/// Which turn cap a job that used `calls` tool calls hit: its own, or its
/// request's total (which started it with fewer calls than its own cap).
fn turn_cap(provider: &Provider, calls: u32) -> String {
    if calls < provider.caps.turns {
        "total turn".to_owned()
    } else {
        "turn".to_owned()
    }
}

/// A request's `jobs` (`--jobs`): how many of its jobs may run at once,
/// `default` when it does not say.
fn jobs_param(params: &Value, method: &str, default: usize) -> Result<usize, RpcError> {
    match &params["jobs"] {
        Value::Null => Ok(default),
        value => value
            .as_u64()
            .and_then(|jobs| usize::try_from(jobs).ok())
            .filter(|jobs| (1..=schedule::MAX_JOBS).contains(jobs))
            .ok_or_else(|| {
                RpcError::new(
                    ErrorCode::InvalidParams,
                    format!(
                        "{method}: `jobs` must be a whole number from 1 to {}",
                        schedule::MAX_JOBS
                    ),
                )
            }),
    }
}

/// A started job's f.log (trellis-daemon §9): its events, and its outcome
/// written exactly once — by the job, or, when the job never got there (a bug
/// unwound it), as the log is dropped.
struct JobLog<'a> {
    root: &'a std::path::Path,
    module: &'a str,
    job: &'a str,
    def: &'a str,
    ended: std::cell::Cell<bool>,
}

impl<'a> JobLog<'a> {
    fn new(root: &'a std::path::Path, module: &'a str, job: &'a str, def: &'a str) -> Self {
        JobLog {
            root,
            module,
            job,
            def,
            ended: std::cell::Cell::new(false),
        }
    }

    fn event(&self, event: &str, fields: Value) {
        flog::append(self.root, self.module, self.job, self.def, event, fields);
    }

    /// Logs the outcome and returns what the runner reports.
    fn outcome(
        &self,
        outcome: &'static str,
        detail: Value,
    ) -> (&'static str, Option<String>, Value) {
        self.event("outcome", json!({ "outcome": outcome, "detail": detail }));
        self.ended.set(true);
        (outcome, Some(self.job.to_owned()), detail)
    }
}

impl Drop for JobLog<'_> {
    fn drop(&mut self) {
        if !self.ended.get() {
            self.outcome("failed", internal_failure());
        }
    }
}

/// The detail of a job the daemon's stop ended (`stage`: `agent` for a job
/// that ran, `queue` for one that never started, `stop` for one whose outcome
/// the stop did not wait for).
fn cancelled_detail(stage: &str, why: &str) -> Value {
    let message = match stage {
        "queue" => format!("{why}: the job was queued and never started"),
        "stop" => {
            format!("{why} before the job recorded an outcome: its module's f.log has what it did")
        }
        _ => format!("{why} while the job ran: its agent was ended and nothing of it was kept"),
    };
    json!({
        "stage": stage,
        "reason": why,
        "errors": [HostCode::JobCancelled.diagnostic(message).to_json()],
    })
}

/// The detail of a job a bug in the runner ended.
fn internal_failure() -> Value {
    json!({
        "stage": "internal",
        "errors": [Diagnostic::new(
            trellis_rpc::diag::INTERNAL_ERROR,
            "the job ended on an internal error of the daemon (see its log); nothing of it was kept",
        ).to_json()],
    })
}

fn scope_word(scope: trellis_lock::Scope) -> &'static str {
    match scope {
        trellis_lock::Scope::Project => "project",
        trellis_lock::Scope::Module => "module",
    }
}

/// Where a job's time went, for f.log and the loop's bench.
#[derive(Default)]
struct Timings {
    bundle: Duration,
    preflight: Duration,
    /// The agent's whole run, tool calls included.
    agent: Duration,
    /// The daemon's share of the agent's run: answering its tool calls.
    tool_calls: Duration,
    gate: Duration,
}

impl Timings {
    fn to_json(&self) -> Value {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        json!({
            "bundle_ms": ms(self.bundle),
            "preflight_ms": ms(self.preflight),
            "agent_ms": ms(self.agent),
            "tool_calls_ms": ms(self.tool_calls),
            "gate_ms": ms(self.gate),
        })
    }
}

enum Stop {
    Invalidated(String),
    Cap(String),
    Asked,
    /// The daemon is stopping, and why.
    Shutdown(String),
    /// The agent's output shows it cannot do the job (see [`broken`]).
    Broken,
}

/// Whether what the agent printed so far already fails the job: an MCP server
/// that did not connect, a tool beyond the seven, a line that is not stream-json.
fn broken(report: &agent::AgentReport) -> bool {
    report.mcp_failure.is_some() || report.malformed.is_some()
}

/// Why an agent that ended on its own did not end well, if it did not.
fn agent_failure(
    report: &agent::AgentReport,
    status: Option<std::process::ExitStatus>,
) -> Option<Diagnostic> {
    if let Some(failure) = &report.mcp_failure {
        return Some(HostCode::JobProviderError.diagnostic(failure.clone()));
    }
    if let Some(line) = &report.malformed {
        return Some(HostCode::JobProviderError.diagnostic(format!(
            "the agent printed a line that is not stream-json: {line}"
        )));
    }
    let exited_well = status.is_some_and(|status| status.success());
    match &report.result {
        Some((false, _)) if exited_well => None,
        Some((_, text)) => Some(HostCode::JobProviderError.diagnostic(format!(
            "the agent ended with an error ({}): {text}",
            describe(status)
        ))),
        None => Some(HostCode::JobProviderError.diagnostic(format!(
            "the agent ended ({}) without a result line{}",
            describe(status),
            match report.stderr_tail.trim() {
                "" => String::new(),
                tail => format!("; its stderr ends: {tail}"),
            }
        ))),
    }
}

fn describe(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(status) => status.to_string(),
        None => "no exit status".to_owned(),
    }
}

fn failed(job: Option<String>, errors: Vec<Diagnostic>) -> (&'static str, Option<String>, Value) {
    let errors: Vec<Value> = errors.iter().map(Diagnostic::to_json).collect();
    ("failed", job, json!({ "stage": "start", "errors": errors }))
}

fn push_event(
    state: &mut QueueState,
    def: &str,
    phase: &'static str,
    job: Option<String>,
    detail: Value,
) {
    state.events.push(Event {
        def: def.to_owned(),
        state: phase,
        job,
        detail,
    });
}

impl Event {
    fn to_json(&self) -> Value {
        json!({ "event": "job", "def": self.def, "state": self.state, "job": self.job, "detail": self.detail })
    }
}

impl Finished {
    fn to_json(&self) -> Value {
        json!({
            "def": self.def, "job": self.job, "outcome": self.outcome,
            "attempt": self.attempt, "seconds": self.seconds,
            // A cap that stopped the agent, whatever the outcome (`null` if none).
            "cap": self.detail["cap"],
            "detail": self.detail,
        })
    }
}
