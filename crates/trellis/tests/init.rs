//! `trellis init` end to end: the root it makes checks, tests and is green
//! through the daemon, as a newcomer's first commands would find it; it never
//! overwrites a root; and `toolchain update` gives a hand-written `soil.toml`
//! the pin it lacks.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use support::Root;

#[test]
fn init_makes_a_root_that_checks_tests_and_is_green() {
    let root = Root::from_files(&[
        ("notes.md".into(), "mine\n".into()),
        (".gitignore".into(), "target/\n".into()),
    ]);
    let init = root.run(&["init"]).ok();
    assert!(
        init.stdout.contains("hello::greet: 4 rows, all green"),
        "{init:?}"
    );
    for file in [
        "soil.toml",
        "_project.tr",
        "hello/_module.tr",
        "hello/greet.tr",
        "hello/greet.soil",
        "hello/greet.lock",
        "hello/_module.lock",
        "_project.lock",
    ] {
        assert!(root.path(file).is_file(), "{file} is missing: {init:?}");
    }
    assert_eq!(root.read("notes.md"), "mine\n");
    let ignored = root.read(".gitignore");
    assert!(ignored.starts_with("target/\n"), "{ignored}");
    for line in [".trellis/", "soil.lock", "*.question.json", "f.log"] {
        assert!(ignored.lines().any(|have| have == line), "{ignored}");
    }

    let root = root.start_daemon();
    let check = root.run(&["check"]).ok();
    assert!(check.stdout.contains("no problems"), "{check:?}");
    let test = root.run(&["test"]).ok();
    assert!(test.stdout.contains("1 already up to date"), "{test:?}");
    let test = root.run(&["test", "--json"]).ok().json();
    assert_eq!(test["ran"], serde_json::json!([]), "{test}");
    assert_eq!(test["skipped"][0]["def"], "hello::greet", "{test}");
    let status = root.status(true);
    let rows = status["definitions"].as_array().expect("rows");
    assert!(!rows.is_empty(), "{status}");
    for row in rows {
        assert_eq!(row["status"], "green", "{status}");
    }
    assert!(
        status["problems"].as_array().is_none_or(Vec::is_empty),
        "{status}"
    );
    let human = root.run(&["status"]).ok();
    assert!(
        human.stdout.contains("1 of 1 definitions green"),
        "{human:?}"
    );

    // A second init refuses, and writes nothing.
    let spec = root.read("hello/greet.tr");
    let again = root.run(&["init"]);
    assert_eq!(again.code, Some(1), "{again:?}");
    assert!(
        again.stderr.contains("error[config-root-exists]"),
        "{again:?}"
    );
    assert_eq!(root.read("hello/greet.tr"), spec);
}

#[test]
fn init_creates_the_directory_it_is_given_and_names_the_project_after_it() {
    let base = Root::from_files(&[("notes.md".into(), "mine\n".into())]);
    base.run(&["init", "new/word-count"]).ok();
    let project = base.path("new/word-count");
    let spec = std::fs::read_to_string(project.join("_project.tr")).expect("_project.tr");
    assert!(spec.starts_with("---\nname: word-count\n---\n"), "{spec}");
    let status = support::Run::from(
        base.command(&["--no-daemon", "status", "--json"])
            .env("TRELLIS_ROOT", &project)
            .output()
            .expect("run trellis"),
    )
    .ok();
    assert_eq!(
        support::rows_by_name(&status.json())["hello::greet"],
        "green",
        "{status:?}"
    );
    // A file init would write is never overwritten, soil.toml or not.
    let other = Root::from_files(&[("hello/greet.tr".into(), "mine\n".into())]);
    let refused = other.run(&["init"]);
    assert_eq!(refused.code, Some(1), "{refused:?}");
    assert!(refused.stderr.contains("hello/greet.tr"), "{refused:?}");
    assert!(!other.path("soil.toml").exists());
}

/// A hand-written `soil.toml` without `[toolchain]`: `check` says how to fix
/// it, and `toolchain update` adds the pin (it used to answer "(already)").
#[test]
fn toolchain_update_adds_a_missing_pin() {
    let root = Root::examples();
    let config = root.read("soil.toml");
    let start = config.find("[toolchain]").expect("a pin");
    let end = start + config[start..].find("\n\n").expect("a blank line after it") + 2;
    let unpinned = format!("{}{}", &config[..start], &config[end..]);
    root.write("soil.toml", &unpinned);
    let check = root.run(&["--no-daemon", "check"]);
    assert_eq!(check.code, Some(1), "{check:?}");
    assert!(check.stderr.contains("error[config-invalid]"), "{check:?}");
    assert!(
        check
            .stderr
            .contains("`trellis toolchain update` writes it"),
        "{check:?}"
    );
    let update = root.run(&["--no-daemon", "toolchain", "update"]).ok();
    assert!(!update.stdout.contains("(already)"), "{update:?}");
    let pinned = root.read("soil.toml");
    assert!(pinned.starts_with(&unpinned), "{pinned}");
    assert!(pinned.contains("\n[toolchain]\ntrellis = "), "{pinned}");
    let check = root.run(&["--no-daemon", "check"]).ok();
    assert!(check.stdout.contains("no problems"), "{check:?}");
    let update = root.run(&["--no-daemon", "toolchain", "update"]).ok();
    assert!(update.stdout.contains("(already)"), "{update:?}");
}
