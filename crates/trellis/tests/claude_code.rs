//! The claude-code provider end to end (design §4.9.1): `trellis lower` through
//! the root's daemon, the pinned Claude Code CLI (test-data/clients.toml, installed
//! by `cargo xtask provision`; a missing install fails these tests) inside the
//! bubblewrap jail, driven by the scripted model endpoint (`endpoint/`) and
//! reaching its job only through `trellis _mcp` and the job's own socket.
//! Stand-in CLIs (shell scripts, run in the same jail) show how a broken CLI
//! fails its job, and probe the jail from inside. `TRELLIS_LIVE=1` adds one
//! lowering against the real service (never in CI).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod endpoint;
mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use endpoint::{Endpoint, Turn};
use serde_json::{Value, json};
use support::{Root, Run, TempDir, workspace_file};

/// The pinned CLI, as `cargo xtask provision` installs it; the jail it runs in
/// needs bubblewrap, pinned beside it.
fn claude_cli() -> PathBuf {
    xtask::clients::require("bubblewrap");
    xtask::clients::require("claude-code").join("node_modules/.bin/claude")
}

/// The seven tools as the CLI offers them, sorted by name.
const SEVEN: [&str; 7] = [
    "mcp__trellis__ask_human",
    "mcp__trellis__check_refinements",
    "mcp__trellis__check_types",
    "mcp__trellis__read_context",
    "mcp__trellis__read_spec",
    "mcp__trellis__run_tests",
    "mcp__trellis__write_soil",
];

/// A claude-code provider table pointing `command` at the scripted endpoint.
fn provider(name: &str, command: &Path, endpoint: &str, extra: &str) -> String {
    format!(
        "[providers.{name}]\nkind = \"claude-code\"\ncommand = \"{}\"\nmodel = \"claude-sonnet-4-5\"\n\
         pass_env = []\nenv = {{ ANTHROPIC_BASE_URL = \"{endpoint}\", ANTHROPIC_API_KEY = \"sk-scripted\" }}\n{extra}\n",
        command.display()
    )
}

/// A root with a daemon and a providers.toml of its own.
struct Harness {
    root: Root,
    config: TempDir,
}

impl Harness {
    fn new(root: Root, providers: &str) -> Harness {
        Harness::with_daemon_env(root, providers, &[])
    }

    fn with_daemon_env(root: Root, providers: &str, env: &[(&str, &str)]) -> Harness {
        let config = TempDir::new("cfg");
        let file = config.path().join("trellis/providers.toml");
        std::fs::create_dir_all(file.parent().expect("parent")).expect("config dir");
        std::fs::write(&file, providers).expect("providers.toml");
        Harness {
            root: root.start_daemon_with(env),
            config,
        }
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = self.root.command(args);
        command.env("XDG_CONFIG_HOME", self.config.path());
        command
    }

