//! The job queue and its runner thread (impl plan §8.2): `lower` requests append
//! definitions in callee-first order, one dedicated thread runs them one at a
//! time, and every state change is an event the requesting clients follow.
//! Queue state is its own mutex, never the service's: a client asking `jobs` or
//! waiting on its lowerings holds nothing the runner or other requests need.

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
    stopping: bool,
    /// How many jobs each queue key has started in this daemon's life.
    runs: std::collections::HashMap<String, u32>,
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
    "conforms",
    "nonconforming",
];

impl Lowering {
    /// Starts the runner thread over the daemon's service.
    pub fn start(service: Arc<Mutex<Service>>, socket: PathBuf) -> Arc<Lowering> {
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

    /// Stops the runner: the running agent's process group is killed and nothing
    /// more starts (the daemon is shutting down).
    pub fn shutdown(&self) {
        let mut state = self.state();
        state.stopping = true;
        if let Some(group) = state.running.as_ref().and_then(|running| running.group) {
            agent::kill_process_group(group);
        }
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

    /// Queues `def` fresh (an answered question re-runs its job, trellis-daemon
    /// §8) unless it is queued or running already; does not wait for it.
    pub fn requeue(&self, def: &str, provider: &Value, path: String) -> Result<bool, RpcError> {
        let provider = Provider::from_json(provider).ok_or_else(|| {
            RpcError::new(
                ErrorCode::InvalidParams,
                "`provider` must be a provider record",
            )
        })?;
        let mut state = self.state();
        let busy = state.pending.iter().any(|entry| entry.def == def)
            || state.running.as_ref().is_some_and(|r| r.entry.def == def);
        if busy {
            return Ok(false);
        }
        state.pending.push_back(Entry {
            def: def.to_owned(),
            provider,
            path,
            attempt: 1,
            run: 0,
            triage: None,
        });
        push_event(&mut state, def, "queued", None, json!({ "attempt": 1 }));
        self.changed.notify_all();
        Ok(true)
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
            if open.is_empty() || state.stopping {
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
                    if state.stopping {
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
            let (outcome, job, detail) = self.run_job(&entry);
            let mut state = self.state();
            state.running = None;
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
            if outcome == "invalidated" && !state.stopping {
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
        let mut timings = Timings {
            bundle: started.bundle_time,
            preflight: started.preflight_time,
            ..Timings::default()
        };
        let root = self.service().root().to_owned();
        let log = |event: &str, fields: Value| {
            flog::append(&root, &module, &job, &entry.def, event, fields)
        };
        log(
            "job_started",
            json!({
                "spec_hashes": started.manifest["spec_hashes"],
                "provider": provider.name, "kind": provider.kind_name(), "model": provider.model,
                "budget": provider.budget, "attempt": entry.attempt,
                "caps": { "turns": provider.caps.turns, "wall_clock_s": provider.caps.wall_clock_s, "cost_usd": provider.caps.cost_usd },
            }),
        );
        let findings: Vec<Value> = started.preflight.iter().map(Diagnostic::to_json).collect();
        log("preflight", json!({ "findings": findings }));
        if !started.preflight.is_empty() {
            self.service().end_lowering(&job, "the pre-flight");
            let detail = json!({ "stage": "preflight", "errors": findings });
            log("outcome", json!({ "outcome": "failed", "detail": detail }));
            return ("failed", Some(job), detail);
        }
        log("bundle_packed", json!({ "manifest": started.manifest }));
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
                log("outcome", json!({ "outcome": "failed", "detail": detail }));
                return ("failed", Some(job), detail);
            }
        };
        if let Some(running) = self.state().running.as_mut() {
            running.group = Some(process.group());
        }
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
        if let Some(running) = self.state().running.as_mut() {
            running.group = None;
        }
        log("agent_result", report.to_json());
        if let Some(Stop::Invalidated(why)) = &stop {
            let detail = json!({ "stage": "agent", "reason": why });
            log(
                "outcome",
                json!({ "outcome": "invalidated", "detail": detail }),
            );
            return ("invalidated", Some(job), detail);
        }
        if let Some(Stop::Shutdown) = stop {
            let detail = json!({ "stage": "agent", "reason": "the daemon stopped" });
            log("outcome", json!({ "outcome": "failed", "detail": detail }));
            return ("failed", Some(job), detail);
        }
        let agent_problem = match stop {
            None | Some(Stop::Broken) => agent_failure(&report, status),
            Some(_) => None,
        };
        if let Some(problem) = agent_problem {
            self.service().end_lowering(&job, "the agent failed");
            let detail = json!({ "stage": "agent", "errors": [problem.to_json()] });
            log("outcome", json!({ "outcome": "failed", "detail": detail }));
            return ("failed", Some(job), detail);
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
            Gate::Green { soil } => ("green", json!({ "soil": soil, "cap": cap })),
            Gate::Partial { holes } => ("partial", json!({ "holes": holes, "cap": cap })),
            Gate::Question { question } => {
                let asked = std::fs::read_to_string(root.join(&question))
                    .ok()
                    .and_then(|text| serde_json::from_str::<Value>(&text).ok());
                log("question", json!({ "file": question, "question": asked }));
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
                    json!({ "stage": "gate", "errors": errors, "failures": failures }),
                )
            }
        };
        detail["timings"] = timings.to_json();
        log("outcome", json!({ "outcome": outcome, "detail": detail }));
        (outcome, Some(job), detail)
    }

    /// Waits for the agent to end, enforcing the caps and watching for
    /// invalidation; kills the agent's group when it stops it.
    fn watch(&self, job: &str, provider: &Provider, process: &mut AgentProcess) -> Option<Stop> {
        let deadline = Instant::now() + Duration::from_secs(provider.caps.wall_clock_s);
        let mut checked = Instant::now();
        loop {
            if process.try_exit().is_some() {
                return None;
            }
            if checked.elapsed() < STALENESS_POLL {
                std::thread::sleep(POLL);
                continue;
            }
            checked = Instant::now();
            let stop = if self.state().stopping {
                Some(Stop::Shutdown)
            } else if Instant::now() >= deadline {
                Some(Stop::Cap("wall-clock".to_owned()))
            } else if process.report().cost_usd > provider.caps.cost_usd {
                Some(Stop::Cap("cost".to_owned()))
            } else if broken(&process.report()) {
                // An agent whose MCP server failed keeps asking its model
                // without tools: end it now, not after its last turn.
                Some(Stop::Broken)
            } else {
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
                    Stop::Shutdown => "the daemon stopped",
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
        let root = self.service().root().to_owned();
        let log = |event: &str, fields: Value| {
            flog::append(&root, &module, &job, &flagged.def, event, fields)
        };
        let decision = json!({ "scope": scope_word(flagged.scope), "label": flagged.label, "relied_on": flagged.relied_on.to_string() });
        log(
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
                log("outcome", json!({ "outcome": "failed", "detail": detail }));
                return ("failed", Some(job), detail);
            }
        };
        if let Some(running) = self.state().running.as_mut() {
            running.group = Some(process.group());
        }
        let stop = self.watch(&job, provider, &mut process);
        let (report, status) = process.finish();
        self.service().end_lowering(&job, "the agent finished");
        log("agent_result", report.to_json());
        let answer = report
            .result
            .as_ref()
            .map(|(_, text)| text.clone())
            .unwrap_or_default();
        let problem = match &stop {
            Some(Stop::Invalidated(why)) => {
                Some(HostCode::JobInvalidated.diagnostic(format!("the spec {why}")))
            }
            Some(Stop::Cap(cap)) => {
                Some(HostCode::JobCapExceeded.diagnostic(format!("the job hit its {cap} cap")))
            }
            Some(Stop::Shutdown) => {
                Some(HostCode::JobProviderError.diagnostic("the daemon stopped"))
            }
            Some(Stop::Asked | Stop::Broken) | None => agent_failure(&report, status),
        };
        if let Some(problem) = problem {
            let detail = json!({ "stage": "agent", "errors": [problem.to_json()] });
            log("outcome", json!({ "outcome": "failed", "detail": detail }));
            return ("failed", Some(job), detail);
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
        log(
            "triage",
            json!({ "entry": decision, "verdict": outcome, "answer": answer }),
        );
        log("outcome", json!({ "outcome": outcome, "detail": detail }));
        (outcome, Some(job), detail)
    }
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
    Shutdown,
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
            "attempt": self.attempt, "seconds": self.seconds, "detail": self.detail,
        })
    }
}
