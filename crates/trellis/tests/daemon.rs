//! The daemon seen through the binary: round trips over the socket, concurrent
//! clients, auto-spawn, recovery from a killed daemon, the restart of a daemon
//! that reports another version, its change feed, and the answers a one-shot
//! command leaves for the next.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::{Value, json};
use support::{Root, count_daemons_for, is_alive, wait_until};
use trellis_rpc::{Answer, Client, Handler, Notifier, Server, ServerConfig};

#[test]
fn the_first_command_spawns_the_daemon_and_stop_ends_it() {
    let root = Root::examples();
    assert!(!root.socket().exists());
    let none = root.run(&["daemon", "status"]).ok();
    assert!(none.stdout.starts_with("no daemon is running"), "{none:?}");

    root.run(&["status", "--json"]).ok();
    assert!(root.socket().exists(), "no socket after the first command");
    let pid = root.daemon_pid().expect("daemon status reports a pid");
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    // The next command reuses it.
    root.run(&["status", "--json"]).ok();
    assert_eq!(root.daemon_pid(), Some(pid));

    let stopped = root.run(&["daemon", "stop"]).ok();
    assert!(
        stopped.stdout.starts_with("stopped the daemon"),
        "{stopped:?}"
    );
    wait_until("the daemon exits", || !is_alive(pid));
    assert!(!root.socket().exists(), "the socket outlived its daemon");
}

#[test]
fn a_socket_round_trip_answers_with_timings() {
    let root = Root::examples();
    root.run(&["status", "--json"]).ok();
    let mut client = Client::connect(&root.socket()).expect("connect to the spawned daemon");
    let answer = client.call("check", json!({ "def": null })).expect("check");
    assert_eq!(answer["errors"], json!([]));
    assert!(
        answer["checked"].as_u64().is_some_and(|n| n > 0),
        "{answer}"
    );
    for field in ["refresh_us", "queries_us", "files_changed", "ahead_us"] {
        assert!(
            answer["timings"][field].is_u64(),
            "no timings.{field}: {answer}"
        );
    }
    let error = client
        .call("no.such.method", json!({}))
        .expect_err("unknown method");
    assert!(error.to_string().contains("no.such.method"), "{error}");
}

#[test]
fn sixteen_concurrent_clients_get_identical_answers() {
    let root = Arc::new(Root::examples());
    root.run(&["daemon", "status"]).ok();
    let expected = root.run(&["--no-daemon", "status", "--json"]).ok().stdout;
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let root = Arc::clone(&root);
            std::thread::spawn(move || root.run(&["status", "--json"]))
        })
        .collect();
    let runs: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().expect("client thread"))
        .collect();
    for run in &runs {
        assert_eq!(run.code, Some(0), "{run:?}");
        assert_eq!(run.stdout, expected);
    }
    // However the spawns raced, one daemon serves the root.
    assert!(root.daemon_pid().is_some());
    // Daemons that lost the race to bind exit on their own; one stays.
    wait_until("exactly one daemon serves the root", || {
        count_daemons_for(&root) == 1
    });
}

/// The change feed (design §9.6) through the binary: an edit that keeps a file's
/// size and lands within one mtime tick (which a stat walk can miss), a module
/// directory created and then removed, all seen by the next command with no wait.
#[test]
fn the_daemon_sees_every_edit_the_change_feed_reports() {
    let root = Root::examples();
    let status = |name: &str| support::rows_by_name(&root.status(true)).get(name).cloned();
    assert_eq!(status("csvstats::median").as_deref(), Some("green"));

    // Same length, same second: `1` → `3` in the parity test of the body.
    let body = root.read("csvstats/median.soil");
    let edited = body.replacen("n % 2 == 1", "n % 2 == 3", 1);
    assert_eq!(edited.len(), body.len());
    root.write("csvstats/median.soil", &edited);
    let after_edit = status("csvstats::median");
    assert_ne!(after_edit.as_deref(), Some("green"), "the edit went unseen");
    assert_eq!(
        after_edit,
        support::rows_by_name(&root.status(false))
            .get("csvstats::median")
            .cloned(),
        "the daemon and a fresh process disagree"
    );

    // A new module directory: its definition appears, then disappears with it.
    std::fs::create_dir(root.path("extra")).expect("mkdir");
    root.write(
        "extra/twice.tr",
        "---\nname: twice\n---\n\n# twice\n\n```soil-sig\ntwice : (x : I64) -> I64\n```\n",
    );
    root.write("extra/twice.soil", "twice x = x + x\n");
    assert!(status("extra::twice").is_some(), "a new module went unseen");
    std::fs::remove_dir_all(root.path("extra")).expect("rmdir");
    assert_eq!(
        status("extra::twice"),
        None,
        "a removed module is still listed"
    );
}

