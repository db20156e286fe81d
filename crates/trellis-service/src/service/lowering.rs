//! The service's half of a lowering (design §4.9): what the job runner asks of
//! the database between the agent's tool calls — start a job (its bundle and
//! the pre-flight), tell whether what the job was built against still holds, and
//! the final gate that commits a draft to the root or leaves the root untouched.
//! The runner (`trellis-agent`) owns the queue, the agent's process and the
//! caps; everything here runs under the daemon's service lock and is quick,
//! except the gate, which runs the suite.

use std::path::Path;

use serde_json::{Value, json};
use trellis_db::{Citation, Item, LockState, adopted_lock, current_hashes, lock_state};
use trellis_diag::Diagnostic;
use trellis_lock::{Lock, Provenance, Scope, Status, StdFs};
use trellis_verify::process::RealRunner;
use trellis_verify::suite::Mode;

use super::Service;
use super::jobs::{self, Draft, Job};
use crate::codes::HostCode;
use crate::protocol::{SuiteFailure, TestParams};

/// Who lowers: recorded in the job and, on success, in the lock.
pub struct Agent {
    pub provider: String,
    pub model: String,
    pub max_tool_calls: u32,
}

/// A job that started: its id, its bundle's manifest, and the pre-flight's
/// findings (a finding stops the job before any agent runs).
pub struct Started {
    pub job: String,
    pub manifest: Value,
    pub preflight: Vec<Diagnostic>,
    /// Creating the job (its bundle packed) and running the pre-flight.
    pub bundle_time: std::time::Duration,
    pub preflight_time: std::time::Duration,
}

/// How the final gate ended.
pub enum Gate {
    Green {
        soil: String,
    },
    Partial {
        holes: Vec<String>,
    },
    Failed {
        errors: Vec<Diagnostic>,
        failures: Vec<SuiteFailure>,
    },
    Question {
        question: String,
    },
}

impl Service {
    /// Creates the job for `def` and runs its pre-flight.
    pub fn start_lowering(
        &mut self,
        def: &str,
        budget: u64,
        path: &str,
        agent: &Agent,
    ) -> Result<Started, Vec<Diagnostic>> {
        let db = self.database();
        let item = trellis_db::resolve_definition(db, def, trellis_db::Named::Function)
            .map_err(|d| vec![d])?;
        let spec = trellis_db::spec_file(db, item).ok_or_else(|| {
            vec![HostCode::UnknownDefinition.diagnostic(format!("`{def}` has no spec"))]
        })?;
        let mut problems = trellis_db::spec_diagnostics(db, spec).clone();
        problems.extend(trellis_db::report_diagnostics(
            db,
            trellis_db::test_diagnostics(db, item),
        ));
        if !problems.is_empty() {
            return Err(problems);
        }
        let clock = std::time::Instant::now();
        let record = jobs::create(self, &json!({ "def": def, "budget": budget, "path": path }))
            .map_err(|error| error.diagnostics())?;
        let id = record["job"].as_str().unwrap_or_default().to_owned();
        let root = self.root().to_owned();
        let job = self.jobs.get_mut(&id).expect("the job just created");
        job.max_tool_calls = Some(agent.max_tool_calls);
        let manifest: Value = serde_json::from_str(job.bundle.manifest()).unwrap_or(Value::Null);
        let bundle_time = clock.elapsed();
        let preflight = preflight(job, &root);
        Ok(Started {
            job: id,
            manifest,
            preflight,
            bundle_time,
            preflight_time: clock.elapsed() - bundle_time,
        })
    }

