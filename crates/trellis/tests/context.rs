//! `trellis context` and `trellis spec` end to end: the bundle lands in
//! `.trellis/context/<module>/<name>/`, wiped per invocation, or in an empty
//! `--out` resolved against the caller's directory; the human view and `--json`
//! list packed and dropped files with sizes; bad input is a clear error. The
//! daemon's stamp (design §9.10) leaves an unchanged bundle untouched, rewrites
//! only what an edit changed, and notices what a person changed in the
//! directory, with the change feed and without it.

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
    // The answer lists every dropped file; the manifest the same, but the
    // callable surface and the corpus as one entry each, counted.
    let dropped = answer["dropped"].as_array().expect("dropped");
    let in_dir = |dir: &str| {
        dropped
            .iter()
            .filter(|d| d["item"].as_str().is_some_and(|item| item.starts_with(dir)))
            .count()
    };
    let mut expected: Vec<serde_json::Value> = dropped
        .iter()
        .filter(|d| {
            let item = d["item"].as_str().unwrap_or_default();
            !item.starts_with("callable/") && !item.starts_with("examples/")
        })
        .cloned()
        .collect();
    let module_md = expected.pop().expect("module.md drops last");
    expected.push(serde_json::json!({
        "item": "callable/",
        "reason": format!("after over budget: {} files from callable/contains.md", in_dir("callable/")),
    }));
    expected.push(serde_json::json!({
        "item": "examples/",
        "reason": format!(
            "after over budget: {} files from examples/csvstats/all_finite.tr",
            in_dir("examples/")
        ),
    }));
    expected.push(module_md);
    assert_eq!(manifest["dropped"], serde_json::Value::Array(expected));
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
    // The error and its note agree on what is never dropped and what is
    // counted: the three files count, the manifest does not.
    let small = root.run(&[
        "--no-daemon",
        "context",
        "csvstats::median",
        "--budget",
        "300",
    ]);
    assert_eq!(small.code, Some(1), "{small:?}");
    let needed: u64 = small
        .stderr
        .split("need about ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the tokens needed");
    assert!(
        small.stderr.starts_with(&format!(
            "error[budget-too-small]: a budget of 300 tokens cannot hold the files that are never \
             dropped: spec.md, decisions.md and tests.json need about {needed} tokens\n"
        )),
        "{small:?}"
    );
    assert!(
        small.stderr.contains(&format!(
            "= note: bundle.json, the manifest, is never dropped either but is not counted \
             against the budget, since it lists what was packed: --budget {needed} or more"
        )),
        "{small:?}"
    );
    root.run(&[
        "--no-daemon",
        "context",
        "csvstats::median",
        "--budget",
        &needed.to_string(),
    ])
    .ok();
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

/// Every file of a bundle directory: path → (inode, change time, bytes).
fn files_of(dir: &std::path::Path) -> std::collections::BTreeMap<String, (u64, i64, i64, String)> {
    use std::os::unix::fs::MetadataExt;
    let mut files = std::collections::BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).expect("list") {
            let path = entry.expect("entry").path();
            let metadata = std::fs::symlink_metadata(&path).expect("stat");
            if metadata.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path.strip_prefix(dir).unwrap().display().to_string();
            let text = std::fs::read_to_string(&path).expect("read");
            files.insert(
                relative,
                (
                    metadata.ino(),
                    metadata.ctime(),
                    metadata.ctime_nsec(),
                    text,
                ),
            );
        }
    }
    files
}

/// One `context` request over the daemon's socket: the answer with its account
/// of the write (which `--json` leaves out).
fn context_over_socket(root: &Root, def: &str, budget: u64) -> serde_json::Value {
    let mut client = trellis_rpc::Client::connect(&root.socket()).expect("connect");
    client
        .call(
            "context",
            serde_json::json!({ "def": def, "budget": budget, "out": null }),
        )
        .expect("context")
}

