//! The commands that are one request to the root's service — `check`,
//! `status`, `refresh`, `adopt`, `review`, `test`, `decisions editorial`,
//! `toolchain update`, `context` and `jobs`: the request is built from the
//! command line, sent to the daemon (or answered in-process under
//! `--no-daemon`), and its answer rendered.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use trellis_service::protocol::{
    AdoptParams, CheckParams, ContextParams, EditorialParams, Request, ReviewParams, StatusParams,
    TestParams,
};

use crate::args::{Command, Invocation};
use crate::client::{self, ClientError};
use crate::client_env::{absolute, cache_env, client_path};
use crate::render;

/// Runs the command's request; a command that is not one is a usage error.
pub fn run(root: &Path, invocation: &Invocation) -> ExitCode {
    match service_request(&invocation.command) {
        Some(request) => ask(root, invocation, &request),
        // Every other command is answered by its own module.
        None => ExitCode::from(2),
    }
}

/// The request a command sends the root's service; `None` for the commands
/// this process answers itself (or talks to the daemon about in their own way).
fn service_request(command: &Command) -> Option<Request> {
    Some(match command {
        Command::Check { def, .. } => Request::Check(CheckParams { def: def.clone() }),
        Command::Status {
            verify,
            all,
            json,
            reseed,
        } => Request::Status(StatusParams {
            verify: Some(*verify),
            path: if *verify { client_path() } else { None },
            // The human table shows the rows that need work, a few of each
            // status, unless --all: the daemon sends those and counts the rest.
            summary: (!*json && !*all && !*verify).then_some(true),
            reseed: *reseed,
        }),
        Command::Refresh { .. } => Request::Refresh,
        Command::Adopt { def, cite, .. } => Request::Adopt(AdoptParams {
            def: def.clone(),
            cite: Some(cite.clone()),
        }),
        Command::Review { def, .. } => Request::Review(ReviewParams { def: def.clone() }),
        Command::Test { def, .. } => Request::Test(TestParams {
            def: def.clone(),
            path: client_path(),
            cache: Some(cache_env()),
        }),
        Command::DecisionsEditorial { label, module, .. } => {
            Request::DecisionsEditorial(EditorialParams {
                label: label.clone(),
                module: module.clone(),
            })
        }
        Command::ToolchainUpdate { .. } => Request::ToolchainUpdate,
        Command::Context {
            def, budget, out, ..
        } => Request::Context(ContextParams {
            def: def.clone(),
            budget: *budget,
            out: out.as_deref().map(absolute),
        }),
        Command::Jobs { .. } => Request::Jobs,
        Command::Help
        | Command::Init { .. }
        | Command::CacheKeygen
        | Command::Version
        | Command::Spec { .. }
        | Command::Skill { .. }
        | Command::Lsp
        | Command::Daemon(_)
        | Command::Call { .. }
        | Command::Repl { .. }
        | Command::Lower { .. }
        | Command::DecisionsTriage { .. }
        | Command::Answer { .. } => return None,
    })
}

/// Sends a command's request (to the daemon, or in-process under
/// `--no-daemon`) and renders the answer.
fn ask(root: &Path, invocation: &Invocation, request: &Request) -> ExitCode {
    let (method, params) = (request.method(), request.params());
    let mut progress = |event: Value| render::progress(&mut std::io::stderr(), &event);
    let no_daemon = invocation.no_daemon;
    // The context answer lists thousands of files: it is decoded straight
    // from its frame into borrowed columns, never built as a `Value`.
    let (answer, unstored) = if let Command::Context { .. } = invocation.command {
        let answer = client::request_frame(root, no_daemon, method, params, &mut progress);
        (answer.map(Answer::Frame), None)
    } else {
        let (answer, unstored) =
            client::request_storing_later(root, no_daemon, method, params, &mut progress);
        (answer.map(Answer::Value), unstored)
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
            render::errors(stdout, invocation.command.json(), &errors);
            1
        }
        Err(ClientError::Transport(message)) => {
            eprintln!("trellis: {message}");
            1
        }
    };
    let _ = stdout.flush();
    // Stored once the answer is out: a person reads a one-shot `check`
    // while the status it stores beside it is computed (design §7.16).
    if let Some(unstored) = unstored {
        unstored.store();
    }
    ExitCode::from(code)
}

/// A successful answer: a value, or a result left in its frame.
enum Answer {
    Value(Value),
    Frame(trellis_rpc::ResultFrame),
}
