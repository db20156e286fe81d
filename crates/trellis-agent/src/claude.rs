//! The claude-code provider (design §4.9.1, impl plan step 11): Claude Code in
//! headless mode, in the jail, talking to Trellis only through `trellis _mcp`.
//!
//! For one job this module finds the CLI (a path, or a name on the client's
//! `PATH`), makes the job's scratch directory (private, under the daemon's socket
//! directory) with the job's own socket and the network forwarder's socket in
//! it, checks the CLI's version inside the jail, writes the MCP configuration
//! and the system prompt there, and returns the jailed command, the relay in
//! front of it (`trellis _relay … -- claude …`):
//!
//! ```text
//! claude -p TASK --bare --tools "" --append-system-prompt-file SCRATCH/system.md
//!   --mcp-config SCRATCH/mcp.json --strict-mcp-config
//!   --allowedTools mcp__trellis__read_context,… (exactly the seven)
//!   --max-turns N --max-budget-usd X --model M
//!   --output-format stream-json --verbose --no-session-persistence
//! ```
//!
//! A CLI that is missing, not executable or older than [`MIN_VERSION`] fails the
//! job before it starts (`job-provider-error`, saying which).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use trellis_diag::Diagnostic;

use crate::agent::{AgentCommand, AgentLauncher, Invocation};
use crate::forwarder::{self, Forwarder};
use crate::jail;
use crate::job_socket::JobSocket;
use crate::prompt::{self, Task};
use crate::providers::{ClaudeCode, Provider};
use trellis_service::codes::HostCode;

