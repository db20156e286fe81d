//! One test per rung of the status ladder, plus the precedence between rungs
//! when several causes hold at once (lock-schema §8.6).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod common;

use std::collections::BTreeMap;

use common::h;
use trellis_lock::*;

fn function(lock: Lock) -> DefinitionLock {
    match lock {
        Lock::Function(lock) => lock,
        other => panic!("not a function lock: {other:?}"),
    }
}

/// Exactly the hashes the lock recorded: the lock is current.
fn current_for(lock: &DefinitionLock) -> CurrentHashes {
    let lowering = lock.lowering.as_ref();
    let mut edges = BTreeMap::new();
    let mut decisions = BTreeMap::new();
    if let Some(lowering) = lowering {
        for edge in lowering.calls.iter().chain(&lowering.private_helpers) {
            edges.insert(edge.name.clone(), edge.hash);
        }
        for edge in &lowering.decisions.applied {
            decisions.insert((edge.scope, edge.label.clone()), edge.hash);
        }
    }
    CurrentHashes {
        spec: lock.spec.hashes,
        soil_present: lowering.is_some(),
        soil_hash: lowering.map(|l| l.soil_hash),
        edges,
        decisions,
        project_scope_hash: lowering.map_or(h("project scope"), |l| l.decisions.project_scope_hash),
        module_scope_hash: lowering.map_or(h("module scope"), |l| l.decisions.module_scope_hash),
        oracles: lock
            .oracles
            .iter()
            .map(|o| (o.source.clone(), o.hash))
            .collect(),
        spec_problems: Vec::new(),
        check_problems: Vec::new(),
        suite_key: common::median_suite_key(),
        open_holes: Vec::new(),
        rebound_names: Vec::new(),
        edge_notes: BTreeMap::new(),
    }
}

/// The rung name, its reason and its fixing command, as `trellis status` shows them.
fn show(status: &Status) -> String {
    format!(
        "{} — {} — {}",
        status.name(),
        status.reason(),
        status
            .fixing_command("csvstats/median")
            .unwrap_or_else(|| "-".to_owned())
    )
}

fn median() -> DefinitionLock {
    function(common::median())
}

/// Seals the lock's rows as a run under the fixture's suite key would.
fn reseal(lock: &mut DefinitionLock) {
    lock.results_key = Some(seal_results(common::median_suite_key(), &lock.tests));
}

#[test]
fn accepted() {
    let lock = median();
    assert_eq!(
        show(&status(&current_for(&lock), Some(&lock))),
        "accepted — green and accepted — -"
    );
}

#[test]
fn green() {
    let mut lock = median();
    lock.accepted = false;
    assert_eq!(
        show(&status(&current_for(&lock), Some(&lock))),
        "green — all checks and tests pass — -"
    );
}

#[test]
fn not_lowered_without_soil() {
    let lock = function(common::mean());
    let current = current_for(&lock);
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "not-lowered — no Soil has been lowered for this spec yet — trellis lower csvstats/median"
    );
    assert_eq!(status(&current, None).name(), "not-lowered");
}

#[test]
fn not_lowered_with_hand_written_soil() {
    let lock = function(common::mean());
    let mut current = current_for(&lock);
    current.soil_present = true;
    current.soil_hash = Some(h("hand-written soil"));
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "not-lowered — a .soil file exists but no lowering is recorded for it — trellis adopt csvstats/median"
    );
}

/// Issue 43: a spec that does not check outranks a missing lowering — `lower`,
/// `adopt` and `test` all refuse it, so the row says so instead of
/// prescribing one of them.
#[test]
fn an_invalid_spec_outranks_a_missing_lowering() {
    let lock = function(common::mean());
    let mut current = current_for(&lock);
    current.spec_problems =
        vec!["a function spec needs a test block (tr-missing-test-block)".to_owned()];
    for soil in [false, true] {
        current.soil_present = soil;
        assert_eq!(
            show(&status(&current, Some(&lock))),
            "spec-invalid — the spec does not check: a function spec needs a test block (tr-missing-test-block) — fix the spec (trellis check csvstats/median shows where)"
        );
        assert_eq!(status(&current, None).name(), "spec-invalid");
    }
}

