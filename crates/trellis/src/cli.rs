//! What each command does on the client side: find the root, reach the daemon (or
//! answer in-process with `--no-daemon`), render the answer. Exit codes: 0 success,
//! 1 the command ran and found problems (or failed), 2 a usage error.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::args::{self, Command, DaemonCommand, Invocation};
use crate::client::{self, ClientError};
use crate::render;
use crate::root::discover_root;
use trellis_service::codes::HostCode;
use trellis_service::protocol::{
    AdoptParams, CheckParams, ContextParams, DaemonStatus, DaemonStopped, EditorialParams, Request,
    ReviewParams, StatusParams, TestParams, decode_answer,
};

pub fn run(args: &[String]) -> ExitCode {
    if let Some(code) = crate::mcp::run_internal(args) {
        return code;
    }
    let invocation = match args::parse(args) {
        Ok(invocation) => invocation,
        Err(error) => {
            eprintln!("trellis: {error}");
            return ExitCode::from(2);
        }
    };
    match invocation.command {
        Command::Help => {
            print!("{}", args::USAGE);
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            println!("trellis {}", trellis_service::identity::VERSION);
            return ExitCode::SUCCESS;
        }
        // Served from the docs compiled into this binary: no root, no daemon.
        Command::Spec { reference } => return spec(&reference),
        Command::Skill { hash } => {
            // The skill is a function of this binary: no root, no daemon.
            if hash {
                println!("{}", trellis_skill::skill_hash());
            } else {
                print!("{}", trellis_skill::skill());
            }
            return ExitCode::SUCCESS;
        }
        // Finds its root itself, from the editor's workspace folder too.
        Command::Lsp => return crate::lsp::run(),
        _ => {}
    }
    let root = match find_root() {
        Ok(root) => root,
        Err(diagnostic) => {
            render::diagnostics(&mut std::io::stderr(), std::slice::from_ref(&diagnostic));
            return ExitCode::FAILURE;
        }
    };
    match &invocation.command {
        Command::Daemon(DaemonCommand::Run) => match crate::daemon::run(&root) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("trellis: {message}");
                ExitCode::FAILURE
            }
        },
        Command::Daemon(command) => daemon_control(&root, *command),
        Command::Call { def, args } => {
            let (document, code) = crate::call::call(&root, def, args);
            println!("{document}");
            ExitCode::from(code)
        }
        Command::Repl => ExitCode::from(crate::repl::run(&root, invocation.no_daemon)),
        Command::Lower {
            defs,
            provider,
            json,
        } => {
            let request = json!({ "defs": defs });
            agent_request(
                &root,
                invocation.no_daemon,
                "lower",
                request,
                provider.as_deref(),
                *json,
            )
        }
        Command::DecisionsTriage {
            label,
            provider,
            json,
        } => {
            let request = json!({ "label": label });
            agent_request(
                &root,
                invocation.no_daemon,
                "decisions.triage",
                request,
                provider.as_deref(),
                *json,
            )
        }
        Command::Answer { .. } => ExitCode::from(crate::answer_cli::run(&root, &invocation)),
        command => match service_request(command) {
            Some(request) => ask(&root, &invocation, &request),
            // Help, version, spec, skill and lsp were answered above, rootless.
            None => ExitCode::from(2),
        },
    }
}

fn find_root() -> Result<PathBuf, trellis_diag::Diagnostic> {
    let cwd = std::env::current_dir().map_err(|error| {
        HostCode::ConfigNoRoot.diagnostic(format!("no working directory: {error}"))
    })?;
    discover_root(std::env::var_os("TRELLIS_ROOT"), &cwd)
}

