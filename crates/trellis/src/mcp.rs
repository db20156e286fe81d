//! The internal commands of the agent face (impl plan §8.8):
//!
//! - `trellis _mcp --job ID [--root PATH] [--socket PATH] [--result-cap TOKENS]`:
//!   the stdio shim an agent CLI spawns. It speaks MCP on stdin/stdout
//!   (`trellis-mcp`) and forwards each tool call to the root's daemon as
//!   `job.tool`. It finds the daemon from its arguments alone — `--socket`, or
//!   the socket of `--root` — because SDK clients pass a spawned server almost
//!   no environment (no `XDG_RUNTIME_DIR`, no `TRELLIS_ROOT`). It never spawns a
//!   daemon: jobs live in the daemon that created them.
//! - `trellis _job create DEF --budget N [--json]`: creates a job in the root's
//!   daemon and prints its id (with `--json`: the job record plus the root and
//!   socket a shim needs); `trellis _job inspect ID` prints the record.
//!
//! - `trellis _script …` and `trellis _relay …`: the scripted provider's agent
//!   and the jail's network relay (`trellis-agent`'s `script` and `relay`).
//!
//! All are underscore commands: internal, for the job loop and for tests.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use trellis_diag::Diagnostic;
use trellis_mcp::{DEFAULT_RESULT_CAP, JobPort, McpServer, Tool};
use trellis_rpc::{CallError, Client, HelloOutcome};

use trellis_service::codes::HostCode;
use trellis_service::identity::{VERSION, binary_identity};
use trellis_service::service::tool_limits::RESULT_CAP_PARAM;

/// Runs an underscore command, or `None` when `args` is not one.
pub fn run_internal(args: &[String]) -> Option<ExitCode> {
    match args.first().map(String::as_str) {
        Some("_mcp") => Some(mcp(&args[1..])),
        Some("_job") => Some(job(&args[1..])),
        Some("_script") => Some(trellis_agent::script::run(&args[1..])),
        Some("_relay") => Some(trellis_agent::relay::run(&args[1..])),
        _ => None,
    }
}

/// `--name value` options; anything else is a usage error.
fn options(args: &[String], allowed: &[&str]) -> Result<Vec<(String, String)>, String> {
    let mut found = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let name = arg.as_str();
        if !allowed.contains(&name) {
            return Err(format!("unexpected argument {arg:?}"));
        }
        if name == "--json" {
            found.push((name.to_owned(), String::new()));
            continue;
        }
        let value = rest.next().ok_or_else(|| format!("{name} needs a value"))?;
        found.push((name.to_owned(), value.clone()));
    }
    Ok(found)
}

fn option<'o>(options: &'o [(String, String)], name: &str) -> Option<&'o str> {
    options
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn usage(message: &str) -> ExitCode {
    eprintln!("trellis: {message}");
    ExitCode::from(2)
}

fn root_of(options: &[(String, String)]) -> Result<PathBuf, Diagnostic> {
    let root = match option(options, "--root") {
        Some(root) => PathBuf::from(root),
        None => {
            let cwd = std::env::current_dir().map_err(|error| {
                HostCode::ConfigNoRoot.diagnostic(format!("no working directory: {error}"))
            })?;
            crate::root::discover_root(std::env::var_os("TRELLIS_ROOT"), &cwd)?
        }
    };
    root.canonicalize().map_err(|error| {
        HostCode::ConfigNoRoot
            .diagnostic(format!("cannot use the root {}: {error}", root.display()))
    })
}

