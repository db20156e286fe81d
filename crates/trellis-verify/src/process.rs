//! The process port: every child process the verification tiers start goes through
//! [`ProcessRunner`], so tests can swap in [`FakeRunner`] and the real runner is the
//! one place that owns spawning, timeouts, process-group kills and reaping.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Bytes of each stream kept by default (the rest is drained and dropped).
pub const DEFAULT_CAPTURE_LIMIT: usize = 1 << 20;

/// Everything needed to start one process. The environment is complete: the child
/// sees exactly `env`, never the runner's own environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessSpec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub stdin: Vec<u8>,
    pub timeout: Duration,
    /// Bytes kept per output stream; output beyond it is read and discarded.
    pub capture_limit: usize,
}

impl ProcessSpec {
    pub fn new(program: impl Into<String>, cwd: impl Into<PathBuf>, timeout: Duration) -> Self {
        ProcessSpec {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: Vec::new(),
            stdin: Vec::new(),
            timeout,
            capture_limit: DEFAULT_CAPTURE_LIMIT,
        }
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = bytes.into();
        self
    }
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// The process could not be started (missing program, bad cwd, ...).
    NotStarted(String),
}

/// One captured output stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    pub bytes: Vec<u8>,
    /// More output arrived than the capture limit kept.
    pub truncated: bool,
}

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Appends `bytes`, keeping at most `limit` bytes in all (`truncated` once
    /// any are dropped), exactly as a stream is captured.
    pub(crate) fn keep(&mut self, bytes: &[u8], limit: usize) {
        let room = limit.saturating_sub(self.bytes.len());
        if bytes.len() > room {
            self.truncated = true;
        }
        self.bytes
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessOutcome {
    pub exit: Exit,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration: Duration,
    /// The timeout fired and the process group was killed.
    pub timed_out: bool,
}

impl ProcessOutcome {
    pub fn succeeded(&self) -> bool {
        !self.timed_out && self.exit == Exit::Code(0)
    }

    /// An outcome for a process that never ran (fakes and spawn failures).
    pub fn not_started(reason: impl Into<String>) -> Self {
        ProcessOutcome {
            exit: Exit::NotStarted(reason.into()),
            stdout: Captured::default(),
            stderr: Captured::default(),
            duration: Duration::ZERO,
            timed_out: false,
        }
    }
}

/// Runs a process to completion (or to its timeout). Never panics, never leaves a
/// child behind.
pub trait ProcessRunner {
    fn run(&self, spec: &ProcessSpec) -> ProcessOutcome;
}

/// The real runner: `std::process` with the child in its own process group.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealRunner;

#[allow(
    clippy::disallowed_methods,
    reason = "the verifier's one real process runner: oracles and cram run here"
)]
impl ProcessRunner for RealRunner {
    fn run(&self, spec: &ProcessSpec) -> ProcessOutcome {
        let started = Instant::now();
        let mut command = Command::new(&spec.program);
        command
            .args(&spec.args)
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A group of its own, so a timeout kills grandchildren too (a shell's
        // pipeline, a hung helper) and nothing the child started outlives it.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(error) => {
                return ProcessOutcome::not_started(format!("{}: {error}", spec.program));
            }
        };
        let pid = child.id();
        // Streams are fed and drained on threads so a child that writes a lot
        // before reading its input (or the reverse) cannot deadlock against us.
        let stdin_thread = child.stdin.take().map(|mut pipe| {
            let bytes = spec.stdin.clone();
            thread::spawn(move || {
                // A child that exits without reading gives EPIPE; that is its choice.
                let _ = pipe.write_all(&bytes);
            })
        });
        let limit = spec.capture_limit;
        let stdout_thread = child
            .stdout
            .take()
            .map(|pipe| thread::spawn(move || capture(pipe, limit)));
        let stderr_thread = child
            .stderr
            .take()
            .map(|pipe| thread::spawn(move || capture(pipe, limit)));

        let deadline = started + spec.timeout;
        let mut pause = Duration::from_millis(1);
        let timed_out = loop {
            if has_exited(pid) {
                break false;
            }
            let now = Instant::now();
            if now >= deadline {
                break true;
            }
            thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        };
        // The leader is still unreaped here (exited or running), so its pid names
        // this group and no other: killing the group is safe. On a normal exit
        // this sweeps up background members still holding our pipes.
        kill_process_group(pid);
        let status = child.wait();
        if let Some(handle) = stdin_thread {
            let _ = handle.join();
        }
        let stdout = stdout_thread
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let stderr = stderr_thread
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        ProcessOutcome {
            exit: exit_of(status),
            stdout,
            stderr,
            duration: started.elapsed(),
            timed_out,
        }
    }
}

/// How a reaped child ended, as an [`Exit`].
pub(crate) fn exit_of(status: std::io::Result<std::process::ExitStatus>) -> Exit {
    match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(code), _) => Exit::Code(code),
                (None, Some(signal)) => Exit::Signal(signal),
                (None, None) => Exit::NotStarted("unknown wait status".into()),
            }
        }
        Err(error) => Exit::NotStarted(format!("wait failed: {error}")),
    }
}

