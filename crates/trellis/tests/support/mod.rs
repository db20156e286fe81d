//! Shared harness for the end-to-end tests: a private copy of a root, a private
//! runtime directory for its daemon, and a guard that stops the daemon however the
//! test ends.

#![allow(dead_code)]

pub mod edits;
pub mod lowering;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const TRELLIS: &str = env!("CARGO_BIN_EXE_trellis");

/// The workspace root (two levels above this crate).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        // Short names: the socket path must fit in sun_path.
        let path = std::env::temp_dir().join(format!(
            "tr-{tag}-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path.canonicalize().expect("canonical temp dir"))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // TRELLIS_E2E_KEEP=1 keeps the directories (and daemon logs) for a post-mortem.
        if std::env::var_os("TRELLIS_E2E_KEEP").is_some() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            // A daemon log of the checked-in tree never belongs in a fixture.
            if entry.file_name() != ".trellis" {
                copy_tree(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// One command's outcome, with the process's exit code and both streams.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// A finished process's outcome; a panic in the binary fails the test.
    pub fn from(output: Output) -> Run {
        let run = Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert!(
            !run.stderr.contains("panicked"),
            "the binary panicked: {run:?}"
        );
        run
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {self:?}"))
    }

    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "command failed: {self:?}");
        self
    }
}

/// A private copy of a root with its own runtime directory; dropping it stops the
/// root's daemon (if any) and removes both.
pub struct Root {
    // Field order matters: the guard stops the daemon before the directories go.
    base: TempDir,
    pub root: PathBuf,
    pub runtime: PathBuf,
    /// A daemon this harness started itself (see [`Root::start_daemon`]).
    daemon: Option<std::process::Child>,
}

impl Root {
    /// A copy of the checked-in `examples/` root.
    pub fn examples() -> Root {
        Root::copy_of(&workspace().join("examples"))
    }

    /// A copy of the examples with a daemon already listening.
    pub fn examples_with_daemon() -> Root {
        Root::examples().start_daemon()
    }

    /// A copy of a fixture root under `test-data/trellis/`.
    pub fn fixture(name: &str) -> Root {
        Root::copy_of(&workspace().join("test-data/trellis").join(name))
    }

    pub fn copy_of(source: &Path) -> Root {
        let base = TempDir::new("e2e");
        let root = base.path().join("root");
        copy_tree(source, &root);
        Root::in_base(base, root)
    }

    /// A root whose files are given as (relative path, text) pairs.
    pub fn from_files(files: &[(String, String)]) -> Root {
        let base = TempDir::new("e2e");
        let root = base.path().join("root");
        for (path, text) in files {
            let target = root.join(path);
            std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
            std::fs::write(target, text).expect("write file");
        }
        Root::in_base(base, root)
    }

    fn in_base(base: TempDir, root: PathBuf) -> Root {
        use std::os::unix::fs::PermissionsExt;
        let runtime = base.path().join("run");
        std::fs::create_dir_all(&runtime).expect("runtime dir");
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
            .expect("chmod 0700");
        Root {
            base,
            root,
            runtime,
            daemon: None,
        }
    }

    /// Starts `trellis daemon run` for the root directly and waits until it
    /// accepts connections. Tests of the invalidation table use this rather than
    /// auto-spawn: a client probing while a spawned daemon is between bind and
    /// listen can remove its socket (a known race, tested in `daemon.rs`), and
    /// that must not make every other test flaky.
    pub fn start_daemon(self) -> Root {
        self.start_daemon_with(&[])
    }

    /// [`Root::start_daemon`] with more environment for the daemon.
    pub fn start_daemon_with(mut self, env: &[(&str, &str)]) -> Root {
        let child = self
            .command(&["daemon", "run"])
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start trellis daemon run");
        self.daemon = Some(child);
        let socket = self.socket();
        wait_until("the daemon listens", || {
            trellis_rpc::Client::connect(&socket).is_ok()
        });
        self
    }

    /// Makes `reference/stats.py` import a helper module, `reference/refhelp.py`,
    /// so a test can edit a file the oracle imports without naming it.
    pub fn import_a_reference_helper(&self) {
        self.write(
            "reference/refhelp.py",
            "def half(a, b):\n    return a / 2.0 + b / 2.0\n",
        );
        let stats = self.read("reference/stats.py");
        self.write(
            "reference/stats.py",
            &stats.replacen(
                "import math\n",
                "import math\nfrom refhelp import half\n",
                1,
            ),
        );
    }

    /// The command for `trellis ARGS` in this root, with this root's runtime dir.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(TRELLIS);
        command
            .args(args)
            .current_dir(&self.root)
            .env("TRELLIS_ROOT", &self.root)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            // No user's providers.toml leaks into a test (design §4.9).
            .env("XDG_CONFIG_HOME", self.base.path().join("config"))
            // Nor does the caller's shared result cache (design §12.5).
            .env_remove("TRELLIS_CACHE_URL")
            .env_remove("TRELLIS_CACHE_WRITE")
            .env_remove("TRELLIS_CACHE_SIGNING_KEY")
            .env_remove("RUST_BACKTRACE");
        command
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().expect("run trellis"))
    }

    /// `trellis status --json`, through the daemon or in-process.
    pub fn status(&self, daemon: bool) -> Value {
        let args: &[&str] = if daemon {
            &["status", "--json"]
        } else {
            &["--no-daemon", "status", "--json"]
        };
        self.run(args).ok().json()
    }

    /// Each definition's status by name.
    pub fn statuses(&self, daemon: bool) -> std::collections::BTreeMap<String, String> {
        rows_by_name(&self.status(daemon))
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative))
            .unwrap_or_else(|e| panic!("read {relative}: {e}"))
    }

    pub fn write(&self, relative: &str, text: &str) {
        std::fs::write(self.path(relative), text)
            .unwrap_or_else(|e| panic!("write {relative}: {e}"));
    }

    /// Replaces exactly one occurrence of `from` in a file.
    #[track_caller]
    pub fn edit(&self, relative: &str, from: &str, to: &str) {
        let text = self.read(relative);
        assert_eq!(
            text.matches(from).count(),
            1,
            "`{from}` must occur once in {relative}"
        );
        self.write(relative, &text.replacen(from, to, 1));
    }

    /// The socket the root's daemon listens on.
    pub fn socket(&self) -> PathBuf {
        trellis_rpc::socket_path_with(&self.root, Some(&self.runtime), trellis_rpc::current_uid())
            .expect("socket path")
    }

    /// The pid `trellis daemon status` reports, if a daemon runs.
    pub fn daemon_pid(&self) -> Option<u32> {
        let run = self.run(&["daemon", "status"]).ok();
        let rest = run.stdout.split("pid ").nth(1)?;
        rest.split(',').next()?.trim().parse().ok()
    }

    /// Records a passing expect row in every function lock that has a lowering
    /// without holes and no results yet, so that the ladder's lower rungs
    /// (decision flags, review) are visible even where `trellis test` never ran.
    pub fn mark_tests_green(&self) {
        for module in ["csvstats", "inventory"] {
            for entry in std::fs::read_dir(self.root.join(module)).expect("module dir") {
                let path = entry.expect("entry").path();
                if path.extension().is_some_and(|e| e == "lock") {
                    mark_lock_green(&path);
                }
            }
        }
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        // Stop the daemon whether or not the test passed; ignore "none running".
        let _ = self.command(&["daemon", "stop"]).output();
        // A daemon no socket leads to any more (one that lost a spawn race after
        // binding) would outlive the test: end the ones this root's tests started.
        for pid in daemons_for(&self.root) {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        if let Some(mut child) = self.daemon.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn mark_lock_green(path: &Path) {
    use trellis_lock::{Lock, Mode, TestResult, TestRow, Tier};
    let text = std::fs::read_to_string(path).expect("read lock");
    let Ok(Lock::Function(mut lock)) = trellis_lock::read_lock(&text) else {
        return;
    };
    let Some(checks) = &lock.checks else { return };
    // Locks with recorded results (from `trellis test`) are left as they are.
    if !checks.holes.is_empty() || lock.lowering.is_none() || !lock.tests.is_empty() {
        return;
    }
    let block = lock
        .spec
        .blocks
        .iter()
        .find_map(|b| b.block.strip_prefix("test ").map(str::to_owned))
        .unwrap_or_else(|| "basics".to_owned());
    lock.tests = vec![TestRow {
        name: format!("{block}#1"),
        tier: Tier::Expect,
        mode: Mode::Sandboxed,
        result: TestResult::Pass,
    }];
    std::fs::write(path, trellis_lock::write_lock(&Lock::Function(lock))).expect("write lock");
}

pub fn rows_by_name(status: &Value) -> std::collections::BTreeMap<String, String> {
    status["definitions"]
        .as_array()
        .unwrap_or_else(|| panic!("no definitions in {status}"))
        .iter()
        .map(|row| {
            (
                row["name"].as_str().expect("name").to_owned(),
                row["status"].as_str().expect("status").to_owned(),
            )
        })
        .collect()
}

/// The rows whose status differs between two status maps: name → (before, after).
pub fn changed(
    before: &std::collections::BTreeMap<String, String>,
    after: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (name, status) in after {
        let old = before
            .get(name)
            .cloned()
            .unwrap_or_else(|| "absent".to_owned());
        if &old != status {
            out.push((name.clone(), old, status.clone()));
        }
    }
    for name in before.keys().filter(|n| !after.contains_key(*n)) {
        out.push((name.clone(), before[name].clone(), "absent".to_owned()));
    }
    out
}

/// A checked-in file's text, by workspace-relative path.
pub fn workspace_file(relative: &str) -> String {
    std::fs::read_to_string(workspace().join(relative))
        .unwrap_or_else(|e| panic!("read {relative}: {e}"))
}

pub fn is_alive(pid: u32) -> bool {
    // A zombie awaiting its reaper is dead for our purposes.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Running `trellis daemon run` processes whose TRELLIS_ROOT is this root.
pub fn count_daemons_for(root: &Root) -> usize {
    daemons_for(&root.root).len()
}

/// The pids of live `trellis daemon run` processes serving `root`.
pub fn daemons_for(root: &Path) -> Vec<u32> {
    let wanted = format!("TRELLIS_ROOT={}", root.display());
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if !cmdline
            .split(|b| *b == 0)
            .filter(|arg| !arg.is_empty())
            .map(String::from_utf8_lossy)
            .collect::<Vec<_>>()
            .join(" ")
            .ends_with("daemon run")
        {
            continue;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes())
            && is_alive(pid)
        {
            pids.push(pid);
        }
    }
    pids
}
