//! Jobs and their drafts through `trellis _mcp`: a draft is its job's alone (the
//! CLI, `status` and another job never see it); a draft's `check_types` is what
//! `trellis check` says of the same text on disk; `run_tests` reports the
//! sandboxed rows `trellis test` records; hostile input on the stdio stream is a
//! clean error or exit and leaves the daemon serving.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};
use support::{Root, TRELLIS, is_alive, wait_until};

/// One `trellis _mcp` session over pipes, after the legacy handshake.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Session {
    fn start(root: &Root, def: &str) -> (Session, String) {
        let record = root
            .run(&["_job", "create", def, "--budget", "20000", "--json"])
            .ok()
            .json();
        let job = record["job"].as_str().unwrap().to_owned();
        let socket = record["socket"].as_str().unwrap().to_owned();
        let mut child = Command::new(TRELLIS)
            .args(["_mcp", "--job", &job, "--socket", &socket])
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start trellis _mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut session = Session {
            child,
            stdin,
            stdout,
            next: 0,
        };
        let init = session.request("initialize", json!({"protocolVersion": "2025-11-25"}));
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
        session.send_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        (session, job)
    }

    fn send_line(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        self.send_line(message.to_string().as_bytes());
        self.receive()
    }

    /// A tool call: (isError, the document).
    fn call(&mut self, tool: &str, arguments: Value) -> (bool, Value) {
        let reply = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &reply["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{reply}"));
        (
            result["isError"].as_bool().unwrap(),
            serde_json::from_str(text).unwrap(),
        )
    }

    fn write(&mut self, soil: &str) -> Value {
        let (is_error, document) =
            self.call("write_soil", json!({"soil": soil, "decisions_applied": []}));
        assert!(!is_error, "{document}");
        document
    }

    /// Closes stdin and waits: the exit status.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

const HOLE_DRAFT: &str = "median xs =\n  ?middle\n";

