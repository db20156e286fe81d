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
    let mut answer = StatusAnswer::default();
    if params.summary == Some(true) {
        (answer.definitions, answer.omitted) = summary_of(service);
    } else {
        answer.definitions = (service.root_status().into_iter())
            .map(StatusRow::from)
            .collect();
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

/// A summarized status as made from the joins ([`Service::summary_source`]).
pub(super) struct Summarized {
    source: (u64, u64),
    shown: Vec<StatusRow>,
    omitted: Vec<OmittedRows>,
}

/// The rows a summarized status shows, explained, and the counts of the
/// rest; kept while the database and the joins it was made from stay as
/// they are, since it is a function of nothing else. A `status` asked again
/// with no change between reads no module; one made anew reads the joined
/// modules only until the sums of their counts tell the rest ([`summarized`];
/// reading every module's counts cost the daemon 13 ms at 20,000
/// definitions once it had idled for a second, design §7.5). Stored answers
/// carry no sums, and are read whole.
fn summary_of(service: &mut Service) -> (Vec<StatusRow>, Vec<OmittedRows>) {
    let source = service.summary_source();
    if let Some(kept) = (service.summary.as_ref()).filter(|kept| Some(kept.source) == source) {
        return (kept.shown.clone(), kept.omitted.clone());
    }
    let (mut shown, omitted) = match service.serves_stored_status() {
        true => summarized(service.root_status_groups(), None),
        false => {
            let (groups, totals) = service.joins.status_summary(&service.db);
            summarized(groups, Some(&totals))
        }
    };
    // Only the rows shown say what changed below a moved callee.
    for row in &mut shown {
        if let Some(whole) = service.explained_row(&row.name) {
            *row = StatusRow::from(&*whole);
        }
    }
    if let Some(source) = source {
        service.summary = Some(Summarized {
            source,
            shown: shown.clone(),
            omitted: omitted.clone(),
        });
    }
    (shown, omitted)
}

/// The rows a summarized status shows — none settled, at most
/// [`SUMMARY_ROWS_PER_STATUS`] of each other status, in the ladder's order —
/// and the counts of the rest, by status and kind, in order of first omission.
/// A group none of whose rows can be shown is counted from its counts, unread,
/// so a summary of a mostly green root costs one look per module; with the
/// groups' counts summed (`totals`), the groups are read only until what is
/// left of them can show no row and omits no (status, kind) not yet omitted
/// — the order of the omitted counts is that of their first omission — and
/// what is left is counted from the sums: after an edit, a few modules of
/// the root rather than all of them (design §7.5).
fn summarized<'g>(
    groups: impl IntoIterator<Item = trellis_db::RowGroup<'g>>,
    totals: Option<&[trellis_db::StatusCount]>,
) -> (Vec<StatusRow>, Vec<OmittedRows>) {
    let mut summary = Summary::default();
    let mut left: Vec<trellis_db::StatusCount> = totals.map(<[_]>::to_vec).unwrap_or_default();
    for group in groups {
        let shows_some = (group.counts.iter()).any(|(status, _, _)| summary.would_show(status));
        if shows_some {
            for row in group.rows {
                if summary.would_show(&row.status) {
                    summary.show(row);
                } else {
                    summary.omit(&row.status, row.kind, 1);
                }
            }
        } else {
            for (status, kind, count) in group.counts {
                summary.omit(status, kind, *count);
            }
        }
        if totals.is_none() {
            continue;
        }
        for (status, kind, count) in group.counts {
            if let Some((_, _, left)) = (left.iter_mut()).find(|(s, k, _)| s == status && k == kind)
            {
                *left -= count;
            }
        }
        // A status omitted once shows no more rows: its quota is full, or it
        // is settled.
        let settled = |(status, kind, left): &trellis_db::StatusCount| {
            *left == 0 || summary.has_omitted(status, kind)
        };
        if left.iter().all(settled) {
            for (status, kind, left) in &left {
                if *left > 0 {
                    summary.omit(status, kind, *left);
                }
            }
            break;
        }
    }
    (summary.shown, summary.omitted)
}

#[derive(Default)]
struct Summary {
    /// How many rows of each status are shown; the statuses are a dozen words,
    /// so a short list beats hashing.
    shown_per_status: Vec<(String, usize)>,
    shown: Vec<StatusRow>,
    omitted: Vec<OmittedRows>,
}