/// The daemon's stamp (design §9.10): a second identical run writes nothing,
/// not even a file's times; a file edited in the bundle, one added and one
/// removed are all noticed and the directory repaired on the next run.
#[test]
fn an_unchanged_bundle_is_left_untouched_and_a_tampered_one_repaired() {
    let root = Root::examples_with_daemon();
    let args = ["context", "csvstats::median", "--budget", "100000"];
    let dir = root.path(".trellis/context/csvstats/median");
    root.run(&args).ok();
    let written = files_of(&dir);
    root.run(&args).ok();
    assert_eq!(
        files_of(&dir),
        written,
        "nothing rewritten, not even a time"
    );
    let answer = context_over_socket(&root, "csvstats::median", 100000);
    assert_eq!(answer["write"]["files"], 0, "{answer}");
    assert_ne!(answer["write"]["vouched"], "swept", "{answer}");

    // A same-size edit, a stray file beside the bundle's, a missing file.
    let spec = root.read(".trellis/context/csvstats/median/spec.md");
    root.write(
        ".trellis/context/csvstats/median/spec.md",
        &spec.to_uppercase(),
    );
    root.write(
        ".trellis/context/csvstats/median/callees/stray.md",
        "left over",
    );
    std::fs::remove_file(dir.join("tests.json")).unwrap();
    let answer = context_over_socket(&root, "csvstats::median", 100000);
    assert_eq!(answer["write"]["vouched"], "swept", "{answer}");
    assert_eq!(
        answer["write"]["files"], 2,
        "spec.md and tests.json: {answer}"
    );
    let repaired = files_of(&dir);
    let contents = |files: &std::collections::BTreeMap<String, (u64, i64, i64, String)>| {
        files
            .iter()
            .map(|(path, (.., text))| (path.clone(), text.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        contents(&repaired),
        contents(&written),
        "exactly the bundle"
    );
    assert_eq!(
        repaired["decisions.md"], written["decisions.md"],
        "what was right is not rewritten"
    );
}

/// After the racy window the stats alone vouch for the directory; an edit
/// that keeps the file's size and modification time is still seen (its change
/// time moved).
#[test]
fn the_stats_vouch_for_a_quiet_directory_and_see_an_edit() {
    let root = Root::examples_with_daemon();
    let dir = root.path(".trellis/context/csvstats/mean");
    let first = context_over_socket(&root, "csvstats::mean", 4000);
    assert_eq!(first["write"]["vouched"], "swept", "{first}");
    let written = files_of(&dir);
    std::thread::sleep(std::time::Duration::from_millis(3300));
    let renewed = context_over_socket(&root, "csvstats::mean", 4000);
    assert_eq!(renewed["write"]["vouched"], "stats", "{renewed}");
    let quiet = context_over_socket(&root, "csvstats::mean", 4000);
    assert_eq!(quiet["write"]["vouched"], "stats", "{quiet}");
    assert_eq!(quiet["write"]["files"], 0, "{quiet}");
    assert_eq!(files_of(&dir), written);

    let spec = dir.join("spec.md");
    let modified = std::fs::metadata(&spec).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, text.to_uppercase()).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&spec)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let repaired = context_over_socket(&root, "csvstats::mean", 4000);
    assert_eq!(repaired["write"]["vouched"], "swept", "{repaired}");
    assert_eq!(repaired["write"]["files"], 1, "{repaired}");
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), text);
}

/// An edit that changes the bundle rewrites the files that differ and leaves
/// the others as they were.
#[test]
fn an_edit_to_what_the_bundle_packs_rewrites_only_that() {
    let root = Root::examples_with_daemon();
    let args = ["context", "csvstats::median", "--budget", "100000"];
    let dir = root.path(".trellis/context/csvstats/median");
    root.run(&args).ok();
    let before = files_of(&dir);
    root.edit(
        "csvstats/median.tr",
        "# median",
        "# median\n\nA prose line added by the test.",
    );
    let answer = context_over_socket(&root, "csvstats::median", 100000);
    assert_ne!(answer["write"]["vouched"], "swept", "{answer}");
    let after = files_of(&dir);
    assert_eq!(after["spec.md"].3, root.read("csvstats/median.tr"));
    let changed: Vec<&str> = after
        .iter()
        .filter(|(path, file)| before.get(*path) != Some(file))
        .map(|(path, _)| path.as_str())
        .collect();
    // The spec, and the manifest, whose spec hashes record the prose.
    assert_eq!(changed, ["bundle.json", "spec.md"], "{answer}");
    assert_eq!(answer["write"]["files"], 2, "{answer}");

    // The next edit is vouched for by the stats too, and writes the same two
    // files; an edit by hand after it is still seen.
    root.edit(
        "csvstats/median.tr",
        "A prose line added by the test.",
        "A prose line the test edited.",
    );
    let answer = context_over_socket(&root, "csvstats::median", 100000);
    assert_eq!(answer["write"]["vouched"], "stats", "{answer}");
    assert_eq!(answer["write"]["files"], 2, "{answer}");
    assert_eq!(files_of(&dir)["tests.json"], before["tests.json"]);
    root.write(".trellis/context/csvstats/median/tests.json", "{}");
    let answer = context_over_socket(&root, "csvstats::median", 100000);
    assert_eq!(answer["write"]["vouched"], "swept", "{answer}");
    assert_eq!(files_of(&dir)["tests.json"].3, before["tests.json"].3);
}

/// With `TRELLIS_WATCH=off` (a root on a network filesystem) the stamp is
/// vouched for by stats as with the feed, and still sees an edit.
#[test]
fn without_the_watch_the_stats_vouch_for_the_directory() {
    let root = Root::examples();
    let mut daemon = root
        .command(&["daemon", "run"])
        .env("TRELLIS_WATCH", "off")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the daemon");
    let socket = root.socket();
    support::wait_until("the daemon listens", || {
        trellis_rpc::Client::connect(&socket).is_ok()
    });
    let dir = root.path(".trellis/context/csvstats/mean");
    context_over_socket(&root, "csvstats::mean", 4000);
    let written = files_of(&dir);
    let again = context_over_socket(&root, "csvstats::mean", 4000);
    assert_eq!(again["write"]["vouched"], "stats", "{again}");
    assert_eq!(files_of(&dir), written);
    root.write(".trellis/context/csvstats/mean/stray.md", "left over");
    let repaired = context_over_socket(&root, "csvstats::mean", 4000);
    assert_eq!(repaired["write"]["vouched"], "swept", "{repaired}");
    assert_eq!(files_of(&dir), written);
    root.run(&["daemon", "stop"]).ok();
    let _ = daemon.wait();
}
