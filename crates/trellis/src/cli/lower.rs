//! `trellis lower` and `trellis decisions triage`: the requests that start the
//! daemon's agents (design §4.9). The provider is read here, from the user's
//! providers.toml, and sent with the request (the daemon's environment is not
//! the user's); each job state change is printed as it comes.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};
use trellis_service::codes::HostCode;

use crate::args::{Command, Invocation};
use crate::client::{self, ClientError};
use crate::client_env::{client_path, user_provider};
use crate::render;

/// Runs `lower` or `decisions triage`; any other command is a usage error.
pub fn run(root: &Path, invocation: &Invocation) -> ExitCode {
    let (method, params, provider, json) = match &invocation.command {
        Command::Lower {
            defs,
            provider,
            jobs,
            json,
        } => {
            let mut params = json!({ "defs": defs });
            if let Some(jobs) = jobs {
                params["jobs"] = json!(jobs);
            }
            ("lower", params, provider, json)
        }
        Command::DecisionsTriage {
            label,
            provider,
            json,
        } => (
            "decisions.triage",
            json!({ "label": label }),
            provider,
            json,
        ),
        _ => return ExitCode::from(2),
    };
    agent_request(
        root,
        invocation.no_daemon,
        method,
        params,
        provider.as_deref(),
        *json,
    )
}

fn agent_request(
    root: &Path,
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
            render::lost_daemon(&message);
            ExitCode::FAILURE
        }
    }
}
