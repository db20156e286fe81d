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

/// At scale the default table shows at most ten rows of each status that needs
/// work and counts the rest; the summary still counts every row, and `--all`
/// and `--json` show them all.
#[test]
fn human_status_summarizes_many_rows_of_one_status() {
    let root = Root::examples();
    let spec = root.read("csvstats/mean.tr");
    for n in 0..13 {
        let name = format!("mean_{n:02}");
        root.write(
            &format!("csvstats/{name}.tr"),
            // A valid spec of its own (its signature and cases name it), so
            // each row is `not-lowered` and not `spec-invalid`.
            &spec
                .replace("name: mean", &format!("name: {name}"))
                .replace("# mean", &format!("# {name}"))
                .replace("mean : ", &format!("{name} : "))
                .replace("mean([", &format!("{name}(["))
                .replace("implies mean (", &format!("implies {name} (")),
        );
    }
    let summary = root.run(&["status"]).ok();
    expect_file!["../../../test-data/trellis/golden/status-summarized.txt"]
        .assert_eq(&summary.stdout);
    let all = root.run(&["status", "--all"]).ok();
    let json = root.run(&["status", "--json"]).ok().json();
    let not_lowered = |text: &str| {
        text.lines()
            .filter(|line| line.contains("not-lowered"))
            .count()
    };
    assert_eq!(not_lowered(&all.stdout), 14);
    let rows = json["definitions"].as_array().expect("rows");
    assert_eq!(
        rows.iter()
            .filter(|row| row["status"] == "not-lowered")
            .count(),
        14
    );
}
