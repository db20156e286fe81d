//! The warm-process port: long-lived children that answer one request after
//! another, so a caller asking the same interpreter again and again (a lowering
//! agent's `run_tests`, `trellis test` through the daemon) pays its start-up
//! once. [`WarmRunner`] is the port; [`WarmPool`] the real, bounded pool (each
//! child in a process group of its own, as [`crate::RealRunner`] starts them,
//! killed on a request's timeout, on eviction and at [`WarmPool::shutdown`]);
//! [`FakeWarmRunner`] replays outcomes for tests.
//!
//! A request's outcome is what one run of a process would have given: the
//! request's own stdout and stderr, `Exit::Code(0)` when it was answered, the
//! real exit when the child ended instead, a timeout when it hung. That is what
//! lets a warm oracle's answer be byte-identical to a cold one.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use crate::process::{
    Captured, Exit, ProcessOutcome, ProcessSpec, exit_of, has_exited, kill_process_group,
};

/// The pool's default bound on idle processes.
pub const DEFAULT_WARM_CAPACITY: usize = 4;

/// How long to wait for the last output of a child that was killed or ended.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// Answers requests with long-lived processes.
pub trait WarmRunner {
    /// Sends `spec.stdin` as one request to a warm process started from `spec`
    /// — its program, arguments, cwd, environment and capture limit name it,
    /// and a process never serves a spec that differs in any of them — starting
    /// one when none is idle. The server ends each answer by writing
    /// `terminator` (non-empty, no newline) as a line of its own on stdout and
    /// as bytes on stderr; the outcome holds the stdout lines and the stderr
    /// bytes before them, each kept to `spec.capture_limit`, with
    /// `Exit::Code(0)`. `spec.timeout` bounds this request alone: when it
    /// passes, or the process ends before both terminators, the process group
    /// is killed and reaped, the outcome is that of a process run that timed
    /// out or ended (its real exit status), and the next request starts afresh.
    fn exchange(&self, spec: &ProcessSpec, terminator: &str) -> ProcessOutcome;
}

/// The real warm runner: idle processes kept by key, least recently used
/// evicted beyond the capacity. A process serves one request at a time; a
/// request that finds none idle for its key starts one.
#[derive(Debug)]
pub struct WarmPool {
    capacity: usize,
    state: Mutex<PoolState>,
}

#[derive(Debug, Default)]
struct PoolState {
    /// Least recently used first.
    idle: Vec<WarmProcess>,
    /// After [`WarmPool::shutdown`], a process is retired after its request.
    closed: bool,
    started: usize,
}

/// What names a warm process: everything it was started with.
#[derive(Clone, Debug, PartialEq, Eq)]
struct WarmKey {
    program: String,
    args: Vec<String>,
    cwd: std::path::PathBuf,
    env: Vec<(String, String)>,
    capture_limit: usize,
    terminator: String,
}

impl WarmKey {
    fn of(spec: &ProcessSpec, terminator: &str) -> Self {
        WarmKey {
            program: spec.program.clone(),
            args: spec.args.clone(),
            cwd: spec.cwd.clone(),
            env: spec.env.clone(),
            capture_limit: spec.capture_limit,
            terminator: terminator.to_owned(),
        }
    }
}

impl WarmPool {
    pub fn new(capacity: usize) -> Self {
        WarmPool {
            capacity,
            state: Mutex::new(PoolState::default()),
        }
    }

    /// Kills every idle process and retires every busy one when its request
    /// ends; requests still served afterwards start a process and retire it.
    pub fn shutdown(&self) {
        let idle = {
            let mut state = self.lock();
            state.closed = true;
            std::mem::take(&mut state.idle)
        };
        for process in idle {
            process.retire();
        }
    }

    /// How many processes the pool has started over its life.
    pub fn started(&self) -> usize {
        self.lock().started
    }