    fn run(&self, args: &[&str]) -> Run {
        finish(
            self.command(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run trellis"),
        )
    }

    /// `trellis lower --json ARGS`, waited for: (events, summary, the run).
    fn lower(&self, args: &[&str]) -> (Vec<Value>, Run) {
        let run = finish(self.spawn_lower(args));
        (events_of(&run), run)
    }

    fn spawn_lower(&self, args: &[&str]) -> Child {
        let mut all = vec!["lower", "--json"];
        all.extend_from_slice(args);
        self.command(&all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn trellis lower")
    }

    /// A stand-in CLI: a shell script in a directory of its own (which the jail
    /// binds read-only as the CLI's installation).
    fn script(&self, name: &str, body: &str) -> PathBuf {
        let dir = self.config.path().join("clis").join(name);
        std::fs::create_dir_all(&dir).expect("script dir");
        let path = dir.join("claude");
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    fn flog(&self, module: &str) -> Vec<Value> {
        std::fs::read_to_string(self.root.path(&format!("{module}/f.log")))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("an f.log line is JSON"))
            .collect()
    }

    /// The last f.log event of `kind` in `module`.
    fn last_event(&self, module: &str, kind: &str) -> Value {
        self.flog(module)
            .into_iter()
            .rev()
            .find(|event| event["event"] == kind)
            .unwrap_or_else(|| panic!("no {kind} event in {module}/f.log"))
    }
}

fn finish(child: Child) -> Run {
    Run::from(child.wait_with_output().expect("wait for trellis"))
}

/// The job events `trellis lower --json` printed (every line but the summary).
fn events_of(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|value| value.get("summary").is_none())
        .collect()
}

fn states(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|event| event["state"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// The codes and messages of an outcome event's errors.
fn errors_of(event: &Value) -> Vec<(String, String)> {
    event["detail"]["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|error| {
            (
                error["code"].as_str().unwrap_or("?").to_owned(),
                error["message"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn lock_json(root: &Root, relative: &str) -> Value {
    serde_json::from_str(&root.read(relative)).expect("a lock is JSON")
}

/// The tool names a model request offered.
fn offered(request: &Value) -> Vec<String> {
    request["body"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

/// The text of the tool results in a request's last message.
fn last_tool_results(request: &Value) -> String {
    let messages = request["body"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    last["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| match &block["content"] {
            Value::String(text) => text.clone(),
            // A successful result is a list of text blocks.
            Value::Array(parts) => parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect(),
            other => other.to_string(),
        })
        .collect()
}

fn mean_soil() -> String {
    workspace_file("test-data/lowering/playbooks/csvstats/mean.soil")
}

fn write_mean(soil: &str, cite: bool) -> Turn {
    let applied = if cite {
        json!([{ "scope": { "tag": "Project" }, "label": "total-order" }])
    } else {
        json!([])
    };
    Turn::tool(
        "write_soil",
        json!({ "soil": soil, "decisions_applied": applied }),
    )
}

#[test]
fn mean_lowers_to_green_through_the_real_cli_in_the_jail() {
    let endpoint = Endpoint::start(vec![
        Turn::tool("read_context", json!({ "path": "" })),
        write_mean(&mean_soil(), true),
        Turn::tool("check_types", json!({})),
        Turn::tool("run_tests", json!({})),
        Turn::text("mean is lowered: every sandboxed case passes"),
    ]);
    let harness = Harness::new(
        Root::examples(),
        &provider("claude", &claude_cli(), &endpoint.base_url(), ""),
    );
    let (events, run) = harness.lower(&["csvstats::mean"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        states(&events),
        ["queued", "started", "agent", "gate", "green"]
    );
    let root = &harness.root;
    assert_eq!(root.read("csvstats/mean.soil"), mean_soil());
    let lock = lock_json(root, "csvstats/mean.lock");
    assert_eq!(lock["lowering"]["provenance"], "agent");
    assert_eq!(lock["lowering"]["provider"], "claude");
    assert_eq!(
        lock["lowering"]["model"], "claude-sonnet-4-5",
        "the model the CLI's init line reported"
    );
    assert_eq!(root.statuses(true)["csvstats::mean"], "green");

    // f.log: the CLI's own turn count, tokens and cost.
    let kinds: Vec<String> = harness
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
            "agent_result",
            "outcome"
        ]
    );
    let result = harness.last_event("csvstats", "agent_result");
    let requests = endpoint.model_requests();
    assert_eq!(requests.len(), 5, "one model request per turn");
    assert_eq!(result["turns"], 5, "{result}");
    let sum = |key: &str| -> u64 {
        requests
            .iter()
            .map(|r| r["answer"]["usage"][key].as_u64().expect("usage"))
            .sum()
    };
    assert_eq!(result["tokens_in"], sum("input_tokens"), "{result}");
    assert_eq!(result["tokens_out"], sum("output_tokens"), "{result}");
    assert!(
        result["cost_usd"].as_f64().is_some_and(|cost| cost > 0.0),
        "the CLI's own cost: {result}"
    );
    assert!(
        result["session_id"]
            .as_str()
            .is_some_and(|id| id.len() == 36),
        "{result}"
    );
    assert_eq!(result["model"], "claude-sonnet-4-5");
    assert_eq!(
        result["result"],
        "mean is lowered: every sandboxed case passes"
    );

    // What the CLI was offered and shown.
    for request in &requests {
        assert_eq!(offered(request), SEVEN, "exactly the seven Trellis tools");
        assert_eq!(request["body"]["model"], "claude-sonnet-4-5");
        assert_eq!(request["headers"]["x-api-key"], "sk-scripted");
    }
    let first = &requests[0]["body"];
    let system = first["system"].to_string();
    assert!(
        system.contains("# The Trellis lowering skill") && system.contains("at most 30 tool calls"),
        "the skill and the job's rules are in the system prompt: {system}"
    );
    assert!(
        first["messages"][0]
            .to_string()
            .contains("`csvstats::mean`"),
        "the task names the definition: {}",
        first["messages"][0]
    );
    assert!(
        last_tool_results(&requests[1]).contains("spec.md"),
        "the bundle listing came back as the first tool result"
    );
    let tested = last_tool_results(&requests[4]);
    assert!(
        tested.contains("basics#1") && tested.contains("Pass") && !tested.contains("Fail"),
        "run_tests' result was shown: {tested}"
    );
    assert_eq!(endpoint.turns_left(), 0);
}

#[test]
fn a_draft_that_fails_its_tests_is_fixed_on_the_next_turn() {
    let naive = "mean xs = fold (\\total x -> total + x) 0.0 xs / to_f64 (len xs)\n";
    let endpoint = Endpoint::start(vec![
        write_mean(naive, false),
        Turn::tool("run_tests", json!({})),
        write_mean(&mean_soil(), true),
        Turn::tool("run_tests", json!({})),
        Turn::text("fixed: the running mean stays within the bounds"),
    ]);
    let harness = Harness::new(
        Root::examples(),
        &provider("claude", &claude_cli(), &endpoint.base_url(), ""),
    );
    let (events, run) = harness.lower(&["csvstats::mean"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(states(&events).last().map(String::as_str), Some("green"));
    let requests = endpoint.model_requests();
    let first_run = last_tool_results(&requests[2]);
    assert!(
        first_run.contains("basics#4") && first_run.contains("\"Fail\""),
        "the agent was shown the failing case: {first_run}"
    );
    let second_run = last_tool_results(&requests[4]);
    assert!(
        !second_run.contains("\"Fail\"") && second_run.contains("Pass"),
        "{second_run}"
    );
    assert_eq!(harness.root.read("csvstats/mean.soil"), mean_soil());
    assert_eq!(harness.root.statuses(true)["csvstats::mean"], "green");
}

#[test]
fn ask_human_ends_the_job_as_a_question_and_ends_the_cli() {
    let endpoint = Endpoint::start(vec![
        Turn::tool("read_context", json!({ "path": "spec.md" })),
        Turn::tool(
            "ask_human",
            json!({ "kind": { "tag": "Ambiguity" }, "question": "Is the mean of one value that value?",
                    "hole": { "tag": "None" }, "options": ["yes"] }),
        ),
        // The CLI asks again after its tool returns; the daemon ends it.
        Turn::text("waiting for the human"),
    ]);
    let harness = Harness::new(
        Root::examples(),
        &provider("claude", &claude_cli(), &endpoint.base_url(), ""),
    );
    let (events, run) = harness.lower(&["csvstats::mean"]);
    assert_eq!(run.code, Some(1), "a question is not green: {run:?}");
    assert_eq!(
        states(&events),
        ["queued", "started", "agent", "gate", "question"]
    );
    let question: Value =
        serde_json::from_str(&harness.root.read("csvstats/mean.question.json")).expect("JSON");
    assert_eq!(question["question"], "Is the mean of one value that value?");
    assert!(!harness.root.path("csvstats/mean.soil").exists());
    let calls: Vec<String> = harness
        .flog("csvstats")
        .iter()
        .filter(|event| event["event"] == "tool_call")
        .map(|event| event["name"].as_str().unwrap_or("?").to_owned())
        .collect();
    assert_eq!(calls, ["read_context", "ask_human"]);
    assert_eq!(
        harness.last_event("csvstats", "outcome")["outcome"],
        "question"
    );
}

/// Every live process whose process group is `group`, with its command name.
fn group_members(group: u32) -> Vec<(u32, String)> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Some((comm, rest)) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let open = stat.find('(')?;
                let close = stat.rfind(')')?;
                Some((
                    stat[open + 1..close].to_owned(),
                    stat[close + 1..].to_owned(),
                ))
            })
        else {
            continue;
        };
        // After the command name: state, ppid, pgrp, …
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(group) {
            members.push((pid, comm));
        }
    }
    members
}

/// The running job's agent process group, once `trellis jobs` shows one.
fn running_group(harness: &Harness) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let jobs = harness.run(&["jobs", "--json"]).ok().json();
        if let Some(group) = jobs["running"]["group"].as_u64() {
            return u32::try_from(group).expect("a pid");
        }
        assert!(Instant::now() < deadline, "no running agent: {jobs}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_for(what: &str, seconds: u64, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_endpoint_that_never_answers_is_killed_at_the_wall_clock_cap_tree_and_all() {
    let endpoint = Endpoint::start(vec![Turn::Hang]);
    let harness = Harness::new(
        Root::examples(),
        &provider(
            "claude",
            &claude_cli(),
            &endpoint.base_url(),
            "wall_clock_s = 15",
        ),
    );
    let daemon = harness.root.daemon_pid().expect("a daemon");
    let lower = harness.spawn_lower(&["csvstats::mean"]);
    let group = running_group(&harness);
    wait_for("the CLI's model request", 30, || {
        endpoint
            .requests()
            .iter()
            .any(|request| request["answer"]["kind"] == "hang")
    });
    let members = group_members(group);
    let names: Vec<&str> = members.iter().map(|(_, name)| name.as_str()).collect();
    assert!(
        names.contains(&"bwrap")
            && names.iter().any(|name| name.starts_with("claude"))
            && names.contains(&"trellis"),
        "the jail, the CLI and its MCP server share the agent's group {group}: {members:?}"
    );
    let run = finish(lower);
    let events = events_of(&run);
    let outcome = events.last().expect("an outcome");
    assert_eq!(outcome["state"], "failed", "{events:?}");
    let codes: Vec<String> = errors_of(outcome)
        .into_iter()
        .map(|(code, _)| code)
        .collect();
    assert!(codes.contains(&"job-cap-exceeded".to_owned()), "{outcome}");
    wait_for("the agent's group to be gone", 10, || {
        group_members(group).is_empty()
    });
    assert_eq!(
        harness.root.daemon_pid(),
        Some(daemon),
        "the daemon serves on"
    );
    harness.run(&["status"]).ok();
}

#[test]
fn a_cli_that_is_missing_too_old_or_broken_fails_its_job_saying_which() {
    let harness = Harness::new(Root::examples(), "");
    let init = r#"{"type":"system","subtype":"init","session_id":"s","model":"m","mcp_servers":[{"name":"trellis","status":"connected"}],"tools":["mcp__trellis__read_context"]}"#;
    let version = "if [ \"$1\" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi\n";
    let cases: Vec<(&str, PathBuf, &str)> = vec![
        (
            "missing",
            PathBuf::from("/nonexistent/bin/claude"),
            "the claude-code CLI is not installed: /nonexistent/bin/claude does not exist",
        ),
        (
            "old",
            harness.script("old", "echo '2.0.14 (Claude Code)'\n"),
            "is 2.0.14; trellis needs 2.1.328 or newer",
        ),
        (
            "crash",
            harness.script(
                "crash",
                &format!("{version}echo '{init}'\necho boom >&2\nexit 3\n"),
            ),
            "without a result line; its stderr ends: boom",
        ),
        (
            "garbage",
            harness.script(
                "garbage",
                &format!("{version}echo '{init}'\necho 'this is not json'\nsleep 600\n"),
            ),
            "a line that is not stream-json: this is not json",
        ),
        (
            "mcp-failed",
            harness.script(
                "mcp-failed",
                &format!(
                    "{version}echo '{}'\nsleep 600\n",
                    init.replace("connected", "failed")
                ),
            ),
            "the MCP server trellis is failed",
        ),
        (
            "more-tools",
            harness.script(
                "more-tools",
                &format!(
                    "{version}echo '{}'\nsleep 600\n",
                    init.replace(r#""tools":["#, r#""tools":["Bash","#)
                ),
            ),
            "tools beyond the seven: Bash",
        ),
    ];
    let mut providers = String::new();
    for (name, command, _) in &cases {
        providers.push_str(&provider(
            name,
            command,
            "http://127.0.0.1:9",
            "wall_clock_s = 300",
        ));
    }
    providers.push_str(
        "[providers.unnamed]\nkind = \"claude-code\"\ncommand = \"claude-not-on-path\"\n",
    );
    std::fs::write(
        harness.config.path().join("trellis/providers.toml"),
        providers,
    )
    .expect("providers.toml");
    let mut cases: Vec<(&str, &str)> = cases
        .iter()
        .map(|(name, _, expected)| (*name, *expected))
        .collect();
    cases.push(("unnamed", "no `claude-not-on-path` on the client's PATH"));
    for (name, expected) in cases {
        let (events, run) = harness.lower(&["csvstats::mean", "--provider", name]);
        assert_eq!(run.code, Some(1), "{name}: {run:?}");
        let outcome = events.last().expect("an outcome");
        assert_eq!(outcome["state"], "failed", "{name}: {outcome}");
        let errors = errors_of(outcome);
        assert!(
            errors
                .iter()
                .any(|(code, message)| code == "job-provider-error" && message.contains(expected)),
            "{name}: expected job-provider-error saying {expected:?}, got {errors:?}"
        );
    }
    // A CLI that stops itself at its budget and says so on its last line: the
    // job hit its cost cap.
    let costly = harness.script(
        "costly",
        &format!(
            "{version}echo '{init}'
echo '{}'
exit 1
",
            r#"{"type":"result","subtype":"error_max_budget_usd","is_error":true,"num_turns":3,"total_cost_usd":5.25,"usage":{"input_tokens":9,"output_tokens":9}}"#
        ),
    );
    std::fs::write(
        harness.config.path().join("trellis/providers.toml"),
        provider("costly", &costly, "http://127.0.0.1:9", "cost_usd = 5.0"),
    )
    .expect("providers.toml");
    let (events, _) = harness.lower(&["csvstats::mean"]);
    let codes: Vec<String> = errors_of(events.last().expect("an outcome"))
        .into_iter()
        .map(|(code, _)| code)
        .collect();
    assert_eq!(codes, ["job-cap-exceeded", "no-draft"], "{events:?}");
    assert!(!harness.root.path("csvstats/mean.soil").exists());
}

/// A stand-in CLI that reports, as its result, what it sees from inside the jail.
const PROBE: &str = r#"if [ "$1" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi
writable=""
for target in / /usr /etc /tmp "$PROBE_ROOT" "$PROBE_EXE_DIR" "$(dirname "$0")"; do
  if touch "$target/.probe" 2>/dev/null; then writable="$writable $target"; fi
done
home_entries=$(ls -A "$HOME" | wc -l)
home_fs=$(grep " $HOME " /proc/mounts | cut -d' ' -f3)
touch "$HOME/.probe" && home_write=yes
touch "$PWD/probe" && scratch_write=yes
[ -e "$PROBE_ROOT" ] && root_seen=yes
[ -e "$PROBE_DAEMON_SOCKET" ] && socket_seen=yes
names=$(env | cut -d= -f1 | sort | tr '\n' ' ')
echo '{"type":"system","subtype":"init","session_id":"probe","model":"probe","mcp_servers":[{"name":"trellis","status":"connected"}],"tools":[]}'
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":0,"result":"writable=%s;home_entries=%s;home_fs=%s;home_write=%s;scratch_write=%s;root_seen=%s;socket_seen=%s;pid=%s;key=%s;env=%s"}\n' \
  "$writable" "$home_entries" "$home_fs" "$home_write" "$scratch_write" "$root_seen" "$socket_seen" "$$" "$ANTHROPIC_API_KEY" "$names"
"#;

fn findings(result: &str) -> std::collections::BTreeMap<String, String> {
    result
        .split(';')
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.trim().to_owned()))
        .collect()
}

#[test]
fn inside_the_jail_the_project_is_absent_home_is_empty_and_only_scratch_is_writable() {
    let harness = Harness::with_daemon_env(
        Root::examples(),
        "",
        &[("TRELLIS_PROBE_DAEMON_SECRET", "daemon-only")],
    );
    let probe = harness.script("probe", PROBE);
    let exe_dir = Path::new(support::TRELLIS).parent().expect("bin dir");
    let extra = format!(
        "pass_env = [\"ANTHROPIC_API_KEY\"]\nenv = {{ PROBE_ROOT = \"{}\", PROBE_EXE_DIR = \"{}\", PROBE_DAEMON_SOCKET = \"{}\" }}\n",
        harness.root.root.display(),
        exe_dir.display(),
        harness.root.socket().display()
    );
    // `provider` sets its own env and pass_env: write this one by hand.
    std::fs::write(
        harness.config.path().join("trellis/providers.toml"),
        format!(
            "[providers.probe]\nkind = \"claude-code\"\ncommand = \"{}\"\n{extra}",
            probe.display()
        ),
    )
    .expect("providers.toml");
    let run = finish(
        harness
            .command(&["lower", "--json", "csvstats::mean"])
            .env("ANTHROPIC_API_KEY", "sk-from-the-client")
            .env("TRELLIS_PROBE_CLIENT_SECRET", "client-only")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn"),
    );
    assert_eq!(run.code, Some(1), "the probe writes no draft: {run:?}");
    let result = harness.last_event("csvstats", "agent_result");
    let seen = findings(result["result"].as_str().expect("the probe's report"));
    assert_eq!(
        seen["root_seen"], "",
        "the project tree is absent: {seen:?}"
    );
    assert_eq!(
        seen["socket_seen"], "",
        "so is the daemon's socket: {seen:?}"
    );
    assert_eq!(seen["home_entries"], "0", "HOME starts empty: {seen:?}");
    assert_eq!(seen["home_fs"], "tmpfs", "HOME is a tmpfs: {seen:?}");
    assert_eq!(seen["home_write"], "yes");
    assert_eq!(seen["scratch_write"], "yes", "the scratch dir is writable");
    assert_eq!(
        seen["writable"], "",
        "nothing outside the scratch dir (and HOME) is: {seen:?}"
    );
    // Bubblewrap's init is 1, the relay 2 (its listener thread 3), the CLI next.
    assert!(
        seen["pid"].parse::<u32>().is_ok_and(|pid| pid < 10),
        "a pid namespace of its own: {seen:?}"
    );
    assert_eq!(
        seen["key"], "sk-from-the-client",
        "pass_env reached the jail"
    );
    let names: Vec<&str> = seen["env"]
        .split_whitespace()
        .filter(|name| *name != "PWD") // the shell's own
        .collect();
    assert_eq!(
        names,
        [
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "HOME",
            "HTTPS_PROXY",
            "HTTP_PROXY",
            "LANG",
            "PATH",
            "PROBE_DAEMON_SOCKET",
            "PROBE_EXE_DIR",
            "PROBE_ROOT",
            "TMPDIR"
        ],
        "only the allow-list: nothing else of the client's or the daemon's environment"
    );
    // Nothing the probe wrote reached the host outside its scratch directory,
    // and the scratch directory is gone with the job.
    assert!(!harness.root.path(".probe").exists());
    let jobs = harness.root.runtime.join("trellis/jobs");
    let left: Vec<_> = std::fs::read_dir(&jobs)
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "the scratch directory is removed: {left:?}"
    );
}

/// A stand-in CLI that tries, from inside the jail, every way out it can think
/// of, and reports which worked: the model endpoint through the jail's proxy;
/// a host port, the endpoint's own port, outside addresses and an abstract Unix
/// socket directly; the same and other hosts through the proxy; other roots'
/// sockets by path.
const NETWORK_PROBE: &str = r#"if [ "$1" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi
proxy=${HTTP_PROXY#http://}
direct() { timeout 5 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null && echo open || echo closed; }
proxied() {
  timeout 20 bash -c 'exec 3<>"/dev/tcp/${2%:*}/${2##*:}" || exit 1; printf "%b" "$1" >&3; head -c 12 <&3' _ "$1" "$proxy" 2>/dev/null | cut -d' ' -f2
}
body='{"model":"probe","max_tokens":1,"messages":[{"role":"user","content":"probe"}]}'
endpoint=$(proxied "POST http://$PROBE_ENDPOINT/v1/messages HTTP/1.1\r\nHost: $PROBE_ENDPOINT\r\nx-probe: jail\r\ncontent-type: application/json\r\ncontent-length: ${#body}\r\nconnection: close\r\n\r\n$body")
endpoint_direct=$(direct "${PROBE_ENDPOINT%:*}" "${PROBE_ENDPOINT##*:}")
host_port_direct=$(direct 127.0.0.1 "$PROBE_HOST_PORT")
host_port_connect=$(proxied "CONNECT 127.0.0.1:$PROBE_HOST_PORT HTTP/1.1\r\n\r\n")
host_port_get=$(proxied "GET http://127.0.0.1:$PROBE_HOST_PORT/ HTTP/1.1\r\nconnection: close\r\n\r\n")
outside_direct=$(direct 10.255.255.1 80)
dns_direct=$(direct 1.1.1.1 53)
outside_connect=$(proxied "CONNECT 1.1.1.1:53 HTTP/1.1\r\n\r\n")
allowed_https=$(proxied "CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n\r\n")
other_https=$(proxied "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
abstract=$(python3 -c 'import socket,sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(3)
try:
    s.connect("\0" + sys.argv[1]); print("open")
except OSError:
    print("closed")' "$PROBE_ABSTRACT")
[ -e "$PROBE_NEIGHBOUR_SOCKET" ] && neighbour_seen=yes
[ -e "$PROBE_OTHER_SOCKET" ] && other_seen=yes
[ -e "$(dirname "$PROBE_OTHER_SOCKET")" ] && other_dir_seen=yes
echo '{"type":"system","subtype":"init","session_id":"probe","model":"probe","mcp_servers":[{"name":"trellis","status":"connected"}],"tools":[]}'
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":0,"result":"endpoint=%s;endpoint_direct=%s;host_port_direct=%s;host_port_connect=%s;host_port_get=%s;outside_direct=%s;dns_direct=%s;outside_connect=%s;allowed_https=%s;other_https=%s;abstract=%s;neighbour_seen=%s;other_seen=%s;other_dir_seen=%s"}\n' \
  "$endpoint" "$endpoint_direct" "$host_port_direct" "$host_port_connect" "$host_port_get" "$outside_direct" "$dns_direct" "$outside_connect" "$allowed_https" "$other_https" "$abstract" "$neighbour_seen" "$other_seen" "$other_dir_seen"
"#;

#[test]
fn the_jail_reaches_its_model_endpoint_and_nothing_else() {
    use std::os::linux::net::SocketAddrExt;
    let endpoint = Endpoint::start(Vec::new());
    let harness = Harness::new(Root::examples(), "");
    // A service on a host port: a developer's database, a dev server.
    let host_service = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let host_port = host_service.local_addr().expect("address").port();
    let reached = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    {
        let reached = std::sync::Arc::clone(&reached);
        std::thread::spawn(move || {
            for _ in host_service.incoming() {
                reached.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
    }
    // Another root's daemon, and a socket beside this root's own.
    let other = Root::examples().start_daemon();
    let neighbour_path = harness
        .root
        .socket()
        .with_file_name("0123456789abcdef.sock");
    let _neighbour = std::os::unix::net::UnixListener::bind(&neighbour_path).expect("bind");
    let abstract_name = format!("trellis-probe-{}", std::process::id());
    let address = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes())
        .expect("an abstract address");
    let _abstract = std::os::unix::net::UnixListener::bind_addr(&address).expect("bind");
    let probe = harness.script("network", NETWORK_PROBE);
    let endpoint_authority = endpoint.base_url().trim_start_matches("http://").to_owned();
    std::fs::write(
        harness.config.path().join("trellis/providers.toml"),
        format!(
            "[providers.probe]\nkind = \"claude-code\"\ncommand = \"{}\"\npass_env = []\n\
             allow_hosts = [\"api.anthropic.com:443\"]\n\
             env = {{ ANTHROPIC_BASE_URL = \"{}\", PROBE_ENDPOINT = \"{endpoint_authority}\", \
             PROBE_HOST_PORT = \"{host_port}\", PROBE_ABSTRACT = \"{abstract_name}\", \
             PROBE_NEIGHBOUR_SOCKET = \"{}\", PROBE_OTHER_SOCKET = \"{}\" }}\n",
            probe.display(),
            endpoint.base_url(),
            neighbour_path.display(),
            other.socket().display(),
        ),
    )
    .expect("providers.toml");
    let (_, run) = harness.lower(&["csvstats::mean"]);
    assert_eq!(run.code, Some(1), "the probe writes no draft: {run:?}");
    let result = harness.last_event("csvstats", "agent_result");
    let seen = findings(result["result"].as_str().expect("the probe's report"));
    assert_eq!(
        seen["endpoint"], "200",
        "the endpoint, through the proxy: {seen:?}"
    );
    let probed: Vec<Value> = endpoint
        .requests()
        .into_iter()
        .filter(|request| request["headers"]["x-probe"] == "jail")
        .collect();
    assert_eq!(probed.len(), 1, "{probed:?}");
    assert_eq!(
        probed[0]["path"], "/v1/messages",
        "forwarded in origin form"
    );
    for (way, expected) in [
        ("endpoint_direct", "closed"),
        ("host_port_direct", "closed"),
        ("host_port_connect", "403"),
        ("host_port_get", "403"),
        ("outside_direct", "closed"),
        ("dns_direct", "closed"),
        ("outside_connect", "403"),
        ("other_https", "403"),
        ("abstract", "closed"),
        ("neighbour_seen", ""),
        ("other_seen", ""),
        ("other_dir_seen", ""),
    ] {
        assert_eq!(seen[way], expected, "{way}: {seen:?}");
    }
    // An allowed HTTPS host is tried (no internet here: the daemon cannot
    // reach it, 502), never refused.
    assert!(
        matches!(seen["allowed_https"].as_str(), "502" | "200"),
        "allowed_https: {seen:?}"
    );
    assert_eq!(
        reached.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing reached the host's port"
    );
    let network = &result["network"];
    let refused: Vec<&str> = network["refused"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for target in [
        format!("127.0.0.1:{host_port}"),
        "1.1.1.1:53".to_owned(),
        "example.com:443".to_owned(),
    ] {
        assert!(refused.contains(&target.as_str()), "{target}: {network}");
    }
    assert!(
        !refused
            .iter()
            .any(|target| target.starts_with("api.anthropic.com")),
        "{network}"
    );
    assert_eq!(
        network["connections"], 6,
        "one per request through the proxy: {network}"
    );
}

#[test]
fn stopping_the_daemon_mid_job_cancels_it_with_an_outcome_and_removes_its_scratch() {
    let harness = Harness::new(Root::examples(), "");
    let hang = harness.script(
        "hang",
        "if [ \"$1\" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi\n\
         echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"h\",\"mcp_servers\":[{\"name\":\"trellis\",\"status\":\"connected\"}],\"tools\":[]}'\n\
         echo draft > \"$PWD/written-by-the-agent\"\nexec sleep 600\n",
    );
    std::fs::write(
        harness.config.path().join("trellis/providers.toml"),
        provider("hang", &hang, "http://127.0.0.1:9", ""),
    )
    .expect("providers.toml");
    let lower = harness
        .command(&["lower", "csvstats::mean"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trellis lower");
    let group = running_group(&harness);
    let jobs = harness.root.runtime.join("trellis/jobs");
    let scratch_files = || -> Vec<PathBuf> {
        std::fs::read_dir(&jobs)
            .map(|dir| dir.flatten().map(|entry| entry.path()).collect())
            .unwrap_or_default()
    };
    wait_for("the agent's scratch", 30, || {
        scratch_files()
            .iter()
            .any(|dir| dir.join("written-by-the-agent").exists())
    });
    let stopped = harness.run(&["daemon", "stop"]);
    assert_eq!(stopped.code, Some(0), "{stopped:?}");
    let run = finish(lower);
    assert_eq!(run.code, Some(1), "a cancelled job is no success: {run:?}");
    assert!(
        run.stdout
            .contains("csvstats::mean: cancelled — the daemon was stopped (trellis daemon stop)")
            && run.stdout.contains("error[job-cancelled]")
            && run.stdout.contains("lowered 1: 1 cancelled"),
        "{run:?}"
    );
    let outcome = harness.last_event("csvstats", "outcome");
    assert_eq!(outcome["outcome"], "cancelled", "{outcome}");
    assert_eq!(
        outcome["detail"]["reason"],
        "the daemon was stopped (trellis daemon stop)"
    );
    assert_eq!(
        scratch_files(),
        Vec::<PathBuf>::new(),
        "the scratch is gone"
    );
    assert!(group_members(group).is_empty(), "so is the agent");

    // What a killed daemon leaves is swept when the next one starts: this
    // root's scratch, and that of daemons that no longer run; not another
    // live daemon's.
    let make = |name: &str, owner: &Path| {
        let dir = jobs.join(name);
        std::fs::create_dir_all(dir.join("tmp")).expect("scratch");
        std::fs::write(dir.join("owner"), owner.as_os_str().as_encoded_bytes()).expect("owner");
        dir
    };
    let ours = make("job-1-1", &harness.root.socket());
    let dead = make("job-999999999-1", Path::new("/elsewhere/a.sock"));
    let alive = make(
        &format!("job-{}-1", std::process::id()),
        Path::new("/elsewhere/b.sock"),
    );
    harness.run(&["status"]);
    assert!(!ours.exists() && !dead.exists(), "{:?}", scratch_files());
    assert!(alive.exists(), "a live daemon's scratch stays");
    let _ = std::fs::remove_dir_all(alive);
}

#[test]
fn an_answer_from_a_shell_without_the_key_reruns_the_asking_jobs_provider_and_follows_it() {
    let endpoint = Endpoint::start(vec![
        Turn::tool(
            "ask_human",
            json!({ "kind": { "tag": "Ambiguity" }, "question": "Is the mean of one value that value?",
                    "hole": { "tag": "None" }, "options": ["yes"] }),
        ),
        // The asking session's CLI may ask once more before it is ended.
        Turn::NextSession,
        write_mean(&mean_soil(), true),
        Turn::tool("run_tests", json!({})),
        Turn::text("mean is lowered"),
    ]);
    // The default provider would fail outright: the re-run must not use it.
    let providers = format!(
        "default = \"broken\"\n\
         [providers.broken]\nkind = \"claude-code\"\ncommand = \"/nonexistent/claude\"\n\
         [providers.claude]\nkind = \"claude-code\"\ncommand = \"{}\"\nmodel = \"claude-sonnet-4-5\"\n\
         pass_env = [\"ANTHROPIC_API_KEY\"]\nenv = {{ ANTHROPIC_BASE_URL = \"{}\" }}\n",
        claude_cli().display(),
        endpoint.base_url()
    );
    let harness = Harness::new(Root::examples(), &providers);
    let asked = finish(
        harness
            .command(&["lower", "--json", "csvstats::mean", "--provider", "claude"])
            .env("ANTHROPIC_API_KEY", "sk-the-asker")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn"),
    );
    assert_eq!(
        states(&events_of(&asked)).last().map(String::as_str),
        Some("question"),
        "{asked:?}"
    );
    let answered = finish(
        harness
            .command(&[
                "answer",
                "csvstats::mean",
                "--text",
                "Yes: the mean of [x] is x.",
            ])
            .env_remove("ANTHROPIC_API_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn"),
    );
    assert_eq!(answered.code, Some(0), "{answered:?}");
    for expected in [
        "by provider `claude` (the one whose job asked)",
        "csvstats::mean: agent",
        "(claude)",
        "csvstats::mean: green → csvstats/mean.soil",
        "lowered 1: 1 green",
    ] {
        assert!(
            answered.stdout.contains(expected),
            "{expected}: {answered:?}"
        );
    }
    assert_eq!(harness.root.statuses(true)["csvstats::mean"], "green");
    let keys: Vec<Value> = endpoint
        .model_requests()
        .iter()
        .map(|request| request["headers"]["x-api-key"].clone())
        .collect();
    assert!(
        keys.len() >= 4 && keys.iter().all(|key| key == "sk-the-asker"),
        "every request of both jobs carried the asking shell's key: {keys:?}"
    );
}

#[test]
fn a_cap_kill_leaves_no_process_of_the_jail_even_one_that_left_the_group() {
    let harness = Harness::new(Root::examples(), "");
    let marker = format!("{}.5", 4000 + std::process::id() % 1000);
    let hang = harness.script(
        "hang",
        &format!(
            "if [ \"$1\" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi\n\
             sleep {marker} &\nsetsid sleep {marker} &\n\
             echo '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"h\",\"mcp_servers\":[{{\"name\":\"trellis\",\"status\":\"connected\"}}],\"tools\":[]}}'\n\
             wait\n"
        ),
    );
    std::fs::write(
        harness.config.path().join("trellis/providers.toml"),
        provider("hang", &hang, "http://127.0.0.1:9", "wall_clock_s = 10"),
    )
    .expect("providers.toml");
    let lower = harness.spawn_lower(&["csvstats::mean"]);
    let sleepers = || -> Vec<(u32, u32)> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if cmdline
                .split(|b| *b == 0)
                .any(|arg| arg == marker.as_bytes())
                && support::is_alive(pid)
            {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let rest = stat.rsplit(')').next().unwrap_or_default();
                let pgrp = rest.split_whitespace().nth(2).and_then(|g| g.parse().ok());
                found.push((pid, pgrp.unwrap_or(0)));
            }
        }
        found
    };
    // Whatever the test finds, no sleeper outlives it.
    struct Reaper<F: Fn() -> Vec<(u32, u32)>>(F);
    impl<F: Fn() -> Vec<(u32, u32)>> Drop for Reaper<F> {
        fn drop(&mut self) {
            for (pid, _) in (self.0)() {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
    let _reaper = Reaper(sleepers);
    wait_for("both sleepers", 30, || sleepers().len() == 2);
    let group = running_group(&harness);
    let groups: Vec<u32> = sleepers().iter().map(|(_, g)| *g).collect();
    assert!(
        groups.contains(&group) && groups.iter().any(|g| *g != group),
        "one sleeper in the agent's group {group}, one that left it: {groups:?}"
    );
    assert!(
        group_members(group)
            .iter()
            .any(|(pid, name)| *pid == group && name == "bwrap"),
        "the group is the jail's bubblewrap"
    );
    let run = finish(lower);
    let events = events_of(&run);
    let codes: Vec<String> = errors_of(events.last().expect("an outcome"))
        .into_iter()
        .map(|(code, _)| code)
        .collect();
    assert!(codes.contains(&"job-cap-exceeded".to_owned()), "{events:?}");
    wait_for("the agent's group to be gone", 10, || {
        group_members(group).is_empty()
    });
    wait_for("the sleeper that left the group", 10, || {
        sleepers().is_empty()
    });
}

#[test]
fn without_a_jail_a_real_provider_is_refused_naming_what_is_missing() {
    for (bwrap, expected) in [
        (
            "/nonexistent/bwrap",
            "bubblewrap is not installed at /nonexistent/bwrap",
        ),
        ("/bin/false", "cannot build the agent jail"),
    ] {
        let harness = Harness::with_daemon_env(Root::examples(), "", &[("TRELLIS_BWRAP", bwrap)]);
        // No providers.toml at all: `--provider claude-code` is the built-in one.
        std::fs::remove_file(harness.config.path().join("trellis/providers.toml"))
            .expect("remove providers.toml");
        let run = harness.run(&["lower", "csvstats::mean", "--provider", "claude-code"]);
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(
            run.stderr.contains("error[job-jail-unavailable]") && run.stderr.contains(expected),
            "{bwrap}: {run:?}"
        );
        let jobs = harness.run(&["jobs", "--json"]).ok().json();
        assert_eq!(jobs["finished"], json!([]), "nothing ran: {jobs}");
    }
}

#[test]
fn without_a_providers_file_lower_runs_the_claude_on_path_or_says_what_it_needs() {
    xtask::clients::require("bubblewrap");
    let harness = Harness::new(Root::examples(), "");
    std::fs::remove_file(harness.config.path().join("trellis/providers.toml"))
        .expect("remove providers.toml");
    // A stand-in `claude` that reports the arguments it was given and the key
    // it sees; it writes no draft, so the job fails after it ran.
    let fake = harness.script(
        "on-path",
        r#"if [ "$1" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi
first="$1"
while [ $# -gt 0 ]; do [ "$1" = --model ] && model="$2"; shift; done
echo '{"type":"system","subtype":"init","session_id":"fake","model":"fake-default","mcp_servers":[{"name":"trellis","status":"connected"}],"tools":[]}'
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":0,"result":"first=%s;model=%s;key=%s"}\n' "$first" "$model" "$ANTHROPIC_API_KEY"
"#,
    );
    let bin = fake.parent().expect("the fake's directory");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let run = finish(
        harness
            .command(&["lower", "--json", "csvstats::mean"])
            .env("PATH", &path)
            .env("ANTHROPIC_API_KEY", "sk-users-own")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn"),
    );
    assert_eq!(run.code, Some(1), "the stand-in writes no draft: {run:?}");
    let started = harness.last_event("csvstats", "job_started");
    assert_eq!(started["provider"], "claude-code", "{started}");
    assert_eq!(
        started["model"], "default",
        "the CLI's own model: {started}"
    );
    let result = harness.last_event("csvstats", "agent_result");
    let seen = findings(result["result"].as_str().expect("the stand-in's report"));
    assert_eq!(
        (seen["first"].as_str(), seen["model"].as_str()),
        ("-p", "default"),
        "the built-in provider ran the CLI found on PATH, at its own model: {seen:?}"
    );
    assert_eq!(seen["key"], "sk-users-own", "the user's own key: {seen:?}");
    // No `claude` on PATH and no file: the command says what it needs, and
    // queues nothing.
    let run = finish(
        harness
            .command(&["lower", "csvstats::mean"])
            .env("PATH", "/usr/bin:/bin")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn"),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains("error[config-providers]")
            && run.stderr.contains("no `claude` is on PATH")
            && run
                .stderr
                .contains("npm install -g @anthropic-ai/claude-code"),
        "{run:?}"
    );
    let finished = harness.run(&["jobs", "--json"]).ok().json()["finished"].clone();
    assert_eq!(
        finished.as_array().map(Vec::len),
        Some(1),
        "nothing more ran: {finished}"
    );
}

/// `TRELLIS_LIVE=1`: one lowering of `csvstats::mean` against the real service,
/// with the key in `ANTHROPIC_API_KEY`, the CLI from `TRELLIS_LIVE_CLAUDE` (else
/// the pinned one) and the model from `TRELLIS_LIVE_MODEL` (else
/// claude-sonnet-4-5). Costs money; never run in CI.
#[test]
fn live_smoke_lowers_mean_against_the_real_service() {
    if std::env::var_os("TRELLIS_LIVE").is_none_or(|v| v != "1") {
        eprintln!("skipped: set TRELLIS_LIVE=1 (and ANTHROPIC_API_KEY) to run it");
        return;
    }
    let cli = std::env::var_os("TRELLIS_LIVE_CLAUDE").map_or_else(claude_cli, PathBuf::from);
    let model =
        std::env::var("TRELLIS_LIVE_MODEL").unwrap_or_else(|_| "claude-sonnet-4-5".to_owned());
    let harness = Harness::new(
        Root::examples(),
        &format!(
            "[providers.live]\nkind = \"claude-code\"\ncommand = \"{}\"\nmodel = \"{model}\"\n\
             wall_clock_s = 900\ncost_usd = 2.0\n",
            cli.display()
        ),
    );
    let (events, run) = harness.lower(&["csvstats::mean"]);
    let outcome = events.last().expect("an outcome");
    let result = harness.last_event("csvstats", "agent_result");
    eprintln!("live outcome: {outcome}\nagent_result: {result}");
    assert!(
        !errors_of(outcome)
            .iter()
            .any(|(code, _)| code == "job-provider-error"),
        "the CLI ran against the service: {run:?}"
    );
    assert!(result["turns"].as_u64().is_some_and(|turns| turns > 0));
}