/// The request a command sends the root's service; `None` for the commands
/// this process answers itself (or talks to the daemon about in their own way).
fn service_request(command: &Command) -> Option<Request> {
    Some(match command {
        Command::Check { def, .. } => Request::Check(CheckParams { def: def.clone() }),
        Command::Status { verify, all, json } => Request::Status(StatusParams {
            verify: Some(*verify),
            path: if *verify { client_path() } else { None },
            // The human table shows the rows that need work, a few of each
            // status, unless --all: the daemon sends those and counts the rest.
            summary: (!*json && !*all && !*verify).then_some(true),
        }),
        Command::Refresh => Request::Refresh,
        Command::Adopt { def, cite } => Request::Adopt(AdoptParams {
            def: def.clone(),
            cite: Some(cite.clone()),
        }),
        Command::Review { def } => Request::Review(ReviewParams { def: def.clone() }),
        Command::Test { def } => Request::Test(TestParams {
            def: def.clone(),
            path: client_path(),
        }),
        Command::DecisionsEditorial { label, module } => {
            Request::DecisionsEditorial(EditorialParams {
                label: label.clone(),
                module: module.clone(),
            })
        }
        Command::ToolchainUpdate => Request::ToolchainUpdate,
        Command::Context {
            def, budget, out, ..
        } => Request::Context(ContextParams {
            def: def.clone(),
            budget: *budget,
            out: out.as_deref().map(absolute),
        }),
        Command::Jobs { .. } => Request::Jobs,
        Command::Help
        | Command::Version
        | Command::Spec { .. }
        | Command::Skill { .. }
        | Command::Lsp
        | Command::Daemon(_)
        | Command::Call { .. }
        | Command::Repl
        | Command::Lower { .. }
        | Command::DecisionsTriage { .. }
        | Command::Answer { .. } => return None,
    })
}

/// This client's `PATH`, sent with the requests that run suites: oracles and
/// cram run under the caller's `PATH`, not the one the daemon was spawned with.
pub(crate) fn client_path() -> Option<String> {
    std::env::var("PATH").ok()
}

/// `--out` resolved against this process's working directory: the daemon's is
/// not the caller's (impl plan §9.13).
fn absolute(path: &str) -> String {
    let path = std::path::Path::new(path);
    match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path).display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The provider `name` (or the default) of the user's providers.toml, read by
/// the client: the daemon's environment is not the user's (design §4.9).
pub(crate) fn user_provider(
    name: Option<&str>,
) -> Result<trellis_agent::providers::Provider, trellis_diag::Diagnostic> {
    let xdg = std::env::var("XDG_CONFIG_HOME").ok();
    let home = std::env::var("HOME").ok();
    let Some(file) = trellis_agent::providers::config_path(xdg.as_deref(), home.as_deref()) else {
        return Err(HostCode::ConfigProviders
            .diagnostic("no providers.toml: neither XDG_CONFIG_HOME nor HOME is set"));
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        // The built-in provider needs no file.
        Err(error)
            if error.kind() == std::io::ErrorKind::NotFound
                && name == Some(trellis_agent::providers::CLAUDE_CODE) =>
        {
            String::new()
        }
        Err(error) => {
            return Err(HostCode::ConfigProviders.diagnostic(
                format!(
                    "cannot read {}: {error} (it names the agent providers `trellis lower` may use; see docs/design.md §4.9)",
                    file.display()
                ),
            )
            .with_file(file.display().to_string()));
        }
    };
    // The provider's `pass_env` values come from this environment, the user's,
    // never the daemon's.
    trellis_agent::providers::select(&file, &text, name)
        .map(|provider| provider.with_client_env(|name| std::env::var(name).ok()))
}

/// `trellis lower` and `trellis decisions triage`: the provider is read here,
/// from the user's providers.toml, and sent with the request (the daemon's
/// environment is not the user's).
fn agent_request(
    root: &std::path::Path,
    no_daemon: bool,
    method: &str,
    mut params: Value,
    provider: Option<&str>,
    json_output: bool,
) -> ExitCode {
    let fail = |diagnostic: trellis_diag::Diagnostic| {
        render::diagnostics(&mut std::io::stderr(), std::slice::from_ref(&diagnostic));
        ExitCode::FAILURE
    };
    if no_daemon {
        return fail(HostCode::JobNeedsDaemon.diagnostic(
            "lowering runs in the root's daemon (its jobs and agents live there): drop --no-daemon",
        ));
    }
    let provider = match user_provider(provider) {
        Ok(provider) => provider,
        Err(diagnostic) => return fail(diagnostic),
    };
    params["provider"] = provider.to_json();
    params["path"] = json!(client_path());
    let stdout = &mut std::io::stdout();
    let mut progress = |event: Value| {
        if json_output {
            let _ = writeln!(stdout, "{event}");
        } else {
            render::job_event(stdout, &event);
        }
        let _ = stdout.flush();
    };
    let answer = client::request(root, false, method, params, &mut progress);
    match answer {
        Ok(result) => ExitCode::from(render::lower_summary(stdout, &result, json_output)),
        Err(ClientError::Failed(errors)) => {
            render::diagnostics(&mut std::io::stderr(), &errors);
            ExitCode::FAILURE
        }
        Err(ClientError::Transport(message)) => {
            eprintln!("trellis: {message}");
            ExitCode::FAILURE
        }
    }
}

