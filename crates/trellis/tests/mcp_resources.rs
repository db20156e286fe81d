//! Hostile MCP clients cost their `trellis _mcp` shims a bounded amount and
//! nothing of another session's time (design §9.11). Beside a normal session
//! asking `read_context`, hostile clients each drive a shim of their own,
//! against the same daemon: one streams a line that never ends (about 12 MB/s,
//! past the 16 MiB frame limit within the run: refused once, then skipped); one sent half of a 16 MB frame
//! and stalls; one sends tool calls and never reads an answer; one streams
//! garbage lines and reads what it is answered. Every shim's and the daemon's
//! resident memory is sampled throughout, and the normal session's latency is
//! measured quiet (before the attack, then with the streams paused) and under
//! attack, in alternating rounds of the same run.
//!
//! The bounds asserted are generous, for a shared two-core machine: no shim
//! holds more than [`SHIM_BOUND`] (a shim holds at most one line, up to the
//! 16 MiB frame limit — about twice that resident while it grows, the
//! allocator keeping the buffers it outgrew for the next line — and one
//! answer; one that is not read stops reading),
//! the daemon grows by less than [`DAEMON_GROWTH_BOUND`], and the normal
//! session's 99th-percentile latency under attack is within twice its quiet
//! value plus [`NOISE`]. The figures are printed; measured (debug build):
//! the endless line's shim peaks at 43 MiB, the half frame's at 27 MiB, the
//! never-reading client's at 13 MiB, and the normal p99 is unchanged (about
//! 1.4 ms quiet and under attack).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Root, TRELLIS};

/// The most one shim may hold at any time.
const SHIM_BOUND: u64 = 64 << 20;
/// The most the daemon may grow while the hostile sessions run.
const DAEMON_GROWTH_BOUND: u64 = 64 << 20;
const NOISE: Duration = Duration::from_millis(10);
const ROUNDS: usize = 4;
const SAMPLES: usize = 25;
/// What the garbage stream writes every 10 ms (about 3 MB/s).
const CHUNK: usize = 32 * 1024;
/// What the endless line writes every 10 ms (about 12 MB/s, past the frame
/// limit within the run).
const ENDLESS_CHUNK: usize = 128 * 1024;

fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn p99(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[(samples.len() * 99).div_ceil(100) - 1]
}

/// A shim for a fresh job of `csvstats::median`, its pipes left to the caller.
fn shim(root: &Root) -> Child {
    let record = root
        .run(&[
            "_job",
            "create",
            "csvstats::median",
            "--budget",
            "20000",
            "--json",
        ])
        .ok()
        .json();
    Command::new(TRELLIS)
        .args(["_mcp", "--job", record["job"].as_str().unwrap()])
        .args(["--socket", record["socket"].as_str().unwrap()])
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start trellis _mcp")
}

fn line(message: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).expect("JSON");
    bytes.push(b'\n');
    bytes
}

fn initialize() -> Vec<u8> {
    line(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25"}}))
}

/// The normal session.
struct Normal {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Normal {
    fn ask(&mut self) -> Duration {
        self.next += 1;
        let started = Instant::now();
        let call = json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call",
                          "params": {"name": "read_context", "arguments": {"path": "bundle.json"}}});
        self.stdin.write_all(&line(&call)).expect("send");
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).expect("answer");
        let answer: Value = serde_json::from_str(&answer).expect("JSON");
        assert_eq!(answer["id"], self.next, "{answer}");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        started.elapsed()
    }
}

/// Writes what `next` produces every 10 ms while the attack is on, until told
/// to stop or the shim stops reading.
fn streaming(
    mut stdin: ChildStdin,
    on: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    mut next: impl FnMut() -> Vec<u8> + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if on.load(Ordering::Relaxed) {
                if stdin.write_all(&next()).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            } else {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    })
}

/// Reads a shim's answers; counts the refusals of oversized frames (-32001).
fn draining(stdout: ChildStdout) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        BufReader::new(stdout)
            .split(b'\n')
            .map_while(Result::ok)
            .filter(|line| line.windows(14).any(|w| w == b"\"code\":-32001,"))
            .count()
    })
}