/// A hand-written `.soil` that does not check cannot be adopted: the row says
/// the check fails, not `adopt`.
#[test]
fn an_unlowered_soil_that_does_not_check_fails_its_check() {
    let lock = function(common::mean());
    let mut current = current_for(&lock);
    current.soil_present = true;
    current.soil_hash = Some(h("hand-written soil"));
    current.check_problems = vec!["unknown name `x` (unknown-name)".to_owned()];
    assert_eq!(
        show(&status(&current, None)),
        "check-failing — the Soil does not check: unknown name `x` (unknown-name) — fix the Soil (trellis check csvstats/median shows where), then trellis adopt csvstats/median"
    );
    current.check_problems.clear();
    current.soil_hash = None;
    assert_eq!(status(&current, Some(&lock)).name(), "check-failing");
}

/// A partial lowering whose holes are filled on disk: the Soil changed.
#[test]
fn a_partial_lowering_filled_on_disk_is_a_soil_change() {
    let lock = function(common::parse_row_partial());
    let mut current = current_for(&lock);
    current.soil_hash = Some(h("the holes filled"));
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "tests-stale — recorded results are stale: the Soil changed since the partial lowering was recorded: the holes it left open (quoted, escape) are filled on disk — trellis adopt csvstats/median && trellis test csvstats/median"
    );
    current.open_holes = vec!["escape".to_owned()];
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "partial — the lowering left typed holes open: escape — trellis lower csvstats/median (by hand: fill the holes, then trellis adopt csvstats/median)"
    );
}

/// A body whose bytes are the same but whose names resolve elsewhere says so.
#[test]
fn a_name_that_resolves_elsewhere_is_not_a_body_change() {
    let lock = median();
    let mut current = current_for(&lock);
    current.soil_hash = Some(h("reverse is a root definition now"));
    current.rebound_names =
        vec!["`reverse` now names csvstats::reverse, not the builtin".to_owned()];
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "tests-stale — recorded results are stale: the Soil body is unchanged, but `reverse` now names csvstats::reverse, not the builtin — trellis adopt csvstats/median && trellis test csvstats/median"
    );
}

#[test]
fn a_present_soil_without_a_hash_fails_its_check() {
    let lock = function(common::median());
    let mut current = current_for(&lock);
    current.soil_hash = None;
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "check-failing — the Soil does not check: the .soil file holds no equation for this definition — fix the Soil (trellis check csvstats/median shows where), then trellis adopt csvstats/median"
    );
    current.check_problems = vec!["csvstats/median.soil:1:13: expected an expression".to_owned()];
    let failing = status(&current, Some(&lock));
    assert_eq!(failing.name(), "check-failing");
    assert!(failing.reason().contains("median.soil:1:13"));
}

#[test]
fn spec_changed() {
    let lock = median();
    let mut current = current_for(&lock);
    current.spec.formal = h("edited signature");
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "spec-changed — the signature, clauses or another formal block changed since the lowering — trellis lower csvstats/median (by hand: bring the Soil in line, then trellis adopt csvstats/median)"
    );
}

#[test]
fn partial() {
    let lock = function(common::parse_row_partial());
    assert_eq!(
        show(&status(&current_for(&lock), Some(&lock))),
        "partial — the lowering left typed holes open: quoted, escape — trellis lower csvstats/median (by hand: fill the holes, then trellis adopt csvstats/median)"
    );
}

#[test]
fn callee_changed() {
    let lock = median();
    let mut current = current_for(&lock);
    current.edges.insert("sort".to_owned(), h("sort, edited"));
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "callee-changed — a callee or private helper changed since the lowering was checked: `sort` — trellis adopt csvstats/median && trellis test csvstats/median"
    );
}

#[test]
fn tests_stale() {
    let lock = median();
    let mut current = current_for(&lock);
    current.spec.test = h("edited test block");
    current.soil_hash = Some(h("edited body"));
    current
        .oracles
        .insert(common::MEDIAN_REFERENCE.to_owned(), h("edited reference"));
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "tests-stale — recorded results are stale: the test blocks changed; the Soil body changed; oracle `python: reference/stats.py::median` changed — trellis adopt csvstats/median && trellis test csvstats/median"
    );
}

