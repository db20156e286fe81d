//! `check` and `status`: the static pipeline and the status ladder, answered from
//! the database's queries.

use serde_json::Value;
use trellis_rpc::RpcError;

use super::Service;
use crate::protocol::{
    CheckAnswer, CheckParams, InScope, OmittedRows, OpenHole, SUMMARY_ROWS_PER_STATUS,
    StatusAnswer, StatusParams, StatusRow, encode_answer, is_settled,
};

pub fn check(service: &mut Service, params: &CheckParams) -> Result<CheckAnswer, RpcError> {
    let def = params.def.as_deref();
    if let Some(def) = def {
        trellis_db::resolve_definition(service.database(), def, trellis_db::Named::FunctionOrType)
            .map_err(|d| super::failed(&[d]))?;
    }
    let report = match def {
        Some(def) => trellis_db::check_root(service.database(), Some(def)),
        None => service.root_check(),
    };
    let mut errors = service.load_problems().to_vec();
    // A lock that cannot be read is a problem of the root, not an absent lock.
    let own_lock = def
        .and_then(trellis_db::split_definition_name)
        .map(|(module, name)| format!("{module}/{name}.lock"));
    errors.extend(
        service
            .unreadable_locks()
            .into_iter()
            .filter(|d| own_lock.is_none() || d.file == own_lock),
    );
    errors.extend(report.diagnostics.iter().cloned());
    Ok(CheckAnswer {
        checked: report.checked,
        errors,
        holes: report.holes.iter().map(open_hole).collect(),
    })
}

/// An open hole for `check`'s answer: where it is, its goal, the names in scope.
fn open_hole(hole: &trellis_db::OpenHole) -> OpenHole {
    OpenHole {
        def: hole.definition.clone(),
        hole: hole.name.clone(),
        goal: hole.goal.clone(),
        scope: hole
            .scope
            .iter()
            .map(|(name, ty)| InScope {
                name: name.clone(),
                ty: ty.clone(),
            })
            .collect(),
        file: hole.file.clone(),
        line: hole.span.map(|s| s.start.line),
        column: hole.span.map(|s| s.start.column),
    }
}

pub fn status(service: &mut Service, params: &StatusParams) -> Result<Value, RpcError> {
    // A broken soil.toml makes every status meaningless: say so instead.
    let db = service.database();
    if let Err(diagnostic) = trellis_db::root_config(db, trellis_db::Workspace::get(db)) {
        return Err(super::failed(std::slice::from_ref(diagnostic)));
    }
    if params.verify == Some(true) {
        return super::verify::verify(service, params).map(|answer| encode_answer(&answer));
    }
    let rows = service.root_status();
    let mut answer = StatusAnswer::default();
    if params.summary == Some(true) {
        let (shown, omitted) = summarized(&rows);
        answer.definitions = shown;
        answer.omitted = omitted;
    } else {
        answer.definitions = rows.into_iter().map(StatusRow::from).collect();
    }
    // A triage that found a lowering no longer follows its decision says so
    // beside the flag (display only: the verdict file is never an input).
    for row in &mut answer.definitions {
        if row.status != "decision-flagged" {
            continue;
        }
        if let Some((module, def)) = trellis_db::split_definition_name(&row.name) {
            row.triage = super::triage::recorded_verdict(service.root(), module, def);
        }
    }
    let (questions, unreadable_questions) = super::question::open_questions(service);
    let db = service.database();
    answer.questions = questions
        .iter()
        .map(|q| super::question::question_view(q, &super::question::staleness(db, q)))
        .collect();
    answer.problems = service.load_problems().to_vec();
    answer.problems.extend(service.unreadable_locks());
    answer.problems.extend(unreadable_questions);
    Ok(encode_answer(&answer))
}

/// The rows a summarized status shows — none settled, at most
/// [`SUMMARY_ROWS_PER_STATUS`] of each other status, in the ladder's order —
/// and the counts of the rest, by status and kind, in order of first omission.
fn summarized(rows: &[&trellis_db::StatusRow]) -> (Vec<StatusRow>, Vec<OmittedRows>) {
    let mut shown_per_status: std::collections::HashMap<&str, usize> = Default::default();
    let mut shown = Vec::new();
    let mut omitted: Vec<OmittedRows> = Vec::new();
    for &row in rows {
        let seen = shown_per_status.entry(row.status.as_str()).or_default();
        if !is_settled(&row.status) && *seen < SUMMARY_ROWS_PER_STATUS {
            *seen += 1;
            shown.push(StatusRow::from(row));
            continue;
        }
        match omitted
            .iter_mut()
            .find(|o| o.status == row.status && o.kind == row.kind)
        {
            Some(counted) => counted.count += 1,
            None => omitted.push(OmittedRows {
                status: row.status.clone(),
                kind: row.kind.to_owned(),
                count: 1,
            }),
        }
    }
    (shown, omitted)
}