impl Summary {
    fn would_show(&self, status: &str) -> bool {
        !is_settled(status)
            && (self.shown_per_status.iter())
                .find(|(shown, _)| shown == status)
                .is_none_or(|(_, count)| *count < SUMMARY_ROWS_PER_STATUS)
    }

    fn show(&mut self, row: &trellis_db::StatusRow) {
        match (self.shown_per_status.iter_mut()).find(|(shown, _)| *shown == row.status) {
            Some((_, count)) => *count += 1,
            None => self.shown_per_status.push((row.status.clone(), 1)),
        }
        self.shown.push(StatusRow::from(row));
    }

    fn has_omitted(&self, status: &str, kind: &str) -> bool {
        (self.omitted.iter()).any(|o| o.status == status && o.kind == kind)
    }

    fn omit(&mut self, status: &str, kind: &str, count: usize) {
        match (self.omitted.iter_mut()).find(|o| o.status == status && o.kind == kind) {
            Some(counted) => counted.count += count,
            None => self.omitted.push(OmittedRows {
                status: status.to_owned(),
                kind: kind.to_owned(),
                count,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: usize, status: &str, kind: &'static str) -> trellis_db::StatusRow {
        trellis_db::StatusRow {
            name: format!("m::f{n}"),
            kind,
            status: status.to_owned(),
            reason: None,
            fix: None,
        }
    }

    /// The summary read row by row, as it was before groups could be counted
    /// unread.
    fn row_by_row(rows: &[&trellis_db::StatusRow]) -> (Vec<StatusRow>, Vec<OmittedRows>) {
        let mut summary = Summary::default();
        for row in rows {
            if summary.would_show(&row.status) {
                summary.show(row);
            } else {
                summary.omit(&row.status, row.kind, 1);
            }
        }
        (summary.shown, summary.omitted)
    }

    /// Groups counted from their counts summarize exactly as reading every
    /// row, and so do groups read only until the rest is counted from the
    /// sums of their counts — which reads fewer of them.
    #[test]
    fn a_summary_from_counts_is_the_summary_row_by_row() {
        let statuses = ["green", "not-lowered", "tests-stale", "accepted", "failing"];
        let kinds = ["function", "module"];
        let mut seed = 7u64;
        let mut next = |bound: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % bound
        };
        let (mut groups_read, mut groups_made) = (0, 0);
        for case in 0..400 {
            // Some roots of a status or two, as most are; some of many.
            let used = 1 + case % statuses.len();
            let groups: Vec<Vec<std::sync::Arc<trellis_db::StatusRow>>> = (0..next(40))
                .map(|_| {
                    (0..next(30))
                        .map(|n| {
                            let status = statuses[next(used)];
                            std::sync::Arc::new(row(n, status, kinds[next(2)]))
                        })
                        .collect()
                })
                .collect();
            groups_made += groups.len();
            let counts: Vec<Vec<trellis_db::StatusCount>> = (groups.iter())
                .map(|rows| {
                    let mut counts: Vec<trellis_db::StatusCount> = Vec::new();
                    for row in rows {
                        match counts
                            .iter_mut()
                            .find(|c| c.0 == row.status && c.1 == row.kind)
                        {
                            Some(c) => c.2 += 1,
                            None => counts.push((row.status.clone(), row.kind, 1)),
                        }
                    }
                    counts
                })
                .collect();
            let grouped: Vec<trellis_db::RowGroup<'_>> = (groups.iter().zip(&counts))
                .map(|(rows, counts)| trellis_db::RowGroup { rows, counts })
                .collect();
            let flat: Vec<&trellis_db::StatusRow> =
                groups.iter().flatten().map(|row| &**row).collect();
            let row_by_row = row_by_row(&flat);
            assert_eq!(summarized(grouped.iter().copied(), None), row_by_row);
            let mut totals: Vec<trellis_db::StatusCount> = Vec::new();
            for (status, kind, count) in counts.iter().flatten() {
                match totals.iter_mut().find(|t| t.0 == *status && t.1 == *kind) {
                    Some(t) => t.2 += count,
                    None => totals.push((status.clone(), kind, *count)),
                }
            }
            let read = std::cell::Cell::new(0);
            let counted = (grouped.iter().copied()).inspect(|_| read.set(read.get() + 1));
            assert_eq!(summarized(counted, Some(&totals)), row_by_row);
            groups_read += read.get();
        }
        assert!(
            groups_read * 2 < groups_made,
            "the sums spared few reads: {groups_read} of {groups_made} groups"
        );
    }
}
