//! `check` and `status`: the static pipeline and the status ladder, answered from
//! the database's queries.

use serde_json::{Value, json};
use trellis_rpc::RpcError;

use super::Service;

pub fn check(service: &mut Service, params: &Value) -> Result<Value, RpcError> {
    let def = params.get("def").and_then(Value::as_str);
    if let Some(def) = def {
        known_definition(service, def)?;
    }
    let report = trellis_db::check_root(service.database(), def);
    let mut errors: Vec<Value> = service
        .load_problems()
        .iter()
        .map(|d| d.to_json())
        .collect();
    // A lock that cannot be read is a problem of the root, not an absent lock.
    let own_lock = def
        .and_then(trellis_db::split_definition_name)
        .map(|(module, name)| format!("{module}/{name}.lock"));
    errors.extend(
        service
            .unreadable_locks()
            .iter()
            .filter(|d| own_lock.is_none() || d.file == own_lock)
            .map(|d| d.to_json()),
    );
    errors.extend(report.diagnostics.iter().map(|d| d.to_json()));
    let holes: Vec<Value> = report.holes.iter().map(hole_json).collect();
    Ok(json!({ "checked": report.checked, "errors": errors, "holes": holes }))
}

/// An open hole for `check`'s answer: where it is, its goal, the names in scope.
fn hole_json(hole: &trellis_db::OpenHole) -> Value {
    let scope: Vec<Value> = hole
        .scope
        .iter()
        .map(|(name, ty)| json!({ "name": name, "type": ty }))
        .collect();
    json!({
        "def": hole.definition,
        "hole": hole.name,
        "goal": hole.goal,
        "scope": scope,
        "file": hole.file,
        "line": hole.span.map(|s| s.start.line),
        "column": hole.span.map(|s| s.start.column),
    })
}

/// `unknown-definition` unless `def` names a spec of the root.
fn known_definition(service: &Service, def: &str) -> Result<(), RpcError> {
    let db = service.database();
    let index = trellis_db::root_index(db, trellis_db::Workspace::get(db));
    let known = trellis_db::split_definition_name(def).is_some_and(|(module, name)| {
        index
            .module(module)
            .is_some_and(|files| files.specs.contains_key(name))
    });
    if known {
        Ok(())
    } else {
        Err(super::failed(&[trellis_diag::Diagnostic::new(
            "unknown-definition",
            format!("no definition `{def}` in this root (write module::name)"),
        )]))
    }
}

pub fn status(service: &mut Service, params: &Value) -> Result<Value, RpcError> {
    // A broken soil.toml makes every status meaningless: say so instead.
    let db = service.database();
    if let Err(diagnostic) = trellis_db::root_config(db, trellis_db::Workspace::get(db)) {
        return Err(super::failed(std::slice::from_ref(diagnostic)));
    }
    if params.get("verify").and_then(Value::as_bool) == Some(true) {
        return super::verify::verify(service, params);
    }
    let rows = trellis_db::root_status(service.database());
    let mut definitions: Vec<Value> = rows.iter().map(row_json).collect();
    // A triage that found a lowering no longer follows its decision says so
    // beside the flag (display only: the verdict file is never an input).
    for row in &mut definitions {
        if row["status"] != "decision-flagged" {
            continue;
        }
        let name = row["name"].as_str().unwrap_or_default().to_owned();
        if let Some((module, def)) = trellis_db::split_definition_name(&name)
            && let Some(verdict) = super::triage::recorded_verdict(service.root(), module, def)
        {
            row["triage"] = verdict;
        }
    }
    let mut answer = json!({ "definitions": definitions });
    // Open questions, and problems, only when there are any, so a clean root's
    // document stays as it was.
    let (questions, unreadable_questions) = super::question::open_questions(service);
    if !questions.is_empty() {
        let db = service.database();
        answer["questions"] = questions
            .iter()
            .map(|q| super::question::question_json(q, &super::question::staleness(db, q)))
            .collect();
    }
    let mut problems = service.load_problems().to_vec();
    problems.extend(service.unreadable_locks());
    problems.extend(unreadable_questions);
    if !problems.is_empty() {
        answer["problems"] = problems.iter().map(|d| d.to_json()).collect();
    }
    Ok(answer)
}

/// One status row as the answer carries it.
pub(super) fn row_json(row: &trellis_db::StatusRow) -> Value {
    json!({
        "name": row.name,
        "kind": row.kind,
        "status": row.status,
        "reason": row.reason,
        "fix": row.fix,
    })
}
