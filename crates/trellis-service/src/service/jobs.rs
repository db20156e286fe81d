//! Lowering jobs in the daemon (trellis-daemon §2, §3): a job is the definition,
//! the context bundle packed when it started (with its budget and the spec hashes
//! it was built from), the current draft (canonical Soil plus the decisions it
//! cites) and its state. The seven tools run here, against the job's own
//! database: a per-job copy of the root whose only difference is the draft in
//! place of the definition's `.soil`. That is the overlay — the CLI, `status` and
//! every other job read the root's database and never see a draft.
//!
//! Methods: `job.create {def, budget}` → the job record; `job.inspect {job}`;
//! `job.tool {job, tool, arguments, result_cap_bytes?}` → the tool's result
//! document, or its diagnostics as a `RequestFailed` (`result_cap_bytes`, the
//! shim's result cap, bounds a draft's echo: `tool_limits.rs`). Every tool call is appended to the
//! definition's module `f.log` as a `tool_call` event (§9).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use trellis_context::{ContextBundle, Entry, context_bundle, read_context};
use trellis_db::{CheckOutcome, Item, check_definition};
use trellis_diag::Diagnostic;
use trellis_mcp::{Tool, excerpt};
use trellis_rpc::RpcError;
use trellis_verify::process::RealRunner;
use trellis_verify::suite::{Mode, RowResult};

use super::question::JobFacts;
use super::tool_limits::{at_most_reported, check_arguments, draft_echo, echo_limit};
use super::{Service, failed, invalid_params};
use crate::codes::HostCode;

/// Every job this daemon holds, by id.
#[derive(Default)]
pub struct Jobs {
    next: u64,
    jobs: BTreeMap<String, Job>,
}

pub struct Job {
    pub(super) id: String,
    /// `module::name`.
    pub(super) definition: String,
    pub(super) module: String,
    pub(super) name: String,
    pub(super) bundle: Arc<ContextBundle>,
    /// `{formal, test, prose}` of the bundle's manifest: what the job was built against.
    pub(super) spec_hashes: Value,
    pub(super) draft: Option<Draft>,
    pub(super) state: State,
    /// The job's own database over the root, the draft overlaid.
    pub(super) overlay: Service,
    /// The `PATH` its suites run oracles under: the creating client's.
    pub(super) path: String,
    /// The draft text the overlay database holds, when it holds one.
    pub(super) overlaid: Option<String>,
    /// The tool calls made so far, and how many the job may make (the turn cap
    /// of a lowering, enforced here rather than trusted to the agent).
    pub(super) tool_calls: u32,
    pub(super) max_tool_calls: Option<u32>,
    /// Whether `ask_human` ended the job.
    pub(super) asked: bool,
    /// A triage job (design §4.9): its bundle is a decision entry, a spec and
    /// its Soil, and its agent answers with a verdict instead of a draft.
    pub(super) triage: bool,
    /// Time spent answering its tool calls, in the daemon.
    pub(super) tool_time: std::time::Duration,
}

pub(super) struct Draft {
    pub(super) canonical: String,
    pub(super) decisions_applied: Value,
}

pub(super) enum State {
    Open,
    Ended { reason: String },
}

pub fn handle(service: &mut Service, method: &str, params: &Value) -> Result<Value, RpcError> {
    match method {
        "job.create" => create(service, params),
        "job.inspect" => {
            let job = job_of(service, params)?;
            Ok(job.record())
        }
        "job.tool" => tool_call(service, params),
        _ => Err(RpcError::method_not_found(method)),
    }
}

pub(super) fn create(service: &mut Service, params: &Value) -> Result<Value, RpcError> {
    let def = params["def"]
        .as_str()
        .ok_or_else(|| invalid_params("`def` must be a definition name"))?;
    let budget = params["budget"]
        .as_u64()
        .ok_or_else(|| invalid_params("`budget` must be a whole number of tokens"))?;
    // A lowering consumes the skill: the root must pin this binary's (soil-toml §2.1).
    super::toolchain::check_lowering_pin(service).map_err(|d| failed(&[d]))?;
    let db = service.database();
    let item = trellis_db::resolve_definition(db, def, trellis_db::Named::Function)
        .map_err(|d| failed(&[d]))?;
    let bundle = context_bundle(db, item, budget)
        .clone()
        .map_err(|d| failed(&[d]))?;
    let manifest: Value = serde_json::from_str(bundle.manifest()).unwrap_or(Value::Null);
    let (module, name) = (item.module(db).clone(), item.name(db).clone());
    let spec_hashes = manifest["spec_hashes"].clone();
    Ok(insert(
        service,
        &module,
        &name,
        bundle,
        spec_hashes,
        super::client_path_param(params),
        false,
    ))
}

