//! Running a provider's agent: the process is spawned in a process group of its
//! own, so a cap or an invalidation kills it with everything it started
//! (`trellis _mcp`, any grandchild), and its stdout is read as stream-json in the
//! agent CLI's shape (`system`/`init`, `assistant`, `user`, `result`) into an
//! [`AgentReport`] for `f.log`'s `agent_result` and the caps. The scripted
//! provider's command is built here; the claude-code provider's, with its jail,
//! in `claude`, which implements [`AgentLauncher`] for it.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use trellis_service::service::Service;

use serde_json::{Value, json};
use trellis_diag::Diagnostic;

use crate::forwarder::{NetworkReport, Reporter};
use crate::providers::{Provider, ProviderKind, Scripted};
use trellis_service::codes::HostCode;

/// What the agent's output said so far.
#[derive(Clone, Debug, Default)]
pub struct AgentReport {
    pub turns: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
    pub session_id: Option<String>,
    /// The model the agent says it runs (`system`/`init`'s `model`).
    pub model: Option<String>,
    /// The `result` line's text and whether it reported an error.
    pub result: Option<(bool, String)>,
    /// An MCP server the agent could not connect, or a tool it offers its model
    /// beyond the seven (from `system`/`init`).
    pub mcp_failure: Option<String>,
    /// The first line that was not stream-json.
    pub malformed: Option<String>,
    /// The last few KiB of stderr, for the failure message.
    pub stderr_tail: String,
    /// What the jail's forwarder did (a jailed agent only), once it ended.
    pub network: Option<NetworkReport>,
}

impl AgentReport {
    pub fn to_json(&self) -> Value {
        json!({
            "turns": self.turns,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd,
            "session_id": self.session_id,
            "model": self.model,
            "is_error": self.result.as_ref().map(|(is_error, _)| *is_error),
            "result": self.result.as_ref().map(|(_, text)| text.clone()),
            "network": self.network.as_ref().map(NetworkReport::to_json),
        })
    }

    fn read_line(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            if self.malformed.is_none() {
                self.malformed = Some(line.chars().take(200).collect());
            }
            return;
        };
        if let Some(cost) = message["total_cost_usd"].as_f64() {
            self.cost_usd = self.cost_usd.max(cost);
        }
        if let Some(id) = message["session_id"].as_str() {
            self.session_id = Some(id.to_owned());
        }
        match (message["type"].as_str(), message["subtype"].as_str()) {
            (Some("system"), Some("init")) => {
                if let Some(model) = message["model"].as_str() {
                    self.model = Some(model.to_owned());
                }
                if self.mcp_failure.is_none() {
                    self.mcp_failure = init_problem(&message);
                }
            }
            (Some("result"), _) => {
                self.turns = message["num_turns"].as_u64().unwrap_or(self.turns);
                let usage = &message["usage"];
                // What the model read: fresh input and the prompt cache's reads
                // and writes alike.
                if let Some(fresh) = usage["input_tokens"].as_u64() {
                    let cached = ["cache_creation_input_tokens", "cache_read_input_tokens"]
                        .iter()
                        .filter_map(|key| usage[*key].as_u64())
                        .sum::<u64>();
                    self.tokens_in = fresh + cached;
                }
                self.tokens_out = usage["output_tokens"].as_u64().unwrap_or(self.tokens_out);
                let text = match &message["result"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                self.result = Some((message["is_error"] == json!(true), text));
            }
            _ => {}
        }
    }
}

/// What is wrong with an agent's `system`/`init` line, if anything: the trellis
/// MCP server must be listed and connected, and every other server connected
/// too; the tools it offers its model must all be the trellis server's.
fn init_problem(init: &Value) -> Option<String> {
    let servers = init["mcp_servers"].as_array().cloned().unwrap_or_default();
    for server in &servers {
        let status = server["status"].as_str().unwrap_or_default();
        if status != "connected" {
            return Some(format!(
                "the MCP server {} is {status}",
                server["name"].as_str().unwrap_or("?")
            ));
        }
    }
    if !servers.iter().any(|server| server["name"] == "trellis") {
        return Some("the agent lists no trellis MCP server".to_owned());
    }
    let others: Vec<&str> = init["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|tool| !tool.starts_with("mcp__trellis__"))
        .collect();
    if !others.is_empty() {
        return Some(format!(
            "the agent offers its model tools beyond the seven: {}",
            others.join(", ")
        ));
    }
    None
}

/// Where a job's agent finds what it needs.
pub struct Invocation<'a> {
    pub job: &'a str,
    /// The daemon's own socket (the scripted provider's shim uses it; a jailed
    /// agent gets a socket of its job's instead).
    pub socket: &'a Path,
    pub module: &'a str,
    pub name: &'a str,
    /// 1 for the definition's first job in this daemon's life, 2 for the next
    /// (after an invalidation, or an answered question), …
    pub run: u32,
    /// The root, which a jail must not expose.
    pub root: &'a Path,
    /// The `PATH` of the client that queued the job (a bare CLI name is looked
    /// up there).
    pub client_path: &'a str,
    /// The job's per-job socket serves the tools from this service.
    pub service: &'a Arc<Mutex<Service>>,
}

