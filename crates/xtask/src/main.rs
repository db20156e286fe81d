//! `cargo xtask COMMAND`: the workspace's tasks (see `cargo xtask help`).

#![allow(
    clippy::disallowed_methods,
    reason = "a host-side tool: it runs installers and the test suite"
)]

use std::process::{Command, ExitCode};
use std::time::Instant;

use xtask::{clients, provision};

const HELP: &str = "\
cargo xtask: the workspace's tasks

usage:
  cargo xtask test [ARGS...]      install the pinned test clients that are missing,
                                  then run `cargo test --workspace [ARGS...]`
                                  (the README's test command)
  cargo xtask provision [NAME...] install the missing pinned clients (all, or those named)
  cargo xtask clients             list the pinned clients and whether each is installed
  cargo xtask help                this text

The pins are in test-data/clients.toml; clients install into .ci/cache/ (gitignored).
A system package (bubblewrap) is installed with apt-get when running as root;
otherwise the command to run is named.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => ("help", &[][..]),
    };
    let outcome = match command {
        "test" => test(rest),
        "provision" => selected(rest).and_then(|clients| provision::provision(&clients)),
        "clients" => list(),
        "help" | "--help" | "-h" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}\n\n{HELP}")),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Provisions every client, then runs the workspace's tests with `args`.
fn test(args: &[String]) -> Result<(), String> {
    let started = Instant::now();
    provision::provision(&clients::load()?)?;
    eprintln!(
        "xtask: clients ready after {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["test", "--workspace"])
        .args(args)
        .current_dir(clients::workspace())
        .status()
        .map_err(|error| format!("cannot run cargo test: {error}"))?;
    let elapsed = started.elapsed().as_secs_f64();
    if status.success() {
        eprintln!("xtask: the suite passed; {elapsed:.0} s in all (build included)");
        Ok(())
    } else {
        Err(format!(
            "cargo test --workspace failed ({status}) after {elapsed:.0} s"
        ))
    }
}

/// The named clients (every one when none is named).
fn selected(names: &[String]) -> Result<Vec<clients::Client>, String> {
    let all = clients::load()?;
    if names.is_empty() {
        return Ok(all);
    }
    names
        .iter()
        .map(|name| {
            all.iter()
                .find(|client| &client.name == name)
                .cloned()
                .ok_or_else(|| format!("no pinned client named {name:?} (test-data/clients.toml)"))
        })
        .collect()
}

fn list() -> Result<(), String> {
    for client in clients::load()? {
        let state = match client.locate() {
            Ok(path) => format!("installed: {}", path.display()),
            Err(problem) => format!("missing: {problem}"),
        };
        println!("{:<16} {:<48} {state}", client.name, client.pins());
    }
    Ok(())
}