/// Adds a job over `bundle` for `module::name`; returns its record.
pub(super) fn insert(
    service: &mut Service,
    module: &str,
    name: &str,
    bundle: Arc<ContextBundle>,
    spec_hashes: Value,
    path: String,
    triage: bool,
) -> Value {
    service.jobs.next += 1;
    let id = format!("job-{}-{}", std::process::id(), service.jobs.next);
    let job = Job {
        id: id.clone(),
        definition: format!("{module}::{name}"),
        module: module.to_owned(),
        name: name.to_owned(),
        bundle,
        spec_hashes,
        draft: None,
        state: State::Open,
        overlay: Service::new(service.root().to_owned()),
        path,
        overlaid: None,
        tool_calls: 0,
        max_tool_calls: None,
        asked: false,
        triage,
        tool_time: std::time::Duration::ZERO,
    };
    let record = job.record();
    service.jobs.jobs.insert(id, job);
    record
}

impl Jobs {
    pub(super) fn get_mut(&mut self, id: &str) -> Option<&mut Job> {
        self.jobs.get_mut(id)
    }

    pub(super) fn get(&self, id: &str) -> Option<&Job> {
        self.jobs.get(id)
    }
}

fn job_of<'s>(service: &'s mut Service, params: &Value) -> Result<&'s mut Job, RpcError> {
    let id = params["job"]
        .as_str()
        .ok_or_else(|| invalid_params("`job` must be a job id"))?;
    service.jobs.jobs.get_mut(id).ok_or_else(|| {
        failed(&[HostCode::JobNotFound.diagnostic(format!(
            "no job {id:?} in this daemon (jobs live as long as the daemon)"
        ))])
    })
}

impl Job {
    fn record(&self) -> Value {
        json!({
            "job": self.id,
            "definition": self.definition,
            "budget": self.bundle.budget,
            "bundle": self.bundle.hash.to_string(),
            "spec_hashes": self.spec_hashes,
            "draft": match &self.draft {
                None => json!({ "tag": "None" }),
                Some(draft) => json!({ "tag": "Some", "value": {
                    "canonical": draft.canonical,
                    "decisions_applied": draft.decisions_applied,
                }}),
            },
            "state": match &self.state {
                State::Open => json!({ "tag": "Open" }),
                State::Ended { reason } => json!({ "tag": "Ended", "reason": reason }),
            },
            "tool_calls": self.tool_calls,
        })
    }

    /// Ends the job (no tool runs after this) and lets its overlay database go.
    pub(super) fn end(&mut self, reason: &str) {
        if matches!(self.state, State::Open) {
            self.state = State::Ended {
                reason: reason.to_owned(),
            };
        }
    }

    pub(super) fn ended_reason(&self) -> Option<&str> {
        match &self.state {
            State::Open => None,
            State::Ended { reason } => Some(reason),
        }
    }

    /// Frees the overlay database of a finished job.
    pub(super) fn release(&mut self) {
        self.overlay = Service::new(self.overlay.root().to_owned());
        self.overlaid = None;
    }

    /// Root-relative: where the definition's Soil lives, and what the draft replaces.
    pub(super) fn soil_path(&self) -> String {
        format!("{}/{}.soil", self.module, self.name)
    }

