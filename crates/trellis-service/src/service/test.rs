//! `trellis test`: run every tier of a definition's suite (trellis-verify) and record
//! the results in its lock. Results are keyed by everything the suite executes (the
//! database's `suite_key`, lock-schema §5.4) and sealed with the rows, so an
//! unchanged definition does no work at all and a changed input is never missed.
//! A stale suite whose results another machine already recorded under the same
//! key is taken from the shared result cache when one is configured (design
//! §12): verified, recorded exactly as a local run would record it, and not run.

use std::path::PathBuf;

use serde_json::Value;
use soil_types::Program;
use trellis_cache::Fetched;
use trellis_db::{
    Item, LockState, check_definition, checker_definition, lock_state, oracle_rows, program_def,
    report_diagnostics, spec_file, suite_key, test_blocks, test_program_order,
};
use trellis_diag::Diagnostic;
use trellis_lock::{
    DefinitionLock, Lock, Mode, StaleCause, Status, TestResult, TestRow, Tier, Word,
    check_invariants, seal_results,
};
use trellis_rpc::RpcError;
use trellis_verify::process::RealRunner;
use trellis_verify::suite::{self, ProgressEvent, RowResult, SuiteInput, SuiteOutcome, Timeouts};

use super::Service;
use crate::protocol::{
    CacheReport, Skipped, SuiteFailure, SuiteResult, SuiteRow, TestAnswer, TestEvent, TestParams,
    TestProgress, UP_TO_DATE, encode_answer,
};
use crate::service::locks::{save, targets, toolchain};

/// Why a definition's suite was not run.
enum Skip {
    UpToDate,
    NotRunnable(String),
    /// The spec or the Soil does not check: nothing is run or recorded.
    Refused(Vec<Diagnostic>),
}

