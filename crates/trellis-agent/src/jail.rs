//! The agent jail (design §4.9.1): a real provider's agent runs inside
//! bubblewrap, with a fresh tmpfs `HOME`, the job's scratch directory as the only
//! host directory it may write, the system (`/usr`, the loader's top-level
//! links, CA certificates and resolver files) and the paths its provider names
//! (the trellis binary, the CLI's installation) read-only, a network namespace
//! of its own, and an environment made of exactly the variables it is given.
//! Nothing else of the host is mounted: the project tree is not there, and the
//! agent reaches its job only through the per-job socket in its scratch
//! directory.
//!
//! The jail's network is its loopback alone (`--unshare-net`): no host port, no
//! abstract Unix socket of the host, no outside address. A job that may reach
//! its model gets a [`Relay`]: `trellis _relay` runs first in the jail,
//! listening on [`PROXY_ADDRESS`] (which `HTTPS_PROXY` and `HTTP_PROXY` name),
//! and passes each connection over a Unix socket in the scratch directory to the
//! daemon's forwarder outside, which connects only to the provider's allowed
//! hosts (`forwarder`).
//!
//! The jail is not best-effort: the daemon probes it once at start (a real
//! bubblewrap run of this binary), and a provider that needs it is refused with
//! `job-jail-unavailable` when the probe failed, naming what is missing.
//!
//! Every process of the jail stays in the agent's process group (no
//! `--new-session`), so the runner's `killpg` reaches them all; `--unshare-pid`
//! makes bubblewrap's init the namespace's pid 1, whose death takes every
//! process of the namespace with it — even one that left the group with
//! `setsid` — and `--die-with-parent` ends the jail if its bubblewrap is killed
//! alone.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use trellis_diag::Diagnostic;
use trellis_service::codes::HostCode;

/// The jail's `HOME`: a tmpfs of its own, empty at start, gone at the end.
pub const HOME: &str = "/home/agent";
/// The jail's `PATH`.
pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Where the relay listens in the jail's own loopback: the agent's HTTP proxy.
pub const PROXY_ADDRESS: &str = "127.0.0.1:3128";
/// The size cap of the `HOME` tmpfs.
const HOME_BYTES: u64 = 256 << 20;
/// How long the start-up probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Top-level names a merged-`/usr` system links into `/usr` (or, elsewhere,
/// directories the loader needs): reproduced as links, or bound read-only.
const SYSTEM_TOP: &[&str] = &["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/// Files and directories of `/etc` the agent may need: CA certificates, the
/// resolver's configuration, the time zone. Bound read-only when present.
const SYSTEM_ETC: &[&str] = &[
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/crypto-policies",
    "/etc/alternatives",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/localtime",
];

/// A bubblewrap that the probe showed can build the jail.
#[derive(Debug)]
pub struct Jail {
    bwrap: PathBuf,
}

/// What one jailed process gets.
pub struct Spec<'a> {
    /// Bound read-only at their own paths.
    pub read_only: Vec<PathBuf>,
    /// Bound read-write at its own path; the working directory.
    pub scratch: &'a Path,
    /// The whole environment, beside `HOME` and `PATH` (and the proxy
    /// variables a relay sets).
    pub env: Vec<(String, String)>,
    /// The way out to the daemon's forwarder, for an agent that reaches its model.
    pub relay: Option<Relay<'a>>,
}

/// What runs the relay in front of the jailed program.
pub struct Relay<'a> {
    /// The trellis binary, bound read-only in the jail.
    pub trellis: &'a Path,
    /// The forwarder's socket, in the scratch directory.
    pub socket: &'a Path,
}

static PROBED: OnceLock<Result<Jail, Diagnostic>> = OnceLock::new();