    /// Brings the overlay database up to date with the disk, the draft in place
    /// of the definition's Soil. A draft's private helpers (its `_`-named items)
    /// are added to the module's `_private.soil`, where the module's helpers live
    /// (lock-schema §3.4); the rest of the draft is the definition's `.soil`.
    pub(super) fn refresh_overlay(&mut self) {
        let soil_path = self.soil_path();
        let private_path = format!("{}/_private.soil", self.module);
        let root = self.overlay.root().to_owned();
        let overlay = &mut self.overlay;
        overlay.loaded = true;
        let refresh = overlay.loader.refresh();
        overlay.load_problems = refresh.problems;
        let mut change = refresh.change;
        if let Some(draft) = self.draft.as_ref().map(|d| &d.canonical) {
            let touched =
                change.files.contains_key(&soil_path) || change.files.contains_key(&private_path);
            if touched || self.overlaid.as_ref() != Some(draft) {
                let (definition, helpers) = split_helpers(draft);
                change.files.insert(soil_path, Some(definition.into()));
                if !helpers.is_empty() || touched || self.overlaid.is_some() {
                    let on_disk = std::fs::read_to_string(root.join(&private_path)).ok();
                    let private = match (on_disk, helpers.is_empty()) {
                        (Some(text), true) => Some(text),
                        (Some(text), false) => Some(format!("{text}\n{helpers}")),
                        (None, false) => Some(helpers),
                        (None, true) => None,
                    };
                    change.files.insert(private_path, private.map(Into::into));
                }
                self.overlaid = Some(draft.clone());
            }
        }
        overlay.apply(change);
    }
}

/// A canonical draft split into the definition's items and its private helpers
/// (items whose name starts with `_`), each printed canonically.
pub(super) fn split_helpers(draft: &str) -> (String, String) {
    let (file, _) = soil_syntax::parse_file(draft);
    let (helpers, own): (Vec<_>, Vec<_>) = file
        .items
        .into_iter()
        .partition(|item| soil_syntax::print_item(item).starts_with('_'));
    let print = |items: Vec<soil_syntax::ast::Item>| {
        if items.is_empty() {
            return String::new();
        }
        soil_syntax::print_file(&soil_syntax::ast::SourceFile {
            items,
            span: file.span,
        })
    };
    (print(own), print(helpers))
}

fn tool_call(service: &mut Service, params: &Value) -> Result<Value, RpcError> {
    let root = service.root().to_owned();
    let job = job_of(service, params)?;
    let name = params["tool"].as_str().unwrap_or_default();
    let Some(tool) = Tool::from_name(name) else {
        return Err(failed(&[
            HostCode::McpUnknownTool.diagnostic(format!("no tool named {}", excerpt(name)))
        ]));
    };
    let empty = json!({});
    let arguments = match &params["arguments"] {
        Value::Null => &empty,
        arguments => arguments,
    };
    let started = Instant::now();
    let outcome = match &job.state {
        State::Ended { reason } => Err(vec![HostCode::JobEnded.diagnostic(format!(
            "job {} has ended ({reason}); no tool runs after that",
            job.id
        ))]),
        State::Open if job.max_tool_calls.is_some_and(|cap| job.tool_calls >= cap) => {
            let cap = job.max_tool_calls.unwrap_or_default();
            job.end("the turn cap");
            Err(vec![HostCode::JobCapExceeded.diagnostic(format!(
                "job {} has used its {cap} tool calls (the turn cap); the job ends here",
                job.id
            ))])
        }
        State::Open => {
            job.tool_calls += 1;
            match tool.spec().input.validate(arguments, "$") {
                Err(diagnostic) => Err(vec![diagnostic]),
                Ok(()) => run_tool(job, &root, tool, arguments, echo_limit(params)),
            }
        }
    };
    let document = match &outcome {
        Ok(document) => document.clone(),
        Err(errors) => json!({ "errors": errors }),
    };
    job.tool_time += started.elapsed();
    log_tool_call(&root, job, tool, started, &document, outcome.is_err());
    outcome.map_err(|errors| failed(&errors))
}

fn run_tool(
    job: &mut Job,
    root: &Path,
    tool: Tool,
    arguments: &Value,
    echo_limit: usize,
) -> Result<Value, Vec<Diagnostic>> {
    check_arguments(tool, arguments)?;
    match tool {
        Tool::ReadContext => {
            let path = arguments["path"].as_str().unwrap_or_default();
            match read_context(&job.bundle, path).map_err(|d| vec![d])? {
                Entry::File { content } => Ok(json!({ "tag": "File", "content": content })),
                Entry::Dir { entries } => Ok(json!({ "tag": "Dir", "entries": entries })),
            }
        }
        Tool::ReadSpec => {
            let reference = arguments["ref"].as_str().unwrap_or_default();
            let section = trellis_context::spec_section(reference).map_err(|d| vec![d])?;
            Ok(json!({ "title": section.title, "text": section.text }))
        }
        Tool::CheckRefinements => Ok(json!({ "tag": "None" })),
        Tool::WriteSoil => write_soil(job, arguments, echo_limit),
        Tool::CheckTypes => check_types(job),
        Tool::RunTests => run_tests(job, root),
        Tool::AskHuman => {
            let ack = super::question::ask_human(job_facts(job), root, arguments)?;
            job.end("ask_human");
            job.asked = true;
            Ok(ack)
        }
    }
}