pub fn test(
    service: &mut Service,
    params: &TestParams,
    progress: &mut dyn FnMut(Value),
) -> Result<TestAnswer, RpcError> {
    let targets = targets(service, params.def.as_deref())?;
    let root = service.root().to_owned();
    let db = service.database();
    let tool_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(PathBuf::from))
        .unwrap_or_default();
    let base_path = super::suite_path(params.path.as_deref());
    let runner = RealRunner;
    let mut ran = Vec::new();
    let mut skipped = Vec::new();
    let mut results = Vec::new();
    let mut errors = Vec::new();
    let mut cache = super::shared_cache::open(service, params.cache.as_ref());
    let mut report = cache.as_ref().map(|cache| CacheReport {
        url: cache.url().to_owned(),
        ..CacheReport::default()
    });
    for (module, name) in targets {
        let item = Item::new(db, module.clone(), name.clone());
        let qualified = item.qualified(db);
        let lock = match lock_state(db, &module, &name) {
            LockState::Present(Lock::Function(lock)) => lock.clone(),
            LockState::Unreadable(problems) => {
                errors.extend(problems.iter().cloned());
                skipped.push(skip(&qualified, "its lock is unreadable"));
                continue;
            }
            _ => {
                skipped.push(skip(&qualified, "not lowered: adopt it first"));
                continue;
            }
        };
        match runnable(service, item) {
            Err(Skip::UpToDate) => {
                skipped.push(skip(&qualified, UP_TO_DATE));
                continue;
            }
            Err(Skip::NotRunnable(reason)) => {
                skipped.push(skip(&qualified, &reason));
                continue;
            }
            Err(Skip::Refused(problems)) => {
                errors.extend(problems);
                skipped.push(skip(&qualified, "it does not check"));
                continue;
            }
            Ok(()) => {}
        }
        let inputs = cache
            .as_ref()
            .and_then(|_| super::shared_cache::inputs(service, item));
        if let (Some(cache), Some(report), Some(inputs)) = (&mut cache, &mut report, &inputs) {
            let refused = match cache.fetch(inputs) {
                Fetched::Hit(rows) => {
                    let updated = with_rows(service, item, lock.clone(), rows, true);
                    let problems = check_invariants(&Lock::Function(updated.clone()));
                    if problems.is_empty() {
                        let lock_file = format!("{module}/{name}.lock");
                        if let Err(error) =
                            save(&root, &lock_file, &Lock::Function(updated.clone()))
                        {
                            errors.push(error);
                        }
                        results.push(cached_result(&qualified, &updated.tests));
                        report.reused.push(qualified.clone());
                        continue;
                    }
                    Some(format!(
                        "its rows do not make a valid lock here: {}",
                        problems[0].message
                    ))
                }
                Fetched::Rejected(reason) => Some(reason),
                Fetched::Miss | Fetched::Unavailable => None,
            };
            if let Some(reason) = refused {
                report.rejected.push(skip(&qualified, &reason));
            }
        }
        progress(encode_answer(&TestProgress {
            def: qualified.clone(),
            event: TestEvent::Started,
            row: None,
            result: None,
        }));
        let outcome = run_one(
            service, item, &root, &tool_dir, &base_path, &runner, false, progress,
        );
        let Some(outcome) = outcome else { continue };
        ran.push(qualified.clone());
        let preflight = report_diagnostics(service.database(), &outcome.preflight);
        results.push(suite_result(&qualified, &outcome, preflight));
        // A pre-flight finding is recorded too: no rows, sealed under the key, so
        // status says the suite was stopped (failing) until the spec changes,
        // rather than prescribing a re-run that would stop again.
        let updated = recorded(service, item, lock, &outcome);
        if let (Some(cache), Some(inputs)) = (&mut cache, &inputs)
            && outcome.is_green()
            && !updated.tests.is_empty()
        {
            cache.store(inputs, &updated.tests);
        }
        if let Err(error) = save(
            &root,
            &format!("{module}/{name}.lock"),
            &Lock::Function(updated),
        ) {
            errors.push(error);
        }
    }
    if let Err(error) = crate::service::locks::rewrite_manifest(service) {
        errors.push(error);
    }
    if let (Some(cache), Some(report)) = (&cache, &mut report) {
        report.stored = cache.stored();
        report.down = cache.down().map(str::to_owned);
        report.notes = cache.notes().to_vec();
    }
    Ok(TestAnswer {
        ran,
        skipped,
        results,
        errors,
        cache: report,
    })
}

