//! The daemon cannot be frozen by a client: one that asks for `test` and never
//! reads its progress does not keep `status` from another client, and `daemon
//! stop` says "stopped" only once the process is gone.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{Root, is_alive};

/// A definition whose test block has enough rows that its progress alone fills
/// a socket buffer many times over.
fn root_with_a_long_test() -> Root {
    let root = Root::examples();
    std::fs::create_dir(root.path("chatty")).expect("mkdir");
    let mut spec = String::from(
        "---\nname: same\n---\n\n# same\n\nGives back its argument.\n\n```soil-sig\nsame : (x : I64) -> I64\n```\n\n```test many\n",
    );
    for n in 0..6000 {
        spec.push_str(&format!("same({n}) -> {n}\n"));
    }
    spec.push_str("```\n");
    root.write("chatty/same.tr", &spec);
    root.write("chatty/same.soil", "same x = x\n");
    root.run(&["--no-daemon", "adopt", "chatty::same"]).ok();
    root
}

#[test]
fn a_client_that_never_reads_its_test_progress_does_not_stall_status() {
    let root = root_with_a_long_test().start_daemon();
    let mut silent = UnixStream::connect(root.socket()).expect("connect");
    silent
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test\",\"params\":{\"def\":\"chatty::same\"}}\n",
        )
        .expect("send test");
    // Give the run time to fill the socket buffer and block, if it can.
    std::thread::sleep(Duration::from_millis(500));
    let mut status = root
        .command(&["status", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start status");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(exit) = status.try_wait().expect("wait") {
            assert!(exit.success(), "status failed: {exit:?}");
            break;
        }
        if Instant::now() > deadline {
            let _ = status.kill();
            let _ = status.wait();
            panic!("status got no answer: a client that does not read froze the daemon");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(silent);
}

#[test]
fn stop_returns_once_the_daemon_has_exited() {
    let root = Root::examples();
    root.run(&["status", "--json"]).ok();
    let pid = root.daemon_pid().expect("a daemon");
    let stopped = root.run(&["daemon", "stop"]).ok();
    assert!(
        stopped.stdout.starts_with("stopped the daemon"),
        "{stopped:?}"
    );
    assert!(
        !is_alive(pid),
        "`daemon stop` returned while {pid} still runs"
    );
}