fn job_facts(job: &Job) -> JobFacts<'_> {
    JobFacts {
        module: &job.module,
        name: &job.name,
        definition: &job.definition,
        spec_hashes: &job.spec_hashes,
        bundle_hash: job.bundle.hash.to_string(),
        asked_text: job
            .bundle
            .files
            .iter()
            .find(|f| f.path == "spec.md")
            .map(|f| f.text.clone()),
    }
}

fn no_draft() -> Vec<Diagnostic> {
    vec![HostCode::NoDraft.diagnostic("no draft yet: write the definition with write_soil first")]
}

/// Stores the draft only when it parses, cites known decisions and its echo
/// can be sent (`echo_limit` bytes): an error result stores nothing (§3.5).
fn write_soil(
    job: &mut Job,
    arguments: &Value,
    echo_limit: usize,
) -> Result<Value, Vec<Diagnostic>> {
    let soil = arguments["soil"].as_str().unwrap_or_default();
    let soil_path = job.soil_path();
    let (file, problems) = soil_syntax::parse_file(soil);
    if !problems.is_empty() {
        return Err(at_most_reported(
            problems
                .into_iter()
                .map(|d| d.in_file(&soil_path))
                .collect(),
        ));
    }
    // The citation is checked against the decisions in the definition's scope
    // as the root holds them now.
    job.refresh_overlay();
    let in_scope = trellis_db::scope_decisions(job.overlay.database(), &job.module);
    let mut unknown = Vec::new();
    for (index, cited) in arguments["decisions_applied"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let scope = match cited["scope"]["tag"].as_str() {
            Some("Project") => trellis_lock::Scope::Project,
            _ => trellis_lock::Scope::Module,
        };
        let label = cited["label"].as_str().unwrap_or_default();
        if !in_scope.entries.contains_key(&(scope, label.to_owned())) {
            unknown.push(HostCode::UnknownDecision.diagnostic(
                format!(
                    "$.decisions_applied[{index}]: no {} decision labelled {} is in scope (see decisions.md)",
                    if scope == trellis_lock::Scope::Project { "project" } else { "module" },
                    excerpt(label)
                ),
            ));
        }
    }
    if !unknown.is_empty() {
        return Err(at_most_reported(unknown));
    }
    let canonical = soil_syntax::print_file(&file);
    let echo = draft_echo(&canonical, echo_limit)?;
    job.draft = Some(Draft {
        canonical,
        decisions_applied: arguments["decisions_applied"].clone(),
    });
    Ok(echo)
}

pub(super) fn item_of<'db>(db: &'db trellis_db::RootDatabase, job: &Job) -> Item<'db> {
    Item::new(db, job.module.clone(), job.name.clone())
}

pub(super) fn check_types(job: &mut Job) -> Result<Value, Vec<Diagnostic>> {
    if job.draft.is_none() {
        return Err(no_draft());
    }
    job.refresh_overlay();
    let db = job.overlay.database();
    let report = trellis_db::check_root(db, Some(&job.definition));
    let soil_path = job.soil_path();
    let mut errors: Vec<Diagnostic> = job
        .overlay
        .load_problems()
        .iter()
        .filter(|d| d.file.as_deref() == Some(soil_path.as_str()))
        .cloned()
        .collect();
    errors.extend(report.diagnostics);
    if !errors.is_empty() {
        return Err(errors);
    }
    match check_definition(db, item_of(db, job)) {
        CheckOutcome::Checked(facts) => Ok(soil_types::facts_json(facts)),
        CheckOutcome::Failed(problems) => Err(trellis_db::report_diagnostics(db, problems)),
        CheckOutcome::NotLowered => Err(no_draft()),
    }
}