#[test]
fn tests_never_run_are_stale() {
    let mut lock = median();
    lock.tests.clear();
    lock.oracles.clear();
    lock.results_key = None;
    lock.accepted = false;
    assert_eq!(
        status(&current_for(&lock), Some(&lock)),
        Status::TestsStale {
            causes: vec![StaleCause::NeverRun]
        }
    );
}

#[test]
fn failing() {
    let mut lock = median();
    lock.accepted = false;
    lock.tests[1].result = TestResult::Fail;
    lock.tests[4].result = TestResult::Xpass;
    reseal(&mut lock);
    assert_eq!(
        show(&status(&current_for(&lock), Some(&lock))),
        "failing — not green: basics#2, derived:requires:non_empty — trellis lower csvstats/median (or fix the spec; by hand: fix the Soil, then trellis adopt csvstats/median && trellis test csvstats/median)"
    );
}

#[test]
fn failing_checks() {
    let mut lock = median();
    lock.accepted = false;
    if let Some(checks) = &mut lock.checks {
        checks.row = Verdict::Error;
    }
    assert_eq!(
        status(&current_for(&lock), Some(&lock)),
        Status::Failing {
            failures: vec!["checks".to_owned()]
        }
    );
}

#[test]
fn decision_flagged_by_an_edited_entry() {
    let lock = median();
    let mut current = current_for(&lock);
    current
        .decisions
        .insert((Scope::Project, "floats".to_owned()), h("floats, reworded"));
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "decision-flagged — the lowering relied on decisions that moved: decision `floats` changed or was removed — trellis decisions editorial floats"
    );
}

/// A label the lowering cites from its module is named with the module:
/// `decisions editorial` refuses a label several scopes hold unless told which.
#[test]
fn a_module_decision_flag_names_its_module() {
    let mut lock = median();
    let lowering = lock.lowering.as_mut().expect("lowered");
    for edge in &mut lowering.decisions.applied {
        edge.scope = Scope::Module;
    }
    let mut current = current_for(&lock);
    let label = lock.lowering.as_ref().expect("lowered").decisions.applied[0]
        .label
        .clone();
    current
        .decisions
        .insert((Scope::Module, label.clone()), h("reworded"));
    let flagged = status(&current, Some(&lock));
    assert_eq!(
        flagged.fixing_command("csvstats::median").as_deref(),
        Some(format!("trellis decisions editorial {label} --module csvstats").as_str())
    );
}

#[test]
fn a_new_entry_flags_the_scope_once_not_each_definition() {
    let lock = median();
    let mut current = current_for(&lock);
    current.module_scope_hash = h("csvstats scope with one more label");
    assert_eq!(status(&current, Some(&lock)).name(), "accepted");
    let record = DecisionsRecord {
        scope_hash: h("csvstats scope"),
        entries: Default::default(),
    };
    assert_eq!(
        scope_status(
            Scope::Module,
            current.module_scope_hash,
            &["new-rule".to_owned()],
            Some(&record)
        ),
        Status::DecisionFlagged {
            labels: vec!["new-rule".to_owned()],
            scopes: vec![Scope::Module],
            module_labels: Vec::new(),
        }
    );
    assert_eq!(
        scope_status(Scope::Module, h("csvstats scope"), &[], Some(&record)).name(),
        "green"
    );
}

#[test]
fn review_suggested() {
    let lock = median();
    let mut current = current_for(&lock);
    current.spec.prose = h("edited prose");
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "review-suggested — only prose changed; review that the Soil still matches it — trellis review csvstats/median"
    );
}