    /// The pids of the idle processes, least recently used first.
    pub fn idle_pids(&self) -> Vec<u32> {
        self.lock().idle.iter().map(|p| p.child.id()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The most recently used idle process for `key`, if one is still alive.
    fn checkout(&self, key: &WarmKey) -> Option<WarmProcess> {
        let process = {
            let mut state = self.lock();
            let at = state.idle.iter().rposition(|p| p.key == *key)?;
            state.idle.remove(at)
        };
        // One that died while idle (killed from outside) answers nothing.
        if has_exited(process.child.id()) {
            process.retire();
            return None;
        }
        Some(process)
    }

    fn checkin(&self, process: WarmProcess) {
        let retired = {
            let mut state = self.lock();
            if state.closed {
                vec![process]
            } else {
                state.idle.push(process);
                let excess = state.idle.len().saturating_sub(self.capacity);
                state.idle.drain(..excess).collect()
            }
        };
        for process in retired {
            process.retire();
        }
    }
}

impl Drop for WarmPool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl WarmRunner for WarmPool {
    fn exchange(&self, spec: &ProcessSpec, terminator: &str) -> ProcessOutcome {
        let started = Instant::now();
        let key = WarmKey::of(spec, terminator);
        let process = match self.checkout(&key) {
            Some(process) => process,
            None => match WarmProcess::start(spec, key) {
                Ok(process) => {
                    self.lock().started += 1;
                    process
                }
                Err(reason) => return ProcessOutcome::not_started(reason),
            },
        };
        let (mut outcome, kept) = process.serve(spec, terminator, started);
        if let Some(process) = kept {
            self.checkin(process);
        }
        outcome.duration = started.elapsed();
        outcome
    }
}

/// What the reader threads report, in the order they saw it.
#[derive(Debug)]
enum Event {
    /// One stdout line, newline included (the last may lack it); `cut` when
    /// bytes of it beyond the reader's bound were dropped.
    Line {
        bytes: Vec<u8>,
        cut: bool,
    },
    StdoutClosed,
    /// One request's stderr, up to the terminator.
    Stderr(Captured),
    /// What came after the last terminator, when stderr closed.
    StderrClosed(Captured),
    /// The request is written: stdin back for the next one (`None` when the
    /// write failed: the child is gone or stopped reading).
    Written(Option<ChildStdin>),
}

/// One child with its pipes: stdin written per request (on a thread that hands
/// it back through `events`), stdout and stderr read for its whole life by two
/// threads feeding `events`.
#[derive(Debug)]
struct WarmProcess {
    key: WarmKey,
    child: Child,
    stdin: Option<ChildStdin>,
    events: Receiver<Event>,
    sender: Sender<Event>,
}

/// How a request's wait ended.
enum End {
    Answered {
        stderr_closed: bool,
    },
    TimedOut,
    /// Stdout closed before the answer: the child is ending.
    Closed,
}

impl WarmProcess {
    #[allow(
        clippy::disallowed_methods,
        reason = "the verifier's warm process port: long-lived oracle drivers start here"
    )]
    fn start(spec: &ProcessSpec, key: WarmKey) -> Result<WarmProcess, String> {
        let mut command = Command::new(&spec.program);
        command
            .args(&spec.args)
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A group of its own, so a kill takes whatever the server started too.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|error| format!("{}: {error}", spec.program))?;
        let (events, receiver) = mpsc::channel();
        let line_bound = spec.capture_limit.max(key.terminator.len()) + 1;
        if let Some(pipe) = child.stdout.take() {
            let events = events.clone();
            thread::spawn(move || read_lines(pipe, line_bound, &events));
        }
        if let Some(pipe) = child.stderr.take() {
            let events = events.clone();
            let splitter = MarkerSplitter::new(key.terminator.as_bytes(), spec.capture_limit);
            thread::spawn(move || read_marked(pipe, splitter, &events));
        }
        Ok(WarmProcess {
            key,
            stdin: child.stdin.take(),
            child,
            events: receiver,
            sender: events,
        })
    }

    /// Serves one request; the process comes back when it can serve another.
    fn serve(
        mut self,
        spec: &ProcessSpec,
        terminator: &str,
        started: Instant,
    ) -> (ProcessOutcome, Option<WarmProcess>) {
        let deadline = started + spec.timeout;
        let limit = spec.capture_limit;
        // Written on a thread: a request larger than the pipe must not block us
        // against a child that stopped reading (the deadline still holds).
        let mut written = match self.stdin.take() {
            Some(mut pipe) => {
                let request = spec.stdin.clone();
                let events = self.sender.clone();
                thread::spawn(move || {
                    // A child that ended gives EPIPE; its end is reported from stdout.
                    let ok = pipe.write_all(&request).and_then(|()| pipe.flush()).is_ok();
                    let _ = events.send(Event::Written(ok.then_some(pipe)));
                });
                false
            }
            None => true,
        };
        let mut stdout = Captured::default();
        let mut stderr = None;
        let mut answered = false;
        let mut stderr_closed = false;
        let end = loop {
            if answered && stderr.is_some() && written {
                break End::Answered { stderr_closed };
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break End::TimedOut;
            };
            match self.events.recv_timeout(left) {
                Ok(Event::Line { bytes, cut }) => {
                    if !cut && is_terminator_line(&bytes, terminator) {
                        answered = true;
                    } else {
                        keep_line(&mut stdout, &bytes, cut, limit);
                    }
                }
                Ok(Event::Stderr(captured)) => stderr = Some(captured),
                Ok(Event::StderrClosed(captured)) => {
                    stderr_closed = true;
                    stderr.get_or_insert(captured);
                }
                Ok(Event::Written(pipe)) => {
                    written = true;
                    self.stdin = pipe;
                }
                Ok(Event::StdoutClosed) | Err(RecvTimeoutError::Disconnected) => break End::Closed,
                Err(RecvTimeoutError::Timeout) => break End::TimedOut,
            }
        };
        let timed_out = match end {
            End::Answered { stderr_closed } => {
                let outcome = ProcessOutcome {
                    exit: Exit::Code(0),
                    stdout,
                    stderr: stderr.unwrap_or_default(),
                    duration: started.elapsed(),
                    timed_out: false,
                };
                // Without stderr no later answer could be delimited.
                let fit = !stderr_closed && self.stdin.is_some();
                if fit {
                    return (outcome, Some(self));
                }
                self.retire();
                return (outcome, None);
            }
            End::TimedOut => true,
            // A child that closed stdout but lives on until the deadline hung.
            End::Closed => !self.exited_by(deadline),
        };
        // The leader is unreaped, so its pid still names its group alone.
        kill_process_group(self.child.id());
        drop(self.stdin.take());
        self.drain(&mut stdout, &mut stderr, limit);
        let exit = exit_of(self.child.wait());
        let outcome = ProcessOutcome {
            exit,
            stdout,
            stderr: stderr.unwrap_or_default(),
            duration: started.elapsed(),
            timed_out,
        };
        (outcome, None)
    }

    /// Whether the child exits before `deadline` (polled without reaping).
    fn exited_by(&self, deadline: Instant) -> bool {
        let mut pause = Duration::from_millis(1);
        loop {
            if has_exited(self.child.id()) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// Collects what the readers still hold once the group is dead: the output
    /// a one-shot run would have captured up to its end.
    fn drain(&self, stdout: &mut Captured, stderr: &mut Option<Captured>, limit: usize) {
        let until = Instant::now() + DRAIN_LIMIT;
        let (mut stdout_open, mut stderr_open) = (true, true);
        while stdout_open || stderr_open {
            let Some(left) = until.checked_duration_since(Instant::now()) else {
                return;
            };
            match self.events.recv_timeout(left) {
                Ok(Event::Line { bytes, cut }) => keep_line(stdout, &bytes, cut, limit),
                Ok(Event::StdoutClosed) => stdout_open = false,
                Ok(Event::Stderr(captured)) => {
                    stderr.get_or_insert(captured);
                }
                Ok(Event::StderrClosed(captured)) => {
                    stderr_open = false;
                    stderr.get_or_insert(captured);
                }
                Ok(Event::Written(_)) => {}
                Err(_) => return,
            }
        }
    }

    /// Kills the process group and reaps the child.
    fn retire(mut self) {
        drop(self.stdin.take());
        kill_process_group(self.child.id());
        let _ = self.child.wait();
    }
}

fn is_terminator_line(line: &[u8], terminator: &str) -> bool {
    line.strip_suffix(b"\n") == Some(terminator.as_bytes())
}

fn keep_line(stdout: &mut Captured, bytes: &[u8], cut: bool, limit: usize) {
    stdout.keep(bytes, limit);
    // The reader's bound exceeds the limit, so a cut line never fit anyway.
    if cut {
        stdout.truncated = true;
    }
}

/// Stdout as lines, each kept to `bound` bytes, until the pipe closes.
fn read_lines(mut pipe: impl Read, bound: usize, events: &Sender<Event>) {
    let mut line = Vec::new();
    let mut cut = false;
    let mut buffer = [0u8; 8192];
    loop {
        let n = match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for piece in buffer[..n].split_inclusive(|&b| b == b'\n') {
            let room = bound.saturating_sub(line.len());
            cut |= piece.len() > room;
            line.extend_from_slice(&piece[..piece.len().min(room)]);
            if piece.ends_with(b"\n") {
                let bytes = std::mem::take(&mut line);
                if events
                    .send(Event::Line {
                        bytes,
                        cut: std::mem::take(&mut cut),
                    })
                    .is_err()
                {
                    return;
                }
            }
        }
    }
    if !line.is_empty() {
        let _ = events.send(Event::Line { bytes: line, cut });
    }
    let _ = events.send(Event::StdoutClosed);
}

/// Stderr split at each terminator, until the pipe closes.
fn read_marked(mut pipe: impl Read, mut splitter: MarkerSplitter, events: &Sender<Event>) {
    let mut buffer = [0u8; 8192];
    let mut runs = Vec::new();
    loop {
        let n = match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        splitter.push(&buffer[..n], &mut runs);
        for run in runs.drain(..) {
            if events.send(Event::Stderr(run)).is_err() {
                return;
            }
        }
    }
    let _ = events.send(Event::StderrClosed(splitter.finish()));
}

/// Splits a byte stream into the runs before each marker, keeping at most
/// `limit` bytes of each, in memory bounded by `limit` plus the marker.
#[derive(Debug)]
struct MarkerSplitter {
    marker: Vec<u8>,
    limit: usize,
    /// The current run: its first `limit` bytes, then (once over) its last
    /// bytes, fewer than the marker, where a marker may be starting.
    buffer: Vec<u8>,
    truncated: bool,
}

impl MarkerSplitter {
    fn new(marker: &[u8], limit: usize) -> Self {
        assert!(!marker.is_empty(), "a terminator is never empty");
        MarkerSplitter {
            marker: marker.to_vec(),
            limit,
            buffer: Vec::new(),
            truncated: false,
        }
    }

    fn push(&mut self, bytes: &[u8], runs: &mut Vec<Captured>) {
        let tail = self.marker.len() - 1;
        // Only the contiguous tail (and what follows) can hold a new marker.
        let mut from = self.buffer.len().saturating_sub(tail);
        self.buffer.extend_from_slice(bytes);
        while let Some(at) = find(&self.buffer[from..], &self.marker).map(|i| i + from) {
            let mut run: Vec<u8> = self.buffer.drain(..at + self.marker.len()).collect();
            run.truncate(at);
            let mut captured = Captured {
                bytes: Vec::new(),
                truncated: std::mem::take(&mut self.truncated),
            };
            captured.keep(&run, self.limit);
            runs.push(captured);
            from = 0;
        }
        if self.buffer.len() > self.limit + self.marker.len() {
            let end = self.buffer.len() - tail;
            self.buffer.drain(self.limit..end);
            self.truncated = true;
        }
    }

    fn finish(self) -> Captured {
        let mut captured = Captured {
            bytes: Vec::new(),
            truncated: self.truncated,
        };
        captured.keep(&self.buffer, self.limit);
        captured
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// A warm runner for tests: records every spec and terminator and answers with
/// queued outcomes (or a `not_started` outcome when the queue is empty).
#[derive(Debug, Default)]
pub struct FakeWarmRunner {
    pub requests: RefCell<Vec<(ProcessSpec, String)>>,
    pub outcomes: RefCell<VecDeque<ProcessOutcome>>,
}

impl FakeWarmRunner {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&self, outcome: ProcessOutcome) {
        self.outcomes.borrow_mut().push_back(outcome);
    }
}

impl WarmRunner for FakeWarmRunner {
    fn exchange(&self, spec: &ProcessSpec, terminator: &str) -> ProcessOutcome {
        self.requests
            .borrow_mut()
            .push((spec.clone(), terminator.to_owned()));
        self.outcomes
            .borrow_mut()
            .pop_front()
            .unwrap_or_else(|| ProcessOutcome::not_started("fake warm runner: no outcome queued"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const END: &str = "--end--";

    /// A shell server: per request line, runs it with `sh -c`, then writes the
    /// terminator to stderr and as a line to stdout.
    fn server(timeout_ms: u64, request: &str) -> ProcessSpec {
        let script = format!(
            "while IFS= read -r line; do eval \"$line\"; printf '%s' '{END}' >&2; echo '{END}'; done"
        );
        ProcessSpec::new(
            "/bin/sh",
            std::env::temp_dir(),
            Duration::from_millis(timeout_ms),
        )
        .arg("-c")
        .arg(script)
        .env("PATH", "/usr/bin:/bin")
        .stdin(format!("{request}\n"))
    }

    fn alive(pid: u32) -> bool {
        // Reaped children leave no /proc entry; zombies would show state Z.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
    }

    #[test]
    fn one_process_answers_many_requests_with_each_ones_output() {
        let pool = WarmPool::new(2);
        let first = pool.exchange(&server(10_000, "echo one; echo err >&2"), END);
        assert_eq!(first.exit, Exit::Code(0));
        assert_eq!(first.stdout.text(), "one\n");
        assert_eq!(first.stderr.text(), "err\n");
        let second = pool.exchange(&server(10_000, "echo two"), END);
        assert_eq!(second.stdout.text(), "two\n");
        assert_eq!(second.stderr.text(), "");
        assert_eq!(pool.started(), 1);
    }

    #[test]
    fn processes_are_never_shared_across_environments() {
        let pool = WarmPool::new(4);
        let spec = server(10_000, "echo $MARK");
        let a = spec.clone().env("MARK", "a");
        let b = spec.env("MARK", "b");
        assert_eq!(pool.exchange(&a, END).stdout.text(), "a\n");
        assert_eq!(pool.exchange(&b, END).stdout.text(), "b\n");
        assert_eq!(pool.exchange(&a, END).stdout.text(), "a\n");
        assert_eq!(pool.started(), 2);
    }

    #[test]
    fn a_hang_is_killed_at_the_timeout_and_the_next_request_starts_afresh() {
        let pool = WarmPool::new(2);
        let warm = pool.exchange(&server(10_000, "echo ready"), END);
        assert_eq!(warm.stdout.text(), "ready\n");
        let first_pid = pool.idle_pids()[0];
        let started = Instant::now();
        let hung = pool.exchange(&server(300, "echo partial; sleep 30 & sleep 30"), END);
        assert!(hung.timed_out);
        assert_eq!(hung.exit, Exit::Signal(libc::SIGKILL));
        assert_eq!(
            hung.stdout.text(),
            "partial\n",
            "output before the hang is kept"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(!alive(first_pid), "the hung process is gone");
        assert!(pool.idle_pids().is_empty());
        let after = pool.exchange(&server(10_000, "echo back"), END);
        assert_eq!(after.stdout.text(), "back\n");
        assert_eq!(pool.started(), 2);
    }

    #[test]
    fn a_server_that_exits_reports_its_status_and_stderr() {
        let pool = WarmPool::new(2);
        let outcome = pool.exchange(&server(10_000, "echo last; echo why >&2; exit 4"), END);
        assert!(!outcome.timed_out);
        assert_eq!(outcome.exit, Exit::Code(4));
        assert_eq!(outcome.stdout.text(), "last\n");
        assert_eq!(outcome.stderr.text(), "why\n");
        assert!(pool.idle_pids().is_empty());
    }

    #[test]
    fn the_pool_is_bounded_least_recently_used_first_and_shutdown_kills_all() {
        let pool = WarmPool::new(2);
        let spec = |mark: &str| server(10_000, "true").env("MARK", mark);
        for mark in ["a", "b", "c"] {
            assert_eq!(pool.exchange(&spec(mark), END).exit, Exit::Code(0));
        }
        let pids = pool.idle_pids();
        assert_eq!(pids.len(), 2);
        // "a" was evicted; "b" is reused, which makes "c" the oldest.
        pool.exchange(&spec("b"), END);
        assert_eq!(pool.started(), 3);
        assert_eq!(pool.idle_pids(), vec![pids[1], pids[0]]);
        pool.shutdown();
        assert!(pool.idle_pids().is_empty());
        for pid in pids {
            assert!(!alive(pid), "{pid} outlived the shutdown");
        }
        // After shutdown a request is still answered, by a process retired after it.
        assert_eq!(pool.exchange(&spec("b"), END).stdout.text(), "");
        assert!(pool.idle_pids().is_empty());
    }

    #[test]
    fn a_process_killed_while_idle_is_replaced() {
        let pool = WarmPool::new(2);
        pool.exchange(&server(10_000, "true"), END);
        let pid = pool.idle_pids()[0];
        kill_process_group(pid);
        while !has_exited(pid) {
            thread::sleep(Duration::from_millis(5));
        }
        let outcome = pool.exchange(&server(10_000, "echo fresh"), END);
        assert_eq!(outcome.stdout.text(), "fresh\n");
        assert_eq!(pool.started(), 2);
    }

    #[test]
    fn a_missing_program_is_an_outcome_not_a_panic() {
        let pool = WarmPool::new(2);
        let spec = ProcessSpec::new("/nonexistent/program", "/", Duration::from_secs(1));
        assert!(matches!(
            pool.exchange(&spec, END).exit,
            Exit::NotStarted(_)
        ));
    }

    #[test]
    fn output_is_kept_to_the_capture_limit() {
        let pool = WarmPool::new(2);
        let mut spec = server(10_000, "yes | head -c 300000; head -c 300000 /dev/zero >&2");
        spec.capture_limit = 1000;
        let outcome = pool.exchange(&spec, END);
        assert_eq!(outcome.exit, Exit::Code(0));
        assert_eq!(outcome.stdout.bytes.len(), 1000);
        assert!(outcome.stdout.truncated && outcome.stderr.truncated);
        assert_eq!(outcome.stderr.bytes.len(), 1000);
        // The terminators were still found: the process serves on.
        assert_eq!(
            pool.exchange(&spec.stdin("echo ok\n"), END).stdout.text(),
            "ok\n"
        );
        assert_eq!(pool.started(), 1);
    }

    #[test]
    fn the_splitter_finds_markers_across_chunks_and_bounds_each_run() {
        let mut splitter = MarkerSplitter::new(b"<>", 4);
        let mut runs = Vec::new();
        for chunk in ["ab<", ">cdefgh", "ijk<", "><", "", ">tail"] {
            splitter.push(chunk.as_bytes(), &mut runs);
        }
        let shown: Vec<(String, bool)> = runs.iter().map(|r| (r.text(), r.truncated)).collect();
        assert_eq!(
            shown,
            [
                ("ab".to_owned(), false),
                ("cdef".to_owned(), true),
                (String::new(), false)
            ]
        );
        let rest = splitter.finish();
        assert_eq!((rest.text(), rest.truncated), ("tail".to_owned(), false));
    }

    proptest::proptest! {
        #[test]
        fn the_splitter_agrees_with_splitting_the_whole_stream(
            pieces in proptest::collection::vec("[ab<>]{0,6}", 0..12),
            limit in 0usize..8,
        ) {
            let stream: String = pieces.concat();
            let mut splitter = MarkerSplitter::new(b"<>", limit);
            let mut runs = Vec::new();
            for piece in &pieces {
                splitter.push(piece.as_bytes(), &mut runs);
            }
            runs.push(splitter.finish());
            let expected: Vec<(String, bool)> = stream
                .split("<>")
                .map(|run| (run.chars().take(limit).collect(), run.len() > limit))
                .collect();
            let got: Vec<(String, bool)> = runs.iter().map(|r| (r.text(), r.truncated)).collect();
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