fn hole_names(document: &Value) -> Vec<String> {
    document["checks"]["holes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_draft_is_seen_by_its_job_only() {
    let root = Root::examples_with_daemon();
    let before_status = root.status(true);
    let before_check = root.run(&["check", "--json"]).json();
    let on_disk = root.read("csvstats/median.soil");
    let (mut first, _) = Session::start(&root, "csvstats::median");
    first.write(HOLE_DRAFT);
    let (is_error, facts) = first.call("check_types", json!({}));
    assert!(!is_error, "{facts}");
    assert_eq!(hole_names(&facts), ["middle"]);
    // The disk, the CLI and status see the root as it was.
    assert_eq!(root.read("csvstats/median.soil"), on_disk);
    assert_eq!(root.run(&["check", "--json"]).json(), before_check);
    let after_status = root.status(true);
    assert_eq!(
        support::rows_by_name(&after_status),
        support::rows_by_name(&before_status)
    );
    // A second job on the same definition has no draft, then its own.
    let (mut second, _) = Session::start(&root, "csvstats::median");
    let (is_error, document) = second.call("check_types", json!({}));
    assert!(is_error);
    assert_eq!(document["errors"][0]["code"], "no-draft");
    second.write(&on_disk);
    let (_, facts) = second.call("check_types", json!({}));
    assert_eq!(hole_names(&facts), Vec::<String>::new());
    let (_, facts) = first.call("check_types", json!({}));
    assert_eq!(
        hole_names(&facts),
        ["middle"],
        "the first job keeps its draft"
    );
    assert!(first.finish().success());
    assert!(second.finish().success());
}

#[test]
fn a_drafts_check_types_is_trellis_check_of_the_same_text() {
    let root = Root::examples_with_daemon();
    let disk = Root::examples();
    let (mut session, _) = Session::start(&root, "csvstats::median");
    let drafts = [
        HOLE_DRAFT,
        "median xs =\n  len xs + 1.5\n",
        "median xs =\n  at (sort xs) (?index)\n",
        "median xs =\n  no_such_function xs\n",
    ];
    for draft in drafts {
        let canonical = session.write(draft)["canonical"]
            .as_str()
            .unwrap()
            .to_owned();
        let (is_error, document) = session.call("check_types", json!({}));
        disk.write("csvstats/median.soil", &canonical);
        let check = disk
            .run(&["--no-daemon", "check", "csvstats::median", "--json"])
            .json();
        let errors = check["errors"].as_array().unwrap();
        assert_eq!(
            is_error,
            !errors.is_empty(),
            "{draft}: {document} vs {check}"
        );
        if is_error {
            assert_eq!(&document["errors"], &check["errors"], "{draft}");
        } else {
            let holes: Vec<(Value, Value)> = check["holes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| (h["hole"].clone(), h["goal"].clone()))
                .collect();
            let facts: Vec<(Value, Value)> = document["checks"]["holes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| (h["name"].clone(), h["goal"].clone()))
                .collect();
            assert_eq!(facts, holes, "{draft}");
        }
    }
    assert!(session.finish().success());
}

#[test]
fn run_tests_on_median_reports_the_sandboxed_rows_of_trellis_test() {
    let root = Root::examples_with_daemon();
    // A changed oracle makes median's recorded results stale, so `trellis test`
    // runs its whole suite.
    let oracle = root.read("reference/stats.py");
    root.write("reference/stats.py", &format!("{oracle}\n# touched\n"));
    let before = root.read("csvstats/median.lock");
    let test = root.run(&["test", "csvstats::median"]).ok();
    assert_ne!(
        root.read("csvstats/median.lock"),
        before,
        "the suite ran: {test:?}"
    );
    let lock: Value = serde_json::from_str(&root.read("csvstats/median.lock")).unwrap();
    let recorded: Vec<(String, String)> = lock["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["mode"] == "sandboxed")
        .map(|row| {
            (
                row["name"].as_str().unwrap().to_owned(),
                row["result"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(recorded.len() > 5, "{test:?}");
    let (mut session, _) = Session::start(&root, "csvstats::median");
    session.write(&root.read("csvstats/median.soil"));
    let (is_error, document) = session.call("run_tests", json!({}));
    assert!(!is_error, "{document}");
    let cases: Vec<(String, String)> = document["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let tag = case["outcome"]["tag"].as_str().unwrap().to_lowercase();
            (case["name"].as_str().unwrap().to_owned(), tag)
        })
        .collect();
    assert_eq!(cases, recorded);
    assert!(session.finish().success());
}

#[test]
fn hostile_input_is_a_clean_error_and_the_daemon_goes_on() {
    let root = Root::examples_with_daemon();
    let pid = root.daemon_pid().expect("a daemon");
    let (mut session, _) = Session::start(&root, "csvstats::median");
    // 20 MiB of Soil: over the frame limit, refused, the session goes on.
    let huge = format!("median xs =\n  \"{}\"\n", "x".repeat(20 * 1024 * 1024));
    let frame = json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
        "params": {"name": "write_soil", "arguments": {"soil": huge, "decisions_applied": []}}});
    session.send_line(frame.to_string().as_bytes());
    let reply = session.receive();
    assert_eq!(reply["error"]["code"], -32001, "{reply}");
    // 10,000-deep JSON.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    session.send_line(deep.as_bytes());
    assert_eq!(session.receive()["error"]["code"], -32700);
    // 10,000-deep Soil: a diagnostic, not a crash.
    let deep_soil = format!(
        "median xs =\n  {}1.0{}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let (is_error, document) = session.call(
        "write_soil",
        json!({"soil": deep_soil, "decisions_applied": []}),
    );
    assert!(is_error, "{document}");
    assert!(document["errors"][0]["repair_class"].is_string());
    // Not UTF-8.
    session.send_line(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"\xff\"}");
    assert_eq!(session.receive()["error"]["code"], -32700);
    let (is_error, document) = session.call("check_types", json!({}));
    assert!(
        is_error && document["errors"][0]["code"] == "no-draft",
        "nothing was stored"
    );
    // A last frame without a newline is still answered; then a clean exit.
    let stdin = session.stdin.as_mut().unwrap();
    stdin
        .write_all(br#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#)
        .unwrap();
    drop(session.stdin.take());
    assert_eq!(session.receive()["id"], 99);
    assert!(session.child.wait().unwrap().success());

    // A client that vanishes mid-call: the shim ends, the daemon does not notice.
    let (mut vanishing, _) = Session::start(&root, "csvstats::median");
    vanishing.write(&root.read("csvstats/median.soil"));
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "run_tests", "arguments": {}}});
    vanishing.send_line(call.to_string().as_bytes());
    drop(vanishing.stdin.take());
    drop(vanishing.stdout);
    let status = vanishing.child.wait().unwrap();
    assert!(
        status.code().is_some(),
        "exited, not killed by a signal: {status}"
    );

    assert_eq!(root.daemon_pid(), Some(pid), "the same daemon serves");
    let rows = root.statuses(true);
    assert!(rows.contains_key("csvstats::median"), "{rows:?}");
    let (mut after, _) = Session::start(&root, "csvstats::median");
    assert_eq!(
        after.call("check_refinements", json!({})).1,
        json!({"tag": "None"})
    );
    assert!(after.finish().success());
}

#[test]
fn an_input_over_its_bound_gets_its_tools_code_and_a_refused_draft_is_not_stored() {
    let root = Root::examples_with_daemon();
    let (mut session, _) = Session::start(&root, "csvstats::median");
    let code = |document: &Value| document["errors"][0]["code"].as_str().unwrap().to_owned();
    let no_draft = |session: &mut Session| {
        let (is_error, document) = session.call("check_types", json!({}));
        assert!(is_error && code(&document) == "no-draft", "{document}");
    };
    // 10 MB of Soil: refused before it is parsed, nothing stored.
    let huge = format!("median xs =\n  \"{}\"\n", "x".repeat(10 * 1024 * 1024));
    let (is_error, document) =
        session.call("write_soil", json!({"soil": huge, "decisions_applied": []}));
    assert!(is_error);
    assert_eq!(code(&document), "mcp-result-too-large", "{document}");
    no_draft(&mut session);
    // A draft that parses but whose echo is over the session's result cap
    // (25,000 tokens): refused, nothing stored.
    let long = format!("median xs =\n  \"{}\"\n", "x".repeat(200 * 1024));
    let (is_error, document) =
        session.call("write_soil", json!({"soil": long, "decisions_applied": []}));
    assert!(is_error);
    assert_eq!(code(&document), "mcp-result-too-large", "{document}");
    assert!(
        document["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("nothing was stored")
    );
    no_draft(&mut session);
    // Over-long arguments get their tools' own codes, not the transport's.
    let nine_mb = "a".repeat(9 * 1024 * 1024);
    let (_, document) = session.call("read_context", json!({"path": nine_mb}));
    assert_eq!(code(&document), "bundle-path", "{document}");
    let (_, document) = session.call("read_spec", json!({"ref": nine_mb}));
    assert_eq!(code(&document), "unknown-spec-ref", "{document}");
    let (_, document) = session.call(
        "write_soil",
        json!({"soil": root.read("csvstats/median.soil"),
               "decisions_applied": [{"scope": {"tag": "Module"}, "label": nine_mb}]}),
    );
    assert_eq!(code(&document), "unknown-decision", "{document}");
    no_draft(&mut session);
    // A draft of garbage: a bounded list of parse errors, not a frame too large.
    let garbage = "f x = \"\\q\"\n".repeat(50 * 1024);
    let (is_error, document) = session.call(
        "write_soil",
        json!({"soil": garbage, "decisions_applied": []}),
    );
    assert!(is_error);
    let errors = document["errors"].as_array().unwrap();
    assert!(errors.len() <= 32, "{} errors", errors.len());
    assert_ne!(code(&document), "rpc-frame-too-large");
    no_draft(&mut session);
    // The session goes on: a draft that fits is stored.
    session.write(&root.read("csvstats/median.soil"));
    let (is_error, document) = session.call("check_types", json!({}));
    assert!(!is_error, "{document}");
    assert!(session.finish().success());
}

#[test]
fn a_drafts_private_helpers_join_the_modules_helpers_in_its_job_only() {
    let root = Root::examples_with_daemon();
    let private = root.read("csvstats/_private.soil");
    let (mut session, _) = Session::start(&root, "csvstats::median");
    session.write(
        "median xs =\n  _mid (sort xs)\n\n_mid : (s : List F64) ->{Panic} F64\n\n_mid s = at s (len s / 2)\n",
    );
    let (is_error, facts) = session.call("check_types", json!({}));
    assert!(!is_error, "the helper is in scope: {facts}");
    let (is_error, cases) = session.call("run_tests", json!({}));
    assert!(!is_error, "{cases}");
    let failed = cases["cases"]
        .as_array()
        .unwrap()
        .iter()
        .any(|case| case["outcome"]["tag"] == "Fail");
    assert!(
        failed,
        "the upper middle is not the median of an even list: {cases}"
    );
    // A draft without helpers takes them away again.
    session.write("median xs =\n  _mid (sort xs)\n");
    let (is_error, document) = session.call("check_types", json!({}));
    assert!(is_error, "{document}");
    assert_eq!(document["errors"][0]["code"], "unknown-name");
    assert_eq!(root.read("csvstats/_private.soil"), private);
    let check = root.run(&["check", "--json"]).json();
    assert_eq!(check["errors"], json!([]), "{check}");
    assert!(session.finish().success());
}

/// The live warm oracle drivers (design §9.2) of the root's daemon: Python
/// processes started with the driver's terminator and this root as arguments.
fn warm_drivers(root: &Root) -> Vec<u32> {
    let wanted = [
        root.root.to_string_lossy().into_owned(),
        root.root
            .canonicalize()
            .unwrap()
            .to_string_lossy()
            .into_owned(),
    ];
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect();
        let serves = args
            .iter()
            .any(|arg| arg.contains("trellis-oracle: served"));
        if serves && args.iter().any(|arg| wanted.contains(arg)) && is_alive(pid) {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn run_tests_answers_the_same_from_a_warm_oracle_that_sees_edits_and_dies_with_the_daemon() {
    let root = Root::examples_with_daemon();
    // The reference's halving goes through a helper module it imports.
    root.import_a_reference_helper();
    root.edit(
        "reference/stats.py",
        "        return total / 2.0\n",
        "        return half(total, 0.0)\n",
    );
    let (mut session, _) = Session::start(&root, "csvstats::median");
    session.write(&root.read("csvstats/median.soil"));
    let differential = |document: &Value| {
        document["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|case| {
                case["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("derived:differential:")
            })
            .map(|case| case["outcome"]["tag"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let (is_error, first) = session.call("run_tests", json!({}));
    assert!(!is_error, "{first}");
    assert_eq!(differential(&first), "Pass", "{first}");
    let drivers = warm_drivers(&root);
    assert_eq!(drivers.len(), 1, "one warm driver after a run: {drivers:?}");
    let (_, second) = session.call("run_tests", json!({}));
    assert_eq!(second, first, "a warm run answers as the first did");
    assert_eq!(
        warm_drivers(&root),
        drivers,
        "and the same driver served it"
    );

    // An edited helper is seen by the next run, and so is its repair.
    root.edit(
        "reference/refhelp.py",
        "return a / 2.0 + b / 2.0",
        "return a / 2.0 + b / 2.0 + 1.0",
    );
    let (_, broken) = session.call("run_tests", json!({}));
    assert_eq!(differential(&broken), "Fail", "{broken}");
    let (_, again) = session.call("run_tests", json!({}));
    assert_eq!(again, broken);
    root.edit(
        "reference/refhelp.py",
        "return a / 2.0 + b / 2.0 + 1.0",
        "return a / 2.0 + b / 2.0",
    );
    let (_, repaired) = session.call("run_tests", json!({}));
    assert_eq!(repaired, first);
    assert_eq!(warm_drivers(&root), drivers, "no run started another");
    assert!(session.finish().success());

    // No driver outlives its daemon: stopped,
    root.run(&["daemon", "stop"]).ok();
    for pid in &drivers {
        assert!(!is_alive(*pid), "driver {pid} outlived `daemon stop`");
    }
    // or killed outright (the driver ends when its requests pipe closes).
    let root = root.start_daemon();
    let (mut session, _) = Session::start(&root, "csvstats::median");
    session.write(&root.read("csvstats/median.soil"));
    assert!(!session.call("run_tests", json!({})).0);
    let drivers = warm_drivers(&root);
    assert_eq!(drivers.len(), 1, "{drivers:?}");
    let daemon = root.daemon_pid().expect("a daemon");
    Command::new("kill")
        .args(["-9", &daemon.to_string()])
        .status()
        .unwrap();
    wait_until("the warm driver of a killed daemon exits", || {
        !is_alive(drivers[0])
    });
    let _ = session.finish();
}
