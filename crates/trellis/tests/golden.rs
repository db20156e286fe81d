//! Goldens of `trellis status` and `trellis check` over a copy of the checked-in
//! examples, in both forms, through the daemon and in-process.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use expect_test::expect_file;
use support::Root;

#[test]
fn status_json_over_the_examples() {
    let root = Root::examples_with_daemon();
    let daemon = root.run(&["status", "--json"]).ok();
    let local = root.run(&["--no-daemon", "status", "--json"]).ok();
    assert_eq!(daemon.stdout, local.stdout);
    let pretty = serde_json::to_string_pretty(&daemon.json()).expect("pretty JSON") + "\n";
    expect_file!["../../../test-data/trellis/golden/status.json"].assert_eq(&pretty);
}

/// The default table shows the rows that need work and a summary counting every
/// row; `--all` shows every row.
#[test]
fn human_status_over_the_examples() {
    let root = Root::examples_with_daemon();
    let daemon = root.run(&["status"]).ok();
    let local = root.run(&["--no-daemon", "status"]).ok();
    assert_eq!(daemon.stdout, local.stdout);
    expect_file!["../../../test-data/trellis/golden/status.txt"].assert_eq(&daemon.stdout);
    let all = root.run(&["status", "--all"]).ok();
    expect_file!["../../../test-data/trellis/golden/status-all.txt"].assert_eq(&all.stdout);
}

/// `trellis check` shows each open hole with its goal, place and names in scope
/// (the examples' `inventory::reorder_plan` is a draft with one), in both forms.
#[test]
fn check_over_the_examples() {
    let root = Root::examples_with_daemon();
    let daemon = root.run(&["check"]).ok();
    let local = root.run(&["--no-daemon", "check"]).ok();
    assert_eq!(daemon.stdout, local.stdout);
    expect_file!["../../../test-data/trellis/golden/check.txt"].assert_eq(&daemon.stdout);
    let json = root.run(&["check", "--json"]).ok();
    let pretty = serde_json::to_string_pretty(&json.json()).expect("pretty JSON") + "\n";
    expect_file!["../../../test-data/trellis/golden/check.json"].assert_eq(&pretty);
}
