//! The job queue and its runner thread (impl plan §8.2): `lower` requests append
//! definitions in callee-first order, one dedicated thread runs them one at a
//! time, and every state change is an event the requesting clients follow.
//! Queue state is its own mutex, never the service's: a client asking `jobs` or
//! waiting on its lowerings holds nothing the runner or other requests need.
//!
//! Every job that starts ends with an outcome, in its events and in f.log —
//! whatever ends it: the gate, a cap, the agent's failure, the daemon stopping
//! (`cancelled`), even a bug in the runner (its [`JobLog`] writes the outcome
//! as it is dropped). A stopping daemon cancels its queue too, so no client
//! following a lowering is left without an outcome.

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trellis_diag::Diagnostic;
use trellis_rpc::{ErrorCode, RpcError};

use crate::agent::{self, AgentProcess, Invocation};
use crate::providers::Provider;
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
/// How long a stopping daemon waits for its running job to record its ending
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
    pending: VecDeque<Entry>,
    running: Option<Running>,
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
}

struct Running {
    entry: Entry,
    job: Option<String>,
    started: Instant,
    /// The agent's process group, so a shutdown can kill it.
    group: Option<i32>,
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
    /// starts, every queued entry is cancelled, and the running job is ended —
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
        while state.running.is_some() && Instant::now() < deadline {
            state = self
                .changed
                .wait_timeout(state, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        if let Some(running) = &state.running {
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
    /// `jobs`: the queue, the running job and the finished ones.
    pub fn jobs(&self) -> Value {
        let state = self.state();
        let pending: Vec<Value> = state
            .pending
            .iter()
            .map(|entry| json!({ "def": entry.def, "attempt": entry.attempt, "provider": entry.provider.name }))
            .collect();
        let running = state.running.as_ref().map(|running| {
            json!({
                "def": running.entry.def,
                "job": running.job,
                "attempt": running.entry.attempt,
                "provider": running.entry.provider.name,
                "seconds": running.started.elapsed().as_secs_f64(),
                "group": running.group,
            })
        });
        let finished: Vec<Value> = state.finished.iter().map(Finished::to_json).collect();
        json!({ "pending": pending, "running": running, "finished": finished })
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
        let (batch, skipped) = {
            let mut service = self.service();
            service.refresh();
            trellis_service::service::check_pin_of(&service).map_err(|d| RpcError::failed(&[d]))?;
            let (candidates, skipped) = service
                .lowering_candidates(&named)
                .map_err(|errors| RpcError::failed(&errors))?;
            let db = service.database();
            let functions: BTreeSet<String> = order::functions(db).into_iter().collect();
            let ordered =
                order::callee_first(&candidates, |def| order::may_call(db, def, &functions));
            (ordered, skipped)
        };
        let cursor;
        let mut queued = Vec::new();
        let mut already = Vec::new();
        {
            let mut state = self.state();
            cursor = state.events.len();
            for def in &batch {
                let busy = state.pending.iter().any(|entry| &entry.def == def)
                    || state.running.as_ref().is_some_and(|r| &r.entry.def == def);
                if busy {
                    already.push(def.clone());
                    continue;
                }
                state.pending.push_back(Entry {
                    def: def.clone(),
                    provider: provider.clone(),
                    path: path.clone(),
                    attempt: 1,
                    run: 0,
                    triage: None,
                });
                push_event(&mut state, def, "queued", None, json!({ "attempt": 1 }));
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
        let busy = state.pending.iter().any(|entry| entry.def == def)
            || state.running.as_ref().is_some_and(|r| r.entry.def == def);
        if busy {
            return Requeue::Busy { cursor };
        }
        if state.stopping.is_some() {
            return Requeue::Unknown;
        }
        let Some(asked) = state.asked.remove(def) else {
            return Requeue::Unknown;
        };
        let provider = asked.provider.name.clone();
        state.pending.push_back(Entry {
            attempt: 1,
            run: 0,
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
                let known = state.pending.iter().any(|entry| &entry.def == def)
                    || state.running.as_ref().is_some_and(|r| &r.entry.def == def)
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
            for item in &flagged {
                let key = format!("{} ({}:{})", item.def, scope_word(item.scope), item.label);
                state.pending.push_back(Entry {
                    def: key.clone(),
                    provider: provider.clone(),
                    path: path.clone(),
                    attempt: 1,
                    run: 0,
                    triage: Some(item.clone()),
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

    /// The runner thread: one job at a time, for the daemon's life.
    fn run(self: Arc<Self>) {
        loop {
            let entry = {
                let mut state = self.state();
                loop {
                    if state.stopping.is_some() {
                        return;
                    }
                    if let Some(mut entry) = state.pending.pop_front() {
                        let runs = state.runs.entry(entry.def.clone()).or_default();
                        *runs += 1;
                        entry.run = *runs;
                        state.running = Some(Running {
                            entry: entry.clone(),
                            job: None,
                            started: Instant::now(),
                            group: None,
                        });
                        push_event(
                            &mut state,
                            &entry.def,
                            "started",
                            None,
                            json!({ "attempt": entry.attempt }),
                        );
                        self.changed.notify_all();
                        break entry;
                    }
                    state = self
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            let started = Instant::now();
            // A bug in a job must not take the queue with it: the job ends
            // failed (its JobLog has written the f.log outcome) and the runner
            // goes on.
            let ran =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_job(&entry)));
            let (mut outcome, job, detail) = ran.unwrap_or_else(|_| {
                let job = self.state().running.as_ref().and_then(|r| r.job.clone());
                ("failed", job, internal_failure())
            });
            let mut state = self.state();
            state.running = None;
            let mut detail = detail;
            if outcome == "invalidated"
                && let Some(why) = state.stopping.clone()
            {
                outcome = "cancelled";
                detail = cancelled_detail("agent", &why);
            }
            if outcome == "question" && entry.triage.is_none() {
                state.asked.insert(entry.def.clone(), entry.clone());
            }
            push_event(&mut state, &entry.def, outcome, job.clone(), detail.clone());
            state.finished.push_back(Finished {
                def: entry.def.clone(),
                job,
                outcome,
                detail,
                attempt: entry.attempt,
                seconds: started.elapsed().as_secs_f64(),
            });
            while state.finished.len() > FINISHED_KEPT {
                state.finished.pop_front();
            }
            if outcome == "invalidated" {
                let mut again = entry.clone();
                again.attempt += 1;
                if again.attempt > MAX_ATTEMPTS {
                    let detail = json!({ "errors": [HostCode::JobInvalidated.diagnostic(
                        format!("{} was invalidated {MAX_ATTEMPTS} times in a row; not re-queued", entry.def),
                    ).to_json()] });
                    push_event(&mut state, &entry.def, "failed", None, detail);
                } else {
                    push_event(
                        &mut state,
                        &again.def,
                        "queued",
                        None,
                        json!({ "attempt": again.attempt }),
                    );
                    state.pending.push_front(again);
                }
            }
            self.changed.notify_all();
        }
    }

    fn note_phase(&self, def: &str, phase: &'static str, job: Option<&str>, detail: Value) {
        let mut state = self.state();
        if let Some(running) = state.running.as_mut()
            && job.is_some()
        {
            running.job = job.map(str::to_owned);
        }
        push_event(&mut state, def, phase, job.map(str::to_owned), detail);
        self.changed.notify_all();
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
            max_tool_calls: provider.caps.turns,
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
        self.note_job(&job);
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
                "caps": { "turns": provider.caps.turns, "wall_clock_s": provider.caps.wall_clock_s, "cost_usd": provider.caps.cost_usd },
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
            &entry.def,
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
        self.note_group(Some(process.group()));
        let agent_clock = Instant::now();
        let mut stop = self.watch(&job, provider, &mut process);
        if stop.is_none() {
            // The agent ended on its own, perhaps right after the daemon ended its
            // job (its last call was refused at the turn cap, or it asked).
            stop = match self.service().lowering_state(&job).1.as_deref() {
                Some("ask_human") => Some(Stop::Asked),
                Some("the turn cap") => Some(Stop::Cap("turn".to_owned())),
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
        self.note_group(None);
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
        self.note_phase(&entry.def, "gate", Some(&job), json!({}));
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
    fn note_job(&self, job: &str) {
        if let Some(running) = self.state().running.as_mut() {
            running.job = Some(job.to_owned());
        }
    }

    fn note_group(&self, group: Option<i32>) {
        if let Some(running) = self.state().running.as_mut() {
            running.group = group;
        }
    }

    /// Waits for the agent to end, enforcing the caps and watching for
    /// invalidation and the daemon's stop; kills the agent's group when it
    /// stops it.
    fn watch(&self, job: &str, provider: &Provider, process: &mut AgentProcess) -> Option<Stop> {
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
                let mut service = self.service();
                service.refresh();
                match service.lowering_is_current(job) {
                    Err(why) => Some(Stop::Invalidated(why)),
                    Ok(()) => match service.lowering_state(job).1.as_deref() {
                        // The agent CLI keeps going after its MCP server is done
                        // with it: end it here.
                        Some("ask_human") => Some(Stop::Asked),
                        Some("the turn cap") => Some(Stop::Cap("turn".to_owned())),
                        _ => None,
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
            service.start_triage(flagged, &entry.path, provider.caps.turns)
        };
        let job = match started {
            Ok(job) => job,
            Err(errors) => return failed(None, errors),
        };
        self.note_job(&job);
        let root = self.service().root().to_owned();
        let log = JobLog::new(&root, &module, &job, &flagged.def);
        let decision = json!({ "scope": scope_word(flagged.scope), "label": flagged.label, "relied_on": flagged.relied_on.to_string() });
        log.event(
            "job_started",
            json!({ "kind": "triage", "decision": decision, "provider": provider.name, "model": provider.model }),
        );
        self.note_phase(
            &entry.def,
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
        self.note_group(Some(process.group()));
        let stop = self.watch(&job, provider, &mut process);
        let (report, status) = process.finish();
        self.note_group(None);
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