fn spec(reference: &str) -> ExitCode {
    match trellis_context::spec_section(reference) {
        Ok(section) => {
            println!("{}", section.text);
            ExitCode::SUCCESS
        }
        Err(diagnostic) => {
            render::diagnostics(&mut std::io::stderr(), std::slice::from_ref(&diagnostic));
            ExitCode::FAILURE
        }
    }
}

/// Sends a command's request (to the daemon, or in-process under
/// `--no-daemon`) and renders the answer.
fn ask(root: &std::path::Path, invocation: &Invocation, request: &Request) -> ExitCode {
    let (method, params) = (request.method(), request.params());
    let mut progress = |event: Value| render::progress(&mut std::io::stderr(), &event);
    let no_daemon = invocation.no_daemon;
    // The context answer lists thousands of files: it is decoded straight
    // from its frame into borrowed columns, never built as a `Value`.
    let answer = if let Command::Context { .. } = invocation.command {
        client::request_frame(root, no_daemon, method, params, &mut progress).map(Answer::Frame)
    } else {
        client::request(root, no_daemon, method, params, &mut progress).map(Answer::Value)
    };
    // Buffered: a status of thousands of rows is one write, not one per line.
    let stdout = &mut std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let code = match answer {
        Ok(Answer::Value(result)) => render::answer(stdout, &invocation.command, &result),
        Ok(Answer::Frame(frame)) => match &invocation.command {
            Command::Context { json, .. } => render::context(stdout, *json, &frame),
            _ => 1,
        },
        Err(ClientError::Failed(errors)) => {
            if matches!(
                invocation.command,
                Command::Status { json: true, .. } | Command::Context { json: true, .. }
            ) {
                let _ = writeln!(stdout, "{}", trellis_diag::errors_document(&errors));
            } else {
                render::diagnostics(&mut std::io::stderr(), &errors);
            }
            1
        }
        Err(ClientError::Transport(message)) => {
            eprintln!("trellis: {message}");
            1
        }
    };
    let _ = stdout.flush();
    ExitCode::from(code)
}

/// A successful answer: a value, or a result left in its frame.
enum Answer {
    Value(Value),
    Frame(trellis_rpc::ResultFrame),
}

/// How long `daemon stop` waits for the process to exit. The daemon's own waits
/// are bounded well below it (in-flight requests aside, a stalled client is
/// dropped after the write timeout).
const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

fn daemon_control(root: &std::path::Path, command: DaemonCommand) -> ExitCode {
    let client = match client::connect_existing(root) {
        Ok(client) => client,
        Err(ClientError::Transport(message)) => {
            eprintln!("trellis: {message}");
            return ExitCode::FAILURE;
        }
        Err(ClientError::Failed(errors)) => {
            render::diagnostics(&mut std::io::stderr(), &errors);
            return ExitCode::FAILURE;
        }
    };
    let Some(mut client) = client else {
        println!("no daemon is running for {}", root.display());
        return ExitCode::SUCCESS;
    };
    let method = match command {
        DaemonCommand::Stop => "daemon.stop",
        DaemonCommand::Status | DaemonCommand::Run => "daemon.status",
    };
    let answer = client::call(&mut client, method, json!({}), &mut |_| {});
    drop(client);
    let answer = answer.map_err(|error| match error {
        ClientError::Failed(errors) => {
            let mut message = Vec::new();
            render::diagnostics(&mut message, &errors);
            String::from_utf8_lossy(&message).trim_end().to_owned()
        }
        ClientError::Transport(message) => message,
    });
    let outcome = answer.and_then(|answer| match command {
        DaemonCommand::Stop => {
            let stopped: DaemonStopped = decode_answer(&answer)?;
            let gone = i32::try_from(stopped.pid)
                .map_or(true, |pid| client::wait_for_exit(pid, STOP_TIMEOUT));
            if gone {
                Ok(format!("stopped the daemon for {}", root.display()))
            } else {
                Err(format!(
                    "the daemon for {} (pid {}) was asked to stop but is still running after {} s",
                    root.display(),
                    stopped.pid,
                    STOP_TIMEOUT.as_secs()
                ))
            }
        }
        DaemonCommand::Status | DaemonCommand::Run => {
            let status: DaemonStatus = decode_answer(&answer)?;
            Ok(format!(
                "daemon for {}: pid {}, {}, up {} ms",
                root.display(),
                status.pid,
                status.version,
                status.uptime_ms
            ))
        }
    });
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("trellis: {message}");
            ExitCode::FAILURE
        }
    }
}