/// The oldest Claude Code whose headless mode was measured with Trellis
/// (`/work/shared/brief/AGENT-CLIENTS.md`): `--bare`, `--tools ""`,
/// `--strict-mcp-config` and stream-json as this module uses them.
pub const MIN_VERSION: [u64; 3] = [2, 1, 328];
/// How long `claude --version` may take in the jail.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// A job's scratch directory, its socket and its forwarder, removed when the
/// agent is done.
pub struct Scratch {
    dir: PathBuf,
    socket: Option<JobSocket>,
    forwarder: Option<Forwarder>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // The servers first: they stop before their directory goes.
        drop(self.forwarder.take());
        drop(self.socket.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The file in a scratch directory naming the daemon socket whose daemon made
/// it, so that daemon's successor can sweep what a crash left.
const OWNER_FILE: &str = "owner";

fn provider_error(message: impl Into<String>) -> Diagnostic {
    HostCode::JobProviderError.diagnostic(message)
}

impl AgentLauncher for ClaudeCode {
    fn agent_command(
        &self,
        provider: &Provider,
        trellis: &Path,
        invocation: &Invocation<'_>,
    ) -> Result<AgentCommand, Diagnostic> {
        command(self, provider, trellis, invocation)
    }
}

/// The jailed Claude Code command for one job.
pub fn command(
    claude: &ClaudeCode,
    provider: &Provider,
    exe: &Path,
    invocation: &Invocation<'_>,
) -> Result<AgentCommand, Diagnostic> {
    let jail = jail::available()?;
    let cli = installed_cli(&claude.command, invocation.client_path)?;
    let exe = exe.canonicalize().unwrap_or_else(|_| exe.to_owned());
    let allowed = claude.allowed_targets().map_err(provider_error)?;
    let mut read_only = vec![exe.clone(), installation_of(&cli)];
    read_only.extend(claude.read_only.iter().cloned());
    let mut scratch = make_scratch(invocation)?;
    let dir = scratch.dir.clone();
    let exposed = jail::exposed_paths(&read_only, &dir);
    if let Err(path) = jail::hides(invocation.root, &exposed) {
        return Err(HostCode::JobJailUnavailable.diagnostic(format!(
            "the jail would expose the project tree {} through {}: install the CLI (and \
                 trellis) outside the root",
            invocation.root.display(),
            path.display()
        )));
    }
    let mut env = vec![
        ("TMPDIR".to_owned(), dir.join("tmp").display().to_string()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
        // No telemetry, error reports or auto-update from inside the jail.
        (
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
            "1".to_owned(),
        ),
    ];
    for (name, value) in &claude.env.0 {
        env.retain(|(existing, _)| existing != name);
        env.push((name.clone(), value.clone()));
    }
    let mut spec = jail::Spec {
        read_only,
        scratch: &dir,
        env,
        relay: None,
    };
    check_version(jail, &spec, &cli)?;
    let net_socket = dir.join("net.sock");
    let forwarder =
        Forwarder::start(&net_socket, allowed, forwarder::DEFAULT_LIMITS).map_err(|e| {
            provider_error(format!(
                "cannot start the jail's forwarder on {}: {e}",
                net_socket.display()
            ))
        })?;
    let network = forwarder.reporter();
    scratch.forwarder = Some(forwarder);
    spec.relay = Some(jail::Relay {
        trellis: &exe,
        socket: &net_socket,
    });
    let socket = JobSocket::start(
        invocation.service.clone(),
        invocation.job,
        &dir.join("mcp.sock"),
    )?;
    let mcp_config = json!({ "mcpServers": { "trellis": {
        "type": "stdio",
        "command": exe.display().to_string(),
        "args": ["_mcp", "--job", invocation.job, "--socket", socket.path().display().to_string()],
    } } });
    scratch.socket = Some(socket);
    let built = prompt::prompt(
        trellis_skill::skill(),
        &Task {
            definition: &format!("{}::{}", invocation.module, invocation.name),
            tool_calls: provider.caps.turns,
        },
    );
    let write = |name: &str, text: &str| -> Result<PathBuf, Diagnostic> {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| provider_error(format!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    };
    let config_file = write("mcp.json", &mcp_config.to_string())?;
    let system_file = write("system.md", &built.system)?;
    let args = arguments(provider, &built.task, &config_file, &system_file);
    let mut command = jail.command(&spec, &cli, &args);
    command.stdin(Stdio::null());
    Ok(AgentCommand {
        command,
        keep: Some(Box::new(scratch)),
        network: Some(network),
    })
}

/// The seven tools, as Claude Code names an MCP server's tools.
pub fn allowed_tools() -> Vec<String> {
    trellis_mcp::TOOLS
        .iter()
        .map(|tool| format!("mcp__trellis__{}", tool.name))
        .collect()
}

/// The CLI's arguments after its path.
fn arguments(provider: &Provider, task: &str, config: &Path, system: &Path) -> Vec<OsString> {
    let text = |items: &[&str]| items.iter().map(OsString::from).collect::<Vec<_>>();
    let mut args = text(&[
        "-p",
        task,
        // No hooks, plugins, CLAUDE.md discovery or keychain; the key comes from
        // ANTHROPIC_API_KEY only.
        "--bare",
        // No built-in tool at all: no shell, no file tools, no web.
        "--tools",
        "",
        "--append-system-prompt-file",
    ]);
    args.push(system.into());
    args.push("--mcp-config".into());
    args.push(config.into());
    args.extend(text(&[
        "--strict-mcp-config",
        "--allowedTools",
        &allowed_tools().join(","),
        // A model turn per tool call, and one for the final answer.
        "--max-turns",
        &(u64::from(provider.caps.turns) + 1).to_string(),
        // The daemon's cost cap reads the result line's total; the CLI stops
        // itself at the same figure mid-run.
        "--max-budget-usd",
        &provider.caps.cost_usd.to_string(),
        "--model",
        &provider.model,
        "--output-format",
        "stream-json",
        "--verbose",
        "--no-session-persistence",
    ]));
    args
}

/// The CLI's file: `command` as a path, or looked up on the client's `PATH`.
fn installed_cli(command: &str, client_path: &str) -> Result<PathBuf, Diagnostic> {
    use std::os::unix::fs::PermissionsExt;
    let path = if command.contains('/') {
        PathBuf::from(command)
    } else {
        jail::find_on_path(command.as_ref(), Some(client_path.as_ref())).ok_or_else(|| {
            provider_error(format!(
                "the claude-code CLI is not installed: no `{command}` on the client's PATH \
                 (npm install -g @anthropic-ai/claude-code, or set `command` in providers.toml)"
            ))
        })?
    };
    let metadata = std::fs::metadata(&path).map_err(|_| {
        provider_error(format!(
            "the claude-code CLI is not installed: {} does not exist",
            path.display()
        ))
    })?;
    if !metadata.is_file() || metadata.permissions().mode() & 0o111 == 0 {
        return Err(provider_error(format!(
            "the claude-code CLI {} is not an executable file",
            path.display()
        )));
    }
    path.canonicalize()
        .map_err(|e| provider_error(format!("cannot resolve {}: {e}", path.display())))
}

/// The directory to bind for a CLI file: its package when it sits in a `bin/`
/// (npm's `…/claude-code/bin/claude.exe`), else its own directory.
fn installation_of(cli: &Path) -> PathBuf {
    let dir = cli.parent().unwrap_or(Path::new("/"));
    match (dir.file_name(), dir.parent()) {
        (Some(name), Some(package)) if name == "bin" => package.to_owned(),
        _ => dir.to_owned(),
    }
}

/// `<socket dir>/jobs/<job>/`, private, with a `tmp/` for the agent's TMPDIR.
fn make_scratch(invocation: &Invocation<'_>) -> Result<Scratch, Diagnostic> {
    use std::os::unix::fs::DirBuilderExt;
    let jobs = invocation
        .socket
        .parent()
        .unwrap_or(Path::new("/tmp"))
        .join("jobs");
    let dir = jobs.join(invocation.job);
    let _ = std::fs::remove_dir_all(&dir);
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir.join("tmp"));
    // From here on the directory is removed however the job ends.
    let scratch = Scratch {
        dir: dir.clone(),
        socket: None,
        forwarder: None,
    };
    made.and_then(|()| {
        std::fs::write(
            dir.join(OWNER_FILE),
            invocation.socket.as_os_str().as_encoded_bytes(),
        )
    })
    .map_err(|e| {
        provider_error(format!(
            "cannot make the job's scratch directory {}: {e}",
            dir.display()
        ))
    })?;
    Ok(scratch)
}

/// Removes the scratch directories a daemon of this root left behind (it
/// was killed mid-job: nothing ran its ending), and those of any daemon that
/// no longer runs (`job-<pid>-<n>` of a dead pid). A daemon calls this as it
/// starts, before its first job; `socket` is its own.
pub fn sweep_scratch(socket: &Path) {
    let jobs = socket.parent().unwrap_or(Path::new("/tmp")).join("jobs");
    let Ok(entries) = std::fs::read_dir(&jobs) else {
        return;
    };
    for entry in entries.flatten() {
        let owner = std::fs::read(entry.path().join(OWNER_FILE)).ok();
        let ours = owner.as_deref() == Some(socket.as_os_str().as_encoded_bytes());
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|name| name.strip_prefix("job-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        let dead = pid.is_some_and(|pid| {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        });
        if ours || dead {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Runs `cli --version` in the jail and refuses a CLI older than [`MIN_VERSION`].
fn check_version(jail: &jail::Jail, spec: &jail::Spec<'_>, cli: &Path) -> Result<(), Diagnostic> {
    let mut command = jail.command(spec, cli, &[OsString::from("--version")]);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = jail::run_with_timeout(command, VERSION_TIMEOUT).map_err(|why| {
        provider_error(format!("`{} --version` in the jail: {why}", cli.display()))
    })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(provider_error(format!(
            "`{} --version` failed in the jail ({}): {}",
            cli.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let Some(version) = parse_version(&stdout) else {
        return Err(provider_error(format!(
            "`{} --version` printed no version: {}",
            cli.display(),
            stdout.trim()
        )));
    };
    if version < MIN_VERSION {
        return Err(provider_error(format!(
            "the claude-code CLI {} is {}; trellis needs {} or newer",
            cli.display(),
            dotted(&version),
            dotted(&MIN_VERSION)
        )));
    }
    Ok(())
}

/// `2.1.328 (Claude Code)` → `[2, 1, 328]`.
fn parse_version(text: &str) -> Option<[u64; 3]> {
    let token = text.split_whitespace().next()?;
    let mut parts = token.split('.').map(|part| part.parse::<u64>().ok());
    let version = [parts.next()??, parts.next()??, parts.next()??];
    Some(version)
}

fn dotted(version: &[u64; 3]) -> String {
    format!("{}.{}.{}", version[0], version[1], version[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_compare() {
        assert_eq!(parse_version("2.1.328 (Claude Code)\n"), Some([2, 1, 328]));
        assert_eq!(parse_version("10.0.1"), Some([10, 0, 1]));
        assert_eq!(parse_version("claude 2.1"), None);
        assert_eq!(parse_version(""), None);
        assert!([2, 0, 999] < MIN_VERSION && [2, 2, 0] > MIN_VERSION);
    }

    #[test]
    fn an_npm_installation_is_its_package_directory() {
        assert_eq!(
            installation_of(Path::new(
                "/c/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
            )),
            PathBuf::from("/c/node_modules/@anthropic-ai/claude-code")
        );
        assert_eq!(
            installation_of(Path::new("/home/u/.local/share/claude/versions/2.1.328")),
            PathBuf::from("/home/u/.local/share/claude/versions")
        );
    }

    #[test]
    fn exactly_the_seven_tools_are_allowed() {
        let tools = allowed_tools();
        assert_eq!(tools.len(), 7);
        assert!(tools.iter().all(|t| t.starts_with("mcp__trellis__")));
        assert!(tools.contains(&"mcp__trellis__ask_human".to_owned()));
    }
}
