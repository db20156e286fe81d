//! `trellis status --verify`: the user's audit of status, and the oracle of the
//! soundness tests. Every status is recomputed from scratch — a fresh database
//! loaded from disk, so no memo of the running one is consulted — and every
//! definition whose status trusts its recorded results (failing, flagged, review,
//! accepted, green) has its suite re-run in memory; a fresh run whose rows differ
//! from the lock's makes the truthful status `tests-stale`. Nothing is written.
//! Each row where the memoized answer differs from the recomputed one is reported.
//! With `reseed: N`, every suite the fresh run confirmed has its generated tiers
//! (properties and derived ensures rows) run again under N fresh seeds, and each
//! recorded row a fresh sample decides otherwise is reported as a flip: what a
//! green random row promises is the recorded sample, and this is how to look
//! past it (lock-schema §5.5).

use std::collections::BTreeMap;
use std::path::PathBuf;

use trellis_db::{Item, LockState, StatusRow, lock_state, root_status, split_definition_name};
use trellis_lock::{Lock, TestRow};
use trellis_rpc::RpcError;
use trellis_verify::process::RealRunner;

use super::Service;
use super::test::{recorded_rows, run_one, with_suite_input};
use crate::protocol::{Disagreement, Flip, StatusParams, VerifyAnswer};

/// Statuses computed from results a fresh run must confirm.
const TRUSTS_RESULTS: [&str; 5] = [
    "failing",
    "decision-flagged",
    "review-suggested",
    "accepted",
    "green",
];

pub fn verify(service: &mut Service, params: &StatusParams) -> Result<VerifyAnswer, RpcError> {
    let memoized: Vec<StatusRow> = service.root_status().into_iter().cloned().collect();
    let mut fresh = Service::new(service.root().to_owned());
    fresh.refresh();
    let mut verified: Vec<StatusRow> = root_status(fresh.database()).clone();
    let tool_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(PathBuf::from))
        .unwrap_or_default();
    let base_path = super::suite_path(params.path.as_deref());
    let root = service.root().to_owned();
    let mut suites_run = 0;
    let reseeds = params.reseed.unwrap_or(0);
    let mut flips = Vec::new();
    for row in &mut verified {
        if row.kind != "function" || !TRUSTS_RESULTS.contains(&row.status.as_str()) {
            continue;
        }
        let Some((module, name)) = split_definition_name(&row.name) else {
            continue;
        };
        let db = fresh.database();
        let LockState::Present(Lock::Function(lock)) = lock_state(db, module, name) else {
            continue;
        };
        let recorded = lock.tests.clone();
        let item = Item::new(db, module.to_owned(), name.to_owned());
        suites_run += 1;
        let outcome = run_one(
            &fresh,
            item,
            &root,
            &tool_dir,
            &base_path,
            &RealRunner,
            false,
            &mut |_| {},
        );
        let rows = outcome
            .as_ref()
            .filter(|outcome| outcome.preflight.is_empty())
            .map(recorded_rows);
        if let Some(difference) = difference(&recorded, rows.as_deref()) {
            row.status = "tests-stale".to_owned();
            row.reason = Some(format!(
                "a fresh run disagrees with the recorded results: {difference}"
            ));
            row.fix = Some(format!("trellis test {}", row.name));
        } else if reseeds > 0 {
            flips.extend(reseeded_flips(
                &fresh, item, &root, &tool_dir, &base_path, &recorded, reseeds,
            ));
        }
    }
    let by_name: BTreeMap<&str, &StatusRow> = memoized
        .iter()
        .map(|row| (row.name.as_str(), row))
        .collect();
    let mut disagreements = Vec::new();
    for row in &verified {
        let recorded = by_name.get(row.name.as_str()).map(|r| r.status.as_str());
        if recorded != Some(row.status.as_str()) {
            disagreements.push(Disagreement {
                name: row.name.clone(),
                recorded: recorded.unwrap_or("(no row)").to_owned(),
                verified: row.status.clone(),
                reason: row.reason.clone(),
            });
        }
    }
    for row in &memoized {
        if !verified.iter().any(|v| v.name == row.name) {
            disagreements.push(Disagreement {
                name: row.name.clone(),
                recorded: row.status.clone(),
                verified: "(no row)".to_owned(),
                reason: Some("the entry no longer exists".to_owned()),
            });
        }
    }
    Ok(VerifyAnswer {
        definitions: verified
            .iter()
            .map(crate::protocol::StatusRow::from)
            .collect(),
        disagreements,
        suites_run,
        reseeded: params.reseed,
        flips,
    })
}

/// The recorded rows of `item` that a fresh sample decides otherwise: its
/// generated tiers under `reseeds` fresh seeds ([`trellis_verify::property::reseed`]
/// of its own seed), the first flip of each row reported.
fn reseeded_flips(
    service: &Service,
    item: Item<'_>,
    root: &std::path::Path,
    tool_dir: &std::path::Path,
    base_path: &str,
    recorded: &[TestRow],
    reseeds: u32,
) -> Vec<Flip> {
    let def = item.qualified(service.database());
    let runs = with_suite_input(
        service,
        item,
        root,
        tool_dir,
        base_path,
        &RealRunner,
        true,
        |input| {
            let seeds: Vec<u64> = (1..=u64::from(reseeds))
                .map(|k| trellis_verify::property::reseed(input.seed, k))
                .collect();
            trellis_verify::suite::run_generated(input, &seeds)
        },
    )
    .unwrap_or_default();
    let mut flips: Vec<Flip> = Vec::new();
    for (seed, rows) in runs {
        for row in rows {
            let Some(old) = recorded.iter().find(|r| r.name == row.name) else {
                continue;
            };
            let fresh = row.result.as_str();
            let was = trellis_lock::Word::word(old.result);
            if fresh == was || flips.iter().any(|flip| flip.row == row.name) {
                continue;
            }
            flips.push(Flip {
                def: def.clone(),
                row: row.name.clone(),
                recorded: was.to_owned(),
                fresh: fresh.to_owned(),
                seed: format!("{seed:#018x}"),
                message: row.detail.map(|detail| detail.message),
            });
        }
    }
    flips
}

/// How a fresh run's rows differ from the recorded ones, if they do.
fn difference(recorded: &[TestRow], fresh: Option<&[TestRow]>) -> Option<String> {
    let Some(fresh) = fresh else {
        // A suite the pre-flight stops records no rows; anything else recorded
        // is contradicted.
        return (!recorded.is_empty()).then(|| {
            "the suite no longer runs (it does not check, or pre-flight stops it)".into()
        });
    };
    if recorded == fresh {
        return None;
    }
    let mut parts = Vec::new();
    for row in fresh {
        match recorded.iter().find(|r| r.name == row.name) {
            None => parts.push(format!("`{}` is not recorded", row.name)),
            Some(old) if old != row => parts.push(format!(
                "`{}` recorded {}, now {}",
                row.name,
                trellis_lock::Word::word(old.result),
                trellis_lock::Word::word(row.result)
            )),
            Some(_) => {}
        }
    }
    for row in recorded {
        if !fresh.iter().any(|f| f.name == row.name) {
            parts.push(format!("`{}` is no longer a test", row.name));
        }
    }
    if parts.is_empty() {
        parts.push("the rows are recorded in another order".to_owned());
    }
    Some(parts.join("; "))
}
