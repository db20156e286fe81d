//! Bad input per command: each gives a clear error carrying a diagnostic code and
//! exit code 1 (usage errors exit 2), never a panic. `Run` itself fails the test
//! on any "panicked" in stderr.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use support::{Root, Run, TRELLIS, TempDir};

/// Exit code 1 and the diagnostic's code rendered. Failed requests render on
/// stderr, but `check` and `adopt` render the problems they found on stdout, so
/// both streams are searched.
#[track_caller]
fn assert_error(run: &Run, code: &str) {
    assert_eq!(run.code, Some(1), "{run:?}");
    let rendered = format!("{}{}", run.stdout, run.stderr);
    assert!(
        rendered.contains(&format!("error[{code}]")),
        "expected error[{code}]: {run:?}"
    );
}

#[test]
fn unknown_definitions_are_refused_by_every_command_naming_one() {
    let root = Root::examples_with_daemon();
    for daemon in [true, false] {
        for command in [&["review"][..], &["adopt"], &["test"]] {
            let mut args = if daemon { vec![] } else { vec!["--no-daemon"] };
            args.extend(command);
            args.push("csvstats::no_such_def");
            let run = root.run(&args);
            assert_error(&run, "unknown-definition");
            assert!(run.stderr.contains("csvstats::no_such_def"), "{run:?}");
        }
    }
    let call = root.run(&["call", "csvstats::no_such_def", "[]"]);
    assert_error(&call, "unknown-definition");
    let call = root.run(&["call", "csvstats::no_such_def", "[]", "--json"]);
    assert_eq!(call.code, Some(1), "{call:?}");
    assert_eq!(call.json()["errors"][0]["code"], "unknown-definition");
}

/// `check DEF` with a name that is not a definition must not report success.
#[test]
fn check_refuses_an_unknown_definition() {
    let root = Root::examples_with_daemon();
    for name in [
        "csvstats::no_such_def",
        "no_module::median",
        "median_without_module",
    ] {
        let run = root.run(&["check", name]);
        assert_error(&run, "unknown-definition");
    }
}

#[test]
fn malformed_citations_are_refused() {
    let root = Root::examples_with_daemon();
    let before = root.read("csvstats/median.lock");
    for cite in ["bogus", "project", "team:total-order", ":total-order"] {
        let run = root.run(&["adopt", "csvstats::median", "--cite", cite]);
        assert_error(&run, "rpc-invalid-params");
        assert!(
            run.stderr.contains("project:LABEL or module:LABEL"),
            "{run:?}"
        );
    }
    let run = root.run(&[
        "adopt",
        "csvstats::median",
        "--cite",
        "project:no-such-rule",
    ]);
    assert_error(&run, "unknown-decision");
    assert_eq!(
        root.read("csvstats/median.lock"),
        before,
        "a refused adopt wrote the lock"
    );
}

#[test]
fn unknown_decisions_are_refused() {
    let root = Root::examples_with_daemon();
    assert_error(
        &root.run(&["decisions", "editorial", "no-such-rule"]),
        "unknown-decision",
    );
    assert_error(
        &root.run(&[
            "decisions",
            "editorial",
            "cell-errors",
            "--module",
            "inventory",
        ]),
        "unknown-decision",
    );
}