    /// `Err(what changed)` when the definition's spec, a callee on its callable
    /// surface, or a decision in its scope is no longer what the job was built
    /// against (compared file by file with the job's bundle). Call after a refresh.
    pub fn lowering_is_current(&self, id: &str) -> Result<(), String> {
        let Some(job) = self.jobs.get(id) else {
            return Ok(());
        };
        let db = self.database();
        let item = match trellis_db::resolve_definition(
            db,
            &job.definition,
            trellis_db::Named::Function,
        ) {
            Ok(item) => item,
            Err(_) => return Err(format!("{} is gone from the root", job.definition)),
        };
        let current = trellis_context::context_bundle(db, item, job.bundle.budget);
        let Ok(current) = current.as_ref() else {
            return Err("its context bundle no longer packs".to_owned());
        };
        // A triage job stands on its spec alone (its decision entry is the
        // thing that changed); a lowering on its spec, the signatures it could
        // call (callees/ and callable/) and decisions.
        let triage = job.triage;
        let watched = |path: &str| {
            path == "spec.md"
                || (!triage
                    && (path == "decisions.md"
                        || path.starts_with(trellis_context::pieces::CALLEES_DIR)
                        || path.starts_with(trellis_context::pieces::CALLABLE_DIR)))
        };
        let files =
            |bundle: &trellis_context::ContextBundle| -> Vec<(String, std::sync::Arc<str>)> {
                bundle
                    .files
                    .iter()
                    .filter(|file| watched(&file.path))
                    .map(|file| (file.path.clone(), file.text.clone()))
                    .collect()
            };
        let (then, now) = (files(&job.bundle), files(current));
        if then == now {
            return Ok(());
        }
        // A definition that joined the callable surface is no change to what
        // the job stands on: it could not have relied on it. That is what a job
        // running beside it sees as the other lands (design §4.9, several jobs
        // at once). One that changed or went is.
        let joined = |path: &str| {
            path.starts_with(trellis_context::pieces::CALLABLE_DIR)
                && !then.iter().any(|(was, _)| was == path)
        };
        let changed: Vec<String> = then
            .iter()
            .filter(|entry| !now.contains(entry))
            .chain(now.iter().filter(|entry| !then.contains(entry)))
            .map(|(path, _)| path.clone())
            .filter(|path| !joined(path))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        Err(format!("changed while it ran: {}", changed.join(", ")))
    }

    /// Whether the job's draft adds private helpers to its module's
    /// `_private.soil` (appended as it lands, so such drafts of one module
    /// land in queue order).
    pub fn lowering_adds_helpers(&self, id: &str) -> bool {
        self.jobs
            .get(id)
            .and_then(|job| job.draft.as_ref())
            .is_some_and(|draft| !jobs::split_helpers(&draft.canonical).1.is_empty())
    }

    /// What `trellis lower` queues: the named definitions (each must exist), or
    /// every function definition that is not lowered, partial, or stale (its
    /// spec, a callee, or its check moved since it was lowered). The rest are
    /// listed as skipped with why: an invalid spec is the human's to fix first,
    /// and stale test results need `trellis test`, not a new lowering.
    pub fn lowering_candidates(
        &self,
        named: &[String],
    ) -> Result<(Vec<String>, Vec<Value>), Vec<Diagnostic>> {
        let db = self.database();
        let functions = crate::order::functions(db);
        if !named.is_empty() {
            let unknown: Vec<Diagnostic> = named
                .iter()
                .filter(|def| !functions.contains(def))
                .map(|def| {
                    HostCode::UnknownDefinition
                        .diagnostic(format!("no definition `{def}` in this root"))
                })
                .collect();
            if !unknown.is_empty() {
                return Err(unknown);
            }
            let mut seen = std::collections::BTreeSet::new();
            let named = named
                .iter()
                .filter(|def| seen.insert(*def))
                .cloned()
                .collect();
            return Ok((named, Vec::new()));
        }
        let mut queue = Vec::new();
        let mut skipped = Vec::new();
        for def in functions {
            let Some((module, name)) = trellis_db::split_definition_name(&def) else {
                continue;
            };
            let item = Item::new(db, module.to_owned(), name.to_owned());
            let Some(current) = current_hashes(db, item) else {
                continue;
            };
            let lock = match lock_state(db, module, name) {
                LockState::Present(Lock::Function(lock)) => Some(lock),
                LockState::Unreadable(_) => {
                    skipped.push(json!({ "def": def, "reason": "its lock is unreadable" }));
                    continue;
                }
                _ => None,
            };
            match trellis_lock::status(&current, lock) {
                Status::NotLowered { .. }
                | Status::Partial { .. }
                | Status::SpecChanged
                | Status::CheckFailing { .. }
                | Status::CalleeChanged { .. } => queue.push(def),
                Status::SpecInvalid { .. } => skipped.push(
                    json!({ "def": def, "reason": "its spec is invalid: fix it first (trellis check)" }),
                ),
                _ => {}
            }
        }
        Ok((queue, skipped))
    }

