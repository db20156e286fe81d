//! Whole-command latency of the `trellis` binary on a synthetic root of 2,000
//! definitions: a cold `check` (the first command spawns the daemon, which loads
//! the root), a no-op re-check, and re-checks after a prose edit and a leaf-body
//! edit, each through the daemon and with `--no-daemon` (a fresh process) as the
//! baseline. The daemon's headline is the command started at once after the
//! write; beside it, the same started half a second later (the daemon has
//! answered the change ahead by then, design §7.10). Where the time goes comes from the `timings` object the service adds
//! to each answer, read by calling the daemon over its socket.
//!
//! Run with `cargo build --release -p trellis && cargo run --release -p trellis
//! --example daemon_bench` (optional argument: the number of definitions).

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

#[path = "support/scratch.rs"]
mod scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use trellis_db::synthetic::{soil_path, spec_path, synthetic_root};

const REPETITIONS: usize = 7;
/// How long the paused samples wait between the write and the command.
const PAUSE: Duration = Duration::from_millis(500);
const COLD_REPETITIONS: usize = 3;
/// End-to-end goals at N = 2,000 (issue 5).
const NO_OP_GOAL_MS: f64 = 10.0;
const EDIT_GOAL_MS: f64 = 15.0;
const SHARE_OF_COLD_GOAL: f64 = 0.02;

struct Bench {
    trellis: PathBuf,
    root: PathBuf,
    runtime: PathBuf,
}

/// A file toggled between two texts of different lengths, so every edit is a
/// real change whatever the file system's timestamp resolution.
struct Toggle {
    path: PathBuf,
    original: String,
    edited: String,
    is_edited: bool,
}

impl Toggle {
    fn new(root: &Path, relative: &str, from: &str, to: &str) -> Result<Toggle, String> {
        let path = root.join(relative);
        let original =
            std::fs::read_to_string(&path).map_err(|e| format!("read {relative}: {e}"))?;
        if !original.contains(from) {
            return Err(format!("{relative} does not contain `{from}`"));
        }
        let edited = original.replacen(from, to, 1);
        Ok(Toggle {
            path,
            original,
            edited,
            is_edited: false,
        })
    }

    fn flip(&mut self) -> Result<(), String> {
        self.is_edited = !self.is_edited;
        let text = if self.is_edited {
            &self.edited
        } else {
            &self.original
        };
        std::fs::write(&self.path, text).map_err(|e| format!("write {}: {e}", self.path.display()))
    }
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

    /// Runs one command and returns its wall time; fails on a non-zero exit.
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

