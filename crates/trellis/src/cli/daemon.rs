//! `trellis daemon run|stop|status`: `run` serves the root in this process
//! ([`crate::daemon`]); `stop` and `status` talk to the daemon already running,
//! and never start one.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trellis_service::protocol::{DaemonStatus, DaemonStopped, decode_answer};

use crate::args::DaemonCommand;
use crate::client::{self, ClientError};
use crate::render;

/// How long `daemon stop` waits for the process to exit. The daemon's own waits
/// are bounded well below it (in-flight requests aside, a stalled client is
/// dropped after the write timeout).
const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

pub fn run(root: &Path, command: DaemonCommand) -> ExitCode {
    match command {
        DaemonCommand::Run => match crate::daemon::run(root) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("trellis: {message}");
                ExitCode::FAILURE
            }
        },
        command => control(root, command),
    }
}

fn control(root: &Path, command: DaemonCommand) -> ExitCode {
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
