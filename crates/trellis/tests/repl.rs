//! `trellis repl` driven through piped stdin: calls with `trellis call` semantics
//! (a value, a structured panic, bad JSON), the history file, and `:keep`
//! promoting a call to an expect case that `trellis test` then runs green —
//! refused while the definition is not green.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::io::Write;
use std::process::Stdio;

use support::Root;

/// One REPL session over `input`, in-process (`--no-daemon`), errors as JSON
/// documents (`--json`, one line each); stdout by line.
fn session(root: &Root, input: &str) -> Vec<String> {
    session_with(root, &["--no-daemon", "repl", "--json"], input)
}

fn session_with(root: &Root, args: &[&str], input: &str) -> Vec<String> {
    let mut child = root
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start trellis repl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let output = child.wait_with_output().expect("repl exits");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn code_of(line: &str) -> String {
    let document: serde_json::Value = serde_json::from_str(line).expect("a JSON document");
    document["errors"][0]["code"]
        .as_str()
        .expect("an error code")
        .to_owned()
}

#[test]
fn a_call_a_panic_and_bad_json_each_answer_on_their_line() {
    let root = Root::examples();
    let out = session(
        &root,
        "csvstats::median [[3.0, 1.0, 2.0]]\ncsvstats::median [[]]\ncsvstats::median [[1,\n:help\n:quit\ncsvstats::median [[9.0]]\n",
    );
    assert_eq!(out[0], "2.0", "{out:?}");
    // median requires a non-empty list: the structured panic of `trellis call`.
    assert_eq!(code_of(&out[1]), "requires-violated", "{out:?}");
    assert_eq!(code_of(&out[2]), "json-syntax", "{out:?}");
    assert!(out[3].starts_with("DEF JSON-ARGS"), "{out:?}");
    // Nothing after :quit runs.
    assert!(!out.iter().any(|line| line == "9.0"), "{out:?}");
    let history = root.read(".trellis/repl_history");
    assert_eq!(
        history,
        "csvstats::median [[3.0, 1.0, 2.0]]\ncsvstats::median [[]]\ncsvstats::median [[1,\n:help\n:quit\n"
    );
}

#[test]
fn keep_writes_a_case_that_trellis_test_runs_green_and_is_refused_when_not_green() {
    let root = Root::examples();
    assert_eq!(root.statuses(false)["csvstats::median"], "green");
    let out = session(
        &root,
        ":keep from_repl\ncsvstats::median [[4.0, 1.0, 2.0, 3.0]]\n:keep from_repl\n",
    );
    // Nothing to keep before a call.
    assert_eq!(code_of(&out[0]), "usage-error", "{out:?}");
    assert_eq!(out[1], "2.5", "{out:?}");
    assert_eq!(
        out[2], "kept in csvstats/median.tr: median([4.0,1.0,2.0,3.0]) -> 2.5",
        "{out:?}"
    );
    let spec = root.read("csvstats/median.tr");
    assert!(
        spec.ends_with("```test from_repl\nmedian([4.0,1.0,2.0,3.0]) -> 2.5\n```\n"),
        "{spec}"
    );

    // The new block makes the recorded results stale: a second :keep is refused
    // and writes nothing.
    assert_eq!(root.statuses(false)["csvstats::median"], "tests-stale");
    let out = session(&root, "csvstats::median [[7.0]]\n:keep from_repl\n");
    assert_eq!(out[0], "7.0", "{out:?}");
    assert_eq!(code_of(&out[1]), "usage-error", "{out:?}");
    assert!(out[1].contains("is tests-stale, not green"), "{out:?}");
    assert_eq!(root.read("csvstats/median.tr"), spec);

    let test = root.run(&["--no-daemon", "test", "csvstats::median"]);
    assert_eq!(test.code, Some(0), "{test:?}");
    assert_eq!(root.statuses(false)["csvstats::median"], "green");

    // Green again: the next :keep appends to the same block.
    let out = session(&root, "csvstats::median [[7.0]]\n:keep from_repl\n");
    assert_eq!(
        out[1], "kept in csvstats/median.tr: median([7.0]) -> 7.0",
        "{out:?}"
    );
    assert!(root.read("csvstats/median.tr").ends_with(
        "```test from_repl\nmedian([4.0,1.0,2.0,3.0]) -> 2.5\nmedian([7.0]) -> 7.0\n```\n"
    ));
}

/// Errors are diagnostics for a person unless asked for as JSON: `:json`
/// switches, and a value prints the same either way.
#[test]
fn errors_are_human_until_json_is_switched_on() {
    let root = Root::examples();
    let out = session_with(
        &root,
        &["--no-daemon", "repl"],
        "csvstats::median [[]]\n:json\ncsvstats::median [[]]\n:json\ncsvstats::median [[2.0]]\n",
    );
    assert!(out[0].starts_with("error[requires-violated]: "), "{out:?}");
    assert!(out[1].starts_with("  --> csvstats/median."), "{out:?}");
    let switched = out
        .iter()
        .position(|line| line == "errors as JSON")
        .expect("switched");
    assert_eq!(code_of(&out[switched + 1]), "requires-violated", "{out:?}");
    assert_eq!(out[switched + 2], "errors as diagnostics", "{out:?}");
    assert_eq!(out[switched + 3], "2.0", "{out:?}");
}

/// `:keep` alone is a `:keep` without its name, not an unknown command.
#[test]
fn keep_without_a_name_asks_for_one() {
    let root = Root::examples();
    let out = session_with(
        &root,
        &["--no-daemon", "repl"],
        "csvstats::median [[1.0]]\n:keep\n:keep bad!name\n",
    );
    assert_eq!(out[0], "1.0", "{out:?}");
    assert!(
        out[1].starts_with("error[usage-error]: `:keep` needs the name of the test block"),
        "{out:?}"
    );
    assert!(
        out.iter()
            .any(|line| line.contains("`bad!name` is not a test block name")),
        "{out:?}"
    );
    assert!(
        !out.iter().any(|line| line.contains("unknown REPL command")),
        "{out:?}"
    );
}