/// Probes the jail once for the process's life: `TRELLIS_BWRAP` names the
/// bubblewrap binary, else `bwrap` is looked up on `PATH`. The daemon calls this
/// at start; a later call returns what that probe found.
pub fn probe_once() -> &'static Result<Jail, Diagnostic> {
    PROBED.get_or_init(|| {
        let bwrap = match std::env::var_os("TRELLIS_BWRAP").filter(|v| !v.is_empty()) {
            Some(path) => Ok(PathBuf::from(path)),
            None => find_on_path(OsStr::new("bwrap"), std::env::var_os("PATH").as_deref())
                .ok_or_else(|| {
                    unavailable(
                        "bubblewrap (`bwrap`) is not on the daemon's PATH: install it \
                         (apt-get install bubblewrap) or name it with TRELLIS_BWRAP",
                    )
                }),
        };
        let exe = std::env::current_exe()
            .map_err(|error| unavailable(format!("no trellis binary to bind: {error}")));
        bwrap.and_then(|bwrap| probe(bwrap, &exe?))
    })
}

/// The probed jail, or why there is none.
pub fn available() -> Result<&'static Jail, Diagnostic> {
    probe_once().as_ref().map_err(Clone::clone)
}

fn unavailable(message: impl Into<String>) -> Diagnostic {
    HostCode::JobJailUnavailable.diagnostic(message)
}