fn mcp(args: &[String]) -> ExitCode {
    let options = match options(args, &["--job", "--root", "--socket", "--result-cap"]) {
        Ok(options) => options,
        Err(message) => return usage(&message),
    };
    let Some(job) = option(&options, "--job") else {
        return usage("_mcp needs --job ID");
    };
    let cap = match option(&options, "--result-cap").map(str::parse::<usize>) {
        None => DEFAULT_RESULT_CAP,
        Some(Ok(cap)) => cap,
        Some(Err(_)) => return usage("--result-cap takes a number of tokens"),
    };
    let socket = match option(&options, "--socket") {
        Some(socket) => PathBuf::from(socket),
        None => match root_of(&options)
            .map_err(|d| d.message)
            .and_then(|root| trellis_rpc::socket_path_for(&root).map_err(|e| e.to_string()))
        {
            Ok(socket) => socket,
            Err(message) => {
                eprintln!("trellis _mcp: {message}");
                return ExitCode::FAILURE;
            }
        },
    };
    let port = DaemonPort {
        job: job.to_owned(),
        socket,
        client: None,
        result_cap_bytes: cap.saturating_mul(4),
    };
    let mut server = McpServer::new(port, VERSION).with_result_cap(cap);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    match trellis_mcp::serve(BufReader::new(stdin.lock()), stdout.lock(), &mut server) {
        Ok(()) => ExitCode::SUCCESS,
        // The client went away mid-session: nothing to answer, nothing to clean.
        Err(error) => {
            eprintln!("trellis _mcp: the session ended: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Forwards tool calls to the daemon holding the job, over one connection.
struct DaemonPort {
    job: String,
    socket: PathBuf,
    client: Option<Client>,
    /// This session's result cap, told to the daemon with each call so that a
    /// draft whose echo this shim would refuse is refused, not stored.
    result_cap_bytes: usize,
}

impl DaemonPort {
    fn client(&mut self) -> Result<&mut Client, Vec<Value>> {
        if self.client.is_none() {
            let mut client = Client::connect(&self.socket).map_err(|error| {
                vec![
                    Diagnostic::new(
                        trellis_rpc::diag::DAEMON_UNREACHABLE,
                        format!("no daemon at {}: {error}", self.socket.display()),
                    )
                    .to_json(),
                ]
            })?;
            match client.hello(&binary_identity()) {
                Ok(HelloOutcome::Match) => {}
                Ok(HelloOutcome::Mismatch { .. }) => {
                    return Err(vec![
                        Diagnostic::new(
                            trellis_rpc::diag::VERSION_MISMATCH,
                            "the daemon runs another trellis; its jobs are not this shim's",
                        )
                        .to_json(),
                    ]);
                }
                Err(error) => return Err(transport(error)),
            }
            self.client = Some(client);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }
}

fn transport(error: CallError) -> Vec<Value> {
    match error {
        CallError::Rpc(error) if !error.diagnostics().is_empty() => error
            .diagnostics()
            .iter()
            .map(Diagnostic::to_json)
            .collect(),
        other => vec![
            Diagnostic::new(trellis_rpc::diag::DAEMON_UNREACHABLE, other.to_string()).to_json(),
        ],
    }
}

impl JobPort for DaemonPort {
    fn call(&mut self, tool: Tool, arguments: &Value) -> Result<Value, Vec<Value>> {
        let params = json!({
            "job": self.job,
            "tool": tool.name(),
            "arguments": arguments,
            RESULT_CAP_PARAM: self.result_cap_bytes,
        });
        let client = self.client()?;
        match client.call("job.tool", params) {
            Ok(mut document) => {
                // The service's per-request timings are not part of a tool result.
                if let Value::Object(fields) = &mut document {
                    fields.remove("timings");
                }
                Ok(document)
            }
            Err(error) => {
                if !matches!(error, CallError::Rpc(_)) {
                    self.client = None; // reconnect on the next call
                }
                Err(transport(error))
            }
        }
    }
}

fn job(args: &[String]) -> ExitCode {
    let (verb, rest) = match args.split_first() {
        Some((verb, rest)) => (verb.as_str(), rest),
        None => return usage("_job create DEF --budget N [--json] | _job inspect ID"),
    };
    let (method, params, json_out) = match verb {
        "create" => {
            let Some((def, rest)) = rest.split_first() else {
                return usage("_job create needs DEF");
            };
            let options = match options(rest, &["--budget", "--json"]) {
                Ok(options) => options,
                Err(message) => return usage(&message),
            };
            let Some(Ok(budget)) = option(&options, "--budget").map(str::parse::<u64>) else {
                return usage("_job create needs --budget N (tokens)");
            };
            let json_out = option(&options, "--json").is_some();
            (
                "job.create",
                json!({ "def": def, "budget": budget, "path": crate::client_env::client_path() }),
                json_out,
            )
        }
        "inspect" => match rest {
            [id] => ("job.inspect", json!({ "job": id }), true),
            _ => return usage("_job inspect needs ID"),
        },
        other => return usage(&format!("unknown _job command {other:?}")),
    };
    let root = match root_of(&[]) {
        Ok(root) => root,
        Err(diagnostic) => {
            eprintln!("{}", trellis_diag::errors_document(&[diagnostic]));
            return ExitCode::FAILURE;
        }
    };
    let answer = crate::client::request(&root, false, method, params, &mut |_| {});
    let stdout = &mut std::io::stdout().lock();
    match answer {
        Ok(mut record) => {
            if let Value::Object(fields) = &mut record {
                fields.remove("timings");
            }
            if json_out {
                record["root"] = json!(root.display().to_string());
                record["socket"] = json!(socket_text(&root));
                let _ = writeln!(stdout, "{record}");
            } else {
                let _ = writeln!(stdout, "{}", record["job"].as_str().unwrap_or_default());
            }
            ExitCode::SUCCESS
        }
        Err(crate::client::ClientError::Failed(errors)) => {
            let _ = writeln!(stdout, "{}", trellis_diag::errors_document(&errors));
            ExitCode::FAILURE
        }
        Err(crate::client::ClientError::Transport(message)) => {
            eprintln!("trellis: {message}");
            ExitCode::FAILURE
        }
    }
}

fn socket_text(root: &Path) -> String {
    trellis_rpc::socket_path_for(root)
        .map(|path| path.display().to_string())
        .unwrap_or_default()
}
