//! One test per row of the invalidation table (lock-schema §8.7): edit a file on
//! disk, ask `trellis status --json`, and check that exactly the expected rows
//! moved to the expected rungs.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use support::{Root, changed};

fn moved(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    list.iter()
        .map(|(n, a, b)| ((*n).to_owned(), (*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// A copy of the examples where every lowering without holes has passing
/// tests recorded, so each lower rung of the ladder can show.
fn green_examples() -> Root {
    let root = Root::examples_with_daemon();
    root.mark_tests_green();
    root
}

#[test]
fn the_green_baseline_has_every_lowered_definition_green() {
    let root = green_examples();
    let statuses = root.statuses(true);
    let not_green: Vec<_> = statuses.iter().filter(|(_, s)| *s != "green").collect();
    assert_eq!(
        not_green,
        vec![
            (&"csvstats::mean".to_owned(), &"not-lowered".to_owned()),
            (&"inventory::reorder_plan".to_owned(), &"partial".to_owned()),
        ]
    );
}

#[test]
fn prose_only_edit_suggests_review_and_review_settles_it() {
    // Both ways: through the daemon, and answered in-process.
    for daemon in [true, false] {
        let root = green_examples();
        let before = root.statuses(daemon);
        root.edit(
            "csvstats/median.tr",
            "The middle value",
            "The middle value (the 50th percentile)",
        );
        let after = root.status(daemon);
        assert_eq!(
            after,
            root.status(!daemon),
            "daemon and --no-daemon disagree"
        );
        assert_eq!(
            changed(&before, &support::rows_by_name(&after)),
            moved(&[("csvstats::median", "green", "review-suggested")])
        );
        let row = after["definitions"]
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["name"] == "csvstats::median")
            .cloned()
            .expect("median row");
        assert_eq!(row["fix"], "trellis review csvstats::median");

        let review: &[&str] = if daemon {
            &["review", "csvstats::median"]
        } else {
            &["--no-daemon", "review", "csvstats::median"]
        };
        root.run(review).ok();
        assert_eq!(changed(&before, &root.statuses(daemon)), vec![]);
        assert_eq!(changed(&before, &root.statuses(!daemon)), vec![]);
    }
}

#[test]
fn test_block_edit_makes_tests_stale() {
    let root = green_examples();
    let before = root.statuses(true);
    root.edit(
        "csvstats/median.tr",
        "median([3.0, 1.0, 2.0]) -> 2.0",
        "median([3.0, 1.0, 2.0]) -> 2.0\nmedian([5.0]) -> 5.0",
    );
    let after = root.statuses(true);
    assert_eq!(
        changed(&before, &after),
        moved(&[("csvstats::median", "green", "tests-stale")])
    );
    let json = root.status(true).to_string();
    assert!(
        json.contains("recorded results are stale: the test blocks changed"),
        "{json}"
    );
    let rows = |root: &Root| {
        root.read("csvstats/median.lock")
            .matches("\"name\":\"basics#")
            .count()
    };
    let recorded = rows(&root);
    root.run(&["test", "csvstats::median"]).ok();
    assert_eq!(rows(&root), recorded + 1, "the new case is recorded");
    assert_eq!(changed(&before, &root.statuses(true)), vec![]);
}

#[test]
fn signature_requires_and_ensures_edits_change_the_spec() {
    for (from, to) in [
        (
            "median : (xs : List F64) ->{Panic} F64",
            "median : (values : List F64) ->{Panic} F64",
        ),
        ("non_empty: non_empty xs", "non_empty: len xs > 0"),
        (
            "bounded: result >= minimum xs",
            "bounded: result >= minimum xs and true",
        ),
    ] {
        let root = green_examples();
        let before = root.statuses(true);
        let text = root.read("csvstats/median.tr");
        assert!(
            text.contains(from),
            "the median spec no longer holds `{from}`"
        );
        root.write("csvstats/median.tr", &text.replacen(from, to, 1));
        let after = root.statuses(true);
        assert_eq!(
            changed(&before, &after),
            moved(&[("csvstats::median", "green", "spec-changed")]),
            "after replacing `{from}`"
        );
    }
}

#[test]
fn soil_reformat_and_local_rename_change_nothing() {
    let root = green_examples();
    let before = root.statuses(true);
    let soil = root.read("csvstats/median.soil");
    let reformatted = soil
        .replace("let s = sort xs in", "let   s   =   sort   xs   in")
        .replace(
            "  if n % 2 == 1 then\n    at s (n / 2)",
            "  if n % 2 == 1 then at s (n / 2)",
        );
    assert_ne!(reformatted, soil);
    root.write("csvstats/median.soil", &reformatted);
    assert_eq!(changed(&before, &root.statuses(true)), vec![], "reformat");

    let renamed = soil
        .replace(" s ", " sorted_xs ")
        .replace(" s\n", " sorted_xs\n")
        .replace("let s =", "let sorted_xs =");
    assert!(
        renamed.contains("sorted_xs") && !renamed.contains(" s "),
        "{renamed}"
    );
    root.write("csvstats/median.soil", &renamed);
    assert_eq!(
        changed(&before, &root.statuses(true)),
        vec![],
        "local rename"
    );
}

#[test]
fn soil_body_change_makes_tests_stale() {
    // median has no callers among the examples, so only its own row moves.
    let root = green_examples();
    let before = root.statuses(true);
    root.edit(
        "csvstats/median.soil",
        "at s (n / 2)\n",
        "at s ((n - 1) / 2 + 1)\n",
    );
    let after = root.statuses(true);
    assert_eq!(
        changed(&before, &after),
        moved(&[("csvstats::median", "green", "tests-stale")])
    );
    let json = root.status(true).to_string();
    assert!(json.contains("the Soil body changed"), "{json}");
}

#[test]
fn callee_body_change_flags_the_caller() {
    let root = green_examples();
    let before = root.statuses(true);
    root.write(
        "csvstats/sort.soil",
        "sort xs = _merge_sort (_merge_sort xs)\n",
    );
    let after = root.statuses(true);
    assert_eq!(
        changed(&before, &after),
        moved(&[
            ("csvstats::median", "green", "callee-changed"),
            // Their properties call `sort`: their results ran it (lock-schema §5.4).
            ("csvstats::rank", "green", "tests-stale"),
            ("csvstats::sort", "green", "tests-stale"),
            ("csvstats::sort_by", "green", "tests-stale"),
            ("csvstats::sorted", "green", "tests-stale")
        ])
    );
}

/// One decision entry's text edit and the lowerings citing it.
struct DecisionEdit {
    file: &'static str,
    phrase: &'static str,
    label: &'static str,
    citers: &'static [&'static str],
    /// `--module` for `decisions editorial`, when the test passes one.
    module: Option<&'static str>,
}

const DECISION_EDITS: [DecisionEdit; 10] = [
    DecisionEdit {
        file: "_project.tr",
        phrase: "one NaN, sorting after +Infinity",
        label: "total-order",
        citers: &["csvstats::median", "csvstats::sort"],
        module: None,
    },
    DecisionEdit {
        file: "_project.tr",
        phrase: "money amounts are I64 counts of cents",
        label: "money-in-cents",
        citers: &["inventory::stock_value"],
        module: None,
    },
    DecisionEdit {
        file: "csvstats/_module.tr",
        phrase: "untrimmed, so a report",
        label: "cell-errors",
        citers: &["csvstats::parse_row"],
        module: Some("csvstats"),
    },
    DecisionEdit {
        file: "csvstats/_module.tr",
        phrase: "so every Row holds finite numbers",
        label: "finite-cells",
        citers: &["csvstats::parse_row"],
        module: None,
    },
    DecisionEdit {
        file: "csvstats/_module.tr",
        phrase: "files have no header row",
        label: "no-header",
        citers: &["csvstats::read_file"],
        module: None,
    },
    DecisionEdit {
        file: "csvstats/_module.tr",
        phrase: "a\n  row that differs is BadArity",
        label: "rectangular",
        citers: &["csvstats::read_file"],
        module: None,
    },
    DecisionEdit {
        file: "csvstats/_module.tr",
        phrase: "are skipped by read_file but still",
        label: "blank-lines",
        citers: &["csvstats::read_file"],
        module: None,
    },
    DecisionEdit {
        file: "inventory/_module.tr",
        phrase: "stock never goes negative",
        label: "no-overselling",
        citers: &["inventory::apply_movement"],
        module: Some("inventory"),
    },
    DecisionEdit {
        file: "inventory/_module.tr",
        phrase: "every item's\n  `sku` equals its key",
        label: "sku-keys",
        citers: &["inventory::apply_movement"],
        module: None,
    },
    DecisionEdit {
        file: "inventory/_module.tr",
        phrase: "stops at the first\n  movement that fails",
        label: "all-or-nothing",
        citers: &["inventory::apply_all"],
        module: None,
    },
];

#[test]
fn a_decision_entry_edit_flags_only_its_citers_until_declared_editorial() {
    for edit in &DECISION_EDITS {
        let root = green_examples();
        let before = root.statuses(true);
        root.edit(
            edit.file,
            edit.phrase,
            &format!("{} (reworded)", edit.phrase),
        );
        let after = root.statuses(true);
        let expected: Vec<(String, String, String)> = edit
            .citers
            .iter()
            .map(|c| {
                (
                    (*c).to_owned(),
                    "green".to_owned(),
                    "decision-flagged".to_owned(),
                )
            })
            .collect();
        assert_eq!(
            changed(&before, &after),
            expected,
            "after editing `{}`",
            edit.label
        );

        let mut args = vec!["decisions", "editorial", edit.label];
        args.extend(edit.module.iter().flat_map(|m| ["--module", *m]));
        root.run(&args).ok();
        assert_eq!(
            changed(&before, &root.statuses(true)),
            vec![],
            "after `decisions editorial {}`",
            edit.label
        );
    }
}

#[test]
fn a_new_decision_entry_flags_only_its_scope_once() {
    for (file, scope, anchor) in [
        ("inventory/_module.tr", "inventory", "- **whole-cases**"),
        ("_project.tr", "project", "- **money-in-cents**"),
    ] {
        let root = green_examples();
        let before = root.statuses(true);
        root.edit(
            file,
            anchor,
            &format!("- **fresh-rule** — a rule added after the lowerings\n{anchor}"),
        );
        let after = root.statuses(true);
        assert_eq!(
            changed(&before, &after),
            moved(&[(scope, "green", "decision-flagged")]),
            "{file}"
        );

        root.run(&["decisions", "editorial", "fresh-rule"]).ok();
        assert_eq!(
            changed(&before, &root.statuses(true)),
            vec![],
            "{file} after editorial"
        );
    }
}

#[test]
fn a_toolchain_pin_mismatch_refuses_until_updated() {
    let root = Root::examples_with_daemon();
    let pinned = root.read("soil.toml");
    root.edit("soil.toml", "trellis = \"0.1.0\"", "trellis = \"0.0.9\"");
    for args in [
        &["check"][..],
        &["adopt"],
        &["adopt", "csvstats::median"],
        &["test", "csvstats::median"],
        &["review", "csvstats::median"],
        &["decisions", "editorial", "total-order"],
        &["--no-daemon", "check"],
        &["--no-daemon", "adopt"],
    ] {
        let run = root.run(args);
        assert_eq!(run.code, Some(1), "{args:?}: {run:?}");
        assert!(
            run.stderr.contains("error[toolchain-mismatch]"),
            "{args:?}: {run:?}"
        );
        assert!(
            run.stderr.contains("trellis toolchain update"),
            "{args:?}: {run:?}"
        );
    }
    // The locks were not touched by the refused adopt.
    assert_eq!(
        root.read("csvstats/median.lock"),
        support::workspace_file("examples/csvstats/median.lock")
    );

    root.run(&["toolchain", "update"]).ok();
    assert_eq!(root.read("soil.toml"), pinned);
    root.run(&["check"]).ok();
}

#[test]
fn the_daemon_and_no_daemon_agree_on_every_edit() {
    let root = green_examples();
    assert_eq!(root.status(true), root.status(false));
    root.edit(
        "csvstats/median.tr",
        "The middle value",
        "The central value",
    );
    root.edit(
        "csvstats/sort.soil",
        "sort xs = _merge_sort xs",
        "sort xs = _merge_sort (_merge_sort xs)",
    );
    root.edit(
        "_project.tr",
        "one NaN, sorting after +Infinity",
        "one NaN, sorted after +Infinity",
    );
    let daemon = root.status(true);
    assert_eq!(daemon, root.status(false));
    let statuses = support::rows_by_name(&daemon);
    assert_eq!(statuses["csvstats::median"], "callee-changed");
    assert_eq!(statuses["csvstats::sort"], "tests-stale");
}

#[test]
fn a_private_helper_body_change_flags_each_owner() {
    let root = green_examples();
    let before = root.statuses(true);
    root.edit(
        "csvstats/_private.soil",
        "    sum / 2.0\n",
        "    sum * 0.5\n",
    );
    assert_eq!(
        changed(&before, &root.statuses(true)),
        moved(&[("csvstats::median", "green", "callee-changed")])
    );
    let json = root.status(true).to_string();
    assert!(
        json.contains(
            "a callee or private helper changed since the lowering was checked: `_halfway`, a private helper whose body changed"
        ),
        "{json}"
    );
}

#[test]
fn removing_a_cited_entry_flags_its_citers_and_the_scope() {
    let root = green_examples();
    let before = root.statuses(true);
    let text = root.read("inventory/_module.tr");
    let start = text
        .find("- **all-or-nothing**")
        .expect("the all-or-nothing entry");
    let end = text.find("- **whole-cases**").expect("the next entry");
    root.write(
        "inventory/_module.tr",
        &format!("{}{}", &text[..start], &text[end..]),
    );
    assert_eq!(
        changed(&before, &root.statuses(true)),
        moved(&[
            ("inventory", "green", "decision-flagged"),
            ("inventory::apply_all", "green", "decision-flagged"),
        ])
    );
}

/// The human `status` is a summary (design §7.13): the rows it shows say
/// what changed below a moved callee, as `--json` says of every row, through
/// the daemon after an edit whose rows climbed their ladders again, and in
/// process.
#[test]
fn a_summary_shows_what_changed_below_a_callee() {
    let root = green_examples();
    // Through the daemon, so the edit's rows are held and climbed again.
    root.statuses(true);
    root.edit("csvstats/finite.soil", "is_finite x", "is_finite (x + 0.0)");
    let reason = "`finite`, whose body (or a type it names) changed";
    // The summary first: a whole status explains every row it holds.
    for args in [&["status"][..], &["--no-daemon", "status"][..]] {
        let shown = root.run(args).stdout;
        assert!(
            (shown.lines()).any(|line| line.starts_with("csvstats::all_finite")
                && line.contains("callee-changed")
                && line.contains(reason)),
            "{args:?}: {shown}"
        );
    }
    let json = root.status(true).to_string();
    assert!(json.contains(reason), "{json}");
}

/// A summary asked again with no change between is the one made before (kept
/// by the daemon, design §7.5); one asked after an edit says what the edit
/// moved, and one asked after the edit is undone says what the first said.
#[test]
fn a_kept_summary_moves_with_every_edit() {
    let root = green_examples();
    let first = root.run(&["status"]).stdout;
    assert!(!first.contains("callee-changed"), "{first}");
    assert_eq!(root.run(&["status"]).stdout, first);
    root.edit("csvstats/finite.soil", "is_finite x", "is_finite (x + 0.0)");
    let edited = root.run(&["status"]).stdout;
    assert!(edited.contains("callee-changed"), "{edited}");
    assert_eq!(root.run(&["status"]).stdout, edited);
    root.edit("csvstats/finite.soil", "is_finite (x + 0.0)", "is_finite x");
    assert_eq!(root.run(&["status"]).stdout, first);
}
