//! Several lowering jobs at once (design §4.9, `trellis lower --jobs N`): a
//! generated module of 50 definitions — ten call chains five deep, every
//! seventh draft adding a private helper — lowered through the scripted
//! provider, whose agents think (sleep) before each of their three tool calls
//! as a model would. It prints the wall time of `trellis lower` at `--jobs 1`
//! and at `--jobs 8` (each on a fresh copy of the root, its daemon warm), the
//! ratio, and checks that both runs leave every `.soil`, `.lock`,
//! `_private.soil` and `soil.lock` byte for byte the same.
//!
//! Run with `cargo build --release -p trellis && cargo run --release -p trellis
//! --example jobs_bench -- [THINK_MS] [JOBS]` (defaults: 2000 ms a turn, a model's
//! pace, and 8 jobs; `just bench` passes 200 ms to keep it short).

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

#[path = "../tests/generated_module/mod.rs"]
mod generated_module;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use generated_module::Generated;

const DEFINITIONS: usize = 50;
const CHAINS: usize = 10;

fn main() {
    if let Err(message) = run() {
        eprintln!("jobs_bench: {message}");
        std::process::exit(1);
    }
}

fn arg(position: usize, default: u64) -> Result<u64, String> {
    match std::env::args().nth(position) {
        Some(text) => text.parse().map_err(|_| format!("not a number: {text}")),
        None => Ok(default),
    }
}

fn run() -> Result<(), String> {
    let think_ms = arg(1, 2000)?;
    let jobs = arg(2, 8)?;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let trellis = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("trellis"))
        .filter(|path| path.is_file())
        .ok_or("no trellis binary; build it first with `cargo build --release -p trellis`")?;
    let defs: Vec<Generated> = (0..DEFINITIONS)
        .map(|index| Generated {
            callees: if index >= CHAINS {
                vec![index - CHAINS]
            } else {
                Vec::new()
            },
            helper: index % 7 == 3,
            think_ms,
            wrong: false,
        })
        .collect();
    let base = std::env::temp_dir().join(format!("tr-jobs-bench-{}", std::process::id()));
    let result = compare(&trellis, &base, &defs, think_ms, jobs);
    let _ = std::fs::remove_dir_all(&base);
    result
}

fn compare(
    trellis: &Path,
    base: &Path,
    defs: &[Generated],
    think_ms: u64,
    jobs: u64,
) -> Result<(), String> {
    println!(
        "jobs_bench: {DEFINITIONS} definitions ({CHAINS} chains), 3 turns each, {think_ms} ms of thinking a turn"
    );
    let (serial, serial_files) = lower_once(trellis, &base.join("one"), defs, 1)?;
    println!("  --jobs 1   {serial:>9.2} s");
    let (concurrent, files) = lower_once(trellis, &base.join("many"), defs, jobs)?;
    println!("  --jobs {jobs:<3} {concurrent:>9.2} s");
    println!("  speed-up   {:>9.2}x", serial / concurrent);
    let differing: Vec<&str> = serial_files
        .iter()
        .zip(&files)
        .filter(|((_, one), (_, many))| one != many)
        .map(|((path, _), _)| path.as_str())
        .collect();
    let missing = files.iter().filter(|(_, text)| text.is_none()).count();
    if !differing.is_empty() || missing > 0 {
        return Err(format!(
            "the runs differ in {differing:?} ({missing} files missing)"
        ));
    }
    println!(
        "  identical  {} files (.soil, .lock, _private.soil, soil.lock)",
        files.len()
    );
    Ok(())
}

/// Lowers a fresh copy of the generated root at `--jobs N`: the wall time of
/// `trellis lower` (the daemon already up and the root loaded) and the files
/// it landed.
#[allow(clippy::type_complexity, reason = "a pair of plain values")]
fn lower_once(
    trellis: &Path,
    dir: &Path,
    defs: &[Generated],
    jobs: u64,
) -> Result<(f64, Vec<(String, Option<String>)>), String> {
    let root = dir.join("root");
    let config = dir.join("config");
    let runtime = dir.join("run");
    generated_module::write(&root, &config.join("playbooks"), defs);
    std::fs::create_dir_all(config.join("trellis")).map_err(|e| e.to_string())?;
    std::fs::write(
        config.join("trellis/providers.toml"),
        format!(
            "[providers.fixture]\nkind = \"scripted\"\nplaybooks = \"{}\"\n",
            config.join("playbooks").display()
        ),
    )
    .map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&runtime).map_err(|e| format!("mkdir: {e}"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("chmod: {e}"))?;
    }
    let command = |args: &[&str]| {
        let mut command = Command::new(trellis);
        command
            .args(args)
            .current_dir(&root)
            .env("TRELLIS_ROOT", &root)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_CONFIG_HOME", &config);
        command
    };
    let outcome = (|| {
        for setup in [
            &["--no-daemon", "toolchain", "update"][..],
            &["--no-daemon", "adopt", "gen"],
            &["--no-daemon", "adopt", "project"],
            &["status"],
        ] {
            let output = command(setup).output().map_err(|e| e.to_string())?;
            if !output.status.success() {
                return Err(format!(
                    "trellis {setup:?} failed: {}",
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
        }
        let jobs = jobs.to_string();
        let started = Instant::now();
        let output = command(&["lower", "--jobs", &jobs])
            .output()
            .map_err(|e| e.to_string())?;
        let seconds = started.elapsed().as_secs_f64();
        if !output.status.success() {
            return Err(format!(
                "trellis lower --jobs {jobs} did not end all green: {}",
                String::from_utf8_lossy(&output.stdout)
            ));
        }
        Ok((seconds, generated_module::landed(&root, defs.len())))
    })();
    let _ = command(&["daemon", "stop"]).output();
    outcome
}