    /// One `check` over the socket: (round trip, refresh, queries).
    fn rpc_check(&self) -> Result<(Duration, Duration, Duration), String> {
        let mut client =
            trellis_rpc::Client::connect(&self.socket()?).map_err(|e| format!("connect: {e}"))?;
        let started = Instant::now();
        let answer = client
            .call("check", json!({ "def": null }))
            .map_err(|e| format!("check: {e}"))?;
        let round_trip = started.elapsed();
        let micros = |field: &str| {
            answer["timings"][field]
                .as_u64()
                .map(Duration::from_micros)
                .ok_or_else(|| format!("the answer has no timings.{field}"))
        };
        Ok((round_trip, micros("refresh_us")?, micros("queries_us")?))
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The measurements of one scenario.
struct Row {
    name: &'static str,
    /// Started at once after the write.
    daemon: Duration,
    /// Started [`PAUSE`] after the write (None for the cold row).
    paused: Option<Duration>,
    no_daemon: Duration,
    /// Daemon side, from `timings` (None for the cold row: spawning is client time).
    refresh: Option<Duration>,
    queries: Option<Duration>,
    round_trip: Option<Duration>,
    /// The scenario's first run, when it edits a file for the first time: the edit
    /// demotes the file's durability (design §7.1), which the median leaves out.
    first: Option<Duration>,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("daemon_bench: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let definitions: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|_| format!("not a count: {n}"))?,
        None => 2000,
    };
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    // target/release/examples/daemon_bench → target/release/trellis
    let trellis = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("trellis"))
        .filter(|path| path.is_file())
        .ok_or_else(|| {
            format!(
                "no trellis binary next to {}; build it first with `cargo build --release -p trellis`",
                exe.display()
            )
        })?;
    let scratch::Scratch {
        base,
        root,
        runtime,
    } = scratch::write_scratch("tr-bench", synthetic_root(definitions))?;
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
    println!(
        "trellis daemon bench: {definitions} definitions, binary {}",
        bench.trellis.display()
    );
    println!("median of {REPETITIONS} runs ({COLD_REPETITIONS} for cold); times in ms\n");

    // Cold: no daemon; the command spawns it and it loads the root.
    let mut cold = Vec::new();
    for _ in 0..COLD_REPETITIONS {
        bench.stop_daemon()?;
        cold.push(bench.time(&["check"])?);
    }
    let no_daemon_check = (0..COLD_REPETITIONS)
        .map(|_| bench.time(&["--no-daemon", "check"]))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rows = vec![Row {
        name: "cold check (spawn + load)",
        daemon: median(cold),
        paused: None,
        no_daemon: median(no_daemon_check),
        refresh: None,
        queries: None,
        round_trip: None,
        first: None,
    }];

    let mut prose = Toggle::new(
        &bench.root,
        &spec_path(20),
        "A generated definition",
        "A generated, edited definition",
    )?;
    let mut leaf = Toggle::new(
        &bench.root,
        &soil_path(0),
        "let base = x *",
        "let base = 1 + x *",
    )?;
    let scenarios: [(&'static str, Option<&mut Toggle>); 3] = [
        ("no-op re-check", None),
        ("re-check after a prose edit", Some(&mut prose)),
        ("re-check after a leaf-body edit", Some(&mut leaf)),
    ];
    for (name, mut toggle) in scenarios {
        let mut whole = Vec::new();
        let mut no_daemon = Vec::new();
        let (mut refresh, mut queries, mut round_trip) = (Vec::new(), Vec::new(), Vec::new());
        let mut paused = Vec::new();
        for _ in 0..REPETITIONS {
            if let Some(toggle) = toggle.as_deref_mut() {
                toggle.flip()?;
            }
            whole.push(bench.time(&["check"])?);
            if let Some(toggle) = toggle.as_deref_mut() {
                toggle.flip()?;
            }
            let (rpc, refreshed, queried) = bench.rpc_check()?;
            round_trip.push(rpc);
            refresh.push(refreshed);
            queries.push(queried);
            if let Some(toggle) = toggle.as_deref_mut() {
                toggle.flip()?;
            }
            no_daemon.push(bench.time(&["--no-daemon", "check"])?);
            if let Some(toggle) = toggle.as_deref_mut() {
                toggle.flip()?;
            }
            std::thread::sleep(PAUSE);
            paused.push(bench.time(&["check"])?);
        }
        let first = toggle.is_some().then(|| whole[0]);
        rows.push(Row {
            name,
            first,
            daemon: median(whole),
            paused: Some(median(paused)),
            no_daemon: median(no_daemon),
            refresh: Some(median(refresh)),
            queries: Some(median(queries)),
            round_trip: Some(median(round_trip)),
        });
    }
    report(&rows);
    breakdown(bench, &mut prose, &mut leaf)
}

/// Where a warm command's time goes, measured piece by piece: the floor of
/// starting the binary at all, the loader's stat walk alone, and the service
/// answering in this process (no process start, no socket).
fn breakdown(bench: &Bench, prose: &mut Toggle, leaf: &mut Toggle) -> Result<(), String> {
    let start = median(
        (0..REPETITIONS)
            .map(|_| bench.time(&["--version"]))
            .collect::<Result<Vec<_>, _>>()?,
    );
    let mut loader = trellis_service::loader::RootLoader::new(bench.root.clone());
    loader.refresh();
    let walk = median(
        (0..REPETITIONS)
            .map(|_| {
                let started = Instant::now();
                let refresh = loader.refresh();
                assert!(
                    refresh.change.is_empty(),
                    "nothing changed between refreshes"
                );
                started.elapsed()
            })
            .collect(),
    );
    // As the daemon runs it: refreshing what the change feed names.
    let mut service = trellis_service::service::Service::watching(bench.root.clone(), true);
    let check =
        |service: &mut trellis_service::service::Service| -> Result<(Duration, Duration), String> {
            let answer = service
                .handle("check", &json!({ "def": null }), &mut |_| {})
                .map_err(|e| format!("check: {e}"))?;
            let micros =
                |field: &str| Duration::from_micros(answer["timings"][field].as_u64().unwrap_or(0));
            Ok((micros("refresh_us"), micros("queries_us")))
        };
    let (cold_refresh, cold_queries) = check(&mut service)?;
    println!("\nbreakdown (medians, ms):");
    println!(
        "  process floor: `trellis --version`            {:>8.2}",
        ms(start)
    );
    println!(
        "  stat walk, nothing changed (no change feed)   {:>8.2}",
        ms(walk)
    );
    println!(
        "  in-process service, first check              refresh {:>8.2}  queries {:>8.2}",
        ms(cold_refresh),
        ms(cold_queries)
    );
    let toggles: [(&str, Option<&mut Toggle>); 3] = [
        ("no-op", None),
        ("prose edit", Some(prose)),
        ("leaf-body edit", Some(leaf)),
    ];
    for (name, mut toggle) in toggles {
        let (mut refresh, mut queries) = (Vec::new(), Vec::new());
        for _ in 0..REPETITIONS {
            if let Some(toggle) = toggle.as_deref_mut() {
                toggle.flip()?;
            }
            let (r, q) = check(&mut service)?;
            refresh.push(r);
            queries.push(q);
        }
        println!(
            "  in-process service, {name:<24} refresh {:>8.2}  queries {:>8.2}",
            ms(median(refresh)),
            ms(median(queries))
        );
    }
    Ok(())
}

fn report(rows: &[Row]) {
    let cold = ms(rows[0].daemon);
    println!(
        "{:<34} {:>9} {:>9} {:>11} {:>9} {:>9} {:>10} {:>12} {:>9}",
        "scenario",
        "at once",
        "paused",
        "--no-daemon",
        "refresh",
        "queries",
        "rpc trip",
        "client start",
        "÷ cold"
    );
    for row in rows {
        let opt = |d: Option<Duration>| d.map_or("-".to_owned(), |d| format!("{:.2}", ms(d)));
        // The round trip is measured on its own connection (no process start),
        // so whole command minus round trip is what starting the client costs.
        let client = row.round_trip.map(|trip| row.daemon.saturating_sub(trip));
        println!(
            "{:<34} {:>9.2} {:>9} {:>11.2} {:>9} {:>9} {:>10} {:>12} {:>8.2}%",
            row.name,
            ms(row.daemon),
            opt(row.paused),
            ms(row.no_daemon),
            opt(row.refresh),
            opt(row.queries),
            opt(row.round_trip),
            opt(client),
            100.0 * ms(row.daemon) / cold,
        );
    }
    println!();
    for row in &rows[1..] {
        let goal = if row.name.starts_with("no-op") {
            NO_OP_GOAL_MS
        } else {
            EDIT_GOAL_MS
        };
        let share = ms(row.daemon) / cold;
        let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
        println!(
            "{:<34} {:>8.2} ms (goal {goal} ms: {}), {:.2}% of cold (goal {:.0}%: {}), {:.1}x faster than --no-daemon",
            row.name,
            ms(row.daemon),
            verdict(ms(row.daemon) <= goal),
            100.0 * share,
            100.0 * SHARE_OF_COLD_GOAL,
            verdict(share <= SHARE_OF_COLD_GOAL),
            ms(row.no_daemon) / ms(row.daemon),
        );
    }
    println!(
        "\nfirst edits (each file's first, which demotes it from durable to volatile, design §7.1): {}",
        rows.iter()
            .filter_map(|row| row
                .first
                .map(|first| format!("{} {:.2} ms", row.name, ms(first))))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "\nrefresh, queries: the daemon's own `timings`; rpc trip: one `check` over the socket from this process; \
         client start = whole command minus rpc trip (process start, root discovery, connect, handshake, rendering)"
    );
}
