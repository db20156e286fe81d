//! `trellis context` on a synthetic root of 2,000 definitions: cold (the command
//! spawns the daemon, which loads the root and builds the bundle) against warm
//! through the daemon after an unrelated edit (a prose edit in another module),
//! both as whole commands and as one request over the socket, with the daemon's
//! own split between the bundle queries and wiping and writing the files.
//! Prints the ratios against the goal (warm ≤ 5 ms and ≤ 5% of cold).
//!
//! Run with `cargo build --release -p trellis && cargo run --release -p trellis
//! --example context_bench` (optional argument: the number of definitions).

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use trellis_db::synthetic::{spec_path, synthetic_root};

const REPETITIONS: usize = 9;
const COLD_REPETITIONS: usize = 3;
const WARM_GOAL_MS: f64 = 5.0;
const SHARE_OF_COLD_GOAL: f64 = 0.05;
const BUDGET: &str = "8000";

struct Bench {
    trellis: PathBuf,
    root: PathBuf,
    runtime: PathBuf,
}

impl Bench {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.trellis);
        command
            .args(args)
            .current_dir(&self.root)
            .env("TRELLIS_ROOT", &self.root)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    }

    fn time(&self, args: &[&str]) -> Result<Duration, String> {
        let started = Instant::now();
        let output = self
            .command(args)
            .output()
            .map_err(|e| format!("run trellis: {e}"))?;
        let elapsed = started.elapsed();
        if !output.status.success() {
            return Err(format!(
                "`trellis {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(elapsed)
    }

    fn socket(&self) -> Result<PathBuf, String> {
        trellis_rpc::socket_path_with(&self.root, Some(&self.runtime), trellis_rpc::current_uid())
            .map_err(|e| format!("socket path: {e}"))
    }

    fn stop_daemon(&self) -> Result<(), String> {
        let _ = self.command(&["daemon", "stop"]).output();
        let socket = self.socket()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while socket.exists() {
            if Instant::now() > deadline {
                return Err("the daemon did not stop".to_owned());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// One `context` request over the socket: (round trip, queries + writing,
    /// writing alone).
    fn rpc_context(&self, def: &str) -> Result<(Duration, Duration, Duration), String> {
        let mut client =
            trellis_rpc::Client::connect(&self.socket()?).map_err(|e| format!("connect: {e}"))?;
        let started = Instant::now();
        let answer = client
            .call(
                "context",
                json!({ "def": def, "budget": 8000, "out": null }),
            )
            .map_err(|e| format!("context: {e}"))?;
        let round_trip = started.elapsed();
        let queries = answer["timings"]["queries_us"]
            .as_u64()
            .map(Duration::from_micros)
            .ok_or("the answer has no timings")?;
        let writing = answer["write_us"]
            .as_u64()
            .map(Duration::from_micros)
            .ok_or("the answer has no write_us")?;
        Ok((round_trip, queries, writing))
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn main() {
    if let Err(message) = run() {
        eprintln!("context_bench: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let definitions: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|_| format!("not a count: {n}"))?,
        None => 2000,
    };
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let trellis = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("trellis"))
        .filter(|path| path.is_file())
        .ok_or("no trellis binary; build it first with `cargo build --release -p trellis`")?;
    let base = std::env::temp_dir().join(format!("tr-context-bench-{}", std::process::id()));
    let root = base.join("root");
    let runtime = base.join("run");
    for (relative, text) in synthetic_root(definitions) {
        let path = root.join(&relative);
        std::fs::create_dir_all(path.parent().unwrap_or(&root))
            .map_err(|e| format!("mkdir: {e}"))?;
        std::fs::write(&path, text).map_err(|e| format!("write {relative}: {e}"))?;
    }
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(&runtime).map_err(|e| format!("mkdir: {e}"))?;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("chmod: {e}"))?;
    }
    let root = root
        .canonicalize()
        .map_err(|e| format!("canonicalize: {e}"))?;
    let bench = Bench {
        trellis,
        root,
        runtime,
    };
    let result = measure(&bench, definitions);
    let _ = bench.stop_daemon();
    let _ = std::fs::remove_dir_all(&base);
    result
}

fn measure(bench: &Bench, definitions: usize) -> Result<(), String> {
    // A definition in the last module; the edit is prose in the first.
    let target_index = definitions - 25;
    let target_path = spec_path(target_index);
    let (module, file) = target_path.split_once('/').ok_or("a module path")?;
    let def = format!("{module}::{}", file.trim_end_matches(".tr"));
    let args = ["context", def.as_str(), "--budget", BUDGET];
    println!(
        "trellis context bench: {definitions} definitions, `trellis {}`",
        args.join(" ")
    );
    println!("median of {REPETITIONS} runs ({COLD_REPETITIONS} for cold); times in ms\n");

    let mut cold = Vec::new();
    for _ in 0..COLD_REPETITIONS {
        bench.stop_daemon()?;
        cold.push(bench.time(&args)?);
    }
    let cold = median(cold);

    let edited = bench.root.join(spec_path(20));
    let original = std::fs::read_to_string(&edited).map_err(|e| format!("read: {e}"))?;
    let variants = [
        original.replacen(
            "A generated definition",
            "A generated, edited definition",
            1,
        ),
        original.clone(),
    ];
    // Pay the edited file's durability demotion (design §7.1) before measuring.
    std::fs::write(&edited, &variants[0]).map_err(|e| format!("write: {e}"))?;
    bench.time(&args)?;
    let (mut whole, mut trips, mut queries, mut writes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in 0..REPETITIONS {
        std::fs::write(&edited, &variants[(k + 1) % 2]).map_err(|e| format!("write: {e}"))?;
        whole.push(bench.time(&args)?);
        std::fs::write(&edited, &variants[k % 2]).map_err(|e| format!("write: {e}"))?;
        let (trip, queried, written) = bench.rpc_context(&def)?;
        trips.push(trip);
        queries.push(queried);
        writes.push(written);
    }
    std::fs::write(&edited, &original).map_err(|e| format!("write: {e}"))?;
    let (warm, trip, queried, written) = (
        median(whole),
        median(trips),
        median(queries),
        median(writes),
    );
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    println!(
        "cold (spawn + load + bundle)                 {:>9.2}",
        ms(cold)
    );
    println!(
        "warm after an unrelated edit, whole command  {:>9.2}  ({:.2}% of cold)",
        ms(warm),
        100.0 * ms(warm) / ms(cold)
    );
    println!(
        "warm after an unrelated edit, rpc trip       {:>9.2}  (queries + writing {:.2}, of which wiping + writing the files {:.2})",
        ms(trip),
        ms(queried),
        ms(written)
    );
    let bundle_only = queried.saturating_sub(written);
    println!(
        "warm after an unrelated edit, bundle queries {:>9.2}  (the daemon's queries without the file writes)",
        ms(bundle_only)
    );
    println!(
        "\nwarm bundle queries: {:.2} ms (goal {WARM_GOAL_MS} ms: {})",
        ms(bundle_only),
        verdict(ms(bundle_only) <= WARM_GOAL_MS)
    );
    println!(
        "warm whole command: {:.2} ms (goal {WARM_GOAL_MS} ms: {}), {:.2}% of cold (goal {:.0}%: {})",
        ms(warm),
        verdict(ms(warm) <= WARM_GOAL_MS),
        100.0 * ms(warm) / ms(cold),
        100.0 * SHARE_OF_COLD_GOAL,
        verdict(ms(warm) / ms(cold) <= SHARE_OF_COLD_GOAL)
    );
    Ok(())
}
