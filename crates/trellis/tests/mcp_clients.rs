//! Conformance with the official MCP clients: the Python SDK (`mcp==2.3.0`, once
//! per protocol generation) and the TypeScript SDK (`@modelcontextprotocol/sdk`
//! 1.32.2), pinned in test-data/clients.toml, each start `trellis _mcp --job ID` on a job over a copy of
//! `examples/`, list the tools (exactly seven, schemas as `tools_list.json`) and
//! run `test-data/mcp/script.json`: every tool, with the error paths. The SDKs
//! are installed by `cargo xtask provision` (run by `cargo xtask test`); a
//! missing SDK fails the test naming that command.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use support::{Root, TRELLIS, TempDir, workspace};

/// Creates a job for `def` in the root's daemon: (id, socket).
pub fn create_job(root: &Root, def: &str) -> (String, String) {
    let record = root
        .run(&["_job", "create", def, "--budget", "20000", "--json"])
        .ok()
        .json();
    (
        record["job"].as_str().expect("a job id").to_owned(),
        record["socket"].as_str().expect("a socket").to_owned(),
    )
}

/// A pinned client's install directory, joined with `relative`.
fn cache(client: &str, relative: &str) -> PathBuf {
    xtask::clients::require(client).join(relative)
}

/// What the script's steps must print, derived from each step's `expect`.
fn expected_steps() -> String {
    let script: Value =
        serde_json::from_str(&support::workspace_file("test-data/mcp/script.json")).unwrap();
    let successes = [
        "Dir",
        "File",
        "title",
        "None",
        "canonical",
        "all-pass",
        "asked",
    ];
    script
        .as_array()
        .unwrap()
        .iter()
        .map(|step| {
            let expect = step["expect"].as_str().unwrap();
            let ok = successes.contains(&expect) || expect.starts_with("holes:");
            format!(
                "step {} {} {expect}\n",
                step["tool"].as_str().unwrap(),
                if ok { "ok" } else { "error" }
            )
        })
        .collect()
}

fn header(protocol: Option<&str>) -> String {
    let protocol = protocol.map_or(String::new(), |p| format!("protocol {p}\n"));
    format!(
        "{protocol}server trellis {}\ntools read_context,check_types,check_refinements,run_tests,write_soil,read_spec,ask_human\nschemas equal\n",
        env!("CARGO_PKG_VERSION")
    )
}

fn run_client(mut command: Command) -> String {
    let output = command.output().expect("start the MCP client");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the client failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn python(mode: &str, expected_protocol: &str) {
    let sdk = cache("mcp-python", "mcp");
    let root = Root::examples_with_daemon();
    let (job, socket) = create_job(&root, "csvstats::median");
    let mut command = Command::new("python3");
    command
        .arg(workspace().join("test-data/mcp/client.py"))
        .args([mode, TRELLIS])
        .arg(&root.root)
        .args([&socket, &job])
        .env("PYTHONPATH", sdk.parent().unwrap());
    let stdout = run_client(command);
    assert_eq!(stdout, header(Some(expected_protocol)) + &expected_steps());
    // ask_human persisted the question and ended the job.
    let question: Value =
        serde_json::from_str(&root.read("csvstats/median.question.json")).unwrap();
    assert_eq!(question["def"], "csvstats::median");
    assert_eq!(question["kind"]["tag"], "Ambiguity");
    assert!(
        question["asked_against"]["formal"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert!(question["bundle"].as_str().unwrap().starts_with("sha256:"));
    let record = root.run(&["_job", "inspect", &job]).ok().json();
    assert_eq!(record["state"]["tag"], "Ended", "{record}");
    // Every tool call is a tool_call event in the module's f.log.
    let log = root.read("csvstats/f.log");
    let events: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let script_steps = expected_steps().lines().count();
    assert_eq!(events.len(), script_steps, "{log}");
    for event in &events {
        assert_eq!(event["event"], "tool_call");
        assert!(event["duration_ms"].is_number());
        assert!(event["result"].as_str().unwrap().starts_with("sha256:"));
    }
}

#[test]
fn python_sdk_on_the_2026_revision() {
    python("auto", "2026-07-28");
}

#[test]
fn python_sdk_on_the_initialize_handshake() {
    python("legacy", "2025-11-25");
}

#[test]
fn typescript_sdk_on_the_initialize_handshake() {
    let modules = cache("mcp-typescript", "node_modules/@modelcontextprotocol/sdk");
    let root = Root::examples_with_daemon();
    let (job, socket) = create_job(&root, "csvstats::median");
    // ES modules resolve packages next to the script, so it runs from a
    // directory whose node_modules is the cache's.
    let scratch = TempDir::new("node");
    std::fs::copy(
        workspace().join("test-data/mcp/client.mjs"),
        scratch.path().join("client.mjs"),
    )
    .unwrap();
    let node_modules = modules.parent().unwrap().parent().unwrap();
    std::os::unix::fs::symlink(node_modules, scratch.path().join("node_modules")).unwrap();
    let mut command = Command::new("node");
    command
        .arg(scratch.path().join("client.mjs"))
        .arg(workspace().join("test-data/mcp"))
        .arg(TRELLIS)
        .arg(&root.root)
        .args([&socket, &job]);
    let stdout = run_client(command);
    assert_eq!(stdout, header(None) + &expected_steps());
}