#[test]
fn hostile_mcp_clients_neither_balloon_a_shim_nor_slow_a_normal_session() {
    let root = Root::examples_with_daemon();
    let daemon = root.daemon_pid().expect("the daemon's pid");
    let Some(_) = resident_bytes(daemon) else {
        eprintln!("no /proc/<pid>/status: resident memory cannot be measured here");
        return;
    };
    let mut child = shim(&root);
    let mut normal = Normal {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        next: 0,
    };
    normal.stdin.write_all(&initialize()).expect("initialize");
    normal
        .stdout
        .read_line(&mut String::new())
        .expect("initialized");
    for _ in 0..20 {
        normal.ask();
    }
    let daemon_baseline = resident_bytes(daemon).unwrap_or_default();
    let mut quiet: Vec<Duration> = (0..SAMPLES).map(|_| normal.ask()).collect();

    let on = Arc::new(AtomicBool::new(true));
    let stop = Arc::new(AtomicBool::new(false));
    let mut children = Vec::new();
    let mut threads = Vec::new();

    // A line that never ends.
    let mut endless = shim(&root);
    let mut stdin = endless.stdin.take().unwrap();
    stdin.write_all(&initialize()).expect("initialize");
    let endless_answers = draining(endless.stdout.take().unwrap());
    threads.push(streaming(stdin, on.clone(), stop.clone(), || {
        vec![b'x'; ENDLESS_CHUNK]
    }));
    children.push(("an endless line", endless));

    // Half of a 16 MB frame, then nothing.
    let mut half = shim(&root);
    let mut stdin = half.stdin.take().unwrap();
    stdin.write_all(&initialize()).expect("initialize");
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"",
        )
        .expect("send");
    stdin.write_all(&vec![b'a'; 8_000_000]).expect("send");
    let half_answers = draining(half.stdout.take().unwrap());
    let half_stdin = stdin;
    children.push(("a stalled half frame", half));

    // Tool calls, and never a read: the pipe fills, then the shim waits.
    let mut deaf = shim(&root);
    let mut stdin = deaf.stdin.take().unwrap();
    let deaf_stdout = deaf.stdout.take().unwrap();
    {
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            let _ = stdin.write_all(&initialize());
            let mut id = 1;
            while !stop.load(Ordering::Relaxed) {
                id += 1;
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "read_context", "arguments": {"path": "spec.md"}}});
                if stdin.write_all(&line(&call)).is_err() {
                    return;
                }
            }
        }));
    }
    children.push(("a client that never reads", deaf));

    // Garbage lines, answered and read.
    let mut garbage = shim(&root);
    let stdin = garbage.stdin.take().unwrap();
    let garbage_answers = draining(garbage.stdout.take().unwrap());
    let mut seed = 0x9e37_79b9_u64;
    threads.push(streaming(stdin, on.clone(), stop.clone(), move || {
        (0..CHUNK)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect()
    }));
    children.push(("garbage", garbage));

    let pids: Vec<u32> = children.iter().map(|(_, child)| child.id()).collect();
    let peaks: Arc<Vec<AtomicU64>> =
        Arc::new((0..=pids.len()).map(|_| AtomicU64::new(0)).collect());
    let sampler = {
        let (stop, peaks, pids) = (stop.clone(), peaks.clone(), pids.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for (index, pid) in pids.iter().chain([&daemon]).enumerate() {
                    peaks[index]
                        .fetch_max(resident_bytes(*pid).unwrap_or_default(), Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    std::thread::sleep(Duration::from_millis(500));

    let mut attacked = Vec::new();
    for _ in 0..ROUNDS {
        on.store(false, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(50));
        for _ in 0..SAMPLES {
            quiet.push(normal.ask());
        }
        on.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(50));
        for _ in 0..SAMPLES {
            attacked.push(normal.ask());
        }
    }
    // Long enough for the endless line to pass the frame limit at ~12 MB/s.
    std::thread::sleep(Duration::from_secs(2));
    let deaf_still_running = {
        let (_, deaf) = &mut children[2];
        deaf.try_wait().expect("wait").is_none()
    };
    stop.store(true, Ordering::Relaxed);
    sampler.join().expect("the sampler");
    drop(half_stdin);
    drop(deaf_stdout);
    for (_, mut child) in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    for thread in threads {
        let _ = thread.join();
    }
    let endless_refused = endless_answers.join().expect("drained");
    for drained in [half_answers, garbage_answers] {
        let _ = drained.join();
    }

    let (quiet_p99, attacked_p99) = (p99(&mut quiet), p99(&mut attacked));
    let daemon_peak = peaks[pids.len()].load(Ordering::Relaxed);
    let names = [
        "an endless line",
        "a stalled half frame",
        "a client that never reads",
        "garbage",
    ];
    let shim_peaks: Vec<u64> = (0..pids.len())
        .map(|i| peaks[i].load(Ordering::Relaxed))
        .collect();
    eprintln!(
        "shim resident memory at its peak: {}; daemon {} MiB warm, {} MiB at its peak; normal \
         session p99: {:.2} ms quiet ({} samples), {:.2} ms under attack ({} samples)",
        names
            .iter()
            .zip(&shim_peaks)
            .map(|(name, peak)| format!("{name} {} MiB", peak >> 20))
            .collect::<Vec<_>>()
            .join(", "),
        daemon_baseline >> 20,
        daemon_peak >> 20,
        quiet_p99.as_secs_f64() * 1e3,
        quiet.len(),
        attacked_p99.as_secs_f64() * 1e3,
        attacked.len()
    );
    for (name, peak) in names.iter().zip(&shim_peaks) {
        assert!(
            *peak < SHIM_BOUND,
            "the shim fed {name} peaked at {peak} bytes"
        );
    }
    assert!(
        daemon_peak.saturating_sub(daemon_baseline) < DAEMON_GROWTH_BOUND,
        "the daemon grew from {daemon_baseline} to {daemon_peak} bytes"
    );
    assert!(
        deaf_still_running,
        "the shim of a client that never reads ended"
    );
    assert_eq!(
        endless_refused, 1,
        "the endless line is refused once, then skipped"
    );
    assert!(
        attacked_p99 <= quiet_p99 * 2 + NOISE,
        "p99 {attacked_p99:?} under attack against {quiet_p99:?} quiet"
    );
    let mut rest = Vec::new();
    drop(normal.stdin);
    normal
        .stdout
        .read_to_end(&mut rest)
        .expect("the normal shim ends");
    assert!(child.wait().expect("wait").success());
}
