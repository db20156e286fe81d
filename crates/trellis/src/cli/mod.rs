//! What each command does on the client side: find the root, reach the daemon (or
//! answer in-process with `--no-daemon`), render the answer. Exit codes: 0 success,
//! 1 the command ran and found problems (or failed), 2 a usage error.
//!
//! This module only dispatches: each family of commands has its module below,
//! and none of them imports from here (what they share — the client, the
//! client's environment, rendering — sits beside `cli`, not in it).

use std::path::PathBuf;
use std::process::ExitCode;

use trellis_service::codes::HostCode;

use crate::args::{self, Command};
use crate::render;
use crate::root::discover_root;

mod about;
mod answer;
mod daemon;
mod init;
mod lower;
mod repl;
mod request;

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
    if let Some(code) = about::run(&invocation.command) {
        return code;
    }
    // Makes the root the other commands find.
    if let Command::Init { .. } = invocation.command {
        return init::run(&invocation.command);
    }
    // Finds its root itself, from the editor's workspace folder too.
    if let Command::Lsp = invocation.command {
        return crate::lsp::run();
    }
    let root = match find_root() {
        Ok(root) => root,
        Err(diagnostic) => {
            let json = invocation.command.json();
            render::errors(
                &mut std::io::stdout(),
                json,
                std::slice::from_ref(&diagnostic),
            );
            return ExitCode::FAILURE;
        }
    };
    match &invocation.command {
        Command::Daemon(command) => daemon::run(&root, *command),
        Command::Call { def, args, json } => repl::call(&root, def, args, *json),
        Command::Repl { json } => ExitCode::from(repl::run(&root, invocation.no_daemon, *json)),
        Command::Lower { .. } | Command::DecisionsTriage { .. } => lower::run(&root, &invocation),
        Command::Answer { .. } => ExitCode::from(answer::run(&root, &invocation)),
        _ => request::run(&root, &invocation),
    }
}

fn find_root() -> Result<PathBuf, trellis_diag::Diagnostic> {
    let cwd = std::env::current_dir().map_err(|error| {
        HostCode::ConfigNoRoot.diagnostic(format!("no working directory: {error}"))
    })?;
    discover_root(std::env::var_os("TRELLIS_ROOT"), &cwd)
}