fn skip(def: &str, reason: &str) -> Skipped {
    Skipped {
        def: def.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Whether the suite must run: only for a lowering that is current (the Soil and
/// spec the lock recorded), checks, has no holes, and whose recorded results are
/// stale — the status ladder decides, over the suite key (lock-schema §5.4).
fn runnable(service: &Service, item: Item<'_>) -> Result<(), Skip> {
    let db = service.database();
    if spec_file(db, item).is_none() {
        return Err(Skip::NotRunnable("no spec".to_owned()));
    }
    // The ladder `status` climbs, over the lock the caller found present: its
    // memo is the status's own, so a root already answered is not gathered
    // again definition by definition.
    let status = match trellis_db::definition_status(db, item) {
        Ok(status) => status,
        Err(problems) => return Err(Skip::Refused(problems.clone())),
    };
    match status {
        Status::NotLowered { .. } => {
            Err(Skip::NotRunnable("not lowered: adopt it first".to_owned()))
        }
        Status::SpecInvalid { .. } | Status::CheckFailing { .. } => {
            let spec = spec_file(db, item).expect("a definition with hashes has a spec");
            let mut problems = trellis_db::spec_diagnostics(db, spec).clone();
            problems.extend(report_diagnostics(
                db,
                trellis_db::test_diagnostics(db, item),
            ));
            if let trellis_db::CheckOutcome::Failed(errors) = check_definition(db, item) {
                problems.extend(report_diagnostics(db, errors));
            }
            problems.extend(trellis_db::export_violations(db, item).iter().cloned());
            Err(Skip::Refused(problems))
        }
        Status::SpecChanged => Err(Skip::NotRunnable(
            "the spec changed since it was adopted: adopt it again".to_owned(),
        )),
        Status::Partial { .. } => Err(Skip::NotRunnable(
            "the lowering has open holes; holes are never tested".to_owned(),
        )),
        Status::TestsStale { causes } if causes.iter().any(StaleCause::needs_adopt) => Err(
            Skip::NotRunnable("the Soil changed since it was adopted: adopt it again".to_owned()),
        ),
        Status::CalleeChanged { .. } => Err(Skip::NotRunnable(
            "a callee changed since it was adopted: adopt it again".to_owned(),
        )),
        Status::TestsStale { .. } => Ok(()),
        Status::Failing { .. }
        | Status::DecisionFlagged { .. }
        | Status::ReviewSuggested
        | Status::Accepted
        | Status::Green => Err(Skip::UpToDate),
    }
}

/// Runs `item`'s suite; `sandboxed_only` leaves the cram blocks out (a lowering
/// job's `run_tests` has no path to real mode, trellis-daemon §3.4).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_one(
    service: &Service,
    item: Item<'_>,
    root: &std::path::Path,
    tool_dir: &std::path::Path,
    base_path: &str,
    runner: &RealRunner,
    sandboxed_only: bool,
    progress: &mut dyn FnMut(Value),
) -> Option<SuiteOutcome> {
    let qualified = item.qualified(service.database());
    let mut forward = |event: ProgressEvent| {
        if let ProgressEvent::RowFinished(row) = event {
            progress(encode_answer(&TestProgress {
                def: qualified.clone(),
                event: TestEvent::Row,
                row: Some(row.name.clone()),
                result: Some(row.result.as_str().to_owned()),
            }));
        }
    };
    with_suite_input(
        service,
        item,
        root,
        tool_dir,
        base_path,
        runner,
        sandboxed_only,
        |input| suite::run_suite(input, runner, service.warm_oracles(), &mut forward),
    )
}

/// The pre-flight of `item`'s suite alone (a lowering job's first step); `None`
/// when the definition does not check or has no signature.
pub(crate) fn preflight_one(
    service: &Service,
    item: Item<'_>,
    root: &std::path::Path,
    base_path: &str,
) -> Option<Vec<Diagnostic>> {
    let runner = RealRunner;
    with_suite_input(
        service,
        item,
        root,
        root,
        base_path,
        &runner,
        true,
        suite::run_preflight,
    )
}

/// Builds `item`'s [`SuiteInput`] from the database and hands it to `run`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn with_suite_input<R>(
    service: &Service,
    item: Item<'_>,
    root: &std::path::Path,
    tool_dir: &std::path::Path,
    base_path: &str,
    runner: &RealRunner,
    sandboxed_only: bool,
    run: impl FnOnce(&SuiteInput) -> R,
) -> Option<R> {
    let db = service.database();
    if !matches!(
        check_definition(db, item),
        trellis_db::CheckOutcome::Checked(_)
    ) {
        return None;
    }
    let mut program = Program::default();
    for (module, name) in test_program_order(db, item).iter() {
        if let Some(definition) =
            checker_definition(db, Item::new(db, module.clone(), name.clone()))
        {
            program.definitions.push(definition);
        }
    }
    let def = program_def(db, item);
    let signature = def.signature.as_ref()?;
    let spec = spec_file(db, item)?;
    let mut blocks = test_blocks(db, spec).clone();
    if sandboxed_only {
        blocks.retain(|block| !matches!(block.syntax, trellis_spec::BlockSyntax::Cram(_)));
    }
    let qualified = item.qualified(db);
    let python = service.python_on(base_path, runner);
    let input = SuiteInput {
        definition: &qualified,
        types: trellis_db::root_types(db),
        program: &program,
        signature,
        requires: &def.requires,
        ensures: &def.ensures,
        blocks: &blocks,
        seed: trellis_verify::property::seed_for(
            &trellis_db::formal_hash(db, spec),
            &trellis_db::test_hash(db, spec),
        ),
        root,
        references: trellis_db::reference_texts(db, spec),
        tool_dir,
        base_path,
        python: &python,
        timeouts: Timeouts::default(),
    };
    Some(run(&input))
}

/// The lock with this run's results: rows, oracle hashes, and the test hash the
/// rows were computed from.
fn recorded(
    service: &Service,
    item: Item<'_>,
    lock: DefinitionLock,
    outcome: &SuiteOutcome,
) -> DefinitionLock {
    with_rows(
        service,
        item,
        lock,
        recorded_rows(outcome),
        outcome.is_green(),
    )
}

/// The lock recording `rows`, run (here, or by a trusted run elsewhere under the
/// same suite key) on the current inputs.
fn with_rows(
    service: &Service,
    item: Item<'_>,
    mut lock: DefinitionLock,
    rows: Vec<TestRow>,
    green: bool,
) -> DefinitionLock {
    let db = service.database();
    lock.tests = rows;
    lock.results_key = Some(seal_results(suite_key(db, item), &lock.tests));
    // Oracles are recorded with the differential rows that used them; a suite the
    // pre-flight stopped used none.
    lock.oracles = if lock.tests.is_empty() {
        Vec::new()
    } else {
        oracle_rows(db, item)
    };
    if let Some(spec) = spec_file(db, item) {
        lock.spec.hashes.test = trellis_db::test_hash(db, spec);
    }
    lock.toolchain = toolchain();
    // A result change withdraws an earlier acceptance (accepted only when green).
    if lock.accepted && !green {
        lock.accepted = false;
    }
    lock
}

/// A suite's rows as the lock records them.
pub(crate) fn recorded_rows(outcome: &SuiteOutcome) -> Vec<TestRow> {
    outcome
        .rows
        .iter()
        .map(|row| TestRow {
            name: row.name.clone(),
            tier: match row.tier {
                suite::Tier::Expect => Tier::Expect,
                suite::Tier::Property => Tier::Property,
                suite::Tier::Differential => Tier::Differential,
                suite::Tier::Cram => Tier::Cram,
            },
            mode: match row.mode {
                suite::Mode::Sandboxed => Mode::Sandboxed,
                suite::Mode::Real => Mode::Real,
            },
            result: match row.result {
                RowResult::Pass => TestResult::Pass,
                RowResult::Fail => TestResult::Fail,
                RowResult::Xfail => TestResult::Xfail,
                RowResult::Xpass => TestResult::Xpass,
                RowResult::Error => TestResult::Error,
            },
        })
        .collect()
}

/// A green suite's report, its rows taken from the shared cache.
fn cached_result(def: &str, rows: &[TestRow]) -> SuiteResult {
    SuiteResult {
        def: def.to_owned(),
        green: true,
        rows: rows
            .iter()
            .map(|row| SuiteRow {
                name: row.name.clone(),
                tier: row.tier.word().to_owned(),
                mode: row.mode.word().to_owned(),
                result: row.result.word().to_owned(),
            })
            .collect(),
        ..SuiteResult::default()
    }
}

fn suite_result(def: &str, outcome: &SuiteOutcome, preflight: Vec<Diagnostic>) -> SuiteResult {
    let rows = outcome
        .rows
        .iter()
        .map(|row| SuiteRow {
            name: row.name.clone(),
            tier: row.tier.as_str().to_owned(),
            mode: row.mode.as_str().to_owned(),
            result: row.result.as_str().to_owned(),
        })
        .collect();
    let failures = outcome.failures.iter().map(SuiteFailure::from).collect();
    SuiteResult {
        def: def.to_owned(),
        green: outcome.is_green(),
        not_derived: outcome
            .not_derived
            .iter()
            .map(|d| d.message.clone())
            .collect(),
        rows,
        failures,
        preflight,
    }
}
