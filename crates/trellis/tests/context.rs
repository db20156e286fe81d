//! `trellis context` and `trellis spec` end to end: the bundle lands in
//! `.trellis/context/<module>/<name>/`, wiped per invocation, or in an empty
//! `--out` resolved against the caller's directory; the human view and `--json`
//! list packed and dropped files with sizes; bad input is a clear error.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use support::{Root, TempDir};

#[test]
fn context_writes_the_bundle_through_the_daemon_and_wipes_it_each_time() {
    let root = Root::examples_with_daemon();
    let dir = root.path(".trellis/context/csvstats/median");
    let run = root
        .run(&["context", "csvstats::median", "--budget", "100000"])
        .ok();
    assert!(run.stdout.contains("packed   reference.py"), "{run:?}");
    for file in [
        "bundle.json",
        "spec.md",
        "decisions.md",
        "tests.json",
        "previous.soil",
        "module.md",
    ] {
        assert!(dir.join(file).is_file(), "{file} written");
    }
    assert_eq!(
        root.read("csvstats/median.tr"),
        root.read(".trellis/context/csvstats/median/spec.md")
    );
    // A starved bundle leaves nothing of the larger one behind.
    let run = root
        .run(&["context", "csvstats::median", "--budget", "1100", "--json"])
        .ok();
    let answer = run.json();
    assert!(
        answer["dropped"].as_array().is_some_and(|d| !d.is_empty()),
        "{run:?}"
    );
    assert!(!dir.join("module.md").exists());
    assert!(!dir.join("examples").exists());
    let manifest: serde_json::Value =
        serde_json::from_str(&root.read(".trellis/context/csvstats/median/bundle.json")).unwrap();
    assert_eq!(manifest["definition"], "csvstats/median");
    assert_eq!(manifest["budget"], 1100);
    assert_eq!(manifest["dropped"], answer["dropped"]);
}

#[test]
fn out_is_resolved_by_the_client_and_must_be_empty() {
    let root = Root::examples_with_daemon();
    let scratch = TempDir::new("context-out");
    let mut command = root.command(&[
        "context",
        "csvstats::mean",
        "--budget",
        "5000",
        "--out",
        "bundle",
    ]);
    command.current_dir(scratch.path());
    let output = command.output().expect("run trellis");
    assert!(output.status.success(), "{output:?}");
    assert!(
        scratch.path().join("bundle/spec.md").is_file(),
        "{output:?}"
    );
    assert!(
        !scratch.path().join("bundle/previous.soil").exists(),
        "mean is a first lowering"
    );
    let mut again = root.command(&[
        "context",
        "csvstats::mean",
        "--budget",
        "5000",
        "--out",
        "bundle",
    ]);
    again.current_dir(scratch.path());
    let output = again.output().expect("run trellis");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(stderr.contains("error[bundle-out-not-empty]"), "{stderr}");
}

#[test]
fn bad_context_requests_are_clear_errors() {
    let root = Root::examples();
    let unknown = root.run(&[
        "--no-daemon",
        "context",
        "csvstats::nope",
        "--budget",
        "100",
    ]);
    assert_eq!(unknown.code, Some(1), "{unknown:?}");
    assert!(
        unknown.stderr.contains("error[unknown-definition]"),
        "{unknown:?}"
    );
    let small = root.run(&[
        "--no-daemon",
        "context",
        "csvstats::median",
        "--budget",
        "10",
        "--json",
    ]);
    assert_eq!(small.code, Some(1), "{small:?}");
    assert_eq!(small.json()["errors"][0]["code"], "budget-too-small");
    let words = root.run(&["context", "csvstats::median", "--budget", "lots"]);
    assert_eq!(words.code, Some(2), "{words:?}");
    assert!(words.stderr.contains("whole number"), "{words:?}");
}

#[test]
fn spec_prints_a_section_from_the_binary() {
    let root = Root::examples();
    let run = root.run(&["spec", "soil-syntax-spec#9.1"]).ok();
    assert!(run.stdout.starts_with("### 9.1 "), "{run:?}");
    let unknown = root.run(&["spec", "soil-syntax-spec#99.9"]);
    assert_eq!(unknown.code, Some(1), "{unknown:?}");
    assert!(
        unknown.stderr.contains("error[unknown-spec-ref]"),
        "{unknown:?}"
    );
}

/// Re-running leaves exactly the bundle: a stray file goes, an edited file is
/// restored, unchanged files stay.
#[test]
fn the_default_directory_holds_exactly_the_bundle_after_each_run() {
    let root = Root::examples();
    let args = [
        "--no-daemon",
        "context",
        "csvstats::mean",
        "--budget",
        "4000",
    ];
    root.run(&args).ok();
    root.write(".trellis/context/csvstats/mean/stray.txt", "left over");
    std::fs::create_dir_all(root.path(".trellis/context/csvstats/mean/callees/extra")).unwrap();
    root.write(
        ".trellis/context/csvstats/mean/callees/extra/x.md",
        "left over",
    );
    root.write(".trellis/context/csvstats/mean/spec.md", "edited by hand");
    root.run(&args).ok();
    assert!(
        !root
            .path(".trellis/context/csvstats/mean/stray.txt")
            .exists()
    );
    assert!(
        !root
            .path(".trellis/context/csvstats/mean/callees/extra")
            .exists()
    );
    assert_eq!(
        root.read(".trellis/context/csvstats/mean/spec.md"),
        root.read("csvstats/mean.tr")
    );
}
