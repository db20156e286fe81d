//! `trellis lsp`: the language server on stdio (design §9.9). The protocol and
//! the features are `trellis-lsp`'s; this is its host — it finds the root by the
//! CLI's rule, loads the disk through the same loader and change feed the daemon
//! uses, and runs a code lens's `trellis` command as a child process (so a fix
//! goes through the daemon and the root's writer lock like any command typed).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use trellis_diag::Diagnostic;
use trellis_lsp::{DiskRefresh, Host, RootDisk};

use trellis_service::codes::HostCode;
use trellis_service::loader::RootLoader;
use trellis_service::watch::{Dirty, RootWatch};

pub fn run() -> ExitCode {
    // The server's own transport: bounded frames, malformed ones answered (§9.9).
    let (connection, io_threads) = trellis_lsp::transport::stdio();
    let served = trellis_lsp::serve(
        connection,
        Arc::new(CliHost),
        trellis_db::RootDatabase::default(),
    );
    let joined = io_threads.join();
    match (served, joined) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(message), _) => {
            eprintln!("trellis lsp: {message}");
            ExitCode::FAILURE
        }
        (_, Err(error)) => {
            eprintln!("trellis lsp: {error}");
            ExitCode::FAILURE
        }
    }
}

struct CliHost;

impl Host for CliHost {
    fn find_root(&self, folder: Option<&Path>) -> Result<PathBuf, Diagnostic> {
        let trellis_root = std::env::var_os("TRELLIS_ROOT");
        let cwd = std::env::current_dir().map_err(|error| {
            HostCode::ConfigNoRoot.diagnostic(format!("no working directory: {error}"))
        })?;
        match folder {
            Some(folder) => crate::root::discover_root(trellis_root.clone(), folder)
                .or_else(|_| crate::root::discover_root(trellis_root, &cwd)),
            None => crate::root::discover_root(trellis_root, &cwd),
        }
    }

    fn disk(&self, root: &Path) -> Box<dyn RootDisk> {
        // The daemon's rule: watch unless TRELLIS_WATCH says not to (design §9.6).
        let watch = !std::env::var("TRELLIS_WATCH")
            .is_ok_and(|value| matches!(value.as_str(), "off" | "0" | "false" | "no"));
        let mut loader = RootLoader::new(root.to_owned());
        // The feed's start walks the root once for the watches and the
        // loader's first load alike, as the daemon's does (design §7.16).
        let watch = watch
            .then(|| RootWatch::new_stamped(root).ok())
            .flatten()
            .map(|(watch, walked)| {
                loader.prime(walked);
                watch
            });
        Box::new(Disk {
            loader,
            watch,
            last_walk: None,
        })
    }

    fn run_trellis(&self, root: &Path, args: &[String]) -> Result<String, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find trellis: {e}"))?;
        let output = std::process::Command::new(exe)
            .args(args)
            .current_dir(root)
            .env("TRELLIS_ROOT", root)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run trellis: {e}"))?;
        let printed = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        if output.status.success() {
            Ok(printed)
        } else {
            Err(printed)
        }
    }
}

/// The root's disk as the daemon reads it: a full walk first, then what the
/// change feed names (or a full walk whenever the feed cannot vouch).
struct Disk {
    loader: RootLoader,
    watch: Option<RootWatch>,
    /// When the last full walk ran (none yet: the first refresh walks).
    last_walk: Option<Instant>,
}

/// Without a change feed the server asks the disk every tick, but walks the
/// whole root at most this often.
const WALK_INTERVAL: Duration = Duration::from_secs(2);

impl RootDisk for Disk {
    fn refresh(&mut self) -> DiskRefresh {
        let dirty = match (&mut self.watch, self.last_walk) {
            (Some(watch), Some(_)) => watch.take(),
            (None, Some(walked)) if walked.elapsed() < WALK_INTERVAL => {
                Dirty::Paths(Default::default())
            }
            _ => Dirty::Everything,
        };
        let refresh = match dirty {
            Dirty::Paths(paths) => self.loader.refresh_paths(paths),
            Dirty::Everything => {
                self.last_walk = Some(Instant::now());
                self.loader.refresh()
            }
        };
        DiskRefresh {
            change: refresh.change,
            problems: refresh.problems,
        }
    }
}