fn capture(mut pipe: impl Read, limit: usize) -> Captured {
    let mut captured = Captured::default();
    let mut buffer = [0u8; 8192];
    loop {
        match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => captured.keep(&buffer[..n], limit),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    captured
}

/// Whether the child `pid` has exited, WITHOUT reaping it (`WNOWAIT`): while the
/// zombie exists its pid, and so its process-group id, cannot be reused.
#[allow(unsafe_code)]
pub(crate) fn has_exited(pid: u32) -> bool {
    // SAFETY: `info` is a plain C struct fully owned by this frame and zeroed
    // before the call; `waitid` only writes into it. `pid` is our own unreaped
    // child, and WNOWAIT leaves it waitable for `Child::wait`.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        let rc = libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags);
        // rc < 0: no such child (already reaped); treat as exited.
        rc < 0 || info.si_pid() != 0
    }
}

/// SIGKILL every process in the group led by `pgid`.
#[allow(unsafe_code)]
pub(crate) fn kill_process_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    // SAFETY: `kill` takes plain integers and touches no memory of ours. The
    // negative id addresses exactly the group our unreaped child leads (created
    // by `process_group(0)`); ESRCH (group already empty) is harmless.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// A runner for tests: records every spec and answers with queued outcomes (or a
/// `not_started` outcome when the queue is empty).
#[derive(Debug, Default)]
pub struct FakeRunner {
    pub specs: RefCell<Vec<ProcessSpec>>,
    pub outcomes: RefCell<VecDeque<ProcessOutcome>>,
}

impl FakeRunner {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues an outcome that exited 0 with `stdout`.
    pub fn push_stdout(&self, stdout: &str) {
        self.outcomes.borrow_mut().push_back(ProcessOutcome {
            exit: Exit::Code(0),
            stdout: Captured {
                bytes: stdout.as_bytes().to_vec(),
                truncated: false,
            },
            stderr: Captured::default(),
            duration: Duration::ZERO,
            timed_out: false,
        });
    }

    pub fn push(&self, outcome: ProcessOutcome) {
        self.outcomes.borrow_mut().push_back(outcome);
    }
}

impl ProcessRunner for FakeRunner {
    fn run(&self, spec: &ProcessSpec) -> ProcessOutcome {
        self.specs.borrow_mut().push(spec.clone());
        self.outcomes
            .borrow_mut()
            .pop_front()
            .unwrap_or_else(|| ProcessOutcome::not_started("fake runner: no outcome queued"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout_ms: u64) -> ProcessSpec {
        ProcessSpec::new(
            "/bin/sh",
            std::env::temp_dir(),
            Duration::from_millis(timeout_ms),
        )
        .arg("-c")
        .arg(script)
        .env("PATH", "/usr/bin:/bin")
    }

    #[test]
    fn captures_output_exit_code_and_stdin() {
        let spec = sh("cat; echo err >&2; exit 3", 10_000).stdin("hello\n");
        let outcome = RealRunner.run(&spec);
        assert_eq!(outcome.exit, Exit::Code(3));
        assert_eq!(outcome.stdout.text(), "hello\n");
        assert_eq!(outcome.stderr.text(), "err\n");
        assert!(!outcome.timed_out);
    }

    #[test]
    fn the_environment_is_exactly_the_spec() {
        let spec = sh("env | sort", 10_000).env("ONLY", "this");
        let outcome = RealRunner.run(&spec);
        let text = outcome.stdout.text();
        assert!(text.contains("ONLY=this\n"), "{text}");
        assert!(!text.contains("HOME="), "{text}");
    }

    #[test]
    fn a_hanging_group_is_killed_at_the_timeout() {
        // The grandchild `sleep` holds stdout open; only a group kill frees it.
        let spec = sh("sleep 30 & sleep 30; echo never", 300);
        let started = Instant::now();
        let outcome = RealRunner.run(&spec);
        assert!(outcome.timed_out);
        assert_eq!(outcome.exit, Exit::Signal(libc::SIGKILL));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(outcome.stdout.text(), "");
    }

    #[test]
    fn background_members_do_not_outlive_a_normal_exit() {
        let spec = sh("sleep 30 & echo done", 10_000);
        let started = Instant::now();
        let outcome = RealRunner.run(&spec);
        assert_eq!(outcome.exit, Exit::Code(0));
        assert_eq!(outcome.stdout.text(), "done\n");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn chatty_children_do_not_deadlock_and_capture_is_bounded() {
        let mut spec = sh(
            "head -c 300000 /dev/zero; head -c 300000 /dev/zero >&2",
            10_000,
        )
        .stdin(vec![b'x'; 300_000]);
        spec.capture_limit = 1000;
        let outcome = RealRunner.run(&spec);
        assert_eq!(outcome.exit, Exit::Code(0));
        assert_eq!(outcome.stdout.bytes.len(), 1000);
        assert!(outcome.stdout.truncated);
        assert!(outcome.stderr.truncated);
    }

    #[test]
    fn a_missing_program_is_an_outcome_not_a_panic() {
        let spec = ProcessSpec::new("/nonexistent/program", "/", Duration::from_secs(1));
        let outcome = RealRunner.run(&spec);
        assert!(
            matches!(outcome.exit, Exit::NotStarted(_)),
            "{:?}",
            outcome.exit
        );
    }

    #[test]
    fn the_fake_records_specs_and_replays_outcomes() {
        let fake = FakeRunner::new();
        fake.push_stdout("42");
        let spec = sh("irrelevant", 10);
        assert_eq!(fake.run(&spec).stdout.text(), "42");
        assert!(matches!(fake.run(&spec).exit, Exit::NotStarted(_)));
        assert_eq!(fake.specs.borrow().len(), 2);
    }
}