/// An agent's command, and what must live as long as the agent (a jailed
/// agent's scratch directory, job socket and forwarder).
pub struct AgentCommand {
    pub command: Command,
    pub keep: Option<Box<dyn std::any::Any + Send>>,
    /// The jail's forwarder's account, for the report.
    pub network: Option<Reporter>,
}

/// How long the output readers may take to see end-of-file once the agent's
/// group is dead.
const READER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// A running agent.
pub struct AgentProcess {
    child: Child,
    group: i32,
    report: Arc<Mutex<AgentReport>>,
    readers: Vec<std::thread::JoinHandle<()>>,
    /// Dropped after the agent: see [`AgentCommand::keep`].
    keep: Option<Box<dyn std::any::Any + Send>>,
    network: Option<Reporter>,
    /// Whether the agent was waited for: a process dropped before then is
    /// killed, group and all, so no ending leaves it running.
    reaped: bool,
}

/// What every provider kind provides: the command that runs its agent for one
/// job. Whatever drives the agent — a playbook, a model — it reaches the job only
/// through the job's shim and reports in stream-json, so the loop needs nothing
/// else of a provider.
pub trait AgentLauncher {
    fn agent_command(
        &self,
        provider: &Provider,
        trellis: &Path,
        invocation: &Invocation<'_>,
    ) -> Result<AgentCommand, Diagnostic>;
}

impl ProviderKind {
    pub fn launcher(&self) -> &dyn AgentLauncher {
        match self {
            ProviderKind::Scripted(scripted) => scripted,
            ProviderKind::ClaudeCode(claude) => claude,
        }
    }
}

/// The command that runs `provider`'s agent for one job.
pub fn command(
    provider: &Provider,
    invocation: &Invocation<'_>,
) -> Result<AgentCommand, Diagnostic> {
    let exe = std::env::current_exe().map_err(|error| {
        HostCode::JobProviderError.diagnostic(format!("no trellis binary to run: {error}"))
    })?;
    provider
        .kind
        .launcher()
        .agent_command(provider, &exe, invocation)
}

impl AgentLauncher for Scripted {
    /// `trellis _script` with the definition's playbook.
    fn agent_command(
        &self,
        _provider: &Provider,
        trellis: &Path,
        invocation: &Invocation<'_>,
    ) -> Result<AgentCommand, Diagnostic> {
        let playbook = playbook_for(&self.playbooks, invocation)?;
        let mut command = Command::new(trellis);
        command
            .arg("_script")
            .arg("--playbook")
            .arg(playbook)
            .arg("--job")
            .arg(invocation.job)
            .arg("--socket")
            .arg(invocation.socket);
        Ok(AgentCommand {
            command,
            keep: None,
            network: None,
        })
    }
}

/// `<playbooks>/<module>/<name>.<run>.jsonl` when it exists, else
/// `<playbooks>/<module>/<name>.jsonl`.
fn playbook_for(playbooks: &Path, invocation: &Invocation<'_>) -> Result<PathBuf, Diagnostic> {
    let dir = playbooks.join(invocation.module);
    let numbered = dir.join(format!("{}.{}.jsonl", invocation.name, invocation.run));
    if numbered.is_file() {
        return Ok(numbered);
    }
    let plain = dir.join(format!("{}.jsonl", invocation.name));
    if plain.is_file() {
        return Ok(plain);
    }
    Err(HostCode::JobProviderError.diagnostic(format!(
        "the scripted provider has no playbook for {}::{} ({} or {})",
        invocation.module,
        invocation.name,
        numbered.display(),
        plain.display()
    )))
}