fn run_tests(job: &mut Job, root: &Path) -> Result<Value, Vec<Diagnostic>> {
    let facts = check_types(job)?;
    let holes = facts["checks"]["holes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !holes.is_empty() {
        return Err(holes
            .iter()
            .map(|hole| {
                HostCode::UnfilledHole.diagnostic(
                    format!(
                        "the draft has the unfilled hole ?{} (goal {}); holes are never tested — fill it, then run the tests",
                        hole["name"].as_str().unwrap_or_default(),
                        hole["goal"].as_str().unwrap_or_default()
                    ),
                )
                .with_file(job.soil_path())
            })
            .collect());
    }
    let tool_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let db = job.overlay.database();
    let item = item_of(db, job);
    let outcome = super::test::run_one(
        &job.overlay,
        item,
        root,
        &tool_dir,
        &job.path,
        &RealRunner,
        true,
        &mut |_| {},
    );
    let Some(outcome) = outcome else {
        return Err(vec![HostCode::UnfilledHole.diagnostic(
            "the draft cannot be tested: it does not check or has no signature",
        )]);
    };
    if !outcome.preflight.is_empty() {
        return Err(trellis_db::report_diagnostics(db, &outcome.preflight));
    }
    let cases: Vec<Value> = outcome
        .rows
        .iter()
        .filter(|row| row.mode == Mode::Sandboxed)
        .map(case_result)
        .collect();
    Ok(json!({ "cases": cases }))
}

/// A suite row as a soil0-cli §10 `CaseResult`.
fn case_result(row: &trellis_verify::suite::Row) -> Value {
    let as_json = |text: &Option<String>| {
        text.as_deref()
            .map(|text| serde_json::from_str(text).unwrap_or_else(|_| json!(text)))
            .unwrap_or(Value::Null)
    };
    let outcome = match (row.result, &row.detail) {
        (RowResult::Pass | RowResult::Xfail, _) => json!({ "tag": "Pass" }),
        (RowResult::Error, detail) => {
            let errors: Vec<Value> = match detail {
                Some(failure) if !failure.diagnostics.is_empty() => failure
                    .diagnostics
                    .iter()
                    .map(Diagnostic::to_json)
                    .collect(),
                Some(failure) => {
                    vec![
                        HostCode::RuntimePanic
                            .diagnostic(failure.message.clone())
                            .to_json(),
                    ]
                }
                None => Vec::new(),
            };
            json!({ "tag": "Error", "errors": errors })
        }
        (RowResult::Fail | RowResult::Xpass, Some(failure))
            if failure.expected.is_none()
                && failure.actual.is_none()
                && !failure.diagnostics.is_empty() =>
        {
            json!({ "tag": "Panicked", "diagnostic": failure.diagnostics[0].to_json() })
        }
        (RowResult::Fail | RowResult::Xpass, Some(failure)) => json!({
            "tag": "Fail",
            "expected": failure.expected.as_ref().map_or_else(|| json!(failure.message), |_| as_json(&failure.expected)),
            "actual": match (&failure.actual, &failure.shrunk) {
                (Some(_), _) => as_json(&failure.actual),
                (None, Some(shrunk)) => json!({ "counterexample": shrunk }),
                (None, None) => Value::Null,
            },
        }),
        (RowResult::Fail | RowResult::Xpass, None) => {
            json!({ "tag": "Fail", "expected": Value::Null, "actual": Value::Null })
        }
    };
    json!({ "name": row.name, "outcome": outcome })
}

/// Appends the `tool_call` event (§9) to the module's `f.log`.
fn log_tool_call(
    root: &Path,
    job: &Job,
    tool: Tool,
    started: Instant,
    document: &Value,
    is_error: bool,
) {
    let text = document.to_string();
    crate::flog::append(
        root,
        &job.module,
        &job.id,
        &job.definition,
        "tool_call",
        json!({
            "name": tool.name(),
            "duration_ms": started.elapsed().as_secs_f64() * 1000.0,
            "is_error": is_error,
            "result": trellis_hash::Digest::of(text.as_bytes()).to_string(),
            "result_bytes": text.len(),
        }),
    );
}