/// The daemon starts on an edit when the change feed reports it (design
/// §7.10): the next request takes the answers computed ahead of it, reports
/// the edited file as changed and the time worked ahead, and answers as a
/// fresh process does.
#[test]
fn an_edit_is_answered_ahead_of_the_request_that_asks() {
    let root = Root::examples();
    root.run(&["check"]).ok();
    root.run(&["status"]).ok();
    let mut client = Client::connect(&root.socket()).expect("connect to the spawned daemon");
    let body = root.read("csvstats/median.soil");
    let mut taken = Vec::new();
    // Each edit gives the daemon a while to answer ahead: on a loaded machine
    // one edit may still be asked before; ten in a row would not be.
    for parity in 2..12 {
        root.write(
            "csvstats/median.soil",
            &body.replacen("n % 2 == 1", &format!("n % 2 == {parity}"), 1),
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
        let answer = client.call("status", json!({})).expect("status");
        assert_eq!(answer["timings"]["files_changed"], json!(1), "{answer}");
        let ahead = answer["timings"]["answered_ahead"]
            .as_u64()
            .expect("answered_ahead");
        taken.push(ahead);
        if ahead > 0 {
            // The work done ahead is the request's own, timed apart.
            let worked = answer["timings"]["ahead_us"].as_u64();
            assert!(worked.is_some_and(|us| us > 0), "{answer}");
            break;
        }
    }
    assert!(
        taken.iter().any(|&n| n > 0),
        "nothing answered ahead: {taken:?}"
    );
    assert_eq!(
        root.status(true),
        root.status(false),
        "the daemon and a fresh process disagree"
    );
}

#[test]
fn a_killed_daemon_leaves_a_socket_the_next_command_recovers_from() {
    let root = Root::examples();
    root.run(&["status", "--json"]).ok();
    let pid = root.daemon_pid().expect("pid");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    wait_until("the daemon dies", || !is_alive(pid));
    assert!(
        root.socket().exists(),
        "kill -9 must leave the socket file behind"
    );

    let after = root.run(&["status", "--json"]).ok();
    assert!(after.json()["definitions"].is_array());
    let new_pid = root.daemon_pid().expect("a new daemon");
    assert_ne!(new_pid, pid);
}

/// A stand-in daemon on the root's socket that speaks the framing but reports
/// another version. The real client must retire it with `rpc.shutdown` (which the
/// server answers itself) and spawn the real daemon, never sending it a command.
#[test]
fn a_daemon_of_another_version_is_stopped_and_replaced() {
    struct StandIn {
        commands: AtomicUsize,
    }
    impl Handler for StandIn {
        fn handle(&self, _: &str, _: Value, _: &mut Notifier<'_>) -> Answer {
            self.commands.fetch_add(1, Ordering::SeqCst);
            Ok(json!({ "definitions": [] }))
        }
    }
    let root = Root::examples();
    let socket = root.socket();
    let server =
        Server::bind(&socket, ServerConfig::new("0.0.0-another-build")).expect("bind the stand-in");
    let handler = Arc::new(StandIn {
        commands: AtomicUsize::new(0),
    });
    let served = Arc::new(AtomicBool::new(false));
    let thread = {
        let handler = Arc::clone(&handler);
        let served = Arc::clone(&served);
        std::thread::spawn(move || {
            let result = server.serve(handler);
            served.store(true, Ordering::SeqCst);
            result
        })
    };
    // The stand-in answers the handshake with its own version.
    let mut probe = Client::connect(&socket).expect("connect to the stand-in");
    assert!(matches!(
        probe.hello("0.0.0-another-build"),
        Ok(trellis_rpc::HelloOutcome::Match)
    ));
    drop(probe);

    let run = root.run(&["status", "--json"]).ok();
    assert!(
        run.json()["definitions"]
            .as_array()
            .is_some_and(|rows| !rows.is_empty()),
        "{run:?}"
    );
    thread
        .join()
        .expect("stand-in thread")
        .expect("the stand-in stopped cleanly");
    assert!(served.load(Ordering::SeqCst));
    assert_eq!(
        handler.commands.load(Ordering::SeqCst),
        0,
        "a command reached the stale daemon"
    );
    let status = root.run(&["daemon", "status"]).ok();
    assert!(
        status
            .stdout
            .contains(&format!(", {}+", env!("CARGO_PKG_VERSION"))),
        "{status:?}"
    );
}

/// Several roots whose first commands all arrive at once, from several clients
/// each: every command must be answered, and each root end up with one daemon.
#[test]
fn simultaneous_first_commands_on_many_roots_all_get_answers() {
    for _round in 0..3 {
        let roots: Vec<Arc<Root>> = (0..4).map(|_| Arc::new(Root::examples())).collect();
        let threads: Vec<_> = roots
            .iter()
            .flat_map(|root| (0..4).map(move |_| Arc::clone(root)))
            .map(|root| std::thread::spawn(move || root.run(&["status", "--json"])))
            .collect();
        for thread in threads {
            let run = thread.join().expect("client thread");
            assert_eq!(run.code, Some(0), "{run:?}");
        }
        for root in &roots {
            wait_until("one daemon per root", || count_daemons_for(root) == 1);
            assert!(
                root.daemon_pid().is_some(),
                "the root's socket leads to no daemon"
            );
        }
    }
}

/// Params of the wrong type are `-32602 invalid params`, not quietly read as
/// absent (`{"def": 17}` checked every definition).
#[test]
fn wrongly_typed_params_are_invalid_params() {
    let root = Root::examples_with_daemon();
    let mut client = Client::connect(&root.socket()).expect("connect");
    for (method, params) in [
        ("check", json!({ "def": 17 })),
        ("check", json!({ "definition": "csvstats::median" })),
        ("check", json!([1, 2])),
        ("test", json!({ "def": ["csvstats::median"] })),
        ("adopt", json!({ "cite": "project:floats" })),
        ("review", json!({})),
        ("decisions.editorial", json!({ "label": 3 })),
        ("status", json!({ "json": true })),
    ] {
        match client.call(method, params.clone()) {
            Err(trellis_rpc::CallError::Rpc(error)) => assert_eq!(
                error.kind(),
                Some(trellis_rpc::ErrorCode::InvalidParams),
                "{method} {params}: {error}"
            ),
            other => panic!("{method} {params}: expected invalid params, got {other:?}"),
        }
    }
    // Well-typed params still work.
    let answer = client
        .call("check", json!({ "def": "csvstats::median" }))
        .expect("check");
    assert_eq!(answer["errors"], json!([]));
}

/// A one-shot `check` stores the status beside it once its answer is out
/// (design §7.16): the `status --no-daemon` after it finds both stored, and
/// what it answers is what a cold start answers.
#[test]
fn a_one_shot_check_leaves_the_status_stored_for_the_next_one_shot() {
    let root = Root::examples();
    let store = ".trellis/cache/answers.json";
    root.run(&["--no-daemon", "check"]).ok();
    let stored = root.read(store);
    let body: Value = serde_json::from_str(stored.lines().nth(1).expect("a body line"))
        .expect("the body is JSON");
    assert!(body["check"].is_object(), "the check is stored: {body:#}");
    assert!(
        body["status"].is_array(),
        "the status is stored beside it: {body:#}"
    );
    let from_store = root.status(false);
    std::fs::remove_file(root.path(store)).expect("drop the store");
    assert_eq!(
        from_store,
        root.status(false),
        "a cold start answers the same"
    );
}
