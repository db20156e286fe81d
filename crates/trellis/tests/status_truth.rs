//! `status` tells the truth: one regression test per way it was found to report
//! `green` (or a lock to record a fact) that a fresh run refutes. Each test edits a
//! private copy of `examples/`, runs the commands status prescribes, and checks
//! both the status and that `status --verify` (a from-scratch recomputation with
//! every trusted suite re-run) agrees with it.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::collections::BTreeMap;

use support::{Root, Run};

/// `trellis --no-daemon ARGS` in the root.
fn t(root: &Root, args: &[&str]) -> Run {
    let mut all = vec!["--no-daemon"];
    all.extend_from_slice(args);
    root.run(&all)
}

fn statuses(root: &Root) -> BTreeMap<String, String> {
    root.statuses(false)
}

fn status_of(root: &Root, name: &str) -> String {
    statuses(root)
        .remove(name)
        .unwrap_or_else(|| panic!("no status row for {name}"))
}

/// The memoized status and a from-scratch recomputation agree.
#[track_caller]
fn assert_verified(root: &Root) {
    let run = t(root, &["status", "--verify"]);
    assert_eq!(run.code, Some(0), "status --verify disagrees: {run:?}");
}

fn row_reason(root: &Root, name: &str) -> String {
    let status = root.status(false);
    status["definitions"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|row| row["name"] == name)
        .and_then(|row| row["reason"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn the_examples_start_green_and_verified() {
    let root = Root::examples();
    let not_green: Vec<(String, String)> = statuses(&root)
        .into_iter()
        .filter(|(_, status)| status != "green")
        .collect();
    assert_eq!(
        not_green,
        [
            ("csvstats::mean".to_owned(), "not-lowered".to_owned()),
            ("inventory::reorder_plan".to_owned(), "partial".to_owned()),
        ]
    );
    assert_verified(&root);
    let second = t(&root, &["test"]).ok();
    assert!(
        second.stdout.contains("ran 0 suites"),
        "a second test with nothing changed runs no suite: {second:?}"
    );
}

// 1. A callee's signature edit breaks callers.
#[test]
fn a_callee_signature_edit_is_never_green_for_its_callers() {
    let root = Root::examples();
    root.edit(
        "csvstats/sort.tr",
        "sort : (xs : List F64) -> List F64",
        "sort : (xs : List F64) ->{Panic} List F64",
    );
    let after = statuses(&root);
    assert_eq!(after["csvstats::sort"], "spec-changed");
    // median declares Panic and still checks; its results ran the old sort.
    for name in ["csvstats::median", "csvstats::sort_by", "csvstats::sorted"] {
        assert_eq!(after[name], "tests-stale", "{name}");
    }
    assert_verified(&root);
}

#[test]
fn a_helper_signature_that_breaks_a_pure_caller_fails_its_check() {
    let root = Root::examples();
    root.edit(
        "csvstats/_private.soil",
        "_merge_sort : (xs : List a) -> List a",
        "_merge_sort : (xs : List a) ->{Panic} List a",
    );
    assert_eq!(status_of(&root, "csvstats::sort_by"), "check-failing");
    assert!(
        row_reason(&root, "csvstats::sort_by").contains("effect-not-declared"),
        "{}",
        row_reason(&root, "csvstats::sort_by")
    );
    let test = t(&root, &["test", "csvstats::sort_by"]);
    assert_eq!(
        test.code,
        Some(1),
        "test refuses a body that does not check: {test:?}"
    );
    assert_verified(&root);
}

// 2. A contract edit keeps old results.
#[test]
fn a_new_ensures_clause_is_run_after_adopt() {
    let root = Root::examples();
    root.edit(
        "csvstats/median.tr",
        "bounded: result >= minimum xs and result <= maximum xs",
        "bounded: result >= minimum xs and result <= maximum xs\nwrong: result > maximum xs",
    );
    assert_eq!(status_of(&root, "csvstats::median"), "spec-changed");
    t(&root, &["adopt", "csvstats::median"]).ok();
    assert_eq!(status_of(&root, "csvstats::median"), "tests-stale");
    let run = t(&root, &["test", "csvstats::median"]);
    assert!(run.stdout.contains("ran 1 suite"), "{run:?}");
    assert!(root.read("csvstats/median.lock").contains(
        r#"{"name":"derived:ensures:wrong","tier":"property","mode":"sandboxed","result":"fail"}"#
    ));
    assert_eq!(status_of(&root, "csvstats::median"), "failing");
    assert_verified(&root);
}

#[test]
fn an_unsatisfiable_requires_is_recorded_as_stopped_not_green() {
    let root = Root::examples();
    root.edit(
        "csvstats/median.tr",
        "finite: all_finite xs\n",
        "finite: all_finite xs\nnever: len xs < 0\n",
    );
    t(&root, &["adopt", "csvstats::median"]).ok();
    let run = t(&root, &["test", "csvstats::median"]);
    assert!(
        run.stdout.contains("preflight-vacuous-requires")
            || run.stderr.contains("preflight-vacuous-requires"),
        "{run:?}"
    );
    assert_eq!(status_of(&root, "csvstats::median"), "failing");
    assert!(row_reason(&root, "csvstats::median").contains("pre-flight"));
    let again = t(&root, &["test", "csvstats::median"]);
    assert!(
        again.stdout.contains("ran 0 suites"),
        "the stop is recorded: {again:?}"
    );
    assert_verified(&root);
}

#[test]
fn a_signature_change_the_body_does_not_meet_cannot_be_adopted() {
    let root = Root::examples();
    root.edit(
        "csvstats/count_of.tr",
        "count_of : (xs : List a) -> (x : a) -> I64",
        "count_of : (xs : List I64) -> I64",
    );
    let adopt = t(&root, &["adopt", "csvstats::count_of"]);
    assert_eq!(adopt.code, Some(1), "{adopt:?}");
    assert_ne!(status_of(&root, "csvstats::count_of"), "green");
    assert_verified(&root);
}

// 3. A malformed test case is dropped.
#[test]
fn a_malformed_case_makes_the_spec_invalid_and_test_refuses() {
    let root = Root::examples();
    root.edit(
        "csvstats/median.tr",
        "median([5.0]) -> 5.0",
        "median([5.0,]) -> 5.0",
    );
    assert_eq!(status_of(&root, "csvstats::median"), "spec-invalid");
    let run = t(&root, &["test", "csvstats::median"]);
    assert_eq!(
        run.code,
        Some(1),
        "test must refuse a spec that does not check: {run:?}"
    );
    assert!(!run.stdout.contains("all green"), "{run:?}");
    assert_eq!(status_of(&root, "csvstats::median"), "spec-invalid");
    assert_verified(&root);
}

// 4. Definitions a spec mentions are tracked.
#[test]
fn breaking_a_predicate_stales_everything_whose_tests_run_it() {
    let root = Root::examples();
    root.edit("csvstats/sorted.soil", "a <= b", "a >= b");
    t(&root, &["adopt", "csvstats::sorted"]).ok();
    let after = statuses(&root);
    for name in ["csvstats::sort", "csvstats::median", "inventory::low_stock"] {
        assert_eq!(after[name], "tests-stale", "{name}");
    }
    t(&root, &["test"]);
    let after = statuses(&root);
    for name in ["csvstats::sort", "csvstats::median", "csvstats::sorted"] {
        assert_eq!(after[name], "failing", "{name}");
    }
    assert_verified(&root);
}

#[test]
fn breaking_a_private_helper_stales_a_property_that_reaches_it() {
    let root = Root::examples();
    let private = root.read("csvstats/_private.soil");
    assert!(
        private.contains("_merge "),
        "the fixture has a _merge helper"
    );
    // Reverse the merge's comparison: sort then sorts descending.
    let broken = private.replacen("<=", ">", 1);
    assert_ne!(broken, private);
    root.write("csvstats/_private.soil", &broken);
    assert_eq!(status_of(&root, "csvstats::sorted"), "tests-stale");
    assert_verified(&root);
}

// 5. A callee's contract change reaches its callers.
#[test]
fn a_callee_contract_change_stales_its_callers() {
    let root = Root::examples();
    root.edit(
        "csvstats/sort.tr",
        "permutation: is_permutation xs result",
        "permutation: is_permutation xs result\nlonger: len result > len xs",
    );
    t(&root, &["adopt", "csvstats::sort"]).ok();
    assert_eq!(status_of(&root, "csvstats::median"), "tests-stale");
    t(&root, &["test"]);
    assert_eq!(status_of(&root, "csvstats::median"), "failing");
    assert_verified(&root);
}

// 6. A new definition shadowing a builtin.
#[test]
fn a_definition_shadowing_a_builtin_stales_properties_that_use_the_name() {
    let root = Root::examples();
    root.write(
        "csvstats/reverse.tr",
        "---\nname: reverse\ntags: [sorting]\n---\n\n# reverse\n\nDrops the first element.\n\n```soil-sig\nreverse : (xs : List F64) -> List F64\n```\n\n```test basics\nreverse([1.0, 2.0]) -> [2.0]\n```\n",
    );
    root.write("csvstats/reverse.soil", "reverse xs = drop 1 xs\n");
    assert_eq!(status_of(&root, "csvstats::sort"), "tests-stale");
    assert_verified(&root);
}

// 7. Type edits reach users that do not name the type.
#[test]
fn a_type_edit_stales_every_suite_and_a_rename_fails_the_check() {
    let root = Root::examples();
    root.edit(
        "inventory/StockError.tr",
        "  | DuplicateSku Utf8\n",
        "  | DuplicateSku Utf8\n  | Frozen Utf8\n",
    );
    let after = statuses(&root);
    assert_eq!(after["inventory::StockError"], "spec-changed");
    // stock_value never names StockError; its suite still ran over the old
    // environment.
    assert_eq!(after["inventory::stock_value"], "tests-stale");
    assert_verified(&root);

    // A new field: the recorded test values no longer decode.
    let item = root.read("inventory/Item.tr");
    let widened = Root::examples();
    widened.write(
        "inventory/Item.tr",
        &item.replacen("on_hand : I64", "on_hand : I64,\n  shelf : Utf8", 1),
    );
    assert_eq!(
        status_of(&widened, "inventory::stock_value"),
        "spec-invalid"
    );
    assert_verified(&widened);

    let renamed = Root::examples();
    renamed.write(
        "inventory/Item.tr",
        &item.replacen("on_hand : I64", "quantity : I64", 1),
    );
    // Its test values name the old field (spec-invalid), or its body does
    // (check-failing): never green.
    for name in ["inventory::stock_value", "inventory::low_stock"] {
        let status = status_of(&renamed, name);
        assert!(
            status == "spec-invalid" || status == "check-failing",
            "{name}: {status}"
        );
    }
    assert_verified(&renamed);
}

// 8. Cram calls are tracked.
#[test]
fn a_definition_a_cram_transcript_calls_is_tracked() {
    let root = Root::examples();
    let spec = root.read("csvstats/read_file.tr");
    let cram_end = spec.rfind("\n```").expect("the cram block closes");
    let extended = format!(
        "{}\n$ trellis call csvstats::median '[[3.0, 1.0, 2.0]]'\n2.0{}",
        &spec[..cram_end],
        &spec[cram_end..]
    );
    root.write("csvstats/read_file.tr", &extended);
    t(&root, &["test", "csvstats::read_file"]);
    assert_eq!(status_of(&root, "csvstats::read_file"), "green");
    root.edit("csvstats/median.soil", "at s (n / 2)\n", "at s 0\n");
    t(&root, &["adopt", "csvstats::median"]).ok();
    assert_eq!(status_of(&root, "csvstats::read_file"), "tests-stale");
    assert_verified(&root);
}

// 9. Reference imports are tracked.
#[test]
fn a_file_the_reference_imports_is_tracked() {
    let root = Root::examples();
    root.import_a_reference_helper();
    t(&root, &["test", "csvstats::median"]);
    assert_eq!(status_of(&root, "csvstats::median"), "green");
    root.write("reference/refhelp.py", "def half(a, b):\n    return 0.0\n");
    assert_eq!(status_of(&root, "csvstats::median"), "tests-stale");
    let second = t(&root, &["test", "csvstats::median"]);
    assert!(second.stdout.contains("ran 1 suite"), "{second:?}");
    assert_verified(&root);
}

// 10. A lock missing rows is not green.
#[test]
fn a_lock_with_rows_deleted_or_hashes_pasted_is_stale() {
    let root = Root::examples();
    let mut lock: serde_json::Value =
        serde_json::from_str(&root.read("csvstats/sort.lock")).expect("sort.lock is JSON");
    let rows = lock["tests"].as_array_mut().expect("rows");
    let before = rows.len();
    rows.retain(|row| {
        !row["name"]
            .as_str()
            .unwrap_or_default()
            .starts_with("derived:")
    });
    assert!(rows.len() < before);
    root.write(
        "csvstats/sort.lock",
        &serde_json::to_string_pretty(&lock).expect("JSON"),
    );
    assert_eq!(status_of(&root, "csvstats::sort"), "tests-stale");
    let run = t(&root, &["test", "csvstats::sort"]);
    assert!(run.stdout.contains("ran 1 suite"), "{run:?}");
    assert_eq!(status_of(&root, "csvstats::sort"), "green");
    assert_verified(&root);

    // A new body whose hash is recorded without running anything (as pasting the
    // new soil_hash into the lock would): the rows still describe the old body.
    root.edit(
        "csvstats/sort.soil",
        "_merge_sort xs",
        "_merge_sort (_merge_sort xs)",
    );
    t(&root, &["adopt", "csvstats::sort"]).ok();
    assert_eq!(status_of(&root, "csvstats::sort"), "tests-stale");
    assert_verified(&root);
}

// 11. Decision reliance is never lost.
#[test]
fn adopt_keeps_citations_and_never_clears_a_flag() {
    let root = Root::examples();
    assert!(
        root.read("csvstats/median.lock")
            .contains(r#""label":"total-order""#)
    );
    t(&root, &["adopt", "csvstats::median"]).ok();
    assert!(
        root.read("csvstats/median.lock")
            .contains(r#""label":"total-order""#),
        "adopt without --cite keeps the citations"
    );
    root.edit(
        "_project.tr",
        "compare and sort by the total order",
        "compare and sort by the F64 total order",
    );
    assert_eq!(status_of(&root, "csvstats::median"), "decision-flagged");
    t(&root, &["adopt", "csvstats::median"]).ok();
    t(&root, &["adopt"]).ok();
    assert_eq!(
        status_of(&root, "csvstats::median"),
        "decision-flagged",
        "adopt never re-stamps a reliance"
    );
    assert_verified(&root);
}

#[test]
fn editorial_clears_exactly_its_own_label() {
    let root = Root::examples();
    let module = root.read("csvstats/_module.tr");
    let decisions = module.rfind("\n```").expect("the decisions block closes");
    root.write(
        "csvstats/_module.tr",
        &format!(
            "{}\n- **new-rule** — a rule added after the lowerings{}",
            &module[..decisions],
            &module[decisions..]
        ),
    );
    root.edit(
        "csvstats/_module.tr",
        "BadCell carries the cell's index",
        "BadCell carries the index",
    );
    assert_eq!(status_of(&root, "csvstats"), "decision-flagged");
    t(&root, &["adopt"]).ok();
    assert_eq!(
        status_of(&root, "csvstats"),
        "decision-flagged",
        "adopt of all keeps the flag"
    );
    t(&root, &["decisions", "editorial", "cell-errors"]).ok();
    assert_eq!(
        status_of(&root, "csvstats"),
        "decision-flagged",
        "editorial of another label keeps the new entry flagged"
    );
    assert!(row_reason(&root, "csvstats").contains("new-rule"));
    t(&root, &["decisions", "editorial", "new-rule"]).ok();
    assert_eq!(status_of(&root, "csvstats"), "green");
    assert_verified(&root);
}

// 12. Invalid specs are never green.
#[test]
fn an_undeclared_tag_makes_specs_invalid_and_adopt_test_review_refuse() {
    let root = Root::examples();
    let config = root.read("soil.toml");
    let without: String = config
        .lines()
        .filter(|line| !line.starts_with("sorting"))
        .map(|line| format!("{line}\n"))
        .collect();
    root.write("soil.toml", &without);
    let after = statuses(&root);
    for name in ["csvstats::sort", "csvstats::sort_by", "csvstats::sorted"] {
        assert_eq!(after[name], "spec-invalid", "{name}");
    }
    assert_eq!(t(&root, &["adopt", "csvstats::sort"]).code, Some(1));
    assert_eq!(t(&root, &["test", "csvstats::sort"]).code, Some(1));
    assert_verified(&root);

    let tagged = Root::examples();
    tagged.edit(
        "csvstats/median.tr",
        "tags: [stats]",
        "tags: [stats, bogus]",
    );
    t(&tagged, &["review", "csvstats::median"]);
    assert_eq!(status_of(&tagged, "csvstats::median"), "spec-invalid");
    assert_verified(&tagged);
}

// 13. Exports are enforced.
#[test]
fn an_unexported_callee_is_refused_and_the_module_row_moves() {
    let root = Root::examples();
    root.edit(
        "csvstats/_module.tr",
        "median, mean, sort, sort_by, rank\n",
        "median, mean, sort, rank\n",
    );
    let check = t(&root, &["check"]);
    assert!(
        check.stdout.contains("unexported-name") || check.stderr.contains("unexported-name"),
        "{check:?}"
    );
    let after = statuses(&root);
    assert_ne!(after["csvstats"], "green");
    assert_eq!(after["inventory::low_stock"], "check-failing");
    assert_verified(&root);
}

// 14. Types have truthful rows and locks.
#[test]
fn a_broken_type_is_invalid_and_never_stamped_ok() {
    let root = Root::examples();
    root.edit("csvstats/Row.tr", "cells : List F64", "cells : List Flt");
    assert_eq!(status_of(&root, "csvstats::Row"), "spec-invalid");
    let adopt = t(&root, &["adopt"]);
    assert_eq!(adopt.code, Some(1), "{adopt:?}");
    assert!(
        !root.read("csvstats/Row.lock").contains("cells : List Flt"),
        "the broken type is not stamped"
    );
    assert!(
        root.read("csvstats/Row.lock")
            .contains(r#"{"name":"derived:invariant:positive_line","tier":"property","mode":"sandboxed","result":"error"}"#)
    );
    assert!(row_reason(&Root::examples(), "csvstats::Row").contains("not tested in v1"));
    assert_verified(&root);
}

// 15. Reasons name only what the body still uses.
#[test]
fn a_body_that_stops_using_a_helper_is_not_blamed_on_it() {
    let root = Root::examples();
    root.edit(
        "csvstats/median.soil",
        "_halfway (at s (n / 2 - 1)) (at s (n / 2))",
        "(at s (n / 2 - 1) + at s (n / 2)) / 2.0",
    );
    root.edit("csvstats/_private.soil", "sum / 2.0", "sum * 0.5");
    assert_eq!(status_of(&root, "csvstats::median"), "tests-stale");
    assert!(!row_reason(&root, "csvstats::median").contains("_halfway"));
    assert_verified(&root);
}

// 16. A `.soil` that is there but does not parse, or no longer defines its
// function, was reported as `not-lowered` ("no Soil has been lowered"): the
// lowering is recorded and the file exists, so it is the check that fails.
#[test]
fn a_present_soil_that_does_not_parse_fails_its_check() {
    let root = Root::examples();
    root.edit("csvstats/median.soil", "median xs =", "median xs = =");
    assert_eq!(status_of(&root, "csvstats::median"), "check-failing");
    let reason = row_reason(&root, "csvstats::median");
    assert!(
        reason.contains("csvstats/median.soil: expected an expression")
            && reason.contains("(unexpected-token)"),
        "the reason points at the parse error: {reason}"
    );
    assert_verified(&root);

    let root = Root::examples();
    root.edit("csvstats/median.soil", "median xs =", "middle xs =");
    assert_eq!(status_of(&root, "csvstats::median"), "check-failing");
    assert_verified(&root);

    let root = Root::examples();
    std::fs::remove_file(root.path("csvstats/median.soil")).expect("remove");
    assert_eq!(status_of(&root, "csvstats::median"), "not-lowered");
    assert!(row_reason(&root, "csvstats::median").contains("no Soil"));
}

// Issue 40, lie 1: a new clause was judged by the sample drawn before it existed.

/// The `bounded` clause of `csvstats/median.tr`, which the tests below extend.
const BOUNDED: &str = "bounded: result >= minimum xs and result <= maximum xs";

/// `csvstats::median` with one more ensures clause, adopted and tested; its lock.
fn median_with_clause(root: &Root, clause: &str) -> String {
    root.edit(
        "csvstats/median.tr",
        BOUNDED,
        &format!("{BOUNDED}\n{clause}"),
    );
    t(root, &["adopt", "csvstats::median"]).ok();
    t(root, &["test", "csvstats::median"]);
    root.read("csvstats/median.lock")
}

fn row_result<'a>(lock: &'a str, row: &str) -> &'a str {
    let at = lock
        .find(&format!("{{\"name\":\"{row}\""))
        .unwrap_or_else(|| panic!("no row {row} in {lock}"));
    let rest = &lock[at..];
    let result = rest.find("\"result\":\"").expect("a result") + 10;
    &rest[result..result + rest[result..].find('"').expect("closed")]
}

/// `len xs != 11` is false of every 11-element list. The sample seeded by the
/// test hash alone — drawn before the clause existed — holds no such list, so
/// the clause was recorded `pass` and stayed green under `status --verify`.
/// The seed now covers the formal hash too: the clause is judged on a sample
/// drawn after it was written, which does hold one.
#[test]
fn a_new_ensures_clause_is_judged_on_a_sample_drawn_after_it() {
    let root = Root::examples();
    let lock = median_with_clause(&root, "not_eleven: len xs != 11 or result > 1.0e300");
    assert_eq!(row_result(&lock, "derived:ensures:not_eleven"), "fail");
    assert_eq!(status_of(&root, "csvstats::median"), "failing");
    assert_verified(&root);
}

/// An expect case that fails on a clause's runtime guard while the clause's
/// derived row passes was recorded green-and-red at once. The derived row now
/// judges the spec's own examples first.
#[test]
fn an_expect_case_failing_on_a_clause_fails_its_derived_row() {
    let root = Root::examples();
    root.edit(
        "csvstats/median.tr",
        "median([5.0]) -> 5.0",
        "median([5.0]) -> 5.0\nmedian([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]) -> 6.5",
    );
    let lock = median_with_clause(&root, "not_twelve: len xs != 12 or result > 1.0e300");
    let twelve = lock
        .lines()
        .filter_map(|line| line.split("{\"name\":\"").nth(1))
        .find(|rest| rest.starts_with("basics#") && rest.contains("\"fail\""))
        .expect("the 12-element expect case fails on the guard");
    assert!(twelve.contains("expect"), "{twelve}");
    assert_eq!(row_result(&lock, "derived:ensures:not_twelve"), "fail");
    let run = t(&root, &["test", "csvstats::median"]);
    assert!(run.stdout.contains("ran 0 suites"), "recorded: {run:?}");
    assert_verified(&root);
}

/// A property whose calls fail on the definition's own guard refutes the
/// clause even where the derived row's sample never reaches it.
#[test]
fn a_property_failing_on_a_clause_fails_its_derived_row() {
    let root = Root::examples();
    let spec = root.read("csvstats/median.tr");
    let property_end = spec.find("```property order_free").expect("order_free");
    root.write(
        "csvstats/median.tr",
        &format!(
            "{}```property dozen\nforall (x : F64). (finite x) implies median [x, x, x, x, x, x, x, x, x, x, x, x] == x\n```\n\n{}",
            &spec[..property_end],
            &spec[property_end..]
        ),
    );
    let lock = median_with_clause(&root, "not_twelve: len xs != 12 or result > 1.0e300");
    assert_eq!(row_result(&lock, "dozen"), "fail");
    assert_eq!(row_result(&lock, "derived:ensures:not_twelve"), "fail");
    assert_verified(&root);
}

/// What green promises for random rows is the recorded sample; `--reseed N`
/// looks past it. `len xs != 12` holds on the sample its own seed draws (no
/// 12-element list), and a fresh one falsifies it.
#[test]
fn status_verify_reseed_reports_the_rows_a_fresh_sample_flips() {
    let root = Root::examples();
    let lock = median_with_clause(&root, "notlen: len xs != 12 or result > 1.0e300");
    assert_eq!(row_result(&lock, "derived:ensures:notlen"), "pass");
    assert_eq!(status_of(&root, "csvstats::median"), "green");
    assert_verified(&root);
    let reseeded = t(&root, &["status", "--verify", "--reseed", "8"]);
    assert_eq!(
        reseeded.code,
        Some(1),
        "a flip fails the audit: {reseeded:?}"
    );
    assert!(
        reseeded.stdout.contains(
            "csvstats::median: `derived:ensures:notlen` is recorded pass, a fresh sample (seed 0x"
        ) && reseeded.stdout.contains(
            "makes it fail: falsified by [0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]"
        ),
        "{reseeded:?}"
    );
    let json = t(&root, &["status", "--verify", "--reseed", "8", "--json"]).json();
    let flips = json["flips"].as_array().expect("flips");
    assert!(
        flips
            .iter()
            .any(|flip| flip["row"] == "derived:ensures:notlen" && flip["fresh"] == "fail"),
        "{json}"
    );
    // The examples as they stand: nothing flips under fresh samples.
    let clean = t(&Root::examples(), &["status", "--verify", "--reseed", "2"]);
    assert_eq!(clean.code, Some(0), "{clean:?}");
}

// Issue 40, lie 2: a reference oracle read a file the key did not cover.

/// Makes `reference/stats.py`'s median scale its answer by the number in
/// `reference/scale.txt`, a data file it reads from beside itself.
fn reference_reads_a_data_file(root: &Root, scale: &str) {
    root.write("reference/scale.txt", scale);
    let stats = root.read("reference/stats.py");
    let stats = stats.replacen(
        "import math\n",
        "import math\nimport os\n\nwith open(os.path.join(os.path.dirname(__file__), \"scale.txt\")) as f:\n    SCALE = float(f.read())\n",
        1,
    );
    let stats = stats.replacen(
        "        return s[n // 2]\n",
        "        return s[n // 2] * SCALE\n",
        1,
    );
    let stats = stats.replacen(
        "    return _halfway(s[n // 2 - 1], s[n // 2])\n",
        "    return _halfway(s[n // 2 - 1], s[n // 2]) * SCALE\n",
        1,
    );
    assert_eq!(stats.matches("SCALE").count(), 3, "{stats}");
    root.write("reference/stats.py", &stats);
}

#[test]
fn a_data_file_the_reference_reads_is_keyed() {
    let root = Root::examples();
    reference_reads_a_data_file(&root, "1.0\n");
    t(&root, &["test", "csvstats::median"]).ok();
    assert_eq!(status_of(&root, "csvstats::median"), "green");
    root.write("reference/scale.txt", "2.0\n");
    assert_eq!(status_of(&root, "csvstats::median"), "tests-stale");
    assert!(
        row_reason(&root, "csvstats::median")
            .contains("a file under a Python reference's directory"),
        "{}",
        row_reason(&root, "csvstats::median")
    );
    assert_verified(&root);
    t(&root, &["test", "csvstats::median"]);
    assert_eq!(
        status_of(&root, "csvstats::median"),
        "failing",
        "the oracle now answers twice the median"
    );
    // Any file there counts, whatever its bytes: a binary table, one in a
    // subdirectory; a hidden file (an editor's swap file) does not.
    root.write("reference/scale.txt", "1.0\n");
    t(&root, &["test", "csvstats::median"]).ok();
    assert_eq!(status_of(&root, "csvstats::median"), "green");
    root.write("reference/.scale.txt.swp", "swap");
    assert_eq!(status_of(&root, "csvstats::median"), "green");
    std::fs::create_dir_all(root.path("reference/tables")).expect("mkdir");
    std::fs::write(root.path("reference/tables/t.bin"), [0xff, 0x00, 0xfe]).expect("write");
    assert_eq!(status_of(&root, "csvstats::median"), "tests-stale");
    let check = t(&root, &["check"]);
    assert_eq!(check.code, Some(0), "binary data is no problem: {check:?}");
    assert_verified(&root);
}

#[test]
fn the_daemon_sees_a_data_file_the_reference_reads() {
    let root = Root::examples();
    reference_reads_a_data_file(&root, "1.0\n");
    t(&root, &["test", "csvstats::median"]).ok();
    let root = root.start_daemon();
    assert_eq!(root.statuses(true)["csvstats::median"], "green");
    root.write("reference/scale.txt", "3.0\n");
    assert_eq!(root.statuses(true)["csvstats::median"], "tests-stale");
    root.write("reference/scale.txt", "1.0\n");
    assert_eq!(root.statuses(true)["csvstats::median"], "green");
    std::fs::write(root.path("reference/new.csv"), "a,b\n").expect("write");
    assert_eq!(root.statuses(true)["csvstats::median"], "tests-stale");
    std::fs::remove_file(root.path("reference/new.csv")).expect("remove");
    assert_eq!(root.statuses(true)["csvstats::median"], "green");
    assert_eq!(root.statuses(true), root.statuses(false));
}

// Issue 40 (and 43): prescriptions that always work, reasons that name what changed.

/// A row's field from `status --json`, whatever its exit code (a root with an
/// unreadable lock has problems, and exits 1).
fn row_field(root: &Root, name: &str, field: &str) -> String {
    let status = t(root, &["status", "--json"]).json();
    status["definitions"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|row| row["name"] == name)
        .and_then(|row| row[field].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn row_fix(root: &Root, name: &str) -> String {
    row_field(root, name, "fix")
}

/// Runs a prescribed `trellis …` command line (`a && b` runs both in turn).
fn run_fix(root: &Root, fix: &str) -> Vec<Run> {
    fix.split(" && ")
        .map(|command| {
            let args: Vec<&str> = command.split_whitespace().skip(1).collect();
            t(root, &args)
        })
        .collect()
}

/// A definition without a test block read `not-lowered → trellis adopt X`,
/// and that adopt exited 1 with `tr-missing-test-block`: the spec error now
/// outranks the missing lowering, with its diagnostic.
#[test]
fn a_spec_without_a_test_block_says_so_instead_of_prescribing_adopt() {
    let root = Root::examples();
    root.write(
        "csvstats/reverse.tr",
        "---\nname: reverse\ntags: [sorting]\n---\n\n# reverse\n\nDrops the first element.\n\n```soil-sig\nreverse : (xs : List F64) -> List F64\n```\n",
    );
    root.write("csvstats/reverse.soil", "reverse xs = drop 1 xs\n");
    assert_eq!(status_of(&root, "csvstats::reverse"), "spec-invalid");
    assert!(
        row_reason(&root, "csvstats::reverse").contains("tr-missing-test-block"),
        "{}",
        row_reason(&root, "csvstats::reverse")
    );
    let fix = row_fix(&root, "csvstats::reverse");
    assert!(fix.starts_with("fix the spec"), "{fix}");
    // A hand-written `.soil` that does not check is not prescribed `adopt`.
    let unchecked = Root::examples();
    unchecked.write("csvstats/mean.soil", "mean xs = nonsense xs\n");
    assert_eq!(status_of(&unchecked, "csvstats::mean"), "check-failing");
    assert!(row_reason(&unchecked, "csvstats::mean").contains("unknown-name"));
    assert_verified(&unchecked);
}

/// A private helper of a callee moved: the caller's reason names the helper
/// and says the callee's own body is unchanged.
#[test]
fn a_callee_changed_reason_names_the_helper_that_moved_below_it() {
    let root = Root::examples();
    root.edit(
        "csvstats/_private.soil",
        "      runs\n",
        "      runs ++ []\n",
    );
    assert_eq!(status_of(&root, "csvstats::median"), "callee-changed");
    let reason = row_reason(&root, "csvstats::median");
    assert!(
        reason.contains(
            "`sort`, whose own body is unchanged: below it, `_merge_sort`, a private helper whose body changed"
        ),
        "{reason}"
    );
    for run in run_fix(&root, &row_fix(&root, "csvstats::median")) {
        assert_eq!(run.code, Some(0), "{run:?}");
    }
    assert_ne!(status_of(&root, "csvstats::median"), "callee-changed");
    assert_verified(&root);
}

/// A builtin's name now a root definition's moves the hash of a `.soil`
/// whose bytes are the same: the reason says so, not "the body changed".
#[test]
fn a_builtin_name_now_resolving_to_a_definition_is_named() {
    let root = Root::examples();
    root.write(
        "csvstats/len.tr",
        "---\nname: len\n---\n\n# len\n\nThe length.\n\n```soil-sig\nlen : (xs : List a) -> I64\n```\n\n```property counts\nforall (xs : List I64). len xs >= 0\n```\n",
    );
    root.write("csvstats/len.soil", "len xs = fold (\\n _ -> n + 1) 0 xs\n");
    assert_eq!(status_of(&root, "csvstats::non_empty"), "tests-stale");
    let reason = row_reason(&root, "csvstats::non_empty");
    assert!(
        reason.contains(
            "the Soil body is unchanged, but `len` now names csvstats::len, not the builtin"
        ),
        "{reason}"
    );
    assert!(!reason.contains("the Soil body changed"), "{reason}");
    let fix = row_fix(&root, "csvstats::non_empty");
    for run in run_fix(&root, &fix) {
        assert_eq!(run.code, Some(0), "{fix}: {run:?}");
    }
    assert_verified(&root);
}

/// A partial lowering whose holes are filled on disk read "holes are open".
#[test]
fn a_partial_row_filled_on_disk_says_the_soil_changed() {
    let root = Root::examples();
    root.edit(
        "inventory/reorder_plan.soil",
        "?cases_to_order",
        "target - item.on_hand",
    );
    assert_eq!(status_of(&root, "inventory::reorder_plan"), "tests-stale");
    let reason = row_reason(&root, "inventory::reorder_plan");
    assert!(reason.contains("are filled on disk"), "{reason}");
    let fix = row_fix(&root, "inventory::reorder_plan");
    assert_eq!(
        fix,
        "trellis adopt inventory::reorder_plan && trellis test inventory::reorder_plan"
    );
    for run in run_fix(&root, &fix) {
        assert!(!run.stderr.contains("holes are never tested"), "{run:?}");
    }
    // This filling is wrong (it orders units, not cases): the rows say so.
    assert_eq!(status_of(&root, "inventory::reorder_plan"), "failing");
    assert_verified(&root);
}

/// Type, module and project rows prescribe `trellis adopt NAME`, which stamps
/// that lock alone; a bare `trellis adopt` would stamp the whole root.
#[test]
fn entry_rows_prescribe_adopt_by_name_and_it_stamps_that_lock_alone() {
    let root = Root::examples();
    let row_spec = root.read("csvstats/Row.tr");
    root.write(
        "csvstats/Row.tr",
        &row_spec.replacen("cells : List F64", "cells : List F64,\n  note : Utf8", 1),
    );
    std::fs::remove_file(root.path("csvstats/_module.lock")).expect("remove");
    // A hand-written body nobody adopted: a bare adopt would record it too.
    root.edit(
        "csvstats/median.soil",
        "at s (n / 2)\n",
        "at s (n / 2) + 0.0\n",
    );
    assert_eq!(
        row_fix(&root, "csvstats::Row"),
        "trellis adopt csvstats::Row"
    );
    assert_eq!(row_fix(&root, "csvstats"), "trellis adopt csvstats");
    let median_lock = root.read("csvstats/median.lock");
    for name in ["csvstats::Row", "csvstats"] {
        let fix = row_fix(&root, name);
        for run in run_fix(&root, &fix) {
            assert_eq!(run.code, Some(0), "{fix}: {run:?}");
        }
    }
    let after = statuses(&root);
    assert_eq!(after["csvstats::Row"], "green");
    assert_eq!(after["csvstats"], "green");
    assert_eq!(
        root.read("csvstats/median.lock"),
        median_lock,
        "adopting an entry by name leaves the lowerings alone"
    );
    let unknown = t(&root, &["adopt", "csvstats::Nope"]);
    assert_eq!(unknown.code, Some(1), "{unknown:?}");
}

/// `adopt` says when it withdraws an acceptance.
#[test]
fn adopt_says_when_it_resets_accepted() {
    let root = Root::examples();
    root.edit(
        "csvstats/median.lock",
        "\"accepted\": false",
        "\"accepted\": true",
    );
    assert_eq!(status_of(&root, "csvstats::median"), "accepted");
    root.edit(
        "csvstats/median.soil",
        "at s (n / 2)\n",
        "at s (n / 2) + 0.0\n",
    );
    let adopt = t(&root, &["adopt", "csvstats::median"]).ok();
    assert!(
        adopt
            .stdout
            .contains("csvstats::median: `accepted` reset to false"),
        "{adopt:?}"
    );
    assert!(
        root.read("csvstats/median.lock")
            .contains("\"accepted\": false")
    );
}

/// A flag on a label the lowering cites from its module prescribes the
/// module: `decisions editorial` refuses a label several scopes could hold.
#[test]
fn a_module_decision_flag_prescribes_a_command_that_clears_it() {
    let root = Root::examples();
    t(
        &root,
        &[
            "adopt",
            "csvstats::parse_row",
            "--cite",
            "module:cell-errors",
        ],
    )
    .ok();
    root.edit(
        "csvstats/_module.tr",
        "BadCell carries the cell's index",
        "BadCell carries the index",
    );
    assert_eq!(status_of(&root, "csvstats::parse_row"), "decision-flagged");
    let fix = row_fix(&root, "csvstats::parse_row");
    assert_eq!(
        fix,
        "trellis decisions editorial cell-errors --module csvstats"
    );
    for run in run_fix(&root, &fix) {
        assert_eq!(run.code, Some(0), "{fix}: {run:?}");
    }
    assert_ne!(status_of(&root, "csvstats::parse_row"), "decision-flagged");
    assert_verified(&root);
}

/// An unreadable lock prescribed `trellis adopt DEF`, refused while the spec
/// did not check (found by the prescriptions walk, seed 12).
#[test]
fn an_unreadable_lock_of_an_invalid_spec_prescribes_fixing_the_spec() {
    let root = Root::examples();
    let lock = root.read("inventory/stock_value.lock");
    root.write(
        "inventory/stock_value.lock",
        &format!("{lock}}} hand-edited\n"),
    );
    assert_eq!(
        row_fix(&root, "inventory::stock_value"),
        "trellis adopt inventory::stock_value"
    );
    let item = root.read("inventory/Item.tr");
    root.write(
        "inventory/Item.tr",
        &item.replacen("on_hand : I64", "on_hand : I64,\n  shelf : Utf8", 1),
    );
    assert_eq!(
        row_field(&root, "inventory::stock_value", "status"),
        "lock-unreadable"
    );
    let fix = row_fix(&root, "inventory::stock_value");
    assert!(fix.starts_with("fix the spec"), "{fix}");
    let reason = row_field(&root, "inventory::stock_value", "reason");
    assert!(reason.contains("; and the spec does not check"), "{reason}");
}
