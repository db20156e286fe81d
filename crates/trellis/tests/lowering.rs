//! The lowering loop end to end (design §4.9): `trellis lower` through the
//! root's daemon, the scripted provider's agent talking to each job through the
//! real `trellis _mcp` shim, and what reaches the root — the Soil, the lock with
//! provenance `agent`, f.log — or, for a job that does not end green, what does
//! not. Playbooks live under `test-data/lowering/playbooks/`, or are written
//! into the test's own playbook directory when a test needs its own.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::lowering::lower_output;
use support::{Root, Run, TempDir, is_alive, workspace};

/// A root with a daemon, a providers.toml of its own and a playbook directory.
struct Lowering {
    root: Root,
    config: TempDir,
    playbooks: PathBuf,
}

impl Lowering {
    fn new(root: Root, provider_extra: &str) -> Lowering {
        let config = TempDir::new("cfg");
        // The playbooks with the Soil files they name beside them, copied as a
        // user copies them: a playbook directory works from anywhere.
        copy_dir(
            &workspace().join("test-data/lowering/playbooks"),
            &config.path().join("lowering/playbooks"),
        );
        let playbooks = config.path().join("lowering/playbooks");
        support::lowering::write_scripted_provider(&config, &playbooks, provider_extra);
        // The fixture root is pinned to this binary and its skill (the skill
        // changes with the registry and docs; the examples' pin is tested in
        // skill_pin.rs).
        root.run(&["--no-daemon", "toolchain", "update"]).ok();
        Lowering {
            root: root.start_daemon(),
            config,
            playbooks,
        }
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = self.root.command(args);
        command.env("XDG_CONFIG_HOME", self.config.path());
        command
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().expect("run trellis"))
    }

    /// `trellis lower ARGS --json` in the background.
    fn spawn_lower(&self, args: &[&str]) -> Child {
        let mut all = vec!["lower", "--json"];
        all.extend_from_slice(args);
        self.command(&all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn trellis lower")
    }

    /// A playbook of this test's own, for `module::name` (attempt-numbered or not).
    fn playbook(&self, module: &str, file: &str, steps: &str) {
        let dir = self.playbooks.join(module);
        std::fs::create_dir_all(&dir).expect("playbook dir");
        std::fs::write(dir.join(file), steps).expect("write playbook");
    }

    /// The f.log events of a module, in order.
    fn flog(&self, module: &str) -> Vec<Value> {
        std::fs::read_to_string(self.root.path(&format!("{module}/f.log")))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("an f.log line is JSON"))
            .collect()
    }

    fn wait_for_event(&self, module: &str, what: &str, matches: impl Fn(&Value) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.flog(module).iter().any(&matches) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    support::copy_tree(from, to);
}

fn finish(child: Child) -> Run {
    Run::from(child.wait_with_output().expect("wait for trellis lower"))
}

