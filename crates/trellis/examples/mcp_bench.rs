//! Per-tool latency through the `trellis _mcp` shim on a copy of `examples/`: a
//! job on `csvstats::median`, the legacy handshake, then 200 calls of each tool
//! (after one warm-up), timed from the request line written to the response line
//! read — the agent CLI's view, shim and daemon socket included. Prints p50 and
//! p99 per tool and the p50's ratio to its goal (`read_context`, `read_spec`,
//! `check_refinements` ≤ 2 ms; `write_soil`, `check_types` ≤ 10 ms; `run_tests`
//! of median ≤ 100 ms).
//!
//! Run with `cargo build --release -p trellis && cargo run --release -p trellis
//! --example mcp_bench` (optional argument: the number of calls per tool).

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn main() {
    if let Err(message) = run() {
        eprintln!("mcp_bench: {message}");
        std::process::exit(1);
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("mkdir: {e}"))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("read_dir: {e}"))? {
        let entry = entry.map_err(|e| format!("read_dir: {e}"))?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| format!("copy: {e}"))?;
        }
    }
    Ok(())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn run() -> Result<(), String> {
    let calls: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|_| format!("not a count: {n}"))?,
        None => 200,
    };
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let trellis = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("trellis"))
        .filter(|path| path.is_file())
        .ok_or("no trellis binary; build it first with `cargo build --release -p trellis`")?;
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let base = std::env::temp_dir().join(format!("tr-mcp-bench-{}", std::process::id()));
    let root = base.join("root");
    let runtime = base.join("run");
    copy_tree(&workspace.join("examples"), &root)?;
    std::fs::create_dir_all(&runtime).map_err(|e| format!("mkdir: {e}"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("chmod: {e}"))?;
    }
    let command = |args: &[&str]| {
        let mut command = Command::new(&trellis);
        command
            .args(args)
            .current_dir(&root)
            .env("TRELLIS_ROOT", &root)
            .env("XDG_RUNTIME_DIR", &runtime);
        command
    };
    let result = bench(&command, &root, calls);
    let _ = command(&["daemon", "stop"]).output();
    let _ = std::fs::remove_dir_all(&base);
    result
}

/// A `trellis _mcp` session on a fresh job for one definition.
struct Shim {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Shim {
    fn start(command: &dyn Fn(&[&str]) -> Command, def: &str) -> Result<Shim, String> {
        let output = command(&["_job", "create", def, "--budget", "20000", "--json"])
            .output()
            .map_err(|e| format!("_job create: {e}"))?;
        let record: Value = serde_json::from_slice(&output.stdout).map_err(|e| {
            format!(
                "_job create answered {e}: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })?;
        let job = record["job"].as_str().ok_or("no job id")?;
        let socket = record["socket"].as_str().ok_or("no socket")?;
        let mut child = command(&["_mcp", "--job", job, "--socket", socket])
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("_mcp: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut shim = Shim {
            child,
            stdin,
            stdout,
            id: 0,
        };
        shim.exchange("initialize", json!({"protocolVersion": "2025-11-25"}))?;
        Ok(shim)
    }

    fn exchange(&mut self, method: &str, params: Value) -> Result<(Duration, Value), String> {
        self.id += 1;
        let line = format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        );
        let started = Instant::now();
        self.stdin
            .write_all(line.as_bytes())
            .map_err(|e| format!("write: {e}"))?;
        self.stdin.flush().map_err(|e| format!("flush: {e}"))?;
        let mut reply = String::new();
        self.stdout
            .read_line(&mut reply)
            .map_err(|e| format!("read: {e}"))?;
        let elapsed = started.elapsed();
        let reply: Value = serde_json::from_str(&reply).map_err(|e| format!("reply: {e}"))?;
        Ok((elapsed, reply))
    }

    /// Times `calls` calls of `tool` after one warm-up: sorted durations.
    fn time(
        &mut self,
        tool: &str,
        arguments: Value,
        calls: usize,
    ) -> Result<Vec<Duration>, String> {
        let params = json!({"name": tool, "arguments": arguments});
        let (_, warm) = self.exchange("tools/call", params.clone())?;
        if warm["result"]["isError"] != json!(false) {
            return Err(format!("{tool} failed: {warm}"));
        }
        let mut times = Vec::with_capacity(calls);
        for _ in 0..calls {
            times.push(self.exchange("tools/call", params.clone())?.0);
        }
        times.sort();
        Ok(times)
    }

    fn finish(self) {
        drop(self.stdin);
        let mut child = self.child;
        let _ = child.wait();
    }
}

fn bench(command: &dyn Fn(&[&str]) -> Command, root: &Path, calls: usize) -> Result<(), String> {
    let read = |relative: &str| {
        std::fs::read_to_string(root.join(relative)).map_err(|e| format!("{relative}: {e}"))
    };
    let median = read("csvstats/median.soil")?;
    let sort = read("csvstats/sort.soil")?;
    let rows: [(&str, &str, Value, f64); 7] = [
        (
            "csvstats::median",
            "read_context",
            json!({"path": "spec.md"}),
            2.0,
        ),
        (
            "csvstats::median",
            "read_spec",
            json!({"ref": "soil-syntax-spec#5.9"}),
            2.0,
        ),
        ("csvstats::median", "check_refinements", json!({}), 2.0),
        (
            "csvstats::median",
            "write_soil",
            json!({"soil": median, "decisions_applied": []}),
            10.0,
        ),
        ("csvstats::median", "check_types", json!({}), 10.0),
        ("csvstats::median", "run_tests", json!({}), 100.0),
        ("csvstats::sort", "run_tests", json!({}), 100.0),
    ];
    println!("per-tool latency through trellis _mcp, {calls} calls each (examples/)");
    println!(
        "{:<18} {:<18} {:>9} {:>9} {:>8} {:>10}",
        "definition", "tool", "p50 ms", "p99 ms", "goal ms", "p50/goal"
    );
    let mut shim = Shim::start(command, "csvstats::median")?;
    let mut sort_shim = Shim::start(command, "csvstats::sort")?;
    sort_shim.exchange(
        "tools/call",
        json!({"name": "write_soil", "arguments": {"soil": sort, "decisions_applied": []}}),
    )?;
    for (def, tool, arguments, goal) in rows {
        let session = if def == "csvstats::sort" {
            &mut sort_shim
        } else {
            &mut shim
        };
        let times = session.time(tool, arguments, calls)?;
        let p50 = percentile(&times, 0.5);
        println!(
            "{def:<18} {tool:<18} {p50:>9.3} {:>9.3} {goal:>8.0} {:>9.2}x",
            percentile(&times, 0.99),
            p50 / goal
        );
    }
    println!(
        "(median's suite includes its differential row, answered by the daemon's warm python3\n oracle driver, started once; sort has no reference: its figure is the interpreter's share)"
    );
    shim.finish();
    sort_shim.finish();
    Ok(())
}
