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

use super::agent::{self, AgentProcess, Invocation};
use super::flog;
use super::order;
use super::providers::Provider;
use crate::service::Service;
use crate::service::lowering::{Agent, Gate};

/// How often the runner looks at a running job (its agent, its caps, whether
/// what it was built against still holds).
const POLL: Duration = Duration::from_millis(100);
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
}

#[derive(Clone)]
struct Entry {
    def: String,
    provider: Provider,
    path: String,
    attempt: u32,
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
const TERMINAL: &[&str] = &["green", "partial", "failed", "question"];

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
            super::jail::available().map_err(|d| RpcError::failed(&[d]))?;
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
        let path = crate::service::client_path_param(params);
        let (batch, skipped) = {
            let mut service = self.service();
            service.refresh();
            crate::service::check_pin_of(&service).map_err(|d| RpcError::failed(&[d]))?;
            let (candidates, skipped) = service
                .lowering_candidates(&named)
                .map_err(|errors| RpcError::failed(&errors))?;
            let db = service.database();
            let functions: BTreeSet<String> = order::functions(db).into_iter().collect();
            let ordered =
                order::callee_first(&candidates, |def| order::may_call(db, def, &functions));
            (ordered, skipped)
        };
        let mut cursor;
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
                });
                push_event(&mut state, def, "queued", None, json!({ "attempt": 1 }));
                queued.push(def.clone());
            }
            self.changed.notify_all();
        }
        // Follow the batch: a definition is done once an outcome other than
        // `invalidated` is reported for it.
        let mut open: BTreeSet<String> = batch.iter().cloned().collect();
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
        Ok(json!({
            "queued": queued,
            "already_queued": already,
            "skipped": skipped,
            "outcomes": outcomes,
        }))
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
                    if let Some(entry) = state.pending.pop_front() {
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
                    let detail = json!({ "errors": [Diagnostic::new(
                        "job-invalidated",
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
                    vec![Diagnostic::new(
                        "unknown-definition",
                        format!("`{}` is not module::name", entry.def),
                    )],
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
            attempt: entry.attempt,
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
        let gate = {
            let mut service = self.service();
            service.finish_lowering(&job, &agent, &mut |_| {})
        };
        let cap = match &stop {
            Some(Stop::Cap(cap)) => Some(cap.clone()),
            _ => None,
        };
        let (outcome, detail) = match gate {
            Gate::Green { soil } => ("green", json!({ "soil": soil, "cap": cap })),
            Gate::Partial { holes } => ("partial", json!({ "holes": holes, "cap": cap })),
            Gate::Question { question } => ("question", json!({ "question": question })),
            Gate::Failed {
                mut errors,
                failures,
            } => {
                if let Some(cap) = &cap {
                    errors.insert(
                        0,
                        Diagnostic::new("job-cap-exceeded", format!("the job hit its {cap} cap")),
                    );
                }
                let errors: Vec<Value> = errors.iter().map(Diagnostic::to_json).collect();
                (
                    "failed",
                    json!({ "stage": "gate", "errors": errors, "failures": failures }),
                )
            }
        };
        log("outcome", json!({ "outcome": outcome, "detail": detail }));
        (outcome, Some(job), detail)
    }

    /// Waits for the agent to end, enforcing the caps and watching for
    /// invalidation; kills the agent's group when it stops it.
    fn watch(&self, job: &str, provider: &Provider, process: &mut AgentProcess) -> Option<Stop> {
        let deadline = Instant::now() + Duration::from_secs(provider.caps.wall_clock_s);
        loop {
            if process.try_exit().is_some() {
                return None;
            }
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
        return Some(Diagnostic::new("job-provider-error", failure.clone()));
    }
    if let Some(line) = &report.malformed {
        return Some(Diagnostic::new(
            "job-provider-error",
            format!("the agent printed a line that is not stream-json: {line}"),
        ));
    }
    let exited_well = status.is_some_and(|status| status.success());
    match &report.result {
        Some((false, _)) if exited_well => None,
        Some((_, text)) => Some(Diagnostic::new(
            "job-provider-error",
            format!(
                "the agent ended with an error ({}): {text}",
                describe(status)
            ),
        )),
        None => Some(Diagnostic::new(
            "job-provider-error",
            format!(
                "the agent ended ({}) without a result line{}",
                describe(status),
                match report.stderr_tail.trim() {
                    "" => String::new(),
                    tail => format!("; its stderr ends: {tail}"),
                }
            ),
        )),
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