impl AgentProcess {
    /// Spawns `command` in a new process group, reading its output as it comes.
    pub fn spawn(agent: AgentCommand) -> Result<AgentProcess, Diagnostic> {
        let AgentCommand {
            mut command,
            keep,
            network,
        } = agent;
        command
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|error| {
            HostCode::JobProviderError.diagnostic(format!(
                "cannot start the agent {:?}: {error}",
                command.get_program()
            ))
        })?;
        let group = i32::try_from(child.id()).unwrap_or(0);
        let report = Arc::new(Mutex::new(AgentReport::default()));
        let mut readers = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            let report = Arc::clone(&report);
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    lock(&report).read_line(&line);
                }
            }));
        }
        if let Some(mut stderr) = child.stderr.take() {
            let report = Arc::clone(&report);
            readers.push(std::thread::spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(read) = stderr.read(&mut buffer) {
                    if read == 0 {
                        break;
                    }
                    let mut report = lock(&report);
                    report
                        .stderr_tail
                        .push_str(&String::from_utf8_lossy(&buffer[..read]));
                    let mut cut = report.stderr_tail.len().saturating_sub(4096);
                    while !report.stderr_tail.is_char_boundary(cut) {
                        cut += 1;
                    }
                    report.stderr_tail.drain(..cut);
                }
            }));
        }
        Ok(AgentProcess {
            child,
            group,
            report,
            readers,
            keep,
            network,
            reaped: false,
        })
    }

    /// The agent's process group (its own pid).
    pub fn group(&self) -> i32 {
        self.group
    }

    /// The exit status once the agent has ended.
    pub fn try_exit(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    pub fn report(&self) -> AgentReport {
        lock(&self.report).clone()
    }

    /// Kills the agent's whole process group, grandchildren included, and reaps
    /// the agent.
    pub fn kill_group(&mut self) {
        kill_process_group(self.group);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the output readers (after the agent ended) and returns the report.
    pub fn finish(mut self) -> (AgentReport, Option<std::process::ExitStatus>) {
        let status = self.child.wait().ok();
        self.reaped = true;
        // A grandchild may hold the pipes open; the group is killed so the
        // readers see end-of-file. One that left the group (`setsid`) would hold
        // them for ever: after a grace period its readers are left behind, so
        // the runner never waits on a process it could not kill.
        kill_process_group(self.group);
        let deadline = std::time::Instant::now() + READER_GRACE;
        while self.readers.iter().any(|reader| !reader.is_finished())
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for reader in self.readers.drain(..) {
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
        // The scratch directory, the job's socket and the forwarder go now.
        drop(self.keep.take());
        let mut report = lock(&self.report).clone();
        report.network = self.network.as_ref().map(Reporter::report);
        (report, status)
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill_group();
        }
    }
}

/// SIGKILL to every process of an agent's group (the group an agent was spawned
/// into is its own, see [`AgentProcess::spawn`]). The module's only `unsafe`
/// code: one libc call, whose failure (the group is already gone) is harmless.
#[allow(unsafe_code)]
pub fn kill_process_group(group: i32) {
    if group > 0 {
        // SAFETY: killpg only sends a signal; it reads and writes no memory.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
    }
}

fn lock(report: &Mutex<AgentReport>) -> std::sync::MutexGuard<'_, AgentReport> {
    report
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_json_fills_the_report() {
        let mut report = AgentReport::default();
        for line in [
            r#"{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"trellis","status":"connected"}]}"#,
            r#"{"type":"assistant","message":{},"total_cost_usd":0.25}"#,
            "not json",
            r#"{"type":"result","subtype":"success","is_error":false,"num_turns":4,"total_cost_usd":0.5,"usage":{"input_tokens":120,"output_tokens":30},"session_id":"s1","result":"done"}"#,
        ] {
            report.read_line(line);
        }
        assert_eq!(report.turns, 4);
        assert_eq!((report.tokens_in, report.tokens_out), (120, 30));
        assert_eq!(report.cost_usd, 0.5);
        assert_eq!(report.session_id.as_deref(), Some("s1"));
        assert_eq!(report.result, Some((false, "done".to_owned())));
        assert_eq!(report.malformed.as_deref(), Some("not json"));
        assert_eq!(report.mcp_failure, None);
        report.read_line(r#"{"type":"system","subtype":"init","mcp_servers":[{"name":"trellis","status":"failed"}]}"#);
        assert_eq!(
            report.mcp_failure.as_deref(),
            Some("the MCP server trellis is failed")
        );
    }

    #[test]
    fn claude_codes_init_and_result_lines_fill_the_model_tokens_and_problems() {
        let mut report = AgentReport::default();
        report.read_line(r#"{"type":"system","subtype":"init","model":"claude-sonnet-4-5","mcp_servers":[{"name":"trellis","status":"connected","source":"dynamic"}],"tools":["mcp__trellis__ask_human","mcp__trellis__write_soil"]}"#);
        report.read_line(r#"{"type":"result","subtype":"success","is_error":false,"num_turns":5,"total_cost_usd":0.003,"usage":{"input_tokens":500,"cache_creation_input_tokens":40,"cache_read_input_tokens":2,"output_tokens":100},"session_id":"d892029c-2dca-46f7-aa0e-6c3a921c6138","result":"ok"}"#);
        assert_eq!(report.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(report.mcp_failure, None);
        assert_eq!(
            (report.turns, report.tokens_in, report.tokens_out),
            (5, 542, 100),
            "the cache's reads and writes count as input"
        );
        for (init, problem) in [
            (
                r#"{"type":"system","subtype":"init","mcp_servers":[],"tools":[]}"#,
                "the agent lists no trellis MCP server",
            ),
            (
                r#"{"type":"system","subtype":"init","mcp_servers":[{"name":"trellis","status":"connected"}],"tools":["Bash","mcp__trellis__read_context","Read"]}"#,
                "the agent offers its model tools beyond the seven: Bash, Read",
            ),
            (
                r#"{"type":"system","subtype":"init","mcp_servers":[{"name":"trellis","status":"connected"},{"name":"web","status":"pending"}],"tools":[]}"#,
                "the MCP server web is pending",
            ),
        ] {
            let mut report = AgentReport::default();
            report.read_line(init);
            assert_eq!(report.mcp_failure.as_deref(), Some(problem), "{init}");
        }
    }
}