fn states_of(events: &[Value], def: &str) -> Vec<String> {
    events
        .iter()
        .filter(|event| event["def"] == def)
        .map(|event| event["state"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn lock_json(root: &Root, relative: &str) -> Value {
    serde_json::from_str(&root.read(relative)).expect("a lock is JSON")
}

#[test]
fn mean_lowers_to_green_with_agent_provenance_citations_and_f_log() {
    let lowering = Lowering::new(Root::examples(), "");
    let run = lowering.run(&["lower", "csvstats::mean", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let (events, summary) = lower_output(&run);
    assert_eq!(
        states_of(&events, "csvstats::mean"),
        ["queued", "started", "agent", "gate", "green"]
    );
    assert_eq!(summary["outcomes"][0]["state"], "green");
    let root = &lowering.root;
    assert_eq!(
        root.read("csvstats/mean.soil"),
        std::fs::read_to_string(
            workspace().join("test-data/lowering/playbooks/csvstats/mean.soil")
        )
        .expect("the playbook's Soil"),
        "the canonical draft is what lands"
    );
    let lock = lock_json(root, "csvstats/mean.lock");
    let lowering_record = &lock["lowering"];
    assert_eq!(lowering_record["provenance"], "agent");
    assert_eq!(lowering_record["provider"], "fixture");
    assert_eq!(lowering_record["model"], "playbook-1");
    let applied = &lowering_record["decisions"]["applied"];
    assert_eq!(applied.as_array().map(Vec::len), Some(1), "{applied}");
    assert_eq!(applied[0]["label"], "total-order");
    assert_eq!(applied[0]["scope"], "project");
    assert!(
        lock["tests"]
            .as_array()
            .is_some_and(|rows| rows.len() >= 10 && rows.iter().all(|row| row["result"] == "pass")),
        "the final gate recorded every row green: {}",
        lock["tests"]
    );
    let statuses = root.statuses(true);
    assert_eq!(statuses["csvstats::mean"], "green", "{statuses:?}");
    // f.log: the job's whole story, in order.
    let kinds: Vec<String> = lowering
        .flog("csvstats")
        .iter()
        .map(|event| event["event"].as_str().unwrap_or("?").to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "job_started",
            "preflight",
            "bundle_packed",
            "tool_call",
            "tool_call",
            "tool_call",
            "tool_call",
            "tool_call",
            "tool_call",
            "agent_result",
            "outcome"
        ]
    );
    let flog = lowering.flog("csvstats");
    assert_eq!(flog[0]["provider"], "fixture");
    assert_eq!(flog[0]["model"], "playbook-1");
    assert_eq!(
        flog[9]["turns"], 6,
        "the agent's own turn count: {}",
        flog[9]
    );
    assert_eq!(flog[10]["outcome"], "green");
    // `trellis jobs` remembers it.
    let jobs = lowering.run(&["jobs", "--json"]).ok().json();
    assert_eq!(jobs["finished"][0]["def"], "csvstats::mean");
    assert_eq!(jobs["finished"][0]["outcome"], "green");
    let human = lowering.run(&["jobs"]).ok();
    assert!(human.stdout.contains("csvstats::mean"), "{human:?}");
}

#[test]
fn the_fixture_root_lowers_to_green_callee_first_twice_with_identical_locks() {
    // Once with the default number of jobs at once, once with one: the
    // callees land first either way, and the root ends byte-identical.
    let lower_once = |jobs: &str| {
        let lowering = Lowering::new(
            Root::copy_of(&workspace().join("test-data/lowering/root")),
            "",
        );
        let mut args = vec!["lower", "--json"];
        if !jobs.is_empty() {
            args.extend(["--jobs", jobs]);
        }
        let run = lowering.run(&args);
        assert_eq!(run.code, Some(0), "{run:?}");
        let (events, _) = lower_output(&run);
        // Each event as `state def`, in the order the daemon reported them.
        let order: Vec<String> = events
            .iter()
            .filter(|event| event["state"] == "started" || event["state"] == "green")
            .map(|event| {
                format!(
                    "{} {}",
                    event["state"].as_str().unwrap_or("?"),
                    event["def"].as_str().unwrap_or("?")
                )
            })
            .collect();
        let statuses = lowering.root.statuses(true);
        assert!(
            statuses.values().all(|status| status == "green"),
            "every row green after lowering: {statuses:?}"
        );
        let mut files = Vec::new();
        for name in [
            "count",
            "total",
            "square",
            "sum_squares",
            "mean",
            "variance",
        ] {
            for ext in ["soil", "lock"] {
                let relative = format!("stats/{name}.{ext}");
                files.push((relative.clone(), lowering.root.read(&relative)));
            }
        }
        files.push(("soil.lock".to_owned(), lowering.root.read("soil.lock")));
        (order, files)
    };
    let (order, first) = lower_once("");
    let position = |event: &str| order.iter().position(|e| e == event).expect(event);
    for (caller, callee) in [
        ("stats::mean", "stats::total"),
        ("stats::mean", "stats::count"),
        ("stats::sum_squares", "stats::total"),
        ("stats::sum_squares", "stats::square"),
        ("stats::variance", "stats::mean"),
        ("stats::variance", "stats::sum_squares"),
    ] {
        assert!(
            position(&format!("green {callee}")) < position(&format!("started {caller}")),
            "{callee} is green before {caller} starts: {order:?}"
        );
    }
    assert_eq!(order.len(), 12, "{order:?}");
    let (_, second) = lower_once("1");
    for ((path, a), (_, b)) in first.iter().zip(&second) {
        assert_eq!(
            a, b,
            "{path} differs between two lowerings of the same root"
        );
    }
    // The locks record the call edges the bodies have.
    let variance: Value = serde_json::from_str(&first[11].1).expect("variance.lock");
    let calls: Vec<&str> = variance["lowering"]["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|edge| edge["name"].as_str())
        .collect();
    assert_eq!(calls, ["count", "mean", "square", "sum_squares"]);
}

#[test]
fn a_hole_bearing_final_draft_is_committed_as_partial() {
    let lowering = Lowering::new(Root::examples(), "");
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        concat!(
            r#"{"tool": "write_soil", "args": {"soil": "mean xs = ?body\n", "decisions_applied": []}, "expect": {"is_error": false}}"#,
            "\n",
            r#"{"tool": "check_types", "expect": {"is_error": false, "result": {"checks": {"holes": [{"name": "body"}]}}}}"#,
            "\n",
            r#"{"tool": "run_tests", "expect": {"is_error": true, "codes": ["unfilled-hole"]}}"#,
            "\n",
            r#"{"say": "the body is left as a hole"}"#,
            "\n"
        ),
    );
    let run = lowering.run(&["lower", "csvstats::mean"]);
    assert_eq!(run.code, Some(1), "a partial outcome is not green: {run:?}");
    assert!(
        run.stdout
            .contains("csvstats::mean: partial with holes body"),
        "{run:?}"
    );
    let root = &lowering.root;
    assert_eq!(root.read("csvstats/mean.soil"), "mean xs = ?body\n");
    let lock = lock_json(root, "csvstats/mean.lock");
    assert_eq!(lock["checks"]["holes"], serde_json::json!(["body"]));
    assert_eq!(lock["lowering"]["provenance"], "agent");
    assert_eq!(
        lock["tests"],
        serde_json::json!([]),
        "holes are never tested"
    );
    assert_eq!(root.statuses(true)["csvstats::mean"], "partial");
}

#[test]
fn a_draft_that_fails_its_tests_leaves_the_root_untouched_and_logs_the_failures() {
    let lowering = Lowering::new(Root::examples(), "");
    let naive = "mean xs = fold (\\\\total x -> total + x) 0.0 xs / to_f64 (len xs)\\n";
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        &format!(
            "{{\"tool\": \"write_soil\", \"args\": {{\"soil\": \"{naive}\", \"decisions_applied\": []}}, \"expect\": {{\"is_error\": false}}}}\n{{\"say\": \"done, without running the tests\"}}\n"
        ),
    );
    let before = lowering.root.read("csvstats/mean.lock");
    let manifest = lowering.root.read("soil.lock");
    let run = lowering.run(&["lower", "csvstats::mean"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stdout.contains("csvstats::mean: failed"), "{run:?}");
    assert!(run.stdout.contains("error[job-final-gate]"), "{run:?}");
    let root = &lowering.root;
    assert!(
        !root.path("csvstats/mean.soil").exists(),
        "nothing of the draft reaches the root"
    );
    assert_eq!(root.read("csvstats/mean.lock"), before);
    assert_eq!(root.read("soil.lock"), manifest);
    let outcome = lowering
        .flog("csvstats")
        .into_iter()
        .find(|event| event["event"] == "outcome")
        .expect("an outcome event");
    assert_eq!(outcome["outcome"], "failed");
    let failures = outcome["detail"]["failures"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        failures.iter().any(|f| f["row"] == "basics#4"),
        "the 0.1 case fails and is detailed in f.log: {outcome}"
    );
    assert_eq!(root.statuses(true)["csvstats::mean"], "not-lowered");
}

/// A `sleep` whose argument no other process on the machine uses, so the test
/// can find it.
fn marker_sleep() -> String {
    format!(
        "{}.{}",
        3000 + std::process::id() % 1000,
        Instant::now().elapsed().subsec_nanos() % 1000 + 1
    )
}

fn processes_running(argument: &str) -> Vec<u32> {
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
        if args.first().is_some_and(|a| a.ends_with("sleep"))
            && args.iter().any(|a| a == argument)
            && is_alive(pid)
        {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn a_hanging_agent_and_its_child_are_killed_at_the_wall_clock_cap() {
    let lowering = Lowering::new(Root::examples(), "wall_clock_s = 2\n");
    let marker = marker_sleep();
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        &format!("{{\"spawn\": [\"sleep\", \"{marker}\"]}}\n{{\"hang\": true}}\n"),
    );
    let daemon = lowering.root.daemon_pid().expect("a daemon");
    let child = lowering.spawn_lower(&["csvstats::mean"]);
    support::wait_until("the agent's child runs", || {
        !processes_running(&marker).is_empty()
    });
    let run = finish(child);
    let (events, _) = lower_output(&run);
    let states = states_of(&events, "csvstats::mean");
    assert_eq!(
        states.last().map(String::as_str),
        Some("failed"),
        "{events:?}"
    );
    let failed = events.last().expect("an outcome");
    let codes: Vec<&str> = failed["detail"]["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["code"].as_str())
        .collect();
    assert!(codes.contains(&"job-cap-exceeded"), "{failed}");
    assert!(codes.contains(&"no-draft"), "{failed}");
    support::wait_until("the agent's child is gone", || {
        processes_running(&marker).is_empty()
    });
    // The daemon keeps serving, the same process.
    assert_eq!(lowering.root.daemon_pid(), Some(daemon));
    lowering.run(&["status"]).ok();
}

#[test]
fn the_turn_cap_refuses_the_call_after_the_last_and_ends_the_job() {
    let lowering = Lowering::new(Root::examples(), "turns = 2\n");
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        concat!(
            r#"{"tool": "read_context", "args": {"path": "spec.md"}}"#,
            "\n",
            r#"{"tool": "read_context", "args": {"path": "tests.json"}}"#,
            "\n",
            r#"{"tool": "read_context", "args": {"path": "bundle.json"}, "expect": {"is_error": false}}"#,
            "\n"
        ),
    );
    let run = lowering.run(&["lower", "csvstats::mean", "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let (events, _) = lower_output(&run);
    let outcome = events.last().expect("an outcome");
    assert_eq!(outcome["state"], "failed");
    assert_eq!(
        outcome["detail"]["errors"][0]["code"], "job-cap-exceeded",
        "{outcome}"
    );
    let calls: Vec<Value> = lowering
        .flog("csvstats")
        .into_iter()
        .filter(|event| event["event"] == "tool_call")
        .collect();
    assert_eq!(calls.len(), 3, "two calls ran and the third was refused");
    assert_eq!(calls[2]["is_error"], true);
}

/// A first attempt that writes its draft and then thinks for a long time, and a
/// second attempt that lowers `mean` properly.
fn slow_then_good(lowering: &Lowering) {
    lowering.playbook(
        "csvstats",
        "mean.1.jsonl",
        concat!(
            r#"{"tool": "write_soil", "args": {"soil": "mean xs = ?body\n", "decisions_applied": []}}"#,
            "\n",
            r#"{"sleep_ms": 60000}"#,
            "\n"
        ),
    );
}

#[test]
fn a_spec_edit_mid_flight_invalidates_the_job_which_is_requeued_and_lowers_green() {
    let lowering = Lowering::new(Root::examples(), "");
    slow_then_good(&lowering);
    let child = lowering.spawn_lower(&["csvstats::mean"]);
    lowering.wait_for_event("csvstats", "the first draft", |event| {
        event["event"] == "tool_call" && event["name"] == "write_soil"
    });
    lowering.root.edit(
        "csvstats/mean.tr",
        "The arithmetic mean of a non-empty list of finite numbers.",
        "The arithmetic mean of a non-empty list of finite numbers (any order).",
    );
    let run = finish(child);
    assert_eq!(run.code, Some(0), "{run:?}");
    let (events, _) = lower_output(&run);
    assert_eq!(
        states_of(&events, "csvstats::mean"),
        [
            "queued",
            "started",
            "agent",
            "invalidated",
            "queued",
            "started",
            "agent",
            "gate",
            "green"
        ]
    );
    let invalidated = events
        .iter()
        .find(|e| e["state"] == "invalidated")
        .expect("invalidated");
    assert!(
        invalidated["detail"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("spec.md")),
        "{invalidated}"
    );
    assert_eq!(events[4]["detail"]["attempt"], 2);
    assert_eq!(lowering.root.statuses(true)["csvstats::mean"], "green");
}

#[test]
fn a_callee_edit_mid_flight_invalidates_the_job() {
    let lowering = Lowering::new(Root::examples(), "");
    slow_then_good(&lowering);
    let child = lowering.spawn_lower(&["csvstats::mean"]);
    lowering.wait_for_event("csvstats", "the first draft", |event| {
        event["event"] == "tool_call" && event["name"] == "write_soil"
    });
    // A callee's clause changes what the agent may rely on.
    lowering.root.edit(
        "csvstats/sort.tr",
        "sorted: sorted result\n",
        "sorted: sorted result\nlength: len result == len xs\n",
    );
    let run = finish(child);
    let (events, _) = lower_output(&run);
    let invalidated = events
        .iter()
        .find(|e| e["state"] == "invalidated")
        .expect("invalidated");
    assert!(
        invalidated["detail"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("callable/sort.md")),
        "{invalidated}"
    );
    assert_eq!(
        states_of(&events, "csvstats::mean")
            .last()
            .map(String::as_str),
        Some("green"),
        "{events:?}"
    );
}

#[test]
fn status_and_check_answer_while_an_agent_thinks() {
    let lowering = Lowering::new(Root::examples(), "");
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        concat!(r#"{"sleep_ms": 60000}"#, "\n"),
    );
    let child = lowering.spawn_lower(&["csvstats::mean"]);
    support::wait_until("the job runs", || {
        lowering.run(&["jobs", "--json"]).json()["running"]["def"] == "csvstats::mean"
    });
    // Both answer while the job is still running: neither waits on the agent.
    let status = lowering.run(&["status", "--json"]).ok().json();
    assert!(status["definitions"].is_array(), "{status}");
    lowering.run(&["check"]).ok();
    let jobs = lowering.run(&["jobs", "--json"]).ok().json();
    assert_eq!(
        jobs["running"]["def"], "csvstats::mean",
        "still running: {jobs}"
    );
    // Stopping the daemon ends the job with an outcome, and the client says so.
    lowering.run(&["daemon", "stop"]).ok();
    let run = finish(child);
    assert_eq!(run.code, Some(1), "a cancelled job is no success: {run:?}");
    let (events, summary) = lower_output(&run);
    assert_eq!(
        states_of(&events, "csvstats::mean"),
        ["queued", "started", "agent", "cancelled"]
    );
    assert_eq!(summary["outcomes"][0]["state"], "cancelled", "{summary}");
    let outcome = lowering
        .flog("csvstats")
        .into_iter()
        .rev()
        .find(|event| event["event"] == "outcome")
        .expect("an outcome in f.log");
    assert_eq!(outcome["outcome"], "cancelled", "{outcome}");
    assert_eq!(
        outcome["detail"]["errors"][0]["code"], "job-cancelled",
        "{outcome}"
    );
}

#[test]
fn a_stop_cancels_the_queued_jobs_too_and_no_follower_is_left_waiting() {
    let lowering = Lowering::new(Root::examples(), "");
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        concat!(r#"{"sleep_ms": 60000}"#, "\n"),
    );
    lowering.playbook(
        "csvstats",
        "median.jsonl",
        concat!(r#"{"sleep_ms": 60000}"#, "\n"),
    );
    // One at a time, so one is queued when the stop comes.
    let child = lowering.spawn_lower(&["csvstats::mean", "csvstats::median", "--jobs", "1"]);
    support::wait_until("a job runs", || {
        !lowering.run(&["jobs", "--json"]).json()["running"].is_null()
    });
    lowering.run(&["daemon", "stop"]).ok();
    let run = finish(child);
    assert_eq!(run.code, Some(1), "{run:?}");
    let (_, summary) = lower_output(&run);
    let outcomes: Vec<(String, String)> = summary["outcomes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            (
                o["detail"]["stage"].as_str().unwrap_or("?").to_owned(),
                o["state"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("queue".to_owned(), "cancelled".to_owned()),
            ("agent".to_owned(), "cancelled".to_owned())
        ],
        "the queued one is cancelled at once, the running one once it ended: {summary}"
    );
    let ended: Vec<Value> = lowering
        .flog("csvstats")
        .into_iter()
        .filter(|event| event["event"] == "outcome")
        .collect();
    assert_eq!(
        ended.len(),
        1,
        "only the job that started has an f.log outcome: {ended:?}"
    );
}

#[test]
fn a_green_draft_the_turn_cap_stopped_is_kept_and_the_cap_is_shown() {
    let lowering = Lowering::new(Root::examples(), "turns = 3\n");
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        concat!(
            r#"{"tool": "write_soil", "soil_file": "mean.soil", "args": {"decisions_applied": [{"scope": {"tag": "Project"}, "label": "total-order"}]}, "expect": {"is_error": false}}"#,
            "\n",
            r#"{"tool": "run_tests", "expect": {"is_error": false}}"#,
            "\n",
            r#"{"tool": "check_types", "expect": {"is_error": false}}"#,
            "\n",
            r#"{"tool": "check_types", "expect": {"is_error": true, "codes": ["job-cap-exceeded"]}}"#,
            "\n",
            r#"{"sleep_ms": 60000}"#,
            "\n",
        ),
    );
    let run = lowering.run(&["lower", "csvstats::mean"]);
    assert_eq!(run.code, Some(0), "the draft is green: {run:?}");
    assert!(
        run.stdout.contains(
            "csvstats::mean: green → csvstats/mean.soil (the agent was stopped by its turn cap; \
             its last draft passed the gate and was kept)"
        ) && run
            .stdout
            .contains("lowered 1: 1 green, 1 stopped by a cap"),
        "{run:?}"
    );
    assert_eq!(lowering.root.statuses(true)["csvstats::mean"], "green");
    let jobs = lowering.run(&["jobs"]).ok();
    assert!(
        jobs.stdout
            .lines()
            .any(|line| line.contains("csvstats::mean")
                && line.contains("green")
                && line.ends_with("stopped by its turn cap")),
        "{jobs:?}"
    );
    let listed = lowering.run(&["jobs", "--json"]).ok().json();
    assert_eq!(listed["finished"][0]["cap"], "turn", "{listed}");
}

#[test]
fn lowering_needs_the_daemon_and_a_readable_providers_file() {
    let lowering = Lowering::new(Root::examples(), "");
    let run = lowering.run(&["--no-daemon", "lower", "csvstats::mean"]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("error[job-needs-daemon]"), "{run:?}");
    let run = lowering.run(&["lower", "csvstats::nope"]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("error[unknown-definition]"), "{run:?}");
    let run = lowering.run(&["lower", "--provider", "other"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("error[config-providers]")
            && run.stderr.contains("no provider `other`"),
        "{run:?}"
    );
    std::fs::write(
        lowering.config.path().join("trellis/providers.toml"),
        "[providers.fixture\n",
    )
    .expect("write");
    let run = lowering.run(&["lower", "csvstats::mean"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("error[config-providers]") && run.stderr.contains("providers.toml"),
        "{run:?}"
    );
    // A definition without a playbook fails its job, and says which files were looked for.
    std::fs::write(
        lowering.config.path().join("trellis/providers.toml"),
        format!(
            "[providers.fixture]\nkind = \"scripted\"\nplaybooks = \"{}\"\n",
            lowering.playbooks.join("none").display()
        ),
    )
    .expect("write");
    let run = lowering.run(&["lower", "csvstats::mean"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.contains("error[job-provider-error]") && run.stdout.contains("no playbook"),
        "{run:?}"
    );
}

#[test]
fn a_triage_sweep_restamps_the_conforming_lowering_and_leaves_the_other_flagged() {
    let lowering = Lowering::new(
        Root::copy_of(&workspace().join("test-data/lowering/root")),
        "",
    );
    lowering.run(&["lower"]).ok();
    // The entry both mean and variance cite changes.
    lowering.root.edit(
        "_project.tr",
        "a statistic of an empty list is 0.0, never a panic",
        "a statistic of an empty list is 0.0, never a panic; a variance of one value is a panic",
    );
    let statuses = lowering.root.statuses(true);
    assert_eq!(statuses["stats::mean"], "decision-flagged", "{statuses:?}");
    assert_eq!(
        statuses["stats::variance"], "decision-flagged",
        "{statuses:?}"
    );
    let run = lowering.run(&["decisions", "triage", "empty-is-zero", "--json"]);
    assert_eq!(run.code, Some(1), "one lowering does not conform: {run:?}");
    let (events, _) = lower_output(&run);
    let outcome = |def: &str| {
        events
            .iter()
            .filter(|e| e["def"].as_str().is_some_and(|d| d.starts_with(def)))
            .filter_map(|e| e["state"].as_str())
            .next_back()
            .unwrap_or("?")
            .to_owned()
    };
    assert_eq!(outcome("stats::mean "), "conforms", "{events:?}");
    assert_eq!(outcome("stats::variance "), "nonconforming", "{events:?}");
    let statuses = lowering.root.statuses(true);
    assert_eq!(
        statuses["stats::mean"], "green",
        "the conforming edge is re-stamped"
    );
    assert_eq!(statuses["stats::variance"], "decision-flagged");
    // The verdict is beside the flag in status, and in f.log.
    let status = lowering.run(&["status"]).ok();
    assert!(
        status
            .stdout
            .contains("triage of `empty-is-zero`: nonconforming: variance returns 0.0"),
        "{status:?}"
    );
    let triage: Vec<Value> = lowering
        .flog("stats")
        .into_iter()
        .filter(|event| event["event"] == "triage")
        .collect();
    assert_eq!(triage.len(), 2, "{triage:?}");
    // The agent was shown the entry as it was and as it is.
    let shown = lowering.flog("stats");
    assert!(
        shown
            .iter()
            .any(|e| e["event"] == "tool_call" && e["name"] == "read_context")
    );
    let mean_lock = lock_json(&lowering.root, "stats/mean.lock");
    let variance_lock = lock_json(&lowering.root, "stats/variance.lock");
    assert_ne!(
        mean_lock["lowering"]["decisions"]["applied"][0]["hash"],
        variance_lock["lowering"]["decisions"]["applied"][0]["hash"],
        "only mean's edge moved to the entry's new hash"
    );
}

#[test]
fn the_cost_cap_stops_an_agent_whose_reported_cost_grows_past_it() {
    let lowering = Lowering::new(Root::examples(), "cost_usd = 0.5\n");
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        concat!(
            r#"{"cost_usd": 0.75}"#,
            "\n",
            r#"{"sleep_ms": 60000}"#,
            "\n"
        ),
    );
    let run = lowering.run(&["lower", "csvstats::mean", "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let (events, _) = lower_output(&run);
    let outcome = events.last().expect("an outcome");
    assert_eq!(outcome["state"], "failed", "{outcome}");
    assert_eq!(outcome["detail"]["errors"][0]["code"], "job-cap-exceeded");
    assert!(
        outcome["detail"]["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cost")),
        "{outcome}"
    );
    let result = lowering
        .flog("csvstats")
        .into_iter()
        .find(|event| event["event"] == "agent_result")
        .expect("agent_result");
    assert_eq!(result["cost_usd"], 0.75, "{result}");
}

#[test]
fn ask_human_ends_the_job_with_its_question_on_disk_and_in_f_log() {
    let lowering = Lowering::new(Root::examples(), "");
    lowering.playbook(
        "csvstats",
        "mean.jsonl",
        concat!(
            r#"{"tool": "read_context", "args": {"path": "spec.md"}}"#,
            "\n",
            r#"{"tool": "ask_human", "args": {"kind": {"tag": "Ambiguity"}, "question": "Is the mean of an empty list 0.0 or a panic?", "hole": {"tag": "None"}, "options": ["0.0", "a panic"]}, "expect": {"is_error": false}}"#,
            "\n",
            r#"{"sleep_ms": 60000}"#,
            "\n"
        ),
    );
    let run = lowering.run(&["lower", "csvstats::mean"]);
    assert_eq!(run.code, Some(1), "a question is not green: {run:?}");
    assert!(
        run.stdout
            .contains("csvstats::mean: question asked: see csvstats/mean.question.json"),
        "{run:?}"
    );
    let question: Value =
        serde_json::from_str(&lowering.root.read("csvstats/mean.question.json")).expect("JSON");
    assert_eq!(question["def"], "csvstats::mean");
    assert_eq!(question["options"], serde_json::json!(["0.0", "a panic"]));
    assert!(!lowering.root.path("csvstats/mean.soil").exists());
    let logged = lowering
        .flog("csvstats")
        .into_iter()
        .find(|event| event["event"] == "question")
        .expect("a question event");
    assert_eq!(logged["question"]["question"], question["question"]);
}

/// A first job that asks whether an empty list may be passed, and a second that
/// lowers `mean` (the bundle then shows the answer in `spec.md`).
fn asks_then_lowers(lowering: &Lowering) {
    lowering.playbook(
        "csvstats",
        "mean.1.jsonl",
        concat!(
            r#"{"tool": "ask_human", "args": {"kind": {"tag": "Ambiguity"}, "question": "May mean be called on a list with NaN in it?", "hole": {"tag": "None"}, "options": ["no: the finite requires rules it out", "yes"]}, "expect": {"is_error": false}}"#,
            "\n"
        ),
    );
}

#[test]
fn a_question_answered_with_trellis_answer_writes_back_requeues_and_lowers_green() {
    let lowering = Lowering::new(Root::examples(), "");
    asks_then_lowers(&lowering);
    let run = lowering.run(&["lower", "csvstats::mean"]);
    assert!(run.stdout.contains("csvstats::mean: question"), "{run:?}");
    let before = lowering.root.read("csvstats/mean.tr");
    let status = lowering.run(&["status"]);
    assert!(
        status
            .stdout
            .contains("May mean be called on a list with NaN in it?"),
        "{status:?}"
    );
    let answered = lowering.run(&[
        "answer",
        "csvstats::mean",
        "--text",
        "No: `finite` rules NaN out.",
    ]);
    assert_eq!(answered.code, Some(0), "{answered:?}");
    assert!(
        answered
            .stdout
            .contains("is lowered again with the answer in its spec, by provider `fixture`")
            && answered
                .stdout
                .contains("csvstats::mean: green → csvstats/mean.soil")
            && answered.stdout.contains("lowered 1: 1 green"),
        "answer follows the re-run to its outcome: {answered:?}"
    );
    // The answer is a visible spec diff: a Clarifications Q/A pair, appended.
    let after = lowering.root.read("csvstats/mean.tr");
    assert!(after.starts_with(&before), "every old byte stays");
    let added = &after[before.len()..];
    assert!(added.contains("## Clarifications"), "{added}");
    assert!(
        added.contains("May mean be called on a list with NaN in it?"),
        "{added}"
    );
    assert!(added.contains("No: `finite` rules NaN out."), "{added}");
    assert!(!lowering.root.path("csvstats/mean.question.json").exists());
    // The re-queued job runs the second playbook and lowers green.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let jobs = lowering.run(&["jobs", "--json"]).ok().json();
        let finished = jobs["finished"].as_array().cloned().unwrap_or_default();
        if finished.len() == 2 {
            assert_eq!(finished[1]["outcome"], "green", "{jobs}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the re-queued job did not finish: {jobs}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(lowering.root.statuses(true)["csvstats::mean"], "green");
}

#[test]
fn an_answer_whose_rerun_fails_exits_non_zero() {
    let lowering = Lowering::new(Root::examples(), "");
    asks_then_lowers(&lowering);
    lowering.playbook(
        "csvstats",
        "mean.2.jsonl",
        concat!(r#"{"say": "no draft this time"}"#, "\n"),
    );
    lowering.run(&["lower", "csvstats::mean"]);
    let answered = lowering.run(&["answer", "csvstats::mean", "--text", "No."]);
    assert_eq!(answered.code, Some(1), "{answered:?}");
    assert!(
        answered.stdout.contains("csvstats::mean: failed")
            && answered.stdout.contains("error[no-draft]"),
        "{answered:?}"
    );
    assert!(
        !lowering.root.path("csvstats/mean.question.json").exists(),
        "the answer itself was written"
    );
}

#[test]
fn an_answer_after_the_asking_daemon_stopped_does_not_guess_a_provider() {
    let lowering = Lowering::new(Root::examples(), "");
    asks_then_lowers(&lowering);
    lowering.run(&["lower", "csvstats::mean"]);
    lowering.run(&["daemon", "stop"]).ok();
    let answered = lowering.run(&["answer", "csvstats::mean", "--text", "No."]);
    assert_eq!(answered.code, Some(0), "{answered:?}");
    assert!(
        answered.stdout.contains(
            "lower csvstats::mean again with the answer in its spec: trellis lower csvstats::mean \
             (this daemon did not run the job that asked, so it does not guess its provider)"
        ),
        "{answered:?}"
    );
    let jobs = lowering.run(&["jobs", "--json"]).ok().json();
    assert!(
        jobs["pending"] == json!([]) && jobs["running"].is_null() && jobs["finished"] == json!([]),
        "nothing was queued: {jobs}"
    );
}

#[test]
fn an_answer_to_a_question_whose_spec_changed_is_refused_with_a_diff() {
    let lowering = Lowering::new(Root::examples(), "");
    asks_then_lowers(&lowering);
    lowering.run(&["lower", "csvstats::mean"]);
    lowering.root.edit(
        "csvstats/mean.tr",
        "The arithmetic mean of a non-empty list of finite numbers.",
        "The arithmetic mean of a non-empty list of finite numbers, NaN excluded.",
    );
    let run = lowering.run(&["answer", "csvstats::mean", "--text", "No."]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("error[job-stale-question]"), "{run:?}");
    assert!(
        run.stderr
            .contains("+The arithmetic mean of a non-empty list of finite numbers, NaN excluded."),
        "the refusal shows the diff: {run:?}"
    );
    assert!(
        lowering.root.path("csvstats/mean.question.json").exists(),
        "nothing was answered"
    );
}