    /// Ends a job's tool surface (a cap, an invalidation, the agent finished).
    pub fn end_lowering(&mut self, id: &str, reason: &str) {
        if let Some(job) = self.jobs.get_mut(id) {
            job.end(reason);
        }
    }

    /// The time the daemon spent answering a job's tool calls.
    pub fn lowering_tool_time(&self, id: &str) -> std::time::Duration {
        self.jobs
            .get(id)
            .map_or(std::time::Duration::ZERO, |job| job.tool_time)
    }

    /// How many tool calls the job made, and why it ended if it did.
    pub fn lowering_state(&self, id: &str) -> (u32, Option<String>) {
        self.jobs.get(id).map_or((0, None), |job| {
            (job.tool_calls, job.ended_reason().map(str::to_owned))
        })
    }

    /// The final gate (trellis-daemon §2, design §4.9): a question ends the job as
    /// asked; a draft that checks with holes is committed as partial; one that
    /// checks and passes every sandboxed case is written into the root, recorded
    /// with provenance `agent`, and tested with every tier (cram included) — if
    /// that run is not green, every file it touched is put back as it was.
    pub fn finish_lowering(
        &mut self,
        id: &str,
        agent: &Agent,
        progress: &mut dyn FnMut(Value),
    ) -> Gate {
        let root = self.root().to_owned();
        let Some(job) = self.jobs.get_mut(id) else {
            return failed(HostCode::JobNotFound, format!("no job {id}"));
        };
        job.end("the agent finished");
        if job.asked {
            let question = format!("{}/{}.question.json", job.module, job.name);
            job.release();
            return Gate::Question { question };
        }
        let Some(draft) = job.draft.as_ref().map(|d| Draft {
            canonical: d.canonical.clone(),
            decisions_applied: d.decisions_applied.clone(),
        }) else {
            job.release();
            return failed(HostCode::NoDraft, "the agent ended without writing a draft");
        };
        let facts = match jobs::check_types(job) {
            Ok(facts) => facts,
            Err(errors) => {
                job.release();
                return Gate::Failed {
                    errors,
                    failures: Vec::new(),
                };
            }
        };
        let holes: Vec<String> = facts["checks"]["holes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|hole| hole["name"].as_str().map(str::to_owned))
            .collect();
        if holes.is_empty()
            && let Err(gate) = sandboxed_gate(job, &root)
        {
            job.release();
            return gate;
        }
        let (module, name, definition, path) = (
            job.module.clone(),
            job.name.clone(),
            job.definition.clone(),
            job.path.clone(),
        );
        job.release();
        let citations = citations(&draft.decisions_applied);
        let _writer = match super::writer_lock(&root) {
            Ok(lock) => lock,
            Err(error) => {
                return Gate::Failed {
                    errors: vec![error],
                    failures: Vec::new(),
                };
            }
        };
        let touched = [
            format!("{module}/{name}.soil"),
            format!("{module}/_private.soil"),
            format!("{module}/{name}.lock"),
            crate::walk::MANIFEST_FILE.to_owned(),
        ];
        let before: Vec<(String, Option<Vec<u8>>)> = touched
            .iter()
            .map(|relative| (relative.clone(), std::fs::read(root.join(relative)).ok()))
            .collect();
        let outcome = self.commit(&module, &name, &draft.canonical, &citations, agent);
        let outcome = outcome.and_then(|()| {
            if !holes.is_empty() {
                return Ok(Gate::Partial {
                    holes: holes.clone(),
                });
            }
            self.final_test(&module, &name, &definition, &path, progress)
        });
        match outcome {
            Ok(gate) => gate,
            Err(gate) => {
                restore(&root, &before);
                self.refresh_everything();
                gate
            }
        }
    }

    /// Writes the draft's files and the lock recording it.
    fn commit(
        &mut self,
        module: &str,
        name: &str,
        canonical: &str,
        citations: &[Citation],
        agent: &Agent,
    ) -> Result<(), Gate> {
        let root = self.root().to_owned();
        let write_error = |relative: &str, error: std::io::Error| Gate::Failed {
            errors: vec![
                HostCode::RootUnreadable
                    .diagnostic(format!("cannot write {relative}: {error}"))
                    .with_file(relative),
            ],
            failures: Vec::new(),
        };
        let (own, helpers) = jobs::split_helpers(canonical);
        let soil = format!("{module}/{name}.soil");
        trellis_lock::write_atomic(&StdFs, &root.join(&soil), own.as_bytes())
            .map_err(|e| write_error(&soil, e))?;
        if !helpers.is_empty() {
            let private = format!("{module}/_private.soil");
            let text = match std::fs::read_to_string(root.join(&private)) {
                Ok(text) => format!("{text}\n{helpers}"),
                Err(_) => helpers,
            };
            trellis_lock::write_atomic(&StdFs, &root.join(&private), text.as_bytes())
                .map_err(|e| write_error(&private, e))?;
        }
        self.refresh_everything();
        let db = self.database();
        let item = Item::new(db, module.to_owned(), name.to_owned());
        let previous = match lock_state(db, module, name) {
            LockState::Present(Lock::Function(lock)) => Some(lock.clone()),
            _ => None,
        };
        let toolchain = super::locks::toolchain();
        let mut lock = adopted_lock(db, item, &toolchain, Some(citations), previous.as_ref())
            .map_err(|errors| Gate::Failed {
                errors,
                failures: Vec::new(),
            })?;
        if let Some(lowering) = &mut lock.lowering {
            lowering.provenance = Provenance::Agent;
            lowering.provider = Some(agent.provider.clone());
            lowering.model = Some(agent.model.clone());
        }
        lock.accepted = false;
        super::locks::save(
            &root,
            &format!("{module}/{name}.lock"),
            &Lock::Function(lock),
        )
        .map_err(|error| Gate::Failed {
            errors: vec![error],
            failures: Vec::new(),
        })?;
        super::locks::rewrite_manifest(self).map_err(|error| Gate::Failed {
            errors: vec![error],
            failures: Vec::new(),
        })?;
        Ok(())
    }

    /// `trellis test DEF`, every tier, then the status the lock now earns.
    fn final_test(
        &mut self,
        module: &str,
        name: &str,
        definition: &str,
        path: &str,
        progress: &mut dyn FnMut(Value),
    ) -> Result<Gate, Gate> {
        self.refresh_everything();
        let params = TestParams {
            def: Some(definition.to_owned()),
            path: Some(path.to_owned()),
            cache: None,
        };
        let mut answer =
            super::test::test(self, &params, progress).map_err(|error| Gate::Failed {
                errors: error.diagnostics(),
                failures: Vec::new(),
            })?;
        self.refresh_everything();
        let db = self.database();
        let item = Item::new(db, module.to_owned(), name.to_owned());
        let lock = match lock_state(db, module, name) {
            LockState::Present(Lock::Function(lock)) => Some(lock.clone()),
            _ => None,
        };
        let status =
            current_hashes(db, item).map(|current| trellis_lock::status(&current, lock.as_ref()));
        match status {
            Some(Status::Green | Status::DecisionFlagged { .. } | Status::ReviewSuggested) => {
                Ok(Gate::Green {
                    soil: format!("{module}/{name}.soil"),
                })
            }
            other => Err(Gate::Failed {
                errors: vec![HostCode::JobFinalGate.diagnostic(
                    format!(
                        "{definition} is not green after its final test run ({}); nothing of the draft was kept",
                        other.map_or("no status".to_owned(), |s| format!("{s:?}"))
                    ),
                )],
                failures: answer
                    .results
                    .first_mut()
                    .map(|result| std::mem::take(&mut result.failures))
                    .unwrap_or_default(),
            }),
        }
    }

    /// A refresh that stats every file, whatever the watch has delivered so far:
    /// the gate must see the files it has just written.
    fn refresh_everything(&mut self) {
        self.reload(crate::watch::Dirty::Everything);
    }
}

/// Runs the pre-flight with a placeholder body (`name params = ?preflight`): its
/// probes evaluate clauses over the expect cases and never the body itself.
fn preflight(job: &mut Job, root: &Path) -> Vec<Diagnostic> {
    let params: Vec<String> = {
        job.refresh_overlay();
        let db = job.overlay.database();
        let item = jobs::item_of(db, job);
        match trellis_db::program_def(db, item).signature.as_ref() {
            Some(signature) => trellis_verify::suite::SigParts::of(signature)
                .params
                .into_iter()
                .map(|param| param.name)
                .collect(),
            None => return Vec::new(),
        }
    };
    let stub = format!("{} {} = ?preflight\n", job.name, params.join(" "));
    let stub = stub.replace("  =", " =");
    job.draft = Some(Draft {
        canonical: stub,
        decisions_applied: json!([]),
    });
    job.refresh_overlay();
    job.draft = None;
    let db = job.overlay.database();
    let item = jobs::item_of(db, job);
    let findings =
        super::test::preflight_one(&job.overlay, item, root, &job.path).unwrap_or_default();
    trellis_db::report_diagnostics(job.overlay.database(), &findings)
}

/// Every sandboxed case against the draft in the job's overlay.
fn sandboxed_gate(job: &mut Job, root: &Path) -> Result<(), Gate> {
    let tool_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let db = job.overlay.database();
    let item = jobs::item_of(db, job);
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
        return Err(failed(HostCode::JobFinalGate, "the draft does not check"));
    };
    if !outcome.preflight.is_empty() {
        return Err(Gate::Failed {
            errors: trellis_db::report_diagnostics(job.overlay.database(), &outcome.preflight),
            failures: Vec::new(),
        });
    }
    let failing: Vec<&trellis_verify::suite::Row> = outcome
        .rows
        .iter()
        .filter(|row| row.mode == Mode::Sandboxed && !row.result.is_green())
        .collect();
    if failing.is_empty() {
        return Ok(());
    }
    let failures = outcome.failures.iter().map(SuiteFailure::from).collect();
    let names: Vec<&str> = failing.iter().map(|row| row.name.as_str()).collect();
    Err(Gate::Failed {
        errors: vec![HostCode::JobFinalGate.diagnostic(format!(
            "the last draft fails {}: {}",
            names.len(),
            names.join(", ")
        ))],
        failures,
    })
}

fn failed(code: HostCode, message: impl Into<String>) -> Gate {
    Gate::Failed {
        errors: vec![code.diagnostic(message)],
        failures: Vec::new(),
    }
}

/// The citations of a draft's `decisions_applied` (already checked against the
/// scope by `write_soil`).
fn citations(applied: &Value) -> Vec<Citation> {
    applied
        .as_array()
        .into_iter()
        .flatten()
        .map(|cited| Citation {
            scope: match cited["scope"]["tag"].as_str() {
                Some("Project") => Scope::Project,
                _ => Scope::Module,
            },
            label: cited["label"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

/// Puts files back as they were before a commit that did not end green.
fn restore(root: &Path, before: &[(String, Option<Vec<u8>>)]) {
    for (relative, bytes) in before {
        let path = root.join(relative);
        let result = match bytes {
            Some(bytes) => trellis_lock::write_atomic(&StdFs, &path, bytes),
            None => match std::fs::remove_file(&path) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        if let Err(error) = result {
            eprintln!("trellis daemon: cannot restore {relative}: {error}");
        }
    }
}