/// Builds a jail around `exe --version` with the same system mounts a job gets.
fn probe(bwrap: PathBuf, exe: &Path) -> Result<Jail, Diagnostic> {
    if !bwrap.is_file() {
        return Err(unavailable(format!(
            "bubblewrap is not installed at {} (install bubblewrap, or name it with TRELLIS_BWRAP)",
            bwrap.display()
        )));
    }
    let jail = Jail { bwrap };
    let scratch = std::env::temp_dir().join(format!("trellis-jail-probe-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|error| {
        unavailable(format!(
            "cannot make the probe's scratch directory {}: {error}",
            scratch.display()
        ))
    })?;
    let spec = Spec {
        read_only: vec![exe.to_owned()],
        scratch: &scratch,
        env: Vec::new(),
        relay: None,
    };
    let mut command = jail.command(&spec, exe, &[OsString::from("--version")]);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = run_with_timeout(command, PROBE_TIMEOUT);
    let _ = std::fs::remove_dir_all(&scratch);
    let output = output.map_err(|why| {
        unavailable(format!(
            "bubblewrap ({}) cannot build the agent jail: {why}",
            jail.bwrap.display()
        ))
    })?;
    if !output.status.success() || !output.stdout.starts_with(b"trellis ") {
        return Err(unavailable(format!(
            "bubblewrap ({}) cannot build the agent jail ({}): {}",
            jail.bwrap.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(jail)
}

impl Jail {
    /// `program args` inside the jail `spec` describes.
    pub fn command(&self, spec: &Spec<'_>, program: &Path, args: &[OsString]) -> Command {
        let mut command = Command::new(&self.bwrap);
        command.args([
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "trellis-jail",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
            "--clearenv",
        ]);
        command.args(["--ro-bind", "/usr", "/usr"]);
        for name in SYSTEM_TOP {
            let host = Path::new("/").join(name);
            match std::fs::read_link(&host) {
                Ok(target) => {
                    command.arg("--symlink").arg(target).arg(&host);
                }
                Err(_) if host.is_dir() => {
                    command.arg("--ro-bind").arg(&host).arg(&host);
                }
                Err(_) => {}
            }
        }
        for path in SYSTEM_ETC {
            command.args(["--ro-bind-try", path, path]);
        }
        command.args(["--proc", "/proc", "--dev", "/dev"]);
        command
            .arg("--size")
            .arg(HOME_BYTES.to_string())
            .args(["--tmpfs", HOME]);
        for path in &spec.read_only {
            command.arg("--ro-bind").arg(path).arg(path);
        }
        command.arg("--bind").arg(spec.scratch).arg(spec.scratch);
        // The root itself is bubblewrap's tmpfs: read-only once every mount
        // point is made, so the scratch directory and HOME are all that is writable.
        command.args(["--remount-ro", "/"]);
        command.arg("--chdir").arg(spec.scratch);
        command.args(["--setenv", "HOME", HOME, "--setenv", "PATH", PATH]);
        for (name, value) in &spec.env {
            command.arg("--setenv").arg(name).arg(value);
        }
        if spec.relay.is_some() {
            let proxy = format!("http://{PROXY_ADDRESS}");
            for name in ["HTTPS_PROXY", "HTTP_PROXY"] {
                command.arg("--setenv").arg(name).arg(&proxy);
            }
        }
        command.arg("--");
        if let Some(relay) = &spec.relay {
            command
                .arg(relay.trellis)
                .args(["_relay", "--listen", PROXY_ADDRESS, "--socket"])
                .arg(relay.socket)
                .arg("--");
        }
        command.arg(program).args(args);
        command
    }
}

/// Every host path a jail with these read-only paths exposes (the system's and
/// the spec's), for the check that none of them holds the project tree.
pub fn exposed_paths(read_only: &[PathBuf], scratch: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = vec![PathBuf::from("/usr")];
    paths.extend(
        SYSTEM_TOP
            .iter()
            .map(|name| Path::new("/").join(name))
            .filter(|host| std::fs::read_link(host).is_err() && host.is_dir()),
    );
    paths.extend(SYSTEM_ETC.iter().map(PathBuf::from).filter(|p| p.exists()));
    paths.extend(read_only.iter().cloned());
    paths.push(scratch.to_owned());
    paths
}

/// `Err(the exposed path)` when the jail would show any of `root`.
pub fn hides(root: &Path, exposed: &[PathBuf]) -> Result<(), PathBuf> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    for path in exposed {
        let path = path.canonicalize().unwrap_or_else(|_| path.clone());
        if root.starts_with(&path) || path.starts_with(&root) {
            return Err(path);
        }
    }
    Ok(())
}

/// The first executable file named `name` in a `PATH` value.
pub fn find_on_path(name: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            candidate
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Runs `command` in a process group of its own, killing the group when it
/// takes longer than `timeout`.
pub fn run_with_timeout(
    mut command: Command,
    timeout: Duration,
) -> Result<std::process::Output, String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    let mut child = command.spawn().map_err(|error| {
        format!(
            "cannot start {}: {error}",
            Path::new(command.get_program()).display()
        )
    })?;
    let group = i32::try_from(child.id()).unwrap_or(0);
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(stdout) = stdout.as_mut() {
            let _ = stdout.read_to_end(&mut bytes);
        }
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(stderr) = stderr.as_mut() {
            let _ = stderr.read_to_end(&mut bytes);
        }
        bytes
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                crate::agent::kill_process_group(group);
                let _ = child.wait();
                return Err(format!("it did not finish within {}s", timeout.as_secs()));
            }
            Err(error) => return Err(format!("cannot wait for it: {error}")),
        }
    };
    // A process left behind in the group holds the pipes open: end it too.
    crate::agent::kill_process_group(group);
    Ok(std::process::Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_tree_must_not_be_exposed() {
        let exposed = vec![PathBuf::from("/usr"), PathBuf::from("/opt/claude")];
        assert_eq!(hides(Path::new("/home/u/project"), &exposed), Ok(()));
        assert_eq!(
            hides(Path::new("/opt/claude/work/project"), &exposed),
            Err(PathBuf::from("/opt/claude")),
            "a bound directory holding the root exposes it"
        );
        let inside = vec![PathBuf::from("/home/u/project/node_modules/claude")];
        assert!(
            hides(Path::new("/home/u/project"), &inside).is_err(),
            "so does a bound path inside the root"
        );
    }

    #[test]
    fn path_lookup_takes_the_first_executable_file() {
        let found = find_on_path(
            OsStr::new("sh"),
            Some(OsStr::new("relative:/nonexistent:/bin")),
        );
        assert_eq!(found, Some(PathBuf::from("/bin/sh")));
        assert_eq!(find_on_path(OsStr::new("sh"), None), None);
    }
}
