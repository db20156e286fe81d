//! Installs the pinned clients that are missing, one process at a time: an
//! exclusive lock on `.ci/cache/.provision.lock` serialises concurrent runs, each
//! client is checked again once the lock is held, and a package install goes to
//! a staging directory renamed into place only when complete, so an interrupted
//! install never looks installed.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::clients::{self, Client, Kind};

/// Installs every client in `clients` that [`Client::locate`] finds missing,
/// printing a line for each; `Err` names the client and the command that failed,
/// or the command a user must run where installing is impossible here.
pub fn provision(clients: &[Client]) -> Result<(), String> {
    let cache = clients::cache();
    std::fs::create_dir_all(&cache)
        .map_err(|error| format!("cannot create {}: {error}", cache.display()))?;
    let lock_path = cache.join(".provision.lock");
    let lock = File::create(&lock_path)
        .map_err(|error| format!("cannot open {}: {error}", lock_path.display()))?;
    lock.lock()
        .map_err(|error| format!("cannot lock {}: {error}", lock_path.display()))?;
    for client in clients {
        let Err(problem) = client.locate() else {
            eprintln!("xtask: {} ({}) is installed", client.name, client.pins());
            continue;
        };
        eprintln!(
            "xtask: installing {} ({}): {problem}",
            client.name,
            client.pins()
        );
        let started = Instant::now();
        install(client)?;
        client.locate().map_err(|problem| {
            format!(
                "{} was installed but is still not usable: {problem}",
                client.name
            )
        })?;
        eprintln!(
            "xtask: installed {} in {:.1} s",
            client.name,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn install(client: &Client) -> Result<(), String> {
    match &client.kind {
        Kind::Pip { packages, .. } => staged(client, |staging| {
            let mut command = Command::new("python3");
            command
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args([
                    "--no-input",
                    "--no-warn-conflicts",
                    "--root-user-action=ignore",
                ])
                .arg("--target")
                .arg(staging)
                .args(packages);
            command
        }),
        Kind::Npm { packages, .. } => staged(client, |staging| {
            let mut command = Command::new("npm");
            command
                .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                .arg(staging)
                .args(packages);
            command
        }),
        Kind::System { program, package } => install_system(program, package),
    }
}

/// Runs the installer into `<dir>.partial`, then swaps it into `<dir>`.
fn staged(client: &Client, installer: impl Fn(&Path) -> Command) -> Result<(), String> {
    let dir = client.dir().expect("a package client has a directory");
    let staging = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging)
        .map_err(|error| format!("cannot create {}: {error}", staging.display()))?;
    let mut command = installer(&staging);
    run(&mut command)?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).map_err(|error| {
        format!(
            "cannot move {} to {}: {error}",
            staging.display(),
            dir.display()
        )
    })
}

/// A distribution package: apt-get when running as root, else the command to run.
fn install_system(program: &str, package: &str) -> Result<(), String> {
    let by_hand = format!(
        "install the distribution's `{package}` package (Debian and Ubuntu: `sudo apt-get \
         install -y {package}`) so that `{program}` is on PATH, then run `{}` again",
        clients::PROVISION
    );
    if !running_as_root() {
        return Err(format!(
            "{program} is missing and this is not root: {by_hand}"
        ));
    }
    if clients::on_path("apt-get").is_none() {
        return Err(format!(
            "{program} is missing and apt-get is not here: {by_hand}"
        ));
    }
    run(Command::new("apt-get").args(["update", "-qq"]))
        .and_then(|()| {
            run(Command::new("apt-get")
                .args(["install", "-y", "-qq", package])
                .stdout(Stdio::null()))
        })
        .map_err(|error| format!("{error}; {by_hand}"))
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|uids| uids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Runs an installer with its output passed through; `Err` is the command line.
fn run(command: &mut Command) -> Result<(), String> {
    let line = format!(
        "{} {}",
        command.get_program().to_string_lossy(),
        command
            .get_args()
            .map(|arg| arg.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("`{line}` failed ({status})")),
        Err(error) => Err(format!("cannot run `{line}`: {error}")),
    }
}