#[test]
fn a_missing_root_is_a_config_error() {
    let empty = TempDir::new("noroot");
    let runtime = empty.path().join("run");
    std::fs::create_dir_all(&runtime).expect("runtime dir");
    for args in [
        &["status"][..],
        &["status", "--json"],
        &["check"],
        &["daemon", "status"],
        &["--no-daemon", "check"],
    ] {
        let output = std::process::Command::new(TRELLIS)
            .args(args)
            .current_dir(empty.path())
            .env_remove("TRELLIS_ROOT")
            .env("XDG_RUNTIME_DIR", &runtime)
            .output()
            .expect("run trellis");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        if args.contains(&"--json") {
            // Under --json the error is the document, on stdout.
            let document: serde_json::Value =
                serde_json::from_slice(&output.stdout).expect("a JSON document");
            assert_eq!(document["errors"][0]["code"], "config-no-root", "{args:?}");
        } else {
            assert!(
                stderr.contains("error[config-no-root]"),
                "{args:?}: {stderr}"
            );
        }
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let output = std::process::Command::new(TRELLIS)
        .arg("status")
        .current_dir(empty.path())
        .env("TRELLIS_ROOT", empty.path().join("missing"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .expect("run trellis");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("error[config-no-root]"));
}

#[test]
fn usage_errors_exit_2() {
    let root = Root::examples_with_daemon();
    for args in [
        &[][..],
        &["chek"],
        &["check", "a", "b"],
        &["status", "--bogus"],
        &["skill", "--json"],
        &["adopt", "--cite"],
        &["refresh", "--module", "m"],
        &["check", "--cite", "project:x"],
        &["review"],
        &["daemon", "restart"],
    ] {
        let run = root.run(args);
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert!(run.stderr.starts_with("trellis: "), "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
    }
}

#[test]
fn a_broken_config_or_spec_is_reported_with_its_location() {
    let root = Root::examples_with_daemon();
    let config = root.read("soil.toml");
    root.write("soil.toml", &format!("{config}garbage [[\n"));
    for args in [&["check"][..], &["--no-daemon", "check"]] {
        let run = root.run(args);
        assert_error(&run, "config-invalid");
        assert!(
            format!("{}{}", run.stdout, run.stderr).contains("--> soil.toml:"),
            "{run:?}"
        );
    }
    root.write("soil.toml", &config);

    root.write("csvstats/median.tr", "---\nname: median\nbogus: 1\n---\n");
    let run = root.run(&["check"]);
    assert_error(&run, "tr-unknown-frontmatter-key");
    assert!(run.stdout.contains("--> csvstats/median.tr:3:1"), "{run:?}");
}

#[test]
fn call_reports_bad_json_arguments() {
    let root = Root::examples_with_daemon();
    let run = root.run(&["call", "csvstats::median", "not json"]);
    assert_error(&run, "json-syntax");
    assert!(run.stderr.contains("--> JSON-ARGS:1:1"), "{run:?}");
    let run = root.run(&["call", "csvstats::median", "not json", "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.json()["errors"][0]["code"], "json-syntax");
}

/// `status` must not present a root whose soil.toml does not parse as if all
/// were well: the problem shows, with its code, in either form.
#[test]
fn status_reports_a_broken_config() {
    let root = Root::examples_with_daemon();
    let config = root.read("soil.toml");
    root.write("soil.toml", &format!("{config}garbage [[\n"));
    for args in [
        &["status", "--json"][..],
        &["status"],
        &["--no-daemon", "status", "--json"],
    ] {
        let run = root.run(args);
        let rendered = format!("{}{}", run.stdout, run.stderr);
        assert!(rendered.contains("config-invalid"), "{args:?}: {run:?}");
    }
}

/// A file that turns unreadable (here: not UTF-8) is reported with its code and
/// path by `check` and by `status`, through the daemon's change feed and in a
/// fresh process alike, and the status rows are not passed off as current.
#[test]
fn a_file_that_stops_being_utf8_is_reported_by_check_and_status() {
    let root = Root::examples_with_daemon();
    root.run(&["status", "--json"]).ok();
    std::fs::write(root.path("csvstats/median.soil"), [0xff, 0xfe, b'\n']).expect("write");
    for daemon in [true, false] {
        let prefix: &[&str] = if daemon { &[] } else { &["--no-daemon"] };
        let check = root.run(&[prefix, &["check"]].concat());
        assert_error(&check, "root-unreadable");
        assert!(
            check.stdout.contains("--> csvstats/median.soil"),
            "{check:?}"
        );
        // The examples' draft keeps its open hole listed beside the problem.
        assert!(
            check.stdout.contains("1 problem; 1 open hole\n"),
            "{check:?}"
        );

        let table = root.run(&[prefix, &["status"]].concat());
        assert_error(&table, "root-unreadable");
        assert!(
            table.stdout.contains("1 file could not be loaded"),
            "{table:?}"
        );

        let json = root.run(&[prefix, &["status", "--json"]].concat());
        assert_eq!(json.code, Some(1), "{json:?}");
        let problem = &json.json()["problems"][0];
        assert_eq!(problem["code"], "root-unreadable", "{json:?}");
        assert_eq!(problem["file"]["value"], "csvstats/median.soil", "{json:?}");
    }
}

/// An empty lock, a garbage lock, a directory named like a lock and a FIFO named
/// like Soil: `check`, `test` and `status` (human and JSON), in-process and
/// through the daemon, each exit 1 and name every one of those files. (A FIFO
/// that were opened would block the command: none is.)
#[test]
fn unreadable_locks_and_non_files_are_reported_by_every_command() {
    let root = Root::examples_with_daemon();
    root.write("csvstats/median.lock", "");
    root.write("csvstats/sort.lock", "garbage\n");
    std::fs::create_dir(root.path("csvstats/ghost.lock")).expect("mkdir");
    let fifo = std::process::Command::new("mkfifo")
        .arg(root.path("csvstats/pipe.soil"))
        .status()
        .expect("mkfifo");
    assert!(fifo.success());
    let files = [
        "csvstats/median.lock",
        "csvstats/sort.lock",
        "csvstats/ghost.lock",
        "csvstats/pipe.soil",
    ];
    for daemon in [false, true] {
        for command in [
            &["check"][..],
            &["test"],
            &["status"],
            &["status", "--json"],
        ] {
            let mut args = if daemon { vec![] } else { vec!["--no-daemon"] };
            args.extend(command);
            let run = root.run(&args);
            assert_eq!(run.code, Some(1), "`{}`: {run:?}", args.join(" "));
            let rendered = format!("{}{}", run.stdout, run.stderr);
            for file in files {
                assert!(
                    rendered.contains(file),
                    "`{}` does not name {file}: {run:?}",
                    args.join(" ")
                );
            }
        }
    }
}

/// An argument that is not UTF-8 is a usage error (exit 2) naming it, never a
/// panic (exit 101).
#[test]
fn a_non_utf8_argument_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let root = Root::examples();
    for args in [&["status"][..], &["check"], &["--no-daemon", "check"]] {
        let output = root
            .command(args)
            .arg(std::ffi::OsStr::from_bytes(b"a\xffb"))
            .output()
            .expect("run trellis");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert!(
            stderr.contains("argument") && stderr.contains("a\\xffb") && stderr.contains("UTF-8"),
            "{stderr}"
        );
    }
}

/// A `soil.toml` with a byte that is not UTF-8 (in a comment) is reported as
/// exactly that, at its line and column, by every command — not as the
/// "missing field" of the empty configuration it would leave behind.
#[test]
fn a_soil_toml_that_is_not_utf8_is_reported_at_the_byte() {
    let root = Root::examples_with_daemon();
    let mut bytes = std::fs::read(root.path("soil.toml")).expect("read soil.toml");
    bytes.extend_from_slice(b"# caf\xe9\n");
    let line = bytes.iter().filter(|&&b| b == b'\n').count();
    std::fs::write(root.path("soil.toml"), &bytes).expect("write soil.toml");
    for daemon in [false, true] {
        for command in [&["check"][..], &["status"], &["test"], &["adopt"]] {
            let mut args = if daemon { vec![] } else { vec!["--no-daemon"] };
            args.extend(command);
            let run = root.run(&args);
            assert_error(&run, "root-unreadable");
            let rendered = format!("{}{}", run.stdout, run.stderr);
            assert!(
                rendered.contains("not valid UTF-8")
                    && rendered.contains(&format!("soil.toml:{line}:6"))
                    && !rendered.contains("missing field"),
                "`{}`: {run:?}",
                args.join(" ")
            );
        }
    }
}