/// With every cause present at once, each rung wins over all rungs after it.
#[test]
fn precedence_follows_the_ladder() {
    let mut lock = median();
    lock.accepted = false;
    lock.tests[0].result = TestResult::Fail;
    reseal(&mut lock);
    let mut current = current_for(&lock);
    current.spec.prose = h("edited prose");
    current.module_scope_hash = h("new label");
    let mut seen = vec![status(&current, Some(&lock)).name()];
    current.spec.test = h("edited tests");
    seen.push(status(&current, Some(&lock)).name());
    current.edges.insert("len".to_owned(), h("len, edited"));
    seen.push(status(&current, Some(&lock)).name());
    if let Some(checks) = &mut lock.checks {
        checks.holes.push("gap".to_owned());
    }
    lock.tests.clear();
    lock.oracles.clear();
    lock.results_key = None;
    seen.push(status(&current, Some(&lock)).name());
    current.check_problems = vec!["a type error".to_owned()];
    seen.push(status(&current, Some(&lock)).name());
    current.spec.formal = h("edited signature");
    seen.push(status(&current, Some(&lock)).name());
    current.soil_present = false;
    current.soil_hash = None;
    seen.push(status(&current, Some(&lock)).name());
    current.spec_problems = vec!["an undeclared tag".to_owned()];
    seen.push(status(&current, Some(&lock)).name());
    seen.reverse();
    assert_eq!(
        seen,
        [
            "spec-invalid",
            "not-lowered",
            "spec-changed",
            "check-failing",
            "partial",
            "callee-changed",
            "tests-stale",
            "failing"
        ]
    );
}

#[test]
fn decision_flags_outrank_prose_review() {
    let lock = median();
    let mut current = current_for(&lock);
    current.spec.prose = h("edited prose");
    current
        .decisions
        .insert((Scope::Project, "floats".to_owned()), h("floats, reworded"));
    assert_eq!(status(&current, Some(&lock)).name(), "decision-flagged");
}

#[test]
fn spec_invalid_comes_before_everything_recorded() {
    let lock = median();
    let mut current = current_for(&lock);
    current.spec_problems = vec!["tag `sorting` is not declared (tr-undeclared-tag)".to_owned()];
    current.spec.formal = h("edited signature");
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "spec-invalid — the spec does not check: tag `sorting` is not declared (tr-undeclared-tag) — fix the spec (trellis check csvstats/median shows where)"
    );
}

#[test]
fn check_failing_comes_before_callee_and_test_rungs() {
    let lock = median();
    let mut current = current_for(&lock);
    current.check_problems =
        vec!["effect `Panic` is not declared (effect-not-declared)".to_owned()];
    current.edges.insert("sort".to_owned(), h("edited sort"));
    current.spec.test = h("edited tests");
    assert_eq!(
        show(&status(&current, Some(&lock))),
        "check-failing — the Soil does not check: effect `Panic` is not declared (effect-not-declared) — fix the Soil (trellis check csvstats/median shows where), then trellis adopt csvstats/median"
    );
}

#[test]
fn a_moved_suite_key_makes_results_stale() {
    let lock = median();
    let mut current = current_for(&lock);
    current.suite_key = h("sorted changed under a property");
    assert_eq!(
        status(&current, Some(&lock)),
        Status::TestsStale {
            causes: vec![StaleCause::InputsChanged]
        }
    );
}

#[test]
fn trimmed_rows_break_the_seal() {
    let mut lock = median();
    lock.tests.retain(|row| !row.name.starts_with("derived:"));
    assert_eq!(
        status(&current_for(&lock), Some(&lock)),
        Status::TestsStale {
            causes: vec![StaleCause::InputsChanged]
        }
    );
}

#[test]
fn unsealed_rows_are_stale() {
    let mut lock = median();
    lock.results_key = None;
    assert_eq!(
        status(&current_for(&lock), Some(&lock)),
        Status::TestsStale {
            causes: vec![StaleCause::Unsealed]
        }
    );
}

#[test]
fn an_edge_the_body_no_longer_has_is_not_a_callee_change() {
    let lock = median();
    let mut current = current_for(&lock);
    current.edges.remove("_halfway");
    current.soil_hash = Some(h("median without its helper"));
    assert_eq!(
        status(&current, Some(&lock)),
        Status::TestsStale {
            causes: vec![StaleCause::SoilChanged]
        }
    );
}
